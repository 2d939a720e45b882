"""profile=True: per-node calls and times; compile and call times whose parts add up to the totals."""

import time

import numpy as np
import pytest

import symlab
import symlab.tensor as st
from symlab.compile import ProfileStats


@pytest.mark.parametrize("mode", ["NUMPY", "FAST_COMPILE", "NUMBA", "DEBUG", "NanGuard"])
def test_profile_numbers_add_up(mode):
    x = st.dmatrix("x")
    w = symlab.shared(np.ones(3), name="w")
    out = (st.exp(st.dot(x, w)) * 2.0).sum()
    started = time.perf_counter()
    f = symlab.function([x], out, updates={w: w * 0.5}, mode=mode, profile=True, name="f")
    compile_wall = time.perf_counter() - started
    p = f.profile
    assert isinstance(p, ProfileStats) and p.name == "f" and p.mode == mode
    parts = p.compile_parts()
    assert set(parts) == {"graph", "rewriting", "code generation", "numba compilation", "cache loading", "other"}
    if mode == "NUMBA":  # compiled, or loaded from the disk cache
        assert (parts["numba compilation"] > 0.0) != (parts["cache loading"] > 0.0)
        assert p.cache_hit is (parts["cache loading"] > 0.0)
    else:
        assert parts["numba compilation"] == 0.0 and parts["cache loading"] == 0.0 and p.cache_hit is None
    assert all(v >= 0.0 for v in parts.values())
    assert sum(parts.values()) == pytest.approx(p.compile_seconds, abs=1e-9)
    assert 0.0 < p.compile_seconds <= compile_wall
    assert p.calls == 0 and p.call_seconds == 0.0
    assert len(p.nodes) == len(f.maker.fgraph.toposort())

    wall = 0.0
    for _ in range(3):
        started = time.perf_counter()
        f(np.ones((2, 3)))
        wall += time.perf_counter() - started
    assert p.calls == 3
    assert [s.calls for s in p.nodes] == [3] * len(p.nodes)
    assert [s.node for s in p.nodes] == f.maker.fgraph.toposort()
    call_parts = p.call_parts()
    assert all(v >= 0.0 for v in call_parts.values())
    assert sum(call_parts.values()) == pytest.approx(p.call_seconds, abs=1e-9)
    assert p.node_seconds <= p.call_seconds <= wall
    by_op = p.by_op()
    assert sum(c for c, _ in by_op.values()) == 3 * len(p.nodes)
    assert sum(s for _, s in by_op.values()) == pytest.approx(p.node_seconds)
    text = p.summary()
    assert text.startswith(f"Function profile: f (mode {mode}, linker ")
    for word in ("rewriting", "code generation", "numba compilation", "cache loading", "3 calls"):
        assert word in text
    assert str(p.nodes[0].node) in text


def test_no_profile_by_default_and_failed_calls_are_not_counted():
    x = st.dvector("x")
    assert symlab.function([x], x * 2).profile is None
    f = symlab.function([x], x * 2, profile=True)
    with pytest.raises(TypeError):
        f("abc")
    assert f.profile.calls == 0
    f([1.0])
    assert f.profile.calls == 1


# -- one ProfileStats given to several functions ---------------------------------------------------


@pytest.mark.parametrize("mode", ["NUMPY", "NUMBA"])
def test_a_profile_shared_by_two_functions_keeps_each_functions_numbers(mode):
    together = ProfileStats()
    v = st.dvector("v")
    w = symlab.shared(np.zeros(3), name="w")
    double = symlab.function([v], 2 * v, profile=together, name="double", mode=mode)
    square = symlab.function([v], st.exp(v) ** 2, updates={w: w + v}, profile=together, name="square", mode=mode)
    assert double.profile is together and square.profile is together
    values = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(double(values), 2 * values)
    for _ in range(2):
        np.testing.assert_allclose(square(values), np.exp(values) ** 2)
    np.testing.assert_allclose(w.get_value(), 2 * values)

    first, second = together.functions
    assert (first.name, first.calls, first.mode) == ("double", 1, mode)
    assert (second.name, second.calls, second.mode) == ("square", 2, mode)
    # Each function's node times stay under its own nodes, in its own execution order.
    assert [s.node for s in first.nodes] == double.maker.fgraph.toposort()
    assert [s.node for s in second.nodes] == square.maker.fgraph.toposort()
    assert [s.calls for s in first.nodes] == [1] * len(first.nodes)
    assert [s.calls for s in second.nodes] == [2] * len(second.nodes)
    assert {s.function for s in first.nodes} == {"double"} and {s.function for s in second.nodes} == {"square"}
    assert together.nodes == first.nodes + second.nodes

    # The combined numbers are the sums of the functions'.
    assert together.calls == 3
    for attribute in ("call_seconds", "input_seconds", "update_seconds", "node_seconds", "compile_seconds",
                      "graph_seconds", "rewrite_seconds", "codegen_seconds", "numba_compile_seconds",
                      "cache_load_seconds"):
        assert getattr(together, attribute) == pytest.approx(
            getattr(first, attribute) + getattr(second, attribute), abs=1e-12), attribute
    assert first.update_seconds == 0.0 and second.update_seconds > 0.0
    assert sum(together.compile_parts().values()) == pytest.approx(together.compile_seconds, abs=1e-9)
    assert sum(together.call_parts().values()) == pytest.approx(together.call_seconds, abs=1e-9)
    by_op = together.by_op()
    expected_calls: dict[str, int] = {}
    for part in (first, second):
        for op, (calls, _) in part.by_op().items():
            expected_calls[op] = expected_calls.get(op, 0) + calls
    assert {op: calls for op, (calls, _) in by_op.items()} == expected_calls
    assert sum(seconds for _, seconds in by_op.values()) == pytest.approx(together.node_seconds)
    if mode == "NUMBA":
        assert first.tier_calls == {"machine code": 1} and second.tier_calls == {"machine code": 2}
        assert together.tier_calls == {"machine code": 3}
        assert together.cache_hit is (first.cache_hit and second.cache_hit)
    else:
        assert together.tier_calls == {} and together.cache_hit is None

    text = together.summary()
    assert text.startswith("Profile of 2 functions: double, square (combined)")
    lines = text.splitlines()
    assert any(line.split()[:2] == ["double", "1"] for line in lines), text
    assert any(line.split()[:2] == ["square", "2"] for line in lines), text
    assert "3 calls" in text and "ops, all functions" in text
    for op in by_op:
        assert op in text
    assert first.summary().startswith(f"Function profile: double (mode {mode}, linker ")


