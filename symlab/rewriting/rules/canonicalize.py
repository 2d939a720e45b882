"""Canonicalize: algebraic simplifications, and useless nodes removed.

Each row of :data:`ROWS` is one rule, ``(name, pattern, replacement)``;
the replacement is used only if its type fits the replaced output (see
:func:`~symlab.rewriting.rules.table.fits`): ``x * 1 -> x`` does not apply
when the ones broadcast ``x`` to a bigger shape.

>>> import symlab.tensor as T
>>> from symlab.rewriting import rewrite_graph
>>> x, y = T.dvectors("x", "y")
>>> out, trace = rewrite_graph(-(-(x * y / y)) * 1.0 + 0.0, include=("canonicalize",))
>>> out is trace.fgraph.inputs[0], [s.rule for s in trace]
(True, ['mul_div', 'neg_neg', 'constant_folding', 'mul_one', 'constant_folding', 'add_zero'])

Values. ``x - x -> 0`` assumes a finite ``x`` (``inf - inf`` is NaN), as
PyTensor does. The seed's ``x*y/y -> x`` forgets that ``y`` may be 0
(``0/0`` is NaN): kept because seed 003 teaches it. Every other row keeps
the values: ``exp(log x)`` becomes ``switch(x >= 0, x, nan)`` (the log of a
negative number stays NaN), and ``log(exp x) -> x`` is exact (and right
where ``exp`` overflows).

Node rewriters below the table handle what a pattern cannot say: useless
``DimShuffle``/``SpecifyShape``/``Reshape`` nodes and chains of
``DimShuffle`` (see also :mod:`~symlab.rewriting.rules.shapes`), and
:func:`distribute_cancelling_divisions`, which distributes a product over a sum
when that cancels every division: ``(1/p + 1/q) * p * q -> q + p``. It is
tagged ``unsafe`` and off unless a query includes it, like ``cancel_factors``:
at ``p = 0`` the graph computes ``inf * 0``, NaN, and the rewritten graph 1.
Where the divisors cannot be 0 for a finite input (``sigmoid``, ``exp``), the
logistic rule ``sigmoid_distribute`` (:mod:`~symlab.rewriting.rules.logistic`,
phase ``stabilize``) does the same by default:

>>> p, q = T.dvectors("p", "q")
>>> out, trace = rewrite_graph((1.0 / p + 1.0 / q) * p * q, include=("canonicalize", "unsafe"))
>>> "distribute_cancelling_divisions" in [s.rule for s in trace]
True
>>> sorted({str(n.op.scalar_op) for n in trace.fgraph.toposort()})
['add']
>>> out, trace = rewrite_graph((1.0 / p + 1.0 / q) * p * q, include=("canonicalize",))
>>> "distribute_cancelling_divisions" in [s.rule for s in trace]
False
"""

from __future__ import annotations

from functools import reduce

from symlab.graph.basic import Apply, Constant, Variable
from symlab.graph.fg import FunctionGraph
from symlab.rewriting.basic import node_rewriter
from symlab.rewriting.db import register
from symlab.rewriting.rules.fill import zeros_shaped_like
from symlab.rewriting.rules.table import fits, register_table
from symlab.tensor import math as M
from symlab.tensor.elemwise import DimShuffle
from symlab.tensor.shape import Reshape
from symlab.tensor.shape_of import NoneTypeT, Shape_i, SpecifyShape

#: (name, pattern, replacement): the algebra of the canonicalize phase.
ROWS = [
    ("mul_div", (M.true_div, (M.mul, "x", "y"), "y"), "x"),
    ("mul_div_swapped", (M.true_div, (M.mul, "y", "x"), "y"), "x"),
    ("sub_self", (M.sub, "x", "x"), zeros_shaped_like),
    ("add_zero", (M.add, "x", 0), "x"),
    ("zero_add", (M.add, 0, "x"), "x"),
    ("sub_zero", (M.sub, "x", 0), "x"),
    ("mul_one", (M.mul, "x", 1), "x"),
    ("one_mul", (M.mul, 1, "x"), "x"),
    ("div_one", (M.true_div, "x", 1), "x"),
    ("neg_neg", (M.neg, (M.neg, "x")), "x"),
    ("exp_log", (M.exp, (M.log, "x")), (M.switch, (M.ge, "x", 0), "x", float("nan")),  # log(x < 0) is NaN: kept
     lambda fgraph, node, b: b["x"].dtype.startswith("float")),
    ("log_exp", (M.log, (M.exp, "x")), "x",  # exact, and x where exp(x) overflows; complex x: log wraps the phase
     lambda fgraph, node, b: b["x"].dtype.startswith("float")),
]

#: Rules cheap and safe enough for ``fast_compile``.
CHEAP = ("add_zero", "zero_add", "sub_zero", "mul_one", "one_mul", "div_one", "neg_neg")

register_table(ROWS, "canonicalize", cheap=CHEAP)


# -- products over sums whose divisions cancel -----------------------------------------------------------


#: At most this many factors and terms are looked at: the cancellations this rule makes are between a few
#: operands, and a bound keeps it linear on long products and sums (each of their nodes is visited).
MAX_OPERANDS = 16


