r"""Numba kernels of ``Argmax``/``Argmin`` (NumPy's first-occurrence and NaN rules) and ``ReducedSize``.

>>> import symlab.tensor as st
>>> from symlab.tensor.reduction import ReducedSize
>>> print(kernel_for(ReducedSize((0, 2))(st.dtensor3("x")).owner, "k").source)
def k(x):
    out = np.empty((), np.int64)
    out[()] = np.int64(x.shape[0]) * np.int64(x.shape[2])
    return out
<BLANKLINE>
"""

from __future__ import annotations

import numpy as np

from symlab.compile.numba.codegen import check_dtypes, index_tuple, message
from symlab.compile.numba.kernels import Kernel, NoKernel, function_source, kernel_for, register_kernel
from symlab.graph.basic import Apply
from symlab.tensor.reduction import Argmax, ArgReduce, ReducedSize


@register_kernel(ArgReduce)
def _arg_reduce(op: ArgReduce, node: Apply, name: str) -> Kernel:
    """One pass per searched slice: the first extremum, or the first NaN (which wins, as in NumPy)."""
    check_dtypes(node)
    dtype = np.dtype(node.inputs[0].type.dtype)
    if dtype.kind == "c":
        raise NoKernel(f"{op}: no Numba kernel for complex numbers")
    ndim = node.inputs[0].ndim
    better = ">" if isinstance(op, Argmax) else "<"
    searched = list(range(ndim)) if op.axis is None else [op.axis]
    outer = [d for d in range(ndim) if d not in searched]
    if op.axis is None:
        body = ["if x.size == 0:"]
    else:
        body = [f"if x.shape[{op.axis}] == 0:"]
    body.append(f"    raise ValueError({message(op, 'attempt to get the extremum of an empty sequence')})")
    out_shape = index_tuple([f"x.shape[{d}]" for d in outer])
    body.append(f"out = np.empty(({out_shape}), np.int64)")
    depth = 0
    for d in outer:
        body.append("    " * depth + f"for o{d} in range(x.shape[{d}]):")
        depth += 1
    first = index_tuple([f"o{d}" if d in outer else "0" for d in range(ndim)])
    pad = "    " * depth
    body += [pad + f"best = x[{first}]", pad + "bi = 0", pad + "k = 0", pad + "done = False"]
    for d in searched:
        body.append("    " * depth + f"for o{d} in range(x.shape[{d}]):")
        depth += 1
    pad = "    " * depth
    body += [pad + f"v = x[{index_tuple([f'o{d}' for d in range(ndim)])}]", pad + "if not done:"]
    if dtype.kind == "f":
        body += [
            pad + "    if v != v:",
            pad + "        bi = k",
            pad + "        done = True",
            pad + f"    elif v {better} best:",
        ]
    else:
        body.append(pad + f"    if v {better} best:")
    body += [pad + "        best = v", pad + "        bi = k", pad + "k += 1"]
    depth -= len(searched)
    body.append("    " * depth + f"out[{index_tuple([f'o{d}' for d in outer])}] = bi")
    body.append("return out")
    return Kernel(name, function_source(name, ["x"], body))


@register_kernel(ReducedSize)
def _reduced_size(op: ReducedSize, node: Apply, name: str) -> Kernel:
    check_dtypes(node)
    size = " * ".join(f"np.int64(x.shape[{d}])" for d in op.axis) or "np.int64(1)"
    body = ["out = np.empty((), np.int64)", f"out[()] = {size}", "return out"]
    return Kernel(name, function_source(name, ["x"], body))


__all__: list[str] = []
_ = kernel_for  # the doctest uses it
