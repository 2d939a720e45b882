"""NumPy's own BLAS, called from compiled kernels: ``blas_dot(a, b)``.

Numba's ``np.dot`` calls BLAS through SciPy's table of functions, that is
SciPy's copy of OpenBLAS. NumPy's wheels bring a second copy
(``scipy-openblas64``), and the two differ in two ways a user sees:

* speed: on the logistic regression of the benchmarks, ``X.T @ g`` (10000x100)
  takes 141 us with SciPy's copy and 106 us with NumPy's;
* threads: each copy keeps a pool of worker threads, and a process that
  alternates products of the two (a compiled function, then NumPy, then the
  function again...) makes both pools spin against each other on the same
  cores: a pair of matrix-vector products then costs 8 ms instead of 0.25 ms.

So compiled kernels call the library NumPy itself calls, found next to
NumPy's package (``numpy.libs`` or ``numpy/.dylibs``) and looked up by its
CBLAS names (``scipy_cblas_dgemm64_``: 64-bit integers). Each function is
given to LLVM under a symbol of symlab's (``symlab_blas_dgemm``...), so cached
machine code refers to it by name, never by address. When no such library is
found (a NumPy built against a system BLAS), :data:`LIBRARY` is None and
``blas_dot`` is Numba's ``np.dot``, as before.

``blas_dot(a, b)`` takes float32 or float64 vectors and matrices of one dtype,
of any strides: a matrix whose rows or columns are contiguous (a transpose, a
slice of rows or of columns) is passed as it is, with its leading dimension;
other layouts, negative and zero strides are copied first. Outside compiled
code it is ``np.dot``.

>>> import numpy as np
>>> a = np.arange(6.0).reshape(2, 3)
>>> blas_dot(a, a.T)
array([[ 5., 14.],
       [14., 50.]])
"""

from __future__ import annotations

from typing import Any

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload, register_jitable

from symlab.compile.numba.jit_helpers import dot_operand
from symlab.compile.numba.numpy_blas_library import LIBRARY, NO_TRANS, ROW_MAJOR, symbol


def blas_dot(a: Any, b: Any) -> Any:
    """The product of vectors and matrices ``a`` and ``b`` (see the module's docstring)."""
    return np.dot(a, b)



@intrinsic
def data_pointer(typingctx, a):  # type: ignore[no-untyped-def]
    """The address of ``a``'s first element, as a ``void *``."""
    if not isinstance(a, types.Array):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        array = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.bitcast(array.data, ir.IntType(8).as_pointer())

    return types.voidptr(a), codegen


def _externals(bits: int) -> dict[str, Any]:
    """One Numba ``ExternalFunction`` per CBLAS function, with integers of ``bits`` bits."""
    n, e, p = getattr(types, f"int{bits}"), types.int32, types.voidptr
    externals = {}
    for t, real in (("s", types.float32), ("d", types.float64)):
        externals[f"{t}gemm"] = types.ExternalFunction(
            symbol(f"{t}gemm"), types.void(e, e, e, n, n, n, real, p, n, p, n, real, p, n)
        )
        externals[f"{t}gemv"] = types.ExternalFunction(symbol(f"{t}gemv"), types.void(e, e, n, n, real, p, n, p, n, real, p, n))
        externals[f"{t}dot"] = types.ExternalFunction(symbol(f"{t}dot"), real(n, p, n, p, n))
    return externals


if LIBRARY is not None:
    for _function, _address in LIBRARY.addresses.items():
        llvm.add_symbol(symbol(_function), _address)
    _EXTERNALS = _externals(LIBRARY.int_bits)


# How BLAS reads an operand: (0, ld, m) m's rows are contiguous, (1, ld, m) its columns, with the
# leading dimension ld; m is the operand itself or, when BLAS cannot read it, a C-contiguous copy.
# Layouts Numba knows (C, F) are decided when compiling, the others when running.


@register_jitable
def _rows_contiguous(a, itemsize):  # type: ignore[no-untyped-def]
    return 0, max(a.shape[1], 1), a


@register_jitable
def _columns_contiguous(a, itemsize):  # type: ignore[no-untyped-def]
    return 1, max(a.shape[0], 1), a


