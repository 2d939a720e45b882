"""Tests of Join (concatenate), Split and stack."""

from __future__ import annotations

import numpy as np
import pytest
from oracle import check_infer_shape

import symlab.tensor as st
from symlab.graph.null_type import DisconnectedType
from symlab.tensor.joining import Join, Split


def data(shape, dtype="float64", seed=0):
    return (np.random.default_rng(seed).standard_normal(shape) * 3).astype(dtype)


def variables(shapes, dtypes):
    return [st.tensor(d, shape=(None,) * len(s), name=f"x{k}") for k, (s, d) in enumerate(zip(shapes, dtypes))]


# -- concatenate -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shapes, axis",
    [
        ([(2,), (3,)], 0),
        ([(2, 3), (1, 3), (0, 3)], 0),
        ([(2, 3), (2, 1)], 1),
        ([(2, 3), (2, 4)], -1),
        ([(0,), (0,)], 0),
        ([(2, 0, 4), (2, 3, 4)], 1),
    ],
)
@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("int32", "float32"), ("int8", "int16"), ("bool", "bool")])
def test_concatenate_values(shapes, axis, dtypes):
    dtypes = [dtypes[k % 2] for k in range(len(shapes))]
    xs = variables(shapes, dtypes)
    values = [data(s, d, seed=k) for k, (s, d) in enumerate(zip(shapes, dtypes))]
    out = st.concatenate(xs, axis=axis)
    assert isinstance(out.owner.op, Join)
    got = out.eval(dict(zip(xs, values)))
    expected = np.concatenate(values, axis=axis)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    check_infer_shape(out, dict(zip(xs, values)))


def test_concatenate_static_shapes():
    a = st.tensor("float64", shape=(2, None), name="a")
    b = st.tensor("float64", shape=(3, 4), name="b")
    c = st.tensor("float64", shape=(None, None), name="c")
    assert st.concatenate([a, b]).type.shape == (5, 4)
    assert st.concatenate([a, b, c]).type.shape == (None, 4)
    assert st.concatenate([a, a], axis=1).type.shape == (2, None)
    d = st.tensor("float64", shape=(2, 1), name="d")
    assert st.concatenate([d, d, d], axis=1).type.shape == (2, 3)
    assert st.concatenate([a]) is a
    values = {a: np.ones((2, 4)), b: np.zeros((3, 4)), c: np.ones((1, 4))}
    check_infer_shape(st.concatenate([a, b, c]), values)


def test_concatenate_errors():
    a = st.tensor("float64", shape=(2, 3), name="a")
    b = st.tensor("float64", shape=(2, 4), name="b")
    with pytest.raises(ValueError, match=r"Join\{axis=0\}: static sizes \[3, 4\] differ in dimension 1"):
        st.concatenate([a, b])
    with pytest.raises(TypeError, match=r"Join\{axis=0\}: all inputs need the same number of dimensions.*input 1 \(v\) has 1"):
        st.concatenate([a, st.dvector("v")])
    with pytest.raises(ValueError, match="concatenate: cannot join 0-d tensors"):
        st.concatenate([st.dscalar("s"), st.dscalar("t")])
    with pytest.raises(ValueError, match="concatenate: axis 2 is out of range"):
        st.concatenate([a, b], axis=2)
    with pytest.raises(ValueError, match="at least one tensor"):
        st.concatenate([])
    x, y = st.dmatrix("x"), st.dmatrix("y")
    with pytest.raises(ValueError, match=r"Join\{axis=0\}: cannot join arrays of shapes \(2, 3\), \(2, 4\)"):
        st.concatenate([x, y]).eval({x: np.zeros((2, 3)), y: np.zeros((2, 4))})


@pytest.mark.parametrize("shapes, axis", [([(2,), (3,)], 0), ([(2, 3), (2, 1), (2, 2)], 1), ([(1, 2), (3, 2)], 0)])
def test_concatenate_grad(shapes, axis):
    from symlab.gradient import verify_grad

    values = [data(s, seed=k) for k, s in enumerate(shapes)]
    verify_grad(lambda *xs: st.concatenate(xs, axis=axis) ** 2, values, rng=np.random.default_rng(0))


def test_concatenate_grad_dtypes():
    a = st.fvector("a")
    b = st.dvector("b")
    out = st.concatenate([a, b])
    g = st.dvector("g")
    ga, gb = out.owner.op.L_op(out.owner.inputs, [out], [g])
    assert ga.dtype == "float32" and gb.dtype == "float64"
    vals = {a: np.ones(2, "float32"), b: np.ones(3), g: np.arange(5.0)}
    np.testing.assert_array_equal(ga.eval(vals), [0.0, 1.0])
    np.testing.assert_array_equal(gb.eval(vals), [2.0, 3.0, 4.0])


# -- split ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape, sizes, axis",
    [((5,), [2, 3], 0), ((5,), [0, 5, 0], 0), ((2, 6), [1, 2, 3], 1), ((4, 3), [4], 0), ((0, 2), [0, 0], 0)],
)
def test_split_values(shape, sizes, axis):
    x = st.tensor("int64", shape=(None,) * len(shape), name="x")
    value = np.arange(int(np.prod(shape))).reshape(shape)
    outs = st.split(x, sizes, axis=axis)
    assert len(outs) == len(sizes)
    expected = np.split(value, np.cumsum(sizes)[:-1], axis=axis)
    for out, exp in zip(outs, expected):
        np.testing.assert_array_equal(out.eval({x: value}), exp)
        assert out.type.shape[axis] == exp.shape[axis]
        check_infer_shape(out, {x: value})


