r"""NumPy's inner loops of transcendental ufuncs: which exist, and where (no Numba here).

A ufunc keeps a table of inner loops, one per type signature, each a C
function ``loop(char **args, npy_intp *dimensions, npy_intp *steps, void
*data)``. :func:`loop_address` reads that table (NumPy's public
``PyUFuncObject`` layout); :data:`AVAILABLE` holds every loop compiled
kernels can call. Deciding what a kernel calls needs only this module, so
kernel source is generated without importing Numba;
:mod:`~symlab.compile.numba.ufunc_loops` gives the loops to compiled code.

Which ops have a loop follows from their declarations
(:mod:`symlab.scalar.basic`): an ``approximate`` op implemented by a NumPy
ufunc. Only loops whose ``data`` pointer is NULL are used (NumPy's own typed loops);
a ufunc or dtype without one is not in :data:`AVAILABLE`, and the kernel
generators compute that function inline instead.

>>> import numpy as np
>>> ("exp", "float64") in AVAILABLE
True
>>> call_loop_from_python("exp", np.array([0.0, 1.0]))
array([1.        , 2.71828183])

Sums call NumPy's ``add`` loop in its reduce mode (pairwise summation, the
bits of ``np.sum``): :data:`REDUCE_AVAILABLE`, :func:`sum_from_python`.

Two binary functions have vectorised loops too (``pow`` and ``arctan2``):
:data:`BINARY_AVAILABLE`. NumPy's ``power`` loop looks at the exponent's
*stride*: an exponent broadcast from one value (stride 0) takes shortcuts for
a few values (NumPy 2.4: 2, 0.5 and -1 give ``x*x``, ``sqrt(x)``, ``1/x``),
which can differ in the last bit from the vectorised ``pow`` every other
exponent gets; so a caller passes stride 0 exactly where NumPy's iterator
would (:func:`call_binary_loop_from_python`):

>>> x = np.array([0.1 * k for k in range(1, 400)])
>>> two = np.full_like(x, 2.0)
>>> bool((call_binary_loop_from_python("pow", x, two, uniform=True) == np.power(x, 2.0)).all())
True
>>> bool((call_binary_loop_from_python("pow", x, two) == np.power(x, two)).all())
True
"""

from __future__ import annotations

import ctypes

import numpy as np

from symlab.scalar.basic import declared_ops

