r"""NumPy's own inner loops of transcendental ufuncs, callable from Numba kernels.

NumPy computes ``exp``, ``log1p``, ``sin``... on float arrays with vectorised
code chosen for the CPU at run time (AVX-512 where the machine has it), 5 to
10 times faster per element than the scalar C library that Numba's
``np.exp`` calls. This module lets a generated kernel call those very loops
on a block of contiguous values, so that a fused kernel is as fast as NumPy
per function *and* computes the same bits as NumPy (and as symlab's NUMPY
mode), without NumPy's full-size temporaries.

How: a ufunc keeps a table of inner loops, one per type signature, each a C
function ``loop(char **args, npy_intp *dimensions, npy_intp *steps, void
*data)``. :func:`loop_address` reads the table (NumPy's public
``PyUFuncObject`` layout). Each loop is given to LLVM under a symbol name
(``symlab_npy_exp_float64``...) when this module is imported, and the
intrinsic ``<name>_<dtype>(src, dst)`` in compiled code calls that symbol.
Machine code refers to the loop by name, never by address, so Numba's disk
cache can keep it: a new process registers its own addresses before any
cached code is loaded (every generated module imports this one).

Only loops whose ``data`` pointer is NULL are used (NumPy's own typed loops);
a ufunc or dtype without one is not in :data:`AVAILABLE`, and the kernel
generators compute that function inline instead.

>>> import numpy as np
>>> ("exp", "float64") in AVAILABLE
True
>>> call_loop_from_python("exp", np.array([0.0, 1.0]))
array([1.        , 2.71828183])
"""

from __future__ import annotations

import ctypes
from typing import Any

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

#: symlab scalar op name -> NumPy ufunc whose inner loop computes it.
UFUNCS: dict[str, np.ufunc] = {
    name: getattr(np, name)
    for name in (
        "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
        "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
    )
}
#: Float dtypes the loops are taken for.
DTYPES = ("float32", "float64")


class _UFuncHead(ctypes.Structure):
    """The leading fields of NumPy's ``PyUFuncObject`` (``numpy/ufuncobject.h``)."""

    _fields_ = [
        ("ob_refcnt", ctypes.c_ssize_t),
        ("ob_type", ctypes.c_void_p),
        ("nin", ctypes.c_int),
        ("nout", ctypes.c_int),
        ("nargs", ctypes.c_int),
        ("identity", ctypes.c_int),
        ("functions", ctypes.POINTER(ctypes.c_void_p)),
        ("data", ctypes.POINTER(ctypes.c_void_p)),
        ("ntypes", ctypes.c_int),
        ("reserved1", ctypes.c_int),
        ("name", ctypes.c_char_p),
        ("types", ctypes.POINTER(ctypes.c_char)),
    ]


def loop_address(ufunc: np.ufunc, dtype: str) -> int | None:
    """The address of ``ufunc``'s inner loop for ``dtype -> dtype``, or None.

    None when the ufunc is not unary, has no such loop, or the loop needs a
    ``data`` pointer. The struct is checked against the ufunc's Python-visible
    name and arity before anything else is read.
    """
    head = _UFuncHead.from_address(id(ufunc))
    if head.name is None or head.name.decode() != ufunc.__name__ or (head.nin, head.nout) != (1, 1):
        return None
    code = np.dtype(dtype).num
    for k in range(head.ntypes):
        if ord(head.types[2 * k]) == code and ord(head.types[2 * k + 1]) == code:
            if head.data[k]:
                return None
            return head.functions[k]
    return None


def symbol(name: str, dtype: str) -> str:
    """The LLVM symbol under which the loop of ``name`` on ``dtype`` is registered."""
    return f"symlab_npy_{name}_{dtype}"


#: (name, dtype) -> address of NumPy's loop, for every loop this process can call.
AVAILABLE: dict[tuple[str, str], int] = {}
for _name, _ufunc in UFUNCS.items():
    for _dtype in DTYPES:
        _address = loop_address(_ufunc, _dtype)
        if _address:
            AVAILABLE[(_name, _dtype)] = _address

_LoopType = ctypes.CFUNCTYPE(
    None,
    ctypes.POINTER(ctypes.c_void_p),
    ctypes.POINTER(ctypes.c_ssize_t),
    ctypes.POINTER(ctypes.c_ssize_t),
    ctypes.c_void_p,
)


def call_loop_from_python(name: str, x: np.ndarray) -> np.ndarray:
    """Run the registered loop of ``name`` on a contiguous 1-d array (for tests and doctests)."""
    x = np.ascontiguousarray(x)
    out = np.empty_like(x)
    fn = _LoopType(AVAILABLE[(name, x.dtype.name)])
    args = (ctypes.c_void_p * 2)(x.ctypes.data, out.ctypes.data)
    dims = (ctypes.c_ssize_t * 1)(x.size)
    steps = (ctypes.c_ssize_t * 2)(x.itemsize, out.itemsize)
    fn(args, dims, steps, None)
    return out


# --- the Numba side: symbols for LLVM, and one intrinsic per loop ------------------------------

for (_name, _dtype), _address in AVAILABLE.items():
    llvm.add_symbol(symbol(_name, _dtype), _address)


def _make_intrinsic(name: str, dtype: str) -> Any:
    """``<name>_<dtype>(src, dst)``: the loop on 1-d arrays of ``dtype``, any strides, over ``len(src)``
    elements (``dst`` at least as long; ``dst is src`` is allowed)."""
    sym = symbol(name, dtype)
    numba_dtype = getattr(types, dtype)

    def typer(typingctx, src, dst):  # type: ignore[no-untyped-def]
        for a in (src, dst):
            if not (isinstance(a, types.Array) and a.ndim == 1 and a.dtype == numba_dtype):
                return None
        if not dst.mutable:
            return None

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            src_ty, dst_ty = signature.args
            s = context.make_array(src_ty)(context, builder, args[0])
            d = context.make_array(dst_ty)(context, builder, args[1])
            i8p = ir.IntType(8).as_pointer()
            intp = context.get_value_type(types.intp)
            fnty = ir.FunctionType(ir.VoidType(), [i8p.as_pointer(), intp.as_pointer(), intp.as_pointer(), i8p])
            fn = cgutils.get_or_insert_function(builder.module, fnty, sym)
            pointers = cgutils.alloca_once(builder, i8p, size=2)
            builder.store(builder.bitcast(s.data, i8p), pointers)
            builder.store(builder.bitcast(d.data, i8p), builder.gep(pointers, [ir.Constant(intp, 1)]))
            n = builder.extract_value(s.shape, 0)
            dims = cgutils.alloca_once_value(builder, n)
            steps = cgutils.alloca_once(builder, intp, size=2)
            builder.store(builder.extract_value(s.strides, 0), steps)
            builder.store(builder.extract_value(d.strides, 0), builder.gep(steps, [ir.Constant(intp, 1)]))
            builder.call(fn, [pointers, dims, steps, ir.Constant(i8p, None)])
            return context.get_dummy_value()

        return types.none(src, dst), codegen

    typer.__name__ = f"{name}_{dtype}"
    return intrinsic(typer)


for (_name, _dtype) in AVAILABLE:
    globals()[f"{_name}_{_dtype}"] = _make_intrinsic(_name, _dtype)


__all__ = ["AVAILABLE", "DTYPES", "UFUNCS", "call_loop_from_python", "loop_address", "symbol"]
