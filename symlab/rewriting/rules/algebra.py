"""Canonical sums and products: flatten, collect constants and like terms, cancel, rebuild readably.

Rules of the ``canonicalize`` phase, the "canonizer" of Theano/PyTensor in symlab's own terms (the first
two in ``fast_run``, none in ``fast_compile``):

===================  ============  =====================================================================
rule                 phase         reason (first line of its docstring, what the trace shows)
===================  ============  =====================================================================
``collect_terms``    canonicalize  a sum's like terms and constants collected, opposite terms cancelled
``collect_factors``  canonicalize  a product's like factors and constants collected (nothing cancelled)
``cancel_factors``   canonicalize  also cancels factors between numerator and denominator; tagged
                                   ``unsafe`` and ``optional``: off unless included
===================  ============  =====================================================================

Each opens a tree of ``add``/``sub``/``neg`` (a sum of terms ``coefficient * base``) or of
``mul``/``true_div``/``neg`` (a constant times a product of ``base ** exponent``), adds up the
coefficients of each base and the exponents of each base, folds the constants into one, and writes the
result back in a readable order: positive terms in the order they first appear, then the negative
ones, the constant last (``a + 3*b - c + 2``); a product's constant first, then its factors, a division
when some are left in the denominator (``6 * x * y / z``).

>>> import symlab.tensor as T
>>> from symlab.printing import pprint
>>> from symlab.rewriting import rewrite_graph
>>> x, y = T.dvectors("x", "y")
>>> def canonical(out):
...     new, trace = rewrite_graph(out, include=("canonicalize",))
...     return pprint(new), [s.rule for s in trace if s.accepted and s.rule.startswith("collect")]
>>> canonical(x + x + x + x + x + x)
('([6.] * x)', ['collect_terms', 'collect_terms', 'collect_terms', 'collect_terms'])
>>> canonical(x + y - x)
('y', ['collect_terms'])
>>> canonical(2 * x * 3), canonical(x * x * x)
(('([6.] * x)', ['collect_factors']), ('(x ** [3.])', ['collect_factors']))
>>> canonical((x / y) / (1 / y))[1]  # y may be 0: not cancelled by default
[]
>>> new, _ = rewrite_graph((x / y) / (1 / y), include=("canonicalize", "unsafe"))
>>> pprint(new)
'x'
>>> canonical(x * 2.0 - (y + 1.0) + x + 3.0)
('((([3.] * x) - y) + [2.])', ['collect_terms', 'collect_terms'])
>>> i = T.ivector("i")
>>> new, _ = rewrite_graph(i + i + i, include=("canonicalize",))
>>> pprint(new), new.dtype
('([3] * i)', 'int32')

With the other rules of ``fast_run``, the gradient of ``(2x)²`` is ``8x``:

>>> import symlab
>>> new, _ = rewrite_graph(symlab.grad(((2 * x) ** 2).sum(), x), exclude=("fusion", "inplace"))
>>> pprint(new)
'([8.] * x)'

Terms and factors are alike when they are the same variable (after ``merge``, equal subgraphs are).
Only nodes whose output has a single client are opened, so a subexpression used elsewhere stays whole
and nothing is computed twice; at most :data:`MAX_OPERANDS` operands are looked at, so the rules stay
linear on long sums and products. A rule applies only if the rebuilt expression has fewer elementwise
operations than the nodes it replaces: it never grows the graph, and rewriting reaches a fixed point.

Types are kept exactly. Every opened node and every non-constant operand must have the output's dtype
(so the arithmetic is done in the same dtype as before, and integer sums wrap the same way); constants
are folded in that dtype, and the new constants have it (``3 * x`` of an ``int32`` ``x`` is ``int32``).
Integer division (``int_div``) is never opened, and only ``float``, ``int`` and ``uint`` dtypes are
touched. If cancelling a term would make the result broadcast less than the replaced output (``row -
m + m`` with a ``(1, n)`` row and an ``(m, n)`` matrix), the result is filled to the output's shape with
``second(m, row)``; if everything cancels, it is a constant filled so (``x + y - x - y -> second(x, 0)``).

Values. Collecting and folding keep infinities and NaN (``x + x + x`` and ``3 * x`` are both ``inf``
for an infinite ``x``). Cancelling terms assumes finite *inputs*, as ``sub_self`` (``x - x -> 0``)
and PyTensor's ``FAST_RUN`` do: ``x - x + y -> y`` differs from the original only where ``x`` is
already infinite or NaN (``inf - inf`` is NaN). Cancelling factors would change results for finite
inputs (``x * y / y`` is NaN where ``y`` is 0), so ``collect_factors`` never cancels a factor that is
in both the numerator and the denominator; ``cancel_factors`` does, and is off unless the query
includes ``unsafe`` (``mode.including("unsafe")``). The one exception is the seed's own rule
``mul_div`` (``x * y / y -> x``), kept as seed 003 teaches it and documented as changing ``0/0``.
Reassociating a floating-point sum or product may change the last bits of a result, as in PyTensor.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import reduce
from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Constant, Variable
from symlab.graph.fg import FunctionGraph
from symlab.rewriting.basic import node_rewriter
from symlab.rewriting.db import register
from symlab.rewriting.rules.canonicalize import MAX_OPERANDS as _CANONICAL_MAX_OPERANDS
from symlab.tensor import math as M
from symlab.tensor.alloc import Alloc
from symlab.tensor.basic import constant
from symlab.tensor.elemwise import DimShuffle
from symlab.tensor.type import TensorType

#: At most this many operands (terms or factors) of one sum or product are looked at. (Importing
#: :mod:`~symlab.rewriting.rules.canonicalize` first also registers its table rules, tried before these.)
MAX_OPERANDS = 2 * _CANONICAL_MAX_OPERANDS

#: The largest integer exponent of ``pow`` that a product collects (``x ** 3`` is ``x * x * x``).
MAX_EXPONENT = 64

#: The dtype kinds the rules rewrite: floats, signed and unsigned integers (not bool, not complex).
KINDS = "fiu"


def _kind(u: Variable) -> str | None:
    """The name of the scalar op of the (not inplace) ``Elemwise`` computing ``u``, ``"Alloc"``, or None."""
    owner = u.owner
    if owner is None:
        return None
    op = owner.op
    scalar_op = getattr(op, "scalar_op", None)
    if scalar_op is not None:
        return None if op.inplace_pattern else scalar_op.name
    return "Alloc" if isinstance(op, Alloc) else None


def _scalar_constant(v: Variable) -> np.ndarray | None:
    """The value (a 0-d array) of ``v`` if it is a constant with one element, broadcast or not; else None."""
    if isinstance(v, Constant):
        data = v.data
    elif v.owner is not None and isinstance(v.owner.op, DimShuffle) and isinstance(v.owner.inputs[0], Constant):
        data = v.owner.inputs[0].data
    else:
        return None
    if not isinstance(v.type, TensorType) or any(s != 1 for s in v.type.shape):
        return None
    data = np.asarray(data)
    if data.size != 1 or data.dtype.kind not in "biuf":
        return None
    return data.reshape(())


def _cast(value: Any, dtype: str) -> np.ndarray:
    """``value`` converted to ``dtype`` as NumPy converts at run time (integers wrap)."""
    with np.errstate(all="ignore"):
        return np.asarray(value).astype(dtype)


def _opens(u: Variable, top: bool, dtype: str, fgraph: FunctionGraph, room: bool) -> bool:
    """True if the node computing ``u`` may be opened: the root, or a single-client node of the root's dtype."""
    return u.owner is not None and room and u.dtype == dtype and (top or len(fgraph.clients[u]) == 1)


