"""Float sums call NumPy's pairwise ``add`` loop from compiled code, in ``np.sum``'s order.

The claim under test: over any set of axes, on any layout (contiguous,
transposed, strided, reversed, Fortran), the compiled sum and mean give the
bits of ``np.sum``/``np.mean`` (so NUMBA and NUMPY modes agree exactly),
including sums over non-adjacent axes such as a convolution's bias gradient
over (0, 2, 3) and the reductions NumPy buffers. Pairwise summation is also
more accurate than a running sum: a test sums a million equal values whose
running sum drifts.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracle import compile_function

import symlab
import symlab.tensor as st
from symlab.compile.numba.kernels import kernel_for
from symlab.compile.numba.kernels_reduction_order import _shared_sum_in_order, _shared_sum_plan
from symlab.compile.numba.ufunc_table import reduce_loop_address, sum_from_python

pytestmark = pytest.mark.numba


def test_the_reduce_loop_is_numpys_add_loop_and_sums_pairwise():
    assert reduce_loop_address(np.exp, "float64") is None  # not binary
    assert reduce_loop_address(np.add, "float64") is not None
    x = np.random.default_rng(0).standard_normal(4097)
    for v in (x, x[::-1], x[::5], x[:0], x[:7]):
        assert sum_from_python(v) == np.sum(v)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_sums_along_the_last_axis_give_numpys_bits_on_contiguous_input(dtype):
    rng = np.random.default_rng(1)
    v = st.vector("v", dtype=dtype)
    m = st.matrix("m", dtype=dtype)
    t = st.tensor(dtype, shape=(None, None, None), name="t")
    sums = [v.sum(), m.sum(axis=1), m.sum(), t.sum(axis=2), t.sum(axis=(1, 2)), t.sum()]
    for s in sums:
        assert f"sum_in_order_{dtype}(" in kernel_for(s.owner, "k").source  # NumPy's add loop, in its order
    outs = [*sums, v.mean()]
    f = compile_function([v, m, t], outs, "NUMBA")
    g = symlab.function([v, m, t], outs, mode="NUMPY")
    for n in (0, 1, 7, 8, 9, 127, 128, 129, 1000, 5003):
        args = [rng.standard_normal(n).astype(dtype), rng.standard_normal((3, n)).astype(dtype),
                rng.standard_normal((2, 3, n)).astype(dtype)]
        got, want = f(*args), g(*args)
        for k, (a, b) in enumerate(zip(got, want)):
            np.testing.assert_array_equal(a, b, err_msg=f"output {k}, n={n}")
            assert a.dtype == b.dtype == dtype


def order_sensitive(rng, shape, dtype):
    """Values whose float sum depends on the order of the additions."""
    return (rng.standard_normal(shape) * 10.0 ** rng.integers(-6, 7, shape)).astype(dtype)


LAYOUTS = {
    "contiguous": lambda a: a,
    "transposed": lambda a: a.T,
    "reversed": lambda a: a[..., ::-1],
    "strided": lambda a: a[:, ::2],
    "fortran": np.asfortranarray,
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_sums_over_any_axes_give_numpys_bits_on_every_layout(dtype):
    """Non-adjacent axes such as (0, 2, 3), whose inner axes NumPy's iterator merges into one pairwise row, and
    views, which it sorts by stride (and buffers where reduced axes do not merge)."""
    rng = np.random.default_rng(4)
    t4 = st.tensor(dtype, shape=(None,) * 4, name="t4")
    t3 = st.tensor(dtype, shape=(None,) * 3, name="t3")
    axes4 = [(0, 2, 3), (1, 3), (0, 2)]
    axes3 = [(0, 2), (1,)]
    outs = [t4.sum(axis=a) for a in axes4] + [t3.sum(axis=a) for a in axes3] + [st.mean(t4, axis=(0, 2, 3))]
    f = compile_function([t4, t3], outs, "NUMBA")
    for shape4, shape3 in [((4, 5, 6, 7), (3, 9, 17)), ((2, 3, 9, 15), (2, 129, 3)), ((3, 1, 4, 33), (1, 40, 7))]:
        for name, view in LAYOUTS.items():
            v4, v3 = view(order_sensitive(rng, shape4, dtype)), view(order_sensitive(rng, shape3, dtype))
            want = [v4.sum(axis=a) for a in axes4] + [v3.sum(axis=a) for a in axes3] + [v4.mean(axis=(0, 2, 3))]
            for k, (a, b) in enumerate(zip(f(v4, v3), want)):
                assert a.dtype == b.dtype == dtype
                np.testing.assert_array_equal(a, b, err_msg=f"{name} {shape4} {shape3}, output {k}")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_sums_around_the_pairwise_and_buffer_boundaries(dtype):
    """Rows of 7 to 129 elements (NumPy's pairwise loop: 8 partial sums, blocks of 128), and reductions that
    NumPy buffers in pieces of at most 8192 elements (a multiple of the inner row: 8100 + 1900 here)."""
    rng = np.random.default_rng(5)
    t = st.tensor(dtype, shape=(None,) * 3, name="t")
    outs = [t.sum(), t.sum(axis=(1, 2)), t.sum(axis=(0, 2)), t.sum(axis=(0, 1))]
    f = compile_function([t], outs, "NUMBA")
    cases = [order_sensitive(rng, (2, 3, n), dtype) for n in (7, 8, 9, 16, 127, 128, 129)]
    cases.append(order_sensitive(rng, (2, 100, 100), dtype)[:, ::2])  # 10000 reduced elements, buffered
    cases.append(order_sensitive(rng, (3, 130, 70), dtype)[:, ::2].transpose(0, 2, 1))
    cases.append(order_sensitive(rng, (2, 9000, 1), dtype))  # one merged row longer than the buffer
    for v in cases:
        for k, (a, b) in enumerate(zip(f(v), [v.sum(), v.sum(axis=(1, 2)), v.sum(axis=(0, 2)), v.sum(axis=(0, 1))])):
            np.testing.assert_array_equal(a, b, err_msg=f"{v.shape} {v.strides}, output {k}")


def test_a_bias_gradient_has_the_numpy_backends_bits():
    """The gradient of ``b.dimshuffle('x', 0, 'x', 'x')`` sums over the axes (0, 2, 3), as in LeNet's
    convolution layers; ``keepdims`` sums put the reduced axes back with a DimShuffle."""
    rng = np.random.default_rng(6)
    x = st.dtensor4("x")
    b = st.dvector("b")
    cost = st.tanh(x + b.dimshuffle("x", 0, "x", "x")).sum()
    outs = [st.grad(cost, b), x.sum(axis=(0, 2, 3), keepdims=True), st.mean(st.tanh(x), axis=(1, 3), keepdims=True)]
    f = compile_function([x, b], outs, "NUMBA")
    g = symlab.function([x, b], outs, mode="NUMPY")
    args = [order_sensitive(rng, (4, 5, 6, 7), "float64"), rng.standard_normal(5)]
    for k, (a, want) in enumerate(zip(f(*args), g(*args))):
        np.testing.assert_array_equal(a, want, err_msg=f"output {k}")
    np.testing.assert_array_equal(f(*args)[0], (1 - np.tanh(args[0] + args[1][:, None, None]) ** 2).sum(axis=(0, 2, 3)))


def test_the_order_model_matches_numpy_on_random_layouts():
    """The plan the kernels follow, run in plain Python with NumPy's own add loop, against ``np.sum`` on random
    shapes, axes, transposes, steps (also negative) and sizes."""
    rng = np.random.default_rng(7)
    for trial in range(400):
        nd = int(rng.integers(1, 5))
        shape = tuple(int(s) for s in rng.choice([1, 2, 3, 8, 9, 17], nd))
        dtype = ["float64", "float32"][trial % 2]
        steps = rng.choice([1, 2, -1, -2], nd) if trial % 3 else np.ones(nd, int)
        base = order_sensitive(rng, tuple(s * abs(k) for s, k in zip(shape, steps)), dtype)
        a = base[tuple(slice(None, None, int(k)) for k in steps)].transpose(rng.permutation(nd))
        axes = tuple(sorted(rng.choice(nd, int(rng.integers(0, nd + 1)), replace=False).tolist()))
        reduced = np.array([d in axes for d in range(nd)], np.int64)
        kept = [a.shape[d] for d in range(nd) if d not in axes]
        c = np.ascontiguousarray(a)
        out = np.zeros(int(np.prod(kept)), a.dtype)
        _shared_sum_in_order(c.reshape(-1), np.array(c.strides) // c.itemsize, np.array(a.shape), np.array(a.strides),
                             reduced, out)
        np.testing.assert_array_equal(out.reshape(kept), a.sum(axis=axes), err_msg=f"{a.shape} {a.strides} {axes}")


def test_the_plan_of_a_buffered_reduction():
    """Reduced axes that do not merge in memory are buffered: pieces of a multiple of the row, at most 8192."""
    a = np.zeros((2, 100, 100))[:, ::2]
    order, block, piece = _shared_sum_plan(np.array(a.shape), np.array(a.strides), np.array([1, 1, 1]))
    assert (order.tolist(), int(block), int(piece)) == ([0, 1, 2], 10000, 8100)
    order, block, piece = _shared_sum_plan(np.array(a.shape), np.array(a.strides), np.array([0, 1, 1]))
    assert (int(block), int(piece)) == (5000, 5000)  # one piece per kept index
    t = np.zeros((7, 50)).T
    order, block, piece = _shared_sum_plan(np.array(t.shape), np.array(t.strides), np.array([0, 1]))
    assert (order.tolist(), int(block)) == ([1, 0], 0)  # the kept axis is innermost: element by element


def test_sums_that_keep_the_last_axis_add_as_numpy_does():
    m = st.dmatrix("m")
    f = compile_function([m], m.sum(axis=0), "NUMBA")
    x = np.random.default_rng(3).standard_normal((50, 7)) * 1e6
    for v in (x, x.T.copy().T, x[::-1], x[:, ::2]):
        np.testing.assert_array_equal(f(v), v.sum(axis=0))


def test_integer_sums_keep_the_plain_loop():
    v = st.lvector("v")
    assert "ufunc_loops" not in kernel_for(v.sum().owner, "k").source
    x = np.arange(-5000, 10001, dtype="int64")
    assert compile_function([v], v.sum(), "NUMBA")(x) == x.sum()


def test_pairwise_sum_does_not_drift_like_a_running_sum():
    v = st.dvector("v")
    x = np.full(1_000_000, 0.1)
    running = float(np.add.accumulate(x)[-1])  # a running sum, as a plain loop computes it
    got = float(compile_function([v], v.sum(), "NUMBA")(x))
    exact = 100_000.0
    assert abs(got - exact) < abs(running - exact) / 100
    assert got == np.sum(x)
