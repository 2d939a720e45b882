"""``map``, ``reduce``, ``foldl`` and ``foldr`` (PyTensor's ``scan.views``) against Python's own loops."""

import functools

import numpy as np
import pytest

import symlab
import symlab.tensor as st
from symlab.scan import OrderedUpdates, Scan


def run(inputs, outputs, *values, updates=None):
    return symlab.function(inputs, outputs, updates=updates, mode="NUMPY")(*values)


def test_the_four_are_exported_by_symlab_and_symlab_scan():
    import symlab.scan.folds as folds

    for name in ("map", "reduce", "foldl", "foldr"):
        assert getattr(symlab, name) is getattr(symlab.scan, name) is getattr(folds, name)
    assert {"map", "reduce", "foldl", "foldr"} <= set(dir(symlab))


def test_map_over_two_sequences_with_a_non_sequence_forwards_and_backwards():
    a, b, c = st.dvector("a"), st.dvector("b"), st.dscalar("c")
    forwards, updates = symlab.map(lambda u, v, k: u * k - v, sequences=[a, b], non_sequences=c)
    backwards, _ = symlab.map(lambda u, v, k: u * k - v, sequences=[a, b], non_sequences=c, go_backwards=True)
    assert isinstance(updates, OrderedUpdates) and not updates
    A, B = np.array([1.0, 2.0, 3.0, 4.0]), np.array([0.5, -1.0, 2.0])  # B is shorter: the loop runs 3 times
    got_forwards, got_backwards = run([a, b, c], [forwards, backwards], A, B, 3.0)
    np.testing.assert_array_equal(got_forwards, [u * 3.0 - v for u, v in zip(A, B)])
    # go_backwards reads each sequence from its end (PyTensor's too): A's last 3 entries, and B, reversed
    np.testing.assert_array_equal(got_backwards, [u * 3.0 - v for u, v in zip(A[::-1], B[::-1])])


def test_reduce_returns_the_last_state_of_each_output():
    x = st.dvector("x")
    (low, high, count), updates = symlab.reduce(
        lambda v, lo, hi, n: (st.minimum(lo, v), st.maximum(hi, v), n + 1),
        sequences=x, outputs_info=[x[0], x[0], st.constant(np.int64(0))])
    assert not updates and low.ndim == high.ndim == count.ndim == 0
    values = np.random.default_rng(4).normal(size=9)
    got = run([x], [low, high, count], values)
    assert [float(got[0]), float(got[1]), int(got[2])] == [values.min(), values.max(), 9]
    # reduce is a loop: one Scan node, whose states the outputs read at their last entry
    nodes = symlab.function([x], [low, high], mode="FAST_COMPILE").maker.fgraph.toposort()
    assert sum(isinstance(n.op, Scan) for n in nodes) == 1


@pytest.mark.parametrize("fold", ["foldl", "foldr"])
def test_folds_read_the_sequence_from_their_own_end(fold):
    digits = st.lvector("digits")
    number, updates = getattr(symlab, fold)(lambda d, acc: 10 * acc + d, sequences=digits,
                                            outputs_info=st.constant(np.int64(0)))
    values = [3, 1, 4, 1, 5]
    order = values if fold == "foldl" else values[::-1]
    assert int(run([digits], number, np.array(values))) == functools.reduce(lambda acc, d: 10 * acc + d, order, 0)
    assert not updates


def test_return_updates_false_returns_the_outputs_alone():
    x = st.dvector("x")
    squares = symlab.map(lambda v: v ** 2, sequences=x, return_updates=False)
    total = symlab.foldr(lambda v, acc: acc + v, sequences=x, outputs_info=st.constant(0.0), return_updates=False)
    got_squares, got_total = run([x], [squares, total], np.array([1.0, 2.0, 3.0]))
    assert got_squares.tolist() == [1.0, 4.0, 9.0] and float(got_total) == 6.0


def test_updates_of_shared_variables_in_the_body_come_back_for_the_caller():
    """A body updating a shared counter: map returns the update, to which the caller adds its own pair."""
    seen, calls = symlab.shared(np.int64(0), name="seen"), symlab.shared(np.int64(0), name="calls")
    x = st.dvector("x")
    doubled, updates = symlab.map(lambda v: (2 * v, {seen: seen + 1}), sequences=x)
    updates[calls] = calls + 1
    f = symlab.function([x], doubled, updates=updates, mode="NUMPY")
    assert f(np.array([1.0, 2.0, 3.0])).tolist() == [2.0, 4.0, 6.0]
    f(np.array([5.0]))
    assert int(seen.get_value()) == 4 and int(calls.get_value()) == 2
    with pytest.raises(ValueError, match="return_updates=False, but the loop updates"):
        symlab.map(lambda v: (2 * v, {seen: seen + 1}), sequences=x, return_updates=False)


def test_reduce_of_a_carried_generator_returns_its_last_value_as_it_is():
    """A generator in outputs_info is carried, not traced: reduce returns the loop's last generator (no ``[-1]``)."""
    rng = st.random.shared_rng(seed=5, name="rng")

    def step(total, generator):
        next_generator, draw = generator.normal()
        return total + draw, next_generator

    total, last_generator = symlab.foldl(lambda i, acc, g: step(acc, g), sequences=st.arange(3),
                                         outputs_info=[st.constant(0.0), rng], return_updates=False)
    assert last_generator.type == rng.type
    f = symlab.function([], total, updates={rng: last_generator}, mode="NUMPY")
    replay = np.random.default_rng(5)
    for _ in range(2):
        want = 0.0
        for _ in range(3):
            want = want + replay.normal()
        assert float(f()) == want
    assert rng.get_value().bit_generator.state == replay.bit_generator.state
