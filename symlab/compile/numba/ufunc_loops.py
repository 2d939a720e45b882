r"""NumPy's own inner loops of transcendental ufuncs, callable from Numba kernels.

NumPy computes ``exp``, ``log1p``, ``sin``... on float arrays with vectorised
code chosen for the CPU at run time (AVX-512 where the machine has it), 5 to
10 times faster per element than the scalar C library that Numba's
``np.exp`` calls. This module lets a generated kernel call those very loops
on a block of contiguous values, so that a fused kernel is as fast as NumPy
per function *and* computes the same bits as NumPy (and as symlab's NUMPY
mode), without NumPy's full-size temporaries.

How: :mod:`~symlab.compile.numba.ufunc_table` finds each loop in its ufunc's
table of inner loops (without importing Numba). Each loop is given to LLVM under a symbol name
(``symlab_npy_exp_float64``...) when this module is imported, and the
intrinsic ``<name>_<dtype>(src, dst)`` in compiled code calls that symbol.
Generated code names an intrinsic as an attribute of this module
(``ufunc_loops.exp_float64``): the intrinsics are the values of the mapping
:data:`LOOPS`, which the module's ``__getattr__`` reads.
Machine code refers to the loop by name, never by address, so Numba's disk
cache can keep it: a new process registers its own addresses before any
cached code is loaded (every generated module imports this one).

A ufunc or dtype without a loop in :data:`AVAILABLE` is computed inline by
the kernel generators instead.

``<name>_<dtype>(a, b, dst, uniform)`` runs a binary loop of
:data:`BINARY_AVAILABLE` (``pow``, ``arctan2``) on blocks; ``uniform`` true
passes ``b`` with stride 0, as NumPy's iterator passes an operand broadcast
from one value (NumPy's ``power`` takes shortcuts for some such exponents).

``sum_<dtype>(src)`` returns the sum of a 1-d array by NumPy's ``add`` loop
called in its reduce mode: pairwise summation, the bits of ``np.sum`` along
a contiguous axis, and several times faster than a plain loop, whose every
addition waits for the one before.
"""

from __future__ import annotations

from typing import Any

import llvmlite.binding as llvm
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from symlab.compile.numba.ufunc_table import (
    AVAILABLE,
    BINARY_AVAILABLE,
    DTYPES,
    REDUCE_AVAILABLE,
    UFUNCS,
    call_loop_from_python,
    loop_address,
    symbol,
)

# --- the Numba side: symbols for LLVM, and one intrinsic per loop ------------------------------

for (_name, _dtype), _address in (AVAILABLE | BINARY_AVAILABLE | REDUCE_AVAILABLE).items():
    llvm.add_symbol(symbol(_name, _dtype), _address)


def _call_loop(context: Any, builder: Any, sym: str, data: list[Any], n: Any, steps: list[Any]) -> None:
    """Emit a call of the NumPy inner loop registered as ``sym``: ``loop(data, &n, steps, NULL)``."""
    i8p = ir.IntType(8).as_pointer()
    intp = context.get_value_type(types.intp)
    fnty = ir.FunctionType(ir.VoidType(), [i8p.as_pointer(), intp.as_pointer(), intp.as_pointer(), i8p])
    fn = cgutils.get_or_insert_function(builder.module, fnty, sym)
    pointers = cgutils.alloca_once(builder, i8p, size=len(data))
    step_array = cgutils.alloca_once(builder, intp, size=len(steps))
    for k, (pointer, step) in enumerate(zip(data, steps)):
        builder.store(builder.bitcast(pointer, i8p), builder.gep(pointers, [ir.Constant(intp, k)]))
        builder.store(step, builder.gep(step_array, [ir.Constant(intp, k)]))
    builder.call(fn, [pointers, cgutils.alloca_once_value(builder, n), step_array, ir.Constant(i8p, None)])


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
            steps = [builder.extract_value(s.strides, 0), builder.extract_value(d.strides, 0)]
            _call_loop(context, builder, sym, [s.data, d.data], builder.extract_value(s.shape, 0), steps)
            return context.get_dummy_value()

        return types.none(src, dst), codegen

    typer.__name__ = f"{name}_{dtype}"
    return intrinsic(typer)


