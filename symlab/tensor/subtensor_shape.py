"""The shape of ``x[idx]``, computed by one set of NumPy rules from static sizes and from symbolic ones.

A size is an int, a symbolic int64 scalar, or :data:`UNKNOWN` (not known while building the graph);
:func:`indexed_shape` gives the static output type of an indexing op (ints and ``UNKNOWN``) and its
``infer_shape`` (ints and scalars):

>>> indexed_shape([UNKNOWN, 10], [(None, None, -1), (2, None, 3)], "x[::-1, 2::3]")
[UNKNOWN, 3]
>>> indexed_shape([5, 4], [AdvancedIndex((3,)), None], "x[[0, 1, 1], None]")
[3, 1, 4]
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from symlab.graph.basic import Variable
from symlab.tensor.basic import cast
from symlab.tensor.conversion import constant
from symlab.tensor.math import eq, lt, maximum, minimum, switch


class _Unknown:
    """A size that is not known while building the graph; arithmetic keeps it unknown."""

    def _same(self, *_: Any) -> _Unknown:
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __floordiv__ = __rfloordiv__ = _same

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()


@dataclass
class AdvancedIndex:
    """An advanced index for shape computation: the shape it contributes, the dims it uses."""

    shape: tuple
    consumed: int = 1


def _known(*values: Any) -> bool:
    return builtins.all(isinstance(v, int) for v in values)


def _unknown(*values: Any) -> bool:
    return builtins.any(v is UNKNOWN for v in values)


def _binary(int_fn: Any, sym_fn: Any) -> Any:
    def fn(a: Any, b: Any) -> Any:
        if _unknown(a, b):
            return UNKNOWN
        if _known(a, b):
            return int_fn(a, b)
        return sym_fn(a, b)

    return fn


_max = _binary(builtins.max, maximum)
_min = _binary(builtins.min, minimum)
_lt = _binary(lambda a, b: a < b, lt)


def _add(a: Any, b: Any) -> Any:
    return a if isinstance(b, int) and b == 0 else a + b


def _sub(a: Any, b: Any) -> Any:
    return a if isinstance(b, int) and b == 0 else a - b


def _where(cond: Any, a: Any, b: Any) -> Any:
    if isinstance(cond, bool):
        return a if cond else b
    if cond is UNKNOWN or _unknown(a, b):
        return a if _known(a, b) and a == b else UNKNOWN
    return switch(cond, a, b)


def _slice_length(n: Any, start: Any, stop: Any, step: Any) -> Any:
    """``len(range(n)[start:stop:step])`` for ints, symbolic scalars or UNKNOWN."""
    if start is None and stop is None and (step is None or (isinstance(step, int) and step == 1)):
        return n
    step = 1 if step is None else step
    neg = _lt(step, 0)
    lo, hi = _where(neg, -1, 0), _where(neg, _add(n, -1), n)

    def bound(i: Any, default: Any) -> Any:
        if i is None:
            return default
        return _where(_lt(i, 0), _max(_add(i, n), lo), _min(i, hi))

    first = bound(start, _where(neg, _add(n, -1), 0))
    end = bound(stop, _where(neg, -1, n))
    # ceil((end - first) / step), for a step of either sign
    sign = _where(neg, -1, 1)
    numerator = _add(_sub(end, first), step - sign if _known(step, sign) else _sub(step, sign))
    length = numerator if isinstance(step, int) and step == 1 else numerator // step
    return _max(length, 0)


def _broadcast_sizes(a: Any, b: Any, where: str) -> Any:
    if isinstance(a, int) and a == 1:
        return b
    if isinstance(b, int) and b == 1:
        return a
    if _known(a, b):
        if a != b:
            raise IndexError(f"{where}: index arrays cannot be broadcast together (sizes {a} and {b})")
        return a
    if isinstance(a, int) or isinstance(b, int):
        return a if isinstance(a, int) else b  # the other one must be 1 or the same
    if _unknown(a, b):
        return UNKNOWN
    return switch(eq(a, 1), b, a)


def _broadcast_shapes(shapes: list[tuple], where: str) -> list:
    ndim = builtins.max(len(s) for s in shapes)
    out: list = [1] * ndim
    for shape in shapes:
        for k, size in enumerate(shape):
            d = ndim - len(shape) + k
            out[d] = _broadcast_sizes(out[d], size, where)
    return out


def indexed_shape(shape: Sequence[Any], entries: Sequence[Any], where: str) -> list:
    """The shape of ``x[entries]`` in NumPy's rules, given ``x``'s ``shape``.

    Entries are ints or scalars (symbolic or UNKNOWN), slice tuples, ``None``
    and ``AdvancedIndex``. With advanced indices, scalars index like 0-d arrays;
    the broadcast shape of all of them replaces them where they stand if they
    are adjacent, and goes first otherwise.
    """
    advanced = builtins.any(isinstance(e, AdvancedIndex) for e in entries)
    if advanced:
        entries = [
            e if e is None or e is Ellipsis or isinstance(e, tuple | AdvancedIndex) else AdvancedIndex(()) for e in entries
        ]
    positions = [k for k, e in enumerate(entries) if isinstance(e, AdvancedIndex)]
    out: list = []
    dim, insert_at = 0, None
    for e in entries:
        if e is None:
            out.append(1)
        elif e is Ellipsis:
            continue  # kept only to separate advanced indices, as NumPy does
        elif isinstance(e, tuple):
            out.append(_slice_length(shape[dim], *e))
            dim += 1
        elif isinstance(e, AdvancedIndex):
            insert_at = len(out) if insert_at is None else insert_at
            dim += e.consumed
        else:
            dim += 1
    out.extend(shape[dim:])
    if advanced:
        adjacent = positions == list(range(positions[0], positions[-1] + 1))
        at = insert_at if adjacent else 0
        out[at:at] = _broadcast_shapes([entries[k].shape for k in positions], where)
    return out


def as_int64(size: Any) -> Variable:
    return constant(size, dtype="int64") if isinstance(size, int) else cast(size, "int64")

