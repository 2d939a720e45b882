"""Numba kernels of ``Dot`` (and of ``MatMul`` on matrices).

Float matrices and vectors go through ``np.dot`` (BLAS, through Numba's
SciPy bindings): an input of the output dtype is passed as it is when Numba
knows it is C- or F-contiguous (a transpose is F-contiguous) and copied
otherwise (:func:`~symlab.compile.numba.jit_helpers.dot_operand`), an input
of another dtype is converted; integer and boolean products are plain loops that
accumulate in the output dtype. ``MatMul`` of stacks (more than 2
dimensions) and ``TensorDot`` have no kernel: they run their ``perform``.

>>> import symlab.tensor as st
>>> a, b = st.dmatrices("a", "b")
>>> print(kernel_for(st.dot(a, b).owner, "k").source)  # doctest: +ELLIPSIS
def k(a, b):
    if a.shape[-1] != b.shape[-2]:
        raise ValueError('dot: inner dimensions do not match')
    return np.dot(dot_operand(a), dot_operand(b))
<BLANKLINE>
"""

from __future__ import annotations

from symlab.compile.numba.kernels import Kernel, NoKernel, kernel_for, register_kernel
from symlab.graph.basic import Apply
from symlab.tensor.products import Dot, MatMul


def _np_type(dtype: str) -> str:
    return "np.bool_" if dtype == "bool" else f"np.{dtype}"


@register_kernel(Dot, MatMul)
def dot_kernel(op: Dot | MatMul, node: Apply, name: str) -> Kernel:
    """``np.dot`` for floats, loops for integers; 1-d and 2-d inputs only."""
    a, b = node.inputs
    out = node.outputs[0]
    if a.type.ndim > 2 or b.type.ndim > 2:
        raise NoKernel(f"{op}: no Numba kernel for inputs of more than 2 dimensions")
    dtype = out.type.dtype
    t = _np_type(dtype)
    inner = "b.shape[0]" if b.type.ndim == 1 else "b.shape[-2]"
    message = f"{op}: inner dimensions do not match"
    lines = [f"def {name}(a, b):", f"    if a.shape[-1] != {inner}:", f"        raise ValueError({message!r})"]
    if dtype in ("float32", "float64"):
        operands = [
            f"dot_operand({v})" if var.type.dtype == dtype else f"np.ascontiguousarray({v}).astype({t})"
            for v, var in (("a", a), ("b", b))
        ]
        call = f"np.dot({operands[0]}, {operands[1]})"
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


__all__ = ["dot_kernel", "kernel_for"]
