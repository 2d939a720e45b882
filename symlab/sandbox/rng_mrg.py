"""``MRG_RandomStreams``: the stream class of Theano's ``theano.sandbox.rng_mrg``, on NumPy generators.

Theano's MRG streams ran L'Ecuyer's MRG31k3p generator (made for GPUs); symlab's draw from NumPy generators, so
the numbers differ from Theano's, the distributions do not. The signatures are Theano's: ``size`` first (a tuple,
or symbolic as ``x.shape``), ``dtype`` the dtype of the result, ``nstreams`` accepted and checked (Theano's
number of parallel MRG streams; one NumPy generator needs none). As Theano's, a ``binomial`` is a threshold of
uniform draws (``n=1`` only); a ``normal`` may be truncated to two standard deviations:

>>> import numpy as np
>>> import symlab
>>> import symlab.tensor as T
>>> from symlab.sandbox.rng_mrg import MRG_RandomStreams
>>> srng = MRG_RandomStreams(seed=1234)
>>> x = T.matrix("x")
>>> corrupted = srng.binomial(size=x.shape, n=1, p=0.7, dtype=symlab.config.floatX) * x   # dA.py's corruption
>>> f = symlab.function([x], corrupted, mode="NUMPY")
>>> ones = np.ones((200, 500))
>>> a, b = f(ones), f(ones)   # each call draws a new mask: the generator's default update advances it
>>> bool(np.any(a != b)), bool(abs(a.mean() - 0.7) < 0.01), sorted(np.unique(a).tolist())
(True, True, [0.0, 1.0])
>>> z = srng.normal((10000,), avg=1.0, std=2.0, truncate=True)
>>> bool(np.all(np.abs(z.eval() - 1.0) <= 4.0))
True
>>> srng.binomial((3,), n=2, p=0.5)
Traceback (most recent call last):
...
NotImplementedError: MRG_RandomStreams.binomial: n must be 1 (Theano's MRG binomial is a threshold of uniform draws), received 2; for n > 1 use symlab.tensor.shared_randomstreams.RandomStreams
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.special import ndtr, ndtri

from symlab.graph.basic import Apply, Constant, Variable
from symlab.tensor.basic import cast
from symlab.tensor.conversion import as_tensor_variable
from symlab.tensor.random.op import RandomVariable
from symlab.tensor.shared_randomstreams import (
    RandomStreams,
    distribution,
    finish,
    float_dtype,
    resolve_dtype,
    theano_size,
)

#: How far Theano's truncated normal reaches, in standard deviations.
TRUNCATION = 2.0


class TruncatedStandardNormalRV(RandomVariable):
    """``truncated_standard_normal(bound=2.0)``: a standard normal draw conditioned on ``|z| <= bound``.

    Drawn by the inverse CDF of a uniform draw restricted to ``[Phi(-bound), Phi(bound))``.
    """

    name = "truncated_standard_normal"
    signature = "()->()"
    dtype = "floatX"

    def __call__(self, bound: Any = TRUNCATION, **kwargs: Any) -> Any:
        return super().__call__(bound, **kwargs)

    def check_parameters(self, params: Sequence[Variable]) -> None:
        bound = params[0]
        if isinstance(bound, Constant) and np.any(np.asarray(bound.data) <= 0):
            raise ValueError(f"{self.name}: bound must be > 0, received {bound.data}")

    def rng_fn(self, rng: np.random.Generator, *args: Any) -> Any:
        bound, size = args
        edge = ndtr(-np.asarray(bound, dtype="float64"))
        return ndtri(rng.uniform(edge, 1.0 - edge, size=size))


truncated_standard_normal = TruncatedStandardNormalRV()


class ChoiceRowsRV(RandomVariable):
    """``draws`` indices of each row of probabilities ``p`` (shape ``(..., k)``), without replacement.

    Theano's ``MRG_RandomStreams.choice(size, p=..., replace=False)``: the draws of one row are distinct.
    """

    __props__ = ("name", "signature", "dtype", "inplace", "draws")
    name = "choice_rows"
    signature = "(k)->(s)"
    dtype = "int64"

    def __init__(self, draws: int = 1, name: str | None = None, signature: str | None = None,
                 dtype: str | None = None, inplace: bool | None = None) -> None:
        super().__init__(name, signature, dtype, inplace)
        self.draws = int(draws)

    def __str__(self) -> str:
        return f'{self.name}_rv{{"{self.signature}", draws={self.draws}}}'

    def make_node(self, rng: Any, size: Any, *params: Any) -> Apply:
        node = super().make_node(rng, size, *params)
        p = node.inputs[2]
        k = p.type.shape[-1]
        if k is not None and self.draws > k:
            raise ValueError(f"{self.name}: cannot draw {self.draws} distinct indices of rows of {k} probabilities")
        return node

    def support_static_shape(self, params: Sequence[Variable]) -> tuple[int | None, ...]:
        return (self.draws,)

    def rng_fn(self, rng: np.random.Generator, *args: Any) -> Any:
        p, size = args
        p = np.asarray(p, dtype="float64")
        if size is not None:
            p = np.broadcast_to(p, tuple(size) + p.shape[-1:])
        rows = p.reshape(-1, p.shape[-1])
        if self.draws > rows.shape[1]:
            raise ValueError(f"{self.name}: cannot draw {self.draws} distinct indices of rows of {rows.shape[1]} probabilities")
        out = np.empty((rows.shape[0], self.draws), dtype="int64")
        for i, row in enumerate(rows):
            out[i] = rng.choice(rows.shape[1], size=self.draws, replace=False, p=row)
        return out.reshape(p.shape[:-1] + (self.draws,))


def _check_nstreams(nstreams: Any, where: str) -> None:
    if nstreams is not None and (not isinstance(nstreams, int | np.integer) or isinstance(nstreams, bool) or nstreams <= 0):
        raise ValueError(f"{where}: nstreams must be None or an int > 0, received {nstreams!r:.60}")


def _check_seed(seed: Any) -> Any:
    if isinstance(seed, int | np.integer) and not isinstance(seed, bool):
        if seed < 0:
            raise ValueError(f"MRG_RandomStreams: seed must be an int >= 0 or 6 ints >= 0, received {seed}")
        return int(seed)
    if isinstance(seed, Sequence) and len(seed) == 6 and all(isinstance(s, int | np.integer) and s >= 0 for s in seed):
        return [int(s) for s in seed]
    raise TypeError(f"MRG_RandomStreams: seed must be an int >= 0 or 6 ints >= 0, received {seed!r:.60}")


class MRG_RandomStreams(RandomStreams):  # noqa: N801 - Theano's name
    """Theano's ``MRG_RandomStreams(seed=12345)``: ``uniform``, ``normal``, ``truncated_normal``, ``binomial``,
    ``multinomial`` and ``choice`` with Theano's MRG signatures, each draw advancing a generator of its own.

    ``seed``: an int >= 0, or 6 ints (Theano's MRG state), seeding NumPy's ``SeedSequence``. ``seed(s)``,
    ``updates()``, ``state_updates`` and ``gen`` are those of :class:`~symlab.tensor.shared_randomstreams.RandomStreams`,
    and so are ``random_integers``, ``poisson`` and ``permutation``, which Theano's MRG streams did not have.
    """

    def __init__(self, seed: int | Sequence[int] = 12345) -> None:
        super().__init__(_check_seed(seed))

    def seed(self, seed: int | Sequence[int] | None = None) -> None:
        """Reseed every generator of the stream (``None``: the stream's own seed)."""
        super().seed(None if seed is None else _check_seed(seed))

    def uniform(self, size: Any, low: Any = 0.0, high: Any = 1.0, ndim: int | None = None, dtype: Any = None,
                nstreams: int | None = None) -> Variable:
        """Draws uniform between ``low`` and ``high``, of shape ``size``."""
        _check_nstreams(nstreams, "MRG_RandomStreams.uniform")
        return super().uniform(size, low, high, ndim=ndim, dtype=dtype)

    def binomial(self, size: Any = None, n: Any = 1, p: Any = 0.5, ndim: int | None = None, dtype: Any = "int64",
                 nstreams: int | None = None) -> Variable:
        """0/1 draws of probability ``p`` (``n=1`` only): ``uniform(size) < p`` cast to ``dtype``, as Theano's.

        ``size=None`` draws one number per entry of ``p``; ``p`` broadcasts against ``size``.
        """
        where = "MRG_RandomStreams.binomial"
        _check_nstreams(nstreams, where)
        if not (isinstance(n, int | np.integer) and not isinstance(n, bool) and n == 1):
            raise NotImplementedError(
                f"{where}: n must be 1 (Theano's MRG binomial is a threshold of uniform draws), received {n!r:.60}; "
                "for n > 1 use symlab.tensor.shared_randomstreams.RandomStreams"
            )
        p = as_tensor_variable(p)
        if size is None:
            size = p.shape if p.type.ndim else ()
        u = super().uniform(size, ndim=ndim, dtype=float_dtype(None, (p,)))
        out = cast(u < p, resolve_dtype(dtype))
        out.rng, out.update = u.rng, u.update
        return out

    def normal(self, size: Any, avg: Any = 0.0, std: Any = 1.0, ndim: int | None = None, dtype: Any = None,
               nstreams: int | None = None, truncate: bool = False) -> Variable:
        """Gaussian draws of mean ``avg`` and deviation ``std``; ``truncate=True``: only within ``2 * std``."""
        where = "MRG_RandomStreams.normal"
        _check_nstreams(nstreams, where)
        if not truncate:
            return super().normal(size, avg, std, ndim=ndim, dtype=dtype)
        dtype = float_dtype(dtype, (avg, std))
        z = self.gen(truncated_standard_normal, TRUNCATION, size=theano_size(size, ndim, where), dtype=dtype)
        rng, update = z.rng, z.update
        z = finish(z, dtype, ndim, where)
        out = cast(as_tensor_variable(avg) + as_tensor_variable(std) * z, dtype)
        out.rng, out.update = rng, update
        return out

    def truncated_normal(self, size: Any, avg: Any = 0.0, std: Any = 1.0, ndim: int | None = None,
                         dtype: Any = None, nstreams: int | None = None) -> Variable:
        """``normal(..., truncate=True)``: Gaussian draws kept within two standard deviations of ``avg``."""
        return self.normal(size, avg, std, ndim=ndim, dtype=dtype, nstreams=nstreams, truncate=True)

    def multinomial(self, size: Any = None, n: Any = 1, pvals: Any = None, ndim: int | None = None,
                    dtype: Any = "int64", nstreams: int | None = None) -> Variable:
        """Counts of ``n`` draws for each row of ``pvals`` (a matrix ``(batch, k)``): a ``(batch, k)`` draw."""
        where = "MRG_RandomStreams.multinomial"
        _check_nstreams(nstreams, where)
        if pvals is None:
            raise TypeError(f"{where}: pvals (a matrix of probabilities, one row per draw) must be given")
        pvals = as_tensor_variable(pvals)
        if pvals.type.ndim != 2:
            raise NotImplementedError(f"{where}: pvals must be a matrix (batch, k), as Theano's; received {pvals.type}")
        if size is not None or ndim is not None:
            raise ValueError(f"{where}: the rows of pvals give the shape; size and ndim must be None, received "
                             f"size={size!r:.60}, ndim={ndim!r}")
        return super().multinomial(None, n, pvals, dtype=dtype)

    def choice(self, size: int = 1, a: Any = None, replace: bool = True, p: Any = None, ndim: int | None = None,
               dtype: Any = "int64", nstreams: int | None = None) -> Variable:
        """``size`` indices for each row of ``p`` (a matrix ``(batch, k)``): a ``(batch, size)`` draw.

        ``a`` must be None (the indices are those of a row); ``replace=False`` draws distinct indices.
        """
        where = "MRG_RandomStreams.choice"
        _check_nstreams(nstreams, where)
        if a is not None:
            raise NotImplementedError(f"{where}: a must be None (indices of the rows of p are drawn), received {a!r:.60}")
        if p is None:
            raise TypeError(f"{where}: p (a matrix of probabilities, one row per draw) must be given")
        if not isinstance(size, int | np.integer) or isinstance(size, bool) or size < 1:
            raise ValueError(f"{where}: size (the number of draws of each row) must be an int >= 1, received {size!r:.60}")
        p = as_tensor_variable(p)
        if p.type.ndim != 2:
            raise ValueError(f"{where}: p must be a matrix (batch, k), received {p.type}")
        if ndim is not None and ndim != 2:
            raise ValueError(f"{where}: the draw has 2 dimensions (batch, size), received ndim={ndim}")
        if replace:
            op = distribution("categorical", where)
            draw = self.gen(op, p, size=theano_size((int(size), p.shape[0]), None, where))
            rng, update = draw.rng, draw.update
            out = finish(draw.T, resolve_dtype(dtype), 2, where)
        else:
            draw = self.gen(ChoiceRowsRV(int(size)), p)
            rng, update = draw.rng, draw.update
            out = finish(draw, resolve_dtype(dtype), 2, where)
        out.rng, out.update = rng, update
        return out


__all__ = ["ChoiceRowsRV", "MRG_RandomStreams", "TruncatedStandardNormalRV", "truncated_standard_normal"]
