"""Float sums along the last axis call NumPy's pairwise ``add`` loop from compiled code.

The claim under test: on C-contiguous input the compiled sum gives the bits
of ``np.sum`` (so NUMBA and NUMPY modes agree exactly), on every other layout
it agrees to rounding, and sums that do not reduce the last axis keep the
plain loop. Pairwise summation is also more accurate than a running sum: a
test sums a million equal values whose running sum drifts.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import symlab
import symlab.tensor as st
from symlab.compile.numba.kernels import kernel_for
from symlab.compile.numba.ufunc_table import reduce_loop_address, sum_from_python

pytestmark = pytest.mark.numba


def numba_function(inputs, outputs):
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # a fallback to perform would not test the kernels
        return symlab.function(inputs, outputs, mode="NUMBA")


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
        assert f"ufunc_loops.sum_{dtype}" in kernel_for(s.owner, "k").source
    outs = [*sums, v.mean()]
    f = numba_function([v, m, t], outs)
    g = symlab.function([v, m, t], outs, mode="NUMPY")
    for n in (0, 1, 7, 8, 9, 127, 128, 129, 1000, 5003):
        args = [rng.standard_normal(n).astype(dtype), rng.standard_normal((3, n)).astype(dtype),
                rng.standard_normal((2, 3, n)).astype(dtype)]
        got, want = f(*args), g(*args)
        for k, (a, b) in enumerate(zip(got, want)):
            np.testing.assert_array_equal(a, b, err_msg=f"output {k}, n={n}")
            assert a.dtype == b.dtype == dtype


@pytest.mark.parametrize("layout", ["transposed", "reversed", "strided"])
def test_sums_of_views_agree_to_rounding(layout):
    rng = np.random.default_rng(2)
    m = st.dmatrix("m")
    t = st.tensor("float64", shape=(None, None, None), name="t")
    f = numba_function([m, t], [m.sum(axis=1), m.sum(), t.sum(axis=(0, 2)), t.sum()])
    base_m, base_t = rng.standard_normal((40, 300)), rng.standard_normal((4, 5, 60))
    view = {
        "transposed": lambda a: a.T,
        "reversed": lambda a: a[..., ::-1],
        "strided": lambda a: a[..., ::3],
    }[layout]
    vm, vt = view(base_m), view(base_t)
    want = [vm.sum(axis=1), vm.sum(), vt.sum(axis=(0, 2)), vt.sum()]
    for k, (a, b) in enumerate(zip(f(vm, vt), want)):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-12, err_msg=f"output {k}")
    assert vm.flags.c_contiguous is False


def test_sums_that_keep_the_last_axis_use_the_plain_loop():
    m = st.dmatrix("m")
    source = kernel_for(m.sum(axis=0).owner, "k").source
    assert "ufunc_loops" not in source
    x = np.random.default_rng(3).standard_normal((50, 7))
    np.testing.assert_array_equal(numba_function([m], m.sum(axis=0))(x), x.sum(axis=0))


def test_integer_sums_keep_the_plain_loop():
    v = st.lvector("v")
    assert "ufunc_loops" not in kernel_for(v.sum().owner, "k").source
    x = np.arange(-5000, 10001, dtype="int64")
    assert numba_function([v], v.sum())(x) == x.sum()


def test_pairwise_sum_does_not_drift_like_a_running_sum():
    v = st.dvector("v")
    x = np.full(1_000_000, 0.1)
    running = float(np.add.accumulate(x)[-1])  # a running sum, as a plain loop computes it
    got = float(numba_function([v], v.sum())(x))
    exact = 100_000.0
    assert abs(got - exact) < abs(running - exact) / 100
    assert got == np.sum(x)
