"""Inner graphs opened in place in a real JupyterLab: click a node's "+" button, its graph appears inside it.

One notebook shows a graph view of a graph with a nested ``OpFromGraph`` and one of an ``ifelse``. The tests
click the button an openable node carries, as a reader does, and check what is on screen: the node's cluster
and its inner nodes are drawn and in view (their boxes inside the visible part of the pane, and drawn pixels
there in a screenshot), the kernel's view says the node is open, a click inside selects an inner node, and
the "−" button closes it again. For the ``ifelse`` both branches' regions appear, each in its titled box
(greying the branch not taken needs values: the values view's tests do it).
"""

from __future__ import annotations

from typing import Any

from browser_lab import drawn, open_notebook, wait_drawn, write_notebook
from on_screen import TWO_FRAMES_JS, VISIBLE_RECT_JS, out_of_view
from screenshots import decode_png, ink

SETUP = """\
import symlab
import symlab.tensor as st
from symlab.compile.builders import OpFromGraph
from symlab.graph.fg import FunctionGraph

x, y = st.dvector("x"), st.dvector("y")
scale_exp = OpFromGraph([x, y], [st.exp(x) * y], name="scale_exp")
wrap = OpFromGraph([x], [scale_exp(x, x) + 1], name="wrap")
a = st.dvector("a")
ofg_graph = FunctionGraph([a], [st.tanh(wrap(a)) * 2])
OFG_KEY = next(ofg_graph.key(n) for n in ofg_graph.toposort() if isinstance(n.op, OpFromGraph))
"""

IFELSE_SETUP = """\
from symlab.ifelse import ifelse

p, q = st.dscalar("p"), st.dscalar("q")
chosen = ifelse(st.lt(p, q), st.exp(st.sin(p)) * 3, st.cos(q) + st.log(q))
ifelse_graph = FunctionGraph([p, q], [chosen * 2])
IFELSE_KEY = next(ifelse_graph.key(n) for n in ifelse_graph.toposort() if type(n.op).__name__ == "IfElse")
"""


def tagged(code: str, name: str) -> str:
    return f"_w = {code}\n_w.add_class({name!r})\n_w"


#: The part of each node of ``root``'s picture whose key starts with a prefix: its box on the page.
NODES_JS = """([root, prefix]) => Array.from(root.querySelectorAll(`.sl-picture g.node`))
    .filter((g) => g.dataset.key && g.dataset.key.startsWith(prefix))
    .map((g) => { const r = g.getBoundingClientRect();
                  return {key: g.dataset.key, x: r.left, y: r.top, width: r.width, height: r.height}; })"""


def widget(nb, name: str):
    view = nb.page.locator(f".{name} .sl-graph-view")
    view.locator("svg g.node").first.wait_for()
    return view


def press_toggle(nb, view, key: str) -> None:
    """Click the round button of the node ``key`` and wait for Python's answer to be drawn."""
    before = drawn(view)
    view.locator(f'g.node[data-key="{key}"] g.sl-toggle').click()
    wait_drawn(nb, view, before)
    nb.page.evaluate(TWO_FRAMES_JS)


def inner_in_view(nb, view, key: str) -> dict[str, Any]:
    """The inner nodes of ``key`` on screen: their boxes against the pane's visible part, and the pixels drawn."""
    pane = view.locator(".sl-picture")
    box = pane.evaluate(VISIBLE_RECT_JS)
    nodes = nb.page.evaluate(NODES_JS, [view.element_handle(), f"{key}/"])
    left = max(box["x"], min(n["x"] for n in nodes))
    top = max(box["y"], min(n["y"] for n in nodes))
    right = min(box["x"] + box["width"], max(n["x"] + n["width"] for n in nodes))
    bottom = min(box["y"] + box["height"], max(n["y"] + n["height"] for n in nodes))
    clip = {"x": left, "y": top, "width": max(1.0, right - left), "height": max(1.0, bottom - top)}
    pixels = decode_png(nb.page.screenshot(clip=clip, animations="disabled"))
    return {"nodes": nodes, "outside": out_of_view(nodes, box), "ink": ink(pixels), "clip": clip}


