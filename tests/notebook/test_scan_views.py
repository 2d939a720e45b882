"""The values view of a loop: iteration t's inner values (against NumPy loops), the slider and its Python twin,
the plot of each state across iterations (SVG, PNG decoded, text), the NaN born at iteration t, and memory."""

from __future__ import annotations

import base64
import io
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from inner_graph_helpers import inner_fingerprint
from inner_pictures import HOSTILE

import symlab
import symlab.tensor as st
from symlab.notebook.bar_png import plot_area
from symlab.notebook.graph_view import GraphView
from symlab.notebook.loop_values import LoopRun
from symlab.notebook.values import ValuesView
from symlab.printing import debugprint
from symlab.printing.render import can_render
from tests.notebook.test_random_views import _decode_png

SVG = "{http://www.w3.org/2000/svg}"


def two_layer_rnn():
    """Two stacked Elman layers, a[t] = tanh(W a[t-1] + U x[t]), b[t] = tanh(V b[t-1] + a[t]), one scan."""
    x, W, U, V = st.dmatrix("x"), st.dmatrix("W"), st.dmatrix("U"), st.dmatrix("V")
    a0, b0 = st.dvector("a"), st.dvector("b")

    def step(x_t, a, b):
        a_new = st.tanh(st.dot(W, a) + st.dot(U, x_t))
        a_new.name = "a_new"
        return a_new, st.tanh(st.dot(V, b) + a_new)

    (a_s, b_s), _ = symlab.scan(step, sequences=x, outputs_info=[a0, b0], name="rnn")
    rng = np.random.default_rng(3)
    values = {x: rng.normal(size=(7, 3)), W: rng.normal(size=(4, 4)) * 0.5, U: rng.normal(size=(4, 3)),
              V: rng.normal(size=(4, 4)) * 0.5, a0: rng.normal(size=4), b0: np.zeros(4)}
    return (a_s, b_s), values, a_s.owner.inputs[0].owner, (x, W, U, V, a0, b0)


def numpy_rnn(values, variables):
    x, W, U, V, a0, b0 = (values[v] for v in variables)
    a, b, rows = a0, b0, []
    for x_t in x:
        a_new = np.tanh(W @ a + U @ x_t)
        b_new = np.tanh(V @ b + a_new)
        rows.append((a, b, a_new, b_new))
        a, b = a_new, b_new
    return rows


def test_the_iteration_slider_and_its_python_twin_give_a_numpy_loops_values_at_t():
    (a_s, b_s), values, node, variables = two_layer_rnn()
    cost = (a_s.sum() + b_s.sum())
    before = inner_fingerprint([cost])
    view = ValuesView(cost, values)
    key = view.key_of(node)
    body = node.op.fgraph
    expected = numpy_rnn(values, variables)
    a_new = next(v for n in body.toposort() for v in n.outputs if v.name == "a_new")
    for t in (0, 3, 6):  # read without showing
        found = view.at_iteration(node, t)
        a, b, a_next, b_next = expected[t]
        np.testing.assert_allclose(found[body.inputs[1]], a)  # a[t-1]
        np.testing.assert_allclose(found[body.inputs[2]], b)  # b[t-1]
        np.testing.assert_allclose(found[a_new], a_next)  # an inner node of the body
        np.testing.assert_allclose(found[body.outputs[1]], b_next)  # b[t]
    assert view.iterations == {} and view.open_inner == []  # a read opens nothing
    view.iteration(node, 4)  # what moving the slider does: opens the node at t = 4
    assert view.iterations == {key: 4} and key in view.open_inner
    inner_key = f"{key}/{body.key(body.outputs[1])}"
    np.testing.assert_allclose(view.value(inner_key), expected[4][3])
    run = view._inner.loops[key]
    fixed = range(*node.op.info.inner_slices()["non_seqs"].indices(len(body.inputs)))
    assert len(fixed) == 3 and all(run.inputs_at(t)[k] is run.inputs_at(0)[k] for t in range(7) for k in fixed)
    assert f"{key}#t" in {c["key"] for c in view.controls}
    slider = next(c for c in view.controls if c["key"] == f"{key}#t")
    assert (slider["min"], slider["max"], slider["value"], slider["name"]) == (0, 6, 4, "t of scan 'rnn'")
    view._on_value({"type": "value", "key": f"{key}#t", "value": 2})  # the browser's message
    assert view.iterations == {key: 2}
    np.testing.assert_allclose(view.value(inner_key), expected[2][3])
    assert any("t = 2 of 0 … 6" in line for line in view.model.nodes[key].label)  # the box says which t
    with pytest.raises(ValueError, match=r"iteration 7 is out of range for scan 'rnn' \(iterations: 0 … 6\)"):
        view.iteration(node, 7)
    with pytest.raises(TypeError, match="the iteration must be an int"):
        view.iteration(node, 1.5)
    with pytest.raises(ValueError, match="is not a loop"):
        view.iteration(cost.owner, 0)
    assert view.iterations == {key: 2}  # a refused move changes nothing
    printed = io.StringIO()
    debugprint(cost, file=printed)
    assert "→ b[t]" in printed.getvalue()
    assert inner_fingerprint([cost]) == before  # reads and iterations never change the graph or the body


