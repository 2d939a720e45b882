"""The ``fusion`` and ``inplace`` phases: :func:`~symlab.rewriting.fusion.fuse_elemwise` and
:func:`~symlab.rewriting.inplace.insert_inplace` as graph rewriters of the database.

Those functions change the graph themselves (``replace_all_validate``) and
report every attempt to a callback; the wrappers here turn each report into
one step of the trace (:meth:`RewriteContext.record_direct`), accepted with
the changes it made, or refused with the reason (seed 003):

>>> import symlab.tensor as T
>>> from symlab.rewriting import rewrite_graph
>>> a = T.dvector("a")
>>> out, trace = rewrite_graph(a + a ** 10)
>>> [str(n.op) for n in trace.fgraph.toposort()]
['Elemwise{Composite{(i0 + (i0 ** 10))},no_inplace}']
>>> for s in trace.steps[-2:]:  # after constant folding
...     print(s.phase, s.rule, s.accepted, s.reason)
fusion elemwise_fusion True fused 2 Elemwise nodes into Elemwise{Composite{(i0 + (i0 ** 10))},no_inplace}
inplace inplace_elemwise False no input can hold the result: input 0 (a) is a protected graph input (not mutable)

A refused attempt is recorded once per graph, not again on each pass of
the phase's fixed point.
"""

from __future__ import annotations

import weakref
from time import perf_counter
from typing import Any

from symlab.graph.basic import Apply
from symlab.graph.fg import FunctionGraph
from symlab.rewriting.basic import GraphRewriter
from symlab.rewriting.context import RewriteContext
from symlab.rewriting.db import register
from symlab.rewriting.fusion import RULE_NAME as FUSION_RULE
from symlab.rewriting.fusion import fuse_elemwise
from symlab.rewriting.inplace import (
    RULE_DIMSHUFFLE,
    RULE_ELEMWISE,
    ensure_destroy_handler,
    insert_inplace_dimshuffle,
    insert_inplace_elemwise,
)


class _Recorder:
    """A ``trace_callback`` that writes each reported attempt as one step of ``ctx``'s trace."""

    def __init__(self, rewriter: GraphRewriter, ctx: RewriteContext, refused_seen: set[Any]) -> None:
        self.rewriter = rewriter
        self.ctx = ctx
        self.refused_seen = refused_seen
        self.started = perf_counter()

    def __call__(self, rule: str, nodes: Any, new_node: Apply | None, accepted: bool, reason: str) -> None:
        ctx = self.ctx
        members = nodes if isinstance(nodes, list) else [nodes]
        node = members[-1]
        pairs = None
        if not accepted:
            if (node, reason) in self.refused_seen:  # reported on an earlier pass
                ctx.discard_direct()
                self.started = perf_counter()
                return
            self.refused_seen.add((node, reason))
            pairs = [] if new_node is None else list(zip(_used_outside(ctx.fgraph, members), new_node.outputs))
        ctx.record_direct(self.rewriter, reason, accepted, node=node, replacements=pairs,
                          seconds=perf_counter() - self.started)
        self.started = perf_counter()


def _used_outside(fgraph: FunctionGraph, members: list[Apply]) -> list[Any]:
    """The outputs of ``members`` that a node outside them (or the graph's outputs) uses."""
    inside = set(members)
    return [o for n in members for o in n.outputs
            if any(c == "output" or c not in inside for c, _ in fgraph.clients.get(o, ()))]


class _DirectRewriter(GraphRewriter):
    """A graph rewriter around a function ``fn(fgraph, trace_callback)`` that changes the graph itself."""

    def __init__(self) -> None:
        super().__init__()
        self._refused: weakref.WeakKeyDictionary[RewriteContext, set[Any]] = weakref.WeakKeyDictionary()

    def run(self, fgraph: FunctionGraph, callback: Any) -> bool:
        raise NotImplementedError

    def apply(self, fgraph: FunctionGraph, ctx: RewriteContext) -> bool:
        seen = self._refused.setdefault(ctx, set())
        callback = _Recorder(self, ctx, seen) if ctx.recording else None
        return self.run(fgraph, callback)


class ElemwiseFusion(_DirectRewriter):
    """Fuse connected Elemwise nodes into one Elemwise over a Composite"""

    name = FUSION_RULE

    def run(self, fgraph: FunctionGraph, callback: Any) -> bool:
        return fuse_elemwise(fgraph, callback) > 0


class InplaceElemwise(_DirectRewriter):
    """Let an Elemwise write its result into an input the destroy handler frees"""

    name = RULE_ELEMWISE

    def run(self, fgraph: FunctionGraph, callback: Any) -> bool:
        ensure_destroy_handler(fgraph)
        return bool(insert_inplace_elemwise(fgraph, callback))


class InplaceDimShuffle(_DirectRewriter):
    """Mark DimShuffle views InplaceDimShuffle"""

    name = RULE_DIMSHUFFLE

    def run(self, fgraph: FunctionGraph, callback: Any) -> bool:
        ensure_destroy_handler(fgraph)
        return bool(insert_inplace_dimshuffle(fgraph, callback))


elemwise_fusion = register(ElemwiseFusion(), "fusion")
inplace_elemwise = register(InplaceElemwise(), "inplace")
inplace_dimshuffle = register(InplaceDimShuffle(), "inplace")

__all__ = ["ElemwiseFusion", "InplaceDimShuffle", "InplaceElemwise", "elemwise_fusion", "inplace_dimshuffle",
           "inplace_elemwise"]
