"""Tests of symlab.printing.diagram, render and pydotprint: DOT and SVG parsed, escaping, renderers, folding."""

import importlib
import os
import re
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers import sum_of_scalars

import symlab.tensor as st
from symlab.graph.fg import FunctionGraph
from symlab.printing import diagram, pydotprint

render = importlib.import_module("symlab.printing.render")
dmod = importlib.import_module("symlab.printing.diagram")  # the module (symlab.printing.diagram is the function)
SVG_NS = "{http://www.w3.org/2000/svg}"
GRAPHVIZ_PURE = render._python_bin_dir() / "graphviz-pure"
HAS_DOT = shutil.which("dot") is not None
HAS_PURE = GRAPHVIZ_PURE.is_file()

KEY = r"(?:a|v|op|type|g|out)\d+"  # the model's keys: DOT node names
NODE_RE = re.compile(rf"^\s*({KEY}) \[(.*)\]$")
EDGE_RE = re.compile(rf"^\s*({KEY}) -> ({KEY})(?: \[(.*)\])?$")
ATTR_RE = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^\s\]]+)')


def attrs_of(text):
    out = {}
    for key, value in ATTR_RE.findall(text or ""):
        if value.startswith('"'):
            value = value[1:-1].replace('\\"', '"')
        out[key] = value
    return out


def parse_dot(source):
    """(nodes {id: attrs}, edges [(a, b, attrs)]) of a Digraph made by diagram()."""
    nodes, edges = {}, []
    for line in source.splitlines():
        m = EDGE_RE.match(line)
        if m:
            edges.append((m.group(1), m.group(2), attrs_of(m.group(3))))
            continue
        m = NODE_RE.match(line)
        if m:
            nodes[m.group(1)] = attrs_of(m.group(2))
    return nodes, edges


def parse_svg(svg):
    """{node id: (texts, fill colours, stroke colours)} and [(edge title, texts)] of an SVG from dot."""
    root = ET.fromstring(svg)
    nodes, edges = {}, []
    for g in root.iter(f"{SVG_NS}g"):
        title = g.find(f"{SVG_NS}title")
        texts = [t.text for t in g.iter(f"{SVG_NS}text")]
        classes = (g.get("class") or "").split()
        if classes[:1] == ["node"]:
            shapes = [e for e in g.iter() if e.tag in (f"{SVG_NS}polygon", f"{SVG_NS}ellipse", f"{SVG_NS}path")]
            nodes[title.text] = (texts, {s.get("fill") for s in shapes}, {s.get("stroke") for s in shapes})
        elif classes[:1] == ["edge"]:
            edges.append((title.text, texts))
    return nodes, edges


def seed_graph():
    x = st.dmatrix("x")
    y = st.dmatrix("y")
    z = x + y
    z.name = "z"
    return x, y, z


def by_label(nodes):
    return {a["label"]: nid for nid, a in nodes.items()}


# -- the structure diagram of seed 000 ----------------------------------------------------------
def test_structure_of_z_is_seed_000_figure():
    x, y, z = seed_graph()
    nodes, edges = parse_dot(diagram(z).source)
    assert len(nodes) == 6
    kinds = {}
    for a in nodes.values():
        kind = {v[0]: k for k, v in dmod.STRUCTURE_COLORS.items()}[a["color"]]
        assert a["fillcolor"] == dmod.STRUCTURE_COLORS[kind][1]
        kinds.setdefault(kind, []).append(a["label"])
    assert {k: sorted(v) for k, v in kinds.items()} == {
        "apply": ["Apply"],
        "variable": ["x", "y", "z"],
        "op": ["add"],
        "type": ["TensorType(float64, (?, ?))"],
    }
    shapes = {a["label"]: a["shape"] for a in nodes.values()}
    assert shapes == {"Apply": "box", "x": "box", "y": "box", "z": "box", "add": "circle",
                      "TensorType(float64, (?, ?))": "box"}
    ids = by_label(nodes)
    t = ids["TensorType(float64, (?, ?))"]
    labelled = {(a, b, e.get("label")) for a, b, e in edges}
    assert labelled == {
        (ids["z"], ids["Apply"], "owner"),
        (ids["Apply"], ids["x"], "inputs[0]"),
        (ids["Apply"], ids["y"], "inputs[1]"),
        (ids["Apply"], ids["z"], "outputs[0]"),
        (ids["Apply"], ids["add"], "op"),
        (ids["x"], t, "type"),
        (ids["y"], t, "type"),
        (ids["z"], t, "type"),
    }
    assert len(edges) == 8


