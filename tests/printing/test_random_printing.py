"""Random generators on the pictures: the generator kind, the two outputs of a random node, and update arrows.

Every picture is parsed: the model, its DOT source and the SVG Graphviz makes of it. A generator is a gold
cylinder of kind ``generator`` in every style; a random node's outputs are labelled ``next generator`` and
``draw``; each update of a compiled function (explicit or default, a generator's or a tensor's) is a dashed
``update`` arrow from the value to the shared variable it is stored into. No picture, text or view advances a
shared generator.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hostile_names import HOSTILE

import symlab
import symlab.tensor as st
from symlab.printing import debugprint
from symlab.printing.diagram import GENERATOR_COLORS, LEGENDS, UPDATE_COLOR, to_dot
from symlab.printing.model import EDGE_KINDS, NODE_KINDS, build_model
from symlab.printing.render import can_render, to_svg
from symlab.tensor.random.basic import normal, uniform
from symlab.tensor.random.utils import RandomStream

SVG = "{http://www.w3.org/2000/svg}"
needs_graphviz = pytest.mark.skipif(not can_render(), reason="no Graphviz renderer installed")


# -- graphs ------------------------------------------------------------------------------------------------
def sgd_with_noise(name_rng="rng", name_w="w"):
    """A training step: w <- w - 0.1 * grad, with a noisy target drawn from a shared generator advanced by hand."""
    rng = symlab.shared(np.random.default_rng(42), name=name_rng)
    w = symlab.shared(np.zeros(3), name=name_w)
    mu = st.dscalar("mu")
    next_rng, noise = normal(mu, 1.0, size=(3,), rng=rng, return_next_rng=True)
    noise.name = "noise"
    cost = ((w - noise) ** 2).sum()
    (g,) = symlab.grad(cost, [w])
    f = symlab.function([mu], cost, updates=[(rng, next_rng), (w, w - 0.1 * g)], mode="NUMPY")
    return f, rng, w


def state(shared):
    return shared.get_value(borrow=True).bit_generator.state


# -- parsing ---------------------------------------------------------------------------------------------------
DOT_EDGE = re.compile(r'^\s*(\w+) -> (\w+) \[(.*)\]$')
DOT_ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^\s\]]+)')


def dot_edges(source):
    out = []
    for line in source.splitlines():
        m = DOT_EDGE.match(line)
        if m:
            attrs = {k: v.strip('"') for k, v in DOT_ATTR.findall(m.group(3))}
            out.append((m.group(1), m.group(2), attrs))
    return out


def svg_parts(svg):
    """{id: (classes, texts, shapes)} of the nodes and the edges of an SVG made by dot."""
    root = ET.fromstring(svg)
    found = {}
    for g in root.iter(f"{SVG}g"):
        classes = (g.get("class") or "").split()
        if classes[:1] in (["node"], ["edge"]):
            shapes = [e for e in g.iter() if e.tag in (f"{SVG}path", f"{SVG}polygon", f"{SVG}ellipse")]
            found[g.get("id")] = (classes, [t.text for t in g.iter(f"{SVG}text")], shapes)
    return found


# -- the model -------------------------------------------------------------------------------------------------
def test_a_compiled_step_draws_an_update_arrow_for_every_update_in_the_model_dot_and_svg():
    f, rng, w = sgd_with_noise()
    fg = f.maker.fgraph
    rng_in, w_in = (v for v in fg.inputs if getattr(v, "container", None) in (rng.container, w.container))
    if rng_in.container is w.container:
        rng_in, w_in = w_in, rng_in
    assert {"generator"} <= set(NODE_KINDS) and "update" in EDGE_KINDS
    model = build_model(f, style="compact")
    updates = {(e.tail, e.head): e for e in model.edges if e.kind == "update"}
    # outputs: the cost, then the updates in the order given: rng's (output 1), w's (output 2)
    assert set(updates) == {("out1", fg.key(rng_in)), ("out2", fg.key(w_in))}
    assert all(e.label == "update" for e in updates.values())
    assert model.obj("out1") is fg.outputs[1] and model.obj("out2") is fg.outputs[2]
    assert model.nodes[fg.key(rng_in)].kind == "generator" and model.nodes["out1"].kind == "generator"
    assert model.nodes[fg.key(w_in)].kind == "input" and model.nodes["out2"].kind == "output"
    assert model.nodes["out1"].label[0] == "update of rng" and model.nodes["out2"].label[0] == "update of w"
    source = to_dot(model, legend=True).source
    drawn = {(a, b): attrs for a, b, attrs in dot_edges(source)}
    for pair in updates:
        attrs = drawn[pair]
        assert attrs["class"] == "update" and attrs["style"] == "dashed" and attrs["constraint"] == "false"
        assert attrs["label"] == "update" and attrs["color"] == UPDATE_COLOR
    assert "generator (state)" in source  # the legend says what the cylinder is
    if can_render():
        parts = svg_parts(to_svg(source))
        for tail, head in updates:
            classes, texts, shapes = parts[f"{tail}_{head}"]
            assert classes == ["edge", "update"] and texts == ["update"]
            assert any(s.get("stroke-dasharray") for s in shapes if s.tag == f"{SVG}path")
        classes, texts, shapes = parts[fg.key(rng_in)]
        assert classes == ["node", "generator"] and texts == ["rng"]
        assert GENERATOR_COLORS[1] in {s.get("fill") for s in shapes}  # the cylinder, filled gold (its rim: none)
        assert {s.get("stroke") for s in shapes} == {GENERATOR_COLORS[0]}


def test_every_style_gives_generators_their_kind_and_the_random_node_its_two_named_outputs():
    f, rng, w = sgd_with_noise()
    structure = build_model(f, style="structure")
    draw_node = next(n for n in f.maker.fgraph.apply_nodes if type(n.op).__name__ == "NormalRV")
    next_key, draw_key = (structure.key_of(o) for o in draw_node.outputs)
    assert structure.nodes[next_key].kind == "generator" and structure.nodes[next_key].label[-1] == "next generator"
    assert structure.nodes[draw_key].kind == "variable" and structure.nodes[draw_key].label[-1] == "draw"
    ups = [(e.tail, e.head) for e in structure.edges if e.kind == "update"]
    fg = f.maker.fgraph
    assert (structure.key_of(fg.outputs[1]), fg.key(draw_node.inputs[0])) in ups and len(ups) == 2
    compact = build_model(f, style="compact")
    labels = {e.label for e in compact.edges if e.tail == fg.key(draw_node)}
    assert "next generator" in labels and any(label.endswith("draw noise") or label == "draw" for label in labels)
    # an uncompiled graph: a RandomStream's generator, its next generator and the default update between them
    stream = RandomStream(5)
    d = stream.normal(0, 1, size=(2,))
    flow = build_model(st.exp(d), style="dataflow")
    ((gen, nxt),) = stream.state_updates  # the stream's (generator, next generator) pair
    arrows = [(e.tail, e.head, e.label) for e in flow.edges if e.kind == "update"]
    assert arrows == [(flow.key_of(nxt), flow.key_of(gen), "default update")]
    assert flow.nodes[flow.key_of(gen)].kind == flow.nodes[flow.key_of(nxt)].kind == "generator"
    assert [e.label for e in flow.edges if e.tail == flow.key_of(d.owner)] == ["next generator", "draw"]


def test_default_updates_are_drawn_and_no_default_updates_draws_none():
    stream = RandomStream(11)
    u = stream.uniform(0, 1, size=(4,))
    u.name = "u"
    advancing = symlab.function([], u, mode="NUMPY")
    frozen = symlab.function([], u, no_default_updates=True, mode="NUMPY")
    ((gen, _),) = stream.state_updates
    model = build_model(advancing, style="compact")
    (arrow,) = [e for e in model.edges if e.kind == "update"]
    assert arrow.tail == "out1" and model.obj(arrow.head).container is gen.container and arrow.label == "update"
    assert not [e for e in build_model(frozen, style="compact").edges if e.kind == "update"]
    assert "generator (state)" in to_dot(build_model(frozen), legend=True).source  # still a generator
    assert "update" not in to_dot(build_model(frozen), legend=True).source.split("label=<")[-1]  # no arrow entry


def test_pictures_without_randomness_and_without_updates_are_unchanged():
    x = st.dvector("x")
    f = symlab.function([x], st.exp(x).sum(), mode="NUMPY")
    model = build_model(f, style="compact")
    assert not any(n.kind == "generator" for n in model.nodes.values())
    assert not any(e.kind == "update" for e in model.edges)
    legend = to_dot(model, legend=True).source
    assert all(text in legend for text, _, _ in LEGENDS["compact"]) and "generator" not in legend


def test_debugprint_of_a_function_prints_its_updates_as_roots_after_its_outputs_as_pytensor_does():
    rng = symlab.shared(np.random.default_rng(0), name="rng")
    next_rng, x = uniform(0.0, 1.0, rng=rng, return_next_rng=True)
    f = symlab.function([], x, updates={rng: next_rng}, mode="NUMPY")
    text = debugprint(f, file="str")
    lines = text.splitlines()
    assert lines[0].startswith('uniform_rv{"(),()->()"}.1 [id A]')
    assert lines[-1].startswith('uniform_rv{"(),()->()"}.0 [id A]')  # the update: the same node's next generator
    assert sum(1 for line in lines if not line.startswith(" ")) == 2  # the output and the update


# -- reads never advance a generator ------------------------------------------------------------------------------
def test_no_picture_or_text_advances_the_shared_generator():
    f, rng, w = sgd_with_noise()
    before, w_before = state(rng), w.get_value().copy()
    for style in ("compact", "structure", "dataflow"):
        source = to_dot(build_model(f, style=style), legend=True).source
        if can_render():
            to_svg(source)
    debugprint(f, file="str")
    f.maker.fgraph.outputs[0].owner  # noqa: B018 - only reads
    assert state(rng) == before and np.array_equal(w.get_value(), w_before)
    f(0.0)
    assert state(rng) != before  # the function itself does advance it


# -- user names are literal -----------------------------------------------------------------------------------------
@needs_graphviz
def test_hostile_names_of_shared_generators_and_tensors_stay_literal_in_dot_and_svg():
    f, rng, w = sgd_with_noise(name_rng=HOSTILE[0], name_w=HOSTILE[7])
    model = build_model(f, style="compact")
    source = to_dot(model, legend=True).source
    parts = svg_parts(to_svg(source))
    texts = [t for classes, ts, _ in parts.values() for t in ts if t]
    assert HOSTILE[0] in texts  # the generator's input node, word for word
    assert f"update of {HOSTILE[0]}" in texts and f"update of {HOSTILE[7]}" in texts
    assert "onerror" not in "".join(ET.tostring(s).decode() for _, _, shapes in parts.values() for s in shapes)
