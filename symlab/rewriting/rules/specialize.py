"""Specialize: general operations replaced by cheaper special cases.

>>> import symlab.tensor as T
>>> from symlab.rewriting import rewrite_graph
>>> x = T.dvector("x")
>>> out, trace = rewrite_graph(x ** 2 + x ** 0.5, include=("specialize",))
>>> [str(n.op) for n in trace.fgraph.toposort()]
['Elemwise{sqr,no_inplace}', 'Elemwise{sqrt,no_inplace}', 'Elemwise{add,no_inplace}']

``softplus`` is written out as the formula its kernels compute,
``max(x, 0) + log1p(exp(-|x|))``, so that the merge of this phase shares
``log1p(exp(-|x|))`` between ``softplus(x)`` and ``softplus(-x)``: the
log-likelihood of a logistic model, once stabilized, needs both, and then
costs one ``exp`` and one ``log1p`` per element instead of two of each.

>>> out, trace = rewrite_graph(T.softplus(x) + T.softplus(-x), include=("specialize",))
>>> ops = [str(n.op.scalar_op) for n in trace.fgraph.toposort() if hasattr(n.op, "scalar_op")]
>>> sorted(set(ops)), ops.count("log1p"), ops.count("exp")
(['abs', 'add', 'exp', 'log1p', 'maximum', 'neg'], 1, 1)

``sigmoid`` is written out the same way, as the stable formula its kernels
compute: with ``e = exp(-|x|)``, ``1 / (1 + e)`` where ``x >= 0`` and
``e / (1 + e)`` elsewhere. Its ``exp`` is then an ordinary node, which the
compiled kernels run with NumPy's vectorised loop, and which is shared with
any other ``exp(-|x|)`` of the graph (a logistic model's loss has one).

The rows of :data:`POWER_ROWS` simplify powers by constants. They keep
values: ``(x**a)**b`` becomes ``x**(a*b)`` only for integers ``a`` and ``b``
(``(x**0.5)**2`` is NaN for x < 0, ``x**1`` is not), or ``|x|**(a*b)`` when
``a`` is even (``(x**2)**0.5`` is ``|x|``); ``x**3`` and ``x**4`` become
products (NumPy's ``power`` by an integer is 40 times slower than a
multiplication; the products differ from it by rounding only, an ulp or two).

>>> import numpy as np
>>> out, trace = rewrite_graph(T.sqrt(x ** 2) + (x ** 2) ** 3 + x ** 0, include=("specialize",))
>>> sorted({s.rule for s in trace} - {"merge_specialize"})
['pow_of_sqr', 'pow_two', 'pow_zero', 'sqrt_sqr']
>>> out.eval({trace.fgraph.inputs[0]: np.array([-2.0])})
array([67.])
"""

from __future__ import annotations

import math

import numpy as np

from symlab.graph.basic import Apply, Constant, Variable
from symlab.graph.fg import FunctionGraph
from symlab.rewriting.db import register
from symlab.rewriting.merge import MergeOptimizer
from symlab.rewriting.patterns import const
from symlab.rewriting.rules.table import register_table
from symlab.tensor import math as M
from symlab.tensor.alloc import ones_like


def _sigmoid_expanded(x):  # type: ignore[no-untyped-def]
    e = M.exp(-M.abs(x))
    return M.switch(M.ge(x, 0), 1.0 / (1.0 + e), e / (1.0 + e))


def _float_output(fgraph: FunctionGraph, node: Apply, bindings: dict) -> bool:
    """The power is computed in floating point (an integer to the power -1 is an error in NumPy, not 1 // x)."""
    return node.outputs[0].dtype.startswith(("float", "complex"))


def _shares_exp(fgraph: FunctionGraph, node: Apply, bindings: dict) -> bool:
    """A ``softplus`` (or ``abs``) of ``x`` or ``-x`` is also in the graph: written out, they share ``exp(-|x|)``.

    That is a logistic model's loss and gradient: ``softplus(z)``, ``softplus(-z)`` and ``sigmoid(z)`` then
    cost one ``exp`` and one ``log1p`` per element. Elsewhere ``sigmoid`` and ``softplus`` stay one operation
    each (their kernels compute the same stable formulas): the graph reads as written.
    """
    x = bindings["x"]
    related = [x]
    if x.owner is not None and x.owner.op == M.neg:
        related.append(x.owner.inputs[0])
    for var in list(related):
        related += [c.outputs[0] for c, _ in fgraph.clients.get(var, ()) if c != "output" and c.op == M.neg]
    for var in related:
        for client, _ in fgraph.clients.get(var, ()):
            if client != "output" and client is not node and client.op in (M.softplus, M.abs):
                return True
    return False


