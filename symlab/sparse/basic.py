"""Sparse variables, and the ops between sparse and dense matrices and their parts.

- constructors: :func:`csc_matrix`, :func:`csr_matrix` (and :func:`matrix`), :func:`as_sparse_variable`;
- to and fro: :data:`dense_from_sparse`, :data:`csc_from_dense`, :data:`csr_from_dense`;
- parts: :data:`csm_properties` (``data, indices, indptr, shape``) and back, :data:`CSC`, :data:`CSR`;
- :data:`transpose` (a csc matrix becomes csr and the other way round).

>>> import numpy as np
>>> import scipy.sparse as sp
>>> import symlab
>>> x = csc_matrix("x", dtype="int64")
>>> data, indices, indptr, shape = csm_properties(x)
>>> f = symlab.function([x], CSR(data, indices, indptr, shape[::-1]), mode="NUMPY")
>>> a = sp.csc_matrix(np.array([[0, 5], [7, 0], [0, 1]]))
>>> f(a).toarray()  # the same arrays read as csr (with the shape reversed): the transpose
array([[0, 7, 0],
       [5, 0, 1]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse

from symlab.config import config
from symlab.graph.basic import Apply, Constant, Variable
from symlab.graph.null_type import disconnected
from symlab.graph.op import Op
from symlab.sparse.type import (
    FORMATS,
    SparseTensorType,
    all_dtypes,
    canonical_value,
    check_same_shape,
    constant,
    coordinates,
    describe,
    is_sparse_value,
)
from symlab.sparse.variable import SparseVariable
from symlab.tensor.type import TensorType

#: The formats symlab's sparse ops take.
sparse_formats = tuple(FORMATS)


# -- variables -------------------------------------------------------------------------------------
def matrix(format: str, name: str | None = None, dtype: Any = None, shape: Sequence[int | None] | None = None) -> SparseVariable:
    """A sparse matrix variable of ``format`` (``"csc"`` or ``"csr"``); ``dtype`` defaults to ``config.floatX``."""
    return SparseTensorType(format, config.floatX if dtype is None else dtype, shape)(name)


def csc_matrix(name: str | None = None, dtype: Any = None, shape: Sequence[int | None] | None = None) -> SparseVariable:
    """A sparse matrix variable in csc format (compressed by columns).

    >>> csc_matrix("x", dtype="float32").type
    SparseTensorType(csc, float32, (?, ?))
    """
    return matrix("csc", name, dtype, shape)


def csr_matrix(name: str | None = None, dtype: Any = None, shape: Sequence[int | None] | None = None) -> SparseVariable:
    """A sparse matrix variable in csr format (compressed by rows).

    >>> csr_matrix("y", shape=(3, None)).type
    SparseTensorType(csr, float64, (3, ?))
    """
    return matrix("csr", name, dtype, shape)


csc_dmatrix = SparseTensorType("csc", "float64")
csr_dmatrix = SparseTensorType("csr", "float64")
csc_fmatrix = SparseTensorType("csc", "float32")
csr_fmatrix = SparseTensorType("csr", "float32")


def as_sparse_variable(x: Any, name: str | None = None, what: str = "as_sparse_variable") -> Variable:
    """``x`` as a sparse Variable: sparse variables pass through, scipy.sparse matrices become constants.

    A dense variable or array is refused; ``what`` names ``x`` in that error.
    """
    if isinstance(x, Apply):
        x = x.default_output()
    if isinstance(x, Variable):
        if not isinstance(x.type, SparseTensorType):
            raise TypeError(
                f"{what}: expected a sparse matrix (csc or csr), received {x} of type {x.type}; make it sparse "
                "with csc_from_dense or csr_from_dense"
            )
        return x
    if is_sparse_value(x):
        if x.format not in FORMATS:
            x = x.tocsr()
        return constant(x, name=name)
    raise TypeError(f"{what}: expected a sparse matrix (csc or csr), received {describe(x)}")


as_sparse = as_sparse_variable


def is_sparse_variable(x: Any) -> bool:
    """True for a Variable of a ``SparseTensorType``."""
    return isinstance(x, Variable) and isinstance(x.type, SparseTensorType)


def _dense_input(x: Any, what: str) -> Variable:
    from symlab.tensor.basic import as_tensor_variable

    if is_sparse_value(x):
        raise TypeError(f"{what}: expected a dense tensor, received {describe(x)}")
    return as_tensor_variable(x, what=what)


def _int_vector(x: Any, what: str) -> Variable:
    """An integer vector (a value is checked to fit int32, the type of SciPy's index arrays)."""
    from symlab.tensor.basic import as_tensor_variable

    if not isinstance(x, Variable):
        values = np.asarray(x)
        if values.dtype.kind not in "iu" or not np.array_equal(values, values.astype("int32")):
            raise TypeError(f"{what}: expected integers that fit int32, received {describe(values)}")
        x = values.astype("int32")
    x = as_tensor_variable(x, what=what)
    if x.type.ndim != 1 or x.type.dtype[:3] not in ("int", "uin"):
        raise TypeError(f"{what}: expected a vector of integers, received {x} of type {x.type}")
    return x


def sparse_shape(var: Variable, known: Sequence[Any]) -> tuple[Any, Any]:
    """The two sizes of the sparse ``var`` for ``infer_shape``: ``known`` when given, else read from its ``shape``."""
    if len(known) == 2:
        return known[0], known[1]
    from symlab.tensor.basic import cast

    stored = cast(csm_shape(var), "int64")
    return stored[0], stored[1]


# -- parts of a compressed sparse matrix ------------------------------------------------------------
class CSMProperties(Op):
    """The parts of a csc or csr matrix: ``data``, ``indices``, ``indptr`` and ``shape`` (int32 vectors but data).

    The gradient (with respect to the matrix, through ``data``) is a matrix of the same pattern.
    """

    __props__ = ()
    view_map = {0: [0], 1: [0], 2: [0]}

    def make_node(self, csm: Any) -> Apply:
        csm = as_sparse_variable(csm, what=f"{self}: input 0")
        outputs = [
            TensorType(csm.type.dtype, (None,))(),
            TensorType("int32", (None,))(),
            TensorType("int32", (None,))(),
            TensorType("int32", (2,))(),
        ]
        return Apply(self, [csm], outputs)

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list) -> None:
        (csm,) = inputs
        output_storage[0][0] = np.asarray(csm.data)
        output_storage[1][0] = np.asarray(csm.indices, dtype="int32")
        output_storage[2][0] = np.asarray(csm.indptr, dtype="int32")
        output_storage[3][0] = np.asarray(csm.shape, dtype="int32")

    def L_op(self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:  # noqa: N802
        (csm,) = inputs
        _, indices, indptr, shape = outputs
        return [CSM(csm.type.format)(output_grads[0], indices, indptr, shape)]


csm_properties = CSMProperties()


def csm_data(csm: Any) -> Variable:
    """The stored values of a sparse matrix (a vector)."""
    return csm_properties(csm)[0]


def csm_indices(csm: Any) -> Variable:
    """The row (csc) or column (csr) index of each stored value."""
    return csm_properties(csm)[1]


def csm_indptr(csm: Any) -> Variable:
    """Where each column (csc) or row (csr) starts in ``data`` and ``indices``."""
    return csm_properties(csm)[2]


def csm_shape(csm: Any) -> Variable:
    """The shape of a sparse matrix (an int32 vector of 2 entries)."""
    return csm_properties(csm)[3]


class CSM(Op):
    """A csc or csr matrix made from its parts ``data, indices, indptr, shape``.

    The output shares ``data``'s memory. The gradient flows to ``data`` only (the others are integers).
    """

    __props__ = ("format",)
    view_map = {0: [0]}

    def __init__(self, format: str) -> None:
        if format not in FORMATS:
            raise ValueError(f"CSM: format must be one of {sorted(FORMATS)}, received {format!r}")
        self.format = format

    def __str__(self) -> str:
        return f"CSM{{{self.format}}}"

    def make_node(self, data: Any, indices: Any, indptr: Any, shape: Any) -> Apply:
        data = _dense_input(data, f"{self}: input 0 (data)")
        if data.type.ndim != 1 or data.type.dtype not in all_dtypes:
            raise TypeError(f"{self}: data must be a vector of one of the sparse dtypes, received {data} of type {data.type}")
        indices = _int_vector(indices, f"{self}: input 1 (indices)")
        indptr = _int_vector(indptr, f"{self}: input 2 (indptr)")
        shape = _int_vector(shape, f"{self}: input 3 (shape)")
        static: tuple[int | None, int | None] = (None, None)
        if isinstance(shape, Constant):
            if shape.data.shape != (2,):
                raise ValueError(f"{self}: shape must have 2 entries, received {shape.data.tolist()}")
            static = (int(shape.data[0]), int(shape.data[1]))
        elif shape.owner is not None and isinstance(shape.owner.op, CSMProperties) and shape.index == 3:
            static = shape.owner.inputs[0].type.shape
        out = SparseTensorType(self.format, data.type.dtype, static)()
        return Apply(self, [data, indices, indptr, shape], [out])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list) -> None:
        data, indices, indptr, shape = inputs
        if len(shape) != 2:
            raise ValueError(f"{self}: shape must have 2 entries, received {list(shape)}")
        if data.shape != indices.shape:
            raise ValueError(
                f"{self}: data and indices must have the same length (one index per stored value), received "
                f"{data.shape[0]} values and {indices.shape[0]} indices"
            )
        n_major = int(shape[1] if self.format == "csc" else shape[0])
        if len(indptr) != n_major + 1:
            what = "columns" if self.format == "csc" else "rows"
            raise ValueError(
                f"{self}: indptr must have one entry more than the number of {what} ({n_major}), received "
                f"{len(indptr)} entries"
            )
        output_storage[0][0] = FORMATS[self.format](
            (data, indices.copy(), indptr.copy()), shape=(int(shape[0]), int(shape[1])), copy=False
        )

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: Sequence[Any]) -> list:
        from symlab.tensor.basic import cast

        shape = cast(node.inputs[3], "int64")
        return [(shape[0], shape[1])]

    def L_op(self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:  # noqa: N802
        _, indices, indptr, shape = inputs
        (g,) = output_grads
        if not is_sparse_variable(g):
            g = SparseFromDense(self.format)(g)
        return [CSMGrad(self.format)(indices, indptr, shape, g), disconnected(), disconnected(), disconnected()]


CSC = CSM("csc")
CSR = CSM("csr")


class CSMGrad(Op):
    """The gradient of :class:`CSM` with respect to ``data``: the gradient matrix read at each stored position.

    Inputs: the ``indices``, ``indptr`` and ``shape`` of the matrix CSM made, and the gradient ``g`` of
    that matrix (sparse, of any pattern). Output ``k`` is ``g`` at the position of stored value ``k``.
    """

    __props__ = ("format",)

    def __init__(self, format: str) -> None:
        self.format = format

    def make_node(self, indices: Any, indptr: Any, shape: Any, g: Any) -> Apply:
        g = as_sparse_variable(g, what=f"{self}: input 3 (g)")
        return Apply(self, [indices, indptr, shape, g], [TensorType(g.type.dtype, (None,))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list) -> None:
        indices, indptr, shape, g = inputs
        pattern = FORMATS[self.format]((np.zeros(len(indices)), indices, indptr), shape=tuple(int(s) for s in shape))
        rows, cols = coordinates(pattern)
        g = scipy.sparse.csr_matrix(g, copy=True)
        g.sum_duplicates()
        values = np.asarray(g[rows, cols]).ravel() if rows.size else np.zeros(0, dtype=g.dtype)
        output_storage[0][0] = values.astype(node.outputs[0].type.dtype, copy=False)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: Sequence[Any]) -> list:
        return [input_shapes[0]]


# -- to and fro ------------------------------------------------------------------------------------
class DenseFromSparse(Op):
    """The dense matrix of a sparse one.

    The gradient is structured by default (``structured=True``): it is a sparse matrix of the input's
    pattern, the output's gradient read at the stored positions only. ``structured=False`` gives the
    whole gradient, made sparse.
    """

    __props__ = ("structured",)

    def __init__(self, structured: bool = True) -> None:
        self.structured = bool(structured)

    def make_node(self, x: Any) -> Apply:
        x = as_sparse_variable(x, what=f"{self}: input 0")
        return Apply(self, [x], [TensorType(x.type.dtype, x.type.shape)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list) -> None:
        output_storage[0][0] = inputs[0].toarray()

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: Sequence[Any]) -> list:
        return [sparse_shape(node.inputs[0], input_shapes[0])]

    def L_op(self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:  # noqa: N802
        (x,) = inputs
        (gz,) = output_grads
        if self.structured:
            return [structured_read(x, gz)]
        return [SparseFromDense(x.type.format)(gz)]


dense_from_sparse = DenseFromSparse()


class SparseFromDense(Op):
    """The sparse matrix (``format``: ``"csc"`` or ``"csr"``) of a dense one; zeros are not stored.

    A vector becomes a row, a scalar a 1 x 1 matrix, as in PyTensor.
    """

    __props__ = ("format",)

    def __init__(self, format: str) -> None:
        if format not in FORMATS:
            raise ValueError(f"SparseFromDense: format must be one of {sorted(FORMATS)}, received {format!r}")
        self.format = format

    def make_node(self, x: Any) -> Apply:
        x = _dense_input(x, f"{self}: input 0")
        if x.type.ndim > 2:
            raise TypeError(f"{self}: sparse matrices have 2 dimensions, received {x} of type {x.type}")
        if x.type.dtype not in all_dtypes:
            raise TypeError(f"{self}: a sparse matrix cannot hold dtype {x.type.dtype}; the sparse dtypes are {', '.join(all_dtypes)}")
        if x.type.ndim < 2:
            x = x.dimshuffle(*(["x"] * (2 - x.type.ndim)), *range(x.type.ndim))
        return Apply(self, [x], [SparseTensorType(self.format, x.type.dtype, x.type.shape)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list) -> None:
        output_storage[0][0] = FORMATS[self.format](inputs[0])

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: Sequence[Any]) -> list:
        return [tuple(input_shapes[0])]

    def L_op(self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:  # noqa: N802
        (gz,) = output_grads
        return [dense_from_sparse(gz) if is_sparse_variable(gz) else gz]


csc_from_dense = SparseFromDense("csc")
csr_from_dense = SparseFromDense("csr")


# -- reading a dense matrix at a sparse pattern -------------------------------------------------
class StructuredRead(Op):
    """The dense ``g`` read at the stored positions of the sparse ``x``: a sparse matrix of ``x``'s pattern.

    This is the structured gradient of ``dense_from_sparse`` (PyTensor writes it ``sp_ones_like(x) * g``).
    Duplicate entries of ``x`` are summed first: each position is read once.
    """

    __props__ = ()

    def make_node(self, x: Any, g: Any) -> Apply:
        x = as_sparse_variable(x, what=f"{self}: input 0")
        g = _dense_input(g, f"{self}: input 1")
        if g.type.ndim != 2:
            raise TypeError(f"{self}: input 1 must be a matrix, received {g} of type {g.type}")
        return Apply(self, [x, g], [SparseTensorType(x.type.format, g.type.dtype, x.type.shape)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list) -> None:
        x, g = inputs
        check_same_shape(self, x, g)
        x = canonical_value(x)
        rows, cols = coordinates(x)
        cls = FORMATS[node.outputs[0].type.format]
        output_storage[0][0] = cls((np.asarray(g[rows, cols]), x.indices.copy(), x.indptr.copy()), shape=x.shape)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: Sequence[Any]) -> list:
        return [tuple(input_shapes[1])]

    def L_op(self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:  # noqa: N802
        x, _ = inputs
        gz = _as_sparse_gradient(output_grads[0], x.type.format)
        return [disconnected(), dense_from_sparse(structured_read(x, dense_from_sparse(gz)))]


structured_read = StructuredRead()


def _as_sparse_gradient(g: Variable, format: str) -> Variable:
    return g if is_sparse_variable(g) else SparseFromDense(format)(g)


class Transpose(Op):
    """The transpose of a sparse matrix: a csc matrix becomes csr (the same arrays) and the other way round."""

    __props__ = ()
    view_map = {0: [0]}
    format_map = {"csc": "csr", "csr": "csc"}

    def __str__(self) -> str:
        return "SparseTranspose"

    def make_node(self, x: Any) -> Apply:
        x = as_sparse_variable(x, what=f"{self}: input 0")
        out = SparseTensorType(self.format_map[x.type.format], x.type.dtype, x.type.shape[::-1])()
        return Apply(self, [x], [out])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list) -> None:
        output_storage[0][0] = inputs[0].transpose()

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: Sequence[Any]) -> list:
        rows, cols = sparse_shape(node.inputs[0], input_shapes[0])
        return [(cols, rows)]

    def L_op(self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:  # noqa: N802
        (gz,) = output_grads
        if not is_sparse_variable(gz):
            gz = SparseFromDense(outputs[0].type.format)(gz)
        return [transpose(gz)]


transpose = Transpose()


def sp_ones_like(x: Any) -> Variable:
    """Ones at the stored positions of ``x`` (the same pattern, format and shape)."""
    from symlab.tensor.alloc import ones_like

    x = as_sparse_variable(x, what="sp_ones_like")
    data, indices, indptr, shape = csm_properties(x)
    return CSM(x.type.format)(ones_like(data), indices, indptr, shape)


def sp_zeros_like(x: Any) -> Variable:
    """A sparse matrix of ``x``'s format, dtype and shape that stores nothing."""
    from symlab.tensor.alloc import zeros_like

    x = as_sparse_variable(x, what="sp_zeros_like")
    _, _, indptr, shape = csm_properties(x)
    empty_data = np.zeros(0, dtype=x.type.dtype)
    return CSM(x.type.format)(empty_data, np.zeros(0, dtype="int32"), zeros_like(indptr), shape)


__all__ = [
    "CSC",
    "CSM",
    "CSMGrad",
    "CSMProperties",
    "CSR",
    "DenseFromSparse",
    "SparseFromDense",
    "StructuredRead",
    "Transpose",
    "as_sparse",
    "as_sparse_variable",
    "constant",
    "coordinates",
    "csc_dmatrix",
    "csc_fmatrix",
    "csc_from_dense",
    "csc_matrix",
    "csm_data",
    "csm_indices",
    "csm_indptr",
    "csm_properties",
    "csm_shape",
    "csr_dmatrix",
    "csr_fmatrix",
    "csr_from_dense",
    "csr_matrix",
    "dense_from_sparse",
    "is_sparse_variable",
    "matrix",
    "sp_ones_like",
    "sp_zeros_like",
    "sparse_formats",
    "structured_read",
    "transpose",
]
