"""Specialize: general operations replaced by cheaper special cases.

>>> import symlab.tensor as T
>>> from symlab.rewriting import rewrite_graph
>>> x = T.dvector("x")
>>> out, trace = rewrite_graph(x ** 2 + x ** 0.5, include=("specialize",))
>>> [str(n.op) for n in trace.fgraph.toposort()]
['Elemwise{sqr,no_inplace}', 'Elemwise{sqrt,no_inplace}', 'Elemwise{add,no_inplace}']
"""

from __future__ import annotations

from symlab.rewriting.rules.table import register_table
from symlab.tensor import math as M

#: (name, pattern, replacement): a power by a known constant.
ROWS = [
    ("pow_two", (M.pow, "x", 2), (M.sqr, "x")),
    ("pow_half", (M.pow, "x", 0.5), (M.sqrt, "x")),
    ("pow_one", (M.pow, "x", 1), "x"),
    ("pow_minus_one", (M.pow, "x", -1), (M.reciprocal, "x")),
]

register_table(ROWS, "specialize")

__all__ = ["ROWS"]
