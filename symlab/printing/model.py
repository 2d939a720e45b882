"""What a picture of a graph draws: nodes and edges under stable keys, before any DOT is written.

:func:`build_model` turns any displayable object (see
:func:`~symlab.printing.subject.subject_of`) into a :class:`GraphModel`:
ordered :class:`DrawNode` objects keyed by strings, :class:`DrawEdge`
objects between those keys, and how many nodes folding hid. Pictures
(:func:`symlab.printing.diagram.to_dot`) and widgets read the same model,
and ask it which object a key draws (:meth:`GraphModel.obj`) or under which
key an object is drawn (:meth:`GraphModel.key_of`).

Keys are stable. A FunctionGraph's objects are drawn under their keys
``fgraph.key(obj)`` (``a<n>`` for an Apply node, ``v<n>`` for a variable),
given when they enter the graph and kept while they stay, so a node keeps
its key when others are replaced around it:

>>> import symlab.tensor as st
>>> from symlab.graph.fg import FunctionGraph
>>> x, y = st.dmatrix("x"), st.dmatrix("y")
>>> fg = FunctionGraph([x, y], [(x + y) * 2])
>>> model = build_model(fg, style="compact")
>>> list(model.nodes)
['v0', 'v1', 'a2', 'a5', 'v4', 'a7', 'out0']
>>> model.obj("a2") is fg.outputs[0].owner.inputs[0].owner
True
>>> model.nodes["a2"].label, model.nodes["a2"].kind
(['Elemwise{add,no_inplace}'], 'apply')
>>> [(e.tail, e.head, e.kind, e.index) for e in model.edges][:2]
[('v0', 'a2', 'input', 0), ('v1', 'a2', 'input', 1)]

Bare Variables and Apply nodes have no graph: they are numbered by a walk
from the inputs, as a FunctionGraph of them would number them:

>>> z = x + y
>>> model = build_model(z)
>>> {key: node.kind for key, node in model.nodes.items()}
{'v3': 'variable', 'a2': 'apply', 'type0': 'type', 'op0': 'op', 'v0': 'variable', 'v1': 'variable'}
>>> model.key_of(z.owner), model.key_of(z.owner.op)
('a2', 'op0')

The ``dataflow`` style draws every variable as a box and every Apply node
as a small op node between them (micrograd's picture): the style for values,
which an edge cannot carry. ``lines`` adds the caller's lines under a node's
label (a value, a gradient), by object or key:

>>> x = st.dscalar("x")
>>> model = build_model(st.tanh(x * 2), style="dataflow", lines={x: ["0.5"]})
>>> [(key, node.kind, node.label) for key, node in model.nodes.items()]  # doctest: +NORMALIZE_WHITESPACE
[('v0', 'input', ['x', '0.5']), ('v1', 'constant', ['2']), ('a2', 'apply', ['mul']),
 ('v3', 'variable', ['float64 ()']), ('a4', 'apply', ['tanh']), ('v5', 'output', ['output 0', 'float64 ()'])]

Highlight classes (:data:`CLASSES`) mark nodes: ``highlight`` for the
``highlight=`` argument and the Apply node a picture is about, ``created``
for what a rewrite step just made, ``removed``, ``selected``, ``client``
for widgets (:meth:`GraphModel.add_class`), and ``nan-origin`` / ``nan``
for where a NaN or an infinity is born and where it flows. Keys are made of
ASCII letters and digits only: never a user's name, always a valid DOT id.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from symlab.graph.basic import Apply, Constant, Variable
from symlab.printing.folding import Fold, compact_cost, dataflow_cost, fold_graph, obj_key, structure_cost, toposort
from symlab.printing.subject import Subject, subject_of

STYLES = ("structure", "compact", "dataflow")
DEFAULT_MAX_NODES = 100
#: The kinds of drawn nodes.
NODE_KINDS = ("apply", "variable", "input", "constant", "output", "op", "type", "group", "cut")
#: The kinds of edges: a node's input or output, a variable's owner, an Apply's op, a variable's type,
#: the inputs of a folded group, and where a part of a graph is cut (its value goes on to nodes not drawn).
EDGE_KINDS = ("input", "output", "owner", "op", "type", "fold", "cut")
#: The highlight classes a node or an edge may carry.
CLASSES = ("highlight", "created", "removed", "selected", "client", "nan-origin", "nan")


@dataclass(eq=False)
class DrawNode:
    """One drawn node: its ``key``, ``kind`` (:data:`NODE_KINDS`), ``label`` lines and ``tooltip``.

    ``obj`` is the object drawn: an Apply, a Variable, an Op, a Type, or
    for a ``group`` the list of the Apply nodes it hides. ``count`` is how
    many graph nodes it stands for (a repeated subgraph merged ``×k``, or
    the size of a group). ``classes`` holds its highlight classes.
    """

    key: str
    kind: str
    label: list[str]
    obj: Any
    tooltip: str | None = None
    classes: set[str] = field(default_factory=set)
    count: int = 1


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


def ident(obj: Any) -> Any:
    """How the model finds ``obj`` again: itself for graph objects, by equality for Ops and Types."""
    if isinstance(obj, Apply | Variable):
        return obj
    from symlab.graph.op import Op

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
        return f"<GraphModel {self.style}: {len(self.nodes)} nodes, {len(self.edges)} edges{note}>"


def _name(var: Variable) -> str:
    text = str(var)
    return text if len(text) <= 30 else text[:29] + "…"


# -- keys -------------------------------------------------------------------------------------
class _Keys:
    """The keys of a graph's nodes and variables: the graph's own, or a numbering from the inputs.

    Without a graph, the numbering is the one a FunctionGraph of the drawn
    variables would give: the leaves that are not constants first, then each
    node of ``order`` (inputs first) ``a<n>`` after the constants it brings
    in, its outputs the numbers that follow. An object a graph cannot key (it
    should not happen) gets ``u<n>``, which no graph key can be.
    """

    def __init__(self, subject: Subject, order: list[Apply], leaves: list[Variable]) -> None:
        self._graph_key = subject.key
        self._keys: dict[Any, str] = {}
        self._taken: set[str] = set()
        self._order, self._leaves = order, leaves
        self._index: dict[str, Any] | None = None
        if self._graph_key is None:
            serial = 0
            for leaf in leaves:  # the inputs, as a FunctionGraph of them would number them
                if not isinstance(leaf, Constant):
                    self._keys[leaf] = f"v{serial}"
                    serial += 1
            for node in order:
                for inp in node.inputs:
                    if inp.owner is None and inp not in self._keys:
                        self._keys[inp] = f"v{serial}"
                        serial += 1
                self._keys[node] = f"a{serial}"
                for j, out in enumerate(node.outputs):
                    self._keys[out] = f"v{serial + 1 + j}"
                serial += 1 + len(node.outputs)
            for leaf in leaves:
                if leaf not in self._keys:
                    self._keys[leaf] = f"v{serial}"
                    serial += 1
            self._taken.update(self._keys.values())

    def __call__(self, obj: Apply | Variable) -> str:
        key = self._keys.get(obj)
        if key is not None:
            return key
        try:
            key = self._graph_key(obj) if self._graph_key is not None else None
        except KeyError:
            key = None
        if key is None or key in self._taken:
            key = f"u{len(self._keys)}"
        self._keys[obj] = key
        self._taken.add(key)
        return key

    def resolve(self, key: str) -> Any:
        """The node or variable of the drawn graph whose key is ``key``, or ``None``."""
        if self._index is None:
            index: dict[str, Any] = {}
            for node in self._order:
                index[self(node)] = node
                for var in (*node.inputs, *node.outputs):
                    index.setdefault(self(var), var)
            for leaf in self._leaves:
                index.setdefault(self(leaf), leaf)
            self._index = index
        return self._index.get(key)


def graph_keys(subject: Subject, order: list[Apply], leaves: list[Variable]) -> Any:
    """The key function of a graph's pictures: ``subject.key`` (a FunctionGraph's), or a numbering from the
    inputs for bare Variables (the one :func:`build_model` gives them). Pass it as ``build_model(key=...)``
    so that every picture of the graph, folded or a part, keeps the same keys."""
    return subject.key if subject.key is not None else _Keys(subject, order, leaves)


# -- building -----------------------------------------------------------------------------------
def _marks(
    subject: Subject, highlight: Iterable[Any], classes: Mapping[str, Iterable[Any]] | None, keys: _Keys
) -> dict[int, set[str]]:
    """``id(obj) -> classes`` of every marked object; string items are keys of the drawn graph."""
    marks: dict[int, set[str]] = {}
    wanted: list[tuple[str, Iterable[Any]]] = [("highlight", subject.highlight), ("created", subject.created)]
    wanted.append(("highlight", highlight))
    wanted.extend((classes or {}).items())
    for cls, objs in wanted:
        if isinstance(objs, str | Apply | Variable):
            objs = [objs]
        for obj in objs:
            if isinstance(obj, str):
                obj = keys.resolve(obj)
                if obj is None:
                    continue
            marks.setdefault(id(obj), set()).add(cls)
    return marks


def _single(model: GraphModel) -> GraphModel:
    """The picture of a lone Op (a circle) or Type (a box)."""
    from symlab.printing.painters import StructurePainter

    painter = StructurePainter(model, Fold([]), _Keys(model.subject, [], []), {})
    if model.subject.kind == "op":
        painter.op(model.subject.obj)
    else:
        painter.type(model.subject.obj)
    return model


def build_model(
    obj: Any,
    style: str = "structure",
    max_nodes: int = DEFAULT_MAX_NODES,
    highlight: Iterable[Any] = (),
    classes: Mapping[str, Iterable[Any]] | None = None,
    var_with_name_simple: bool = True,
    *,
    lines: Mapping[Any, Iterable[str]] | None = None,
    cut: Iterable[Variable] = (),
    key: Any = None,
    caller: str = "build_model",
    fold: Fold | None = None,
) -> GraphModel:
    """The :class:`GraphModel` of ``obj``: any object :func:`~symlab.printing.subject.subject_of` accepts.

    ``style`` is ``"structure"`` (seed 000's object diagram),
    ``"compact"`` (one box per node) or ``"dataflow"`` (a box per
    variable, a small op node per Apply; repeats are never merged, as
    each node holds its own values). Graphs of more than ``max_nodes``
    drawn nodes are folded. ``highlight`` lists nodes and variables (or
    their keys) to mark with the ``highlight`` class; ``classes`` maps more
    classes to objects or keys, e.g. ``{"selected": [node]}``. Marked
    nodes stay visible when the graph is folded. ``var_with_name_simple=False``
    adds the type under the name of each variable of the compact style.
    ``lines`` maps objects (or keys) to lines added under the label of
    the nodes that draw them (each copy of a variable drawn once per use;
    in the compact style an intermediate variable's edge). ``caller``
    names the function in error messages.

    To draw a part of a graph (a widget's focus on a neighbourhood), give
    as ``obj`` the variables the part computes, as ``cut`` the variables
    where it starts (drawn as leaves, their owners left out) and as ``key``
    the key function of the whole picture, so the part keeps its keys.

    ``fold`` draws what a given :class:`~symlab.printing.folding.Fold` leaves
    visible instead of folding by count (``max_nodes`` is then not read): the
    widgets' folding by meaning (:class:`~symlab.printing.grouping.GroupTree`).

    >>> import symlab.tensor as st
    >>> x = st.dvector("x")
    >>> y = x
    >>> for _ in range(30):
    ...     y = st.exp(y)
    >>> model = build_model(y, style="compact", max_nodes=10)
    >>> model.note
    '24 of 30 nodes folded into 1 group'
    >>> model.nodes["g0"].label, model.nodes["g0"].count
    (['… 24 nodes …'], 24)
    """
    if style not in STYLES:
        raise ValueError(f"{caller}: style must be one of {STYLES}, received {style!r}")
    if not isinstance(max_nodes, int) or isinstance(max_nodes, bool) or max_nodes < 1:
        raise ValueError(f"{caller}: max_nodes must be a positive int, received {max_nodes!r}")
    subject = obj if isinstance(obj, Subject) else subject_of(obj, caller)
    if key is not None:
        subject = replace(subject, key=key)
    model = GraphModel(style, subject)
    if not subject.is_graph:
        return _single(model)
    from symlab.printing.painters import CompactPainter, DataflowPainter, StructurePainter

    outputs, inputs = list(subject.outputs), list(subject.inputs)
    order, leaves = toposort(outputs, frozenset(id(v) for v in cut))
    keys = _Keys(subject, order, leaves)
    marks = _marks(subject, highlight, classes, keys)
    lit = set(marks)
    if fold is not None:
        painter = {"structure": StructurePainter, "dataflow": DataflowPainter}.get(style)
        if painter is None:
            CompactPainter(model, fold, keys, marks, simple=var_with_name_simple).draw(outputs, inputs)
        else:
            painter(model, fold, keys, marks).draw(outputs, inputs)
    elif style == "structure":
        # each Apply also draws its outputs, its op and types: count them before folding
        size = len(order) * 2 + len(leaves) * 2 + len({obj_key("op", n.op) for n in order})
        cost = structure_cost({"op": set(), "type": set(), "leaf": set()})
        fold = fold_graph(order, leaves, outputs, max_nodes, lit, cost) if size > max_nodes else Fold(list(order))
        StructurePainter(model, fold, keys, marks).draw(outputs, inputs)
    elif style == "dataflow":
        # a box per variable too: count them before folding; a marked variable keeps its owner visible
        size = len(order) + sum(len(n.outputs) for n in order) + len(leaves)
        lit.update(id(n) for n in order if any(id(o) in marks for o in n.outputs))
        fold = (fold_graph(order, leaves, outputs, max_nodes, lit, dataflow_cost(set()), merge=False)
                if size > max_nodes else Fold(list(order)))
        DataflowPainter(model, fold, keys, marks).draw(outputs, inputs)
    else:
        fold = fold_graph(order, leaves, outputs, max_nodes, lit, compact_cost(set()))
        CompactPainter(model, fold, keys, marks, simple=var_with_name_simple).draw(outputs, inputs)
    _count(model, order, fold)
    if lines:
        _add_lines(model, lines, keys)
    return model


def _add_lines(model: GraphModel, lines: Mapping[Any, Iterable[str]], keys: _Keys) -> None:
    """Add the caller's ``lines`` under the labels of the nodes (or compact edges) drawing their objects."""
    extra: dict[int, list[str]] = {}
    for obj, more in lines.items():
        if isinstance(obj, str):
            obj = keys.resolve(obj)
            if obj is None:
                continue
        extra[id(obj)] = [str(line) for line in more]
    for node in model.nodes.values():
        more = extra.get(id(node.obj))
        if more and node.kind != "group":
            node.label = [*node.label, *more]
    for edge in model.edges:
        var = model._objects.get(edge.var) if edge.var is not None else None
        more = extra.get(id(var)) if var is not None else None
        if more and model.nodes[edge.head].obj is not var:  # not when a node already shows it (an output)
            edge.label = "\n".join([edge.label, *more] if edge.label else more)


def _count(model: GraphModel, order: list[Apply], fold: Fold) -> None:
    """Fill in what folding hid, and where the nodes without a box of their own went."""
    model.total = len(order)
    model.folded = sum(fold.copies.get(n, 1) for members in fold.groups for n in members)
    model.merged = sum(fold.copies.get(n, 1) - 1 for n in fold.visible)
    where = model._where
    for node, rep in fold.rep.items():
        key = where.get(rep)
        if key is not None:
            where.setdefault(node, key)
            for out, rep_out in zip(node.outputs, rep.outputs):
                if rep_out in where:
                    where.setdefault(out, where[rep_out])


def build_part(
    nodes: Iterable[Apply],
    style: str,
    key: Any,
    fgraph: Any = None,
    outputs: Iterable[Variable] = (),
    classes: Mapping[str, Iterable[Any]] | None = None,
    uses: Any = None,
) -> GraphModel:
    """The picture of a part of a graph: the Apply ``nodes`` (in order), under the whole graph's ``key``.

    The part starts where its nodes read variables computed outside it: each is drawn as the box of the
    node that computes it, without that node's own inputs. It ends at the variables no node of the part
    reads, and at the graph's own ``outputs`` it computes. Widgets draw a neighbourhood with it (a
    selection's, a rewrite step's), keeping every key of the whole.

    In the compact style a graph output keeps its node ``out<k>`` (``k`` its index in ``outputs``); a
    value the part computes for nodes it does not draw ends in a dashed *cut* stub, ``cut<key>``
    (``cutv12``), saying how many clients it has further on (``uses(var)``, or the ``fgraph``'s clients):
    never labelled as an output of the graph.

    >>> import symlab.tensor as st
    >>> from symlab.graph.fg import FunctionGraph
    >>> x = st.dvector("x")
    >>> fg = FunctionGraph([x], [st.exp(st.sin(st.cos(x)))])
    >>> cos, sin, exp = fg.toposort()
    >>> model = build_part([sin], "compact", fg.key, fg)
    >>> [model.obj(k).op.scalar_op.name for k, n in model.nodes.items() if n.kind == "apply"]
    ['sin', 'cos']
    >>> [e.tail for e in model.edges if e.head == fg.key(cos)]  # where the part starts: cos's input left out
    []
    >>> fg.key(exp) in model.nodes
    False
    >>> [(k, n.kind, n.label) for k, n in model.nodes.items() if n.kind in ("cut", "output")]
    [('cutv4', 'cut', ['to 1 more client'])]
    """
    nodes = list(nodes)
    inside = set(nodes)
    read = {i for n in nodes for i in n.inputs}
    ends_wanted = set(outputs)
    if uses is None:
        def uses(var: Variable) -> int:
            found = fgraph.clients.get(var, ()) if fgraph is not None else ()
            return sum(1 for c, _ in found if c == "output" or c not in inside)
    # the part ends at what no node of it reads, at the graph's outputs, and (compact) where values go on
    ends = [o for n in nodes for o in n.outputs
            if o not in read or o in ends_wanted or (style == "compact" and uses(o) > 0)]
    cut = [i for n in nodes for i in n.inputs if i.owner is not None and i.owner not in inside]
    part = Subject("list", ends, tuple(ends), (), fgraph, key)
    model = build_model(part, style, max_nodes=10**9, classes=classes, cut=cut, key=key)
    if style == "compact":
        _cut_ends(model, ends, list(outputs), uses)
    return model


def _cut_ends(model: GraphModel, ends: list[Variable], outputs: list[Variable], uses: Any) -> None:
    """Turn the end nodes ``out<j>`` of a part into the graph's ``out<k>``, or into cut stubs ``cut<key>``."""
    index = {}
    for k, out in enumerate(outputs):
        index.setdefault(out, k)
    renamed: dict[str, str] = {}
    for j, var in enumerate(ends):
        old = f"out{j}"
        node = model.nodes.get(old)
        if node is None:
            continue
        k = index.get(var)
        if k is not None:
            renamed[old] = new = f"out{k}"
            if node.label and node.label[0] == f"output {j}":
                node.label = [f"output {k}", *node.label[1:]]
        else:
            base = next((e.var for e in model.edges if e.head == old and e.var), None) or f"e{j}"
            renamed[old] = new = f"cut{base}"
            n = uses(var)
            node.kind = "cut"
            node.label = [f"to {n} more client{'s' * (n != 1)}" if n else "not used further"]
        node.key = new
    if not renamed:
        return
    model.nodes = {renamed.get(k, k): n for k, n in model.nodes.items()}
    for old, new in renamed.items():
        if old in model._objects:
            model._objects[new] = model._objects.pop(old)
    for edge in model.edges:
        if edge.head in renamed:
            edge.head = renamed[edge.head]
            edge.key = f"{edge.tail}_{edge.head}"
            if model.nodes[edge.head].kind == "cut":
                edge.kind = "cut"
