"""Elemwise fusion: a connected region of ``Elemwise`` nodes becomes one node.

The region's computation becomes a :class:`~symlab.scalar.Composite` scalar
op, and one ``Elemwise`` over it replaces the region: one pass over the data
instead of one per operation, and no intermediate arrays (seed 003):

>>> import numpy as np
>>> import symlab.tensor as st
>>> from symlab.graph.fg import FunctionGraph
>>> a = st.vector("a")
>>> fg = FunctionGraph([a], [a + a ** 10])
>>> fuse_elemwise(fg)
1
>>> [str(node.op) for node in fg.toposort()]
['Elemwise{Composite{(i0 + (i0 ** 10))},no_inplace}']

Which nodes form a region:

* ``Elemwise`` nodes without an ``inplace_pattern`` whose outputs have the
  same number of dimensions and the same broadcastable pattern (which sizes
  are statically 1), so the fused node broadcasts exactly as the nodes did
  and refuses exactly the same run-time shapes;
* connected through the variables they compute; a variable the region
  computes and something outside also uses (or a graph output) becomes an
  extra output of the fused node;
* never so that the fused node would depend on itself: a region that a
  path leaves (through a ``Sum``, say) and re-enters is not formed;
* within one lazy branch: a node that only one branch of an ``ifelse`` needs
  (:func:`~symlab.graph.inner_graph.inner_sections`, the sections not owned)
  is fused only with nodes of that same branch, so that fusing never makes a
  branch's work run when the branch is not taken.

A region of one node is left alone. ``DimShuffle`` nodes stay outside; a 0-d
constant broadcast by one (``a ** 10``) becomes a constant of the inner graph.
The fused node's outputs keep the exact types of the variables they replace.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Constant, Variable
from symlab.graph.fg import FunctionGraph
from symlab.graph.inner_graph import branch_lanes
from symlab.rewriting.basic import GraphRewriter
from symlab.rewriting.context import RewriteContext
from symlab.scalar.composite import Composite
from symlab.scalar.type import get_scalar_type
from symlab.tensor.elemwise import DimShuffle, Elemwise
from symlab.tensor.type import TensorType

#: The name under which fusions are reported (and the rewrite is registered).
RULE_NAME = "elemwise_fusion"



class ElemwiseFusion(GraphRewriter):
    """Fuse connected Elemwise nodes into one Elemwise over a Composite"""

    name = RULE_NAME

    def apply(self, fgraph: FunctionGraph, ctx: RewriteContext) -> bool:
        return fuse_elemwise(fgraph, ctx, self) > 0


def fuse_elemwise(fgraph: FunctionGraph, ctx: RewriteContext | None = None, rewriter: Any = None) -> int:
    """Fuse every region of two or more ``Elemwise`` nodes of ``fgraph``; return how many.

    Regions are grown from the last node backwards (reverse topological
    order), so the result is deterministic. Each fusion is one replacement
    through ``ctx.replace`` (validated, undone if refused); with a recording
    ``ctx`` each attempt is a step of its trace, accepted or refused with
    its reason (a refusal once per node and reason).
    """
    if ctx is None:
        with RewriteContext(fgraph) as own:
            return fuse_elemwise(fgraph, own, rewriter)
    rewriter = rewriter if rewriter is not None else _DEFAULT
    seeds = fgraph.toposort()
    finished: set[Apply] = set()  # nodes of fused regions, and the fused nodes
    positions: dict[Apply, int] | None = None
    lanes = branch_lanes(fgraph, seeds)
    count = 0
    for seed in reversed(seeds):
        if seed in finished or seed not in fgraph or _pattern(seed) is None:
            continue
        if positions is None:
            positions = {node: k for k, node in enumerate(fgraph.toposort())}
        region = _grow_region(fgraph, seed, finished, positions, lanes)
        if len(region) < 2:
            continue
        nodes = sorted(region, key=positions.__getitem__)
        finished.update(nodes)
        old_outputs, new_node = _fused_node(fgraph, nodes)
        reason = f"fused {len(nodes)} Elemwise nodes into {new_node.op}"
        if not ctx.replace(rewriter, list(zip(old_outputs, new_node.outputs)), node=nodes[-1], reason=reason,
                           once=True):
            continue  # refused: the graph is as it was
        finished.add(new_node)
        if seed in lanes:
            lanes[new_node] = lanes[seed]  # the fused node only that branch needs, as its nodes were
        positions = None  # the graph changed
        count += 1
    return count


def _pattern(node: Apply) -> tuple[bool, ...] | None:
    """The broadcastable pattern shared by ``node``'s outputs if it may be fused, else None."""
    op = node.op
    if not isinstance(op, Elemwise) or op.inplace_pattern:
        return None
    types = [o.type for o in node.outputs]
    if not types or not all(isinstance(t, TensorType) for t in types):
        return None
    pattern = tuple(s == 1 for s in types[0].shape)
    if any(tuple(s == 1 for s in t.shape) != pattern for t in types):
        return None
    return pattern


