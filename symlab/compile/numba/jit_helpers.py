"""Functions the generated kernels call whose code depends on Numba's types (Numba overloads).

A generated module imports this one (after Numba is loaded); plain Python
versions run when called outside compiled code.

``reshaped_view(a, shape, strides)`` is a view of ``a`` with size-1
dimensions added or removed (the order of the others unchanged): for an
array Numba knows is C-contiguous, ``a.reshape(shape)``, which Numba still
knows is C-contiguous; for others ``as_strided``, of unknown layout.

``flat_input(a)`` is ``a`` flattened in C order: a view when Numba knows
``a`` is C-contiguous, a copy otherwise (what ``np.ravel`` does, at a
fraction of its compile time).

``c_layout(a)`` is True when Numba knows ``a`` is C-contiguous (a constant
of the compiled code), so that a kernel can take a flat view of ``a`` only
where that costs no copy.

``dot_operand(a)`` is ``a`` itself when Numba knows ``a`` is C- or
F-contiguous (BLAS takes either, a transpose being F-contiguous), and a
C-contiguous copy otherwise: on an array of unknown layout, Numba's
``np.dot`` uses plain loops, 30 times slower than BLAS.

>>> import numpy as np
>>> a = np.arange(6.0).reshape(2, 3)
>>> dot_operand(a.T) is a.T, dot_operand(a[:, ::2]).flags.c_contiguous
(False, True)
>>> flat_input(a.T)
array([0., 3., 1., 4., 2., 5.])
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import types
from numba.extending import overload


def dot_operand(a: Any) -> Any:
    """``a`` if it is C- or F-contiguous, else a C-contiguous copy."""
    return a if a.flags.c_contiguous or a.flags.f_contiguous else np.ascontiguousarray(a)


@overload(dot_operand)
def _dot_operand(a):  # type: ignore[no-untyped-def]  # unannotated: Numba compares it with the lambdas
    if isinstance(a, types.Array) and a.layout in ("C", "F"):
        return lambda a: a
    return lambda a: np.ascontiguousarray(a)


def c_layout(a: Any) -> bool:
    """True if ``a`` is C-contiguous (in compiled code: if Numba's type of ``a`` says so)."""
    return bool(a.flags.c_contiguous)


@overload(c_layout)
def _c_layout(a):  # type: ignore[no-untyped-def]
    known = isinstance(a, types.Array) and a.layout == "C"
    return (lambda a: True) if known else (lambda a: False)


def reshaped_view(a: Any, shape: tuple[int, ...], strides: tuple[int, ...]) -> Any:
    """A view of ``a`` with the given shape and strides (see the module's docstring)."""
    return np.lib.stride_tricks.as_strided(a, shape=shape, strides=strides)


@overload(reshaped_view)
def _reshaped_view(a, shape, strides):  # type: ignore[no-untyped-def]
    if isinstance(a, types.Array) and a.layout == "C":
        return lambda a, shape, strides: a.reshape(shape)
    return lambda a, shape, strides: np.lib.stride_tricks.as_strided(a, shape=shape, strides=strides)


def flat_input(a: Any) -> Any:
    """``a`` flattened in C order (a view if Numba knows it is C-contiguous)."""
    return np.ravel(a)


@overload(flat_input)
def _flat_input(a):  # type: ignore[no-untyped-def]
    if isinstance(a, types.Array) and a.layout == "C":
        if a.ndim == 1:
            return lambda a: a  # no reshape: its implementation costs Numba 0.15 s of compile
        return lambda a: a.reshape(a.size)
    return lambda a: a.flatten()


__all__ = ["c_layout", "dot_operand", "flat_input", "reshaped_view"]
