"""ValuesView through its Python model (no browser): values, gradients, NaN origins, sliders, errors, safety."""

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import symlab
import symlab.tensor as st
from symlab.graph.traversal import graph_inputs
from symlab.notebook.values import FULL_CHARS, ValuesView, value_lines
from symlab.printing import debugprint
from symlab.printing.diagram import CLASS_STYLES
from symlab.printing.render import can_render

HOSTILE = "<img src=x onerror=alert(1)>"
SVG = "{http://www.w3.org/2000/svg}"
needs_dot = pytest.mark.skipif(not can_render(), reason="Graphviz dot is not installed")


def neuron():
    """micrograd's neuron: o = tanh(x1*w1 + x2*w2 + b), with the lecture's numbers."""
    x1, x2, w1, w2, b = (st.dscalar(name) for name in ("x1", "x2", "w1", "w2", "b"))
    n = x1 * w1 + x2 * w2 + b
    n.name = "n"
    o = st.tanh(n)
    o.name = "o"
    values = {x1: 2.0, x2: 0.0, w1: -3.0, w2: 1.0, b: 6.8813735870195432}
    return o, values, [x1, x2, w1, w2, b]


def every_variable(out):
    seen, stack, found = set(), [out], []
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        found.append(v)
        if v.owner is not None:
            stack.extend(v.owner.inputs)
    return found


def needed(var, values):
    """The values of the inputs ``var`` depends on (``eval`` refuses others)."""
    leaves = set(graph_inputs([var]))
    return {k: v for k, v in values.items() if k in leaves}


def count_messages(view):
    sent = []
    original = view.send_state
    view.send_state = lambda key=None: (sent.append(set(key or ())), original(key))[1]
    return sent


def node_texts(svg):
    """{key: (classes, texts, stroke of the first shape)} of the SVG's nodes."""
    out = {}
    for g in ET.fromstring(svg).iter(f"{SVG}g"):
        classes = (g.get("class") or "").split()
        if classes[:1] != ["node"]:
            continue
        shape = next((e for e in g.iter() if e.tag in (f"{SVG}path", f"{SVG}polygon", f"{SVG}ellipse")), None)
        stroke = shape.get("stroke") if shape is not None else None
        out[g.get("id")] = (classes[1:], [t.text for t in g.iter(f"{SVG}text")], stroke)
    return out


# -- values and gradients ----------------------------------------------------------------------------
def test_micrograd_neuron_values_equal_eval_and_gradients_equal_grad_and_finite_differences():
    o, values, inputs = neuron()
    view = ValuesView(o, values, wrt=inputs)
    variables = every_variable(o)
    for var in variables:
        if var.owner is not None or var in values:
            assert np.array_equal(view.value(var), var.eval(needed(var, values)))  # the very numbers of eval
    for var in variables:
        g = view.gradient(var)
        assert g is not None  # every variable is on a path from an input to o
        expected = symlab.grad(o, var).eval(needed(symlab.grad(o, var), values))
        assert abs(float(g) - float(expected)) <= 1e-12
    # the lecture's numbers
    x1, x2, w1, w2, b = inputs
    assert [float(view.gradient(v)) for v in inputs] == pytest.approx([-1.5, 0.5, 1.0, 0.0, 0.5])
    assert float(view.value(o)) == pytest.approx(0.7071067811865476)
    assert view.text(o) == ["0.7071", "grad 1.0"] and view.text("n") == ["0.8814", "grad 0.5"]
    assert view.text(x1) == ["2.0", "grad -1.5"] and view.text(w2) == ["1.0", "grad 0.0"]
    # central finite differences of o, input by input
    h = 1e-6
    for var in inputs:
        up = {**values, var: values[var] + h}
        down = {**values, var: values[var] - h}
        numeric = (o.eval(up) - o.eval(down)) / (2 * h)
        assert float(view.gradient(var)) == pytest.approx(numeric, abs=1e-7)


