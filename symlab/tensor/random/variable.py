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
        drawn = op(*params, rng=self, return_next_rng=True, **kwargs)
        self.tag.used = True  # only once the draw exists: a refused draw leaves the generator as it was
        return drawn

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.normal`."""
        return self._draw(basic.normal, loc, scale, size=size, **kwargs)

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.uniform`."""
        return self._draw(basic.uniform, low, high, size=size, **kwargs)

    def standard_normal(self, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :func:`~symlab.tensor.random.basic.standard_normal`."""
        return self._draw(basic.standard_normal, size=size, **kwargs)

    def triangular(self, left: Any, mode: Any, right: Any, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.triangular`."""
        return self._draw(basic.triangular, left, mode, right, size=size, **kwargs)

    def beta(self, alpha: Any, beta: Any, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.beta`."""
        return self._draw(basic.beta, alpha, beta, size=size, **kwargs)

    def halfnormal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.halfnormal`."""
        return self._draw(basic.halfnormal, loc, scale, size=size, **kwargs)

    def lognormal(self, mean: Any = 0.0, sigma: Any = 1.0, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.lognormal`."""
        return self._draw(basic.lognormal, mean, sigma, size=size, **kwargs)

    def gamma(self, shape: Any, rate: Any = None, scale: Any = None, size: Any = None,
              **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :func:`~symlab.tensor.random.basic.gamma` (give ``scale``)."""
        return self._draw(basic.gamma, shape, rate, scale, size=size, **kwargs)

    def invgamma(self, shape: Any, scale: Any, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.invgamma`."""
        return self._draw(basic.invgamma, shape, scale, size=size, **kwargs)

    def standard_gamma(self, shape: Any, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.standard_gamma`."""
        return self._draw(basic.standard_gamma, shape, size=size, **kwargs)

    def chisquare(self, df: Any, size: Any = None) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :func:`~symlab.tensor.random.basic.chisquare`."""
        return self._draw(basic.chisquare, df, size=size)

    def pareto(self, b: Any, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.pareto`."""
        return self._draw(basic.pareto, b, scale, size=size, **kwargs)

    def gumbel(self, loc: Any, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.gumbel`."""
        return self._draw(basic.gumbel, loc, scale, size=size, **kwargs)

    def exponential(self, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.exponential`."""
        return self._draw(basic.exponential, scale, size=size, **kwargs)

    def weibull(self, shape: Any, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.weibull`."""
        return self._draw(basic.weibull, shape, size=size, **kwargs)

    def logistic(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.logistic`."""
        return self._draw(basic.logistic, loc, scale, size=size, **kwargs)

    def vonmises(self, mu: Any, kappa: Any, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.vonmises`."""
        return self._draw(basic.vonmises, mu, kappa, size=size, **kwargs)

    def cauchy(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.cauchy`."""
        return self._draw(basic.cauchy, loc, scale, size=size, **kwargs)

    def halfcauchy(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.halfcauchy`."""
        return self._draw(basic.halfcauchy, loc, scale, size=size, **kwargs)

    def wald(self, mean: Any = 1.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.wald`."""
        return self._draw(basic.wald, mean, scale, size=size, **kwargs)

    def t(self, df: Any, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.t`."""
        return self._draw(basic.t, df, loc, scale, size=size, **kwargs)

    def laplace(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.laplace`."""
        return self._draw(basic.laplace, loc, scale, size=size, **kwargs)

    def poisson(self, lam: Any = 1.0, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.poisson`."""
        return self._draw(basic.poisson, lam, size=size, **kwargs)

    def geometric(self, p: Any, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.geometric`."""
        return self._draw(basic.geometric, p, size=size, **kwargs)

    def hypergeometric(self, ngood: Any, nbad: Any, nsample: Any, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.hypergeometric`."""
        return self._draw(basic.hypergeometric, ngood, nbad, nsample, size=size, **kwargs)

    def bernoulli(self, p: Any, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.bernoulli`."""
        return self._draw(basic.bernoulli, p, size=size, **kwargs)

    def binomial(self, n: Any, p: Any, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.binomial`."""
        return self._draw(basic.binomial, n, p, size=size, **kwargs)

    def negative_binomial(self, n: Any, p: Any, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.negative_binomial`."""
        return self._draw(basic.negative_binomial, n, p, size=size, **kwargs)

    def integers(self, low: Any, high: Any = None, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.integers`."""
        return self._draw(basic.integers, low, high, size=size, **kwargs)

    def multivariate_normal(self, mean: Any, cov: Any, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.multivariate_normal`."""
        return self._draw(basic.multivariate_normal, mean, cov, size=size, **kwargs)

    def dirichlet(self, alphas: Any, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.dirichlet`."""
        return self._draw(basic.dirichlet, alphas, size=size, **kwargs)

    def multinomial(self, n: Any, p: Any, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.multinomial`."""
        return self._draw(basic.multinomial, n, p, size=size, **kwargs)

    def categorical(self, p: Any, size: Any = None, **kwargs: Any) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :data:`~symlab.tensor.random.basic.categorical`."""
        return self._draw(basic.categorical, p, size=size, **kwargs)

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :func:`~symlab.tensor.random.basic.choice`."""
        return self._draw(basic.choice, a, size=size, replace=replace, p=p)

    def permutation(self, x: Any, size: Any = None) -> tuple[Variable, Variable]:
        """``(next_rng, draw)`` of :func:`~symlab.tensor.random.basic.permutation`."""
        return self._draw(basic.permutation, x, size=size)


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
