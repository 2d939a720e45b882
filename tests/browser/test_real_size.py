"""The views at real size (issue 30), in a real JupyterLab: the MLP gradient raw and compiled, and a 1,000-node graph.

One notebook builds every view of ``tests/real_size.py``'s graphs (the graph view, the clients inspector, the
values view and a rewrite stepper of each), and the tests look at them as a reader does: every pane shows drawn
pixels in the part of it that is on screen (read from a screenshot, not from the DOM), at a legible size; the
search box finds ``W1`` and brings it into view; a folded group expands and collapses in place; the stepper walks
all the MLP's steps with the arrow keys, each step's changed nodes in view (inside the pane, not under its minimap,
and on screen) and its text diff shown; "why not" answers at step 0 and on ``symlab.view(f.trace)``; the exported
page of the MLP's steps works offline, holds no path of this machine and is under 2 MB. The MLP is compiled with
``mode="NUMPY"``: the default's rewrites and trace, without a Numba compile in the kernel's background. No test
here times anything (``benchmarks/bench_browser.py`` does).
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from browser_lab import ROOT, drawn, open_notebook, wait_drawn, write_notebook
from on_screen import TWO_FRAMES_JS, VISIBLE_RECT_JS, covered, inside, out_of_view, rounded
from screenshots import decode_png, ink

#: Share of the visible part of a pane that must be drawn (not the background), and the smallest legible label.
MIN_INK = 0.03
MIN_LABEL_PX = 9.0

SETUP = f"""\
import sys
sys.path.insert(0, {str(ROOT / "tests")!r})
import numpy as np
import real_size
import symlab
from symlab.graph.fg import FunctionGraph
from symlab.notebook import RewriteStepper, ValuesView


def shown(widget, name):
    widget.add_class(f"rs-{{name}}")
    return widget


def middle(stepper):
    stepper.step = stepper.total // 2
    return stepper


inputs, outputs = real_size.mlp_gradient()
rng = np.random.default_rng(0)
mlp_values = {{"X": rng.normal(size=(4, 3)), "Y": np.eye(2)[[0, 1, 1, 0]], "W1": rng.normal(size=(3, 5)),
              "b1": np.zeros(5), "W2": rng.normal(size=(5, 2)), "b2": np.zeros(2)}}
