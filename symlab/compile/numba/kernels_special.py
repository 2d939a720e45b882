r"""Numba kernels of ``Softmax`` and ``LogSoftmax``, one slice along ``axis`` at a time.

A softmax along the last axis of a float array works on each row of its
fresh output with NumPy's own loops (:mod:`~symlab.compile.numba.ufunc_loops`):
``x - max`` in the input dtype, then ``exp`` in place by NumPy's vectorised
loop, the sum by NumPy's pairwise ``add`` loop, and the divisions. On a
C-contiguous input these are the bits of the op's ``perform``, and the
exponentials run several times faster than Numba's scalar ``exp``:

>>> import symlab.tensor as st
>>> print(kernel_for(st.softmax(st.dvector("x")).owner, "k").source)
def k(x):
    if x.size == 0:
        return x.copy()
    out = np.empty(x.shape, np.float64)
    xr = x[:]
    r = out[:]
    m = -np.inf
    for i in range(xr.shape[0]):
        v = xr[i]
        if v > m:
            m = v
        elif v != v:
            m = np.nan
    if not np.isfinite(m):
        m = 0.0
    mx = np.float64(m)
    for i in range(xr.shape[0]):
        r[i] = xr[i] - mx
    ufunc_loops.exp_float64(r, r)
    s = ufunc_loops.sum_float64(r)
    for i in range(r.shape[0]):
        r[i] = r[i] / s  # 0 / 0 is NaN when every exponential is 0, as in NumPy
    return out
<BLANKLINE>

A log-softmax along the last axis does the same with ``log(sum(exp))``,
the exponentials in a row of scratch. Any other (log-)softmax makes three
passes over each slice: the maximum is subtracted first (a NaN maximum
propagates, an infinite one becomes 0, as in the op's ``perform``), sums
accumulate in float64, and the results are written in the input dtype, with
no temporaries besides the output. Along an axis of an array of
:data:`PARALLEL_MIN_SIZE` elements or more, the slices run in parallel
(``numba.prange``, ``parallel=True``).
"""

from __future__ import annotations

from symlab.compile.numba.codegen import check_dtypes, dtype_src, index_tuple
from symlab.compile.numba.kernels import Kernel, function_source, kernel_for, register_kernel
from symlab.graph.basic import Apply
from symlab.tensor.special import LogSoftmax, Softmax, _SoftmaxBase

#: Number of elements from which a softmax along an axis runs its slices in parallel (``numba.prange``).
PARALLEL_MIN_SIZE = 100_000

#: The maximum ``m`` of a slice, as ``perform`` takes it: a step for each value ``v`` (a NaN propagates),
#: then the end (an infinite maximum, or none, becomes 0).
MAX_STEP = ["if v > m:", "    m = v", "elif v != v:", "    m = np.nan"]
MAX_END = ["if not np.isfinite(m):", "    m = 0.0"]


def _row_path(op: _SoftmaxBase, node: Apply, searched: list[int]) -> str | None:
    """The dtype of the NumPy loops (``exp``, pairwise ``add``, and ``log`` for a log-softmax) that a
    (log-)softmax along the last axis calls on each row (see the module's docstring), or None if it cannot."""
    from symlab.compile.numba.ufunc_table import AVAILABLE, REDUCE_AVAILABLE

    dtype = node.inputs[0].type.dtype
    ndim = node.inputs[0].ndim
    if ndim == 0 or searched != [ndim - 1] or node.outputs[0].type.dtype != dtype:
        return None
    loops = ["exp"] if isinstance(op, Softmax) else ["exp", "log"]
    if any((f, dtype) not in AVAILABLE for f in loops) or ("add", dtype) not in REDUCE_AVAILABLE:
        return None
    return dtype