def test_the_plot_of_each_state_across_iterations_is_an_svg_a_png_whose_lines_follow_the_values_and_text():
    x = st.dvector("x")
    acc, _ = symlab.scan(lambda x_t, a: a + x_t, sequences=x, outputs_info=st.constant(0.0), name="cumsum")
    node = acc.owner.inputs[0].owner
    xs = np.array([1.0, -2.0, 4.0, 0.5, -3.0, 2.0])
    view = ValuesView(acc, {x: xs})
    view.iteration(node, 3)
    plot = view.loop_plot(node)
    sums = np.cumsum(xs)
    (label, names, data), = plot.charts
    assert (label, names) == ("out0[t]", ["out0[t]"])
    np.testing.assert_allclose(data[:, 0], sums)
    assert view.histogram_panel["key"] == view.key_of(node) and view.histogram_panel["svg"] == plot.svg()
    svg = ET.fromstring(plot.svg())
    (line,) = svg.iter(f"{SVG}polyline")
    assert len(line.get("points").split()) == len(sums)
    assert any("t = 3" in (t.text or "") for t in svg.iter(f"{SVG}title"))
    bundle = plot._repr_mimebundle_()
    pixels = _decode_png(base64.b64decode(bundle["image/png"]))
    left, top, plot_w, plot_h = plot_area(360, 110)
    blue = np.all(pixels == (0x4C, 0x6E, 0xF5), axis=2)
    lo, hi = sums.min(), sums.max()
    for t, value in enumerate(sums):  # each point is where its value says: the line passes through it
        x_px = left + round(t * (plot_w - 1) / (len(sums) - 1))
        y_px = top + round((1 - (value - lo) / (hi - lo)) * (plot_h - 1))
        assert blue[y_px, x_px], (t, value)
    assert blue.sum() > plot_w  # a line, not only points
    text = plot.text()
    assert text.splitlines()[0] == "scan 'cumsum': 6 iterations, t = 3 marked"
    assert "> 3             3.5" in text  # 1 - 2 + 4 + 0.5, the marked row


def test_a_large_state_is_plotted_as_its_min_mean_and_max_and_a_small_one_element_by_element():
    xs, h = st.dmatrix("xs"), st.dvector("h")
    out, _ = symlab.scan(lambda x_t, a: a * 0.5 + x_t, sequences=xs, outputs_info=h, name="smooth")
    node = out.owner.inputs[0].owner
    rng = np.random.default_rng(0)
    for size, names in ((2, ["[0]", "[1]"]), (20, ["min", "mean", "max"])):
        values = [np.int64(5), rng.normal(size=(5, size)), np.zeros((1, size))]
        run = LoopRun(node, values)
        found, data = run.trace_of(0)
        assert found == names
        states, a = [], np.zeros(size)
        for row in values[1]:
            a = a * 0.5 + row
            states.append(a)
        states = np.array(states)
        expected = states if size == 2 else np.stack([states.min(1), states.mean(1), states.max(1)], axis=1)
        np.testing.assert_allclose(data, expected)


