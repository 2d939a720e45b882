"""The grad stepper in a real JupyterLab (issue 35): grad's walk played backward, step by step, with its numbers.

One notebook (one kernel) holds micrograd's neuron (one of its intermediate values named
``<img src=x onerror=alert(1)>``), micrograd's ``a + a`` (a variable used twice: its gradients add up) and a small
MLP loss (8 x 20 inputs, a tanh layer of 16, a softmax of 5, the mean negative log-likelihood of integer labels).
The tests play the neuron with the play button and step the MLP with the next button, and read each step in the
DOM: the step number and the slider, the forward node marked current (its key is the one symlab's pictures give
the node ``grad`` visits at that step, computed in the kernel from ``walk.steps``), the edges lit backward from
it, the gradient pane revealing nodes (never fewer, all of them at the end; on the MLP, each step's node and new
nodes in view in their panes), the numbers on the card and on the forward boxes' ``grad`` lines (micrograd's 0.5
for ``n``, -1.5 for ``x1``), the Σ where gradients add up; a screenshot at a middle step decoded to check that
both panes draw and that the step's new nodes are green; and "compiled →" on the last step opens the rewrite
stepper. The kernel compiles with ``mode="NUMPY"`` (the default's
rewrites, no Numba compile in its background). No test here times anything (``benchmarks/bench_browser.py`` does).
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pytest
from browser_lab import drawn, open_notebook, wait_drawn, write_notebook
from on_screen import TWO_FRAMES_JS, VISIBLE_RECT_JS, out_of_view, rounded
from screenshots import decode_png, ink

HOSTILE = "<img src=x onerror=alert(1)>"

SETUP = f"""\
import numpy as np
import symlab
import symlab.tensor as T
from symlab.printing.model import build_model

symlab.config.mode = "NUMPY"  # "compiled →": the default's rewrites, no Numba compile in the kernel's background


def walk_keys(stepper, cost):
    \"\"\"The key of each step's node in a picture of the cost's graph, in grad's order (keys are the graph's).\"\"\"
    model = build_model([cost], "dataflow", max_nodes=10**6)
    return [model.key_of(step.node) for step in stepper.walk.steps]


def key_of(cost, var):
    return build_model([cost], "dataflow", max_nodes=10**6).key_of(var)


x1, x2, w1, w2, b = T.dscalars("x1", "x2", "w1", "w2", "b")
x1w1x2w2 = x1 * w1 + x2 * w2
x1w1x2w2.name = {HOSTILE!r}
n = x1w1x2w2 + b
n.name = "n"
o = T.tanh(n)
o.name = "o"
neuron = symlab.view(o, walk=[x1, x2, w1, w2, b],
                     values={{x1: 2.0, x2: 0.0, w1: -3.0, w2: 1.0, b: 6.8813735870195432}})
neuron.add_class("gw-neuron")
neuron
"""

TWICE = """\
a = T.dscalar("a")
twice = a + a  # micrograd's lecture: a used twice, its gradient is 2, not 1
twice.name = "twice"
doubled = symlab.view(twice, walk=a, values={a: 3.0})
doubled.add_class("gw-twice")
doubled
"""

MLP = """\
rng = np.random.default_rng(0)
x, y = T.dmatrix("x"), T.lvector("y")
W1, b1, W2, b2 = T.dmatrix("W1"), T.dvector("b1"), T.dmatrix("W2"), T.dvector("b2")
h = T.tanh(T.dot(x, W1) + b1)
h.name = "h"
p = T.softmax(T.dot(h, W2) + b2, axis=1)
p.name = "p"
loss = -T.mean(T.log(p)[T.arange(y.shape[0]), y])
loss.name = "loss"
mlp_values = {x: rng.normal(size=(8, 20)), y: rng.integers(0, 5, size=8), W1: rng.normal(size=(20, 16)) / 4.5,
              b1: np.zeros(16), W2: rng.normal(size=(16, 5)) / 4, b2: np.zeros(5)}
