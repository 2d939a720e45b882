"""Products in compiled kernels call NumPy's own BLAS (``numpy_blas.blas_dot``).

Checked: values against ``np.dot`` on every layout BLAS can read directly
(C, F, a slice of rows or columns with its leading dimension) and on those
it cannot (negative, zero and odd strides, which are copied), with empty and
size-1 dimensions; that compiled graphs reach the library through symlab's
symbols; that without the library ``blas_dot`` is Numba's ``np.dot``; and that
the cache keys name the library. Layouts Numba does not know statically
(``A``) share one compiled signature, so the cases of one signature are
grouped to keep compiles few.
"""

from __future__ import annotations

import warnings

import numba
import numpy as np
import pytest

import symlab
import symlab.tensor as st
from symlab.compile.numba import numpy_blas, numpy_blas_library
from symlab.compile.numba.numpy_blas import blas_dot

pytestmark = pytest.mark.numba

needs_library = pytest.mark.skipif(numpy_blas.LIBRARY is None, reason="NumPy's BLAS was not found in this install")


@numba.njit
def jitted_dot(a, b):
    return blas_dot(a, b)


def tolerance(dtype):
    return {"rtol": 2e-5, "atol": 2e-5} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-12}


def unknown_layouts(m, dtype, rng):
    """Matrices of shape ``m``, all of Numba layout ``A``: what BLAS reads directly, and what it cannot."""
    rows, cols = m
    big = rng.standard_normal((2 * rows + 1, 2 * cols + 3)).astype(dtype)
    return {
        "rows contiguous, ld > cols": big[:rows, :cols],
        "columns contiguous, ld > rows": np.asfortranarray(big)[:rows, :cols],
        "every other row": big[: 2 * rows : 2, :cols],
        "every other column (copied)": big[:rows, : 2 * cols : 2],
        "reversed columns (copied)": big[:rows, :cols][:, ::-1],
        "reversed rows": big[:rows, :cols][::-1],
        "broadcast row (copied)": np.broadcast_to(big[:1, :cols], (rows, cols)),
    }


@needs_library
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matrix_products_on_every_layout(dtype):
    rng = np.random.default_rng(0)
    for a_name, a in unknown_layouts((6, 5), dtype, rng).items():
        for b_name, b in unknown_layouts((5, 4), dtype, rng).items():
            np.testing.assert_allclose(jitted_dot(a, b), np.dot(a, b), **tolerance(dtype), err_msg=f"{a_name} @ {b_name}")
    # statically known layouts: C, F (a transpose)
    a = rng.standard_normal((6, 5)).astype(dtype)
    b = rng.standard_normal((4, 5)).astype(dtype)
    np.testing.assert_allclose(jitted_dot(a, b.T), a @ b.T, **tolerance(dtype))
    np.testing.assert_allclose(jitted_dot(a.T, a), a.T @ a, **tolerance(dtype))
    assert jitted_dot(a, b.T).dtype == dtype


@needs_library
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matrix_vector_products_on_every_layout(dtype):
    rng = np.random.default_rng(1)
    base = rng.standard_normal(11).astype(dtype)
    vectors = {"contiguous": base[:5], "stride 2": base[:10:2], "reversed (copied)": base[:5][::-1], "broadcast (copied)": np.broadcast_to(base[:1], (5,))}
    for m_name, m in unknown_layouts((6, 5), dtype, rng).items():
        for v_name, v in vectors.items():
            np.testing.assert_allclose(jitted_dot(m, v), m @ v, **tolerance(dtype), err_msg=f"{m_name} @ {v_name}")
        for v_name, v in {"contiguous": base[:6], "stride 2": base[:11:2], "reversed (copied)": base[:6][::-1]}.items():
            np.testing.assert_allclose(jitted_dot(v, m), v @ m, **tolerance(dtype), err_msg=f"{v_name} @ {m_name}")
    x = rng.standard_normal((40, 7)).astype(dtype)
    g = rng.standard_normal(40).astype(dtype)
    np.testing.assert_allclose(jitted_dot(x.T, g), x.T @ g, **tolerance(dtype))  # the logistic regression's gradient
    np.testing.assert_allclose(jitted_dot(g, x), g @ x, **tolerance(dtype))


