"""A random graph's views in a real JupyterLab: the generator and the update arrow on screen, a click on the random
node, and the values view's histogram of many draws drawn under its panel."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from browser_lab import drawn, open_notebook, wait_drawn, write_notebook
from screenshots import decode_png

CELLS = [
    "import numpy as np, symlab, symlab.tensor as st\n"
    "from symlab.tensor.random.basic import normal\n"
    "from symlab.notebook.values import ValuesView\n"
    "rng = symlab.shared(np.random.default_rng(42), name='rng')\n"
    "mu = st.dscalar('mu')\n"
    "next_rng, x = normal(mu, 1.0, size=(3,), rng=rng, return_next_rng=True)\n"
    "x.name = 'x'\n"
    "f = symlab.function([mu], st.exp(x), updates={rng: next_rng}, name='sample', mode='NUMPY')\n"
    "state = rng.get_value().bit_generator.state\n"
    "view = symlab.view(f)\n"
    "view",
    "values = ValuesView(x, {mu: 0.5})\n"
    "values",
]
#: Where the screenshot of the graph view is kept (the report's picture).
SHOT = Path("/tmp/views33/random_graph_view.png")


def has_colour(pixels: np.ndarray, rgb: tuple[int, int, int], tolerance: int = 12) -> bool:
    return bool((np.abs(pixels.astype(int) - np.array(rgb)).max(axis=2) <= tolerance).any())


def test_the_generator_and_its_update_arrow_are_on_screen_and_the_random_node_answers_a_click(lab, browser):
    write_notebook(lab.root / "random_views.ipynb", CELLS)
    nb = open_notebook(browser, lab, "random_views.ipynb")
    nb.run_all()
    view = nb.page.locator(".sl-graph-view").first
    view.locator("svg g.node").first.wait_for()
    generator = view.locator("svg g.node.generator").first
    arrow = view.locator("svg g.edge.update").first
    assert view.locator("svg g.node.generator").count() == 2  # rng, and its update (the next generator)
    assert view.locator("svg g.edge.update").count() == 1 and "update" in arrow.text_content()
    view.scroll_into_view_if_needed()
    nb.page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    SHOT.parent.mkdir(parents=True, exist_ok=True)
    view.screenshot(path=str(SHOT))
    box, size = generator.bounding_box(), nb.page.viewport_size
    assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= size["height"]
    assert has_colour(decode_png(generator.screenshot()), (0xFF, 0xF3, 0xBF))  # the gold cylinder, drawn
    assert has_colour(decode_png(arrow.screenshot()), (0xB8, 0x86, 0x0B), tolerance=40)  # the dashed gold arrow
    # a click on the random node: its details
    node = view.locator("svg g.node.apply", has_text="normal_rv").first
    before = drawn(view)
    node.click()
    wait_drawn(nb, view, before)
    assert "apply node normal_rv" in view.locator(".sl-details-title").inner_text()
    panel = view.locator(".sl-details").inner_text()
    assert "rng" in panel and "inputs" in panel
    assert view.locator("svg g.node.generator.sl-input").count() == 1  # the generator it reads is lit
    # the values view: a click on the draw, then its histogram action draws the histogram under the panel
    values = nb.page.locator(".sl-values-view").first
    values.scroll_into_view_if_needed()
    x_key = nb.kernel_value("values.key_of(x)").strip("'")
    before = drawn(values)
    values.locator(f'svg g.node[data-key="{x_key}"]').first.click()
    wait_drawn(nb, values, before)
    before = drawn(values)
    values.locator(".sl-details button", has_text="histogram of 1000 draws").click()
    wait_drawn(nb, values, before)
    bars = values.locator(".sl-histogram-panel svg rect.sl-bar")
    assert bars.count() == 20 and "x: 1000 draws of normal" in values.locator(".sl-histogram-panel").inner_text()
    values.screenshot(path=str(SHOT.with_name("random_values_histogram.png")))
    assert nb.kernel_value("rng.get_value().bit_generator.state == state") == "True"  # nothing advanced it
    assert not nb.errors, nb.errors
