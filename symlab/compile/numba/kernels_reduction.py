"""Numba kernels of the reductions ``Sum Prod Max Min All Any``.

One nested loop per input dimension, in C order (the input is read once,
in memory order for C-contiguous data), accumulating into the output
(reduced axes dropped). Products of floats, and sums that keep the last
axis, accumulate in float64 when the output is float32; the output dtype
is exactly the node's. ``Max``
and ``Min`` propagate NaN like NumPy and raise ``ValueError`` on an empty
reduction, as NumPy does.

>>> import symlab.tensor as st
>>> x = st.dmatrix("x")
>>> print(kernel_for(x.sum(axis=0).owner, "k").source)
def k(a):
    acc = np.full((a.shape[1],), 0, np.float64)
    for j0 in range(a.shape[0]):
        for j1 in range(a.shape[1]):
            acc[j1] = acc[j1] + a[j0, j1]
    return acc.astype(np.float64)
<BLANKLINE>

A float sum along the last axis is different: each row is summed by
NumPy's own ``add`` loop in its reduce mode (``ufunc_loops.sum_float64``),
pairwise, several times faster than a loop whose every addition waits for
the one before, and with the bits of ``np.sum`` on C-contiguous input (a
float32 sum adds pairwise in float32, as NumPy does):

>>> print(kernel_for(x.sum(axis=1).owner, "k").source)
def k(a):
    acc = np.full((a.shape[0],), 0, np.float64)
    for j0 in range(a.shape[0]):
        acc[j0] = acc[j0] + ufunc_loops.sum_float64(a[j0, :])
    return acc
<BLANKLINE>
>>> print(kernel_for(x.sum().owner, "k").source)
def k(a):
    acc = np.full((), 0, np.float64)
    if c_layout(a):
        f = flat_input(a)
        acc[()] = ufunc_loops.sum_float64(f)
        return acc
    for j0 in range(a.shape[0]):
        acc[()] = acc[()] + ufunc_loops.sum_float64(a[j0, :])
    return acc
<BLANKLINE>
"""

from __future__ import annotations

import numpy as np

from symlab.compile.numba.kernels import Kernel, NoKernel, kernel_for, register_kernel
from symlab.compile.numba.ufunc_table import REDUCE_AVAILABLE
from symlab.graph.basic import Apply
from symlab.tensor.reduction import All, Any, Max, Min, Prod, Reduce, Sum


def _np_type(dtype: str) -> str:
    return "np.bool_" if dtype == "bool" else f"np.{dtype}"


