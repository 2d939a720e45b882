"""Every distribution of symlab.tensor.random against NumPy's Generator: the same bits, dtype, static shape,
inferred shape and generator state after the draw; and the moments of 10^5 draws against the exact ones."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from oracle import check_infer_shape, same_bits
from scipy import special

import symlab
from symlab.graph.traversal import ancestors
from symlab.tensor.random import basic as rb
from symlab.tensor.random.op import RandomVariable
from symlab.tensor.random.type import random_generator_type


def numpy_loop(method: Callable[..., Any], batch: tuple[int, ...], params: list[np.ndarray], core: list[int]) -> np.ndarray:
    """What a NumPy loop over the batch (C order) draws: ``method(*params[index])`` for each batch index."""
    if not batch:
        return np.asarray(method(*params))
    expanded = [np.broadcast_to(p, batch + np.shape(p)[np.ndim(p) - c:]) for p, c in zip(params, core)]
    draws = [np.asarray(method(*(p[i] for p in expanded))) for i in np.ndindex(*batch)]
    return np.stack(draws).reshape(batch + draws[0].shape)


def scaled(base: str, absolute: bool = False) -> Callable[..., np.ndarray]:
    """NumPy's numbers of a ``loc + scale * standard draw`` family (what PyTensor's SciPy-based ones draw)."""
    def draw(g: np.random.Generator, *params: Any, size: Any) -> np.ndarray:
        *shape_params, loc, scale = params
        shape = size if size is not None else np.broadcast_shapes(*(np.shape(p) for p in params))
        z = getattr(g, base)(*shape_params, size=shape)
        return loc + scale * (np.abs(z) if absolute else z)
    return draw


def method(name: str, **fixed: Any) -> Callable[..., np.ndarray]:
    return lambda g, *params, size: getattr(g, name)(*params, size=size, **fixed)


P3 = np.array([0.2, 0.3, 0.5])
P3B = np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
COV = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.3], [0.0, 0.3, 1.5]])


def categorical_ref(g: np.random.Generator, p: np.ndarray, size: Any) -> np.ndarray:
    if p.ndim == 1:
        return g.choice(len(p), p=p, size=size)
    batch = size if size is not None else p.shape[:-1]
    return numpy_loop(lambda q: g.choice(len(q), p=q), batch, [p], [1])


def batched(name: str, core: list[int], **fixed: Any) -> Callable[..., np.ndarray]:
    """NumPy's numbers of a distribution with core dimensions: one call with ``size``, or a loop over batches."""
    def draw(g: np.random.Generator, *params: Any, size: Any) -> np.ndarray:
        params = [np.asarray(p) for p in params]
        batches = [p.shape[: p.ndim - c] for p, c in zip(params, core)]
        if all(b == () for b in batches):
            return getattr(g, name)(*params, size=size, **fixed)
        batch = size if size is not None else np.broadcast_shapes(*batches)
        return numpy_loop(lambda *q: getattr(g, name)(*q, **fixed), batch, params, core)
    return draw


