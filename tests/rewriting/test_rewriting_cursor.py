"""Walking a rewrite trace: the cursor, random access, and keys that stay with their objects."""

import numpy as np
import pytest

import symlab
import symlab.tensor as T
from symlab.graph.fg import FunctionGraph
from symlab.rewriting import rewrite_fgraph, rewrite_graph
from symlab.rewriting.trace import ReplayError


def keyed(fg, key):
    """The graph as keys: outputs, and each node's op, inputs and outputs."""
    nodes = sorted((key(n), str(n.op), tuple(key(i) for i in n.inputs), tuple(key(o) for o in n.outputs))
                   for n in fg.apply_nodes)
    return tuple(key(o) for o in fg.outputs), tuple(key(i) for i in fg.inputs), tuple(nodes)


def replay_keyed(trace, k):
    fg, memo = trace.replay(k)
    back = {id(new): live for live, new in memo.items() if live != "output"}
    return keyed(fg, lambda obj: trace.key(back[id(obj)]))


def traces():
    a = T.dvector("a")
    yield "a + a**10", rewrite_graph(a + a**10)[1]
    x, y = T.dvector("x"), T.dvector("y")
    yield "x*y/y", rewrite_graph(x * y / y)[1]
    m = T.dmatrix("m")
    z = T.exp(T.log(m * 1.0)) + (m - m) + T.exp(m).sum() * m
    yield "merge and inplace", rewrite_graph(symlab.grad((z**2).sum(), m) + z)[1]
    h = x
    for _ in range(30):
        h = T.neg(T.neg(h * 1.0)) + 0.0
    yield "chain", rewrite_fgraph(FunctionGraph([x], [h]), exclude=("fusion", "inplace"))


@pytest.mark.parametrize("name", ["a + a**10", "x*y/y", "merge and inplace", "chain"])
def test_forward_and_backward_equal_graph_at_with_stable_keys(name):
    trace = dict(traces())[name]
    assert len(trace) >= 1
    cursor = trace.cursor()
    seen = [keyed(cursor.fgraph, cursor.key)]
    assert seen[0] == replay_keyed(trace, 0)
    for k in range(1, len(trace) + 1):
        before_nodes = {cursor.key(n): n for n in cursor.fgraph.apply_nodes}
        before_vars = {cursor.key(v): v for v in cursor.fgraph.variables}
        cursor.forward()
        cursor.fgraph.check_integrity()
        assert cursor.position == k and cursor.step is trace.step(k)
        now = keyed(cursor.fgraph, cursor.key)
        assert now == replay_keyed(trace, k)
        seen.append(now)
        after_nodes = {cursor.key(n): n for n in cursor.fgraph.apply_nodes}
        # untouched nodes and variables: the same object under the same key
        for key in before_nodes.keys() & after_nodes.keys():
            assert before_nodes[key] is after_nodes[key]
        for v in cursor.fgraph.variables:
            if cursor.key(v) in before_vars:
                assert before_vars[cursor.key(v)] is v
        # what left and what came are exactly the step's removed and created nodes
        step = trace.step(k)
        assert before_nodes.keys() - after_nodes.keys() == {trace.key(n) for n in step.removed}
        assert after_nodes.keys() - before_nodes.keys() == {trace.key(n) for n in step.created}
        if not step.accepted:
            assert before_nodes.keys() == after_nodes.keys()
    # the last step is the rewritten graph itself, under the same keys
    assert seen[-1] == keyed(trace.fgraph, trace.fgraph.key)
    for k in range(len(trace) - 1, -1, -1):
        cursor.backward()
        cursor.fgraph.check_integrity()
        assert keyed(cursor.fgraph, cursor.key) == seen[k]
    with pytest.raises(IndexError, match="step 0"):
        cursor.backward()
    cursor.seek(len(trace))
    with pytest.raises(IndexError, match="last step"):
        cursor.forward()


def test_keys_of_the_trace_are_the_rewritten_graphs_keys_and_map_back():
    a = T.dvector("a")
    f = symlab.function([a], a + a**10)
    trace, fg = f.trace, f.maker.fgraph
    for obj in [*fg.apply_nodes, *fg.variables]:
        assert trace.key(obj) == fg.key(obj) and trace.by_key(fg.key(obj)) is obj
    cursor = trace.cursor(len(trace))
    for obj in [*cursor.fgraph.apply_nodes, *cursor.fgraph.variables]:
        live = cursor.origin(obj)
        assert cursor.object(cursor.key(obj)) is obj and cursor.copy_of(live) is obj
        assert live is not obj  # a copy, never the rewritten graph's own object
    with pytest.raises(KeyError, match="never saw"):
        trace.key(T.dvector("other"))


def test_graph_at_returns_a_copy_of_its_own_and_random_access_is_right():
    x = T.dvector("x")
    h = x
    for _ in range(12):
        h = T.neg(T.neg(h * 1.0)) + 0.0
    trace = rewrite_fgraph(FunctionGraph([x], [h]), exclude=("fusion", "inplace"))
    expected = {k: replay_keyed(trace.cursor().trace, k) for k in range(len(trace) + 1)}
    order = [len(trace), 0, len(trace) // 2, 3, len(trace) - 1, len(trace) // 3, len(trace)]
    for k in order:
        assert replay_keyed(trace, k) == expected[k]
    g1, g2 = trace.graph_at(5), trace.graph_at(5)
    assert g1 is not g2 and not set(g1.apply_nodes) & set(g2.apply_nodes)
    g1.replace(g1.outputs[0], g1.inputs[0])  # the caller's to change: nothing else moves
    assert replay_keyed(trace, 5) == expected[5]
    value = np.array([1.5, -2.0])
    for k in (0, len(trace) // 2, len(trace)):
        g = trace.graph_at(k)
        np.testing.assert_allclose(g.outputs[0].eval({g.inputs[0]: value}), value)
    with pytest.raises(IndexError):
        trace.graph_at(len(trace) + 1)


def test_a_cursor_made_at_a_position_and_seek_checks_its_argument():
    a = T.dvector("a")
    _, trace = rewrite_graph(a + a**10)
    cursor = trace.cursor(len(trace))
    assert cursor.position == len(trace) and "Composite" in str(cursor.fgraph.outputs[0].owner.op)
    with pytest.raises(IndexError, match="trace has steps"):
        cursor.seek(len(trace) + 1)
    with pytest.raises(IndexError):
        cursor.seek(-1)
    assert repr(cursor) == f"<TraceCursor at step {len(trace)}/{len(trace)}>"


def test_replay_of_an_incomplete_trace_says_so():
    a = T.dvector("a")
    _, trace = rewrite_graph(a + a**10)
    step = next(s for s in trace.steps if s.accepted and s.created)
    step.events = [e for e in step.events if type(e).__name__ != "NodeImported"]
    with pytest.raises(ReplayError, match="never saw created|unknown to the trace"):
        trace.cursor(len(trace))
