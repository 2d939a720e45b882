"""ClientsInspector in a real JupyterLab: click a variable, change the graph from another cell, see it follow."""

from __future__ import annotations

from browser_lab import open_notebook, write_notebook


def drawn(view) -> int:
    return int(view.get_attribute("data-drawn") or "-1")


def wait_drawn(nb, view, before: int) -> None:
    nb.page.wait_for_function("([el, b]) => Number(el.dataset.drawn) > b", arg=[view.element_handle(), before])


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
    x_node = view.locator("g.node.input", has_text="x").first
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