# name: (symlab draw, NumPy draw, scalar parameters, array parameters that broadcast, a size they broadcast to)
CASES: dict[str, tuple[Callable[..., Any], Callable[..., Any], tuple, tuple, tuple[int, ...]]] = {
    "uniform": (rb.uniform, method("uniform"), (-1.0, 2.0), (np.array([0.0, 1.0]), np.array([[2.0], [3.0], [4.0]])), (2, 3, 2)),
    "triangular": (rb.triangular, method("triangular"), (0.0, 1.0, 3.0), (np.array([0.0, -1.0]), 1.0, np.array([[2.0], [3.0]])), (4, 2, 2)),
    "beta": (rb.beta, method("beta"), (2.0, 3.0), (np.array([0.5, 2.0]), np.array([[1.0], [4.0]])), (3, 2, 2)),
    "normal": (rb.normal, method("normal"), (1.0, 2.0), (np.array([0.0, 10.0]), np.array([[1.0], [2.0], [0.5]])), (2, 3, 2)),
    "standard_normal": (lambda size=None, **kw: rb.standard_normal(size=size, **kw), method("standard_normal"), (), (), (3, 2)),
    "halfnormal": (rb.halfnormal, scaled("standard_normal", absolute=True), (1.0, 2.0), (np.array([0.0, 1.0]), np.array([[1.0], [3.0]])), (3, 2, 2)),
    "lognormal": (rb.lognormal, method("lognormal"), (0.5, 0.7), (np.array([0.0, 1.0]), np.array([[0.2], [0.9]])), (3, 2, 2)),
    "gamma": (lambda shape, scale, **kw: rb.gamma(shape, scale=scale, **kw), method("gamma"), (2.5, 0.5), (np.array([0.5, 3.0]), np.array([[1.0], [2.0]])), (3, 2, 2)),
    "invgamma": (rb.invgamma, lambda g, a, s, size: 1.0 / g.gamma(a, 1.0 / s, size), (3.0, 2.0), (np.array([0.5, 3.0]), np.array([[1.0], [2.0]])), (3, 2, 2)),
    "standard_gamma": (rb.standard_gamma, method("standard_gamma"), (2.5,), (np.array([0.5, 3.0, 8.0]),), (2, 3)),
    "chisquare": (lambda df, size=None, **kw: rb.chisquare(df, size=size, **kw), method("chisquare"), (3.0,), (np.array([1.0, 4.0]),), (3, 2)),
    "pareto": (rb.pareto, lambda g, b, s, size: s * (1.0 + g.pareto(b, size=np.broadcast_shapes(np.shape(b), np.shape(s)) if size is None else size)), (3.0, 2.0), (np.array([2.0, 5.0]), np.array([[1.0], [3.0]])), (3, 2, 2)),
    "gumbel": (rb.gumbel, method("gumbel"), (1.0, 2.0), (np.array([0.0, 1.0]), np.array([[1.0], [3.0]])), (3, 2, 2)),
    "exponential": (rb.exponential, method("exponential"), (2.0,), (np.array([0.5, 1.0, 3.0]),), (2, 3)),
    "weibull": (rb.weibull, method("weibull"), (1.5,), (np.array([0.5, 1.0, 3.0]),), (2, 3)),
    "logistic": (rb.logistic, method("logistic"), (1.0, 2.0), (np.array([0.0, 1.0]), np.array([[1.0], [3.0]])), (3, 2, 2)),
    "vonmises": (rb.vonmises, method("vonmises"), (0.5, 2.0), (np.array([0.0, 1.0]), np.array([[0.5], [4.0]])), (3, 2, 2)),
    "cauchy": (rb.cauchy, scaled("standard_cauchy"), (1.0, 2.0), (np.array([0.0, 1.0]), np.array([[1.0], [3.0]])), (3, 2, 2)),
    "halfcauchy": (rb.halfcauchy, scaled("standard_cauchy", absolute=True), (1.0, 2.0), (np.array([0.0, 1.0]), np.array([[1.0], [3.0]])), (3, 2, 2)),
    "wald": (rb.wald, method("wald"), (1.0, 2.0), (np.array([0.5, 1.0]), np.array([[1.0], [3.0]])), (3, 2, 2)),
    "t": (rb.t, scaled("standard_t"), (5.0, 1.0, 2.0), (np.array([3.0, 10.0]), 0.5, np.array([[1.0], [3.0]])), (3, 2, 2)),
    "laplace": (rb.laplace, method("laplace"), (1.0, 2.0), (np.array([0.0, 1.0]), np.array([[1.0], [3.0]])), (3, 2, 2)),
    "poisson": (rb.poisson, method("poisson"), (3.5,), (np.array([0.5, 4.0, 100.0]),), (2, 3)),
    "geometric": (rb.geometric, method("geometric"), (0.3,), (np.array([0.1, 0.5, 1.0]),), (2, 3)),
    "hypergeometric": (rb.hypergeometric, method("hypergeometric"), (10, 5, 7), (np.array([10, 20]), 5, np.array([[3], [7]])), (3, 2, 2)),
    "bernoulli": (rb.bernoulli, lambda g, p, size: g.binomial(1, p, size=size), (0.3,), (np.array([0.0, 0.5, 1.0]),), (2, 3)),
    "binomial": (rb.binomial, method("binomial"), (10, 0.3), (np.array([5, 50]), np.array([[0.1], [0.9]])), (3, 2, 2)),
    "negative_binomial": (rb.negative_binomial, method("negative_binomial"), (3, 0.4), (np.array([1, 10]), np.array([[0.2], [0.9]])), (3, 2, 2)),
    "integers": (rb.integers, method("integers"), (-3, 7), (np.array([0, 100]), np.array([[150], [200]])), (3, 2, 2)),
    "multivariate_normal": (rb.multivariate_normal, batched("multivariate_normal", [1, 2], method="cholesky"), (np.zeros(3), COV),
                            (np.array([[0.0, 1.0, 2.0], [-1.0, 0.0, 1.0]]), COV), (4, 2)),
    "dirichlet": (rb.dirichlet, batched("dirichlet", [1]), (np.array([1.0, 2.0, 0.5]),), (np.array([[1.0, 2.0, 0.5], [0.1, 0.2, 0.3]]),), (3, 2)),
    "multinomial": (rb.multinomial, batched("multinomial", [0, 1]), (10, P3), (np.array([[5], [20]]), P3B), (3, 2, 2)),
    "categorical": (rb.categorical, categorical_ref, (P3,), (P3B,), (4, 2)),
}


