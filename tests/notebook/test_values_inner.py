"""ValuesView inside inner graphs (no browser): a Composite's and an OpFromGraph's inner values and gradients,
an ifelse's branch not taken greyed and never computed, NaN origins named inside, and nothing changed."""

import xml.etree.ElementTree as ET

import numpy as np
import pytest

import symlab
import symlab.tensor as st
from symlab.compile.builders import OpFromGraph
from symlab.graph.basic import Apply
from symlab.graph.op import Op
from symlab.ifelse import ifelse
from symlab.notebook.inner_values import branch_sections, evaluate_lazily, inner_graph_of, inner_values
from symlab.notebook.values import ValuesView
from symlab.printing.render import can_render
from symlab.tensor.type import TensorType
from tests.inner_graph_helpers import inner_fingerprint

needs_dot = pytest.mark.skipif(not can_render(), reason="Graphviz dot is not installed")
SVG_G = "{http://www.w3.org/2000/svg}g"


class Counted(Op):
    """``x * 3`` that counts its runs (and raises when asked to): is a branch computed?"""

    __props__ = ("raises",)

    def __init__(self, raises: bool = False) -> None:
        self.raises = raises
        self.calls = 0

    def make_node(self, x):
        x = st.as_tensor_variable(x)
        return Apply(self, [x], [TensorType(x.dtype, x.type.shape)()])

    def perform(self, node, inputs, output_storage):
        self.calls += 1
        if self.raises:
            raise RuntimeError("the branch not taken was computed")
        output_storage[0][0] = np.asarray(inputs[0] * 3)


def inner_by_op(view, key):
    """``{inner op text: value of its output}`` inside the open node ``key``."""
    node = view._inner.node(key)
    fgraph = inner_graph_of(node)
    values = view.inner_values(key)
    return {str(n.op): values[n.outputs[0]] for n in fgraph.toposort()}


def test_values_inside_a_fused_composite_equal_numpy_and_are_written_on_the_inner_boxes():
    x, y = st.dvector("x"), st.dvector("y")
    f = symlab.function([x, y], st.exp(x) * y + x, mode="NUMPY")
    fg = f.maker.fgraph
    (node,) = fg.toposort()
    xv, yv = np.array([0.5, -1.0, 2.0]), np.array([3.0, 0.25, -2.0])
    view = ValuesView(list(fg.outputs), {fg.inputs[0]: xv, fg.inputs[1]: yv})
    key = view.key_of(node)
    view.expand(node)
    assert view.open_inner == [key]
    got = inner_by_op(view, key)
    np.testing.assert_allclose(got["exp"], np.exp(xv))
    np.testing.assert_allclose(got["mul"], np.exp(xv) * yv)
    np.testing.assert_allclose(got["add"], np.exp(xv) * yv + xv)
    np.testing.assert_allclose(got["add"], view.value(fg.outputs[0]))
    inner = inner_graph_of(node)
    exp_out = inner.toposort()[0].outputs[0]
    exp_key = f"{key}/{inner.key(exp_out)}"
    assert view.text(exp_key) == ["[1.649, 0.3679, 7.389]"]
    assert exp_key in view.model.nodes and view.model.nodes[exp_key].label[-1] == "[1.649, 0.3679, 7.389]"
    assert [s.owner for s in view.model.sections] == [key]
    assert "Inside" in view.markdown() and exp_key in view.markdown()
    view.collapse(exp_key)  # a key inside the open node closes it
    assert view.open_inner == [] and exp_key not in view.model.nodes


