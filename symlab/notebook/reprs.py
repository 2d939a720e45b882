"""What a notebook shows for a graph object: ``text/plain``, the diagram as SVG, and its DOT source.

Variable, Apply, Op, Type, FunctionGraph, RewriteTrace and compiled
Functions define ``_repr_mimebundle_`` as a call to :func:`mimebundle`;
what an object is, and so what it shows, is decided by
:func:`symlab.printing.subject.subject_of`. The bundle holds:

``text/plain``
    the object's terminal form: ``str`` of a Variable, Apply or Op, ``repr``
    of a Type, the debugprint of a FunctionGraph or Function, the steps of a
    RewriteTrace (long texts are cut at :data:`TEXT_MAX_LINES` lines);
``text/vnd.graphviz``
    the DOT source of the diagram (:func:`diagram_source`: its node names
    are the stable keys of :mod:`symlab.printing.model`, never addresses),
    folded to at most :data:`DIAGRAM_MAX_NODES` nodes;
``image/svg+xml``
    that diagram rendered, when ``dot`` or ``graphviz-pure`` is installed;
``image/png``
    the same picture as PNG: what JupyterLab shows in a notebook opened
    untrusted (it hides SVG there), and what GitHub shows.

Small graphs of Variables and Apply nodes are drawn in the ``structure``
style of seed 000, larger ones and whole graphs in the ``compact`` style.
A display never raises: whatever fails is left out of the bundle, and the
text is always there.

>>> import symlab.tensor as st
>>> from symlab.notebook.reprs import mimebundle
>>> x = st.dvector("x")
>>> bundle = mimebundle(x + 1, include=["text/plain", "text/vnd.graphviz"])
>>> bundle["text/plain"]
'Elemwise{add,no_inplace}.0'
>>> bundle["text/vnd.graphviz"].startswith("digraph")
True
"""

from __future__ import annotations

import sys
from typing import Any

from symlab.printing.subject import Subject, subject_of

#: The folding budget of the diagrams in displays.
DIAGRAM_MAX_NODES = 60
#: A graph deeper than this many ranks is folded to about one screen (its middle hidden).
DIAGRAM_MAX_RANKS = 24
#: The largest picture, in inches (``W,H``): a larger drawing is scaled down, never wider than the output.
DIAGRAM_FIT = "9.5,9"
#: Graphs of Variables/Apply nodes with at most this many Apply nodes display in the structure style.
STRUCTURE_MAX_APPLY = 3
#: ``text/plain`` is cut after this many lines.
TEXT_MAX_LINES = 200
#: Set to False to leave pictures out of every display (text only).
SHOW_DIAGRAMS = True

PLAIN, DOT, SVG, PNG = "text/plain", "text/vnd.graphviz", "image/svg+xml", "image/png"


def _subject(obj: Any) -> Subject | None:
    """What ``obj`` is (:func:`~symlab.printing.subject.subject_of`), or ``None`` for anything else."""
    try:
        return subject_of(obj)
    except TypeError:
        return None


def _cut(text: str) -> str:
    lines = text.splitlines()
    if len(lines) <= TEXT_MAX_LINES:
        return text.rstrip("\n")
    more = len(lines) - TEXT_MAX_LINES
    return "\n".join(lines[:TEXT_MAX_LINES] + [f"... ({more} more lines: use symlab.dprint to see them all)"])


def plain_text(obj: Any) -> str:
    """The ``text/plain`` of ``obj`` (what the terminal shows)."""
    return _plain(obj, _subject(obj))


def _plain(obj: Any, subject: Subject | None) -> str:
    kind = subject.kind if subject is not None else None
    if kind in ("fgraph", "function"):
        from symlab.printing.debugprint import debugprint

        return _cut(debugprint(obj, file="str"))
    if kind == "type":
        return repr(obj)
    return _cut(str(obj))


def diagram_style(obj: Any) -> str:
    """``structure`` for small graphs of Variables and Apply nodes, ``compact`` otherwise."""
    return _style(_subject(obj))


def _style(subject: Subject | None) -> str:
    if subject is None or not subject.is_graph:
        return "structure"
    if subject.fgraph is not None:
        return "compact"
    seen: set[int] = set()
    stack = list(subject.outputs)
    while stack:
        var = stack.pop()
        node = var.owner
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if len(seen) > STRUCTURE_MAX_APPLY:
            return "compact"
        stack.extend(node.inputs)
    return "structure"