def variants(name: str) -> list[tuple[str, tuple, Any]]:
    _, _, scalars, arrays, size = CASES[name]
    out = [("scalars", scalars, None), ("scalars-size", scalars, size[-1:] if arrays else size)]
    if arrays:
        out += [("arrays", arrays, None), ("arrays-size", arrays, size)]
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_draw_is_numpys(name: str) -> None:
    sym, ref, *_ = CASES[name]
    for label, params, size in variants(name):
        rng = symlab.shared(np.random.default_rng(1234), name="rng")
        next_rng, x = sym(*params, size=size, rng=rng, return_next_rng=True)
        got, got_rng = symlab.function([], [x, next_rng], mode="NUMPY")()
        g = np.random.default_rng(1234)
        expected = np.asarray(ref(g, *params, size=size)).astype(x.dtype)
        assert (problem := same_bits(got, expected)) is None, f"{name} {label}: {problem}"
        assert x.type.shape == got.shape, f"{name} {label}: static shape {x.type.shape}, drawn {got.shape}"
        assert random_generator_type.values_eq(got_rng, g), f"{name} {label}: the next generator is not NumPy's"
        assert random_generator_type.values_eq(rng.get_value(), np.random.default_rng(1234)), "rng advanced"
        check_infer_shape(x, {})
        if x.dtype.startswith("float"):
            # Continuous: every element is its own draw (no draw shared by broadcasting), all distinct.
            assert len(np.unique(got)) == got.size, f"{name} {label}: repeated values {got}"


def test_dtypes() -> None:
    floats = ["uniform", "triangular", "beta", "normal", "halfnormal", "lognormal", "standard_gamma", "invgamma", "pareto", "gumbel",
              "exponential", "weibull", "logistic", "vonmises", "cauchy", "halfcauchy", "wald", "t", "laplace",
              "multivariate_normal", "dirichlet"]
    ints = ["poisson", "geometric", "hypergeometric", "bernoulli", "binomial", "negative_binomial", "integers",
            "multinomial", "categorical"]
    for name in floats + ints:
        op = getattr(rb, name)
        assert isinstance(op, RandomVariable) and op.name in (name, "gamma")
        assert op.dtype == ("floatX" if name in floats else "int64"), name
    x = rb.normal(0.0, 1.0, dtype="float32", rng=symlab.shared(np.random.default_rng(0)))
    assert x.dtype == "float32" and x.eval().dtype == np.float32
    with pytest.raises(ValueError, match="poisson: cannot change the dtype of a draw from int64 to float64"):
        rb.poisson(1.0, dtype="float64")


