"""The values view in a real JupyterLab with inner graphs: the branch an ifelse did not take is greyed (its boxes'
computed style and their pixels, in view), a typed condition swaps the branches, and an OpFromGraph opens by
clicking its button, its inner values written inside."""

from __future__ import annotations

from browser_lab import drawn, open_notebook, wait_drawn, write_notebook
from screenshots import decode_png

CELL = (
    "import numpy as np\n"
    "import symlab.tensor as st\n"
    "from symlab.compile.builders import OpFromGraph\n"
    "from symlab.ifelse import ifelse\n"
    "from symlab.notebook.values import ValuesView\n"
    "a = st.dvector('a')\n"
    "layer = OpFromGraph([a], [st.tanh(a) * 2.0 + st.exp(a)], name='layer')\n"
    "c, x = st.dscalar('c'), st.dvector('x')\n"
    "z = ifelse(st.gt(c, 0.0), layer(x).sum(), st.log(x).sum())\n"
    "z.name = 'z'\n"
    "view = ValuesView(z, {c: -1.0, x: np.array([1.0, 2.0])})\n"
    "view"
)

SHAPE_STROKE = """(g) => {
    const shape = g.querySelector('polygon, ellipse');
    const text = g.querySelector('text');
    return [getComputedStyle(shape).stroke, text ? getComputedStyle(text).fill : ''];
}"""


def darkest(locator) -> int:
    """The darkest channel value of the pixels of ``locator``'s screenshot (black text: near 0)."""
    return int(decode_png(locator.screenshot()).min())


def in_view(page, locator) -> bool:
    box = locator.bounding_box()
    size = page.viewport_size
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= size["height"] and box["x"] >= 0


def test_the_branch_not_taken_is_greyed_and_an_opfromgraph_opens_by_a_click(lab, browser):
    write_notebook(lab.root / "values_inner.ipynb", [CELL])
    nb = open_notebook(browser, lab, "values_inner.ipynb")
    nb.run_all()
    view = nb.page.locator(".sl-values-view").first
    view.wait_for()
    picture = view.locator(".sl-picture")
    picture.locator("svg g.node").first.wait_for()
    skipped = picture.locator("g.node.skipped")
    assert skipped.count() >= 2  # the then branch: the layer's node and what reads it
    grey = skipped.first
    grey.scroll_into_view_if_needed()
    assert in_view(nb.page, grey)
    stroke, text_fill = grey.evaluate(SHAPE_STROKE)
    assert stroke == "rgb(206, 212, 218)" and text_fill == "rgb(173, 181, 189)"  # greyed: #ced4da, #adb5bd
    not_computed = picture.locator("g.node.skipped", has_text="not computed").first
    label = not_computed.locator("text", has_text="not computed").first
    label.scroll_into_view_if_needed()
    assert in_view(nb.page, label) and darkest(label) > 120  # its words drawn grey: no dark pixel
    taken_box = picture.locator("g.node:not(.skipped)", has_text="log").first
    taken_label = taken_box.locator("text").first
    taken_label.scroll_into_view_if_needed()
    assert darkest(taken_label) < 80  # a box of the branch taken: black text
    assert "not taken" in picture.inner_text() and "taken" in picture.inner_text()
    # typing a positive condition takes the other branch: now the log branch is greyed
    c_key = nb.kernel_value("view.key_of(c)").strip("'")
    box = view.locator(f'.sl-control[data-key="{c_key}"] input.sl-number')
    box.fill("1")
    before = drawn(view)
    box.press("Enter")
    wait_drawn(nb, view, before)
    assert nb.kernel_value("view.section_states").count("skipped") == 1
    assert picture.locator("g.node.skipped", has_text="log").count() >= 1
    assert picture.locator("g.node.skipped", has_text="layer").count() == 0
    # the layer's "+" button opens it: its inner values are written inside
    ofg = nb.kernel_value("view.key_of(z.owner.inputs[1].owner.inputs[0].owner)").strip("'")
    before = drawn(view)
    picture.locator(f'g.sl-toggle[data-key="{ofg}"]').click()
    wait_drawn(nb, view, before)
    assert nb.kernel_value("view.open_inner").count(ofg) == 1
    inner = picture.locator(f'g.node[data-key^="{ofg}/"]')
    assert inner.count() >= 4
    assert "[4.241, 9.317]" in picture.inner_text()  # tanh(x) * 2 + exp(x) at x = 1, 2: the layer's output inside
    assert not nb.errors, nb.errors
