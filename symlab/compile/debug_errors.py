"""What DebugMode raises: one error class per check, and the short text of a value its messages show.

Every failed check of :mod:`symlab.compile.debugmode` raises a :class:`DebugModeError` subclass whose
message names the node (and the rewrite that made it, if any) and shows the values involved
(:func:`show_value`). :class:`BadOptimization` is PyTensor's name of :class:`BadRewrite`.

>>> issubclass(BadRewrite, DebugModeError), BadOptimization is BadRewrite
(True, True)
"""

from __future__ import annotations

from typing import Any

import numpy as np


class DebugModeError(Exception):
    """A check of DebugMode failed."""


class BadThunkOutput(DebugModeError):
    """Two runs of a node, or the compiled and the reference graphs, disagree."""


class BadDestroyMap(DebugModeError):
    """A node changed an input its ``destroy_map`` does not declare (or a protected input changed)."""


class BadViewMap(DebugModeError):
    """An output shares memory with an input its ``view_map`` does not declare."""


class BadOutputType(DebugModeError):
    """A node produced a value its output's type refuses."""


class BadInferShape(DebugModeError):
    """``infer_shape`` disagrees with the shapes ``perform`` produced."""


class BadRewrite(DebugModeError):
    """A rewrite changed the value the graph computes."""


#: PyTensor's (and Theano's) name for :class:`BadRewrite`: rewrites were "optimizations" there.
BadOptimization = BadRewrite


def show_value(value: Any, limit: int = 12) -> str:
    """A short text of a value: its dtype and shape, and its elements if few.

    >>> show_value(np.array([1.0, 2.5]))
    'array([1. , 2.5]) (float64, shape (2,))'
    """
    arr = np.asarray(value)
    if arr.size <= limit:
        body = repr(arr).replace("\n", "")
        body = " ".join(body.split())
    else:
        body = np.array2string(arr.ravel()[:limit], separator=", ") + "..."
    return f"{body} ({arr.dtype}, shape {arr.shape})"


__all__ = [
    "BadDestroyMap",
    "BadInferShape",
    "BadOptimization",
    "BadOutputType",
    "BadRewrite",
    "BadThunkOutput",
    "BadViewMap",
    "DebugModeError",
    "show_value",
]
