"""Elemwise, reductions, products and shape ops compiled in NUMBA mode against their NumPy ``perform``.

Every case is compiled once in NUMBA and once in NUMPY mode (module-scope
caches), then run on several input layouts: C-contiguous, negative-stride
(``a[::-1]``), transposed, and empty and 0-d where meaningful.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import symlab
import symlab.tensor as st

pytestmark = pytest.mark.numba

_compiled: dict = {}


def both(key, inputs, outputs):
    """(numba function, numpy function) for ``outputs`` of ``inputs``, compiled once per key."""
    got = _compiled.get(key)
    if got is None:
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)  # a fallback or a failed compile is a failure here
            fn = symlab.function(inputs, outputs, mode="NUMBA")
        ref = symlab.function(inputs, outputs, mode="NUMPY")
        got = _compiled[key] = (fn, ref)
    return got


def check(fn, ref, *args):
    expected = ref(*[a.copy() for a in args])
    before = [a.copy() for a in args]
    got = fn(*args)
    if not isinstance(expected, list):
        got, expected = [got], [expected]
    for g, e in zip(got, expected):
        g, e = np.asarray(g), np.asarray(e)
        assert g.dtype == e.dtype and g.shape == e.shape, (g.dtype, e.dtype, g.shape, e.shape)
        if e.dtype.kind == "f":
            np.testing.assert_allclose(g, e, rtol=1e-5 if e.dtype == np.float32 else 1e-12, atol=1e-6)
        else:
            np.testing.assert_array_equal(g, e)
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)


def values(dtype, shape, seed=0, positive=False):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.startswith("int"):
        return rng.integers(-5 if not positive else 1, 6, size=shape).astype(dtype)
    v = rng.uniform(0.1, 2.0, size=shape) if positive else rng.normal(size=shape)
    return v.astype(dtype)


def layouts(a):
    """The value, a negative-stride view and a transposed view of the same logical shape where possible."""
    out = [a]
    if a.ndim >= 1:
        big = np.concatenate([a, a], axis=0) if a.shape[0] else a
        out.append(big[::-2][: a.shape[0]] if a.shape[0] else a)
    if a.ndim == 2:
        out.append(np.ascontiguousarray(a.T).T)
    return out


BINARY = ["add", "sub", "mul", "true_div", "maximum", "minimum", "lt", "eq", "pow"]
UNARY = ["exp", "log1p", "sin", "tanh", "sqrt", "abs", "neg", "sigmoid", "softplus", "erf", "gammaln", "psi", "floor", "round", "sqr"]


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "int64"])
def test_binary_elemwise(dtype):
    # one graph per dtype, every op an output (fusion off: one kernel per op)
    x = st.TensorType(dtype, (None, None))("x")
    y = st.TensorType(dtype, (None, None))("y")
    outs = [getattr(st, name)(x, y) for name in BINARY]
    fn, ref = both(("bin", dtype), [x, y], outs)
    a, b = values(dtype, (3, 4), 1, positive=True), values(dtype, (3, 4), 2, positive=True)
    b = np.minimum(b, 3).astype(dtype)
    for la, lb in zip(layouts(a), layouts(b)):
        check(fn, ref, la, lb)
    check(fn, ref, a[:0], b[:0])  # empty


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_unary_elemwise(dtype):
    x = st.TensorType(dtype, (None,))("x")
    fn, ref = both(("un", dtype), [x], [getattr(st, name)(x) for name in UNARY])
    a = np.array([0.25, 0.5, 1.0, 1.5, 3.0, 7.5, 30.0], dtype=dtype)
    for la in layouts(a):
        check(fn, ref, la)
    s = st.TensorType(dtype, (None,))("s")
    g, gref = both(("stable", dtype), [s], [st.sigmoid(s), st.softplus(s), st.sin(s), st.round(s)])
    check(g, gref, np.array([-800.0, -30.0, -1.0, -0.5, 0.0, 0.5, 2.5, 30.0, 800.0], dtype=dtype))


@pytest.mark.parametrize("dtype", ["bool", "int64"])
def test_logic_and_casts(dtype):
    x, y = st.TensorType(dtype, (None,))("x"), st.TensorType(dtype, (None,))("y")
    outs = [st.and_(x, y), st.or_(x, y), st.invert(x), st.cast(x, "float32"), st.cast(st.cast(x, "float64") * 1.5, "bool"), st.switch(x, y, x)]
    fn, ref = both(("logic", dtype), [x, y], outs)
    check(fn, ref, values(dtype, (9,), 4), values(dtype, (9,), 5))


def test_broadcasting_and_0d():
    x, v, s = st.dmatrix("x"), st.dvector("v"), st.dscalar("s")
    col = st.TensorType("float64", (None, 1))("col")
    fn, ref = both("bcast", [x, v, s, col], [x + v * s, x * col - s, s * 2.0, st.exp(s)])
    a, b, c = values("float64", (3, 4), 1), values("float64", (4,), 2), np.asarray(1.5)
    k = values("float64", (3, 1), 3)
    for la in layouts(a):
        check(fn, ref, la, b[::-1], c, k)
    check(fn, ref, a[:0], b, c, k[:0])
    with pytest.raises(ValueError, match="do not match in dimension 1"):
        fn(a, np.ones(5), c, k)


def test_runtime_broadcast_is_refused_like_perform():
    x, y = st.dmatrices("x", "y")
    fn, ref = both("nobcast", [x, y], x + y)
    with pytest.raises(ValueError, match="dimension 0"):
        ref(np.ones((3, 2)), np.ones((1, 2)))
    with pytest.raises(ValueError, match="dimension 0"):
        fn(np.ones((3, 2)), np.ones((1, 2)))


def test_fused_expression_and_inplace():
    x, y = st.dvectors("x", "y")
    e = st.exp(-x**2) * st.sin(y) + st.log1p(x * x) * 0.5
    fn, ref = both("fused", [x, y], e)
    ops = [type(n.op.scalar_op).__name__ for n in fn.maker.fgraph.toposort()]
    assert ops == ["Composite"]
    for n in (0, 5, 300_000):  # the last one runs the parallel loop
        a, b = values("float64", (n,), 1), values("float64", (n,), 2)
        check(fn, ref, a, b)
        check(fn, ref, a[::-1], b[::-1])
    # an intermediate written inplace
    g, gref = both("inplace", [x, y], (st.exp(x) + y).sum() * st.exp(x) + y)
    check(g, gref, values("float64", (6,), 1), values("float64", (6,), 2))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "bool"])
def test_reductions(dtype):
    x = st.TensorType(dtype, (None, None, None))("x")
    outs = [x.sum(), x.sum(axis=1), x.prod(axis=(0, 2)), x.max(axis=2), x.min(), st.all(x, axis=0), st.any(x)]
    if dtype == "bool":
        outs = [x.sum(), x.sum(axis=1), st.all(x, axis=0), st.any(x), st.all(x)]
    fn, ref = both(("red", dtype), [x], outs)
    a = values(dtype, (2, 3, 4), 7)
    check(fn, ref, a)
    check(fn, ref, a[::-1, :, ::-2])
    check(fn, ref, np.transpose(values(dtype, (4, 3, 2), 8), (2, 1, 0)))


def test_reductions_empty_and_nan():
    x = st.dmatrix("x")
    fn, ref = both("red_empty", [x], [x.sum(axis=0), x.prod(axis=1), x.max(axis=1)])
    check(fn, ref, np.zeros((0, 3)))
    with pytest.raises(ValueError):
        fn(np.zeros((3, 0)))
    check(fn, ref, np.array([[1.0, np.nan], [2.0, 3.0]]))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_dot(dtype):
    a, b = st.TensorType(dtype, (None, None))("a"), st.TensorType(dtype, (None, None))("b")
    v = st.TensorType(dtype, (None,))("v")
    fn, ref = both(("dot", dtype), [a, b, v], [st.dot(a, b), st.dot(a, v), st.dot(v, b), st.dot(v, v)])
    A, B, V = values(dtype, (3, 4), 1), values(dtype, (4, 5), 2), values(dtype, (4,), 3)
    check(fn, ref, A, B, V)
    check(fn, ref, A[::-1], np.ascontiguousarray(B.T).T, V[::-1])
    with pytest.raises(ValueError):
        fn(A, np.ones((3, 5), dtype), V)


def test_dot_mixed_and_empty():
    a, b = st.fmatrix("a"), st.dmatrix("b")
    fn, ref = both("dotmix", [a, b], st.dot(a, b))
    check(fn, ref, values("float32", (2, 3), 1), values("float64", (3, 2), 2))
    check(fn, ref, np.zeros((2, 0), "float32"), np.zeros((0, 4)))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "bool"])
def test_matmul_stacks_and_tensordot(dtype):
    """Batched matmul (with a broadcast batch dimension) and tensordot over several axis choices."""
    t3 = st.TensorType(dtype, (None, None, None))
    a, b, c = t3("a"), t3("b"), t3("c")
    m = st.TensorType(dtype, (None, None))("m")
    one = st.TensorType(dtype, (1, None, None))("one")
    outs = [
        st.matmul(a, b),
        st.matmul(a, one),
        st.tensordot(a, m, axes=[[2], [0]]),
        st.tensordot(a, c, axes=[[1, 2], [1, 2]]),
        st.tensordot(a, c, axes=[[0, 1, 2], [0, 1, 2]]),  # every axis summed: a 0-d result
        st.tensordot(m, a, axes=[[0], [2]]),
    ]
    fn, ref = both(("stacks", dtype), [a, b, c, m, one], outs)
    A, B, C = values(dtype, (2, 3, 4), 1), values(dtype, (2, 4, 3), 2), values(dtype, (2, 3, 4), 3)
    M, O = values(dtype, (4, 5), 4), values(dtype, (1, 4, 2), 5)
    check(fn, ref, A, B, C, M, O)
    check(fn, ref, A[::-1], np.asfortranarray(B), C[:, ::-1], np.ascontiguousarray(M.T).T, O[:, ::-1])
    check(fn, ref, A[:, :, :0], B[:, :0], C[:, :, :0], M[:0], O[:, :0])  # empty summed axes
    with pytest.raises(ValueError, match="batch dimension 0"):
        fn(A, np.concatenate([B, B]), C, M, O)
    with pytest.raises(ValueError, match="summed axis 1"):
        fn(A, B, A[:, :2], M, O)


def test_matmul_and_tensordot_of_mixed_dtypes():
    a, b = st.ftensor3("a"), st.dtensor3("b")
    fn, ref = both("stackmix", [a, b], [st.matmul(a, b), st.tensordot(a, b, axes=[[2], [1]])])
    check(fn, ref, values("float32", (2, 3, 4), 1), values("float64", (2, 4, 3), 2))


def test_shape_ops():
    x = st.dtensor3("x")
    outs = [x.dimshuffle(2, "x", 0, 1), x.shape[0] * x.shape[2], st.shape(x), x.reshape((-1, x.shape[2])) * 2.0, st.flatten(x)]
    fn, ref = both("shape", [x], outs)
    a = values("float64", (2, 3, 4), 1)
    check(fn, ref, a)
    check(fn, ref, a[::-1, :, ::-1])
    check(fn, ref, np.zeros((0, 3, 4)))
    s = st.specify_shape(st.dmatrix("m"), (2, None))
    g, gref = both("specify", [s.owner.inputs[0]], s * 3.0)
    check(g, gref, np.ones((2, 5)))
    with pytest.raises(ValueError):
        g(np.ones((3, 5)))


def test_views_are_not_leaked():
    x = st.dmatrix("x")
    fn, _ = both("views", [x], [x.T, x.dimshuffle(1, "x", 0), x.reshape((-1,))])
    a = values("float64", (2, 3), 1)
    for out in fn(a):
        assert not np.shares_memory(out, a)