def test_values_and_gradients_inside_an_opfromgraph_equal_numpy_and_the_outer_gradient():
    x = st.dvector("x")
    a, b = st.dvectors("a", "b")
    op = OpFromGraph([a, b], [st.log(a) * b + 1.0], name="layer")
    y = op(x, x * 2.0)
    cost = y.sum()
    xv = np.array([0.5, 2.0, 3.0])
    view = ValuesView(cost, {x: xv}, wrt=[x])
    view.expand(view.key_of(y.owner))
    key = view.key_of(y.owner)
    values = view.inner_values(key)
    inner = op.fgraph
    av, bv = values[inner.inputs[0]], values[inner.inputs[1]]
    np.testing.assert_allclose(av, xv)
    np.testing.assert_allclose(bv, 2 * xv)
    np.testing.assert_allclose(values[inner.outputs[0]], np.log(xv) * 2 * xv + 1)
    grads = view._inner.grads[key]
    np.testing.assert_allclose(grads[inner.inputs[0]], bv / av)  # d cost / d a
    np.testing.assert_allclose(grads[inner.inputs[1]], np.log(av))  # d cost / d b
    # the outer gradient is the inner ones through the wiring a = x, b = 2 x
    np.testing.assert_allclose(view.gradient(x), grads[inner.inputs[0]] + 2 * grads[inner.inputs[1]])
    a_key = f"{key}/{inner.key(inner.inputs[0])}"
    assert view.text(a_key)[1] == "grad [2.0, 2.0, 2.0]"
    view.select(a_key)
    rows = {r["label"]: r for r in view.panel["rows"]}
    assert rows["inside"]["items"][0]["key"] == key and rows["value"]["text"] == repr(xv)


def test_nested_opfromgraphs_open_one_inside_the_other():
    a = st.dvector("a")
    inner_op = OpFromGraph([a], [st.exp(a) - 1.0], name="inner")
    b = st.dvector("b")
    outer_op = OpFromGraph([b], [inner_op(b * 3.0) + b], name="outer")
    x = st.dvector("x")
    out = outer_op(x)
    xv = np.array([0.1, 0.2])
    view = ValuesView(out, {x: xv})
    outer_key = view.key_of(out.owner)
    nested = [n for n in outer_op.fgraph.toposort() if isinstance(n.op, OpFromGraph)][0]
    nested_key = f"{outer_key}/{outer_op.fgraph.key(nested)}"
    view.expand(nested_key)  # opens the outer node too
    assert view.open_inner == [outer_key, nested_key]
    deepest = view.inner_values(nested_key)
    np.testing.assert_allclose(deepest[inner_op.fgraph.outputs[0]], np.exp(3 * xv) - 1)
    np.testing.assert_allclose(view.value(out), np.exp(3 * xv) - 1 + xv)
    assert f"{nested_key}/{inner_op.fgraph.key(inner_op.fgraph.outputs[0])}" in view.model.nodes
    view.collapse(outer_key)
    assert view.open_inner == []


def test_the_branch_not_taken_is_greyed_and_never_computed():
    c, x = st.dscalar("c"), st.dvector("x")
    watched, failing = Counted(), Counted(raises=True)
    then = st.exp(x).sum()
    then.name = "then_value"
    other = watched(failing(x)).sum()  # would raise if computed
    other.name = "else_value"
    z = ifelse(st.gt(c, 0.0), then, other)
    view = ValuesView(z, {c: 1.0, x: np.array([0.0, 1.0])})
    assert watched.calls == 0 and failing.calls == 0
    (key,) = view.open_inner  # an ifelse is open from the start
    assert view.section_states == {(key, "then"): "taken", (key, "else"): "skipped"}
    assert view.text("else_value") == ["not computed"] and view.value("else_value") is None
    assert not view.computed("else_value") and view.computed("then_value")
    np.testing.assert_allclose(view.value(z), np.exp([0.0, 1.0]).sum())
    states = {s.label: s.state for s in view.model.sections}
    assert states == {"then": "taken", "else": "skipped"}
    ifelse_node = z.owner
    assert view.model.nodes[view.key_of(ifelse_node)].label[-2:] == ["took then", "condition True"]
    assert "branch `else` of" in view.markdown() and "not computed" in view.markdown()
    # the other branch taken: the first branch is not computed now (the failing op is not in it)
    lazy_view = ValuesView(st.sum(ifelse(st.gt(c, 0.0), watched(x), x * 2.0)), {c: -1.0, x: np.array([1.0])})
    assert watched.calls == 0 and lazy_view.section_states[(lazy_view.open_inner[0], "then")] == "skipped"
    lazy_view.set("c", 2.0)
    assert watched.calls == 1 and lazy_view.value(lazy_view.outputs[0]) == 3.0


