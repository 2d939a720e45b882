"""The rewrites of random variables (symlab/rewriting/rules/random.py): where each applies, where it must not (and
the reason the trace gives), the distribution of what the rewritten graph draws, the same bits where a rule promises
them, and the generator chain (updates) kept."""

from __future__ import annotations

import numpy as np
import pytest
from oracle import UNOPTIMIZED, same_bits

import symlab
import symlab.tensor as pt
from symlab.compile.modes import get_mode
from symlab.rewriting import rewrite_graph
from symlab.tensor.random.type import generator_state

N = 100_000
NUMPY = get_mode("NUMPY")
LIFTS = NUMPY.including("random_lift")


def steps_of(trace, rule):
    return [s for s in trace.steps if s.rule == rule]


def assert_moments(sample, mean, var, fourth_central, axis=None):
    """Mean and variance of ``sample`` within 5 standard errors of the exact ones (along ``axis``)."""
    n = sample.shape[0] if axis == 0 else sample.size
    got_mean = sample.mean(axis=axis)
    got_var = sample.var(axis=axis, ddof=1)
    assert np.all(np.abs(got_mean - mean) < 5 * np.sqrt(var / n)), (got_mean, mean)
    assert np.all(np.abs(got_var - var) < 5 * np.sqrt((fourth_central - var ** 2) / n)), (got_var, var)


def normal_moments(mu, sigma):
    return mu, sigma ** 2, 3 * sigma ** 4


def uniform_moments(low, high):
    width = high - low
    return (low + high) / 2, width ** 2 / 12, width ** 4 / 80


def shared(seed, name="rng"):
    return pt.random.shared_rng(np.random.default_rng(seed), name=name)


# -- random_constant_size ---------------------------------------------------------------------------------------------
def test_a_size_known_from_static_shapes_becomes_a_constant_with_the_same_bits():
    x = pt.tensor("float64", shape=(2, 3), name="x")
    rng = shared(5)
    draw = pt.random.normal(1.0, 2.0, size=x.shape, rng=rng)
    f = symlab.function([x], draw, mode=NUMPY, on_unused_input="ignore")
    (step,) = steps_of(f.trace, "random_constant_size")
    assert step.accepted and step.reason == "size Shape.0 is known before running: (2, 3); the same numbers are drawn"
    node = f.maker.fgraph.outputs[0].owner
    assert isinstance(node.inputs[1], symlab.graph.basic.Constant) and list(node.inputs[1].data) == [2, 3]
    unfolded = symlab.function([x], draw, mode=NUMPY.excluding("random_constant_size"), on_unused_input="ignore")
    assert not steps_of(unfolded.trace, "random_constant_size")
    value = np.zeros((2, 3))
    expected = np.random.default_rng(5).normal(1.0, 2.0, size=(2, 3))
    for got in (f(value), unfolded(value), symlab.function([x], draw, mode=UNOPTIMIZED, on_unused_input="ignore")(value)):
        assert same_bits(got, expected) is None


def test_a_size_known_only_when_running_is_left_alone():
    y = pt.dmatrix("y")
    draw = pt.random.uniform(size=(y.shape[0], 3), rng=shared(0))
    _, trace = rewrite_graph(draw, include=("canonicalize",))
    assert not steps_of(trace, "random_constant_size")


# -- random_drop_implied_size -----------------------------------------------------------------------------------------
def test_a_size_the_parameters_imply_is_dropped_only_when_included_with_the_same_bits():
    mu = pt.constant(np.array([[0.0, 1.0, 2.0]]))
    sigma = pt.tensor("float64", shape=(2, 1), name="sigma")
    rng = shared(3)
    draw = pt.random.normal(mu, sigma, size=(2, 3), rng=rng)
    default = symlab.function([sigma], draw, mode=NUMPY)
    assert not steps_of(default.trace, "random_drop_implied_size")
    dropped = symlab.function([sigma], draw, mode=NUMPY.including("random_drop_implied_size"))
    (step,) = steps_of(dropped.trace, "random_drop_implied_size")
    assert step.reason == "size (2, 3) is the shape the parameters broadcast to: dropped; the same numbers are drawn"
    node = dropped.maker.fgraph.outputs[0].owner
    assert isinstance(node.inputs[1].type, symlab.tensor.shape_of.NoneTypeT)
    s = np.array([[1.0], [3.0]])
    expected = np.random.default_rng(3).normal(mu.data, s, size=(2, 3))
    assert same_bits(dropped(s), expected) is None and same_bits(default(s), expected) is None


