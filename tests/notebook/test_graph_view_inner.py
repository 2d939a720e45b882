"""The graph view and the clients inspector open inner graphs in place: the Python twins of the clicks.

A fused ``Composite``, an ``OpFromGraph`` (nested too), an ``ifelse``: expand, collapse,
select inside, search inside, the browser's expand message, the text twin, the reprs, and a 1,000-node graph
whose opened ``OpFromGraph`` keeps the picture within its budget.
"""

from __future__ import annotations

import pytest
from inner_pictures import HOSTILE, branch_graph, fused, nested_ofg, thousand_nodes_with_ofg

import symlab.tensor as st
from symlab.compile.builders import OpFromGraph
from symlab.graph.fg import FunctionGraph
from symlab.notebook.graph_view import GraphView
from symlab.notebook.inspector import ClientsInspector


def click(view, kind: str, key: str) -> None:
    """What the browser sends: a message with the key (the node's button, a panel action)."""
    view._on_browser_message(view, {"type": kind, "key": key}, [])


def test_a_composite_expands_in_place_and_its_inside_is_selectable():
    f, fg, node, key = fused()
    view = GraphView(f)
    assert view.model.nodes[key].openable and view.open_inner == []
    view.expand(key)
    inner = node.op.scalar_op.fgraph
    exp_node = inner.toposort()[0]
    exp_key = f"{key}/{inner.key(exp_node)}"
    assert view.open_inner == [key] and exp_key in view.model.nodes
    assert f'id="cluster_{key}"' in view.svg and f'id="{exp_key}"' in view.svg
    assert set(view.reveal) >= {key, exp_key}
    assert view.notice.startswith(f"opened {node.op}: body (")
    # select inside: the panel says where it is, its clients are those of the inner graph
    view.select(exp_key)
    assert view.selected is exp_node and view.selected_key == exp_key
    assert view.details["inside"] == [f"body of {node.op} [{key}]"]
    assert view.details["clients"] == [f"({c[0]}, {c[1]})" for c in inner.clients[exp_node.outputs[0]]]
    assert view.marks[exp_key] == ["selected"]
    assert view.marks[f"{key}/{inner.key(exp_node.inputs[0])}"] == ["input"]
    mul = inner.clients[exp_node.outputs[0]][0][0]
    assert "client" in view.marks[f"{key}/{inner.key(mul)}"]
    actions = [(a["kind"], a["key"]) for a in view.panel["actions"]]
    assert ("collapse", key) in actions
    links = [item.get("key") for row in view.panel["rows"] for item in row["items"]]
    assert f"{key}/{inner.key(mul)}" in links and key in links  # its client and the node it is inside
    # collapse from a key inside: the node closes, the selection moves to its box
    view.collapse(exp_key)
    assert view.open_inner == [] and view.selected_key == key and f"cluster_{key}" not in view.svg
    assert exp_key not in view.model.nodes


def test_the_browser_button_and_the_panel_actions_open_and_close():
    f, fg, node, key = fused()
    view = GraphView(f)
    view.select(key)
    assert {"text": f"open the inner graph of {node.op}", "key": key, "kind": "expand"} in view.panel["actions"]
    assert view.details["inner graph"].startswith("body: 3 nodes")
    drawn = view.drawn
    click(view, "expand", key)
    assert view.open_inner == [key] and view.drawn > drawn and view.selected_key == key
    assert view.panel["actions"][0] == {"text": f"close the inner graph of {node.op}", "key": key, "kind": "collapse"}
    click(view, "collapse", f"{key}:body")  # a section's key closes its node too
    assert view.open_inner == []
    click(view, "expand", "v0")  # an input has no inner graph: the browser is told, nothing breaks
    assert view.notice.startswith("ValueError: GraphView.expand: 'v0' is not a folded group")
    assert "nor is 'v0' a node with an inner graph" in view.notice


