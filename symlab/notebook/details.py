"""What a view's details panel says about a graph object: its kind, name, op, type, owner, inputs, clients.

:func:`describe` returns the panel as rows; each row has a ``label``, an optional ``text``
and ``items``, the objects it names. The view turns the items into links (their keys in the
picture). Clients come from the FunctionGraph when there is one (seed 000: ``(node, i)`` or
``('output', i)``); without a graph, the users found in the drawn graph are listed instead.

>>> import symlab.tensor as st
>>> from symlab.graph.fg import FunctionGraph
>>> x = st.dvector("x")
>>> fg = FunctionGraph([x], [st.exp(x) + 1.0])
>>> rows = describe(fg.inputs[0], fg)
>>> {row.label: row.plain() for row in rows}["clients"]
['(Elemwise{exp,no_inplace}(x), 0)']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from symlab.graph.basic import Apply, Constant, Variable
from symlab.graph.inner_graph import has_inner_graph, inner_sections
from symlab.graph.op import Op
from symlab.graph.type import Type

__all__ = ["Row", "describe", "kind_of", "title_of"]


@dataclass
class Row:
    """One row of the panel: ``label``, a ``text`` and the graph objects it names (``items``)."""

    label: str
    text: str | None = None
    items: list[tuple[str, Any]] = field(default_factory=list)  # (text, object or None)
    empty: str = "none"

    def plain(self) -> Any:
        """The row as plain data: its text, or the texts of its items."""
        if self.items:
            return [text for text, _ in self.items]
        return self.text if self.text is not None else self.empty

    def as_json(self, key: Callable[[Any], str | None]) -> dict[str, Any]:
        items = []
        for text, obj in self.items:
            item: dict[str, Any] = {"text": text}
            k = key(obj) if obj is not None else None
            if k:
                item["key"] = k
            items.append(item)
        out: dict[str, Any] = {"label": self.label, "items": items, "empty": self.empty}
        if self.text is not None:
            out["text"] = self.text
        return out


def kind_of(obj: Any, fgraph: Any = None) -> str:
    """``apply``, ``input``, ``constant``, ``output``, ``variable``, ``op``, ``type`` or ``group``."""
    if isinstance(obj, Apply):
        return "apply"
    if isinstance(obj, Constant):
        return "constant"
    if isinstance(obj, Variable):
        if fgraph is not None and obj in fgraph.outputs:
            return "output"
        if obj.owner is None:
            return "input"
        return "variable"
    if isinstance(obj, Op):
        return "op"
    if isinstance(obj, Type):
        return "type"
    return "group"


def title_of(obj: Any, kind: str) -> str:
    """The panel's title for ``obj`` of kind ``kind`` (:func:`kind_of`): ``apply node exp``, ``input x``, ...

    >>> import symlab.tensor as st
    >>> x = st.dvector("x")
    >>> title_of(st.exp(x).owner, "apply"), title_of(x, "input"), title_of([x.owner], "group")
    ('apply node Elemwise{exp,no_inplace}', 'input x', 'folded group of 1 nodes')
    """
    if kind == "group":
        return f"folded group of {len(obj)} nodes"
    if kind == "apply":
        return f"apply node {obj.op}"
    if kind in ("op", "type"):
        return f"{kind} {obj!r}" if kind == "type" else f"op {obj}"
    return f"{kind} {obj}"


def _props(op: Any) -> str:
    names = getattr(op, "__props__", ()) or ()
    if not names:
        return "(none)"
    return ", ".join(f"{name}={getattr(op, name, '?')!r}" for name in names)


def _client_text(client: tuple[Any, int]) -> str:
    node, i = client
    return f"('output', {i})" if node == "output" else f"({node}, {i})"


def _users(var: Variable, nodes: list[Apply], outputs: tuple[Variable, ...] = ()) -> list[tuple[Any, int]]:
    found: list[tuple[Any, int]] = [(node, i) for node in nodes for i, inp in enumerate(node.inputs) if inp is var]
    return found + [("output", k) for k, out in enumerate(outputs) if out is var]


def describe(obj: Any, fgraph: Any = None, nodes: list[Apply] | None = None,
             outputs: tuple[Variable, ...] = ()) -> list[Row]:
    """The panel's rows for ``obj``.

    ``fgraph`` gives its clients; without one, ``nodes`` (the drawn graph) and ``outputs`` (the drawn
    results, as ``('output', k)``) say who uses it in the picture.
    """
    kind = kind_of(obj, fgraph)
    if kind == "apply":
        return _apply_rows(obj, fgraph, nodes, outputs)
    if kind in ("input", "constant", "output", "variable"):
        return _variable_rows(obj, kind, fgraph, nodes, outputs)
    if kind == "op":
        users = [n for n in (nodes or []) if n.op == obj]
        return [Row("kind", "op"), Row("op", str(obj)), Row("props", _props(obj)),
                Row("class", type(obj).__name__), Row("applied by", items=[(str(n), n) for n in users])]
    if kind == "type":
        return [Row("kind", "type"), Row("type", repr(obj)), Row("dtype", str(getattr(obj, "dtype", "-"))),
                Row("static shape", _shape(obj))]
    members = list(obj) if isinstance(obj, list | tuple) else []
    ops: dict[str, int] = {}
    for n in members:
        ops[str(n.op)] = ops.get(str(n.op), 0) + 1
    return [Row("kind", "folded group"), Row("hides", f"{len(members)} nodes"),
            Row("ops", ", ".join(f"{op} ×{k}" for op, k in sorted(ops.items(), key=lambda kv: -kv[1])[:8]))]


def _shape(t: Any) -> str:
    shape = getattr(t, "shape", None)
    if shape is None:
        return "-"
    return "(" + ", ".join("?" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _variable_rows(var: Variable, kind: str, fgraph: Any, nodes: list[Apply] | None,
                   outputs: tuple[Variable, ...]) -> list[Row]:
    rows = [Row("kind", kind), Row("name", var.name if var.name is not None else "(unnamed)"),
            Row("type", repr(var.type)), Row("dtype", str(getattr(var.type, "dtype", "-"))),
            Row("static shape", _shape(var.type))]
    if isinstance(var, Constant):
        text = str(var.data)
        rows.append(Row("value", text if len(text) <= 200 else text[:199] + "…"))
    if var.owner is not None:
        rows.append(Row("owner", f"output {var.index} of", [(str(var.owner), var.owner)]))
    else:
        rows.append(Row("owner", None, empty="none (a root: an input or a constant)"))
    if fgraph is not None and var in fgraph:
        clients = fgraph.clients[var]
        rows.append(Row("clients", None, [(_client_text(c), None if c[0] == "output" else c[0]) for c in clients],
                        empty="[] (unused)"))
    else:
        users = _users(var, nodes or [], outputs)
        rows.append(Row("used by (in this picture)", None,
                        [(_client_text(c), None if c[0] == "output" else c[0]) for c in users],
                        empty="nothing drawn here"))
    return rows


def _apply_rows(node: Apply, fgraph: Any, nodes: list[Apply] | None, outputs: tuple[Variable, ...]) -> list[Row]:
    rows = [Row("kind", "apply node"), Row("op", str(node.op)), Row("props", _props(node.op)),
            Row("inputs", None, [(str(v), v) for v in node.inputs]),
            Row("outputs", None, [(f"{v} : {v.type!r}", v) for v in node.outputs])]
    clients: list[tuple[str, Any]] = []
    for out in node.outputs:
        if fgraph is not None and out in fgraph:
            found = fgraph.clients[out]
        else:
            found = _users(out, nodes or [], outputs)
        clients.extend((_client_text(c), None if c[0] == "output" else c[0]) for c in found)
    label = "clients" if fgraph is not None else "used by (in this picture)"
    rows.append(Row(label, None, clients, empty="[] (unused)"))
    if has_inner_graph(node.op):
        rows.append(inner_graph_row(node, fgraph))
    return rows


def inner_graph_row(node: Apply, fgraph: Any = None) -> Row:
    """The row saying what ``node``'s inner graph holds: each section and its size.

    >>> import symlab.scalar as ss
    >>> from symlab.scalar.composite import Composite
    >>> x = ss.float64("x")
    >>> node = Composite([x], [ss.exp(ss.neg(x))]).make_node(ss.float64("y"))
    >>> inner_graph_row(node).plain()
    'body: 2 nodes'
    """
    from symlab.printing.opening import caption

    parts = []
    for section in inner_sections(node, fgraph):
        n = len(section.nodes)
        where = "" if section.owned else " of the outer graph"
        parts.append(f"{caption(section, node.op)}: {n} node{'s' * (n != 1)}{where}")
    return Row("inner graph", "; ".join(parts) or "(empty)")
