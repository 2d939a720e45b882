"""Compilation: a graph becomes a Python callable.

:mod:`~symlab.compile.function` (``function``, ``Function``),
:mod:`~symlab.compile.io` (``In``, ``Out``), :mod:`~symlab.compile.shared`
(``shared``), :mod:`~symlab.compile.modes` (``Mode``, ``get_mode``),
:mod:`~symlab.compile.linker_numpy` (the NumPy backend),
:mod:`~symlab.compile.debugmode`, :mod:`~symlab.compile.nanguard` and
:mod:`~symlab.compile.profiling`.

>>> import symlab
>>> import symlab.tensor as st
>>> x = st.dvector("x")
>>> f = symlab.function([x], (x ** 2).sum(), mode="FAST_COMPILE")
>>> float(f([1.0, 2.0]))
5.0
"""

from symlab.compile.io import In, Out
from symlab.compile.shared import SharedVariable, TensorSharedVariable, shared
from symlab.compile.modes import DebugMode, Mode, NanGuardMode, get_mode, register_linker
from symlab.compile.profiling import ProfileStats
from symlab.compile.debugmode import DebugModeError
from symlab.compile.nanguard import NanGuardError
from symlab.compile.function import Function, FunctionMaker, UnusedInputError, function

__all__ = [
    "DebugMode",
    "DebugModeError",
    "Function",
    "FunctionMaker",
    "In",
    "Mode",
    "NanGuardError",
    "NanGuardMode",
    "Out",
    "ProfileStats",
    "SharedVariable",
    "TensorSharedVariable",
    "UnusedInputError",
    "function",
    "get_mode",
    "register_linker",
    "shared",
]
