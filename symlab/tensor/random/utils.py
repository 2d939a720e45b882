"""``RandomStream``: draws that advance their own generators, with no update to write.

Each draw of a stream gets a new shared generator (seeded from the stream's seed) whose ``default_update`` is the
draw's next generator, so every function using the draw advances it, unless compiled with
``no_default_updates=True`` (or an ``updates`` entry of its own for that generator):

>>> import numpy as np
>>> import symlab
>>> from symlab.tensor.random.utils import RandomStream
>>> srng = RandomStream(seed=234)
>>> rv_u = srng.uniform(0, 1, size=(2, 2))
>>> f = symlab.function([], rv_u, mode="NUMPY")
>>> g = symlab.function([], rv_u, no_default_updates=True, mode="NUMPY")
>>> bool(np.any(f() != f())), bool(np.all(g() == g()))
(True, True)
>>> rng, next_rng = srng.state_updates[0]
>>> rng.default_update is next_rng
True
>>> srng.seed(234)   # every generator of the stream back to its first state
>>> first = f()
>>> srng.seed(234)
>>> bool(np.all(f() == first))
True
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from symlab.graph.basic import Variable
from symlab.tensor.random import basic
from symlab.tensor.random.op import RandomVariable
from symlab.tensor.random.variable import RandomGeneratorSharedVariable, shared_rng


class RandomStream:
    """A source of draws, each on a generator of its own that functions advance by default (PyTensor's).

    ``seed``: the seed of the ``SeedSequence`` the generators are spawned from; ``namespace``: a module whose
    ``__all__`` names the distributions (default :mod:`symlab.tensor.random.basic`); ``rng_ctor``: makes a
    generator of a ``SeedSequence``. ``stream.<distribution>(*params, size=...)`` draws; ``gen(op, ...)`` draws
    from any random variable op; ``state_updates`` lists ``(generator, next generator)``; ``updates()`` returns
    them; ``seed(s)`` reseeds every generator of the stream.
    """

    def __init__(self, seed: int | None = None, namespace: ModuleType | None = None,
                 rng_ctor: Callable[[np.random.SeedSequence], np.random.Generator] = np.random.default_rng) -> None:
        self.namespace = basic if namespace is None else namespace
        self.default_instance_seed = seed
        self.state_updates: list[tuple[RandomGeneratorSharedVariable, Variable]] = []
        self.gen_seedgen = np.random.SeedSequence(seed)
        self.rng_ctor = rng_ctor

    def __getattr__(self, name: str) -> Callable[..., Variable]:
        if name.startswith("_"):
            raise AttributeError(name)
        op = getattr(self.namespace, name, None) if name in getattr(self.namespace, "__all__", ()) else None
        if not isinstance(op, RandomVariable) and not callable(op):
            raise AttributeError(f"RandomStream has no distribution {name!r} (see symlab.tensor.random.basic)")

        def draw(*args: Any, **kwargs: Any) -> Variable:
            return self.gen(op, *args, **kwargs)

        draw.__name__ = name
        draw.__doc__ = getattr(op, "__doc__", None)
        return draw

    def updates(self) -> list[tuple[RandomGeneratorSharedVariable, Variable]]:
        """The ``(generator, next generator)`` pairs of every draw made so far."""
        return list(self.state_updates)

    def seed(self, seed: int | None = None) -> None:
        """Reseed every generator of the stream (``None``: the stream's own seed), as a new stream would seed them."""
        if seed is None:
            seed = self.default_instance_seed
        self.gen_seedgen = np.random.SeedSequence(seed)
        for (rng, _), child in zip(self.state_updates, self.gen_seedgen.spawn(len(self.state_updates)), strict=True):
            rng.set_value(self.rng_ctor(child), borrow=True)

    def gen(self, op: Callable[..., Any], *args: Any, **kwargs: Any) -> Variable:
        """A draw of ``op(*args, **kwargs)`` on a new generator of this stream, advanced by default."""
        if "rng" in kwargs:
            raise ValueError("RandomStream: a draw of a stream uses the stream's generators; rng= cannot be given")
        # The k-th draw's generator is seeded by the k-th child of the stream's SeedSequence (what ``spawn`` gives),
        # taken only once the draw is made: a refused draw (bad parameters) uses no seed of the stream.
        parent = self.gen_seedgen
        child = np.random.SeedSequence(parent.entropy, spawn_key=(*parent.spawn_key, len(self.state_updates)),
                                       pool_size=parent.pool_size)
        rng = shared_rng(self.rng_ctor(child), borrow=True)
        out = op(*args, rng=rng, **kwargs)
        next_rng = out.owner.outputs[0]
        self.state_updates.append((rng, next_rng))
        rng.default_update = next_rng
        return out


__all__ = ["RandomStream"]
