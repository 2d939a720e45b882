"""A grad stepper as one page that travels: every step of grad's walk, offline, with no path of the machine.

:func:`export_page` writes what :meth:`GradStepper.export_html
<symlab.notebook.grad_stepper.GradStepper.export_html>` promises. The two pictures are laid out once and
stored once, unmarked; a step is its marks (classes by key), the ``grad`` lines of the forward boxes, its
card and the keys to bring into view; each gradient rule's source is stored once. The page is written as
every exported page is (:mod:`~symlab.notebook.offline_page`: the data packed in the page, unpacked by its
script); its own part of the script, ``static/grad_offline.js``, runs the same view as the notebook's widget.
:func:`read_page_data` is the same unpacking in Python.

>>> import symlab.tensor as st, tempfile, pathlib
>>> from symlab.notebook.grad_stepper import GradStepper
>>> x = st.dscalar("x")
>>> stepper = GradStepper(st.exp(x * 2), x)
>>> with tempfile.TemporaryDirectory() as folder:
...     page = pathlib.Path(export_page(stepper, pathlib.Path(folder) / "walk.html")).read_text()
>>> data = read_page_data(page)
>>> data["total"], [state["card"]["title"] for state in data["states"]]
(2, ['start (step 0 of 2)', 'step 1 of 2: exp', 'step 2 of 2: mul'])
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from symlab.notebook import offline_page
from symlab.notebook.offline_page import bare_svg

__all__ = ["export_page", "read_page_data"]


def _states(stepper: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """Every step's marks, labels, card (with the index of its rule's source) and keys to reveal; the sources."""
    from symlab.notebook.grad_rule_source import gradient_rule_source

    pictures = stepper._pictures_of
    sources: list[str] = []
    states = []
    for k in range(stepper.total + 1):
        card = dict(stepper.card_of(k))
        if k:
            try:
                source = gradient_rule_source(stepper.walk.steps[k - 1].node)
            except Exception as err:  # a rule without a readable source: say so on the page
                source = f"(the source of this rule cannot be shown: {err})"
            if source not in sources:
                sources.append(source)
            card["source_index"] = sources.index(source)
        forward, gradient = stepper._reveal(k)
        states.append({"marks": pictures.marks(k), "labels": pictures.labels(k), "card": card,
                       "reveal_forward": forward, "reveal_gradient": gradient})
    return states, sources


def export_page(stepper: Any, path: Any) -> Path:
    """Write ``stepper``'s page of every step to ``path``; the path (see the module documentation)."""
    states, sources = _states(stepper)
    pictures = stepper._pictures_of
    data = {"forward_svg": bare_svg(pictures.forward_svg) if pictures.forward_svg else "",
            "gradient_svg": bare_svg(pictures.gradient_svg) if pictures.gradient_svg else "",
            "forward_title": stepper.forward_title, "gradient_title": stepper.gradient_title,
            "states": states, "sources": sources, "steps": stepper.steps, "total": stepper.total,
            "notice": stepper.notice, "with_values": stepper.with_values}
    return offline_page.write_page(path, title=f"grad walk: {stepper.summary()}", host_id="symlab-gradwalk",
                                   data_id="symlab-gradwalk-steps", data=data, part="grad_offline.js")


def read_page_data(page: str) -> dict[str, Any]:
    """The data a page written by :func:`export_page` carries, unpacked (what its script does in the browser)."""
    return offline_page.read_page_data(page, "symlab-gradwalk-steps")