def test_a_size_is_kept_when_it_broadcasts_the_parameters_or_the_op_draws_its_own_way():
    rng = shared(3)
    wider = pt.random.normal(pt.constant(np.zeros(3)), 1.0, size=(2, 3), rng=rng)
    _, trace = rewrite_graph(wider, include=("canonicalize", "random_drop_implied_size"))
    assert not steps_of(trace, "random_drop_implied_size")
    alpha = pt.constant(np.ones((2, 3)))
    own = pt.random.dirichlet(alpha, size=(2,), rng=rng)  # a support dimension and its own rng_fn
    _, trace = rewrite_graph(own, include=("canonicalize", "random_drop_implied_size"))
    (step,) = steps_of(trace, "random_drop_implied_size")
    assert not step.accepted and "size None fills the same array in the same order is not known" in step.reason


# -- local_dimshuffle_rv_lift -----------------------------------------------------------------------------------------
def test_a_transposed_draw_is_lifted_keeping_the_distribution_and_the_generators_state():
    mu, sigma = np.array([1.0, -3.0]), np.array([0.5, 2.0])
    rng = shared(11)
    next_rng, draw = rng.normal(mu, sigma, size=(N, 2))
    transposed = draw.T
    lifted = symlab.function([], transposed, updates={rng: next_rng}, mode=LIFTS)
    (step,) = steps_of(lifted.trace, "local_dimshuffle_rv_lift")
    assert step.accepted and step.reason == ("DimShuffle{1,0} of the draw lifted to its parameters and size "
                                             "TensorConstant{[     2 100000]}: the same distribution, other numbers "
                                             "(the generator fills the new order)")
    assert step.location.file.endswith("random_lift.py") and str(step.node.op) == "DimShuffle{1,0}"
    assert not any(str(n.op).startswith("DimShuffle{1,0}") for n in lifted.maker.fgraph.apply_nodes
                   if n.outputs[0] is lifted.maker.fgraph.outputs[0])
    got = lifted()
    assert got.shape == (2, N)
    for row, m, s in zip(got, mu, sigma):
        assert_moments(row, *normal_moments(m, s))
    after_lifted = generator_state(rng.get_value())
    rng.set_value(np.random.default_rng(11))
    plain = symlab.function([], transposed, updates={rng: next_rng}, mode=NUMPY)
    assert not steps_of(plain.trace, "local_dimshuffle_rv_lift")  # off by default, as in PyTensor
    expected = plain()
    assert same_bits(expected, np.random.default_rng(11).normal(mu, sigma, size=(N, 2)).T) is None
    assert not np.array_equal(got, expected)  # the values differ...
    z_lifted = np.sort(((got.T - mu) / sigma).ravel())
    z_plain = np.sort(((expected.T - mu) / sigma).ravel())
    np.testing.assert_allclose(z_lifted, z_plain, rtol=1e-12, atol=1e-12)  # ...the numbers drawn, placed elsewhere
    assert generator_state(rng.get_value()) == after_lifted  # the same numbers taken from the generator


def test_a_draw_given_only_new_axes_keeps_its_bits():
    rng = shared(2)
    draw = pt.random.uniform(0.0, 3.0, size=(4,), rng=rng)
    expanded = draw.dimshuffle("x", 0, "x")
    f = symlab.function([], expanded, mode=LIFTS)
    (step,) = steps_of(f.trace, "local_dimshuffle_rv_lift")
    assert step.reason.endswith("the same numbers (only size-1 axes added)")
    expected = np.random.default_rng(2).uniform(0.0, 3.0, size=4).reshape(1, 4, 1)
    assert same_bits(f(), expected) is None


