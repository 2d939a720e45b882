"""Many threads calling one compiled function; no memory growth over many calls, nor over many dropped objects.

Memory is read as the process's resident set (``/proc/self/statm``), which sees every allocator (NumPy's,
Numba's runtime, Python's), after a warm-up that fills the caches a first call fills, and after
``gc.collect()``. A leak of 50 bytes a call would grow 100,000 calls by 5 MB: the limits below are set
under that. Dropped graphs, functions, traces and views must also be collectable: weak references to them
die, so nothing (a client list, a feature, a view registry, IPython's hooks) keeps them.

The counts scale with ``SYMLAB_SOAK_SCALE`` (default 1: the sizes of ``make test``); ``make soak`` runs
this module with 5x more dropped objects (10,000 graphs, functions and traces, 1,000 views) and prints
the figures.
"""

from __future__ import annotations

import gc
import os
import sys
import threading
import weakref

import numpy as np
import pytest

import symlab
import symlab.tensor as st
from symlab.graph.fg import FunctionGraph
from symlab.rewriting import rewrite_graph

SCALE = int(os.environ.get("SYMLAB_SOAK_SCALE", "1"))
CALLS = 100_000
DROPPED = {"graphs": 10_000 * SCALE, "functions": 2_000 * SCALE, "traces": 2_000 * SCALE, "views": 200 * SCALE}

linux_only = pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads /proc/self/statm")


def resident_bytes() -> int:
    gc.collect()
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def report(line: str) -> None:
    """A figure for the reliability report (shown with ``pytest -s`` and by ``make soak``)."""
    print(f"\n[reliability] {line}", file=sys.stderr)


# -- threads ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["NUMBA", "NUMPY", "tiered"])
def test_many_threads_calling_one_function_each_get_their_own_results(mode, request):
    x, y = st.dvectors("x", "y")
    out = [st.exp(-(x**2)) * st.sin(y) + st.log1p(x * x) * 0.5, (x * y).sum()]
    if mode == "tiered":
        request.getfixturevalue("held")  # the switch happens while the threads call (released below)
        f = symlab.function([x, y], out)
    else:
        f = symlab.function([x, y], out, mode=mode)
    n_threads, calls = 8, 400
    errors: list[str] = []
    start = threading.Barrier(n_threads)

    def caller(k: int) -> None:
        rng = np.random.default_rng(k)
        start.wait()
        for c in range(calls):
            a, b = rng.standard_normal(257), rng.standard_normal(257)  # each call its own inputs
            got = f(a, b)
            want = [np.exp(-(a**2)) * np.sin(b) + np.log1p(a * a) * 0.5, (a * b).sum()]
            if not (np.allclose(got[0], want[0], rtol=1e-13, atol=0) and np.isclose(got[1], want[1], rtol=1e-12)):
                errors.append(f"thread {k}, call {c}: a result that is not its own")
            if c == calls // 2 and k == 0 and mode == "tiered":
                request.getfixturevalue("held").set()

    threads = [threading.Thread(target=caller, args=(k,)) for k in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not any(t.is_alive() for t in threads)
    assert not errors, errors[:3]
    report(f"{mode}: {n_threads} threads x {calls} calls of one function, every result its own")


# -- memory over calls -------------------------------------------------------------------------------------


@linux_only
@pytest.mark.parametrize("mode", ["NUMBA", "NUMPY"])
def test_no_memory_growth_over_100000_calls(mode):
    x, y = st.dvectors("x", "y")
    count = symlab.shared(np.zeros(4), name="count")
    f = symlab.function([x, y], [x + y * 2.0, (x * y).sum()], mode=mode)
    g = symlab.function([], count.sum(), updates=[(count, count + 1.0)], mode=mode)  # shared state, updated
    a, b = np.ones(10), np.arange(10.0)
    for _ in range(5_000):  # warm-up: first-call caches, free lists, the allocator's pools
        f(a, b)
        g()
    before = resident_bytes()
    for _ in range(CALLS // 2):
        f(a, b)
        g()
    grown = resident_bytes() - before
    np.testing.assert_array_equal(count.get_value(), np.full(4, 5_000 + CALLS // 2))
    report(f"{mode}: {CALLS:,} calls (two functions, one with updates): resident memory grew {grown / 1e6:.2f} MB")
    assert grown < 2_000_000, f"{grown} bytes more after {CALLS} calls"


# -- memory over dropped objects --------------------------------------------------------------------------


def _graph(k: int):
    x, y = st.dvectors(f"x{k}", "y")
    return [x, y], st.exp(-(x**2)) * st.sin(y) + st.log1p(x * x) * float(k % 7)


def _drop_many(make, n: int) -> tuple[int, int]:
    """Make and drop ``n`` objects (a weak reference to every 10th kept); (resident growth, still alive)."""
    for k in range(min(n, 50)):  # warm-up
        make(k)
    before = resident_bytes()
    refs = []
    for k in range(n):
        obj = make(k)
        if k % 10 == 0:
            refs.append(weakref.ref(obj))
        del obj
    grown = resident_bytes() - before
    return grown, sum(r() is not None for r in refs)


def _make_graph(k: int) -> FunctionGraph:
    inputs, out = _graph(k)
    return FunctionGraph(inputs, [out])


def _make_function(k: int):
    inputs, out = _graph(k)
    f = symlab.function(inputs, out, mode="NUMPY")
    f(np.ones(3), np.ones(3))
    return f


def _make_trace(k: int):
    _, out = _graph(k)
    new, trace = rewrite_graph(out)
    assert trace.replay(len(trace)) is not None  # a read of the trace, as the stepper does
    return trace


#: kind -> (what is made and dropped, how one is made)
DROPPED_KINDS = {
    "graphs": ("graphs (FunctionGraph) made", _make_graph),
    "functions": ("compiled functions made, called", _make_function),
    "traces": ("rewrite traces made, replayed", _make_trace),
}


@linux_only
@pytest.mark.parametrize("kind", sorted(DROPPED_KINDS))
def test_dropped_objects_are_collected(kind):
    what, make = DROPPED_KINDS[kind]
    grown, alive = _drop_many(make, DROPPED[kind])
    report(f"{DROPPED[kind]:,} {what} and dropped: {grown / 1e6:.2f} MB, {alive} alive")
    assert alive == 0 and grown < 8_000_000


@linux_only
def test_dropped_views_and_the_graphs_they_watch_are_collected():
    pytest.importorskip("anywidget")
    import ipywidgets

    from symlab.notebook import GraphView
    from symlab.notebook.inspector import ClientsInspector

    graphs = []
    open_widgets = len(ipywidgets.Widget.widgets)

    def make(k):
        inputs, out = _graph(k)
        fgraph = FunctionGraph(inputs, [out])
        graphs.append(weakref.ref(fgraph))
        view = GraphView(out) if k % 2 else ClientsInspector(fgraph)
        view.select(inputs[1] if k % 2 else fgraph.inputs[1])  # a click: the view reads the graph
        view.close()  # a widget lives until closed (ipywidgets keeps every open one)
        return view

    grown, alive = _drop_many(make, DROPPED["views"])
    graphs_alive = sum(r() is not None for r in graphs)
    report(f"{DROPPED['views']:,} views (GraphView, ClientsInspector) made, closed and dropped: "
           f"{grown / 1e6:.2f} MB, {alive} views and {graphs_alive} watched graphs alive")
    assert alive == 0 and graphs_alive == 0 and grown < 8_000_000
    assert len(ipywidgets.Widget.widgets) == open_widgets  # a closed view leaves no widget (its Layout too)
