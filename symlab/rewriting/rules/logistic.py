"""Logistic models made stable: the sigmoid found in products and quotients, its divisions cancelled.

A logistic regression written by hand, ``p = 1 / (1 + exp(-z))`` and the cross-entropy
``-y*log(p) - (1-y)*log(1-p)``, saturates: from ``|z| ~ 37`` on ``1 - p`` is 0, from ``|z| ~ 710`` on
``exp(-z)`` is inf, and the loss (``log(0)``) and its gradient (``(1-y) / (1-p)``, ``inf * 0``) are inf or
NaN. The gradient is taken on the graph as written, so it holds the same forms. The rules of this module
(phase ``stabilize``, tag ``logistic``) with the rows of :mod:`~symlab.rewriting.rules.stabilize`
(``log_sigmoid``, ``log_one_minus_sigmoid``, ``one_minus_sigmoid``) make both finite at every finite ``z``,
in every mode: they are tagged ``fast_compile`` too (``FAST_COMPILE`` must not give NaN where the default
mode gives numbers):

==================================  =====================================================================
rule                                reason (first line of its docstring, what the trace shows)
==================================  =====================================================================
``sigmoid_from_quotient``           ``c / (1 + exp(u))`` -> ``c * sigmoid(-u)``, ``exp(u) * sigmoid(-u)``
                                    -> ``sigmoid(u)``, ``sigmoid(u) / sigmoid(u)`` -> 1: in any product
``sigmoid_distribute``              ``(a/sigmoid(u) + b*exp(-v)) * sigmoid(u) * sigmoid(v)`` ->
                                    ``a*sigmoid(v) + b*sigmoid(-v)*sigmoid(u)``: the ``sigmoid`` and
                                    ``exp`` factors of a product distributed over a sum whose every term
                                    absorbs one
``sigmoid_factor_sum``              ``a - a*sigmoid(x)`` -> ``a*sigmoid(-x)``: two terms that cancel where
                                    ``a`` overflows (the quotient rule's terms of ``exp(x) / (1 + exp(x))``)
``log1p_neg_sigmoid``               ``log1p(-sigmoid(x))`` -> ``-softplus(x)``
``one_minus_sigmoid_as_sum``        ``(-sigmoid(x)) + 1`` -> ``sigmoid(-x)`` (and ``..._swapped``:
                                    ``1 + (-sigmoid(x))``)
``sigmoid_minus_one``               ``sigmoid(x) - 1`` -> ``-sigmoid(-x)``
==================================  =====================================================================

>>> import numpy as np
>>> import symlab.tensor as T
>>> from symlab.printing import pprint
>>> from symlab.rewriting import rewrite_graph
>>> x = T.dvector("x")
>>> out, trace = rewrite_graph(3.0 / (T.exp(-x) + 1.0), exclude=("specialize", "fusion", "inplace"))
>>> pprint(out), [s.rule for s in trace if s.phase == "stabilize"]
('([3.] * sigmoid(x))', ['sigmoid_from_quotient'])

The gradient of the hand-written loss is a product of such factors: rewritten, it has no division
left and stays finite at ``z = ±1000``, where the graph as written gives NaN:

>>> import symlab
>>> y = T.dvector("y")
>>> p = 1 / (1 + T.exp(-x))
>>> loss = (-y * T.log(p) - (1 - y) * T.log(1 - p)).sum()
>>> g = symlab.grad(loss, x)
>>> values = {x: np.array([-1000.0, 0.0, 1000.0]), y: np.array([1.0, 1.0, 0.0])}
>>> with np.errstate(all="ignore"):
...     g.eval(values)
array([ nan, -0.5,  nan])
>>> f = symlab.function([x, y], [loss, g], mode="NUMPY")
>>> f(values[x], values[y])
[array(2000.69314718), array([-1. , -0.5,  1. ])]

Why this keeps values. Every rewrite is an identity of real numbers for finite inputs: ``1/(1+e^u)`` is
``sigmoid(-u)`` and ``e^u * sigmoid(-u)`` is ``sigmoid(u)``, and the factors these rules cancel,
``sigmoid(u)`` and ``exp(u)``, are never 0 for a finite ``u``: they are 0 or inf in floating point only
by underflow or overflow, where the original graph computes ``0/0``, ``inf/inf`` or ``inf*0``. Such a rule
is a stabilization, not the ``unsafe`` cancellation of a factor that can be 0 (``x*y/y``, see
:mod:`~symlab.rewriting.rules.algebra`), which stays off by default.
"""