def test_gradients_reach_only_the_variables_on_a_path_from_wrt_and_never_integers():
    o, values, (x1, x2, w1, w2, b) = neuron()
    n = o.owner.inputs[0]
    view = ValuesView(o, values, wrt=n)  # an intermediate variable: the gradient of o with respect to n and o
    assert float(view.gradient(n)) == pytest.approx(0.5) and float(view.gradient(o)) == 1.0
    assert view.gradient(x1) is None and view.text(x1) == ["2.0"]
    view = ValuesView(o, values, wrt=["w1"])
    assert view.gradient(x2) is None and float(view.gradient(w1)) == pytest.approx(1.0)
    x, i = st.dscalar("x"), st.iscalar("i")
    view = ValuesView(x * i, {x: 1.5, i: 3}, wrt=[x, i])
    assert float(view.gradient(x)) == 3.0 and view.gradient(i) is None and view.text(i) == ["3"]
    view.select(i)
    gradient_row = next(r for r in view.panel["rows"] if r["label"] == "gradient")
    assert gradient_row["text"] == "none: integer and boolean variables have no gradient"
    assert ValuesView(x * 2, {x: 1.0}).gradient(x) is None  # no wrt: no gradients drawn


def test_arrays_are_written_in_full_when_small_and_summarised_when_large():
    W, v, b = st.dmatrix("W"), st.dvector("v"), st.dvector("b")
    cost = st.tanh(st.dot(W, v) + b).sum()
    cost.name = "cost"
    Wv = np.arange(12.0).reshape(3, 4) / 10 - 0.5
    Wv[0, 0] = np.inf
    view = ValuesView(cost, {W: Wv, v: [1.0, 0.0, -1.0, 2.0], b: [0.1, 0.2, 0.3]}, wrt=[W, b])
    assert repr(view) == ("ValuesView of cost: 7 variables, 0 scalar inputs, 3 array inputs, gradients wrt W, b, "
                          "inf given as input W")
    assert view.nan_origins == [W]
    assert view.text(v) == ["[1.0, 0.0, -1.0, 2.0]"]
    assert view.text(W)[:3] == ["shape (3, 4) float64", "min -0.4, mean 0.1, max 0.6", "0 NaN, 1 inf"]
    assert view.text(W)[3] == "grad shape (3, 4) float64"
    assert view.text(b)[0].startswith("[0.1, 0.2, 0.3]") and view.text(b)[1].startswith("grad [")
    grad_b = symlab.grad(cost, b).eval({W: Wv, v: [1.0, 0.0, -1.0, 2.0], b: [0.1, 0.2, 0.3]})
    np.testing.assert_allclose(view.gradient(b), grad_b, rtol=0, atol=1e-12)
    # arrays have no slider: the controls say so
    assert [(c["name"], c["editable"]) for c in view.controls] == [("W", False), ("v", False), ("b", False)]
    assert "no slider" in view.controls[0]["why"] and view.controls[1]["text"] == "[1.0, 0.0, -1.0, 2.0]"
    assert value_lines(np.zeros(0)) == ["empty, shape (0,) float64"]


# -- NaN and inf -----------------------------------------------------------------------------------------
def test_nan_origin_is_the_log_of_x_minus_1_at_x_0():
    x = st.dscalar("x")
    shifted = x - 1
    y = st.log(shifted)
    out = st.exp(y) * 2.0
    view = ValuesView(out, {x: 0.0})
    log = y.owner
    assert view.nan_origins == [log]
    origin_keys = view.model.keys_with("nan-origin")
    assert origin_keys == [view.key_of(log), view.key_of(y)]
    for obj in (shifted, shifted.owner, x):  # x - 1 = -1.0 is fine: not marked
        assert not view.model.nodes[view.key_of(obj)].classes
    carried = set(view.model.keys_with("nan"))
    assert {view.key_of(out), view.key_of(out.owner), view.key_of(y.owner.outputs[0])} - set(origin_keys) <= carried
    assert view.nan_note == "NaN born at log((x - 1)), from (x - 1) = -1.0"
    assert view.summary().endswith("NaN born at log((x - 1)), from (x - 1) = -1.0")
    md = view.markdown()
    assert "**NaN/inf:** `NaN born at log((x - 1)), from (x - 1) = -1.0`" in md
    assert "| `log((x - 1))` | intermediate (NaN/inf born here) | `nan` | - |" in md
    view.select(log)
    assert "born here" in next(r["text"] for r in view.panel["rows"] if r["label"] == "NaN/inf")
    view.set(x, 3.0)  # log(2): no NaN anywhere
    assert view.nan_origins == [] and not view.model.keys_with("nan-origin") and not view.model.keys_with("nan")
    assert view.nan_note == "" and "NaN" not in view.summary()


