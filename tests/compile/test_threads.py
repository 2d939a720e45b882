"""Thread settings of compiled functions (issue 36): ``symlab.config.threads``, ``symlab.function(threads=)``,
:mod:`symlab.compile.threads`.

Checked, on real compiled functions of every kind of parallel work (a softmax and a log-softmax along
each axis, the blocked elementwise loop, the plain ``prange`` loop, the register machine, BLAS products):

* the setting is honoured: during a call, Numba's count, OpenBLAS's count and ``current_threads()`` are
  the function's count (read inside the call, between the thread plan and the compiled code), the
  register machine splits its blocks only when the count allows, and all of them come back after the
  call, also when it raises;
* it is visible: ``f.threads``, ``f.thread_count``, ``repr(f)``, ``compile_info``, the profile,
  ``config.threads`` and ``SYMLAB_THREADS``, copies, the switch of a background compile, NUMPY mode;
* bad settings are refused with a message that names the setting, the expected and the received;
* results do not depend on the count: Numba's kernels give the same bits on one and two threads, BLAS
  products agree within the bound measured below, and both agree with NumPy;
* :class:`~symlab.compile.threads.CoreWatch` on a fake ``/proc/stat`` with a fake clock, and
  ``auto_threads`` on a fake four-CPU machine.

Few compiles: one module-scoped function per kind of work; the variants with a setting of their own
(``threads=1``, ``profile=True``, copies) compile the same graphs and are loaded from the cache.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from oracle import FORMULA_REFERENCE, KERNELS, NUMPY_REFERENCE, REGISTER_MACHINE, assert_same_results

import symlab
import symlab.tensor as st
from symlab.compile import threads as threads_module
from symlab.compile.threads import (
    BUSY_THRESHOLD,
    WATCH_SECONDS,
    CoreWatch,
    ThreadPlan,
    auto_threads,
    current_threads,
    prefer_passive_waiting,
    threading_info,
)
from symlab.config import Config, cpus_allowed, max_threads
from symlab.printing.debugprint import debugprint
from symlab.tensor.special import log_softmax, softmax

numba_test = pytest.mark.numba

#: Two threads where the machine has them; on a one-CPU machine "results across thread counts" has no
#: second count to compare with (the tests that need one say so).
TWO = 2 if max_threads() >= 2 else None


# -- reading the counts in force -------------------------------------------------------------------------------


def _openblas_count_reader() -> Any:
    """OpenBLAS's ``get_num_threads`` in NumPy's BLAS, or None (NumPy without OpenBLAS)."""
    from symlab.compile.numba.numpy_blas_library import LIBRARY

    if LIBRARY is None:
        return None
    library = ctypes.CDLL(LIBRARY.path)
    for name in (
        "scipy_openblas_get_num_threads64_",
        "scipy_openblas_get_num_threads_64_",
        "openblas_get_num_threads64_",
        "openblas_get_num_threads",
    ):
        getter = getattr(library, name, None)
        if getter is not None:
            getter.argtypes, getter.restype = [], ctypes.c_int
            return getter
    return None


BLAS_COUNT = _openblas_count_reader()


def blas_count() -> int:
    if BLAS_COUNT is None:
        assert not threading_info()["blas_threads_settable"]
        pytest.skip("NumPy's BLAS is not OpenBLAS here: its thread count can be neither set nor read")
    return int(BLAS_COUNT())


def numba_count() -> int:
    import numba

    return numba.get_num_threads()


@dataclass
class Inside:
    """What a call saw while the compiled code ran: the count asked for and the counts in force."""

    count: int
    numba_applied: bool
    blas_applied: bool
    numba: int
    blas: int | None
    current: int


@pytest.fixture
def seen(monkeypatch):
    """The calls that applied a thread count, each with the counts in force inside it (read right before
    the compiled code runs, on the calling thread)."""
    calls: list[Inside] = []
    real = threads_module._run_with

    def spy(n, numba_threads, blas, run, args):
        def observed(*values):
            calls.append(Inside(n, numba_threads, blas, numba_count(), BLAS_COUNT and BLAS_COUNT(), current_threads()))
            return run(*values)

        return real(n, numba_threads, blas, observed, args)

    monkeypatch.setattr(threads_module, "_run_with", spy)
    return calls


@pytest.fixture
def vm_splits(monkeypatch):
    """The thread counts the register machine split its blocks for (one entry per split call)."""
    from symlab.compile.numba import elemwise_vm

    splits: list[int] = []
    real = elemwise_vm._pool

    def pool(threads):
        splits.append(threads)
        return real(threads)

    monkeypatch.setattr(elemwise_vm, "_pool", pool)
    return splits


# -- a fake machine: /proc/stat, clock and this process's CPU time ---------------------------------------------


class FakeMachine:
    """A ``/proc/stat`` of the test's own, a clock and this process's CPU seconds, advanced by the test."""

    TICKS = 100

    def __init__(self, path, cpus=(0, 1)) -> None:
        self.path = path
        self.fields = {c: [0] * 10 for c in cpus}  # user nice system idle iowait irq softirq steal guest guest_nice
        self.now = 1000.0
        self.own = 0.0
        self.write()

    def write(self) -> None:
        total = [sum(column) for column in zip(*self.fields.values())]
        lines = [f"cpu  {' '.join(map(str, total))}"]
        lines += [f"cpu{c} {' '.join(map(str, f))}" for c, f in self.fields.items()]
        lines += ["intr 98765 1 2 3", "ctxt 4321", "btime 1700000000", "processes 77", "procs_running 2"]
        self.path.write_text("\n".join(lines) + "\n")

    def advance(self, seconds: float, busy: dict[int, float] | None = None, own: float = 0.0,
                iowait: dict[int, float] | None = None) -> None:
        """``seconds`` pass; CPU ``c`` is busy ``busy[c]`` of the time (half user, half system), waits for
        input or output ``iowait[c]`` of it, idle the rest; this process uses ``own`` CPU seconds."""
        busy, iowait = busy or {}, iowait or {}
        self.now += seconds
        for c, f in self.fields.items():
            ticks = round(seconds * self.TICKS)
            used, waiting = round(busy.get(c, 0.0) * ticks), round(iowait.get(c, 0.0) * ticks)
            f[0] += used // 2
            f[2] += used - used // 2
            f[4] += waiting
            f[3] += ticks - used - waiting
        self.own += own
        self.write()

    def watch(self, cpus=None, interval: float = WATCH_SECONDS) -> CoreWatch:
        return CoreWatch(
            str(self.path), clock=lambda: self.now, own_seconds=lambda: self.own,
            cpus=list(self.fields) if cpus is None else cpus, ticks=self.TICKS, interval=interval,
        )


def watch_seeing(tmp_path, cores: float) -> CoreWatch:
    """A real CoreWatch that has seen other processes use ``cores`` cores, and answers so until the test ends."""
    machine = FakeMachine(tmp_path / f"stat_{cores}", cpus=range(4))
    watch = machine.watch()
    watch.others()
    machine.advance(1.0, busy={c: min(1.0, max(0.0, cores - c)) for c in range(4)})
    assert watch.others() == pytest.approx(cores, abs=0.011)
    return watch  # the fake clock stands still from now on: every later call answers from this read


@pytest.fixture
def idle(monkeypatch, tmp_path):
    """The process's watch sees an idle machine: ``"auto"`` means every thread."""
    monkeypatch.setattr(threads_module, "WATCH", watch_seeing(tmp_path, 0.0))


