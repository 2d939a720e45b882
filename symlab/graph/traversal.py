"""Walking, sorting, cloning and comparing graphs.

Every function here is iterative: a chain of 100,000 nodes is walked, sorted
and cloned at Python's default recursion limit. Orders are deterministic:
they depend only on the graph's structure, never on ids or hashes.

>>> import symlab.tensor as st
>>> x, y, z = st.dmatrices("x", "y", "z")
>>> e = x + y * z
>>> [str(v) for v in graph_inputs([e])]
['x', 'y', 'z']
>>> [str(n.op) for n in io_toposort([x, y, z], [e])]
['Elemwise{mul,no_inplace}', 'Elemwise{add,no_inplace}']
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Constant, CycleError, Variable
from symlab.graph.op import Op, _declares_props


def _as_list(graphs: Variable | Iterable[Variable]) -> list[Variable]:
    if isinstance(graphs, Variable):
        return [graphs]
    return list(graphs)


def ancestors(
    graphs: Variable | Iterable[Variable], blockers: Collection[Variable] | None = None
) -> Iterator[Variable]:
    """Yield every Variable that ``graphs`` depend on, themselves included.

    The walk goes depth first through ``owner.inputs``, in input order, and
    does not go past the ``blockers`` (which are yielded).
    """
    blockers = set(blockers) if blockers else set()
    seen: set[int] = set()
    stack = list(reversed(_as_list(graphs)))
    while stack:
        var = stack.pop()
        if id(var) in seen:
            continue
        seen.add(id(var))
        yield var
        if var.owner is not None and var not in blockers:
            stack.extend(reversed(var.owner.inputs))


def graph_inputs(
    graphs: Variable | Iterable[Variable], blockers: Collection[Variable] | None = None
) -> list[Variable]:
    """The leaves ``graphs`` depend on (ownerless variables, constants, blockers)."""
    blockers = set(blockers) if blockers else set()
    return [v for v in ancestors(graphs, blockers) if v.owner is None or v in blockers]


def is_in_ancestors(var: Variable, target: Variable) -> bool:
    """True if ``target`` is ``var`` or one of its ancestors."""
    return any(v is target for v in ancestors([var]))


def vars_between(ins: Iterable[Variable], outs: Iterable[Variable]) -> Iterator[Variable]:
    """Yield the variables on the paths from ``outs`` back to ``ins`` (both included)."""
    return ancestors(outs, blockers=list(ins))


def applys_between(ins: Iterable[Variable], outs: Iterable[Variable]) -> Iterator[Apply]:
    """Yield the Apply nodes on the paths from ``outs`` back to ``ins``."""
    ins = set(ins)
    seen: set[int] = set()
    for var in vars_between(ins, outs):
        node = var.owner
        if node is not None and var not in ins and id(node) not in seen:
            seen.add(id(node))
            yield node


def orphans_between(ins: Iterable[Variable], outs: Iterable[Variable]) -> list[Variable]:
    """Leaves reached from ``outs`` that are not among ``ins`` (usually constants)."""
    ins = set(ins)
    return [v for v in vars_between(ins, outs) if v.owner is None and v not in ins]


def io_toposort(
    inputs: Iterable[Variable],
    outputs: Iterable[Variable],
    orderings: Mapping[Apply, Sequence[Apply]] | None = None,
) -> list[Apply]:
    """The Apply nodes between ``inputs`` and ``outputs``, each after those it uses.

    The order is deterministic: a depth-first walk from the outputs, in output
    order and then input order. ``orderings`` adds dependencies: ``{node:
    [nodes that must run before it]}``. A cycle raises :class:`CycleError`.
    """
    input_set = set(inputs)
    orderings = orderings or {}

    def dependencies(node: Apply) -> list[Apply]:
        deps = [i.owner for i in node.inputs if i.owner is not None and i not in input_set]
        extra = orderings.get(node)
        if extra:
            deps.extend(extra)
        return deps

    order: list[Apply] = []
    done: set[int] = set()
    on_path: set[int] = set()
    for out in outputs:
        root = out.owner
        if root is None or out in input_set or id(root) in done:
            continue
        stack: list[tuple[Apply, Iterator[Apply]]] = [(root, iter(dependencies(root)))]
        on_path.add(id(root))
        while stack:
            node, deps = stack[-1]
            for dep in deps:
                if id(dep) in done:
                    continue
                if id(dep) in on_path:
                    raise CycleError(f"The graph contains a cycle through {dep}")
                on_path.add(id(dep))
                stack.append((dep, iter(dependencies(dep))))
                break
            else:
                stack.pop()
                on_path.discard(id(node))
                done.add(id(node))
                order.append(node)
    return order


def clone_get_equiv(
    inputs: Iterable[Variable],
    outputs: Iterable[Variable],
    copy_inputs: bool = True,
    copy_orphans: bool = True,
    memo: dict[Any, Any] | None = None,
    clone_inner_graphs: bool = False,
) -> dict[Any, Any]:
    """Clone the graph between ``inputs`` and ``outputs``; return ``{old: new}``.

    The mapping covers every variable and Apply node of the graph. Inputs are
    copied when ``copy_inputs``; other leaves (constants, ownerless variables
    that are not inputs) when ``copy_orphans``. Entries already in ``memo``
    are used as they are (this is how :func:`clone_replace` substitutes).
    With ``clone_inner_graphs`` (PyTensor's parameter) a node whose op has an
    inner graph gets a copy of the op (``op.clone()``, see
    :func:`clone_inner_op`), so rewriting the copy's inner graph leaves the
    original as it was; otherwise the new nodes share the ops.
    """
    memo = {} if memo is None else memo
    inputs = list(inputs)
    outputs = list(outputs)
    for inp in inputs:
        if inp not in memo:
            memo[inp] = inp.clone() if copy_inputs else inp
    op_copies: dict[int, Any] = {}  # one copy per op object: nodes that shared an op share its copy
    for node in io_toposort(inputs, outputs):
        new_inputs = []
        for inp in node.inputs:
            if inp not in memo:
                memo[inp] = inp.clone() if copy_orphans else inp
            new_inputs.append(memo[inp])
        op = node.op
        if clone_inner_graphs and owns_inner_graph(op):
            if id(op) not in op_copies:
                op_copies[id(op)] = clone_inner_op(op)
            op = op_copies[id(op)]
        new_node = Apply(op, new_inputs, [o.clone() for o in node.outputs])
        new_node.tag.update(node.tag)
        memo[node] = new_node
        for old, new in zip(node.outputs, new_node.outputs):
            memo.setdefault(old, new)
    for out in outputs:
        if out not in memo:
            memo[out] = out.clone() if copy_orphans else out
    return memo


def clone(
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    copy_inputs: bool = True,
    copy_orphans: bool | None = None,
    clone_inner_graphs: bool = False,
) -> tuple[list[Variable], list[Variable]]:
    """Copy the graph from ``inputs`` to ``outputs``; return the new inputs and outputs.

    ``copy_orphans`` defaults to ``copy_inputs``; ``clone_inner_graphs`` also
    copies the ops that have an inner graph (see :func:`clone_get_equiv`).

    >>> import symlab.scalar as ss
    >>> import symlab.tensor as st
    >>> from symlab.scalar.composite import Composite
    >>> from symlab.tensor.elemwise import Elemwise
    >>> a = ss.float64("a")
    >>> x = st.dvector("x")
    >>> y = Elemwise(Composite([a], [ss.exp(a)]))(x)
    >>> _, [shared] = clone([x], [y])
    >>> _, [copied] = clone([x], [y], clone_inner_graphs=True)
    >>> shared.owner.op is y.owner.op, copied.owner.op is y.owner.op, copied.owner.op == y.owner.op
    (True, False, True)
    >>> copied.owner.op.scalar_op.inner_outputs[0] is y.owner.op.scalar_op.inner_outputs[0]
    False
    """
    if copy_orphans is None:
        copy_orphans = copy_inputs
    equiv = clone_get_equiv(inputs, outputs, copy_inputs, copy_orphans, clone_inner_graphs=clone_inner_graphs)
    return [equiv[i] for i in inputs], [equiv[o] for o in outputs]


def owns_inner_graph(op: Any) -> bool:
    """True when ``op`` carries a graph of its own: a ``HasInnerGraph`` op, or an ``Elemwise`` of one.

    An ``ifelse`` opens to branches too, but they are regions of the outer
    graph, not a graph of its own: False.
    """
    if not getattr(op, "has_inner_graph", False):
        return False
    inner = op if hasattr(type(op), "inner_outputs") else getattr(op, "scalar_op", None)
    return callable(getattr(inner, "clone", None)) and hasattr(type(inner), "inner_outputs")


def clone_inner_op(op: Any) -> Any:
    """A copy of ``op`` over a copy of its inner graph (``op.clone()``; an ``Elemwise`` copies its scalar op)."""
    if not owns_inner_graph(op):
        raise TypeError(f"clone_inner_op expects an op with an inner graph of its own, received {op!r}")
    if hasattr(type(op), "inner_outputs"):
        return op.clone()
    new = copy.copy(op)  # an Elemwise of a Composite: the same op over a copy of its scalar op
    new.scalar_op = op.scalar_op.clone()
    return new


def _inner_graph_of(op: Any) -> tuple[list[Variable], list[Variable]] | None:
    """``(inner_inputs, inner_outputs)`` of an op with a graph of its own (an ``Elemwise``: its scalar op's)."""
    if not owns_inner_graph(op):
        return None
    inner = op if hasattr(type(op), "inner_outputs") else op.scalar_op
    return list(inner.inner_inputs), list(inner.inner_outputs)


def applys_with_inner(
    outputs: Variable | Iterable[Variable], fgraph: Any = None
) -> Iterator[tuple[tuple[Apply, ...], Apply]]:
    """Yield ``(path, node)`` for every Apply node of ``outputs``' graph and of the inner graphs in it.

    ``path`` is the tuple of nodes whose inner graphs hold ``node``, outermost
    first (``()`` for a node of the outer graph; its length is the depth). A
    node is followed by the nodes of its inner graphs, each graph in an order
    that runs it, so a nested graph is walked inside its node, however deep.
    Only graphs an op owns are opened: an ``ifelse``'s branches are outer
    nodes and are met in the outer graph. ``fgraph`` is passed to
    ``op.inner_sections``.

    >>> import symlab.scalar as ss
    >>> import symlab.tensor as st
    >>> from symlab.scalar.composite import Composite
    >>> from symlab.tensor.elemwise import Elemwise
    >>> a = ss.float64("a")
    >>> x = st.dvector("x")
    >>> y = Elemwise(Composite([a], [ss.exp(ss.neg(a))]))(x) * 2
    >>> [(len(path), str(node.op)) for path, node in applys_with_inner([y])]  # doctest: +NORMALIZE_WHITESPACE
    [(0, 'Elemwise{Composite{exp((-i0))},no_inplace}'), (1, 'neg'), (1, 'exp'), (0, 'DimShuffle{x}'),
     (0, 'Elemwise{mul,no_inplace}')]
    """
    outs = _as_list(outputs)
    stack: list[tuple[tuple[Apply, ...], Iterator[Apply]]] = [((), iter(io_toposort(graph_inputs(outs), outs)))]
    while stack:
        path, nodes = stack[-1]
        node = next(nodes, None)
        if node is None:
            stack.pop()
            continue
        yield path, node
        if not owns_inner_graph(node.op):
            continue
        sections = node.op.inner_sections(node, fgraph)
        inner = [n for section in sections if section.owned for n in section.nodes]
        if inner:
            stack.append(((*path, node), iter(inner)))


def clone_replace(
    output: Variable | Sequence[Variable],
    replace: Mapping[Variable, Any] | Iterable[tuple[Variable, Any]] | None = None,
) -> Any:
    """A copy of ``output``'s graph in which each key of ``replace`` is its value.

    The leaves of the graph are shared, not copied; the user's graph is not
    changed. A replacement must be able to stand in for the variable it
    replaces (``old.type.filter_variable(new)``), otherwise ``TypeError``.

    >>> import symlab.tensor as st
    >>> x, y = st.dscalars("x", "y")
    >>> float(clone_replace(x * 2, {x: y + 1}).eval({y: 1.0}))
    4.0
    """
    pairs = list(replace.items()) if isinstance(replace, Mapping) else list(replace or ())
    memo: dict[Any, Any] = {}
    for old, new in pairs:
        if not isinstance(old, Variable):
            raise TypeError(f"clone_replace: keys must be Variables, received {type(old).__name__}")
        memo[old] = old.type.filter_variable(new)
    outputs = _as_list(output)
    equiv = clone_get_equiv([old for old, _ in pairs], outputs, False, False, memo)
    new_outputs = [equiv[o] for o in outputs]
    return new_outputs[0] if isinstance(output, Variable) else new_outputs


def equal_computations(
    xs: Sequence[Variable],
    ys: Sequence[Variable],
    in_xs: Sequence[Variable] | None = None,
    in_ys: Sequence[Variable] | None = None,
) -> bool:
    """True if the graphs of ``xs`` and ``ys`` compute the same thing.

    Two variables are the same computation when they are corresponding
    entries of ``in_xs``/``in_ys``, the same object, equal constants, or
    outputs of the same index of equal ops applied to the same computations.
    Ops with an inner graph are equal when ``==`` says so (``Composite``
    compares its computation); two distinct ops of a class that does not
    define equality (no ``__props__``, no ``__eq__``) are equal when their
    inner graphs are equal computations, compared the same way, nested
    graphs included.

    >>> import symlab.tensor as st
    >>> x, y = st.dvectors("x", "y")
    >>> equal_computations([st.exp(x) + 1], [st.exp(x) + 1]), equal_computations([x + 1], [y + 1])
    (True, False)
    >>> equal_computations([x + 1], [y + 1], [x], [y])
    True
    """
    return _equal_computations(xs, ys, in_xs, in_ys, set())


def _equal_computations(
    xs: Sequence[Variable],
    ys: Sequence[Variable],
    in_xs: Sequence[Variable] | None,
    in_ys: Sequence[Variable] | None,
    comparing: set[tuple[int, int]],
) -> bool:
    xs, ys = list(xs), list(ys)
    in_xs, in_ys = list(in_xs or ()), list(in_ys or ())
    if len(xs) != len(ys) or len(in_xs) != len(in_ys):
        return False
    position_x = {id(v): k for k, v in enumerate(in_xs)}
    position_y = {id(v): k for k, v in enumerate(in_ys)}
    stack = list(zip(xs, ys))
    checked: set[tuple[int, int]] = set()
    while stack:
        x, y = stack.pop()
        key = (id(x), id(y))
        if key in checked:
            continue
        checked.add(key)
        if id(x) in position_x or id(y) in position_y:
            if position_x.get(id(x)) != position_y.get(id(y)):
                return False
            continue
        if x is y:
            continue
        if x.type != y.type:
            return False
        if isinstance(x, Constant) or isinstance(y, Constant):
            if not (isinstance(x, Constant) and isinstance(y, Constant) and _same_data(x.data, y.data)):
                return False
            continue
        nx, ny = x.owner, y.owner
        if nx is None or ny is None:
            return False  # two different free variables
        if x.index != y.index or len(nx.inputs) != len(ny.inputs) or len(nx.outputs) != len(ny.outputs):
            return False
        if not _equal_ops(nx.op, ny.op, comparing):
            return False
        stack.extend(zip(nx.inputs, ny.inputs))
    return True


def _equal_ops(a: Any, b: Any, comparing: set[tuple[int, int]]) -> bool:
    """``a == b``, or, for two ops of a class without its own equality, equal inner graphs."""
    if a == b:
        return True
    if type(a) is not type(b) or _defines_equality(type(a)):
        return False
    graph_a, graph_b = _inner_graph_of(a), _inner_graph_of(b)
    if graph_a is None or graph_b is None:
        return False
    key = (id(a), id(b))
    if key in comparing:  # an inner graph that holds its own op: assume equal while comparing it
        return True
    comparing.add(key)
    try:
        return _equal_computations(graph_a[1], graph_b[1], graph_a[0], graph_b[0], comparing)
    finally:
        comparing.discard(key)


def _defines_equality(cls: type) -> bool:
    """True when ``cls`` says itself when two ops are equal (``__props__`` or an ``__eq__`` of its own)."""
    return cls.__eq__ is not Op.__eq__ or _declares_props(cls)


def _same_data(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.dtype == b.dtype and a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    return bool(a == b) and type(a) is type(b)
