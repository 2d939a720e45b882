"""``RandomStreams``: Theano's stream of draws (``theano.tensor.shared_randomstreams``), on NumPy generators.

The classic Theano programs draw with ``size`` first and Theano's parameter names (``avg``/``std``, ``n``/``p``,
``low``/``high``); ``dtype`` is the dtype of the result (a ``binomial`` with ``dtype=floatX`` is an integer draw
cast to floats, as Theano's). Each draw gets its own shared generator whose ``default_update`` is the draw's next
generator, so a function using the draw advances it (unless ``no_default_updates=True``):

>>> import numpy as np
>>> import symlab
>>> import symlab.tensor as T
>>> from symlab.tensor.shared_randomstreams import RandomStreams
>>> srng = RandomStreams(seed=234)
>>> rv_u = srng.uniform((2, 2))
>>> rv_n = srng.normal((2, 2), avg=1.0, std=0.5)
>>> f = symlab.function([], rv_u, mode="NUMPY")
>>> g = symlab.function([], rv_n, no_default_updates=True, mode="NUMPY")
>>> bool(np.any(f() != f())), bool(np.all(g() == g()))
(True, True)
>>> x = T.matrix("x")
>>> mask = srng.binomial(size=x.shape, n=1, p=0.7, dtype=symlab.config.floatX)   # a denoising corruption
>>> mask.type, rv_u.rng is srng.state_updates[0][0]
(TensorType(float64, (?, ?)), True)

The generator of a draw is ``draw.rng`` (Theano's attribute) and ``draw.update`` is ``(generator, next
generator)``; ``srng[draw.rng]`` is the generator's current value.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from symlab.config import config
from symlab.graph.basic import Variable
from symlab.scalar.type import upcast
from symlab.tensor.basic import cast
from symlab.tensor.random import basic
from symlab.tensor.random.op import RandomVariable
from symlab.tensor.random.utils import RandomStream
from symlab.tensor.random.variable import RandomGeneratorSharedVariable
from symlab.tensor.shape_of import specify_shape


def distribution(name: str, where: str) -> Callable[..., Any]:
    """The op ``symlab.tensor.random.<name>`` (or the function building it: ``choice``, ``permutation``), or a named
    error when symlab has no such distribution."""
    op = getattr(basic, name, None) if name in basic.__all__ else None
    if not isinstance(op, RandomVariable) and not callable(op):
        raise NotImplementedError(f"{where}: symlab.tensor.random has no distribution {name!r}")
    return op


def resolve_dtype(dtype: Any) -> str:
    """A dtype name, with ``"floatX"`` read from the configuration."""
    name = np.dtype(dtype).name if not isinstance(dtype, str) else dtype
    return config.floatX if name == "floatX" else np.dtype(name).name


def float_dtype(dtype: Any, params: Sequence[Any]) -> str:
    """Theano's dtype of a float draw: ``dtype``, or ``floatX`` upcast with the dtypes of symbolic parameters."""
    if dtype is not None:
        return resolve_dtype(dtype)
    symbolic = [p.type.dtype for p in params if isinstance(p, Variable) and hasattr(p.type, "dtype")]
    return upcast(config.floatX, *symbolic) if symbolic else config.floatX


def theano_size(size: Any, ndim: int | None, where: str) -> Any:
    """``size`` as a draw takes it: a symbolic vector of unknown length gets the length ``ndim`` (Theano's use of
    ``ndim``); Python sizes are kept for the op to check."""
    if ndim is not None and (not isinstance(ndim, int | np.integer) or isinstance(ndim, bool) or ndim < 0):
        raise TypeError(f"{where}: ndim must be None or an int >= 0, received {ndim!r:.60}")
    if isinstance(size, Variable) and getattr(size.type, "ndim", None) == 1 and size.type.shape[0] is None:
        if ndim is None:
            raise ValueError(
                f"{where}: size {size} ({size.type}) has a length known only when the graph runs; give ndim= "
                "(the number of dimensions of the draw)"
            )
        return specify_shape(size, (int(ndim),))
    return size


def finish(draw: Variable, dtype: str, ndim: int | None, where: str) -> Variable:
    """The draw cast to ``dtype`` (after drawing, as Theano's), checked to have ``ndim`` dimensions."""
    if ndim is not None and draw.type.ndim != ndim:
        raise ValueError(
            f"{where}: ndim={ndim} but the draw has {draw.type.ndim} dimensions ({draw.type}); ndim must equal "
            "the length of size (or the parameters' number of dimensions when size is None)"
        )
    return cast(draw, dtype) if draw.type.dtype != dtype else draw


