"""How two results are compared: the same bits, or the same values within a stated tolerance.

Each function returns ``None`` when the results agree and otherwise a short text saying where and how they
differ (it becomes the failure's message), so a caller can count, report and shrink without assertions
in the middle.

The promises checked:

* **bits** (:func:`same_bits`): the same dtype, shape, and bit pattern of every element, except that any
  NaN equals any NaN (a NaN's payload is not promised). ``-0.0`` and ``0.0`` differ. This is what NUMBA
  promises against NUMPY on elementwise graphs (the same optimized graph, NumPy's own loops), and what
  two runs of the NumPy backend on the same graph give.
* **close, NaN where NaN** (:func:`close` with ``strict=True``): where the reference is NaN the result is
  NaN, where it is +-inf the result is the same infinity, and elsewhere ``|got - ref| <= atol + rtol*|ref|``
  (:data:`TOLERANCE` by dtype; ``atol`` is scaled by the largest finite magnitude of the reference, since
  reordered sums lose bits relative to their terms, not to their result). Integers and booleans: equal.
* **close where the reference is finite** (``strict=False``): the default rewrites may, by their documented
  contract, change a value only where the unoptimized graph lost it to an overflow or to an infinite or NaN
  input (``symlab/rewriting/rules/__init__.py``), so only the elements that the reference computes as
  finite numbers are compared.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: (rtol, atol) by float dtype: reassociated sums, pairwise against running sums, fused kernels.
TOLERANCE = {"float64": (1e-7, 1e-10), "float32": (2e-3, 1e-5), "float16": (2e-2, 1e-3)}


def _where(mask: np.ndarray) -> str:
    """The first index where ``mask`` is true, as text."""
    if mask.ndim == 0:
        return "()"
    return str(tuple(int(i) for i in np.argwhere(mask)[0]))


def _same_frame(got: Any, ref: Any) -> tuple[np.ndarray, np.ndarray, str | None]:
    g, r = np.asarray(got), np.asarray(ref)
    if g.dtype != r.dtype:
        return g, r, f"dtype {g.dtype}, expected {r.dtype}"
    if g.shape != r.shape:
        return g, r, f"shape {g.shape}, expected {r.shape}"
    return g, r, None


def same_bits(got: Any, ref: Any) -> str | None:
    """``None`` if ``got`` has the dtype, shape and bits of ``ref`` (any NaN equals any NaN)."""
    g, r, problem = _same_frame(got, ref)
    if problem:
        return problem
    if g.dtype.kind == "f":
        both_nan = np.isnan(g) & np.isnan(r)
        itype = np.dtype(f"u{g.dtype.itemsize}")
        differ = (g.view(itype) != r.view(itype)) & ~both_nan
    else:
        differ = g != r
    differ = np.asarray(differ)
    if not differ.any():
        return None
    at = _where(differ)
    index = tuple(np.argwhere(differ)[0]) if differ.ndim else ()
    return f"bits differ at {at}: {g[index]!r} vs {r[index]!r} ({int(differ.sum())} of {differ.size} elements)"


def close(got: Any, ref: Any, strict: bool = True, precision: str | None = None) -> str | None:
    """``None`` if ``got`` equals ``ref`` within :data:`TOLERANCE` (see the module docstring for ``strict``).

    ``precision``: the float dtype whose tolerance applies, when the computation ran in a lower precision
    than its result's dtype (``st.cast(x32 ** 3, "float64")`` has float32's rounding errors).
    """
    g, r, problem = _same_frame(got, ref)
    if problem:
        return problem
    if g.dtype.kind != "f":
        differ = np.asarray(g != r)
        if differ.any():
            index = tuple(np.argwhere(differ)[0]) if differ.ndim else ()
            return f"differ at {_where(differ)}: {g[index]!r} vs {r[index]!r}"
        return None
    # the looser of the two tolerances (each of TOLERANCE's entries is looser in both numbers than the next)
    rtol, atol = max(TOLERANCE[g.dtype.name], TOLERANCE.get(precision or "", (0.0, 0.0)))
    finite = np.isfinite(r)
    if strict:
        nan_differs = np.isnan(r) != np.isnan(g)
        inf_differs = np.isinf(r) & (g != r)
        bad_special = np.asarray(nan_differs | inf_differs)
        if bad_special.any():
            index = tuple(np.argwhere(bad_special)[0]) if bad_special.ndim else ()
            return f"NaN/inf not where the reference has them, at {_where(bad_special)}: {g[index]!r} vs {r[index]!r}"
    scale = float(np.max(np.abs(r[finite]), initial=1.0))
    with np.errstate(all="ignore"):
        err = np.abs(g.astype("float64") - r.astype("float64"))
        bad = np.asarray(finite & ~(err <= atol * scale + rtol * np.abs(r.astype("float64"))))
    if bad.any():
        index = tuple(np.argwhere(bad)[0]) if bad.ndim else ()
        return (f"values differ at {_where(bad)}: {g[index]!r} vs {r[index]!r} "
                f"(rtol {rtol}, atol {atol} x {scale:.3g}; {int(bad.sum())} of {bad.size} elements)")
    return None
