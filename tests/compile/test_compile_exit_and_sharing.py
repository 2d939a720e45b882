"""Leaving promptly, and processes sharing one cache.

*Leaving promptly.* A process that has its answers exits at once: the background compiles still under
way are abandoned (``symlab.compile.numba.background._at_exit``), without a traceback or a crash, and without
leaving an entry a later process would load wrong; ``symlab.compile.wait_all()`` waits for them instead.
The subprocess tests decide what is under way at exit (a compile held before Numba, or a compile inside
an LLVM call), never by timing: a process that waited for its compile would wait for ever (the held
case), or would leave the compiled entry behind (the LLVM case).

*Sharing one cache.* Compile threads of one process import the same generated modules (graphs share
kernels); a module half run was visible to the other threads (``AttributeError: ... has no attribute
'kernel'``, or ``ImportError: cannot import name 'kernel'`` when a kernel module was being run afresh).
Tested here directly, by holding a module's run, and with four processes compiling the same and
different graphs at once in one cache directory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import types

import numpy as np
import pytest

import symlab
import symlab.tensor as st
from symlab.compile.numba import cache, cache_lock

pytestmark = pytest.mark.numba


def run(script: str, cache_dir, timeout: float = 240) -> subprocess.CompletedProcess:
    """Run ``script`` in a fresh process with the tiered default and the cache ``cache_dir``; it must succeed."""
    env = dict(os.environ, SYMLAB_BACKGROUND_COMPILE="1", SYMLAB_CACHE_DIR=str(cache_dir))
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, env=env, timeout=timeout
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def entries(cache_dir) -> list[str]:
    """The entry folders of the cache ``cache_dir`` (none if it was never made)."""
    return sorted(os.listdir(cache_dir)) if os.path.isdir(cache_dir) else []


# -- leaving promptly ----------------------------------------------------------------------------------------------
HELD_BEFORE_NUMBA = """
import atexit, json, sys, threading

def after_symlab_exit_hook():  # registered before symlab's, so it runs after it: the compile is abandoned by then
    print(json.dumps({"tier": f.tier, "error": type(f.compile_info.error).__name__,
                      "value": f(np.arange(3.0)).tolist(), "wait_all": symlab.compile.wait_all(timeout=0)}))

atexit.register(after_symlab_exit_hook)
import numpy as np
import symlab, symlab.tensor as st
from symlab.compile.numba import runner
never, signature = threading.Event(), runner.numba_signature
def held(*args):  # the worker stops before its first use of Numba, for ever: only an exit that does not wait ends
    never.wait()
    return signature(*args)
runner.numba_signature = held
x = st.dvector("x")
f = symlab.function([x], st.exp(x) * 3.0 - x)
print(json.dumps({"tier": f.tier, "value": f(np.arange(3.0)).tolist()}))
"""


def test_a_process_exits_at_once_abandoning_a_compile_that_never_ends(tmp_path):
    done = run(HELD_BEFORE_NUMBA, tmp_path / "cache", timeout=120)  # a wait for the compile would never end
    first, at_exit = (json.loads(line) for line in done.stdout.splitlines())
    expected = (np.exp(np.arange(3.0)) * 3.0 - np.arange(3.0)).tolist()
    assert first == {"tier": "numpy", "value": expected}
    # Code run by a later exit hook computes right, on the NumPy tier, and has nothing left to wait for.
    assert at_exit == {"tier": "numpy (compile abandoned at exit)", "error": "CompileAbandoned", "value": expected,
                       "wait_all": True}
    assert done.stderr == ""  # no traceback, no warning
    assert entries(tmp_path / "cache") == []  # nothing was written


INSIDE_LLVM = """
import atexit, json, sys, threading

def after_symlab_exit_hook():  # runs after symlab's: no other thread may enter LLVM any more
    print(json.dumps({{"llvm_lock_kept_by_the_exit": ffi.lib._lock._lock._is_owned()}}), flush=True)

atexit.register(after_symlab_exit_hook)
import numpy as np
import symlab, symlab.tensor as st
from llvmlite.binding import ffi
from symlab.compile.numba import cache

compiling, inside_llvm, prepare = threading.Event(), threading.Event(), cache.load_without_refresh
def marked(dispatcher):  # the worker's next step is Numba compiling the graph function (and its kernels)
    compiling.set()
    return prepare(dispatcher)
cache.load_without_refresh = marked
def entered():  # called by llvmlite once it holds its lock, just before each call into LLVM
    if compiling.is_set() and threading.current_thread().name == "symlab-numba-compile":
        inside_llvm.set()
ffi.register_lock_callback(entered, lambda: None)
x = st.dvector("x")
y = x
for k in range(8):
    y = st.tanh(y * 0.5 + st.sin(x * (k + 1.0))) + st.log1p(y * y) * {factor}
f = symlab.function([x], [y, y.sum()])
assert inside_llvm.wait(120)
print(json.dumps({{"tier": f.tier, "key": cache.cache_key(f._runner.generated.source),
                  "value": float(f(np.linspace(0, 1, 5))[1])}}), flush=True)
