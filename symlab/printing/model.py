"""``build_model``: the picture of a graph as nodes and edges under stable keys, before any DOT is written.

:func:`build_model` turns any displayable object (see
:func:`~symlab.printing.subject.subject_of`) into a :class:`GraphModel`
(:mod:`symlab.printing.drawing`), drawn by the painters of
:mod:`symlab.printing.painters`:
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
from dataclasses import replace
from typing import Any

from symlab.graph.basic import Apply, Constant, Variable
from symlab.printing.drawing import (
    CLASSES,
    DEFAULT_MAX_NODES,
    EDGE_KINDS,
    NODE_KINDS,
    SECTION_STATES,
    STYLES,
    DrawEdge,
    DrawNode,
    DrawSection,
    GraphModel,
    ident,
)
from symlab.printing.folding import Fold, compact_cost, dataflow_cost, fold_graph, obj_key, structure_cost, toposort
from symlab.printing.subject import Subject, subject_of
from symlab.printing.update_arrows import add_updates

__all__ = [
    "CLASSES",
    "DEFAULT_MAX_NODES",
    "EDGE_KINDS",
    "NODE_KINDS",
    "SECTION_STATES",
    "STYLES",
    "DrawEdge",
    "DrawNode",
    "DrawSection",
    "GraphModel",
    "build_model",
    "build_part",
    "graph_keys",
    "ident",
]



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
    from symlab.printing.painters import StructurePainter  # loaded on the first picture, not by import symlab

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
    open_inner: Iterable[Any] = (),
    section_states: Mapping[tuple[str, str], str] | None = None,
    inner_max_nodes: int | None = None,
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

    ``open_inner`` lists the keys (or Apply nodes) of nodes with an inner graph to draw open, their sections
    inside their box (:mod:`symlab.printing.opening`): an inner graph's objects are keyed
    ``"<node key>/<inner key>"`` (``a5/v0``, nested ``a5/a2/a1``), and a nested node opens when its key is
    listed too. ``section_states[(node key, label)]`` is ``"taken"`` or ``"skipped"`` (drawn greyed). Each
    opened inner graph draws at most ``inner_max_nodes`` nodes (default: a share of ``max_nodes``, at least
    12) before it is folded; they count toward ``max_nodes``. Keys that name no openable drawn node are
    left alone (a picture asked of a graph that changed since still draws).

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
    from symlab.printing.opening import (  # see _single
        check_states,
        inner_budget,
        mark_openable,
        open_in_place,
        open_keys,
        plan_openings,
    )
    from symlab.printing.painters import CompactPainter, DataflowPainter, StructurePainter  # see _single

    outputs, inputs = list(subject.outputs), list(subject.inputs)
    order, leaves = toposort(outputs, frozenset(id(v) for v in cut))
    keys = _Keys(subject, order, leaves)
    marks = _marks(subject, highlight, classes, keys)
    lit = set(marks)
    opened, open_nodes = open_keys(open_inner, keys, caller)
    states = check_states(section_states, caller)
    plans = plan_openings(order, keys, opened, subject.fgraph)
    each = max_nodes
    if plans:  # the open nodes and their branches' regions stay visible; their inner graphs use the budget
        lit.update(id(node) for node, _ in plans.values())
        lit.update(id(n) for _, sections in plans.values() for s in sections if not s.owned for n in s.nodes)
        each, reserve = inner_budget(plans, style, max_nodes)
        if inner_max_nodes is not None:
            each = max(1, inner_max_nodes)
        max_nodes = max(10, max_nodes - reserve)
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
    add_updates(model, keys)
    mark_openable(model)
    if lines:
        _add_lines(model, lines, keys)
    if plans:
        open_in_place(model, plans, build_model, each, opened, open_nodes, states, lines, classes, caller)
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
    open_inner: Iterable[Any] = (),
) -> GraphModel:
    """The picture of a part of a graph: the Apply ``nodes`` (in order), under the whole graph's ``key``.

    ``open_inner`` draws nodes of the part open, as :func:`build_model` does (a stepper's pane).

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
    model = build_model(part, style, max_nodes=10**9, classes=classes, cut=cut, key=key, open_inner=open_inner)
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