def test_search_finds_inner_nodes_of_open_nodes_only():
    f, fg, node, key = fused()
    view = GraphView(f)
    view.search("i1")  # closed: the inner graph is not searched (the fused node's op text names i1)
    assert view.matches == [{"key": key, "text": f"{node.op} (apply)", "kind": "apply"}]
    view.expand(key)
    found = view.search("i1")
    inner = node.op.scalar_op.fgraph
    assert found[0] is inner.inputs[1] and view.selected_key == f"{key}/{inner.key(inner.inputs[1])}"
    assert view.matches[0] == {"key": f"{key}/v1", "text": "i1 (input)", "kind": "input"}
    assert view.search(f"{key}/a2")[0] is inner.toposort()[0]  # by key, exactly


def test_the_text_twin_and_the_reprs_mention_open_nodes():
    f, fg, node, key = fused()
    view = GraphView(f)
    view.expand(key)
    text = view.text
    assert "body:" in text and f"exp [{key}/a2]" in text
    rows = {row["key"]: row["depth"] for row in view.outline}
    assert rows[f"{key}/a2"] > rows[key]
    assert repr(view) == f"GraphView of a compiled Function: 1 node, compact style, open: {key}"
    markdown = view.markdown()
    assert "Open inner graphs:" in markdown and f"`[{key}] {node.op}`: `body: 6 drawn`" in markdown
    assert f"exp [{key}/a2]" in markdown


def test_a_nested_op_from_graph_opens_level_by_level_and_closes_with_its_outer_node():
    fg, node, key, nested, inner_op = nested_ofg()
    view = GraphView(fg)
    view.expand(nested)  # the nested key opens its outer node too
    assert view.open_inner == [key, nested]
    first = inner_op.fgraph.toposort()[0]
    deep = f"{nested}/{inner_op.fgraph.key(first)}"
    assert deep in view.model.nodes
    view.select(deep)
    assert view.details["inside"] == [f"body of {node.op} [{key}]", f"body of {inner_op} [{nested}]"]
    view.collapse(key)
    assert view.open_inner == [] and view.selected_key == key
    view.expand(node)  # the node itself works as well as its key
    assert view.open_inner == [key] and view.model.nodes[nested].openable and not view.model.nodes[nested].opened


def test_an_ifelse_opens_and_its_region_nodes_say_which_branch_they_are_in():
    fg, node, key, then_node, else_node = branch_graph()
    view = GraphView(fg)
    view.expand(key)
    assert [s.key for s in view.model.sections] == [f"{key}:then", f"{key}:else"]
    view.select(else_node)
    assert view.selected_key == fg.key(else_node)  # region nodes keep their outer keys
    assert view.details["inside"] == [f"else (a < b is False) of {node.op} [{key}]"]
    assert view.details["clients"] == [f"({node}, 2)"]
    view.collapse(fg.key(else_node))  # a node of the region closes its branch node
    assert view.open_inner == [] and view.selected_key == fg.key(else_node)


def test_hostile_names_inside_stay_literal_in_the_panel_and_the_markdown():
    x = st.dvector(HOSTILE[0])
    op = OpFromGraph([x], [st.exp(x)], name=HOSTILE[3])
    a = st.dvector(HOSTILE[1])
    fg = FunctionGraph([a], [op(a)])
    key = fg.key(fg.outputs[0].owner)
    view = GraphView(fg)
    view.expand(key)
    found = view.search(HOSTILE[0])
    assert found[0].name == HOSTILE[0]
    assert view.details["name"] == HOSTILE[0] and view.panel["title"] == f"input {HOSTILE[0]}"
    assert f"`[{key}] {HOSTILE[3]}{{inline=False}}`" in view.markdown()


def test_expanding_inside_a_1000_node_graph_stays_within_the_budget():
    fg, node, key = thousand_nodes_with_ofg(200)
    view = GraphView(fg, max_nodes=40)
    before = len(view.model.nodes)
    keys_before = {k: view.model.obj(k) for k, n in view.model.nodes.items() if n.kind != "group"}
    view.expand(key)
    assert view.model.nodes[key].opened
    assert len(view.model.nodes) <= 40 + 15, (before, len(view.model.nodes))
    assert any(n.kind == "group" for k, n in view.model.nodes.items() if k.startswith(f"{key}/"))
    for k, obj in keys_before.items():  # keys are stable: a key drawn before and after names the same object
        if k in view.model.nodes and view.model.nodes[k].kind != "group":
            assert view.model.obj(k) is obj
    view.collapse(key)
    assert key in view.model.nodes and not view.model.nodes[key].opened