def test_inf_and_nan_given_as_inputs_are_origins_too():
    x = st.dscalar("x")
    view = ValuesView(1.0 / x, {x: 0.0})
    assert view.nan_note == "inf born at (1.0 / x), from 1.0 = 1.0, x = 0.0"
    view = ValuesView(st.exp(x) + 1.0, {x: np.nan})
    assert view.nan_origins == [x] and view.nan_note == "NaN given as input x"
    assert view.model.keys_with("nan-origin") == [view.key_of(x)]


@needs_dot
def test_the_svg_has_the_values_on_the_boxes_and_the_nan_origin_in_red():
    o, values, inputs = neuron()
    view = ValuesView(o, values, wrt=inputs)
    nodes = node_texts(view.svg)
    x1 = inputs[0]
    assert nodes[view.key_of(x1)][1] == ["x1", "2.0", "grad -1.5"]
    assert nodes[view.key_of(o)][1] == ["o", "0.7071", "grad 1.0"]
    assert nodes[view.key_of(o.owner)][1] == ["tanh"]
    x = st.dscalar("x")
    y = st.log(x - 1)
    view = ValuesView(y * 2.0, {x: 0.0})
    nodes = node_texts(view.svg)
    red = CLASS_STYLES["nan-origin"]["color"]
    classes, texts, stroke = nodes[view.key_of(y.owner)]
    assert "nan-origin" in classes and texts == ["log"] and stroke == red
    assert nodes[view.key_of(y)][1][-1] == "nan" and nodes[view.key_of(y)][2] == red
    assert nodes[view.key_of(y.owner.inputs[0])][2] == "black"  # x - 1 = -1.0: not marked
    assert nodes[view.key_of(view.outputs[0])][2] == CLASS_STYLES["nan"]["color"]  # carries the NaN
    graph_texts = [t.text for g in ET.fromstring(view.svg).iter(f"{SVG}g") if g.get("class") == "graph"
                   for t in g.findall(f"{SVG}text")]
    assert graph_texts == ["NaN born at log((x - 1)), from (x - 1) = -1.0"]


# -- live values -------------------------------------------------------------------------------------
def test_set_reevaluates_values_and_gradients_and_answers_once():
    o, values, inputs = neuron()
    x1, x2, w1, w2, b = inputs
    view = ValuesView(o, values, wrt=inputs)
    sent, before = count_messages(view), view.drawn
    view.set("x2", 1.0)
    assert view.drawn == before + 1 and len(sent) == 1
    assert {"svg", "controls", "drawn"} <= sent[0]
    moved = {**values, x2: 1.0}
    assert view.value(o) == o.eval(moved) and float(view.gradient(w2)) == pytest.approx(
        float(symlab.grad(o, w2).eval(moved)), abs=1e-12)
    assert view.inputs[x2] == 1.0 and next(c for c in view.controls if c["name"] == "x2")["value"] == 1.0
    # the browser: a slider sends a number, the box the text typed; each is one answer
    key = view.key_of(x1)
    view._on_browser_message(view, {"type": "value", "key": key, "value": 0.5}, [])
    assert float(view.value(x1)) == 0.5 and view.drawn == before + 2 and len(sent) == 2
    view._on_browser_message(view, {"type": "value", "key": key, "value": " -inf "}, [])
    assert view.value(x1) == -np.inf and view.drawn == before + 3 and view.notice == ""
    assert next(c for c in view.controls if c["key"] == key)["entry"] == "-inf"
    assert next(c for c in view.controls if c["key"] == key)["value"] is None  # no NaN/inf in JSON traits


