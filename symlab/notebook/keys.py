"""One place that says what a key is: its object, its kind, and what draws it in the current picture.

Every view sends and receives keys (``a7`` an Apply node, ``v3`` a variable, ``out0`` a graph output,
``g2`` a folded group, ``op0`` / ``type0`` an op or type of the structure style, ``a2_a4`` an edge). A
:class:`KeyIndex` is built once per graph (not per picture): it knows every node and variable of the whole
graph, folded or not, under the keys pictures draw them with. :meth:`KeyIndex.resolve` adds what the
current picture knows (groups, copies, edges, ops and types), and :meth:`KeyIndex.drawn` says which
nodes and edges of the picture show an object: its own node, its copies, the edges carrying it, or the
group that hides it. :func:`selection_marks` is the one selection routine the graph view, the inspector
and the values view share: the selected object, its inputs and its clients, by drawn key.

>>> import symlab.tensor as st
>>> from symlab.printing.folding import toposort
>>> from symlab.printing.model import build_model
>>> from symlab.printing.subject import subject_of
>>> x = st.dvector("x")
>>> y = st.exp(x) * 2
>>> subject = subject_of(y)
>>> order, leaves = toposort([y])
>>> index = KeyIndex(subject, order, leaves)
>>> [index.key(x), index.key(y.owner), index.key(y)]
['v0', 'a6', 'v7']
>>> model = build_model(subject, "compact", key=index.keys)
>>> found = index.resolve("a1", model)
>>> found.kind, found.obj is y.owner.inputs[0].owner, found.drawn
('apply', True, ['a1'])
>>> index.resolve("v2", model).drawn  # exp's output is drawn as an arrow
['a1_a6']
>>> sorted(selection_marks(index, model, y.owner.inputs[0].owner).items())
[('a1', ['selected']), ('a1_a6', ['client']), ('a6', ['client']), ('v0', ['input'])]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from symlab.graph.basic import Apply, Variable
from symlab.printing.model import GraphModel, graph_keys
from symlab.printing.subject import Subject

__all__ = ["KeyIndex", "Resolved", "selection_marks"]


@dataclass(frozen=True)
class Resolved:
    """What a key is: the ``key`` itself, its ``obj`` (a node, a variable, an op, a type, or a folded group's
    list of nodes), its ``kind`` (``apply``, ``variable``, ``group``, ``op``, ``type``) and the keys of the
    picture's nodes and edges that ``drawn`` it (empty: nothing on the picture shows it)."""

    key: str
    obj: Any
    kind: str
    drawn: list[str]


class KeyIndex:
    """The keys of a whole graph (its Apply nodes ``order``, inputs first, and the ``leaves`` they read).

    ``keys`` is the key function every picture of the graph is built with (``build_model(key=...)``): the
    graph's own keys where there is a FunctionGraph, else a numbering from the inputs.
    """

    def __init__(self, subject: Subject, order: list[Apply], leaves: list[Variable]) -> None:
        self.subject = subject
        self.keys: Callable[[Any], str] = graph_keys(subject, order, leaves)
        self._objects: dict[str, Any] = {}
        for leaf in leaves:
            self._objects.setdefault(self.keys(leaf), leaf)
        for node in order:
            self._objects[self.keys(node)] = node
            for var in (*node.inputs, *node.outputs):
                self._objects.setdefault(self.keys(var), var)
        for var in subject.inputs:
            self._objects.setdefault(self.keys(var), var)
        # the keys as they were when the index was made (a graph's own key forgets what left it)
        self._key_of = {id(obj): key for key, obj in self._objects.items()}
        for k, out in enumerate(subject.outputs):
            self._objects.setdefault(f"out{k}", out)

    def __contains__(self, key: object) -> bool:
        return key in self._objects

    def obj(self, key: str) -> Any:
        """The node or variable of the whole graph keyed ``key`` (``out<k>``: output ``k``), or ``None``."""
        return self._objects.get(key)

    def key(self, obj: Any) -> str | None:
        """The key of a node or variable of the graph, or ``None`` (not of this graph, or an op or type)."""
        return self._key_of.get(id(obj)) if isinstance(obj, Apply | Variable) else None

    def key_of(self, obj: Any) -> str:
        """The key of a node or variable of the graph; ``KeyError`` if it is not one (as ``GraphModel.key_of``)."""
        key = self.key(obj)
        if key is None:
            raise KeyError(f"KeyIndex.key_of: {obj!s:.80} ({type(obj).__name__}) is not part of this graph")
        return key

    def items(self) -> Iterable[tuple[str, Any]]:
        """Every ``(key, node or variable)`` of the graph, graph outputs (``out<k>``) last."""
        return self._objects.items()

    # -- against a picture ------------------------------------------------------------------------------
    def resolve(self, key: str, model: GraphModel | None, groups: Any = None) -> Resolved | None:
        """What ``key`` is, and what draws it in ``model``; ``None`` if neither the graph nor the picture has it.

        ``groups`` maps group keys to groups (a :class:`~symlab.printing.grouping.GroupTree`'s), so that a
        group not drawn any more (opened, or inside a folded one) still resolves.
        """
        if not key:
            return None
        if model is not None and key in model.nodes and model.nodes[key].kind == "group":
            return Resolved(key, model.nodes[key].obj, "group", [key])
        if groups is not None and key in groups:
            group = groups[key]
            return Resolved(key, list(group.members), "group", [key] if model is not None and key in model.nodes
                            else [])
        obj = self._objects.get(key)
        if obj is None and model is not None:
            edge = next((e for e in model.edges if e.key == key), None)
            if edge is not None and edge.var is not None:  # a click on an arrow: the variable it carries
                return self.resolve(edge.var, model, groups)
            if edge is not None:  # an arrow leaving a node that is itself the variable (an input's): that node
                return self.resolve(edge.tail, model, groups)
            try:
                obj = model.obj(key)
            except KeyError:
                return None
        if obj is None:
            return None
        if isinstance(obj, Variable) and not key.startswith("out"):
            key = self.key(obj) or key  # a copy of a variable drawn once per use: the variable
        return Resolved(key, obj, _kind(obj), self.drawn(obj, model, key))

    def drawn(self, obj: Any, model: GraphModel | None, key: str | None = None) -> list[str]:
        """The keys of the nodes and edges of ``model`` that show ``obj`` (or the group hiding it)."""
        if model is None:
            return []
        key = key or self.key(obj)
        if key is None:
            try:
                key = model.key_of(obj)
            except KeyError:
                return []
        found = model.drawn_keys(key)
        found += [e.key for e in model.edges if e.var == key]
        if not found and isinstance(obj, Apply | Variable):
            try:
                where = model.key_of(obj)  # a folded node: the group hiding it
            except KeyError:
                return []
            if where in model.nodes and model.nodes[where].kind == "group":
                found = [where]
        return found


