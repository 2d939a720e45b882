"""Rewrites of random variables: a draw advances its generator in place when nothing else needs the old state.

``random_make_inplace`` (phase ``inplace``) gives a random variable node the ``inplace`` op, which draws from the
generator it is given instead of a copy. The destroy handler decides when that is safe: the generator is the
next generator of another draw that nothing else reads, an input marked ``In(rng, mutable=True)``, or a shared
generator the function updates (its old state is replaced after the call anyway). Each is one step of the trace:

>>> import numpy as np
>>> import symlab
>>> import symlab.tensor as pt
>>> rng = pt.random.shared_rng(np.random.default_rng(123), name="rng")
>>> next_rng, x = rng.uniform()
>>> f = symlab.function([], x, updates={rng: next_rng}, mode="NUMPY")
>>> f.maker.fgraph.outputs[0].owner.op.inplace
True
>>> [s.reason for s in f.trace.steps if s.rule == "random_make_inplace"]
['draw from input 0 (rng) in place']
>>> g = symlab.function([], x, mode="NUMPY")  # no update: the shared generator must keep its state
>>> g.maker.fgraph.outputs[0].owner.op.inplace
False
"""

from __future__ import annotations

from typing import Any

from symlab.graph.basic import Apply
from symlab.graph.fg import FunctionGraph
from symlab.rewriting.basic import GraphRewriter
from symlab.rewriting.context import RewriteContext
from symlab.rewriting.db import register
from symlab.rewriting.inplace import ensure_destroy_handler
from symlab.tensor.random.op import RandomVariable

RULE_MAKE_INPLACE = "random_make_inplace"


class RandomMakeInplace(GraphRewriter):
    """Let a random variable draw from its generator in place (no copy) where the destroy handler allows it"""

    name = RULE_MAKE_INPLACE

    def apply(self, fgraph: FunctionGraph, ctx: RewriteContext) -> bool:
        return bool(make_random_inplace(fgraph, ctx, self))


def make_random_inplace(fgraph: FunctionGraph, ctx: RewriteContext, rewriter: Any) -> list[tuple[Apply, Apply]]:
    """Make every random variable node inplace where allowed; return the ``(old_node, new_node)`` pairs."""
    handler = ensure_destroy_handler(fgraph)
    changed: list[tuple[Apply, Apply]] = []
    for node in fgraph.toposort():
        op = node.op
        if not isinstance(op, RandomVariable) or op.inplace or node not in fgraph:
            continue
        rng = node.inputs[0]
        protected = handler.is_protected(rng)
        if protected is not None:
            ctx.refuse(rewriter, f"the generator {rng} is {protected}; the draw copies it", node=node, once=True)
            continue
        new_node = Apply(op.clone_with(inplace=True), list(node.inputs), [o.type() for o in node.outputs])
        for old, new in zip(node.outputs, new_node.outputs, strict=True):
            new.name = old.name
        new_node.tag.update(node.tag)
        pairs = [(old, new) for old, new in zip(node.outputs, new_node.outputs, strict=True) if old in fgraph]
        if ctx.replace(rewriter, pairs, node=node, reason=f"draw from input 0 ({rng}) in place", once=True,
                       refusal_prefix="destroy handler: "):
            changed.append((node, new_node))
    return changed


random_make_inplace = register(RandomMakeInplace(), "inplace")

__all__ = ["RandomMakeInplace", "make_random_inplace", "random_make_inplace"]