def test_bad_values_leave_the_view_as_it_was():
    x, w = st.dscalar("x"), st.dvector("w")
    out = (w * x).sum()
    view = ValuesView(out, {x: 2.0, w: [1.0, 2.0]}, wrt=[x])
    state = (view.svg, view.drawn, float(view.value(out)), float(view.gradient(x)), view.controls)
    scalar = r"TensorType\(float64, \(\)\)"
    with pytest.raises(TypeError, match=rf"bad value for input x: expected {scalar}.*received str 'abc'"):
        view.set(x, "abc")
    with pytest.raises(TypeError, match=rf"bad value for input x: expected {scalar}.*expected 0 dimensions"):
        view.set("x", [1.0, 2.0])
    with pytest.raises(TypeError, match=r"bad value for input w: expected TensorType\(float64, \(\?,\)\).*"
                                        r"shape \(2, 2\)"):
        view.set(w, np.ones((2, 2)))
    with pytest.raises(ValueError, match="the graph has no input named 'nope'"):
        view.set("nope", 1.0)
    assert (view.svg, view.drawn, float(view.value(out)), float(view.gradient(x)), view.controls) == state
    # a value the graph cannot compute with (vectors of different lengths) is refused whole
    v = st.dvector("v")
    view2 = ValuesView((w + v).sum(), {w: [1.0, 2.0], v: [3.0, 4.0]})
    with pytest.raises(ValueError, match=r"ValuesView.set: evaluating the graph with w = \[1.0, 2.0\], "
                                         r"v = \[3.0, 4.0, 5.0\] failed"):
        view2.set(v, [3.0, 4.0, 5.0])
    assert view2.inputs[v].tolist() == [3.0, 4.0] and float(view2.value(view2.outputs[0])) == 10.0
    # from the browser: the notice says what is wrong, and nothing else changes
    view._on_browser_message(view, {"type": "value", "key": view.key_of(x), "value": "abc"}, [])
    assert view.notice == "TypeError: ValuesView: bad value for input x: expected a number, received str 'abc'"
    assert view.drawn == state[1] + 1 and float(view.value(out)) == state[2] and view.svg == state[0]
    view._on_browser_message(view, {"type": "value", "key": view.key_of(x), "value": None}, [])
    assert "expected a number, received NoneType None" in view.notice and float(view.value(out)) == state[2]
    view._on_browser_message(view, {"type": "value", "key": view.key_of(w), "value": 1.0}, [])
    assert "bad value for input w" in view.notice


def test_slider_ranges_default_around_the_value_and_can_be_given():
    x, y, i = st.dscalar("x"), st.dscalar("y"), st.iscalar("i")
    view = ValuesView(x * y + i, {x: 2.0, y: -0.5, i: 3}, ranges={"y": (-1, 1)})
    controls = {c["name"]: c for c in view.controls}
    assert (controls["x"]["min"], controls["x"]["max"]) == (-2.0, 6.0) and controls["x"]["step"] == pytest.approx(0.008)
    assert (controls["y"]["min"], controls["y"]["max"]) == (-1.0, 1.0)
    assert controls["i"]["integer"] and controls["i"]["step"] == 1
    assert (controls["i"]["min"], controls["i"]["max"]) == (-3, 9)
    view.set(x, 100.0)  # typed outside the slider: the default range widens to hold it
    view.set(y, 5.0)  # a given range stays
    controls = {c["name"]: c for c in view.controls}
    assert controls["x"]["min"] == -2.0 and controls["x"]["max"] >= 100.0 and controls["x"]["value"] == 100.0
    assert (controls["y"]["min"], controls["y"]["max"]) == (-1.0, 1.0)
    with pytest.raises(ValueError, match=r"ranges\[x\] must be finite with low < high, received \(3, -3\)"):
        ValuesView(x * y, {x: 1.0, y: 1.0}, ranges={x: (3, -3)})
    w = st.dvector("w")
    with pytest.raises(ValueError, match=r"ranges gives a range to w .* which has no slider"):
        ValuesView((w * x).sum(), {x: 1.0, w: [1.0]}, ranges={w: (0, 1)})


