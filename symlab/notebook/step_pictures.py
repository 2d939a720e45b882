"""The pictures of a rewrite stepper's panes: each graph state laid out once, marks painted after, work done ahead.

A pane shows one *state* of the graph (the graph after step ``s``) and marks on it: the nodes the step
removed (red, dashed) in "before", the nodes it created (green) in "after". What Graphviz lays out is the
unmarked picture; the marks are painted onto its SVG afterwards (:func:`paint_svg`: the class and the
stroke Graphviz itself would write), so the "after" of step ``k`` and the "before" of step ``k + 1``, the
same state, cost one layout. A pane is named by a :class:`PaneSpec`: the whole graph at a state (folded,
the step's changed nodes kept visible) or the part of it around some nodes. :class:`PaneCache` builds each
spec once, renders the specs a move needs in one ``dot`` run, caches the SVG by its DOT text, and can
build the next moves' panes in a background thread, on its own replay of the trace (never the live graph,
never the stepper's cursor).

>>> import symlab.tensor as st
>>> from symlab.rewriting import rewrite_graph
>>> a = st.dvector("a")
>>> _, trace = rewrite_graph(a + a ** 10)
>>> cache = PaneCache(trace, "compact", max_nodes=40)
>>> spec = PaneSpec("whole", 1, ())
>>> layout = cache.layouts(trace.cursor(), [spec])[0]
>>> sorted(k for k, n in layout.model.nodes.items() if n.kind == "apply")
['a4', 'a6']
>>> svg = paint_svg(layout.svg, {"a6": "created"})
>>> ('id="a6" class="node apply created"' in svg) == bool(layout.svg)
True
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, NamedTuple

from symlab.printing.diagram import CLASS_STYLES
from symlab.printing.model import GraphModel, build_model, build_part
from symlab.printing.subject import subject_of

__all__ = ["Layout", "PaneCache", "PaneSpec", "neighbourhood", "paint_svg", "render_many"]

#: How far from the changed nodes a pane's neighbourhood reaches, and how many nodes it holds at most
#: (the changed nodes themselves always; a small picture stays readable in half an output area).
NEIGHBOURHOOD_RADIUS = 2
NEIGHBOURHOOD_MAX = 30
#: Layouts kept per stepper (each a model and its SVG).
CACHE_SIZE = 600
#: The class a pane's model gives the nodes folding must keep visible, taken off before the DOT is written.
_KEEP = "keep"


class PaneSpec(NamedTuple):
    """What a pane draws: ``kind`` ``"whole"`` (the graph at ``state``, folded) or ``"part"`` (the nodes
    around ``centre``, keys); ``keep`` are keys of nodes folding must leave visible (whole pictures);
    ``open`` the keys of the nodes drawn open, their inner graph inside them (``a5``, ``a5/a2``)."""

    kind: str
    state: int
    centre: tuple[str, ...]
    keep: tuple[str, ...] = ()
    open: tuple[str, ...] = ()


@dataclass
class Layout:
    """A pane laid out: its model (with ``notes``), the DOT text and the unmarked SVG (``""`` without Graphviz)."""

    model: GraphModel
    notes: tuple[str, ...]
    dot: str
    svg: str = ""


def neighbourhood(fgraph: Any, centre: list[Any], radius: int = NEIGHBOURHOOD_RADIUS,
                  limit: int = NEIGHBOURHOOD_MAX) -> set[Any]:
    """The Apply nodes of ``fgraph`` at most ``radius`` edges from ``centre`` (all of ``centre``; at most ``limit``)."""
    region = {n for n in centre if n in fgraph._nodes}
    frontier = list(region)
    for _ in range(radius):
        following = []
        for node in frontier:
            near = [i.owner for i in node.inputs if i.owner is not None]
            for out in node.outputs:
                near.extend(c for c, _ in fgraph.clients.get(out, ()) if c != "output")
            for other in near:
                if other not in region and len(region) < limit:
                    region.add(other)
                    following.append(other)
        frontier = following
    return region


def _serial(cursor: Any, node: Any) -> int:
    return int(cursor.key(node)[1:])


def build_layout(cursor: Any, spec: PaneSpec, style: str, max_nodes: int) -> Layout:
    """The model and DOT text of ``spec``, drawn from ``cursor`` (moved to the spec's state)."""
    from symlab.printing.diagram import to_dot

    cursor.seek(spec.state)
    fg = cursor.fgraph
    notes: tuple[str, ...] = ()
    if spec.kind == "whole":
        keep = _objects(cursor, spec.keep)
        # the cursor's own subject, without the "created" marks of the step it stands at: a pane marks only
        # what its step did (painted later)
        from dataclasses import replace

        subject = replace(subject_of(cursor), created=())
        model = build_model(subject, style, max_nodes=max_nodes, classes={_KEEP: keep}, open_inner=spec.open)
    else:
        region = neighbourhood(fg, _objects(cursor, spec.centre))
        order = sorted(region, key=lambda n: _serial(cursor, n))
        model = build_part(order, style, cursor.key, fg, fg.outputs, open_inner=spec.open)
        hidden = len(fg._nodes) - len(region)
        notes = (f"the {len(region)} nodes around this step's change; {hidden} nodes hidden "
                 "(stepper.full = True, or 'whole graph', draws all of it)",)
    for node in model.nodes.values():
        node.classes.discard(_KEEP)
    for edge in model.edges:
        edge.classes.discard(_KEEP)
    return Layout(model, notes, to_dot(model, notes=notes).source)


def _objects(cursor: Any, keys: tuple[str, ...]) -> list[Any]:
    """The cursor's copies of the objects of ``keys`` that are in its graph now."""
    found = []
    for key in keys:
        try:
            obj = cursor.object(key)
        except KeyError:
            continue
        if obj in cursor.fgraph._nodes:
            found.append(obj)
    return found


# -- painting marks on a laid-out picture ------------------------------------------------------------------------
_NODE_OPEN = '<g id="{key}" class="node '
_SHAPE = re.compile(r"<(polygon|ellipse|path|polyline)\b[^>]*>")
_STROKE_EXTRA = re.compile(r' stroke-(?:width|dasharray)="[^"]*"')
_STROKE = re.compile(r' stroke="[^"]*"')


def _stroke(look: dict[str, str], dashed: bool) -> str:
    text = f' stroke="{look["color"]}"'
    if look.get("penwidth"):
        text += f' stroke-width="{look["penwidth"]}"'
    if dashed or "dashed" in look.get("style", ""):
        text += ' stroke-dasharray="5,2"'
    return text


def paint_svg(svg: str, marks: dict[str, str]) -> str:
    """``svg`` (Graphviz's, unmarked) with the nodes of ``marks`` (key -> class) painted as Graphviz paints that class.

    The node's ``class`` attribute gets the mark (``node apply created``) and its shape the stroke of
    :data:`~symlab.printing.diagram.CLASS_STYLES`, as if the model had carried the class: the layout is the
    same, only colours change. Keys not drawn are skipped.
    """
    if not svg or not marks:
        return svg
    for key, cls in marks.items():
        look = CLASS_STYLES.get(cls)
        opening = _NODE_OPEN.format(key=key)
        start = svg.find(opening)
        if look is None or start < 0:
            continue
        class_end = svg.index('"', start + len(opening))
        classes = svg[start + len(opening):class_end].split()
        kind, others = classes[0], set(classes[1:])
        if cls in others:
            continue
        svg = svg[:start + len(opening)] + " ".join([kind, *sorted(others | {cls})]) + svg[class_end:]
        end = svg.find("</g>", start)
        shape = _SHAPE.search(svg, start, end if end >= 0 else len(svg))
        if shape is None:
            continue
        element = shape.group(0)
        painted = _STROKE.sub(_stroke(look, 'stroke-dasharray="' in element).replace("\\", "\\\\"),
                              _STROKE_EXTRA.sub("", element), count=1)
        svg = svg[:shape.start()] + painted + svg[shape.end():]
    return svg


# -- rendering ---------------------------------------------------------------------------------------------------
def render_many(sources: list[str], processes: int = 1) -> list[str]:
    """The SVG of each DOT text of ``sources``, in as few ``dot`` runs as ``processes`` (``""`` each without Graphviz).

    Graphviz reads several graphs from one input and writes one SVG document for each, so a batch costs
    one process start. A batch that fails is rendered graph by graph (a bad graph spoils only itself).
    """
    if not sources:
        return []
    from symlab.printing.render import RenderError, to_svg

    def run(batch: list[str]) -> list[str]:
        try:
            out = to_svg("\n".join(batch), timeout=120.0)
        except Exception:  # no renderer, or one bad graph
            out = None
        if out is not None:
            parts = [_as_alone(p) for p in re.split(r"(?=<\?xml )", out) if p.strip()]
            if len(parts) == len(batch):
                return parts
        if len(batch) == 1:
            return [""]
        found = []
        for one in batch:
            try:
                found.append(to_svg(one, timeout=60.0))
            except (RenderError, Exception):
                found.append("")
        return found

    if processes <= 1 or len(sources) < 4:
        return run(sources)
    size = -(-len(sources) // processes)
    batches = [sources[i:i + size] for i in range(0, len(sources), size)]
    with ThreadPoolExecutor(max_workers=len(batches)) as pool:  # the dot processes run at once
        results = list(pool.map(run, batches))
    return [svg for batch in results for svg in batch]


def _as_alone(svg: str) -> str:
    """A picture of a several-graph ``dot`` run as a run of its graph alone writes it (graph id and name)."""
    svg = re.sub(r'<g id="[^"]*graph0" class="graph"', '<g id="graph0" class="graph"', svg, count=1)
    return re.sub(r"(<!-- Title: |<title>)%\d+( Pages: 1 -->|</title>)", r"\g<1>%3\g<2>", svg, count=2)


# -- the cache -----------------------------------------------------------------------------------------------------
_WORKER: ThreadPoolExecutor | None = None
_WORKER_LOCK = threading.Lock()


def _worker() -> ThreadPoolExecutor:
    """The one background thread that draws every stepper's next panes (shared: idle steppers cost no thread)."""
    global _WORKER
    with _WORKER_LOCK:
        if _WORKER is None:
            _WORKER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="symlab-stepper-prefetch")
        return _WORKER


class PaneCache:
    """Layouts of a trace's panes by spec, SVGs by DOT text; :meth:`prefetch` draws ahead in the background.

    Thread-safe: the calling thread and the background thread each draw on their own cursor; a spec being
    drawn by one is waited for, not drawn twice, by the other.
    """

    def __init__(self, trace: Any, style: str, max_nodes: int) -> None:
        self.trace = trace
        self.style = style
        self.max_nodes = max_nodes
        self._lock = threading.Lock()
        self._layouts: OrderedDict[PaneSpec, Layout] = OrderedDict()
        self._svgs: OrderedDict[str, str] = OrderedDict()
        self._busy: dict[PaneSpec, threading.Event] = {}
        self._cursor: Any = None  # the background thread's own replay
        self._pending: Future | None = None
        self._generation = 0
        self.extra: dict[Any, Any] = {}  # other per-step results (the text diffs), filled by whoever computes them
        self.hits = 0
        self.misses = 0

    def layouts(self, cursor: Any, specs: list[PaneSpec], processes: int = 1) -> list[Layout]:
        """The layouts of ``specs``: cached, waited for, or drawn on ``cursor`` (missing SVGs in one ``dot`` run)."""
        found: dict[PaneSpec, Layout] = {}
        mine: list[PaneSpec] = []
        waits: list[tuple[PaneSpec, threading.Event]] = []
        with self._lock:
            for spec in dict.fromkeys(specs):
                layout = self._layouts.get(spec)
                if layout is not None:
                    self._layouts.move_to_end(spec)
                    found[spec] = layout
                    self.hits += 1
                elif spec in self._busy:
                    waits.append((spec, self._busy[spec]))
                else:
                    self._busy[spec] = threading.Event()
                    mine.append(spec)
                    self.misses += 1
        built: dict[PaneSpec, Layout] = {}
        try:
            for spec in mine:
                built[spec] = build_layout(cursor, spec, self.style, self.max_nodes)
            self._render(list(built.values()), processes)
        finally:
            with self._lock:
                for spec in mine:
                    if spec in built:
                        self._store(spec, built[spec])
                    self._busy.pop(spec).set()
        found.update(built)
        for spec, event in waits:
            event.wait(30.0)
            with self._lock:
                layout = self._layouts.get(spec)
            found[spec] = layout if layout is not None else self.layouts(cursor, [spec])[0]
        return [found[spec] for spec in specs]

    def _render(self, layouts: list[Layout], processes: int) -> None:
        with self._lock:
            missing = []
            for layout in layouts:
                svg = self._svgs.get(layout.dot)
                if svg is None:
                    missing.append(layout)
                else:
                    layout.svg = svg
        sources = list(dict.fromkeys(layout.dot for layout in missing))
        svgs = dict(zip(sources, render_many(sources, processes)))
        with self._lock:
            for layout in missing:
                layout.svg = svgs[layout.dot]
                self._svgs[layout.dot] = layout.svg
                while len(self._svgs) > CACHE_SIZE:
                    self._svgs.popitem(last=False)

    def _store(self, spec: PaneSpec, layout: Layout) -> None:
        self._layouts[spec] = layout
        while len(self._layouts) > CACHE_SIZE:
            self._layouts.popitem(last=False)

    def cached(self, spec: PaneSpec) -> bool:
        with self._lock:
            return spec in self._layouts

    def prefetch(self, moves: list[tuple[list[PaneSpec], Any]]) -> Future | None:
        """Draw ahead in the background thread, move by move: each ``(specs, more)`` draws ``specs``, then calls
        ``more(cursor)`` (if not ``None``) with the thread's own cursor; the future of the whole.

        The most likely move comes first, and is ready soonest. A newer prefetch makes an older one stop
        after its current move (and drops it if it has not started): only the newest moves are worth it.
        """
        moves = [(specs, more) for specs, more in moves if more is not None or not all(map(self.cached, specs))]
        if not moves:
            return None
        self._generation += 1
        if self._pending is not None:
            self._pending.cancel()
        self._pending = _worker().submit(self._work, moves, self._generation)
        return self._pending

    def _work(self, moves: list[tuple[list[PaneSpec], Any]], generation: int) -> None:
        if self._cursor is None:
            self._cursor = self.trace.cursor()
        for specs, more in moves:
            if generation != self._generation:  # the user moved on: this work is for moves no longer next
                return
            if specs:
                self.layouts(self._cursor, specs)
            if more is not None:
                more(self._cursor)

    def wait(self) -> None:
        """Wait for the background drawing (tests, exports)."""
        pending = self._pending
        if pending is not None and not pending.cancelled():
            try:
                pending.result(60.0)
            except Exception:  # a failed prefetch only costs its time: the pane is drawn when shown
                pass
