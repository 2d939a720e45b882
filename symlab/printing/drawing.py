"""What a picture of a graph is made of: :class:`DrawNode`, :class:`DrawEdge` and the :class:`GraphModel` holding them.

A :class:`GraphModel` is the picture before any DOT is written: drawn nodes
under stable string keys, the arrows between those keys, and which object
each key draws. :func:`symlab.printing.model.build_model` makes one from a
graph, with the painters of :mod:`symlab.printing.painters`; pictures and
widgets read it.

>>> import symlab.tensor as st
>>> from symlab.printing.model import build_model
>>> model = build_model(st.dscalar("x") * 2, style="compact")
>>> isinstance(model, GraphModel), [node.kind for node in model.nodes.values()]
(True, ['apply', 'input', 'constant', 'output'])
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from symlab.graph.basic import Apply, Variable
from symlab.graph.op import Op
from symlab.printing.folding import obj_key
from symlab.printing.subject import Subject

STYLES = ("structure", "compact", "dataflow")
DEFAULT_MAX_NODES = 100
#: The kinds of drawn nodes.
#: ``generator``: a variable holding a random generator's state (its type says ``is_generator_state``), drawn apart
#: from tensors whatever its place (an input, the next generator a draw returns, a function's update).
NODE_KINDS = ("apply", "variable", "input", "constant", "output", "op", "type", "group", "cut", "generator")
#: The kinds of edges: a node's input or output, a variable's owner, an Apply's op, a variable's type,
#: the inputs of a folded group, and where a part of a graph is cut (its value goes on to nodes not drawn);
#: ``update``: from a value back to the shared variable a compiled function stores it into after each call (or,
#: in a picture of uncompiled variables, the shared variable's ``default_update``); ``recur``: in an open loop's
#: body, from a state's new value back to the inputs reading its taps (``next iteration``).
EDGE_KINDS = ("input", "output", "owner", "op", "type", "fold", "cut", "wire", "update", "recur")
#: The highlight classes a node or an edge may carry (``skipped``: inside the branch an ``ifelse`` does not take).
CLASSES = ("highlight", "created", "removed", "selected", "client", "nan-origin", "nan", "skipped")
#: The states of a section of an open inner graph (``section_states``): a branch taken or skipped.
SECTION_STATES = ("taken", "skipped")


@dataclass(eq=False)
class DrawNode:
    """One drawn node: its ``key``, ``kind`` (:data:`NODE_KINDS`), ``label`` lines and ``tooltip``.

    ``obj`` is the object drawn: an Apply, a Variable, an Op, a Type, or
    for a ``group`` the list of the Apply nodes it hides. ``count`` is how
    many graph nodes it stands for (a repeated subgraph merged ``×k``, or
    the size of a group). ``classes`` holds its highlight classes.
    ``openable`` says that the node's op has an inner graph (a view draws
    an expand affordance), ``opened`` that it is drawn open, its sections
    (:attr:`GraphModel.sections`) around it.
    """

    key: str
    kind: str
    label: list[str]
    obj: Any
    tooltip: str | None = None
    classes: set[str] = field(default_factory=set)
    count: int = 1
    openable: bool = False
    opened: bool = False


@dataclass(eq=False)
class DrawSection:
    """One section of an open inner graph, drawn as a box inside its node's box.

    ``key`` is ``"<owner>:<label>"``; ``owner`` the key of the open node;
    ``label`` the section's (``body``, ``then``, ``else``); ``members`` the
    keys of the nodes drawn inside it, at any depth; ``state`` ``"taken"``,
    ``"skipped"`` (drawn greyed) or ``None``; ``caption`` its title
    (``then (a < b is True)``).
    """

    key: str
    owner: str
    label: str
    members: list[str]
    state: str | None = None
    caption: str = ""


@dataclass(eq=False)
class DrawEdge:
    """An arrow from ``tail`` to ``head`` (node keys), of ``kind`` :data:`EDGE_KINDS`.

    ``index`` is the position of an input or output (``None`` otherwise);
    ``var`` the key of the variable the arrow carries (the intermediate
    values of the compact style), ``None`` if it carries none. ``key`` is
    unique in its model: ``"<tail>_<head>"``, with ``_<n>`` added for the
    n-th arrow between the same two nodes.
    """

    key: str
    tail: str
    head: str
    kind: str
    label: str = ""
    index: int | None = None
    var: str | None = None
    tooltip: str | None = None
    classes: set[str] = field(default_factory=set)


def is_generator(var: Any) -> bool:
    """Whether ``var`` is a Variable holding a random generator's state (``type.is_generator_state``).

    >>> import symlab.tensor as st
    >>> is_generator(st.dscalar("x"))
    False
    """
    return isinstance(var, Variable) and bool(getattr(var.type, "is_generator_state", False))


def ident(obj: Any) -> Any:
    """How the model finds ``obj`` again: itself for graph objects, by equality for Ops and Types."""
    if isinstance(obj, Apply | Variable):
        return obj
    return obj_key("op" if isinstance(obj, Op) else "type", obj)


class GraphModel:
    """The nodes and edges of one picture, keyed; built by :func:`build_model`.

    ``style`` is ``"structure"`` or ``"compact"``; ``subject`` the
    :class:`~symlab.printing.subject.Subject` drawn; ``nodes`` the drawn
    nodes by key, in drawing order; ``edges`` the arrows. ``total`` counts
    the Apply nodes of the graph, ``folded`` those hidden in ``group``
    nodes, ``merged`` those drawn as an earlier identical node (``×k``).
    """

    def __init__(self, style: str, subject: Subject) -> None:
        self.style = style
        self.subject = subject
        self.nodes: dict[str, DrawNode] = {}
        self.edges: list[DrawEdge] = []
        self.total = 0
        self.folded = 0
        self.merged = 0
        self._objects: dict[str, Any] = {}  # every key -> what it draws (nodes, and variables carried by edges)
        self._where: dict[Any, str] = {}  # ident(obj) -> the key it is drawn under
        self._edge_seen: set[tuple[str, str, str]] = set()
        self._pairs: dict[tuple[str, str], int] = {}
        #: Inputs and constants used by many drawn nodes are drawn once per use (so that one variable does
        #: not pull edges across the whole picture): their key -> the keys of the copies.
        self.copies: dict[str, list[str]] = {}
        #: The sections of the open inner graphs, outermost nodes first (:class:`DrawSection`).
        self.sections: list[DrawSection] = []
        #: Each open node's key -> the keys of its sections.
        self.opened: dict[str, list[str]] = {}
        #: Each key drawn inside a section -> the key of the innermost section holding it.
        self.container: dict[str, str] = {}

    # -- queries ---------------------------------------------------------------------------------
    def obj(self, key: str) -> Any:
        """The object drawn under ``key`` (a node's key, or the key of a variable an edge carries)."""
        try:
            return self._objects[key]
        except KeyError:
            raise KeyError(f"GraphModel.obj: nothing is drawn under the key {key!r}") from None

    def key_of(self, obj: Any) -> str:
        """The key ``obj`` is drawn under: its own, its representative's (``×k``) or its group's.

        A variable that is drawn neither as a node nor on an edge answers
        with the key of its node.
        """
        where = self._where.get(ident(obj))
        if where is None and isinstance(obj, Variable) and obj.owner is not None:
            where = self._where.get(obj.owner)
        if where is None:
            raise KeyError(f"GraphModel.key_of: {obj!s} ({type(obj).__name__}) is not drawn in this picture")
        return where

    def __contains__(self, key: object) -> bool:
        return key in self._objects

    def __len__(self) -> int:
        return len(self.nodes)

    @property
    def groups(self) -> int:
        """How many ``group`` nodes hide folded nodes."""
        return sum(1 for n in self.nodes.values() if n.kind == "group")

    @property
    def hidden(self) -> int:
        """How many graph nodes have no box of their own (folded into groups or merged into a repeat)."""
        return self.folded + self.merged

    @property
    def note(self) -> str | None:
        """What folding hid, in words (``None`` when nothing was folded)."""
        parts = []
        if self.folded:
            groups = self.groups
            parts.append(f"{self.folded} of {self.total} nodes folded into {groups} group{'s' * (groups != 1)}")
        if self.merged:
            parts.append(f"{self.merged} repeated node{'s' * (self.merged != 1)} drawn once (×k)")
        if self.copies:
            spread = [f"{_name(self._objects[k])} ({len(c)} uses)" for k, c in self.copies.items()]
            more = f" and {len(spread) - 3} more" if len(spread) > 3 else ""
            parts.append(f"drawn once per use: {', '.join(spread[:3])}{more}")
        return "; ".join(parts) or None

    def section(self, key: str) -> DrawSection:
        """The section keyed ``key`` (``"a5:body"``); ``KeyError`` if no open node has it."""
        for section in self.sections:
            if section.key == key:
                return section
        raise KeyError(f"GraphModel.section: no open inner graph has a section keyed {key!r}")

    def sections_of(self, key: str) -> list[DrawSection]:
        """The sections holding the node ``key``, outermost first (empty: it is not inside an open node)."""
        found: list[DrawSection] = []
        where = self.container.get(key)
        while where is not None:
            section = self.section(where)
            found.append(section)
            where = self.container.get(section.owner)
        return found[::-1]

    def drawn_keys(self, key: str) -> list[str]:
        """The keys of the nodes that draw ``key``: itself, or its copies (a variable drawn once per use)."""
        if key in self.nodes:
            return [key]
        return list(self.copies.get(key, ()))

    # -- highlight classes --------------------------------------------------------------------------
    def add_class(self, keys: Iterable[str] | str, cls: str) -> None:
        """Add the class ``cls`` to the nodes (or edges, by edge key) ``keys``."""
        for item in self._items(keys, "add_class"):
            item.classes.add(cls)

    def discard_class(self, keys: Iterable[str] | str, cls: str) -> None:
        """Take the class ``cls`` off the nodes (or edges) ``keys``."""
        for item in self._items(keys, "discard_class"):
            item.classes.discard(cls)

    def keys_with(self, cls: str) -> list[str]:
        """The keys of the nodes carrying ``cls``, in drawing order."""
        return [k for k, n in self.nodes.items() if cls in n.classes]

    def _items(self, keys: Iterable[str] | str, where: str) -> list[DrawNode | DrawEdge]:
        keys = [keys] if isinstance(keys, str) else list(keys)
        edges = {e.key: e for e in self.edges} if any(k not in self.nodes for k in keys) else {}
        items: list[DrawNode | DrawEdge] = []
        for key in keys:
            item = self.nodes.get(key) or edges.get(key)
            if item is None:
                raise KeyError(f"GraphModel.{where}: no node or edge has the key {key!r}")
            items.append(item)
        return items

    # -- building (used by build_model) ------------------------------------------------------------
    def _add(self, node: DrawNode, *objs: Any) -> DrawNode:
        self.nodes[node.key] = node
        self._objects[node.key] = node.obj
        for obj in objs:
            self._where.setdefault(ident(obj), node.key)
        return node

    def _edge(self, tail: str, head: str, kind: str, label: str = "", **more: Any) -> None:
        if (tail, head, label) in self._edge_seen:
            return
        self._edge_seen.add((tail, head, label))
        n = self._pairs[tail, head] = self._pairs.get((tail, head), 0) + 1
        key = f"{tail}_{head}" if n == 1 else f"{tail}_{head}_{n}"
        self.edges.append(DrawEdge(key, tail, head, kind, label, **more))

    def _add_copy(self, node: DrawNode, base: str, var: Variable) -> DrawNode:
        """Add ``node``, one more drawing of ``var`` (whose key is ``base``)."""
        self.nodes[node.key] = node
        self._objects[node.key] = var
        self._objects.setdefault(base, var)
        self._where.setdefault(ident(var), base)
        self.copies.setdefault(base, []).append(node.key)
        return node

    def _carry(self, key: str, var: Variable) -> None:
        """Record that edges carry ``var`` under ``key``."""
        self._objects.setdefault(key, var)
        self._where.setdefault(var, key)

    def __repr__(self) -> str:
        note = f", {self.note}" if self.note else ""
        opened = f", open: {', '.join(self.opened)}" if self.opened else ""
        return f"<GraphModel {self.style}: {len(self.nodes)} nodes, {len(self.edges)} edges{note}{opened}>"


def _name(var: Variable) -> str:
    text = str(var)
    return text if len(text) <= 30 else text[:29] + "…"