def test_shared_ops_and_types_are_drawn_once():
    x, y, z = st.dmatrix("x"), st.dmatrix("y"), st.dmatrix("z")
    e = x + y + z  # two nodes, one add op; every variable of type dmatrix
    nodes, edges = parse_dot(diagram(e).source)
    labels = [a["label"] for a in nodes.values()]
    assert labels.count("add") == 1
    assert labels.count("Apply") == 2
    assert labels.count("TensorType(float64, (?, ?))") == 1
    assert sum(1 for _, _, a in edges if a.get("label") == "op") == 2
    # seed 000's long example: a mul and an add, distinct ops
    nodes, _ = parse_dot(diagram(x + y * z).source)
    assert sorted(a["label"] for a in nodes.values() if a["shape"] == "circle") == ["add", "mul"]


@pytest.mark.skipif(not (HAS_DOT or HAS_PURE), reason="no Graphviz program")
def test_structure_svg_parsed():
    _, _, z = seed_graph()
    nodes, edges = parse_svg(render.to_svg(diagram(z)))
    assert len(nodes) == 6
    texts = {tuple(t): (fill, stroke) for t, fill, stroke in nodes.values()}
    assert texts[("Apply",)][0] == {"#cfe2ff"} and texts[("Apply",)][1] == {"blue"}
    for name in ("x", "y", "z"):
        assert texts[(name,)] == ({"#f8d7da"}, {"red"})
    assert texts[("add",)] == ({"#d1e7dd"}, {"darkgreen"})
    assert texts[("TensorType(float64, (?, ?))",)] == ({"#e2d9f3"}, {"purple"})
    labels = sorted(t[0] for _, t in edges)
    assert labels == sorted(["owner", "inputs[0]", "inputs[1]", "outputs[0]", "op", "type", "type", "type"])


# -- compact style ---------------------------------------------------------------------------
def test_compact_colours_and_tooltips():
    x = st.dvector("x")
    out = (x * 2).sum()
    nodes, edges = parse_dot(diagram(out, style="compact").source)
    fills = {a["label"]: a["fillcolor"] for a in nodes.values()}
    colors = dmod.COMPACT_COLORS
    assert fills["x"] == colors["input"]
    assert fills["2"] == colors["constant"]
    assert fills["output 0\\nfloat64 ()"] == colors["output"]  # an unnamed result says which, and its type
    assert fills["Elemwise{mul,no_inplace}"] == colors["apply"]
    assert len({colors["input"], colors["constant"], colors["output"], colors["apply"]}) == 4
    assert nodes[by_label(nodes)["x"]]["tooltip"] == "x : TensorType(float64, (?,))"
    # intermediate variables are edges, with their type in the tooltip
    mul_to_sum = [e for a, b, e in edges if nodes[a]["label"] == "Elemwise{mul,no_inplace}"]
    assert mul_to_sum[0]["tooltip"] == "Elemwise{mul,no_inplace}.0 : TensorType(float64, (?,))"


def test_highlight_paints_nodes():
    _, _, z = seed_graph()
    for style in ("structure", "compact"):
        nodes, _ = parse_dot(diagram(z, style=style, highlight=[z.owner]).source)
        lit = [a for a in nodes.values() if a.get("color") == dmod.HIGHLIGHT_COLOR]
        assert len(lit) == 1 and lit[0]["penwidth"] == "3"
    nodes, _ = parse_dot(diagram(z, style="structure", highlight=[z]).source)
    assert [a["label"] for a in nodes.values() if a.get("penwidth") == "3"] == ["z"]


def test_other_objects():
    x, y, z = seed_graph()
    fg = FunctionGraph([x, y], [z])
    nodes, _ = parse_dot(diagram(fg, style="compact").source)
    assert sorted(a["label"] for a in nodes.values()) == ["Elemwise{add,no_inplace}", "x", "y", "z"]
    nodes, _ = parse_dot(diagram(z.owner.op).source)
    assert [(a["label"], a["shape"]) for a in nodes.values()] == [("add", "circle")]
    nodes, _ = parse_dot(diagram(z.type).source)
    assert [a["label"] for a in nodes.values()] == ["TensorType(float64, (?, ?))"]
    nodes, _ = parse_dot(diagram([z, x * 2], style="compact").source)
    assert sum(1 for a in nodes.values() if a["fillcolor"] == dmod.COMPACT_COLORS["output"]) == 2

    import symlab

    f = symlab.function([x, y], z, mode="NUMPY")
    assert diagram(f, style="compact").source == diagram(f.maker.fgraph, style="compact").source

    class Maker:
        fgraph = fg

    class Function:  # duck typing is not enough: a compiled Function is a symlab.compile.function.Function
        maker = Maker()

    with pytest.raises(TypeError, match="diagram expects .*; received Function"):
        diagram(Function())
    with pytest.raises(ValueError, match="style"):
        diagram(z, style="fancy")
    with pytest.raises(TypeError, match="diagram expects"):
        diagram(3)