mlp = symlab.view(loss, walk=[W1, b1, W2, b2], values=mlp_values)
mlp.add_class("gw-mlp")
mlp
"""

#: What a step shows, read in the DOM of the grad stepper ``root``.
STATE_JS = """(root) => {
    const box = (el, client) => {
        const r = el.getBoundingClientRect();
        return client ? {key: "pane", x: r.left + el.clientLeft, y: r.top + el.clientTop, width: el.clientWidth,
                         height: el.clientHeight}
                      : {key: el.dataset.key, x: r.left, y: r.top, width: r.width, height: r.height};
    };
    const keys = (scope, selector) => Array.from(scope.querySelectorAll(selector)).map((g) => g.dataset.key);
    const forward = root.querySelector(".sl-pane.sl-gw-forward .sl-picture svg");
    const gradient = root.querySelector(".sl-pane.sl-gw-gradient .sl-picture svg");
    const grads = {};
    for (const g of forward.querySelectorAll("g.node[data-key]")) {
        const lines = Array.from(g.querySelectorAll("text")).map((t) => t.textContent)
            .filter((t) => t.startsWith("grad"));
        if (lines.length) grads[g.dataset.key] = lines[lines.length - 1];
    }
    const nodes = Array.from(gradient.querySelectorAll("g.node[data-key]"));
    const shown = nodes.filter((g) => getComputedStyle(g).visibility !== "hidden" && getComputedStyle(g).display !== "none");
    const sigmas = Array.from(forward.querySelectorAll("text.sl-gw-sigma"))
        .filter((t) => getComputedStyle(t).display !== "none").map((t) => t.closest("g.node").dataset.key);
    return {
        step: Number(root.dataset.step), total: Number(root.dataset.total), drawn: Number(root.dataset.drawn),
        slider: Number(root.querySelector("input.sl-gw-slider").value),
        position: root.querySelector(".sl-gw-position").textContent,
        current: keys(forward, "g.node.sl-gw-current"),
        arriving: keys(forward, "g.node.sl-gw-arriving"),
        visited: keys(forward, "g.node.sl-gw-visited"),
        lit: keys(forward, "g.edge.sl-gw-backward"),
        giving: keys(forward, "g.edge.sl-gw-giving"),
        sums: keys(forward, "g.node.sl-gw-sum"),
        sigmas,
        grads,
        gradientNodes: nodes.length,
        shown: shown.map((g) => g.dataset.key),
        fresh: keys(gradient, "g.node.sl-gw-new"),
        card: root.querySelector(".sl-gw-card").innerText,
        inputs: Array.from(root.querySelectorAll(".sl-gw-card tr.sl-gw-card-input"))
            .map((tr) => [tr.querySelector("th").textContent, tr.querySelector("td").textContent,
                          tr.classList.contains("sl-gw-sum")]),
        images: root.querySelectorAll("img").length,
        compiledButton: root.querySelectorAll(".sl-gw-card button.sl-gw-compiled-button").length,
        minimaps: Array.from(root.querySelectorAll(".sl-minimap-svg")).map((m) => m.querySelectorAll("text").length),
        boxes: {
            forward: box(forward.closest(".sl-picture"), true),
            gradient: box(gradient.closest(".sl-picture"), true),
            current: Array.from(forward.querySelectorAll("g.node.sl-gw-current")).map((g) => box(g)),
            fresh: Array.from(gradient.querySelectorAll("g.node.sl-gw-new")).map((g) => box(g)),
            drawings: [box(forward), box(gradient)],
        },
    };
}"""

#: Records STATE_JS at every answer the widget draws (its data-drawn changes), in ``window.__gwStates``.
RECORD_JS = """(root) => {
    const state = """ + STATE_JS + """;
    window.__gwStates = [];
    let last = root.dataset.drawn;
    const watch = new MutationObserver(() => {
        if (root.dataset.drawn === last) return;
        last = root.dataset.drawn;
        window.__gwStates.push(state(root));
    });
    watch.observe(root, {attributes: true, attributeFilter: ["data-drawn"]});
    window.__gwStop = () => watch.disconnect();
}"""

def rgb(css: str) -> np.ndarray:
    """``rgb(211, 249, 216)`` as an array."""
    return np.array([int(v) for v in re.findall(r"\d+", css)[:3]])


def near(pixels: np.ndarray, colour: np.ndarray, tolerance: int = 10) -> int:
    """How many pixels are within ``tolerance`` of ``colour`` in every channel."""
    return int(np.all(np.abs(pixels.astype(np.int32) - colour) <= tolerance, axis=2).sum())


# -- the notebook --------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def gw(lab, browser):
    """The notebook of the three grad steppers, run once; the tests drive its widgets in turn."""
    write_notebook(lab.root / "grad_stepper.ipynb", [SETUP, TWICE, MLP])
    nb = open_notebook(browser, lab, "grad_stepper.ipynb")
    nb.run_all()
    failed = nb.page.evaluate("""() => window.jupyterapp.shell.currentWidget.content.widgets
        .flatMap((c) => c.model.type === 'code' ? c.model.outputs.toJSON() : [])
        .filter((o) => o.output_type === 'error').map((o) => `${o.ename}: ${o.evalue}`)""")
    assert not failed, failed
    for name in ("neuron", "twice", "mlp"):
        root(nb, name).locator(".sl-gw-gradient svg g.node").first.wait_for(state="attached")
    yield nb
    assert not nb.errors, nb.errors  # no page error, and no dialog: the hostile name never ran
    nb.page.close()


def root(nb: Any, name: str) -> Any:
    return nb.page.locator(f".gw-{name} .sl-gradwalk").first


def kernel_json(nb: Any, expression: str) -> Any:
    """``expression`` evaluated in the kernel, sent back as JSON text."""
    return json.loads(nb.kernel_value(f"__import__('json').dumps({expression})").strip("'"))


def edge_ends(key: str) -> tuple[str, str]:
    """The tail and head node keys of an edge key (``a13_v14``; a second edge between them ``v0_a1_2``)."""
    tail, head = key.split("_")[:2]
    return tail, head


def check_walk(states: list[dict[str, Any]], expected: list[str], kinds: list[str], name: str) -> None:
    """Each recorded step against the walk: numbers, the current node, the edges lit backward, the reveal."""
    total = len(expected)
    assert [s["step"] for s in states] == list(range(1, total + 1)), f"{name}: steps shown {[s['step'] for s in states]}"
    for k, state in enumerate(states, start=1):
        where = f"{name}, step {k}"
        assert state["slider"] == k and state["position"] == f"step {k} / {total}", (where, state["position"])
        # the node grad visits at step k, and only it, is marked current; the ones before are marked visited
        assert state["current"] == [expected[k - 1]], f"{where}: current {state['current']}, grad visits {expected[k - 1]}"
        assert sorted(state["visited"]) == sorted(expected[:k - 1]), f"{where}: visited {state['visited']}"
        # the gradient arrives backward: the edges from the current node to the outputs it arrives at, and from
        # those outputs' visited clients, are lit; nothing else is
        cur = expected[k - 1]
        for key in state["lit"]:
            tail, head = edge_ends(key)
            assert (tail == cur and head in state["arriving"]) or (tail in state["arriving"] and head in expected[:k - 1]), (
                f"{where}: the lit edge {key} does not bring the gradient back to {cur} (arriving {state['arriving']})")
        if kinds[k - 1] == "nothing":
            assert not state["lit"], f"{where}: no gradient reaches this node, yet {state['lit']} are lit"
        else:
            assert any(edge_ends(e)[0] == cur for e in state["lit"]), f"{where}: no edge out of {cur} lit: {state['lit']}"
        assert not state["images"], f"{where}: an <img> element inside the widget"
    # the gradient pane only grows, its new nodes shown, and ends whole
    counts = [len(s["shown"]) for s in states]
    assert counts == sorted(counts), f"{name}: nodes shown in the gradient pane per step {counts}"
    for state in states:
        assert set(state["fresh"]) <= set(state["shown"]), f"{name}, step {state['step']}: a new node is hidden"
    assert counts[-1] == states[-1]["gradientNodes"] > counts[0], f"{name}: {counts[-1]} of {states[-1]['gradientNodes']}"
    assert sum(bool(s["fresh"]) for s in states) >= total // 2, f"{name}: few steps marked new nodes"


# -- micrograd's neuron, played --------------------------------------------------------------------------------------
def test_the_neuron_plays_backward_with_micrograds_numbers_and_its_hostile_name_inert(gw):
    view = root(gw, "neuron")
    view.scroll_into_view_if_needed()
    expected = kernel_json(gw, "walk_keys(neuron, o)")
    kinds = kernel_json(gw, "[s.kind for s in neuron.walk.steps]")
    keys = kernel_json(gw, "{v.name: key_of(o, v) for v in [x1, x2, w1, w2, b, n, o]} | {'hostile': key_of(o, x1w1x2w2)}")
    assert len(expected) == 5 and view.get_attribute("data-step") == "0"
    start = gw.page.evaluate(STATE_JS, view.element_handle())
    assert start["grads"][keys["o"]] == "grad 1.0" and start["grads"][keys["x1"]] == "grad ·"
    assert not start["fresh"] and len(start["shown"]) < start["gradientNodes"]  # step 0: nothing built yet
    gw.page.evaluate(RECORD_JS, view.element_handle())
    view.locator("select.sl-gw-speed").select_option("500")
    view.locator("button.sl-gw-play").click()
    gw.page.wait_for_function("(el) => el.dataset.step === el.dataset.total && el.dataset.playing === '0'",
                              arg=view.element_handle(), timeout=20_000)
    states = gw.page.evaluate("() => { window.__gwStop(); return window.__gwStates; }")
    check_walk(states, expected, kinds, "neuron")
    by_step = {s["step"]: s for s in states}
    # step 1, tanh: n receives 0.5 (1 - tanh(n)**2), on the card and on n's box
    (th, td, _), = by_step[1]["inputs"]
    assert th == "input 0: n" and "= 0.5" in td, by_step[1]["inputs"]
    assert by_step[1]["grads"][keys["n"]] == "grad 0.5"
    # the step of x1 * w1: x1 receives w1 * 0.5 = -1.5, w1 receives x1 * 0.5 = 1.0; x1's box had no gradient before
    k = next(s["step"] for s in states if any(th == "input 0: x1" for th, _, _ in s["inputs"]))
    received = {th: td for th, td, _ in by_step[k]["inputs"]}
    assert "= -1.5" in received["input 0: x1"] and "= 1.0" in received["input 1: w1"], received
    assert by_step[k]["grads"][keys["x1"]] == "grad -1.5" and by_step[k]["grads"][keys["w1"]] == "grad 1.0"
    assert all(by_step[j]["grads"][keys["x1"]] == "grad ·" for j in range(1, k))
    # at the end, micrograd's gradients on every box: x1 -1.5, x2 0.5 (w2 * 0.5), w1 1.0, w2 0.0 (x2 is 0), b 0.5
    final = {name: by_step[5]["grads"][keys[name]] for name in ("x1", "x2", "w1", "w2", "b")}
    assert final == {"x1": "grad -1.5", "x2": "grad 0.5", "w1": "grad 1.0", "w2": "grad 0.0", "b": "grad 0.5"}, final
    # the hostile name is text: on its box of the forward picture and on the card of the step that reaches it
    box = view.locator(f'.sl-gw-forward .sl-picture svg g.node[data-key="{keys["hostile"]}"]')
    assert HOSTILE in box.text_content()
    assert any(f"arriving at {HOSTILE}" in s["card"] for s in states), [s["card"][:200] for s in states]
    assert gw.page.evaluate("() => document.querySelectorAll('.jp-OutputArea img[src=\"x\"]').length") == 0
    # the last step, and only it, offers "compiled →": it opens the rewrite stepper on the gradient graph, under it
    assert [s["compiledButton"] for s in states] == [0, 0, 0, 0, 1]
    before = drawn(view)
    view.locator("button.sl-gw-compiled-button").click()
    wait_drawn(gw, view, before)
    stepper = view.locator(".sl-gw-compiled .sl-stepper")
    stepper.locator(".sl-after svg g.node").first.wait_for(state="attached", timeout=30_000)
    position = stepper.locator(".sl-position").inner_text()
    assert re.fullmatch(r"step 0 / [1-9]\d*", position), position
    assert gw.kernel_value("type(neuron.compiled).__name__") == "'RewriteStepper'"


# -- micrograd's a + a: the chain rule's sum -----------------------------------------------------------------------
def test_a_variable_used_twice_shows_its_gradients_adding_up(gw):
    view = root(gw, "twice")
    view.scroll_into_view_if_needed()
    a = kernel_json(gw, "key_of(twice, a)")
    both = kernel_json(gw, "[e.key for e in build_model([twice], 'dataflow').edges if e.tail == key_of(twice, a)]")
    view.focus()
    before = drawn(view)
    gw.page.keyboard.press("ArrowRight")
    wait_drawn(gw, view, before)
    state = gw.page.evaluate(STATE_JS, view.element_handle())
    assert state["step"] == 1 == state["total"]
    assert state["sums"] == [a] and state["sigmas"] == [a], state  # Σ drawn on a's box
    assert state["grads"][a] == "grad 2.0"  # micrograd's bug, fixed: 2, not 1
    assert len(both) == 2 and sorted(state["giving"]) == sorted(both), (both, state["giving"])  # both arrows from a
    summed = [(th, td) for th, td, is_sum in state["inputs"] if is_sum]
    assert summed and "total" in summed[0][1] and "= 2.0" in summed[0][1], state["inputs"]
    assert "Σ a" in state["card"]


# -- the MLP loss, stepped, and looked at ----------------------------------------------------------------------------
def test_the_mlp_loss_steps_backward_its_middle_step_drawn_in_both_panes(gw):
    view = root(gw, "mlp")
    view.evaluate("(el) => el.scrollIntoView({block: 'start'})")
    expected = kernel_json(gw, "walk_keys(mlp, loss)")
    kinds = kernel_json(gw, "[s.kind for s in mlp.walk.steps]")
    new_counts = kernel_json(gw, "[len(s.new_nodes) for s in mlp.walk.steps]")
    labels = kernel_json(gw, "[s.label for s in mlp.walk.steps]")
    total = len(expected)
    assert total >= 12 and "nothing" in kinds  # the labels' integer path: a step that says why it builds nothing
    middle = next(k for k in range(total // 2, total + 1) if new_counts[k - 1])
    nxt = view.locator("button.sl-gw-next")
    states, pixels = [], {}
    for k in range(1, total + 1):
        before = drawn(view)
        nxt.click()
        wait_drawn(gw, view, before)
        gw.page.evaluate(TWO_FRAMES_JS)  # the pictures bring the step into view in the next frame
        states.append(gw.page.evaluate(STATE_JS, view.element_handle()))
        if k == middle:
            pixels = look(gw, view)
    check_walk(states, expected, kinds, "MLP")
    # each step in view: the node visited inside the forward pane, the nodes it built inside the gradient pane
    out = [(s["step"], pane, rounded(s["boxes"][pane]), [(n["key"], rounded(n)) for n in nodes])
           for s in states for pane, nodes in (("forward", s["boxes"]["current"]), ("gradient", s["boxes"]["fresh"]))
           if out_of_view(nodes, s["boxes"][pane])]
    assert not out, f"MLP: a step's nodes out of view (step, pane, pane box, its nodes' boxes): {out}"
    # side by side, the panes share one height, the taller drawing's (capped): no blank band under either pane
    for s in states:
        forward, gradient = s["boxes"]["forward"], s["boxes"]["gradient"]
        assert abs(forward["y"] - gradient["y"]) < 1 and abs(forward["height"] - gradient["height"]) <= 1, (
            f"MLP, step {s['step']}: pane boxes {rounded(forward)} and {rounded(gradient)}")
        tallest = max(d["height"] for d in s["boxes"]["drawings"])
        assert tallest >= forward["height"] - 2, f"MLP, step {s['step']}: drawings {s['boxes']['drawings']}, pane {forward}"
        assert not any(s["minimaps"]), f"MLP, step {s['step']}: words in the minimap's copy {s['minimaps']}"
    assert any(s["minimaps"] for s in states), "MLP: no minimap drawn (a pane shown in part has one)"
    nothing = states[kinds.index("nothing")]
    assert "no gradient" in nothing["card"] and "integer" in nothing["card"], nothing["card"]
    # the numbers: every input that receives a gradient shows its value on the card
    for state, kind in zip(states, kinds):
        if kind == "rule":
            assert all("none:" in td or re.search(r" = (-?\d|\()", td) for _, td, _ in state["inputs"]), state["inputs"]
    # -mean of the 8 picked log-probabilities: each receives -1/8, shown where the walk reaches the indexing
    picked = states[labels.index("AdvancedSubtensor")]
    assert re.search(r"arriving at .* = \(8,\) \[-0\.125, -0\.125", picked["card"]), picked["card"]
    assert re.search(r"input 1: W1\s.* = \(20, 16\)", states[-1]["card"], re.S), states[-1]["card"]
    # the screenshot at the middle step: both panes drawn, the step's new nodes green in the gradient pane
    for pane in ("forward", "gradient"):
        assert pixels[pane]["ink"] >= 0.03, f"MLP, step {middle}, {pane} pane: {pixels[pane]['ink']:.1%} drawn"
    assert pixels["green"] >= 100, f"MLP, step {middle}: {pixels['green']} px of the new nodes' green {pixels['fill']}"
    assert pixels["fill"][1] > max(pixels["fill"][0], pixels["fill"][2])  # it is a green
    assert pixels["current"] >= 50, f"MLP, step {middle}: the current node's colour covers {pixels['current']} px"


def look(nb: Any, view: Any) -> dict[str, Any]:
    """Screenshots of both panes' parts on screen: how much is drawn, and the new nodes' and current node's colours."""
    nb.page.evaluate(TWO_FRAMES_JS)
    found: dict[str, Any] = {}
    colours = view.evaluate("""(el) => {
        const fill = (selector) => { const s = el.querySelector(selector); return s && getComputedStyle(s).fill; };
        const shape = (node) => `${node} polygon, ${node} ellipse`;
        return {fresh: fill(shape(".sl-pane.sl-gw-gradient .sl-picture g.node.sl-gw-new")),
                current: fill(shape(".sl-pane.sl-gw-forward .sl-picture g.node.sl-gw-current"))};
    }""")
    for pane in ("forward", "gradient"):
        picture = view.locator(f".sl-pane.sl-gw-{pane} .sl-picture").first
        picture.evaluate("(el) => el.scrollIntoView({block: 'nearest', inline: 'nearest'})")
        nb.page.evaluate(TWO_FRAMES_JS)
        box = picture.evaluate(VISIBLE_RECT_JS)
        assert box["width"] >= 150 and box["height"] >= 100, f"the {pane} pane is barely on screen: {box}"
        shot = decode_png(nb.page.screenshot(clip=box, animations="disabled"))
        found[pane] = {"ink": ink(shot), "box": box}
        if pane == "gradient":
            found["fill"] = rgb(colours["fresh"]).tolist()
            found["green"] = near(shot, rgb(colours["fresh"]))
        else:
            found["current"] = near(shot, rgb(colours["current"]))
    return found
