"""dot, matmul (@), outer, tensordot."""

from functools import partial

import numpy as np
import pytest
from helpers import random_value
from oracle import NUMPY_REFERENCE, check_against_numpy

import symlab.tensor as st
from symlab.gradient import verify_grad
from symlab.tensor.products import Dot, MatMul, TensorDot

RNG = np.random.default_rng(7)
#: Test values of a shape and dtype (``helpers.random_value``) drawn from ``RNG``.
_value = partial(random_value, RNG)


def _var(value, name):
    return st.TensorType(value.dtype, (None,) * value.ndim)(name)


def _const_shape(value):
    return tuple(st.constant(d, dtype="int64") for d in value.shape)


DOT_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((0,), (0,)), ((2, 0), (0, 3)),
              ((), (3,)), ((2, 3), ())]


@pytest.mark.parametrize("shapes", DOT_SHAPES)
@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("float32", "float32"), ("int32", "int32"),
                                    ("float32", "float64"), ("int32", "float32"), ("bool", "bool")])
def test_dot_matches_numpy(shapes, dtypes):
    check_against_numpy(st.dot, np.dot, [_value(shapes[0], dtypes[0]), _value(shapes[1], dtypes[1])], NUMPY_REFERENCE,
                        names=("a", "b"))


MATMUL_SHAPES = DOT_SHAPES[:6] + [
    ((2, 3, 4), (2, 4, 5)),
    ((2, 3, 4), (4, 5)),
    ((3, 4), (2, 4, 5)),
    ((2, 3, 4), (4,)),
    ((4,), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((1, 3, 4), (2, 4, 5)),
    ((2, 0, 4), (2, 4, 3)),
]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES)
@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("float32", "float32"), ("int32", "int64")])
def test_matmul_matches_numpy(shapes, dtypes):
    a, b = _value(shapes[0], dtypes[0]), _value(shapes[1], dtypes[1])
    # size-1 batch dimensions broadcast only when they are static: give those variables that shape.
    x = st.TensorType(a.dtype, tuple(1 if s == 1 else None for s in a.shape))("a")
    y = st.TensorType(b.dtype, tuple(1 if s == 1 else None for s in b.shape))("b")
    out = x @ y
    got, expected = out.eval({x: a, y: b}), np.matmul(a, b)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-4)


def test_matmul_runtime_broadcast_refused():
    x, y = st.dtensor3("x"), st.dtensor3("y")
    with pytest.raises(ValueError, match="batch dimension 0"):
        (x @ y).eval({x: np.ones((1, 2, 3)), y: np.ones((4, 3, 2))})


def test_rmatmul_and_method():
    x = st.dmatrix("x")
    a = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(x.__rmatmul__(np.eye(2)).eval({x: a}), a)
    np.testing.assert_allclose((st.constant(np.eye(2)) @ x).eval({x: a}), a)
    np.testing.assert_allclose(x.dot(x.T).eval({x: a}), a @ a.T)


@pytest.mark.parametrize("shapes", [((3,), (4,)), ((), (2,)), ((2,), ())])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_outer_matches_numpy(shapes, dtype):
    check_against_numpy(st.outer, np.outer, [_value(shapes[0], dtype), _value(shapes[1], dtype)], NUMPY_REFERENCE,
                        names=("a", "b"))


@pytest.mark.parametrize("shapes,axes", [
    (((2, 3, 4), (3, 4, 5)), 2),
    (((2, 3), (3, 4)), 1),
    (((2, 3), (4, 5)), 0),
    (((2, 3, 4), (4, 3)), ([1, 2], [1, 0])),
    (((2, 3, 4), (5, 2)), ([0], [1])),
    (((3, 4), (4, 3)), ([0, 1], [1, 0])),
])
def test_tensordot_matches_numpy(shapes, axes):
    check_against_numpy(lambda a, b: st.tensordot(a, b, axes), lambda a, b: np.tensordot(a, b, axes),
                        [_value(shapes[0]), _value(shapes[1])], NUMPY_REFERENCE, names=("a", "b"))


# -- static shapes ---------------------------------------------------------------------------
def test_static_shapes():
    m23 = st.tensor("float64", shape=(2, 3))
    m3n = st.tensor("float64", shape=(3, None))
    v = st.dvector("v")
    assert st.dot(m23, m3n).type.shape == (2, None)
    assert st.dot(m23, v).type.shape == (2,)
    assert st.dot(v, m3n).type.shape == (None,)
    assert st.dot(v, v).type.shape == ()
    b = st.tensor("float32", shape=(1, None, 3, 4))
    c = st.tensor("float32", shape=(5, 4, 2))
    assert (b @ c).type == st.TensorType("float32", (1, 5, 3, 2))
    assert (st.ftensor3() @ c).type == st.TensorType("float32", (5, None, 2))
    assert (b @ st.fvector()).type.shape == (1, None, 3)
    assert st.outer(st.tensor("int32", shape=(2,)), v).type == st.TensorType("float64", (2, None))
    assert st.tensordot(st.tensor("float64", shape=(2, 3, 4)), st.dmatrix(), axes=([1], [0])).type.shape == (
        2, 4, None)


def test_str_and_props():
    x = st.dmatrix("x")
    assert str((x @ x).owner.op) == "dot"
    assert Dot() == Dot() and hash(Dot()) == hash(Dot())
    assert isinstance((st.dtensor3() @ x).owner.inputs[1].owner.op, st.DimShuffle)
    assert str(TensorDot([1], [0])) == "TensorDot{axes_a=(1,),axes_b=(0,)}"