def test_rewrite_trace_highlights_its_last_step():
    from symlab.rewriting import rewrite_graph

    x = st.dvector("x")
    (out,), trace = rewrite_graph([x * (st.constant(2.0) + 3.0)], include=("fast_compile",))
    nodes, _ = parse_dot(diagram(trace, style="compact").source)
    assert "x" in {a["label"] for a in nodes.values()}
    created = [n for s in trace.steps if s.accepted for n in s.created if n in trace.fgraph.apply_nodes]
    lit = [a for a in nodes.values() if a.get("penwidth") == "3"]
    assert len(lit) == len({id(n) for n in created if n in trace.steps[-1].created})


# -- escaping ------------------------------------------------------------------------------------
HOSTILE = ["<script>", "<lambda>", 'a"b', "C:\\new", "\\l\\N", "x&amp;y", "<b>bold</b>", "javascript:alert(1)"]


def hostile_graph():
    return sum_of_scalars(HOSTILE, "out<>\\")


def test_hostile_names_in_dot():
    _, out = hostile_graph()
    for style in ("structure", "compact"):
        source = diagram(out, style=style).source
        nodes, _ = parse_dot(source)
        assert all(re.fullmatch(KEY, nid) for nid in nodes)
        labels = {a["label"] for a in nodes.values()}
        for name in HOSTILE:
            # backslashes doubled (no \n, \l escapes), & as &amp; (dot decodes entities)
            assert name.replace("\\", "\\\\").replace("&", "&amp;") in labels
        assert "URL" not in source and "href" not in source
        assert "<<" not in source  # never an HTML-like label


RENDERERS = [p for p in (shutil.which("dot"), str(GRAPHVIZ_PURE) if HAS_PURE else None) if p]


@pytest.mark.skipif(not RENDERERS, reason="no Graphviz program")
@pytest.mark.parametrize("program", RENDERERS, ids=lambda p: Path(p).name)
@pytest.mark.parametrize("style", ["structure", "compact"])
def test_hostile_names_in_svg(style, program, monkeypatch):
    monkeypatch.setenv(render.ENV_VAR, program)
    _, out = hostile_graph()
    svg = render.to_svg(diagram(out, style=style))
    nodes, _ = parse_svg(svg)  # well-formed XML
    texts = {t for texts, _, _ in nodes.values() for t in texts}
    for name in HOSTILE:
        assert name in texts
    assert "out<>\\" in texts
    assert "<script>" not in svg  # XML-escaped by dot
    assert "href" not in svg


def test_node_ids_never_come_from_names():
    v = st.dscalar("n5")
    w = st.dscalar("x -> y")
    nodes, edges = parse_dot(diagram(v + w).source)
    assert sorted(nodes) == ["a2", "op0", "type0", "v0", "v1", "v3"]
    assert by_label(nodes)["n5"] == "v0" and by_label(nodes)["x -> y"] == "v1"
    assert all(a in nodes and b in nodes for a, b, _ in edges)


# -- renderers -------------------------------------------------------------------------------
@pytest.mark.skipif(not HAS_DOT, reason="Graphviz dot is not installed")
def test_render_with_dot(monkeypatch):
    monkeypatch.delenv(render.ENV_VAR, raising=False)
    assert Path(render.find_renderer()).name == "dot"
    _, _, z = seed_graph()
    assert "<svg" in render.to_svg(diagram(z))


