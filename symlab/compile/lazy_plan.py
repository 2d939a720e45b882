"""The lazy plan of a graph: run each branch of an ``ifelse`` only when its condition chooses it.

An ``ifelse`` node's branches are ordinary outer nodes. For each ifelse node, the nodes that only
its then branch needs (its *then region*, :func:`symlab.ifelse.region.region_of`) and those only
its else branch needs are moved, in the execution order, right before the ifelse node, each region
behind a *guard*: a step that jumps past the region when the condition does not choose it. A region
inside another (an ifelse in a branch) nests: its guard lies inside the outer region. Everything
else keeps the order of ``fgraph.toposort()``.

The toposort includes the destroy handler's orderings (a reader runs before the inplace node that
overwrites what it reads). Moving a region later never breaks a data dependency (only the region
and its ifelse read its values), but it could move a reader past an inplace node that must come
after it: a region is left *eager* (in place, always run) when any node it would be moved past
writes into memory the region reads or writes, or the other way round. ``may_guard`` lets a caller
keep more regions eager, with its reason.

The NumPy backend runs :attr:`LazyPlan.program`; the Numba backend writes each ifelse as ``if``/``else``
blocks around its regions (:mod:`symlab.compile.numba.graph_source`), or, when a region holds a node
without a kernel, guards the region's steps between the compiled ones.

>>> import symlab.tensor as st
>>> from symlab.graph.fg import FunctionGraph
>>> from symlab.ifelse import ifelse
>>> c, x, y = st.iscalar("c"), st.dvector("x"), st.dvector("y")
>>> fg = FunctionGraph([c, x, y], [ifelse(c, st.exp(x).sum(), (x * y).sum())])
>>> plan = lazy_plan(fg.toposort(), fg.outputs)
>>> print(plan.describe())
lazy plan: 2 guarded regions, 4 of 5 nodes inside
  then of if{} (node 4): 2 nodes, run when c is true
  else of if{} (node 4): 2 nodes, run when c is false
>>> [(kind, arg) for kind, arg, *_ in plan.program]  # each guard jumps past its region when not chosen
[('guard', 0), ('node', 0), ('node', 1), ('guard', 1), ('node', 2), ('node', 3), ('node', 4)]
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from symlab.graph.basic import Apply, Variable
from symlab.ifelse.op import IfElse, truth
from symlab.ifelse.region import BRANCHES, region_of

#: A program step that runs a node: ``("node", toposort index)``.
NODE = "node"
#: A program step that guards a region: ``("guard", guard index, condition, taken_when, end)``; a run jumps
#: to program position ``end`` unless the condition's truth is ``taken_when``.
GUARD = "guard"


def is_lazy_choice(node: Apply) -> bool:
    """Whether ``node`` chooses between branches that a lazy run computes only when chosen (an ifelse)."""
    return isinstance(node.op, IfElse)


@dataclass
class Guard:
    """One guarded region: ``branch`` of the ifelse node ``choice``, run when ``condition``'s truth is ``taken_when``."""

    index: int
    choice: Apply
    branch: str
    condition: Variable
    taken_when: bool
    nodes: list[Apply]


@dataclass
class Branching:
    """An ifelse node in the plan's tree, with the items of its guarded regions (empty when eager)."""

    node: Apply
    then_items: list[Any] = field(default_factory=list)
    else_items: list[Any] = field(default_factory=list)
    then_guard: Guard | None = None
    else_guard: Guard | None = None

    def branches(self) -> list[tuple[str, list[Any], Guard | None]]:
        return [("then", self.then_items, self.then_guard), ("else", self.else_items, self.else_guard)]


