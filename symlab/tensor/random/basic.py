"""The distributions: PyTensor's names, signatures and parameter order, drawing NumPy ``Generator`` numbers.

Each is an op instance (or, where PyTensor has one, a function) called with the distribution's parameters and
``size``, ``rng``, ``dtype``; the draw has the numbers NumPy's ``Generator`` gives for the same state:

>>> import numpy as np
>>> import symlab
>>> from symlab.tensor.random.basic import normal, uniform, poisson
>>> rng = symlab.shared(np.random.default_rng(42), name="rng")
>>> next_rng, u = uniform(0.0, 1.0, size=(2, 2), rng=rng, return_next_rng=True)
>>> bool(np.all(u.eval() == np.random.default_rng(42).uniform(0.0, 1.0, (2, 2))))
True
>>> poisson([1.0, 10.0], rng=rng).type
TensorType(int64, (2,))
>>> normal(0.0, -1.0, rng=rng)
Traceback (most recent call last):
...
ValueError: normal: scale must be >= 0, received -1.0

An op's ``name`` is the NumPy ``Generator`` method it calls when there is one. Where PyTensor's distribution is
not a NumPy method (``bernoulli``, ``halfnormal``, ``cauchy``, ``t``...), ``rng_fn`` says which NumPy draws it makes.
Parameters are checked when they are constants (when the graph is built) and again when the graph runs.
``normal`` and ``uniform`` are differentiable through their parameters (a reparametrized draw); the others are not.
The discrete scalar distributions are in :mod:`~symlab.tensor.random.discrete`, the multivariate ones,
``categorical``, ``choice`` without replacement and ``permutation`` in :mod:`~symlab.tensor.random.multivariate`;
all are exported from here, and ``__all__`` lists every distribution.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from symlab.graph.basic import Variable
from symlab.graph.null_type import disconnected
from symlab.tensor.conversion import as_tensor_variable
from symlab.tensor.random.discrete import (
    BernoulliRV,
    BinomialRV,
    GeometricRV,
    HyperGeometricRV,
    IntegersRV,
    NegBinomialRV,
    PoissonRV,
    bernoulli,
    binomial,
    geometric,
    hypergeometric,
    integers,
    nbinom,
    negative_binomial,
    poisson,
)
from symlab.tensor.random.multivariate import (
    CategoricalRV,
    ChoiceWithoutReplacement,
    DirichletRV,
    MultinomialRV,
    MvNormalRV,
    PermutationRV,
    categorical,
    dirichlet,
    multinomial,
    multivariate_normal,
    permutation,
)
from symlab.tensor.random.op import RandomVariable, normalize_size_param
from symlab.tensor.random.parameters import at_least, not_above, refuse_values
from symlab.tensor.reduction import sum as tensor_sum
from symlab.tensor.shape_of import specify_shape


def _broadcast_size(size: tuple[int, ...] | None, *params: np.ndarray) -> tuple[int, ...]:
    """``size``, or the parameters' broadcast shape when it is None (what a scale-family draw needs)."""
    return size if size is not None else np.broadcast_shapes(*(np.shape(p) for p in params))


def _reduce_to(g: Variable, p: Variable) -> Variable:
    """Sum the gradient ``g`` of a draw over the axes along which parameter ``p`` was broadcast."""
    axes = tuple(d for d in range(p.type.ndim) if p.type.shape[d] == 1 and g.type.shape[d] != 1)
    return tensor_sum(g, axis=axes, keepdims=True) if axes else g


def _reparametrized_grads(grads: Sequence[Variable]) -> list[Variable]:
    """The generator (state) and ``size`` (an integer) are disconnected; then the parameters' ``grads``."""
    return [disconnected(), disconnected(), *grads]