@pytest.fixture
def one_core_busy(monkeypatch, tmp_path):
    """The process's watch sees another process keep one core busy."""
    monkeypatch.setattr(threads_module, "WATCH", watch_seeing(tmp_path, 1.0))


# -- the compiled functions (one compile per kind of parallel work) ------------------------------------------


def chain(sin, cos, tanh, u, v, w):
    """30 steps of 7 elementwise ops: one fused node of about 210 scalar ops, symbolic or NumPy."""
    for _ in range(30):
        u, v = tanh(sin(u) * 0.5 + cos(v) * 0.25 + w) * 0.9, (sin(u) * 0.5 - cos(v) * 0.25) * 0.9
    return u + v


def np_softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_log_softmax(x, axis):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


@dataclass
class Case:
    """A graph, its function (following ``symlab.config.threads``), inputs that take its parallel path,
    the NumPy reference and the tolerance against it, and what its parallel work is: Numba's parallel
    kernels, the register machine (threads of its own, split by ``current_threads()``), BLAS."""

    inputs: list[Any]
    outputs: Any
    args: list[np.ndarray]
    expected: list[np.ndarray]
    tolerance: Any
    numba: bool
    blas: bool
    machine: bool = False
    f: Any = None

    def compile(self, **kwargs: Any) -> Any:
        return symlab.function(self.inputs, self.outputs, **kwargs)


