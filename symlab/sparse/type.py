"""``SparseTensorType``: the type of scipy.sparse matrices of one format (``csc`` or ``csr``) and dtype.

Like SciPy's, symlab's sparse values are matrices (two dimensions). A value of the type is a
``scipy.sparse.csc_matrix`` or ``csr_matrix``; ``filter`` converts another sparse format and
refuses a dense array, saying so:

>>> import numpy as np
>>> import scipy.sparse as sp
>>> t = SparseTensorType("csc", "float64")
>>> t
SparseTensorType(csc, float64, (?, ?))
>>> t.filter(sp.csr_matrix(np.eye(2))).format
'csc'
>>> t.filter(np.eye(2))
Traceback (most recent call last):
...
TypeError: SparseTensorType(csc, float64, (?, ?)) expects a scipy.sparse matrix, received a dense ndarray of shape (2, 2) and dtype float64; make it sparse first (scipy.sparse.csc_matrix(value)), or use csc_from_dense in the graph

The helpers on the type's values live here too, below the ops that use them:
:func:`constant` (a constant of the type of a value), :func:`coordinates`
(where the stored entries are), :func:`canonical_value` and
:func:`check_same_shape`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse

from symlab.graph.basic import Variable
from symlab.graph.type import Type
from symlab.scalar.type import arrays_close, check_dtype
from symlab.sparse.registry import sparse_ops
from symlab.sparse.variable import SparseConstant, SparseVariable
from symlab.tensor.type import TensorType, normalize_shape

#: The formats symlab's sparse matrices come in, and the SciPy class of each.
FORMATS: dict[str, type] = {"csc": scipy.sparse.csc_matrix, "csr": scipy.sparse.csr_matrix}

#: The dtypes a sparse matrix may have (PyTensor's list: no bool, no float16).
all_dtypes: tuple[str, ...] = (
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64", "complex64", "complex128",
)
float_dtypes = tuple(d for d in all_dtypes if d.startswith("float"))
complex_dtypes = tuple(d for d in all_dtypes if d.startswith("complex"))
int_dtypes = tuple(d for d in all_dtypes if d.startswith("int"))
uint_dtypes = tuple(d for d in all_dtypes if d.startswith("uint"))
integer_dtypes = int_dtypes + uint_dtypes
continuous_dtypes = complex_dtypes + float_dtypes
discrete_dtypes = integer_dtypes


def is_sparse_value(value: Any) -> bool:
    """True for a scipy.sparse matrix or array (of any format)."""
    return scipy.sparse.issparse(value)


def describe(value: Any) -> str:
    """What a value is, for error messages: its class, format, shape and dtype."""
    if is_sparse_value(value):
        return f"a scipy.sparse {value.format} {type(value).__name__} of shape {value.shape} and dtype {value.dtype}"
    if isinstance(value, np.ndarray):
        return f"a dense ndarray of shape {value.shape} and dtype {value.dtype}"
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


class SparseTensorType(Type):
    """Sparse matrices of one ``format`` (``"csc"`` or ``"csr"``), ``dtype`` and static ``shape``.

    ``shape`` has two entries, each an int or ``None`` (unknown); ``None`` means ``(None, None)``.
    """

    __props__ = ("format", "dtype", "shape")
    variable_type = SparseVariable
    constant_type = SparseConstant
    ndim = 2
    #: Why the Numba backend cannot run a graph holding such values (its linker reads this and runs the
    #: graph on the NumPy backend instead).
    numba_unsupported = "its values are scipy.sparse matrices, which Numba's nopython mode cannot take"

    def __init__(self, format: str, dtype: Any, shape: Sequence[int | None] | None = None) -> None:
        if format not in FORMATS:
            raise ValueError(f"SparseTensorType: format must be one of {sorted(FORMATS)}, received {format!r}")
        dtype = check_dtype(dtype)
        if dtype not in all_dtypes:
            raise TypeError(f"SparseTensorType: dtype must be one of {', '.join(all_dtypes)}, received {dtype!r}")
        shape = normalize_shape((None, None) if shape is None else shape, "SparseTensorType shape")
        if len(shape) != 2:
            raise ValueError(f"SparseTensorType: sparse values are matrices, so shape has 2 entries; received {shape!r}")
        self.format = format
        self.dtype = dtype
        self.shape: tuple[int | None, int | None] = shape  # type: ignore[assignment]

    # -- derived attributes ---------------------------------------------------
    @property
    def broadcastable(self) -> tuple[bool, bool]:
        """``True`` for each dimension of static size 1."""
        return (self.shape[0] == 1, self.shape[1] == 1)

    @property
    def numpy_dtype(self) -> np.dtype:
        return np.dtype(self.dtype)

    @property
    def value_class(self) -> type:
        """The SciPy class of the values: ``scipy.sparse.csc_matrix`` or ``csr_matrix``."""
        return FORMATS[self.format]

    # -- values -------------------------------------------------------------------
    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        """``data`` as a scipy.sparse matrix of this format and dtype, or ``TypeError`` saying what differs.

        ``strict``: only a matrix of exactly this format and dtype. Otherwise another sparse format is
        converted, and a dtype that loses nothing (any dtype with ``allow_downcast=True``).
        """
        if isinstance(data, Variable):
            raise TypeError(
                f"{self!r} expects a value, received the symbolic Variable {data}: symbolic variables cannot "
                "be used as values"
            )
        if not is_sparse_value(data):
            if isinstance(data, np.ndarray | list | tuple | np.generic | int | float | complex):
                try:
                    data = np.asarray(data)
                except ValueError:  # a ragged list: say what it is
                    pass
                raise TypeError(
                    f"{self!r} expects a scipy.sparse matrix, received {describe(data)}; make it sparse first "
                    f"(scipy.sparse.{self.format}_matrix(value)), or use {self.format}_from_dense in the graph"
                )
            raise TypeError(f"{self!r} expects a scipy.sparse matrix, received {describe(data)}")
        cls = FORMATS[self.format]
        if type(data) is cls and data.dtype.name == self.dtype:
            value = data
        elif strict:
            raise TypeError(
                f"{self!r} expects (strict) a scipy.sparse {cls.__name__} of dtype {self.dtype}, received {describe(data)}"
            )
        else:
            if data.ndim != 2:
                raise TypeError(f"{self!r} expects a sparse matrix (2 dimensions), received {describe(data)}")
            if data.dtype.name != self.dtype and not allow_downcast:
                if not np.can_cast(data.dtype, self.dtype, casting="safe"):
                    raise TypeError(
                        f"{self!r} cannot store {describe(data)} without risking loss of precision; cast it to "
                        f"{self.dtype} or pass allow_downcast=True"
                    )
            value = cls(data.asformat(self.format))
            if value.dtype.name != self.dtype:
                value = value.astype(self.dtype)
        for dim, (want, got) in enumerate(zip(self.shape, value.shape)):
            if want is not None and want != got:
                raise TypeError(
                    f"{self!r} expects static shape {_shape_str(self.shape)}, received {describe(value)} "
                    f"(dimension {dim} is {got}, not {want})"
                )
        return value

    def is_valid_value(self, value: Any) -> bool:
        return type(value) is FORMATS[self.format] and value.dtype.name == self.dtype and all(
            want is None or want == got for want, got in zip(self.shape, value.shape)
        )

    def values_eq(self, a: Any, b: Any) -> bool:
        """Same shape and the same values (stored zeros and the order of the entries do not matter)."""
        if not (is_sparse_value(a) and is_sparse_value(b)) or a.shape != b.shape:
            return False
        return (a != b).nnz == 0

    def values_eq_approx(self, a: Any, b: Any, rtol: float | None = None, atol: float | None = None) -> bool:
        """Same shape and nearly equal values at every position either stores (NaN equals NaN)."""
        if not (is_sparse_value(a) and is_sparse_value(b)) or a.shape != b.shape:
            return False
        a, b = scipy.sparse.csr_matrix(a), scipy.sparse.csr_matrix(b)
        rows_a, cols_a = a.nonzero()
        rows_b, cols_b = b.nonzero()
        rows, cols = np.concatenate([rows_a, rows_b]), np.concatenate([cols_a, cols_b])
        if rows.size == 0:
            return True
        left = np.asarray(a[rows, cols]).ravel()
        right = np.asarray(b[rows, cols]).ravel()
        return arrays_close(left, right, rtol, atol)

    def may_share_memory(self, a: Any, b: Any) -> bool:
        def parts(v: Any) -> list[np.ndarray]:
            if is_sparse_value(v):
                return [p for p in (getattr(v, "data", None), getattr(v, "indices", None), getattr(v, "indptr", None))
                        if isinstance(p, np.ndarray)]
            return [v] if isinstance(v, np.ndarray) else []

        return a is b or any(np.may_share_memory(p, q) for p in parts(a) for q in parts(b))

    def get_shape_info(self, obj: Any) -> tuple[tuple[int, int], int, int]:
        """The shape, the number of stored entries and the length of ``indptr``."""
        return (obj.shape, obj.nnz, obj.indptr.size)

    def get_size(self, shape_info: tuple[tuple[int, int], int, int]) -> int:
        _, nnz, n_ptr = shape_info
        return nnz * (self.numpy_dtype.itemsize + 4) + n_ptr * 4

    def value_zeros(self, shape: tuple[int, int]) -> Any:
        """An all-zero sparse matrix of ``shape`` (nothing stored)."""
        return FORMATS[self.format](shape, dtype=self.dtype)

    # -- relations between types -------------------------------------------------
    def in_same_class(self, otype: Type) -> bool:
        return isinstance(otype, SparseTensorType) and otype.format == self.format and otype.dtype == self.dtype

    def is_super(self, otype: Type) -> bool:
        """True if every value of ``otype`` is a value of ``self``: same format and dtype, sizes that fit."""
        return self.in_same_class(otype) and all(s is None or s == o for s, o in zip(self.shape, otype.shape))

    def convert_variable(self, var: Variable) -> Variable | None:
        """``var`` if it fits; a dense matrix of this dtype becomes sparse (``csc_from_dense``); else None."""
        if self.is_super(var.type):
            return var
        other = var.type
        if isinstance(other, TensorType) and other.dtype == self.dtype and other.ndim == 2 and all(
            s is None or s == o for s, o in zip(self.shape, other.shape)
        ):
            return sparse_ops().from_dense(self.format)(var)
        return None

    def filter_variable(self, other: Any, allow_convert: bool = True) -> Variable:
        if not isinstance(other, Variable):
            other = constant(self.filter(other))
        return super().filter_variable(other, allow_convert)

    # -- printing ------------------------------------------------------------------
    def __repr__(self) -> str:
        return f"SparseTensorType({self.format}, {self.dtype}, {_shape_str(self.shape)})"

    __str__ = __repr__


# -- reading stored values -------------------------------------------------------------------------
def coordinates(value: Any) -> tuple[np.ndarray, np.ndarray]:
    """(rows, columns) of every stored entry of a csc or csr matrix, in storage order."""
    indptr, indices = value.indptr, value.indices
    major = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    if value.format == "csr":
        return major, indices
    return indices, major


def canonical_value(value: Any) -> Any:
    """``value`` with sorted indices and no duplicate entries (a copy if it had any)."""
    if value.has_canonical_format:
        return value
    value = value.copy()
    value.sum_duplicates()
    return value


def check_same_shape(op: Any, x: Any, y: Any) -> None:
    """Raise ``ValueError`` naming ``op`` unless the values ``x`` and ``y`` have the same shape."""
    if tuple(x.shape) != tuple(np.shape(y)):
        raise ValueError(f"{op}: the inputs must have the same shape, received {describe(x)} and {describe(y)}")


def constant(value: Any, name: str | None = None) -> SparseConstant:
    """A constant holding a copy of the scipy.sparse matrix ``value`` (csc or csr).

    >>> c = constant(scipy.sparse.csr_matrix(np.eye(3)))
    >>> c, c.type
    (SparseConstant{csr, shape=(3, 3), nnz=3}, SparseTensorType(csr, float64, (3, 3)))
    """
    if not is_sparse_value(value) or value.format not in FORMATS:
        raise TypeError(f"sparse.constant: expected a scipy.sparse csc or csr matrix, received {describe(value)}")
    t = SparseTensorType(value.format, value.dtype, value.shape)
    return SparseConstant(t, FORMATS[value.format](value, copy=True), name)


def _shape_str(shape: Sequence[int | None]) -> str:
    return "(" + ", ".join("?" if s is None else str(s) for s in shape) + ")"


__all__ = [
    "FORMATS",
    "SparseTensorType",
    "all_dtypes",
    "complex_dtypes",
    "constant",
    "continuous_dtypes",
    "coordinates",
    "discrete_dtypes",
    "float_dtypes",
    "int_dtypes",
    "integer_dtypes",
    "is_sparse_value",
    "uint_dtypes",
]