f = real_size.mlp_function(mode="NUMPY")  # the default's rewrites and trace, no Numba compile in the background
big_inputs, big_outputs = real_size.layered_graph(1000)
big_values = {{"a": np.full(3, 0.1), "b": np.full(3, 0.2), "x": np.full(3, 0.3)}}
"""

#: (widget name, code that makes it): each in its own cell, the widget tagged with the class ``rs-<name>``.
WIDGETS = [
    ("raw-view", "symlab.view(outputs)"),
    ("raw-inspector", "FunctionGraph(*real_size.mlp_gradient()).inspect()"),
    ("raw-values", "ValuesView(outputs, mlp_values)"),
    ("raw-stepper", "middle(RewriteStepper(real_size.mlp_gradient()[1]))"),
    ("compiled-view", "symlab.view(f)"),
    ("compiled-inspector", "f.inspect()"),
    ("compiled-values", "ValuesView(f.maker.fgraph.outputs, mlp_values)"),
    ("compiled-stepper", "middle(RewriteStepper(f))"),
    ("trace-view", "symlab.view(f.trace)"),
    ("big-view", "symlab.view(big_outputs)"),
    ("big-inspector", "FunctionGraph(*real_size.layered_graph(1000)).inspect()"),
    ("big-values", "ValuesView(big_outputs, big_values)"),
    ("big-stepper", "middle(RewriteStepper(real_size.layered_graph(1000)[1]))"),
]
EXPORT = "RewriteStepper(real_size.mlp_function(mode='NUMPY')).export_html('mlp_steps.html')"

#: Every pane: (widget name, the pane's picture inside the widget).
PANES = []
for _name, _code in WIDGETS:
    if _name == "trace-view":
        continue
    if _name.endswith("stepper"):
        PANES += [(_name, ".sl-before .sl-picture"), (_name, ".sl-after .sl-picture")]
    else:
        PANES.append((_name, ".sl-picture"))

#: The height on screen of the node labels whose box is inside ``el``'s visible part.
LABEL_HEIGHTS_JS = """([el, box]) => {
    const heights = [];
    for (const text of el.querySelectorAll("svg g.node text")) {
        const r = text.getBoundingClientRect();
        const cx = r.left + r.width / 2, cy = r.top + r.height / 2;
        if (r.height > 0 && cx >= box.x && cx <= box.x + box.width && cy >= box.y && cy <= box.y + box.height) {
            heights.push(r.height);
        }
    }
    return heights;
}"""

#: What covers part of a picture (its minimap, when shown): a box, or null.
COVER_JS = """(picture) => {
    const frame = picture.closest(".sl-picture-frame") || picture.parentElement;
    const map = frame && frame.querySelector(".sl-minimap");
    if (!map || map.hidden || getComputedStyle(map).display === "none" || getComputedStyle(map).visibility === "hidden") {
        return null;
    }
    const r = map.getBoundingClientRect();
    return r.width && r.height ? {x: r.left, y: r.top, width: r.width, height: r.height} : null;
}"""

#: The changed nodes of the step shown and the panes' boxes (client boxes: what the pane shows of its picture).
STEP_STATE_JS = """([root]) => {
    const cover = """ + COVER_JS + """;
    const visible = """ + VISIBLE_RECT_JS + """;
    const clientBox = (el) => {
        const r = el.getBoundingClientRect();
        return {x: r.left + el.clientLeft, y: r.top + el.clientTop, width: el.clientWidth, height: el.clientHeight};
    };
    const out = {step: root.dataset.step, panes: {}, diff: null};
    for (const [pane, cls] of [["before", "removed"], ["after", "created"]]) {
        const picture = root.querySelector(`.sl-${pane} .sl-picture`);
        if (!picture || picture.closest("[hidden]")) continue;
        out.panes[pane] = {
            box: clientBox(picture),
            visible: visible(picture),
            cover: cover(picture),
            nodes: Array.from(picture.querySelectorAll(`g.node.${cls}`)).map((g) => {
                const r = g.getBoundingClientRect();
                return {key: g.dataset.key, x: r.left, y: r.top, width: r.width, height: r.height};
            }),
        };
    }
    const diff = root.querySelector(".sl-diff");
    if (diff && !diff.closest("[hidden]")) {
        out.diff = diff.innerText;
        out.changedLines = diff.querySelectorAll(".sl-diff-add, .sl-diff-del").length;
    }
    const row = root.querySelector(`.sl-step-list li.sl-step[data-step="${root.dataset.step}"]`);
    out.refused = Boolean(row && row.classList.contains("sl-refused"));
    out.quiet = Boolean(row && row.classList.contains("sl-quiet"));
    return out;
}"""

def look_at(page: Any, pane: Any) -> dict[str, Any]:
    """Scroll ``pane`` into view; the share of drawn pixels in its visible part, its size, and its labels' heights."""
    pane.evaluate("(el) => el.scrollIntoView({block: 'center', inline: 'nearest'})")
    page.evaluate(TWO_FRAMES_JS)
    box = pane.evaluate(VISIBLE_RECT_JS)
    found: dict[str, Any] = {"box": box, "ink": 0.0, "labels": []}
    if box["width"] < 40 or box["height"] < 40:
        return found
    clip = {"x": box["x"] + 1, "y": box["y"] + 1, "width": box["width"] - 2, "height": box["height"] - 2}
    found["ink"] = ink(decode_png(page.screenshot(clip=clip, animations="disabled")))
    found["labels"] = page.evaluate(LABEL_HEIGHTS_JS, [pane.element_handle(), box])
    return found


# -- the notebook ------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def real(lab, browser):
    """The notebook of every real-size view, run once; the test module's tests look at its widgets in turn."""
    cells = [SETUP] + [f"shown({code}, {name!r})" for name, code in WIDGETS] + [EXPORT]
    write_notebook(lab.root / "real_size.ipynb", cells)
    nb = open_notebook(browser, lab, "real_size.ipynb")
    nb.page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    # every cell run, or one failed (Run All stops there): say which, rather than wait for the others
    nb.page.wait_for_function(
        """() => {
            const w = window.jupyterapp.shell.currentWidget;
            const cells = w.content.widgets.filter((c) => c.model.type === 'code');
            const failed = cells.some((c) => c.model.outputs.toJSON().some((o) => o.output_type === 'error'));
            return failed || (cells.every((c) => c.model.executionCount !== null)
                              && w.sessionContext.session.kernel.status === 'idle');
        }""",
        timeout=240_000,
    )
    assert not errors_of(nb), errors_of(nb)
    for name, _ in WIDGETS:
        widget(nb, name).locator("svg g.node").first.wait_for(state="attached")
    yield nb
    assert not nb.errors, nb.errors
    nb.page.close()


def widget(nb: Any, name: str) -> Any:
    """The root element (``.sl-view``) of the widget ``name``."""
    return nb.page.locator(f".rs-{name} .sl-view").first