def _cases() -> dict[str, Case]:
    rng = np.random.default_rng(36)
    x = st.dmatrix("x")
    big = rng.normal(size=(400, 300)) * 3  # 120,000 elements: the softmax's slices run in parallel from 100,000
    a, b = st.dmatrices("a", "b")
    a_v, b_v = rng.normal(size=(500, 401)), rng.normal(size=(500, 401))  # 200,500: parallel from 200,000
    u, v, w = st.dvectors("u", "v", "w")
    chain_args = [rng.normal(size=4001) for _ in range(3)]  # 4001 x ~210 instructions: the machine splits
    p, q, p32, q32 = st.dmatrix("p"), st.dmatrix("q"), st.fmatrix("p32"), st.fmatrix("q32")
    p_v, q_v = rng.normal(size=(300, 200)), rng.normal(size=(200, 100))
    cases = {
        "softmax": Case(
            [x], [softmax(x, axis=0), softmax(x, axis=1), log_softmax(x, axis=0), log_softmax(x, axis=1)], [big],
            [np_softmax(big, 0), np_softmax(big, 1), np_log_softmax(big, 0), np_log_softmax(big, 1)],
            FORMULA_REFERENCE, numba=True, blas=False,
        ),
        "blocked loop": Case(
            [a, b], st.exp(-(a**2)) * st.sin(b) + st.log1p(a * a) * 0.5, [a_v, b_v],
            [np.exp(-(a_v**2)) * np.sin(b_v) + np.log1p(a_v * a_v) * 0.5], KERNELS, numba=True, blas=False,
        ),
        "prange loop": Case(
            [a, b], st.sqrt(a * a + b * b) * 0.5 + a, [a_v, b_v], [np.sqrt(a_v * a_v + b_v * b_v) * 0.5 + a_v],
            KERNELS, numba=True, blas=False,
        ),
        "register machine": Case(
            [u, v, w], chain(st.sin, st.cos, st.tanh, u, v, w), chain_args, [chain(np.sin, np.cos, np.tanh, *chain_args)],
            REGISTER_MACHINE, numba=False, blas=False, machine=True,
        ),
        "BLAS": Case(
            [p, q, p32, q32], [st.dot(p, q), st.dot(p32, q32)],
            [p_v, q_v, p_v.astype("float32"), q_v.astype("float32")],
            [p_v @ q_v, p_v.astype("float32") @ q_v.astype("float32")], NUMPY_REFERENCE, numba=False, blas=True,
        ),
    }
    for case in cases.values():
        case.f = case.compile()
    return cases


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    return _cases()


@pytest.fixture(scope="module")
def plus_one():
    x = st.dvector("x")
    return symlab.function([x], x + 1)


NUMBA_CASES = ["softmax", "blocked loop", "prange loop", "register machine"]
ALL_CASES = [*NUMBA_CASES, "BLAS"]


# -- 1. honoured ---------------------------------------------------------------------------------------------


@numba_test
def test_a_plan_applies_its_count_during_the_call_and_restores_the_counts_after():
    before = (numba_count(), blas_count(), current_threads())
    assert current_threads() == max_threads()  # outside any call: every thread (what the register machine reads)

    def read():
        return numba_count(), blas_count(), current_threads()

    assert ThreadPlan(1, numba=True, blas=True).call(read) == (1, 1, 1)
    assert (numba_count(), blas_count(), current_threads()) == before
    # only what the call uses is set: a call without BLAS leaves OpenBLAS's count alone, and the reverse
    assert ThreadPlan(1, numba=True).call(read) == (1, before[1], 1)
    assert ThreadPlan(1, blas=True).call(read) == (before[0], 1, 1)
    assert ThreadPlan(1).call(read) == before  # nothing parallel: the call runs as it is

    def fails():
        raise RuntimeError(f"raised inside, on {read()}")

    with pytest.raises(RuntimeError, match=r"raised inside, on \(1, 1, 1\)"):
        ThreadPlan(1, numba=True, blas=True).call(fails)
    assert (numba_count(), blas_count(), current_threads()) == before