def test_choice_and_permutation_are_numpys() -> None:
    a = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
    cases = [
        (lambda r: rb.choice(10, size=(2, 3), rng=r), lambda g: g.choice(10, size=(2, 3))),
        (lambda r: rb.choice(a, size=5, rng=r), lambda g: g.choice(a, size=5)),
        (lambda r: rb.choice(a, size=(2, 2), p=[0.1, 0.2, 0.3, 0.4], rng=r), lambda g: g.choice(a, size=(2, 2), p=[0.1, 0.2, 0.3, 0.4])),
        (lambda r: rb.choice(10, size=(2, 3), replace=False, rng=r), lambda g: g.choice(10, size=(2, 3), replace=False)),
        (lambda r: rb.choice(a, size=3, replace=False, rng=r), lambda g: g.choice(a, size=3, replace=False)),
        (lambda r: rb.choice(a, size=3, replace=False, p=[0.1, 0.2, 0.3, 0.4], rng=r),
         lambda g: g.choice(a, size=3, replace=False, p=[0.1, 0.2, 0.3, 0.4])),
        (lambda r: rb.choice(a, rng=r), lambda g: g.choice(a)),
        (lambda r: rb.permutation(7, rng=r), lambda g: g.permutation(7)),
        (lambda r: rb.permutation(a, rng=r), lambda g: g.permutation(a)),
        (lambda r: rb.permutation(np.arange(6.0).reshape(3, 2), size=(2,), rng=r).owner.outputs[1], None),
    ]
    for k, (sym, ref) in enumerate(cases[:-1]):
        rng = symlab.shared(np.random.default_rng(99))
        x = sym(rng)
        next_rng = next(n for n in ancestors([x]) if n.owner and isinstance(n.owner.op, RandomVariable)).owner.outputs[0]
        got, got_rng = symlab.function([], [x, next_rng], mode="NUMPY")()
        g = np.random.default_rng(99)
        expected = np.asarray(ref(g))
        assert got.shape == expected.shape and np.array_equal(got, expected), f"case {k}: {got} vs {expected}"
        assert x.type.shape == got.shape, f"case {k}: static shape {x.type.shape}, drawn {got.shape}"
        assert random_generator_type.values_eq(got_rng, g), f"case {k}: the next generator is not NumPy's"
        if isinstance(x.owner.op, RandomVariable):
            check_infer_shape(x, {})


def test_batched_permutation_and_choice_loop_in_c_order() -> None:
    rng = symlab.shared(np.random.default_rng(5))
    x = rb.PermutationRV(signature="(x0)->(x0)", dtype="float64")(np.arange(4.0), size=(2, 3), rng=rng)
    g = np.random.default_rng(5)
    expected = np.stack([g.permutation(np.arange(4.0)) for _ in range(6)]).reshape(2, 3, 4)
    assert np.array_equal(x.eval(), expected) and x.type.shape == (2, 3, 4)
    check_infer_shape(x, {})
    y = rb.PermutationRV(signature="()->(x)", dtype="int64")(np.array([3, 3]), rng=rng)  # two arange(3) shuffles
    g = np.random.default_rng(5)
    assert np.array_equal(y.eval(), [g.permutation(3), g.permutation(3)]) and y.type.shape == (2, 3)
    check_infer_shape(y, {})
    # Without replacement, a batch of probabilities over one population: one NumPy choice per row, in order.
    a = np.arange(10.0, 15.0)
    p = np.array([[0.1, 0.2, 0.3, 0.2, 0.2], [0.5, 0.1, 0.1, 0.1, 0.2]])
    op = rb.ChoiceWithoutReplacement(signature="(a0),(a0),(1)->(s0)", dtype="float64")
    z = op(a, p, np.array([3]), size=(3, 2), rng=rng)
    g = np.random.default_rng(5)
    expected = np.stack([g.choice(a, size=3, replace=False, p=p[j]) for _ in range(3) for j in range(2)]).reshape(3, 2, 3)
    assert np.array_equal(z.eval(), expected) and z.type.shape == (3, 2, 3)
    check_infer_shape(z, {})


# -- moments -----------------------------------------------------------------------------------------------------
N = 100_000


def gamma_fn(x: float) -> float:
    return math.gamma(x)


