"""The text twin and the search box in a real JupyterLab: the MLP gradient's graph view and a values view as text.

The "text" toggle shows the graph as a debugprint tree beside the picture; a click on a row selects that node (the
picture and the rows carry the same keys), the arrow keys move along the rows, and the selected row is scrolled
into the pane. The graph view's search box lists the matches of what is typed; a click on a match selects it.
"""

from __future__ import annotations

import re

from browser_lab import ROOT, drawn, open_notebook, wait_drawn, write_notebook

CELLS = [
    f"import sys\nsys.path.insert(0, {str(ROOT / 'tests')!r})\n"
    "import real_size, symlab\n"
    "inputs, outputs = real_size.mlp_gradient()\n"
    "view = symlab.view(outputs)\n"
    "view",
    "import symlab.tensor as st\n"
    "from symlab.notebook import ValuesView\n"
    "a, b = st.dscalar('a'), st.dscalar('b')\n"
    "c = st.tanh(a * b)\n"
    "c.name = 'c'\n"
    "values = ValuesView(c, {a: 0.5, b: 2.0}, wrt=[a])\n"
    "values",
]


def toggle_text(nb, view) -> None:
    before = drawn(view)
    view.get_by_role("checkbox", name="text", exact=True).check()
    wait_drawn(nb, view, before)


def click_and_wait(nb, view, target) -> None:
    before = drawn(view)
    target.click()
    wait_drawn(nb, view, before)


def in_view(pane, row) -> bool:
    """Whether ``row`` is inside the visible part of the scrolling ``pane``."""
    return row.evaluate(
        """(row, pane) => {
            const r = row.getBoundingClientRect(), p = pane.getBoundingClientRect();
            return r.top >= p.top && r.bottom <= p.bottom;
        }""",
        pane.element_handle(),
    )


def test_the_text_pane_selects_like_the_picture_and_the_search_box_finds_w1(lab, browser):
    write_notebook(lab.root / "text_twin.ipynb", CELLS)
    nb = open_notebook(browser, lab, "text_twin.ipynb")
    nb.run_all()
    view = nb.page.locator(".sl-graph-view").first
    view.locator("svg g.node").first.wait_for()
    pane = view.locator(".sl-text-pane")
    assert pane.is_hidden()  # text mode is off until asked for
    assert view.locator(".sl-text-row").count() == 0  # and its rows are not built before

    # the "text" toggle: the tree beside the picture, one row per line of the outline (145 for the MLP gradient)
    toggle_text(nb, view)
    assert pane.is_visible() and view.locator(".sl-picture svg").is_visible()
    rows = pane.locator(".sl-text-row")
    assert rows.count() == 145 and pane.get_attribute("data-rows") == "145"
    assert rows.first.inner_text().startswith("loss = Elemwise{add,no_inplace} [")
    assert pane.locator(".sl-text-row.sl-repeat").count() > 0
    assert pane.locator(".sl-text-row[data-depth='3']").first.evaluate(
        "(row) => parseFloat(getComputedStyle(row).paddingLeft)") > pane.locator(".sl-text-row").first.evaluate(
        "(row) => parseFloat(getComputedStyle(row).paddingLeft)")

    # a click on a row selects its node: the view, the row and the picture agree on the key
    hidden = pane.locator(".sl-text-row", has_text=re.compile(r"^hidden = ")).first
    key = hidden.get_attribute("data-key")
    click_and_wait(nb, view, hidden)
    assert view.get_attribute("data-selected") == key
    assert "sl-selected" in (hidden.get_attribute("class") or "") and hidden.get_attribute("aria-selected") == "true"
    # the picture marks it too: its node, or the folded group that holds it
    assert view.locator(".sl-picture g.node.sl-selected").count() == 1
    assert "Elemwise{tanh,no_inplace}" in view.locator(".sl-details-title").inner_text()
    # its input (the add of X·W1 and b1) is marked in the text as in the picture
    index = int(hidden.get_attribute("data-index"))
    below = pane.locator(f'.sl-text-row[data-index="{index + 1}"]')
    assert "sl-input" in (below.get_attribute("class") or "")

    # the arrow keys move along the rows; the row reached is selected and in view
    pane.focus()
    before = drawn(view)
    nb.page.keyboard.press("ArrowDown")
    wait_drawn(nb, view, before)
    assert view.get_attribute("data-selected") == below.get_attribute("data-key")
    before = drawn(view)
    nb.page.keyboard.press("End")
    wait_drawn(nb, view, before)
    last = pane.locator(".sl-text-row").last
    assert view.get_attribute("data-selected") == last.get_attribute("data-key")
    nb.page.wait_for_function("(row) => row.classList.contains('sl-selected')", arg=last.element_handle())
    nb.page.wait_for_timeout(100)  # the scroll runs on the next frame
    assert in_view(pane, last)

    # the search box: typing lists the matches, a click on one selects it (and its row in the text)
    search = view.locator("input.sl-search")
    search.fill("W1")
    match = view.locator(".sl-matches .sl-match .sl-link", has_text=re.compile(r"^W1\b")).first
    match.wait_for()
    w1 = match.get_attribute("data-key")
    assert w1 == pane.locator(".sl-text-row", has_text=re.compile(r"^W1 \[")).first.get_attribute("data-key")
    click_and_wait(nb, view, match)
    assert view.get_attribute("data-selected") == w1
    w1_row = pane.locator(f'.sl-text-row[data-key="{w1}"].sl-selected').first
    assert w1_row.count() == 1
    nb.page.wait_for_timeout(100)
    assert in_view(pane, w1_row)
    # Enter selects the first match at once
    search.fill("probs")
    before = drawn(view)
    search.press("Enter")
    nb.page.wait_for_function("([el, b]) => Number(el.dataset.drawn) > b && el.dataset.selected !== ''",
                              arg=[view.element_handle(), before])
    # the selection is probs (its node, or the variable it computes): its row is the selected one
    probs = pane.locator(".sl-text-row", has_text=re.compile(r"^probs = ")).first
    nb.page.wait_for_function("(row) => row.classList.contains('sl-selected')", arg=probs.element_handle())

    # the toggle hides the pane again
    before = drawn(view)
    view.get_by_role("checkbox", name="text", exact=True).uncheck()
    wait_drawn(nb, view, before)
    assert pane.is_hidden()

    # the values view: each row carries its value; a click on a row selects that variable
    # (text mode set from another cell, as a script would: the pane follows the trait)
    values = nb.page.locator(".sl-values-view").first
    nb.execute("values.text_mode = True")
    values.locator(".sl-text-pane").wait_for()
    assert values.get_by_role("checkbox", name="text", exact=True).is_checked()
    value_rows = values.locator(".sl-text-pane .sl-text-row")
    assert value_rows.count() == 4
    assert value_rows.first.inner_text() == "c = Elemwise{tanh,no_inplace} [v5] = 0.7616; grad 1.0"
    a_row = values.locator(".sl-text-row", has_text=re.compile(r"^a \["))
    click_and_wait(nb, values, a_row)
    assert values.get_attribute("data-selected") == a_row.get_attribute("data-key")
    assert values.locator(".sl-details-title").inner_text() == "input a"
    assert not nb.errors, nb.errors
