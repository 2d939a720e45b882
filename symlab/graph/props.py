"""The props of ops and types: the attributes, named in ``__props__``, that make up their identity.

Rewriting compares and hashes ops all the time (a merge keys nodes by op and
inputs, a pattern compares a node's op with its own), so reading the props
is done by one :func:`operator.attrgetter` per class, made once:

>>> class Scale:
...     __props__ = ("factor", "axis")
...     def __init__(self, factor, axis):
...         self.factor, self.axis = factor, axis
>>> props_getter(Scale)(Scale(2.0, 1))
(2.0, 1)
>>> class Flip:
...     __props__ = ("axis",)
...     axis = 0
>>> props_getter(Flip)(Flip())
(0,)
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from operator import attrgetter
from typing import Any


@cache  # a class's __props__ does not change
def props_getter(cls: type) -> Callable[[Any], tuple[Any, ...]]:
    """A function returning the tuple of an instance's props, in the order of ``cls.__props__``."""
    names = tuple(cls.__props__)  # type: ignore[attr-defined]
    if not names:
        return lambda obj: ()
    if len(names) == 1:
        get = attrgetter(names[0])
        return lambda obj: (get(obj),)
    return attrgetter(*names)


__all__ = ["props_getter"]
