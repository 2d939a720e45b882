"""``RandomGeneratorType``: the type of a NumPy ``Generator`` held by the graph, the state a draw reads and advances.

A random variable is an op that takes a generator and returns the *next* generator and a draw. Its generator input
and output are variables of this type: the graph carries the state explicitly, and a compiled function only gives
new numbers when an update carries the next generator back into a shared variable.

>>> import numpy as np
>>> from symlab.tensor.random.type import random_generator_type
>>> rng = random_generator_type("rng")
>>> rng, rng.type
(rng, RandomGeneratorType)
>>> g = np.random.default_rng(1)
>>> random_generator_type.filter(g) is g
True
>>> random_generator_type.filter(3)
Traceback (most recent call last):
...
TypeError: RandomGeneratorType: expected a numpy.random.Generator (np.random.default_rng(seed)), received an int (3)
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from symlab.graph.type import Type


def copy_generator(generator: np.random.Generator) -> np.random.Generator:
    """An independent copy of ``generator``: same bit generator state, advancing separately."""
    return copy.deepcopy(generator)


def generator_state(generator: np.random.Generator) -> dict[str, Any]:
    """The state of ``generator``'s bit generator (NumPy's dict: ``bit_generator``, ``state``, ...)."""
    return generator.bit_generator.state


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


class RandomGeneratorType(Type):
    """The type of a ``numpy.random.Generator``: all instances are equal (``random_generator_type`` is the one to use).

    ``filter`` accepts only a ``Generator`` (a ``RandomState`` is refused, with the way to make a ``Generator``);
    ``values_eq`` compares the bit generators' states, so two generators that will draw the same numbers are equal.
    """

    __props__ = ()
    #: A graph value of this type is state: a function that updates a shared generator may draw from it in place.
    is_generator_state = True

    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> np.random.Generator:
        if isinstance(data, np.random.Generator):
            return data
        if isinstance(data, np.random.RandomState):
            raise TypeError(
                "RandomGeneratorType: expected a numpy.random.Generator, received a numpy.random.RandomState; "
                "make a Generator with np.random.default_rng(seed)"
            )
        kind = type(data).__name__
        raise TypeError(
            f"RandomGeneratorType: expected a numpy.random.Generator (np.random.default_rng(seed)), received "
            f"{_article(kind)} {kind} ({data!r:.60})"
        )

    def values_eq(self, a: Any, b: Any) -> bool:
        return _states_equal(generator_state(a), generator_state(b))

    def values_eq_approx(self, a: Any, b: Any, rtol: float | None = None, atol: float | None = None) -> bool:
        """The same state or not: the tolerances DebugMode passes for the floats of a graph do not apply."""
        return self.values_eq(a, b)

    def may_share_memory(self, a: Any, b: Any) -> bool:
        return a is b or a.bit_generator is b.bit_generator

    def get_size(self, shape_info: Any) -> int:
        return 0  # the state is a few words, not data

    def convert_variable(self, var: Any) -> Any:
        return var if isinstance(var.type, RandomGeneratorType) else None

    def __repr__(self) -> str:
        return "RandomGeneratorType"


def _states_equal(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_states_equal(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(a, b))
    return bool(a == b)


#: The type of every generator variable (``rng("rng")`` makes one; ``random_generator_type("rng")`` too).
random_generator_type = RandomGeneratorType()

__all__ = ["RandomGeneratorType", "copy_generator", "generator_state", "random_generator_type"]