@dataclass
class LazyPlan:
    """The execution order of a graph's nodes and its guarded regions (see the module's docstring).

    ``order`` runs every node once, each region just before its ifelse; ``tree`` is the same order
    with each ifelse node as a :class:`Branching` holding its regions; ``program`` is the flat form
    the NumPy backend runs (node steps by toposort index, guard steps with their jump).
    """

    toposort: list[Apply]
    order: list[Apply]
    tree: list[Any]
    guards: list[Guard]
    program: list[tuple[Any, ...]]
    #: ``(ifelse node, branch, why)`` for each non-empty region left eager.
    eager: list[tuple[Apply, str, str]]
    #: node -> the innermost guard it is behind.
    guard_of: dict[Apply, Guard]

    @property
    def lazy(self) -> bool:
        """Whether some region is guarded (a run may skip nodes)."""
        return bool(self.guards)

    def describe(self) -> str:
        """The plan in a few lines: each guarded region, and each region kept eager and why."""
        index = {n: k for k, n in enumerate(self.toposort)}
        inside = len(self.guard_of)
        lines = [f"lazy plan: {len(self.guards)} guarded region{'s' if len(self.guards) != 1 else ''}, "
                 f"{inside} of {len(self.toposort)} nodes inside"]
        for g in self.guards:
            lines.append(f"  {g.branch} of {g.choice.op} (node {index[g.choice]}): {len(g.nodes)} node"
                         f"{'s' if len(g.nodes) != 1 else ''}, run when {_text(g.condition)} is "
                         f"{'true' if g.taken_when else 'false'}")
        for node, branch, why in self.eager:
            lines.append(f"  {branch} of {node.op} (node {index[node]}): eager ({why})")
        return "\n".join(lines)


def _text(var: Variable) -> str:
    return var.name if var.name is not None else str(var)


def clients_of(order: Sequence[Apply], outputs: Sequence[Variable]) -> dict[Variable, list[tuple[Any, int]]]:
    """The clients of every variable of the graph made of ``order`` and ``outputs`` (as a FunctionGraph keeps them)."""
    clients: dict[Variable, list[tuple[Any, int]]] = {}
    for node in order:
        for i, v in enumerate(node.inputs):
            clients.setdefault(v, []).append((node, i))
    for k, v in enumerate(outputs):
        clients.setdefault(v, []).append(("output", k))
    return clients


def _memory_of(order: Sequence[Apply]) -> dict[Variable, frozenset[Variable]]:
    """For each variable, the variables whose memory it may share (through view_map and destroy_map)."""
    roots: dict[Variable, frozenset[Variable]] = {}
    for node in order:
        view_map = getattr(node.op, "view_map", None) or {}
        destroy_map = getattr(node.op, "destroy_map", None) or {}
        for j, out in enumerate(node.outputs):
            sources = [*view_map.get(j, ()), *destroy_map.get(j, ())]
            roots[out] = frozenset().union(*(roots.get(node.inputs[i], frozenset((node.inputs[i],))) for i in sources)) \
                if sources else frozenset((out,))
    return roots


def _unsafe_move(region: set[Apply], choice: Apply, order: Sequence[Apply], roots: dict[Variable, frozenset[Variable]]) -> str | None:
    """Why moving ``region`` to just before ``choice`` could break an inplace ordering (None: it cannot).

    It could where a node it would be moved past writes into memory the region uses, or the region writes
    into memory that node uses.
    """
    pos = {n: k for k, n in enumerate(order)}
    first = min(pos[n] for n in region)

    def memory(node: Apply) -> frozenset[Variable]:
        out: frozenset[Variable] = frozenset()
        for v in [*node.inputs, *node.outputs]:
            out |= roots.get(v, frozenset((v,)))
        return out

    def destroyed(node: Apply) -> frozenset[Variable]:
        out: frozenset[Variable] = frozenset()
        for positions in (getattr(node.op, "destroy_map", None) or {}).values():
            for i in positions:
                out |= roots.get(node.inputs[i], frozenset((node.inputs[i],)))
        return out

    region_memory: frozenset[Variable] = frozenset()
    region_destroyed: frozenset[Variable] = frozenset()
    for n in region:
        region_memory |= memory(n)
        region_destroyed |= destroyed(n)
    for node in order[first : pos[choice]]:
        if node in region:
            continue
        if destroyed(node) & region_memory:
            return f"moving it would pass {node.op}, which writes into memory the branch uses"
        if region_destroyed and region_destroyed & memory(node):
            return f"it writes into memory {node.op} uses, which it would be moved past"
    return None


