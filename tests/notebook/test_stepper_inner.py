"""RewriteStepper and inner graphs (no browser): nodes opened in the panes, stepping into an OpFromGraph's or a
Composite's rewrite (the same final graph as compiling it), in place in the widget, and nothing changed."""

import numpy as np
import pytest

import symlab
import symlab.tensor as st
from symlab.compile.builders import OpFromGraph
from symlab.graph.traversal import equal_computations
from symlab.ifelse import ifelse
from symlab.notebook.stepper import RewriteStepper
from symlab.notebook.stepper_export import read_page_data
from symlab.printing.render import can_render
from tests.inner_graph_helpers import inner_fingerprint

needs_dot = pytest.mark.skipif(not can_render(), reason="Graphviz dot is not installed")


def layer_op():
    a, b = st.dvectors("a", "b")
    body = st.tanh(a * b) * 1.0 + st.exp(a) * st.exp(b) + st.log(a ** 2 + 1)
    return OpFromGraph([a, b], [body], name="layer")


def ops(fg):
    return [str(n.op) for n in fg.toposort()]


def key_of_first(stepper, kind):
    """The key of the first node whose op is a ``kind`` at the stepper's current step."""
    cursor = stepper._cursor
    cursor.seek(stepper.step)
    return next(cursor.key(n) for n in cursor.fgraph.toposort() if isinstance(n.op, kind))


def test_step_into_an_opfromgraph_ends_on_the_inner_graph_the_compiled_function_runs():
    op = layer_op()
    before = inner_fingerprint(op.inner_outputs)
    x, w = st.dvectors("x", "w")
    f = symlab.function([x, w], op(x, w).sum(), mode="NUMPY")
    compiled = next(n.op for n in f.maker.fgraph.toposort() if isinstance(n.op, OpFromGraph))
    compiled_graph = inner_fingerprint(list(f.maker.fgraph.outputs))
    stepper = RewriteStepper(f)
    key = key_of_first(stepper, OpFromGraph)  # step 0: the op as written, not rewritten yet
    stepper.expand(key)
    inner = stepper.step_into(key)
    inner.step = inner.total
    assert inner.parent is stepper and inner.depth == 1 and inner.total > 3
    final = inner.trace.fgraph
    assert equal_computations(final.outputs, compiled.fgraph.outputs, final.inputs, compiled.fgraph.inputs)
    assert ops(inner.trace.graph_at(0)) == ops(op.fgraph)  # it starts from the op's own graph
    assert inner_fingerprint(op.inner_outputs) == before  # the op was never changed
    assert inner_fingerprint(list(f.maker.fgraph.outputs)) == compiled_graph  # nor the function's graph
    # at the last step the node holds the rewritten op: its own inner rewrite is the one stepped through
    stepper.step_out()
    stepper.step = stepper.total
    again = stepper.step_into(key_of_first(stepper, OpFromGraph))
    assert again.trace is compiled.inner_trace
    np.testing.assert_allclose(f([0.5, 1.0], [2.0, -1.0]), symlab.function([x, w], op(x, w).sum(),
                                                                           mode="NUMPY")([0.5, 1.0], [2.0, -1.0]))


def test_step_into_a_fused_composite_rewrites_a_copy_of_its_scalar_graph():
    x, y = st.dvectors("x", "y")
    stepper = RewriteStepper(st.exp(x) * y + st.exp(x))
    stepper.step = stepper.total
    node = next(n for n in stepper.trace.fgraph.toposort() if "Composite" in str(n.op))
    composite = node.op.scalar_op
    nodes_before = [(id(n), str(n.op)) for n in composite.fgraph.toposort()]
    inner = stepper.step_into(node)
    assert ops(inner.trace.graph_at(0)) == ops(composite.fgraph)
    assert [(id(n), str(n.op)) for n in composite.fgraph.toposort()] == nodes_before
    assert "inside" in repr(inner) and repr(inner).startswith("RewriteStepper inside a")
    assert stepper.step_out() is stepper and stepper.shown is stepper  # the widget's way back
    with pytest.raises(ValueError, match="not inside another one"):
        stepper.step_out()


def test_the_widget_shows_the_inner_stepper_in_place_and_back_restores_the_outer_step():
    op = layer_op()
    x, w = st.dvectors("x", "w")
    stepper = RewriteStepper(symlab.function([x, w], op(x, w) * 2.0, mode="NUMPY"))
    stepper.step = 1
    outer_after = stepper.after_svg
    key = key_of_first(stepper, OpFromGraph)
    stepper._on_browser_message(stepper, {"type": "why", "key": key}, [])
    assert stepper.card["why"]["inner"] == {"key": key, "open": False, "into": True}
    stepper._on_browser_message(stepper, {"type": "step_into", "key": key}, [])
    inner = stepper.shown
    assert inner is not stepper and [level["depth"] for level in stepper.nest] == [0, 1]
    assert stepper.total == inner.total and stepper.steps == inner.steps and stepper.step == 0
    stepper._on_browser_message(stepper, {"type": "move", "direction": "next"}, [])  # drives the inner stepper
    assert inner.step == 1 and stepper.step == 1 and stepper.card == inner.card
    assert stepper.after_svg == inner.after_svg and stepper.diff == inner.diff
    inner.next()  # a Python twin of the inner stepper: the widget on screen follows
    assert stepper.step == 2
    stepper.next()  # the widget's own twins drive the stepper it shows
    assert inner.step == 3 and stepper.step == 3
    stepper.step = 2
    assert inner.step == 2 and stepper.card == inner.card
    assert "showing the rewrite inside" in repr(stepper) and "showing the rewrite of an inner graph" in (
        stepper.markdown())
    stepper._on_browser_message(stepper, {"type": "step_out"}, [])
    assert stepper.shown is stepper and stepper.step == 1 and stepper.after_svg == outer_after
    assert len(stepper.nest) == 1 and stepper.total == len(stepper.trace)
    again = stepper.step_into(key)
    stepper.close()  # closing the widget closes the inner stepper it shows in place
    assert again.comm is None and stepper.comm is None