@pytest.mark.skipif(not HAS_PURE, reason="graphviz-pure is not installed")
def test_render_with_graphviz_pure_when_dot_is_absent(monkeypatch, tmp_path):
    monkeypatch.delenv(render.ENV_VAR, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no dot anywhere; graphviz-pure next to sys.executable
    assert shutil.which("dot") is None
    assert render.find_renderer() == str(GRAPHVIZ_PURE)
    _, _, z = seed_graph()
    nodes, edges = parse_svg(render.to_svg(diagram(z)))
    assert len(nodes) == 6 and len(edges) == 8
    # on PATH, too
    (tmp_path / "graphviz-pure").symlink_to(GRAPHVIZ_PURE)
    assert render.find_renderer() == str(tmp_path / "graphviz-pure")
    assert render.render(diagram(z), "png").startswith(b"\x89PNG")


def test_no_renderer_raises_one_clear_error(monkeypatch, tmp_path):
    monkeypatch.delenv(render.ENV_VAR, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(render, "_python_bin_dir", lambda: tmp_path)
    assert render.find_renderer() is None and not render.can_render()
    _, _, z = seed_graph()
    with pytest.raises(render.GraphvizNotFound, match="pip install graphviz-pure"):
        render.to_svg(diagram(z))


def test_explicit_renderer_and_failures(monkeypatch, tmp_path):
    monkeypatch.setenv(render.ENV_VAR, str(tmp_path / "missing-dot"))
    with pytest.raises(render.GraphvizNotFound):
        render.to_svg("digraph {}")
    if HAS_DOT or HAS_PURE:
        monkeypatch.delenv(render.ENV_VAR)
        with pytest.raises(render.RenderError, match="failed"):
            render.to_svg("digraph { this is not dot")
    with pytest.raises(ValueError, match="format"):
        render.render("digraph {}", "pdf")


def test_import_symlab_needs_no_graphviz():
    import subprocess

    code = (
        "import sys; sys.modules['graphviz'] = None; import symlab, symlab.tensor as st; "
        "x = st.dscalar('x'); print(symlab.pprint(x + 1)); "
        "assert not {'IPython', 'ipywidgets', 'anywidget'} & set(sys.modules); print(x._repr_mimebundle_())"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["(x + 1)", "{'text/plain': 'x'}"]


# -- folding -----------------------------------------------------------------------------------
def chain(n):
    x = st.dvector("x")
    y = x
    for k in range(n):
        y = st.exp(y) if k % 2 else y * 2.0
    return x, y


def test_small_graphs_are_not_folded():
    _, y = chain(20)
    assert "nodes …" not in diagram(y, style="compact").source


@pytest.mark.parametrize("style", ["compact", "structure"])
def test_folding_a_5000_node_chain(style):
    _, y = chain(2500)  # 2500 Elemwise + 1250 DimShuffle nodes of constants
    from symlab.graph.traversal import applys_between

    total = sum(1 for _ in applys_between([], [y]))
    assert total >= 3750
    g = diagram(y, style=style, max_nodes=60)
    nodes, edges = parse_dot(g.source)
    assert len(nodes) <= 60 + 5
    assert dmod.node_count(g) == len(nodes)
    summaries = [a["label"] for a in nodes.values() if a["label"].startswith("… ")]
    assert len(summaries) == 1
    hidden = int(summaries[0].split()[1])
    shown = sum(1 for a in nodes.values() if a.get("fillcolor") == dmod.STRUCTURE_COLORS["apply"][1])
    assert hidden + shown == total
    labels = {a["label"] for a in nodes.values()}
    assert "x" in labels  # both ends of the chain stay visible
    if HAS_DOT or HAS_PURE:
        assert "<svg" in render.to_svg(g)


def test_repeated_subgraphs_are_drawn_once():
    x = st.dvector("x")
    parts = [st.exp(x) * st.log(x) for _ in range(100)]  # 100 identical, unmerged subgraphs
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    nodes, _ = parse_dot(diagram(total, style="compact", max_nodes=60).source)
    labels = [a["label"] for a in nodes.values()]
    assert "Elemwise{exp,no_inplace}\\n×100" in labels
    assert len(nodes) <= 65


def test_wide_graphs_fold_too():
    xs = [st.dscalar(f"x{k}") for k in range(400)]
    out = st.stack([st.exp(x) for x in xs])
    nodes, _ = parse_dot(diagram(out, style="compact", max_nodes=50).source)
    assert len(nodes) <= 55


# -- pydotprint ------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["svg", "png", "dot"])
def test_pydotprint_writes_a_file(fmt, tmp_path, capsys):
    if fmt != "dot" and not (HAS_DOT or HAS_PURE):
        pytest.skip("no Graphviz program")
    a = st.vector("a")
    b = a + a ** 10
    outfile = tmp_path / "pics" / f"symbolic_graph_unopt.{fmt}"
    assert pydotprint(b, outfile=str(outfile), format=fmt, var_with_name_simple=True) is None
    assert capsys.readouterr().out == f"The output file is available at {outfile}\n"
    data = outfile.read_bytes()
    assert data.startswith({"svg": b"<?xml", "png": b"\x89PNG", "dot": b"digraph"}[fmt])
    if fmt == "dot":
        labels = {a["label"] for a in parse_dot(data.decode())[0].values()}
        assert "a" in labels
        full = pydotprint(b, format="dot", return_image=True).decode()
        assert "a\\nTensorType(float64, (?,))" in full  # var_with_name_simple=False: name and type
    with pytest.raises(ValueError, match="format"):
        pydotprint(b, outfile=os.fspath(outfile), format="gif")
