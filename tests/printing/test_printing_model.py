"""Tests of symlab.printing.subject and symlab.printing.model: what a picture draws, under which keys.

The keys are the stable keys of the graph (fgraph.key, trace.key, cursor.key),
the DOT node names and the SVG ids: a rendered picture maps back to objects.
"""

import importlib
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from helpers import sum_of_scalars

import symlab
import symlab.tensor as st
from symlab.graph.basic import Apply, Variable
from symlab.graph.fg import FunctionGraph
from symlab.printing import diagram
from symlab.printing.model import CLASSES, EDGE_KINDS, NODE_KINDS, GraphModel, build_model
from symlab.printing.subject import GRAPH_KINDS, KINDS, Subject, kind_of, subject_of

render = importlib.import_module("symlab.printing.render")
dmod = importlib.import_module("symlab.printing.diagram")
SVG_NS = "{http://www.w3.org/2000/svg}"
CAN_RENDER = render.can_render()
KEY_RE = re.compile(r"(?:a|v|op|type|g|out)\d+")
DOT_NODE_RE = re.compile(r"^\s*([A-Za-z0-9_]+) \[(.*)\]$")
DOT_EDGE_RE = re.compile(r"^\s*(\w+) -> (\w+)")


def dot_names(source):
    """The node names of a DOT source written by to_dot (not the graph/node/edge defaults)."""
    names = []
    for line in source.splitlines():
        m = DOT_NODE_RE.match(line)
        if m and m.group(1) not in ("graph", "node", "edge"):
            names.append(m.group(1))
    return names


def svg_groups(svg):
    """{id: (classes, title, texts)} of the SVG groups of nodes, and the same for edges."""
    nodes, edges = {}, {}
    for g in ET.fromstring(svg).iter(f"{SVG_NS}g"):
        classes = (g.get("class") or "").split()
        if classes[:1] not in (["node"], ["edge"]):
            continue
        title = g.find(f"{SVG_NS}title").text
        texts = [t.text for t in g.iter(f"{SVG_NS}text")]
        (nodes if classes[0] == "node" else edges)[g.get("id")] = (classes[1:], title, texts)
    return nodes, edges


def small_fgraph():
    x, y = st.dmatrix("x"), st.dmatrix("y")
    return FunctionGraph([x, y], [st.exp(x + y) * 2.0])


def a_trace():
    from symlab.rewriting import rewrite_graph

    a = st.dvector("a")
    _, trace = rewrite_graph(a + a**10, exclude=("inplace",))
    return trace


def every_object():
    x, y = st.dmatrix("x"), st.dmatrix("y")
    z = x + y
    fg = FunctionGraph([x, y], [z * 2])
    trace = a_trace()
    f = symlab.function([x, y], z * 2, mode="NUMPY")
    return {
        "variable": z,
        "apply": z.owner,
        "list": [z, (x * y).owner],
        "fgraph": fg,
        "function": f,
        "trace": trace,
        "cursor": trace.cursor(1),
        "op": z.owner.op,
        "type": z.type,
    }


# -- the one "what is it" function ---------------------------------------------------------------
def test_subject_of_each_kind():
    objs = every_object()
    assert tuple(objs) == KINDS
    for kind, obj in objs.items():
        s = subject_of(obj)
        assert isinstance(s, Subject) and s.kind == kind and s.obj is obj and kind_of(obj) == kind
        assert s.is_graph == (kind in GRAPH_KINDS)
        assert all(isinstance(v, Variable) for v in s.outputs)
    z = objs["variable"]
    assert subject_of(z).outputs == (z,) and subject_of(z).fgraph is None and subject_of(z).key is None
    assert subject_of(z.owner).outputs == tuple(z.owner.outputs) and subject_of(z.owner).highlight == (z.owner,)
    assert len(subject_of(objs["list"]).outputs) == 2
    assert subject_of(objs["op"]).outputs == () and subject_of(objs["type"]).outputs == ()
    fg = objs["fgraph"]
    s = subject_of(fg)
    assert s.fgraph is fg and s.outputs == tuple(fg.outputs) and s.inputs == tuple(fg.inputs) and s.key == fg.key
    f = objs["function"]
    assert subject_of(f).fgraph is f.maker.fgraph
    trace = objs["trace"]
    s = subject_of(trace)
    assert s.fgraph is trace.fgraph and s.key == trace.key
    assert list(s.created) == [n for n in trace.steps[-1].created if n in trace.fgraph]
    cursor = objs["cursor"]
    s = subject_of(cursor)
    assert s.fgraph is cursor.fgraph and s.key == cursor.key and s.created == ()  # step 1 created no node


