"""The discrete scalar distributions (``int64`` draws): PyTensor's names and signatures, NumPy ``Generator`` numbers.

>>> import numpy as np
>>> import symlab
>>> from symlab.tensor.random.discrete import binomial
>>> x = binomial(10, [0.1, 0.9], size=(3, 2), rng=symlab.shared(np.random.default_rng(0)))
>>> x.type, bool(np.all(x.eval() == np.random.default_rng(0).binomial(10, [0.1, 0.9], (3, 2))))
(TensorType(int64, (3, 2)), True)
>>> binomial(10, 1.5)
Traceback (most recent call last):
...
ValueError: binomial: p must be in [0, 1], received 1.5
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from symlab.tensor.random.op import RandomVariable
from symlab.tensor.random.parameters import at_least, in_interval, refuse_values


class PoissonRV(RandomVariable):
    """``poisson(lam=1.0, size=None)`` (NumPy's ``Generator.poisson``)."""

    name = "poisson"
    signature = "()->()"
    dtype = "int64"
    param_names = ("lam",)

    def __call__(self, lam: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(lam, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        at_least(self, values, 0, 0.0)


class GeometricRV(RandomVariable):
    """``geometric(p, size=None)``: trials up to the first success (NumPy's ``Generator.geometric``)."""

    name = "geometric"
    signature = "()->()"
    dtype = "int64"
    param_names = ("p",)

    def __call__(self, p: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(p, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        in_interval(self, values, 0, 0.0, 1.0, low_open=True)


class HyperGeometricRV(RandomVariable):
    """``hypergeometric(ngood, nbad, nsample, size=None)`` (NumPy's ``Generator.hypergeometric``)."""

    name = "hypergeometric"
    signature = "(),(),()->()"
    dtype = "int64"
    param_names = ("ngood", "nbad", "nsample")

    def __call__(self, ngood: Any, nbad: Any, nsample: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(ngood, nbad, nsample, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        for k in range(3):
            at_least(self, values, k, 0.0)
        ngood, nbad, nsample = values
        if ngood is not None and nbad is not None and nsample is not None:
            total = np.broadcast_to(ngood + nbad, np.broadcast_shapes(ngood.shape, nbad.shape, nsample.shape))
            refuse_values(self, "nsample", nsample, np.broadcast_to(nsample, total.shape) > total, "<= ngood + nbad")


class BernoulliRV(RandomVariable):
    """``bernoulli(p, size=None)``: 1 with probability ``p``, drawn as NumPy's ``Generator.binomial(1, p)``."""

    name = "bernoulli"
    signature = "()->()"
    dtype = "int64"
    param_names = ("p",)

    def __call__(self, p: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(p, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        in_interval(self, values, 0, 0.0, 1.0)

    def rng_fn(self, rng: np.random.Generator, p: Any, size: Any) -> np.ndarray:
        return rng.binomial(1, p, size=size)


class BinomialRV(RandomVariable):
    """``binomial(n, p, size=None)`` (NumPy's ``Generator.binomial``)."""

    name = "binomial"
    signature = "(),()->()"
    dtype = "int64"
    param_names = ("n", "p")

    def __call__(self, n: Any, p: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(n, p, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        at_least(self, values, 0, 0.0)
        in_interval(self, values, 1, 0.0, 1.0)


class NegBinomialRV(RandomVariable):
    """``negative_binomial(n, p, size=None)``: failures before ``n`` successes (``Generator.negative_binomial``)."""

    name = "negative_binomial"
    signature = "(),()->()"
    dtype = "int64"
    param_names = ("n", "p")

    def __call__(self, n: Any, p: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(n, p, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        at_least(self, values, 0, 0.0, strict=True)
        in_interval(self, values, 1, 0.0, 1.0, low_open=True)


class IntegersRV(RandomVariable):
    """``integers(low, high=None, size=None)``: integers in ``[low, high)`` (``[0, low)`` without ``high``)."""

    name = "integers"
    signature = "(),()->()"
    dtype = "int64"
    param_names = ("low", "high")

    def __call__(self, low: Any, high: Any = None, size: Any = None, **kwargs: Any) -> Any:
        if high is None:
            low, high = 0, low
        return super().__call__(low, high, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        low, high = values
        if low is not None and high is not None:
            shape = np.broadcast_shapes(low.shape, high.shape)
            refuse_values(self, "high", high, np.broadcast_to(high, shape) <= np.broadcast_to(low, shape), "> low")


poisson = PoissonRV()
geometric = GeometricRV()
hypergeometric = HyperGeometricRV()
bernoulli = BernoulliRV()
binomial = BinomialRV()
nbinom = negative_binomial = NegBinomialRV()
integers = IntegersRV()

__all__ = [
    "BernoulliRV", "BinomialRV", "GeometricRV", "HyperGeometricRV", "IntegersRV", "NegBinomialRV", "PoissonRV",
    "bernoulli", "binomial", "geometric", "hypergeometric", "integers", "nbinom", "negative_binomial", "poisson",
]
