"""ClientsInspector in a real JupyterLab: click a variable, change the graph from another cell, see it follow."""

from __future__ import annotations

from browser_lab import ROOT, drawn, open_notebook, stripped_copy, wait_drawn, write_notebook


def test_the_inspector_follows_a_replace_run_from_another_cell(lab, browser):
    write_notebook(lab.root / "inspect.ipynb", [
        "import symlab, symlab.tensor as st\n"
        "from symlab.graph.fg import FunctionGraph\n"
        "x, y = st.dvector('x'), st.dvector('y')\n"
        "fg = FunctionGraph([x, y], [st.exp(x) * y + x])\n"
        "inspector = fg.inspect()\n"
        "inspector",
    ])
    nb = open_notebook(browser, lab, "inspect.ipynb")
    nb.run_all()
    view = nb.page.locator(".sl-inspector").first
    view.locator("svg g.node").first.wait_for()
    # click the input x: its two clients are lit, the panel lists them
    x_node = view.locator("g.node.input").filter(has=nb.page.get_by_text("x", exact=True)).first
    before = drawn(view)
    x_node.click()
    wait_drawn(nb, view, before)
    assert view.locator(".sl-details .sl-details-title").inner_text() == "input x"
    assert view.locator("g.node.apply.sl-client").count() == 2
    panel = view.locator(".sl-details").inner_text()
    assert "(Elemwise{exp,no_inplace}(x), 0)" in panel
    # another cell replaces exp(x) by sin(x): the inspector redraws once, after that cell, by itself
    before = drawn(view)
    nb.execute("e = [n for n in fg.apply_nodes if 'exp' in str(n.op)][0].outputs[0]\n"
               "fg.replace(e, st.sin(fg.inputs[0]), reason='exp to sin')")
    wait_drawn(nb, view, before)
    assert drawn(view) == before + 1
    assert view.get_attribute("data-selected") != ""  # x is still selected
    panel = view.locator(".sl-details").inner_text()
    assert "(Elemwise{sin,no_inplace}(x), 0)" in panel and "exp" not in panel
    changes = view.locator(".sl-changes").inner_text()
    assert "version 0 -> 1: 1 change (exp to sin)" in changes
    assert "x: new client (Elemwise{sin,no_inplace}(x), 0)" in changes
    assert "node left: Elemwise{exp,no_inplace}(x)" in changes
    assert view.locator("g.node.apply.sl-new", has_text="sin").count() == 1
    assert view.locator("g.node.apply", has_text="exp").count() == 0
    # a refused change shows nothing: the picture is not redrawn
    before = drawn(view)
    nb.execute("try:\n    fg.replace(fg.inputs[0], st.dmatrix('m'))\nexcept TypeError:\n    pass")
    nb.execute("1 + 1")
    assert drawn(view) == before
    # search by name: Enter selects the first match
    search = view.locator("input.sl-search")
    search.fill("y")
    before = drawn(view)
    search.press("Enter")
    nb.page.wait_for_function("([el]) => el.querySelector('.sl-details .sl-details-title').textContent === 'input y'",
                              arg=[view.element_handle()])
    assert view.locator("g.node.apply.sl-client").count() == 1
    assert not nb.errors, nb.errors


def test_notebook_08_runs_its_inspector_follows_the_kernel_and_a_slider_reevaluates(lab, browser):
    stripped_copy(ROOT / "notebooks" / "08_clients_and_values.ipynb", lab.root / "08.ipynb")
    nb = open_notebook(browser, lab, "08.ipynb")
    nb.run_all()
    inspectors = nb.page.locator(".sl-inspector")
    inspectors.first.wait_for()
    assert inspectors.count() == 3
    # the live inspector: after the notebook's changes, its graph is just y, output 0
    live = inspectors.nth(2)
    live.locator("svg g.node").first.wait_for()
    live.scroll_into_view_if_needed()  # a cell out of view is not rendered (content-visibility): no innerText
    nb.page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    assert "version 7 -> 8: 1 change (drop the first)" in live.locator(".sl-changes").inner_text()
    # click the input y: its only client is ('output', 0)
    y_node = live.locator("g.node.input").filter(has=nb.page.get_by_text("y", exact=True)).first
    before = drawn(live)
    y_node.click()
    wait_drawn(nb, live, before)
    assert "('output', 0)" in live.locator(".sl-details").inner_text()
    # another cell gives y a new client: one redraw, the new node lit, the panel follows
    before = drawn(live)
    nb.execute("fg.add_output(T.exp(fg.inputs[1]), reason='exp of y')")
    wait_drawn(nb, live, before)
    assert drawn(live) == before + 1
    assert "(Elemwise{exp,no_inplace}(y), 0)" in live.locator(".sl-details").inner_text()
    assert "y: new client (Elemwise{exp,no_inplace}(y), 0)" in live.locator(".sl-changes").inner_text()
    assert live.locator("g.node.apply.sl-new", has_text="exp").count() == 1
    # the neuron: move x2 to 1.0 in its number box, o becomes 0.9546
    neuron = nb.page.locator(".sl-values-view").first
    neuron.locator("svg g.node").first.wait_for()
    assert neuron.locator("g.node", has_text="0.7071").count() >= 1
    box = neuron.locator('input[aria-label^="value of input x2"]')
    before = drawn(neuron)
    box.fill("1.0")
    box.press("Enter")
    wait_drawn(nb, neuron, before)
    assert neuron.locator("g.node", has_text="0.9546").count() >= 1
    # the slider sends its value too
    slider = neuron.locator('input[aria-label="slider for input x2"]')
    before = drawn(neuron)
    slider.fill("0")
    wait_drawn(nb, neuron, before)
    nb.page.wait_for_function("([el]) => el.textContent.includes('0.7071')", arg=[neuron.element_handle()])
    # the NaN view: the log node is painted as the origin
    nan_view = nb.page.locator(".sl-values-view").nth(1)
    assert "NaN born at log((x - 1))" in nan_view.locator(".sl-nan-note").inner_text()
    assert not nb.errors, nb.errors
