"""The ``inplace`` rewrites: let ``Elemwise`` nodes write their result into an input's buffer.

:func:`insert_inplace` visits the ``Elemwise`` nodes in topological order
and, for each, tries the inputs that could hold the result (same type as the
output, not a constant, not a protected graph input, not already
overwritten). Each try replaces the node by ``Elemwise(scalar_op, {0: i})``
through ``ctx.replace`` (one validated change); the :class:`DestroyHandler`
refuses it when the input's value is still needed (the graph is then put
back) and the next input is tried. With a recording
:class:`~symlab.rewriting.context.RewriteContext`, every attempt is a step
of its trace, accepted or refused with its reason. ``DimShuffle`` views are
renamed ``InplaceDimShuffle`` (a view either way).

>>> import symlab.tensor as st
>>> from symlab.graph.fg import FunctionGraph
>>> from symlab.rewriting import RewriteContext, RewriteTrace
>>> x = st.dvector("x")
>>> fg = FunctionGraph([x], [st.exp(x) * 2.0 + 1.0])
>>> with RewriteContext(fg, RewriteTrace(fg)) as ctx:
...     changed = insert_inplace(fg, ctx)
>>> [str(n.op) for n in fg.toposort()]
['Elemwise{exp,no_inplace}', 'InplaceDimShuffle{x}', 'Elemwise{mul,inplace}', 'InplaceDimShuffle{x}', 'Elemwise{add,inplace}']
>>> for step in ctx.trace.steps[:3]:
...     print(step.rule, step.accepted, step.reason)
inplace_elemwise False no input can hold the result: input 0 (x) is a protected graph input (not mutable)
inplace_elemwise True overwrite input 0 (Elemwise{exp,no_inplace}.0)
inplace_elemwise True overwrite input 0 (Elemwise{mul,inplace}.0)
"""

from __future__ import annotations

from typing import Any

from symlab.graph.basic import Apply, Constant
from symlab.graph.destroyhandler import DestroyHandler
from symlab.graph.fg import FunctionGraph
from symlab.graph.inner_graph import branch_lanes
from symlab.rewriting.basic import GraphRewriter
from symlab.rewriting.context import RewriteContext
from symlab.tensor.elemwise import DimShuffle, Elemwise

RULE_ELEMWISE = "inplace_elemwise"
RULE_DIMSHUFFLE = "inplace_dimshuffle"


class InplaceElemwise(GraphRewriter):
    """Let an Elemwise write its result into an input the destroy handler frees"""

    name = RULE_ELEMWISE

    def apply(self, fgraph: FunctionGraph, ctx: RewriteContext) -> bool:
        return bool(insert_inplace_elemwise(fgraph, ctx, self))


class InplaceDimShuffle(GraphRewriter):
    """Mark DimShuffle views InplaceDimShuffle"""

    name = RULE_DIMSHUFFLE

    def apply(self, fgraph: FunctionGraph, ctx: RewriteContext) -> bool:
        return bool(insert_inplace_dimshuffle(fgraph, ctx, self))


def ensure_destroy_handler(fgraph: FunctionGraph) -> DestroyHandler:
    """Attach a ``DestroyHandler`` (all inputs protected) unless the graph has one."""
    handler = fgraph.destroy_handler
    if handler is None:
        handler = DestroyHandler()
        fgraph.attach_feature(handler)
    return handler


def inplace_candidates(
    fgraph: FunctionGraph, node: Apply, output: int = 0, lanes: dict[Apply, tuple[int, str]] | None = None
) -> tuple[list[int], list[str]]:
    """The inputs of an ``Elemwise`` node that could hold output ``output``, and why the others cannot.

    This is a quick filter: the destroy handler still decides, when the
    replacement is validated, whether the input's value is needed elsewhere.
    Inputs the node already overwrites are skipped. ``lanes``
    (:func:`~symlab.graph.inner_graph.branch_lanes`) keeps an ``ifelse`` lazy:
    an input that a node of an ``ifelse`` branch other than ``node``'s reads is
    not overwritten, since that would force the branch to run first.
    """
    handler = ensure_destroy_handler(fgraph)
    out = node.outputs[output]
    taken = {i for _, i in getattr(node.op, "inplace_pattern", ())}
    candidates: list[int] = []
    excluded: list[str] = []
    for i, inp in enumerate(node.inputs):
        where = f"input {i} ({inp})"
        if i in taken:
            excluded.append(f"{where} already holds another output")
        elif inp.type != out.type:
            excluded.append(f"{where} has type {inp.type}, not the output's {out.type}")
        elif isinstance(inp, Constant):
            excluded.append(f"{where} is a constant")
        elif (protected := handler.is_protected(inp)) is not None:
            excluded.append(f"{where} is {protected}")
        elif destroyers := handler.destroyers(inp):
            excluded.append(f"{where} is already overwritten by {destroyers[0]}")
        elif lanes and (other := _reader_in_another_branch(fgraph, inp, node, lanes)) is not None:
            excluded.append(f"{where} is read by {other}, in another lazy branch (overwriting it would make that "
                            "branch run first)")
        else:
            candidates.append(i)
    return candidates, excluded


