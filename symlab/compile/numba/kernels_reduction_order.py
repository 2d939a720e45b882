r"""The order in which ``np.sum`` adds, reproduced for the Numba ``Sum`` kernels.

NumPy reduces with ``add.reduce``, which runs a buffered iterator (``nditer``)
over the output and the input, with ``external_loop``, ``grow_inner`` and
``dont_negate_strides``, and calls the ``add`` loop once per inner chunk.
Where the output's stride along the chunk is 0 the loop adds the chunk
pairwise (8 partial sums, blocks of 128) to the output element; elsewhere it
adds element by element. So the bits of a float sum depend on how the
iterator cuts the input into chunks, which :func:`_shared_sum_plan` works out
from the shape and strides as ``nditer`` does:

1. **order**: the axes are sorted by the absolute value of their input
   stride (a stable insertion sort that skips the comparisons where a
   stride is 0, as size-1 axes have); C order for a C-contiguous input;
2. **coalescing**: neighbouring axes merge where both operands step
   through them with one stride (two reduced axes contiguous in memory, two
   kept axes contiguous in memory; size-1 axes merge with anything);
3. **buffering** (``npyiter_find_buffering_setup``): an input whose
   innermost reduced axes do not merge is copied to a buffer of at most 8192
   elements (a multiple of the inner "core"), so the chunk can span several
   reduced axes; a cost estimate decides how many, and whether the iterator
   runs in "reduce mode" (one chunk per core of reduced axes under a kept
   axis).

The plan is ``(order, block, piece)``: the axes in iteration order (outermost
first), the number of innermost elements (in that order) that reduce into one
output element as one unit, and the length of the pairwise chunks the unit is
cut into (``block`` 0: the innermost axis is kept, every element is added on
its own). :func:`_shared_sum_in_order` then adds in that order.

Both are plain Python that Numba compiles once per process, for float32 and
float64, in :mod:`~symlab.compile.numba.sum_order`, which every ``Sum`` kernel
calls (this module's text is in the disk cache's key, so cached machine code
always matches it).
In plain Python (tests, doctests) ``row_sum`` is NumPy's own ``add`` loop:

>>> import numpy as np
>>> x = np.random.default_rng(0).standard_normal((4, 5, 6, 7))
>>> order, block, piece = _shared_sum_plan(np.array(x.shape), np.array(x.strides), np.array([1, 0, 1, 1]))
>>> order.tolist(), int(block), int(piece)
([0, 1, 2, 3], 42, 42)
>>> out = np.zeros(5)
>>> _shared_sum_in_order(x.reshape(-1), np.array(x.strides) // 8, np.array(x.shape), np.array(x.strides),
...                      np.array([1, 0, 1, 1]), out)
>>> bool(np.array_equal(out, x.sum(axis=(0, 2, 3))))
True
"""

from __future__ import annotations

import inspect

import numpy as np

from symlab.compile.numba.ufunc_table import sum_from_python

#: NumPy's default buffer size of its iterator (``NPY_BUFSIZE``), in elements.
BUFSIZE = 8192


def row_sum(row: np.ndarray) -> np.generic:
    """The pairwise sum of a 1-d float array by NumPy's ``add`` loop (in kernels: ``ufunc_loops.sum_<dtype>``)."""
    return sum_from_python(row)


