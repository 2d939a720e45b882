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
"""

from __future__ import annotations

from symlab.rewriting.db import register
from symlab.rewriting.merge import MergeOptimizer
from symlab.rewriting.rules.table import register_table
from symlab.tensor import math as M


def _sigmoid_expanded(x):  # type: ignore[no-untyped-def]
    e = M.exp(-M.abs(x))
    return M.switch(M.ge(x, 0), 1.0 / (1.0 + e), e / (1.0 + e))


#: (name, pattern, replacement): a power by a known constant; softplus and sigmoid as formulas.
ROWS = [
    ("pow_two", (M.pow, "x", 2), (M.sqr, "x")),
    ("pow_half", (M.pow, "x", 0.5), (M.sqrt, "x")),
    ("pow_one", (M.pow, "x", 1), "x"),
    ("pow_minus_one", (M.pow, "x", -1), (M.reciprocal, "x")),
    ("softplus_expanded", (M.softplus, "x"), lambda x: M.maximum(x, 0) + M.log1p(M.exp(-M.abs(x)))),
    ("sigmoid_expanded", (M.sigmoid, "x"), _sigmoid_expanded),
    ("abs_neg", (M.abs, (M.neg, "x")), (M.abs, "x")),
]

register_table(ROWS, "specialize")
register(MergeOptimizer(), "specialize", name="merge_specialize")  # shares what the rows above wrote twice

__all__ = ["ROWS"]