@numba_test
def test_auto_changes_nothing_on_an_idle_machine_and_gives_up_the_busy_core(idle, seen, monkeypatch, tmp_path):
    plan = ThreadPlan("auto", numba=True, blas=True)
    before = (numba_count(), blas_count(), current_threads())
    assert plan.call(lambda: (numba_count(), blas_count(), current_threads())) == before
    assert seen == []  # no call into Numba or OpenBLAS at all
    assert plan.count() == max_threads()

    monkeypatch.setattr(threads_module, "WATCH", watch_seeing(tmp_path, 1.0))
    expected = max(1, min(max_threads(), cpus_allowed() - 1))
    assert plan.count() == expected
    plan.call(lambda: None)
    if expected == max_threads():  # one CPU: nothing to give up, so nothing set
        assert expected == 1 and seen == []
    else:
        assert [(c.count, c.numba, c.blas, c.current) for c in seen] == [(expected,) * 4]
    assert (numba_count(), blas_count(), current_threads()) == before


@numba_test
@pytest.mark.parametrize("name", ALL_CASES)
def test_threads_1_is_honoured_by_the_real_call(cases, name, seen, vm_splits):
    case = cases[name]
    f = case.compile(threads=1)  # the same graph: loaded, not compiled again
    before = (numba_count(), blas_count(), current_threads())
    assert_same_results(f(*case.args), case.expected, case.tolerance, what=name)
    assert len(seen) == 1
    inside = seen[0]
    assert (inside.count, inside.numba_applied, inside.blas_applied) == (1, case.numba, case.blas)
    assert inside.current == 1
    assert inside.numba == (1 if case.numba else before[0])
    assert inside.blas == (1 if case.blas else before[1])
    assert vm_splits == []  # the register machine never split its blocks
    assert (numba_count(), blas_count(), current_threads()) == before


@numba_test
def test_the_counts_come_back_when_the_compiled_code_raises(cases, seen):
    f = cases["blocked loop"].compile(threads=1)
    before = (numba_count(), blas_count(), current_threads())
    with pytest.raises(ValueError, match="input shapes do not match"):
        f(np.ones((2, 3)), np.ones((3, 2)))
    assert [(c.count, c.numba, c.current) for c in seen] == [(1, 1, 1)]  # it raised inside the applied count
    assert (numba_count(), blas_count(), current_threads()) == before


@numba_test
@pytest.mark.skipif(TWO is None, reason="one CPU: there is no second count whose split could be seen")
def test_the_register_machine_splits_only_as_far_as_the_count_allows(cases, vm_splits):
    f = cases["register machine"].f
    with symlab.config.change_flags(threads=1):
        one = f(*cases["register machine"].args)
    assert vm_splits == []
    with symlab.config.change_flags(threads=TWO):
        two = f(*cases["register machine"].args)
    assert vm_splits == [TWO]
    np.testing.assert_array_equal(one, two)


# -- 2. visible --------------------------------------------------------------------------------------------


@numba_test
def test_compile_info_counts_the_parallel_work(cases, plus_one):
    counts = {name: (c.f.compile_info.parallel_kernels, c.f.compile_info.blas_kernels, c.f.compile_info.vm_nodes)
              for name, c in cases.items()}
    assert counts == {
        "softmax": (4, 0, 0),  # one prange kernel per output
        "blocked loop": (1, 0, 0),
        "prange loop": (1, 0, 0),
        "register machine": (0, 0, 1),
        "BLAS": (0, 1, 0),  # both products (float64, float32) call the one generated dot kernel
    }
    info = plus_one.compile_info
    assert (info.parallel_kernels, info.blas_kernels, info.vm_nodes) == (0, 0, 0)


@numba_test
def test_repr_threads_and_thread_count_say_the_setting(cases, plus_one, idle):
    softmax_1 = cases["softmax"].compile(threads=1)
    assert repr(softmax_1).endswith(" threads=1 (Numba kernels)>")
    assert (softmax_1.threads, softmax_1.thread_count) == (1, 1)
    dot = cases["BLAS"].f
    assert repr(dot).endswith(" threads=auto (BLAS)>")
    assert (dot.threads, dot.thread_count) == ("auto", max_threads())
    assert repr(cases["register machine"].f).endswith(" threads=auto (register machine)>")
    assert "threads=" not in repr(plus_one)  # no parallel work: nothing to say, and nothing applied
    assert (plus_one.threads, plus_one.thread_count) == ("auto", 1)
    with symlab.config.change_flags(threads=TWO or 1):
        assert plus_one.thread_count == 1


@numba_test
def test_thread_count_follows_the_machine_under_auto(cases, one_core_busy):
    f = cases["prange loop"].f
    assert f.threads == "auto"
    assert f.thread_count == max(1, min(max_threads(), cpus_allowed() - 1))


