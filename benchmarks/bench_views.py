"""How fast the views answer: walking a rewrite trace step by step (and, as they come, clicks and steps).

Run alone: ``.venv/bin/python benchmarks/bench_views.py [--quick]``; ``make bench`` runs it after the
workloads and saves its rows with theirs. Each row is a figure, its limit and PASS/FAIL.

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


def measure(quick: bool = False) -> list[dict[str, Any]]:
    """Every row of the views' benchmarks; a row with ``limit`` has a ``status``, PASS or FAIL."""
    rows = trace_walk_rows(quick)
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
