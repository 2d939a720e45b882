"""A scan in the values view of a real JupyterLab: the loop opened, its iteration slider moved with the keyboard,
the body's values of the new iteration written inside, and the plot of the state drawn (its pixels)."""

from __future__ import annotations

import numpy as np
from browser_lab import drawn, open_notebook, wait_drawn, write_notebook
from screenshots import decode_png

CELL = (
    "import numpy as np\n"
    "import symlab\n"
    "import symlab.tensor as st\n"
    "from symlab.notebook.values import ValuesView\n"
    "x = st.dvector('x')\n"
    "acc, _ = symlab.scan(lambda x_t, a: a + x_t, sequences=x, outputs_info=st.constant(0.0), name='cumsum')\n"
    "node = acc.owner.inputs[0].owner\n"
    "view = ValuesView(acc, {x: np.array([1.0, 10.0, 100.0, 1000.0])})\n"
    "view.iteration(node, 1)\n"
    "plot = view.loop_plot(node)\n"
    "view"
)


def test_the_iteration_slider_of_an_open_scan_moves_to_the_next_iteration(lab, browser):
    write_notebook(lab.root / "scan_views.ipynb", [CELL])
    nb = open_notebook(browser, lab, "scan_views.ipynb")
    nb.run_all()
    view = nb.page.locator(".sl-values-view").first
    view.wait_for()
    picture = view.locator(".sl-picture")
    picture.locator("svg g.node").first.wait_for()
    key = nb.kernel_value("view.key_of(node)").strip("'")
    assert "t = 1 of 0 … 3" in picture.inner_text() and "11.0" in picture.inner_text()  # a[t] at t = 1
    slider = view.locator(f'.sl-control[data-key="{key}#t"] input.sl-slider')
    slider.focus()
    before = drawn(view)
    slider.press("ArrowRight")
    wait_drawn(nb, view, before)
    assert nb.kernel_value("view.iterations") == f"{{'{key}': 2}}"
    assert "t = 2 of 0 … 3" in picture.inner_text() and "111.0" in picture.inner_text()
    chart = view.locator(".sl-histogram-panel svg")
    chart.wait_for()
    pixels = decode_png(chart.screenshot())
    blue = np.all(np.abs(pixels[..., :3].astype(int) - (0x4C, 0x6E, 0xF5)) < 40, axis=2)
    assert blue.sum() > 50  # the state's line is drawn
    assert not nb.errors, nb.errors
