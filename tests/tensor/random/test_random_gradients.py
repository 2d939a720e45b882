"""Gradients of draws: reparametrized normal and uniform against finite differences (a generator that is not
updated makes the draw a deterministic function of the parameters), and a named error for every other one."""

from __future__ import annotations

import numpy as np
import pytest

import symlab
import symlab.tensor as pt
from symlab.gradient import NullTypeGradError, verify_grad
from symlab.tensor.random import basic as rb


def fixed(seed: int = 0):
    """A shared generator no function updates: every evaluation draws the same numbers."""
    return symlab.shared(np.random.default_rng(seed), name="rng")


@pytest.mark.parametrize("size", [None, (4, 2)])
def test_normal_gradient_matches_finite_differences(size) -> None:
    rng = fixed(1)
    verify_grad(lambda loc, scale: rb.normal(loc, scale, size=size, rng=rng),
                [np.array([0.5, -1.0]), np.array([[1.5], [0.7], [2.0], [0.3]])[: 4 if size else 1]],
                rng=np.random.default_rng(0))
    verify_grad(lambda loc, scale: rb.normal(loc, scale, size=(3, 2), rng=rng), [np.array(2.0), np.array([1.0, 3.0])],
                rng=np.random.default_rng(0))


@pytest.mark.parametrize("size", [None, (3, 2)])
def test_uniform_gradient_matches_finite_differences(size) -> None:
    rng = fixed(2)
    verify_grad(lambda low, high: rb.uniform(low, high, size=size, rng=rng),
                [np.array([-1.0, 0.5]), np.array(2.0)], rng=np.random.default_rng(0))
    verify_grad(lambda low, high: rb.uniform(low, high, size=(5,), rng=rng), [np.array(-3.0), np.array(4.0)],
                rng=np.random.default_rng(0))


def test_reparametrized_gradients_have_their_formulas() -> None:
    rng = fixed(3)
    loc, scale = pt.dvector("loc"), pt.dscalar("scale")
    x = rb.normal(loc, scale, size=(4, 2), rng=rng)
    g_loc, g_scale = symlab.grad(x.sum(), [loc, scale])
    draw, gl, gs = symlab.function([loc, scale], [x, g_loc, g_scale], mode="NUMPY")(np.array([1.0, -2.0]), 0.5)
    assert np.array_equal(gl, [4.0, 4.0])  # d draw / d loc = 1, summed over the 4 rows loc was broadcast to
    np.testing.assert_allclose(gs, ((draw - np.array([1.0, -2.0])) / 0.5).sum(), rtol=1e-12)
    low, high = pt.dscalar("low"), pt.dscalar("high")
    u = rb.uniform(low, high, size=5, rng=rng)
    g_low, g_high = symlab.grad(u.sum(), [low, high])
    draw, gl, gh = symlab.function([low, high], [u, g_low, g_high], mode="NUMPY")(-1.0, 3.0)
    np.testing.assert_allclose(gl, ((3.0 - draw) / 4.0).sum(), rtol=1e-12)
    np.testing.assert_allclose(gh, ((draw + 1.0) / 4.0).sum(), rtol=1e-12)
    np.testing.assert_allclose(gl + gh, 5.0, rtol=1e-12)  # shifting both bounds shifts every draw


def test_the_next_generator_and_size_have_no_gradient() -> None:
    rng = fixed(4)
    loc = pt.dscalar("loc")
    next_rng, x = rb.normal(loc, 1.0, size=3, rng=rng, return_next_rng=True)
    grads = x.owner.op.L_op(x.owner.inputs, x.owner.outputs, [symlab.graph.null_type.disconnected(), pt.ones_like(x)])
    assert all(isinstance(g.type, symlab.graph.null_type.DisconnectedType) for g in grads[:2])
    assert all(isinstance(g.type, symlab.graph.null_type.DisconnectedType)
               for g in rb.gamma(2.0, scale=1.0, rng=rng).owner.op.L_op(x.owner.inputs, x.owner.outputs, [None, x])[:2])
    # A later draw from the next generator: the generator carries no gradient, the draw's location does.
    y = rb.normal(x, 2.0, rng=next_rng)
    assert symlab.function([loc], symlab.grad(y.sum(), loc), mode="NUMPY")(0.0) == 3.0
    # A non-differentiable draw from the next generator does not poison the gradient through the first draw.
    z = rb.gamma(2.0, scale=1.0, size=3, rng=next_rng)
    assert symlab.function([loc], symlab.grad((x * z).sum(), loc), mode="NUMPY")(0.0) == pytest.approx(
        symlab.function([loc], z, mode="NUMPY")(0.0).sum())


@pytest.mark.parametrize("build", [
    lambda p: rb.gamma(p, scale=1.0, size=3, rng=fixed()),
    lambda p: rb.exponential(p, size=3, rng=fixed()),
    lambda p: rb.beta(p, 2.0, rng=fixed()),
    lambda p: rb.lognormal(p, 1.0, rng=fixed()),
    lambda p: rb.halfnormal(0.0, p, rng=fixed()),
    lambda p: rb.multivariate_normal(pt.stack([p, p]), np.eye(2), rng=fixed()),
    lambda p: rb.dirichlet(pt.stack([p, p]), rng=fixed()),
], ids=["gamma", "exponential", "beta", "lognormal", "halfnormal", "multivariate_normal", "dirichlet"])
def test_other_distributions_refuse_gradients_by_name(build) -> None:
    p = pt.dscalar("p")
    draw = build(p)
    name = draw.owner.op.name
    with pytest.raises(NullTypeGradError, match=rf"cannot differentiate with respect to p: the gradient of {name}_rv.* "
                       rf"is undefined: a draw of {name} is not a differentiable function of its inputs"):
        symlab.grad(draw.sum(), p)


def test_integer_draws_have_no_gradient() -> None:
    p = pt.dscalar("p")
    for draw in (rb.poisson(p, size=3, rng=fixed()), rb.binomial(10, p, rng=fixed())):
        with pytest.raises(symlab.gradient.DisconnectedInputError, match="depends on p .* only through integer"):
            symlab.grad(draw.sum(), p)