def _reader_in_another_branch(fgraph: FunctionGraph, var: Any, node: Apply, lanes: dict[Apply, tuple[int, str]]) -> Any:
    """A client of ``var`` in a lazy branch that is not ``node``'s, or None."""
    lane = lanes.get(node)
    for client, _ in fgraph.clients[var]:
        if client != "output" and client is not node and lanes.get(client) not in (None, lane):
            return client
    return None


def try_inplace_elemwise(fgraph: FunctionGraph, node: Apply, ctx: RewriteContext | None = None,
                         rewriter: Any = None, lanes: dict[Apply, tuple[int, str]] | None = None) -> Apply | None:
    """Replace one ``Elemwise`` node by an inplace version if the destroy handler allows it.

    Each output not yet inplace gets the first input that can hold it.
    Returns the final new node, or ``None`` (the graph unchanged) when no
    output could be made inplace. Other nodes are left alone and not reported.
    """
    if not isinstance(node.op, Elemwise) or node not in fgraph:
        return None
    if ctx is None:
        with RewriteContext(fgraph) as own:
            return try_inplace_elemwise(fgraph, node, own, rewriter, lanes)
    rewriter = rewriter if rewriter is not None else _ELEMWISE
    current = node
    for o in range(len(node.outputs)):
        op = current.op
        if o in dict(op.inplace_pattern):
            continue
        candidates, excluded = inplace_candidates(fgraph, current, o, lanes)
        if not candidates:
            what = "the result" if len(node.outputs) == 1 else f"output {o}"
            ctx.refuse(rewriter, f"no input can hold {what}: " + "; ".join(excluded), node=current, once=True)
            continue
        for i in candidates:
            pattern = {**dict(op.inplace_pattern), o: i}
            new_node = Apply(Elemwise(op.scalar_op, pattern), list(current.inputs), [out.type() for out in current.outputs])
            for old_out, new_out in zip(current.outputs, new_node.outputs):
                new_out.name = old_out.name
            new_node.tag.update(current.tag)
            pairs = [(old_out, new_out) for old_out, new_out in zip(current.outputs, new_node.outputs) if old_out in fgraph]
            where = "" if len(node.outputs) == 1 else f"output {o} "
            if ctx.replace(rewriter, pairs, node=current, reason=f"{where}overwrite input {i} ({current.inputs[i]})",
                           once=True, refusal_prefix=f"input {i}: destroy handler: "):
                if lanes is not None and current in lanes:
                    lanes[new_node] = lanes[current]
                current = new_node
                break
    return None if current is node else current


def insert_inplace_elemwise(
    fgraph: FunctionGraph, ctx: RewriteContext | None = None, rewriter: Any = None
) -> list[tuple[Apply, Apply]]:
    """Make every ``Elemwise`` node inplace where allowed; return the ``(old_node, new_node)`` pairs."""
    if ctx is None:
        with RewriteContext(fgraph) as own:
            return insert_inplace_elemwise(fgraph, own, rewriter)
    ensure_destroy_handler(fgraph)
    lanes = branch_lanes(fgraph, order := fgraph.toposort())  # an ifelse's branches stay apart (lazy)
    tried = ((node, try_inplace_elemwise(fgraph, node, ctx, rewriter, lanes)) for node in order)
    return [(node, new_node) for node, new_node in tried if new_node is not None]


def insert_inplace_dimshuffle(
    fgraph: FunctionGraph, ctx: RewriteContext | None = None, rewriter: Any = None
) -> list[tuple[Apply, Apply]]:
    """Rename every ``DimShuffle`` view ``InplaceDimShuffle`` (same computation, same view)."""
    if ctx is None:
        with RewriteContext(fgraph) as own:
            return insert_inplace_dimshuffle(fgraph, own, rewriter)
    rewriter = rewriter if rewriter is not None else _DIMSHUFFLE
    ensure_destroy_handler(fgraph)
    changed: list[tuple[Apply, Apply]] = []
    for node in fgraph.toposort():
        op = node.op
        if not isinstance(op, DimShuffle) or op.inplace or node not in fgraph:
            continue
        new_node = Apply(DimShuffle(op.input_ndim, op.new_order, inplace=True), list(node.inputs), [node.outputs[0].type()])
        new_node.outputs[0].name = node.outputs[0].name
        if ctx.replace(rewriter, [(node.outputs[0], new_node.outputs[0])], node=node,
                       reason="a DimShuffle is always a view", once=True, refusal_prefix="destroy handler: "):
            changed.append((node, new_node))
    return changed


def insert_inplace(
    fgraph: FunctionGraph, ctx: RewriteContext | None = None, dimshuffle: bool = True
) -> list[tuple[Apply, Apply]]:
    """Run the inplace rewrites (``Elemwise``, then ``DimShuffle`` naming); return ``(old, new)`` node pairs.

    Attaches a ``DestroyHandler`` (protecting every input) if the graph has
    none. With a recording ``ctx``, every attempt is a step of its trace.
    """
    if ctx is None:
        with RewriteContext(fgraph) as own:
            return insert_inplace(fgraph, own, dimshuffle)
    changed = insert_inplace_elemwise(fgraph, ctx)
    if dimshuffle:
        changed += insert_inplace_dimshuffle(fgraph, ctx)
    return changed


_ELEMWISE = InplaceElemwise()
_DIMSHUFFLE = InplaceDimShuffle()