@register_kernel(Sum, Prod, Max, Min, All, Any)
def reduce_kernel(op: Reduce, node: Apply, name: str) -> Kernel:
    """The loop kernel of a reduction node."""
    x = node.inputs[0]
    out_dtype = node.outputs[0].type.dtype
    for dt in (x.type.dtype, out_dtype):
        if np.dtype(dt).kind not in "biuf" or dt == "float16":
            raise NoKernel(f"{op}: dtype {dt} is not supported by the Numba kernels")
    nd = x.type.ndim
    axes = set(op.reduced_axes(nd))
    if isinstance(op, Sum) and (nd - 1) in axes and x.type.dtype == out_dtype and ("add", out_dtype) in REDUCE_AVAILABLE:
        return _pairwise_sum_kernel(nd, axes, out_dtype, name)
    kept = [d for d in range(nd) if d not in axes]
    acc_dtype = "float64" if out_dtype == "float32" and isinstance(op, Sum | Prod) else out_dtype
    shape = "(" + "".join(f"a.shape[{d}], " for d in kept).rstrip(" ") + ")"
    if len(kept) == 1:
        shape = f"(a.shape[{kept[0]}],)"
    index = "(" + "".join(f"j{d}, " for d in kept).rstrip(" ") + ")" if kept else "()"
    if len(kept) == 1:
        index = f"j{kept[0]}"
    read = f"a[{', '.join(f'j{d}' for d in range(nd))}]" if nd else "a[()]"
    lines = [f"def {name}(a):"]
    t = _np_type(acc_dtype)
    if isinstance(op, Sum):
        init, update = "0", f"acc[{index}] + {read}"
    elif isinstance(op, Prod):
        init, update = "1", f"acc[{index}] * {read}"
    elif isinstance(op, All):
        init, update = "True", f"acc[{index}] and ({read} != 0)"
    elif isinstance(op, Any):
        init, update = "False", f"acc[{index}] or ({read} != 0)"
    else:
        fn = "np.maximum" if isinstance(op, Max) else "np.minimum"
        init, update = None, f"{fn}(acc[{index}], {read})"
    if init is None:
        size = " * ".join(f"a.shape[{d}]" for d in sorted(axes)) or "1"
        lines.append(f"    if {size} == 0:")
        lines.append(f"        raise ValueError({f'{op}: zero-size array to a reduction that has no identity'!r})")
        # start from the first element along the reduced axes
        first = f"a[{', '.join('0' if d in axes else f'j{d}' for d in range(nd))}]" if nd else "a[()]"
        lines.append(f"    acc = np.empty({shape}, {t})")
        depth = 1
        for d in kept:
            lines.append("    " * depth + f"for j{d} in range(a.shape[{d}]):")
            depth += 1
        lines.append("    " * depth + f"acc[{index}] = {first}")
    else:
        lines.append(f"    acc = np.full({shape}, {init}, {t})")
    depth = 1
    for d in range(nd):
        lines.append("    " * depth + f"for j{d} in range(a.shape[{d}]):")
        depth += 1
    lines.append("    " * depth + f"acc[{index}] = {update}")
    lines.append(f"    return acc.astype({_np_type(out_dtype)})")
    return Kernel(name, "\n".join(lines) + "\n")


def _pairwise_sum_kernel(nd: int, axes: set[int], dtype: str, name: str) -> Kernel:
    """A float sum whose axes include the last: every row added by NumPy's pairwise loop (see the module's docstring).

    When the reduced axes are the trailing ones and the input is C-contiguous, they are summed as one row, as
    ``np.sum`` does.
    """
    kept = [d for d in range(nd) if d not in axes]
    shape = f"(a.shape[{kept[0]}],)" if len(kept) == 1 else "(" + ", ".join(f"a.shape[{d}]" for d in kept) + ")"
    index = f"j{kept[0]}" if len(kept) == 1 else "(" + ", ".join(f"j{d}" for d in kept) + ")" if kept else "()"
    lines = [f"def {name}(a):", f"    acc = np.full({shape}, 0, np.{dtype})"]
    if len(axes) > 1 and axes == set(range(len(kept), nd)):  # trailing axes: one row each when C-contiguous
        block = " * ".join(f"a.shape[{d}]" for d in sorted(axes))
        lines += ["    if c_layout(a):", "        f = flat_input(a)"]
        if not kept:  # the whole array is one row
            lines += [f"        acc[()] = ufunc_loops.sum_{dtype}(f)", "        return acc"]
        else:
            lines += [f"        block = {block}", "        start = 0"]
        depth = 2
        for d in kept:
            lines.append("    " * depth + f"for j{d} in range(a.shape[{d}]):")
            depth += 1
        if kept:
            lines.append("    " * depth + f"acc[{index}] = ufunc_loops.sum_{dtype}(f[start:start + block])")
            lines.append("    " * depth + "start += block")
            lines.append("        return acc")
    depth = 1
    for d in range(nd - 1):
        lines.append("    " * depth + f"for j{d} in range(a.shape[{d}]):")
        depth += 1
    row = f"a[{''.join(f'j{d}, ' for d in range(nd - 1))}:]"
    lines.append("    " * depth + f"acc[{index}] = acc[{index}] + ufunc_loops.sum_{dtype}({row})")
    lines.append("    return acc")
    return Kernel(name, "\n".join(lines) + "\n")


__all__ = ["kernel_for", "reduce_kernel"]
