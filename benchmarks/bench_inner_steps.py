"""How fast the stepper and the values view answer on inner graphs (issue 32): the MLP gradient with an OpFromGraph.

Run alone: ``.venv/bin/python benchmarks/bench_inner_steps.py [--quick]``. The graph is the MLP gradient of
``tests/real_size.py`` whose hidden layer, ``tanh(dot(X, W1) + b1)``, is an ``OpFromGraph`` (its gradient
another one), compiled in the NUMPY mode. Rows, each the best of several runs, measured, not limited yet:

- stepper: the time Python takes to show the next step (both panes rendered; mean over the first steps),
  with the layer's node drawn open in the panes, and without;
- stepper: ``expand`` of the layer's node (both panes drawn again with its inner graph inside) and
  ``collapse``; ``step_into`` the layer's node (its inner graph rewritten with the function's rules, on a copy,
  and the inner stepper's first pictures);
- values view: ``expand`` of the layer's node (its inner graph run on the node's input values, the inner
  gradients from the node's output gradients, the picture redrawn), and a slider move with the node open.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from bench_views import _best, report  # noqa: E402

import symlab  # noqa: E402
import symlab.tensor as st  # noqa: E402
from symlab.compile.builders import OpFromGraph  # noqa: E402


def mlp_with_layer() -> tuple[Any, Any, list[Any], Any]:
    """The compiled MLP gradient whose hidden layer is an OpFromGraph: ``(function, cost, inputs, layer op)``."""
    X, Y = st.dmatrix("X"), st.dmatrix("Y")
    W1, b1 = st.dmatrix("W1"), st.dvector("b1")
    W2, b2 = st.dmatrix("W2"), st.dvector("b2")
    xi, wi, bi = st.dmatrix("xi"), st.dmatrix("wi"), st.dvector("bi")
    layer = OpFromGraph([xi, wi, bi], [st.tanh(st.dot(xi, wi) + bi)], name="hidden_layer")
    hidden = layer(X, W1, b1)
    logits = st.dot(hidden, W2) + b2
    shifted = logits - logits.max(axis=1, keepdims=True)
    probs = st.exp(shifted) / st.exp(shifted).sum(axis=1, keepdims=True)
    loss = -(Y * st.log(probs)).sum(axis=1).mean() + 1e-4 * ((W1**2).sum() + (W2**2).sum())
    loss.name = "loss"
    inputs = [X, Y, W1, b1, W2, b2]
    f = symlab.function(inputs, [loss, *symlab.grad(loss, [W1, W2])], mode="NUMPY")
    return f, loss, inputs, layer


def _timed(action: Any) -> float:
    gc.collect()
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def stepper_rows(quick: bool) -> list[dict[str, Any]]:
    from symlab.notebook.stepper import RewriteStepper

    f, _, _, _ = mlp_with_layer()
    repeat = 2 if quick else 4
    stepper = RewriteStepper(f)
    cursor = stepper._cursor
    cursor.seek(0)
    key = next(cursor.key(n) for n in cursor.fgraph.toposort() if isinstance(n.op, OpFromGraph))
    moves = min(stepper.total, 8 if quick else 20)
    rows = []
    for label, opened in (("closed", ()), ("drawn open", (key,))):
        def walk(opened: tuple[str, ...] = opened) -> None:
            fresh = RewriteStepper(f)  # a new stepper: nothing cached, nothing drawn ahead
            for k in opened:
                fresh.expand(k)
            fresh._panes.wait()
            started = time.perf_counter()
            for _ in range(moves):
                fresh.next()
                fresh._panes.wait()
            walk.seconds = time.perf_counter() - started  # type: ignore[attr-defined]

        best = float("inf")
        for _ in range(repeat):
            walk()
            best = min(best, walk.seconds)  # type: ignore[attr-defined]
        rows.append({"name": f"stepper: next step, MLP gradient with an OpFromGraph, layer {label} "
                             f"({stepper.total} steps; mean of {moves})", "seconds": best / moves})
    expand_s = collapse_s = into_s = float("inf")
    for _ in range(repeat):
        fresh = RewriteStepper(f)
        fresh._panes.wait()
        expand_s = min(expand_s, _timed(lambda fresh=fresh: fresh.expand(key)))
        collapse_s = min(collapse_s, _timed(lambda fresh=fresh: fresh.collapse(key)))
        into_s = min(into_s, _timed(lambda fresh=fresh: fresh.step_into(key)))
    inner = fresh.shown
    rows += [
        {"name": "stepper: expand the OpFromGraph layer in both panes (MLP gradient, step 0)", "seconds": expand_s},
        {"name": "stepper: collapse it again", "seconds": collapse_s},
        {"name": f"stepper: step_into the layer (its rewrite, {inner.total} steps, and the first pictures)",
         "seconds": into_s},
    ]
    return rows


def values_rows(quick: bool) -> list[dict[str, Any]]:
    from symlab.notebook.values import ValuesView

    _, loss, inputs, _ = mlp_with_layer()
    rng = np.random.default_rng(0)
    shapes = {"X": (8, 4), "Y": (8, 3), "W1": (4, 5), "b1": (5,), "W2": (5, 3), "b2": (3,)}
    values = {v: rng.standard_normal(shapes[v.name]) for v in inputs}
    repeat = 2 if quick else 4
    expand_s = set_s = float("inf")
    for _ in range(repeat):
        view = ValuesView(loss, values, wrt=[inputs[2], inputs[4]])
        node = next(n for n in view._order if isinstance(n.op, OpFromGraph))
        expand_s = min(expand_s, _timed(lambda view=view, node=node: view.expand(node)))
        set_s = min(set_s, _timed(lambda view=view: view.set("b2", np.zeros(3))))
    seconds, _ = _best(lambda: ValuesView(loss, values, wrt=[inputs[2], inputs[4]]), repeat)
    return [
        {"name": "values view: open the MLP gradient with an OpFromGraph layer (wrt W1, W2)", "seconds": seconds},
        {"name": "values view: expand the layer (inner values and gradients, picture redrawn)", "seconds": expand_s},
        {"name": "values view: an input set with the layer open", "seconds": set_s},
    ]


def measure(quick: bool = False) -> list[dict[str, Any]]:
    return stepper_rows(quick) + values_rows(quick)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args(argv)
    print(report(measure(args.quick)).replace("Views (", "Inner graphs in the views (", 1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
