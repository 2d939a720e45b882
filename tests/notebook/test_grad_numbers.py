"""GradNumbers: the numbers of grad's walk, against micrograd's and against finite differences."""

import numpy as np
import pytest

import symlab
import symlab.tensor as st
from symlab.gradient.walk import GradWalk, walk_of
from symlab.notebook.grad_numbers import GradNumbers
from symlab.tensor.random.basic import normal

# micrograd's README neuron: o = tanh(x1*w1 + x2*w2 + b), with the numbers its backward() writes on each node
NEURON_POINT = {"x1": 2.0, "x2": 0.0, "w1": -3.0, "w2": 1.0, "b": 6.8813735870195432}
MICROGRAD_GRADS = {"o": 1.0, "n": 0.5, "x1w1 + x2w2": 0.5, "x1w1": 0.5, "x2w2": 0.5,
                   "x1": -1.5, "w1": 1.0, "x2": 0.5, "w2": 0.0, "b": 0.5}


def _neuron():
    x1, x2, w1, w2, b = st.dscalars("x1", "x2", "w1", "w2", "b")
    x1w1, x2w2 = x1 * w1, x2 * w2
    x1w1.name, x2w2.name = "x1w1", "x2w2"
    both = x1w1 + x2w2
    both.name = "x1w1 + x2w2"
    n = both + b
    n.name = "n"
    o = st.tanh(n)
    o.name = "o"
    return o, [x1, x2, w1, w2, b], {v.name: v for v in (x1, x2, w1, w2, b, x1w1, x2w2, both, n, o)}


def test_the_neurons_numbers_at_every_step_are_micrograds_and_finite_differences():
    o, inputs, named = _neuron()
    walk = GradWalk(o, inputs)
    numbers = GradNumbers(walk, NEURON_POINT)  # inputs by name
    assert float(numbers.value(named["o"])) == pytest.approx(np.tanh(0.8813735870195432))
    # step 0: only the cost's gradient, 1
    assert float(numbers.total(named["o"], 0)) == 1.0
    assert all(numbers.total(named[name], 0) is None for name in MICROGRAD_GRADS if name != "o")
    for step in walk.steps:
        (arriving,) = numbers.arriving(step)
        (out,) = step.node.outputs
        assert float(arriving) == pytest.approx(MICROGRAD_GRADS[out.name], abs=1e-12), step
        for c in step.contributions:
            # each variable has one client: what it receives at this step is micrograd's grad, and its total now
            assert float(numbers.received(c)) == pytest.approx(MICROGRAD_GRADS[c.variable.name], abs=1e-12), c
            assert float(numbers.total(c.variable, step.number)) == float(numbers.received(c))
            assert numbers.total(c.variable, step.number - 1) is None  # before its client's step: none yet
    last = len(walk.steps)
    for name, expected in MICROGRAD_GRADS.items():
        var = named[name]
        assert float(numbers.total(var, last)) == pytest.approx(expected, abs=1e-12), name
        assert float(numbers.finite_difference(var)) == pytest.approx(expected, abs=1e-7), name
    assert [float(numbers.value(g)) for g in walk.results] == pytest.approx([-1.5, 0.5, 1.0, 0.0, 0.5], abs=1e-12)
    assert [numbers.text(numbers.value(g)) for g in walk.results] == ["-1.5", "0.5", "1.0", "0.0", "0.5"]


def test_a_variable_with_two_clients_shows_its_total_before_and_after_the_sum():
    # notebook 09: cost = log(a*b + exp(a)); a reaches the cost through mul and through exp
    a, b = st.dscalars("a", "b")
    c = a * b
    d = c + st.exp(a)
    cost = st.log(d)
    walk = GradWalk(cost, [a, b])
    numbers = GradNumbers(walk, {a: 0.5, b: -1.5})
    av, bv = 0.5, -1.5
    dv = av * bv + np.exp(av)
    assert [step.label for step in walk.steps] == ["log", "add", "exp", "mul"]
    exp_step, mul_step = walk.steps[2], walk.steps[3]
    assert numbers.total(a, 2) is None  # log and add give it nothing
    assert float(numbers.total(a, 3)) == pytest.approx(np.exp(av) / dv)  # through exp only
    assert float(numbers.total(a, 4)) == pytest.approx((bv + np.exp(av)) / dv)  # the chain rule's sum
    (summed,) = mul_step.sums
    assert summed.variable is a and not any(c.summed for c in exp_step.contributions)
    assert float(numbers.value(summed.before)) == float(numbers.total(a, 3))
    assert float(numbers.received(summed)) == pytest.approx(bv / dv)
    assert float(numbers.value(summed.after)) == pytest.approx(float(numbers.value(summed.before)) + bv / dv)
    assert float(numbers.value(walk.results[0])) == float(numbers.total(a, 4))
    assert float(numbers.finite_difference(a)) == pytest.approx((bv + np.exp(av)) / dv, abs=1e-8)
    assert float(numbers.finite_difference(b)) == pytest.approx(av / dv, abs=1e-8)
    # the intermediate d, inside log(d): d cost / d d = 1 / d
    assert float(numbers.finite_difference(d)) == pytest.approx(1 / dv, abs=1e-8)
    assert float(numbers.total(d, 1)) == pytest.approx(1 / dv)


