"""Blocked Elemwise kernels: NumPy's own loops for transcendental functions, called from Numba.

The claim under test is exact: a compiled kernel gives the bits NumPy gives
on contiguous data (``assert_array_equal``, NaN where NumPy has NaN), on
every layout (contiguous, reversed, strided, broadcast, 0-d, empty) and at
every size around the block and parallel boundaries, and works in place.
NumPy itself is not layout-independent: its loops may take another code
path on a negative stride (``np.exp(c[::-1])`` can differ in the last bit
from ``np.exp(c[::-1].copy())``), so the reference is NumPy on C-contiguous
copies.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracle import compile_function

import symlab
import symlab.tensor as st
from symlab.compile.numba import kernels_blocked, ufunc_loops
from symlab.compile.numba.kernels import kernel_for

pytestmark = pytest.mark.numba

SPECIAL = [0.0, -0.0, 1e-300, -1e-300, 0.5, -0.5, 1.0, -1.0, 2.0, 3.5, -7.25, 30.0, -30.0, 700.0, -745.0, 1e10, np.inf, -np.inf, np.nan]


def values(dtype, n=2500, seed=0):
    rng = np.random.default_rng(seed)
    v = np.concatenate([np.array(SPECIAL), rng.normal(scale=3.0, size=n), rng.uniform(-1, 1, size=n)])
    return v.astype(dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_every_loop_gives_numpys_bits_on_every_layout(dtype):
    names = sorted(name for name, d in ufunc_loops.AVAILABLE if d == dtype)
    assert {"exp", "log", "log1p", "expm1", "sin", "cos", "tanh"} <= set(names)
    x = st.vector("x", dtype=dtype)
    outs = [getattr(st, name)(x) for name in names]
    for node in (o.owner for o in outs):
        assert kernels_blocked.uses_loops(node)
    f = compile_function([x], outs, "NUMBA")
    v = values(dtype)
    with np.errstate(all="ignore"):
        for arg in (v, v[::-1], v[::3], v[:0], v[:1], v[:1023], v[:1025]):
            for name, got in zip(names, f(arg)):
                want = getattr(np, name)(np.ascontiguousarray(arg))
                np.testing.assert_array_equal(got, want, err_msg=f"{name} {dtype} {arg.strides}")
                assert got.dtype == dtype


def test_fused_chain_matches_numpy_exactly_around_block_and_parallel_sizes():
    x, y = st.dvectors("x", "y")
    out = st.exp(-x**2) * st.sin(y) + st.log1p(x * x) * 0.5
    f = compile_function([x, y], out, "NUMBA")
    ref = symlab.function([x, y], out, mode="NUMPY")
    (node,) = [n for n in f.maker.fgraph.toposort()]
    source = kernel_for(node, "k").source
    flat_block = source.split("def k_block(")[1].split("\ndef ")[0]
    assert flat_block.count("ufunc_loops.") == 3 and flat_block.count("for i in range(m):") == 2
    assert "numba.prange" in source  # one output, several operations: the contiguous path runs on every core
    rng = np.random.default_rng(1)
    for n in (0, 1, 1023, 1024, 1025, 5000, kernels_blocked.CHUNK + 1, 200_000, 200_001):
        a, b = rng.normal(size=n), rng.normal(size=n)
        np.testing.assert_array_equal(f(a, b), ref(a, b))
        np.testing.assert_array_equal(f(a[::-1], b), ref(a[::-1].copy(), b))


def test_broadcasting_in_both_paths_and_a_broadcast_input_feeding_a_loop():
    x = st.dmatrix("x")
    col = st.TensorType("float64", shape=(None, 1))("col")
    s = st.dscalar("s")
    outs = [st.exp(col) * st.sin(x), st.log1p(x * x) + st.exp(s), st.tanh(col + s)]
    f = compile_function([x, col, s], outs, "NUMBA")
    ref = symlab.function([x, col, s], outs, mode="NUMPY")
    rng = np.random.default_rng(2)
    xv, cv = rng.normal(size=(7, 1500)), rng.normal(size=(7, 1))
    for xa, ca in ((xv, cv), (xv[:, ::-1], cv[::-1]), (np.asfortranarray(xv), cv), (xv[:0], cv[:0]), (xv[:, :0], cv)):
        contiguous = (np.ascontiguousarray(xa), np.ascontiguousarray(ca), np.float64(0.3))
        for got, want in zip(f(xa, ca, np.float64(0.3)), ref(*contiguous)):
            np.testing.assert_array_equal(got, want)


def test_zero_d_and_several_outputs():
    a, b = st.dscalars("a", "b")
    f = compile_function([a, b], [st.exp(a) + st.cos(b), st.exp(a), st.log(a) * b], "NUMBA")
    ref = symlab.function([a, b], [st.exp(a) + st.cos(b), st.exp(a), st.log(a) * b], mode="NUMPY")
    for av, bv in ((0.25, 2.0), (-1.0, 0.0), (np.inf, np.nan)):
        with np.errstate(all="ignore"):
            for got, want in zip(f(av, bv), ref(av, bv)):
                assert got.shape == () and np.array_equal(got, want, equal_nan=True)


def test_in_place_kernel_reads_its_input_before_overwriting_it():
    A = st.dmatrix("A")
    v = st.dvector("v")
    h = st.dot(A, v)  # an intermediate: the fused elemwise after it may work in place
    out = st.exp(h) * st.sin(h) + st.log1p(h * h)
    f = compile_function([A, v], out, "NUMBA")
    nodes = f.maker.fgraph.toposort()
    elemwise = [n for n in nodes if kernels_blocked.uses_loops(n)]
    assert elemwise and any(n.op.destroy_map for n in elemwise), "the inplace pass should have made the kernel destructive"
    rng = np.random.default_rng(3)
    Av, vv = rng.normal(size=(3000, 5)) * 0.3, rng.normal(size=5)
    hv = Av @ vv
    np.testing.assert_allclose(f(Av, vv), np.exp(hv) * np.sin(hv) + np.log1p(hv * hv), rtol=1e-13)


def test_scratch_rows_are_reused_after_their_last_read():
    x = st.dvector("x")
    out = st.exp(st.sin(st.cos(st.tanh(st.log1p(x * x)))))
    f = compile_function([x], out, "NUMBA")
    (node,) = f.maker.fgraph.toposort()
    source = kernel_for(node, "k").source
    flat_block = source.split("def k_block(")[1].split("\ndef ")[0]
    assert flat_block.count("ufunc_loops.") == 5
    assert "s_float64 = np.empty((1, 1024)" in source  # every loop works in place on one row
    v = values("float64")
    np.testing.assert_array_equal(f(v), np.exp(np.sin(np.cos(np.tanh(np.log1p(v * v))))))


def test_integer_input_is_computed_inline():
    i = st.lvector("i")
    node = st.exp(i).owner
    assert not kernels_blocked.uses_loops(node)  # int64 -> float64 has no same-dtype loop
    f = compile_function([i], st.exp(i), "NUMBA")
    np.testing.assert_allclose(f(np.arange(5)), np.exp(np.arange(5)), rtol=1e-15)


def test_loop_table_lookup():
    assert ufunc_loops.loop_address(np.add, "float64") is None  # not unary
    assert ufunc_loops.loop_address(np.exp, "int8") is None  # no int8 -> int8 loop
    assert ufunc_loops.loop_address(np.exp, "float64") == ufunc_loops.AVAILABLE[("exp", "float64")]
    v = values("float32")
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(ufunc_loops.call_loop_from_python("log", v), np.log(v))
    assert ufunc_loops.symbol("exp", "float64") == "symlab_npy_exp_float64"


def test_in_place_into_a_transposed_view_copies_the_result_in():
    A, B = st.dmatrices("A", "B")
    h = st.dot(A, B).T  # the fused kernel's input is a non-contiguous view of an intermediate
    out = st.exp(h) * st.sin(h) + st.log1p(h * h)
    f = compile_function([A, B], out, "NUMBA")
    elemwise = [n for n in f.maker.fgraph.toposort() if kernels_blocked.uses_loops(n)]
    assert any(n.op.destroy_map for n in elemwise), "the inplace pass should have made the kernel destructive"
    rng = np.random.default_rng(4)
    Av, Bv = rng.normal(size=(300, 4)) * 0.3, rng.normal(size=(4, 500))
    hv = (Av @ Bv).T
    got = f(Av, Bv)
    np.testing.assert_allclose(got, np.exp(hv) * np.sin(hv) + np.log1p(hv * hv), rtol=1e-13)
    assert got.shape == (500, 300)