#: (name, pattern, replacement[, constraint]): a power by a known constant; softplus and sigmoid as formulas
#: where they share their exponential with another.
ROWS = [
    ("pow_two", (M.pow, "x", 2), (M.sqr, "x")),
    ("mul_self", (M.mul, "x", "x"), (M.sqr, "x")),  # one name for a square: merge then shares x*x and x**2
    ("pow_half", (M.pow, "x", 0.5), (M.sqrt, "x")),
    ("pow_one", (M.pow, "x", 1), "x"),
    ("pow_minus_one", (M.pow, "x", -1), (M.reciprocal, "x"), _float_output),
    ("softplus_expanded", (M.softplus, "x"), lambda x: M.maximum(x, 0) + M.log1p(M.exp(-M.abs(x))), _shares_exp),
    ("sigmoid_expanded", (M.sigmoid, "x"), _sigmoid_expanded, _shares_exp),
    ("abs_neg", (M.abs, (M.neg, "x")), (M.abs, "x")),
]


def _constant_value(v: Variable) -> float | None:
    """The one value of the constant ``v`` (seen through broadcasting ``DimShuffle`` nodes), or None."""
    c = const().strip(v)
    if not isinstance(c, Constant):
        return None
    data = np.asarray(c.data)
    if data.size == 0 or data.dtype.kind not in "iuf" or not np.all(data == data.flat[0]):
        return None
    value = data.flat[0].item()
    return value if math.isfinite(value) else None


def _is_integer(value: float | None) -> bool:
    return value is not None and value == int(value)


def _nested_power(a: float | None, b: float | None) -> float | int | None:
    """The exponent ``a*b`` of ``(x**a)**b`` when that keeps values (see :func:`power_of_power`), else None."""
    if not _is_integer(a) or b is None or not (_is_integer(b) or a % 2 == 0):
        return None
    p = a * b
    return int(p) if p == int(p) else p


def power_of_power(x: Variable, a: Variable, b: Variable) -> Variable:
    """x ** (a*b) for integers a and b; |x| ** (a*b) for an even a and any b"""
    va, vb = _constant_value(a), _constant_value(b)
    base = x if _is_integer(vb) else M.abs(x)
    return M.pow(base, _nested_power(va, vb))


def power_of_sqr(x: Variable, b: Variable) -> Variable:
    """x ** (2*b) for an integer b; |x| ** (2*b) for any b"""
    vb = _constant_value(b)
    base = x if _is_integer(vb) else M.abs(x)
    return M.pow(base, _nested_power(2, vb))


def _nested_ok(fgraph: FunctionGraph, node: Apply, bindings: dict) -> bool:
    """Floating x, constant exponents whose product keeps values (integer wrap-around is left alone)."""
    if not bindings["x"].dtype.startswith("float"):
        return False
    a = _constant_value(bindings["a"]) if "a" in bindings else 2
    return _nested_power(a, _constant_value(bindings["b"])) is not None


def _real_float(fgraph: FunctionGraph, node: Apply, bindings: dict) -> bool:
    return bindings["x"].dtype.startswith("float")


#: (name, pattern, replacement[, constraint]): powers by constants simplified, values kept (see the docstring).
POWER_ROWS = [
    # x**0 is 1 for every x, NaN and inf included: ones of x's shape and dtype
    ("pow_zero", (M.pow, "x", 0), (ones_like, "x")),
    # (x**a)**b: one power instead of two, no intermediate overflow; only where it is the same function
    ("pow_pow", (M.pow, (M.pow, "x", "a"), "b"), power_of_power, _nested_ok),
    # the same after pow_two made the inner power a sqr
    ("pow_of_sqr", (M.pow, (M.sqr, "x"), "b"), power_of_sqr, _nested_ok),
    # sqrt(x*x) is |x|, without the overflow of x*x from |x| = 1.3e154 on
    ("sqrt_sqr", (M.sqrt, (M.sqr, "x")), (M.abs, "x"), _real_float),
    # small integer powers as products: two multiplications instead of a power
    ("pow_three", (M.pow, "x", 3), (M.mul, "x", (M.sqr, "x"))),
    ("pow_four", (M.pow, "x", 4), (M.sqr, (M.sqr, "x"))),
]

register_table(POWER_ROWS, "specialize")  # first: pow_pow sees (x**-2)**0.5 before pow_half takes it apart
register_table(ROWS, "specialize")
register(MergeOptimizer(), "specialize", name="merge_specialize")  # shares what the rows above wrote twice

__all__ = ["POWER_ROWS", "ROWS", "power_of_power", "power_of_sqr"]
