"""``diagram``: a graph as a picture, in the colour code of the seeds.

``diagram(obj)`` returns a ``graphviz.Digraph`` (render it with
:func:`symlab.printing.render.to_svg`, or display it in a notebook). Two styles:

``structure``
    the object diagram of the Theano documentation (seed 000): each Apply
    node a blue box, Variables red boxes, Ops green circles, Types purple
    boxes, and one arrow per Python reference, labelled by the field that
    holds it (``owner``, ``inputs[0]``, ``outputs[0]``, ``op``, ``type``).
    An Op or Type used by several nodes is drawn once.
``compact``
    for real graphs: one box per Apply labelled with its op; intermediate
    variables are the edges, graph inputs, constants and outputs are small
    ellipses in their own colours; types and shapes are in the tooltips.

>>> import symlab.tensor as st
>>> from symlab.printing.diagram import diagram
>>> x, y = st.dmatrix("x"), st.dmatrix("y")
>>> z = x + y
>>> z.name = "z"
>>> g = diagram(z)
>>> for line in g.source.splitlines():
...     if "->" in line:
...         print(line.strip())
n0 -> n1 [label=owner]
n0 -> n2 [label=type]
n1 -> n3 [label=op]
n4 -> n2 [label=type]
n1 -> n4 [label="inputs[0]"]
n5 -> n2 [label=type]
n1 -> n5 [label="inputs[1]"]
n1 -> n0 [label="outputs[0]"]
>>> print(g.body[0].strip())
n0 [label=z color=red fillcolor="#f8d7da" shape=box style=filled tooltip="z : TensorType(float64, (?, ?))"]

A graph with more than ``max_nodes`` nodes is *folded*: identical repeated
subgraphs are drawn once (marked ``×k``), and the nodes farthest from both
the inputs and the outputs (the middle of deep chains) are collapsed into
grey summary nodes labelled ``… N nodes …``.

Every user string (names, constant values, op texts) goes through
``graphviz.escape``: ``<script>``, ``<lambda>``, ``a"b`` or ``C:\\new`` show
literally. Node ids are generated (``n0``, ``n1``...), never taken from
names, and no attribute holding a URL is ever written.

This module imports ``graphviz`` only when a diagram is built.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from symlab.graph.basic import Apply, Constant, Variable

#: ``(border colour, fill colour)`` of each kind of object in the structure style (seed 000).
STRUCTURE_COLORS = {
    "apply": ("blue", "#cfe2ff"),
    "variable": ("red", "#f8d7da"),
    "op": ("darkgreen", "#d1e7dd"),
    "type": ("purple", "#e2d9f3"),
}
#: Fill colours of the compact style.
COMPACT_COLORS = {
    "apply": "#cfe2ff",
    "input": "#b7e4c7",
    "constant": "#e9ecef",
    "output": "#9ec5fe",
}
#: The fill of summary (folded) nodes and the border of highlighted ones.
SUMMARY_COLOR = "#f1f3f5"
HIGHLIGHT_COLOR = "darkorange"
DEFAULT_MAX_NODES = 100
STYLES = ("structure", "compact")


# -- text ------------------------------------------------------------------------------------
def _esc(text: Any) -> str:
    """``text`` shown literally by Graphviz.

    Backslashes are doubled (what ``graphviz.escape`` does: no ``\\n``,
    ``\\l`` or ``\\N`` escapes) and ``&`` becomes ``&amp;``, because Graphviz
    decodes HTML entities such as ``&lt;`` even in plain labels. A newline
    in ``text`` stays a line break, written ``\\n``.
    """
    return str(text).replace("\\", "\\\\").replace("&", "&amp;").replace("\n", "\\n")


def _label(*lines: Any) -> Any:
    r"""A DOT label of several user-supplied lines: each escaped, joined by ``\n``, never HTML."""
    from graphviz import nohtml

    return nohtml("\\n".join(_esc(line) for line in lines))


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _var_text(var: Variable) -> str:
    from symlab.printing.pprint import leaf_text

    return leaf_text(var) if var.owner is None else str(var)


def _op_label(op: Any) -> list[str]:
    scalar_op = getattr(op, "scalar_op", None)
    if scalar_op is not None and type(op).__name__ == "Elemwise":
        return [str(scalar_op)] + (["inplace"] if getattr(op, "inplace_pattern", ()) else [])
    text = str(op)
    head, brace, rest = text.partition("{")
    return [head, brace + rest] if brace and head else [text]


# -- what to draw ------------------------------------------------------------------------------
@dataclass
class _Graph:
    outputs: list[Variable]
    inputs: list[Variable] = field(default_factory=list)
    highlight: set[int] = field(default_factory=set)  # ids of Apply nodes and Variables


def _graph_of(obj: Any) -> _Graph | None:
    """The outputs (and inputs, highlighted nodes) to draw for ``obj``; None for an Op or a Type."""
    if isinstance(obj, Variable):
        return _Graph([obj])
    if isinstance(obj, Apply):
        return _Graph(list(obj.outputs), highlight={id(obj)})
    if isinstance(obj, list | tuple):
        outs: list[Variable] = []
        for k, item in enumerate(obj):
            if isinstance(item, Variable):
                outs.append(item)
            elif isinstance(item, Apply):
                outs.extend(item.outputs)
            else:
                raise TypeError(f"diagram: element {k} is {type(item).__name__}, expected a Variable or an Apply")
        return _Graph(outs)
    if hasattr(obj, "graph_at") and hasattr(obj, "steps"):  # a RewriteTrace: its final graph, last step lit
        fg = obj.fgraph
        graph = _Graph(list(fg.outputs), list(fg.inputs))
        accepted = [s for s in obj.steps if s.accepted]
        if accepted:
            present = set(fg.apply_nodes)
            graph.highlight = {id(n) for n in accepted[-1].created if n in present}
        return graph
    fgraph = getattr(getattr(obj, "maker", None), "fgraph", None)  # a compiled Function
    if fgraph is not None:
        obj = fgraph
    outputs, inputs = getattr(obj, "outputs", None), getattr(obj, "inputs", None)
    if isinstance(outputs, list | tuple) and all(isinstance(o, Variable) for o in outputs):
        ins = [i for i in inputs if isinstance(i, Variable)] if isinstance(inputs, list | tuple) else []
        return _Graph(list(outputs), ins)
    return None


def _toposort(outputs: list[Variable]) -> tuple[list[Apply], list[Variable]]:
    """The Apply nodes computing ``outputs``, inputs first, and the leaves they use (no recursion)."""
    order: list[Apply] = []
    leaves: list[Variable] = []
    seen: set[int] = set()
    stack: list[tuple[Any, bool]] = [(v, False) for v in reversed(outputs)]
    while stack:
        item, expanded = stack.pop()
        if expanded:
            order.append(item)
            continue
        if isinstance(item, Variable):
            node = item.owner
            if node is None:
                if id(item) not in seen:
                    seen.add(id(item))
                    leaves.append(item)
                continue
            item = node
        if id(item) in seen:
            continue
        seen.add(id(item))
        stack.append((item, True))
        stack.extend((inp, False) for inp in reversed(item.inputs))
    return order, leaves


# -- folding -----------------------------------------------------------------------------------
@dataclass
class _Fold:
    visible: list[Apply]
    rep: dict[Apply, Apply] = field(default_factory=dict)  # a repeated node -> the one drawn for it
    copies: Counter = field(default_factory=Counter)  # drawn node -> how many nodes it stands for
    group_of: dict[Apply, int] = field(default_factory=dict)  # hidden node -> its summary node
    groups: list[list[Apply]] = field(default_factory=list)
    #: How many graph inputs used only by summary nodes may be drawn.
    leaf_budget: int = 0

    def canonical(self, node: Apply) -> Apply:
        return self.rep.get(node, node)

    def group_inputs(self, is_drawn: Any) -> list[tuple[int, Variable]]:
        """``(group, variable)`` for each variable a summary node uses from outside.

        Constants are left out, and graph inputs not drawn yet too when they
        are more than :attr:`leaf_budget`.
        """
        pairs: list[tuple[int, Variable]] = []
        new_leaves: set[int] = set()
        for k, members in enumerate(self.groups):
            inside = set(members)
            for node in members:
                for inp in node.inputs:
                    owner = inp.owner
                    if owner is None:
                        if isinstance(inp, Constant):
                            continue
                        if not is_drawn(inp):
                            new_leaves.add(id(inp))
                    elif self.canonical(owner) in inside:
                        continue
                    pairs.append((k, inp))
        if len(new_leaves) > self.leaf_budget:
            pairs = [(k, v) for k, v in pairs if id(v) not in new_leaves]
        return pairs


def _signature(node: Apply, key: Any) -> Any:
    sig = (node.op, tuple(key(i) for i in node.inputs), len(node.outputs))
    try:
        hash(sig)
    except TypeError:
        return ("unique", id(node))
    return sig


def _merge_repeats(order: list[Apply], keep: set[int]) -> tuple[dict[Apply, Apply], Counter]:
    """Map each node that computes the same thing as an earlier one to that earlier node."""
    first: dict[Any, Apply] = {}
    rep: dict[Apply, Apply] = {}
    copies: Counter = Counter()

    def key(var: Variable) -> Any:
        owner = var.owner
        if owner is None:
            signature = getattr(var, "signature", None)
            if isinstance(var, Constant) and signature is not None:
                try:
                    return ("const", signature())
                except Exception:  # a constant that cannot describe itself stays unique
                    pass
            return ("leaf", id(var))
        return ("out", id(rep.get(owner, owner)), var.index)

    constant_only: set[Apply] = set()
    for node in order:
        if all(isinstance(i, Constant) if i.owner is None else i.owner in constant_only for i in node.inputs):
            constant_only.add(node)  # a broadcast constant: cheap to repeat, a hub if merged
            continue
        if id(node) in keep:
            continue
        sig = _signature(node, key)
        seen = first.get(sig)
        if seen is None:
            first[sig] = node
        else:
            rep[node] = seen
            copies[seen] += 1
    for node in copies:
        copies[node] += 1
    return rep, copies


def _fold(
    order: list[Apply],
    leaves: list[Variable],
    outputs: list[Variable],
    max_nodes: int,
    highlight: set[int],
    cost: Any,
) -> _Fold:
    if len(order) + len(leaves) + len(outputs) <= max_nodes:
        return _Fold(list(order))
    rep, copies = _merge_repeats(order, highlight)
    uniq = [n for n in order if n not in rep]
    if len(uniq) + len(leaves) + len(outputs) <= max_nodes:
        return _Fold(uniq, rep, copies)

    def canon(node: Apply) -> Apply:
        return rep.get(node, node)

    # Apply-to-Apply edges between the drawn (canonical) nodes.
    producers: dict[Apply, list[Apply]] = {n: [] for n in uniq}
    consumers: dict[Apply, list[Apply]] = {n: [] for n in uniq}
    for node in uniq:
        for inp in node.inputs:
            if inp.owner is not None:
                p = canon(inp.owner)
                producers[node].append(p)
                consumers[p].append(node)

    # Nodes that compute from constants only (a DimShuffle of a constant) go along with their consumers.
    constant_only: set[Apply] = set()
    for node in uniq:
        if all(
            isinstance(i, Constant) if i.owner is None else canon(i.owner) in constant_only for i in node.inputs
        ):
            constant_only.add(node)
    # Keep the highlighted nodes, then alternately the nodes nearest the outputs and nearest the inputs.
    from_outputs = _bfs([canon(o.owner) for o in outputs if o.owner is not None], producers)
    fed = [n for n in uniq if any(i.owner is None and not isinstance(i, Constant) for i in n.inputs)]
    from_inputs = _bfs(fed, consumers)
    candidates = [n for n in uniq if id(n) in highlight]
    for a, b in zip(from_outputs, from_inputs):
        candidates.extend((a, b))
    candidates.extend(from_outputs[len(from_inputs) :])
    budget = max(2, max_nodes - len(outputs) - 2)
    kept: set[Apply] = set()
    spent = 0
    for node in candidates:
        if node in kept or node in constant_only:
            continue
        group = [node] + [p for p in producers[node] if p in constant_only and p not in kept]
        price = sum(cost(n, kept) for n in group)
        if spent + price > budget and kept:
            break
        kept.update(group)
        spent += price
    hidden = [n for n in uniq if n not in kept]

    # The hidden nodes form summary nodes: one per connected piece, or one for all if they are many.
    parent = {n: n for n in hidden}

    def find(n: Apply) -> Apply:
        while parent[n] is not n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    hidden_set = set(hidden)
    for node in hidden:
        for p in producers[node]:
            if p in hidden_set:
                ra, rb = find(node), find(p)
                if ra is not rb:
                    parent[ra] = rb
    pieces: dict[Apply, list[Apply]] = {}
    for node in hidden:
        pieces.setdefault(find(node), []).append(node)
    groups = list(pieces.values())
    if len(groups) > max(1, max_nodes // 10):
        groups = [hidden]
    group_of = {n: k for k, members in enumerate(groups) for n in members}
    leaf_budget = max(0, budget - spent - len(groups))
    return _Fold([n for n in uniq if n in kept], rep, copies, group_of, groups, leaf_budget)


def _bfs(starts: Iterable[Apply], neighbours: dict[Apply, list[Apply]]) -> list[Apply]:
    seen: set[Apply] = set()
    out: list[Apply] = []
    queue = deque()
    for s in starts:
        if s not in seen:
            seen.add(s)
            queue.append(s)
    while queue:
        node = queue.popleft()
        out.append(node)
        for n in neighbours[node]:
            if n not in seen:
                seen.add(n)
                queue.append(n)
    return out


def _group_text(members: list[Apply], copies: Counter) -> tuple[str, str]:
    """The label and tooltip of a summary node."""
    count = sum(copies.get(n, 1) for n in members)
    by_op = Counter(str(n.op) for n in members)
    tip = [f"{_short(op)} × {k}" for op, k in by_op.most_common(10)]
    if len(by_op) > 10:
        tip.append(f"… and {len(by_op) - 10} other ops")
    return f"… {count} nodes …", "\n".join(tip)


# -- drawing -----------------------------------------------------------------------------------
class _Builder:
    """A Digraph whose node ids are generated, keyed by the objects they draw."""

    def __init__(self, **graph_attr: str) -> None:
        import graphviz

        self.dot = graphviz.Digraph(graph_attr=graph_attr, node_attr={"fontsize": "11"}, edge_attr={"fontsize": "9"})
        self.ids: dict[Any, str] = {}
        self.edges: set[tuple[str, str, str]] = set()

    def has(self, key: Any) -> bool:
        return key in self.ids

    def node(self, key: Any, label: Any, lit: bool = False, **attrs: Any) -> str:
        nid = self.ids.get(key)
        if nid is None:
            nid = self.ids[key] = f"n{len(self.ids)}"
            attrs.update(_hl(lit))
            self.dot.node(nid, label, **{k: v for k, v in attrs.items() if v is not None})
        return nid

    def edge(self, a: str, b: str, label: str = "", lit: bool = False, **attrs: Any) -> None:
        if (a, b, label) in self.edges:
            return
        self.edges.add((a, b, label))
        attrs.update(_hl(lit))
        attrs = {k: v for k, v in attrs.items() if v is not None}
        if label:
            attrs["label"] = _label(label)
        self.dot.edge(a, b, **attrs)


def _hl(lit: bool) -> dict[str, str]:
    return {"color": HIGHLIGHT_COLOR, "penwidth": "3"} if lit else {}


def _obj_key(kind: str, obj: Any) -> Any:
    """Key an Op or Type by equality when it is hashable, else by identity."""
    try:
        hash(obj)
    except TypeError:
        return (kind, "id", id(obj))
    return (kind, obj)


class _Structure:
    def __init__(self, b: _Builder, fold: _Fold, highlight: set[int]) -> None:
        self.b, self.fold, self.highlight = b, fold, highlight

    def op(self, op: Any) -> str:
        color, fill = STRUCTURE_COLORS["op"]
        return self.b.node(
            _obj_key("op", op), _label(*_op_label(op)), shape="circle", style="filled",
            color=color, fillcolor=fill, tooltip=_label(_short(str(op), 200)),
        )

    def type(self, t: Any) -> str:
        color, fill = STRUCTURE_COLORS["type"]
        return self.b.node(
            _obj_key("type", t), _label(repr(t)), shape="box", style="filled", color=color, fillcolor=fill
        )

    def group(self, k: int) -> str:
        label, tip = _group_text(self.fold.groups[k], self.fold.copies)
        return self.b.node(
            ("group", k), _label(label), shape="box", style="filled,dashed", fillcolor=SUMMARY_COLOR,
            tooltip=_label(tip),
        )

    def var(self, var: Variable) -> str:
        """Draw ``var`` (its canonical copy) with its type and owner arrows; return its id."""
        owner = var.owner
        if owner is not None:
            owner = self.fold.canonical(owner)
            var = owner.outputs[var.index]
        key = ("var", id(var))
        if self.b.has(key):
            return self.b.ids[key]
        color, fill = STRUCTURE_COLORS["variable"]
        nid = self.b.node(
            key, _label(_short(_var_text(var))), shape="box", style="filled", color=color, fillcolor=fill,
            tooltip=_label(f"{_short(str(var), 200)} : {var.type!r}"), lit=id(var) in self.highlight,
        )
        if owner is not None:
            k = self.fold.group_of.get(owner)
            self.b.edge(nid, self.group(k) if k is not None else self.apply(owner), "owner")
        self.b.edge(nid, self.type(var.type), "type")
        return nid

    def apply(self, node: Apply) -> str:
        """The box of ``node`` (its arrows are drawn by :meth:`expand`)."""
        key = ("apply", id(node))
        if self.b.has(key):
            return self.b.ids[key]
        color, fill = STRUCTURE_COLORS["apply"]
        n = self.fold.copies.get(node, 1)
        lines = ["Apply"] + ([f"×{n}"] if n > 1 else [])
        return self.b.node(
            key, _label(*lines), shape="box", style="filled", color=color, fillcolor=fill,
            tooltip=_label(_short(str(node), 200)), lit=id(node) in self.highlight,
        )

    def expand(self, node: Apply) -> None:
        nid = self.apply(node)
        self.b.edge(nid, self.op(node.op), "op")
        for i, inp in enumerate(node.inputs):
            self.b.edge(nid, self.var(inp), f"inputs[{i}]")
        for j, out in enumerate(node.outputs):
            self.b.edge(nid, self.var(out), f"outputs[{j}]")

    def draw(self, graph: _Graph, leaves: list[Variable]) -> None:
        for out in graph.outputs:
            self.var(out)
        for node in reversed(self.fold.visible):
            self.expand(node)
        for k, inp in self.fold.group_inputs(lambda v: self.b.has(("var", id(v)))):
            self.b.edge(self.group(k), self.var(inp), "inputs")
        for inp in graph.inputs:
            self.var(inp)


class _Compact:
    def __init__(self, b: _Builder, fold: _Fold, highlight: set[int], simple: bool) -> None:
        self.b, self.fold, self.highlight, self.simple = b, fold, highlight, simple

    def var_label(self, var: Variable, output: int | None = None) -> Any:
        if var.name is not None:
            main = var.name
        elif isinstance(var, Constant) or (var.owner is None and output is None):
            main = _var_text(var)
        else:
            main = repr(var.type)
        lines = [_short(main)]
        if not self.simple and main != repr(var.type):
            lines.append(repr(var.type))
        return _label(*lines)

    def tooltip(self, var: Variable) -> Any:
        return _label(f"{_short(str(var), 200)} : {var.type!r}")

    def leaf(self, var: Variable) -> str:
        kind = "constant" if isinstance(var, Constant) else "input"
        return self.b.node(
            ("var", id(var)), self.var_label(var), shape="ellipse", style="filled",
            fillcolor=COMPACT_COLORS[kind], tooltip=self.tooltip(var), lit=id(var) in self.highlight,
        )

    def group(self, k: int) -> str:
        label, tip = _group_text(self.fold.groups[k], self.fold.copies)
        return self.b.node(
            ("group", k), _label(label), shape="box", style="filled,dashed", fillcolor=SUMMARY_COLOR,
            tooltip=_label(tip),
        )

    def source(self, var: Variable) -> str:
        """The id of what produces ``var``: its leaf ellipse, its node's box or a summary node."""
        if var.owner is None:
            return self.leaf(var)
        node = self.fold.canonical(var.owner)
        k = self.fold.group_of.get(node)
        return self.group(k) if k is not None else self.apply(node)

    def apply(self, node: Apply) -> str:
        key = ("apply", id(node))
        if self.b.has(key):
            return self.b.ids[key]
        n = self.fold.copies.get(node, 1)
        lines = [_short(str(node.op))] + ([f"×{n}"] if n > 1 else [])
        return self.b.node(
            key, _label(*lines), shape="box", style="filled", fillcolor=COMPACT_COLORS["apply"],
            tooltip=_label(_short(str(node.op), 200)), lit=id(node) in self.highlight,
        )

    def edge_text(self, var: Variable, i: int, nin: int) -> str:
        parts = [str(i)] if nin > 1 else []
        if var.owner is not None and len(var.owner.outputs) > 1:
            parts.append(f"out {var.index}")
        if var.name is not None and var.owner is not None:
            parts.append(_short(var.name, 30))
        return " ".join(parts)

    def draw(self, graph: _Graph, leaves: list[Variable]) -> None:
        for inp in graph.inputs:
            self.leaf(inp)
        for node in self.fold.visible:
            nid = self.apply(node)
            for i, inp in enumerate(node.inputs):
                lit = id(inp) in self.highlight and inp.owner is not None
                self.b.edge(
                    self.source(inp), nid, self.edge_text(inp, i, len(node.inputs)),
                    tooltip=self.tooltip(inp), lit=lit,
                )
        for k, inp in self.fold.group_inputs(lambda v: self.b.has(("var", id(v)))):
            self.b.edge(self.source(inp), self.group(k))
        for k, out in enumerate(graph.outputs):
            oid = self.b.node(
                ("output", k), self.var_label(out, output=k), shape="ellipse", style="filled",
                fillcolor=COMPACT_COLORS["output"], tooltip=self.tooltip(out), lit=id(out) in self.highlight,
            )
            self.b.edge(self.source(out), oid)


