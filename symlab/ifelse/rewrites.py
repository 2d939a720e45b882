"""The rewrites of ``ifelse`` (registered in the rewrite database when :mod:`symlab.ifelse` is imported).

PyTensor's rules for ``IfElse`` where they help, each recorded in the trace like any rule
(phase ``canonicalize``, tag ``ifelse``):

- ``ifelse_constant_condition``: a constant condition is lifted: the node becomes the chosen branch;
- ``ifelse_identical_branches``: an output whose then and else values are the same variable is
  that variable (all outputs so: the node is gone);
- ``ifelse_same_condition_inside``: ``ifelse(c, ifelse(c, a, b), d) -> ifelse(c, a, d)`` (and the
  else twin; PyTensor's ``cond_merge_ifs_true``/``_false``);
- ``ifelse_merge_same_condition``: ifelse nodes on the same condition, neither needing the other,
  become one node with more outputs (PyTensor's ``CondMerge``);
- ``ifelse_push_out_common_op``: ``ifelse(c, op(a, z), op(b, z)) -> op(ifelse(c, a, b), z)`` for an
  elementwise op or a DimShuffle applied to both branches (the op then exists once in the graph).

>>> import symlab.tensor as st
>>> from symlab.rewriting import rewrite_graph
>>> from symlab.ifelse import ifelse
>>> x, y = st.dvectors("x", "y")
>>> out, trace = rewrite_graph(ifelse(st.constant(1), st.exp(x), st.exp(y)), include=("ifelse",))
>>> str(out.owner.op), [s.rule for s in trace]
('Elemwise{exp,no_inplace}', ['ifelse_constant_condition'])
"""

from __future__ import annotations

from typing import Any

from symlab.graph.basic import Apply, Constant, Variable
from symlab.graph.fg import FunctionGraph
from symlab.graph.traversal import ancestors
from symlab.ifelse.op import IfElse, truth
from symlab.rewriting.basic import GraphRewriter, node_rewriter
from symlab.rewriting.context import RewriteContext
from symlab.rewriting.db import register
from symlab.tensor.elemwise import DimShuffle, Elemwise

TAGS = ("canonicalize", "fast_compile", "ifelse")


def _then(node: Apply) -> list[Variable]:
    return list(node.inputs[1 : 1 + node.op.n_outs])


def _else(node: Apply) -> list[Variable]:
    return list(node.inputs[1 + node.op.n_outs :])


