"""Tests of Alloc, zeros/ones/full(_like), ARange and Eye."""

from __future__ import annotations

import numpy as np
import pytest
from oracle import check_infer_shape

import symlab
import symlab.tensor as st
from symlab.graph.null_type import DisconnectedType
from symlab.tensor.alloc import Alloc, ARange, Eye

# -- Alloc --------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32", "int16", "bool", "complex64"])
@pytest.mark.parametrize(
    "value_shape, shape", [((), (2, 3)), ((3,), (2, 3)), ((1, 3), (4, 3)), ((2, 1), (5, 2, 4)), ((), ()), ((1,), (0,))]
)
def test_alloc_values(dtype, value_shape, shape):
    v = st.tensor(dtype, shape=tuple(1 if s == 1 else None for s in value_shape), name="v")
    value = np.ones(value_shape, dtype=dtype)
    out = st.alloc(v, *shape)
    assert isinstance(out.owner.op, Alloc)
    got = out.eval({v: value})
    expected = np.broadcast_to(value, shape)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    assert got.flags.writeable
    assert out.type.shape == shape
    check_infer_shape(out, {v: value})


def test_alloc_symbolic_sizes():
    v = st.dvector("v")
    n = st.iscalar("n")
    out = st.alloc(v, n, 3)
    assert out.type.shape == (None, 3)
    np.testing.assert_array_equal(out.eval({v: [1.0, 2.0, 3.0], n: 2}), np.tile([1.0, 2.0, 3.0], (2, 1)))
    check_infer_shape(out, {v: np.arange(3.0), n: 2})
    # a value dimension that is not static 1 fixes the output's size
    w = st.tensor("float64", shape=(4,), name="w")
    assert st.alloc(w, n, st.lscalar("m")).type.shape == (None, 4)


def test_alloc_errors():
    v = st.tensor("float64", shape=(3,), name="v")
    with pytest.raises(ValueError, match=r"Alloc: cannot broadcast v .* to size 4 in dimension 1"):
        st.alloc(v, 2, 4)
    with pytest.raises(ValueError, match="Alloc: the value v .* has 1 dimensions, more than the 0"):
        st.alloc(v)
    with pytest.raises(ValueError, match="Alloc: size 0 is -1"):
        st.alloc(v, -1, 3)
    with pytest.raises(TypeError, match="Alloc: size 1 must be an int or an integer scalar, received f"):
        st.alloc(v, 2, st.dscalar("f"))
    with pytest.raises(TypeError, match="Alloc: size 0 must be an int"):
        st.alloc(v, 2.5, 3)
    w = st.dvector("w")
    n = st.lscalar("n")
    with pytest.raises(ValueError, match=r"Alloc: cannot broadcast a value of shape \(2,\) to \(3, 5\)"):
        st.alloc(w, 3, 5).eval({w: np.zeros(2)})
    with pytest.raises(ValueError, match="only dimensions of static size 1 broadcast"):
        st.alloc(w, 3, 5).eval({w: np.zeros(1)})
    with pytest.raises(ValueError, match="Alloc: negative size"):
        st.alloc(w, n, 1).eval({w: np.zeros(1), n: -2})


@pytest.mark.parametrize("value_shape, shape", [((), (2, 3)), ((3,), (2, 3)), ((1, 3), (4, 3)), ((2, 1), (5, 2, 4))])
def test_alloc_grad(value_shape, shape):
    from symlab.gradient import verify_grad

    def fn(v):
        v = st.specify_shape(v, value_shape)
        return st.alloc(v, *shape) * st.constant(np.arange(np.prod(shape), dtype="float64").reshape(shape))

    verify_grad(fn, [np.random.default_rng(1).standard_normal(value_shape)], rng=np.random.default_rng(0))