def test_array_gradients_and_an_intermediate_match_finite_differences():
    x, w = st.dvector("x"), st.dmatrix("w")
    hidden = st.tanh(st.dot(w, x))
    cost = (hidden ** 2).sum() + (w * w).sum() * 0.1
    walk = GradWalk(cost, [x, w])
    rng = np.random.default_rng(3)
    numbers = GradNumbers(walk, {x: rng.normal(size=3), w: rng.normal(size=(2, 3))})
    for var, g in zip([x, w], walk.results):
        np.testing.assert_allclose(numbers.value(g), numbers.finite_difference(var), rtol=1e-6, atol=1e-8)
        assert numbers.value(g).shape == numbers.value(var).shape
    np.testing.assert_allclose(numbers.total(hidden, len(walk.steps)), numbers.finite_difference(hidden), atol=1e-8)
    np.testing.assert_allclose(numbers.total(hidden, len(walk.steps)), 2 * numbers.value(hidden), atol=1e-12)


def test_text_writes_a_number_in_four_digits_and_an_array_by_its_shape_and_first_entries():
    text = GradNumbers.text
    assert text(np.float64(0.70710678)) == "0.7071"
    assert text(np.array(-1.5)) == "-1.5"
    assert text(np.array(3, dtype="int64")) == "3"
    assert text(np.array(True)) == "True"
    assert text(None) == "none"
    assert text(np.array([1.5, -2.0])) == "(2,) [1.5, -2.0]"
    assert text(np.array([1.5, -2.0, 3.0])) == "(3,) [1.5, -2.0, 3.0]"
    assert text(np.arange(32 * 10, dtype="float64").reshape(32, 10) / 3) == "(32, 10) [0.0, 0.3333, 0.6667, …]"
    assert text(np.zeros((0, 3))) == "(0, 3) []"
    assert text(np.random.default_rng(1)).startswith("PCG64 state #")


def test_bad_values_get_the_values_views_errors_naming_the_input():
    o, inputs, named = _neuron()
    walk = GradWalk(o, inputs)
    missing = dict(NEURON_POINT)
    del missing["b"]
    with pytest.raises(ValueError, match=r"GradNumbers: inputs has no value for b \(TensorType\(float64, \(\)\)\)"):
        GradNumbers(walk, missing)
    with pytest.raises(TypeError, match=r"bad value for input w1: expected TensorType\(float64, \(\)\) \(a number or an array\), received str '-3'"):
        GradNumbers(walk, {**NEURON_POINT, "w1": "-3"})
    with pytest.raises(ValueError, match=r"the graph has no input named 'w3'; its inputs are x1, w1, x2, w2, b"):
        GradNumbers(walk, {**NEURON_POINT, "w3": 1.0})
    with pytest.raises(ValueError, match=r"n is computed by the graph, not one of its inputs"):
        GradNumbers(walk, {**NEURON_POINT, named["n"]: 1.0})
    with pytest.raises(TypeError, match=r"inputs must be a dict"):
        GradNumbers(walk, [2.0, 0.0])
    with pytest.raises(TypeError, match=r"GradNumbers: walk must be a GradWalk, received"):
        GradNumbers(o, NEURON_POINT)


