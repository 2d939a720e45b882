"""``MergeOptimizer``: compute each thing once.

Two nodes with the same op and the same inputs compute the same values, and
two constants of the same type and data are interchangeable; the merge keeps
the first of each (in toposort order) and gives its clients to the others:

>>> import symlab.tensor as T
>>> from symlab.graph.fg import FunctionGraph
>>> x = T.dvector("x")
>>> fg = FunctionGraph([x], [T.exp(x) * 2.0 + T.exp(x) * 2.0])
>>> len(fg.apply_nodes)
7
>>> trace = MergeOptimizer().rewrite(fg)
>>> len(fg.apply_nodes), [s.reason for s in trace]
(4, ['equal constants', 'same op, same inputs', 'same op, same inputs', 'same op, same inputs'])
"""

from __future__ import annotations

from typing import Any

from symlab.graph.basic import Constant, Variable
from symlab.graph.fg import FunctionGraph
from symlab.rewriting.basic import GraphRewriter
from symlab.rewriting.context import RewriteContext


def constant_signature(c: Constant) -> Any:
    """A hashable key equal for interchangeable constants (``None``: never merged)."""
    signature = getattr(c, "signature", None)
    if signature is not None:
        return signature()
    key = (c.type, c.data)
    try:
        hash(key)
    except TypeError:
        return None
    return key


class MergeOptimizer(GraphRewriter):
    """Merge equal constants, then nodes with the same op and the same inputs (one step each)."""

    name = "merge"

    def apply(self, fgraph: FunctionGraph, ctx: RewriteContext) -> bool:
        changed = self.merge_constants(fgraph, ctx)
        return self.merge_nodes(fgraph, ctx) or changed

    def merge_constants(self, fgraph: FunctionGraph, ctx: RewriteContext) -> bool:
        changed = False
        kept: dict[Any, Constant] = {}
        seen: set[Variable] = set()
        for var in _constants_in_order(fgraph):
            if var in seen:
                continue
            seen.add(var)
            key = constant_signature(var)
            if key is None:
                continue
            first = kept.setdefault(key, var)
            if first is not var and ctx.replace(self, [(var, first)], reason="equal constants"):
                changed = True
        return changed

    def merge_nodes(self, fgraph: FunctionGraph, ctx: RewriteContext) -> bool:
        changed = False
        kept: dict[Any, Any] = {}
        for node in fgraph.toposort():
            if node not in fgraph or node.op.destroy_map:
                continue
            key = (node.op, tuple(map(id, node.inputs)))
            try:
                first = kept.setdefault(key, node)
            except TypeError:  # an op with unhashable props
                continue
            if first is node:
                continue
            if first not in fgraph:
                kept[key] = node
                continue
            pairs = [(o, f) for o, f in zip(node.outputs, first.outputs) if fgraph.clients.get(o)]  # an unused output goes with its node
            if ctx.replace(self, pairs, node=node, reason="same op, same inputs"):
                changed = True
        return changed


def _constants_in_order(fgraph: FunctionGraph) -> list[Constant]:
    out = [i for node in fgraph.toposort() for i in node.inputs if isinstance(i, Constant)]
    out.extend(o for o in fgraph.outputs if isinstance(o, Constant))
    return out
