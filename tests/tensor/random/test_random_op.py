"""RandomVariable as an op: a distribution defined by a user, named errors on bad input (leaving the graph as it
was), and repeated draws with and without the update that carries the generator forward."""

from __future__ import annotations

import gc
import warnings
from typing import Any

import numpy as np
import pytest
from oracle import check_infer_shape

import symlab
import symlab.tensor as pt
from symlab.graph.basic import Apply, Variable
from symlab.tensor.random import basic as rb
from symlab.tensor.random.op import RandomVariable
from symlab.tensor.random.type import random_generator_type
from symlab.tensor.random.variable import rng as rng_variable


def users(*variables: Variable) -> list[Apply]:
    """The live nodes that take one of ``variables`` as an input (what a refused draw must not add to)."""
    lists = [r for v in variables for r in gc.get_referrers(v) if isinstance(r, list)]
    return [a for lst in lists for a in gc.get_referrers(lst) if isinstance(a, Apply) and a.inputs is lst]


def refused(error: type[Exception], pattern: str, build: Any, *inputs: Variable) -> None:
    """``build()`` raises ``error`` matching ``pattern`` and leaves the graph of ``inputs`` as it was."""
    before = users(*inputs)
    states = [i.get_value() for i in inputs if hasattr(i, "get_value")]
    with pytest.raises(error, match=pattern):
        build()
    assert users(*inputs) == before, "a refused draw added a node to the graph"
    after = [i.get_value() for i in inputs if hasattr(i, "get_value")]
    assert all(random_generator_type.values_eq(a, b) for a, b in zip(states, after) if isinstance(a, np.random.Generator))


class ShiftedExponentialRV(RandomVariable):
    """A distribution a user defines: ``loc + Generator.exponential(scale)``."""

    name = "shifted_exponential"
    signature = "(),()->()"
    dtype = "floatX"
    param_names = ("loc", "scale")

    def check_values(self, values):
        if values[1] is not None and np.any(values[1] <= 0):
            raise ValueError(f"shifted_exponential: scale must be > 0, received {values[1]}")

    def rng_fn(self, rng, loc, scale, size):
        return loc + rng.exponential(scale, size=np.broadcast_shapes(np.shape(loc), np.shape(scale)) if size is None else size)


def test_str_and_props() -> None:
    assert str(rb.normal) == 'normal_rv{"(),()->()"}'
    assert str(rb.multivariate_normal) == 'multivariate_normal_rv{"(n),(n,n)->(n)", cholesky}'
    assert rb.multivariate_normal(np.zeros(2), np.eye(2), method="svd").owner.op.method == "svd"
    assert rb.normal == rb.NormalRV() and hash(rb.normal) == hash(rb.NormalRV())
    assert rb.normal.clone_with(inplace=True).destroy_map == {0: [0]}


def test_user_defined_random_variable_end_to_end() -> None:
    op = ShiftedExponentialRV()
    rng = symlab.shared(np.random.default_rng(11), name="rng")
    loc = pt.dvector("loc")
    next_rng, x = op(loc, 2.0, size=(3, 2), rng=rng, return_next_rng=True)
    assert str(op) == 'shifted_exponential_rv{"(),()->()"}' and x.type == pt.TensorType("float64", (3, 2))
    f = symlab.function([loc], x, updates={rng: next_rng}, mode="NUMPY")
    g = np.random.default_rng(11)
    for _ in range(3):
        assert np.array_equal(f(np.array([1.0, -1.0])), np.array([1.0, -1.0]) + g.exponential(2.0, size=(3, 2)))
    assert random_generator_type.values_eq(rng.get_value(), g)
    check_infer_shape(x, {loc: np.array([1.0, -1.0])})
    with pytest.raises(ValueError, match=r"shifted_exponential: scale must be > 0, received -1.0"):
        op(0.0, -1.0, rng=rng)
    with pytest.raises(symlab.gradient.NullTypeGradError, match="shifted_exponential.*not a differentiable"):
        symlab.grad(x.sum(), loc)


