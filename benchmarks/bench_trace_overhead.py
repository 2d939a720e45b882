"""What recording the rewrite trace costs: rewriting a few thousand nodes with and without it.

Run: ``.venv/bin/python benchmarks/bench_trace_overhead.py [--terms N] [--repeat R]``.
Prints the best time of each mode and the overhead of recording (the issue
asks for less than 20% of the rewrite time), and of recording every rule tried
on every node too (``record_attempts=True``, what a stepper's "why not" uses). Building the FunctionGraph is
not timed; copying the starting graph for replay is (it is part of recording).
"""

from __future__ import annotations

import argparse
import gc
import time

import symlab.tensor as T
from symlab.graph.fg import FunctionGraph
from symlab.rewriting import (
    MergeOptimizer,
    PatternNodeRewriter,
    RewriteDatabase,
    constant_folding,
    node_rewriter,
    rewrite_fgraph,
)


@node_rewriter([T.neg])
def double_neg(fgraph, node):
    """-(-x) -> x"""
    (inner,) = node.inputs
    if inner.owner is not None and inner.owner.op == T.neg:
        return [inner.owner.inputs[0]]
    return None


def database() -> RewriteDatabase:
    db = RewriteDatabase()
    db.register(MergeOptimizer(), "canonicalize")
    db.register(constant_folding, "canonicalize")
    db.register(PatternNodeRewriter((T.true_div, (T.mul, "x", "y"), "y"), "x", name="mul_div"), "canonicalize")
    db.register(PatternNodeRewriter((T.mul, "x", 1), "x", name="mul_one"), "canonicalize")
    db.register(double_neg, "canonicalize")
    db.register(PatternNodeRewriter((T.log, (T.exp, "x")), "x", name="log_exp"), "stabilize")
    db.register(PatternNodeRewriter((T.add, "x", 0), "x", name="add_zero"), "specialize")
    return db


def build(terms: int) -> FunctionGraph:
    """About 14 nodes per term: folding, merging and four kinds of algebraic rule to apply."""
    xs = [T.dvector(f"x{k}") for k in range(terms)]
    y = T.dvector("y")
    total = None
    for k, x in enumerate(xs):
        t = T.log(T.exp(T.neg(T.neg(x * y / y)))) * (T.constant(float(k % 7)) + 1.0) * 1.0 + T.sqrt(y * y) + 0.0
        total = t if total is None else total + t
    return FunctionGraph([*xs, y], [total])


def run_once(template: FunctionGraph, record: bool, db: RewriteDatabase, attempts: bool = False) -> tuple[float, int]:
    fg = template.clone()
    gc.collect()
    start = time.perf_counter()
    trace = rewrite_fgraph(fg, db=db, record=record, record_attempts=attempts)
    return time.perf_counter() - start, len(trace) if trace is not None else 0


def best_times(template: FunctionGraph, repeat: int, db: RewriteDatabase) -> tuple[float, float, float, int]:
    """Best time without the trace, with it, and with attempts, the modes interleaved (fair under a varying load)."""
    without = with_trace = with_attempts = float("inf")
    steps = 0
    for _ in range(repeat):
        without = min(without, run_once(template, False, db)[0])
        seconds, steps = run_once(template, True, db)
        with_trace = min(with_trace, seconds)
        with_attempts = min(with_attempts, run_once(template, True, db, attempts=True)[0])
    return without, with_trace, with_attempts, steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--terms", type=int, default=250, help="number of terms (about 14 nodes each)")
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    db = database()
    template = build(args.terms)
    nodes = len(template.apply_nodes)
    run_once(template, True, db)  # warm up caches and imports
    without, with_trace, with_attempts, steps = best_times(template, args.repeat, db)
    overhead = (with_trace - without) / without
    print(f"graph: {nodes} nodes, {steps} rewrite steps recorded")
    print(f"rewrite without trace:   {without * 1e3:8.1f} ms")
    print(f"rewrite with trace:      {with_trace * 1e3:8.1f} ms")
    print(f"ratio with/without:      {with_trace / without:8.3f}  (overhead {overhead:+.1%}, target < +20%)")
    print(f"with trace and attempts: {with_attempts * 1e3:8.1f} ms  ({(with_attempts - with_trace) / with_trace:+.1%} "
          "over the trace alone; off unless asked)")


if __name__ == "__main__":
    main()