def errors_of(nb: Any) -> list[str]:
    """The tracebacks of the notebook's cells (as text)."""
    return nb.page.evaluate("""() => window.jupyterapp.shell.currentWidget.content.widgets
        .flatMap((c) => c.model.type === 'code' ? c.model.outputs.toJSON() : [])
        .filter((o) => o.output_type === 'error')
        .map((o) => `${o.ename}: ${o.evalue}\\n${(o.traceback || []).join('\\n').replace(/\\x1b\\[[0-9;]*m/g, '')}`)""")


# -- every pane draws, legibly -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "pane"), PANES, ids=[f"{n}{p.split()[0] if ' ' in p else ''}" for n, p in PANES])
def test_every_pane_shows_a_legible_drawing_where_it_is_on_screen(real, name, pane):
    view = widget(real, name)
    picture = view.locator(pane).first
    seen = look_at(real.page, picture)
    box = seen["box"]
    assert box["width"] >= 200 and box["height"] >= 150, f"{name} {pane}: the visible part of the pane is {box}"
    assert seen["ink"] >= MIN_INK, (f"{name} {pane}: {seen['ink']:.1%} of the visible {box['width']:.0f}x"
                                    f"{box['height']:.0f} px is drawn (blank pane)")
    heights = sorted(seen["labels"])
    assert heights, f"{name} {pane}: no node label in the visible part of the pane"
    median = heights[len(heights) // 2]
    assert median >= MIN_LABEL_PX, (f"{name} {pane}: node labels are {median:.1f} px high (median of "
                                    f"{len(heights)} in view; smallest {heights[0]:.1f}), under {MIN_LABEL_PX} px")


# -- search --------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "text"), [("raw-view", "W1"), ("compiled-view", "W1"), ("big-view", "a42")])
def test_search_selects_the_first_match_and_brings_it_into_view(real, name, text):
    view = widget(real, name)
    view.scroll_into_view_if_needed()
    box = view.locator("input.sl-search").first
    assert box.count() == 1, f"{name}: no search box (input.sl-search)"
    selected = view.get_attribute("data-selected")
    box.fill(text)
    before = drawn(view)
    box.press("Enter")
    real.page.wait_for_function(
        "([el, b, s]) => Number(el.dataset.drawn) > b && el.dataset.selected && el.dataset.selected !== s",
        arg=[view.element_handle(), before, selected], timeout=15_000)
    key = view.get_attribute("data-selected")
    details = view.locator(".sl-details").inner_text()
    assert text in details, f"{name}: the selection {key} is not {text}: {details}"  # W1, or the node computing a42
    # the node drawn for the selection: its own box, or (a variable of the compact style) its owner's, lit as selected
    node = view.locator(f'.sl-picture g.node[data-key="{key}"], .sl-picture g.node.sl-selected').first
    assert node.count() == 1, f"{name}: the selection {key} is not drawn, and no node is lit as selected"
    real.page.evaluate(TWO_FRAMES_JS)
    picture = view.locator(".sl-picture").first
    pane = picture.evaluate("""(el) => { const r = el.getBoundingClientRect();
        return {x: r.left + el.clientLeft, y: r.top + el.clientTop, width: el.clientWidth, height: el.clientHeight}; }""")
    where = node.evaluate("(g) => { const r = g.getBoundingClientRect(); "
                          "return {key: g.dataset.key, x: r.left, y: r.top, width: r.width, height: r.height}; }")
    cover = picture.evaluate(COVER_JS)
    assert inside(where, pane) and not covered(where, cover), (
        f"{name}: the selected {text} {rounded(where)} is not in view in its pane {rounded(pane)} (minimap: {cover})")
    on_screen = picture.evaluate(VISIBLE_RECT_JS)
    assert inside(where, on_screen), (
        f"{name}: the selected {text} {rounded(where)} is in its pane but off screen (on screen: {rounded(on_screen)})")
    matches = view.locator(".sl-matches").inner_text()
    assert text in matches, matches


# -- folding ---------------------------------------------------------------------------------------------------------------
def click_and_wait(nb: Any, view: Any, target: Any) -> None:
    before = drawn(view)
    target.click()
    wait_drawn(nb, view, before)


@pytest.mark.parametrize("name", ["raw-view", "big-view"])
def test_a_folded_group_expands_and_collapses_in_place(real, name):
    view = widget(real, name)
    nodes = view.locator(".sl-picture svg g.node")
    groups = view.locator(".sl-picture svg g.node.group")
    assert groups.count() >= 1, f"{name}: nothing folded ({nodes.count()} nodes drawn)"
    drawn_before = nodes.count()
    keys_before = set(nodes.evaluate_all("gs => gs.map(g => g.dataset.key)"))
    group = groups.first
    group_key = group.get_attribute("data-key")
    click_and_wait(real, view, group)
    expand = view.locator(".sl-details button", has_text="expand")
    assert expand.count() >= 1, f"{name}: no expand action for {group_key}: {view.locator('.sl-details').inner_text()}"
    click_and_wait(real, view, expand.first)
    keys_after = set(nodes.evaluate_all("gs => gs.map(g => g.dataset.key)"))
    assert group_key not in keys_after, f"{name}: {group_key} is still drawn after expanding it"
    # a group holds two nodes or more: expanding it in place draws more nodes than before
    assert nodes.count() > drawn_before, f"{name}: {drawn_before} nodes before expanding, {nodes.count()} after"
    new = sorted(keys_after - keys_before)
    assert new, f"{name}: expanding {group_key} drew no new node"
    # a member drawn by the expansion offers to fold its group back
    member = view.locator(f'.sl-picture svg g.node[data-key="{new[0]}"]')
    click_and_wait(real, view, member)
    collapse = view.locator(".sl-details button", has_text=re.compile("collapse|fold back"))
    assert collapse.count() >= 1, f"{name}: no collapse action for {new[0]}: {view.locator('.sl-details').inner_text()}"
    click_and_wait(real, view, collapse.first)
    keys_back = set(nodes.evaluate_all("gs => gs.map(g => g.dataset.key)"))
    assert group_key in keys_back and not (keys_back & set(new)), (
        f"{name}: after collapsing, {group_key} drawn: {group_key in keys_back}; members still drawn: "
        f"{sorted(keys_back & set(new))[:5]}")


# -- the stepper ---------------------------------------------------------------------------------------------------------
def test_the_stepper_walks_every_step_with_the_arrow_keys_its_changes_in_view(real):
    page = real.page
    stepper = widget(real, "compiled-stepper")
    stepper.evaluate("(el) => el.scrollIntoView({block: 'start'})")  # as a reader scrolls to it: its top at the top
    stepper.focus()
    before = drawn(stepper)
    page.keyboard.press("Home")
    wait_drawn(real, stepper, before)
    assert stepper.get_attribute("data-step") == "0"
    total = int(stepper.locator(".sl-position").inner_text().split("/")[-1])
    assert total == 83
    problems: list[str] = []
    outside_pane: list[int] = []
    outside_screen: list[int] = []
    changed_steps, retries = 0, 0
    for k in range(1, total + 1):
        before = drawn(stepper)
        page.keyboard.press("ArrowRight")
        wait_drawn(real, stepper, before)
        page.evaluate(TWO_FRAMES_JS)
        state = page.evaluate(STEP_STATE_JS, [stepper.element_handle()])
        if state["step"] != str(k):
            problems.append(f"step {k}: the stepper shows step {state['step']}")
            break
        if not state["refused"] and not state["quiet"]:  # a step that changed the graph shows its change as text
            if not state["diff"] or not state["diff"].strip():
                problems.append(f"step {k}: no text diff shown (.sl-diff)")
            elif not state.get("changedLines"):
                problems.append(f"step {k}: the text diff has no - or + line: {state['diff'][:200]!r}")
        for pane in ("before", "after"):
            if pane not in state["panes"]:
                problems.append(f"step {k}: no {pane} pane")
                continue
            found = state["panes"][pane]
            # in view: inside the pane's own box (its scrolling) and on screen (the notebook's scrolling, the window),
            # not under the minimap
            in_pane = out_of_view(found["nodes"], found["box"], found["cover"])
            on_screen = out_of_view(found["nodes"], found["visible"], found["cover"])
            if (in_pane or on_screen) and retries < 5:  # the browser may still be scrolling: look once more
                retries += 1
                page.wait_for_timeout(300)
                found = page.evaluate(STEP_STATE_JS, [stepper.element_handle()])["panes"][pane]
                in_pane = out_of_view(found["nodes"], found["box"], found["cover"])
                on_screen = out_of_view(found["nodes"], found["visible"], found["cover"])
            missing = in_pane or on_screen
            if missing:
                where = {n["key"]: rounded(n) for n in found["nodes"] if n["key"] in missing[:3]}
                cover = found["cover"]
                (outside_pane if in_pane else outside_screen).append(k)
                problems.append(
                    f"step {k}: {pane} pane {rounded(found['box'])}, on screen {rounded(found['visible'])}"
                    f"{', minimap ' + str(rounded(cover)) if cover else ''}: changed nodes "
                    f"{'out of the pane' if in_pane else 'off screen'} {missing[:5]} at {where}")
        changed_steps += bool(state["panes"].get("after", {}).get("nodes"))
    assert changed_steps > 0, "no step marked a created node"
    summary = (f"{len(problems)} problems over {total} steps; changed nodes outside their pane's box (its scroll, "
               f"or under the minimap) at {len(set(outside_pane))} steps, in the pane but off screen (the notebook "
               f"scrolled the pane away) at {len(set(outside_screen))} steps")
    assert not problems, summary + ":\n" + "\n".join(problems[:25])


def why_answer(nb: Any, stepper: Any, pane: str) -> str:
    """Click apply nodes of ``pane`` until one has rules tried on it; the "why not" part of the card."""
    texts = []
    apply_nodes = stepper.locator(f"{pane} .sl-picture svg g.node.apply")
    for k in range(min(4, apply_nodes.count())):
        click_and_wait(nb, stepper, apply_nodes.nth(k))
        why = stepper.locator(".sl-why")
        text = why.inner_text() if why.count() else stepper.locator(".sl-card").inner_text()
        texts.append(text)
        if why.count() and why.locator("tr").count() >= 1 and "were not recorded" not in text:
            return text
    return "\n---\n".join(texts)


@pytest.mark.parametrize("name", ["trace-view", "compiled-stepper", "raw-stepper"])
def test_why_not_answers_at_step_0_and_on_the_trace_entry_point(real, name):
    stepper = widget(real, name)
    stepper.scroll_into_view_if_needed()
    stepper.focus()
    if stepper.get_attribute("data-step") != "0":
        before = drawn(stepper)
        real.page.keyboard.press("Home")
        wait_drawn(real, stepper, before)
    assert stepper.get_attribute("data-step") == "0"
    text = why_answer(real, stepper, ".sl-after")
    assert "were not recorded" not in text, f"{name}, step 0: {text}"
    assert stepper.locator(".sl-why tr").count() >= 1, f"{name}, step 0: no rule listed: {text}"
    # and at a later step, in the "before" pane
    stepper.focus()
    before = drawn(stepper)
    real.page.keyboard.press("ArrowRight")
    wait_drawn(real, stepper, before)
    text = why_answer(real, stepper, ".sl-before")
    assert "were not recorded" not in text and stepper.locator(".sl-why tr").count() >= 1, f"{name}, step 1: {text}"


# -- the exported page -------------------------------------------------------------------------------------------------
def machine_paths(lab: Any) -> list[str]:
    """Paths of this machine an exported page must not hold."""
    paths = {str(ROOT), str(lab.root), str(lab.base), sys.prefix, os.path.expanduser("~"),
             str(Path(tempfile.gettempdir()).resolve()) + "/", "site-packages"}
    return sorted(p for p in paths if p and p not in ("/", "~"))


def test_the_exported_steps_work_offline_and_hold_no_path_of_the_machine(real, lab, browser):
    path = lab.root / "mlp_steps.html"
    assert path.exists(), "the notebook's export cell wrote no page"
    size = path.stat().st_size
    assert size < 2_000_000, f"the exported page of the MLP's steps is {size / 1e6:.1f} MB"
    text = path.read_text(encoding="utf-8")
    leaked = [p for p in machine_paths(lab) if p in text]
    assert not leaked, f"the exported page holds paths of this machine: {leaked}"
    page = browser.new_page()
    requests: list[str] = []
    errors: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(("file:", "data:", "blob:"))
               else route.abort())
    try:
        page.goto(path.as_uri())
        stepper = page.locator(".sl-stepper")
        stepper.wait_for()
        assert stepper.get_attribute("data-step") == "0"
        total = int(stepper.locator(".sl-position").inner_text().split("/")[-1])
        assert total == 83
        stepper.focus()
        for k in range(1, total + 1):
            page.keyboard.press("ArrowRight")
            page.wait_for_function(f"() => document.querySelector('.sl-stepper').dataset.step === '{k}'")
            if k == total // 2:
                for pane in (".sl-before .sl-picture", ".sl-after .sl-picture"):
                    seen = look_at(page, stepper.locator(pane).first)
                    assert seen["ink"] >= MIN_INK, f"exported page, step {k}, {pane}: {seen['ink']:.1%} drawn"
                    heights = sorted(seen["labels"])
                    assert heights and heights[len(heights) // 2] >= MIN_LABEL_PX, f"step {k}, {pane}: {heights[:5]}"
                stepper.focus()
        offline = [url for url in requests if not url.startswith(("file:", "data:", "blob:"))]
        assert not offline, f"the exported page asked the network for {offline}"
        assert not errors, errors
    finally:
        page.close()
