"""Default updates: ``SharedVariable.default_update`` and ``symlab.function(..., no_default_updates=...)``.

A shared variable with a ``default_update`` is updated by every function that uses it (Theano's rule, which is how
a RandomStream's draws advance their generators), unless the function has an update of its own for it or leaves
it out with ``no_default_updates`` (``True``, or a list of shared variables). Updates are computed from the values
before the call. Compiling never changes a shared variable's value nor the user's graph.
"""

from __future__ import annotations

import numpy as np
import pytest

import symlab
import symlab.tensor as st
from symlab.graph import ancestors
from symlab.graph.basic import MissingInputError
from symlab.graph.sharedvalue import SharedVariable
from symlab.tensor.random.utils import RandomStream

MODE = "NUMPY"


def counter(name: str, start: float = 0.0, step: float = 1.0) -> SharedVariable:
    n = symlab.shared(np.float64(start), name=name)
    n.default_update = n + step
    return n


def test_a_function_using_the_variable_applies_its_default_update() -> None:
    n = counter("n")
    f = symlab.function([], n * 2, mode=MODE)
    assert [float(f()) for _ in range(3)] == [0.0, 2.0, 4.0]  # each output reads the value before the update
    assert float(n.get_value()) == 3.0
    assert [str(s) for s, _ in f.maker.updates] == ["n"]


def test_no_default_updates_true_leaves_every_default_update_out() -> None:
    n, m = counter("n"), counter("m", step=10.0)
    f = symlab.function([], n + m, no_default_updates=True, mode=MODE)
    assert [float(f()) for _ in range(2)] == [0.0, 0.0]
    assert float(n.get_value()) == 0.0 and float(m.get_value()) == 0.0
    assert f.maker.updates == []


def test_no_default_updates_list_leaves_out_only_the_listed_variables() -> None:
    n, m = counter("n"), counter("m", step=10.0)
    f = symlab.function([], [n, m], no_default_updates=[n], mode=MODE)
    f()
    f()
    assert float(n.get_value()) == 0.0
    assert float(m.get_value()) == 20.0


def test_an_explicit_update_overrides_the_default_update() -> None:
    n = counter("n")
    f = symlab.function([], n, updates={n: n - 5}, mode=MODE)
    f()
    assert float(n.get_value()) == -5.0
    g = symlab.function([], n, updates=[(n, n * 0 + 7)], no_default_updates=True, mode=MODE)
    g()
    assert float(n.get_value()) == 7.0  # no_default_updates does not drop explicit updates


def test_a_default_update_using_another_shared_variable_brings_its_default_update_too() -> None:
    b = symlab.shared(np.float64(1.0), name="b")
    b.default_update = b * 2
    a = symlab.shared(np.float64(0.0), name="a")
    a.default_update = a + b  # the function's outputs use only a
    f = symlab.function([], a, mode=MODE)
    assert sorted(str(s) for s, _ in f.maker.updates) == ["a", "b"]
    values = []
    for _ in range(3):
        values.append(float(f()))
    # a <- a + b and b <- 2 b, both from the values before the call: (a, b) = (0, 1), (1, 2), (3, 4), (7, 8)
    assert values == [0.0, 1.0, 3.0]
    assert (float(a.get_value()), float(b.get_value())) == (7.0, 8.0)
    # leaving b out keeps it, and a's update still reads it
    b.set_value(np.float64(1.0))
    a.set_value(np.float64(0.0))
    g = symlab.function([], a, no_default_updates=[b], mode=MODE)
    g()
    g()
    assert (float(a.get_value()), float(b.get_value())) == (2.0, 1.0)


def test_an_explicit_update_using_a_variable_with_a_default_update_brings_it() -> None:
    step = counter("step", start=1.0)
    total = symlab.shared(np.float64(0.0), name="total")
    x = st.dscalar("x")
    f = symlab.function([x], x, updates={total: total + step}, mode=MODE)
    f(0.0)
    f(0.0)
    assert (float(total.get_value()), float(step.get_value())) == (3.0, 3.0)


