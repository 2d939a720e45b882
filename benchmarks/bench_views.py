"""How fast the views answer: walking a rewrite trace step by step (and, as they come, clicks and steps).

Run alone: ``.venv/bin/python benchmarks/bench_views.py [--quick]``; ``make bench`` runs it after the
workloads and saves its rows with theirs. Each row is a figure, its limit and PASS/FAIL.

Graph view (issue 18): the time to open a ``GraphView`` until its first picture is rendered, and the
time Python takes to answer a selection (details, marks), on graphs of 10, 200 and 2,000 nodes
(``tanh(h) * y`` repeated). Limits: a selection under 50 ms; a first picture under 300 ms at 200 nodes
and under 1 s at 2,000 (folded).

Rewrite stepper (issue 19): the time Python takes to show the next step (both panes rendered), on
the seed examples (``a + a ** 10``, ``x * y / y``) and on the rewrites of the 2,000- and 10,000-node
chains of ``make bench``, drawn around each change. Limits: 100 ms up to 200 nodes, 500 ms on the chains.

Clients inspector (issue 20): what following a graph costs the rewrites that change it (a 400-block
chain rewritten with an inspector attached, against the same rewrite without; limit 1.25x), and the
time to redraw after a ``replace`` (compare the graph with the last picture, say what changed, render)
on graphs of 10, 200 and 2,000 nodes. Limits: 300 ms up to 200 nodes, 1 s at 2,000 (folded).

Values view: the time Python takes to answer a slider move (``view.set``: re-evaluate the
values and the gradients, redraw the picture), on micrograd's neuron (``tanh(x1*w1 + x2*w2 + b)``,
gradients with respect to its five inputs) and on a 200-node graph (``tanh(h) * y`` repeated, scalars,
gradients with respect to ``x`` and ``y``; the picture folded at the view's default size). Limits:
100 ms on the neuron, 300 ms at 200 nodes.

Inner graphs opened in place (issue 32): the time ``GraphView.expand`` takes to open a node with an inner
graph (draw it inside its box, fold again if needed, render) and ``collapse`` to close it, on the compiled
MLP gradient of ``tests/real_size.py`` (its largest fused ``Composite``) and on its 1,000-node layered graph
with a 400-node ``OpFromGraph`` applied to its first output. Measured, not limited yet.

Grad stepper (issue 35): the time Python takes to answer a step of ``GradStepper`` (``stepper.step = k``: the
marks of both panes, the card and its numbers), every step in order from 0 to the last, on the MLP loss at the
issue's real size (784-256-128-10, tanh, softmax, mean negative log-likelihood of integer labels, batch 32, with
values) and on a 1,000-node graph (a chain of 250 ``tanh(h) * y`` on scalars: 250 forward nodes and 749 in its
gradient, 250 steps). Each step is timed over a few walks (its best); the rows give the mean and the slowest
step, and the time to make the stepper (both panes laid out, the numbers evaluated). Limits: a step under 100 ms
on the MLP, under 150 ms on the 1,000-node graph.

Text twin (issue 30): the outline (``symlab.printing.outline``) of the 1,000-node graph of
``tests/real_size.py``. Limit: 100 ms.

Walking a trace: a chain of 400 blocks of ``neg(neg(x * 1.0)) + 0.0`` is rewritten with fusion and
inplace excluded (about 2,800 steps); a :class:`~symlab.rewriting.cursor.TraceCursor` then visits
every step in order and back to the start. The walk must take at most 10 times the rewrite itself
(issue 17). Random access, ``trace.graph_at(k)`` at steps in a shuffled order, is compared with
rebuilding the graph from the start for each ``k`` (what ``graph_at`` did before the cursor).
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import symlab.tensor as T  # noqa: E402
from symlab.graph.fg import FunctionGraph  # noqa: E402
from symlab.rewriting import rewrite_fgraph  # noqa: E402


def _best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        started = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - started)
    return best, result


def chain_of_blocks(blocks: int) -> FunctionGraph:
    """``neg(neg(x * 1.0)) + 0.0``, ``blocks`` times over."""
    x = T.dvector("x")
    h = x
    for _ in range(blocks):
        h = T.neg(T.neg(h * 1.0)) + 0.0
    return FunctionGraph([x], [h])


def rewrite_chain(blocks: int) -> Any:
    fg = chain_of_blocks(blocks)
    return rewrite_fgraph(fg, exclude=("fusion", "inplace"))


def walk(trace: Any) -> int:
    """Visit every step of ``trace`` in order, then in reverse; the number of moves."""
    cursor = trace.cursor()
    moves = 0
    for _ in range(len(trace)):
        cursor.forward()
        moves += 1
    for _ in range(len(trace)):
        cursor.backward()
        moves += 1
    return moves


def rebuild_from_start(trace: Any, k: int) -> Any:
    """The graph after step ``k`` by replaying steps 1..k on a fresh copy of the start (the old graph_at)."""
    cursor = trace.cursor()
    cursor.seek(k)
    return cursor.fgraph


def trace_walk_rows(quick: bool) -> list[dict[str, Any]]:
    blocks, repeat = (400, 2) if quick else (400, 5)
    rewrite_s, trace = _best(lambda: rewrite_chain(blocks), repeat)
    steps = len(trace)
    walk_s, moves = _best(lambda: walk(trace), repeat)
    ks = list(range(0, steps + 1, max(1, steps // 20)))
    random.Random(0).shuffle(ks)

    def random_access() -> None:
        trace._reader = None  # start as a first reader would
        for k in ks:
            trace.graph_at(k)

    random_s, _ = _best(random_access, max(1, repeat // 2))
    rebuild_s, _ = _best(lambda: [rebuild_from_start(trace, k) for k in ks], max(1, repeat // 2))
    return [
        {"name": f"trace walk: rewrite of {blocks} blocks ({steps} steps)", "seconds": rewrite_s},
        {"name": f"trace walk: {moves} moves (every step forward, then back)", "seconds": walk_s,
         "ratio": walk_s / rewrite_s, "limit": 10.0, "of": "the rewrite"},
        {"name": f"trace walk: one move, mean of {moves}", "seconds": walk_s / moves},
        {"name": f"trace walk: graph_at at {len(ks)} shuffled steps", "seconds": random_s,
         "ratio": random_s / rebuild_s, "limit": 1.0, "of": "rebuilding each from the start"},
    ]


def tanh_chain(nodes: int) -> list[Any]:
    """``h = tanh(h) * y``, ``nodes // 2`` times: ``nodes`` Apply nodes, ``y`` used by half of them."""
    y, h = T.dvector("y"), T.dvector("h")
    for _ in range(nodes // 2):
        h = T.tanh(h) * y
    return [h]


def graph_view_rows(quick: bool) -> list[dict[str, Any]]:
    from symlab.notebook.graph_view import GraphView

    rows: list[dict[str, Any]] = []
    repeat = 2 if quick else 5
    for nodes, first_limit in ((10, None), (200, 0.3), (2000, 1.0)):
        outputs = tanh_chain(nodes)
        first_s, view = _best(lambda outputs=outputs: GraphView(outputs), repeat)
        row = {"name": f"graph view: open to first picture, {nodes} nodes ({len(view.model.nodes)} drawn)",
               "seconds": first_s}
        if first_limit is not None:
            row.update(ratio=first_s / first_limit, limit=1.0, of=f"the {first_limit * 1e3:.0f} ms target")
        rows.append(row)
        targets = [n for n in view.model.nodes if view.model.nodes[n].kind in ("apply", "input")][:20]

        def select_all(view: Any = view, targets: list[str] = targets) -> None:
            for key in targets:
                view._on_browser_message(view, {"type": "select", "key": key}, [])

        select_s, _ = _best(select_all, repeat)
        per = select_s / max(1, len(targets))
        rows.append({"name": f"graph view: answer a selection, {nodes} nodes (mean of {len(targets)})",
                     "seconds": per, "ratio": per / 0.05, "limit": 1.0, "of": "the 50 ms target"})
    return rows


def inner_graph_rows(quick: bool) -> list[dict[str, Any]]:
    """``view.expand`` of an inner-graph node and ``view.collapse``: the MLP gradient and a 1,000-node graph."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import real_size

    from symlab.compile.builders import OpFromGraph
    from symlab.graph.inner_graph import has_inner_graph, inner_sections
    from symlab.notebook.graph_view import GraphView

    repeat = 2 if quick else 5
    f = real_size.mlp_function()
    fg = f.maker.fgraph
    fused = max((n for n in fg.toposort() if has_inner_graph(n.op)), key=lambda n: len(inner_sections(n)[0].nodes))
    u = T.dvector("u")
    body = u
    for k in range(200):
        body = T.sin(body) + k if k % 2 else T.exp(body)
    op = OpFromGraph([u], [body], name="body200")
    _, outputs = real_size.layered_graph(1000)
    big = FunctionGraph(_leaves(outputs), [op(outputs[0]), *outputs[1:]])
    ofg = next(n for n in big.toposort() if isinstance(n.op, OpFromGraph))
    rows: list[dict[str, Any]] = []
    for what, graph, node in (("the compiled MLP gradient", f, fused), ("a 1,000-node graph", big, ofg)):
        view = GraphView(graph)
        key = view.key_of(node)
        inner = len(inner_sections(node)[0].nodes)
        expand_s = close_s = float("inf")
        for _ in range(repeat):
            gc.collect()
            started = time.perf_counter()
            view.expand(key)
            opened = time.perf_counter()
            drawn = len(view.model.nodes)
            view.collapse(key)
            expand_s = min(expand_s, opened - started)
            close_s = min(close_s, time.perf_counter() - opened)
        rows.append({"name": f"graph view: expand an inner graph ({inner} inner nodes) in {what} ({drawn} drawn)",
                     "seconds": expand_s})
        rows.append({"name": f"graph view: collapse it again in {what}", "seconds": close_s})
    return rows


def _leaves(outputs: list[Any]) -> list[Any]:
    from symlab.graph.traversal import graph_inputs

    return [v for v in graph_inputs(outputs) if not hasattr(v, "data")]


def outline_rows(quick: bool) -> list[dict[str, Any]]:
    """The text twin (``symlab.printing.outline``) of the 1,000-node graph of ``tests/real_size.py``."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import real_size

    from symlab.printing.outline import outline

    _, outputs = real_size.layered_graph(1000)
    seconds, rows = _best(lambda: outline(outputs), 2 if quick else 5)
    return [{"name": f"text twin: outline of a 1,000-node graph ({len(rows)} rows)", "seconds": seconds,
             "ratio": seconds / 0.1, "limit": 1.0, "of": "the 100 ms target"}]


def stepper_rows(quick: bool) -> list[dict[str, Any]]:
    from workloads import WORKLOADS

    from symlab.notebook.stepper import RewriteStepper
    from symlab.rewriting import rewrite_graph

    a, x, y = T.dvector("a"), T.dvector("x"), T.dvector("y")
    cases: list[tuple[str, Any, float]] = [
        ("a + a ** 10", rewrite_graph(a + a**10)[1], 0.1),
        ("x * y / y", rewrite_graph(x * y / y)[1], 0.1),
    ]
    for name in ("chain_2000", "chain_10000"):
        inputs, outputs = WORKLOADS[name].build_symlab()
        cases.append((name, rewrite_fgraph(FunctionGraph(inputs, outputs)), 0.5))
    rows = []
    for name, trace, limit in cases:
        stepper = RewriteStepper(trace)
        moves = min(len(trace), 10 if quick else 30)

        def walk(stepper: Any = stepper, moves: int = moves) -> None:
            stepper.step = 0
            for _ in range(moves):
                stepper.next()

        seconds, _ = _best(walk, 2 if quick else 3)
        per = seconds / max(1, moves)
        rows.append({"name": f"stepper: next step, {name} ({len(trace)} steps; mean of {moves})", "seconds": per,
                     "ratio": per / limit, "limit": 1.0, "of": f"the {limit * 1e3:.0f} ms target"})
    return rows


def neuron() -> tuple[Any, dict[Any, float], list[Any]]:
    """micrograd's neuron, its lecture's inputs, and the variables to differentiate with respect to."""
    x1, x2, w1, w2, b = (T.dscalar(name) for name in ("x1", "x2", "w1", "w2", "b"))
    o = T.tanh(x1 * w1 + x2 * w2 + b)
    return o, {x1: 2.0, x2: 0.0, w1: -3.0, w2: 1.0, b: 6.8813735870195432}, [x1, x2, w1, w2, b]


def scalar_chain(nodes: int) -> tuple[Any, dict[Any, float], list[Any]]:
    """``h = tanh(h) * y`` on scalars, ``nodes // 2`` times: ``nodes`` Apply nodes."""
    x, y = T.dscalar("x"), T.dscalar("y")
    h = x
    for _ in range(nodes // 2):
        h = T.tanh(h) * y
    return h, {x: 0.5, y: 1.1}, [x, y]


def values_view_rows(quick: bool) -> list[dict[str, Any]]:
    from symlab.notebook.values import ValuesView

    rows = []
    moves = 5 if quick else 20
    for name, (cost, inputs, wrt), limit in (("micrograd's neuron", neuron(), 0.1),
                                             ("200 nodes", scalar_chain(200), 0.3)):
        view = ValuesView(cost, inputs, wrt=wrt)
        first = wrt[0]

        def slide(view: Any = view, first: Any = first, moves: int = moves) -> None:
            for k in range(moves):  # a slider dragged: a new value each time
                view.set(first, 0.25 + 0.01 * k)

        seconds, _ = _best(slide, 2 if quick else 3)
        per = seconds / moves
        rows.append({"name": f"values view: answer a slider move, {name} ({len(view.model.nodes)} drawn; mean of "
                             f"{moves})", "seconds": per, "ratio": per / limit, "limit": 1.0,
                     "of": f"the {limit * 1e3:.0f} ms target"})
    return rows


def mlp_loss(sizes: tuple[int, ...] = (784, 256, 128, 10), batch: int = 32,
             seed: int = 0) -> tuple[Any, dict[Any, Any], list[Any]]:
    """A tanh MLP of ``sizes`` with a softmax output and the mean negative log-likelihood of integer labels (the
    Deep Learning Tutorials' ``-mean(log(p)[arange(n), y])``), values for a batch of ``batch``, and its weights."""
    import numpy as np

    x, y = T.dmatrix("x"), T.lvector("y")
    rng = np.random.default_rng(seed)
    values: dict[Any, Any] = {x: rng.normal(size=(batch, sizes[0])), y: rng.integers(0, sizes[-1], size=batch)}
    params: list[Any] = []
    h = x
    for layer, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:]), start=1):
        W, b = T.dmatrix(f"W{layer}"), T.dvector(f"b{layer}")
        values[W] = rng.normal(size=(fan_in, fan_out)) / np.sqrt(fan_in)
        values[b] = np.zeros(fan_out)
        params += [W, b]
        h = T.dot(h, W) + b
        if layer < len(sizes) - 1:
            h = T.tanh(h)
            h.name = f"h{layer}"
    p = T.softmax(h, axis=1)
    p.name = "p"
    loss = -T.mean(T.log(p)[T.arange(y.shape[0]), y])
    loss.name = "loss"
    return loss, values, params