"""

NEXT_PROCESS = """
import json
import numpy as np
import symlab, symlab.tensor as st
x = st.dvector("x")
y = x
for k in range(8):
    y = st.tanh(y * 0.5 + st.sin(x * (k + 1.0))) + st.log1p(y * y) * {factor}
f = symlab.function([x], [y, y.sum()])
reference = symlab.function([x], [y, y.sum()], mode="NUMPY")
values = np.linspace(0, 1, 5)
ready = symlab.compile.wait_all()
info = f.compile_info
print(json.dumps({{"ready": ready, "tier": f.tier, "hit": info.cache_hit, "reason": info.miss_reason,
                  "error": repr(info.error), "key": info.cache_key, "value": float(f(values)[1]),
                  "same": all(np.array_equal(a, b) for a, b in zip(f(values), reference(values)))}}))
"""


def test_a_process_exits_while_numba_is_inside_llvm_and_the_next_one_compiles_right(tmp_path):
    cache_dir = tmp_path / "cache"
    factor = 0.375  # a graph no other test compiles
    first = run(INSIDE_LLVM.format(factor=factor), cache_dir)
    assert first.stderr == ""  # no crash, no traceback, no warning
    got, at_exit = (json.loads(line) for line in first.stdout.splitlines())
    assert got["tier"] == "numpy"
    # The worker, inside an LLVM call when the exit began, never enters LLVM again: a thread running LLVM's code
    # while the process runs LLVM's static destructors crashes it.
    assert at_exit == {"llvm_lock_kept_by_the_exit": True}
    graph_entry = cache_dir / got["key"]
    indexes = sorted(p.name for p in (graph_entry / "__pycache__").glob("*.nbi")) if graph_entry.is_dir() else []
    assert indexes == []  # the exit did not wait for the compile: its graph function was never saved

    second = json.loads(run(NEXT_PROCESS.format(factor=factor), cache_dir).stdout)
    assert second["key"] == got["key"] and second["error"] == "None"
    assert second["ready"] and second["tier"] == "machine code" and second["same"]
    assert second["hit"] is False and second["value"] == got["value"]
    assert any(p.name.endswith(".nbi") for p in (graph_entry / "__pycache__").iterdir())  # wait_all() saved it

    third = json.loads(run(NEXT_PROCESS.format(factor=factor), cache_dir).stdout)
    assert third["hit"] is True and third["reason"] is None and third["same"] and third["value"] == got["value"]


def test_wait_all_waits_for_every_compile_under_way(held):
    x = st.dvector("x")
    f = symlab.function([x], st.sqrt(x + 1.0) * 1.75)
    g = symlab.function([x], [st.sqrt(x + 1.0).sum(), x * 1.75])
    assert f.tier == g.tier == "numpy"
    assert symlab.compile.wait_all(timeout=0.01) is False  # both held
    held.set()
    assert symlab.compile.wait_all() is True
    assert f.tier == g.tier == "machine code"
    a = np.arange(4.0)
    np.testing.assert_allclose(f(a), np.sqrt(a + 1.0) * 1.75, rtol=1e-15)
    assert symlab.compile.wait_all(timeout=0) is True  # nothing under way


@pytest.mark.parametrize("timeout", [-1.0, "1", True])
def test_wait_all_refuses_a_bad_timeout(timeout):
    with pytest.raises(ValueError, match=rf"wait_all: timeout must be None or a number of seconds >= 0, received {timeout!r}"):
        symlab.compile.wait_all(timeout)


def test_a_closed_cache_gives_no_lock_and_entries_compile_in_memory(tmp_path, monkeypatch):
    """What the exit does to the cache, on a copy of its state: no lock from now on; a new entry stays in memory."""
    monkeypatch.setattr(cache_lock, "_closed", False)
    monkeypatch.setenv("SYMLAB_CACHE_DIR", str(tmp_path))
    folder = tmp_path / "entry"
    folder.mkdir(mode=0o700)
    with cache.entry_lock(folder):
        assert cache.close(timeout=0.01) is False  # a lock is held: close waits for it (here, no longer than told)
    assert cache.close(timeout=0.01) is True
    with pytest.raises(cache.CacheClosed, match="the disk cache is closed"), cache.entry_lock(folder):
        pass
    entry = cache.prepare_entry("def kernel():\n    return 1\n", main="kernel")
    assert not entry.disk and entry.miss_reason == f"{cache.REFUSED}: {cache.CLOSED}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entry"]  # nothing written


# -- sharing one cache ---------------------------------------------------------------------------------------------
GATED_SOURCE = """
import sys
gate = sys.modules["symlab_test_gate"]
gate.running.set()
gate.release.wait(60)
kernel = gate.value
"""


@pytest.fixture
def gate(monkeypatch, tmp_path):
    """A module source whose run waits for ``gate.release``: the test holds a module half run."""
    monkeypatch.setenv("SYMLAB_CACHE_DIR", str(tmp_path))
    gate = types.ModuleType("symlab_test_gate")
    gate.running, gate.release, gate.value = threading.Event(), threading.Event(), "first"
    monkeypatch.setitem(sys.modules, "symlab_test_gate", gate)
    name = "symlab_test_gated_kernel"
    yield gate, cache.prepare_entry(GATED_SOURCE, main="kernel"), name
    gate.release.set()
    sys.modules.pop(name, None)


def import_in_thread(entry, name, fresh=False):
    got = {}
    thread = threading.Thread(target=lambda: got.setdefault("module", cache.import_entry(entry, fresh=fresh, name=name)))
    thread.start()
    return thread, got


def test_a_module_half_run_is_not_visible_to_other_threads(gate):
    gate, entry, name = gate
    thread, got = import_in_thread(entry, name)
    assert gate.running.wait(30)
    assert name not in sys.modules  # published only once it has run whole
    other, other_got = import_in_thread(entry, name)  # waits for the first run, then reuses its module
    gate.release.set()
    thread.join(30)
    other.join(30)
    assert got["module"].kernel == "first" and other_got["module"] is got["module"] is sys.modules[name]


def test_a_module_run_afresh_leaves_the_previous_one_in_place_until_it_has_run(gate):
    gate, entry, name = gate
    gate.release.set()
    previous = cache.import_entry(entry, name=name)
    gate.release.clear()
    gate.running.clear()
    gate.value = "second"
    thread, got = import_in_thread(entry, name, fresh=True)
    assert gate.running.wait(30)
    # What a graph module does while another thread runs its kernel's module afresh (the ImportError seen):
    scope: dict = {}
    exec(f"from {name} import kernel", scope)  # noqa: S102 - a fixed import statement
    assert scope["kernel"] == "first" and sys.modules[name] is previous
    gate.release.set()
    thread.join(30)
    assert got["module"].kernel == "second" and sys.modules[name] is got["module"]


def test_a_module_whose_run_fails_is_never_published(tmp_path, monkeypatch):
    monkeypatch.setenv("SYMLAB_CACHE_DIR", str(tmp_path))
    entry = cache.prepare_entry("kernel = 1\nraise RuntimeError('half run')\n", main="kernel")
    with pytest.raises(RuntimeError, match="half run"):
        cache.import_entry(entry, name="symlab_test_failing_kernel")
    assert "symlab_test_failing_kernel" not in sys.modules


SHARING = """
import json, sys, warnings
warnings.simplefilter("always")
import numpy as np
import symlab, symlab.tensor as st
process, factor = int(sys.argv[1]), float(sys.argv[2])
x, y = st.dvectors("x", "y")
a, b = np.linspace(0, 1, 6), np.linspace(1, 2, 6)
graphs = [  # kernels shared among them: exp(x) * y, the sums, the dot product
    (lambda x, y: (st.exp(x) * y).sum() + st.dot(x, y), lambda: (np.exp(a) * b).sum() + a @ b),
    (lambda x, y: (st.exp(x) * y).sum() * factor + st.dot(x, y), lambda: (np.exp(a) * b).sum() * factor + a @ b),
    (lambda x, y: st.dot(x, y) + (x * y).sum(), lambda: a @ b + (a * b).sum()),
    (lambda x, y: (st.exp(x) * y).sum() - x.sum(), lambda: (np.exp(a) * b).sum() - a.sum()),
]
chosen = [process % 4, (process + 1) % 4, (process + 2) % 4][:: 1 if process % 2 else -1]
with warnings.catch_warnings(record=True) as caught:
    functions = [(k, symlab.function([x, y], graphs[k][0](x, y))) for k in chosen]
    ready = symlab.compile.wait_all(timeout=200)
    results = {k: [f.tier, repr(f.compile_info.error), bool(np.isclose(f(a, b), graphs[k][1](), rtol=1e-13, atol=0))]
               for k, f in functions}
print(json.dumps({"ready": ready, "results": results, "warnings": [str(w.message)[:300] for w in caught]}))
"""


def test_four_processes_compile_the_same_and_different_graphs_in_one_cache(tmp_path):
    env = dict(os.environ, SYMLAB_BACKGROUND_COMPILE="1", SYMLAB_CACHE_DIR=str(tmp_path / "cache"))
    for factor in (0.5, 0.25, 0.5):  # a cold cache; a new graph function beside loaded kernels; all loaded
        procs = [
            subprocess.Popen([sys.executable, "-c", SHARING, str(p), str(factor)], env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for p in range(4)
        ]
        outs = [proc.communicate(timeout=400) for proc in procs]
        for proc, (out, err) in zip(procs, outs):
            assert proc.returncode == 0 and err == "", err[-3000:]
            got = json.loads(out)
            assert got["ready"] and got["warnings"] == [], got
            assert len(got["results"]) == 3
            for k, (tier, error, right) in got["results"].items():
                assert (tier, error, right) == ("machine code", "None", True), (factor, k, tier, error)