def test_selecting_a_node_shows_its_whole_value_and_gradient():
    o, values, inputs = neuron()
    view = ValuesView(o, values, wrt=inputs)
    n = o.owner.inputs[0]
    view.select(n)
    assert view.selected is n and view.selected_key == view.key_of(n)
    rows = {r["label"]: r for r in view.panel["rows"]}
    assert rows["value"]["text"] == repr(view.value(n)) and rows["gradient"]["text"] == repr(view.gradient(n))
    assert rows["computed by"]["items"][0]["key"] == view.key_of(n.owner)
    assert view.marks[view.key_of(n)] == ["selected"] and view.marks[view.key_of(o.owner)] == ["client"]
    assert view.panel["title"] == "intermediate n"
    view._on_browser_message(view, {"type": "select", "key": view.key_of(o.owner)}, [])
    assert view.selected is o.owner and view.panel["title"] == "operation tanh"
    assert [i["text"] for i in next(r for r in view.panel["rows"] if r["label"] == "inputs")["items"]] == ["n = 0.8814"]
    view.select(None)
    assert view.selected is None and view.marks == {} and view.panel["hint"]
    # a large array's panel text is numpy's repr, cut
    big = st.dvector("big")
    view = ValuesView(big * 2.0, {big: np.linspace(0, 1, 900)})
    view.select(big)
    text = next(r["text"] for r in view.panel["rows"] if r["label"] == "value")
    assert text == repr(view.value(big))[:FULL_CHARS] + f"… (cut at {FULL_CHARS} characters)"
    with pytest.raises(ValueError, match="not a variable of this graph"):
        view.select(st.dscalar("elsewhere"))


# -- errors ------------------------------------------------------------------------------------------------
def test_clear_errors_name_the_argument_the_expected_and_the_received():
    o, values, inputs = neuron()
    x1, x2, w1, w2, b = inputs
    n = o.owner.inputs[0]
    scalar = r"TensorType\(float64, \(\)\)"
    with pytest.raises(ValueError, match=rf"inputs has no value for b \({scalar}\).*received values for: x1, x2, w1"):
        ValuesView(o, {k: v for k, v in values.items() if k is not b})
    with pytest.raises(ValueError, match=r"the graph has no input named 'z'; its inputs are x1, w1, x2, w2, b"):
        ValuesView(o, {**values, "z": 1.0})
    with pytest.raises(ValueError, match=r"n is computed by the graph, not one of its inputs"):
        ValuesView(o, {**values, n: 1.0})
    with pytest.raises(TypeError, match="inputs must be a dict .* received list"):
        ValuesView(o, [2.0, 0.0])
    with pytest.raises(TypeError, match="outputs must be a Variable or a non-empty list of Variables, received int 3"):
        ValuesView(3, values)
    with pytest.raises(ValueError, match=rf"wrt elsewhere \({scalar}\) is not a variable of this graph"):
        ValuesView(o, values, wrt=[x1, st.dscalar("elsewhere")])
    with pytest.raises(ValueError, match="wrt needs a single scalar cost, received 2 outputs"):
        ValuesView([o, n], values, wrt=x1)
    v = st.dvector("v")
    with pytest.raises(TypeError, match=r"wrt needs a scalar \(0-d\) cost, received outputs \(v \* 2\) of type "
                                        r"TensorType\(float64, \(\?,\)\); sum it"):
        ValuesView(v * 2, {v: [1.0]}, wrt=v)
    with pytest.raises(TypeError, match=rf"bad value for input x1: expected {scalar}.*received str '2.0'"):
        ValuesView(o, {**values, x1: "2.0"})
    with pytest.raises(ValueError, match="max_nodes must be a positive int"):
        ValuesView(o, values, max_nodes=0)