EULER = 0.5772156649015329
# name: (draw of N values, exact mean, exact variance), each from the distribution's formula.
MOMENTS: dict[str, tuple[Callable[..., Any], float, float]] = {
    "uniform": (lambda r: rb.uniform(-1.0, 3.0, size=N, rng=r), 1.0, 16 / 12),
    "triangular": (lambda r: rb.triangular(0.0, 1.0, 4.0, size=N, rng=r), 5 / 3, (0 + 1 + 16 - 0 - 0 - 4) / 18),
    "beta": (lambda r: rb.beta(2.0, 3.0, size=N, rng=r), 2 / 5, 6 / (25 * 6)),
    "normal": (lambda r: rb.normal(1.0, 2.0, size=N, rng=r), 1.0, 4.0),
    "standard_normal": (lambda r: rb.standard_normal(size=N, rng=r), 0.0, 1.0),
    "halfnormal": (lambda r: rb.halfnormal(1.0, 2.0, size=N, rng=r), 1 + 2 * math.sqrt(2 / math.pi), 4 * (1 - 2 / math.pi)),
    "lognormal": (lambda r: rb.lognormal(0.5, 0.5, size=N, rng=r), math.exp(0.5 + 0.125), (math.exp(0.25) - 1) * math.exp(1.25)),
    "gamma": (lambda r: rb.gamma(2.5, scale=0.5, size=N, rng=r), 1.25, 2.5 * 0.25),
    "standard_gamma": (lambda r: rb.standard_gamma(2.5, size=N, rng=r), 2.5, 2.5),
    "invgamma": (lambda r: rb.invgamma(6.0, 2.0, size=N, rng=r), 2.0 / 5.0, 4.0 / (25.0 * 4.0)),
    "chisquare": (lambda r: rb.chisquare(3.0, size=N, rng=r), 3.0, 6.0),
    "pareto": (lambda r: rb.pareto(5.0, 2.0, size=N, rng=r), 5 * 2 / 4, 4 * 5 / (16 * 3)),
    "gumbel": (lambda r: rb.gumbel(1.0, 2.0, size=N, rng=r), 1 + 2 * EULER, math.pi**2 * 4 / 6),
    "exponential": (lambda r: rb.exponential(2.0, size=N, rng=r), 2.0, 4.0),
    "weibull": (lambda r: rb.weibull(1.5, size=N, rng=r), gamma_fn(1 + 1 / 1.5), gamma_fn(1 + 2 / 1.5) - gamma_fn(1 + 1 / 1.5) ** 2),
    "logistic": (lambda r: rb.logistic(1.0, 2.0, size=N, rng=r), 1.0, 4 * math.pi**2 / 3),
    "wald": (lambda r: rb.wald(1.5, 2.0, size=N, rng=r), 1.5, 1.5**3 / 2.0),
    "t": (lambda r: rb.t(5.0, 1.0, 2.0, size=N, rng=r), 1.0, 4 * 5 / 3),
    "laplace": (lambda r: rb.laplace(1.0, 2.0, size=N, rng=r), 1.0, 8.0),
    "poisson": (lambda r: rb.poisson(3.5, size=N, rng=r), 3.5, 3.5),
    "geometric": (lambda r: rb.geometric(0.3, size=N, rng=r), 1 / 0.3, 0.7 / 0.09),
    "hypergeometric": (lambda r: rb.hypergeometric(10, 5, 7, size=N, rng=r), 7 * 10 / 15, 7 * (10 / 15) * (5 / 15) * (8 / 14)),
    "bernoulli": (lambda r: rb.bernoulli(0.3, size=N, rng=r), 0.3, 0.21),
    "binomial": (lambda r: rb.binomial(10, 0.3, size=N, rng=r), 3.0, 2.1),
    "negative_binomial": (lambda r: rb.negative_binomial(3, 0.4, size=N, rng=r), 3 * 0.6 / 0.4, 3 * 0.6 / 0.16),
    "integers": (lambda r: rb.integers(-3, 7, size=N, rng=r), (-3 + 7 - 1) / 2, (10**2 - 1) / 12),
    "categorical": (lambda r: rb.categorical(P3, size=N, rng=r), 0.3 + 1.0, 0.3 + 4 * 0.5 - 1.3**2),
    "choice": (lambda r: rb.choice(np.array([1.0, 5.0, 7.0]), size=N, p=P3, rng=r), 0.2 + 1.5 + 3.5, 0.2 + 7.5 + 24.5 - 5.2**2),
    # Each entry of a draw without replacement is uniform on the population (the finite population correction
    # (M - N) / (M - 1) only narrows the sample mean's spread).
    "choice_without_replacement": (lambda r: rb.choice(10 * N, size=N, replace=False, rng=r), (10 * N - 1) / 2, ((10 * N) ** 2 - 1) / 12),
    "permutation": (lambda r: rb.PermutationRV(signature="(x0)->(x0)", dtype="float64")(np.arange(5.0), size=(N,), rng=r)[:, 0], 2.0, 2.0),
    "mvnormal_0": (lambda r: rb.multivariate_normal(np.array([1.0, 2.0, 3.0]), COV, size=N, rng=r)[:, 0], 1.0, 2.0),
    "mvnormal_2": (lambda r: rb.multivariate_normal(np.array([1.0, 2.0, 3.0]), COV, size=N, rng=r)[:, 2], 3.0, 1.5),
    "dirichlet_0": (lambda r: rb.dirichlet(np.array([1.0, 2.0, 0.5]), size=N, rng=r)[:, 0], 1 / 3.5, 1 * 2.5 / (3.5**2 * 4.5)),
    "dirichlet_2": (lambda r: rb.dirichlet(np.array([1.0, 2.0, 0.5]), size=N, rng=r)[:, 2], 0.5 / 3.5, 0.5 * 3 / (3.5**2 * 4.5)),
    "multinomial_1": (lambda r: rb.multinomial(10, P3, size=N, rng=r)[:, 1], 3.0, 10 * 0.3 * 0.7),
    # vonmises: the cosine of the angle from mu has mean I1/I0 and second moment (1 + I2/I0) / 2.
    "vonmises_cos": (lambda r: symlab.tensor.cos(rb.vonmises(0.5, 2.0, size=N, rng=r) - 0.5),
                     special.iv(1, 2.0) / special.iv(0, 2.0),
                     (1 + special.iv(2, 2.0) / special.iv(0, 2.0)) / 2 - (special.iv(1, 2.0) / special.iv(0, 2.0)) ** 2),
    "vonmises_sin": (lambda r: symlab.tensor.sin(rb.vonmises(0.5, 2.0, size=N, rng=r) - 0.5), 0.0,
                     (1 - special.iv(2, 2.0) / special.iv(0, 2.0)) / 2),
}