def test_givens_apply_to_default_updates() -> None:
    step = st.dscalar("step")
    n = symlab.shared(np.float64(0.0), name="n")
    n.default_update = n + step  # the update needs a value of step: givens supply it
    size = symlab.shared(np.float64(5.0), name="size")
    f = symlab.function([], n, givens={step: size * 2}, mode=MODE)
    f()
    f()
    assert float(n.get_value()) == 20.0
    # a default update needing an input that nobody gives is a named error
    with pytest.raises(MissingInputError, match="step"):
        symlab.function([], n, mode=MODE)


def test_givens_replacing_the_shared_variable_drop_its_default_update() -> None:
    n = counter("n")
    other = symlab.shared(np.float64(100.0), name="other")
    f = symlab.function([], n * 1, givens={n: other}, mode=MODE)
    assert float(f()) == 100.0
    assert float(n.get_value()) == 0.0
    assert f.maker.updates == []


@pytest.mark.parametrize(
    ("value", "error", "match"),
    [
        (3, TypeError, r"no_default_updates must be True, False or a list of shared variables, received 3"),
        ([st.dscalar("loose")], TypeError, r"no_default_updates entry 0 must be a shared variable"),
        (["n"], TypeError, r"no_default_updates entry 0 must be a shared variable, received 'n'"),
    ],
)
def test_bad_no_default_updates_values_are_named_errors(value: object, error: type, match: str) -> None:
    n = counter("n")
    with pytest.raises(error, match=match):
        symlab.function([], n, no_default_updates=value, mode=MODE)
    assert float(n.get_value()) == 0.0


def test_a_default_update_of_the_wrong_type_is_a_named_error() -> None:
    n = symlab.shared(np.float64(0.0), name="n")
    n.default_update = st.dvector("v")  # a vector cannot be stored in a scalar
    with pytest.raises(TypeError, match=r"the default_update of n .* cannot be stored in it"):
        symlab.function([], n, mode=MODE)


def test_compiling_changes_no_value_and_not_the_users_graph() -> None:
    b = counter("b", start=1.0)
    a = symlab.shared(np.float64(0.0), name="a")
    a.default_update = a + b
    out = st.exp(a) + 1
    update_expr = a.default_update
    before = [(v, v.owner.op if v.owner else None, list(v.owner.inputs) if v.owner else None)
              for v in ancestors([out, update_expr])]
    for no_defaults in (False, True, [b]):
        symlab.function([], out, no_default_updates=no_defaults, mode=MODE)
        symlab.function([], out, updates={a: a * 3}, mode=MODE)
    assert (float(a.get_value()), float(b.get_value())) == (0.0, 1.0)
    assert a.default_update is update_expr
    after = [(v, v.owner.op if v.owner else None, list(v.owner.inputs) if v.owner else None)
             for v in ancestors([out, update_expr])]
    assert after == before


def test_a_streams_draws_advance_their_generators_by_default() -> None:
    stream = RandomStream(seed=42)
    u = stream.uniform(size=3)
    (rng, next_rng), = stream.state_updates
    start = rng.get_value()
    f = symlab.function([], u, mode=MODE)
    g = symlab.function([], u, no_default_updates=True, mode=MODE)
    h = symlab.function([], u, no_default_updates=[rng], mode=MODE)
    symlab.dprint(f, file="str")
    assert rng.get_value().bit_generator.state == start.bit_generator.state  # compiling and printing draw nothing
    assert [str(s) for s, _ in g.maker.updates] == [] and rng.default_update is next_rng
    expected = start  # a copy of the generator's value, which NumPy advances alongside
    np.testing.assert_array_equal(g(), g())
    np.testing.assert_array_equal(h(), g())
    first = f()
    np.testing.assert_array_equal(first, expected.uniform(size=3))
    np.testing.assert_array_equal(f(), expected.uniform(size=3))  # the generator went on as NumPy's does
    assert rng.get_value().bit_generator.state == expected.bit_generator.state
    # an explicit update of the generator overrides its default update: here, back to where it was
    replay = symlab.function([], u, updates={rng: rng}, mode=MODE)
    np.testing.assert_array_equal(replay(), replay())
