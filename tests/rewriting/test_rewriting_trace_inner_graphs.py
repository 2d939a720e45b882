"""A rewrite trace over a graph with inner-graph nodes: replay reproduces every step, and reads change no inner graph."""

from __future__ import annotations

import numpy as np
import pytest
from inner_graph_helpers import Packaged, inner_fingerprint
from rewriting_helpers import StepChecker, assert_same_values, same_graph

import symlab.tensor as T
from symlab.graph.traversal import applys_with_inner, owns_inner_graph
from symlab.printing import debugprint, pprint
from symlab.printing.outline import outline
from symlab.rewriting import rewrite_graph


def _graph():
    """Packaged ops (one nested, one applied twice on the same inputs) among rewritable arithmetic."""
    v = T.dvector("v")
    inner = Packaged([v], [T.exp(v) * 1.0], name="inner")
    u, w = T.dvectors("u", "w")
    outer = Packaged([u, w], [inner(u) + T.neg(T.neg(w))], name="outer")
    x, y = T.dvectors("x", "y")
    first = outer(x * 1.0, y)
    twice = outer(x * 1.0, y)  # merged with ``first`` by MergeOptimizer: the same op, the same inputs
    total = T.log(T.exp(first + twice)) * (T.constant(2.0) * 3.0) + T.sqrt(y * y)
    return [x, y], [total, inner(y) * 1.0]


@pytest.fixture(scope="module")
def rewritten():
    inputs, outputs = _graph()
    fingerprint = inner_fingerprint(outputs)
    checker = StepChecker()
    _, trace = rewrite_graph(outputs, inputs=inputs, features=[checker])
    return trace, checker, outputs, fingerprint


def _draw_opened(fg):
    """Draw ``fg`` (structure and dataflow) with every node that has an inner graph opened in place."""
    from symlab.graph.inner_graph import has_inner_graph
    from symlab.printing.diagram import diagram

    opened = [n for n in fg.toposort() if has_inner_graph(n.op)]
    for style in ("structure", "dataflow"):
        assert diagram(fg, style=style, open_inner=opened, max_nodes=1000).source


def _inner_ops(fg):
    return [n.op for _, n in applys_with_inner(fg.outputs) if owns_inner_graph(n.op)]


def test_the_rewrite_merged_and_fused_around_the_packaged_ops(rewritten):
    trace, _, _, _ = rewritten
    rules = {s.rule for s in trace if s.accepted}
    assert "merge" in rules and any("fusion" in r for r in rules), rules
    final_ops = {str(n.op) for n in trace.fgraph.toposort()}
    assert sum(str(n.op) == "outer" for n in trace.fgraph.toposort()) == 1  # merged
    assert any(op.startswith("Elemwise{Composite{") for op in final_ops)
    # the packaged ops in the rewritten graph are the user's own ops: rewriting the outer graph left them alone
    assert {str(op) for op in _inner_ops(trace.fgraph)} >= {"outer", "inner"}


def test_replay_reproduces_every_step_inner_graphs_included(rewritten):
    trace, checker, _, _ = rewritten
    values = [np.array([0.5, 1.5, 2.0]), np.array([1.0, -2.0, 3.0])]
    for step in trace:
        replayed = trace.graph_at(step.index)
        replayed.check_integrity()
        snapshot = checker.snapshots[step.index]
        assert same_graph(replayed, snapshot), f"step {step.index} ({step.rule})"
        assert debugprint(replayed, file="str", inner="inline") == debugprint(snapshot, file="str", inner="inline")
        assert [id(op) for op in _inner_ops(replayed)] == [id(op) for op in _inner_ops(snapshot)]
        assert_same_values(replayed, trace.start, values)
    assert debugprint(trace.graph_at(len(trace)), file="str") == debugprint(trace.fgraph, file="str")