from __future__ import annotations

from functools import reduce
from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Constant, Variable
from symlab.graph.fg import FunctionGraph
from symlab.rewriting.basic import node_rewriter
from symlab.rewriting.db import default_db, register
from symlab.rewriting.patterns import const
from symlab.rewriting.rules.table import fits, register_table
from symlab.tensor import math as M
from symlab.tensor.elemwise import DimShuffle

#: At most this many factors of a product, or terms of a sum, are looked at (the rules stay linear).
MAX_OPERANDS = 16
#: ``u ** k`` is opened into ``|k|`` factors ``u`` for an integer ``k`` up to this size (a gradient's ``s ** -2``).
MAX_POWER = 4
#: Structural comparison of two arguments looks this deep into their graphs.
MAX_DEPTH = 12


# -- recognising the parts ---------------------------------------------------------------------------------------


def _scalar_value(v: Variable) -> float | None:
    """The one value of a constant ``v`` (seen through broadcasting ``DimShuffle`` nodes), or None."""
    c = const().strip(v)
    if c.owner is not None and c.owner.op == M.neg:  # -c, left unfolded by a rewrite
        inner = _scalar_value(c.owner.inputs[0])
        return None if inner is None else -inner
    if not isinstance(c, Constant):
        return None
    data = np.asarray(c.data)
    if data.size == 0 or data.dtype.kind not in "iuf" or not np.all(data == data.flat[0]):
        return None
    return float(data.flat[0])


def _arg(v: Variable, op: Any) -> Variable | None:
    """``u`` if ``v`` is ``op(u)``."""
    owner = v.owner
    return owner.inputs[0] if owner is not None and owner.op == op else None


def _one_plus_exp(v: Variable) -> Variable | None:
    """``u`` if ``v`` is ``1 + exp(u)`` or ``exp(u) + 1`` with a real floating ``u`` (the 1 may be broadcast)."""
    owner = v.owner
    if owner is None or owner.op != M.add:
        return None
    a, b = owner.inputs
    for c, e in ((a, b), (b, a)):
        u = _arg(e, M.exp)
        if u is not None and _scalar_value(c) == 1.0 and u.dtype.startswith("float"):
            return u
    return None


