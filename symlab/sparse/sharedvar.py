"""Shared sparse matrices: ``symlab.sparse.shared(scipy_matrix)`` (PyTensor's ``pytensor.sparse.shared``).

>>> import numpy as np
>>> import scipy.sparse as sp
>>> import symlab
>>> from symlab import sparse
>>> weights = sparse.shared(sp.csr_matrix(np.array([[0.0, 2.0], [1.0, 0.0]])), name="weights")
>>> weights.type
SparseTensorType(csr, float64, (?, ?))
>>> step = symlab.function([], [], updates={weights: sparse.structured_add(weights, 1.0)}, mode="NUMPY")
>>> _ = step()
>>> weights.get_value().toarray()
array([[0., 3.],
       [2., 0.]])
"""

from __future__ import annotations

from typing import Any

from symlab.graph.sharedvalue import Container, SharedVariable
from symlab.sparse.type import FORMATS, SparseTensorType, describe, is_sparse_value
from symlab.sparse.variable import SparseVariable


class SparseSharedVariable(SparseVariable, SharedVariable):
    """A shared scipy.sparse matrix: the sparse operators (``w.T``, ``w + x``) work on it."""


def shared(
    value: Any,
    name: str | None = None,
    strict: bool = False,
    allow_downcast: bool | None = None,
    *,
    borrow: bool = False,
    format: str | None = None,
) -> SparseSharedVariable:
    """A shared variable holding the scipy.sparse matrix ``value`` (copied unless ``borrow=True``).

    Its type has the value's format (``format`` converts it: ``"csc"`` or ``"csr"``) and dtype, and no
    static sizes.
    """
    if not is_sparse_value(value):
        raise TypeError(f"sparse.shared: expected a scipy.sparse matrix, received {describe(value)}")
    format = value.format if format is None and value.format in FORMATS else format or "csr"
    t = SparseTensorType(format, value.dtype)
    variable = SparseSharedVariable(t, None, name=name, strict=strict, allow_downcast=allow_downcast,
                                    container=Container(t, None, name, strict, allow_downcast))
    variable.set_value(value, borrow=bool(borrow))
    return variable


__all__ = ["SparseSharedVariable", "shared"]