def run_notebook(lab, browser, name: str, cells: list[str]):
    write_notebook(lab.root / name, cells)
    nb = open_notebook(browser, lab, name)
    nb.run_all()
    assert not nb.errors, nb.errors
    return nb


def test_an_op_from_graph_opens_in_place_by_its_button(lab, browser):
    nb = run_notebook(lab, browser, "inner_ofg.ipynb", [SETUP, tagged("symlab.view(ofg_graph)", "ig-ofg")])
    view = widget(nb, "ig-ofg")
    key = nb.kernel_value("OFG_KEY").strip("'")
    view.scroll_into_view_if_needed()
    assert view.locator(f'g.node.openable[data-key="{key}"] g.sl-toggle').count() == 1
    assert view.locator("g.cluster").count() == 0
    press_toggle(nb, view, key)
    assert nb.kernel_value("_w.open_inner") == f"['{key}']"
    assert view.locator(f'g.cluster[data-key="cluster_{key}"]').count() == 1
    assert view.locator(f'g.cluster[data-key="cluster_{key}:body"]').count() == 1
    seen = inner_in_view(nb, view, key)
    assert len(seen["nodes"]) >= 5 and not seen["outside"], seen
    assert seen["ink"] > 0.05, seen  # the inner nodes are drawn where they are, on screen
    # the nested OpFromGraph inside has its own button: open it too
    nested = next(n["key"] for n in seen["nodes"]
                  if view.locator(f'g.node.openable[data-key="{n["key"]}"]').count())
    press_toggle(nb, view, nested)
    deep = inner_in_view(nb, view, nested)
    assert deep["nodes"] and not deep["outside"] and deep["ink"] > 0.05, deep
    # a click on an inner node selects it: the panel says where it is
    before = drawn(view)
    view.locator(f'g.node[data-key="{deep["nodes"][-1]["key"]}"]').click()
    wait_drawn(nb, view, before)
    assert view.get_attribute("data-selected") == deep["nodes"][-1]["key"]
    assert "inside" in view.locator(".sl-details").inner_text()
    # the open node's "−" closes it (and what is open inside it)
    press_toggle(nb, view, key)
    assert nb.kernel_value("_w.open_inner") == "[]"
    assert view.locator("g.cluster").count() == 0 and view.locator(f'g.node[data-key^="{key}/"]').count() == 0
    assert not nb.errors, nb.errors


def test_an_ifelse_opens_in_place_its_two_branches_in_view(lab, browser):
    nb = run_notebook(lab, browser, "inner_ifelse.ipynb",
                      [SETUP + IFELSE_SETUP, tagged("symlab.view(ifelse_graph)", "ig-ifelse")])
    view = widget(nb, "ig-ifelse")
    key = nb.kernel_value("IFELSE_KEY").strip("'")
    view.scroll_into_view_if_needed()
    press_toggle(nb, view, key)
    assert nb.kernel_value("_w.open_inner") == f"['{key}']"
    then_box = view.locator(f'g.cluster[data-key="cluster_{key}:then"]')
    else_box = view.locator(f'g.cluster[data-key="cluster_{key}:else"]')
    assert then_box.count() == 1 and else_box.count() == 1
    pane = view.locator(".sl-picture")
    box = pane.evaluate(VISIBLE_RECT_JS)
    regions = nb.page.evaluate("""([root, key]) => ["then", "else"].map((label) => {
        const g = root.querySelector(`g.cluster[data-key="cluster_${key}:${label}"]`);
        const r = g.getBoundingClientRect();
        return {key: label, x: r.left, y: r.top, width: r.width, height: r.height};
    })""", [view.element_handle(), key])
    assert not out_of_view(regions, box), (regions, box)
    for region in regions:
        pixels = decode_png(nb.page.screenshot(clip={k: region[k] for k in ("x", "y", "width", "height")},
                                               animations="disabled"))
        assert ink(pixels) > 0.03, region
    assert "then (p < q is True)" in then_box.text_content() and "else (p < q is False)" in else_box.text_content()
    press_toggle(nb, view, key)
    assert view.locator("g.cluster").count() == 0
    assert not nb.errors, nb.errors