def test_reading_something_the_walk_did_not_make_names_it():
    o, inputs, named = _neuron()
    walk = GradWalk(o, inputs)
    numbers = GradNumbers(walk, NEURON_POINT)
    stranger = st.dscalar("stranger")
    with pytest.raises(KeyError, match=r"GradNumbers.value: stranger \(TensorType\(float64, \(\)\)\) is not a variable"):
        numbers.value(stranger)
    with pytest.raises(KeyError, match=r"GradNumbers.total: stranger"):
        numbers.total(stranger, 1)
    with pytest.raises(KeyError, match=r"GradNumbers.value: stranger"):
        numbers.finite_difference(stranger)
    with pytest.raises(TypeError, match=r"expected a Variable of the walk, received str 'o'"):
        numbers.value("o")
    with pytest.raises(ValueError, match=r"k must be a step number from 0 to 5, received 6"):
        numbers.total(named["n"], 6)
    with pytest.raises(ValueError, match=r"k must be a step number from 0 to 5, received -1"):
        numbers.total(named["n"], -1)
    other = GradWalk(o, inputs)
    with pytest.raises(KeyError, match=r"step 1 \(tanh\) is not a step of this walk"):
        numbers.arriving(other.steps[0])
    with pytest.raises(ValueError, match=r"is a gradient the walk made, not a variable of the cost's graph"):
        numbers.finite_difference(walk.results[0])
    with pytest.raises(ValueError, match=r"eps must be a positive number, received 0"):
        numbers.finite_difference(named["n"], eps=0)
    # a zero gradient grad filled in for an output nothing reached is not one the walk reports
    with pytest.raises(KeyError):
        numbers.value(st.dscalar() * 2)


def test_an_integer_input_has_no_gradient_and_no_finite_difference():
    x, k = st.dvector("x"), st.lvector("k")
    cost = (x * st.cast(k, "float64")).sum()
    walk = walk_of(cost, [x, k])
    numbers = GradNumbers(walk, {x: [1.0, 2.0], k: [3, -4]})
    assert numbers.value(k).tolist() == [3, -4]
    np.testing.assert_array_equal(numbers.value(walk.results[0]), [3.0, -4.0])
    np.testing.assert_array_equal(numbers.value(walk.results[1]), [0.0, 0.0])  # grad's zeros for a discrete input
    assert numbers.total(k, len(walk.steps)) is None
    (refused,) = [c for step in walk.steps for c in step.contributions if c.variable is k]
    assert refused.reason and numbers.received(refused) is None
    with pytest.raises(ValueError, match=r"k is a int64 variable: it has no gradient, so there is nothing to difference"):
        numbers.finite_difference(k)
    with pytest.raises(TypeError, match=r"bad value for input k: expected TensorType\(int64, \(\?,\)\)"):
        GradNumbers(walk, {x: [1.0, 2.0], k: [0.5, 1.0]})


def test_an_undefined_gradient_has_no_value_and_says_why():
    x = st.dvector("x")
    fx = st.floor(x)
    walk = walk_of((fx * x).sum(), x)
    numbers = GradNumbers(walk, {x: [0.5, 1.5]})
    assert numbers.value(walk.results) is None
    why = numbers.undefined_reason(x)
    assert why.startswith("the gradient of Elemwise{floor,no_inplace} with respect to input 0 (x) is undefined")
    assert numbers.undefined_reason(walk.results) == why
    floor_step = walk.step_of(fx.owner)
    assert floor_step.kind == "undefined" or any(c.undefined for c in floor_step.contributions)
    undefined = [c for c in floor_step.contributions if c.undefined]
    assert undefined and all(numbers.received(c) is None for c in undefined)
    assert numbers.total(x, len(walk.steps)) is None
    # before floor's step, x holds mul's defined contribution: floor(x)
    np.testing.assert_array_equal(numbers.total(x, floor_step.number - 1), [0.0, 1.0])
    np.testing.assert_array_equal(numbers.total(fx, len(walk.steps)), [0.5, 1.5])
    assert numbers.undefined_reason(fx) == ""


