"""A scan drawn and printed: the box that opens to its body, the taps on its inputs, the recurrence, debugprint.

Each case parses what is drawn: the model (keys, labels, sections, edges), the DOT source and the SVG Graphviz
writes from it; user names are checked literal (escaped where the format needs it).
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

import pytest
from inner_graph_helpers import inner_fingerprint
from inner_pictures import HOSTILE

import symlab
import symlab.tensor as st
from symlab.graph.fg import FunctionGraph
from symlab.printing import debugprint, to_dot
from symlab.printing.diagram import diagram
from symlab.printing.model import build_model
from symlab.printing.render import can_render, to_svg

SVG = "{http://www.w3.org/2000/svg}"
needs_dot = pytest.mark.skipif(not can_render(), reason="no Graphviz program installed")


def rnn(name="rnn", n_steps=5):
    """h[t] = tanh(W h[t-1] + x[t] + x[t+1]): a state with one tap and a sequence with two."""
    x, W, h0 = st.dmatrix("x"), st.dmatrix("W"), st.dvector("h")
    hs, _ = symlab.scan(lambda x_t, x_next, h: st.tanh(st.dot(W, h) + x_t + x_next),
                        sequences=dict(input=x, taps=[0, 1]), outputs_info=h0, n_steps=n_steps, name=name)
    node = hs.owner.inputs[0].owner
    return FunctionGraph([x, W, h0], [hs], clone=False), node, hs


def fib():
    """f[t] = f[t-2] + f[t-1]: one state read at two taps."""
    f0 = st.dvector("f")
    fs, _ = symlab.scan(lambda a, b: a + b, outputs_info=dict(initial=f0, taps=[-2, -1]), n_steps=6, name="fib")
    return FunctionGraph([f0], [fs], clone=False), fs.owner.inputs[0].owner


@pytest.mark.parametrize("style", ["compact", "dataflow", "structure"])
def test_a_scan_opens_to_its_body_with_taps_labelled_and_the_recurrence_drawn(style):
    fg, node, _ = rnn()
    key = fg.key(node)
    before, version = inner_fingerprint(list(fg.outputs)), fg.version
    closed = build_model(fg, style)
    assert closed.nodes[key].openable and not closed.sections
    if style != "structure":  # unopened, the node reads as the loop it is
        assert closed.nodes[key].label == ["Scan{rnn}"] or closed.nodes[key].label == ["Scan", "{rnn}"]
    model = build_model(fg, style, open_inner=[key])
    (section,) = model.sections
    assert section.caption == "scan 'rnn', n_steps = 5"
    labels = {model.nodes[k].label[0]: k for k in section.members}
    for tap in ("x[t]", "x[t+1]", "h[t-1]", "h[t]"):
        assert tap in labels, (tap, sorted(labels))
    (recur,) = [e for e in model.edges if e.kind == "recur"]
    assert (recur.tail, recur.head, recur.label) == (labels["h[t]"], labels["h[t-1]"], "next iteration")
    dot = diagram(fg, style=style, open_inner=[key])
    assert "class=recur" in dot.source and 'label="scan \'rnn\', n_steps = 5"' in dot.source
    assert inner_fingerprint(list(fg.outputs)) == before and fg.version == version  # a read changes nothing


def test_a_state_read_at_two_taps_gets_an_arrow_to_each_and_the_legend_says_what_they_are():
    fg, node = fib()
    model = build_model(fg, "dataflow", open_inner=[node])
    names = {k: model.nodes[k].label[0] for k in model.nodes}
    assert sorted((names[e.tail], names[e.head]) for e in model.edges if e.kind == "recur") == [
        ("f[t]", "f[t-1]"), ("f[t]", "f[t-2]")]
    legend = to_dot(fg, legend=True, open_inner=[node], style="dataflow").source
    assert "- - next iteration" in legend  # the legend names the dashed arrows


def test_a_while_loop_says_so_and_labels_its_condition():
    x = st.dscalar("x")
    out, _ = symlab.scan(lambda a: (a * 2, symlab.scan.utils.until(a > 50)), outputs_info=x, n_steps=20,
                         name="grow")
    fg = FunctionGraph([x], [out], clone=False)
    node = out.owner.inputs[0].owner
    model = build_model(fg, "dataflow", open_inner=[node])
    assert model.sections[0].caption == "while loop 'grow', at most n_steps = 20"
    assert "until" in {model.nodes[k].label[0] for k in model.sections[0].members}


@needs_dot
def test_the_svg_of_an_open_scan_has_its_labels_and_a_dashed_next_iteration_arrow():
    fg, node, _ = rnn()
    key = fg.key(node)
    svg = ET.fromstring(to_svg(diagram(fg, style="compact", open_inner=[key])))
    texts = [t.text or "" for t in svg.iter(f"{SVG}text")]
    for label in ("scan 'rnn', n_steps = 5", "x[t]", "x[t+1]", "h[t-1]", "h[t]", "next iteration"):
        assert label in texts, label
    recur = [g for g in svg.iter(f"{SVG}g") if "recur" in (g.get("class") or "").split()]
    assert len(recur) == 1
    path = next(recur[0].iter(f"{SVG}path"))
    assert path.get("stroke-dasharray")  # dashed


@needs_dot
def test_hostile_names_stay_literal_in_the_dot_the_svg_and_debugprint():
    for name in HOSTILE:
        x, h0 = st.dvector(name), st.dscalar(name + "0")
        hs, _ = symlab.scan(lambda x_t, h: h + x_t, sequences=x, outputs_info=h0, name=name)
        fg = FunctionGraph([x, h0], [hs], clone=False)
        node = hs.owner.inputs[0].owner
        svg = ET.fromstring(to_svg(diagram(fg, style="dataflow", open_inner=[node])))  # parses: escaped
        texts = [t.text or "" for t in svg.iter(f"{SVG}text")]
        assert f"scan {name!r}, n_steps from its inputs" in texts
        assert f"{name}[t]" in texts and f"{name}0[t-1]" in texts and f"{name}0[t]" in texts
        buf = io.StringIO()
        debugprint(hs, file=buf)
        assert f"Scan{{{name}}}" in buf.getvalue() and f"→ {name}0[t]" in buf.getvalue()


def test_debugprint_lists_the_body_under_inner_graphs_with_the_taps():
    fg, node, hs = rnn()
    buf = io.StringIO()
    debugprint(hs, file=buf)
    text = buf.getvalue()
    head, inner = text.split("\nInner graphs:\n")
    assert "Scan{rnn} [id B] ''" in head
    lines = inner.strip().splitlines()
    assert lines[0] == "Scan{rnn} [id B] (scan 'rnn', n_steps = 5)"
    assert lines[1].startswith(" >Elemwise{tanh,no_inplace}") and lines[1].endswith("→ h[t]")
    for tap in ("|h[t-1] [id", "|x[t] [id", "|x[t+1] [id", "|W [id"):
        assert any(tap in line for line in lines), tap
    buf = io.StringIO()
    debugprint(hs, file=buf, inner="inline")
    inline = buf.getvalue().splitlines()
    assert "   >scan 'rnn', n_steps = 5:" in inline
    assert any(line.endswith("→ h[t]") for line in inline)
    assert any("h[t-1] [id" in line and "← DimShuffle{x,0}" in line for line in inline)


def test_an_inner_input_whose_name_is_not_its_tap_gets_the_tap_in_debugprint():
    fg, node = fib()
    body = node.op.fgraph
    renamed = node.op.clone()
    renamed_body = renamed.fgraph
    assert renamed_body is not body
    renamed_body.inputs[0].name = "older"  # a copy's body: the scan drawn below is untouched
    out = renamed(*node.inputs)[0]
    buf = io.StringIO()
    debugprint(out, file=buf)
    assert "older [id" in buf.getvalue() and "(f[t-2])" in buf.getvalue()
    assert body.inputs[0].name == "f[t-2]"
