"""Elemwise, reductions, products and shape ops compiled in NUMBA mode against their NumPy ``perform``.

Every case is compiled once in NUMBA and once in NUMPY mode
(``oracle.compiled_in_modes``), then run on several input layouts: C-contiguous, negative-stride
(``a[::-1]``), transposed, and empty and 0-d where meaningful, and compared
with the tolerance ``oracle.KERNELS`` (integers and booleans exactly).
"""

from __future__ import annotations

import numpy as np
import pytest
from oracle import KERNELS, check_against_reference, compiled_in_modes

import symlab.tensor as st

pytestmark = pytest.mark.numba


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
    fn, ref = compiled_in_modes(("bin", dtype), [x, y], outs)
    a, b = values(dtype, (3, 4), 1, positive=True), values(dtype, (3, 4), 2, positive=True)
    b = np.minimum(b, 3).astype(dtype)
    for la, lb in zip(layouts(a), layouts(b)):
        check_against_reference(fn, ref, la, lb, compare=KERNELS)
    check_against_reference(fn, ref, a[:0], b[:0], compare=KERNELS)  # empty


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_unary_elemwise(dtype):
    x = st.TensorType(dtype, (None,))("x")
    fn, ref = compiled_in_modes(("un", dtype), [x], [getattr(st, name)(x) for name in UNARY])
    a = np.array([0.25, 0.5, 1.0, 1.5, 3.0, 7.5, 30.0], dtype=dtype)
    for la in layouts(a):
        check_against_reference(fn, ref, la, compare=KERNELS)
    s = st.TensorType(dtype, (None,))("s")
    g, gref = compiled_in_modes(("stable", dtype), [s], [st.sigmoid(s), st.softplus(s), st.sin(s), st.round(s)])
    check_against_reference(g, gref, np.array([-800.0, -30.0, -1.0, -0.5, 0.0, 0.5, 2.5, 30.0, 800.0], dtype=dtype),
                            compare=KERNELS)


@pytest.mark.parametrize("dtype", ["bool", "int64"])
def test_logic_and_casts(dtype):
    x, y = st.TensorType(dtype, (None,))("x"), st.TensorType(dtype, (None,))("y")
    outs = [st.and_(x, y), st.or_(x, y), st.invert(x), st.cast(x, "float32"), st.cast(st.cast(x, "float64") * 1.5, "bool"), st.switch(x, y, x)]
    fn, ref = compiled_in_modes(("logic", dtype), [x, y], outs)
    check_against_reference(fn, ref, values(dtype, (9,), 4), values(dtype, (9,), 5), compare=KERNELS)


def test_broadcasting_and_0d():
    x, v, s = st.dmatrix("x"), st.dvector("v"), st.dscalar("s")
    col = st.TensorType("float64", (None, 1))("col")
    fn, ref = compiled_in_modes("bcast", [x, v, s, col], [x + v * s, x * col - s, s * 2.0, st.exp(s)])
    a, b, c = values("float64", (3, 4), 1), values("float64", (4,), 2), np.asarray(1.5)
    k = values("float64", (3, 1), 3)
    for la in layouts(a):
        check_against_reference(fn, ref, la, b[::-1], c, k, compare=KERNELS)
    check_against_reference(fn, ref, a[:0], b, c, k[:0], compare=KERNELS)
    with pytest.raises(ValueError, match="do not match in dimension 1"):
        fn(a, np.ones(5), c, k)


def test_runtime_broadcast_is_refused_like_perform():
    x, y = st.dmatrices("x", "y")
    fn, ref = compiled_in_modes("nobcast", [x, y], x + y)
    with pytest.raises(ValueError, match="dimension 0"):
        ref(np.ones((3, 2)), np.ones((1, 2)))
    with pytest.raises(ValueError, match="dimension 0"):
        fn(np.ones((3, 2)), np.ones((1, 2)))


def test_fused_expression_and_inplace():
    x, y = st.dvectors("x", "y")
    e = st.exp(-x**2) * st.sin(y) + st.log1p(x * x) * 0.5
    fn, ref = compiled_in_modes("fused", [x, y], e)
    ops = [type(n.op.scalar_op).__name__ for n in fn.maker.fgraph.toposort()]
    assert ops == ["Composite"]
    for n in (0, 5, 300_000):  # the last one runs the parallel loop
        a, b = values("float64", (n,), 1), values("float64", (n,), 2)
        check_against_reference(fn, ref, a, b, compare=KERNELS)
        check_against_reference(fn, ref, a[::-1], b[::-1], compare=KERNELS)
    # an intermediate written inplace
    g, gref = compiled_in_modes("inplace", [x, y], (st.exp(x) + y).sum() * st.exp(x) + y)
    check_against_reference(g, gref, values("float64", (6,), 1), values("float64", (6,), 2), compare=KERNELS)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "bool"])