def test_a_non_generator_rng_is_refused() -> None:
    v = pt.dvector("v")
    refused(TypeError, r"normal: rng must be a generator variable .*received v of type TensorType\(float64, \(\?,\)\)",
            lambda: rb.normal(0.0, 1.0, rng=v), v)
    with pytest.raises(TypeError, match=r"normal: rng must be a generator variable .*received int 3"):
        rb.normal(0.0, 1.0, rng=3)
    with pytest.raises(TypeError, match=r"expected a numpy.random.Generator, received a numpy.random.RandomState"):
        symlab.shared(np.random.RandomState(0))
    r = rng_variable("r")
    f = symlab.function([r], rb.normal(0.0, 1.0, rng=r), mode="NUMPY")
    with pytest.raises(TypeError, match=r"bad value for input 0 \('r'\): expected RandomGeneratorType, received a "
                       r"RandomState .*expected a numpy.random.Generator, received a numpy.random.RandomState"):
        f(np.random.RandomState(0))


def test_parameters_of_the_wrong_shape_are_refused() -> None:
    rng = symlab.shared(np.random.default_rng(0), name="rng")
    mean, cov = pt.dvector("mean"), pt.dmatrix("cov")
    refused(ValueError, r"multivariate_normal: cov of shape \(2, 2\) does not match mean of shape \(3,\): core "
            r"dimension 'n' .* is 2 in one and 3 in the other",
            lambda: rb.multivariate_normal(np.zeros(3), np.eye(2), rng=rng), rng)
    refused(ValueError, r"multivariate_normal: cov must be a square matrix \(n, n\), received shape \(3, 2\)",
            lambda: rb.multivariate_normal(mean, np.ones((3, 2)), rng=rng), rng, mean)
    refused(ValueError, r"normal: the parameters' shapes loc \(2, 3\), scale \(4,\) do not broadcast together",
            lambda: rb.normal(np.zeros((2, 3)), np.ones(4), rng=rng), rng)
    refused(ValueError, r"dirichlet: alphas must have at least 1 dimensions .*received .*TensorType\(float64, \(\)\)",
            lambda: rb.dirichlet(pt.dscalar("a"), rng=rng), rng)
    # At run time: the core dimensions of the values disagree.
    f = symlab.function([mean, cov], rb.multivariate_normal(mean, cov, rng=rng), mode="NUMPY")
    with pytest.raises(ValueError, match=r"multivariate_normal: cov of shape \(2, 2\) does not match mean of shape \(3,\)"):
        f(np.zeros(3), np.eye(2))
    assert random_generator_type.values_eq(rng.get_value(), np.random.default_rng(0))


def test_invalid_parameter_values_are_refused_when_built_and_when_run() -> None:
    rng = symlab.shared(np.random.default_rng(0), name="rng")
    loc, scale = pt.dvector("loc"), pt.dscalar("scale")
    refused(ValueError, r"^normal: scale must be >= 0, received -1.0$", lambda: rb.normal(loc, -1.0, rng=rng), rng, loc)
    refused(ValueError, r"^normal: scale must be >= 0, received -2.0 \(in \[ 1. -2.\]\)$",
            lambda: rb.normal(0.0, np.array([1.0, -2.0]), rng=rng), rng)
    refused(ValueError, r"^binomial: p must be in \[0, 1\], received 1.5$", lambda: rb.binomial(10, 1.5, rng=rng), rng)
    refused(ValueError, r"^binomial: n must be >= 0, received -1$", lambda: rb.binomial(-1, 0.5, rng=rng), rng)
    refused(ValueError, r"^poisson: lam must be >= 0, received -3.0$", lambda: rb.poisson(-3.0, rng=rng), rng)
    refused(ValueError, r"^dirichlet: alphas must be > 0, received 0.0", lambda: rb.dirichlet([1.0, 0.0], rng=rng), rng)
    refused(ValueError, r"^beta: beta must be > 0, received -1.0$", lambda: rb.beta(1.0, -1.0, rng=rng), rng)
    refused(ValueError, r"^categorical: p must sum to 1 along its last axis \(within 1.5e-08\), received sums 1.1",
            lambda: rb.categorical([0.5, 0.6], rng=rng), rng)
    refused(ValueError, r"^multinomial: p must be in \[0, 1\], received 1.5 \(in \[ 1.5 -0.5\]\)$", lambda: rb.multinomial(3, [1.5, -0.5], rng=rng), rng)
    refused(ValueError, r"^integers: high must be > low, received 2", lambda: rb.integers(5, 2, rng=rng), rng)
    refused(ValueError, r"^triangular: mode must be <= right, received 3.0", lambda: rb.triangular(0.0, 3.0, 2.0, rng=rng), rng)
    refused(ValueError, r"^hypergeometric: nsample must be <= ngood \+ nbad, received 9",
            lambda: rb.hypergeometric(3, 5, 9, rng=rng), rng)
    refused(ValueError, r"^multivariate_normal: cov must be symmetric", lambda: rb.multivariate_normal(
        np.zeros(2), np.array([[1.0, 0.5], [0.0, 1.0]]), rng=rng), rng)
    # The same checks on the values given when the function runs; the generator does not advance.
    f = symlab.function([loc, scale], rb.normal(loc, scale, rng=rng), updates=None, mode="NUMPY")
    with pytest.raises(ValueError, match=r"normal: scale must be >= 0, received -1.0"):
        f(np.zeros(2), -1.0)
    p = pt.dscalar("p")
    g = symlab.function([p], rb.bernoulli(p, size=3, rng=rng), mode="NUMPY")
    with pytest.raises(ValueError, match=r"bernoulli: p must be in \[0, 1\], received 2.0"):
        g(2.0)
    assert random_generator_type.values_eq(rng.get_value(), np.random.default_rng(0))


