"""Rewrites of random variables: drawing in place, sizes known before running, and PyTensor's lifts.

================================  ============  ==========================================  =======  ================
rule                              phase         tags                                        default  keeps
================================  ============  ==========================================  =======  ================
``random_make_inplace``           inplace       ``random``                                  on       the numbers
``random_constant_size``          canonicalize  ``random``                                  on       the numbers
``random_drop_implied_size``      canonicalize  ``random``, ``optional``                    off      the numbers
``local_dimshuffle_rv_lift``      canonicalize  ``random``, ``random_lift``,                off      the distribution
                                                ``random_unsafe``, ``optional``
``local_subtensor_rv_lift``       canonicalize  ``random``, ``random_lift``,                off      the distribution
                                                ``random_unsafe``, ``optional``
``sidestep_unused_rng_consumer``  canonicalize  ``random``, ``random_unsafe``, ``optional``  off      the draws read
================================  ============  ==========================================  =======  ================

``include=("random",)`` selects them all; ``exclude=("random_unsafe",)`` then leaves out those that change numbers.

``random_make_inplace`` gives a random variable node the ``inplace`` op, which draws from the generator it is
given instead of a copy. The destroy handler decides when that is safe: the generator is the next generator of
another draw that nothing else reads, an input marked ``In(rng, mutable=True)``, or a shared generator the function
updates (its old state is replaced after the call anyway). Each is one step of the trace:

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

``random_constant_size`` writes a ``size`` computed from static shapes (``size=x.shape`` for an ``x`` of known
shape) as the constant it is: the same numbers, drawn without computing the size. It is on by default (PyTensor
gets the same from its shape feature and constant folding):

>>> from symlab.rewriting import rewrite_graph
>>> x = pt.tensor("float64", shape=(2, 3), name="x")
>>> draw = pt.random.normal(0.0, 1.0, size=x.shape, rng=rng)
>>> out, trace = rewrite_graph(draw, include=("canonicalize",))
>>> out.owner.inputs[1], trace.step(1).reason
(TensorConstant{[2 3]}, 'size Shape.0 is known before running: (2, 3); the same numbers are drawn')

``random_drop_implied_size`` (off unless included) drops a ``size`` equal to the shape the parameters broadcast to
(``normal(mu, 1, size=(3,))`` for ``mu`` of shape ``(3,)`` becomes ``normal(mu, 1)``), for the distributions of
scalar parameters that NumPy's own ``Generator`` methods draw: NumPy fills the same array in the same order either
way. PyTensor has no such rule (its ``local_rv_size_lift``, which no pipeline runs by default, goes the other way:
it broadcasts the parameters to ``size``).

The lifts and the sidestep live in :mod:`~symlab.rewriting.rules.random_lift`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Constant, Variable
from symlab.graph.fg import FunctionGraph
from symlab.rewriting.basic import GraphRewriter
from symlab.rewriting.context import RewriteContext
from symlab.rewriting.db import register
from symlab.rewriting.inplace import ensure_destroy_handler
from symlab.rewriting.steps import SourceLocation
from symlab.tensor.conversion import constant
from symlab.tensor.joining import stack, static_entries
from symlab.tensor.random.op import RandomVariable
from symlab.tensor.shape_of import NoneConst, NoneTypeT, Shape, Shape_i

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


random_make_inplace = register(RandomMakeInplace(), "inplace", "random")


# -- the rules of one node, with their reasons -------------------------------------------------------------------
class Refusal(str):
    """Why a rule matched a node but left it alone (recorded once as a refused step of the trace)."""


#: What :meth:`RandomNodeRule.rewrite_node` returns: nothing, a refusal, or ``(pairs, reason)``.
NodeResult = Refusal | tuple[list[tuple[Variable, Variable]], str] | None


class RandomNodeRule(GraphRewriter):
    """A rule tried on every node of the ``tracks`` ops, whose steps say what happened (and why not).

    A subclass defines :meth:`rewrite_node`; each replacement goes through ``ctx.replace`` with its own reason, and
    each refusal is recorded once per node and reason.
    """

    tracks: tuple[type, ...] = (RandomVariable,)

    def rewrite_node(self, fgraph: FunctionGraph, node: Apply) -> NodeResult:
        raise NotImplementedError(f"{type(self).__name__} must define rewrite_node(fgraph, node)")

    def _find_location(self) -> SourceLocation:
        code = type(self).rewrite_node.__code__
        return SourceLocation(code.co_filename, code.co_firstlineno)

    def apply(self, fgraph: FunctionGraph, ctx: RewriteContext) -> bool:
        if not any(isinstance(n.op, RandomVariable) for n in fgraph.apply_nodes):
            return False
        changed = False
        for node in fgraph.toposort():
            if node not in fgraph or not isinstance(node.op, self.tracks):
                continue
            result = self.rewrite_node(fgraph, node)
            if isinstance(result, Refusal):
                ctx.refuse(self, str(result), node=node, once=True)
            elif result is not None:
                pairs, reason = result
                changed = ctx.replace(self, pairs, node=node, reason=reason, once=True) or changed
        return changed


def used(fgraph: FunctionGraph, var: Variable) -> bool:
    """Whether anything in ``fgraph`` reads ``var`` (a node, or the graph's outputs)."""
    return bool(fgraph.clients.get(var))


def other_readers(fgraph: FunctionGraph, var: Variable, node: Apply) -> list[str]:
    """What reads ``var`` besides ``node`` and ``Shape`` queries (which read no value), as texts."""
    out = []
    for client, _ in fgraph.clients.get(var, ()):
        if client == "output":
            out.append("an output of the graph")
        elif client is not node and not isinstance(client.op, Shape | Shape_i):
            out.append(str(client.outputs[0] if len(client.outputs) == 1 else client.op))
    return out


def redrawn(fgraph: FunctionGraph, rv_node: Apply, size: Variable, params: list[Variable],
            old_view: Variable | None = None) -> tuple[Apply, list[tuple[Variable, Variable]]]:
    """A new node of ``rv_node``'s op from the same generator, and the pairs replacing its outputs.

    The draw (or ``old_view``, a view of it that the new draw stands for) is replaced by the new draw; the next
    generator by the new one wherever it is read (the chain and the updates follow the new draw).
    """
    op = rv_node.op
    new = op.make_node(rv_node.inputs[0], size, *params)
    next_rng, draw = rv_node.outputs
    new.outputs[0].name = next_rng.name
    target = draw if old_view is None else old_view
    new.outputs[1].name = target.name
    pairs = [(target, new.outputs[1])]
    if used(fgraph, next_rng):
        pairs.append((next_rng, new.outputs[0]))
    return new, pairs


def size_vector(entries: list[Variable]) -> Variable:
    """An int64 size vector of the scalar ``entries`` (a constant when every entry is one)."""
    if all(isinstance(e, Constant) for e in entries):
        return constant(np.array([int(e.data) for e in entries], dtype="int64"))
    return stack(entries)


def size_text(size: Variable) -> str:
    return "None" if isinstance(size.type, NoneTypeT) else str(size)


# -- size ------------------------------------------------------------------------------------------------------------
class RandomConstantSize(RandomNodeRule):
    """A size known before running becomes a constant: the same numbers are drawn"""

    name = "random_constant_size"

    def rewrite_node(self, fgraph: FunctionGraph, node: Apply) -> NodeResult:
        size = node.inputs[1]
        if isinstance(size.type, NoneTypeT) or isinstance(size, Constant):
            return None
        draw = node.outputs[1]
        batch = draw.type.ndim - node.op.ndim_supp
        known = [a if a is not None else b for a, b in zip(static_entries(size), draw.type.shape[:batch])]
        if any(k is None for k in known):
            return None
        folded = constant(np.array(known, dtype="int64"))
        _, pairs = redrawn(fgraph, node, folded, node.inputs[2:])
        return pairs, f"size {size} is known before running: {tuple(known)}; the same numbers are drawn"


class RandomDropImpliedSize(RandomNodeRule):
    """A size equal to the shape the parameters broadcast to is dropped: the same numbers are drawn"""

    name = "random_drop_implied_size"

    def rewrite_node(self, fgraph: FunctionGraph, node: Apply) -> NodeResult:
        op = node.op
        size = node.inputs[1]
        if not isinstance(size, Constant) or isinstance(size.type, NoneTypeT):
            return None
        params = node.inputs[2:]
        if not params:
            return None  # without parameters, no size is a scalar draw
        wanted = tuple(int(s) for s in size.data)
        implied = []
        for axis in range(len(wanted)):  # the parameters have the draw's batch dimensions (expanded when built)
            sizes = {p.type.shape[axis] for p in params}
            if None in sizes:
                return None  # the parameters' shape is known only when running
            implied.append(max(sizes))
        if tuple(implied) != wanted:
            return None
        if op.ndim_supp or any(op.ndims_params) or type(op).rng_fn is not RandomVariable.rng_fn:
            return Refusal(f"{op} draws with its own rng_fn or has non-scalar parameters: NumPy's promise that size "
                           "None fills the same array in the same order is not known for it")
        _, pairs = redrawn(fgraph, node, NoneConst, params)
        return pairs, f"size {wanted} is the shape the parameters broadcast to: dropped; the same numbers are drawn"


random_constant_size = register(RandomConstantSize(), "canonicalize", "random")
random_drop_implied_size = register(RandomDropImpliedSize(), "canonicalize", "random", "optional")

__all__ = [
    "NodeResult",
    "RandomConstantSize",
    "RandomDropImpliedSize",
    "RandomMakeInplace",
    "RandomNodeRule",
    "Refusal",
    "make_random_inplace",
    "other_readers",
    "random_constant_size",
    "random_drop_implied_size",
    "random_make_inplace",
    "redrawn",
    "size_text",
    "size_vector",
    "used",
]
