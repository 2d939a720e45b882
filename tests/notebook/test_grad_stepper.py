"""GradStepper through its Python model (no browser): grad's own steps, marks on parsed SVG, numbers, safety."""

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import symlab
import symlab.tensor as st
from symlab.gradient.walk import GradWalk
from symlab.graph.traversal import equal_computations
from symlab.notebook.grad_numbers import GradNumbers
from symlab.notebook.grad_stepper import GradStepper
from symlab.notebook.grad_stepper_export import read_page_data
from symlab.notebook.offline_page import page_script
from symlab.notebook.stepper import RewriteStepper
from symlab.notebook.widget import VIEWS_SCRIPT, static_file
from symlab.printing.render import can_render

needs_dot = pytest.mark.skipif(not can_render(), reason="Graphviz dot is not installed")
SVG = "{http://www.w3.org/2000/svg}"
MICROGRAD = {"x1": 2.0, "x2": 0.0, "w1": -3.0, "w2": 1.0, "b": 6.8813735870195432}


def neuron():
    x1, x2, w1, w2, b = st.dscalars("x1", "x2", "w1", "w2", "b")
    n = x1 * w1 + x2 * w2 + b
    n.name = "n"
    o = st.tanh(n)
    o.name = "o"
    return o, [x1, x2, w1, w2, b]


def shared_use():
    """``a`` has two clients (mul and exp): its gradient is a sum."""
    a, b = st.dscalars("a", "b")
    return st.log(a * b + st.exp(a)), [a, b]


def classes_by_key(svg):
    """``{key: set of classes}`` of every node and edge group of ``svg`` (parsed as XML)."""
    found = {}
    for g in ET.fromstring(svg).iter(f"{SVG}g"):
        cls = (g.get("class") or "").split()
        if g.get("id") and cls and cls[0] in ("node", "edge"):
            found[g.get("id")] = set(cls)
    return found


def texts_of(svg, key):
    for g in ET.fromstring(svg).iter(f"{SVG}g"):
        if g.get("id") == key:
            return ["".join(t.itertext()) for t in g.iter(f"{SVG}text")]
    raise KeyError(key)


def structure(outputs):
    """What a graph is, as text: every node's op, inputs and outputs (names and ids), in order."""
    from symlab.graph.traversal import graph_inputs, io_toposort

    return [(str(n.op), [(id(i), i.name) for i in n.inputs], [(id(o), o.name) for o in n.outputs])
            for n in io_toposort(graph_inputs(outputs), outputs)]


def test_steps_are_grads_own_walk_and_the_final_graph_is_grads():
    cost, wrt = shared_use()
    stepper = GradStepper(cost, wrt)
    walk = GradWalk(cost, wrt)
    assert stepper.total == len(walk.steps) == 4
    assert [s.node for s in stepper.walk.steps] == [s.node for s in walk.steps]
    assert [s.kind for s in stepper.walk.steps] == ["rule"] * 4
    assert equal_computations(stepper.gradients(), symlab.grad(cost, wrt))
    # one table row per step, plus the start; a step's row names its op
    assert [row[0] for row in stepper.steps] == [0, 1, 2, 3, 4]
    assert [row[1] for row in stepper.steps] == ["start", "log", "add", "exp", "mul"]
    assert stepper.steps[4][5] == "a"  # the chain rule's sum, at mul: a's gradient from exp is already there


def test_python_twins_move_as_the_controls_do():
    cost, wrt = shared_use()
    stepper = GradStepper(cost, wrt)
    assert stepper.step == 0 and stepper.current is None and stepper.card["kind"] == "start"
    stepper.prev()
    assert stepper.step == 0
    drawn = stepper.drawn
    stepper.next()
    assert stepper.step == 1 and stepper.current is stepper.walk.steps[0] and stepper.drawn == drawn + 1
    assert stepper.play() == [2, 3, 4] and stepper.step == 4 and stepper.card["last"]
    stepper.next()
    assert stepper.step == 4
    # what the browser sends, as the browser sends it
    stepper._on_browser_message(stepper, {"type": "move", "direction": "first"}, [])
    assert stepper.step == 0
    stepper._on_browser_message(stepper, {"type": "goto", "step": 2}, [])
    assert stepper.step == 2 and stepper.card["title"] == "step 2 of 4: add"
    stepper._on_browser_message(stepper, {"type": "goto", "step": 99}, [])
    assert stepper.step == 2
    stepper._on_browser_message(stepper, {"type": "source"}, [])
    assert stepper.card["source"] == stepper.rule_source() and "ELEMWISE_GRADS['add']" in stepper.card["source"]
    with pytest.raises(Exception, match=r"step must be in 0\.\.4"):
        stepper.step = 5