# -- safety, displays, and the graph left alone -------------------------------------------------------
def test_hostile_names_are_literal_in_the_svg_the_markdown_and_the_traits():
    x = st.dscalar(HOSTILE)
    y = st.dscalar("<script>alert(1)</script>")
    out = st.exp(x) * y
    out.name = "a`b|c"
    view = ValuesView(out, {x: 0.0, y: 2.0}, wrt=[x])
    view.select(x)
    assert view.controls[0]["name"] == HOSTILE and view.panel["title"] == f"input {HOSTILE}"
    assert view.caption == f"ValuesView of a`b|c: 4 variables, 2 scalar inputs, gradients wrt {HOSTILE}"
    md = view.markdown()
    assert f"`{HOSTILE}`" in md and "`` a`b\\|c ``" in md
    # the outline is a fenced code block (its fence longer than any backtick run in it): names in it are text
    blocks = re.findall(r"^(`{3,})\n(.*?)\n\1$", md, flags=re.S | re.M)
    assert len(blocks) == 1 and HOSTILE in blocks[0][1] and "a`b|c = Elemwise" in blocks[0][1]
    outside_code = re.sub(r"``.*?``|`[^`]*`", "", re.sub(r"^(`{3,})\n.*?\n\1$", "", md, flags=re.S | re.M))
    assert "<" not in outside_code and ">" not in outside_code
    if can_render():
        svg = view.svg
        texts = {t for _, ts, _ in node_texts(svg).values() for t in ts}
        assert {HOSTILE, "<script>alert(1)</script>", "a`b|c"} <= texts
        for element in ET.fromstring(svg).iter():
            assert element.tag.split("}")[-1] not in ("script", "foreignObject", "img")
            assert not any(name.lower().startswith("on") for name in element.attrib)
        assert "<img" not in svg and "<script" not in svg


def test_the_graph_is_never_changed():
    o, values, inputs = neuron()
    text = debugprint(o, file="str")
    view = ValuesView(o, values, wrt=inputs)
    view.set("x1", -1.0)
    for key in list(view.model.nodes):
        view._on_browser_message(view, {"type": "select", "key": key}, [])
    view.markdown()
    assert debugprint(o, file="str") == text
    assert o.owner.inputs[0].name == "n" and all(v.owner is None for v in inputs)


def test_repr_and_markdown_are_deterministic():
    o, values, inputs = neuron()
    view = ValuesView(o, values, wrt=inputs)
    assert repr(view) == "ValuesView of o: 10 variables, 5 scalar inputs, gradients wrt x1, x2, w1, w2, b"
    data, _ = view._repr_mimebundle_()
    assert data["text/plain"] == repr(view) and "0x" not in data["text/plain"]
    # the words, then the picture as a PNG image (what an untrusted notebook and GitHub show)
    words, picture = data["text/markdown"].split("\n\n![values picture](data:image/png;base64,")
    assert words == view.markdown().rstrip("\n") and picture.endswith(")\n")
    lines = view.markdown().splitlines()
    assert lines[0] == "**ValuesView** of `o`: 10 variables, 5 scalar inputs, gradients wrt `x1`, `x2`, `w1`, `w2`, `b`"
    assert "| `x1` | input | `2.0` | `-1.5` |" in lines and "| `o` | output | `0.7071` | `1.0` |" in lines
    o2, values2, inputs2 = neuron()
    assert ValuesView(o2, values2, wrt=inputs2).markdown() == view.markdown()
    assert symlab.notebook.ValuesView is ValuesView and view.view == "values"


