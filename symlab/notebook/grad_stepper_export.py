"""A grad stepper as one page that travels: every step of grad's walk, offline, with no path of the machine.

:func:`export_page` writes what :meth:`GradStepper.export_html
<symlab.notebook.grad_stepper.GradStepper.export_html>` promises. The two pictures are laid out once and
stored once, unmarked; a step is its marks (classes by key), the ``grad`` lines of the forward boxes, its
card and the keys to bring into view; each gradient rule's source is stored once. The data is JSON,
gzip-compressed and base64-encoded in a ``<script type="application/json">`` element (base64 holds no
``<``, ``>`` or ``&``: no name can end the script element); the page's script (the views' script, then
``static/grad_offline.js``) unpacks it with the browser's ``DecompressionStream`` and runs the same view as
the notebook's widget. :func:`read_page_data` is the same unpacking in Python.

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

import base64
import gzip
import html
import json
import re
from pathlib import Path
from typing import Any

from symlab.notebook.widget import static_file, views_script

__all__ = ["export_page", "read_page_data"]


def _bare_svg(svg: str) -> str:
    """``svg`` without its XML prologue, DOCTYPE and comments (which name a URL or Graphviz's version)."""
    start = svg.find("<svg")
    return re.sub(r"<!--.*?-->\n?", "", svg[start:] if start >= 0 else svg, flags=re.S)


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
    data = {"forward_svg": _bare_svg(pictures.forward_svg) if pictures.forward_svg else "",
            "gradient_svg": _bare_svg(pictures.gradient_svg) if pictures.gradient_svg else "",
            "forward_title": stepper.forward_title, "gradient_title": stepper.gradient_title,
            "states": states, "sources": sources, "steps": stepper.steps, "total": stepper.total,
            "notice": stepper.notice, "with_values": stepper.with_values}
    packed = base64.b64encode(gzip.compress(json.dumps(data, separators=(",", ":")).encode("utf-8"), 6, mtime=0))
    payload = json.dumps({"encoding": "gzip+base64", "data": packed.decode("ascii")})
    title = html.escape(f"symlab grad walk: {stepper.summary()}", quote=True)
    page = (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{title}</title><style>{static_file('views.css')}</style></head>\n"
        "<body><div id=\"symlab-gradwalk\"></div>\n"
        f"<script type=\"application/json\" id=\"symlab-gradwalk-steps\">{payload}</script>\n"
        f"<script type=\"module\">\n{views_script()}\n{static_file('grad_offline.js')}\n</script>\n"
        "</body></html>\n"
    )
    target = Path(path)
    target.write_text(page, encoding="utf-8")
    return target


def read_page_data(page: str) -> dict[str, Any]:
    """The data a page written by :func:`export_page` carries, unpacked (what its script does in the browser)."""
    marker = 'id="symlab-gradwalk-steps">'
    start = page.index(marker) + len(marker)
    packed = json.loads(page[start:page.index("</script>", start)])
    if packed.get("encoding") != "gzip+base64":
        raise ValueError(f"read_page_data: unknown encoding {packed.get('encoding')!r}")
    return json.loads(gzip.decompress(base64.b64decode(packed["data"])).decode("utf-8"))
