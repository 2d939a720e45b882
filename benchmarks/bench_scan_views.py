"""How fast the views of a loop answer (issue 34): a scan opened in the values view, its iteration slider moved.

Run alone: ``.venv/bin/python benchmarks/bench_scan_views.py [--quick]``; ``bench_views.py`` adds its rows to
its own. Workloads: an Elman RNN ``h[t] = tanh(h[t-1] W + x[t] U)`` of 100 steps, batch 32, hidden 128 (the
cost ``h[-1].sum()``), and a running sum of 10,000 steps over 1,000-element rows (80 MB of sequence: the
values view keeps only 32 MiB of the loop's per-iteration inputs and recomputes the others).

Rows: the time ``ValuesView.expand`` takes to open the scan (the loop run again with every iteration recorded,
iteration t's body evaluated, the picture redrawn), ``ValuesView.iteration`` (the slider's Python twin: iteration
t's body evaluated, redrawn), ``loop_plot`` (SVG, PNG and text of the states across iterations), and the
``GraphView`` opening the scan's body in place. Limits: 0.5 s to open the RNN's scan, 0.3 s a slider move; the
10,000-step loop is measured, not limited.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _rnn() -> tuple[Any, Any, dict[Any, Any]]:
    import symlab
    import symlab.tensor as st

    rng = np.random.default_rng(0)
    x, W, U, h0 = st.dtensor3("x"), st.dmatrix("W"), st.dmatrix("U"), st.dmatrix("h0")
    hs, _ = symlab.scan(lambda x_t, h: st.tanh(st.dot(h, W) + st.dot(x_t, U)), sequences=x, outputs_info=h0,
                        name="rnn")
    values = {x: rng.normal(size=(100, 32, 128)) * 0.1, W: rng.normal(size=(128, 128)) * 0.05,
              U: rng.normal(size=(128, 128)) * 0.05, h0: np.zeros((32, 128))}
    return hs[-1].sum(), hs.owner.inputs[0].owner, values


def _long_sum() -> tuple[Any, Any, dict[Any, Any]]:
    import symlab
    import symlab.tensor as st

    xs = st.dmatrix("xs")
    out, _ = symlab.scan(lambda x_t, a: a + x_t, sequences=xs, outputs_info=st.zeros((1000,)), name="running_sum")
    return out[-1].sum(), out.owner.inputs[0].owner, {xs: np.ones((10000, 1000))}


def _row(name: str, seconds: float, limit: float | None) -> dict[str, Any]:
    row: dict[str, Any] = {"name": name, "seconds": seconds}
    if limit is not None:
        row.update(ratio=seconds / limit, limit=1.0, of=f"the {limit * 1e3:.0f} ms target")
    return row


def scan_view_rows(quick: bool) -> list[dict[str, Any]]:
    from symlab.notebook.graph_view import GraphView
    from symlab.notebook.values import ValuesView

    rows = []
    cost, node, values = _rnn()
    opens, moves = [], []
    for _ in range(1 if quick else 3):
        view = ValuesView(cost, values)
        started = time.perf_counter()
        view.expand(node)
        opens.append(time.perf_counter() - started)
        for t in (10, 50, 51, 99, 0):
            started = time.perf_counter()
            view.iteration(node, t)
            moves.append(time.perf_counter() - started)
        started = time.perf_counter()
        plot = view.loop_plot(node)
        plot.png(0)
        plotted = time.perf_counter() - started
        view.close()
    rows.append(_row("scan views: open a 100-step RNN scan (batch 32, hidden 128) in the values view", min(opens), 0.5))
    rows.append(_row(f"scan views: move its iteration slider (worst of {len(moves)})", max(moves), 0.3))
    rows.append(_row("scan views: its plot of the state across iterations (SVG, PNG, text)", plotted, None))
    graph = GraphView(cost)
    started = time.perf_counter()
    graph.expand(node)
    rows.append(_row("scan views: GraphView opens the RNN scan's body in place", time.perf_counter() - started, None))
    graph.close()
    if not quick:
        cost, node, values = _long_sum()
        view = ValuesView(cost, values)
        started = time.perf_counter()
        view.expand(node)
        rows.append(_row("scan views: open a 10,000-step loop (1,000 floats a step; 32 MiB kept)",
                         time.perf_counter() - started, None))
        started = time.perf_counter()
        view.iteration(node, 5001)  # not kept: the loop runs again up to it
        rows.append(_row("scan views: move to an iteration not kept, 10,000-step loop", time.perf_counter() - started,
                         None))
        view.close()
    for row in rows:
        if "limit" in row:
            row["status"] = "PASS" if row["ratio"] <= row["limit"] else "FAIL"
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, no 10,000-step loop")
    args = parser.parse_args(argv)
    rows = scan_view_rows(args.quick)
    for r in rows:
        status = f"  {r['ratio']:.2f}x {r['of']} {r['status']}" if "limit" in r else ""
        print(f"{r['name']:<90} {r['seconds'] * 1e3:9.1f} ms{status}")
    return 0 if all(r.get("status", "PASS") == "PASS" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
