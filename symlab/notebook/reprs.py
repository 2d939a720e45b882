"""What a notebook shows for a graph object: ``text/plain``, the diagram as SVG, and its DOT source.

Variable, Apply, Op, Type, FunctionGraph, RewriteTrace and compiled
Functions define ``_repr_mimebundle_`` as a call to :func:`mimebundle`. The
bundle holds:

``text/plain``
    the object's terminal form: ``str`` of a Variable, Apply or Op, ``repr``
    of a Type, the debugprint of a FunctionGraph or Function, the steps of a
    RewriteTrace (long texts are cut at :data:`TEXT_MAX_LINES` lines);
``text/vnd.graphviz``
    the DOT source of the diagram (stable: node ids are generated, no
    addresses), folded to at most :data:`DIAGRAM_MAX_NODES` nodes;
``image/svg+xml``
    that diagram rendered, when ``dot`` or ``graphviz-pure`` is installed.

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

#: The folding budget of the diagrams in displays.
DIAGRAM_MAX_NODES = 60
#: Graphs of Variables/Apply nodes with at most this many Apply nodes display in the structure style.
STRUCTURE_MAX_APPLY = 3
#: ``text/plain`` is cut after this many lines.
TEXT_MAX_LINES = 200
#: Set to False to leave pictures out of every display (text only).
SHOW_DIAGRAMS = True

PLAIN, DOT, SVG = "text/plain", "text/vnd.graphviz", "image/svg+xml"


def _kind(obj: Any) -> str:
    from symlab.graph.basic import Apply, Variable
    from symlab.graph.op import Op
    from symlab.graph.type import Type

    if isinstance(obj, Variable | Apply):
        return "node"
    if isinstance(obj, Op):
        return "op"
    if isinstance(obj, Type):
        return "type"
    if hasattr(obj, "graph_at") and hasattr(obj, "steps"):
        return "trace"
    if getattr(getattr(obj, "maker", None), "fgraph", None) is not None:
        return "function"
    if hasattr(obj, "outputs") and hasattr(obj, "inputs"):
        return "fgraph"
    return "other"


def _cut(text: str) -> str:
    lines = text.splitlines()
    if len(lines) <= TEXT_MAX_LINES:
        return text.rstrip("\n")
    more = len(lines) - TEXT_MAX_LINES
    return "\n".join(lines[:TEXT_MAX_LINES] + [f"... ({more} more lines: use symlab.dprint to see them all)"])


def _debugprint_text(obj: Any) -> str:
    from symlab.printing.debugprint import debugprint

    try:
        return debugprint(obj, file="str")
    except TypeError:
        fgraph = getattr(getattr(obj, "maker", None), "fgraph", None)
        if fgraph is None:
            raise
        return debugprint(list(fgraph.outputs), file="str")


def plain_text(obj: Any) -> str:
    """The ``text/plain`` of ``obj`` (what the terminal shows)."""
    kind = _kind(obj)
    if kind in ("fgraph", "function"):
        return _cut(_debugprint_text(obj))
    if kind == "type":
        return repr(obj)
    return _cut(str(obj))


def diagram_style(obj: Any) -> str:
    """``structure`` for small graphs of Variables and Apply nodes, ``compact`` otherwise."""
    if _kind(obj) != "node":
        return "compact" if _kind(obj) in ("fgraph", "function", "trace") else "structure"
    from symlab.graph.basic import Apply

    seen: set[int] = set()
    stack = list(obj.outputs) if isinstance(obj, Apply) else [obj]
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

    bundle: dict[str, str] = {}
    if wanted(PLAIN):
        try:
            bundle[PLAIN] = plain_text(obj)
        except Exception as err:  # a display must not fail
            bundle[PLAIN] = f"<{type(obj).__name__} object (its text failed: {type(err).__name__}: {err})>"
    draw = SHOW_DIAGRAMS and (wanted(DOT) or wanted(SVG)) and _kind(obj) != "other"
    if not draw or (include is None and _in_terminal()):
        return bundle
    try:
        from symlab.printing.diagram import diagram

        source = diagram(obj, style=diagram_style(obj), max_nodes=DIAGRAM_MAX_NODES).source
    except Exception:  # no graphviz package, or an object it cannot draw: text only
        return bundle
    if wanted(DOT):
        bundle[DOT] = source
    if wanted(SVG):
        try:
            from symlab.printing.render import to_svg

            bundle[SVG] = to_svg(source, timeout=30.0)
        except Exception:  # no renderer: the text is the display
            pass
    return bundle


def pretty(obj: Any, printer: Any, cycle: bool) -> None:
    """``_repr_pretty_`` for IPython's terminal: :func:`plain_text`."""
    try:
        text = plain_text(obj)
    except Exception as err:
        text = f"<{type(obj).__name__} object (its text failed: {type(err).__name__}: {err})>"
    printer.text(text)
