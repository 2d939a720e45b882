r"""Numba kernels of ``Alloc``, ``ARange`` and ``Eye``: new arrays made from scalars (and a value).

``ARange`` follows NumPy's algorithm exactly: the length is
``ceil((stop - start) / step)`` and the values are ``first + i * delta`` in
the output dtype, with ``first = dtype(start)`` and ``delta = dtype(start +
step) - first``.

>>> import symlab.tensor as st
>>> n = st.lscalar("n")
>>> print(kernel_for(st.zeros((n, 3)).owner, "k").source)
def k(v, s0, s1):
    v = np.asarray(v)
    d0 = np.int64(np.asarray(s0).item())
    d1 = np.int64(np.asarray(s1).item())
    if d0 < 0 or d1 < 0:
        raise ValueError('Alloc: negative size in the shape')
    out = np.empty((d0, d1), np.float64)
    out.fill(v[()])
    return out
<BLANKLINE>
"""

from __future__ import annotations

import numpy as np

from symlab.compile.numba.codegen import check_dtypes, dtype_src, index_tuple, int_src, message
from symlab.compile.numba.kernels import Kernel, NoKernel, function_source, kernel_for, register_kernel
from symlab.graph.basic import Apply
from symlab.tensor.alloc import Alloc, ARange, Eye


@register_kernel(Alloc)
def _alloc(op: Alloc, node: Apply, name: str) -> Kernel:
    """A new array filled with the value, broadcast as the op allows (only static size-1 dimensions)."""
    check_dtypes(node)
    n = len(node.inputs) - 1
    value_type = node.inputs[0].type
    r = value_type.ndim
    lead = n - r
    args = ["v", *(f"s{k}" for k in range(n))]
    body = ["v = np.asarray(v)", *(f"d{k} = {int_src(f's{k}')}" for k in range(n))]
    if n:
        body += [
            f"if {' or '.join(f'd{k} < 0' for k in range(n))}:",
            f"    raise ValueError({message(op, 'negative size in the shape')})",
        ]
    for q in range(r):
        if value_type.shape[q] != 1:
            text = f"cannot broadcast the value to the shape in dimension {lead + q} (only static size-1 dimensions broadcast)"
            body += [f"if v.shape[{q}] != d{lead + q}:", f"    raise ValueError({message(op, text)})"]
    dtype = dtype_src(node.outputs[0].type.dtype)
    body.append(f"out = np.empty(({index_tuple([f'd{k}' for k in range(n)])}), {dtype})")
    if n == 0:
        body.append("out[()] = v[()]")
    elif r == 0:
        body.append("out.fill(v[()])")
    else:
        depth = 0
        for k in range(n):
            body.append("    " * depth + f"for o{k} in range(d{k}):")
            depth += 1
        v_index = index_tuple(["0" if value_type.shape[q] == 1 else f"o{lead + q}" for q in range(r)])
        body.append("    " * depth + f"out[{index_tuple([f'o{k}' for k in range(n)])}] = v[{v_index}]")
    body.append("return out")
    return Kernel(name, function_source(name, args, body))


@register_kernel(ARange)
def _arange(op: ARange, node: Apply, name: str) -> Kernel:
    check_dtypes(node)
    if op.dtype == "bool" or np.dtype(op.dtype).kind == "c":
        raise NoKernel(f"{op}: no Numba kernel for a {op.dtype} arange")
    kinds = [np.dtype(v.type.dtype).kind for v in node.inputs]
    all_int = all(k in "biu" for k in kinds)
    conv = "np.int64" if all_int else "np.float64"
    dtype = dtype_src(op.dtype)
    body = [
        f"start = {conv}(np.asarray(a).item())",
        f"stop = {conv}(np.asarray(b).item())",
        f"step = {conv}(np.asarray(c).item())",
        "if step == 0:",
        f"    raise ValueError({message(op, 'step cannot be 0')})",
    ]
    if all_int:
        body.append("n = -((start - stop) // step)")
    else:
        body.append("n = math.ceil((stop - start) / step)")
    body += [
        "if n < 0:",
        "    n = 0",
        f"out = np.empty(n, {dtype})",
        "if n == 0:",
        "    return out",
        f"first = {dtype}(start)",
        f"delta = {dtype}(start + step) - first",
        "for i in range(n):",
        f"    out[i] = first + {dtype}(i) * delta",
        "return out",
    ]
    return Kernel(name, function_source(name, ["a", "b", "c"], body))


@register_kernel(Eye)
def _eye(op: Eye, node: Apply, name: str) -> Kernel:
    check_dtypes(node)
    dtype = dtype_src(op.dtype)
    body = [
        f"n = {int_src('a')}",
        f"m = {int_src('b')}",
        f"k = {int_src('c')}",
        "if n < 0 or m < 0:",
        f"    raise ValueError({message(op, 'negative dimensions are not allowed')})",
        f"out = np.zeros((n, m), {dtype})",
        "for i in range(max(0, -k), min(n, m - k)):",
        "    out[i, i + k] = 1",
        "return out",
    ]
    return Kernel(name, function_source(name, ["a", "b", "c"], body))


__all__: list[str] = []
_ = kernel_for  # the doctest uses it
