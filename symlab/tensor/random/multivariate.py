"""Distributions whose draw or parameters have core dimensions: ``multivariate_normal``, ``dirichlet``,
``multinomial``, ``categorical``, ``choice`` without replacement and ``permutation`` (PyTensor's signatures).

NumPy's methods draw one distribution with a batch given by ``size``; when the parameters themselves carry batch
dimensions, ``rng_fn`` draws each batch entry in turn, in C order, as a NumPy loop would (same numbers):

>>> import numpy as np
>>> import symlab
>>> from symlab.tensor.random.multivariate import dirichlet
>>> alphas = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]])
>>> x = dirichlet(alphas, rng=symlab.shared(np.random.default_rng(7)))
>>> g = np.random.default_rng(7)
>>> x.type, bool(np.all(x.eval() == [g.dirichlet(alphas[0]), g.dirichlet(alphas[1])]))
(TensorType(float64, (2, 3)), True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Constant, Variable
from symlab.tensor.basic import cast
from symlab.tensor.conversion import as_tensor_variable
from symlab.tensor.joining import static_entries, vector_entry
from symlab.tensor.random.op import RandomVariable
from symlab.tensor.random.parameters import at_least, probability_vectors


def draw_per_batch(params: Sequence[np.ndarray], ndims_params: Sequence[int], size: tuple[int, ...] | None,
                   core_shape: tuple[int, ...], dtype: Any, draw_one: Callable[..., Any],
                   draw_unbatched: Callable[..., Any] | None = None) -> np.ndarray:
    """A draw of a distribution with core dimensions, batch entry by batch entry in C order.

    Parameters without batch entries (only 1s) are drawn at once by ``draw_unbatched(*core_params, size)`` (NumPy's
    own ``size``) when given; otherwise ``draw_one(*core_params)`` for each entry of the broadcast batch.
    """
    batches = [np.shape(p)[: np.ndim(p) - c] for p, c in zip(params, ndims_params, strict=True)]
    cores = [np.shape(p)[np.ndim(p) - c:] for p, c in zip(params, ndims_params, strict=True)]
    batch = size if size is not None else np.broadcast_shapes(*batches)
    if draw_unbatched is not None and all(all(s == 1 for s in b) for b in batches):
        core_params = [np.reshape(p, c) for p, c in zip(params, cores, strict=True)]
        return np.reshape(draw_unbatched(*core_params, size), (*batch, *core_shape))
    expanded = [np.broadcast_to(p, (*batch, *c)) for p, c in zip(params, cores, strict=True)]
    out = np.empty((*batch, *core_shape), dtype=dtype)
    for index in np.ndindex(*batch):
        out[index] = draw_one(*(p[index] for p in expanded))
    return out


class MvNormalRV(RandomVariable):
    """``multivariate_normal(mean, cov, size=None, method="cholesky")`` (NumPy's ``Generator.multivariate_normal``).

    ``method`` (``"cholesky"``, as PyTensor's default, ``"svd"`` or ``"eigh"``) is NumPy's way of factoring ``cov``.
    """

    name = "multivariate_normal"
    signature = "(n),(n,n)->(n)"
    dtype = "floatX"
    param_names = ("mean", "cov")
    __props__ = ("name", "signature", "dtype", "inplace", "method")

    def __init__(self, name: str | None = None, signature: str | None = None, dtype: str | None = None,
                 inplace: bool | None = None, method: str = "cholesky") -> None:
        super().__init__(name, signature, dtype, inplace)
        if method not in ("cholesky", "svd", "eigh"):
            raise ValueError(f"multivariate_normal: method must be 'cholesky', 'svd' or 'eigh', received {method!r}")
        self.method = method

    def __call__(self, mean: Any, cov: Any, size: Any = None, method: str | None = None, **kwargs: Any) -> Any:
        if method is not None and method != self.method:
            return self.clone_with(method=method)(mean, cov, size=size, **kwargs)
        return super().__call__(mean, cov, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        cov = values[1]
        if cov is not None and cov.ndim >= 2 and cov.shape[-1] != cov.shape[-2]:
            raise ValueError(f"multivariate_normal: cov must be square, received shape {cov.shape}")
        if cov is not None and cov.size and not np.allclose(cov, np.swapaxes(cov, -1, -2)):
            raise ValueError("multivariate_normal: cov must be symmetric, received a matrix that is not")

    def check_core_shapes(self, shapes: Sequence[tuple[int | None, ...]]) -> None:
        cov = shapes[1]
        if len(cov) >= 2 and None not in cov[-2:] and cov[-1] != cov[-2]:
            raise ValueError(f"multivariate_normal: cov must be a square matrix (n, n), received shape {tuple(cov)}")
        super().check_core_shapes(shapes)

    def rng_fn(self, rng: np.random.Generator, mean: np.ndarray, cov: np.ndarray, size: Any) -> np.ndarray:
        return draw_per_batch(
            [mean, cov], self.ndims_params, size, mean.shape[-1:], np.float64,
            lambda m, c: rng.multivariate_normal(m, c, method=self.method),
            lambda m, c, s: rng.multivariate_normal(m, c, size=s, method=self.method),
        )


class DirichletRV(RandomVariable):
    """``dirichlet(alphas, size=None)`` (NumPy's ``Generator.dirichlet``)."""

    name = "dirichlet"
    signature = "(a)->(a)"
    dtype = "floatX"
    param_names = ("alphas",)

    def __call__(self, alphas: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(alphas, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        at_least(self, values, 0, 0.0, strict=True)

    def rng_fn(self, rng: np.random.Generator, alphas: np.ndarray, size: Any) -> np.ndarray:
        return draw_per_batch([alphas], self.ndims_params, size, alphas.shape[-1:], np.float64,
                              lambda a: rng.dirichlet(a), lambda a, s: rng.dirichlet(a, size=s))


class MultinomialRV(RandomVariable):
    """``multinomial(n, p, size=None)``: counts of ``n`` draws among ``len(p)`` outcomes (``Generator.multinomial``)."""

    name = "multinomial"
    signature = "(),(p)->(p)"
    dtype = "int64"
    param_names = ("n", "p")

    def __call__(self, n: Any, p: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(n, p, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        at_least(self, values, 0, 0.0)
        probability_vectors(self, values, 1)

    def rng_fn(self, rng: np.random.Generator, n: np.ndarray, p: np.ndarray, size: Any) -> np.ndarray:
        return draw_per_batch([n, p], self.ndims_params, size, p.shape[-1:], np.int64,
                              lambda k, q: rng.multinomial(k, q), lambda k, q, s: rng.multinomial(k, q, size=s))


class CategoricalRV(RandomVariable):
    """``categorical(p, size=None)``: an index drawn with probabilities ``p`` (the last axis).

    The numbers are NumPy's ``Generator.choice(len(p), p=p, size=size)``: one ``Generator.random()`` per draw,
    located in the normalized cumulative sum of ``p``; batches of ``p`` draw in C order.
    """

    name = "categorical"
    signature = "(p)->()"
    dtype = "int64"
    param_names = ("p",)

    def __call__(self, p: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(p, size=size, **kwargs)

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        probability_vectors(self, values, 0)

    def rng_fn(self, rng: np.random.Generator, p: np.ndarray, size: Any) -> np.ndarray:
        batch = size if size is not None else p.shape[:-1]
        cdf = np.cumsum(p, axis=-1, dtype=np.float64)
        cdf /= cdf[..., -1:]
        u = rng.random(batch if batch else None)
        # searchsorted(cdf, u, side="right") for each batch entry: the number of cdf entries <= u.
        return np.sum(np.broadcast_to(cdf, (*batch, p.shape[-1])) <= np.asarray(u)[..., None], axis=-1)


class ChoiceWithoutReplacement(RandomVariable):
    """Draws of distinct entries of ``a`` (``choice(..., replace=False)``); the signature holds the draw's shape.

    Parameters ``(a, core_shape)`` or ``(a, p, core_shape)``: ``core_shape`` is the shape of one draw (the ``size``
    the user gave :func:`choice`), part of the draw's core since the entries of a draw are not independent.
    """

    name = "choice_without_replacement"
    dtype = None
    signature = "(a0),(1)->(s0)"

    @property
    def has_p_param(self) -> bool:
        return len(self.ndims_params) == 3

    @property
    def param_names(self) -> tuple[str, ...]:  # type: ignore[override]
        return ("a", "p", "core_shape") if self.has_p_param else ("a", "core_shape")

    def support_static_shape(self, params: Sequence[Variable]) -> tuple[int | None, ...]:
        a, core_shape = params[0], params[-1]
        a_core = a.type.shape[a.type.ndim - self.ndims_params[0]:]
        length = core_shape.type.shape[-1]
        if isinstance(core_shape, Constant):
            entries = tuple(int(e) for e in np.reshape(core_shape.data, (-1, length))[0])
        else:
            entries = static_entries(core_shape) if core_shape.type.ndim == 1 else (None,) * length
        return entries + tuple(a_core[1:])

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: Sequence[Sequence[Variable]]) -> list:
        a, core_shape = node.inputs[2], node.inputs[-1]
        batch = self.batch_shape_entries(node, input_shapes)
        a_core = list(input_shapes[2][a.type.ndim - self.ndims_params[0]:])
        if core_shape.type.ndim > 1:  # batched (expanded) core shapes are all the same: the first one
            core_shape = core_shape[(0,) * (core_shape.type.ndim - 1)]
        entries = [vector_entry(core_shape, i) for i in range(core_shape.type.shape[-1])]
        return [(), (*batch, *entries, *a_core[1:])]

    def rng_fn(self, rng: np.random.Generator, *args: Any) -> np.ndarray:
        *params, size = args
        a, core_shape = params[0], params[-1]
        shape = tuple(int(s) for s in np.reshape(core_shape, (-1, core_shape.shape[-1]))[0])
        a_core = a.shape[a.ndim - self.ndims_params[0]:]
        from_range = self.ndims_params[0] == 0

        def one(a_entry: np.ndarray, *rest: np.ndarray) -> np.ndarray:
            p_entry = rest[0] if self.has_p_param else None
            population = int(a_entry) if from_range else a_entry
            return rng.choice(population, size=shape or None, replace=False, p=p_entry)

        return draw_per_batch(params, self.ndims_params, size, shape + a_core[1:],
                              np.int64 if from_range else a.dtype, one)


class PermutationRV(RandomVariable):
    """A shuffle of ``x`` (or of ``arange(x)`` for an integer ``x``): NumPy's ``Generator.permutation``."""

    name = "permutation"
    signature = "(x0)->(x0)"
    param_names = ("x",)

    def support_static_shape(self, params: Sequence[Variable]) -> tuple[int | None, ...]:
        [x] = params
        if self.ndims_params[0] == 0:
            return (int(np.ravel(x.data)[0]),) if isinstance(x, Constant) else (None,)
        return tuple(x.type.shape[x.type.ndim - self.ndims_params[0]:])

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: Sequence[Sequence[Variable]]) -> list:
        x = node.inputs[2]
        batch = self.batch_shape_entries(node, input_shapes)
        if self.ndims_params[0] == 0:
            first = x if x.type.ndim == 0 else x.flatten()[0]
            return [(), (*batch, cast(first, "int64"))]
        return [(), (*batch, *input_shapes[2][x.type.ndim - self.ndims_params[0]:])]

    def rng_fn(self, rng: np.random.Generator, x: np.ndarray, size: Any) -> np.ndarray:
        core = self.ndims_params[0]
        if x.ndim == core:
            return rng.permutation(x.item() if core == 0 else x)
        draw_shape = (int(x.flat[0]),) if core == 0 else x.shape[x.ndim - core:]
        return draw_per_batch([x], self.ndims_params, size, draw_shape, np.int64 if core == 0 else x.dtype,
                              lambda entry: rng.permutation(entry.item() if core == 0 else entry))


def permutation(x: Any, size: Any = None, rng: Any = None, return_next_rng: bool = False) -> Any:
    """``permutation(x)``: ``x`` shuffled along its first axis, or ``arange(x)`` shuffled for an integer ``x``.

    >>> import numpy as np
    >>> import symlab
    >>> y = permutation(5, rng=symlab.shared(np.random.default_rng(1)))
    >>> y.type, bool(np.all(y.eval() == np.random.default_rng(1).permutation(5)))
    (TensorType(int64, (5,)), True)
    """
    x = as_tensor_variable(x)
    if x.type.ndim == 0:
        signature = "()->(x)"
    else:
        dims = ",".join(f"x{i}" for i in range(x.type.ndim))
        signature = f"({dims})->({dims})"
    return PermutationRV(signature=signature, dtype=x.type.dtype)(x, size=size, rng=rng,
                                                                    return_next_rng=return_next_rng)


multivariate_normal = MvNormalRV(method="cholesky")
dirichlet = DirichletRV()
multinomial = MultinomialRV()
categorical = CategoricalRV()

__all__ = [
    "CategoricalRV", "ChoiceWithoutReplacement", "DirichletRV", "MultinomialRV", "MvNormalRV", "PermutationRV",
    "categorical", "dirichlet", "draw_per_batch", "multinomial", "multivariate_normal", "permutation",
]
