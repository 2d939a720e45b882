"""GraphView through its Python model (no browser): selection, details, marks, styles, folding, focus, safety."""

import re
import xml.etree.ElementTree as ET
from importlib import resources

import pytest

import symlab
import symlab.tensor as st
from symlab.graph.fg import FunctionGraph
from symlab.notebook.graph_view import VIEW_MAX_NODES, GraphView
from symlab.notebook.offline_page import page_script
from symlab.notebook.widget import VIEWS_SCRIPT, views_script
from symlab.printing import debugprint
from symlab.printing.render import can_render

HOSTILE = '<img src=x onerror="window.pwned=1">'
needs_dot = pytest.mark.skipif(not can_render(), reason="Graphviz dot is not installed")


def seed_graph():
    x, y = st.dvector("x"), st.dvector("y")
    fg = FunctionGraph([x, y], [st.exp(x) * y + x])
    return fg


def click(view, key):
    """What the browser sends when a node (or an edge) is clicked."""
    view._on_browser_message(view, {"type": "select", "key": key}, [])


def count_messages(view):
    sent = []
    original = view.send_state
    view.send_state = lambda key=None: (sent.append(set(key or ())), original(key))[1]
    return sent


def test_selecting_an_input_shows_its_clients_as_seed_000_writes_them():
    fg = seed_graph()
    view = GraphView(fg)
    x = fg.inputs[0]
    view.select(x)
    assert view.selected is x and view.selected_key == fg.key(x)
    d = view.details
    assert d["kind"] == "input" and d["name"] == "x" and d["dtype"] == "float64" and d["static shape"] == "(?,)"
    assert d["clients"] == [f"({c[0]}, {c[1]})" for c in fg.clients[x]] and len(d["clients"]) == 2
    client_keys = {fg.key(node) for node, _ in fg.clients[x]}
    assert {k for k, cls in view.marks.items() if "client" in cls} >= client_keys
    assert view.marks[fg.key(x)] == ["selected"]
    # the panel's links are the clients' keys: clicking one goes there
    clients_row = next(r for r in view.panel["rows"] if r["label"] == "clients")
    assert {item["key"] for item in clients_row["items"]} == client_keys
    click(view, clients_row["items"][0]["key"])
    assert view.selected in {node for node, _ in fg.clients[x]}


def test_selecting_a_node_shows_op_props_inputs_and_clients_and_lights_them():
    fg = seed_graph()
    view = GraphView(fg)
    add = fg.outputs[0].owner
    view.select(add)
    d = view.details
    assert d["kind"] == "apply node" and d["op"] == "Elemwise{add,no_inplace}" and "scalar_op=add" in d["props"]
    assert d["inputs"] == ["Elemwise{mul,no_inplace}.0", "x"] and d["clients"] == ["('output', 0)"]
    assert "input" in view.marks[fg.key(add.inputs[0].owner)] and "input" in view.marks[fg.key(fg.inputs[0])]
    assert "client" in view.marks["out0"]


def test_one_message_per_click_and_a_drawn_counter_the_browser_can_wait_for():
    fg = seed_graph()
    view = GraphView(fg)
    sent = count_messages(view)
    before = view.drawn
    click(view, fg.key(fg.inputs[1]))
    assert view.drawn == before + 1 and len(sent) == 1
    assert {"selected_key", "marks", "panel", "drawn"} <= set(sent[0])
    click(view, "")  # Escape
    assert view.selected is None and view.marks == {} and view.drawn == before + 2 and len(sent) == 2
    click(view, "no-such-key")  # a stale click changes nothing
    assert view.drawn == before + 2


def test_clicking_an_edge_of_the_compact_style_selects_the_variable_it_carries():
    fg = seed_graph()
    view = GraphView(fg, style="compact")
    mul_out = fg.outputs[0].owner.inputs[0]
    edge = next(e for e in view.model.edges if e.var == fg.key(mul_out))
    click(view, edge.key)
    assert view.selected is mul_out and view.details["owner"] == [str(mul_out.owner)]
    assert "selected" in view.marks[edge.key]