#: symlab scalar op name -> NumPy ufunc whose inner loop computes it: every declared op that is ``approximate``
#: (so Numba's own function may differ from NumPy's in the last bit) and implemented by a unary NumPy ufunc.
UFUNCS: dict[str, np.ufunc] = {
    op.name: op.impl for op in declared_ops() if op.approximate and isinstance(op.impl, np.ufunc) and op.impl.nin == 1
}
#: symlab scalar op name -> binary NumPy ufunc whose inner loop computes it (``pow``, ``arctan2``), chosen alike.
BINARY_UFUNCS: dict[str, np.ufunc] = {
    op.name: op.impl for op in declared_ops() if op.approximate and isinstance(op.impl, np.ufunc) and op.impl.nin == 2
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


def _typed_loop(ufunc: np.ufunc, dtype: str, nin: int) -> int | None:
    """The address of ``ufunc``'s inner loop with ``nin`` inputs and one output, all of ``dtype``, or None."""
    head = _UFuncHead.from_address(id(ufunc))
    if head.name is None or head.name.decode() != ufunc.__name__ or (head.nin, head.nout) != (nin, 1):
        return None
    code = np.dtype(dtype).num
    nargs = nin + 1
    for k in range(head.ntypes):
        if all(ord(head.types[nargs * k + i]) == code for i in range(nargs)):
            if head.data[k]:
                return None
            return head.functions[k]
    return None


def loop_address(ufunc: np.ufunc, dtype: str) -> int | None:
    """The address of ``ufunc``'s inner loop for ``dtype -> dtype``, or None.

    None when the ufunc is not unary, has no such loop, or the loop needs a
    ``data`` pointer. The struct is checked against the ufunc's Python-visible
    name and arity before anything else is read.
    """
    return _typed_loop(ufunc, dtype, 1)


def reduce_loop_address(ufunc: np.ufunc, dtype: str) -> int | None:
    """The address of binary ``ufunc``'s loop for ``(dtype, dtype) -> dtype``, or None.

    Called with the output as its first input and both of their steps 0,
    NumPy's float ``add`` loop *reduces*: it adds the pairwise sum of the
    second input to the output, exactly as ``np.sum`` does along a contiguous
    axis (and as :func:`sum_from_python` shows).
    """
    return _typed_loop(ufunc, dtype, 2)


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

#: (name, dtype) -> address of NumPy's loop ``(dtype, dtype) -> dtype`` of a binary function in :data:`BINARY_UFUNCS`.
BINARY_AVAILABLE: dict[tuple[str, str], int] = {}
for _name, _ufunc in BINARY_UFUNCS.items():
    for _dtype in DTYPES:
        _address = _typed_loop(_ufunc, _dtype, 2)
        if _address:
            BINARY_AVAILABLE[(_name, _dtype)] = _address

#: (name, dtype) -> address of the loop a sum calls (see :func:`reduce_loop_address`).
REDUCE_AVAILABLE: dict[tuple[str, str], int] = {}
for _dtype in DTYPES:
    _address = reduce_loop_address(np.add, _dtype)
    if _address:
        REDUCE_AVAILABLE[("add", _dtype)] = _address

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


def call_binary_loop_from_python(name: str, a: np.ndarray, b: np.ndarray, uniform: bool = False) -> np.ndarray:
    """Run the registered binary loop of ``name`` on contiguous 1-d arrays of one dtype (for tests and doctests).

    ``uniform``: pass ``b`` with stride 0 (only ``b[0]`` is read), as NumPy's iterator passes an operand
    broadcast from a single value.
    """
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    if a.ndim != 1 or b.dtype != a.dtype or b.size < (1 if uniform else a.size):
        raise ValueError(
            f"call_binary_loop_from_python: b must be a 1-d {a.dtype} array of at least "
            f"{1 if uniform else a.size} elements (a: {a.dtype}{a.shape}), received {b.dtype}{b.shape}"
        )
    out = np.empty_like(a)
    fn = _LoopType(BINARY_AVAILABLE[(name, a.dtype.name)])
    args = (ctypes.c_void_p * 3)(a.ctypes.data, b.ctypes.data, out.ctypes.data)
    dims = (ctypes.c_ssize_t * 1)(a.size)
    steps = (ctypes.c_ssize_t * 3)(a.itemsize, 0 if uniform else b.itemsize, out.itemsize)
    fn(args, dims, steps, None)
    return out


def sum_from_python(x: np.ndarray) -> np.generic:
    """The sum of a 1-d float array by NumPy's ``add`` loop in reduce mode (for tests and doctests).

    >>> x = np.random.default_rng(0).standard_normal(1001)
    >>> bool(sum_from_python(x) == np.sum(x)), bool(sum_from_python(x[::-3]) == np.sum(x[::-3]))
    (True, True)
    """
    acc = np.zeros(1, x.dtype)
    fn = _LoopType(REDUCE_AVAILABLE[("add", x.dtype.name)])
    args = (ctypes.c_void_p * 3)(acc.ctypes.data, x.ctypes.data, acc.ctypes.data)
    dims = (ctypes.c_ssize_t * 1)(x.shape[0])
    steps = (ctypes.c_ssize_t * 3)(0, x.strides[0], 0)
    fn(args, dims, steps, None)
    return acc[0]


__all__ = [
    "AVAILABLE",
    "BINARY_AVAILABLE",
    "BINARY_UFUNCS",
    "DTYPES",
    "REDUCE_AVAILABLE",
    "UFUNCS",
    "call_binary_loop_from_python",
    "call_loop_from_python",
    "loop_address",
    "reduce_loop_address",
    "sum_from_python",
    "symbol",
]