def test_expand_draws_an_opfromgraph_and_an_ifelse_open_in_both_panes():
    op = layer_op()
    x, w = st.dvectors("x", "w")
    c = st.dscalar("c")
    out = ifelse(st.gt(c, 0.0), op(x, w).sum(), (x * w).sum())
    stepper = RewriteStepper([out], include=("fast_run",), exclude=("inline_small_ofg",))
    ofg_key = key_of_first(stepper, OpFromGraph)
    branch_key = key_of_first(stepper, type(out.owner.op))
    stepper.expand(ofg_key)
    stepper.expand(branch_key)
    assert stepper.open_inner == sorted([ofg_key, branch_key]) and stepper.open_keys == stepper.open_inner
    model = stepper._pictures["after"][0]
    assert {s.owner for s in model.sections} == {ofg_key, branch_key}
    assert {s.label for s in model.sections if s.owner == branch_key} == {"then", "else"}
    assert any(k.startswith(f"{ofg_key}/") for k in model.nodes)
    stepper.next()
    stepper.step = stepper.total  # a later step: whatever is still in the graph stays open
    stepper.collapse(ofg_key)
    assert stepper.open_inner == [branch_key]
    with pytest.raises(ValueError, match="has no graph of its own to step into"):
        stepper.step_into(branch_key)
    plain = next(stepper.trace.key(n) for n in stepper.trace.fgraph.toposort() if "Sum" in str(n.op))
    with pytest.raises(ValueError, match="has no inner graph"):
        stepper.expand(plain)
    with pytest.raises(ValueError, match="no node of this rewrite has the key"):
        stepper.step_into("a99999")


def test_an_inlined_opfromgraph_is_a_step_like_any_other():
    a = st.dvector("a")
    op = OpFromGraph([a], [st.exp(a) + a * 2.0], inline=True, name="inlined")
    x = st.dvector("x")
    stepper = RewriteStepper(symlab.function([x], op(x).sum(), mode="NUMPY"))
    k = stepper.find("inline_ofg_expansion", start=0)
    assert k is not None
    stepper.step = k
    assert stepper.card["status"] == "applied" and any("inlined" in row["text"] for row in stepper.diff)
    assert not any(isinstance(n.op, OpFromGraph) for n in stepper.graph.toposort())


@needs_dot
def test_export_still_writes_every_step_with_a_node_open(tmp_path):
    op = layer_op()
    x, w = st.dvectors("x", "w")
    stepper = RewriteStepper(symlab.function([x, w], op(x, w).sum(), mode="NUMPY"))
    key = key_of_first(stepper, OpFromGraph)
    stepper.expand(key)
    assert f'id="{key}/' in stepper.after_svg
    data = read_page_data(stepper.export_html(tmp_path / "steps.html").read_text(encoding="utf-8"))
    assert len(data["states"]) == stepper.total + 1 and any(f'id="{key}/' in svg for svg in data["svgs"])


def test_an_open_node_stays_open_when_a_step_replaces_it_by_the_same_kind_of_node():
    op = layer_op()
    x, w = st.dvectors("x", "w")
    stepper = RewriteStepper(symlab.function([x, w], op(x, w).sum(), mode="NUMPY"))
    key = key_of_first(stepper, OpFromGraph)
    stepper.expand(key)
    k = stepper.find("ofg_inner_graph", start=0)
    stepper.step = k  # the step gives the node a copy of the op with its inner graph rewritten: a new node
    new_key = key_of_first(stepper, OpFromGraph)
    assert new_key != key and stepper.open_inner == [key]
    after = stepper._pictures["after"][0]
    assert {s.owner for s in after.sections} == {new_key}  # still drawn open after the step
    assert {s.owner for s in stepper._pictures["before"][0].sections} == {key}


def test_an_inner_steps_exclude_line_leaves_the_rule_out_of_the_outer_function_and_so_of_the_inner_graph():
    op = layer_op()
    x, w = st.dvectors("x", "w")
    f = symlab.function([x, w], op(x, w).sum(), mode="NUMPY")
    stepper = RewriteStepper(f)
    inner = stepper.step_into(key_of_first(stepper, OpFromGraph))
    k = inner.find("elemwise_fusion", start=0)
    inner.step = k
    line = inner.card["exclude"]
    assert line == 'symlab.function(inputs, outputs, mode=symlab.get_mode("NUMPY").excluding("elemwise_fusion"))'
    namespace = {"symlab": symlab, "inputs": [x, w], "outputs": op(x, w).sum()}
    g = eval(line, namespace)  # noqa: S307 - the line the card shows, run as a user would
    kept = next(n.op for n in g.maker.fgraph.toposort() if isinstance(n.op, OpFromGraph))
    assert not any("Composite" in str(n.op) for n in kept.fgraph.toposort())  # not fused inside any more
    np.testing.assert_allclose(g([0.5, 1.0], [1.0, 2.0]), f([0.5, 1.0], [1.0, 2.0]))