@needs_dot
def test_marks_at_a_step_on_the_parsed_pictures():
    cost, (a, b) = shared_use()
    stepper = GradStepper(cost, [a, b])
    forward, gradient = stepper.forward_model, stepper.gradient_model
    walk = stepper.walk
    mul = walk.steps[3]
    stepper.step = 4
    fsvg, gsvg = stepper.marked_svgs()
    fmarks, gmarks = classes_by_key(fsvg), classes_by_key(gsvg)
    mul_key = forward.key_of(mul.node)
    assert forward.obj(mul_key) is mul.node
    assert {"sl-gw-current"} <= fmarks[mul_key] and "sl-gw-visited" not in fmarks[mul_key]
    for earlier in walk.steps[:3]:
        assert "sl-gw-visited" in fmarks[forward.key_of(earlier.node)]
    assert "sl-gw-sum" in fmarks[forward.key_of(a)] and "sl-gw-sum" not in fmarks[forward.key_of(b)]
    # the gradient arrived along the edge from mul to its output, and from that output on to add (visited)
    out_key = forward.key_of(mul.node.outputs[0])
    lit = {key for key, cls in fmarks.items() if "sl-gw-backward" in cls}
    assert f"{mul_key}_{out_key}" in lit and all(key.startswith((mul_key, out_key)) for key in lit)
    new_keys = {gradient.key_of(n) for n in mul.new_nodes}
    assert new_keys and all("sl-gw-new" in gmarks[k] for k in new_keys)
    sum_node = next(c.after.owner for c in mul.sums)
    assert "sl-gw-sum" in gmarks[gradient.key_of(sum_node)]
    # at step 1 the nodes built later are hidden, those built at 1 are new, none of them hidden
    f1, g1 = (classes_by_key(svg) for svg in stepper.marked_svgs(1))
    later = {gradient.key_of(n) for s in walk.steps[1:] for n in s.new_nodes}
    assert later and all("sl-gw-later" in g1[k] for k in later)
    assert all("sl-gw-later" not in g1[gradient.key_of(n)] and "sl-gw-new" in g1[gradient.key_of(n)]
               for n in walk.steps[0].new_nodes)
    assert not any("sl-gw-visited" in cls for cls in f1.values())
    # the traits the browser reads carry the same marks
    stepper.step = 1
    assert {k for k, cls in stepper.marks["gradient"].items() if "sl-gw-later" in cls} >= later
    assert stepper.reveal_forward == [forward.key_of(walk.steps[0].node)]


def test_numbers_in_the_card_are_grad_numbers_and_finite_differences_of_micrograds_neuron():
    cost, wrt = neuron()
    values = {v: MICROGRAD[v.name] for v in wrt}
    stepper = GradStepper(cost, wrt, values)
    numbers = stepper.numbers
    assert isinstance(numbers, GradNumbers)
    received = {}
    for k in range(1, stepper.total + 1):
        stepper.step = k
        step = stepper.current
        arriving = numbers.arriving(step)
        assert [a["value"] for a in stepper.card["arriving"]] == [numbers.text(v) for v in arriving]
        for c, shown in zip(step.contributions, stepper.card["contributions"]):
            assert shown["value"] == numbers.text(numbers.received(c))
            assert shown["total_value"] == numbers.text(numbers.value(c.after))
            received[c.variable] = numbers.value(c.after)
    expected = {"x1": -1.5, "w1": 1.0, "x2": 0.5, "w2": 0.0, "b": 0.5}  # micrograd's own figures
    for var in wrt:
        assert received[var] == pytest.approx(expected[var.name], abs=1e-6)
        assert received[var] == pytest.approx(float(numbers.finite_difference(var)), abs=1e-5)
    # the forward boxes' grad lines fill in as the walk reaches them
    o_key = stepper.forward_model.key_of(cost)
    n_key = stepper.forward_model.key_of(cost.owner.inputs[0])
    stepper.step = 0
    assert stepper.labels[o_key] == "grad 1.0" and stepper.labels[n_key] == "grad ·"
    stepper.step = 1
    assert stepper.labels[n_key] == "grad 0.5"
    if can_render():
        fsvg, _ = stepper.marked_svgs()
        assert texts_of(fsvg, n_key)[-2:] == ["data 0.8814", "grad 0.5"]