def _structure_cost(b_seen: dict[str, set]) -> Any:
    def cost(node: Apply, kept: set[Apply]) -> int:
        price = 1 + len(node.outputs)
        for key, objs in (("op", [node.op]), ("type", [v.type for v in node.outputs])):
            for obj in objs:
                k = _obj_key(key, obj)
                if k not in b_seen[key]:
                    b_seen[key].add(k)
                    price += 1
        for inp in node.inputs:
            if inp.owner is None and id(inp) not in b_seen["leaf"]:
                b_seen["leaf"].add(id(inp))
                price += 2  # the variable and, often, its type
        return price

    return cost


def _compact_cost(seen: set[int]) -> Any:
    def cost(node: Apply, kept: set[Apply]) -> int:
        price = 1
        for inp in node.inputs:
            if inp.owner is None and id(inp) not in seen:
                seen.add(id(inp))
                price += 1
        return price

    return cost


def diagram(
    obj: Any,
    style: str = "structure",
    highlight: Iterable[Any] = (),
    max_nodes: int = DEFAULT_MAX_NODES,
    var_with_name_simple: bool = True,
) -> Any:
    """A ``graphviz.Digraph`` of ``obj``.

    ``obj`` is a Variable, a list of them, an Apply node, a FunctionGraph, a
    compiled Function, a RewriteTrace (its final graph, with the nodes its
    last accepted step created highlighted), an Op or a Type.
    ``highlight`` lists Apply nodes and Variables to paint. Graphs of more
    than ``max_nodes`` drawn nodes are folded. ``var_with_name_simple=False``
    adds the type under the name of each variable of the compact style.
    """
    if style not in STYLES:
        raise ValueError(f"diagram: style must be one of {STYLES}, received {style!r}")
    if not isinstance(max_nodes, int) or max_nodes < 1:
        raise ValueError(f"diagram: max_nodes must be a positive int, received {max_nodes!r}")
    from symlab.graph.op import Op
    from symlab.graph.type import Type

    graph = _graph_of(obj)
    if graph is None:
        b = _Builder()
        painter = _Structure(b, _Fold([]), set())
        if isinstance(obj, Op):
            painter.op(obj)
        elif isinstance(obj, Type):
            painter.type(obj)
        else:
            raise TypeError(
                "diagram expects a Variable, a list of Variables, an Apply, a FunctionGraph, a compiled "
                f"Function, a RewriteTrace, an Op or a Type; received {type(obj).__name__}"
            )
        return b.dot
    lit = set(graph.highlight)
    lit.update(id(h) for h in highlight)
    order, leaves = _toposort(graph.outputs)
    if style == "structure":
        cost = _structure_cost({"op": set(), "type": set(), "leaf": set()})
        # each Apply also draws its outputs, its op and types: count them for the first test
        size = len(order) * 2 + len(leaves) * 2 + len({_obj_key("op", n.op) for n in order})
        fold = _fold(order, leaves, graph.outputs, max_nodes, lit, cost) if size > max_nodes else _Fold(order)
        b = _Builder()
        _Structure(b, fold, lit).draw(graph, leaves)
    else:
        fold = _fold(order, leaves, graph.outputs, max_nodes, lit, _compact_cost(set()))
        b = _Builder(rankdir="TB")
        _Compact(b, fold, lit, var_with_name_simple).draw(graph, leaves)
    return b.dot


def node_count(digraph: Any) -> int:
    """How many nodes a Digraph made by :func:`diagram` draws."""
    import re

    pattern = re.compile(r"\s*n\d+ \[")
    return sum(1 for line in digraph.body if pattern.match(line))