@pytest.mark.parametrize("bad", [3, "x", None, object(), {"a": 1}, 2.5])
def test_subject_of_anything_else_is_a_clear_type_error(bad):
    with pytest.raises(TypeError) as err:
        subject_of(bad, "diagram")
    message = str(err.value)
    assert message.startswith("diagram expects a Variable, an Apply node")
    assert message.endswith(f"; received {type(bad).__name__}")
    for accepted in ("a FunctionGraph", "a compiled Function", "a RewriteTrace", "a TraceCursor", "an Op", "a Type"):
        assert accepted in message
    assert kind_of(bad) is None


def test_subject_of_lists_and_restricted_kinds():
    x = st.dscalar("x")
    with pytest.raises(TypeError, match="debugprint: element 1 is int, expected a Variable or an Apply node"):
        subject_of([x, 1], "debugprint")
    assert kind_of([x, 1]) is None
    with pytest.raises(TypeError, match=r"debugprint expects .* or a TraceCursor; received TensorType"):
        subject_of(x.type, "debugprint", GRAPH_KINDS)
    with pytest.raises(TypeError, match="received ScalarOp|received Elemwise"):
        subject_of((x + 1).owner.op, "debugprint", GRAPH_KINDS)


def test_duck_types_are_not_accepted():
    fg = small_fgraph()

    class Maker:
        fgraph = fg

    class FakeFunction:
        maker = Maker()

    class FakeTrace:
        steps = []
        fgraph = fg

        def graph_at(self, k):
            return fg

    class FakeGraph:
        inputs, outputs = fg.inputs, fg.outputs

    for fake in (FakeFunction(), FakeTrace(), FakeGraph()):
        assert kind_of(fake) is None
        with pytest.raises(TypeError, match=f"received {type(fake).__name__}"):
            build_model(fake)