def _make_binary_intrinsic(name: str, dtype: str) -> Any:
    """``<name>_<dtype>(a, b, dst, uniform)``: the binary loop on 1-d arrays of ``dtype`` over ``len(a)`` elements
    (``b`` and ``dst`` at least as long, or ``b`` read at ``b[0]`` alone when ``uniform`` is true; ``dst`` may be
    ``a`` or ``b``)."""
    sym = symbol(name, dtype)
    numba_dtype = getattr(types, dtype)

    def typer(typingctx, a, b, dst, uniform):  # type: ignore[no-untyped-def]
        for arr in (a, b, dst):
            if not (isinstance(arr, types.Array) and arr.ndim == 1 and arr.dtype == numba_dtype):
                return None
        if not dst.mutable or not isinstance(uniform, types.Integer | types.Boolean):
            return None

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            arrays = [context.make_array(t)(context, builder, v) for t, v in zip(signature.args[:3], args[:3])]
            strides = [builder.extract_value(arr.strides, 0) for arr in arrays]
            flag = context.cast(builder, args[3], signature.args[3], types.boolean)
            strides[1] = builder.select(flag, ir.Constant(strides[1].type, 0), strides[1])
            n = builder.extract_value(arrays[0].shape, 0)
            _call_loop(context, builder, sym, [arr.data for arr in arrays], n, strides)
            return context.get_dummy_value()

        return types.none(a, b, dst, uniform), codegen

    typer.__name__ = f"{name}_{dtype}"
    return intrinsic(typer)


def _make_sum_intrinsic(dtype: str) -> Any:
    """``sum_<dtype>(src)``: the sum of a 1-d array of ``dtype`` (any stride), by NumPy's pairwise ``add``
    loop in reduce mode: the same bits as ``np.sum`` along a contiguous axis."""
    sym = symbol("add", dtype)
    numba_dtype = getattr(types, dtype)

    def typer(typingctx, src):  # type: ignore[no-untyped-def]
        if not (isinstance(src, types.Array) and src.ndim == 1 and src.dtype == numba_dtype):
            return None

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            (src_ty,) = signature.args
            s = context.make_array(src_ty)(context, builder, args[0])
            intp = context.get_value_type(types.intp)
            acc = cgutils.alloca_once_value(builder, ir.Constant(context.get_value_type(numba_dtype), 0.0))
            zero = ir.Constant(intp, 0)
            steps = [zero, builder.extract_value(s.strides, 0), zero]  # acc += sum(src): a reduction
            _call_loop(context, builder, sym, [acc, s.data, acc], builder.extract_value(s.shape, 0), steps)
            return builder.load(acc)

        return numba_dtype(src), codegen

    typer.__name__ = f"sum_{dtype}"
    return intrinsic(typer)


#: What generated code calls, by the name it calls it: ``ufunc_loops.exp_float64(src, dst)`` is
#: ``LOOPS["exp_float64"]`` (the module's ``__getattr__`` looks the name up here). One intrinsic per loop of
#: :data:`AVAILABLE` (``<name>_<dtype>``), of :data:`BINARY_AVAILABLE` (``pow_float64``...) and of
#: :data:`REDUCE_AVAILABLE` (``sum_float64``...).
LOOPS: dict[str, Any] = {
    **{f"{name}_{dtype}": _make_intrinsic(name, dtype) for name, dtype in AVAILABLE},
    **{f"{name}_{dtype}": _make_binary_intrinsic(name, dtype) for name, dtype in BINARY_AVAILABLE},
    **{f"sum_{dtype}": _make_sum_intrinsic(dtype) for _, dtype in REDUCE_AVAILABLE},
}


def __getattr__(name: str) -> Any:
    """``ufunc_loops.<name>_<dtype>``, as generated code writes it: the intrinsic of :data:`LOOPS` of that name."""
    try:
        return LOOPS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r} (no such loop in LOOPS)") from None


__all__ = [
    "AVAILABLE",
    "BINARY_AVAILABLE",
    "DTYPES",
    "LOOPS",
    "REDUCE_AVAILABLE",
    "UFUNCS",
    "call_loop_from_python",
    "loop_address",
    "symbol",
]