@register_jitable
def _any_matrix(a, itemsize):  # type: ignore[no-untyped-def]
    m, n = a.shape
    s0, s1 = a.strides
    if n <= 1 or s1 == itemsize:
        ld = s0 // itemsize if m > 1 else max(n, 1)
        if s0 % itemsize == 0 and ld >= max(n, 1):
            return 0, ld, a
    if m <= 1 or s0 == itemsize:
        ld = s1 // itemsize if n > 1 else max(m, 1)
        if s1 % itemsize == 0 and ld >= max(m, 1):
            return 1, ld, a
    return 0, max(n, 1), np.ascontiguousarray(a)


@register_jitable
def _unit_vector(x, itemsize):  # type: ignore[no-untyped-def]
    return 1, x


@register_jitable
def _any_vector(x, itemsize):  # type: ignore[no-untyped-def]
    """BLAS's increment for ``x`` and ``x``, or 1 and a copy (negative, zero or odd strides)."""
    s = x.strides[0]
    if x.shape[0] <= 1:
        return 1, x
    if s > 0 and s % itemsize == 0:
        return s // itemsize, x
    return 1, np.ascontiguousarray(x)


def _reader(array: Any) -> Any:
    """The function above that tells how BLAS reads an operand of Numba type ``array``."""
    if array.ndim == 1:
        return _unit_vector if array.layout in ("C", "F") else _any_vector
    return {"C": _rows_contiguous, "F": _columns_contiguous}.get(array.layout, _any_matrix)


@overload(blas_dot)
def _blas_dot(a, b):  # type: ignore[no-untyped-def]
    same_float = (
        isinstance(a, types.Array)
        and isinstance(b, types.Array)
        and a.dtype == b.dtype
        and a.dtype in (types.float32, types.float64)
        and a.ndim in (1, 2)
        and b.ndim in (1, 2)
    )
    if LIBRARY is None or not same_float:
        return lambda a, b: np.dot(dot_operand(a), dot_operand(b))
    t = "s" if a.dtype == types.float32 else "d"
    gemm, gemv, dot = (_EXTERNALS[t + f] for f in ("gemm", "gemv", "dot"))
    dtype = np.float32 if t == "s" else np.float64
    one, zero = dtype(1), dtype(0)
    size = np.dtype(dtype).itemsize
    read_a, read_b = _reader(a), _reader(b)

    if a.ndim == 2 and b.ndim == 2:

        def matrix_matrix(a, b):  # type: ignore[no-untyped-def]
            m, k = a.shape
            n = b.shape[1]
            if m == 0 or n == 0 or k == 0:
                return np.zeros((m, n), dtype)
            ta, lda, a = read_a(a, size)
            tb, ldb, b = read_b(b, size)
            out = np.empty((m, n), dtype)
            gemm(ROW_MAJOR, NO_TRANS + ta, NO_TRANS + tb, m, n, k, one, data_pointer(a), lda, data_pointer(b), ldb, zero, data_pointer(out), n)
            return out

        return matrix_matrix
    if a.ndim == 2 or b.ndim == 2:
        matrix_first = a.ndim == 2
        read_mat, read_x = (read_a, read_b) if matrix_first else (read_b, read_a)

        @register_jitable
        def gemv_call(mat, x):  # type: ignore[no-untyped-def]
            # y = mat @ x (matrix first) or x @ mat, as y = op(M) @ x with M what BLAS reads (rows contiguous)
            rows, cols = mat.shape
            n_out = rows if matrix_first else cols
            if n_out == 0 or x.shape[0] == 0:
                return np.zeros(n_out, dtype)
            tm, ld, mat = read_mat(mat, size)
            inc, x = read_x(x, size)
            m_rows, m_cols = (rows, cols) if tm == 0 else (cols, rows)  # M is mat (tm 0) or mat.T (tm 1)
            transpose = tm if matrix_first else 1 - tm
            out = np.empty(n_out, dtype)
            gemv(ROW_MAJOR, NO_TRANS + transpose, m_rows, m_cols, one, data_pointer(mat), ld, data_pointer(x), inc, zero, data_pointer(out), 1)
            return out

        if matrix_first:
            return lambda a, b: gemv_call(a, b)
        return lambda a, b: gemv_call(b, a)

    def vector_vector(a, b):  # type: ignore[no-untyped-def]
        n = a.shape[0]
        if n == 0:
            return zero
        ia, a = read_a(a, size)
        ib, b = read_b(b, size)
        return dot(n, data_pointer(a), ia, data_pointer(b), ib)

    return vector_vector


__all__ = ["LIBRARY", "blas_dot", "data_pointer"]
