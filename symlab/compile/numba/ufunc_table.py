r"""NumPy's inner loops of transcendental ufuncs: which exist, and where (no Numba here).

A ufunc keeps a table of inner loops, one per type signature, each a C
function ``loop(char **args, npy_intp *dimensions, npy_intp *steps, void
*data)``. :func:`loop_address` reads that table (NumPy's public
``PyUFuncObject`` layout); :data:`AVAILABLE` holds every loop compiled
kernels can call. Deciding what a kernel calls needs only this module, so
kernel source is generated without importing Numba;
:mod:`~symlab.compile.numba.ufunc_loops` gives the loops to compiled code.

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

import numpy as np

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


__all__ = ["AVAILABLE", "DTYPES", "UFUNCS", "call_loop_from_python", "loop_address", "symbol"]