def _shared_sum_plan(shape, strides, reduced):  # type: ignore[no-untyped-def]
    """``(order, block, piece)`` of ``np.sum`` over the axes flagged in ``reduced`` (see the module's docstring).

    ``shape`` and ``strides`` (in bytes) are the input's; all three are 1-d integer arrays.
    """
    nd = shape.shape[0]
    # 1. NumPy's axis data runs from the innermost axis out; sort it by |stride|, smallest first.
    st = np.zeros(nd, np.int64)
    for d in range(nd):
        if shape[d] != 1:
            st[d] = strides[d]
    perm = np.empty(nd, np.int64)
    for i in range(nd):
        perm[i] = nd - 1 - i
    for i0 in range(1, nd):
        ipos = i0
        j0 = perm[i0]
        for i1 in range(i0 - 1, -1, -1):
            s0 = st[j0]
            s1 = st[perm[i1]]
            if s0 != 0 and s1 != 0:
                if abs(s1) <= abs(s0):
                    break
                ipos = i1
        if ipos != i0:
            for k in range(i0, ipos, -1):
                perm[k] = perm[k - 1]
            perm[ipos] = j0
    order = perm[::-1].copy()
    # The output is allocated in iteration order (kept axes only); size-1 axes have stride 0 in both operands.
    dshape = np.empty(nd, np.int64)
    dout = np.zeros(nd, np.int64)
    din = np.empty(nd, np.int64)
    out_step = 1
    reduces = False
    for i in range(nd):
        d = perm[i]
        dshape[i] = shape[d]
        din[i] = st[d]
        if reduced[d] == 0 and shape[d] != 1:
            dout[i] = out_step
            out_step *= shape[d]
        if reduced[d] != 0 and shape[d] != 1:
            reduces = True
    # 2. Coalesce neighbouring axes where both operands step with one stride.
    n = 1 if nd > 0 else 0
    for i in range(1, nd):
        c = n - 1
        out_ok = (dshape[c] == 1 and dout[c] == 0) or (dshape[i] == 1 and dout[i] == 0) or dout[c] * dshape[c] == dout[i]
        in_ok = (dshape[c] == 1 and din[c] == 0) or (dshape[i] == 1 and din[i] == 0) or din[c] * dshape[c] == din[i]
        if out_ok and in_ok:
            dshape[c] *= dshape[i]
            if dout[c] == 0:
                dout[c] = dout[i]
            if din[c] == 0:
                din[c] = din[i]
        else:
            dshape[n] = dshape[i]
            dout[n] = dout[i]
            din[n] = din[i]
            n += 1
    if n == 0 or not reduces or dout[0] != 0 or dshape[0] == 1:
        return order, 0, 0  # the innermost axis is kept: the loop adds element by element
    # 3. npyiter_find_buffering_setup with the operands (output, a reduction operand; input), no casts.
    single_out = 1
    single_in = 1
    cost = 1
    outer_reduce_dim = 0
    size = dshape[0]
    best_dim = 0
    best_cost = cost
    best_size = size
    best_coresize = 1
    for idim in range(1, n):
        if outer_reduce_dim != 0:
            break
        if size >= BUFSIZE and cost > 1:  # growinner: only buffering limits the size
            break
        if single_out == idim:
            if dout[idim - 1] * dshape[idim - 1] == dout[idim]:
                single_out += 1
            else:
                cost += 1
                if dout[idim] == 0 or dout[idim - 1] == 0:
                    outer_reduce_dim = idim
        if single_in == idim:
            if din[idim - 1] * dshape[idim - 1] == din[idim]:
                single_in += 1
            else:
                cost += 1
        coresize = size
        size *= dshape[idim]
        bufsize = size
        if size > BUFSIZE and cost > 1:
            bufsize = BUFSIZE
        if cost * best_size <= best_cost * bufsize:
            best_cost = cost
            best_coresize = coresize
            best_size = size
            best_dim = idim
    using_reduce = outer_reduce_dim != 0 and best_dim == outer_reduce_dim
    if using_reduce:
        return order, best_coresize, best_coresize  # one chunk per core of reduced axes
    # Without reduce mode the output steps with stride 0 through the axes up to best_dim; an operand that is not
    # one stride through them is buffered, and buffers hold a multiple of the core, at most BUFSIZE elements.
    piece = best_size
    if (single_out <= best_dim or single_in <= best_dim) and best_size > BUFSIZE:
        piece = best_coresize * (BUFSIZE // best_coresize)
    return order, best_size, piece


def _shared_sum_in_order(mem, mem_strides, shape, strides, reduced, out):  # type: ignore[no-untyped-def]
    """Add the input into ``out`` (1-d, C order over the kept axes, zeros) in ``np.sum``'s order.

    The input is ``mem`` (1-d) read at element strides ``mem_strides``; ``shape``, ``strides`` (bytes) and
    ``reduced`` are the input's, as for :func:`_shared_sum_plan`.
    """
    nd = shape.shape[0]
    for d in range(nd):
        if shape[d] == 0:
            return
    order, block, piece = _shared_sum_plan(shape, strides, reduced)
    out_strides = np.zeros(nd, np.int64)
    step = 1
    for d in range(nd - 1, -1, -1):
        if reduced[d] == 0:
            out_strides[d] = step
            step *= shape[d]
    # the axes that take part, in iteration order (size-1 axes do not)
    axes = np.empty(nd, np.int64)
    m = 0
    for i in range(nd):
        if shape[order[i]] != 1:
            axes[m] = order[i]
            m += 1
    if m == 0:
        out[0] = out[0] + mem[0]
        return
    # the innermost axes of one unit (block elements), and the outer ones
    inner = m
    count = 1
    if block > 0:
        while count < block:
            inner -= 1
            count *= shape[axes[inner]]
    else:
        inner = m - 1  # element by element along the innermost axis
    linear = True
    for i in range(inner + 1, m):
        if mem_strides[axes[i - 1]] != mem_strides[axes[i]] * shape[axes[i]]:
            linear = False
    t = mem_strides[axes[m - 1]]
    scratch = np.empty(count if not linear else 0, mem.dtype)
    gather = np.zeros(m, np.int64)
    idx = np.zeros(m, np.int64)
    total = 1
    for i in range(inner):
        total *= shape[axes[i]]
    base = 0
    o = 0
    for _ in range(total):
        if block == 0:
            n = shape[axes[m - 1]]
            to = out_strides[axes[m - 1]]
            for k in range(n):
                out[o + k * to] = out[o + k * to] + mem[base + k * t]
        elif linear:
            for lo in range(0, count, piece):
                hi = min(lo + piece, count)
                out[o] = out[o] + row_sum(mem[base + lo * t:base + (hi - 1) * t + 1:t])
        else:
            pos = base
            for k in range(count):
                scratch[k] = mem[pos]
                j = m - 1
                while j >= inner:
                    gather[j] += 1
                    pos += mem_strides[axes[j]]
                    if gather[j] < shape[axes[j]]:
                        break
                    pos -= mem_strides[axes[j]] * shape[axes[j]]
                    gather[j] = 0
                    j -= 1
            for lo in range(0, count, piece):
                out[o] = out[o] + row_sum(scratch[lo:min(lo + piece, count)])
        j = inner - 1
        while j >= 0:
            a = axes[j]
            idx[j] += 1
            base += mem_strides[a]
            o += out_strides[a]
            if idx[j] < shape[a]:
                break
            base -= mem_strides[a] * shape[a]
            o -= out_strides[a] * shape[a]
            idx[j] = 0
            j -= 1


def shared_source(dtype: str) -> str:
    """The source of the two functions for a kernel of ``dtype``: ``row_sum`` becomes ``ufunc_loops.sum_<dtype>``
    and the adding function ``_shared_sum_in_order_<dtype>`` (the plan does not depend on the dtype)."""
    plan = inspect.getsource(_shared_sum_plan).replace("BUFSIZE", str(BUFSIZE))
    adding = inspect.getsource(_shared_sum_in_order)
    adding = adding.replace("row_sum(", f"ufunc_loops.sum_{dtype}(").replace(
        "def _shared_sum_in_order(", f"def _shared_sum_in_order_{dtype}("
    )
    return plan + "\n\n" + adding


__all__ = ["BUFSIZE", "row_sum", "shared_source"]
