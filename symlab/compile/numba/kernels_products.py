"""Numba kernels of ``Dot`` (and of ``MatMul`` on matrices).

Float matrices and vectors go through
:func:`~symlab.compile.numba.numpy_blas.blas_dot`, NumPy's own BLAS: an input
whose rows or columns are contiguous is passed as it is (a transpose, a slice),
others are copied, and an input of another dtype is converted first; integer
and boolean products are plain loops that
accumulate in the output dtype. ``MatMul`` of stacks (more than 2
dimensions) loops over the batch indices (a size-1 static batch dimension
broadcasts) with one matrix product each; ``TensorDot`` moves the free axes
of ``a`` first and its summed axes last (of ``b``, summed first), reshapes
both to matrices, and makes one product.

>>> import symlab.tensor as st
>>> a, b = st.dmatrices("a", "b")
>>> print(kernel_for(st.dot(a, b).owner, "k").source)  # doctest: +ELLIPSIS
def k(a, b):
    if a.shape[-1] != b.shape[-2]:
        raise ValueError('dot: inner dimensions do not match')
    return blas_dot(a, b)
<BLANKLINE>
"""

from __future__ import annotations

from symlab.compile.numba.codegen import check_dtype
from symlab.compile.numba.kernels import Kernel, NoKernel, kernel_for, register_kernel
from symlab.graph.basic import Apply
from symlab.scalar.type import np_type_source
from symlab.tensor.products import Dot, MatMul, TensorDot


@register_kernel(Dot, MatMul)
def dot_kernel(op: Dot | MatMul, node: Apply, name: str) -> Kernel:
    """``blas_dot`` for floats, loops for integers; 1-d and 2-d inputs only."""
    a, b = node.inputs
    out = node.outputs[0]
    if a.type.ndim > 2 or b.type.ndim > 2:
        return _matmul_stack_kernel(op, node, name)
    dtype = out.type.dtype
    t = np_type_source(dtype)
    inner = "b.shape[0]" if b.type.ndim == 1 else "b.shape[-2]"
    message = f"{op}: inner dimensions do not match"
    lines = [f"def {name}(a, b):", f"    if a.shape[-1] != {inner}:", f"        raise ValueError({message!r})"]
    if dtype in ("float32", "float64"):
        operands = [
            v if var.type.dtype == dtype else f"np.ascontiguousarray({v}).astype({t})" for v, var in (("a", a), ("b", b))
        ]
        call = f"blas_dot({operands[0]}, {operands[1]})"
        if out.type.ndim == 0:
            lines += [f"    out = np.empty((), {t})", f"    out[()] = {call}", "    return out"]
        else:
            lines.append(f"    return {call}")
        return Kernel(name, "\n".join(lines) + "\n")
    if dtype == "bool" or dtype.startswith(("int", "uint")):
        # a: (m, k) or (k,); b: (k, n) or (k,)
        am = "a.shape[0]" if a.type.ndim == 2 else "1"
        bn = "b.shape[1]" if b.type.ndim == 2 else "1"
        ar = "a[i, p]" if a.type.ndim == 2 else "a[p]"
        br = "b[p, j]" if b.type.ndim == 2 else "b[p]"
        acc_t = t
        lines += [
            f"    m = {am}",
            f"    n = {bn}",
            "    kk = a.shape[-1]",
            f"    full = np.zeros((m, n), {acc_t})",
            "    for i in range(m):",
            "        for j in range(n):",
            f"            s = {acc_t}(0)",
            "            for p in range(kk):",
            f"                s = {'s or (' + ar + ' and ' + br + ')' if dtype == 'bool' else f's + {acc_t}({ar}) * {acc_t}({br})'}",
            "            full[i, j] = s",
        ]
        if a.type.ndim == 2 and b.type.ndim == 2:
            lines.append("    return full")
        elif a.type.ndim == 2:
            lines.append("    return full[:, 0].copy()")
        elif b.type.ndim == 2:
            lines.append("    return full[0].copy()")
        else:
            lines += [f"    out = np.empty((), {t})", "    out[()] = full[0, 0]", "    return out"]
        return Kernel(name, "\n".join(lines) + "\n")
    raise NoKernel(f"{op}: dtype {dtype} is not supported by the Numba kernels")


def _product_lines(dtype: str, a: str, b: str, a_dtype: str, b_dtype: str, target: str, indent: str) -> list[str]:
    """Statements writing the matrix product of the 2-d arrays ``a`` and ``b`` into ``target`` (2-d)."""
    t = np_type_source(dtype)
    if dtype in ("float32", "float64"):
        ops = [v if vd == dtype else f"np.ascontiguousarray({v}).astype({t})" for v, vd in ((a, a_dtype), (b, b_dtype))]
        return [f"{indent}{target}[:, :] = blas_dot({ops[0]}, {ops[1]})"]
    if dtype == "bool":
        step = f"s = s or ({a}[i, p] and {b}[p, j])"
    else:
        step = f"s = s + {t}({a}[i, p]) * {t}({b}[p, j])"
    return [
        f"{indent}for i in range({a}.shape[0]):",
        f"{indent}    for j in range({b}.shape[1]):",
        f"{indent}        s = {t}(0)",
        f"{indent}        for p in range({a}.shape[1]):",
        f"{indent}            {step}",
        f"{indent}        {target}[i, j] = s",
    ]