class _Shapes:
    """Structural keys and linear forms of variables, memoised for one application of a rule.

    Two arguments are the same when their linear forms (sums of ``coefficient * leaf``, opened through
    ``add``, ``sub``, ``neg`` and products by a constant) are equal, leaves compared by structure: the
    ``-t`` of one rule and the ``neg(t)`` of another are the same, and so are ``(-a) - b`` and ``-(a + b)``.
    """

    def __init__(self) -> None:
        self._keys: dict[int, Any] = {}
        self._forms: dict[int, dict[Any, float]] = {}
        self._numbers: dict[Any, int] = {}  # structure -> its number: keys hash in O(inputs), not O(graph)

    def key(self, v: Variable, depth: int = 0) -> Any:
        """A number for ``v``'s structure: equal for equal structures (constants by value, inputs by identity).

        The structure of a node is its op and its inputs' numbers, so it hashes in constant time; nested tuples
        would hash the whole tree below, exponential in the depth on a graph that shares subexpressions.
        """
        hit = self._keys.get(id(v))
        if hit is not None:
            return hit
        if isinstance(v, Constant):
            data = np.asarray(v.data)
            k: Any = ("constant", str(v.type), data.tobytes())
        elif v.owner is None or depth > MAX_DEPTH:
            k = ("variable", id(v))
        else:
            op = v.owner.op
            try:
                hash(op)
            except TypeError:
                op = id(op)
            k = (op, v.owner.outputs.index(v), tuple(self.key(i, depth + 1) for i in v.owner.inputs))
        number = self._numbers.setdefault(k, len(self._numbers))
        self._keys[id(v)] = number
        return number

    def form(self, v: Variable) -> dict[Any, float]:
        hit = self._forms.get(id(v))
        if hit is not None:
            return hit
        out: dict[Any, float] = {}
        stack = [(1.0, v)]
        while stack:
            coefficient, u = stack.pop()
            owner = u.owner
            room = len(out) + len(stack) < MAX_OPERANDS
            if owner is not None and room and owner.op == M.add:
                stack.extend((coefficient, i) for i in owner.inputs)
            elif owner is not None and room and owner.op == M.sub:
                stack.extend([(coefficient, owner.inputs[0]), (-coefficient, owner.inputs[1])])
            elif owner is not None and room and owner.op == M.neg:
                stack.append((-coefficient, owner.inputs[0]))
            elif owner is not None and room and owner.op == M.mul and _scaled(u) is not None:
                c, base = _scaled(u)  # type: ignore[misc]
                stack.append((coefficient * c, base))
            else:
                value = _scalar_value(u)
                k = ("one",) if value is not None else self.key(u)
                out[k] = out.get(k, 0.0) + coefficient * (value if value is not None else 1.0)
        out = {k: c for k, c in out.items() if c != 0.0}
        self._forms[id(v)] = out
        return out

    def same(self, a: Variable, b: Variable) -> bool:
        return a is b or self.form(a) == self.form(b)

    def opposite(self, a: Variable, b: Variable) -> bool:
        return self.form(a) == {k: -c for k, c in self.form(b).items()}


def _scaled(u: Variable) -> tuple[float, Variable] | None:
    """``(c, base)`` if ``u`` is ``c * base`` or ``base * c`` with a scalar constant ``c``."""
    a, b = u.owner.inputs
    for c, base in ((a, b), (b, a)):
        value = _scalar_value(c)
        if value is not None and _scalar_value(base) is None:
            return value, base
    return None


def negated(u: Variable) -> Variable:
    """``-u`` written simply: ``v`` for ``-v``, ``a + b`` for ``(-a) - b``, ``b - a`` for ``a - b``."""
    owner = u.owner
    if owner is not None and owner.op == M.neg:
        return owner.inputs[0]
    if owner is not None and owner.op == M.sub:
        a, b = owner.inputs
        inner = _arg(a, M.neg)
        new = M.add(inner, b) if inner is not None else M.sub(b, a)
        if new.type == u.type:
            return new
    return M.neg(u)


# -- products ----------------------------------------------------------------------------------------------------


class _Product:
    """A product opened into a sign, numerator factors and denominator factors (see :func:`_open`)."""

    def __init__(self, negative: bool, num: list[Variable], den: list[Variable],
                 carriers: list[Variable] | None = None) -> None:
        self.negative = negative
        self.num = num
        self.den = den
        #: variables whose shapes the product had beyond its factors' (constant 1s, fills ``second(a, c)``)
        self.carriers = carriers or []

    def build(self, dtype: str) -> Variable | None:
        negative = self.negative
        num = []
        for f in self.num:
            value = _scalar_value(f)
            if value == -1.0:
                negative = not negative
            elif value != 1.0:
                num.append(f)
        if not num:
            num, negative = [_one(dtype, -1 if negative else 1)], False
        out = reduce(M.mul, num)
        if self.den:
            out = M.true_div(out, reduce(M.mul, self.den))
        return M.neg(out) if negative else out


def _one(dtype: str, sign: int = 1) -> Variable:
    from symlab.tensor.basic import constant

    return constant(np.array(sign, dtype=dtype))


#: The elementwise ops :func:`_open` opens, by their scalar op's name.
_OPENED = {"second": M.second, "mul": M.mul, "true_div": M.true_div, "reciprocal": M.reciprocal, "neg": M.neg,
           "pow": M.pow}


