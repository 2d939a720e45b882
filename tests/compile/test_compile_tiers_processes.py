"""Tiered compilation and processes: a fork while a compile thread runs, a process that ends while it compiles.

Each case runs in a fresh Python process with its own disk cache (``SYMLAB_CACHE_DIR``) and the tiered
default on. Where the test needs the compile to be under way at a given moment, the script holds the
worker thread at ``load_compiled`` until it releases it: what happens is decided by the script, not by
timing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

pytestmark = [pytest.mark.numba, pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")]

#: Holds the compile thread until ``release`` is set, then compiles; ``f`` is ``2 * exp(x)``.
PRELUDE = """
import os, sys, threading, time, warnings
import numpy as np
import symlab, symlab.tensor as st
from symlab.compile.numba import background, runner
release, load = threading.Event(), runner.load_compiled
def held(*args, **kwargs):
    release.wait(120)
    return load(*args, **kwargs)
runner.load_compiled = held
x = st.dvector("x")
f = symlab.function([x], st.exp(x) * 2.0)
expected = np.exp(np.arange(4.0)) * 2.0
assert f.tier == "numpy", f.tier
"""


def run(script: str, cache: str, timeout: float = 240) -> subprocess.CompletedProcess:
    env = dict(os.environ, SYMLAB_BACKGROUND_COMPILE="1", SYMLAB_CACHE_DIR=cache)
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, env=env, timeout=timeout
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_a_fork_waits_for_the_compile_and_the_child_runs_the_machine_code(tmp_path):
    script = PRELUDE + """
threading.Timer(0.5, release.set).start()
started = time.perf_counter()
pid = os.fork()  # waits for the compile under way: the child must not inherit a half-done compile
if pid == 0:
    ok = f.tier == "machine code" and np.array_equal(f(np.arange(4.0)), expected)
    os._exit(0 if ok else 3)
waited = time.perf_counter() - started
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status), waited >= 0.4, f.tier, np.array_equal(f(np.arange(4.0)), expected))
"""
    assert run(script, str(tmp_path)).stdout.split() == ["0", "True", "machine", "code", "True"]


def test_a_child_forked_while_the_compile_still_runs_keeps_the_numpy_tier(tmp_path):
    script = PRELUDE + """
background.FORK_WAIT_SECONDS = 0.05  # the compile is held: the fork goes on without it
f(np.arange(4.0))
pid = os.fork()
if pid == 0:
    warnings.simplefilter("error")  # the NumPy tier serves without a warning: the graph did not fail
    ok = (f.wait(timeout=0) and f.tier == "numpy (forked while compiling)"
          and isinstance(f.compile_info.error, runner.ForkedWhileCompiling)
          and all(np.array_equal(f(np.arange(4.0)), expected) for _ in range(3)))
    os._exit(0 if ok else 3)
_, status = os.waitpid(pid, 0)
release.set()
print(os.waitstatus_to_exitcode(status), f.wait(60), f.tier, np.array_equal(f(np.arange(4.0)), expected))
"""
    assert run(script, str(tmp_path)).stdout.split() == ["0", "True", "machine", "code", "True"]


def test_a_multiprocessing_pool_forked_during_the_compile_computes_right(tmp_path):
    script = PRELUDE + """
import multiprocessing
def work(k):
    return float(f(np.full(3, float(k))).sum())
threading.Timer(0.3, release.set).start()
with multiprocessing.get_context("fork").Pool(2) as pool:
    got = pool.map(work, range(6))
print(np.allclose(got, [6 * np.exp(k) for k in range(6)], rtol=0, atol=0), f.tier)
"""
    assert run(script, str(tmp_path)).stdout.split() == ["True", "machine", "code"]


GRAPH = """
import sys, numpy as np, symlab, symlab.tensor as st
x = st.dvector("x")
y = x
for k in range(40):  # a graph that takes Numba a while
    y = st.tanh(y * 0.5 + st.sin(x * (k + 1.0))) + st.log1p(y * y)
f = symlab.function([x], [y, y.sum()])
"""


def test_a_process_that_ends_while_it_compiles_exits_and_leaves_no_entry_that_loads_wrong(tmp_path):
    cache = str(tmp_path)
    first = run(GRAPH + "print(f.tier, float(f(np.linspace(0, 1, 5))[1]))\n", cache)  # exits while compiling
    assert first.stdout.split()[:1] == ["numpy"] and first.stderr == ""  # the compile abandoned without a trace
    # (tests/compile/test_compile_exit_and_sharing.py shows that the exit does not wait for the compile)
    second = run(GRAPH + "f.wait(120); print(f.tier, float(f(np.linspace(0, 1, 5))[1]))\n", cache)
    assert second.stdout.split() == ["machine", "code", first.stdout.split()[1]]


def test_a_process_killed_while_it_compiles_leaves_no_entry_that_loads_wrong(tmp_path):
    cache = str(tmp_path)
    env = dict(os.environ, SYMLAB_BACKGROUND_COMPILE="1", SYMLAB_CACHE_DIR=cache)
    script = GRAPH + "print('compiling', flush=True); import time; time.sleep(120)\n"
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout.readline().strip() == "compiling"
        time.sleep(1.0)  # Numba is writing its files now, or has written some
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(60)
        proc.stdout.close()
    check = GRAPH + """
f.wait(120)
reference = symlab.function([x], [y, y.sum()], mode="NUMPY")
values = np.linspace(0, 1, 5)
print(f.tier, all(np.array_equal(a, b) for a, b in zip(f(values), reference(values))))
"""
    assert run(check, cache).stdout.split() == ["machine", "code", "True"]
