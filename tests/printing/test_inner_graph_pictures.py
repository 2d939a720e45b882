"""Inner graphs opened in place in the pictures: the model's keys and sections, the DOT clusters, the SVG.

Each case parses what is drawn: the model's nodes and edges, the DOT source (a ``subgraph cluster_<key>``
per open node, one per section inside it) and the SVG Graphviz writes from it (``<g id=... class=...>``).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from inner_pictures import HOSTILE, branch_graph, fused, nested_ofg, thousand_nodes_with_ofg

import symlab.tensor as st
from symlab.compile.builders import OpFromGraph
from symlab.graph.fg import FunctionGraph
from symlab.ifelse import ifelse
from symlab.printing import pydotprint, to_dot
from symlab.printing.diagram import diagram
from symlab.printing.model import SECTION_STATES, build_model
from symlab.printing.render import can_render, to_svg

SVG = "{http://www.w3.org/2000/svg}"
needs_dot = pytest.mark.skipif(not can_render(), reason="no Graphviz program installed")


def svg_of(dot) -> ET.Element:
    return ET.fromstring(to_svg(dot))


def groups(svg: ET.Element) -> dict[str, list[str]]:
    """``{id: classes}`` of every ``<g>`` with an id in the SVG."""
    return {g.get("id"): (g.get("class") or "").split() for g in svg.iter(f"{SVG}g") if g.get("id")}


def texts(svg: ET.Element, group_id: str) -> list[str]:
    for g in svg.iter(f"{SVG}g"):
        if g.get("id") == group_id:
            return [t.text or "" for t in g.iter(f"{SVG}text")]
    raise AssertionError(f"no <g id={group_id!r}> in the SVG")


# -- the model -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("style", ["compact", "dataflow", "structure"])
def test_a_fused_composite_opens_in_place_under_its_inner_keys(style):
    f, fg, node, key = fused()
    version = fg.version
    inner = node.op.scalar_op.fgraph
    closed = build_model(f, style)
    assert closed.nodes[key].openable and not closed.nodes[key].opened and not closed.sections
    model = build_model(f, style, open_inner=[key])
    assert model.nodes[key].opened
    (section,) = model.sections
    assert (section.key, section.owner, section.label, section.state, section.caption) == (
        f"{key}:body", key, "body", None, "body")
    # every inner Apply node is drawn under "<outer key>/<its key in the inner FunctionGraph>"
    for inner_node in inner.toposort():
        inner_key = f"{key}/{inner.key(inner_node)}"
        assert model.obj(inner_key) is inner_node and inner_key in section.members
        assert model.container[inner_key] == section.key
    assert all(m.startswith(f"{key}/") for m in section.members)
    # the inner inputs are wired to the outer variables that feed them
    wires = {(e.tail, e.head) for e in model.edges if e.kind == "wire"}
    for outer, inner_in in zip(node.inputs, node.op.scalar_op.inner_inputs):
        tail = model.key_of(outer) if style != "compact" else fg.key(outer)
        assert (tail, f"{key}/{inner.key(inner_in)}") in wires
    assert all(e.tail in model.nodes and e.head in model.nodes for e in model.edges)
    assert fg.version == version  # a read never changes a graph


def test_the_compact_node_arrows_leave_from_the_inner_output():
    f, fg, node, key = fused()
    model = build_model(f, "compact", open_inner=[node])  # the node itself, or its key
    assert model.opened == {key: [f"{key}:body"]}
    (out_edge,) = [e for e in model.edges if e.head == "out0"]
    assert out_edge.tail == f"{key}/out0" and model.nodes[f"{key}/out0"].kind == "output"
    assert not [e for e in model.edges if e.head == key]  # its input arrows now go to the inner inputs


def test_lines_reach_inner_keys():
    f, fg, node, key = fused()
    model = build_model(f, "dataflow", open_inner=[key], lines={f"{key}/v0": ["1.5"], "v0": ["x value"]})
    assert model.nodes[f"{key}/v0"].label[-1] == "1.5"
    assert model.nodes["v0"].label[-1] == "x value"


def test_an_op_from_graph_nests_and_every_level_keeps_its_own_keys():
    fg, node, key, nested, inner_op = nested_ofg()
    only_outer = build_model(fg, "compact", open_inner=[key])
    assert nested in only_outer.nodes and only_outer.nodes[nested].openable and not only_outer.nodes[nested].opened
    model = build_model(fg, "compact", open_inner=[key, nested])
    assert set(model.opened) == {key, nested}
    for n in inner_op.fgraph.toposort():  # nested as a5/a2/a1
        k = f"{nested}/{inner_op.fgraph.key(n)}"
        assert model.obj(k) is n and model.container[k] == f"{nested}:body"
    assert model.container[nested] == f"{key}:body"
    assert [s.key for s in model.sections_of(f"{nested}/{inner_op.fgraph.key(inner_op.fgraph.toposort()[0])}")] == [
        f"{key}:body", f"{nested}:body"]
    # the inner node's two inputs are both fed by x: one wire to each inner input, not four
    wires = [(e.tail, e.head) for e in model.edges if e.kind == "wire" and e.head.startswith(nested + "/")]
    assert sorted(wires) == [(f"{key}/v0", f"{nested}/v0"), (f"{key}/v0", f"{nested}/v1")]


def test_a_region_section_moves_the_outer_nodes_and_a_skipped_one_is_greyed():
    fg, node, key, then_node, else_node = branch_graph()
    model = build_model(fg, "compact", open_inner=[key], section_states={(key, "else"): "skipped",
                                                                         (key, "then"): "taken"})
    then, other = model.sections
    assert then.caption == "then (a < b is True)" and other.caption == "else (a < b is False)"
    assert fg.key(then_node) in then.members and fg.key(then_node.inputs[0].owner) in then.members
    assert fg.key(else_node) in other.members
    assert model.container[fg.key(else_node)] == f"{key}:else"
    assert "skipped" in model.nodes[fg.key(else_node)].classes
    assert "skipped" not in model.nodes[fg.key(then_node)].classes
    assert (then.state, other.state) == ("taken", "skipped")
    # region nodes keep their outer keys and their arrows into the ifelse node
    assert any(e.tail == fg.key(then_node) and e.head == key for e in model.edges)


def test_bad_open_inner_and_states_are_named_errors():
    f, fg, node, key = fused()
    with pytest.raises(TypeError, match=r"build_model: open_inner\[0\] must be a node key \(str\) or an Apply node, "
                                        r"received int"):
        build_model(f, "compact", open_inner=[3])
    with pytest.raises(ValueError, match=r"section_states\[\('a8', 'body'\)\] must be one of .*received 'gone'"):
        build_model(f, "compact", open_inner=[key], section_states={(key, "body"): "gone"})
    assert SECTION_STATES == ("taken", "skipped")
    # a key naming no openable node is left alone (a picture of a graph that changed since still draws)
    assert build_model(f, "compact", open_inner=["v0", "a99"]).sections == []


# -- DOT and SVG ------------------------------------------------------------------------------------------------
@needs_dot
def test_the_dot_cluster_and_the_svg_keep_the_keys_and_classes():
    f, fg, node, key = fused()
    dot = to_dot(f, open_inner=[key])
    source = dot.source
    assert f"subgraph cluster_{key} {{" in source and f'subgraph "cluster_{key}:body" {{' in source
    # the open node's box holds the node and its section, which holds the inner nodes
    box = source[source.index(f"subgraph cluster_{key}"):]
    assert box.index(f"\t\t{key} [") < box.index(f'"cluster_{key}:body"') < box.index(f'"{key}/a2" [')
    svg = svg_of(dot)
    found = groups(svg)
    assert found[f"cluster_{key}"] == ["cluster", "inner"]
    assert found[f"cluster_{key}:body"] == ["cluster", "section"]
    assert found[key] == ["node", "apply", "openable", "open"]
    inner = node.op.scalar_op.fgraph
    for n in inner.toposort():
        assert found[f"{key}/{inner.key(n)}"][0] == "node"
    wires = [k for k, cls in found.items() if cls[:2] == ["edge", "wire"]]
    assert sorted(wires) == [f"v0_{key}/v0", f"v1_{key}/v1"]
    closed = groups(svg_of(to_dot(f)))
    assert closed[key] == ["node", "apply", "openable"] and f"cluster_{key}" not in closed


@needs_dot
def test_a_skipped_branch_is_greyed_in_the_svg():
    fg, node, key, then_node, else_node = branch_graph()
    svg = svg_of(diagram(fg, "compact", open_inner=[key], section_states={(key, "else"): "skipped"}))
    found = groups(svg)
    assert found[f"cluster_{key}:else"] == ["cluster", "section", "skipped"]
    assert found[f"cluster_{key}:then"] == ["cluster", "section"]
    else_key = fg.key(else_node)
    assert "skipped" in found[else_key]
    shape = next(next(g for g in svg.iter(f"{SVG}g") if g.get("id") == else_key).iter(f"{SVG}polygon"))
    assert shape.get("fill") == "#f8f9fa" and shape.get("stroke") == "#ced4da"
    assert "else (a < b is False) · not taken" in texts(svg, f"cluster_{key}:else")


@needs_dot
def test_hostile_names_inside_an_inner_graph_render_literally():
    x, y = st.dvector(HOSTILE[0]), st.dvector(HOSTILE[1])
    z = st.exp(x) * y
    z.name = HOSTILE[2]
    op = OpFromGraph([x, y], [z], name=HOSTILE[3])
    a = st.dvector(HOSTILE[2])
    fg = FunctionGraph([a], [op(a, a)])
    key = fg.key(fg.outputs[0].owner)
    dot = to_dot(fg, open_inner=[key])
    assert all(re.fullmatch(r"[A-Za-z0-9_/:]+", k) for k in re.findall(r'id="?([^" \]]+)', dot.source))
    svg = svg_of(dot)
    shown = [t for g in svg.iter(f"{SVG}g") for t in [x.text for x in g.iter(f"{SVG}text")] if t]
    for name in HOSTILE[:3]:
        assert name in shown, name
    assert f"{HOSTILE[3]}{{inline=False}}" in shown
    assert svg.find(f".//{SVG}script") is None
    # an ifelse whose condition is named by a user: the section's caption shows the name as it is
    c = st.dscalar(HOSTILE[0])
    fg = FunctionGraph([c], [ifelse(c, st.exp(c), st.sin(c))])
    key = fg.key(fg.outputs[0].owner)
    svg = svg_of(to_dot(fg, open_inner=[key], section_states={(key, "then"): "skipped"}))
    assert f"then ({HOSTILE[0]} is True) · not taken" in texts(svg, f"cluster_{key}:then")
    assert svg.find(f".//{SVG}script") is None


@needs_dot
def test_pydotprint_accepts_open_inner(tmp_path):
    f, fg, node, key = fused()
    path = tmp_path / "open.dot"
    pydotprint(f, outfile=path, format="dot", open_inner=[key], print_output_file=False)
    assert f"subgraph cluster_{key}" in path.read_text()
    svg = pydotprint(f, format="svg", open_inner=[key], return_image=True).decode()
    assert f'id="cluster_{key}"' in svg


# -- size ------------------------------------------------------------------------------------------------------
def test_an_op_from_graph_opened_in_a_1000_node_graph_stays_within_the_budget():
    fg, node, key = thousand_nodes_with_ofg(300)
    closed = build_model(fg, "compact", max_nodes=100)
    model = build_model(fg, "compact", max_nodes=100, open_inner=[key])
    assert len(model.nodes) <= 110, len(model.nodes)
    assert model.nodes[key].opened  # the open node is never folded away
    inner_groups = [k for k, n in model.nodes.items() if n.kind == "group" and k.startswith(f"{key}/")]
    assert inner_groups  # a big inner graph is itself folded
    assert model.total == closed.total + len(node.op.fgraph.toposort())
    # keys stay stable through opening: every outer key drawn both times names the same object
    for k in set(closed.nodes) & set(model.nodes):
        if closed.nodes[k].kind != "group":
            assert closed.obj(k) is model.obj(k)


def test_nested_ifelses_nest_their_regions_and_an_ifelse_inside_an_op_from_graph_opens():
    a, b = st.dscalar("a"), st.dscalar("b")
    inner = ifelse(st.gt(b, 0), st.exp(st.sin(b)), st.cos(b))
    fg = FunctionGraph([a, b], [ifelse(st.lt(a, b), inner * 3, st.log(a))])
    inner_key, outer_key = [fg.key(n) for n in fg.toposort() if type(n.op).__name__ == "IfElse"]
    model = build_model(fg, "compact", open_inner=[inner_key, outer_key])
    sin = next(n for n in fg.toposort() if "sin" in str(n.op))
    assert model.container[fg.key(sin)] == f"{inner_key}:then"  # the innermost region holds it
    assert model.container[inner_key] == f"{outer_key}:then"  # the inner ifelse's box is in the outer then box
    assert [s.key for s in model.sections_of(fg.key(sin))] == [f"{outer_key}:then", f"{inner_key}:then"]
    x = st.dscalar("x")
    op = OpFromGraph([x], [ifelse(st.gt(x, 0), st.exp(x), st.sin(x) * 2)], name="pick")
    fg2 = FunctionGraph([a], [op(a) + 1])
    key = fg2.key(next(n for n in fg2.toposort() if isinstance(n.op, OpFromGraph)))
    choice = next(n for n in op.fgraph.toposort() if type(n.op).__name__ == "IfElse")
    nested = f"{key}/{op.fgraph.key(choice)}"
    model = build_model(fg2, "compact", open_inner=[key, nested], section_states={(nested, "else"): "skipped"})
    assert [s.key for s in model.sections] == [f"{key}:body", f"{nested}:then", f"{nested}:else"]
    exp = next(n for n in op.fgraph.toposort() if "exp" in str(n.op))
    assert model.container[f"{key}/{op.fgraph.key(exp)}"] == f"{nested}:then"
    sin2 = next(n for n in op.fgraph.toposort() if "sin" in str(n.op))
    assert "skipped" in model.nodes[f"{key}/{op.fgraph.key(sin2)}"].classes


def test_the_text_twin_writes_open_inner_graphs_under_their_node_with_the_same_keys():
    from symlab.printing.outline import outline, outline_text

    f, fg, node, key = fused()
    rows = outline(f, open_inner=[key])
    inner = node.op.scalar_op.fgraph
    picture = build_model(f, "compact", open_inner=[key])
    by_key = {row["key"]: row for row in rows}
    assert by_key[f"{key}:body"]["depth"] == by_key[key]["depth"] + 1
    for n in inner.toposort():  # every inner node has a row under the key its box has in the picture
        inner_key = f"{key}/{inner.key(n)}"
        assert inner_key in picture.nodes and by_key[inner_key]["depth"] > by_key[f"{key}:body"]["depth"]
    assert [r["key"] for r in outline(f)] == [r["key"] for r in rows if "/" not in r["key"] and ":" not in r["key"]]
    # an ifelse: each branch's subtree moves under its section's row
    fg, node, key, then_node, else_node = branch_graph()
    text = outline_text(outline(fg, open_inner=[key])).splitlines()
    then_at = text.index("    then (a < b is True):")
    else_at = text.index("    else (a < b is False):")
    assert then_at < next(i for i, line in enumerate(text) if f"[{fg.key(then_node)}]" in line) < else_at
    assert text[else_at + 1].strip() == f"Elemwise{{mul,no_inplace}} [{fg.key(else_node)}]"