def _opened_name(op: Any) -> str | None:
    """The name of the op of :data:`_OPENED` that ``op`` equals, or None: one comparison of props, not six."""
    name = getattr(getattr(op, "scalar_op", None), "name", None)
    target = _OPENED.get(name) if isinstance(name, str) else None
    return name if target is not None and op == target else None


def _open(fgraph: FunctionGraph, out: Variable, always: bool = False) -> _Product | None:
    """Open the tree of ``mul``, ``true_div``, ``reciprocal``, ``neg`` and ``pow(., k)`` rooted at ``out``.

    Inner nodes are opened if they have ``out``'s dtype (the rebuilt product then computes in the same
    dtype), even if other nodes use them too: a gradient divides by ``p`` once and multiplies the quotient
    by several factors. At most :data:`MAX_OPERANDS` factors; the rules rewrite only what they stabilize.
    """
    negative = False
    num: list[Variable] = []
    den: list[Variable] = []
    carriers: list[Variable] = []
    stack: list[tuple[bool, Variable]] = [(True, out)]  # (numerator, variable)
    while stack:
        up, u = stack.pop()
        owner = u.owner
        value = _scalar_value(u)
        if value in (1.0, -1.0):  # a factor 1 or -1 (its shape kept for a fill)
            negative ^= value == -1.0
            carriers.append(u)
            continue
        opens = owner is not None and u.dtype == out.dtype and len(num) + len(den) + len(stack) < MAX_OPERANDS
        if opens:
            name = _opened_name(owner.op)
            if name == "second" and _scalar_value(owner.inputs[1]) is not None:  # a constant filled to a shape
                carriers.append(owner.inputs[0])
                stack.append((up, owner.inputs[1]))
                continue
            if name == "mul":
                stack.extend((up, i) for i in reversed(owner.inputs))
                continue
            if name == "true_div":
                stack.extend([(not up, owner.inputs[1]), (up, owner.inputs[0])])
                continue
            if name == "reciprocal":
                stack.append((not up, owner.inputs[0]))
                continue
            if name == "neg":
                negative = not negative
                stack.append((up, owner.inputs[0]))
                continue
            k = _scalar_value(owner.inputs[1]) if name == "pow" else None
            if k is not None and k == int(k) and 0 < abs(k) <= MAX_POWER:
                stack.extend([(up if k > 0 else not up, owner.inputs[0])] * int(abs(k)))
                continue
        (num if up else den).append(u)
    if not always and len(num) + len(den) + len(carriers) < 2 and not any(_one_plus_exp(d) for d in den):
        return None
    return _Product(negative, num, den, carriers)


def _finished(new: Variable, node: Apply, factors: list[Variable]) -> list[Variable] | None:
    """``[new]`` with the type of the node's output: cast to its dtype, or filled to its shape by one of ``factors``."""
    old = node.outputs[0]
    if new.dtype != old.dtype:
        if not (new.dtype.startswith("float") and old.dtype.startswith("float")):
            return None
        from symlab.tensor.basic import cast

        new = cast(new, old.dtype)
    if fits(new, old):
        return [new]
    for f in factors:
        filled = M.second(f, new)
        if fits(filled, old):
            return [filled]
    return None


def _positive(v: Variable) -> bool:
    """``v`` is ``sigmoid(u)`` or ``exp(u)``: never 0 for a finite ``u`` (0 in floating point only by underflow)."""
    return v.owner is not None and v.owner.op in (M.sigmoid, M.exp)


def _same_factor(shapes: _Shapes, a: Variable, b: Variable) -> bool:
    """``a`` and ``b`` are the same ``sigmoid(u)`` or ``exp(u)``."""
    if a is b:
        return True
    return a.owner is not None and b.owner is not None and a.owner.op == b.owner.op \
        and shapes.same(a.owner.inputs[0], b.owner.inputs[0])