def test_the_inspector_shows_sections_and_opens_them_the_same_way():
    fg, node, key, nested, inner_op = nested_ofg()
    inspector = ClientsInspector(fg)
    try:
        inspector.select(key)
        assert inspector.details["inner graph"] == "body: 3 nodes"
        assert inspector.panel["actions"][0]["kind"] == "expand"
        click(inspector, "expand", key)
        assert inspector.open_inner == [key]
        inner = node.op.fgraph
        x_key = f"{key}/{inner.key(inner.inputs[0])}"
        inspector.select(x_key)
        assert inspector.clients == list(inner.clients[inner.inputs[0]])
        assert "open: " + key in repr(inspector)
        assert "clients of `input x`" in inspector.markdown()
    finally:
        inspector.close()


def test_a_read_never_changes_the_graph():
    fg, node, key, nested, inner_op = nested_ofg()
    version, order = fg.version, list(node.op.fgraph.toposort())
    view = GraphView(fg)
    view.expand(nested)
    view.search("x")
    view.collapse(key)
    assert fg.version == version and node.op.fgraph.toposort() == order


@pytest.mark.parametrize("bad", [3.5, None])
def test_expand_names_what_it_received(bad):
    f, fg, node, key = fused()
    view = GraphView(f)
    with pytest.raises(ValueError, match="is not part of the graph this view shows"):
        view.expand(bad)


def test_a_live_inspector_keeps_its_open_nodes_and_inner_selection_when_the_graph_changes():
    fg, node, key, nested, inner_op = nested_ofg()
    inspector = ClientsInspector(fg)
    try:
        inspector.expand(nested)
        deep = f"{nested}/{inner_op.fgraph.key(inner_op.fgraph.toposort()[0])}"
        inspector.select(deep)
        out = fg.outputs[0]
        fg.replace(out, st.sin(out.owner.inputs[0]), reason="by hand")  # what another cell does
        assert inspector.refresh()
        assert inspector.open_inner == [key, nested] and inspector.selected_key == deep
        assert f'id="{deep}"' in inspector.svg
        fg.replace(fg.outputs[0], st.cos(fg.inputs[0]), reason="the open node leaves")
        inspector.refresh()
        assert inspector.open_inner == [] and inspector.selected_key == ""
        assert "left it" in inspector.notice
    finally:
        inspector.close()


def test_the_inspector_search_by_name_lists_inner_variables_after_the_graphs_own():
    fg, node, key, nested, inner_op = nested_ofg()
    inspector = ClientsInspector(fg)
    try:
        assert [v.name for v in inspector.search("x")] == []  # closed: only the graph's own (none is named x)
        inspector.expand(key)
        found = inspector.search("x")
        inner = node.op.fgraph
        assert found == [inner.inputs[0]] and inspector.matches[0]["key"] == f"{key}/{inner.key(inner.inputs[0])}"
        inspector._on_browser_message(inspector, {"type": "search", "text": "x", "pick": True}, [])
        assert inspector.selected_key == f"{key}/{inner.key(inner.inputs[0])}"
    finally:
        inspector.close()


def test_focus_on_a_selection_inside_an_open_node_draws_it_open_around_its_node():
    fg, node, key, nested, inner_op = nested_ofg()
    view = GraphView(fg)
    view.expand(nested)
    deep = f"{nested}/{inner_op.fgraph.key(inner_op.fgraph.toposort()[0])}"
    view.select(deep)
    view.focus = True
    assert view.notice.startswith("focus: ") and "select a node" not in view.notice
    assert deep in view.model.nodes and view.model.nodes[key].opened and view.selected_key == deep
    assert view.marks[deep] == ["selected"]
