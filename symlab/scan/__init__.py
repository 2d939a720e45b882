"""Loops: ``symlab.scan`` (Theano's and PyTensor's ``scan``), the ``Scan`` op, ``until``.

``symlab.scan`` is both this package and the function: ``symlab.scan(fn, sequences=...)`` calls
:func:`~symlab.scan.basic.scan`, and ``symlab.scan.utils.until`` is the stopping condition, as in
Theano. Modules: :mod:`~symlab.scan.basic` (``scan``: a Python function of one iteration made a loop),
:mod:`~symlab.scan.info` (``ScanInfo``: the layout of a loop's inputs and outputs),
:mod:`~symlab.scan.op` (``Scan``: the op, its NumPy loop, shapes and inner graph),
:mod:`~symlab.scan.utils` (``until``).

>>> import numpy as np
>>> import symlab
>>> import symlab.tensor as st
>>> x = st.dvector("x")
>>> squares, updates = symlab.scan(lambda v: v ** 2, sequences=x)
>>> squares.eval({x: np.arange(4.0)}).tolist(), dict(updates)
([0.0, 1.0, 4.0, 9.0], {})
"""

import sys
import types
from typing import Any

from symlab.scan import utils
from symlab.scan.basic import OrderedUpdates, scan
from symlab.scan.info import ScanInfo
from symlab.scan.op import Scan, ScanError
from symlab.scan.utils import until


class _CallableModule(types.ModuleType):
    """This package's class: calling ``symlab.scan(...)`` calls :func:`~symlab.scan.basic.scan`."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return scan(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

__all__ = ["OrderedUpdates", "Scan", "ScanError", "ScanInfo", "scan", "until", "utils"]
