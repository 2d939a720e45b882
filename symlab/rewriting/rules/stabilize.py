"""Stabilize: the same values, computed without needless overflow or loss of precision.

>>> import numpy as np
>>> import symlab.tensor as T
>>> from symlab.rewriting import rewrite_graph
>>> x = T.dvector("x")
>>> out, trace = rewrite_graph(T.log(T.sigmoid(x)), include=("stabilize",))
>>> [s.rule for s in trace], out.eval({trace.fgraph.inputs[0]: np.array([-1000.0])})
(['log_sigmoid'], array([-1000.]))

A softmax written from primitives becomes the ``Softmax`` op (which
subtracts the maximum), and a ``log(sum(exp(x)))`` the stable logsumexp:

>>> out, trace = rewrite_graph(T.exp(x) / T.exp(x).sum(keepdims=True))
>>> out.owner.op, [s.rule for s in trace]
(Softmax{axis=0}, ['merge', 'softmax_from_primitives'])
"""

from __future__ import annotations

from symlab.graph.basic import Apply, Variable
from symlab.graph.fg import FunctionGraph
from symlab.rewriting.basic import node_rewriter
from symlab.rewriting.db import register
from symlab.rewriting.rules.table import fits, register_table
from symlab.tensor import math as M
from symlab.tensor.elemwise import DimShuffle
from symlab.tensor.reduction import Sum
from symlab.tensor.special import Softmax, logsumexp

#: (name, pattern, replacement): numerically better forms of the same function.
ROWS = [
    ("log1p", (M.log, (M.add, 1, "x")), (M.log1p, "x")),
    ("log1p_swapped", (M.log, (M.add, "x", 1)), (M.log1p, "x")),
    ("expm1", (M.sub, (M.exp, "x"), 1), (M.expm1, "x")),
    ("log_sigmoid", (M.log, (M.sigmoid, "x")), lambda x: -M.softplus(-x)),
    ("log_one_minus_sigmoid", (M.log, (M.sub, 1, (M.sigmoid, "x"))), lambda x: -M.softplus(x)),
]

register_table(ROWS, "stabilize")


def _keepdims_of(ds: Variable, reduced: Apply) -> bool:
    """True if ``ds`` is ``reduced``'s output with the reduced axes put back as size-1 dimensions."""
    owner = ds.owner
    if owner is None or not isinstance(owner.op, DimShuffle) or owner.inputs[0] is not reduced.outputs[0]:
        return False
    return owner.op.new_order == reduced.op.keepdims_pattern(reduced.inputs[0].ndim)


def _softmax_axis(sum_node: Apply) -> tuple[bool, int | None]:
    """(ok, axis): the ``Softmax`` axis equivalent to the axes ``sum_node`` reduces."""
    ndim = sum_node.inputs[0].ndim
    axes = sum_node.op.reduced_axes(ndim)
    if len(axes) == ndim:
        return True, (0 if ndim == 1 else None)
    if len(axes) == 1:
        return True, axes[0]
    return False, None


@register("stabilize")
@node_rewriter([M.true_div])
def softmax_from_primitives(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """exp(x) / sum(exp(x), axis, keepdims=True) -> softmax(x, axis)"""
    e, denominator = node.inputs
    if e.owner is None or e.owner.op != M.exp:
        return None
    total = denominator.owner.inputs[0].owner if denominator.owner is not None else None
    if total is None or not isinstance(total.op, Sum) or total.inputs[0] is not e:
        return None
    if not _keepdims_of(denominator, total):
        return None
    ok, axis = _softmax_axis(total)
    x = e.owner.inputs[0]
    if not ok or not x.dtype.startswith("float"):
        return None
    new = Softmax(axis)(x)
    return [new] if fits(new, node.outputs[0]) else None


@register("stabilize")
@node_rewriter([Softmax])
def softmax_shift(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """softmax(x - c) -> softmax(x) when c is constant along the axis (softmax subtracts the max itself)"""
    (shifted,) = node.inputs
    if shifted.owner is None or shifted.owner.op != M.sub:
        return None
    x, c = shifted.owner.inputs
    axis = node.op.axis
    axes = range(x.ndim) if axis is None else (axis,)
    if x.type != shifted.type or any(c.type.shape[d] != 1 for d in axes):
        return None
    return [Softmax(axis)(x)]


def _is_shifted(x: Variable, axes: tuple[int, ...]) -> bool:
    """True if ``x`` is ``y - c`` with ``c`` constant along ``axes`` (already stabilised)."""
    return (
        x.owner is not None
        and x.owner.op == M.sub
        and all(x.owner.inputs[1].type.shape[d] == 1 for d in axes)
    )


@register("stabilize")
@node_rewriter([M.log])
def logsumexp_stable(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """log(sum(exp(x), axes)) -> logsumexp(x, axes): the maximum subtracted before exponentiating"""
    (s,) = node.inputs
    ds = None
    if s.owner is not None and isinstance(s.owner.op, DimShuffle):
        ds, s = s.owner.op, s.owner.inputs[0]
    total = s.owner
    if total is None or not isinstance(total.op, Sum):
        return None
    e = total.inputs[0]
    if e.owner is None or e.owner.op != M.exp:
        return None
    x = e.owner.inputs[0]
    axes = total.op.reduced_axes(x.ndim)
    if not x.dtype.startswith("float") or not axes or _is_shifted(x, axes):
        return None
    new = logsumexp(x, axis=axes)
    if ds is not None:
        new = ds(new)
    return [new] if fits(new, node.outputs[0]) else None


__all__ = ["ROWS", "logsumexp_stable", "softmax_from_primitives", "softmax_shift"]