@needs_dot
def test_styles_switch_and_the_svg_maps_back_to_the_objects():
    fg = seed_graph()
    view = GraphView(fg, style="compact")
    view.select(fg.inputs[0])
    for style in ("structure", "compact"):
        view.style = style
        assert view.legend.startswith("blue box" if style == "structure" else "box: Apply")
        root = ET.fromstring(view.svg)
        groups = {g.get("id"): g.get("class") for g in root.iter("{http://www.w3.org/2000/svg}g")
                  if "node" in (g.get("class") or "")}
        applies = {k for k, c in groups.items() if "apply" in c.split()}
        assert applies == {fg.key(n) for n in fg.apply_nodes}
        for key in groups:
            assert view.model.obj(key) is not None
        assert view.selected is fg.inputs[0]  # the selection survives a change of style
    with pytest.raises(Exception, match="structure' or 'compact"):
        view.style = "fancy"


def test_large_graphs_are_folded_expandable_and_focusable():
    y = st.dvector("y")
    h = st.dvector("h0")
    for _ in range(1000):
        h = st.tanh(h) * y
    view = GraphView([h])
    assert len(view.model.nodes) <= VIEW_MAX_NODES and "nodes folded" in view.notice
    group = next(k for k, n in view.model.nodes.items() if n.kind == "group")
    click(view, group)
    assert view.details["kind"] == "folded group" and view.panel["actions"][0]["kind"] == "expand"
    hidden = view.model.nodes[group].count
    assert view.model.nodes[group].label == [f"nodes 1–{hidden}: {hidden} nodes"]  # the first stretch of the chain
    view._on_browser_message(view, {"type": "expand", "key": group}, [])
    # a level at a time: a 2,000-node graph is never laid out whole
    assert group not in view.model.nodes and "expanded" in view.notice and view.selected_key == group
    inside = [k for k in view.reveal if view.model.nodes[k].kind == "group"]
    assert 2 <= len(view.reveal) <= VIEW_MAX_NODES and inside
    assert sum(view.model.nodes[k].count for k in view.reveal) == hidden  # its members, as nodes and sub-groups
    assert sum(n.count for n in view.model.nodes.values() if n.kind in ("apply", "group")) == 2000
    view = GraphView([h])
    deep = h.owner.inputs[0].owner.inputs[0].owner.inputs[0].owner  # soon folded away
    view.select(deep)
    assert view.selected is deep and view.selected_key in view.model.nodes  # shown, not hidden
    view.focus = True
    assert len(view.model.nodes) < 40 and view.selected_key in view.model.nodes
    assert "focus" in view.notice
    view.move("up")
    assert view.selected is deep.inputs[0].owner or view.selected is deep.inputs[0]


def test_keyboard_moves_follow_edges():
    fg = seed_graph()
    view = GraphView(fg)
    view._on_browser_message(view, {"type": "move", "direction": "down"}, [])
    assert view.selected is not None  # the first key press selects something
    view.select(fg.inputs[0])
    view.move("down")
    assert view.selected in {n for n, _ in fg.clients[fg.inputs[0]]}
    view.move("up")
    assert view.selected is not None
    with pytest.raises(ValueError, match="direction must be one of"):
        view.move("sideways")


