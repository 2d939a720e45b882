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

The rows of :data:`EXTREME_ROWS` replace forms that overflow or cancel at
extreme inputs: ``log(1 + exp(x))`` (``inf`` from x = 710 on) becomes the
``softplus`` op, whose kernels compute ``max(x, 0) + log1p(exp(-|x|))``:

>>> out, trace = rewrite_graph(T.log(1 + T.exp(x)), include=("stabilize",))
>>> [s.rule for s in trace], out.eval({trace.fgraph.inputs[0]: np.array([1000.0, -1000.0])})
(['log1p', 'log1p_exp'], array([1000.,    0.]))

A rule here changes a result only where the original lost it to an
overflow or a cancellation (``inf``, ``nan`` from ``inf / inf``, ``-inf``
from ``log(0)``): a NaN of the function itself (``log(1 - exp(x))`` for
x > 0) stays a NaN.
"""

from __future__ import annotations

import math

from symlab.graph.basic import Apply, Variable
from symlab.graph.fg import FunctionGraph
from symlab.rewriting.basic import node_rewriter
from symlab.rewriting.db import register
from symlab.rewriting.rules.table import fits, register_table
from symlab.tensor import math as M
from symlab.tensor.elemwise import DimShuffle
from symlab.tensor.reduction import Sum
from symlab.tensor.special import LogSoftmax, Softmax, logsumexp


def _real_float(fgraph: FunctionGraph, node: Apply, bindings: dict) -> bool:
    """The rule's ``x`` is a real floating tensor (``-x`` of an unsigned or the smallest integer wraps around)."""
    return bindings["x"].dtype.startswith("float")


#: (name, pattern, replacement): numerically better forms of the same function.
ROWS = [
    ("log1p", (M.log, (M.add, 1, "x")), (M.log1p, "x")),
    ("log1p_swapped", (M.log, (M.add, "x", 1)), (M.log1p, "x")),
    ("expm1", (M.sub, (M.exp, "x"), 1), (M.expm1, "x")),
    ("log_sigmoid", (M.log, (M.sigmoid, "x")), lambda x: -M.softplus(-x), _real_float),
    ("log_one_minus_sigmoid", (M.log, (M.sub, 1, (M.sigmoid, "x"))), lambda x: -M.softplus(x)),
]

register_table(ROWS, "stabilize")

_MINUS_LOG_2 = -math.log(2.0)


def _no_log_client(fgraph: FunctionGraph, node: Apply, bindings: dict) -> bool:
    """Real floating x, and no ``log`` uses the result (log_one_minus_sigmoid takes that in one step)."""
    clients = fgraph.clients.get(node.outputs[0], ()) if fgraph is not None else ()
    return _real_float(fgraph, node, bindings) and not any(
        isinstance(c, Apply) and c.op == M.log for c, _ in clients)


def sigmoid_neg(x: Variable) -> Variable:
    """sigmoid(-x)"""
    return M.sigmoid(-x)


def neg_expm1(x: Variable) -> Variable:
    """-expm1(x)"""
    return -M.expm1(x)


def log1mexp(x: Variable) -> Variable:
    """log(1 - exp(x)) to full precision: log1p(-exp(x)) where exp(x) < 1/2, log(-expm1(x)) elsewhere (Maechler)."""
    return M.switch(M.lt(x, _MINUS_LOG_2), M.log1p(-M.exp(x)), M.log(-M.expm1(x)))


#: (name, pattern, replacement[, constraint]): forms that overflow or cancel at extreme inputs (the comment: where).
EXTREME_ROWS = [
    # log1p(exp(x)) is inf from x = 710 on; softplus(x) = max(x, 0) + log1p(exp(-|x|)) never overflows
    ("log1p_exp", (M.log1p, (M.exp, "x")), (M.softplus, "x")),
    # -log(sigmoid(-x)) is -(-softplus(-(-x))) after log_sigmoid, and canonicalize has run: the negations cancel
    ("neg_neg_stabilize", (M.neg, (M.neg, "x")), "x"),
    # 1 - sigmoid(x) is 0 from x = 37 on; sigmoid(-x) keeps its exp(-x)
    ("one_minus_sigmoid", (M.sub, 1, (M.sigmoid, "x")), sigmoid_neg, _no_log_client),
    # log(1 - exp(x)) is log(0) = -inf for -5e-17 < x < 0, and loses every digit of -exp(x) for x < -37
    ("log1mexp", (M.log, (M.sub, 1, (M.exp, "x"))), log1mexp, _real_float),
    # 1 - exp(x) is 0 for |x| < 5e-17 and loses digits near 0; -expm1(x) keeps them (a log of it: log1mexp)
    ("one_minus_exp", (M.sub, 1, (M.exp, "x")), neg_expm1, _no_log_client),
    # exp(x) / (1 + exp(x)) is inf / inf = nan from x = 710 on; sigmoid(x) is 1
    ("sigmoid_from_exp", (M.true_div, (M.exp, "x"), (M.add, 1, (M.exp, "x"))), (M.sigmoid, "x"), _real_float),
    ("sigmoid_from_exp_swapped", (M.true_div, (M.exp, "x"), (M.add, (M.exp, "x"), 1)), (M.sigmoid, "x"),
     _real_float),
    # 1 / (1 + exp(-x)) is the same function: the sigmoid op, which specialize writes out with one shared exp
    ("sigmoid_from_reciprocal", (M.true_div, 1, (M.add, 1, (M.exp, (M.neg, "x")))), (M.sigmoid, "x"), _real_float),
    ("sigmoid_from_reciprocal_swapped", (M.true_div, 1, (M.add, (M.exp, (M.neg, "x")), 1)), (M.sigmoid, "x"),
     _real_float),
]

register_table(EXTREME_ROWS, "stabilize")


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


@register("stabilize")
@node_rewriter([M.log])
def log_softmax(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """log(softmax(x, axis)) -> log_softmax(x, axis): x - logsumexp(x), no log(0) = -inf for the small entries"""
    (s,) = node.inputs
    if s.owner is None or type(s.owner.op) is not Softmax:
        return None
    new = LogSoftmax(s.owner.op.axis)(s.owner.inputs[0])
    return [new] if fits(new, node.outputs[0]) else None


__all__ = [
    "EXTREME_ROWS",
    "ROWS",
    "log1mexp",
    "log_softmax",
    "logsumexp_stable",
    "neg_expm1",
    "sigmoid_neg",
    "softmax_from_primitives",
    "softmax_shift",
]