@numba_test
def test_config_threads_changes_the_functions_without_a_setting_of_their_own(cases, seen, idle):
    case = cases["softmax"]
    follows, own = case.f, case.compile(threads="auto")
    with symlab.config.change_flags(threads=1):
        assert symlab.config.threads == 1
        assert (follows.threads, follows.thread_count) == (1, 1)
        assert repr(follows).endswith(" threads=1 (Numba kernels)>")
        assert (own.threads, own.thread_count) == ("auto", max_threads())
        assert repr(own).endswith(" threads=auto (Numba kernels)>")
        follows(*case.args)
        assert [(c.count, c.numba) for c in seen] == [(1, 1)]
        own(*case.args)  # "auto" on an idle machine: nothing applied
        assert len(seen) == 1
    assert symlab.config.threads == "auto" and follows.threads == "auto"
    follows(*case.args)
    assert len(seen) == 1


@numba_test
def test_the_profile_counts_calls_by_threads(cases, idle):
    case = cases["BLAS"]
    fixed = case.compile(threads=1, profile=True)
    for _ in range(2):
        fixed(*case.args)
    assert fixed.profile.thread_calls == {1: 2}
    assert "    by threads: 1 thread 2\n" in fixed.profile.summary() + "\n"
    following = case.compile(profile=True)
    with symlab.config.change_flags(threads=1):
        following(*case.args)
    following(*case.args)  # "auto" on an idle machine: every thread
    expected = {1: 1, max_threads(): 1} if max_threads() > 1 else {1: 2}
    assert following.profile.thread_calls == expected
    line = ", ".join(f"{n} thread{'s' if n > 1 else ''} {k}" for n, k in sorted(expected.items()))
    assert f"by threads: {line}" in following.profile.summary()
    x = st.dvector("x")
    serial = symlab.function([x], x + 1, profile=True)
    serial(np.ones(3))
    assert serial.profile.thread_calls == {} and "by threads" not in serial.profile.summary()


@numba_test
def test_copies_keep_the_setting(cases, seen):
    case = cases["prange loop"]
    fixed = case.compile(threads=1)
    for copy in (fixed.copy(), fixed.copy(share_memory=True), fixed.copy(name="renamed")):
        assert (copy.threads, copy.thread_count) == (1, 1)
        assert repr(copy).endswith(" threads=1 (Numba kernels)>")
        assert_same_results(copy(*case.args), case.expected, case.tolerance)
    assert [c.count for c in seen] == [1, 1, 1]
    following = case.f.copy()
    assert following.threads == "auto"
    with symlab.config.change_flags(threads=1):
        assert following.threads == 1


@numba_test
def test_a_background_compile_switches_the_plan_when_the_code_is_ready(cases, held, seen):
    case = cases["softmax"]
    f = case.compile(threads=1)
    assert f.tier == "numpy"
    assert "threads=" not in repr(f)  # the NumPy tier serves: no Numba kernels yet
    assert (f.threads, f.thread_count) == (1, 1)
    assert_same_results(f(*case.args), case.expected, case.tolerance)
    # on the NumPy tier the count goes to BLAS (NumPy's products, LAPACK), not to Numba
    assert [(c.count, c.numba_applied, c.blas_applied, c.blas, c.current) for c in seen] == [(1, False, True, 1, 1)]
    held.set()
    assert f.wait(timeout=60) and f.tier == "machine code"
    assert repr(f).endswith(" threads=1 (Numba kernels)>")
    assert_same_results(f(*case.args), case.expected, case.tolerance)
    assert [(c.count, c.numba_applied, c.blas_applied, c.numba, c.current) for c in seen[1:]] == [(1, True, False, 1, 1)]


@numba_test
def test_a_numpy_mode_function_applies_its_count_to_blas(cases, seen, idle):
    case = cases["BLAS"]
    f = case.compile(mode="NUMPY", threads=1)
    assert f.compile_info is None and "threads=" not in repr(f)
    assert (f.threads, f.thread_count) == (1, 1)
    assert_same_results(f(*case.args), case.expected, case.tolerance)
    assert [(c.count, c.numba_applied, c.blas_applied, c.blas, c.current) for c in seen] == [(1, False, True, 1, 1)]
    following = case.compile(mode="NUMPY")
    assert (following.threads, following.thread_count) == ("auto", max_threads())


def test_symlab_threads_in_the_environment_is_read_at_import():
    env = {**os.environ, "SYMLAB_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", "import symlab; print(repr(symlab.config.threads))"],
                         env=env, capture_output=True, text=True, timeout=60, check=True).stdout
    assert out.strip() == "1"


