"""The sparse ops as the modules below them reach them: registered by :mod:`symlab.sparse.math`.

A sparse variable's operators (``x + y``, ``x.T``, ``x.toarray()``) and the
conversion of a dense matrix by :meth:`SparseTensorType.convert_variable
<symlab.sparse.type.SparseTensorType.convert_variable>` call ops that are
defined in modules built on theirs (:mod:`symlab.sparse.basic` and
:mod:`symlab.sparse.math`, which make variables of that class and type).
Those ops are registered here, in one :class:`SparseOps`, when
:mod:`symlab.sparse.math` is imported; the package ``symlab.sparse`` imports
it, and importing any module of the package imports the package first, so
they are registered before a sparse variable exists.

>>> from symlab import sparse
>>> sparse_ops().transpose is sparse.transpose, sparse_ops().add is sparse.add
(True, True)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: A function from graph inputs (variables or values) to the variable of the result.
Builder = Callable[..., Any]


@dataclass(frozen=True)
class SparseOps:
    """The sparse ops the variable class and the type call, by what they do."""

    #: ``transpose(x)``: ``x.T``.
    transpose: Builder
    #: ``dense_from_sparse(x)``: ``x.toarray()``.
    dense_from_sparse: Builder
    #: ``from_dense(format)``: the op that makes a dense matrix sparse (``SparseFromDense``).
    from_dense: Callable[[str], Builder]
    #: ``shape(x)``: the stored shape of ``x`` (``csm_shape``).
    shape: Builder
    #: ``zeros_like(x)``, ``ones_like(x)``: ``sp_zeros_like``, ``sp_ones_like``.
    zeros_like: Builder
    ones_like: Builder
    #: ``x + y``, ``x * y``, ``-x``, ``x @ y``, ``x.dot(y)``.
    add: Builder
    multiply: Builder
    neg: Builder
    dot: Builder
    structured_dot: Builder


_registered: SparseOps | None = None


def register_sparse_ops(ops: SparseOps) -> None:
    """Make :func:`sparse_ops` return ``ops`` (:mod:`symlab.sparse.math` registers symlab's)."""
    global _registered
    if not isinstance(ops, SparseOps):
        raise TypeError(f"register_sparse_ops expects a SparseOps, received {type(ops).__name__}")
    _registered = ops


def sparse_ops() -> SparseOps:
    """The registered sparse ops; ``RuntimeError`` if none are (``symlab.sparse`` was not imported)."""
    if _registered is None:
        raise RuntimeError("the sparse ops are not registered: import symlab.sparse (it registers them)")
    return _registered
