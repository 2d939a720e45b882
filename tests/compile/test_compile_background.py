"""Background compilation (``symlab.config.background_compile``).

``symlab.function`` returns once the graph is rewritten and its kernel source
generated; a worker thread then compiles (or loads) the machine code, and calls
made before it is ready run the optimized graph on the NumPy backend. Checked:
values before and after the switch against NumPy, the switch itself (the direct
call path is taken only once the code is ready), calls counted, shared-variable
updates across the switch, a compile failure warned about once at the next call,
the missing-kernel warning given at once, the profile, that the main thread never
imports Numba, and the setting's validation.

The worker is held at ``load_compiled`` by an event, so what runs before the
machine code is ready is decided by the test, not by timing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest

import symlab
import symlab.tensor as st
from symlab.compile.numba import runner as numba_runner
from symlab.config import Config

pytestmark = pytest.mark.numba


def logistic_graph():
    x, w = st.dmatrix("x"), st.dvector("w")
    p = st.sigmoid(st.dot(x, w))
    loss = -st.log(p + 1e-12).mean()
    return [x, w], [loss, symlab.grad(loss, w)]


def logistic_numpy(x, w):
    p = 1 / (1 + np.exp(-(x @ w)))
    loss = -np.log(p + 1e-12).mean()
    grad = -(x.T @ ((1 - p) * p / (p + 1e-12))) / len(x)
    return loss, grad


def test_calls_run_on_numpy_until_the_code_is_ready_then_switch(held):
    inputs, outputs = logistic_graph()
    f = symlab.function(inputs, outputs)
    runner = f.maker.runner
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((30, 4)), rng.standard_normal(4)
    expected = logistic_numpy(x, w)

    assert not runner.ready and runner.compile_info.background
    assert runner.direct_callable() is None  # no machine code to call yet
    for _ in range(3):
        loss, grad = f(x, w)
        np.testing.assert_allclose(loss, expected[0], rtol=1e-12)
        np.testing.assert_allclose(grad, expected[1], rtol=1e-10)
    assert runner.compile_info.calls_before_ready == 3
    assert not f.wait_compiled(timeout=0.01)

    held.set()
    assert f.wait_compiled(timeout=60) and runner.ready
    assert runner.direct_callable() is not None
    assert f._plain_call.__globals__["run"] is runner._fn  # the fast path now calls the machine code itself
    loss, grad = f(x, w)
    np.testing.assert_allclose(loss, expected[0], rtol=1e-12)
    np.testing.assert_allclose(grad, expected[1], rtol=1e-10)
    info = runner.compile_info
    assert info.calls_before_ready == 3 and info.ready_seconds > 0 and info.cache_key and info.cache_hit is not None


def test_results_before_and_after_the_switch_agree_with_the_numpy_mode(held):
    x = st.dvector("x")
    y = st.exp(-(x**2)) * st.sin(x) + st.log1p(x * x) * 0.5
    f = symlab.function([x], y)
    reference = symlab.function([x], y, mode="NUMPY")
    values = np.linspace(-3, 3, 2_500)
    before = f(values)
    held.set()
    f.wait_compiled(timeout=60)
    after = f(values)
    np.testing.assert_array_equal(before, reference(values))
    np.testing.assert_array_equal(after, reference(values))  # the blocked kernel gives NumPy's bits


def test_updates_of_shared_variables_carry_across_the_switch(held):
    count = symlab.shared(np.zeros(3), name="count")
    step = st.dvector("step")
    f = symlab.function([step], count * 2, updates=[(count, count + step)])
    f(np.ones(3))
    f(np.ones(3))
    held.set()
    f.wait_compiled(timeout=60)
    np.testing.assert_array_equal(f(np.ones(3)), [4.0, 4.0, 4.0])
    np.testing.assert_array_equal(count.get_value(), [3.0, 3.0, 3.0])
    assert f.maker.runner.compile_info.calls_before_ready == 2


def test_a_failed_compile_is_warned_about_once_at_the_next_call(monkeypatch, background):
    def broken(*args, **kwargs):
        raise RuntimeError("the compiler broke")

    monkeypatch.setattr(numba_runner, "load_compiled", broken)
    x = st.dvector("x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = symlab.function([x], x * 3)
    assert f.wait_compiled(timeout=60)
    with pytest.warns(UserWarning, match=r"Numba could not compile this graph \(RuntimeError: the compiler broke\)"):
        np.testing.assert_array_equal(f(np.arange(3.0)), [0.0, 3.0, 6.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(f(np.arange(2.0)), [0.0, 3.0])
    assert f.maker.runner.numpy_fallback is not None
    # the exception is kept, and the function says which tier serves it
    assert isinstance(f.compile_info.error, RuntimeError) and str(f.compile_info.error) == "the compiler broke"
    assert f.tier == "numpy (Numba failed)" and "tier='numpy (Numba failed)' (RuntimeError)" in repr(f)


def test_the_tier_wait_and_repr_say_what_serves_the_calls(held):
    x = st.dvector("x")
    f = symlab.function([x], x * 3, name="triple", profile=True)
    assert f.tier == "numpy" and repr(f) == "<symlab Function triple(x) mode=NUMBA tier='numpy' (machine code compiling)>"
    f(np.arange(3.0))
    assert not f.wait(timeout=0) and f.compile_info.ready_seconds is None
    held.set()
    assert f.wait() and f.tier == "machine code" and f.compile_info.ready_seconds > 0
    f(np.arange(3.0))
    f(np.arange(3.0))
    text = repr(f)
    assert text.startswith("<symlab Function triple(x) mode=NUMBA tier='machine code' (ready after ")
    assert text.endswith("; 1 call ran on numpy before)>")
    assert ("from the cache" in text) is bool(f.compile_info.cache_hit)
    assert f.profile.tier_calls == {"numpy": 1, "machine code": 2}
    assert "by tier: numpy 1, machine code 2" in f.profile.summary()
    for bad in (-1, "soon", True):
        with pytest.raises(ValueError, match=rf"timeout must be None or a number of seconds >= 0, received {bad!r}"):
            f.wait(bad)
    # without the tiers, the machine code is ready when symlab.function returns; the NumPy modes have one tier
    symlab.config.background_compile = False
    g = symlab.function([x], x * 3, name="triple")
    assert g.tier == "machine code" and g.wait(timeout=0) and "tier='machine code' (" in repr(g)
    h = symlab.function([x], x * 3, mode="NUMPY")
    assert h.tier == "numpy" and h.compile_info is None and h.wait(0) and "tier" not in repr(h)


def test_calls_from_many_threads_during_the_switch_all_agree(held):
    x = st.dvector("x")
    f = symlab.function([x], st.exp(-(x**2)) * st.sin(x) + st.log1p(x * x) * 0.5, profile=True)
    values = np.linspace(-3, 3, 1_000)
    expected = symlab.function([x], st.exp(-(x**2)) * st.sin(x) + st.log1p(x * x) * 0.5, mode="NUMPY")(values)
    # every thread makes its first call before the compile is released, so calls land on both tiers
    errors, calls, start, first_calls = [], [0] * 4, threading.Barrier(5), threading.Barrier(5)

    def caller(k):
        start.wait()
        try:
            after_ready = 0
            while calls[k] < 300 or after_ready < 20:  # calls on both tiers, and across the switch
                ready = f.wait(0)
                if not np.array_equal(f(values), expected):  # the same bits on either tier
                    errors.append(f"thread {k}: call {calls[k]} differs")
                calls[k] += 1
                if calls[k] == 1:
                    first_calls.wait(60)
                after_ready += ready
                if calls[k] > 200_000:
                    errors.append(f"thread {k}: the machine code never became ready")
                    return
        except Exception as err:  # pragma: no cover - reported below
            errors.append(repr(err))

    threads = [threading.Thread(target=caller, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    start.wait()
    first_calls.wait(60)
    held.set()  # the switch happens while the four threads call
    for t in threads:
        t.join(120)
    assert not errors, errors[:3]
    tiers = f.profile.tier_calls
    assert sum(tiers.values()) == sum(calls)  # each call counted once, under the tier that served it
    assert tiers["numpy"] == f.compile_info.calls_before_ready > 0 and tiers["machine code"] > 0


def test_an_inplace_graph_keeps_its_inputs_and_values_on_both_tiers(held):
    # destructive (inplace) ops write into intermediate results, never into the caller's inputs
    a, x = st.dmatrix("a"), st.dvector("x")
    d = st.dot(a, x)
    out = [st.exp(d) + 1.0, st.set_subtensor(d[1:], 0.0) * 2.0, st.inc_subtensor((x * 2.0)[:2], 1.0)]
    f = symlab.function([a, x], out)
    assert sum(bool(n.op.destroy_map) for n in f.maker.fgraph.apply_nodes) >= 2
    av, xv = np.linspace(-1, 1, 12).reshape(4, 3), np.linspace(1, 2, 3)
    keep = av.copy(), xv.copy()
    d_value = av @ xv
    expected = [np.exp(d_value) + 1.0, np.r_[d_value[:1], 0.0, 0.0, 0.0] * 2.0, xv * 2.0 + [1.0, 1.0, 0.0]]
    before = [f(av, xv) for _ in range(2)]
    held.set()
    f.wait()
    after = [f(av, xv) for _ in range(2)]
    for got in before + after:
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-15)
    for got in after:  # the machine code gives the NumPy tier's bits
        for g, b in zip(got, before[0]):
            np.testing.assert_array_equal(g, b)
    np.testing.assert_array_equal(av, keep[0])
    np.testing.assert_array_equal(xv, keep[1])


def test_an_op_without_a_kernel_is_warned_about_by_symlab_function(held):
    from symlab.graph.basic import Apply
    from symlab.graph.op import Op

    class Twice(Op):
        def make_node(self, x):
            return Apply(self, [x], [x.type()])

        def perform(self, node, inputs, outputs):
            outputs[0][0] = inputs[0] * 2

    x = st.dvector("x")
    with pytest.warns(UserWarning, match="Twice"):
        f = symlab.function([x], Twice()(x) + 1)
    np.testing.assert_array_equal(f(np.arange(3.0)), [1.0, 3.0, 5.0])
    held.set()
    f.wait_compiled(timeout=60)
    np.testing.assert_array_equal(f(np.arange(3.0)), [1.0, 3.0, 5.0])


def test_the_profile_says_what_ran_before_the_code_was_ready(held):
    x = st.dvector("x")
    f = symlab.function([x], (x + 1).sum(), profile=True)
    f(np.arange(4.0))
    assert f.profile.background_seconds is None and f.profile.nodes[0].calls == 1  # the NumPy run was profiled
    held.set()
    f.wait_compiled(timeout=60)
    f(np.arange(4.0))
    p = f.profile
    assert p.calls == 2 and p.calls_before_ready == 1 and p.background_seconds > 0
    assert p.cache_hit is not None
    assert "compiled in the background: machine code ready after" in p.summary()
    assert "(1 call ran on the NumPy backend before)" in p.summary()
    assert abs(sum(p.compile_parts().values()) - p.compile_seconds) < 1e-9  # the worker's time is not compile time


def test_without_the_setting_the_code_is_ready_when_function_returns():
    assert symlab.config.background_compile is False
    x = st.dvector("x")
    f = symlab.function([x], x + 1)
    assert f.maker.runner.ready and not f.maker.runner.compile_info.background
    assert f.wait_compiled(timeout=0) and f.maker.runner.compile_info.calls_before_ready == 0
    assert symlab.function([x], x + 1, mode="NUMPY").wait_compiled(timeout=0)


def test_the_main_thread_never_imports_numba(tmp_path):
    script = """
