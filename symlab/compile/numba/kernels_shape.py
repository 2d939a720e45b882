"""Numba kernels of ``DimShuffle``, ``Shape``, ``Shape_i``, ``SpecifyShape`` and ``Reshape``.

``DimShuffle`` is a view: a transpose of all dimensions is ``a.T`` and
adding or removing size-1 dimensions is a reshape of a C-contiguous array
(both keep a layout Numba knows, which BLAS and the elemwise fast path
need); other views are built with ``as_strided`` from the input's shape and
strides (a new ``'x'`` dimension has stride 0, a dropped one is left out). ``Reshape`` reshapes ``np.ascontiguousarray(x)``: a view of a
contiguous input, a copy of another (an op's ``view_map`` says its output
*may* alias its input, so a copy is allowed). ``SpecifyShape`` checks the
sizes at run time and returns its input.

>>> import symlab.tensor as st
>>> x = st.dmatrix("x")
>>> print(kernel_for(x.T.owner, "k").source)
def k(a):
    return a.T
<BLANKLINE>
"""

from __future__ import annotations

from symlab.compile.numba.kernels import Kernel, kernel_for, register_kernel
from symlab.graph.basic import Apply, Constant
from symlab.tensor.elemwise import DimShuffle
from symlab.tensor.shape import Reshape
from symlab.tensor.shape_of import Shape, Shape_i, SpecifyShape


def _tuple(items: list[str]) -> str:
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


@register_kernel(DimShuffle)
def dimshuffle_kernel(op: DimShuffle, node: Apply, name: str) -> Kernel:
    shape = ["1" if e == "x" else f"a.shape[{e}]" for e in op.new_order]
    strides = ["0" if e == "x" else f"a.strides[{e}]" for e in op.new_order]
    nd = op.input_ndim
    if not op.drop and not op.augment and op.shuffle == tuple(range(nd)):
        body = "a"
    elif not op.drop and not op.augment and op.shuffle == tuple(reversed(range(nd))):
        body = "a.T"  # Numba knows the transpose of a C-contiguous array is F-contiguous (BLAS takes it)
    elif op.shuffle == tuple(sorted(op.shuffle)) and nd > 0 and len(op.new_order) > 0:
        body = f"reshaped_view(a, {_tuple(shape)}, {_tuple(strides)})"  # only size-1 dimensions change
    else:
        body = f"np.lib.stride_tricks.as_strided(a, shape={_tuple(shape)}, strides={_tuple(strides)})"
    return Kernel(name, f"def {name}(a):\n    return {body}\n")


@register_kernel(Shape)
def shape_kernel(op: Shape, node: Apply, name: str) -> Kernel:
    nd = node.inputs[0].type.ndim
    lines = [f"def {name}(a):", f"    out = np.empty({nd}, np.int64)"]
    lines += [f"    out[{d}] = a.shape[{d}]" for d in range(nd)]
    lines.append("    return out")
    return Kernel(name, "\n".join(lines) + "\n")


@register_kernel(Shape_i)
def shape_i_kernel(op: Shape_i, node: Apply, name: str) -> Kernel:
    return Kernel(name, f"def {name}(a):\n    out = np.empty((), np.int64)\n    out[()] = a.shape[{op.i}]\n    return out\n")


@register_kernel(SpecifyShape)
def specify_shape_kernel(op: SpecifyShape, node: Apply, name: str) -> Kernel:
    x, *sizes = node.inputs
    args = ["a"] + [f"s{d}" for d in range(len(sizes))]
    lines = [f"def {name}({', '.join(args)}):"]
    for d, s in enumerate(sizes):
        if isinstance(s, Constant) and s.data is None:
            continue
        message = f"SpecifyShape: the value's size in dimension {d} differs from the specified size"
        lines += [f"    if a.shape[{d}] != s{d}[()]:", f"        raise ValueError({message!r})"]
    lines.append("    return a")
    return Kernel(name, "\n".join(lines) + "\n")


@register_kernel(Reshape)
def reshape_kernel(op: Reshape, node: Apply, name: str) -> Kernel:
    shape = _tuple([f"shp[{i}]" for i in range(op.ndim)])
    lines = [
        f"def {name}(a, shp):",
        f"    if shp.shape[0] != {op.ndim}:",
        f"        raise ValueError({f'{op}: the shape has the wrong number of entries'!r})",
        f"    return np.ascontiguousarray(a).reshape({shape})",
    ]
    return Kernel(name, "\n".join(lines) + "\n")


__all__ = ["dimshuffle_kernel", "kernel_for", "reshape_kernel", "shape_i_kernel", "shape_kernel", "specify_shape_kernel"]