def test_numpy_refusals_at_run_time_name_the_op_and_parameters() -> None:
    """A failure only NumPy sees (a covariance with NaN) is re-raised naming the op and the parameters' shapes."""
    cov = pt.dmatrix("cov")
    f = symlab.function([cov], rb.multivariate_normal(np.zeros(2), cov, rng=symlab.shared(np.random.default_rng(0))),
                        mode="NUMPY")
    with pytest.raises(ValueError, match=r'^multivariate_normal_rv\{"\(n\),\(n,n\)->\(n\)", cholesky\}: NumPy refused to draw '
                       r"with mean of shape \(2,\), cov of shape \(2, 2\) and size None: Matrix is not positive definite"):
        f(np.array([[1.0, 2.0], [2.0, 1.0]]))  # not positive definite: Cholesky fails


def test_size_inconsistent_with_the_parameters() -> None:
    rng = symlab.shared(np.random.default_rng(0), name="rng")
    loc = pt.dvector("loc")
    refused(ValueError, r"normal: loc \(TensorConstant.*\) of shape \(3,\) cannot be broadcast to size \(2,\): "
            r"dimension 0 is 3, expected 2 or 1", lambda: rb.normal(np.zeros(3), 1.0, size=(2,), rng=rng), rng)
    refused(ValueError, r"normal: size has 1 entries but loc \(m\) has 2 batch dimensions",
            lambda: rb.normal(pt.dmatrix("m"), 1.0, size=(2,), rng=rng), rng)
    refused(ValueError, r"normal: size must hold sizes >= 0, received \(-1,\)", lambda: rb.normal(size=(-1,), rng=rng), rng)
    refused(TypeError, r"normal: size must be None, an int or a sequence of ints", lambda: rb.normal(size=2.5, rng=rng), rng)
    f = symlab.function([loc], rb.normal(loc, 1.0, size=(2,), rng=rng), mode="NUMPY")
    with pytest.raises(ValueError, match=r"normal: loc of shape \(3,\) cannot be broadcast to size \(2,\)"):
        f(np.zeros(3))
    assert f(np.zeros(1)).shape == (2,)  # a parameter of length 1 broadcasts


def test_wrong_number_of_parameters() -> None:
    rng = symlab.shared(np.random.default_rng(0), name="rng")
    refused(TypeError, r"normal: expected 2 parameters \(signature \(\),\(\)->\(\)\), received 1",
            lambda: rb.normal.make_node(rng, None, 1.0), rng)
    refused(TypeError, r"multivariate_normal: expected 2 parameters .*received 3",
            lambda: rb.multivariate_normal.make_node(rng, None, np.zeros(2), np.eye(2), 1.0), rng)
    with pytest.raises(TypeError, match="poisson: unexpected keyword arguments"):
        rb.poisson(1.0, mu=2.0)


