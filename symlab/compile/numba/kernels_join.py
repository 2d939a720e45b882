r"""Numba kernels of ``Join`` (concatenate, into a new array) and ``Split`` (views of ``x``).

>>> import symlab.tensor as st
>>> x, y = st.dmatrix("x"), st.dmatrix("y")
>>> print(kernel_for(st.concatenate([x, y], axis=1).owner, "k").source)
def k(x0, x1):
    if x1.shape[0] != x0.shape[0]:
        raise ValueError('Join{axis=1}: cannot join arrays whose sizes differ in dimension 0')
    out = np.empty((x0.shape[0], x0.shape[1] + x1.shape[1]), np.float64)
    f = 0
    for o0 in range(x0.shape[0]):
        for o1 in range(x0.shape[1]):
            out[o0, f + o1] = x0[o0, o1]
    f = f + x0.shape[1]
    for o0 in range(x1.shape[0]):
        for o1 in range(x1.shape[1]):
            out[o0, f + o1] = x1[o0, o1]
    return out
<BLANKLINE>
"""

from __future__ import annotations

from symlab.compile.numba.codegen import check_dtypes, dtype_src, index_tuple, int_src, message
from symlab.compile.numba.kernels import Kernel, function_source, kernel_for, register_kernel
from symlab.graph.basic import Apply
from symlab.tensor.joining import Join, Split


def _along(ndim: int, axis: int, piece: str) -> str:
    """An index that takes ``piece`` (a slice) along ``axis`` and everything elsewhere."""
    return index_tuple([piece if d == axis else ":" for d in range(ndim)])


@register_kernel(Join)
def _join(op: Join, node: Apply, name: str) -> Kernel:
    """A new array of the promoted dtype; each input copied (and cast) into its place."""
    check_dtypes(node)
    args = [f"x{k}" for k in range(len(node.inputs))]
    ndim, axis = node.inputs[0].ndim, op.axis
    body: list[str] = []
    for k in range(1, len(args)):
        for d in range(ndim):
            if d != axis:
                body += [
                    f"if x{k}.shape[{d}] != x0.shape[{d}]:",
                    f"    raise ValueError({message(op, f'cannot join arrays whose sizes differ in dimension {d}')})",
                ]
    total = " + ".join(f"{a}.shape[{axis}]" for a in args)
    shape = index_tuple([total if d == axis else f"x0.shape[{d}]" for d in range(ndim)])
    body.append(f"out = np.empty(({shape}), {dtype_src(node.outputs[0].type.dtype)})")
    offset = "0"
    for a in args:  # loops compile much faster than Numba's slice assignment with a cast
        body.append(f"f = {offset}")
        depth = 0
        for d in range(ndim):
            body.append("    " * depth + f"for o{d} in range({a}.shape[{d}]):")
            depth += 1
        out_index = index_tuple([f"f + o{d}" if d == axis else f"o{d}" for d in range(ndim)])
        body.append("    " * depth + f"out[{out_index}] = {a}[{index_tuple([f'o{d}' for d in range(ndim)])}]")
        offset = f"f + {a}.shape[{axis}]"
    body.append("return out")
    return Kernel(name, function_source(name, args, body))


@register_kernel(Split)
def _split(op: Split, node: Apply, name: str) -> Kernel:
    """Checked sizes, then one view of ``x`` per piece."""
    check_dtypes(node)
    n, ndim, axis = op.n_splits, node.inputs[0].ndim, op.axis
    args = ["x", *(f"s{k}" for k in range(n))]
    body = [f"c{k} = {int_src(f's{k}')}" for k in range(n)]
    negative = " or ".join(f"c{k} < 0" for k in range(n))
    total = " + ".join(f"c{k}" for k in range(n))
    body += [
        f"if {negative} or {total} != x.shape[{axis}]:",
        f"    raise ValueError({message(op, f'cannot split dimension {axis} of x into these sizes')})",
    ]
    pieces = []
    offset = "0"
    for k in range(n):
        end = f"c{k}" if offset == "0" else f"{offset} + c{k}"
        pieces.append(f"x[{_along(ndim, axis, f'{offset}:{end}')}]")
        body.append(f"e{k} = {end}")
        offset = f"e{k}"
    body.append(f"return {pieces[0]}" if n == 1 else f"return ({', '.join(pieces)})")
    return Kernel(name, function_source(name, args, body))


__all__: list[str] = []
_ = kernel_for  # the doctest uses it