@pytest.mark.parametrize(("text", "value"), [("auto", "auto"), (" AUTO ", "auto"), ("1", 1), (" 1 ", 1)])
def test_the_environment_variable_is_read_by_config(monkeypatch, text, value):
    monkeypatch.setenv("SYMLAB_THREADS", text)
    assert Config().threads == value


# -- 3. bad input ------------------------------------------------------------------------------------------------


#: Bad settings: none, more threads than the machine has (3 on two CPUs), words, booleans, fractions.
BAD = [0, -1, max_threads() + 1, "many", "", True, False, 1.5, 2.0, None, [1]]


def _expected_message(where: str, value: Any) -> str:
    import re

    return re.escape(f"{where} must be 'auto' or a number of threads from 1 to {max_threads()}, received {value!r}")


@pytest.mark.parametrize("value", [v for v in BAD if v is not None], ids=repr)
def test_function_refuses_a_bad_setting_and_leaves_the_graph_as_it_was(value):
    x = st.dvector("x")
    out = st.exp(x) * 2.0
    before = debugprint(out, file="str")
    with pytest.raises(ValueError, match=_expected_message("function 'scaled': threads", value)):
        symlab.function([x], out, name="scaled", threads=value)
    with pytest.raises(ValueError, match=_expected_message("function: threads", value)):
        symlab.function([x], out, threads=value)
    assert debugprint(out, file="str") == before


@pytest.mark.parametrize("value", BAD, ids=repr)
def test_config_refuses_a_bad_setting_and_keeps_its_own(value):
    assert symlab.config.threads == "auto"
    with pytest.raises(ValueError, match=_expected_message("config.threads", value)):
        symlab.config.threads = value
    with pytest.raises(ValueError, match=_expected_message("config.threads", value)):
        with symlab.config.change_flags(floatX="float32", threads=value):
            pass
    assert symlab.config.threads == "auto" and symlab.config.floatX == "float64"


def test_a_bad_environment_variable_is_refused_naming_it(monkeypatch):
    monkeypatch.setenv("SYMLAB_THREADS", "many")
    with pytest.raises(ValueError, match=_expected_message("SYMLAB_THREADS", "many")):
        Config()


# -- 4. results equal across thread counts --------------------------------------------------------------------


@numba_test
@pytest.mark.parametrize("name", NUMBA_CASES)
def test_numba_kernels_give_the_same_bits_on_any_number_of_threads(cases, name, seen, vm_splits):
    case = cases[name]
    counts = [1, TWO] if TWO else [1]
    results = {}
    for n in counts:
        with symlab.config.change_flags(threads=n):
            results[n] = case.f(*case.args)
        assert_same_results(results[n], case.expected, case.tolerance, what=f"{name} on {n} threads")
    assert [(c.count, c.current) for c in seen] == [(n, n) for n in counts]
    if case.numba:
        assert [c.numba for c in seen] == counts
    else:  # the register machine: its own threads, one split per call on more than one
        assert vm_splits == counts[1:]
    if TWO is None:
        assert max_threads() == 1
        pytest.skip("one CPU: only the agreement with NumPy could be checked; there is no second thread count")
    assert_same_results(results[TWO], results[1], "bits", what=f"{name}: {TWO} threads against 1")


#: How far a product computed on one OpenBLAS thread and on two may differ, element by element, in units
#: of ``eps * (|A| @ |B|)`` (the size of one rounding of the sum of the absolute products). OpenBLAS splits
#: the sums of some shapes between its threads; measured on this machine (OpenBLAS 0.3.31, 1 vs 2
#: threads): 0 for 300x200 @ 200x100 (the same bits), at most 0.83 for 300x400 @ 400x100 and 0.92 for
#: 300x200 @ 200x300, 0.75 (float64) / 0.80 (float32) for 400x600 @ 600x300, 1.01 (float32)
#: for 1000x784 @ 784x256. Relative to each element the difference is unbounded where the sum cancels
#: (a relative 0.67 was seen in float32 near zero), so the bound is on the absolute products: 4 of them.
BLAS_ROUNDINGS = 4.0