def _matmul_stack_kernel(op: Dot | MatMul, node: Apply, name: str) -> Kernel:
    """``MatMul`` of stacks: one matrix product per batch index, batch dimensions broadcast where static 1."""
    a, b = node.inputs
    dtype = node.outputs[0].type.dtype
    check_dtype(dtype, str(op))
    nd = a.type.ndim
    ta, tb = a.type.shape, b.type.shape
    lines = [f"def {name}(a, b):"]
    for d in range(nd - 2):
        if ta[d] != 1 and tb[d] != 1:
            message = f"{op}: batch dimension {d} of the inputs differs; a size-1 dimension broadcasts only when its static shape is 1"
            lines += [f"    if a.shape[{d}] != b.shape[{d}]:", f"        raise ValueError({message!r})"]
    lines += ["    if a.shape[-1] != b.shape[-2]:", f"        raise ValueError({f'{op}: inner dimensions do not match'!r})"]
    sizes = [f"a.shape[{d}]" if ta[d] != 1 else f"b.shape[{d}]" for d in range(nd - 2)]
    shape = "(" + ", ".join([*sizes, "a.shape[-2]", "b.shape[-1]"]) + ")"
    lines.append(f"    out = np.empty({shape}, {np_type_source(dtype)})")
    indent = "    "
    for d in range(nd - 2):
        lines.append(f"{indent}for j{d} in range({sizes[d]}):")
        indent += "    "
    ia = ", ".join("0" if ta[d] == 1 else f"j{d}" for d in range(nd - 2))
    ib = ", ".join("0" if tb[d] == 1 else f"j{d}" for d in range(nd - 2))
    io = ", ".join(f"j{d}" for d in range(nd - 2))
    lines += [f"{indent}am = a[{ia}]", f"{indent}bm = b[{ib}]", f"{indent}om = out[{io}]"]
    lines += _product_lines(dtype, "am", "bm", a.type.dtype, b.type.dtype, "om", indent)
    lines.append("    return out")
    return Kernel(name, "\n".join(lines) + "\n")


def _product(sizes: list[str]) -> str:
    return " * ".join(sizes) if sizes else "1"


def _tuple(items: list[str]) -> str:
    return "(" + "".join(f"{i}, " for i in items).rstrip(" ") + ")" if items else "()"


@register_kernel(TensorDot)
def tensordot_kernel(op: TensorDot, node: Apply, name: str) -> Kernel:
    """Free axes of ``a`` first and summed ones last (of ``b``: summed first), each as a matrix, one product."""
    a, b = node.inputs
    dtype = node.outputs[0].type.dtype
    check_dtype(dtype, str(op))
    free_a = [d for d in range(a.type.ndim) if d not in op.axes_a]
    free_b = [d for d in range(b.type.ndim) if d not in op.axes_b]
    lines = [f"def {name}(a, b):"]
    for da, db in zip(op.axes_a, op.axes_b):
        message = f"{op}: summed axis {da} of the first input and axis {db} of the second differ in size"
        lines += [f"    if a.shape[{da}] != b.shape[{db}]:", f"        raise ValueError({message!r})"]
    perm_a, perm_b = [*free_a, *op.axes_a], [*op.axes_b, *free_b]
    m = _product([f"a.shape[{d}]" for d in free_a])
    k = _product([f"a.shape[{d}]" for d in op.axes_a])
    n = _product([f"b.shape[{d}]" for d in free_b])
    lines += [
        f"    am = np.ascontiguousarray(np.transpose(a, {_tuple([str(d) for d in perm_a])})).reshape(({m}, {k}))",
        f"    bm = np.ascontiguousarray(np.transpose(b, {_tuple([str(d) for d in perm_b])})).reshape(({k}, {n}))",
        f"    om = np.empty(({m}, {n}), {np_type_source(dtype)})",
    ]
    lines += _product_lines(dtype, "am", "bm", a.type.dtype, b.type.dtype, "om", "    ")
    out_shape = [f"a.shape[{d}]" for d in free_a] + [f"b.shape[{d}]" for d in free_b]
    if out_shape:
        lines.append(f"    return om.reshape({_tuple(out_shape)})")
    else:
        lines += [f"    out = np.empty((), {np_type_source(dtype)})", "    out[()] = om[0, 0]", "    return out"]
    return Kernel(name, "\n".join(lines) + "\n")


__all__ = ["dot_kernel", "kernel_for", "tensordot_kernel"]