def test_repeated_draws_and_updates() -> None:
    rng = symlab.shared(np.random.default_rng(123), name="rng")
    next_rng, x = rb.normal(0.0, 1.0, size=3, rng=rng, return_next_rng=True)
    same = symlab.function([], x, mode="NUMPY")
    assert np.array_equal(same(), same())
    assert random_generator_type.values_eq(rng.get_value(), np.random.default_rng(123))
    advancing = symlab.function([], x, updates={rng: next_rng}, mode="NUMPY")
    g = np.random.default_rng(123)
    draws = [advancing() for _ in range(5)]
    for d in draws:
        assert np.array_equal(d, g.normal(0.0, 1.0, size=3))
    assert not np.array_equal(draws[0], draws[1])
    assert random_generator_type.values_eq(rng.get_value(), g)


def test_a_draw_without_a_generator_gets_a_new_shared_one() -> None:
    x = rb.uniform(size=2)
    r = x.owner.inputs[0]
    assert isinstance(r, symlab.compile.SharedVariable) and isinstance(r.get_value(), np.random.Generator)
    g = r.get_value()
    assert np.array_equal(x.eval(), g.uniform(size=2))


def test_generator_methods_return_the_next_generator_and_the_draw() -> None:
    rng = symlab.shared(np.random.default_rng(3), name="rng")
    r1, a = rng.normal(1.0, 2.0, size=2)
    r2, b = r1.gamma(2.0, scale=0.5)
    r3, c = r2.choice(5, size=3, replace=False)
    r4, d = r3.multivariate_normal(np.zeros(2), np.eye(2))
    f = symlab.function([], [a, b, c, d], updates={rng: r4}, mode="NUMPY")
    g = np.random.default_rng(3)
    got = f()
    expected = [g.normal(1.0, 2.0, 2), g.gamma(2.0, 0.5), g.choice(5, 3, replace=False),
                g.multivariate_normal(np.zeros(2), np.eye(2), method="cholesky")]
    for x, y in zip(got, expected):
        assert np.array_equal(x, y)
    assert random_generator_type.values_eq(rng.get_value(), g)
    with pytest.raises(ValueError, match="normal: scale must be >= 0"):
        r4.normal(0.0, -1.0)
    with pytest.warns(UserWarning, match="already used"):
        rng.uniform()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        r4.uniform()  # the refused draw above did not mark r4 as used
    assert not record


def test_every_distribution_in_all() -> None:
    ops = [getattr(rb, n) for n in rb.__all__ if isinstance(getattr(rb, n), RandomVariable)]
    names = {op.name for op in ops}
    assert {"normal", "uniform", "integers", "bernoulli", "binomial", "poisson", "beta", "gamma", "exponential",
            "categorical", "multivariate_normal", "dirichlet", "multinomial", "lognormal", "laplace", "logistic",
            "geometric", "hypergeometric", "pareto", "weibull", "vonmises", "negative_binomial", "t", "triangular",
            "gumbel", "wald", "halfnormal", "standard_gamma", "cauchy", "halfcauchy"} <= names
    generator_methods = {n for n in dir(np.random.Generator) if not n.startswith("_")}
    custom = {op.name for op in ops if type(op).rng_fn is not RandomVariable.rng_fn}
    assert {op.name for op in ops} - custom <= generator_methods
    for fn in (rb.standard_normal, rb.gamma, rb.chisquare, rb.choice, rb.permutation):
        assert fn.__name__ in rb.__all__


def test_symbolic_size_and_parameter_shapes() -> None:
    """A size computed in the graph, and parameters whose shapes are known only when run: shapes inferred."""
    rng = symlab.shared(np.random.default_rng(8), name="rng")
    n = pt.lscalar("n")
    loc, alphas = pt.dvector("loc"), pt.dmatrix("alphas")
    x = rb.normal(loc, 1.0, size=(n, loc.shape[0]), rng=rng)
    assert x.type.shape == (None, None)
    value = np.array([0.0, 10.0, 20.0])
    got = symlab.function([n, loc], x, mode="NUMPY")(4, value)
    g = np.random.default_rng(8)
    assert np.array_equal(got, g.normal(value, 1.0, size=(4, 3)))
    check_infer_shape(x, {n: 4, loc: value})
    d = rb.dirichlet(alphas, rng=rng)
    check_infer_shape(d, {alphas: np.ones((2, 5))})
    m = rb.multinomial(7, alphas, rng=rng)
    check_infer_shape(m, {alphas: np.full((3, 4), 0.25)})
