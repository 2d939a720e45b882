"""``SparseVariable`` and ``SparseConstant``: sparse matrices in a graph, with their operators.

>>> from symlab import sparse
>>> x = sparse.csc_matrix("x")
>>> x.T.type
SparseTensorType(csr, float64, (?, ?))
>>> x.toarray().owner.op
DenseFromSparse{structured=True}
>>> (x + x).owner.op
AddSS

The operators call the sparse ops through :mod:`symlab.sparse.registry`: the
ops' modules are built on this one (their results are of these classes).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from symlab.graph.basic import Constant, Variable
from symlab.sparse.registry import sparse_ops
from symlab.tensor.basic import cast


class _SparseOperators:
    """Attributes and operators shared by sparse variables and constants."""

    type: Any
    # ``np.ones((2, 2)) + x`` must call ``x.__radd__``, not make an object array.
    __array_ufunc__ = None

    @property
    def format(self) -> str:
        """``"csc"`` or ``"csr"``."""
        return self.type.format

    @property
    def dtype(self) -> str:
        return self.type.dtype

    @property
    def ndim(self) -> int:
        return 2

    @property
    def broadcastable(self) -> tuple[bool, bool]:
        return self.type.broadcastable

    @property
    def shape(self) -> Variable:
        """The symbolic shape: an int64 vector of 2 entries, read from the stored ``shape`` (nothing is densified)."""
        return cast(sparse_ops().shape(self), "int64")

    @property
    def T(self) -> Variable:  # noqa: N802 - NumPy's name
        """The transpose (a csc matrix becomes csr and the other way round)."""
        return sparse_ops().transpose(self)

    def transpose(self) -> Variable:
        """The transpose (see :attr:`T`)."""
        return sparse_ops().transpose(self)

    def toarray(self) -> Variable:
        """The dense matrix (``dense_from_sparse``)."""
        return sparse_ops().dense_from_sparse(self)

    todense = toarray

    def zeros_like(self) -> Variable:
        """A sparse matrix of the same shape that stores nothing."""
        return sparse_ops().zeros_like(self)

    def ones_like(self) -> Variable:
        """Ones at the stored positions of this matrix (the same sparsity pattern)."""
        return sparse_ops().ones_like(self)

    #: A dense tensor's ``+``, ``*`` and ``@`` with a sparse matrix leave it to the sparse ops
    #: (:class:`symlab.tensor.variable.TensorVariable` returns NotImplemented).
    defers_tensor_operators = True

    def __add__(self, other: Any) -> Variable:
        return sparse_ops().add(self, other)

    def __radd__(self, other: Any) -> Variable:
        return sparse_ops().add(other, self)

    def __mul__(self, other: Any) -> Variable:
        return sparse_ops().multiply(self, other)

    def __rmul__(self, other: Any) -> Variable:
        return sparse_ops().multiply(other, self)

    def __neg__(self) -> Variable:
        return sparse_ops().neg(self)

    def __matmul__(self, other: Any) -> Variable:
        return sparse_ops().dot(self, other)

    def __rmatmul__(self, other: Any) -> Variable:
        return sparse_ops().dot(other, self)

    def dot(self, other: Any) -> Variable:
        """``structured_dot(self, other)``, as PyTensor's sparse variables do."""
        return sparse_ops().structured_dot(self, other)


class SparseVariable(_SparseOperators, Variable):
    """A Variable whose values are scipy.sparse matrices (its type is a ``SparseTensorType``)."""


class SparseConstant(_SparseOperators, Constant):
    """A constant scipy.sparse matrix."""

    def __str__(self) -> str:
        if self.name is not None:
            return self.name
        data = self.data
        return f"SparseConstant{{{data.format}, shape={data.shape}, nnz={data.nnz}}}"

    def signature(self) -> tuple[Any, ...]:
        """What makes two sparse constants interchangeable: the type, shape and stored arrays."""
        data = self.data
        return (
            self.type,
            data.shape,
            np.asarray(data.data).tobytes(),
            np.asarray(data.indices).tobytes(),
            np.asarray(data.indptr).tobytes(),
        )


__all__ = ["SparseConstant", "SparseVariable"]