def _sigmoid_of(u: Variable, known: list[Variable], shapes: _Shapes) -> Variable:
    """``sigmoid(u)``, reusing a ``sigmoid`` of the same argument among ``known``."""
    for f in known:
        s = _arg(f, M.sigmoid)
        if s is not None and shapes.same(s, u):
            return f
    return M.sigmoid(u)


def _simplify(product: _Product, shapes: _Shapes) -> bool:
    """One pass of the rewrites of :func:`sigmoid_from_quotient` on ``product``; True if it changed."""
    num, den = product.num, product.den
    for k, d in enumerate(den):
        u = _one_plus_exp(d)
        if u is not None:  # c / (1 + exp(u)): exp(u) / (1 + exp(u)) is sigmoid(u), 1 / (1 + exp(u)) sigmoid(-u)
            del den[k]
            for j, n in enumerate(num):
                e = _arg(n, M.exp)
                if e is not None and shapes.same(e, u):
                    num[j] = _sigmoid_of(u, num, shapes)
                    return True
            num.append(_sigmoid_of(negated(u), num, shapes))
            return True
        inner = d.owner.inputs[0] if d.owner is not None and isinstance(d.owner.op, DimShuffle) else None
        u = _one_plus_exp(inner) if inner is not None else None
        if u is not None:  # c / broadcast(1 + exp(u)): c * broadcast(sigmoid(-u))
            del den[k]
            num.append(d.owner.op(_sigmoid_of(negated(u), num, shapes)))
            return True
        if _positive(d):  # sigmoid(u) / sigmoid(u), exp(u) / exp(u)
            for j, n in enumerate(num):
                if _same_factor(shapes, n, d):
                    del den[k]
                    del num[j]
                    return True
    for j, n in enumerate(num):  # exp(u) * sigmoid(-u) is sigmoid(u)
        e = _arg(n, M.exp)
        if e is None or not e.dtype.startswith("float"):
            continue
        for i, m in enumerate(num):
            s = _arg(m, M.sigmoid)
            if s is not None and shapes.opposite(s, e):
                num[i] = _sigmoid_of(e, num, shapes)
                del num[j]
                return True
    return False