def _filled(u: Variable, dtype: str, fgraph: FunctionGraph) -> tuple[np.ndarray, Variable, bool] | None:
    """``(value, carrier, removable)`` if ``u`` is a constant filled to a shape, ``Alloc(c, *shape)`` or ``second(a, c)``.

    ``carrier`` is a variable of that shape (``u`` itself, or ``a``); ``removable``: ``u`` has no other use.
    """
    owner = u.owner
    if owner is None or u.dtype != dtype:
        return None
    kind = _kind(u)
    if kind == "Alloc":
        value = _scalar_constant(owner.inputs[0])
        return None if value is None else (value, u, False)
    if kind == "second":
        value = _scalar_constant(owner.inputs[1])
        return None if value is None else (value, owner.inputs[0], len(fgraph.clients[u]) == 1)
    return None


def _constant_operand(u: Variable, top: bool, dtype: str, fgraph: FunctionGraph,
                      carriers: list[Variable]) -> tuple[Any, int]:
    """``(value, removed)``: the constant an operand stands for (a scalar constant, or one filled to a shape,
    whose shape carrier is added to ``carriers``), or ``None``; ``removed`` is 1 if taking it removes a node."""
    if top:
        return None, 0
    value = _scalar_constant(u)
    if value is not None:
        return value, 0
    filled = _filled(u, dtype, fgraph)
    if filled is None:
        return None, 0
    value, carrier, removable = filled
    carriers.append(carrier)
    return value, int(removable)


