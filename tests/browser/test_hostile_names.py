"""Hostile names in a real JupyterLab: every widget rendered, clicked and stepped, and the Markdown fallbacks
rendered by JupyterLab itself. Every payload of ``hostile_names.HOSTILE`` that could run sets ``window.__pwned``:
it must stay unset, and every name must show literally in the page's text.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from browser_lab import drawn, open_notebook, wait_drawn, write_notebook
from hostile_names import HOSTILE, hostile_graph, hostile_rule_trace, notebook_cells

TESTS = Path(__file__).resolve().parents[1]
#: What could run, or load something, if user data became markup.
#: (JupyterLab shows an SVG output as an image of a data URL, which holds the names: an image runs no script.)
ACTIVE = ("script, iframe, object, embed, foreignObject, [onerror], [onload], [onclick], [onmouseover], "
          "a[href^='javascript'], [src^='javascript'], [href*='__pwned'], "
          "[src*='__pwned']:not(img[src^='data:image/svg+xml,']):not(img[src^='data:image/png;base64,'])")


def spaced(text: str) -> str:
    """Runs of whitespace as one space: how a name's line break reads in the page's text."""
    return re.sub(r"\s+", " ", text).strip()


def assert_literal(text: str, names: list[str], where: str) -> None:
    """Each name shows as it is: present (whitespace aside), and never HTML-escaped (which would show escaped)."""
    text = spaced(text)
    for name in names:
        assert spaced(name) in text, f"{where}: {name!r} is not shown"
        if "<" in name:
            assert spaced(html.escape(name, quote=False)) not in text, f"{where}: {name!r} shows HTML-escaped"


def assert_nothing_ran(nb_or_page, errors: list[str]) -> None:
    page = getattr(nb_or_page, "page", nb_or_page)
    assert page.evaluate("() => window.__pwned") is None, "a hostile name ran"
    assert not errors, errors


def click(nb, view, node) -> None:
    before = drawn(view)
    node.click()
    wait_drawn(nb, view, before)


def test_every_widget_and_fallback_shows_hostile_names_literally_and_runs_nothing(lab, browser):
    write_notebook(lab.root / "hostile_all.ipynb", notebook_cells(str(TESTS)))
    nb = open_notebook(browser, lab, "hostile_all.ipynb")
    nb.run_all()
    page = nb.page
    view = page.locator(".sl-graph-view:not(.sl-inspector)").first
    stepper = page.locator(".sl-stepper").first
    inspector = page.locator(".sl-inspector").first
    values = page.locator(".sl-values-view").first
    for widget in (view, stepper, inspector, values):
        widget.locator("svg g.node").first.wait_for()

    # the graph view (structure style): every variable is a box; clicking each shows its name in the panel
    assert_literal(view.locator(".sl-picture").text_content(), HOSTILE, "GraphView picture")
    panels = []
    boxes = view.locator("g.node.variable")
    for k in range(boxes.count()):
        click(nb, view, boxes.nth(k))
        panels.append(view.locator(".sl-details").text_content())
    assert_literal("\n".join(panels), HOSTILE, "GraphView panel")
    # a link of the panel (an input of the selected node) is a button named by its text, never an <a href>
    link = view.locator(".sl-details .sl-link").first
    click(nb, view, link)
    assert view.locator(".sl-details a").count() == 0

    # the stepper: the hostile rule's name in the step list and the card; step, click nodes of both panes
    stepper.focus()
    before = drawn(stepper)
    page.keyboard.press("ArrowRight")
    wait_drawn(nb, stepper, before)
    assert stepper.get_attribute("data-step") == "1"
    card = stepper.locator(".sl-card").text_content()
    assert_literal(card + stepper.locator(".sl-step-list").text_content(), [HOSTILE[0]], "RewriteStepper card")
    for pane in (".sl-before", ".sl-after"):
        click(nb, stepper, stepper.locator(f"{pane} g.node.apply").first)
        assert "rules tried on" in stepper.locator(".sl-why").text_content()
    assert_literal(stepper.locator(".sl-before .sl-picture").text_content(), HOSTILE[:7], "RewriteStepper picture")
    before = drawn(stepper)
    page.keyboard.press("Home")
    wait_drawn(nb, stepper, before)

    # the clients inspector: find a variable by a hostile name (Enter selects it), click the boxes
    search = inspector.locator("input.sl-search")
    search.fill(HOSTILE[1])
    page.wait_for_function("([el, name]) => el.querySelector('.sl-matches').textContent.includes(name)",
                           arg=[inspector.element_handle(), HOSTILE[1]])
    before = drawn(inspector)
    search.press("Enter")
    page.wait_for_function(
        "([el, name]) => el.querySelector('.sl-details .sl-details-title')?.textContent === 'input ' + name",
        arg=[inspector.element_handle(), HOSTILE[1]])
    assert drawn(inspector) > before
    titles = set()
    inputs = inspector.locator("g.node.input")
    for k in range(inputs.count()):  # the graph's inputs: the seven scalars and the shared variable
        click(nb, inspector, inputs.nth(k))
        titles.add(inspector.locator(".sl-details .sl-details-title").text_content())
    assert titles == {f"input {name}" for name in HOSTILE[:8]}
    assert_literal(inspector.locator(".sl-picture").text_content(), [*HOSTILE[:7], HOSTILE[-1]],
                   "ClientsInspector picture")

    # the values view: the sliders' labels, the boxes, a value typed in a number box
    assert_literal(values.locator(".sl-controls").text_content(), HOSTILE[:7], "ValuesView controls")
    assert_literal(values.locator(".sl-picture").text_content(), HOSTILE, "ValuesView picture")
    assert "inf born at" in values.locator(".sl-nan-note").text_content()
    box = values.locator("input.sl-number").nth(4)  # i4 = 0 made an infinity: give it a value
    box.fill("2")
    before = drawn(values)
    box.press("Enter")
    wait_drawn(nb, values, before)
    assert values.locator(".sl-nan-note").is_hidden()
    titles = []
    nodes = values.locator("g.node")
    for k in range(nodes.count()):  # every box and operation: the panel's title names it
        click(nb, values, nodes.nth(k))
        titles.append(values.locator(".sl-details .sl-details-title").text_content())
    assert_literal("\n".join(titles), HOSTILE, "ValuesView panel titles")

    # the Markdown fallbacks, rendered by JupyterLab's own Markdown renderer (marked): names in code spans
    fallbacks = page.locator(".jp-RenderedMarkdown")
    assert fallbacks.count() == 4
    text = "\n".join(fallbacks.nth(k).text_content() for k in range(4))
    assert_literal(text, HOSTILE, "Markdown fallbacks")
    code = " ".join(page.locator(".jp-RenderedMarkdown code").all_text_contents())
    assert_literal(code, HOSTILE, "Markdown code spans")  # a | in a table cell reads as |, as GFM says

    # the static display of the graph and of the function: pictures (images), text
    assert_literal(page.locator(".jp-OutputArea-output pre").first.text_content(), HOSTILE, "debugprint")

    # nothing ran, and nothing that could run is in any output
    found = page.locator(".jp-OutputArea").locator(ACTIVE).evaluate_all("els => els.map(e => e.outerHTML.slice(0, 200))")
    assert not found, found
    assert_nothing_ran(nb, nb.errors)


def test_an_exported_stepper_page_of_hostile_names_steps_and_runs_nothing(browser, tmp_path):
    from symlab.notebook import RewriteStepper

    g = hostile_graph()
    path = RewriteStepper(hostile_rule_trace(g)).export_html(tmp_path / "hostile.html")
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.on("dialog", lambda dialog: (errors.append(f"dialog: {dialog.message}"), dialog.dismiss()))
    page.goto(path.as_uri())
    stepper = page.locator(".sl-stepper")
    stepper.wait_for()
    assert_literal(stepper.locator(".sl-after .sl-picture").text_content(), HOSTILE[:7], "exported page, step 0")
    stepper.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => document.querySelector('.sl-stepper').dataset.step === '1'")
    assert_literal(stepper.locator(".sl-card").text_content(), [HOSTILE[0]], "exported page card")
    stepper.locator(".sl-after g.node.apply").first.click()  # "why not" needs a kernel: the page says so
    assert page.title() == f"symlab rewrite: RewriteStepper: step 0/1; {HOSTILE[0]} x1"
    assert page.locator(ACTIVE.replace("script, ", "")).count() == 0  # (the page's own two scripts aside)
    assert page.locator("script").count() == 2
    assert_nothing_ran(page, errors)
    page.close()