@pytest.mark.parametrize("case", ["other reader", "drop", "support"])
def test_a_dimshuffle_is_not_lifted_where_it_must_not_be(case):
    rng = shared(0)
    if case == "other reader":
        draw = pt.random.normal(0.0, 1.0, size=(2, 3), rng=rng)
        outputs, why = [draw.T, draw], "is also read by an output of the graph: a lifted draw would disagree with it"
    elif case == "drop":
        draw = pt.random.normal(0.0, 1.0, size=(1, 3), rng=rng)
        outputs, why = [draw.dimshuffle(1)], "drops dimensions [0] of the draw: not lifted (as PyTensor)"
    else:
        mean, cov = pt.constant(np.zeros(2)), pt.constant(np.eye(2))
        draw = pt.random.multivariate_normal(mean, cov, size=(3,), rng=rng)
        outputs, why = [draw.T], "moves the support dimensions of"
    _, trace = rewrite_graph(outputs, include=("canonicalize", "random_lift"))
    (step,) = steps_of(trace, "local_dimshuffle_rv_lift")
    assert not step.accepted and why in step.reason


def test_a_batch_dimshuffle_of_a_multivariate_draw_is_lifted():
    mean = pt.constant(np.array([[0.0, 10.0], [-5.0, 5.0], [1.0, 1.0]]))
    cov = pt.constant(np.array([[1.0, 0.5], [0.5, 2.0]]))
    rng = shared(4)
    draw = pt.random.multivariate_normal(mean, cov, size=(N // 10, 3), rng=rng)
    f = symlab.function([], draw.dimshuffle(1, 0, 2), mode=LIFTS)
    assert [s.accepted for s in steps_of(f.trace, "local_dimshuffle_rv_lift")] == [True]
    got = f()
    assert got.shape == (3, N // 10, 2)
    for k in range(3):
        for j in range(2):
            assert_moments(got[k, :, j], *normal_moments(mean.data[k, j], np.sqrt(cov.data[j, j])))


# -- local_subtensor_rv_lift ------------------------------------------------------------------------------------------
def test_an_indexed_draw_draws_fewer_numbers_from_the_same_distribution_and_chain():
    low, high = np.array([0.0, 1.0, -2.0, 5.0]), np.array([1.0, 4.0, 2.0, 6.0])
    rng = shared(8)
    next_rng, draw = rng.uniform(low, high, size=(N, 4))
    part = draw[:, 1:3]
    lifted = symlab.function([], part, updates={rng: next_rng}, mode=LIFTS)
    (step,) = steps_of(lifted.trace, "local_subtensor_rv_lift")
    assert step.accepted and step.reason.startswith("Subtensor{:, 1:3} of the draw lifted to its parameters and size")
    assert step.reason.endswith("fewer numbers drawn, the same distribution, other numbers")
    node = lifted.maker.fgraph.outputs[0].owner
    assert list(node.inputs[1].data) == [N, 2]  # only the numbers the graph reads are drawn
    got = lifted()
    for j in range(2):
        assert_moments(got[:, j], *uniform_moments(low[1 + j], high[1 + j]))
    reference = np.random.default_rng(8)
    reference.random(2 * N)  # uniform takes one double per number: the generator advanced by the draws made
    assert generator_state(rng.get_value()) == generator_state(reference)
    rng.set_value(np.random.default_rng(8))
    plain = symlab.function([], part, updates={rng: next_rng}, mode=NUMPY)
    assert same_bits(plain(), np.random.default_rng(8).uniform(low, high, size=(N, 4))[:, 1:3]) is None
    reference = np.random.default_rng(8)
    reference.random(4 * N)
    assert generator_state(rng.get_value()) == generator_state(reference)


def test_an_index_of_a_draw_given_by_its_parameters_is_lifted_to_them():
    mu = pt.dvector("mu")
    i = pt.lscalar("i")
    draw = pt.random.normal(mu, 1.0, rng=shared(1))
    f = symlab.function([mu, i], draw[i], mode=LIFTS)
    (step,) = steps_of(f.trace, "local_subtensor_rv_lift")
    assert step.accepted and "size None" in step.reason
    mus = np.arange(5.0) * 100
    assert same_bits(f(mus, 3), np.random.default_rng(1).normal(300.0, 1.0)) is None  # one number, of mu[3]


@pytest.mark.parametrize("index", ["mask", "integer array"])
def test_a_mask_or_an_array_of_distinct_positions_is_lifted(index):
    mu = np.array([0.0, 10.0, 20.0, 30.0])
    draw = pt.random.normal(mu, np.array([1.0, 2.0, 3.0, 4.0]), size=(N, 4), rng=shared(6))
    if index == "mask":
        picked, columns = draw[:, pt.constant(np.array([True, False, True, False]))], [0, 2]
    else:
        picked, columns = draw[:, [-1, 0]], [3, 0]
    f = symlab.function([], picked, mode=LIFTS)
    (step,) = steps_of(f.trace, "local_subtensor_rv_lift")
    assert step.accepted and "fewer numbers drawn" in step.reason
    node = f.maker.fgraph.outputs[0].owner
    assert str(node.op).startswith("normal_rv") and list(node.inputs[1].data) == [N, 2]
    got = f()
    for j, column in enumerate(columns):
        assert_moments(got[:, j], *normal_moments(mu[column], column + 1.0))


@pytest.mark.parametrize("case", ["repeated", "symbolic array", "negative on an unknown size", "mask over a broadcast",
                                  "new axis", "other reader", "support"])
def test_an_index_is_not_lifted_where_it_must_not_be(case):
    rng = shared(0)
    draw = pt.random.normal(0.0, 1.0, size=(4, 3), rng=rng)
    if case == "repeated":
        outputs, why = [draw[[1, 2, 1]]], "the integer-array index [1, 2, 1] repeats an element"
    elif case == "symbolic array":
        outputs, why = [draw[pt.lvector("i")]], "an integer-array index known only when running may repeat an element"
    elif case == "negative on an unknown size":
        mu = pt.dvector("mu")
        outputs = [pt.random.normal(mu, 1.0, rng=rng)[[0, -1]]]
        why = "negative entries, on a dimension of unknown size, may repeat an element"
    elif case == "mask over a broadcast":
        row = pt.random.normal(pt.constant(np.zeros((1, 3))), 1.0, size=(4, 3), rng=rng)
        outputs = [row[pt.constant(np.array([True, False, True, True]))]]
        why = "the boolean mask covers a dimension a parameter broadcasts along"
    elif case == "new axis":
        outputs, why = [draw[[0, 1], None]], "adds an axis"
    elif case == "other reader":
        outputs, why = [draw[0], draw.sum()], "is also read by"
    else:
        mean, cov = pt.constant(np.zeros(2)), pt.constant(np.eye(2))
        outputs = [pt.random.multivariate_normal(mean, cov, size=(3,), rng=rng)[:, 0]]
        why = "indexes the support dimensions of"
    _, trace = rewrite_graph(outputs, include=("canonicalize", "random_lift"))
    (step,) = steps_of(trace, "local_subtensor_rv_lift")
    assert not step.accepted and why in step.reason


def test_a_lifted_draw_hands_its_next_generator_on_to_the_draw_after_it():
    rng = shared(21)
    next_rng, first = rng.uniform(size=(5, 4))
    _, second = next_rng.normal(size=(3,))
    outputs = [first.T, first[1:3]]
    for view, taken in zip(outputs, (20, 8)):
        f = symlab.function([], [view, second], mode=LIFTS)
        assert [s.accepted for s in f.trace.steps if s.rule.startswith("local_")] == [True]
        reference = np.random.default_rng(21)
        reference.random(taken)  # the numbers the lifted draw takes: all of them, or the 8 it keeps
        _, got_second = f()
        assert same_bits(got_second, reference.normal(size=3)) is None


# -- sidestep_unused_rng_consumer -------------------------------------------------------------------------------------
def test_an_unused_draw_is_sidestepped_only_when_random_unsafe_is_included():
    rng = shared(123)
    next_rng, unused = rng.normal(name="unused")
    final_rng, y = next_rng.normal(name="y")
    first, second = np.random.default_rng(123).normal(size=2)
    kept = symlab.function([], y, updates={rng: final_rng}, mode=NUMPY)
    assert not steps_of(kept.trace, "sidestep_unused_rng_consumer")
    assert kept() == second
    rng.set_value(np.random.default_rng(123))
    skipped = symlab.function([], y, updates={rng: final_rng}, mode=NUMPY.including("random_unsafe"))
    (step,) = steps_of(skipped.trace, "sidestep_unused_rng_consumer")
    assert step.reason == "nothing reads the draw unused: its generator rng is handed on unadvanced (the later draws change)"
    assert skipped() == first
    reference = np.random.default_rng(123)
    reference.normal()
    assert generator_state(rng.get_value()) == generator_state(reference)  # one draw made, not two
    still = symlab.function([], y, mode=NUMPY.including("random").excluding("random_unsafe"))
    assert not steps_of(still.trace, "sidestep_unused_rng_consumer")


def test_an_unused_draw_whose_generator_is_read_twice_is_not_sidestepped():
    rng = shared(0)
    next_rng, _ = rng.normal()
    _, y = next_rng.normal()
    z = pt.random.uniform(rng=rng)  # the same generator read by another draw
    _, trace = rewrite_graph([y, z], include=("canonicalize", "random_unsafe"))
    refused = [s for s in steps_of(trace, "sidestep_unused_rng_consumer") if not s.accepted]
    assert refused and "is also read by another node" in refused[0].reason


# -- the generator chain, and reads -----------------------------------------------------------------------------------
def test_updates_advance_the_generator_as_the_unoptimized_graph_does():
    x = pt.tensor("float64", shape=(3,), name="x")
    results = []
    for mode in (UNOPTIMIZED, NUMPY, LIFTS.including("random_unsafe")):
        rng = shared(42)
        next_rng, a = rng.normal(x, 1.0, size=x.shape)
        final_rng, b = next_rng.uniform(size=(2,))
        f = symlab.function([x], [a + 1.0, b], updates={rng: final_rng}, mode=mode)
        calls = [f(np.arange(3.0)) for _ in range(3)]
        results.append((calls, generator_state(rng.get_value())))
    (reference, state), *others = results
    for calls, other_state in others:
        assert other_state == state
        for got, expected in zip(calls, reference):
            for g, e in zip(got, expected):
                assert same_bits(g, e) is None


def test_reading_the_trace_never_advances_a_shared_generator():
    rng = shared(9)
    next_rng, draw = rng.normal(0.0, 1.0, size=(3, 2))
    f = symlab.function([], draw.T[1:], updates={rng: next_rng}, mode=LIFTS.including("random_unsafe"))
    before = generator_state(rng.get_value())
    assert steps_of(f.trace, "local_dimshuffle_rv_lift") or steps_of(f.trace, "local_subtensor_rv_lift")
    text = str(f.trace)
    for k in range(len(f.trace) + 1):
        symlab.dprint(f.trace.graph_at(k), file="str")
    cursor = f.trace.cursor(len(f.trace))
    cursor.seek(0)
    symlab.dprint(f, file="str")
    assert "local_" in text and generator_state(rng.get_value()) == before
    f()
    assert generator_state(rng.get_value()) != before  # the call, not the reads, advanced it