def _opened_by(ops: frozenset, node: Apply, fgraph: FunctionGraph) -> bool:
    """A quick test: could the rule change ``node``? Not if it can open none of its inputs (they are then
    its only operands) and they differ (nothing to collect or cancel)."""
    inputs = node.inputs
    for i in inputs:
        kind = _kind(i)
        if kind == "Alloc" or kind == "second" or kind in ops and len(fgraph.clients[i]) == 1:
            return True
    return len(inputs) == 2 and inputs[0] is inputs[1]


def _const(value: np.ndarray) -> Variable:
    return constant(np.array(value))


def _finish(result: Variable, out: Variable, dropped: Sequence[Variable]) -> tuple[Variable, int] | None:
    """``result`` with the type of ``out``, filled with ``second(t, result)`` for dropped operands ``t`` whose
    shape it lost; and the number of fills added. None if it cannot have that type (another dtype)."""
    if result.type == out.type:
        return result, 0
    if result.dtype != out.dtype:
        return None
    for t in dropped:  # one fill is enough when a dropped operand has the output's shape
        if t.type.shape == out.type.shape:
            filled = M.second(t, result)
            return (filled, 1) if filled.type == out.type else None
    added = 0
    for t in dropped:
        if result.type == out.type:
            break
        if any(r == 1 and s != 1 or r is None and s is not None for r, s in zip(result.type.shape, t.type.shape)):
            result = M.second(t, result)
            added += 1
    if result.type != out.type:
        return None
    return result, added


# -- sums ------------------------------------------------------------------------------------------------