def test_known_gradients_with_and_without_a_cost():
    x = st.dvector("x")
    y = st.exp(x)
    u = st.dvector("u")  # a gradient arriving at y from above
    cost = (x ** 2).sum()
    walk = GradWalk(cost, x, known_grads={y: u})
    numbers = GradNumbers(walk, {x: [0.5, -1.0], u: [2.0, 3.0]})
    expected = 2 * np.array([0.5, -1.0]) + np.exp([0.5, -1.0]) * [2.0, 3.0]
    np.testing.assert_allclose(numbers.value(walk.results), expected)
    # the function grad differentiates: the cost plus u . y, u held at its value
    np.testing.assert_allclose(numbers.finite_difference(x), expected, rtol=1e-7)
    only = GradWalk(None, x, known_grads={y: u})
    numbers = GradNumbers(only, {x: [0.5, -1.0], u: [2.0, 3.0]})
    np.testing.assert_allclose(numbers.value(only.results), np.exp([0.5, -1.0]) * [2.0, 3.0])
    with pytest.raises(ValueError, match=r"this walk has no cost \(grad was given known_grads only\), so there is no "
                                         r"d cost / d x to compute"):
        numbers.finite_difference(x)


def test_shared_variables_and_random_draws_are_read_never_changed():
    rng = symlab.shared(np.random.default_rng(7), name="rng")
    w = symlab.shared(np.array([0.5, -1.0, 2.0]), name="w")
    noise = normal(0.0, 1.0, size=(3,), rng=rng)
    cost = ((w + noise) ** 2).sum()
    state = rng.get_value().bit_generator.state
    walk = GradWalk(cost, w)
    numbers = GradNumbers(walk, {})  # both shared: nothing to give
    draw = numbers.value(noise)
    np.testing.assert_allclose(draw, np.random.default_rng(7).normal(size=3))  # the generator as it stands
    np.testing.assert_allclose(numbers.value(walk.results), 2 * (w.get_value() + draw))
    np.testing.assert_allclose(numbers.finite_difference(w), 2 * (w.get_value() + draw), rtol=1e-7)
    assert rng.get_value().bit_generator.state == state  # never advanced
    np.testing.assert_array_equal(w.get_value(), [0.5, -1.0, 2.0])
    # a shared variable may be given another value: the view's, not the variable's
    other = GradNumbers(walk, {w: [1.0, 1.0, 1.0]})
    np.testing.assert_allclose(other.value(walk.results), 2 * (1.0 + draw))
    np.testing.assert_array_equal(w.get_value(), [0.5, -1.0, 2.0])


def test_float32_differences_use_a_wider_step():
    x = st.fvector("x")
    cost = (st.sin(x) * 3).sum()
    walk = GradWalk(cost, x)
    numbers = GradNumbers(walk, {x: np.array([0.25, 1.0], dtype="float32")})
    fd = numbers.finite_difference(x)
    assert fd.dtype == np.float32
    np.testing.assert_allclose(fd, 3 * np.cos([0.25, 1.0]), rtol=1e-3)
    np.testing.assert_allclose(numbers.value(walk.results), 3 * np.cos([0.25, 1.0]), rtol=1e-6)


def test_repr_names_the_cost_and_the_input_values():
    o, inputs, _ = _neuron()
    numbers = GradNumbers(GradWalk(o, inputs), NEURON_POINT)
    assert repr(numbers) == "<GradNumbers of o with x1 = 2.0, w1 = -3.0, x2 = 0.0, w2 = 1.0, b = 6.881: 19 values>"


def test_a_branch_walk_has_numbers_for_both_branches_and_the_taken_one_matches_finite_differences():
    from symlab.ifelse import ifelse

    a, x = st.dscalar("a"), st.dvector("x")
    taken, other = st.exp(x), st.log(x)
    branch = ifelse(st.gt(a, 0), taken, other)
    cost = (branch * x).sum()
    walk = GradWalk(cost, [x, a], disconnected_inputs="ignore")
    numbers = GradNumbers(walk, {a: 1.0, x: [0.5, 2.0]})
    xv = np.array([0.5, 2.0])
    np.testing.assert_allclose(numbers.value(walk.results[0]), np.exp(xv) + xv * np.exp(xv), rtol=1e-12)
    np.testing.assert_allclose(numbers.finite_difference(x), numbers.value(walk.results[0]), rtol=1e-7)
    # the branch not taken receives a zero gradient; the one taken, the gradient arriving at the ifelse
    (received_other,) = [numbers.received(c) for c in walk.step_of(branch.owner).contributions if c.variable is other]
    np.testing.assert_array_equal(received_other, [0.0, 0.0])
    np.testing.assert_allclose(numbers.total(taken, len(walk.steps)), xv)
    np.testing.assert_array_equal(numbers.value(walk.results[1]), 0.0)  # the condition's input: no gradient
