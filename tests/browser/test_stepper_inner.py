"""The rewrite stepper in a real JupyterLab with inner graphs: open an OpFromGraph and an ifelse by clicking their
buttons, step into the OpFromGraph's own rewrite from the card, step there, and come back."""

from __future__ import annotations

from browser_lab import drawn, open_notebook, wait_drawn, write_notebook

CELL = (
    "import symlab.tensor as st\n"
    "from symlab.compile.builders import OpFromGraph\n"
    "from symlab.ifelse import ifelse\n"
    "from symlab.notebook.stepper import RewriteStepper\n"
    "a, b = st.dvectors('a', 'b')\n"
    "layer = OpFromGraph([a, b], [st.tanh(a * b) + st.exp(a) * st.exp(b) + st.log(a ** 2 + 1)], name='layer')\n"
    "x, w = st.dvectors('x', 'w')\n"
    "c = st.dscalar('c')\n"
    "out = ifelse(st.gt(c, 0.0), layer(x, w).sum(), (x * w).sum())\n"
    "stepper = RewriteStepper([out], exclude=('inline_small_ofg',))\n"
    "stepper"
)


def click(nb, view, locator) -> None:
    before = drawn(view)
    locator.click()
    wait_drawn(nb, view, before)


def test_open_an_opfromgraph_and_an_ifelse_then_step_into_the_opfromgraph(lab, browser):
    write_notebook(lab.root / "stepper_inner.ipynb", [CELL])
    nb = open_notebook(browser, lab, "stepper_inner.ipynb")
    nb.run_all()
    stepper = nb.page.locator(".sl-stepper").first
    stepper.wait_for()
    stepper.locator(".sl-after svg g.node").first.wait_for()
    cursor_keys = eval(nb.kernel_value(  # noqa: S307 - a dict literal the kernel printed
        "{type(n.op).__name__: stepper._cursor.key(n) for n in (stepper._cursor.seek(0) or "
        "stepper._cursor.fgraph.toposort()) if type(n.op).__name__ in ('OpFromGraph', 'IfElse')}"))
    ofg, branch = cursor_keys["OpFromGraph"], cursor_keys["IfElse"]
    after = stepper.locator(".sl-after .sl-picture")
    # the OpFromGraph's "+" button opens it in place, in the picture of every step
    click(nb, stepper, after.locator(f'g.sl-toggle[data-key="{ofg}"]'))
    assert ofg in (stepper.get_attribute("data-open") or "").split()
    assert after.locator(f'g.node[data-key^="{ofg}/"]').count() >= 4  # its inner nodes, drawn inside
    # the ifelse opens to its two branches
    click(nb, stepper, after.locator(f'g.sl-toggle[data-key="{branch}"]'))
    assert branch in (stepper.get_attribute("data-open") or "").split()
    sections = after.locator("g.section")
    assert sections.count() >= 3  # the layer's body, then and else
    assert "then" in after.inner_text() and "else" in after.inner_text()
    # the "-" button closes the OpFromGraph again
    click(nb, stepper, after.locator(f'g.sl-toggle.sl-toggle-open[data-key="{ofg}"]'))
    assert after.locator(f'g.node[data-key^="{ofg}/"]').count() == 0
    # a click on the node asks why; the card offers to step into its rewrite
    click(nb, stepper, after.locator(f'g.node[data-key="{ofg}"]').first)
    click(nb, stepper, stepper.locator(".sl-card button", has_text="step into its rewrites"))
    assert stepper.get_attribute("data-depth") == "1"
    nest = stepper.locator(".sl-nest")
    assert nest.is_visible() and f"inside {ofg}" in nest.inner_text()
    total = int(nb.kernel_value("stepper.shown.total"))
    assert f"step 0 / {total}" in stepper.locator(".sl-position").inner_text()
    stepper.focus()
    before = drawn(stepper)
    nb.page.keyboard.press("ArrowRight")  # the keys now step through the inner rewrite
    wait_drawn(nb, stepper, before)
    assert stepper.get_attribute("data-step") == "1" and nb.kernel_value("stepper.shown.step") == "1"
    assert nb.kernel_value("stepper.step") == "1"  # the widget shows the inner stepper's step
    click(nb, stepper, nest.locator("button", has_text="back"))
    assert stepper.get_attribute("data-depth") == "0" and stepper.get_attribute("data-step") == "0"
    assert not nest.is_visible()
    assert nb.kernel_value("stepper.shown is stepper") == "True"
    assert not nb.errors, nb.errors
