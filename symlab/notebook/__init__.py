"""The view layer: rich displays of graph objects, and widgets to click them.

Importing this package installs :func:`symlab.notebook.reprs.mimebundle` as
the core's display hook (:mod:`symlab.graph.display`); ``import symlab``
does so. The package imports neither IPython, graphviz nor any widget
library: they are loaded when something is drawn, or a widget made.

``symlab.view(obj)`` opens the interactive view of a graph object (a
:class:`~symlab.notebook.graph_view.GraphView`); an object's own display,
the last line of a cell, stays the static picture, which works everywhere
(untrusted notebooks, nbval, GitHub).
"""

from typing import Any

from symlab.graph.display import register_view, set_display_hook
from symlab.notebook.reprs import mimebundle, plain_text

set_display_hook(mimebundle)


def view(obj: Any, **options: Any) -> Any:
    """The interactive view of ``obj``.

    A :class:`~symlab.notebook.graph_view.GraphView` you click for a
    Variable, an Apply node, a list of them, a FunctionGraph or a compiled
    Function (``options``: ``style``, ``max_nodes``, ``focus_radius``); a
    :class:`~symlab.notebook.stepper.RewriteStepper` for a RewriteTrace
    (``f.trace``); with ``walk=wrt``, a :class:`~symlab.notebook.grad_stepper.GradStepper` over grad's walk
    from the cost ``obj`` back to ``wrt`` (``values={input: value}`` adds the numbers):
    ``symlab.view(cost, walk=[w, b], values={x: 2.0, w: -3.0, b: 6.9})``.
    """
    if "walk" in options:
        from symlab.notebook.grad_stepper import GradStepper

        wrt = options.pop("walk")
        values = options.pop("values", None)
        return GradStepper(obj, wrt, values, **options)
    from symlab.rewriting.trace import RewriteTrace

    if isinstance(obj, RewriteTrace):
        from symlab.notebook.stepper import RewriteStepper

        return RewriteStepper(obj, **options)
    from symlab.notebook.graph_view import GraphView

    return GraphView(obj, **options)


def _clients_inspector(obj: Any, **options: Any) -> Any:
    from symlab.notebook.inspector import ClientsInspector

    return ClientsInspector(obj, **options)


# ``fgraph.inspect()`` and ``f.inspect()`` open one (the core asks for the view by name).
register_view("clients", _clients_inspector)


def __getattr__(name: str) -> Any:
    """The widgets, imported (with anywidget) when first asked for: ``import symlab`` stays light."""
    if name == "GraphView":
        from symlab.notebook.graph_view import GraphView as value
    elif name == "RewriteStepper":
        from symlab.notebook.stepper import RewriteStepper as value
    elif name == "ClientsInspector":
        from symlab.notebook.inspector import ClientsInspector as value
    elif name == "GradStepper":
        from symlab.notebook.grad_stepper import GradStepper as value
    elif name == "ValuesView":
        from symlab.notebook.values import ValuesView as value
    else:
        raise AttributeError(f"module 'symlab.notebook' has no attribute {name!r}")
    globals()[name] = value
    return value


__all__ = ["ClientsInspector", "GradStepper", "GraphView", "RewriteStepper", "ValuesView", "mimebundle", "plain_text", "view"]