def _grow_region(
    fgraph: FunctionGraph,
    seed: Apply,
    finished: set[Apply],
    positions: dict[Apply, int],
    lanes: dict[Apply, tuple[int, str]] | None = None,
) -> set[Apply]:
    """The region containing ``seed``, grown breadth first through producers and consumers (within its lane)."""
    pattern = _pattern(seed)
    lanes = lanes or {}
    lane = lanes.get(seed)
    region = {seed}
    bounds = [positions[seed], positions[seed]]  # lowest and highest position in the region
    queue = deque([seed])

    def candidate(node: Any) -> bool:
        return (
            isinstance(node, Apply)
            and node not in region
            and node not in finished
            and node in fgraph
            and _pattern(node) == pattern
            and lanes.get(node) == lane
        )

    def add(node: Apply) -> None:
        region.add(node)
        bounds[0] = min(bounds[0], positions[node])
        bounds[1] = max(bounds[1], positions[node])
        queue.append(node)

    while queue:
        node = queue.popleft()
        for inp in node.inputs:
            producer = inp.owner
            if candidate(producer) and not _leaves_and_returns(fgraph, producer, region, positions, bounds[1]):
                add(producer)
        for out in node.outputs:
            for client, _ in fgraph.clients[out]:
                if candidate(client) and not _reached_from(client, region, positions, bounds[0]):
                    add(client)
    return region


def _leaves_and_returns(
    fgraph: FunctionGraph, producer: Apply, region: set[Apply], positions: dict[Apply, int], highest: int
) -> bool:
    """True if a path goes from ``producer`` out of ``region`` and back into it.

    Fusing ``producer`` (which feeds the region) would then make the fused
    node depend on itself. Only nodes up to the region's highest position
    can lead into it.
    """
    stack = [c for o in producer.outputs for c, _ in fgraph.clients[o] if c != "output" and c not in region]
    seen: set[Apply] = set()
    while stack:
        node = stack.pop()
        if node in seen or positions[node] > highest:
            continue
        if node in region:
            return True
        seen.add(node)
        stack.extend(c for o in node.outputs for c, _ in fgraph.clients[o] if c != "output")
    return False


def _reached_from(consumer: Apply, region: set[Apply], positions: dict[Apply, int], lowest: int) -> bool:
    """True if an input of ``consumer`` comes from ``region`` through a node outside it.

    Fusing ``consumer`` (which uses the region) would then make the fused node
    depend on itself. Only nodes from the region's lowest position on can
    come from it.
    """
    stack = [i.owner for i in consumer.inputs if i.owner is not None and i.owner not in region]
    seen: set[Apply] = set()
    while stack:
        node = stack.pop()
        if node in seen or positions[node] < lowest:
            continue
        if node in region:
            return True
        seen.add(node)
        stack.extend(i.owner for i in node.inputs if i.owner is not None)
    return False


def _folded_constant(var: Variable) -> Constant | None:
    """The 0-d constant ``var`` is (or broadcasts through a ``DimShuffle``), else None.

    A constant of static shape ``(1, ..., 1)`` (a broadcast scalar after
    constant folding) counts as its 0-d value.
    """
    if var.owner is not None and isinstance(var.owner.op, DimShuffle) and not var.owner.op.drop:
        var = var.owner.inputs[0]
    if not (isinstance(var, Constant) and isinstance(var.type, TensorType)):
        return None
    if var.type.ndim == 0:
        return var
    if all(s == 1 for s in var.type.shape):
        return Constant(TensorType(var.type.dtype, ()), np.asarray(var.data).reshape(()))
    return None


def _fused_node(fgraph: FunctionGraph, nodes: list[Apply]) -> tuple[list[Variable], Apply]:
    """The region's outputs (used outside it) and the ``Elemwise(Composite)`` node computing them."""
    members = set(nodes)
    outer_inputs: list[Variable] = []
    seen: set[Variable] = set()
    for node in nodes:
        for inp in node.inputs:
            if (inp.owner is None or inp.owner not in members) and inp not in seen:
                seen.add(inp)
                outer_inputs.append(inp)
    folded = {v: _folded_constant(v) for v in outer_inputs}
    if all(c is not None for c in folded.values()):
        folded = dict.fromkeys(outer_inputs)  # keep at least one input: leave constants to constant folding
    inner: dict[Variable, Variable] = {}
    kept: list[Variable] = []
    for v in outer_inputs:
        c = folded[v]
        if c is not None:
            inner[v] = Constant(get_scalar_type(c.type.dtype), c.data)
        else:
            inner[v] = get_scalar_type(v.type.dtype)()
            kept.append(v)
    old_outputs: list[Variable] = []
    for node in nodes:
        scalar_op = node.op.scalar_op
        inner_node = Apply(
            scalar_op, [inner[i] for i in node.inputs], [get_scalar_type(o.type.dtype)() for o in node.outputs]
        )
        for out, inner_out in zip(node.outputs, inner_node.outputs):
            inner[out] = inner_out
            if any(c == "output" or c not in members for c, _ in fgraph.clients[out]):
                old_outputs.append(out)
    composite = Composite([inner[v] for v in kept], [inner[o] for o in old_outputs])
    new_node = Apply(Elemwise(composite), kept, [o.type() for o in old_outputs])
    return old_outputs, new_node


__all__ = ["RULE_NAME", "fuse_elemwise"]


_DEFAULT = ElemwiseFusion()
