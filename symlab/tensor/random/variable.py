"""Generator variables: ``rng("rng")`` (an input), ``shared_rng(seed=...)`` (kept between calls), and their methods.

A generator variable draws like a NumPy ``Generator``, except that each method returns the pair
``(next_rng, draw)``: the state after the draw is a variable of its own, to draw from next or to store back.

>>> import numpy as np
>>> import symlab
>>> from symlab.tensor.random.variable import shared_rng
>>> rng = shared_rng(seed=123, name="rng")
>>> next_rng, x = rng.normal()
>>> final_rng, y = next_rng.uniform(size=2)
>>> f = symlab.function([], [x, y], updates={rng: final_rng}, mode="NUMPY")
>>> first = f()
>>> rng.set_value(seed=123)
>>> bool(np.all(f()[1] == first[1]))
True

Drawing twice from the same generator variable gives the same numbers twice (both draws start from one state);
a method warns when its generator was already used.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from symlab.graph.basic import Variable
from symlab.graph.sharedvalue import Container, SharedVariable
from symlab.tensor.random import basic
from symlab.tensor.random.op import register_default_generator
from symlab.tensor.random.type import RandomGeneratorType, copy_generator, random_generator_type

_UNSET: Any = object()


class RandomGeneratorVariable(Variable):
    """A variable holding a generator; its methods draw and return ``(next_rng, draw)``."""

    def _draw(self, op: Any, *params: Any, **kwargs: Any) -> tuple[Variable, Variable]:
        if getattr(self.tag, "used", False):
            warnings.warn(
                f"generator {self} was already used by a draw: drawing from it again gives the same numbers; draw "
                "from the next generator that the first draw returned",
                UserWarning,
                stacklevel=3,
            )
        self.tag.used = True
        return op(*params, rng=self, return_next_rng=True, **kwargs)

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.normal`."""
        return self._draw(basic.normal, loc, scale, size=size, **kwargs)

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.uniform`."""
        return self._draw(basic.uniform, low, high, size=size, **kwargs)


RandomGeneratorType.variable_type = RandomGeneratorVariable


def _generator_value(value: Any, seed: Any, borrow: bool, where: str) -> np.random.Generator:
    if value is None:
        if seed is _UNSET:
            raise ValueError(f"{where}: give a generator or seed=")
        return np.random.default_rng(seed)
    if seed is not _UNSET:
        raise ValueError(f"{where}: give a generator or seed=, not both")
    value = random_generator_type.filter(value)
    return value if borrow else copy_generator(value)


class RandomGeneratorSharedVariable(SharedVariable, RandomGeneratorVariable):
    """A generator kept between calls: ``symlab.shared(np.random.default_rng(seed))`` or :func:`shared_rng`.

    ``get_value()`` returns a copy of the generator (``borrow=True``: the stored one); ``set_value(generator)`` or
    ``set_value(seed=...)`` reseeds it.
    """

    def get_value(self, borrow: bool = False, return_internal_type: bool = False) -> np.random.Generator:
        value = self.container.value
        return value if borrow else copy_generator(value)

    def set_value(self, value: Any = None, borrow: bool = False, *, seed: Any = _UNSET) -> None:
        self.container.value = _generator_value(value, seed, borrow, f"shared generator {self}")

    def __str__(self) -> str:
        return self.name if self.name is not None else "<shared RandomGeneratorType>"


def rng(name: str | None = None) -> RandomGeneratorVariable:
    """A generator variable with no value: an input of a function (``In(rng, mutable=True)`` lets draws advance it).

    >>> import numpy as np
    >>> import symlab
    >>> r = rng("rng")
    >>> next_r, x = r.uniform(size=2)
    >>> f = symlab.function([r], x, mode="NUMPY")
    >>> g = np.random.default_rng(123)
    >>> print(f(g), f(g))
    [0.68235186 0.05382102] [0.68235186 0.05382102]
    """
    return random_generator_type(name)  # type: ignore[return-value]


def shared_rng(value: Any = None, *, seed: Any = _UNSET, name: str | None = None,
               borrow: bool = False) -> RandomGeneratorSharedVariable:
    """A shared generator: ``value`` (a ``Generator``, copied unless ``borrow``) or ``np.random.default_rng(seed)``."""
    generator = _generator_value(value, seed, borrow, "shared_rng")
    container = Container(random_generator_type, generator, name, False, None)
    return RandomGeneratorSharedVariable(random_generator_type, name=name, container=container)


def shared_generator(value: Any, name: str | None = None, strict: bool = False, allow_downcast: bool | None = None,
                     borrow: bool = False) -> RandomGeneratorSharedVariable:
    """``symlab.shared(generator)``: what :func:`symlab.shared` makes of a ``numpy.random.Generator``."""
    return shared_rng(value, name=name, borrow=borrow)


# A draw given no generator draws from a new shared one, seeded by the operating system (as in PyTensor). Without an
# update, every call of a function gives the same numbers.
register_default_generator(lambda: shared_rng(seed=None))

__all__ = ["RandomGeneratorSharedVariable", "RandomGeneratorVariable", "rng", "shared_generator", "shared_rng"]
