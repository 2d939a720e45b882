"""``symlab.compile.mode``: the modes, under the module name PyTensor's tutorial imports.

The modes themselves live in :mod:`symlab.compile.modes`; this module gives them
PyTensor's names (``pytensor.compile.mode.Mode``, ``get_mode``, ``get_default_mode``).

>>> from symlab.compile.mode import Mode, get_default_mode
>>> import symlab
>>> with symlab.config.change_flags(mode="NUMPY"):
...     get_default_mode().name
'NUMPY'
>>> Mode(linker="numpy").linker
'numpy'

PyTensor's linker names are accepted too: ``"py"`` and ``"vm"`` (a node at a time in
Python) run on symlab's NumPy backend, ``"c"``, ``"cvm"`` and ``"c|py"`` (compiled) on
its Numba backend:

>>> type(Mode(linker="vm").make_linker()).__name__, type(Mode(linker="cvm").make_linker()).__name__
('NumpyLinker', 'NumbaLinker')

In PyTensor ``"vm"`` and ``"cvm"`` are the *lazy* linkers, the ones that run only the branch an
``ifelse`` chooses (conditions.rst). Both symlab backends are lazy (each follows the graph's
:mod:`~symlab.compile.lazy_plan`): ``Mode(linker="vm")`` runs the chosen branch node by node with
NumPy, ``Mode(linker="cvm")`` in the Numba code, inside an ``if`` block.
"""

from __future__ import annotations

from symlab.compile.linker_numpy import NumpyLinker
from symlab.compile.modes import PREDEFINED, DebugMode, Mode, NanGuardMode, get_mode, register_linker
from symlab.compile.monitormode import MonitorMode
from symlab.compile.numba.linker import NumbaLinker

#: PyTensor's linker names, and the symlab backend that plays each part.
PYTENSOR_LINKERS = {"py": NumpyLinker, "vm": NumpyLinker, "c": NumbaLinker, "cvm": NumbaLinker, "c|py": NumbaLinker}
for _name, _linker in PYTENSOR_LINKERS.items():
    register_linker(_name, _linker)

#: PyTensor's name of the predefined modes, by name.
predefined_modes = PREDEFINED


def get_default_mode() -> Mode:
    """The mode ``symlab.function`` uses when it is given none: ``get_mode(symlab.config.mode)``.

    >>> import symlab
    >>> get_default_mode() is get_mode(symlab.config.mode)
    True
    """
    from symlab.config import config

    return get_mode(config.mode)


__all__ = [
    "DebugMode",
    "Mode",
    "MonitorMode",
    "NanGuardMode",
    "PYTENSOR_LINKERS",
    "get_default_mode",
    "get_mode",
    "predefined_modes",
    "register_linker",
]