@numba_test
@pytest.mark.parametrize("shapes", [((300, 200), (200, 100)), ((400, 600), (600, 300))], ids=["300x200x100", "400x600x300"])
def test_blas_products_agree_across_thread_counts_within_the_measured_bound(cases, shapes, seen):
    case = cases["BLAS"]
    rng = np.random.default_rng(7)
    p, q = rng.normal(size=shapes[0]), rng.normal(size=shapes[1])
    args = [p, q, p.astype("float32"), q.astype("float32")]
    counts = [1, TWO] if TWO else [1]
    results = {}
    for n in counts:
        with symlab.config.change_flags(threads=n):
            results[n] = case.f(*args)
            again = case.f(*args)
        assert_same_results(again, results[n], "bits", what=f"the same product twice on {n} threads")
        assert_same_results(results[n], [p @ q, args[2] @ args[3]], NUMPY_REFERENCE, what=f"{n} threads")
    assert [(c.count, c.blas) for c in seen] == [(n, n) for n in counts for _ in range(2)]
    if TWO is None:
        assert max_threads() == 1
        pytest.skip("one CPU: only the agreement with NumPy could be checked; there is no second thread count")
    for k, (left, right) in enumerate([(p, q), (args[2], args[3])]):
        one, two = results[1][k], results[TWO][k]
        scale = np.abs(left).astype("float64") @ np.abs(right).astype("float64")
        roundings = np.abs(one.astype("float64") - two) / (np.finfo(one.dtype).eps * scale)
        assert roundings.max() <= BLAS_ROUNDINGS, f"{one.dtype}: {roundings.max():.2f} roundings apart"


# -- 5. the watch of the other processes, "auto", the wait policy ------------------------------------------------


def test_the_watch_sees_an_idle_machine_and_a_busy_core(tmp_path):
    machine = FakeMachine(tmp_path / "stat")
    watch = machine.watch()
    assert watch.available and watch.others() == 0.0  # the first read has nothing to compare with
    machine.advance(1.0)
    assert watch.others() == 0.0
    machine.advance(0.5, busy={1: 1.0})  # another process runs flat out on CPU 1
    assert watch.others() == pytest.approx(1.0)
    machine.advance(2.0, busy={0: 0.5, 1: 0.25})
    assert watch.others() == pytest.approx(0.75)
    machine.advance(1.0, iowait={0: 1.0, 1: 0.5})  # waiting for the disk is not using a core
    assert watch.others() == 0.0


def test_the_watch_subtracts_this_process_own_time(tmp_path):
    machine = FakeMachine(tmp_path / "stat")
    watch = machine.watch()
    watch.others()
    machine.advance(1.0, busy={0: 1.0, 1: 1.0}, own=2.0)  # both cores busy, all of it this process's threads
    assert watch.others() == 0.0
    machine.advance(1.0, busy={0: 1.0, 1: 1.0}, own=1.0)  # this process one core, another process the other
    assert watch.others() == pytest.approx(1.0)
    machine.advance(1.0, busy={0: 0.5}, own=1.0)  # more own time than the counters show (rounding): not negative
    assert watch.others() == 0.0


def test_the_watch_counts_only_its_cpus(tmp_path):
    machine = FakeMachine(tmp_path / "stat", cpus=(0, 1, 2, 3))
    watch = machine.watch(cpus=[0, 2])
    watch.others()
    machine.advance(1.0, busy={1: 1.0, 3: 1.0})  # busy, but on CPUs this process may not run on
    assert watch.others() == 0.0
    machine.advance(1.0, busy={1: 1.0, 2: 1.0, 3: 1.0})
    assert watch.others() == pytest.approx(1.0)


def test_the_watch_reads_at_most_every_interval(tmp_path):
    machine = FakeMachine(tmp_path / "stat")
    watch = machine.watch()
    watch.others()
    machine.advance(1.0, busy={1: 1.0})
    assert watch.others() == pytest.approx(1.0)
    machine.advance(WATCH_SECONDS / 2)  # an idle 0.1 s: not read yet, the last answer stands
    assert watch.others() == pytest.approx(1.0)
    (tmp_path / "stat").unlink()  # not even opened before the interval is over
    assert watch.others() == pytest.approx(1.0) and watch.available
    machine.now += WATCH_SECONDS
    assert watch.others() == 0.0 and not watch.available  # read now: the file has gone
    machine.write()
    machine.advance(1.0, busy={0: 1.0})
    assert watch.others() == 0.0  # once unavailable, it stays so: no file is opened again


def test_a_missing_stat_file_means_no_other_process(tmp_path):
    watch = CoreWatch(str(tmp_path / "no such file"), clock=lambda: 0.0, own_seconds=lambda: 0.0, cpus=[0])
    assert not watch.available and watch.others() == 0.0
    assert auto_threads(watch) == threads_module._MAX_THREADS


