"""Numba kernels of the reductions ``Sum Prod Max Min All Any``.

One nested loop per input dimension, in C order (the input is read once,
in memory order for C-contiguous data), accumulating into the output
(reduced axes dropped). Products of floats accumulate in float64 when the
output is float32; the output dtype is exactly the node's. ``Max`` and
``Min`` propagate NaN like NumPy and raise ``ValueError`` on an empty
reduction, as NumPy does, unless they start from an ``initial`` value.

>>> import symlab.tensor as st
>>> x = st.lmatrix("x")
>>> print(kernel_for(x.sum(axis=0).owner, "k").source)
def k(a):
    acc = np.full((a.shape[1],), 0, np.int64)
    for j0 in range(a.shape[0]):
        for j1 in range(a.shape[1]):
            acc[j1] = acc[j1] + a[j0, j1]
    return acc.astype(np.int64)
<BLANKLINE>

A float sum (over any axes) is different: it adds in the order of
``np.sum`` (:mod:`~symlab.compile.numba.kernels_reduction_order`, compiled once
per process in :mod:`~symlab.compile.numba.sum_order`), calling NumPy's own ``add`` loop in its
reduce mode (``ufunc_loops.sum_float64``) on every row NumPy adds pairwise:
the bits of ``np.sum`` on every layout, over any set of axes (a float32 sum
adds in float32, as NumPy does), and several times faster than a loop whose
every addition waits for the one before:

>>> y = st.dtensor4("y")
>>> print(kernel_for(y.sum(axis=(0, 2, 3)).owner, "k").source.split("def k(")[1])
a):
    out = np.zeros(a.shape[1], np.float64)
    shape = np.array((a.shape[0], a.shape[1], a.shape[2], a.shape[3],), np.int64)
    c_strides = np.ones(4, np.int64)
    for d in range(2, -1, -1):
        c_strides[d] = c_strides[d + 1] * shape[d + 1]
    sum_in_order_float64(flat_input(a), c_strides, shape,
        np.array((a.strides[0], a.strides[1], a.strides[2], a.strides[3],), np.int64),
        np.array((1, 0, 1, 1,), np.int64), out)
    return out.reshape((a.shape[1],))
<BLANKLINE>
"""

from __future__ import annotations

import numpy as np

from symlab.compile.numba.codegen import check_dtype
from symlab.compile.numba.kernels import Kernel, kernel_for, register_kernel
from symlab.compile.numba.kernels_reduction_order import BUFSIZE
from symlab.compile.numba.ufunc_table import REDUCE_AVAILABLE
from symlab.graph.basic import Apply
from symlab.scalar.type import np_type_source
from symlab.tensor.reduction import All, Any, Max, Min, Prod, Reduce, Sum


@register_kernel(Sum, Prod, Max, Min, All, Any)
def reduce_kernel(op: Reduce, node: Apply, name: str) -> Kernel:
    """The loop kernel of a reduction node."""
    x = node.inputs[0]
    out_dtype = node.outputs[0].type.dtype
    for dt in (x.type.dtype, out_dtype):
        check_dtype(dt, str(op))
    nd = x.type.ndim
    axes = set(op.reduced_axes(nd))
    if isinstance(op, Sum) and nd > 0 and x.type.dtype == out_dtype and ("add", out_dtype) in REDUCE_AVAILABLE:
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
    t = np_type_source(acc_dtype)
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
        init, update = _initial_source(op.initial), f"{fn}(acc[{index}], {read})"
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
    lines.append(f"    return acc.astype({np_type_source(out_dtype)})")
    return Kernel(name, "\n".join(lines) + "\n")


def _initial_source(initial: float | int | None) -> str | None:
    """The source of a ``Max``'s or ``Min``'s ``initial`` (None: the reduction has no identity)."""
    if initial is None:
        return None
    if np.isnan(initial):
        return "np.nan"
    if np.isinf(initial):
        return "np.inf" if initial > 0 else "-np.inf"
    return repr(initial)


def _general_sum_name(name: str) -> str:
    return f"{name}_general"


def _pairwise_sum_kernel(nd: int, axes: set[int], dtype: str, name: str, vector_path: bool = True) -> Kernel:
    """A float sum added in ``np.sum``'s order (:mod:`~symlab.compile.numba.kernels_reduction_order`): the bits
    of NumPy on every layout.

    The input is read through a flat view when Numba knows it is C-contiguous, through a C-order copy
    otherwise (``flat_input``); the order of the additions comes from the input's own strides either way.
    The sum of a whole vector of at most ``BUFSIZE`` elements is one run of NumPy's add loop (the plan's only
    piece): its kernel calls it directly, without the plan's small arrays, whose allocations cost more than
    the adding at the sizes a loop's body sums (``vector_path=False``: the general kernel alone).
    """
    if vector_path and nd == 1 and axes == {0}:  # a vector's sum: the plan's one piece, computed without the plan
        return Kernel(name, "\n".join([
            f"def {name}(a):",
            f"    if a.shape[0] == 0 or a.shape[0] > {BUFSIZE}:",
            f"        return {_general_sum_name(name)}(a)",
            f"    out = np.zeros(1, np.{dtype})",
            f"    out[0] = out[0] + ufunc_loops.sum_{dtype}(flat_input(a))",
            "    return out.reshape(())",
            "",
            _pairwise_sum_kernel(nd, axes, dtype, _general_sum_name(name), vector_path=False).source,
        ]))
    kept = [d for d in range(nd) if d not in axes]
    shape = f"(a.shape[{kept[0]}],)" if len(kept) == 1 else "(" + ", ".join(f"a.shape[{d}]" for d in kept) + ")"
    size = " * ".join(f"a.shape[{d}]" for d in kept) or "1"
    flags = ", ".join("1" if d in axes else "0" for d in range(nd))
    lines = [
        f"def {name}(a):",
        f"    out = np.zeros({size}, np.{dtype})",
        f"    shape = np.array(({', '.join(f'a.shape[{d}]' for d in range(nd))},), np.int64)",
        f"    c_strides = np.ones({nd}, np.int64)",
        f"    for d in range({nd - 2}, -1, -1):",
        "        c_strides[d] = c_strides[d + 1] * shape[d + 1]",
        f"    sum_in_order_{dtype}(flat_input(a), c_strides, shape,",
        f"        np.array(({', '.join(f'a.strides[{d}]' for d in range(nd))},), np.int64),",
        f"        np.array(({flags},), np.int64), out)",
        f"    return out.reshape({shape})",
    ]
    return Kernel(name, "\n".join(lines) + "\n")


__all__ = ["kernel_for", "reduce_kernel"]
