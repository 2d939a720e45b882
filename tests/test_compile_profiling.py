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
