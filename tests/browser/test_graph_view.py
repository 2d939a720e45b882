"""GraphView in a real JupyterLab: run notebook 06, click nodes, read the panel and the highlights."""

from __future__ import annotations

from browser_lab import ROOT, drawn, open_notebook, stripped_copy, wait_drawn, write_notebook


def widgets(nb):
    return nb.page.locator(".sl-graph-view")


def click_node(nb, view, key: str) -> None:
    """Click the node ``key`` of ``view`` and wait until Python's answer is drawn."""
    before = drawn(view)
    view.locator(f'g.node[data-key="{key}"]').first.click()
    wait_drawn(nb, view, before)


def test_notebook_06_runs_and_its_views_answer_clicks(lab, browser):
    stripped_copy(ROOT / "notebooks" / "06_graph_view.ipynb", lab.root / "06_graph_view.ipynb")
    nb = open_notebook(browser, lab, "06_graph_view.ipynb")
    nb.run_all()
    views = widgets(nb)
    views.first.wait_for()
    assert views.count() == 4  # x + y, the compiled v + 1, e = x + y * z, the MLP gradient
    # the first view: x + y in the structure style; the notebook selected x last
    first = views.nth(0)
    first.locator("svg g.node").first.wait_for()
    assert first.get_attribute("data-style") == "structure"
    assert first.locator("svg g.node.apply").count() == 1 and first.locator("svg g.node.op").count() == 1
    assert first.locator("g.node.sl-selected").count() == 1
    first.scroll_into_view_if_needed()  # a cell out of view is not rendered (content-visibility): no innerText
    nb.page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    assert first.locator(".sl-details-title").inner_text() == "input x"
    assert first.locator("g.node.apply.sl-client").count() == 1  # the Apply that uses x is lit
    # click the blue box: the panel says what it is, its inputs are lit
    click_node(nb, first, first.locator("g.node.apply").first.get_attribute("data-key"))
    assert "apply node Elemwise{add,no_inplace}" in first.locator(".sl-details-title").inner_text()
    assert first.locator("g.node.variable.sl-input").count() == 2
    panel = first.locator(".sl-details").inner_text()
    assert "scalar_op=add" in panel and "inputs" in panel
    # the compiled function (compact style): the add node, its client the Sum lit
    second = views.nth(1)
    add_key = second.locator("g.node.apply", has_text="add").first.get_attribute("data-key")
    click_node(nb, second, add_key)
    panel = second.locator(".sl-details").inner_text()
    assert "Elemwise{add,no_inplace}" in panel and "clients" in panel and "Sum{acc_dtype=float64}" in panel
    lit = second.locator("g.node.sl-client")
    assert lit.count() == 1 and "Sum" in lit.text_content()
    # a link of the panel goes to the node it names
    before = drawn(second)
    second.locator(".sl-details .sl-link", has_text="Sum").first.click()
    wait_drawn(nb, second, before)
    assert "Sum" in second.locator(".sl-details-title").inner_text()
    # keyboard: Escape clears, an arrow key selects again
    second.locator(".sl-picture").focus()
    before = drawn(second)
    nb.page.keyboard.press("Escape")
    wait_drawn(nb, second, before)
    assert second.get_attribute("data-selected") == "" and second.locator("g.node.sl-selected").count() == 0
    before = drawn(second)
    nb.page.keyboard.press("ArrowUp")
    wait_drawn(nb, second, before)
    assert second.get_attribute("data-selected") != ""
    # switching the style redraws the picture in the other style
    third = views.nth(2)
    before = drawn(third)
    third.locator("select.sl-select").select_option("compact")
    wait_drawn(nb, third, before)
    assert third.get_attribute("data-style") == "compact" and third.locator("g.node.op").count() == 0
    assert not nb.errors, nb.errors


def test_hostile_names_show_literally_and_run_nothing(lab, browser):
    write_notebook(lab.root / "hostile.ipynb", [
        "import symlab, symlab.tensor as T\n"
        "from symlab.graph.fg import FunctionGraph\n"
        "a = T.dvector('<img src=x onerror=\"window.pwned=1\">')\n"
        "b = T.dvector('<script>window.pwned=2</script>')\n"
        "c = T.dvector('javascript:window.pwned=3')\n"
        "view = symlab.view(FunctionGraph([a, b, c], [a * b + c]), style='structure')\n"
        "view",
    ])
    nb = open_notebook(browser, lab, "hostile.ipynb")
    nb.run_all()
    view = widgets(nb).first
    view.locator("svg g.node").first.wait_for()
    box = view.locator("g.node.variable", has_text="onerror").first
    assert "<img src=x onerror=" in box.text_content()  # the name, shown as text
    click_node(nb, view, box.get_attribute("data-key"))
    assert '<img src=x onerror="window.pwned=1">' in view.locator(".sl-details").inner_text()
    for key in [n.get_attribute("data-key") for n in view.locator("g.node.variable").all()][:4]:
        click_node(nb, view, key)
    assert nb.page.evaluate("() => window.pwned") is None
    assert view.locator("script, img, a[href], [onerror], [onclick]").count() == 0
    assert not nb.errors, nb.errors