def _kind(obj: Any) -> str:
    if isinstance(obj, Apply):
        return "apply"
    if isinstance(obj, Variable):
        return "variable"
    if isinstance(obj, list):
        return "group"
    from symlab.graph.op import Op

    return "op" if isinstance(obj, Op) else "type"


def selection_marks(index: KeyIndex, model: GraphModel, obj: Any, key: str | None = None,
                    clients: Callable[[Variable], list[tuple[Any, int]]] | None = None,
                    outputs: tuple[Variable, ...] = ()) -> dict[str, list[str]]:
    """The marks of a selection, by drawn key: ``selected``, its ``input`` s and its ``client`` s.

    A selected Apply node lights what it reads (an input drawn as an arrow lights the arrow and the box
    computing it) and what reads its outputs; a selected variable lights the node computing it and the
    nodes reading it. Folded objects light the group hiding them. ``clients(var)`` gives a variable's
    ``(node or "output", i)`` uses (default: the graph's clients, else the nodes of the picture reading it).
    """
    marks: dict[str, list[str]] = {}
    fg = index.subject.fgraph

    def uses(var: Variable) -> list[tuple[Any, int]]:
        if clients is not None:
            return clients(var)
        if fg is not None and var in fg.clients:
            return list(fg.clients[var])
        drawn = [n.obj for n in model.nodes.values() if n.kind == "apply"]
        return [(n, i) for n in drawn for i, inp in enumerate(n.inputs) if inp is var]

    def mark(target: Any, cls: str) -> None:
        keys = [target] if isinstance(target, str) and target in model.nodes else index.drawn(target, model)
        for k in keys:
            classes = marks.setdefault(k, [])
            if cls not in classes:
                classes.append(cls)

    def mark_clients(var: Variable) -> None:
        for node, i in uses(var):
            if node == "output":
                mark(f"out{i}", "client")
            else:
                mark(node, "client")
        for k, out in enumerate(outputs):
            if out is var and f"out{k}" in model.nodes:
                mark(f"out{k}", "client")

    for k in ([key] if key else []) + (index.drawn(obj, model, key) if not isinstance(obj, list) else []):
        if k in model.nodes or any(e.key == k for e in model.edges):
            marks[k] = ["selected"]
    if isinstance(obj, Apply):
        for inp in obj.inputs:
            mark(inp, "input")
            if inp.owner is not None and not model.drawn_keys(index.key(inp) or ""):
                mark(inp.owner, "input")  # drawn as an arrow: its box too
        for out in obj.outputs:
            mark(out, "client")
            mark_clients(out)
    elif isinstance(obj, Variable):
        if obj.owner is not None:
            mark(obj.owner, "input")
        mark_clients(obj)
    if isinstance(obj, Variable) and obj.owner is not None and not any("selected" in c for c in marks.values()):
        for k in index.drawn(obj.owner, model):  # no arrow of its own (its readers are folded): its box stands for it
            marks[k] = ["selected"]
    for k, classes in marks.items():
        if "selected" in classes and classes != ["selected"]:
            marks[k] = ["selected"]
    return marks