def test_undefined_and_integer_steps_say_why():
    x = st.dvector("x")
    stepper = GradStepper((st.floor(x) * x).sum(), x)
    floor = stepper.walk.steps[-1]
    stepper.step = stepper.total
    card = stepper.card
    assert floor.label == "floor" and card["contributions"][0]["undefined"]
    assert "not differentiable" in card["contributions"][0]["reason"]
    assert card["problems"] and card["problems"][0]["wrt"] == "x"
    assert card["problems"][0]["problem"].startswith("grad: cannot differentiate with respect to x")
    assert "undefined for x" in stepper.steps[-1][3]
    assert "grad would say" in stepper.markdown()
    stepper = GradStepper((st.cast(x * 2, "int64") * x).sum(), x)
    stepper.step = stepper.total
    assert stepper.card["kind"] == "nothing" and "Cast{int64}" in stepper.card["why"]
    assert stepper.steps[-1][3] == "no gradient"
    stepper.step = 2  # the mul reading the integer: that input gets nothing, and the card says why
    refused = [c for c in stepper.card["contributions"] if c["reason"]]
    assert [c["input"] for c in refused] == ["Elemwise{Cast{int64},no_inplace}.0"]
    assert refused[0]["reason"] == "an integer or boolean value: it has no gradient"
    assert stepper.steps[2][3] == "1 gradient; none for Elemwise{Cast{int64},no_inplace}.0"
    stepper.step = 3
    assert "passes none (an integer or boolean value" in stepper.card["why"]


def test_markdown_has_the_step_table_and_the_current_card():
    cost, wrt = shared_use()
    stepper = GradStepper(cost, wrt, {"a": 1.0, "b": 2.0})
    stepper.step = 4
    text = stepper.markdown()
    assert "| k | node | arriving gradient | rule result | new nodes | sums |" in text
    rows = [line for line in text.splitlines() if re.match(r"\| (\*\*)?\d", line)]
    assert len(rows) == 5 and rows[4].startswith("| **4** | `mul` |") and rows[4].endswith("| `a` |")
    assert "the chain rule's sum" in text
    bundle, _ = stepper._repr_mimebundle_()
    assert bundle["text/markdown"].startswith(text.splitlines()[0])
    if can_render():
        assert bundle["text/markdown"].count("data:image/png;base64,") == 2


def test_repr_is_deterministic():
    cost, wrt = neuron()
    one, two = GradStepper(cost, wrt), GradStepper(cost, wrt)
    assert repr(one) == repr(two) == "GradStepper: step 0/5; d o / d x1, x2, w1, w2, b; 7 gradient nodes"
    assert "0x" not in repr(one)
    one.step = 3
    assert repr(one).startswith("GradStepper: step 3/5")


def test_hostile_names_stay_text_everywhere(tmp_path):
    evil, amp = st.dscalar("<script>alert(1)</script>"), st.dscalar("a&b")
    cost = st.exp(evil * amp) + evil
    stepper = GradStepper(cost, [evil, amp], {evil: 0.5, amp: 2.0})
    stepper.play()
    if can_render():
        fsvg, gsvg = stepper.marked_svgs()
        assert "<script>" not in fsvg and "<script>" not in gsvg
        names = {"".join(t.itertext()) for svg in (fsvg, gsvg) for t in ET.fromstring(svg).iter(f"{SVG}text")}
        assert {"<script>alert(1)</script>", "a&b"} <= names
    text = stepper.markdown()
    assert "`<script>alert(1)</script>`" in text
    assert "<script>" not in re.sub(r"(`+)[^`].*?\1", "", text)  # outside code spans
    page = stepper.export_html(tmp_path / "walk.html").read_text()
    assert "<script>alert" not in page and "a&b" not in page
    data = read_page_data(page)
    assert any(c["input"] == "<script>alert(1)</script>" for c in data["states"][-1]["card"]["contributions"])