import sys, threading
import numpy as np
import symlab, symlab.tensor as st
from symlab.compile.numba import runner
release, signature = threading.Event(), runner.numba_signature
def held(*args):  # the worker's first use of Numba waits until the main thread has looked
    release.wait(120)
    return signature(*args)
runner.numba_signature = held
x, y = st.dvector("x"), st.dvector("y")
f = symlab.function([x, y], x + y)
print(f(np.ones(2), np.ones(2)).tolist(), "numba" in sys.modules)
release.set()
f.wait_compiled(timeout=120)
print(f(np.ones(2), np.ones(2)).tolist(), "numba" in sys.modules, f.maker.runner.direct_callable() is not None)
"""
    env = dict(os.environ, SYMLAB_BACKGROUND_COMPILE="1", SYMLAB_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[2.0, 2.0] False", "[2.0, 2.0] True True"]


@pytest.mark.parametrize(("text", "value"), [("", True), ("0", False), ("off", False), ("1", True), ("TRUE", True), ("yes", True)])
def test_the_environment_variable(monkeypatch, text, value):
    monkeypatch.setenv("SYMLAB_BACKGROUND_COMPILE", text)
    assert Config().background_compile is value


def test_bad_settings_are_refused(monkeypatch):
    with pytest.raises(TypeError, match=r"config.background_compile must be True or False, received 'yes'"):
        symlab.config.background_compile = "yes"
    assert symlab.config.background_compile is False
    monkeypatch.setenv("SYMLAB_BACKGROUND_COMPILE", "maybe")
    with pytest.raises(ValueError, match=r"SYMLAB_BACKGROUND_COMPILE must be 1 or 0 .* received 'maybe'"):
        Config()


def test_a_call_that_sees_the_code_become_ready_midway_runs_it_without_a_warning(held):
    """The worker clears the interim runner, then sets ready: a call between the two reads must not warn."""
    x = st.dvector("x")
    f = symlab.function([x], x * 2)
    runner = f.maker.runner
    interim = runner._interim
    held.set()
    f.wait_compiled(timeout=60)
    runner._interim = interim  # as read by a call just before the worker cleared it
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(runner([np.arange(3.0)])[0], [0.0, 2.0, 4.0])
    assert runner._interim is None and runner.numpy_fallback is None
