"""The inner graphs a view has open: which nodes are open, and what each key inside them names.

A view opens a node with an inner graph (a fused ``Composite``, an ``OpFromGraph``, an ``ifelse``) in
place (:func:`~symlab.printing.model.build_model`'s ``open_inner``). An :class:`InnerGraphs` keeps the
open keys, in the order they were opened, and resolves a key of an inner object (``a5/v0``, nested
``a5/a2/v1``, ``a5/out0`` an inner output) to the object and to the chain of open nodes it is in, with
the inner FunctionGraph it belongs to (where its clients are).

>>> import symlab
>>> import symlab.tensor as st
>>> from symlab.notebook.keys import KeyIndex
>>> from symlab.printing.folding import toposort
>>> from symlab.printing.subject import subject_of
>>> x, y = st.dvector("x"), st.dvector("y")
>>> f = symlab.function([x, y], st.exp(x) * y)
>>> subject = subject_of(f)
>>> inner = InnerGraphs(KeyIndex(subject, *toposort(list(subject.outputs))), subject.fgraph)
>>> inner.open_node("a6")
>>> place = inner.find("a6/a2")
>>> str(place.obj.op), place.owner_key, place.section.label, place.fgraph is place.node.op.scalar_op.fgraph
('exp', 'a6', 'body', True)
>>> [key for key, _ in inner.items()][:3]
['a6/v0', 'a6/v1', 'a6/a2']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from symlab.graph.basic import Apply, Variable
from symlab.graph.inner_graph import InnerSection, has_inner_graph, inner_sections
from symlab.notebook.keys import KeyIndex
from symlab.printing.opening import inner_fgraph

__all__ = ["InnerGraphs", "InnerPlace"]


@dataclass(frozen=True)
class InnerPlace:
    """Where a key inside an open node is: its ``obj``, the open ``node`` (keyed ``owner_key``) whose
    ``section`` holds it, and that section's ``fgraph`` (``None`` when the op gave none)."""

    key: str
    obj: Any
    owner_key: str
    node: Apply
    section: InnerSection
    fgraph: Any

    @property
    def prefix(self) -> str:
        """What the keys of this inner graph start with: ``"<owner key>/"``."""
        return f"{self.owner_key}/"


class InnerGraphs:
    """The open inner graphs of a view of a graph (``index`` its keys, ``fgraph`` the graph or ``None``)."""

    def __init__(self, index: KeyIndex, fgraph: Any) -> None:
        self.index = index
        self.fgraph = fgraph
        #: The keys of the open nodes, in the order they were opened.
        self.open: list[str] = []

    def reindex(self, index: KeyIndex, fgraph: Any) -> None:
        """The graph changed: keep the open keys that still name a node with an inner graph."""
        self.index, self.fgraph = index, fgraph
        kept: list[str] = []
        for key in self.open:
            if self.openable(key):
                kept.append(key)
        self.open = kept

    # -- resolving -----------------------------------------------------------------------------------
    def _context(self, key: str) -> tuple[Any, Any, InnerPlace | None]:
        """``(object, fgraph it is in, its place)`` of ``key`` (an outer key or one inside open nodes)."""
        head, _, rest = key.partition("/")
        obj, fgraph, place = self.index.obj(head), self.fgraph, None
        prefix = head
        for part in rest.split("/") if rest else []:
            if not isinstance(obj, Apply) or not has_inner_graph(obj.op):
                return None, None, None
            found = None
            for section in inner_sections(obj, fgraph):
                if not section.owned:
                    continue
                fg = inner_fgraph(obj.op, section)
                found = _in_section(section, fg, part)
                if found is not None:
                    place = InnerPlace(f"{prefix}/{part}", found, prefix, obj, section, fg)
                    fgraph = fg
                    break
            if found is None:
                return None, None, None
            obj, prefix = found, f"{prefix}/{part}"
        return obj, fgraph, place

    def find(self, key: str) -> InnerPlace | None:
        """Where the inner key ``key`` is (``None``: not a key inside a node with an inner graph)."""
        if "/" not in key:
            return None
        return self._context(key)[2]

    def obj(self, key: str) -> Any:
        """The object ``key`` names, outside or inside inner graphs (``None``: nothing)."""
        return self._context(key)[0]

    def openable(self, key: str) -> bool:
        """True when ``key`` names an Apply node whose op has an inner graph."""
        obj = self.obj(key)
        return isinstance(obj, Apply) and has_inner_graph(obj.op) and bool(inner_sections(obj, self._graph_of(key)))

    def _graph_of(self, key: str) -> Any:
        return self._context(key)[1]

    # -- opening ---------------------------------------------------------------------------------------------
    def open_node(self, key: str) -> None:
        """Open ``key`` (and the open nodes holding it); ``ValueError`` if it has no inner graph."""
        if not self.openable(key):
            raise ValueError(f"{key!r} is not a node with an inner graph")
        parts = key.split("/")
        for n in range(1, len(parts) + 1):
            outer = "/".join(parts[:n])
            if outer not in self.open and self.openable(outer):
                self.open.append(outer)

    def close(self, key: str) -> list[str]:
        """Close the open node ``key`` and the nodes open inside it; the keys closed."""
        closed = [k for k in self.open if k == key or k.startswith(key + "/")]
        self.open = [k for k in self.open if k not in closed]
        return closed

    def is_open(self, key: str) -> bool:
        return key in self.open

    # -- what is inside ------------------------------------------------------------------------------------
    def items(self) -> list[tuple[str, Any]]:
        """Every ``(key, inner node or variable)`` of the open nodes' own graphs (nested ones when open too)."""
        found: list[tuple[str, Any]] = []
        for key in self.open:
            if "/" in key and key.rsplit("/", 1)[0] not in self.open:
                continue  # inside a node that is closed
            obj, fgraph, _ = self._context(key)
            if not isinstance(obj, Apply):
                continue
            for section in inner_sections(obj, fgraph):
                fg = inner_fgraph(obj.op, section) if section.owned else None
                if fg is None:
                    continue
                seen: set[int] = set()
                for var in fg.inputs:
                    seen.add(id(var))
                    found.append((f"{key}/{fg.key(var)}", var))
                for node in fg.toposort():
                    found.append((f"{key}/{fg.key(node)}", node))
                    for var in (*node.inputs, *node.outputs):
                        if id(var) not in seen:
                            seen.add(id(var))
                            found.append((f"{key}/{fg.key(var)}", var))
        return found