def test_split_symbolic_sizes():
    x = st.dvector("x")
    n = st.lscalar("n")
    a, b = st.split(x, [n, 2])
    assert a.type.shape == (None,) and b.type.shape == (2,)
    np.testing.assert_array_equal(a.eval({x: np.arange(5.0), n: 3}), [0.0, 1.0, 2.0])
    sizes = st.tensor("int64", shape=(2,), name="sizes")
    a, b = st.split(x, sizes)
    np.testing.assert_array_equal(b.eval({x: np.arange(5.0), sizes: [1, 4]}), [1.0, 2.0, 3.0, 4.0])
    check_infer_shape(b, {x: np.arange(5.0), sizes: np.array([1, 4])})


def test_split_errors():
    x = st.tensor("float64", shape=(5,), name="x")
    with pytest.raises(ValueError, match=r"Split\{n_splits=2,axis=0\}: sizes \[2, 2\] add up to 4, but dimension 0"):
        st.split(x, [2, 2])
    with pytest.raises(ValueError, match="sizes must be non-negative"):
        st.split(x, [-1, 6])
    with pytest.raises(TypeError, match="size 0 must be an integer scalar"):
        st.split(x, [st.dscalar("f"), 2])
    with pytest.raises(ValueError, match="needs at least one size"):
        st.split(x, [])
    with pytest.raises(ValueError, match="must be a vector of static length"):
        st.split(x, st.lvector("s"))
    y = st.dvector("y")
    with pytest.raises(ValueError, match=r"cannot split dimension 0 of an array of shape \(4,\) into sizes \[2, 3\]"):
        st.split(y, [2, 3])[0].eval({y: np.zeros(4)})
    assert Split(2, 0) == Split(2, 0) and Split(2, 0) != Split(3, 0)


def test_split_grad():
    from symlab.gradient import verify_grad

    def fn(x):
        a, b, c = st.split(x, [1, 2, 1], axis=1)
        return st.concatenate([c * 2.0, a, b ** 2], axis=1)

    verify_grad(fn, [data((3, 4))], rng=np.random.default_rng(0))

    def only_one(x):
        return st.split(x, [2, 1])[1] * 3.0

    verify_grad(only_one, [data((3,))], rng=np.random.default_rng(0))


def test_split_grad_disconnected_output():
    x = st.dvector("x")
    a, b = st.split(x, [2, 3])
    node = a.owner
    g = st.dvector("g")
    gx, *gs = node.op.L_op(node.inputs, node.outputs, [g, DisconnectedType()()])
    np.testing.assert_array_equal(gx.eval({x: np.zeros(5), g: [1.0, 2.0]}), [1.0, 2.0, 0.0, 0.0, 0.0])
    assert all(isinstance(s.type, DisconnectedType) for s in gs)


# -- stack --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (0, 2)])
@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("dtypes", [("float64", "float64", "float64"), ("int32", "float32", "int8")])
def test_stack_values(shape, axis, dtypes):
    xs = variables([shape] * 3, dtypes)
    values = [data(shape, d, seed=k) for k, d in enumerate(dtypes)]
    out = st.stack(xs, axis=axis)
    got = out.eval(dict(zip(xs, values)))
    expected = np.stack(values, axis=axis)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    assert out.type.shape[axis] == 3
    check_infer_shape(out, dict(zip(xs, values)))


def test_stack_static_and_errors():
    a = st.tensor("float64", shape=(2, None), name="a")
    b = st.tensor("float64", shape=(None, 3), name="b")
    assert st.stack([a, b]).type.shape == (2, 2, 3)
    assert st.stack([a, b], axis=2).type.shape == (2, 3, 2)
    assert st.stack([a]).type.shape == (1, 2, None)
    with pytest.raises(ValueError, match="stack: all tensors need the same number of dimensions.*tensor 1"):
        st.stack([a, st.dvector("v")])
    with pytest.raises(ValueError, match="stack: axis 3 is out of range"):
        st.stack([a, b], axis=3)
    with pytest.raises(ValueError, match="stack: needs at least one tensor"):
        st.stack([])


def test_stack_python_numbers():
    x = st.fscalar("x")
    out = st.stack([x, 1.0, 2])
    assert out.dtype == "float32" and out.type.shape == (3,)
    np.testing.assert_array_equal(out.eval({x: 0.5}), np.array([0.5, 1.0, 2.0], dtype="float32"))
    i = st.bscalar("i")
    assert st.stack([i, 3]).dtype == "int8"
    assert st.stack([i, 2.5]).dtype == "float64"


def test_as_tensor_variable_list():
    x, y = st.dscalar("x"), st.dscalar("y")
    v = st.as_tensor_variable([x, y, 3.0])
    assert v.type.shape == (3,) and v.dtype == "float64"
    np.testing.assert_array_equal(v.eval({x: 1.0, y: 2.0}), [1.0, 2.0, 3.0])
    m = st.as_tensor_variable([[x, 1.0], [2.0, y]])
    assert m.type.shape == (2, 2)
    np.testing.assert_array_equal(m.eval({x: 0.0, y: 5.0}), [[0.0, 1.0], [2.0, 5.0]])
    n = st.lscalar("n")
    shp = st.as_tensor_variable([n, 2])
    assert shp.dtype == "int64"
    np.testing.assert_array_equal(shp.eval({n: 4}), [4, 2])


def test_stack_grad():
    from symlab.gradient import verify_grad

    verify_grad(
        lambda a, b: st.stack([a, b * 2.0], axis=1) ** 2,
        [data((2, 3)), data((2, 3), seed=1)],
        rng=np.random.default_rng(0),
    )
    verify_grad(lambda a, b: st.stack([a, b]) * 3.0, [np.array(1.5), np.array(-2.0)], rng=np.random.default_rng(0))