@needs_dot
def test_hostile_names_show_literally_and_run_nothing():
    x = st.dvector(HOSTILE)
    y = st.dvector("<script>alert(1)</script>")
    z = st.dvector("javascript:alert(1)")
    fg = FunctionGraph([x, y, z], [x * y + z])
    view = GraphView(fg, style="structure")
    view.select(fg.inputs[0])
    svg = view.svg
    for element in ET.fromstring(svg).iter():
        assert element.tag.split("}")[-1] not in ("script", "foreignObject", "a") or element.tag.endswith("}a")
        for name in element.attrib:
            assert not name.split("}")[-1].lower().startswith("on") and "href" not in name.lower()
    assert "&lt;img src=x onerror=" in svg and "javascript:alert(1)" in svg  # as text
    assert view.details["name"] == HOSTILE
    md = view.markdown()
    assert f"`{HOSTILE}`" in md
    # the outline is a fenced code block (its fence longer than any backtick run in it): names in it are text
    blocks = re.findall(r"^(`{3,})\n(.*?)\n\1$", md, flags=re.S | re.M)
    assert len(blocks) == 1 and f">     {HOSTILE} [v0]" in blocks[0][1].splitlines()  # selected, at depth 2
    outside_code = re.sub(r"``.*?``|`[^`]*`", "", re.sub(r"^(`{3,})\n.*?\n\1$", "", md, flags=re.S | re.M))
    assert "<" not in outside_code and ">" not in outside_code  # every name is in a code span: shown as text


def test_repr_and_markdown_are_deterministic_and_say_what_is_shown():
    fg = seed_graph()
    view = GraphView(fg)
    assert repr(view) == "GraphView of a FunctionGraph: 3 nodes, compact style"
    view.select(fg.inputs[0])
    assert repr(view) == "GraphView of a FunctionGraph: 3 nodes, compact style, selected input x"
    data, _ = view._repr_mimebundle_()
    assert data["text/plain"] == repr(view) and "0x" not in data["text/plain"]
    md = data["text/markdown"]
    assert md.startswith("**GraphView** of a FunctionGraph") and "| clients |" in md and "Legend:" in md
    assert GraphView(seed_graph()).markdown() == GraphView(seed_graph()).markdown()


def test_every_kind_of_graph_object_and_clear_errors():
    x = st.dvector("x")
    out = st.exp(x) + 1.0
    f = symlab.function([x], out)
    for obj in (out, out.owner, [out, x * 2], FunctionGraph([x], [out]), f):
        view = symlab.view(obj)
        assert view.model.nodes and view.drawn == 1
    with pytest.raises(TypeError, match="received int"):
        GraphView(3)
    with pytest.raises(ValueError, match="style must be"):
        GraphView(out, style="pretty")
    view = GraphView(out)
    with pytest.raises(ValueError, match="not part of the graph"):
        view.select(st.dvector("elsewhere"))
    with pytest.raises(ValueError, match="no node of this graph has the key"):
        view.select("a999")
    with pytest.raises(ValueError, match="not a folded group"):
        view.expand("a0")


def test_viewing_never_changes_the_graph():
    fg = seed_graph()
    text, version = debugprint(fg, file="str"), fg.version
    view = GraphView(fg)
    for key in list(view.model.nodes):
        click(view, key)
    view.style = "structure"
    view.focus = True
    view.move("up")
    assert debugprint(fg, file="str") == text and fg.version == version
    fg.check_integrity()


def test_script_and_styles_ship_inside_the_package():
    static = resources.files("symlab.notebook").joinpath("static")
    js = "\n".join(static.joinpath("views", name).read_text() for name in VIEWS_SCRIPT)
    css = static.joinpath("views.css").read_text()
    assert "export default" in js and "DOMParser" in js and ".innerHTML" not in js and "insertAdjacentHTML" not in js
    assert "prefers-reduced-motion" in css
    assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", js + css)  # nothing fetched at run time
    view = GraphView(seed_graph())
    assert view._esm == js and view._css == css