@register("stabilize", "logistic", "fast_compile")
@node_rewriter([M.true_div, M.mul, M.reciprocal, M.pow])
def sigmoid_from_quotient(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """c / (1 + exp(u)) -> c * sigmoid(-u), exp(u) * sigmoid(-u) -> sigmoid(u), sigmoid(u) / sigmoid(u) -> 1: in any product"""
    out = node.outputs[0]
    if not out.dtype.startswith("float"):
        return None
    product = _open(fgraph, out)
    if product is None or not _worth_looking(product):
        return None
    before = product.num + product.den + product.carriers
    shapes = _Shapes()
    changed = False
    for _ in range(2 * MAX_OPERANDS):
        if not _simplify(product, shapes):
            break
        changed = True
    if not changed:
        return None
    kept = {id(f) for f in product.num + product.den}
    fills = sorted(before, key=lambda f: id(f) not in kept)  # a factor still computed first: no work kept for a shape
    return _finished(product.build(out.dtype), node, fills)


def _worth_looking(product: _Product) -> bool:
    """A quick test: a ``1 + exp`` or a ``sigmoid``/``exp`` in the denominator, or an ``exp`` beside a ``sigmoid``."""
    for d in product.den:
        inner = d.owner.inputs[0] if d.owner is not None and isinstance(d.owner.op, DimShuffle) else d
        if _one_plus_exp(inner) is not None or _positive(d):
            return True
    ops = {f.owner.op for f in product.num if f.owner is not None}
    return M.exp in ops and M.sigmoid in ops


# -- sums whose divisions the product cancels ----------------------------------------------------------------------


def _terms(fgraph: FunctionGraph, v: Variable) -> list[tuple[bool, Variable]] | None:
    """The signed terms ``(negative, t)`` of the sum tree rooted at ``v`` (``add``, ``sub``, ``neg`` opened)."""
    out: list[tuple[bool, Variable]] = []
    stack = [(False, v, True)]
    while stack:
        negative, u, top = stack.pop()
        owner = u.owner
        opens = owner is not None and len(out) + len(stack) < MAX_OPERANDS
        if opens and owner.op == M.add:
            stack.extend((negative, i, False) for i in reversed(owner.inputs))
        elif opens and owner.op == M.sub:
            stack.extend([(not negative, owner.inputs[1], False), (negative, owner.inputs[0], False)])
        elif opens and owner.op == M.neg:
            stack.append((not negative, owner.inputs[0], False))
        else:
            out.append((negative, u))
    return out if len(out) >= 2 or (out and out[0][1] is not v) else None


def _absorbed(fgraph: FunctionGraph, t: Variable, positives: list[Variable], shapes: _Shapes) -> Variable | None:
    """``t`` times ``positives``, simplified by :func:`_simplify`, if that absorbs at least one of them; else None."""
    product = _open(fgraph, t, always=True)
    assert product is not None
    product.num.extend(positives)
    for _ in range(2 * MAX_OPERANDS):
        if not _simplify(product, shapes):
            break
    if all(any(g is f for g in product.num) for f in positives):
        return None
    return product.build(t.dtype)


@register("stabilize", "logistic", "fast_compile")
@node_rewriter([M.mul, M.true_div])
def sigmoid_distribute(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """(a/sigmoid(u) + b*exp(-v)) * sigmoid(u) * sigmoid(v) -> a*sigmoid(v) + b*sigmoid(-v)*sigmoid(u): sigmoid and exp factors distributed over a sum whose every term absorbs one"""
    out = node.outputs[0]
    if not out.dtype.startswith("float"):
        return None
    product = _open(fgraph, out)
    if product is None:
        return None
    num = product.num
    positives = [f for f in num if _positive(f)]
    if not positives:
        return None
    shapes = _Shapes()
    for s in num:
        if s.owner is None or s.owner.op not in (M.add, M.sub, M.neg):
            continue
        terms = _terms(fgraph, s)
        if terms is None:
            continue
        new_terms = []
        for negative, t in terms:
            absorbed = _absorbed(fgraph, t, positives, shapes)
            if absorbed is None:
                break
            new_terms.append((negative, absorbed))
        else:
            plus = [t for negative, t in new_terms if not negative]
            minus = [t for negative, t in new_terms if negative]
            total = reduce(M.add, plus) if plus else M.neg(minus.pop(0))
            total = reduce(M.sub, minus, total)
            others = [f for f in num if f is not s and not _positive(f)]
            result = _Product(product.negative, [total, *others], product.den).build(out.dtype)
            return _finished(result, node, [*num, *product.carriers])
    return None


def _signed_product(fgraph: FunctionGraph, negative: bool, t: Variable) -> _Product:
    product = _open(fgraph, t, always=True)
    assert product is not None
    product.negative ^= negative
    return product


def _extra_sigmoid(small: _Product, big: _Product, shapes: _Shapes) -> int | None:
    """The position in ``big.num`` of a ``sigmoid`` that ``big`` has beyond the factors of ``small``, else None."""
    if len(big.num) != len(small.num) + 1 or len(big.den) != len(small.den):
        return None
    keys = [shapes.key(f) for f in small.num]
    if sorted(map(repr, (shapes.key(f) for f in small.den))) != sorted(map(repr, (shapes.key(f) for f in big.den))):
        return None
    extra = None
    for k, f in enumerate(big.num):
        key = shapes.key(f)
        if key in keys:
            keys.remove(key)
        elif extra is None and _arg(f, M.sigmoid) is not None:
            extra = k
        else:
            return None
    return extra if not keys else None


@register("stabilize", "logistic", "fast_compile")
@node_rewriter([M.add, M.sub])
def sigmoid_factor_sum(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """a - a*sigmoid(x) -> a*sigmoid(-x), a*sigmoid(x) - a -> -a*sigmoid(-x): the difference of two huge terms, cancelled"""
    out = node.outputs[0]
    if not out.dtype.startswith("float"):
        return None
    a, b = node.inputs
    first = _signed_product(fgraph, False, a)
    second = _signed_product(fgraph, node.op == M.sub, b)
    if first.negative == second.negative:
        return None  # a + a*sigmoid(x): nothing cancels
    if not any(_arg(f, M.sigmoid) is not None for f in first.num + second.num):
        return None
    shapes = _Shapes()
    for small, big in ((first, second), (second, first)):
        k = _extra_sigmoid(small, big, shapes)
        if k is None or not small.num + small.den:  # 1 - sigmoid(x) is the row one_minus_sigmoid's
            continue
        x = big.num[k].owner.inputs[0]
        if not x.dtype.startswith("float"):
            return None
        # small + big = small * (1 - sigmoid(x)) = small * sigmoid(-x), with small's sign
        result = _Product(small.negative, [*small.num, M.sigmoid(negated(x))], small.den).build(out.dtype)
        return _finished(result, node, [*small.num, *small.den, *small.carriers, *big.num, *big.carriers])
    return None


# -- rows -------------------------------------------------------------------------------------------------------


def _real_float(fgraph: FunctionGraph, node: Apply, bindings: dict) -> bool:
    return bindings["x"].dtype.startswith("float")


def minus_softplus(x: Variable) -> Variable:
    """-softplus(x)"""
    return -M.softplus(x)


def sigmoid_neg(x: Variable) -> Variable:
    """sigmoid(-x)"""
    return M.sigmoid(negated(x))


def minus_sigmoid_neg(x: Variable) -> Variable:
    """-sigmoid(-x)"""
    return -M.sigmoid(negated(x))


#: (name, pattern, replacement[, constraint]).
ROWS: list[tuple[Any, ...]] = [
    # log1p(-sigmoid(x)) is log(1 - sigmoid(x)) written with log1p: -inf from x = 37 on, -softplus(x) is finite
    ("log1p_neg_sigmoid", (M.log1p, (M.neg, (M.sigmoid, "x"))), minus_softplus, _real_float),
    # the gradient of log1p(-sigmoid(x)) divides by (-sigmoid(x)) + 1, which is 0 from x = 37 on
    ("one_minus_sigmoid_as_sum", (M.add, (M.neg, (M.sigmoid, "x")), 1), sigmoid_neg, _real_float),
    ("one_minus_sigmoid_as_sum_swapped", (M.add, 1, (M.neg, (M.sigmoid, "x"))), sigmoid_neg, _real_float),
    # sigmoid(x) - 1 is -1 + tiny: from x = -37 down it is -1, -sigmoid(-x) keeps every digit
    ("sigmoid_minus_one", (M.sub, (M.sigmoid, "x"), 1), minus_sigmoid_neg, _real_float),
]

register_table(ROWS, "stabilize", "logistic", "fast_compile")

#: Rows of :mod:`~symlab.rewriting.rules.stabilize` the logistic rules rely on: they get the tags ``logistic`` and
#: ``fast_compile`` too. Every rule of this module runs in ``FAST_COMPILE``: stability is not an optimization, and a
#: fast compile must not train a hand-written logistic model to NaN where the default mode gives numbers.
STABILIZE_ROWS = ("log_sigmoid", "log_one_minus_sigmoid", "one_minus_sigmoid", "neg_neg_stabilize",
                  "sigmoid_from_exp", "sigmoid_from_exp_swapped", "sigmoid_from_reciprocal",
                  "sigmoid_from_reciprocal_swapped")

for _name in STABILIZE_ROWS:
    _entry = default_db[_name]
    default_db.register(_entry.rewriter, *sorted(_entry.tags | {"logistic", "fast_compile"}), name=_name)


__all__ = ["MAX_DEPTH", "MAX_OPERANDS", "MAX_POWER", "ROWS", "STABILIZE_ROWS", "minus_sigmoid_neg", "minus_softplus",
           "negated", "sigmoid_distribute", "sigmoid_factor_sum", "sigmoid_neg",
           "sigmoid_from_quotient"]