@register(*TAGS)
@node_rewriter([IfElse])
def ifelse_constant_condition(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """ifelse(constant, a, b) -> a or b (the branch the constant chooses)"""
    cond = node.inputs[0]
    if not isinstance(cond, Constant):
        return None
    return _then(node) if truth(cond.data) else _else(node)


@register(*TAGS)
@node_rewriter([IfElse])
def ifelse_identical_branches(fgraph: FunctionGraph, node: Apply) -> list[Variable | None] | None:
    """ifelse(c, a, a) -> a (output by output; the other outputs keep an ifelse of their own)"""
    pairs = list(zip(_then(node), _else(node)))
    same = [t is e for t, e in pairs]
    if not any(same):
        return None
    if all(same):
        return [t for t, _ in pairs]
    kept = [k for k, s in enumerate(same) if not s]
    op = node.op
    rest = IfElse(len(kept), as_view=op.as_view, name=op.branch_name)(
        node.inputs[0], *[pairs[k][0] for k in kept], *[pairs[k][1] for k in kept], return_list=True
    )
    chosen = iter(rest)
    return [pairs[k][0] if s else next(chosen) for k, s in enumerate(same)]


def _same_condition_inside(node: Apply, branch: str) -> list[Variable] | None:
    values = _then(node) if branch == "then" else _else(node)
    cond = node.inputs[0]
    changed = False
    new = []
    for v in values:
        inner = v.owner
        if inner is not None and isinstance(inner.op, IfElse) and inner.inputs[0] is cond:
            k = inner.outputs.index(v)
            v = (_then(inner) if branch == "then" else _else(inner))[k]
            changed = True
        new.append(v)
    if not changed:
        return None
    then_values, else_values = (new, _else(node)) if branch == "then" else (_then(node), new)
    return node.op(cond, *then_values, *else_values, return_list=True)


@register(*TAGS)
@node_rewriter([IfElse])
def ifelse_same_condition_inside(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """ifelse(c, ifelse(c, a, b), d) -> ifelse(c, a, d); ifelse(c, d, ifelse(c, a, b)) -> ifelse(c, d, b)"""
    return _same_condition_inside(node, "then") or _same_condition_inside(node, "else")


def _depends(node: Apply, on: Apply) -> bool:
    outs = set(on.outputs)
    return any(v in outs for v in ancestors(node.inputs))


class MergeSameCondition(GraphRewriter):
    """ifelse(c, a, b), ifelse(c, d, e) -> one ifelse(c, (a, d), (b, e)) when neither needs the other."""

    name = "ifelse_merge_same_condition"

    def apply(self, fgraph: FunctionGraph, ctx: RewriteContext) -> bool:
        nodes = [n for n in fgraph.toposort() if isinstance(n.op, IfElse)]
        for k, first in enumerate(nodes):
            for other in nodes[k + 1 :]:
                if other.inputs[0] is not first.inputs[0] or first.op.as_view != other.op.as_view:
                    continue
                if _depends(other, first) or _depends(first, other):
                    continue
                names = [n.op.branch_name for n in (first, other)]
                name = None if names == [None, None] else "&".join("?" if s is None else str(s) for s in names)
                merged = IfElse(first.op.n_outs + other.op.n_outs, as_view=first.op.as_view, name=name)(
                    first.inputs[0], *_then(first), *_then(other), *_else(first), *_else(other), return_list=True
                )
                pairs = list(zip([*first.outputs, *other.outputs], merged))
                if ctx.replace(self, pairs, node=other, reason=f"same condition as {first.op}"):
                    return True
        return False


ifelse_merge_same_condition = register(MergeSameCondition(), *TAGS)

#: The ops ``ifelse_push_out_common_op`` takes out of both branches (one output, no memory effects).
PUSHABLE = (Elemwise, DimShuffle)


def _pushable(fgraph: FunctionGraph, node: Apply, k: int) -> tuple[Any, list[int]] | None:
    """For output ``k``: (the op applied in both branches, the input positions where they differ), or None."""
    t, e = _then(node)[k], _else(node)[k]
    tn, en = t.owner, e.owner
    if tn is None or en is None or tn is en or not isinstance(tn.op, PUSHABLE) or tn.op != en.op:
        return None
    if len(tn.outputs) != 1 or len(tn.inputs) != len(en.inputs) or tn.op.destroy_map or tn.op.view_map:
        return None
    for var, pos in ((t, 1 + k), (e, 1 + node.op.n_outs + k)):  # used by this ifelse only: computed once after
        if list(fgraph.clients.get(var, ())) != [(node, pos)]:
            return None
    differ = [i for i, (a, b) in enumerate(zip(tn.inputs, en.inputs)) if a is not b]
    for i in differ:
        a, b = tn.inputs[i], en.inputs[i]
        if type(a.type) is not type(b.type) or getattr(a.type, "dtype", None) != getattr(b.type, "dtype", None) \
                or getattr(a.type, "ndim", None) != getattr(b.type, "ndim", None):
            return None
    return tn.op, differ


@register(*TAGS)
@node_rewriter([IfElse])
def ifelse_push_out_common_op(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """ifelse(c, op(a, z), op(b, z)) -> op(ifelse(c, a, b), z) (an elementwise op or DimShuffle in both branches)"""
    n = node.op.n_outs
    found = {k: _pushable(fgraph, node, k) for k in range(n)}
    found = {k: f for k, f in found.items() if f is not None and f[1]}
    if not found:
        return None
    then_in, else_in = [], []
    for k in range(n):
        if k in found:
            _op, differ = found[k]
            then_in += [_then(node)[k].owner.inputs[i] for i in differ]
            else_in += [_else(node)[k].owner.inputs[i] for i in differ]
        else:
            then_in.append(_then(node)[k])
            else_in.append(_else(node)[k])
    chosen = iter(IfElse(len(then_in), as_view=node.op.as_view, name=node.op.branch_name)(
        node.inputs[0], *then_in, *else_in, return_list=True
    ))
    out: list[Variable] = []
    for k in range(n):
        if k not in found:
            out.append(next(chosen))
            continue
        op, differ = found[k]
        ins = list(_then(node)[k].owner.inputs)
        for i in differ:
            ins[i] = next(chosen)
        out.append(op(*ins))
    return out


__all__ = [
    "PUSHABLE",
    "MergeSameCondition",
    "ifelse_constant_condition",
    "ifelse_identical_branches",
    "ifelse_merge_same_condition",
    "ifelse_push_out_common_op",
    "ifelse_same_condition_inside",
]