class RandomStreams(RandomStream):
    """Theano's ``RandomStreams(seed)``: draws with ``size`` first, each advancing a generator of its own.

    Methods (Theano's signatures): ``uniform(size=None, low=0.0, high=1.0, ndim=None, dtype=None)``,
    ``normal(size=None, avg=0.0, std=1.0, ndim=None, dtype=None)``, ``binomial(size=None, n=1, p=0.5, ndim=None,
    dtype='int64')``, ``random_integers(size=None, low=0, high=1, ndim=None, dtype='int64')`` (``high``
    included), ``poisson(size=None, lam=1.0, ...)``, ``choice(size=None, a=2, replace=True, p=None, ...)``,
    ``permutation(size=None, n=1, ...)`` (draws of shape ``size + (n,)``), ``multinomial(size=None, n=1,
    pvals=(0.5, 0.5), ...)`` (shape ``size + (len(pvals),)``); ``gen(op, *args, **kwargs)`` draws from any
    random variable op (PyTensor's call: ``op(*params, size=...)``); ``seed(s)``, ``updates()``,
    ``state_updates``. ``size`` may be symbolic (``x.shape``); ``ndim`` says its length when it is not known.
    Float draws default to ``floatX``, integer draws to ``int64``.
    """

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(
            f"{type(self).__name__} has no attribute {name!r}: Theano's streams draw uniform, normal, binomial, "
            "random_integers, poisson, choice, permutation and multinomial; other distributions: "
            "stream.gen(symlab.tensor.random.<distribution>, *params, size=...)"
        )

    def __getitem__(self, rng: RandomGeneratorSharedVariable) -> np.random.Generator:
        """The current value of one of the stream's generators (not a copy)."""
        return self._own(rng).get_value(borrow=True)

    def __setitem__(self, rng: RandomGeneratorSharedVariable, value: np.random.Generator) -> None:
        self._own(rng).set_value(value, borrow=True)

    def _own(self, rng: Any) -> RandomGeneratorSharedVariable:
        if not any(rng is r for r, _ in self.state_updates):
            raise KeyError(f"{type(self).__name__}: {rng!r:.60} is not a generator of this stream")
        return rng

    def gen(self, op: Any, *args: Any, **kwargs: Any) -> Variable:
        """A draw of ``op(*args, **kwargs)`` on a new generator of this stream; sets ``draw.rng``, ``draw.update``."""
        out = super().gen(op, *args, **kwargs)
        out.update = self.state_updates[-1]
        out.rng = out.update[0]
        return out

    def _draw(self, name: str, where: str, params: Sequence[Any], size: Any, ndim: int | None, result_dtype: str,
              **op_kwargs: Any) -> Variable:
        op = distribution(name, where)
        draw = self.gen(op, *params, size=theano_size(size, ndim, where), **op_kwargs)
        rng, update = draw.rng, draw.update
        out = finish(draw, result_dtype, ndim, where)
        out.rng, out.update = rng, update
        return out

    def uniform(self, size: Any = None, low: Any = 0.0, high: Any = 1.0, ndim: int | None = None,
                dtype: Any = None) -> Variable:
        """Draws uniform on ``[low, high)``."""
        dtype = float_dtype(dtype, (low, high))
        return self._draw("uniform", "RandomStreams.uniform", (low, high), size, ndim, dtype, dtype=dtype)

    def normal(self, size: Any = None, avg: Any = 0.0, std: Any = 1.0, ndim: int | None = None,
               dtype: Any = None) -> Variable:
        """Gaussian draws of mean ``avg`` and standard deviation ``std``."""
        dtype = float_dtype(dtype, (avg, std))
        return self._draw("normal", "RandomStreams.normal", (avg, std), size, ndim, dtype, dtype=dtype)

    def binomial(self, size: Any = None, n: Any = 1, p: Any = 0.5, ndim: int | None = None,
                 dtype: Any = "int64") -> Variable:
        """Counts of successes in ``n`` trials of probability ``p`` (0/1 draws for ``n=1``), cast to ``dtype``."""
        return self._draw("binomial", "RandomStreams.binomial", (n, p), size, ndim, resolve_dtype(dtype))

    def random_integers(self, size: Any = None, low: Any = 0, high: Any = 1, ndim: int | None = None,
                        dtype: Any = "int64") -> Variable:
        """Integers uniform on ``[low, high]`` (``high`` included, as Theano's)."""
        high = high + 1 if isinstance(high, Variable) else np.asarray(high) + 1
        return self._draw("integers", "RandomStreams.random_integers", (low, high), size, ndim, resolve_dtype(dtype))

    def poisson(self, size: Any = None, lam: Any = 1.0, ndim: int | None = None, dtype: Any = "int64") -> Variable:
        """Poisson counts of mean ``lam``."""
        return self._draw("poisson", "RandomStreams.poisson", (lam,), size, ndim, resolve_dtype(dtype))

    def choice(self, size: Any = None, a: Any = 2, replace: bool = True, p: Any = None, ndim: int | None = None,
               dtype: Any = "int64") -> Variable:
        """Draws from ``a`` (an array, or ``range(a)`` for an int), with or without replacement, weighted by ``p``."""
        op = distribution("choice", "RandomStreams.choice")
        draw = self.gen(op, a, size=theano_size(size, ndim, "RandomStreams.choice"), replace=replace, p=p)
        rng, update = draw.rng, draw.update
        dtype = resolve_dtype(dtype) if draw.type.dtype[:3] in ("int", "uin") else draw.type.dtype
        out = finish(draw, dtype, ndim, "RandomStreams.choice")
        out.rng, out.update = rng, update
        return out

    def permutation(self, size: Any = None, n: Any = 1, ndim: int | None = None, dtype: Any = "int64") -> Variable:
        """Permutations of ``range(n)``, one for each entry of ``size``: draws of shape ``size + (n,)``."""
        where = "RandomStreams.permutation"
        op = distribution("permutation", where)
        draw = self.gen(op, n, size=theano_size(size, ndim, where))
        rng, update = draw.rng, draw.update
        out = finish(draw, resolve_dtype(dtype), None if ndim is None else ndim + 1, where)
        out.rng, out.update = rng, update
        return out

    def multinomial(self, size: Any = None, n: Any = 1, pvals: Any = (0.5, 0.5), ndim: int | None = None,
                    dtype: Any = "int64") -> Variable:
        """Counts of ``n`` draws among ``len(pvals)`` outcomes of probabilities ``pvals``: shape ``size + (k,)``."""
        where = "RandomStreams.multinomial"
        draw = self._draw("multinomial", where, (n, pvals), size, None, resolve_dtype(dtype))
        if ndim is not None and draw.type.ndim != ndim + 1:
            raise ValueError(f"{where}: ndim={ndim} but the draw's batch has {draw.type.ndim - 1} dimensions")
        return draw


__all__ = ["RandomStreams"]