def test_the_views_script_is_its_parts_in_order_one_module_with_one_default_export(tmp_path):
    """anywidget's ``_esm`` is one string: the parts of static/views/ put together in VIEWS_SCRIPT's order."""
    import shutil
    import subprocess

    folder = resources.files("symlab.notebook").joinpath("static", "views")
    assert sorted(p.name for p in folder.iterdir() if p.name.endswith(".js")) == sorted(VIEWS_SCRIPT)  # each once
    parts = [folder.joinpath(name).read_text() for name in VIEWS_SCRIPT]
    script = views_script()
    assert script == "\n".join(parts) and GraphView(seed_graph())._esm == script
    assert script.count("export default") == 1 and parts[-1].count("export default") == 1  # in main.js, the last
    # one module: a name declared twice at its top level (in two parts) would be a SyntaxError
    declared = re.findall(r"^(?:export )?(?:async )?(?:function|class|const|let) (\w+)", script, re.M)
    assert len(declared) == len(set(declared)) and {"renderGraphView", "renderStepper", "Picture"} <= set(declared)
    node = shutil.which("node")
    if node is not None:  # the module, and an exported stepper page's script (the module, offline_page.js and
        # offline.js), parse
        for name, text in (("views.mjs", script), ("page.mjs", page_script("offline.js"))):
            (tmp_path / name).write_text(text)
            done = subprocess.run([node, "--check", str(tmp_path / name)], capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stderr[-2000:]


def test_a_built_wheel_contains_the_script_and_styles(tmp_path):
    """setuptools leaves .js/.css out of a wheel unless they are declared package data."""
    import subprocess
    import sys
    import zipfile
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(root)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = tmp_path.glob("symlab-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    parts = {f"symlab/notebook/static/views/{name}" for name in VIEWS_SCRIPT}
    assert parts | {f"symlab/notebook/static/{name}" for name in ("offline_page.js", "offline.js", "grad_offline.js",
                                                           "views.css")} <= names


def test_a_click_resolves_its_key_once_in_every_view(monkeypatch):
    """The click path: the browser's key is resolved once (KeyIndex.resolve), and that is what is selected."""
    from symlab.notebook import ClientsInspector, ValuesView
    from symlab.notebook.keys import KeyIndex

    resolved: list[str] = []
    resolve = KeyIndex.resolve
    monkeypatch.setattr(KeyIndex, "resolve", lambda self, key, *args: resolved.append(key) or resolve(self, key, *args))
    a, b = st.dscalar("a"), st.dscalar("b")
    for view in (GraphView(seed_graph()), ClientsInspector(seed_graph()), ValuesView(st.tanh(a * b), {a: 1.0, b: 2.0})):
        keys = [k for k in view.model.nodes if view.model.nodes[k].kind != "group"]
        assert len(keys) >= 4
        for key in keys:
            resolved.clear()
            click(view, key)
            assert resolved == [key] and view.selected_key == key, (type(view).__name__, key, resolved)


def test_a_view_redraws_when_its_graph_changed_keeping_or_clearing_the_selection():
    fg = seed_graph()
    view = GraphView(fg)
    x = fg.inputs[0]
    view.select(x)
    exp_node = next(n for n in fg.apply_nodes if "exp" in str(n.op))
    fg.replace(exp_node.outputs[0], st.sin(x))  # from another cell
    assert view.refresh() and view.selected is x and "the graph changed" in view.notice
    assert view.details["clients"] == [f"({c[0]}, {c[1]})" for c in fg.clients[x]]
    assert any("sin" in str(n.obj.op) for n in view.model.nodes.values() if n.kind == "apply")
    assert not view.refresh()  # nothing new
    sin_node = next(n for n in fg.apply_nodes if "sin" in str(n.op))
    view.select(sin_node)
    fg.replace(sin_node.outputs[0], st.cos(x))
    click(view, fg.key(x))  # a click on the old picture: redrawn first, then answered
    assert view.selected is x
    view.select(next(n for n in fg.apply_nodes if "cos" in str(n.op)))
    fg.replace(fg.outputs[0], fg.inputs[1] * 2.0)
    view.refresh()
    assert view.selected is None and "the selected apply node Elemwise{cos,no_inplace} left it" in view.notice


@needs_dot
def test_the_markdown_fallback_carries_the_current_picture_as_png():
    import base64

    fg = seed_graph()
    view = GraphView(fg)
    data, _ = view._repr_mimebundle_()
    words, image = data["text/markdown"].split("\n\n![graph picture](data:image/png;base64,")
    assert words == view.markdown().rstrip("\n")
    png = base64.b64decode(image.rstrip(")\n"))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


# -- the text twin -------------------------------------------------------------------------------------------------
def test_the_outline_is_the_whole_graph_as_text_with_the_pictures_keys():
    from symlab.printing.outline import outline

    fg = seed_graph()
    view = GraphView(fg)
    assert view.outline == outline(fg) and view.text_mode is False
    assert [r["text"] for r in view.outline] == [
        "Elemwise{add,no_inplace} [a6]", "Elemwise{mul,no_inplace} [a4]", "Elemwise{exp,no_inplace} [a2]",
        "x [v0]", "y [v1]", "x [v0]"]
    # every row's key is a node of the whole graph that a click selects
    for row in view.outline:
        click(view, row["key"])
        assert view.selected_key == row["key"] and view.selected is view.fgraph.by_key(row["key"])
    # a folded picture still has the whole graph's outline, and a row of a folded node selects it
    x = st.dvector("x")
    y = x
    for _ in range(60):
        y = st.exp(y)
    big = GraphView(FunctionGraph([x], [y]), max_nodes=10)
    assert any(n.kind == "group" for n in big.model.nodes.values()) and len(big.outline) == 61
    middle = big.outline[30]["key"]
    click(big, middle)
    assert big.selected_key == middle


def test_view_text_marks_the_selection_its_inputs_and_its_clients():
    fg = seed_graph()
    view = GraphView(fg)
    assert view.text.splitlines()[0] == "  Elemwise{add,no_inplace} [a6]" and ">" not in view.text
    view.select(fg.inputs[0])  # x: used by exp and by add
    assert view.text.splitlines() == [
        "* Elemwise{add,no_inplace} [a6]  (client)",
        "    Elemwise{mul,no_inplace} [a4]",
        "*     Elemwise{exp,no_inplace} [a2]  (client)",
        ">       x [v0]",
        "      y [v1]",
        ">   x [v0]",
    ]
    mul = fg.outputs[0].owner.inputs[0].owner
    view.select(mul)
    lines = view.text.splitlines()
    assert lines[1] == ">   Elemwise{mul,no_inplace} [a4]"
    assert lines[2].endswith("(input)") and lines[4].endswith("(input)") and lines[0].endswith("(client)")
    # the variable an edge carries selects the row of the node computing it
    view.select(mul.outputs[0])
    assert view.text.splitlines()[1].startswith(">   Elemwise{mul")


def test_the_text_mode_message_and_the_outline_recomputed_only_when_the_graph_changes():
    fg = seed_graph()
    view = GraphView(fg)
    sent = count_messages(view)
    before = view.drawn
    view._on_browser_message(view, {"type": "text_mode", "on": True}, [])
    assert view.text_mode is True and view.drawn == before + 1 and sent == [{"text_mode", "drawn"}]
    rows = view.outline
    click(view, "a2")
    view.style = "structure"
    assert view.outline is rows  # neither a click nor a new style walks the graph again, nor resends it
    assert all("outline" not in keys for keys in sent)
    exp_node = fg.outputs[0].owner.inputs[0].owner.inputs[0].owner
    fg.replace(exp_node.outputs[0], st.sin(fg.inputs[0]))
    view.refresh()
    assert view.outline is not rows and "Elemwise{sin,no_inplace}" in view.outline[2]["text"]
    view._on_browser_message(view, {"type": "text_mode", "on": False}, [])
    assert view.text_mode is False


def test_the_markdown_fallback_carries_the_first_lines_of_the_outline():
    x = st.dvector("x")
    y = x
    for _ in range(60):
        y = st.exp(y)
    view = GraphView(FunctionGraph([x], [y]))
    md = view.markdown()
    block = re.search(r"Outline \(the graph as text\):\n\n```\n(.*?)\n```\n\.\.\. (\d+) more lines\n", md, flags=re.S)
    assert block is not None
    assert block.group(1).splitlines() == view.text.splitlines()[:40] and int(block.group(2)) == 61 - 40