@needs_library
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_vector_products(dtype):
    rng = np.random.default_rng(2)
    v = rng.standard_normal(9).astype(dtype)
    for a, b in [(v[:4], v[4:8]), (v[:8:2], v[1:9:2]), (v[:4][::-1], v[:4]), (np.broadcast_to(v[:1], (4,)), v[:4])]:
        np.testing.assert_allclose(jitted_dot(a, b), np.dot(a, b), **tolerance(dtype))


@needs_library
def test_empty_and_size_one_dimensions():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 4))
    cases = [
        (np.zeros((0, 4)), a.T),  # no rows
        (a[:, :0], np.zeros((0, 5))),  # nothing summed: zeros, not whatever memory held
        (a, np.zeros((4, 0))),
        (a[:1], a.T),  # one row, any row stride
        (a[:, :1], a[:1]),  # one column: an outer product
        (a[:1, :1], a[:1, :1]),
    ]
    for x, y in cases:
        result = jitted_dot(x[:, :], y[:, :])
        np.testing.assert_allclose(result, np.dot(x, y), rtol=1e-12, err_msg=f"{x.shape} @ {y.shape}")
        assert result.shape == np.dot(x, y).shape
    assert jitted_dot(a[:, :0], np.zeros(0)).tolist() == [0.0, 0.0, 0.0]
    assert jitted_dot(np.zeros(0), np.zeros(0)) == 0.0


@needs_library
def test_compiled_graphs_call_numpys_blas():
    x = st.dmatrix("x")
    g = st.dvector("g")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        f = symlab.function([x, g], [st.dot(x.T, g), st.dot(x, x.T)], mode="NUMBA")
    xv = np.random.default_rng(4).standard_normal((50, 8))
    gv = np.arange(50.0)
    got_v, got_m = f(xv, gv)
    np.testing.assert_allclose(got_v, xv.T @ gv, rtol=1e-12)
    np.testing.assert_allclose(got_m, xv @ xv.T, rtol=1e-12)
    sources = "".join(k.source for k in f.maker.runner.generated.kernels)
    assert sources.count("blas_dot(") == 2 and "np.dot" not in sources
    jitted_dot(xv.T, gv), jitted_dot(xv, xv.T)
    llvm = "".join(jitted_dot.inspect_llvm().values())  # what blas_dot compiles to
    assert numpy_blas_library.symbol("dgemv") in llvm and numpy_blas_library.symbol("dgemm") in llvm


def test_without_the_library_blas_dot_is_numbas_np_dot(monkeypatch):
    monkeypatch.setattr(numpy_blas, "LIBRARY", None)

    @numba.njit
    def fallback_dot(a, b):
        return blas_dot(a, b)

    a = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(fallback_dot(a, a[:, ::-1].T), np.dot(a, a[:, ::-1].T))
    llvm = "".join(fallback_dot.inspect_llvm().values())
    assert "symlab_blas_" not in llvm


def test_cache_keys_name_the_library():
    from symlab.compile.numba import cache, environment

    cache.cache_key("")  # sets the environment string
    library = numpy_blas.LIBRARY
    assert (library.identity if library is not None else "numba's") in environment._ENV


def test_the_library_found_is_numpys():
    library = numpy_blas_library.find_library()
    if library is None:
        pytest.skip("this NumPy ships no BLAS of its own")
    assert set(library.addresses) == set(numpy_blas_library.FUNCTIONS) and all(library.addresses.values())
    assert library.int_bits in (32, 64)
    assert "blas" in library.path.lower() and "numpy" in library.path.lower()
