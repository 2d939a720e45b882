"""The pictures of the views in a real JupyterLab: always drawn where they are seen, zoom, pan, minimap, life cycle.

One notebook (the compiled MLP gradient, a 1,000-node graph drawn whole, a small graph) is run once; the tests look
at it in turn, as a reader does: the part of each picture that is on screen has drawn pixels (read from a
screenshot) at a legible size; zoom steps by 1.25x from the scale shown; a drag pans and a click still selects;
the large picture has a minimap that moves the view; an arrow leaving an input selects that input; re-running a
widget cell 50 times leaves the window's listeners as they were (counted by the browser's debugger); after a
kernel restart an action says that the view lost its kernel. A last test drives the browser half alone (no
kernel) with a model that never answers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from browser_lab import ROOT, drawn, open_notebook, wait_drawn, write_notebook
from screenshots import decode_png

#: The smallest height on screen of a node label (CSS px), and the share of a picture's visible part that is drawn.
MIN_LABEL_PX = 9.0
MIN_INK = 0.04

CELLS = [
    f"import sys\nsys.path.insert(0, {str(ROOT / 'tests')!r})\n"
    "import real_size\nimport symlab\nimport symlab.tensor as st\nfrom symlab.graph.fg import FunctionGraph",
    "mlp = symlab.view(real_size.mlp_function())\nmlp.add_class('t-mlp')\nmlp",
    "big = symlab.view(FunctionGraph(*real_size.layered_graph(1000)), max_nodes=2000)\nbig.add_class('t-big')\nbig",
    "x, y = st.dvector('x'), st.dvector('y')\nsmall = symlab.view(st.exp(x) * y + x, style='compact')\nsmall.add_class('t-small')\nsmall",
    "from symlab.notebook import RewriteStepper\nstepper = RewriteStepper(x + x ** 10)\nstepper.step = 1\n"
    "stepper.add_class('t-stepper')\nstepper",
]
SMALL_CELL = 3

TWO_FRAMES_JS = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))"


# -- reading a screenshot ----------------------------------------------------------------------------------------------
def ink(pixels: np.ndarray) -> float:
    """The share of pixels clearly not white (the drawing's background)."""
    return float((pixels.astype(np.int64).min(axis=2) < 230).mean())


# -- the notebook ------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def nb(lab, browser):
    write_notebook(lab.root / "pictures.ipynb", CELLS)
    page = open_notebook(browser, lab, "pictures.ipynb")
    page.run_all(timeout=240_000)
    for name in ("mlp", "big", "small", "stepper"):
        view(page, name).locator(".sl-picture svg g.node").first.wait_for(state="attached")
    yield page
    assert not page.errors, page.errors
    page.page.close()


def view(nb: Any, name: str) -> Any:
    return nb.page.locator(f".t-{name} .sl-view").first


def picture(nb: Any, name: str) -> Any:
    return view(nb, name).locator(".sl-picture").first


def pane_state(pane: Any) -> dict[str, float]:
    return pane.evaluate("""(el) => {
        const svg = el.querySelector("svg").getBoundingClientRect();
        return {left: el.scrollLeft, top: el.scrollTop, width: el.clientWidth, height: el.clientHeight,
                svgWidth: svg.width, svgHeight: svg.height};
    }""")


def label_heights(nb: Any, pane: Any) -> list[float]:
    """The heights on screen of the node labels whose middle is in the pane's visible part."""
    return nb.page.evaluate("""(el) => {
        const r = el.getBoundingClientRect();
        const box = {x: r.left + el.clientLeft, y: r.top + el.clientTop, w: el.clientWidth, h: el.clientHeight};
        const heights = [];
        for (const text of el.querySelectorAll("svg g.node text")) {
            const t = text.getBoundingClientRect();
            const cx = t.left + t.width / 2, cy = t.top + t.height / 2;
            if (cx >= box.x && cx <= box.x + box.w && cy >= box.y && cy <= box.y + box.h) heights.push(t.height);
        }
        return heights;
    }""", pane.element_handle())


def settle(nb: Any) -> None:
    nb.page.evaluate(TWO_FRAMES_JS)


# -- the tests ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["mlp", "big"])
def test_the_visible_part_of_a_large_picture_is_drawn_at_a_legible_size(nb, name):
    pane = picture(nb, name)
    pane.scroll_into_view_if_needed()
    settle(nb)
    state = pane_state(pane)
    assert state["svgWidth"] > state["width"] or state["svgHeight"] > state["height"], state  # shown in part
    assert 200 <= state["height"] <= nb.page.viewport_size["height"] * 0.7 + 2, state  # capped: 70vh
    drawn_share = ink(decode_png(pane.screenshot(animations="disabled")))
    assert drawn_share >= MIN_INK, f"{name}: only {drawn_share:.1%} of the visible picture is drawn"
    heights = label_heights(nb, pane)
    assert len(heights) >= 5 and min(heights) >= MIN_LABEL_PX, (name, sorted(heights)[:5])
    frame = view(nb, name).locator(".sl-picture-frame")
    status = frame.locator(".sl-off-screen").inner_text()
    assert status.startswith("showing ") and "% of the picture" in status and "drag to pan" in status, status


def test_zoom_steps_by_a_quarter_from_the_scale_shown_and_fit_shows_it_whole(nb):
    frame = view(nb, "mlp").locator(".sl-picture-frame")
    pane = picture(nb, "mlp")
    start = pane_state(pane)["svgWidth"]
    widths = [start]
    for zoom in ["out", "out", "in", "in", "in"]:
        frame.locator(f'[data-zoom="{zoom}"]').click()
        widths.append(pane_state(pane)["svgWidth"])
    ratios = [round(b / a, 3) for a, b in zip(widths, widths[1:], strict=False)]
    assert ratios == [0.8, 0.8, 1.25, 1.25, 1.25], (widths, ratios)
    # the keys: - and + on the focused picture, ctrl+wheel over it
    pane.focus()
    nb.page.keyboard.press("-")
    assert pane_state(pane)["svgWidth"] == pytest.approx(widths[-1] * 0.8, rel=1e-3)
    nb.page.keyboard.press("+")
    assert pane_state(pane)["svgWidth"] == pytest.approx(widths[-1], rel=1e-3)
    box = pane.bounding_box()
    nb.page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    nb.page.keyboard.down("Control")
    nb.page.mouse.wheel(0, 100)
    nb.page.keyboard.up("Control")
    nb.page.wait_for_function("([el, w]) => Math.abs(el.querySelector('svg').getBoundingClientRect().width - w) > 1",
                              arg=[pane.element_handle(), widths[-1]])
    assert pane_state(pane)["svgWidth"] == pytest.approx(widths[-1] * 0.8, rel=1e-3)
    # fit: the whole picture in the pane, however small; then "+" from there
    frame.locator('[data-zoom="fit"]').click()
    state = pane_state(pane)
    assert state["svgWidth"] <= state["width"] + 1 and state["svgHeight"] <= state["height"] + 1, state
    settle(nb)
    assert frame.get_attribute("data-shown") == "1" and not frame.locator(".sl-minimap").is_visible()
    frame.locator('[data-zoom="in"]').click()
    assert pane_state(pane)["svgWidth"] == pytest.approx(state["svgWidth"] * 1.25, rel=1e-3)
    pane.focus()
    nb.page.keyboard.press("0")  # 0: the whole picture again
    assert pane_state(pane)["svgWidth"] == pytest.approx(state["svgWidth"], rel=1e-3)


def test_a_drag_pans_and_a_click_that_did_not_drag_selects(nb):
    name = "big"
    pane = picture(nb, name)
    pane.scroll_into_view_if_needed()
    start = pane_state(pane)
    box = pane.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    nb.page.mouse.move(x, y)
    nb.page.mouse.down()
    nb.page.mouse.move(x - 60, y - 40, steps=6)
    nb.page.mouse.move(x - 120, y - 80, steps=6)
    nb.page.mouse.up()
    moved = pane_state(pane)
    assert moved["left"] - start["left"] == pytest.approx(120, abs=2)
    assert moved["top"] - start["top"] == pytest.approx(80, abs=2)
    assert view(nb, name).get_attribute("data-selected") == ""  # a drag is not a click
    # a click on a node in view selects it, and leaves the picture where it was
    key = nb.page.evaluate("""(el) => {
        const r = el.getBoundingClientRect();
        for (const g of el.querySelectorAll("svg g.node.apply")) {
            const b = g.getBoundingClientRect();
            if (b.left > r.left + r.width * 0.3 && b.right < r.right - r.width * 0.3
                && b.top > r.top + r.height * 0.3 && b.bottom < r.bottom - r.height * 0.3) return g.dataset.key;
        }
        return null;
    }""", pane.element_handle())
    assert key is not None
    root = view(nb, name)
    before = drawn(root)
    pane.locator(f'g.node[data-key="{key}"]').click()
    wait_drawn(nb, root, before)
    assert root.get_attribute("data-selected") == key
    settle(nb)
    assert pane_state(pane)["left"] == pytest.approx(moved["left"], abs=1)


def test_the_minimap_shows_on_a_large_picture_and_moves_its_view(nb):
    assert not view(nb, "small").locator(".sl-minimap").is_visible()  # a picture that fits has none
    frame = view(nb, "big").locator(".sl-picture-frame")
    minimap = frame.locator(".sl-minimap")
    pane = picture(nb, "big")
    pane.scroll_into_view_if_needed()
    minimap.wait_for(state="visible")  # made when the browser is idle, after the picture is painted
    assert minimap.locator("g.node, g.edge, [data-key]").count() == 0  # never taken for the picture
    box = minimap.bounding_box()
    assert box["width"] <= 182 and box["height"] <= 132
    # a click centres the view on the point clicked
    minimap.click(position={"x": box["width"] / 2, "y": box["height"] / 2})
    state = pane_state(pane)
    assert (state["left"] + state["width"] / 2) / state["svgWidth"] == pytest.approx(0.5, abs=0.02), state
    assert (state["top"] + state["height"] / 2) / state["svgHeight"] == pytest.approx(0.5, abs=0.02), state
    # a drag follows the pointer, beyond the minimap too (the pointer is captured): to the bottom right end
    nb.page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    nb.page.mouse.down()
    nb.page.mouse.move(box["x"] + box["width"] + 30, box["y"] + box["height"] + 30, steps=5)
    nb.page.mouse.up()
    state = pane_state(pane)
    assert state["left"] + state["width"] >= state["svgWidth"] - 2, state
    assert state["top"] + state["height"] >= state["svgHeight"] - 2, state
    settle(nb)  # the rectangle on the minimap follows: at its bottom right
    rect = frame.locator(".sl-minimap-view").bounding_box()
    assert rect["x"] + rect["width"] == pytest.approx(box["x"] + box["width"] - 1, abs=3)
    assert rect["y"] + rect["height"] == pytest.approx(box["y"] + box["height"] - 1, abs=3)


def test_a_selection_is_brought_to_the_middle_of_its_pane(nb):
    root = view(nb, "big")
    pane = picture(nb, "big")
    pane.evaluate("(el) => { el.scrollLeft = 0; el.scrollTop = 0; }")  # look at the top left corner
    # select, from Python, a node in the middle of the graph, far from that corner
    before = drawn(root)
    nb.execute("nodes = big.fgraph.toposort()\nbig.select(nodes[len(nodes) // 2])")
    wait_drawn(nb, root, before)
    settle(nb)
    key = root.get_attribute("data-selected")
    centre = nb.page.evaluate("""([el, key]) => {
        const p = el.getBoundingClientRect();
        const g = el.querySelector(`g.node[data-key="${key}"]`).getBoundingClientRect();
        return [(g.left + g.width / 2 - p.left - el.clientLeft) / el.clientWidth,
                (g.top + g.height / 2 - p.top - el.clientTop) / el.clientHeight];
    }""", [pane.element_handle(), key])
    assert centre[0] == pytest.approx(0.5, abs=0.05) and centre[1] == pytest.approx(0.5, abs=0.05), centre


def test_an_arrow_leaving_an_input_selects_that_input(nb):
    root = view(nb, "mlp")
    pane = picture(nb, "mlp")
    edges = nb.page.evaluate("""(el) => Array.from(el.querySelectorAll("svg g.edge[data-key]"))
        .map((g) => g.dataset.key)
        .filter((key) => el.querySelector(`g.node.input[data-key="${key.split("_")[0]}"]`))""", pane.element_handle())
    assert len(edges) >= 10, edges
    for key in edges:
        before = drawn(root)
        # a click on the arrow's line (its wide hit stroke), wherever the arrow is
        nb.page.evaluate("""([el, key]) => {
            const hit = el.querySelector(`g.edge[data-key="${key}"] path.sl-hit`);
            hit.dispatchEvent(new MouseEvent("click", {bubbles: true}));
        }""", [pane.element_handle(), key])
        wait_drawn(nb, root, before)
        assert root.get_attribute("data-selected") == key.split("_")[0], key
    # the hit stroke is where a pointer finds the arrow: a point 3 px beside its line, near the middle, where no
    # other arrow or node lies (where two arrows cross, either is a fair answer)
    key = edges[0]
    point = nb.page.evaluate("""([el, key]) => {
        const edge = el.querySelector(`g.edge[data-key="${key}"]`);
        const path = edge.querySelector("path.sl-hit");
        edge.scrollIntoView({block: "center", inline: "center"});
        const m = path.getScreenCTM();
        for (const f of [0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8]) {
            const p = path.getPointAtLength(path.getTotalLength() * f);
            const x = m.a * p.x + m.c * p.y + m.e + 3, y = m.b * p.x + m.d * p.y + m.f;
            if (edge.contains(document.elementFromPoint(x, y))) return [x, y];
        }
        return null;
    }""", [pane.element_handle(), key])
    assert point is not None, f"every point 3 px beside arrow {key} is covered by something else"
    before = drawn(root)
    nb.execute("mlp.select(None)")
    wait_drawn(nb, root, before)
    before = drawn(root)
    nb.page.mouse.click(*point)  # 3 px beside the 1 px line
    wait_drawn(nb, root, before)
    assert root.get_attribute("data-selected") == key.split("_")[0]


def test_the_stepper_draws_its_first_and_last_buttons_and_shows_its_exclude_line_whole(nb):
    stepper = view(nb, "stepper")
    stepper.scroll_into_view_if_needed()
    for name in ("first step (the unoptimized graph)", "last step (the optimized graph)"):
        found = stepper.get_by_role("button", name=name)
        assert found.inner_text() == "" and found.locator("svg.sl-icon polygon").count() == 1  # no font glyph
        icon = found.locator("svg.sl-icon").bounding_box()
        assert icon["width"] >= 8 and icon["height"] >= 8
    exclude = stepper.locator("input.sl-exclude")
    assert "_" in exclude.input_value()  # the rule's name has underscores
    room = exclude.evaluate("""(input) => {
        const s = getComputedStyle(input);
        return [input.scrollHeight - input.clientHeight, parseFloat(s.lineHeight) / parseFloat(s.fontSize)];
    }""")
    assert room[0] <= 0 and room[1] >= 1.3, room  # the line box holds what is drawn under the baseline
    for pane in (".sl-before", ".sl-after"):  # each pane is a picture with its own zoom
        assert stepper.locator(f"{pane} [data-zoom]").count() == 3


def run_cell(nb: Any, index: int) -> None:
    """Run cell ``index`` again as a user would (select it, Ctrl+Enter) and wait until it has run."""
    nb.page.evaluate("""async (index) => {
        const panel = window.jupyterapp.shell.currentWidget;
        const cell = panel.content.widgets[index];
        const count = cell.model.executionCount;
        panel.content.activeCellIndex = index;
        await window.jupyterapp.commands.execute("notebook:run-cell");
        const kernel = panel.sessionContext.session.kernel;
        while (cell.model.executionCount === count || kernel.status !== "idle") {
            await new Promise((done) => setTimeout(done, 20));
        }
    }""", index)
    view(nb, "small").locator(".sl-picture svg g.node").first.wait_for()


def window_listeners(cdp: Any) -> dict[str, int]:
    """How many listeners the window and the document hold, by event type."""
    counts: dict[str, int] = {}
    for target in ("window", "document"):
        handle = cdp.send("Runtime.evaluate", {"expression": target})["result"]["objectId"]
        for listener in cdp.send("DOMDebugger.getEventListeners", {"objectId": handle})["listeners"]:
            name = f"{target}:{listener['type']}"
            counts[name] = counts.get(name, 0) + 1
        cdp.send("Runtime.releaseObject", {"objectId": handle})
    return counts


def live_drawings(cdp: Any) -> int:
    """How many drawings of the views (``svg.sl-svg``, in the page or detached) are alive after a garbage collection."""
    cdp.send("HeapProfiler.collectGarbage")
    proto = cdp.send("Runtime.evaluate", {"expression": "SVGSVGElement.prototype"})["result"]["objectId"]
    found = cdp.send("Runtime.queryObjects", {"prototypeObjectId": proto})["objects"]["objectId"]
    count = cdp.send("Runtime.callFunctionOn", {
        "objectId": found, "returnByValue": True,
        "functionDeclaration": "function () { return this.filter((svg) => svg.classList.contains('sl-svg')).length; }",
    })["result"]["value"]
    cdp.send("Runtime.releaseObjectGroup", {"objectGroup": ""})
    return count


def test_re_running_a_widget_cell_50_times_leaves_no_listener_behind(nb):
    cdp = nb.page.context.new_cdp_session(nb.page)
    run_cell(nb, SMALL_CELL)  # whatever a first re-run sets up once
    start = window_listeners(cdp)
    drawings = live_drawings(cdp)
    for _ in range(50):
        run_cell(nb, SMALL_CELL)
    assert nb.page.locator(".t-small .sl-view").count() == 1
    end = window_listeners(cdp)
    grown = {k: (start.get(k, 0), n) for k, n in end.items() if n > start.get(k, 0)}
    assert not grown, grown  # issue 30: one window pointerup listener per drawing, never removed
    assert live_drawings(cdp) <= drawings + 2  # the views removed are gone, their drawings with them
    cdp.detach()


def test_after_a_kernel_restart_the_view_says_it_lost_its_kernel(nb):
    root = view(nb, "small")
    assert root.locator(".sl-lost").is_hidden() and root.get_attribute("data-kernel") is None
    nb.page.evaluate("""async () => {
        const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
        await kernel.restart();
    }""")
    nb.wait_for_kernel()
    notice = root.locator(".sl-lost")
    notice.wait_for(state="visible", timeout=5_000)  # told by the kernel's status: before any action
    root.locator("g.node.apply").first.click()  # a click goes nowhere: the notice stays
    nb.page.wait_for_timeout(200)
    assert notice.is_visible()
    assert "lost its kernel" in notice.inner_text() and "run the cell again" in notice.inner_text()
    assert root.get_attribute("data-kernel") == "lost"
    assert root.locator(".sl-picture svg g.node").count() >= 3  # the last picture stays


# -- the browser half alone ----------------------------------------------------------------------------------------------
HARNESS = """
const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="200pt" height="100pt" viewBox="0 0 200 100">
<g class="graph" transform="scale(1 1) rotate(0) translate(4 96)">
<g id="a1" class="node apply"><polygon points="0,0 80,0 80,-30 0,-30" fill="#dbe4ff" stroke="black"/>
<text x="40" y="-12" font-size="11.00">add</text></g></g></svg>`;
const listeners = new Map();
window.sent = [];
const model = {
  state: { view: "graph", svg, marks: {}, panel: {}, notice: "", legend: "", picture_style: "compact", focus: false,
           selected_key: "", drawn: 1 },
  get(name) { return this.state[name]; },
  on(event, listener) { if (!listeners.has(event)) listeners.set(event, new Set()); listeners.get(event).add(listener); },
  off(event, listener) { if (listeners.has(event)) listeners.get(event).delete(listener); },
  send(message) { window.sent.push(message); },  // no kernel: nothing ever answers
};
window.answer = () => {
  model.state.drawn += 1;
  for (const listener of listeners.get("change:drawn") || []) listener();
};
window.listenerCount = () => Array.from(listeners.values()).reduce((n, s) => n + s.size, 0);
window.cleanup = views.render({ model, el: document.getElementById("host") });
"""


def test_an_action_without_an_answer_marks_the_view_lost_until_an_answer_comes(browser):
    import re

    from symlab.notebook.widget import views_script

    source = views_script()
    source = re.sub(r"export default \{", "const views = {", source) + HARNESS
    page = browser.new_page()
    try:
        page.set_content('<div id="host"></div>')
        page.add_style_tag(content=(ROOT / "symlab" / "notebook" / "static" / "views.css").read_text())
        page.add_script_tag(content=source, type="module")
        root = page.locator(".sl-view")
        root.locator("g.node").wait_for()
        root.locator("g.node").click()
        assert page.evaluate("() => window.sent") == [{"type": "select", "key": "a1"}]
        assert root.locator(".sl-lost").is_hidden()
        root.locator(".sl-lost").wait_for(state="visible", timeout=6_000)  # about 3 s without an answer
        assert root.get_attribute("data-kernel") == "lost"
        page.evaluate("() => window.answer()")  # an answer after all: alive again
        assert root.locator(".sl-lost").is_hidden() and root.get_attribute("data-kernel") is None
        # the view's cleanup removes every listener it added to the model
        assert page.evaluate("() => window.listenerCount()") > 0
        page.evaluate("() => window.cleanup()")
        assert page.evaluate("() => window.listenerCount()") == 0
    finally:
        page.close()
