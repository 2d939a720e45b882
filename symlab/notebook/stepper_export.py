"""A rewrite stepper as one page that travels: every step, offline, small, with no path of the machine.

:func:`export_page` writes what :meth:`RewriteStepper.export_html
<symlab.notebook.stepper.RewriteStepper.export_html>` promises. What does not change between steps is
stored once: each distinct picture (a graph state laid out, unmarked) is one entry of ``svgs`` and a pane
is ``[index, marks]`` (the page paints the removed and created nodes as the kernel does), each rule's
source is stored once in ``sources``. The page is written as every exported page is
(:mod:`~symlab.notebook.offline_page`: the data packed in the page, unpacked by its script); its own part of the
script is ``static/offline.js``. :func:`read_page_data` is the same unpacking in Python.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from symlab.notebook import offline_page
from symlab.notebook.offline_page import bare_svg
from symlab.notebook.rule_source import rule_source_at
from symlab.printing.diagram import CLASS_STYLES

__all__ = ["export_page", "read_page_data"]

#: The marks a page paints, and how (the kernel's own styles).
_LOOKS = {cls: CLASS_STYLES[cls] for cls in ("created", "removed")}


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
        svg = bare_svg(layouts[entry[0]].svg)
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
    return offline_page.write_page(path, title=f"rewrite: {stepper.summary()}", host_id="symlab-stepper",
                                   data_id="symlab-steps", data=data, part="offline.js")


def read_page_data(page: str) -> dict[str, Any]:
    """The data a page written by :func:`export_page` carries, unpacked (what its script does in the browser)."""
    return offline_page.read_page_data(page, "symlab-steps")