def test_lazy_evaluation_computes_only_the_branch_taken_and_says_which():
    c, x = st.dscalar("c"), st.dvector("x")
    watched = Counted()
    z = ifelse(st.lt(c, 0.5), watched(x), x - 1.0)
    run = evaluate_lazily([z], {c: np.array(1.0), x: np.array([4.0])})
    assert watched.calls == 0
    np.testing.assert_allclose(run.values[z], [3.0])
    (branch,) = run.branches.values()
    assert (branch.taken, branch.skipped, bool(branch.condition)) == ("else", ("then",), False)


@needs_dot
def test_the_skipped_branch_is_drawn_grey_in_the_svg():
    c, x = st.dscalar("c"), st.dvector("x")
    z = ifelse(st.gt(c, 0.0), st.exp(x).sum(), st.log(x).sum())
    view = ValuesView(z, {c: -1.0, x: np.array([1.0, 2.0])})
    skipped = {s.label: s for s in view.model.sections}["then"]
    root = ET.fromstring(view.svg)
    grey = {g.get("id") for g in root.iter(SVG_G) if "skipped" in (g.get("class") or "").split()}
    drawn_members = {m for m in skipped.members if m in view.model.nodes and view.model.nodes[m].kind != "group"}
    assert drawn_members and drawn_members <= grey
    taken = {s.label: s for s in view.model.sections}["else"]
    assert not (set(taken.members) & grey)


def test_a_nan_born_inside_an_opfromgraph_is_named_at_its_inner_node():
    a = st.dvector("a")
    op = OpFromGraph([a], [st.sqrt(st.log(a)) * 2.0], name="layer")
    x = st.dvector("x")
    out = op(x)
    view = ValuesView(out, {x: np.array([0.5, 4.0])})  # log(0.5) < 0: the NaN is born at sqrt, inside
    assert view.nan_origins == [out.owner]
    key = view.key_of(out.owner)
    sqrt_node = [n for n in op.fgraph.toposort() if "sqrt" in str(n.op)][0]
    inner_key = f"{key}/{op.fgraph.key(sqrt_node)}"
    assert f"inside {op}: born at sqrt ({inner_key})" in view.nan_note
    view.select(out.owner)
    rows = {r["label"]: r for r in view.panel["rows"]}
    assert rows["NaN/inf inside"]["items"][0]["key"] == inner_key
    view.expand(out.owner)
    assert "nan-origin" in view.model.nodes[inner_key].classes


def test_reading_inner_values_changes_no_graph_and_no_op():
    x = st.dvector("x")
    a = st.dvector("a")
    op = OpFromGraph([a], [st.tanh(a) * 2.0], name="layer")
    c = st.dscalar("c")
    z = ifelse(st.gt(c, 0.0), op(x).sum(), (x ** 2).sum())
    before = inner_fingerprint([z])
    inner_before = [(id(n), str(n.op)) for n in op.fgraph.toposort()]
    view = ValuesView(z, {c: 1.0, x: np.array([0.3, -0.2])}, wrt=[x])
    node = [n for n in symlab.graph.traversal.applys_between([x, c], [z]) if isinstance(n.op, OpFromGraph)][0]
    view.expand(node)
    view.set("c", -1.0)
    view.collapse(view.key_of(node))
    assert inner_fingerprint([z]) == before
    assert [(id(n), str(n.op)) for n in op.fgraph.toposort()] == inner_before
    values = inner_values(node, [np.array([0.3])])
    np.testing.assert_allclose(values[op.fgraph.outputs[0]], np.tanh([0.3]) * 2)