def test_alloc_grad_types():
    v = st.tensor("float32", shape=(1, None), name="v")
    n = st.lscalar("n")
    out = st.alloc(v, 2, n, 3)
    g = st.tensor("float64", shape=(2, None, 3), name="g")
    gv, *g_sizes = out.owner.op.L_op(out.owner.inputs, [out], [g])
    assert v.type.is_super(gv.type) and gv.type.shape == (1, 3)
    assert len(g_sizes) == 3 and all(isinstance(g.type, DisconnectedType) for g in g_sizes)
    gval = np.arange(24.0).reshape(2, 4, 3)
    np.testing.assert_allclose(gv.eval({g: gval}), gval.sum(axis=(0, 1), keepdims=True)[0])


# -- zeros / ones / full -------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(), 3, (2, 3), (0, 4), [1, 2, 3]])
@pytest.mark.parametrize("dtype", [None, "int32", "float32", "bool"])
def test_zeros_ones(shape, dtype):
    for fn, np_fn in ((st.zeros, np.zeros), (st.ones, np.ones)):
        out = fn(shape, dtype=dtype)
        expected = np_fn(shape, dtype=dtype or symlab.config.floatX)
        got = out.eval()
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)
        assert out.type.shape == expected.shape


def test_zeros_floatx():
    old = symlab.config.floatX
    try:
        symlab.config.floatX = "float32"
        assert st.zeros((2,)).dtype == "float32"
        assert st.ones(2).eval().dtype == np.float32
    finally:
        symlab.config.floatX = old


def test_zeros_symbolic_shape():
    n = st.lscalar("n")
    out = st.zeros((n, 2))
    assert out.type.shape == (None, 2)
    np.testing.assert_array_equal(out.eval({n: 3}), np.zeros((3, 2)))
    x = st.tensor("float64", shape=(None, 5), name="x")
    out = st.ones(x.shape, dtype="int8")
    assert out.type.shape == (None, 5) and out.dtype == "int8"
    np.testing.assert_array_equal(out.eval({x: np.zeros((2, 5))}), np.ones((2, 5), dtype="int8"))
    shp = st.lvector("shp")
    with pytest.raises(ValueError, match="needs a static length"):
        st.zeros(shp)
    with pytest.raises(TypeError, match="shape entries must be ints or integer scalars"):
        st.zeros((2.5,))


@pytest.mark.parametrize("fill, dtype", [(7, None), (2.5, None), (True, None), (3, "float32"), (1.5, "int64")])
def test_full(fill, dtype):
    out = st.full((2, 3), fill, dtype=dtype)
    expected = np.full((2, 3), fill, dtype=dtype)
    got = out.eval()
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_full_symbolic_value():
    f = st.fscalar("f")
    out = st.full((2,), f)
    assert out.dtype == "float32"
    np.testing.assert_array_equal(out.eval({f: 1.5}), np.full(2, 1.5, dtype="float32"))
    v = st.dvector("v")
    np.testing.assert_array_equal(st.full((2, 3), v).eval({v: [1.0, 2.0, 3.0]}), np.tile([1.0, 2.0, 3.0], (2, 1)))


@pytest.mark.parametrize("shape", [(), (3,), (2, 0), (2, 3)])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_like_functions(shape, dtype):
    x = st.tensor(dtype, shape=(None,) * len(shape), name="x")
    value = np.zeros(shape, dtype=dtype)
    for fn, np_fn in ((st.zeros_like, np.zeros_like), (st.ones_like, np.ones_like)):
        got = fn(x).eval({x: value})
        expected = np_fn(value)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)
        assert fn(x, dtype="complex64").eval({x: value}).dtype == np.complex64
    got = st.full_like(x, 3).eval({x: value})
    np.testing.assert_array_equal(got, np.full_like(value, 3))
    assert got.dtype == np.dtype(dtype)


def test_like_static_shape_and_symbolic_fill():
    x = st.tensor("float64", shape=(2, None), name="x")
    assert st.zeros_like(x).type.shape == (2, None)
    f = st.dscalar("f")
    out = st.full_like(st.ivector("i"), f)
    assert out.dtype == "int32"
    assert st.full_like(x, f, dtype="float32").dtype == "float32"


