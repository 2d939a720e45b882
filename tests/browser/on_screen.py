"""Where things are on a browser test's page: the part of an element on screen, and boxes in view in a pane.

Boxes are dicts ``{"x", "y", "width", "height"}`` in CSS pixels of the page (a node's also has its ``key``), as the
tests read them with ``getBoundingClientRect``.
"""

from __future__ import annotations

__all__ = ["TWO_FRAMES_JS", "VISIBLE_RECT_JS", "covered", "inside", "out_of_view", "overlaps", "rounded"]

#: The part of an element that is on screen (its client box, without border and scroll bars, clipped by every
#: scrolling ancestor and the window), in CSS pixels of the page. (The body's overflow is the window's: not a clip.)
VISIBLE_RECT_JS = """(el) => {
    const r = el.getBoundingClientRect();
    let left = r.left + el.clientLeft, top = r.top + el.clientTop;
    let right = left + el.clientWidth, bottom = top + el.clientHeight;
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
        const s = getComputedStyle(p);
        if (!/(auto|scroll|hidden|clip)/.test(s.overflowX + " " + s.overflowY)) continue;
        const q = p.getBoundingClientRect();
        left = Math.max(left, q.left + p.clientLeft);
        top = Math.max(top, q.top + p.clientTop);
        right = Math.min(right, q.left + p.clientLeft + p.clientWidth);
        bottom = Math.min(bottom, q.top + p.clientTop + p.clientHeight);
    }
    left = Math.max(left, 0); top = Math.max(top, 0);
    right = Math.min(right, window.innerWidth); bottom = Math.min(bottom, window.innerHeight);
    return {x: left, y: top, width: Math.max(0, right - left), height: Math.max(0, bottom - top)};
}"""

#: Resolves after the next two frames: what a view does in its next frame (bring a step into view) is done.
TWO_FRAMES_JS = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))"


def rounded(box: dict[str, float]) -> list[int]:
    """``box`` as ``[x, y, width, height]`` in whole pixels (for messages)."""
    return [round(box[c]) for c in ("x", "y", "width", "height")]


def inside(node: dict[str, float], box: dict[str, float], slack: float = 2.0) -> bool:
    """Whether ``node`` is wholly inside ``box`` (give or take ``slack`` pixels)."""
    return (node["x"] >= box["x"] - slack and node["y"] >= box["y"] - slack
            and node["x"] + node["width"] <= box["x"] + box["width"] + slack
            and node["y"] + node["height"] <= box["y"] + box["height"] + slack)


def overlaps(node: dict[str, float], box: dict[str, float]) -> bool:
    """Whether some of ``node`` is inside ``box``."""
    return (node["x"] < box["x"] + box["width"] and node["x"] + node["width"] > box["x"]
            and node["y"] < box["y"] + box["height"] and node["y"] + node["height"] > box["y"])


def covered(node: dict[str, float], cover: dict[str, float] | None) -> bool:
    """Whether more than half of ``node`` is under ``cover`` (a minimap over the picture)."""
    if not cover:
        return False
    width = min(node["x"] + node["width"], cover["x"] + cover["width"]) - max(node["x"], cover["x"])
    height = min(node["y"] + node["height"], cover["y"] + cover["height"]) - max(node["y"], cover["y"])
    return width > 0 and height > 0 and width * height > 0.5 * node["width"] * node["height"]


def out_of_view(nodes: list[dict[str, float]], box: dict[str, float], cover: dict[str, float] | None = None) -> list[str]:
    """The keys of ``nodes`` not in view: every one inside ``box`` when they fit in it together, else every one at
    least partly inside and one wholly; a node mostly under ``cover`` (the minimap) is not in view."""
    if not nodes:
        return []
    hidden = [n["key"] for n in nodes if covered(n, cover)]
    return hidden + [key for key in _outside(nodes, box) if key not in hidden]


def _outside(nodes: list[dict[str, float]], box: dict[str, float]) -> list[str]:
    left = min(n["x"] for n in nodes)
    top = min(n["y"] for n in nodes)
    right = max(n["x"] + n["width"] for n in nodes)
    bottom = max(n["y"] + n["height"] for n in nodes)
    if right - left <= box["width"] and bottom - top <= box["height"]:
        return [n["key"] for n in nodes if not inside(n, box)]
    missing = [n["key"] for n in nodes if not overlaps(n, box)]
    if not any(inside(n, box) for n in nodes):
        missing.append("(no changed node wholly in view)")
    return missing