def test_a_large_graph_is_folded_and_keeps_its_nan_origin_visible():
    x, y = st.dscalar("x"), st.dscalar("y")
    h = x
    for k in range(100):
        h = st.tanh(h) * y
        if k == 50:  # h < 0 there: the log of a negative number
            h = logged = st.log(h)
    view = ValuesView(h, {x: 0.5, y: -1.0}, max_nodes=60)
    assert view.model.folded > 0 and "folded" in view.notice
    assert view.nan_origins == [logged.owner]
    assert view.key_of(logged.owner) in view.model.keys_with("nan-origin")  # drawn, not folded away
    assert np.isnan(view.value(h))  # NaN at the output
    view.set("y", 1.0)  # the log of a positive number now
    assert view.nan_origins == [] and "folded" in view.notice


# -- the text twin ---------------------------------------------------------------------------------------------------
def test_the_outline_writes_each_variable_with_its_value_and_gradient():
    o, values, inputs = neuron()
    x1, x2, w1, w2, b = inputs
    view = ValuesView(o, values, wrt=[w1, w2])
    assert view.text_mode is False
    rows = view.outline
    assert [(r["depth"], r["text"]) for r in rows] == [
        (0, "o = Elemwise{tanh,no_inplace} [v14] = 0.7071; grad 1.0"),
        (1, "n = Elemwise{add,no_inplace} [v12] = 0.8814; grad 0.5"),
        (2, "Elemwise{add,no_inplace} [v10] = -6.0; grad 0.5"),
        (3, "Elemwise{mul,no_inplace} [v6] = -6.0; grad 0.5"),
        (4, "x1 [v0] = 2.0"),
        (4, "w1 [v1] = -3.0; grad 1.0"),
        (3, "Elemwise{mul,no_inplace} [v8] = 0.0; grad 0.5"),
        (4, "x2 [v2] = 0.0"),
        (4, "w2 [v3] = 1.0; grad 0.0"),
        (2, "b [v4] = 6.881"),
    ]
    # the rows are keyed as the picture's boxes: a click on a row selects that variable
    for row in rows:
        view._on_browser_message(view, {"type": "select", "key": row["key"]}, [])
        assert view.selected_key == row["key"] and view.key_of(view.selected) == row["key"]
        assert any(r["label"] == "value" for r in view.panel["rows"])  # a variable's panel: its whole value
    # moving a slider rewrites the values in the outline (the tree itself is walked once)
    view.set("x2", 1.0)
    assert view.outline[0]["text"] == "o = Elemwise{tanh,no_inplace} [v14] = 0.9546; grad 1.0"
    assert view.outline[7]["text"] == "x2 [v2] = 1.0"


def test_text_is_the_outline_with_the_selection_marked_and_text_of_a_variable_is_unchanged():
    o, values, inputs = neuron()
    view = ValuesView(o, values, wrt=inputs)
    n = o.owner.inputs[0]
    view.select(n)
    lines = view.text().splitlines()
    assert lines[0] == "* o = Elemwise{tanh,no_inplace} [v14] = 0.7071; grad 1.0  (client)"
    assert lines[1] == ">   n = Elemwise{add,no_inplace} [v12] = 0.8814; grad 0.5"
    assert view.text(n) == ["0.8814", "grad 0.5"]  # with a variable: its lines, as before
    md = view.markdown()
    assert "Outline (the graph as text):\n\n```\n" + view.text() + "\n```" in md


def test_the_text_mode_message_answers_once():
    o, values, inputs = neuron()
    view = ValuesView(o, values)
    sent = count_messages(view)
    view._on_browser_message(view, {"type": "text_mode", "on": True}, [])
    assert view.text_mode is True and sent == [{"text_mode", "drawn"}]
    view._on_browser_message(view, {"type": "text_mode", "on": False}, [])
    assert view.text_mode is False