def test_import_symlab_loads_no_compiler_and_no_view_libraries():
    code = (
        "import sys, symlab, symlab.tensor as st\n"
        "from symlab.printing.subject import kind_of, subject_of\n"
        "from symlab.printing.model import build_model\n"
        "x = st.dscalar('x')\n"
        "assert kind_of(object()) is None and kind_of(x) == 'variable'\n"
        "build_model(x + 1)\n"
        "print(sorted(m for m in ('graphviz', 'IPython', 'numba', 'symlab.compile', 'symlab.rewriting')"
        " if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


# -- build_model on each kind -------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("style", ["structure", "compact", "dataflow"])
def test_build_model_on_each_kind(kind, style):
    obj = every_object()[kind]
    model = build_model(obj, style=style)
    assert isinstance(model, GraphModel) and model.style == style and model.subject.kind == kind
    assert model.nodes and all(KEY_RE.fullmatch(k) for k in model.nodes)
    for key, node in model.nodes.items():
        assert node.key == key and node.kind in NODE_KINDS and model.obj(key) is node.obj
        assert node.classes <= set(CLASSES) and all(isinstance(line, str) for line in node.label)
    for edge in model.edges:
        assert edge.tail in model.nodes and edge.head in model.nodes and edge.kind in EDGE_KINDS
    assert len({e.key for e in model.edges}) == len(model.edges)
    if kind == "op":
        assert list(model.nodes) == ["op0"] and model.nodes["op0"].label == ["add"]
    elif kind == "type":
        assert list(model.nodes) == ["type0"] and model.nodes["type0"].label == ["TensorType(float64, (?, ?))"]
    else:
        key = model.subject.key
        for k, node in model.nodes.items():
            if isinstance(node.obj, Apply | Variable) and node.kind != "output":
                assert model.key_of(node.obj) == k
                if key is not None:
                    assert key(node.obj) == k  # the graph's own stable key
    assert dot_names(dmod.to_dot(model).source) == list(model.nodes)


def test_build_model_arguments_are_checked():
    x = st.dscalar("x")
    with pytest.raises(ValueError, match="build_model: style must be one of"):
        build_model(x, style="fancy")
    with pytest.raises(ValueError, match="max_nodes must be a positive int"):
        build_model(x, max_nodes=0)
    with pytest.raises(TypeError, match="build_model expects a Variable"):
        build_model(3)


# -- stable keys ----------------------------------------------------------------------------------
@pytest.mark.parametrize("style", ["structure", "compact", "dataflow"])
def test_fgraph_picture_keys_are_fgraph_keys(style):
    fg = small_fgraph()
    model = build_model(fg, style=style)
    drawn = [n for n in model.nodes.values() if isinstance(n.obj, Apply | Variable) and n.kind != "output"]
    assert {n.obj for n in drawn if isinstance(n.obj, Apply)} == fg.apply_nodes
    for node in drawn:
        assert node.key == fg.key(node.obj) and fg.by_key(node.key) is node.obj
    names = dot_names(diagram(fg, style=style).source)
    assert set(fg.key(n) for n in fg.apply_nodes) <= set(names)


@pytest.mark.parametrize("style", ["structure", "compact", "dataflow"])
def test_a_replace_keeps_the_names_of_untouched_nodes(style):
    fg = small_fgraph()
    before = build_model(fg, style=style)
    names_before = dot_names(dmod.to_dot(before).source)
    add = next(n for n in fg.apply_nodes if "add" in str(n.op))
    exp = next(n for n in fg.apply_nodes if "exp" in str(n.op))
    add_key, add_out_key, exp_key = fg.key(add), fg.key(add.outputs[0]), fg.key(exp)
    x, y = fg.inputs
    fg.replace(add.outputs[0], x - y)
    after = build_model(fg, style=style)
    names_after = dot_names(dmod.to_dot(after).source)
    sub = next(n for n in fg.apply_nodes if "sub" in str(n.op))
    assert add_key in names_before and add_key not in names_after and add_key not in after
    assert fg.key(sub) in names_after and fg.key(sub) not in names_before  # a new key, never an old one
    assert exp_key in names_after and after.obj(exp_key) is exp
    kept = set(names_before) - {add_key, add_out_key}
    assert kept <= set(names_after)
    for key in kept:
        assert after.obj(key) is before.obj(key) or before.nodes[key].kind in ("op", "type", "output")


def test_bare_graphs_are_numbered_as_a_function_graph_would_number_them():
    x, y = st.dvector("x"), st.dvector("y")
    out = (x * 2 + y).sum()
    bare = build_model(out, style="compact")
    fg = FunctionGraph([x, y], [out], clone=False)
    keyed = build_model(fg, style="compact")
    assert set(bare.nodes) == set(keyed.nodes)  # a FunctionGraph's picture draws its inputs first
    for key in bare.nodes:
        assert bare.obj(key) is keyed.obj(key)
    assert build_model(x).nodes.keys() == {"v0", "type0"}
    assert list(build_model(x + y).nodes)[:2] == ["v3", "a2"]  # z first, as seed 000 draws it
    assert diagram(out).source == diagram(out).source  # deterministic


def test_trace_keys_and_its_last_step():
    trace = a_trace()
    model = build_model(trace, style="compact")
    for key, node in model.nodes.items():
        if isinstance(node.obj, Apply):
            assert trace.key(node.obj) == trace.fgraph.key(node.obj) == key
    last = [n for n in trace.steps[-1].created if n in trace.fgraph]
    assert last and model.keys_with("created") == [trace.key(n) for n in last]
    nodes = dot_names(diagram(trace, style="compact").source)
    assert trace.key(last[0]) in nodes


def test_cursor_steps_keep_the_keys_of_untouched_nodes():
    from symlab.rewriting import rewrite_graph

    x = st.dvector("x")
    _, trace = rewrite_graph([st.exp(x) * (st.constant(2.0) + 3.0) + st.log(x)], include=("fast_compile",))
    assert len(trace) >= 2
    cursor = trace.cursor()
    for k in range(len(trace)):
        cursor.seek(k)
        before = build_model(cursor, style="compact")
        at_k = {n.obj: key for key, n in before.nodes.items() if isinstance(n.obj, Apply)}
        cursor.forward()
        after = build_model(cursor, style="compact")
        at_next = {n.obj: key for key, n in after.nodes.items() if isinstance(n.obj, Apply)}
        untouched = set(at_k) & set(at_next)
        assert untouched  # a step touches only part of the graph
        for node in untouched:
            assert at_k[node] == at_next[node] == cursor.key(node)
        step = cursor.step
        created = {trace.key(n) for n in step.created} if step.accepted else set()
        assert set(after.keys_with("created")) == created & set(after.nodes)
        removed = {trace.key(n) for n in step.removed} if step.accepted else set()
        assert not removed & set(after.nodes)


# -- SVG back to objects ------------------------------------------------------------------------
@pytest.mark.skipif(not CAN_RENDER, reason="no Graphviz program")
@pytest.mark.parametrize("style", ["structure", "compact", "dataflow"])
def test_svg_groups_map_back_to_objects(style):
    fg = small_fgraph()
    model = build_model(fg, style=style, highlight=[fg.outputs[0].owner])
    nodes, edges = svg_groups(render.to_svg(dmod.to_dot(model)))
    assert set(nodes) == set(model.nodes)
    applies = {key for key, (classes, _, _) in nodes.items() if classes[:1] == ["apply"]}
    assert {model.obj(k) for k in applies} == fg.apply_nodes
    for key, (classes, title, texts) in nodes.items():
        node = model.nodes[key]
        assert title == key and classes == [node.kind, *sorted(node.classes)]
        assert texts == node.label
        obj = model.obj(key)
        if node.kind == "apply":
            assert fg.by_key(key) is obj and isinstance(obj, Apply)
        elif node.kind in ("variable", "input", "constant"):
            assert fg.by_key(key) is obj and isinstance(obj, Variable)
        elif node.kind == "output":  # the dataflow style draws an output as its variable's box
            assert obj is (fg.by_key(key) if style == "dataflow" else fg.outputs[int(key[3:])])
    lit = [k for k, (classes, _, _) in nodes.items() if "highlight" in classes]
    assert lit == [fg.key(fg.outputs[0].owner)]
    assert set(edges) == {e.key for e in model.edges}
    for edge in model.edges:
        classes, title, _ = edges[edge.key]
        assert classes == [edge.kind, *sorted(edge.classes)] and title == f"{edge.tail}->{edge.head}"


# -- the dataflow style: a box per variable, for values ------------------------------------------
def test_dataflow_draws_every_variable_as_a_box_between_op_nodes():
    fg = small_fgraph()  # exp(x + y) * 2.0
    x = fg.inputs[0]
    out = fg.outputs[0]
    exp = next(n for n in fg.apply_nodes if "exp" in str(n.op))
    model = build_model(fg, style="dataflow", lines={x: ["1.0"], fg.key(out): ["2.0", "grad 1.0"]},
                        classes={"nan-origin": [exp, exp.outputs[0]]})
    variables = {v for n in fg.apply_nodes for v in (*n.inputs, *n.outputs)}
    boxes = {k: n for k, n in model.nodes.items() if n.kind != "apply"}
    assert {n.obj for n in boxes.values()} == variables and all(fg.by_key(k) is n.obj for k, n in boxes.items())
    assert {n.obj for n in model.nodes.values() if n.kind == "apply"} == fg.apply_nodes
    for edge in model.edges:  # every arrow joins a variable's box and an op node
        kinds = {model.nodes[edge.tail].kind == "apply", model.nodes[edge.head].kind == "apply"}
        assert kinds == {True, False} and edge.kind in ("input", "output")
    assert model.nodes[fg.key(x)].label == ["x", "1.0"]
    assert model.nodes[fg.key(out)].kind == "output" and model.nodes[fg.key(out)].label[-2:] == ["2.0", "grad 1.0"]
    assert model.nodes[fg.key(exp)].label == ["exp"]
    assert model.keys_with("nan-origin") == [fg.key(exp), fg.key(exp.outputs[0])]
    source = dmod.to_dot(model).source
    assert "rankdir=LR" in source and '\\n2.0\\ngrad 1.0"' in source
    red = dmod.CLASS_STYLES["nan-origin"]
    painted = f'{fg.key(exp)} [label=exp class="apply nan-origin" color="{red["color"]}" fillcolor="{red["fillcolor"]}"'
    assert painted in source
    # lines in the compact style go where the variable is drawn: an intermediate variable's edge
    add_out = exp.inputs[0]
    compact = build_model(fg, style="compact", lines={add_out: ["3.0"]})
    assert [e.label for e in compact.edges if e.var == fg.key(add_out)] == ["3.0"]
    plain = dmod.to_dot(build_model(fg, "compact")).source
    assert dmod.to_dot(build_model(fg, style="compact", lines={})).source == plain


def test_dataflow_folds_without_merging_repeats():
    x = st.dvector("x")
    parts = [st.exp(x) * st.log(x) for _ in range(30)]
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    model = build_model(total, style="dataflow", max_nodes=60)
    copies = sum(len(c) for c in model.copies.values())  # x, drawn once per use, as in the compact style
    assert model.merged == 0 and model.folded > 0 and len(model.nodes) - copies <= 65  # each repeat has its own values
    assert model.nodes[model.key_of(total)].kind == "output"
    small = build_model(total, style="dataflow", max_nodes=1000)
    assert small.folded == 0 and sum(n.kind == "apply" for n in small.nodes.values()) == small.total == 119


# -- highlight classes --------------------------------------------------------------------------
def test_highlight_classes_and_helpers():
    fg = small_fgraph()
    exp = next(n for n in fg.apply_nodes if "exp" in str(n.op))
    x = fg.inputs[0]
    model = build_model(fg, style="compact", highlight=[exp], classes={"selected": [fg.key(x)], "client": [exp]})
    assert model.keys_with("highlight") == [fg.key(exp)]
    assert model.keys_with("selected") == [fg.key(x)]
    assert model.nodes[fg.key(exp)].classes == {"highlight", "client"}
    model.add_class([fg.key(exp)], "removed")
    model.discard_class(fg.key(exp), "client")
    assert model.nodes[fg.key(exp)].classes == {"highlight", "removed"}
    edge = model.edges[0]
    model.add_class([edge.key], "client")
    assert "client" in edge.classes
    with pytest.raises(KeyError, match="no node or edge has the key 'nope'"):
        model.add_class(["nope"], "selected")
    source = dmod.to_dot(model).source
    assert f'{fg.key(exp)} [label="Elemwise{{exp,no_inplace}}" class="apply highlight removed"' in source
    assert f'class="input selected" color="{dmod.CLASS_STYLES["selected"]["color"]}"' in source
    assert f'{fg.key(exp)} [label="Elemwise{{exp,no_inplace}}" class="apply highlight removed" color=darkorange' in source
    mul = fg.outputs[0].owner
    model.add_class(fg.key(mul), "removed")  # the first class of CLASS_STYLES a node has paints it
    assert 'class="apply removed" color="#dc3545"' in dmod.to_dot(model).source
    assert 'penwidth=2 shape=box style="filled,dashed"' in dmod.to_dot(model).source
    with pytest.raises(KeyError, match="not drawn"):
        model.key_of(st.dscalar("elsewhere"))
    with pytest.raises(KeyError, match="nothing is drawn under the key"):
        model.obj("a999")


# -- folding ----------------------------------------------------------------------------------
def chain(n):
    x = st.dvector("x")
    y = x
    for _ in range(n):
        y = st.exp(y)
    return x, y


@pytest.mark.parametrize("style", ["structure", "compact", "dataflow"])
def test_folded_pictures_say_how_many_nodes_they_hide(style):
    _, y = chain(400)
    model = build_model(y, style=style, max_nodes=40)
    assert model.total == 400 and model.groups == 1 and model.folded > 300
    drawn = [n for n in model.nodes.values() if n.kind == "apply"]
    assert len(drawn) + model.folded + model.merged == model.total
    group = next(n for n in model.nodes.values() if n.kind == "group")
    assert group.key == "g0" and group.count == model.folded and group.label == [f"… {model.folded} nodes …"]
    assert model.note == f"{model.folded} of 400 nodes folded into 1 group"
    hidden = group.obj
    assert all(model.key_of(n) == "g0" for n in hidden)  # a hidden node is found in its group
    source = dmod.to_dot(model).source
    assert f'label="{model.note}"' in source and "labelloc=b" in source
    if CAN_RENDER:
        root = ET.fromstring(render.to_svg(source))
        graph_texts = [t.text for g in root.iter(f"{SVG_NS}g") if g.get("class") == "graph"
                       for t in g.findall(f"{SVG_NS}text")]
        assert graph_texts == [model.note]


def test_merged_repeats_are_counted_and_keyed_by_their_representative():
    x = st.dvector("x")
    parts = [st.exp(x) * st.log(x) for _ in range(30)]
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    model = build_model(total, style="compact", max_nodes=60)
    exps = [p.owner.inputs[0].owner for p in parts]
    rep = model.key_of(exps[0])
    assert model.nodes[rep].count == 30 and model.nodes[rep].label == ["Elemwise{exp,no_inplace}", "×30"]
    assert all(model.key_of(e) == rep for e in exps)
    assert model.merged == 3 * 29 and model.folded == 0
    assert model.note == "87 repeated nodes drawn once (×k)"
    assert 'label="87 repeated nodes drawn once (×k)"' in diagram(total, style="compact", max_nodes=60).source


def test_small_pictures_have_no_note():
    model = build_model(chain(5)[1], style="compact")
    assert model.note is None and model.hidden == 0
    assert "labelloc" not in dmod.to_dot(model).source


# -- escaping ------------------------------------------------------------------------------------
HOSTILE = ["<script>", "<img src=x onerror=alert(1)>", 'a"b', "C:\\new", "javascript:alert(1)", "x&amp;y", "\\l"]


def hostile_fgraph():
    vs, out = sum_of_scalars(HOSTILE, "<script>alert(1)</script>")
    return FunctionGraph(vs, [out], clone=False)


@pytest.mark.parametrize("style", ["structure", "compact", "dataflow"])
def test_hostile_names_stay_literal(style):
    fg = hostile_fgraph()
    model = build_model(fg, style=style)
    labels = {line for n in model.nodes.values() for line in n.label}
    assert set(HOSTILE) <= labels  # the model holds the names as they are
    assert all(KEY_RE.fullmatch(k) for k in model.nodes)  # keys never come from names
    source = dmod.to_dot(model).source
    for name in HOSTILE:
        assert name.replace("\\", "\\\\").replace("&", "&amp;").replace('"', '\\"') in source
    assert "URL" not in source and "href" not in source and "<<" not in source
    if CAN_RENDER:
        svg = render.to_svg(source)
        nodes, _ = svg_groups(svg)
        texts = {t for _, _, ts in nodes.values() for t in ts}
        assert set(HOSTILE) <= texts
        assert set(nodes) == set(model.nodes)
        assert "href" not in svg and "<script" not in svg and "<img" not in svg


# -- variables with many clients --------------------------------------------------------------------
@pytest.mark.parametrize("style", ["structure", "compact", "dataflow"])
def test_an_input_with_many_clients_is_drawn_once_per_use(style):
    x, y = st.dvector("x"), st.dvector("y")
    h = x
    for _ in range(20):
        h = st.tanh(h) * y
    fg = FunctionGraph([x, y], [h])
    model = build_model(fg, style=style, max_nodes=1000)
    y_key = fg.key(fg.inputs[1])
    copies = model.copies[y_key]
    assert len(copies) == 20 and y_key not in model.nodes
    assert all(model.obj(k) is fg.inputs[1] for k in [y_key, *copies])
    assert model.key_of(fg.inputs[1]) == y_key and model.drawn_keys(y_key) == copies
    assert "drawn once per use: y (20 uses)" in model.note
    # x, used once, is drawn once; each copy has one arrow (to its one user; in the structure style the
    # first copy also points to the type)
    assert fg.key(fg.inputs[0]) in model.nodes
    for k in copies:
        assert sum(k in (e.tail, e.head) for e in model.edges) == (2 if style == "structure" and k == copies[0] else 1)
