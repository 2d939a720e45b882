"""``ifelse``: a lazy choice between two branches by a scalar condition (PyTensor's ``pytensor.ifelse``).

``from symlab.ifelse import ifelse`` as in PyTensor's tutorial (conditions.rst). Only the chosen
branch is computed, by both backends of :func:`symlab.function` (the NumPy tier and the Numba code:
:mod:`symlab.compile.lazy_plan`); ``switch`` stays the eager, elementwise choice, which computes
both of its branches. Use ``ifelse`` when a branch is expensive and the condition is one scalar,
``switch`` when the choice is made element by element.

Modules: :mod:`~symlab.ifelse.op` (``IfElse``, ``ifelse``, the errors),
:mod:`~symlab.ifelse.region` (which outer nodes only one branch needs),
:mod:`~symlab.ifelse.rewrites` (the rules, registered in the rewrite database on import).

>>> import numpy as np
>>> import symlab
>>> import symlab.tensor as st
>>> a, b = st.dscalars("a", "b")
>>> x, y = st.dmatrices("x", "y")
>>> f = symlab.function([a, b, x, y], ifelse(st.lt(a, b), st.mean(x), st.mean(y)), mode="NUMPY")
>>> float(f(0.0, 1.0, np.ones((2, 2)), np.zeros((2, 2))))
1.0
"""

from symlab.ifelse.op import (
    IfElse,
    IfElseBranchCountError,
    IfElseBranchError,
    IfElseConditionError,
    ifelse,
    truth,
)
from symlab.ifelse.region import branch_region
from symlab.ifelse import rewrites  # registers the ifelse rules in the rewrite database

__all__ = [
    "IfElse",
    "IfElseBranchCountError",
    "IfElseBranchError",
    "IfElseConditionError",
    "branch_region",
    "ifelse",
    "rewrites",
    "truth",
]