def test_cursor_walks_forward_and_back_over_the_inner_graph_nodes(rewritten):
    trace, _, _, _ = rewritten
    cursor = trace.cursor()
    start = debugprint(cursor.fgraph, file="str", inner="inline")
    cursor.seek(len(trace))
    assert debugprint(cursor.fgraph, file="str", inner="inline") == debugprint(trace.fgraph, file="str", inner="inline")
    while cursor.position:
        cursor.backward()
    assert debugprint(cursor.fgraph, file="str", inner="inline") == start


def test_reading_the_trace_changes_no_inner_graph(rewritten):
    trace, _, outputs, fingerprint = rewritten
    ops = _inner_ops(trace.start)
    before = [(id(op), [(id(i), str(i.type)) for i in op.inner_inputs], [id(o) for o in op.inner_outputs],
               debugprint(op.inner_outputs, file="str")) for op in ops]
    for k in range(len(trace) + 1):
        graph = trace.graph_at(k)
        for mode in ("section", "inline", "none"):
            debugprint(graph, file="str", inner=mode)
        pprint(graph.outputs)
        outline(graph)
        _draw_opened(graph)
    cursor = trace.cursor()
    cursor.seek(len(trace))
    cursor.seek(0)
    trace.summary()
    str(trace)
    after = [(id(op), [(id(i), str(i.type)) for i in op.inner_inputs], [id(o) for o in op.inner_outputs],
              debugprint(op.inner_outputs, file="str")) for op in ops]
    assert after == before
    assert inner_fingerprint(outputs) == fingerprint  # the user's graph too


def _ofg_ifelse_graph():
    """An OpFromGraph (nested, applied twice, one asking to be inlined) inside an ifelse's branches."""
    from symlab.compile.builders import OpFromGraph
    from symlab.ifelse import ifelse

    a, b = T.dvectors("a", "b")
    body = OpFromGraph([a, b], [T.log(T.exp(a)) * 1.0 + T.sqrt(b * b)], name="body")
    s = T.dvector("s")
    twice = OpFromGraph([s], [body(s, s) + body(s, s)], name="twice")
    flat = OpFromGraph([s], [s * 2.0 + 1.0], name="flat", inline=True)
    x, y = T.dvectors("x", "y")
    z = ifelse(T.lt(x.sum(), y.sum()), twice(x) * 1.0, flat(y) + body(x, y))
    return [x, y], [z]


def test_trace_with_opfromgraph_and_ifelse_replays_and_reads_change_nothing():
    inputs, outputs = _ofg_ifelse_graph()
    ops = [n.op for _, n in applys_with_inner(outputs) if owns_inner_graph(n.op)]
    before = [(debugprint(op.inner_outputs, file="str", print_type=True), inner_fingerprint(op.inner_outputs))
              for op in ops]
    checker = StepChecker()
    _, trace = rewrite_graph(outputs, inputs=inputs, features=[checker])
    rules = {s.rule for s in trace if s.accepted}
    assert {"inline_ofg_expansion", "ofg_inner_graph"} <= rules, rules
    assert any(str(n.op).startswith("if{") for n in trace.fgraph.toposort())
    values_true = [np.array([0.5, 1.5]), np.array([1.0, 3.0])]
    values_false = [values_true[1], values_true[0]]
    for step in trace:
        replayed = trace.graph_at(step.index)
        snapshot = checker.snapshots[step.index]
        assert same_graph(replayed, snapshot), f"step {step.index} ({step.rule})"
        for mode in ("section", "inline"):
            assert debugprint(replayed, file="str", inner=mode) == debugprint(snapshot, file="str", inner=mode)
        assert_same_values(replayed, trace.start, values_true)
        assert_same_values(replayed, trace.start, values_false)
    cursor = trace.cursor(len(trace))
    cursor.seek(0)
    pprint(trace.fgraph.outputs)
    outline(trace.fgraph)
    for graph in (trace.start, trace.fgraph, cursor.fgraph):
        _draw_opened(graph)
    after = [(debugprint(op.inner_outputs, file="str", print_type=True), inner_fingerprint(op.inner_outputs))
             for op in ops]
    assert after == before  # the user's ops kept their inner graphs: the rewrite made rewritten copies
