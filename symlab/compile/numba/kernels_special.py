r"""Numba kernels of ``Softmax`` and ``LogSoftmax``: three passes over each slice along ``axis``.

The maximum is subtracted first (a NaN maximum propagates, an infinite one
becomes 0, as in the op's ``perform``), sums accumulate in float64, and the
results are written in the input dtype. No temporaries besides the output.
Along an axis of an array of :data:`PARALLEL_MIN_SIZE` elements or more, the
slices run in parallel (``numba.prange``, ``parallel=True``).

>>> import symlab.tensor as st
>>> print(kernel_for(st.softmax(st.dvector("x")).owner, "k").source)  # doctest: +ELLIPSIS
def k(x):
    if x.size == 0:
        return x.copy()
    out = np.empty(x.shape, np.float64)
    m = -np.inf
    for o0 in range(x.shape[0]):
        v = x[o0,]
    ...
"""

from __future__ import annotations

from symlab.compile.numba.kernels import Kernel, function_source, kernel_for, register_kernel
from symlab.compile.numba.kernels_subtensor import check_dtypes, dtype_src, index_tuple
from symlab.graph.basic import Apply
from symlab.tensor.special import LogSoftmax, Softmax, _SoftmaxBase

#: Number of elements from which a softmax along an axis runs its slices in parallel (``numba.prange``).
PARALLEL_MIN_SIZE = 100_000


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
    over_slice([f"v = x[{idx}]", "if v > m:", "    m = v", "elif v != v:", "    m = np.nan"])
    body += ["if not np.isfinite(m):", "    m = 0.0", "s = 0.0"]
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
    per_slice = _slice_lines(op, ndim, searched)

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