def _sum_operands(out: Variable, fgraph: FunctionGraph):
    """``(terms, constant, opened)``: ``{id(base): [base, coefficient]}``, the folded constant, nodes opened.

    None if an operand does not have the output's dtype.
    """
    dtype = out.dtype
    terms: dict[int, list[Any]] = {}
    carriers: list[Variable] = []
    total: Any = 0
    opened = 0
    stack: list[tuple[bool, Variable, bool]] = [(False, out, True)]  # (negated, variable, is the root)
    with np.errstate(all="ignore"):
        while stack:
            negated, u, top = stack.pop()
            value, removed = _constant_operand(u, top, dtype, fgraph, carriers)
            opened += removed
            if value is not None:
                total = _sum(total, _negated(value, dtype) if negated else value, dtype)
                continue
            room = len(terms) + len(stack) + 2 <= MAX_OPERANDS
            owner = u.owner
            if _opens(u, top, dtype, fgraph, room):
                op = _kind(u)
                if op == "add":
                    stack.extend((negated, i, False) for i in reversed(owner.inputs))
                    opened += 1
                    continue
                if op == "sub":
                    stack.extend([(not negated, owner.inputs[1], False), (negated, owner.inputs[0], False)])
                    opened += 1
                    continue
                if op == "neg":
                    stack.append((not negated, owner.inputs[0], False))
                    opened += 1
                    continue
                if op == "mul" and not top:
                    a, b = owner.inputs
                    c, base = _scalar_constant(a), b
                    if c is None:
                        c, base = _scalar_constant(b), a
                    if c is not None and _scalar_constant(base) is None and base.dtype == dtype:
                        _add_term(terms, base, _negated(c, dtype) if negated else c, dtype)
                        opened += 1
                        continue
                    positive = _without_negation(u, fgraph)
                    if positive is not None:  # (-a) * b: the sign joins the sum, the product is rebuilt as a * b
                        _add_term(terms, positive, 1 if negated else -1, dtype)
                        opened += 1  # the neg goes (the product is counted neither as opened nor as built)
                        continue
            if u.dtype != dtype:
                return None
            _add_term(terms, u, -1 if negated else 1, dtype)
    return terms, total, carriers, opened


def _without_negation(u: Variable, fgraph: FunctionGraph) -> Variable | None:
    """``a * b`` for ``u = (-a) * b`` or ``a * (-b)`` (the negation used nowhere else), else None."""
    a, b = u.owner.inputs
    for k, factor in enumerate((a, b)):
        if _kind(factor) == "neg" and len(fgraph.clients[factor]) == 1:
            inner = factor.owner.inputs[0]
            product = M.mul(inner, b) if k == 0 else M.mul(a, inner)
            return product if product.type == u.type else None
    return None


def _sum(a: Any, b: Any, dtype: str) -> Any:
    """``a + b`` in ``dtype`` (Python ints, the common ``±1`` coefficients, stay Python ints)."""
    if type(a) is int and type(b) is int:
        return a + b
    with np.errstate(all="ignore"):
        return (_cast(a, dtype) + _cast(b, dtype)).astype(dtype)


def _negated(c: Any, dtype: str) -> Any:
    """``-c`` in ``dtype``."""
    if type(c) is int:
        return -c
    with np.errstate(all="ignore"):
        return np.negative(_cast(c, dtype)).astype(dtype)


def _add_term(terms: dict[int, list[Any]], base: Variable, coefficient: Any, dtype: str) -> None:
    entry = terms.get(id(base))
    if entry is None:
        terms[id(base)] = [base, coefficient]
    else:
        entry[1] = _sum(entry[1], coefficient, dtype)


def _scaled(base: Variable, coefficient: Any) -> Variable:
    return base if coefficient == 1 else M.mul(_const(_cast(coefficient, base.dtype)), base)


#: The ops a sum is opened through (``mul`` by a constant gives a coefficient, ``second`` a constant).
_SUM_OPS = frozenset(["add", "sub", "neg", "mul"])