def test_reductions(dtype):
    x = st.TensorType(dtype, (None, None, None))("x")
    outs = [x.sum(), x.sum(axis=1), x.prod(axis=(0, 2)), x.max(axis=2), x.min(), st.all(x, axis=0), st.any(x)]
    if dtype == "bool":
        outs = [x.sum(), x.sum(axis=1), st.all(x, axis=0), st.any(x), st.all(x)]
    fn, ref = compiled_in_modes(("red", dtype), [x], outs)
    a = values(dtype, (2, 3, 4), 7)
    check_against_reference(fn, ref, a, compare=KERNELS)
    check_against_reference(fn, ref, a[::-1, :, ::-2], compare=KERNELS)
    check_against_reference(fn, ref, np.transpose(values(dtype, (4, 3, 2), 8), (2, 1, 0)), compare=KERNELS)


def test_reductions_empty_and_nan():
    x = st.dmatrix("x")
    fn, ref = compiled_in_modes("red_empty", [x], [x.sum(axis=0), x.prod(axis=1), x.max(axis=1)])
    check_against_reference(fn, ref, np.zeros((0, 3)), compare=KERNELS)
    with pytest.raises(ValueError):
        fn(np.zeros((3, 0)))
    check_against_reference(fn, ref, np.array([[1.0, np.nan], [2.0, 3.0]]), compare=KERNELS)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_dot(dtype):
    a, b = st.TensorType(dtype, (None, None))("a"), st.TensorType(dtype, (None, None))("b")
    v = st.TensorType(dtype, (None,))("v")
    fn, ref = compiled_in_modes(("dot", dtype), [a, b, v], [st.dot(a, b), st.dot(a, v), st.dot(v, b), st.dot(v, v)])
    A, B, V = values(dtype, (3, 4), 1), values(dtype, (4, 5), 2), values(dtype, (4,), 3)
    check_against_reference(fn, ref, A, B, V, compare=KERNELS)
    check_against_reference(fn, ref, A[::-1], np.ascontiguousarray(B.T).T, V[::-1], compare=KERNELS)
    with pytest.raises(ValueError):
        fn(A, np.ones((3, 5), dtype), V)


def test_dot_mixed_and_empty():
    a, b = st.fmatrix("a"), st.dmatrix("b")
    fn, ref = compiled_in_modes("dotmix", [a, b], st.dot(a, b))
    check_against_reference(fn, ref, values("float32", (2, 3), 1), values("float64", (3, 2), 2), compare=KERNELS)
    check_against_reference(fn, ref, np.zeros((2, 0), "float32"), np.zeros((0, 4)), compare=KERNELS)


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
    fn, ref = compiled_in_modes(("stacks", dtype), [a, b, c, m, one], outs)
    A, B, C = values(dtype, (2, 3, 4), 1), values(dtype, (2, 4, 3), 2), values(dtype, (2, 3, 4), 3)
    M, O = values(dtype, (4, 5), 4), values(dtype, (1, 4, 2), 5)
    check_against_reference(fn, ref, A, B, C, M, O, compare=KERNELS)
    check_against_reference(fn, ref, A[::-1], np.asfortranarray(B), C[:, ::-1], np.ascontiguousarray(M.T).T,
                            O[:, ::-1], compare=KERNELS)
    check_against_reference(fn, ref, A[:, :, :0], B[:, :0], C[:, :, :0], M[:0], O[:, :0],
                            compare=KERNELS)  # empty summed axes
    with pytest.raises(ValueError, match="batch dimension 0"):
        fn(A, np.concatenate([B, B]), C, M, O)
    with pytest.raises(ValueError, match="summed axis 1"):  # C-contiguous: the call's layouts are compiled already
        fn(A, B, np.ascontiguousarray(A[:, :2]), M, O)


def test_matmul_and_tensordot_of_mixed_dtypes():
    a, b = st.ftensor3("a"), st.dtensor3("b")
    fn, ref = compiled_in_modes("stackmix", [a, b], [st.matmul(a, b), st.tensordot(a, b, axes=[[2], [1]])])
    check_against_reference(fn, ref, values("float32", (2, 3, 4), 1), values("float64", (2, 4, 3), 2), compare=KERNELS)


def test_shape_ops():
    x = st.dtensor3("x")
    outs = [x.dimshuffle(2, "x", 0, 1), x.shape[0] * x.shape[2], st.shape(x), x.reshape((-1, x.shape[2])) * 2.0, st.flatten(x)]
    fn, ref = compiled_in_modes("shape", [x], outs)
    a = values("float64", (2, 3, 4), 1)
    check_against_reference(fn, ref, a, compare=KERNELS)
    check_against_reference(fn, ref, a[::-1, :, ::-1], compare=KERNELS)
    check_against_reference(fn, ref, np.zeros((0, 3, 4)), compare=KERNELS)
    s = st.specify_shape(st.dmatrix("m"), (2, None))
    g, gref = compiled_in_modes("specify", [s.owner.inputs[0]], s * 3.0)
    check_against_reference(g, gref, np.ones((2, 5)), compare=KERNELS)
    with pytest.raises(ValueError):
        g(np.ones((3, 5)))


def test_views_are_not_leaked():
    x = st.dmatrix("x")
    fn, _ = compiled_in_modes("views", [x], [x.T, x.dimshuffle(1, "x", 0), x.reshape((-1,))])
    a = values("float64", (2, 3), 1)
    for out in fn(a):
        assert not np.shares_memory(out, a)
