"""Loops: ``symlab.scan`` (Theano's and PyTensor's ``scan``), the ``Scan`` op, ``until``.

``symlab.scan`` is both this package and the function: ``symlab.scan(fn, sequences=...)`` calls
:func:`~symlab.scan.basic.scan`, and ``symlab.scan.utils.until`` is the stopping condition, as in
Theano. Modules: :mod:`~symlab.scan.basic` (``scan``: a Python function of one iteration made a loop),
:mod:`~symlab.scan.folds` (``map``, ``reduce``, ``foldl``, ``foldr``: common loops written with ``scan``),
:mod:`~symlab.scan.info` (``ScanInfo``: the layout of a loop's inputs and outputs),
:mod:`~symlab.scan.op` (``Scan``: the op, its NumPy loop, shapes and inner graph),
:mod:`~symlab.scan.rewriting`, :mod:`~symlab.scan.rewriting_push_seq`, :mod:`~symlab.scan.rewriting_memory`
(the structural rewrites of loops: push out, merge, drop unused parts, keep only the tails read),
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

from symlab.gradient.reverse_mode import register_loop_builder
from symlab.scan import utils
from symlab.scan.basic import OrderedUpdates, scan
from symlab.scan.folds import foldl, foldr, map, reduce  # noqa: A004 (PyTensor's names)
from symlab.scan.info import ScanInfo
from symlab.scan.op import Scan, ScanError
from symlab.scan.utils import until
from symlab.compile.numba.kernels import register_kernel_loader as _register_kernel_loader
from symlab.scan import inner_rewrite as _inner_rewrite  # noqa: F401 - registers scan_inner_graph
from symlab.scan import rewriting as _rewriting  # noqa: F401 - registers the scan rules
from symlab.scan import rewriting_memory as _rewriting_memory  # noqa: F401 - registers scan_save_mem
from symlab.scan import rewriting_push_seq as _rewriting_push_seq  # noqa: F401 - registers scan_push_out_seq


def _load_scan_kernel() -> None:
    """Register the Numba kernel of ``Scan`` (:mod:`~symlab.scan.numba_kernel`), at the first kernel lookup."""
    from symlab.scan import numba_kernel  # noqa: F401 - imported for its registration


_register_kernel_loader(_load_scan_kernel)


class _CallableModule(types.ModuleType):
    """This package's class: calling ``symlab.scan(...)`` calls :func:`~symlab.scan.basic.scan`."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return scan(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
register_loop_builder(scan)  # jacobian of an expression of unknown length builds a loop

__all__ = ["OrderedUpdates", "Scan", "ScanError", "ScanInfo", "foldl", "foldr", "map", "reduce", "scan", "until",
           "utils"]
