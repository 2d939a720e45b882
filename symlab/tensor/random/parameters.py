"""Checks of a distribution's parameter values: each refusal names the op, the parameter, the expected, the received.

A distribution's ``check_values(values)`` calls these with one array per parameter (``None`` where the value is
not known yet); ``make_node`` calls it with the constants, ``perform`` with every value:

>>> import numpy as np
>>> from symlab.tensor.random.basic import normal
>>> at_least(normal, [None, np.array([1.0, -2.0])], 1, 0.0)
Traceback (most recent call last):
...
ValueError: normal: scale must be >= 0, received -2.0 (in [ 1. -2.])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def refuse_values(op: Any, what: str, value: np.ndarray | None, bad: Any, expected: str) -> None:
    """Raise ``ValueError`` naming ``op``, ``what``, ``expected`` and the first bad entry where ``bad`` holds."""
    if value is None or bad is None or not np.any(bad):
        return
    value = np.asarray(value)
    if value.ndim == 0:
        shown = f"{value}"
    else:
        first = np.broadcast_to(value, np.shape(bad))[np.asarray(bad)].flat[0]
        shown = f"{first} (in {np.array2string(value, threshold=8)})"
    raise ValueError(f"{op.name}: {what} must be {expected}, received {shown}")


def at_least(op: Any, values: Sequence[np.ndarray | None], index: int, low: float, strict: bool = False) -> None:
    """Parameter ``index`` must be ``>= low`` (``> low`` when ``strict``)."""
    v = values[index]
    if v is not None and v.size:
        refuse_values(op, op.param_name(index), v, v <= low if strict else v < low,
                      f"{'>' if strict else '>='} {low:g}")


def not_above(op: Any, values: Sequence[np.ndarray | None], index: int, other: int) -> None:
    """Parameter ``index`` must be ``<=`` parameter ``other`` (both known)."""
    v, w = values[index], values[other]
    if v is not None and w is not None and v.size and w.size:
        shape = np.broadcast_shapes(v.shape, w.shape)
        refuse_values(op, op.param_name(index), np.broadcast_to(v, shape),
                      np.broadcast_to(v, shape) > np.broadcast_to(w, shape), f"<= {op.param_name(other)}")


def in_interval(op: Any, values: Sequence[np.ndarray | None], index: int, low: float, high: float,
                low_open: bool = False) -> None:
    """Parameter ``index`` must lie in ``[low, high]`` (``(low, high]`` when ``low_open``)."""
    v = values[index]
    if v is None or not v.size:
        return
    bad = ((v <= low) if low_open else (v < low)) | (v > high) | np.isnan(v)
    refuse_values(op, op.param_name(index), v, bad, f"in {'(' if low_open else '['}{low:g}, {high:g}]")


def probability_vectors(op: Any, values: Sequence[np.ndarray | None], index: int) -> None:
    """Parameter ``index`` must hold probabilities in ``[0, 1]`` summing to 1 along its last axis."""
    v = values[index]
    if v is None or not v.size:
        return
    in_interval(op, values, index, 0.0, 1.0)
    dtype = v.dtype if v.dtype.kind == "f" else np.dtype("float64")
    tolerance = float(np.sqrt(np.finfo(dtype).eps))
    sums = v.sum(axis=-1)
    bad = np.abs(sums - 1.0) > tolerance
    if np.any(bad):
        raise ValueError(
            f"{op.name}: {op.param_name(index)} must sum to 1 along its last axis (within {tolerance:.1e}), "
            f"received sums {np.array2string(np.asarray(sums), threshold=8)}"
        )


__all__ = ["at_least", "in_interval", "not_above", "probability_vectors", "refuse_values"]
