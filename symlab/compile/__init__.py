"""Compilation: a graph becomes a Python callable.

:mod:`~symlab.compile.function` (``function``, ``Function``),
:mod:`~symlab.compile.io` (``In``, ``Out``), :mod:`~symlab.compile.shared`
(``shared``), :mod:`~symlab.compile.modes` (``Mode``, ``get_mode``; also importable as
:mod:`symlab.compile.mode`, PyTensor's name, with ``get_default_mode``),
:mod:`~symlab.compile.monitormode` (``MonitorMode``),
:mod:`~symlab.compile.linker_numpy` (the NumPy backend),
:mod:`~symlab.compile.debugmode`, :mod:`~symlab.compile.nanguard` and
:mod:`~symlab.compile.profiling`; ``wait_all`` waits for the background compiles under way
(:func:`~symlab.compile.numba.background.wait_all`); :mod:`~symlab.compile.builders` (``OpFromGraph``);
:mod:`~symlab.compile.threads` (how many threads parallel work uses; ``threading_info``).

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
from symlab.compile.monitormode import MonitorMode
from symlab.compile.mode import get_default_mode
from symlab.compile.profiling import ProfileStats
from symlab.compile.debugmode import DebugModeError
from symlab.compile.nanguard import NanGuardError
from symlab.compile.function import Function, FunctionMaker, UnusedInputError, function
from symlab.compile.numba.background import wait_all
from symlab.compile.builders import OpFromGraph
from symlab.compile.threads import threading_info
from symlab.compile import builders_rewrites  # noqa: F401 - registers the OpFromGraph rewrites

__all__ = [
    "DebugMode",
    "DebugModeError",
    "Function",
    "FunctionMaker",
    "In",
    "Mode",
    "MonitorMode",
    "NanGuardError",
    "NanGuardMode",
    "OpFromGraph",
    "Out",
    "ProfileStats",
    "SharedVariable",
    "TensorSharedVariable",
    "UnusedInputError",
    "function",
    "get_default_mode",
    "get_mode",
    "register_linker",
    "shared",
    "threading_info",
    "wait_all",
]