def lazy_plan(
    order: Sequence[Apply], outputs: Sequence[Variable], may_guard: Callable[[list[Apply]], str | None] | None = None
) -> LazyPlan:
    """The lazy plan of the graph whose nodes, in run order, are ``order`` (``fgraph.toposort()``).

    ``may_guard(region_nodes)`` may return a reason to keep a region eager (None: guard it).
    """
    order = list(order)
    clients = clients_of(order, outputs)
    roots = _memory_of(order)
    regions: dict[tuple[Apply, str], list[Apply]] = {}
    eager: list[tuple[Apply, str, str]] = []
    for node in order:
        if not is_lazy_choice(node):
            continue
        for branch in BRANCHES:
            nodes = region_of(node, branch, clients, order)
            if not nodes:
                continue
            why = _unsafe_move(set(nodes), node, order, roots) or (may_guard(nodes) if may_guard else None)
            if why:
                eager.append((node, branch, why))
            else:
                regions[(node, branch)] = nodes
    innermost: dict[Apply, tuple[Apply, str]] = {}
    for key, nodes in sorted(regions.items(), key=lambda kv: -len(kv[1])):  # regions nest: the smallest wins
        for n in nodes:
            innermost[n] = key
    by_scope: dict[Any, list[Apply]] = {}
    for n in order:
        by_scope.setdefault(innermost.get(n), []).append(n)
    guards: list[Guard] = []
    guard_of: dict[Apply, Guard] = {}

    def build(scope: Any) -> list[Any]:
        items: list[Any] = []
        for n in by_scope.get(scope, ()):
            if not is_lazy_choice(n):
                items.append(n)
                continue
            b = Branching(n)
            for branch, taken_when in BRANCHES.items():
                key = (n, branch)
                if key not in regions:
                    continue
                guard = Guard(len(guards), n, branch, n.inputs[0], taken_when, [])
                guards.append(guard)
                sub = build(key)
                guard.nodes = list(flat_nodes(sub))
                for m in guard.nodes:  # an inner region's guard was set first: it stays
                    guard_of.setdefault(m, guard)
                if branch == "then":
                    b.then_items, b.then_guard = sub, guard
                else:
                    b.else_items, b.else_guard = sub, guard
            items.append(b)
        return items

    tree = build(None)
    flat = list(flat_nodes(tree))
    if len(flat) != len(order) or set(flat) != set(order):  # every node once: a plan that loses one is a bug
        raise AssertionError(f"lazy plan: {len(flat)} nodes planned for {len(order)} in the graph")
    index = {n: k for k, n in enumerate(order)}
    program: list[tuple[Any, ...]] = []

    def emit(items: list[Any]) -> None:
        for item in items:
            if isinstance(item, Branching):
                for _branch, sub, guard in item.branches():
                    if guard is None:
                        continue
                    at = len(program)
                    program.append((GUARD, guard.index, guard.condition, guard.taken_when, -1))
                    emit(sub)
                    program[at] = (GUARD, guard.index, guard.condition, guard.taken_when, len(program))
                program.append((NODE, index[item.node]))
            else:
                program.append((NODE, index[item]))

    emit(tree)
    return LazyPlan(order, flat, tree, guards, program, eager, guard_of)


def nodes_to_run(order: Sequence[Apply], outputs: Sequence[Variable], value_of: Callable[[Variable], Any]) -> Iterator[Apply]:
    """The nodes of ``order`` a lazy run runs, in its order: a generator that asks ``value_of(condition)``
    at each guard (after the nodes before it were run), for evaluators that keep values in a dict.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> from symlab.ifelse import ifelse
    >>> c, x = st.iscalar("c"), st.dvector("x")
    >>> out = ifelse(c, st.exp(x), x)
    >>> [str(n.op) for n in nodes_to_run([out.owner.inputs[1].owner, out.owner], [out], lambda v: np.int32(0))]
    ['if{}']
    """
    order = list(order)
    program = lazy_plan(order, outputs).program
    p = 0
    while p < len(program):
        step = program[p]
        if step[0] == GUARD:
            if truth(value_of(step[2])) != step[3]:
                p = step[4]
                continue
        else:
            yield order[step[1]]
        p += 1


def flat_nodes(items: list[Any]) -> Iterator[Apply]:
    """The nodes of a plan's items (nodes and :class:`Branching`), in run order: an ifelse's regions before it."""
    for item in items:
        if isinstance(item, Branching):
            for _branch, sub, _guard in item.branches():
                yield from flat_nodes(sub)
            yield item.node
        else:
            yield item


__all__ = ["GUARD", "NODE", "Branching", "Guard", "LazyPlan", "clients_of", "flat_nodes", "is_lazy_choice", "lazy_plan", "nodes_to_run"]