# -- continuous, scalar -------------------------------------------------------------------------------------------
class UniformRV(RandomVariable):
    """``uniform(low=0.0, high=1.0, size=None)``: uniform on ``[low, high)`` (NumPy's ``Generator.uniform``).

    Differentiable: ``draw = low + (high - low) u``, so ``d draw/d low = (high - draw)/(high - low)`` and
    ``d draw/d high = (draw - low)/(high - low)``.
    """

    name = "uniform"
    signature = "(),()->()"
    dtype = "floatX"
    param_names = ("low", "high")

    def __call__(self, low: Any = 0.0, high: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(low, high, size=size, **kwargs)

    def L_op(self, inputs: Sequence[Variable], outputs: Sequence[Variable],  # noqa: N802 - PyTensor's name
             output_grads: Sequence[Variable]) -> list[Variable]:
        _, _, low, high = inputs
        draw, g = outputs[1], output_grads[1]
        width = high - low
        return _reparametrized_grads([
            _reduce_to(g * (high - draw) / width, low),
            _reduce_to(g * (draw - low) / width, high),
        ])


class TriangularRV(RandomVariable):
    """``triangular(left, mode, right, size=None)`` (NumPy's ``Generator.triangular``)."""

    name = "triangular"
    signature = "(),(),()->()"
    dtype = "floatX"
    param_names = ("left", "mode", "right")

    def __call__(self, left: Any, mode: Any, right: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(left, mode, right, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        not_above(self, values, 0, 1)
        not_above(self, values, 1, 2)
        left, _, right = values
        if left is not None and right is not None and left.size and right.size:
            shape = np.broadcast_shapes(left.shape, right.shape)
            refuse_values(self, "right", right, np.broadcast_to(right, shape) <= np.broadcast_to(left, shape), "> left")


class BetaRV(RandomVariable):
    """``beta(alpha, beta, size=None)`` (NumPy's ``Generator.beta``)."""

    name = "beta"
    signature = "(),()->()"
    dtype = "floatX"
    param_names = ("alpha", "beta")

    def __call__(self, alpha: Any, beta: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(alpha, beta, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        at_least(self, values, 0, 0.0, strict=True)
        at_least(self, values, 1, 0.0, strict=True)


class NormalRV(RandomVariable):
    """``normal(loc=0.0, scale=1.0, size=None)``: Gaussian draws (NumPy's ``Generator.normal``).

    Differentiable: ``draw = loc + scale z``, so ``d draw/d loc = 1`` and ``d draw/d scale = (draw - loc)/scale``.
    """

    name = "normal"
    signature = "(),()->()"
    dtype = "floatX"
    param_names = ("loc", "scale")

    def __call__(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(loc, scale, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        at_least(self, values, 1, 0.0)

    def L_op(self, inputs: Sequence[Variable], outputs: Sequence[Variable],  # noqa: N802 - PyTensor's name
             output_grads: Sequence[Variable]) -> list[Variable]:
        _, _, loc, scale = inputs
        draw, g = outputs[1], output_grads[1]
        return _reparametrized_grads([_reduce_to(g, loc), _reduce_to(g * (draw - loc) / scale, scale)])


def standard_normal(*, size: Any = None, rng: Any = None, dtype: Any = None, return_next_rng: bool = False) -> Any:
    """``normal(0.0, 1.0)``, as PyTensor defines it (the same numbers as ``Generator.standard_normal``)."""
    return normal(0.0, 1.0, size=size, rng=rng, dtype=dtype, return_next_rng=return_next_rng)


class HalfNormalRV(RandomVariable):
    """``halfnormal(loc=0.0, scale=1.0, size=None)``: ``loc + scale |z|``, ``z`` from ``Generator.standard_normal``."""

    name = "halfnormal"
    signature = "(),()->()"
    dtype = "floatX"
    param_names = ("loc", "scale")

    def __call__(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(loc, scale, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        at_least(self, values, 1, 0.0)

    def rng_fn(self, rng: np.random.Generator, loc: Any, scale: Any, size: Any) -> np.ndarray:
        return loc + scale * np.abs(rng.standard_normal(size=_broadcast_size(size, loc, scale)))


class LogNormalRV(RandomVariable):
    """``lognormal(mean=0.0, sigma=1.0, size=None)`` (NumPy's ``Generator.lognormal``)."""

    name = "lognormal"
    signature = "(),()->()"
    dtype = "floatX"
    param_names = ("mean", "sigma")

    def __call__(self, mean: Any = 0.0, sigma: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(mean, sigma, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        at_least(self, values, 1, 0.0)


class GammaRV(RandomVariable):
    """The op of ``gamma``: ``(shape, scale)``, NumPy's ``Generator.gamma``. Call :func:`gamma` (PyTensor's)."""

    name = "gamma"
    signature = "(),()->()"
    dtype = "floatX"
    param_names = ("shape", "scale")

    def __call__(self, shape: Any, scale: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(shape, scale, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        at_least(self, values, 0, 0.0)
        at_least(self, values, 1, 0.0)


_gamma = GammaRV()


def gamma(shape: Any, rate: Any = None, scale: Any = None, **kwargs: Any) -> Any:
    """``gamma(shape, rate=None, scale=None)``: PyTensor's function; give ``scale`` (``rate`` is deprecated).

    The op draws ``Generator.gamma(shape, scale)``; ``rate`` (PyTensor's deprecated spelling) is ``1 / scale``
    and warns, as PyTensor's does.

    >>> import numpy as np
    >>> import symlab
    >>> x = gamma(2.0, scale=3.0, size=2, rng=symlab.shared(np.random.default_rng(0)))
    >>> bool(np.all(x.eval() == np.random.default_rng(0).gamma(2.0, 3.0, 2)))
    True
    """
    if rate is not None and scale is not None:
        raise ValueError("gamma: give rate or scale, not both")
    if rate is None and scale is None:
        raise ValueError("gamma: give scale= (the mean is shape * scale)")
    if rate is not None:
        warnings.warn("gamma: the rate argument is deprecated (as in PyTensor); use scale=1/rate", FutureWarning,
                      stacklevel=2)
        scale = 1.0 / rate
    return _gamma(shape, scale, **kwargs)


class InvGammaRV(RandomVariable):
    """``invgamma(shape, scale, size=None)``: PyTensor's inverse gamma, ``1 / Generator.gamma(shape, 1 / scale)``."""

    name = "invgamma"
    signature = "(),()->()"
    dtype = "floatX"
    param_names = ("shape", "scale")

    def __call__(self, shape: Any, scale: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(shape, scale, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        at_least(self, values, 0, 0.0, strict=True)
        at_least(self, values, 1, 0.0, strict=True)

    def rng_fn(self, rng: np.random.Generator, shape: Any, scale: Any, size: Any) -> np.ndarray:
        return 1.0 / rng.gamma(shape, 1.0 / scale, size)


class StandardGammaRV(RandomVariable):
    """``standard_gamma(shape, size=None)``: a gamma of scale 1 (NumPy's ``Generator.standard_gamma``)."""

    name = "standard_gamma"
    signature = "()->()"
    dtype = "floatX"
    param_names = ("shape",)

    def __call__(self, shape: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(shape, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        at_least(self, values, 0, 0.0)


def chisquare(df: Any, size: Any = None, rng: Any = None, return_next_rng: bool = False) -> Any:
    """``chisquare(df)``: PyTensor's ``gamma(df / 2, scale=2)`` (the numbers of ``Generator.chisquare``)."""
    return gamma(shape=df / 2.0, scale=2.0, size=size, rng=rng, return_next_rng=return_next_rng)


class ParetoRV(RandomVariable):
    """``pareto(b, scale=1.0, size=None)``: PyTensor's (SciPy's) Pareto, ``scale * (1 + Generator.pareto(b))``.

    One ``Generator.pareto`` draw per element of the draw (of ``size``, or of ``b`` and ``scale`` broadcast).

    NumPy's ``pareto`` is the Lomax distribution (a Pareto shifted to start at 0); PyTensor's starts at ``scale``.
    """

    name = "pareto"
    signature = "(),()->()"
    dtype = "floatX"
    param_names = ("b", "scale")

    def __call__(self, b: Any, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(b, scale, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        at_least(self, values, 0, 0.0, strict=True)
        at_least(self, values, 1, 0.0, strict=True)

    def rng_fn(self, rng: np.random.Generator, b: Any, scale: Any, size: Any) -> np.ndarray:
        return scale * (1.0 + rng.pareto(b, size=_broadcast_size(size, b, scale)))


class GumbelRV(RandomVariable):
    """``gumbel(loc, scale=1.0, size=None)`` (NumPy's ``Generator.gumbel``)."""

    name = "gumbel"
    signature = "(),()->()"
    dtype = "floatX"
    param_names = ("loc", "scale")

    def __call__(self, loc: Any, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(loc, scale, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        at_least(self, values, 1, 0.0)


class ExponentialRV(RandomVariable):
    """``exponential(scale=1.0, size=None)`` (NumPy's ``Generator.exponential``)."""

    name = "exponential"
    signature = "()->()"
    dtype = "floatX"
    param_names = ("scale",)

    def __call__(self, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(scale, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        at_least(self, values, 0, 0.0)


class WeibullRV(RandomVariable):
    """``weibull(shape, size=None)`` (NumPy's ``Generator.weibull``, of scale 1)."""

    name = "weibull"
    signature = "()->()"
    dtype = "floatX"
    param_names = ("shape",)

    def __call__(self, shape: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(shape, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        at_least(self, values, 0, 0.0)


class LogisticRV(RandomVariable):
    """``logistic(loc=0, scale=1, size=None)`` (NumPy's ``Generator.logistic``)."""

    name = "logistic"
    signature = "(),()->()"
    dtype = "floatX"
    param_names = ("loc", "scale")

    def __call__(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(loc, scale, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        at_least(self, values, 1, 0.0)


class VonMisesRV(RandomVariable):
    """``vonmises(mu, kappa, size=None)`` (NumPy's ``Generator.vonmises``)."""

    name = "vonmises"
    signature = "(),()->()"
    dtype = "floatX"
    param_names = ("mu", "kappa")

    def __call__(self, mu: Any, kappa: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(mu, kappa, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        at_least(self, values, 1, 0.0)


class CauchyRV(RandomVariable):
    """``cauchy(loc=0.0, scale=1.0, size=None)``: ``loc + scale * Generator.standard_cauchy()``."""

    name = "cauchy"
    signature = "(),()->()"
    dtype = "floatX"
    param_names = ("loc", "scale")

    def __call__(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(loc, scale, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        at_least(self, values, 1, 0.0)

    def rng_fn(self, rng: np.random.Generator, loc: Any, scale: Any, size: Any) -> np.ndarray:
        return loc + scale * rng.standard_cauchy(size=_broadcast_size(size, loc, scale))


class HalfCauchyRV(RandomVariable):
    """``halfcauchy(loc=0.0, scale=1.0, size=None)``: ``loc + scale * |Generator.standard_cauchy()|``."""

    name = "halfcauchy"
    signature = "(),()->()"
    dtype = "floatX"
    param_names = ("loc", "scale")

    def __call__(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(loc, scale, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        at_least(self, values, 1, 0.0)

    def rng_fn(self, rng: np.random.Generator, loc: Any, scale: Any, size: Any) -> np.ndarray:
        return loc + scale * np.abs(rng.standard_cauchy(size=_broadcast_size(size, loc, scale)))


class WaldRV(RandomVariable):
    """``wald(mean=1.0, scale=1.0, size=None)`` (NumPy's ``Generator.wald``, the inverse Gaussian)."""

    name = "wald"
    signature = "(),()->()"
    dtype = "floatX"
    param_names = ("mean", "scale")

    def __call__(self, mean: Any = 1.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(mean, scale, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        at_least(self, values, 0, 0.0, strict=True)
        at_least(self, values, 1, 0.0, strict=True)


class StudentTRV(RandomVariable):
    """``t(df, loc=0.0, scale=1.0, size=None)``: ``loc + scale * Generator.standard_t(df)``."""

    name = "t"
    signature = "(),(),()->()"
    dtype = "floatX"
    param_names = ("df", "loc", "scale")

    def __call__(self, df: Any, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(df, loc, scale, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        at_least(self, values, 0, 0.0, strict=True)
        at_least(self, values, 2, 0.0)

    def rng_fn(self, rng: np.random.Generator, df: Any, loc: Any, scale: Any, size: Any) -> np.ndarray:
        return loc + scale * rng.standard_t(df, size=_broadcast_size(size, df, loc, scale))


class LaplaceRV(RandomVariable):
    """``laplace(loc=0.0, scale=1.0, size=None)`` (NumPy's ``Generator.laplace``)."""

    name = "laplace"
    signature = "(),()->()"
    dtype = "floatX"
    param_names = ("loc", "scale")

    def __call__(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(loc, scale, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        at_least(self, values, 1, 0.0)


def choice(a: Any, size: Any = None, replace: bool = True, p: Any = None, rng: Any = None,
           return_next_rng: bool = False) -> Any:
    """``choice(a, size=None, replace=True, p=None)``: entries of ``a`` (or of ``arange(a)``), as PyTensor's.

    With replacement (or a single draw) it is an index drawn by ``integers(0, len(a))`` (``categorical(p)`` with
    ``p``) used to index ``a``; without, a :class:`ChoiceWithoutReplacement` draw. The numbers are NumPy's
    ``Generator.choice``'s.

    >>> import numpy as np
    >>> import symlab
    >>> x = choice(10, size=4, replace=False, rng=symlab.shared(np.random.default_rng(3)))
    >>> bool(np.all(x.eval() == np.random.default_rng(3).choice(10, 4, replace=False)))
    True
    """
    a = as_tensor_variable(a)
    a_size = a if a.type.ndim == 0 else a.shape[0]
    if p is not None:
        p = specify_shape(as_tensor_variable(p), (a_size,)) if a.type.ndim > 0 else as_tensor_variable(p)
    if replace or size is None:
        if p is None:
            next_rng, idxs = integers(0, a_size, size=size, rng=rng, return_next_rng=True)
        else:
            next_rng, idxs = categorical(p, size=size, rng=rng, return_next_rng=True)
        out = idxs if a.type.ndim == 0 else a[idxs]
        return (next_rng, out) if return_next_rng else out
    core_shape = normalize_size_param(size, "choice")
    length = core_shape.type.shape[0]
    a_dims = [f"a{i}" for i in range(a.type.ndim)]
    idx_dims = [f"s{i}" for i in range(length)]
    out_dims = idx_dims if a.type.ndim == 0 else idx_dims + a_dims[1:]
    p_sig = "" if p is None else f"({'a' if a.type.ndim == 0 else a_dims[0]}),"
    signature = f"({','.join(a_dims)}),{p_sig}({length})->({','.join(out_dims)})"
    op = ChoiceWithoutReplacement(signature=signature, dtype=a.type.dtype)
    params = (a, core_shape) if p is None else (a, p, core_shape)
    return op(*params, size=None, rng=rng, return_next_rng=return_next_rng)


uniform = UniformRV()
triangular = TriangularRV()
beta = BetaRV()
normal = NormalRV()
halfnormal = HalfNormalRV()
lognormal = LogNormalRV()
standard_gamma = StandardGammaRV()
invgamma = InvGammaRV()
pareto = ParetoRV()
gumbel = GumbelRV()
exponential = ExponentialRV()
weibull = WeibullRV()
logistic = LogisticRV()
vonmises = VonMisesRV()
cauchy = CauchyRV()
halfcauchy = HalfCauchyRV()
wald = WaldRV()
t = StudentTRV()
laplace = LaplaceRV()

__all__ = [
    "BernoulliRV", "BetaRV", "BinomialRV", "CategoricalRV", "CauchyRV", "ChoiceWithoutReplacement", "DirichletRV",
    "ExponentialRV", "GammaRV", "GeometricRV", "GumbelRV", "HalfCauchyRV", "HalfNormalRV", "HyperGeometricRV",
    "IntegersRV", "InvGammaRV", "LaplaceRV", "LogNormalRV", "LogisticRV", "MultinomialRV", "MvNormalRV",
    "NegBinomialRV", "NormalRV", "ParetoRV", "PermutationRV", "PoissonRV", "StandardGammaRV", "StudentTRV",
    "TriangularRV", "UniformRV", "VonMisesRV", "WaldRV", "WeibullRV", "_gamma",
    "bernoulli", "beta", "binomial", "categorical", "cauchy", "chisquare", "choice", "dirichlet", "exponential",
    "gamma", "geometric", "gumbel", "halfcauchy", "halfnormal", "hypergeometric", "integers", "invgamma", "laplace",
    "logistic", "lognormal", "multinomial", "multivariate_normal", "nbinom", "negative_binomial", "normal",
    "pareto", "permutation", "poisson", "standard_gamma", "standard_normal", "t", "triangular", "uniform",
    "vonmises", "wald", "weibull",
]