def grad_stepper_rows(quick: bool) -> list[dict[str, Any]]:
    """``GradStepper``: the time to make it, and to answer ``stepper.step = k`` for every step in order: the first
    walk (each step's card and numbers made as a reader first reaches it) and the walks after it (made before); and
    its Markdown fallback (what a display sends besides the widget: the table, the card, two PNGs), time and size."""
    from symlab.notebook.grad_stepper import GradStepper

    rows: list[dict[str, Any]] = []
    repeat = 2 if quick else 3
    cases = (("MLP loss 784-256-128-10, batch 32", mlp_loss(), 0.1),
             ("1,000 nodes (250 tanh(h) * y)", scalar_chain(250), 0.15))
    for name, (cost, values, wrt), limit in cases:
        made_s, first = float("inf"), []
        for _ in range(repeat):  # a new stepper each time: its first walk is the one a reader makes
            gc.collect()
            started = time.perf_counter()
            stepper = GradStepper(cost, wrt, values=values)
            made_s = min(made_s, time.perf_counter() - started)
            total = stepper.total
            first = first or [float("inf")] * total
            for k in range(1, total + 1):
                started = time.perf_counter()
                stepper.step = k
                first[k - 1] = min(first[k - 1], time.perf_counter() - started)
            stepper.close()
        nodes = len(stepper.walk.forward_nodes) + len(stepper.walk.gradient_nodes)
        again = [float("inf")] * total
        stepper = GradStepper(cost, wrt, values=values)
        fallback_s, size = float("inf"), 0
        for k in (0, total // 2):  # what a display sends besides the widget: the steps' table, the card, two PNGs
            stepper.step = k
            started = time.perf_counter()
            size = max(size, len(stepper.markdown()) + len(stepper.pictures_markdown()))
            fallback_s = min(fallback_s, time.perf_counter() - started)
        fallback = {"name": f"grad stepper: its Markdown fallback (table, card, 2 PNGs), {name} (steps 0 and "
                            f"{total // 2}: fastest; largest {size / 1e3:.0f} KB)", "seconds": fallback_s, "bytes": size}
        for _ in range(repeat):
            stepper.step = 0
            gc.collect()
            for k in range(1, total + 1):
                started = time.perf_counter()
                stepper.step = k
                again[k - 1] = min(again[k - 1], time.perf_counter() - started)
        stepper.close()
        target = f"the {limit * 1e3:.0f} ms target"
        rows.append({"name": f"grad stepper: make it, {name} ({nodes} nodes, {total} steps)", "seconds": made_s})
        for what, times in (("first walk", first), ("walked again", again)):
            mean, slowest = sum(times) / total, max(times)
            rows.append({"name": f"grad stepper: answer a step, {name}, {what} (mean of {total})", "seconds": mean,
                         "ratio": mean / limit, "limit": 1.0, "of": target})
            rows.append({"name": f"grad stepper: answer a step, {name}, {what} (slowest: step "
                                 f"{times.index(slowest) + 1})", "seconds": slowest, "ratio": slowest / limit,
                         "limit": 1.0, "of": target})
        rows.append(fallback)
    return rows


def inspector_rows(quick: bool) -> list[dict[str, Any]]:
    from symlab.graph import graph_inputs
    from symlab.notebook.inspector import ClientsInspector

    rows: list[dict[str, Any]] = []
    repeat = 2 if quick else 5
    # What following a graph costs the rewrites that change it: one counter increment per committed change.
    blocks = 400

    def rewrite(watched: bool) -> Any:
        fg = chain_of_blocks(blocks)
        inspector = ClientsInspector(fg, max_nodes=40) if watched else None
        started = time.perf_counter()
        rewrite_fgraph(fg, exclude=("fusion", "inplace"))
        seconds = time.perf_counter() - started
        if inspector is not None:
            inspector.close()
        return seconds

    plain = min(rewrite(False) for _ in range(repeat))
    watched = min(rewrite(True) for _ in range(repeat))
    rows.append({"name": f"inspector: rewrite of {blocks} blocks while an inspector follows the graph",
                 "seconds": watched, "ratio": watched / plain, "limit": 1.25, "of": "the same rewrite unwatched"})
    for nodes, limit in ((10, 0.3), (200, 0.3), (2000, 1.0)):
        outputs = tanh_chain(nodes)
        fg = FunctionGraph(graph_inputs(outputs), outputs)
        inspector = ClientsInspector(fg)

        def change_and_redraw(fg: Any = fg, inspector: Any = inspector) -> None:
            node = next(n for n in fg.toposort() if "tanh" in str(n.op))
            fg.replace(node.outputs[0], T.sin(node.inputs[0]))
            inspector.refresh()

        seconds, _ = _best(change_and_redraw, repeat)
        rows.append({"name": f"inspector: redraw after a replace, {nodes} nodes", "seconds": seconds,
                     "ratio": seconds / limit, "limit": 1.0, "of": f"the {limit * 1e3:.0f} ms target"})
        inspector.close()
    return rows


def measure(quick: bool = False) -> list[dict[str, Any]]:
    """Every row of the views' benchmarks; a row with ``limit`` has a ``status``, PASS or FAIL."""
    rows = graph_view_rows(quick) + inspector_rows(quick) + stepper_rows(quick) + values_view_rows(quick)
    rows += inner_graph_rows(quick) + outline_rows(quick) + grad_stepper_rows(quick) + trace_walk_rows(quick)
    from bench_scan_views import scan_view_rows  # the views of a loop (issue 34)

    rows += scan_view_rows(quick)
    for row in rows:
        if "limit" in row:
            row["status"] = "PASS" if row["ratio"] <= row["limit"] else "FAIL"
    return rows


def report(rows: list[dict[str, Any]]) -> str:
    lines = ["Views (in-process, best of several runs)"]
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        figure = f"{r['seconds'] * 1e3:10.2f} ms" if r["seconds"] < 10 else f"{r['seconds']:10.2f} s "
        target = ""
        if "limit" in r:
            target = f"  {r['ratio']:.2f}x {r['of']} (limit {r['limit']:g}x) {r['status']}"
        lines.append(f"  {r['name']:<{width}}  {figure}{target}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args(argv)
    rows = measure(args.quick)
    print(report(rows))
    return 0 if all(r.get("status", "PASS") == "PASS" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
