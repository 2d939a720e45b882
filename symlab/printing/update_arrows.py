"""Update arrows: a compiled function's updates (and shared variables' default updates) drawn on its picture.

After each call, a compiled function stores each update's value into its shared variable: ``w <- w - lr * g``
for a training step, ``rng <- next generator`` for a draw that must give new numbers at the next call. The
picture model (:func:`~symlab.printing.model.build_model`) draws each as a dashed arrow of kind ``update`` from
the value back to the shared variable, once the painters have drawn both.
"""

from __future__ import annotations

from typing import Any

from symlab.graph.basic import Variable
from symlab.printing.drawing import DrawNode, GraphModel

__all__ = ["add_updates"]


def _drawn_node(model: GraphModel, keys: Any, var: Variable) -> str | None:
    """The key of the node drawing ``var`` (its first copy when it is drawn once per use), or ``None``."""
    where = model._where.get(var)
    if where is not None and where in model.nodes:
        return where
    copies = model.copies.get(keys(var)) if var.owner is None else None
    return copies[0] if copies else None


def add_updates(model: GraphModel, keys: Any) -> None:
    """Draw each update as a dashed arrow, kind ``update``, from the value to the shared variable it is stored into.

    A compiled function's updates (:attr:`~symlab.printing.subject.Subject.updates`, explicit and default alike)
    are labelled ``update``; in the compact style the value is the output node ``out<k>``, whose label says
    ``update of <shared>``. A picture of uncompiled variables draws, for each shared variable drawn with a
    ``default_update`` that is drawn as a node too (a ``RandomStream``'s generator and the next generator its draw
    returns, in the structure and dataflow styles), an arrow labelled ``default update``. An arrow whose ends are
    not both drawn (a part of a graph) is left out. Edge keys are ``<tail>_<head>`` as for every edge.

    >>> import numpy as np, symlab
    >>> w = symlab.shared(np.zeros(2), name="w")
    >>> f = symlab.function([], w.sum(), updates={w: w * 0.5}, mode="NUMPY")
    >>> from symlab.printing.model import build_model
    >>> model = build_model(f, style="compact")
    >>> [(e.tail, e.head, e.label) for e in model.edges if e.kind == "update"]
    [('out1', 'v0', 'update')]
    >>> model.nodes["out1"].label
    ['update of w', 'float64 (?,)']
    """
    subject = model.subject
    pairs: list[tuple[Variable, Variable, str, str | None]] = []  # (value, shared, label, compact node)
    for k, shared in subject.updates:
        if k < len(subject.outputs):
            pairs.append((subject.outputs[k], shared, "update", f"out{k}"))
    if subject.kind != "function":
        for var in list(model._where):
            update = getattr(var, "default_update", None) if isinstance(var, Variable) else None
            if isinstance(update, Variable):
                pairs.append((update, var, "default update", None))
    for value, shared, label, out in pairs:
        head = _drawn_node(model, keys, shared)
        if model.style == "compact" and out is not None:
            tail = out if out in model.nodes else None
            if tail is not None:
                _name_update(model.nodes[tail], shared)
        else:
            tail = _drawn_node(model, keys, value)
        if head is None or tail is None:
            continue
        tip = f"after each call, {_text(shared)} ← {_text(value)}"
        model._edge(tail, head, "update", label, tooltip=tip)


def _text(var: Variable) -> str:
    text = str(var)
    return text if len(text) <= 60 else text[:59] + "…"


def _name_update(node: DrawNode, shared: Variable) -> None:
    """Say on a compact output node that it is the update of ``shared`` (``output 2`` becomes ``update of w``)."""
    what = f"update of {_text(shared)}"
    if node.label and node.label[0].startswith("output "):
        node.label = [what, *node.label[1:]]
    elif what not in node.label:
        node.label = [*node.label, what]
