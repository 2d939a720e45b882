"""The region of a branch: the outer apply nodes that only one branch of an ``ifelse`` needs.

An ``ifelse`` node's branches are ordinary parts of the outer graph. A node belongs to the
*then* region of an ifelse node when every use of every output of it leads only into a then
input of that node (directly, or through other nodes of the region), and it is no output of
the graph. Those are the nodes a lazy run may skip when the condition chooses ``else``, and
what a view opens under the branch. The region is computed here once, for
:meth:`~symlab.ifelse.op.IfElse.inner_sections` and for the compiler's lazy plan
(:mod:`symlab.compile.lazy_plan`).

>>> import symlab.tensor as st
>>> from symlab.ifelse import ifelse
>>> a, x, y = st.dscalar("a"), st.dvector("x"), st.dvector("y")
>>> shared = st.exp(x)
>>> out = ifelse(a > 0, (shared * x).sum(), (shared + y).sum())
>>> [str(n.op) for n in branch_region(out.owner, "then")]
['Elemwise{mul,no_inplace}', 'Sum{acc_dtype=float64}']
>>> [str(n.op) for n in branch_region(out.owner, "else")]
['Elemwise{add,no_inplace}', 'Sum{acc_dtype=float64}']

``exp(x)`` feeds both branches: it is in neither region (a lazy run computes it first).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from symlab.graph.basic import Apply, Variable
from symlab.graph.traversal import graph_inputs, io_toposort

if TYPE_CHECKING:
    from symlab.graph.fg import FunctionGraph

#: The two branches, by label, and the truth value of the condition that takes each.
BRANCHES: dict[str, bool] = {"then": True, "else": False}


def branch_positions(node: Apply, branch: str) -> range:
    """The input positions of ``node`` (an ifelse node) that hold ``branch``'s values."""
    n = node.op.n_outs
    if branch == "then":
        return range(1, 1 + n)
    if branch == "else":
        return range(1 + n, 1 + 2 * n)
    raise ValueError(f"branch_positions: branch must be 'then' or 'else', received {branch!r}")


def local_clients(node: Apply) -> tuple[dict[Variable, list[tuple[Any, int]]], list[Apply]]:
    """The clients of every variable among ``node``'s ancestors (``node`` itself included), and their order.

    This is the graph of ``node`` alone: what :func:`branch_region` uses when it is given no FunctionGraph.
    """
    order = io_toposort(graph_inputs(node.inputs), node.inputs)
    clients: dict[Variable, list[tuple[Any, int]]] = {}
    for n in [*order, node]:
        for i, v in enumerate(n.inputs):
            clients.setdefault(v, []).append((n, i))
    return clients, order


def region_of(
    node: Apply, branch: str, clients: Mapping[Variable, Sequence[tuple[Any, int]]], order: Sequence[Apply]
) -> list[Apply]:
    """The nodes of ``order`` (a topological order of the graph) that only ``branch`` of ``node`` needs.

    ``clients[v]`` lists the uses of ``v`` as ``(apply, input index)`` or ``("output", k)``. The result
    keeps the order of ``order``.
    """
    positions = set(branch_positions(node, branch))
    wanted: set[Apply] = set()
    pending = [node.inputs[i].owner for i in positions]
    while pending:  # the ancestors of the branch's values: the only candidates
        n = pending.pop()
        if n is None or n in wanted or n is node:
            continue
        wanted.add(n)
        pending.extend(v.owner for v in n.inputs)
    inside: set[Apply] = set()
    for n in reversed(order):  # clients come later in the order: decided before the nodes they read
        if n not in wanted:
            continue
        if all(
            (c is node and i in positions) or c in inside
            for out in n.outputs
            for c, i in clients.get(out, ())
        ) and any(clients.get(out) for out in n.outputs):
            inside.add(n)
    return [n for n in order if n in inside]


def branch_region(node: Apply, branch: str, fgraph: FunctionGraph | None = None) -> list[Apply]:
    """The apply nodes only ``branch`` (``"then"`` or ``"else"``) of ifelse ``node`` needs, in run order.

    With ``fgraph`` (the graph ``node`` is in), a node is in the region when all its clients in
    ``fgraph`` lead only into that branch's inputs of ``node``; without it, the same relative to
    ``node``'s own ancestors (a node used elsewhere in a larger graph may then be counted in).
    """
    if fgraph is not None:
        return region_of(node, branch, fgraph.clients, fgraph.toposort())
    clients, order = local_clients(node)
    return region_of(node, branch, clients, order)


def region_inputs(nodes: Sequence[Apply], outputs: Sequence[Variable]) -> list[Variable]:
    """The variables the region ``nodes`` (giving ``outputs``) reads from outside it, first use first."""
    produced = {o for n in nodes for o in n.outputs}
    seen: dict[Variable, None] = {}
    for n in nodes:
        for v in n.inputs:
            if v not in produced:
                seen.setdefault(v, None)
    for v in outputs:
        if v not in produced:
            seen.setdefault(v, None)
    return list(seen)


__all__ = ["BRANCHES", "branch_positions", "branch_region", "local_clients", "region_inputs", "region_of"]