def _factors(v: Variable, fgraph: FunctionGraph) -> list[Variable]:
    """The factors of the product tree rooted at ``v``; an inner product is opened only if nothing else uses it."""
    out: list[Variable] = []
    stack = [(v, True)]
    while stack:
        u, top = stack.pop()
        owner = u.owner
        if owner is not None and owner.op == M.mul and (top or len(fgraph.clients[u]) == 1) \
                and len(out) + len(stack) + len(owner.inputs) <= MAX_OPERANDS:
            stack.extend((i, False) for i in reversed(owner.inputs))
        else:
            out.append(u)
    return out


def _terms(v: Variable, fgraph: FunctionGraph) -> list[tuple[int, Variable]]:
    """The signed terms ``(±1, t)`` of the sum tree rooted at ``v`` (``add``, ``sub`` and ``neg`` opened)."""
    out: list[tuple[int, Variable]] = []
    stack = [(1, v, True)]
    while stack:
        sign, u, top = stack.pop()
        owner = u.owner
        opened = owner is not None and (top or len(fgraph.clients[u]) == 1) \
            and len(out) + len(stack) + len(owner.inputs) <= MAX_OPERANDS
        if opened and owner.op == M.add:
            stack.extend((sign, i, False) for i in reversed(owner.inputs))
        elif opened and owner.op == M.sub:
            stack.extend([(-sign, owner.inputs[1], False), (sign, owner.inputs[0], False)])
        elif opened and owner.op == M.neg:
            stack.append((-sign, owner.inputs[0], False))
        else:
            out.append((sign, u))
    return out


def _cancelled(terms: list[tuple[int, Variable]], others: list[Variable]) -> list[tuple[int, Variable]] | None:
    """Each term ``n / d`` times ``others``, with ``d`` struck from ``others``; None unless every term cancels."""
    out = []
    for sign, t in terms:
        if t.owner is None or t.owner.op != M.true_div:
            return None
        num, den = t.owner.inputs
        rest = list(others)
        at = next((k for k, f in enumerate(rest) if f is den), None)
        if at is None:
            return None
        del rest[at]
        out.append((sign, reduce(M.mul, rest, num)))
    return out


@register("canonicalize", "optional", "unsafe")
@node_rewriter([M.mul])
def distribute_cancelling_divisions(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """(a/p + b/q) * p * q -> a*q + b*p: a product distributed over a sum when that cancels every division (unsafe: p = 0 gives NaN before, a finite value after)"""
    factors = _factors(node.outputs[0], fgraph)
    for k, f in enumerate(factors):
        if f.owner is None or f.owner.op not in (M.add, M.sub, M.neg):
            continue
        terms = _terms(f, fgraph)
        products = _cancelled(terms, factors[:k] + factors[k + 1:])
        if products is None:
            continue
        positive = [t for s, t in products if s > 0]
        negative = [t for s, t in products if s < 0]
        total = reduce(M.add, positive) if positive else M.neg(negative.pop(0))
        total = reduce(M.sub, negative, total)
        if fits(total, node.outputs[0]):
            return [total]
    return None


# -- useless nodes ---------------------------------------------------------------------------------------


@register("canonicalize", "fast_compile", "shapes")
@node_rewriter([DimShuffle])
def useless_dimshuffle(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """DimShuffle{0,1,...,n-1}(x) -> x"""
    op = node.op
    if op.new_order == tuple(range(op.input_ndim)):
        return [node.inputs[0]]
    return None


@register("canonicalize", "fast_compile", "shapes")
@node_rewriter([DimShuffle])
def merge_dimshuffles(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """DimShuffle(DimShuffle(x)) -> one DimShuffle(x)"""
    inner = node.inputs[0].owner
    if inner is None or not isinstance(inner.op, DimShuffle):
        return None
    first, second = inner.op, node.op
    order = tuple("x" if e == "x" else first.new_order[e] for e in second.new_order)
    x = inner.inputs[0]
    if order == tuple(range(first.input_ndim)):
        return [x]
    return [DimShuffle(first.input_ndim, order)(x)]


@register("canonicalize", "fast_compile", "shapes")
@node_rewriter([SpecifyShape])
def useless_specify_shape(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """SpecifyShape(x, shape) -> x when x's type already says shape"""
    x, *sizes = node.inputs
    for known, s in zip(x.type.shape, sizes):
        if isinstance(s.type, NoneTypeT):
            continue
        if isinstance(s, Constant) and known is not None and int(s.data) == known:
            continue
        if s.owner is not None and isinstance(s.owner.op, Shape_i) and s.owner.inputs[0] is x:
            continue  # x's own size
        return None
    return [x]


@register("canonicalize", "fast_compile", "shapes")
@node_rewriter([Reshape])
def useless_reshape(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """Reshape(x, shape) -> x when shape is x's own shape"""
    x, shp = node.inputs
    out = node.outputs[0]
    if out.ndim != x.ndim:
        return None
    static = x.type.shape
    if None not in static and out.type.shape == static:
        return [x]
    from symlab.tensor.joining import vector_entry

    for d in range(x.ndim):
        entry = vector_entry(shp, d)
        if isinstance(entry, Constant) and static[d] is not None and int(entry.data) == static[d]:
            continue
        if entry.owner is not None and isinstance(entry.owner.op, Shape_i) and entry.owner.op.i == d \
                and entry.owner.inputs[0] is x:
            continue
        return None
    return [x]


__all__ = [
    "CHEAP",
    "MAX_OPERANDS",
    "ROWS",
    "distribute_cancelling_divisions",
    "merge_dimshuffles",
    "useless_dimshuffle",
    "useless_reshape",
    "useless_specify_shape",
]