def _in_terminal() -> bool:
    """True inside terminal IPython, which shows only text: no need to draw."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:
        return False
    return shell is not None and type(shell).__name__ == "TerminalInteractiveShell"


def mimebundle(obj: Any, include: Any = None, exclude: Any = None) -> dict[str, str]:
    """The display data of ``obj``; never raises (without a renderer, no SVG)."""

    def wanted(mime: str) -> bool:
        return (include is None or mime in include) and (exclude is None or mime not in exclude)

    try:
        subject = _subject(obj)
    except Exception:  # a display must not fail
        subject = None
    bundle: dict[str, str] = {}
    if wanted(PLAIN):
        try:
            bundle[PLAIN] = _plain(obj, subject)
        except Exception as err:  # a display must not fail
            bundle[PLAIN] = f"<{type(obj).__name__} object (its text failed: {type(err).__name__}: {err})>"
    draw = SHOW_DIAGRAMS and (wanted(DOT) or wanted(SVG) or wanted(PNG)) and subject is not None
    if not draw or (include is None and _in_terminal()):
        return bundle
    try:
        source = diagram_source(subject)
    except Exception:  # no graphviz package, or an object it cannot draw: text only
        return bundle
    if wanted(DOT):
        bundle[DOT] = source
    if wanted(SVG):
        try:
            from symlab.printing.render import to_svg

            bundle[SVG] = to_svg(source, timeout=30.0)
        except Exception:  # no renderer: the text is the display
            return bundle
    if wanted(PNG):
        try:
            from symlab.printing.render import to_png_base64

            bundle[PNG] = to_png_base64(source, timeout=30.0)
        except Exception:  # a renderer without PNG: the SVG is still there
            pass
    return bundle


def diagram_source(obj: Any) -> str:
    """The DOT source of the diagram a display shows for ``obj`` (a :class:`Subject` too).

    The diagram is the :class:`~symlab.printing.model.GraphModel` of ``obj``
    in the style :func:`diagram_style` picks, folded to :data:`DIAGRAM_MAX_NODES`.
    """
    from symlab.printing.diagram import to_dot
    from symlab.printing.model import build_model

    subject = obj if isinstance(obj, Subject) else subject_of(obj, "diagram_source")
    if subject.kind == "trace":
        return trace_source(subject.obj)
    if not subject.is_graph:
        return to_dot(build_model(subject, style="structure", caller="diagram_source")).source
    budget = DIAGRAM_MAX_NODES if _depth(subject) <= DIAGRAM_MAX_RANKS else DIAGRAM_MAX_RANKS
    model = build_model(subject, style=_style(subject), max_nodes=budget, caller="diagram_source")
    notes = []
    if model.folded or len(model.nodes) >= 30:
        notes.append("symlab.view(...) shows it with pan, zoom, folds to expand and clickable nodes")
    return to_dot(model, legend=True, fit=DIAGRAM_FIT, notes=notes).source


def trace_source(trace: Any) -> str:
    """The DOT a RewriteTrace displays: the unoptimized and the optimized graph side by side, in the
    same style, and what each rule did (applied and refused, per rule); ``symlab.view(trace)`` steps it."""
    from symlab.printing.diagram import side_by_side
    from symlab.printing.model import build_model

    cursor = trace.cursor(0)
    start = build_model(cursor, style="compact", max_nodes=DIAGRAM_MAX_NODES, caller="trace_source")
    final = build_model(trace.fgraph, style="compact", max_nodes=DIAGRAM_MAX_NODES, caller="trace_source")
    counts = [f"{s.rule}: {s.applied} applied" + (f", {s.refused} refused" if s.refused else "")
              for s in trace.summary() if s.applied or s.refused]
    notes = [f"{len(trace.steps)} steps: " + "; ".join(counts[:12]) + (f"; and {len(counts) - 12} more rules"
                                                                        if len(counts) > 12 else ""),
             "symlab.view(trace) steps through them, one rule application at a time"]
    panels = [("u_", "unoptimized (step 0)", start), ("o_", f"optimized (step {len(trace.steps)})", final)]
    return side_by_side(panels, notes, fit=DIAGRAM_FIT).source


def _depth(subject: Subject) -> int:
    """The number of ranks of the subject's graph: the longest chain of Apply nodes."""
    from symlab.printing.folding import toposort

    level: dict[Any, int] = {}
    deepest = 0
    for node in toposort(list(subject.outputs))[0]:
        here = 1 + max((level.get(i.owner, 0) for i in node.inputs if i.owner is not None), default=0)
        level[node] = here
        deepest = max(deepest, here)
    return deepest


def pretty(obj: Any, printer: Any, cycle: bool) -> None:
    """``_repr_pretty_`` for IPython's terminal: :func:`plain_text`."""
    try:
        text = plain_text(obj)
    except Exception as err:
        text = f"<{type(obj).__name__} object (its text failed: {type(err).__name__}: {err})>"
    printer.text(text)