def _in_section(section: InnerSection, fg: Any, part: str) -> Any:
    """The object ``part`` (an inner key, or ``out<k>``) names in an owned section, or ``None``."""
    if part.startswith("out") and part[3:].isdigit():
        k = int(part[3:])
        return section.outputs[k] if k < len(section.outputs) else None
    if fg is None:
        return None
    try:
        found = fg.by_key(part)
    except KeyError:
        return None
    return found if isinstance(found, Apply | Variable) else None


# -- what a view says about an object inside an open node ----------------------------------------------------
class InnerIndex:
    """A :class:`~symlab.notebook.keys.KeyIndex` look-alike for one open inner graph (``place``'s), so that
    :func:`~symlab.notebook.keys.selection_marks` lights an inner selection's inputs and clients by their keys
    in this copy of the inner graph (an op opened twice draws its graph twice, under two prefixes)."""

    def __init__(self, place: InnerPlace) -> None:
        self.prefix, self.fg = place.prefix, place.fgraph
        self.subject = _NoGraph()
        outs = {id(v): k for k, v in enumerate(place.section.outputs)}
        self._outs = outs

    def key(self, obj: Any) -> str | None:
        if self.fg is None or not isinstance(obj, Apply | Variable):
            return None
        try:
            return self.prefix + self.fg.key(obj)
        except KeyError:
            return None

    def drawn(self, obj: Any, model: Any, key: str | None = None) -> list[str]:
        key = key or self.key(obj)
        if key is None or model is None:
            return []
        found = list(model.drawn_keys(key))
        found += [e.key for e in model.edges if e.var == key]
        if not found and isinstance(obj, Apply | Variable):
            owner = obj if isinstance(obj, Apply) else obj.owner
            group = _group_holding(model, owner, self.prefix)
            found = [group] if group else []
        return found

    def clients(self, var: Variable) -> list[tuple[Any, int]]:
        """``var``'s uses inside the inner graph (an inner output's use by the node: as the output node's)."""
        if self.fg is None or var not in self.fg:
            return []
        return [c for c in self.fg.clients[var] if c[0] != "output"]

    def output_keys(self, var: Any) -> list[str]:
        """The inner output nodes drawing ``var`` (``<prefix>out<k>``)."""
        k = self._outs.get(id(var))
        return [] if k is None else [f"{self.prefix}out{k}"]


class _NoGraph:
    fgraph = None


def _group_holding(model: Any, node: Any, prefix: str) -> str | None:
    """The key of the inner folded group (under ``prefix``) hiding ``node``, if one does."""
    for key, drawn in model.nodes.items():
        if drawn.kind == "group" and key.startswith(prefix) and node in drawn.obj:
            return key
    return None


def inner_marks(place: InnerPlace, model: Any, key: str) -> dict[str, list[str]]:
    """The marks of a selection inside an open node: it, its inputs and its clients in the inner graph."""
    from symlab.notebook.keys import selection_marks

    index = InnerIndex(place)
    marks = selection_marks(index, model, place.obj, key, clients=index.clients)  # type: ignore[arg-type]
    outs = place.obj.outputs if isinstance(place.obj, Apply) else [place.obj]
    for out in outs:
        for k in index.output_keys(out):
            if k in model.nodes and k != key:
                marks.setdefault(k, ["client"])
    return marks


def section_text(model: Any, section_key: str) -> str:
    """``then (a < b is True) of IfElse`` : a section of an open node, in words."""
    section = model.section(section_key)
    owner = model.obj(section.owner)
    what = str(owner.op) if isinstance(owner, Apply) else section.owner
    state = {"skipped": ", not taken", "taken": ", taken"}.get(section.state or "", "")
    return f"{section.caption} of {what} [{section.owner}]{state}"
