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

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Constant, CycleError, Variable


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
) -> dict[Any, Any]:
    """Clone the graph between ``inputs`` and ``outputs``; return ``{old: new}``.

    The mapping covers every variable and Apply node of the graph. Inputs are
    copied when ``copy_inputs``; other leaves (constants, ownerless variables
    that are not inputs) when ``copy_orphans``. Entries already in ``memo``
    are used as they are (this is how :func:`clone_replace` substitutes).
    """
    memo = {} if memo is None else memo
    inputs = list(inputs)
    outputs = list(outputs)
    for inp in inputs:
        if inp not in memo:
            memo[inp] = inp.clone() if copy_inputs else inp
    for node in io_toposort(inputs, outputs):
        new_inputs = []
        for inp in node.inputs:
            if inp not in memo:
                memo[inp] = inp.clone() if copy_orphans else inp
            new_inputs.append(memo[inp])
        new_node = Apply(node.op, new_inputs, [o.clone() for o in node.outputs])
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
) -> tuple[list[Variable], list[Variable]]:
    """Copy the graph from ``inputs`` to ``outputs``; return the new inputs and outputs.

    ``copy_orphans`` defaults to ``copy_inputs``.
    """
    if copy_orphans is None:
        copy_orphans = copy_inputs
    equiv = clone_get_equiv(inputs, outputs, copy_inputs, copy_orphans)
    return [equiv[i] for i in inputs], [equiv[o] for o in outputs]


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
    """
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
        if x.index != y.index or nx.op != ny.op or len(nx.inputs) != len(ny.inputs):
            return False
        stack.extend(zip(nx.inputs, ny.inputs))
    return True


def _same_data(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.dtype == b.dtype and a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    return bool(a == b) and type(a) is type(b)