# -- errors ---------------------------------------------------------------------------------------
def test_mismatched_inner_dims():
    a = st.tensor("float64", shape=(2, 3))
    b = st.tensor("float64", shape=(4, 5))
    msg = r"dot: inner dimensions do not match: .*TensorType\(float64, \(2, 3\)\).*TensorType\(float64, \(4, 5\)\)"
    with pytest.raises(ValueError, match=msg):
        st.dot(a, b)
    with pytest.raises(ValueError, match="MatMul: inner dimensions do not match"):
        st.matmul(st.tensor("float64", shape=(None, 2, 3)), b)
    with pytest.raises(ValueError, match="MatMul: batch dimension 0 cannot broadcast"):
        st.matmul(st.tensor("float64", shape=(2, 2, 3)), st.tensor("float64", shape=(3, 3, 2)))
    with pytest.raises(ValueError, match="TensorDot.*summed axis 1"):
        st.tensordot(a, b, axes=([1], [0]))


def test_runtime_mismatched_inner_dims():
    a, b = st.dmatrices("a", "b")
    with pytest.raises(ValueError, match="dot: inner dimensions of shapes"):
        st.dot(a, b).eval({a: np.ones((2, 3)), b: np.ones((4, 2))})


def test_wrong_ndim():
    with pytest.raises(TypeError, match=r"dot: the first input .* must be a vector or a matrix, has 3 dimensions"):
        Dot()(st.dtensor3("t"), st.dmatrix())
    with pytest.raises(ValueError, match="matmul: the second input .* is 0-d"):
        st.matmul(st.dmatrix(), st.dscalar())
    with pytest.raises(TypeError, match="outer: the first input .* must be a vector"):
        st.outer(st.dmatrix(), st.dvector())
    with pytest.raises(TypeError, match="MatMul: expects two inputs of the same rank"):
        MatMul()(st.dtensor3(), st.dmatrix())
    with pytest.raises(ValueError, match="tensordot: cannot sum over 3 axes"):
        st.tensordot(st.dmatrix(), st.dmatrix(), 3)


def test_unsupported_dtype_mix():
    # numpy refuses nothing among numeric dtypes; object-like dtypes do not exist as tensors,
    # so the dtype of the result follows NumPy even for small integers
    assert st.dot(st.bvector(), st.bvector()).dtype == np.dot(np.ones(1, "int8"), np.ones(1, "int8")).dtype


# -- infer_shape -------------------------------------------------------------------------------
@pytest.mark.parametrize("fn,shapes", [
    (st.dot, ((2, 3), (3, 4))),
    (st.dot, ((3,), (3, 4))),
    (st.dot, ((2, 3), (3,))),
    (st.dot, ((3,), (3,))),
    (st.matmul, ((2, 3, 4), (2, 4, 5))),
    (st.matmul, ((1, 3, 4), (2, 4, 5))),
    (lambda a, b: st.tensordot(a, b, ([0, 2], [2, 0])), ((2, 3, 4), (4, 5, 2))),
])
def test_infer_shape(fn, shapes):
    a, b = _value(shapes[0]), _value(shapes[1])
    x = st.TensorType(a.dtype, tuple(1 if s == 1 else None for s in a.shape))("a")
    y = st.TensorType(b.dtype, tuple(1 if s == 1 else None for s in b.shape))("b")
    out = fn(x, y)
    node = out.owner
    ins = [a, b] if node.inputs[0] is x else [np.broadcast_to(a, (1,) * (node.inputs[0].ndim - a.ndim) + a.shape),
                                               np.broadcast_to(b, (1,) * (node.inputs[1].ndim - b.ndim) + b.shape)]
    (shape,) = node.op.infer_shape(None, node, [_const_shape(v) for v in ins])
    assert tuple(int(s.eval({})) for s in shape) == out.eval({x: a, y: b}).shape


# -- gradients ---------------------------------------------------------------------------------
@pytest.mark.parametrize("shapes", DOT_SHAPES[:4] + [((), (3,)), ((2, 3), ())])
def test_dot_grad(shapes):
    verify_grad(st.dot, [_value(shapes[0]), _value(shapes[1])], rng=np.random.default_rng(0))


def test_dot_grad_mixed_dtypes():
    # a float32 input needs a finite-difference step that float32 can represent
    verify_grad(st.dot, [_value((2, 3), "float32"), _value((3,), "float64")], rng=np.random.default_rng(0),
                eps=1e-3, abs_tol=1e-2, rel_tol=1e-2)


@pytest.mark.parametrize("shapes", MATMUL_SHAPES[:4] + MATMUL_SHAPES[6:13])
def test_matmul_grad(shapes):
    verify_grad(st.matmul, [_value(shapes[0]), _value(shapes[1])], rng=np.random.default_rng(0))


def test_outer_grad():
    verify_grad(st.outer, [_value((3,)), _value((2,))], rng=np.random.default_rng(0))


@pytest.mark.parametrize("shapes,axes", [
    (((2, 3, 4), (3, 4, 5)), 2),
    (((2, 3, 4), (4, 3)), ([1, 2], [1, 0])),
    (((2, 3, 4), (5, 2)), ([0], [1])),
    (((2, 3), (4,)), 0),
])
def test_tensordot_grad(shapes, axes):
    verify_grad(lambda a, b: st.tensordot(a, b, axes), [_value(shapes[0]), _value(shapes[1])],
                rng=np.random.default_rng(0))