def test_a_profile_given_to_one_function_is_that_functions_profile():
    given = ProfileStats()
    x = st.dvector("x")
    f = symlab.function([x], st.exp(x).sum(), profile=given, name="f", mode="NUMPY")
    f([1.0, 2.0])
    assert f.profile is given and given.functions[0].name == "f" and len(given.functions) == 1
    assert (given.name, given.mode, given.linker, given.calls) == ("f", "NUMPY", "numpy", 1)
    assert given.nodes == given.functions[0].nodes
    assert [s.node for s in given.nodes] == f.maker.fgraph.toposort()
    assert given.compile_seconds == given.functions[0].compile_seconds > 0.0
    assert given.summary().startswith("Function profile: f (mode NUMPY, linker numpy)")
    assert "ops, all functions" not in given.summary()


def test_a_function_profile_can_be_given_to_more_functions_and_keeps_its_calls():
    x = st.dvector("x")
    f = symlab.function([x], x + 1, profile=True, mode="NUMPY", name="plus")
    f([1.0])
    g = symlab.function([x], x - 1, profile=f.profile, mode="NUMPY", name="minus")
    g([1.0])
    g([2.0])
    assert [(p.name, p.calls) for p in f.profile.functions] == [("plus", 1), ("minus", 2)]
    assert f.profile.calls == 3 and g.profile is f.profile
    assert f.profile.name == "plus, minus"


def test_a_named_shared_profile_keeps_its_name():
    named = ProfileStats(name="training")
    x = st.dvector("x")
    symlab.function([x], x * 3, profile=named, mode="NUMPY")
    assert named.name == "training" and named.functions[0].name == "training"
    symlab.function([x], x * 4, profile=named, mode="NUMPY", name="eval")
    assert named.name == "training" and [p.name for p in named.functions] == ["training", "eval"]


def test_one_functions_own_profile_cannot_be_given_to_another():
    x = st.dvector("x")
    f = symlab.function([x], x * 2, profile=True, mode="NUMPY", name="f")
    own = f.profile.functions[0]
    with pytest.raises(ValueError, match="one of a combined profile's functions.*give it the combined"):
        symlab.function([x], x * 3, profile=own, mode="NUMPY")
    assert f.profile.functions == [own]


def test_a_copy_does_not_count_in_the_profile():
    x = st.dvector("x")
    f = symlab.function([x], x * 2, profile=True, mode="NUMPY")
    f.copy()([1.0])
    assert f.profile.calls == 0


def test_a_shared_profile_counts_tiers_and_background_compiles_per_function(held):
    """Tiered (background) compiles: each function's tiers and its machine code's readiness under its own
    profile; the combined profile sums them."""
    together = ProfileStats()
    x = st.dvector("x")
    f = symlab.function([x], x * 3, profile=together, name="triple")
    g = symlab.function([x], st.exp(x) + 1, profile=together, name="shifted")
    values = np.arange(3.0)
    np.testing.assert_array_equal(f(values), 3 * values)  # before the machine code: the NumPy tier
    assert together.tier_calls == {"numpy": 1} and together.background_seconds is None
    held.set()
    assert f.wait(timeout=120) and g.wait(timeout=120)
    # The worker records the compile in the profile just after marking the code ready: give it a moment.
    deadline = time.perf_counter() + 30
    while any(p.background_seconds is None for p in together.functions) and time.perf_counter() < deadline:
        time.sleep(0.005)
    np.testing.assert_array_equal(f(values), 3 * values)
    np.testing.assert_allclose(g(values), np.exp(values) + 1)
    triple, shifted = together.functions
    assert triple.tier_calls == {"numpy": 1, "machine code": 1} and shifted.tier_calls == {"machine code": 1}
    assert together.tier_calls == {"numpy": 1, "machine code": 2}
    assert (triple.calls_before_ready, shifted.calls_before_ready, together.calls_before_ready) == (1, 0, 1)
    assert triple.background_seconds > 0 and shifted.background_seconds > 0
    assert together.background_seconds == pytest.approx(triple.background_seconds + shifted.background_seconds)
    assert [s.calls for s in triple.nodes] == [2] * len(triple.nodes)
    assert [s.calls for s in shifted.nodes] == [1] * len(shifted.nodes)
    text = together.summary()
    assert "by tier: numpy 1, machine code 2" in text and "(1 call ran on the NumPy backend before)" in text


def test_a_profile_that_is_not_a_flag_or_a_profilestats_is_refused():
    x = st.dvector("x")
    with pytest.raises(TypeError, match=r"function 'f': profile must be True, False or a ProfileStats, received str 'yes'"):
        symlab.function([x], x * 2, profile="yes", name="f", mode="NUMPY")
    assert symlab.function([x], x * 2, profile=None, mode="NUMPY").profile is None