# -- arange ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [(5,), (0,), (-3,), (2, 7), (7, 2), (7, 2, -2), (0, 10, 3), (1.0, 2.0, 0.3), (0.5,), (3, 0.5, -0.5), (1, 2, 0.1)],
)
def test_arange_constants(args):
    out = st.arange(*args)
    expected = np.arange(*args)
    got = out.eval()
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected)
    assert out.type.shape == expected.shape
    check_infer_shape(out, {})


@pytest.mark.parametrize("dtype", ["int32", "float32", "int64", "uint8"])
def test_arange_dtype(dtype):
    out = st.arange(1, 6, 2, dtype=dtype)
    np.testing.assert_array_equal(out.eval(), np.arange(1, 6, 2, dtype=dtype))
    assert out.eval().dtype == np.dtype(dtype)


@pytest.mark.parametrize(
    "start, stop, step",
    [(0, 5, 1), (5, 0, -1), (0, 0, 1), (2, 3, 5), (0.0, 1.0, 0.25), (1.0, -1.0, -0.3), (3, 1, 1)],
)
def test_arange_symbolic(start, stop, step):
    dtype = "int32" if isinstance(start, int) else "float64"
    a, b, c = (st.scalar(dtype=dtype, name=n) for n in "abc")
    out = st.arange(a, b, c)
    assert out.dtype == dtype and out.type.shape == (None,)
    values = {a: start, b: stop, c: step}
    # (np.arange of int32 0-d arrays returns int64; symlab keeps the inputs' dtype, as PyTensor)
    expected = np.arange(start, stop, step, dtype=dtype)
    got = out.eval(values)
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected)
    check_infer_shape(out, values)


def test_arange_dtype_promotion():
    n = st.iscalar("n")
    assert st.arange(n).dtype == "int32"
    assert st.arange(n, 10.0).dtype == "float64"
    assert st.arange(st.fscalar(), 10).dtype == "float32"
    assert st.arange(st.bscalar(), st.iscalar()).dtype == "int32"


def test_arange_errors():
    with pytest.raises(ValueError, match="ARange.*step cannot be 0"):
        st.arange(0, 5, 0)
    with pytest.raises(TypeError, match=r"ARange\{dtype=float64\}: start must be a real scalar, received v"):
        st.arange(st.dvector("v"), 3.0)
    s = st.lscalar("s")
    with pytest.raises(ValueError, match="step cannot be 0"):
        st.arange(0, 5, s).eval({s: 0})


def test_arange_grad():
    from symlab.gradient import verify_grad

    verify_grad(
        lambda start, step: st.arange(start, 5.5, step) ** 2,
        [np.array(0.3), np.array(1.1)],
        rng=np.random.default_rng(0),
    )
    n = st.lscalar("n")
    out = st.arange(n)
    assert all(isinstance(g.type, DisconnectedType) for g in out.owner.op.L_op(out.owner.inputs, [out], [out]))
    assert ARange("int64") == ARange("int64") and ARange("int64") != ARange("int32")


# -- eye ------------------------------------------------------------------------------------


@pytest.mark.parametrize("n, m, k", [(3, None, 0), (2, 4, 1), (4, 2, -1), (0, 3, 0), (3, 3, 5)])
def test_eye(n, m, k):
    out = st.eye(n, m, k)
    expected = np.eye(n, m, k)
    np.testing.assert_array_equal(out.eval(), expected)
    assert out.type.shape == expected.shape
    check_infer_shape(out, {})
    assert st.eye(n, m, k, dtype="int8").eval().dtype == np.int8


def test_eye_symbolic():
    n = st.lscalar("n")
    out = st.eye(n, 3)
    assert out.type.shape == (None, 3)
    np.testing.assert_array_equal(out.eval({n: 2}), np.eye(2, 3))
    check_infer_shape(out, {n: 2})
    assert isinstance(out.owner.op, Eye)
    with pytest.raises(TypeError, match="k must be an integer scalar"):
        st.eye(2, 2, st.dscalar("k"))