def test_auto_threads_gives_up_one_thread_per_busy_core(tmp_path, monkeypatch):
    monkeypatch.setattr(threads_module, "_MAX_THREADS", 4)
    monkeypatch.setattr(threads_module, "cpus_allowed", lambda: 4)
    for cores, expected in [(0.0, 4), (BUSY_THRESHOLD - 0.05, 4), (0.6, 3), (1.0, 3), (1.4, 3), (2.0, 2),
                            (2.6, 1), (3.0, 1), (4.0, 1)]:
        assert auto_threads(watch_seeing(tmp_path, cores)) == expected, f"{cores} cores busy"
    # the process's own watch is the default
    monkeypatch.setattr(threads_module, "WATCH", watch_seeing(tmp_path, 1.0))
    assert auto_threads() == 3


def test_auto_threads_on_this_machine(tmp_path):
    assert auto_threads(watch_seeing(tmp_path, 0.0)) == max_threads()
    assert auto_threads(watch_seeing(tmp_path, 1.0)) == max(1, min(max_threads(), cpus_allowed() - 1))


def test_passive_waiting_keeps_the_users_own_policy(monkeypatch):
    monkeypatch.setattr(threads_module, "WAIT_POLICY_NOTE", threads_module.WAIT_POLICY_NOTE)
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    assert prefer_passive_waiting() == "OMP_WAIT_POLICY=ACTIVE (from the environment)"
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"
    assert threading_info()["wait_policy"] == "OMP_WAIT_POLICY=ACTIVE (from the environment)"

    monkeypatch.delenv("OMP_WAIT_POLICY")
    monkeypatch.setattr(threads_module, "_openmp_loaded", lambda: True)
    assert prefer_passive_waiting().startswith("left as it was: an OpenMP runtime was loaded before")
    assert "OMP_WAIT_POLICY" not in os.environ

    monkeypatch.setattr(threads_module, "_openmp_loaded", lambda: False)
    assert prefer_passive_waiting() == "OMP_WAIT_POLICY=PASSIVE (set by symlab: idle threads sleep)"
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"


@numba_test
def test_threading_info_says_what_the_process_does(cases, idle):
    cases["softmax"].f(*cases["softmax"].args)  # a parallel call: Numba has chosen its threading layer
    info = threading_info()
    assert sorted(info) == ["auto_threads", "blas_threads_settable", "config_threads", "max_threads", "numba_layer",
                            "other_processes_cores", "wait_policy"]
    assert info["max_threads"] == max_threads() and info["config_threads"] == "auto"
    assert info["auto_threads"] == max_threads() and info["other_processes_cores"] == 0.0
    assert isinstance(info["wait_policy"], str) and "OMP_WAIT_POLICY" in info["wait_policy"]
    assert info["blas_threads_settable"] is (BLAS_COUNT is not None)
    assert info["numba_layer"] in ("omp", "tbb", "workqueue")
    with symlab.config.change_flags(threads=1):
        assert threading_info()["config_threads"] == 1


def test_the_blas_count_is_restored_when_calls_on_two_threads_overlap():
    """OpenBLAS's count is one for the whole process (NumPy's OpenBLAS uses pthreads: its
    ``openblas_set_num_threads_local`` sets the global count): calls on two threads that overlap must
    not leave it at their count when both are over."""
    before = blas_count()
    entered, release = threading.Event(), threading.Event()

    def held_call():
        ThreadPlan(1, blas=True).call(lambda: (entered.set(), release.wait(10)))

    other = threading.Thread(target=held_call)
    other.start()
    assert entered.wait(10)
    try:
        # this thread's call starts while the other's holds the count, and ends after it
        def inner():
            release.set()
            other.join(10)
            return blas_count()

        # the other call ended first: this one still runs on its own count, not on the other's "before"
        assert ThreadPlan(1, blas=True).call(inner) == 1
    finally:
        release.set()
        other.join(10)
    assert blas_count() == before  # both over: the count from before the first

    if TWO is None:
        return  # one CPU: no second count to nest (the overlap above is the whole check)
    # a call inside a call on the same thread (an op's Python code calling a function) gets its count
    # back when the inner one ends
    outer = ThreadPlan(1, blas=True)
    assert outer.call(lambda: (blas_count(), ThreadPlan(TWO, blas=True).call(blas_count), blas_count())) == (1, TWO, 1)
    assert blas_count() == before