def test_the_nan_origin_names_the_iteration_and_the_body_node_where_it_is_born():
    x = st.dvector("x")
    acc, _ = symlab.scan(lambda x_t, a: st.log(a + x_t), sequences=x, outputs_info=st.constant(3.0), name="rnn")
    node = acc.owner.inputs[0].owner
    xs = np.array([0.0, 0.0, -1.0, -5.0, 1.0])
    a, born = 3.0, None  # the NumPy loop: where does log first get a negative number?
    for t, x_t in enumerate(xs):
        if born is None and a + x_t < 0:
            born = t
        a = np.log(a + x_t) if a + x_t > 0 else np.nan
    view = ValuesView(acc, {x: xs})
    key = view.key_of(node)
    log_key = next(f"{key}/{node.op.fgraph.key(n)}" for n in node.op.fgraph.toposort() if "log" in str(n.op))
    assert f"first NaN at iteration {born} of scan 'rnn' (of 5), node log((out0[t-1] + x[t])) in the body " \
           f"({log_key})" in view.nan_note
    assert f"**In a loop:** `first NaN at iteration {born} of scan 'rnn'" in view.markdown()  # untrusted: text
    view.expand(node)  # opens at the iteration where the NaN is born
    assert view.iterations == {key: born}
    assert "nan-origin" in view.model.nodes[log_key].classes
    view.iteration(node, 0)  # another iteration shown: the origin is still the same
    assert view.nan_note.count(f"iteration {born} of") == 1


def test_a_loop_keeps_its_inner_inputs_within_a_budget_and_recomputes_the_others():
    xs = st.dmatrix("xs")
    out, _ = symlab.scan(lambda x_t, a: a + x_t, sequences=xs, outputs_info=st.zeros((3,)), name="sum")
    node = out.owner.inputs[0].owner
    values = [np.int64(40), np.arange(120.0).reshape(40, 3), np.zeros((1, 3))]
    whole = LoopRun(node, values)
    small = LoopRun(node, values, budget=4 * 2 * 3 * 8)  # 4 iterations' inner inputs (x[t] and a[t-1])
    assert whole.stride == 1 and len(whole._kept) == 40
    assert small.stride == 10 and sorted(small._kept) == [0, 10, 20, 30, 39]  # and the last
    body = node.op.fgraph
    for t in (0, 17, 39):
        np.testing.assert_array_equal(small.values_at(t)[body.outputs[0]], whole.values_at(t)[body.outputs[0]])
        np.testing.assert_array_equal(small.values_at(t)[body.outputs[0]], values[1][: t + 1].sum(0))


def test_a_while_loop_shows_only_the_iterations_it_ran():
    x = st.dscalar("x")
    out, _ = symlab.scan(lambda a: (a * 2, symlab.scan.utils.until(a * 2 > 50)), outputs_info=x, n_steps=20,
                         name="grow")
    node = out.owner.inputs[0].owner
    view = ValuesView(out, {x: 1.0})
    view.iteration(node, 0)
    assert view.controls[-1]["max"] == 5  # 2, 4, ..., 64: six iterations of twenty
    assert float(view.at_iteration(node, 5)[node.op.fgraph.outputs[0]]) == 64.0


@pytest.mark.skipif(not can_render(), reason="no Graphviz program installed")
def test_the_graph_view_opens_a_scan_to_its_body_and_its_panel_says_what_loop_it_is():
    (a_s, b_s), _, node, _ = two_layer_rnn()
    cost = a_s.sum() + b_s.sum()
    view = GraphView(cost)
    key = view.key_of(node)
    view.select(node)
    rows = {row["label"]: row for row in view.panel["rows"]}
    assert "scan 'rnn', n_steps from its inputs: " in str(rows["inner graph"])
    view.expand(node)
    svg = ET.fromstring(view.svg)
    texts = {t.text for t in svg.iter(f"{SVG}text")}
    assert {"scan 'rnn', n_steps from its inputs", "x[t]", "a[t-1]", "b[t-1]", "a[t]", "b[t]"} <= texts
    assert sum("recur" in (g.get("class") or "") for g in svg.iter(f"{SVG}g")) == 2  # a and b: one arrow each
    assert key in view.model.opened
    view.close()


def test_hostile_names_are_literal_in_the_loop_plot_the_slider_and_the_nan_note():
    for name in HOSTILE:
        x, h0 = st.dvector(name), st.dscalar(name + "0")
        hs, _ = symlab.scan(lambda x_t, h: st.log(h + x_t), sequences=x, outputs_info=h0, name=name)
        node = hs.owner.inputs[0].owner
        view = ValuesView(hs, {x: np.array([0.0, -5.0, 1.0]), h0: 2.0})
        view.iteration(node, 1)
        svg = ET.fromstring(view.loop_plot(node).svg())  # parses: the names are escaped
        assert any((t.text or "").startswith(f"{name}0[t] (") for t in svg.iter(f"{SVG}text"))
        assert view.controls[-1]["name"] == f"t of scan {name!r}"
        assert f"first NaN at iteration 1 of scan {name!r}" in view.nan_note