@needs_dot
def test_export_is_one_offline_page_of_every_step(tmp_path):
    cost, wrt = neuron()
    stepper = GradStepper(cost, wrt, {v: MICROGRAD[v.name] for v in wrt})
    page = stepper.export_html(tmp_path / "neuron.html").read_text()
    assert page.count("export default") == 1 and "renderGradStepper" in page and "http" not in page.lower().replace(
        "http://www.w3.org", "")
    assert str(tmp_path) not in page
    code = page[page.index('<script type="module">') + len('<script type="module">'):page.rindex("</script>")]
    assert code.strip() == page_script("grad_offline.js").strip()  # no user data
    node = shutil.which("node")
    if node is not None:  # the page's module parses
        (tmp_path / "page.mjs").write_text(code)
        done = subprocess.run([node, "--check", str(tmp_path / "page.mjs")], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr[-2000:]
    data = read_page_data(page)
    assert len(data["states"]) == stepper.total + 1 and data["steps"] == stepper.steps
    assert data["forward_svg"].startswith("<svg") and data["gradient_svg"].startswith("<svg")
    for k, state in enumerate(data["states"]):
        assert state["marks"] == stepper._pictures_of.marks(k) and state["card"]["step"] == k
    last = data["states"][-1]["card"]
    assert "tanh" in data["sources"][data["states"][1]["card"]["source_index"]]
    assert [c["value"] for c in last["contributions"]] == ["-1.5", "1.0"]


def test_open_rewrites_starts_from_the_raw_gradient_graph():
    cost, wrt = shared_use()
    stepper = GradStepper(cost, wrt)
    stepper.play()
    assert stepper.card["last"]  # the browser shows its "compiled →" button, which sends this
    stepper._on_browser_message(stepper, {"type": "compiled"}, [])
    rewrites = stepper.compiled
    assert isinstance(rewrites, RewriteStepper) and stepper.open_rewrites() is rewrites  # opened once
    graph = rewrites.graph  # step 0: the unoptimized graph
    assert [v.name for v in graph.inputs] == [v.name for v in wrt]  # the inputs in wrt's order
    assert equal_computations(list(graph.outputs), stepper.gradients(), list(graph.inputs), wrt)
    rewrites.step = rewrites.total
    assert len(rewrites.graph.apply_nodes) < len(graph.apply_nodes)
    x = st.dvector("x")
    with pytest.raises(ValueError, match="no gradient to compile"):
        GradStepper(st.floor(x).sum(), x).open_rewrites()


def test_bad_input_is_refused_with_a_clear_error():
    x = st.dvector("x")
    y = st.dscalar("y")
    with pytest.raises(TypeError, match=r"cost must be a scalar Variable \(ndim 0\), received .*TensorType\(float64"):
        GradStepper(x * 2, x)
    with pytest.raises(TypeError, match="cost must be a scalar Variable .*received float"):
        GradStepper(3.0, x)
    with pytest.raises(TypeError, match=r"wrt\[1\] must be a Variable, received str"):
        GradStepper(x.sum(), [x, "y"])
    with pytest.raises(TypeError, match="wrt must be a Variable or a non-empty list"):
        GradStepper(x.sum(), [])
    with pytest.raises(ValueError, match="values names y .*not an input of the cost's graph; expected one of: x"):
        GradStepper(x.sum(), x, {y: 1.0})
    with pytest.raises(ValueError, match="'z', which is not the name of an input"):
        GradStepper(x.sum(), x, {"z": 1.0})
    with pytest.raises(TypeError, match="values must be a dict"):
        GradStepper(x.sum(), x, [1.0])
    with pytest.raises(ValueError, match="max_nodes must be a positive int, received 0"):
        GradStepper(x.sum(), x, max_nodes=0)
    with pytest.raises(Exception, match="b"):  # GradNumbers names the input with no value
        cost, wrt = neuron()
        GradStepper(cost, wrt, {v: 1.0 for v in wrt[:-1]})


def test_reading_never_changes_the_graph():
    cost, wrt = neuron()
    before = structure([cost])
    stepper = GradStepper(cost, wrt, {v: MICROGRAD[v.name] for v in wrt})
    results = structure(stepper.gradients())
    for k in [*range(stepper.total + 1), *reversed(range(stepper.total))]:
        stepper.step = k
        stepper.marked_svgs()
        stepper.rule_source()
    stepper.markdown()
    repr(stepper)
    assert structure([cost]) == before and structure(stepper.gradients()) == results
    assert [v.name for v in wrt] == ["x1", "x2", "w1", "w2", "b"]


def test_symlab_view_opens_it():
    cost, wrt = neuron()
    stepper = symlab.view(cost, walk=wrt, values={v: MICROGRAD[v.name] for v in wrt})
    assert isinstance(stepper, GradStepper) and stepper.view == "gradwalk" and stepper.numbers is not None
    assert VIEWS_SCRIPT.index("grad_stepper.js") < VIEWS_SCRIPT.index("main.js")
    assert "gradwalk: renderGradStepper" in static_file("views/main.js")
    from symlab.notebook import GradStepper as lazy

    assert lazy is GradStepper
    assert np.isclose(float(stepper.numbers.value(cost)), np.tanh(0.8813735870195432))


def test_a_gradient_graph_too_big_to_draw_is_said_and_the_steps_still_work():
    x = st.dvector("x")
    y = x
    for _ in range(6):
        y = st.tanh(y)
    stepper = GradStepper(y.sum(), x, gradient_max_nodes=5)
    assert stepper.gradient_model is None and stepper.gradient_svg == ""
    assert "more than gradient_max_nodes=5: it is not drawn" in stepper.notice
    stepper.play()
    assert stepper.marks["gradient"] == {} and stepper.card["title"] == "step 7 of 7: tanh"
    assert "sl-gw-current" in stepper.marks["forward"][stepper.forward_model.key_of(stepper.current.node)]


@needs_dot
def test_a_variable_read_twice_by_one_node_lights_both_its_edges():
    a = st.dscalar("a")
    stepper = GradStepper((a + a) * 3.0, a)
    forward = stepper.forward_model
    add = next(s for s in stepper.walk.steps if s.label == "add")
    stepper.step = add.number
    fmarks = classes_by_key(stepper.marked_svgs()[0])
    a_key, add_key = forward.key_of(a), forward.key_of(add.node)
    edges = [e.key for e in forward.edges if (e.tail, e.head) == (a_key, add_key)]
    assert len(edges) == 2, edges  # a + a: two arrows from a's box to add
    assert all("sl-gw-giving" in fmarks[key] for key in edges), {key: fmarks[key] for key in edges}
    assert "sl-gw-sum" in fmarks[a_key]  # its two contributions add up: 3 + 3


@needs_dot
def test_the_gradient_pane_labels_ops_in_the_forward_panes_short_words():
    cost, wrt = shared_use()
    stepper = GradStepper(cost.sum(), wrt)
    gradient = stepper.gradient_model
    ops = {key: node for key, node in gradient.nodes.items() if node.kind == "apply"}
    words = {node.label[0] for node in ops.values()}
    assert {"mul", "exp", "true_div"} <= words and not any("{" in word for word in words), words
    texts = {"".join(t.itertext()) for t in ET.fromstring(stepper.gradient_svg).iter(f"{SVG}text")}
    assert "mul" in texts and not any(t.startswith("Elemwise{") for t in texts), texts
    # the forward pane draws the same op with the same word; the tooltip keeps the op in full
    mul = next(n for n in stepper.walk.forward_nodes if getattr(getattr(n.op, "scalar_op", None), "name", "") == "mul")
    assert stepper.forward_model.nodes[stepper.forward_model.key_of(mul)].label[0] == "mul"
    assert any(node.tooltip.startswith("Elemwise{mul") for node in ops.values())


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


@needs_dot
def test_the_markdown_pictures_stay_light_on_a_large_graph():
    import base64

    from symlab.notebook.grad_step_pictures import FALLBACK_NODES

    x = st.dvector("x")
    y = x
    for k in range(40):  # 80 apply nodes forward, more in the gradient graph
        y = st.tanh(y * (1.0 + k / 100))
    stepper = GradStepper(y.sum(), x, {x: np.linspace(-1, 1, 3)})
    stepper.step = 20
    step = stepper.current
    models = dict(stepper._pictures_of.fallback_models(stepper.step))
    forward, gradient = models["forward"], models["gradient"]
    # the forward picture: the node visited and its neighbours, marked, with its grad line so far
    applies = [n for n in forward.nodes.values() if n.kind in ("apply", "op")]
    assert step.node in [n.obj for n in applies] and len(applies) <= FALLBACK_NODES
    assert any("highlight" in n.classes and n.obj is step.node for n in applies)
    boxes = [n for n in forward.nodes.values() if n.kind not in ("apply", "op")]
    assert any(line.startswith("grad ") and line != "grad ·" for n in boxes for line in n.label), [n.label for n in boxes]
    # the gradient picture: what the walk built so far around the step's new nodes, those marked created
    created = {n.obj for n in gradient.nodes.values() if "created" in n.classes}
    assert created == set(step.new_nodes)
    later = {n for s in stepper.walk.steps[stepper.step:] for n in s.new_nodes}
    assert not later & {n.obj for n in gradient.nodes.values()}
    images = re.findall(r"!\[(\w+) picture\]\(data:image/png;base64,([A-Za-z0-9+/=]+)\)", stepper.pictures_markdown())
    assert [slot for slot, _ in images] == ["forward", "gradient"]
    for slot, data in images:
        width, height = png_size(base64.b64decode(data))
        assert 100 <= width <= 11 * 96 + 2 and 40 <= height <= 8 * 96 + 2, (slot, width, height)
    assert len(stepper._repr_mimebundle_()[0]["text/markdown"]) < 150_000
    stepper.step = 0  # the start: the forward picture around the cost, nothing built yet
    assert [slot for slot, _ in stepper._pictures_of.fallback_models(0)] == ["forward"]