def test_browser_messages_open_and_close_and_bad_targets_are_named():
    x, y = st.dvector("x"), st.dvector("y")
    f = symlab.function([x, y], st.exp(x) * y, mode="NUMPY")
    fg = f.maker.fgraph
    view = ValuesView(list(fg.outputs), {fg.inputs[0]: [1.0], fg.inputs[1]: [2.0]})
    key = view.key_of(fg.toposort()[0])
    view.select(key)
    assert {"text": "open its inner graph here", "key": key, "kind": "expand"} in view.panel["actions"]
    view._on_browser_message(view, {"type": "expand", "key": key}, [])
    assert view.open_inner == [key] and view.notice == ""
    view._on_browser_message(view, {"type": "collapse", "key": key}, [])
    assert view.open_inner == []
    plain = ValuesView(x * 2.0, {x: [1.0]})
    with pytest.raises(ValueError, match="has no inner graph to open"):
        plain.expand(plain.outputs[0].owner)
    with pytest.raises(ValueError, match="not the key of an inner variable"):
        view.value(f"{key}/v999")
    with pytest.raises(ValueError, match="not an open node"):
        view.inner_values(key)


def test_an_ifelse_inside_an_opfromgraph_opens_with_it_and_its_branch_not_taken_is_not_computed():
    a, k = st.dvector("a"), st.dscalar("k")
    watched = Counted()
    op = OpFromGraph([a, k], [ifelse(st.gt(k, 0.0), st.exp(a), watched(a))], name="pick")
    x, c = st.dvector("x"), st.dscalar("c")
    out = op(x, c)
    view = ValuesView(out, {x: np.array([1.0, 2.0]), c: 1.0})
    calls = watched.calls  # the NumPy backend runs the op's graph lazily too
    view.expand(out.owner)
    outer_key = view.key_of(out.owner)
    branch = next(n for n in op.fgraph.toposort() if branch_sections(n))
    branch_key = f"{outer_key}/{op.fgraph.key(branch)}"
    assert view.open_inner == [outer_key, branch_key] and watched.calls == calls == 0
    assert view.section_states == {(branch_key, "then"): "taken", (branch_key, "else"): "skipped"}
    skipped_out = branch.inputs[2]
    assert view.text(f"{outer_key}/{op.fgraph.key(skipped_out)}") == ["not computed"]
    np.testing.assert_allclose(view.value(f"{outer_key}/{op.fgraph.key(branch.outputs[0])}"), np.exp([1.0, 2.0]))
    assert {s.state for s in view.model.sections if s.owner == branch_key} == {"taken", "skipped"}


class CountedWithGradient(Counted):
    """``x * 3`` whose gradient reads its own output (as many gradients read their forward value)."""

    def L_op(self, inputs, outputs, output_grads):
        return [output_grads[0] * 3.0 + outputs[0] * 0.0]


def test_values_and_gradients_compute_what_the_compiled_function_computes_and_no_more():
    c, x = st.dscalar("c"), st.dvector("x")
    watched = CountedWithGradient()
    cost = ifelse(st.gt(c, 0.0), st.exp(x).sum(), watched(x).sum())
    xv = np.array([1.0, 2.0])
    ValuesView(cost, {c: 1.0, x: xv})
    assert watched.calls == 0  # the values: the else branch is not run
    symlab.function([c, x], cost, mode="NUMPY")(1.0, xv)
    assert watched.calls == 0
    symlab.function([c, x], symlab.grad(cost, x), mode="NUMPY")(1.0, xv)
    compiled_calls, watched.calls = watched.calls, 0
    view = ValuesView(cost, {c: 1.0, x: xv}, wrt=[x])
    # the gradient graph reads the else branch's output outside the ifelse: computed for the gradient (as
    # compiled), never shown as a value of the branch not taken
    assert watched.calls == compiled_calls == 1
    assert view.text(x) == ["[1.0, 2.0]", "grad [2.718, 7.389]"]
    assert view.text(cost.owner.inputs[2]) == ["not computed"]
    np.testing.assert_allclose(view.gradient(x), np.exp(xv))