@pytest.mark.parametrize("name", sorted(MOMENTS))
def test_moments_of_1e5_draws(name: str) -> None:
    draw, mean, var = MOMENTS[name]
    x = np.asarray(draw(symlab.shared(np.random.default_rng(2024))).eval(), dtype="float64")
    assert x.shape == (N,)
    m, s2 = x.mean(), x.var(ddof=1)
    # Standard errors: of the mean from the exact variance; of the variance from the sample's fourth central moment.
    se_mean = math.sqrt(var / N)
    se_var = math.sqrt(max(np.mean((x - m) ** 4) - s2**2, 0.0) / N)
    assert abs(m - mean) < 5 * se_mean, f"{name}: mean {m}, exact {mean} (5 standard errors: {5 * se_mean:.3g})"
    assert abs(s2 - var) < 5 * se_var, f"{name}: variance {s2}, exact {var} (5 standard errors: {5 * se_var:.3g})"


@pytest.mark.parametrize("name", ["cauchy", "halfcauchy"])
def test_quantiles_of_heavy_tails(name: str) -> None:
    """No moments: the median and quartiles of 10^5 draws against the exact ones (5 standard errors)."""
    loc, scale = 1.0, 2.0
    x = getattr(rb, name)(loc, scale, size=N, rng=symlab.shared(np.random.default_rng(7))).eval()
    for q in (0.25, 0.5, 0.75):
        if name == "cauchy":
            exact = loc + scale * math.tan(math.pi * (q - 0.5))
            density = 1 / (math.pi * scale * (1 + ((exact - loc) / scale) ** 2))
        else:
            exact = loc + scale * math.tan(math.pi * q / 2)
            density = 2 / (math.pi * scale * (1 + ((exact - loc) / scale) ** 2))
        se = math.sqrt(q * (1 - q) / N) / density
        assert abs(np.quantile(x, q) - exact) < 5 * se, f"{name}: quantile {q} is {np.quantile(x, q)}, exact {exact}"