@register("canonicalize", "algebra")
@node_rewriter([M.add, M.sub, M.neg])
def collect_terms(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """x + x + 2*x - y + y + 1 + 2 -> 4*x + 3: a sum's like terms and constants collected, opposite terms cancelled"""
    out = node.outputs[0]
    if out.dtype[0] not in KINDS or not _opened_by(_SUM_OPS, node, fgraph):
        return None
    if _kind(out) == "neg" and _kind(node.inputs[0]) == "neg":
        return None  # -(-x) -> x is the table's neg_neg (in fast_compile too)
    found = _sum_operands(out, fgraph)
    if found is None:
        return None
    terms, total, carriers, opened = found
    kept = [(b, c) for b, c in terms.values() if c != 0]
    dropped = [b for b, c in terms.values() if c == 0] + carriers
    positive = [(b, c) for b, c in kept if not c < 0]
    negative = [(b, _negated(c, out.dtype)) for b, c in kept if c < 0]
    constant_term = total != 0
    # the elementwise operations of the rebuilt sum, counted before building it
    count = sum(1 for _, c in kept if c != 1 and c != -1) + max(len(kept) + constant_term - 1, 0)
    if not positive and not constant_term and negative and negative[0][1] == 1:
        count += 1  # -b
    if count >= opened:
        return None
    if positive:
        acc = reduce(M.add, [_scaled(b, c) for b, c in positive])
    elif constant_term or not negative:
        acc = _const(_cast(total, out.dtype))  # everything else cancelled: the constant, filled to the shape
        constant_term = False
    else:
        b, c = negative.pop(0)
        acc = M.neg(b) if c == 1 else M.mul(_const(_cast(_negated(c, out.dtype), out.dtype)), b)
    for b, c in negative:
        acc = M.sub(acc, _scaled(b, c))
    if constant_term:
        if total < 0:
            acc = M.sub(acc, _const(_cast(_negated(total, out.dtype), out.dtype)))
        else:
            acc = M.add(acc, _const(_cast(total, out.dtype)))
    finished = _finish(acc, out, dropped)
    if finished is None or count + finished[1] >= opened:
        return None
    return [finished[0]]


# -- products --------------------------------------------------------------------------------------------


def _integer_exponent(v: Variable) -> int | None:
    value = _scalar_constant(v)
    if value is None or value.dtype.kind not in "iuf" or not np.isfinite(value):
        return None
    if value != np.round(value) or abs(value) > MAX_EXPONENT:
        return None
    return int(value)


def _product_operands(out: Variable, fgraph: FunctionGraph):
    """``(factors, numerator, denominator, carriers, opened)``, or None if an operand has another dtype.

    ``factors`` is ``{id(base): [base, exponent]}``; ``numerator`` and ``denominator`` the folded
    constants; ``carriers`` have the shapes of the constants filled by ``Alloc`` or ``second``.
    """
    dtype = out.dtype
    floating = dtype[0] == "f"
    factors: dict[int, list[Any]] = {}
    numerator: Any = 1
    denominator: Any = 1
    carriers: list[Variable] = []
    opened = 0
    stack: list[tuple[int, Variable, bool]] = [(1, out, True)]  # (+1 numerator or -1 denominator, variable, root)
    with np.errstate(all="ignore"):
        while stack:
            side, u, top = stack.pop()
            value, removed = _constant_operand(u, top, dtype, fgraph, carriers)
            opened += removed
            if value is not None:
                if side > 0:
                    numerator = _product(numerator, value, dtype)
                else:
                    denominator = _product(denominator, value, dtype)
                continue
            room = len(factors) + len(stack) + 2 <= MAX_OPERANDS
            owner = u.owner
            if _opens(u, top, dtype, fgraph, room):
                op = _kind(u)
                if op == "mul":
                    stack.extend((side, i, False) for i in reversed(owner.inputs))
                    opened += 1
                    continue
                if op == "true_div" and floating:
                    stack.extend([(-side, owner.inputs[1], False), (side, owner.inputs[0], False)])
                    opened += 1
                    continue
                if op == "neg" and not top:
                    numerator = _negated(numerator, dtype)
                    stack.append((side, owner.inputs[0], False))
                    opened += 1
                    continue
                if op == "reciprocal" and floating and not top:
                    stack.append((-side, owner.inputs[0], False))
                    opened += 1
                    continue
                if (op == "pow" or op == "sqr") and not top:
                    base = owner.inputs[0]
                    k = 2 if op == "sqr" else _integer_exponent(owner.inputs[1])
                    if k is not None and base.dtype == dtype and (floating or k > 0) \
                            and _scalar_constant(base) is None:
                        _add_factor(factors, base, side * k)
                        opened += 1
                        continue
            if u.dtype != dtype:
                return None
            _add_factor(factors, u, side)
    return factors, numerator, denominator, carriers, opened


def _product(a: Any, b: Any, dtype: str) -> Any:
    """``a * b`` in ``dtype``."""
    with np.errstate(all="ignore"):
        return (_cast(a, dtype) * _cast(b, dtype)).astype(dtype)


def _add_factor(factors: dict[int, list[Any]], base: Variable, exponent: int) -> None:
    """Add ``base ** exponent``; the entry ``[base, exponent, sides]`` remembers the signs it came with."""
    entry = factors.get(id(base))
    if entry is None:
        factors[id(base)] = [base, exponent, {exponent > 0}]
    else:
        entry[1] += exponent
        entry[2].add(exponent > 0)


def _power(base: Variable, exponent: int) -> Variable:
    return base if exponent == 1 else M.pow(base, _const(_cast(exponent, base.dtype)))


#: The ops a product is opened through.
_PRODUCT_OPS = frozenset(["mul", "true_div", "neg", "reciprocal", "pow", "sqr"])


@register("canonicalize", "algebra")
@node_rewriter([M.mul, M.true_div])
def collect_factors(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """x * 2 * x * 3 / 4 -> 1.5 * x**2: a product's like factors and constants collected (nothing cancelled)"""
    return _collect_factors(fgraph, node, cancel=False)


@register("canonicalize", "algebra", "optional", "unsafe")
@node_rewriter([M.mul, M.true_div])
def cancel_factors(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """x * 2 * x * 3 / (x / y) -> 6 * x * y: factors in numerator and denominator cancelled (unsafe: 0/0 is NaN)"""
    return _collect_factors(fgraph, node, cancel=True)


def _collect_factors(fgraph: FunctionGraph, node: Apply, cancel: bool) -> list[Variable] | None:
    out = node.outputs[0]
    if out.dtype[0] not in KINDS or not _opened_by(_PRODUCT_OPS, node, fgraph):
        return None
    found = _product_operands(out, fgraph)
    if found is None:
        return None
    factors, numerator, denominator, carriers, opened = found
    if any(e < 0 for _, e, _ in factors.values()) and out.dtype[0] != "f":
        return None
    if not cancel and any(len(sides) > 1 for _, _, sides in factors.values()):
        return None  # x*y/y -> x changes the result where y is 0 (0/0 is NaN): only cancel_factors does that
    dtype = out.dtype
    if denominator != 1 and numerator != 1:
        with np.errstate(all="ignore"):
            numerator, denominator = (_cast(numerator, dtype) / _cast(denominator, dtype)).astype(dtype), 1
    up = [(b, e) for b, e, _ in factors.values() if e > 0]
    down = [(b, -e) for b, e, _ in factors.values() if e < 0]
    dropped = [b for b, e, _ in factors.values() if e == 0] + carriers
    negate = bool(numerator == -1) and bool(up)
    scale = numerator != 1 and not negate
    n_up = len(up) + scale
    n_down = len(down) + (denominator != 1)
    if n_down and not n_up:
        n_up, scale = 1, True  # 1 / d
    count = sum(1 for _, e in up + down if e != 1) + max(n_up - 1, 0) + max(n_down - 1, 0) + (n_down > 0) + negate
    if count >= opened:
        return None
    top = [_power(b, e) for b, e in up]
    if scale or not top:
        top.insert(0, _const(_cast(numerator, dtype)))
    acc = reduce(M.mul, top)
    if n_down:
        bottom = [_power(b, e) for b, e in down]
        if denominator != 1:
            bottom.insert(0, _const(_cast(denominator, dtype)))
        acc = M.true_div(acc, reduce(M.mul, bottom))
    if negate:
        acc = M.neg(acc)
    finished = _finish(acc, out, dropped)
    if finished is None or count + finished[1] >= opened:
        return None
    return [finished[0]]


__all__ = ["KINDS", "MAX_EXPONENT", "MAX_OPERANDS", "cancel_factors", "collect_factors", "collect_terms"]