def _row_lines(op: _SoftmaxBase, ndim: int, dtype: str) -> list[str]:
    """The (log-)softmax of one row along the last axis by NumPy's loops (the outer loop variables are set)."""
    row = index_tuple([*(f"o{d}" for d in range(ndim - 1)), ":"]) if ndim > 1 else ":"
    shifted = [
        f"xr = x[{row}]",
        f"r = out[{row}]",
        "m = -np.inf",
        "for i in range(xr.shape[0]):",
        "    v = xr[i]",
        *("    " + line for line in MAX_STEP),
        *MAX_END,
        f"mx = {dtype_src(dtype)}(m)",
        "for i in range(xr.shape[0]):",
        "    r[i] = xr[i] - mx",
    ]
    if isinstance(op, Softmax):
        return shifted + [
            f"ufunc_loops.exp_{dtype}(r, r)",
            f"s = ufunc_loops.sum_{dtype}(r)",
            "for i in range(r.shape[0]):",
            "    r[i] = r[i] / s  # 0 / 0 is NaN when every exponential is 0, as in NumPy",
        ]
    # log(sum(exp)) by NumPy's loops too: its log on a one-element array computes what np.log does
    return shifted + [
        f"e = np.empty(r.shape[0], {dtype_src(dtype)})",
        f"ufunc_loops.exp_{dtype}(r, e)",
        f"e[0] = ufunc_loops.sum_{dtype}(e)",
        f"ufunc_loops.log_{dtype}(e[:1], e[:1])",
        "ls = e[0]",
        "for i in range(r.shape[0]):",
        "    r[i] = r[i] - ls",
    ]


def _slice_lines(op: _SoftmaxBase, ndim: int, searched: list[int]) -> list[str]:
    """The three passes over one slice (the outer loop variables are already set)."""
    idx = index_tuple([f"o{d}" for d in range(ndim)])
    body: list[str] = []

    def over_slice(lines: list[str]) -> None:
        depth = 0
        for d in searched:
            body.append("    " * depth + f"for o{d} in range(x.shape[{d}]):")
            depth += 1
        body.extend("    " * depth + line for line in lines)

    body.append("m = -np.inf")
    over_slice([f"v = x[{idx}]", *MAX_STEP])
    body += [*MAX_END, "s = 0.0"]
    if isinstance(op, Softmax):
        over_slice([f"e = np.exp(x[{idx}] - m)", f"out[{idx}] = e", "s += e"])
        body += ["if s == 0.0:", "    s = np.nan  # every exponential is 0: 0 / 0"]
        over_slice([f"out[{idx}] = out[{idx}] / s"])  # a division (not * (1 / s)) rounds as NumPy does
    else:
        over_slice([f"s += np.exp(x[{idx}] - m)"])
        body.append("ls = np.log(s)")
        over_slice([f"out[{idx}] = (x[{idx}] - m) - ls"])
    return body


@register_kernel(Softmax, LogSoftmax)
def _softmax(op: _SoftmaxBase, node: Apply, name: str) -> Kernel:
    """Along an axis of a large array, the slices run in parallel (the first outer loop is a ``prange``)."""
    check_dtypes(node)
    ndim = node.inputs[0].ndim
    searched = list(range(ndim)) if op.axis is None else [op.axis]
    outer = [d for d in range(ndim) if d not in searched]
    body = [
        "if x.size == 0:",
        "    return x.copy()",
        f"out = np.empty(x.shape, {dtype_src(node.outputs[0].type.dtype)})",
    ]
    row_dtype = _row_path(op, node, searched)
    per_slice = _row_lines(op, ndim, row_dtype) if row_dtype is not None else _slice_lines(op, ndim, searched)

    def nest(first_loop: str) -> list[str]:
        lines: list[str] = []
        for depth, d in enumerate(outer):
            loop = first_loop if depth == 0 else "range"
            lines.append("    " * depth + f"for o{d} in {loop}(x.shape[{d}]):")
        return lines + ["    " * len(outer) + line for line in per_slice]

    if outer:
        body.append(f"if x.size >= {PARALLEL_MIN_SIZE}:")
        body += ["    " + line for line in nest("numba.prange")]
        body.append("else:")
        body += ["    " + line for line in nest("range")]
    else:
        body += per_slice
    body.append("return out")
    return Kernel(name, function_source(name, ["x"], body), jit_options={"parallel": True} if outer else {})


__all__: list[str] = []
_ = kernel_for  # the doctest uses it
