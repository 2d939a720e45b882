"""Sparse matrices in graphs, backed by scipy.sparse (PyTensor's ``pytensor.sparse``).

Two formats, as in SciPy: ``csc`` (compressed by columns) and ``csr`` (by rows). Sparse variables are
made with :func:`csc_matrix` and :func:`csr_matrix`; :data:`dense_from_sparse`, :data:`csc_from_dense`
and :data:`csr_from_dense` go to and fro; :data:`csm_properties` gives the parts of a matrix
(``data, indices, indptr, shape``) and :data:`CSC`/:data:`CSR` make one from them.

>>> import numpy as np
>>> import scipy.sparse as sp
>>> import symlab
>>> from symlab import sparse
>>> x = sparse.csc_matrix(name="x", dtype="float64")
>>> f = symlab.function([x], sparse.structured_add(x, 1.0))
>>> f(sp.csc_matrix(np.array([[0.0, 3.0], [4.0, 0.0]]))).toarray()
array([[0., 4.],
       [5., 0.]])
>>> f.compile_info.numpy_only  # the Numba backend runs such a graph on the NumPy backend, and says why
"the graph holds x (SparseTensorType(csc, float64, (?, ?))): its values are scipy.sparse matrices, which Numba's nopython mode cannot take"

Graphs holding sparse variables run on the NumPy backend in every mode (each op's ``perform`` calls
SciPy).
"""

from typing import Any

from symlab.sparse.basic import (
    CSC,
    CSM,
    CSR,
    CSMGrad,
    CSMProperties,
    DenseFromSparse,
    SparseFromDense,
    StructuredRead,
    Transpose,
    as_sparse,
    as_sparse_variable,
    csc_dmatrix,
    csc_fmatrix,
    csc_from_dense,
    csc_matrix,
    csm_data,
    csm_indices,
    csm_indptr,
    csm_properties,
    csm_shape,
    csr_dmatrix,
    csr_fmatrix,
    csr_from_dense,
    csr_matrix,
    dense_from_sparse,
    is_sparse_variable,
    matrix,
    sp_ones_like,
    sp_zeros_like,
    sparse_formats,
    structured_read,
    transpose,
)
from symlab.sparse.math import (
    AddSD,
    AddSS,
    Dot,
    SparseDenseMultiply,
    StructuredDot,
    StructuredDotGrad,
    add,
    dot,
    multiply,
    neg,
    structured_add,
    structured_dot,
    structured_exp,
    structured_log,
    structured_maximum,
    structured_minimum,
    structured_pow,
    structured_sigmoid,
    subtract,
)
from symlab.sparse.type import (
    SparseTensorType,
    all_dtypes,
    complex_dtypes,
    constant,
    continuous_dtypes,
    discrete_dtypes,
    float_dtypes,
    int_dtypes,
    integer_dtypes,
    uint_dtypes,
)
from symlab.sparse.variable import SparseConstant, SparseVariable


def shared(
    value: Any,
    name: str | None = None,
    strict: bool = False,
    allow_downcast: bool | None = None,
    *,
    borrow: bool = False,
    format: str | None = None,
) -> Any:
    """A shared variable holding a scipy.sparse matrix (see :func:`symlab.sparse.sharedvar.shared`; its module,
    which needs ``symlab.compile``, is imported on the first call)."""
    from symlab.sparse.sharedvar import shared as make_shared

    return make_shared(value, name, strict, allow_downcast, borrow=borrow, format=format)


__all__ = [
    "CSC",
    "CSM",
    "CSMGrad",
    "CSMProperties",
    "CSR",
    "AddSD",
    "AddSS",
    "DenseFromSparse",
    "Dot",
    "SparseConstant",
    "SparseDenseMultiply",
    "SparseFromDense",
    "SparseTensorType",
    "SparseVariable",
    "StructuredDot",
    "StructuredDotGrad",
    "StructuredRead",
    "Transpose",
    "add",
    "all_dtypes",
    "as_sparse",
    "as_sparse_variable",
    "complex_dtypes",
    "constant",
    "continuous_dtypes",
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
    "discrete_dtypes",
    "dot",
    "float_dtypes",
    "int_dtypes",
    "integer_dtypes",
    "is_sparse_variable",
    "matrix",
    "multiply",
    "shared",
    "neg",
    "sp_ones_like",
    "sp_zeros_like",
    "sparse_formats",
    "structured_add",
    "structured_dot",
    "structured_exp",
    "structured_log",
    "structured_maximum",
    "structured_minimum",
    "structured_pow",
    "structured_read",
    "structured_sigmoid",
    "subtract",
    "transpose",
    "uint_dtypes",
]
