"""A rewrite stepper as one page that travels: every step, offline, small, with no path of the machine.

:func:`export_page` writes what :meth:`RewriteStepper.export_html
<symlab.notebook.stepper.RewriteStepper.export_html>` promises. What does not change between steps is
stored once: each distinct picture (a graph state laid out, unmarked) is one entry of ``svgs`` and a pane
is ``[index, marks]`` (the page paints the removed and created nodes as the kernel does), each rule's
source is stored once in ``sources``. The data is JSON, gzip-compressed and base64-encoded in a
``<script type="application/json">`` element: ``{"encoding": "gzip+base64", "data": ...}``; the page's
script (``static/offline.js``) unpacks it with the browser's ``DecompressionStream`` and says so plainly
where a browser lacks it. :func:`read_page_data` is the same unpacking in Python.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import re
from pathlib import Path
from typing import Any

from symlab.notebook.rule_source import rule_source_at
from symlab.notebook.widget import static_file, views_script
from symlab.printing.diagram import CLASS_STYLES

__all__ = ["export_page", "read_page_data"]

#: The marks a page paints, and how (the kernel's own styles).
_LOOKS = {cls: CLASS_STYLES[cls] for cls in ("created", "removed")}


def _bare_svg(svg: str) -> str:
    """``svg`` without its XML prologue, DOCTYPE and comments (which name a URL or Graphviz's version)."""
    start = svg.find("<svg")
    svg = svg[start:] if start >= 0 else svg
    return re.sub(r"<!--.*?-->\n?", "", svg, flags=re.S)


def _states(stepper: Any) -> tuple[list[str], list[dict[str, Any]], dict[str, Any], dict[str, str]]:
    """Every step's panes (indices into the distinct SVGs), cards and diffs; the compare view; the sources."""
    frames = [stepper._frame(k, False) for k in range(stepper.total + 1)]
    compare = stepper._frame(stepper.total, True)
    specs = []
    for frame in [*frames, compare]:
        specs.extend(p[0] for p in (frame["before"], frame["after"]) if p is not None)
    unique = list(dict.fromkeys(specs))
    layouts = dict(zip(unique, stepper._panes.layouts(stepper._cursor, unique, processes=2)))
    svgs: dict[str, int] = {}

    def pane(entry: Any) -> list[Any]:
        if entry is None:
            return [-1, {}]
        svg = _bare_svg(layouts[entry[0]].svg)
        index = svgs.setdefault(svg, len(svgs))
        return [index, entry[1]]

    def drawn(entry: Any, keys: tuple[str, ...]) -> list[str]:
        return [k for k in keys if entry is not None and k in layouts[entry[0]].model.nodes]

    sources: dict[str, str] = {}
    states = []
    for k, frame in enumerate(frames):
        card = stepper._card(k)
        if k:
            step = stepper.trace.step(k)
            where = card["location"]
            if where not in sources:
                sources[where] = rule_source_at(step.location, step.rule)
        before_keys, after_keys = frame.get("reveal", ((), ()))
        states.append({"before": pane(frame["before"]), "after": pane(frame["after"]),
                       "before_title": frame["before_title"], "after_title": frame["after_title"], "card": card,
                       "diff": stepper._step_diff(k) if k else [],
                       "reveal_before": drawn(frame["before"], before_keys),
                       "reveal_after": drawn(frame["after"], after_keys)})
    compared = {"before": pane(compare["before"]), "after": pane(compare["after"]),
                "before_title": compare["before_title"], "after_title": compare["after_title"]}
    return list(svgs), states, compared, sources


def export_page(stepper: Any, path: Any) -> Path:
    """Write ``stepper``'s page of every step to ``path``; the path (see the module documentation)."""
    svgs, states, compare, sources = _states(stepper)
    data = {"svgs": svgs, "states": states, "compare": compare, "sources": sources, "looks": _LOOKS,
            "steps": stepper.steps, "total": stepper.total}
    packed = base64.b64encode(gzip.compress(json.dumps(data, separators=(",", ":")).encode("utf-8"), 6, mtime=0))
    # base64 holds no "<", ">" or "&": nothing in the data can end its script element, whatever the names hold
    payload = json.dumps({"encoding": "gzip+base64", "data": packed.decode("ascii")})
    title = html.escape(f"symlab rewrite: {stepper.summary()}", quote=True)
    page = (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{title}</title><style>{static_file('views.css')}</style></head>\n"
        "<body><div id=\"symlab-stepper\"></div>\n"
        f"<script type=\"application/json\" id=\"symlab-steps\">{payload}</script>\n"
        f"<script type=\"module\">\n{views_script()}\n{static_file('offline.js')}\n</script>\n"
        "</body></html>\n"
    )
    target = Path(path)
    target.write_text(page, encoding="utf-8")
    return target


def read_page_data(page: str) -> dict[str, Any]:
    """The data a page written by :func:`export_page` carries, unpacked (what its script does in the browser)."""
    start = page.index('id="symlab-steps">') + len('id="symlab-steps">')
    packed = json.loads(page[start:page.index("</script>", start)])
    if packed.get("encoding") != "gzip+base64":
        raise ValueError(f"read_page_data: unknown encoding {packed.get('encoding')!r}")
    return json.loads(gzip.decompress(base64.b64decode(packed["data"])).decode("utf-8"))
