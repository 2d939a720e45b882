"""Arithmetic on sparse matrices: structured operations, sums, products.

*Structured* operations work on the stored values only (``data``): ``structured_add(x, 2)`` adds 2 to
every stored value and leaves the zeros that are not stored alone.

>>> import numpy as np
>>> import scipy.sparse as sp
>>> import symlab
>>> from symlab.sparse.basic import csr_matrix
>>> x = csr_matrix("x")
>>> f = symlab.function([x], structured_add(x, 10.0), mode="NUMPY")
>>> f(sp.csr_matrix(np.array([[0.0, 1.0], [2.0, 0.0]]))).toarray()
array([[ 0., 11.],
       [12.,  0.]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Variable
from symlab.graph.op import Op
from symlab.scalar.type import upcast
from symlab.sparse.basic import (
    CSM,
    SparseFromDense,
    _as_sparse_gradient,
    _dense_input,
    as_sparse_variable,
    csm_properties,
    csm_shape,
    dense_from_sparse,
    is_sparse_variable,
    sp_ones_like,
    sp_zeros_like,
    sparse_shape,
    structured_read,
    transpose,
)
from symlab.sparse.registry import SparseOps, register_sparse_ops
from symlab.sparse.type import (
    FORMATS,
    SparseTensorType,
    canonical_value,
    check_same_shape,
    coordinates,
    describe,
    is_sparse_value,
)
from symlab.tensor.type import TensorType


# -- structured elementwise operations -----------------------------------------------------------
def _structured(name: str, x: Any, apply: Any, *scalars: Any) -> Variable:
    """``apply(data, *scalars)`` on the stored values of ``x``; the pattern stays."""
    x = as_sparse_variable(x, what=f"{name}: input 0")
    args = [_dense_input(s, f"{name}: input {k + 1}") for k, s in enumerate(scalars)]
    for k, a in enumerate(args):
        if a.type.ndim != 0:
            raise TypeError(f"{name}: input {k + 1} must be a scalar, received {a} of type {a.type}")
    data, indices, indptr, shape = csm_properties(x)
    return CSM(x.type.format)(apply(data, *args), indices, indptr, shape)


def structured_add(x: Any, y: Any) -> Variable:
    """``y`` (a scalar) added to every stored value of the sparse ``x``; the zeros not stored stay zeros.

    >>> from symlab.sparse.basic import csc_matrix
    >>> structured_add(csc_matrix("x"), 2).type
    SparseTensorType(csc, float64, (?, ?))
    """
    from symlab.tensor.math import add

    return _structured("structured_add", x, add, y)


def structured_exp(x: Any) -> Variable:
    """``exp`` of every stored value of ``x``."""
    from symlab.tensor.math import exp

    return _structured("structured_exp", x, exp)


def structured_log(x: Any) -> Variable:
    """``log`` of every stored value of ``x``."""
    from symlab.tensor.math import log

    return _structured("structured_log", x, log)


def structured_sigmoid(x: Any) -> Variable:
    """``sigmoid`` of every stored value of ``x``."""
    from symlab.tensor.math import sigmoid

    return _structured("structured_sigmoid", x, sigmoid)


def structured_pow(x: Any, y: Any) -> Variable:
    """Every stored value of ``x`` to the power ``y`` (a scalar)."""
    from symlab.tensor.math import pow

    return _structured("structured_pow", x, pow, y)


def structured_minimum(x: Any, y: Any) -> Variable:
    """``minimum(value, y)`` of every stored value of ``x`` (``y`` a scalar)."""
    from symlab.tensor.math import minimum

    return _structured("structured_minimum", x, minimum, y)


def structured_maximum(x: Any, y: Any) -> Variable:
    """``maximum(value, y)`` of every stored value of ``x`` (``y`` a scalar)."""
    from symlab.tensor.math import maximum

    return _structured("structured_maximum", x, maximum, y)


def neg(x: Any) -> Variable:
    """``-x`` (every stored value negated)."""
    from symlab.tensor.math import neg as dense_neg

    return _structured("neg", x, dense_neg)


# -- sums -------------------------------------------------------------------------------------------
class AddSS(Op):
    """Sparse + sparse: a sparse matrix (``x``'s format) storing the union of both patterns."""

    __props__ = ()

    def make_node(self, x: Any, y: Any) -> Apply:
        x = as_sparse_variable(x, what=f"{self}: input 0")
        y = as_sparse_variable(y, what=f"{self}: input 1")
        shape = tuple(a if a is not None else b for a, b in zip(x.type.shape, y.type.shape))
        out = SparseTensorType(x.type.format, upcast(x.type.dtype, y.type.dtype), shape)()
        return Apply(self, [x, y], [out])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list) -> None:
        x, y = inputs
        check_same_shape(self, x, y)
        out_type = node.outputs[0].type
        output_storage[0][0] = FORMATS[out_type.format](x + y, dtype=out_type.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: Sequence[Any]) -> list:
        return [sparse_shape(node.inputs[0], input_shapes[0])]

    def L_op(self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:  # noqa: N802
        gz = _as_sparse_gradient(output_grads[0], outputs[0].type.format)
        return [gz, gz]


add_s_s = AddSS()


class AddSD(Op):
    """Sparse + dense: a dense matrix. The gradient of the sparse input is structured (its pattern only)."""

    __props__ = ()

    def make_node(self, x: Any, y: Any) -> Apply:
        x = as_sparse_variable(x, what=f"{self}: input 0")
        y = _dense_input(y, f"{self}: input 1")
        if y.type.ndim != 2:
            raise TypeError(f"{self}: input 1 must be a dense matrix, received {y} of type {y.type}")
        shape = tuple(b if b is not None else a for a, b in zip(x.type.shape, y.type.shape))
        return Apply(self, [x, y], [TensorType(upcast(x.type.dtype, y.type.dtype), shape)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list) -> None:
        x, y = inputs
        check_same_shape(self, x, y)
        output_storage[0][0] = np.asarray(x + y, dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: Sequence[Any]) -> list:
        return [tuple(input_shapes[1])]

    def L_op(self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:  # noqa: N802
        x, _ = inputs
        (gz,) = output_grads
        return [structured_read(x, gz), gz]


add_s_d = AddSD()


def add(x: Any, y: Any) -> Variable:
    """``x + y`` where at least one is sparse: sparse + sparse is sparse, sparse + dense is dense.

    >>> from symlab.sparse.basic import csc_matrix
    >>> import symlab.tensor as st
    >>> add(csc_matrix("a"), st.dmatrix("b")).type
    TensorType(float64, (?, ?))
    """
    x = as_sparse_variable(x) if is_sparse_value(x) else x
    y = as_sparse_variable(y) if is_sparse_value(y) else y
    if is_sparse_variable(x) and is_sparse_variable(y):
        return add_s_s(x, y)
    if is_sparse_variable(x):
        return add_s_d(x, y)
    if is_sparse_variable(y):
        return add_s_d(y, x)
    raise TypeError(f"sparse.add: at least one input must be sparse, received {describe(x)} and {describe(y)}")


def subtract(x: Any, y: Any) -> Variable:
    """``x - y`` where at least one is sparse (``x + (-y)``)."""
    if is_sparse_variable(y) or is_sparse_value(y):
        return add(x, neg(y))
    from symlab.tensor.math import neg as dense_neg

    return add(x, dense_neg(_dense_input(y, "sparse.subtract: input 1")))


# -- products -------------------------------------------------------------------------------------
class SparseDenseMultiply(Op):
    """Sparse * dense, elementwise: a sparse matrix of ``x``'s pattern (``y`` a matrix of ``x``'s shape, or a scalar)."""

    __props__ = ()

    def make_node(self, x: Any, y: Any) -> Apply:
        x = as_sparse_variable(x, what=f"{self}: input 0")
        y = _dense_input(y, f"{self}: input 1")
        if y.type.ndim not in (0, 2):
            raise TypeError(f"{self}: input 1 must be a dense matrix or a scalar, received {y} of type {y.type}")
        out = SparseTensorType(x.type.format, upcast(x.type.dtype, y.type.dtype), x.type.shape)
        return Apply(self, [x, y], [out()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list) -> None:
        x, y = inputs
        out_type = node.outputs[0].type
        if np.ndim(y) == 0:
            values = x.data * y
        else:
            check_same_shape(self, x, y)
            x = canonical_value(x)
            rows, cols = coordinates(x)
            values = x.data * y[rows, cols]
        output_storage[0][0] = FORMATS[out_type.format](
            (values.astype(out_type.dtype, copy=False), x.indices.copy(), x.indptr.copy()), shape=x.shape
        )

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: Sequence[Any]) -> list:
        return [sparse_shape(node.inputs[0], input_shapes[0])]

    def L_op(self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:  # noqa: N802
        x, y = inputs
        gz = _as_sparse_gradient(output_grads[0], x.type.format)
        gx = mul_s_d(gz, y)
        gy = dense_from_sparse(mul_s_d(x, dense_from_sparse(gz)))
        return [gx, gy.sum() if y.type.ndim == 0 else gy]


mul_s_d = SparseDenseMultiply()


def multiply(x: Any, y: Any) -> Variable:
    """``x * y`` elementwise, ``x`` sparse and ``y`` a dense matrix or a scalar (either order): sparse."""
    x = as_sparse_variable(x) if is_sparse_value(x) else x
    y = as_sparse_variable(y) if is_sparse_value(y) else y
    if is_sparse_variable(x) and not is_sparse_variable(y):
        return mul_s_d(x, y)
    if is_sparse_variable(y) and not is_sparse_variable(x):
        return mul_s_d(y, x)
    raise TypeError(f"sparse.multiply: exactly one input must be sparse, received {describe(x)} and {describe(y)}")


def _check_dot_shapes(op: Any, a: Any, b: Any) -> None:
    if a.shape[1] != b.shape[0]:
        raise ValueError(
            f"{op}: shapes {tuple(a.shape)} and {tuple(b.shape)} are not aligned (dimension 1 of the first, "
            f"{a.shape[1]}, is not dimension 0 of the second, {b.shape[0]})"
        )


class StructuredDot(Op):
    """Sparse matrix @ dense matrix, a dense matrix; the gradient of the sparse input is structured."""

    __props__ = ()

    def make_node(self, a: Any, b: Any) -> Apply:
        a = as_sparse_variable(a, what=f"{self}: input 0")
        b = _dense_input(b, f"{self}: input 1")
        if b.type.ndim != 2:
            raise TypeError(f"{self}: input 1 must be a dense matrix, received {b} of type {b.type}")
        out = TensorType(upcast(a.type.dtype, b.type.dtype), (a.type.shape[0], b.type.shape[1]))
        return Apply(self, [a, b], [out()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list) -> None:
        a, b = inputs
        _check_dot_shapes(self, a, b)
        output_storage[0][0] = np.asarray(a @ b, dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: Sequence[Any]) -> list:
        rows, _ = sparse_shape(node.inputs[0], input_shapes[0])
        return [(rows, input_shapes[1][1])]

    def L_op(self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:  # noqa: N802
        a, b = inputs
        (gz,) = output_grads
        return [structured_dot_grad(a, b, gz), structured_dot(transpose(a), gz)]


_structured_dot = StructuredDot()


class StructuredDotGrad(Op):
    """The gradient of ``structured_dot(a, b)`` for ``a``: ``gz @ b.T`` at the stored positions of ``a`` only."""

    __props__ = ()

    def make_node(self, a: Any, b: Any, gz: Any) -> Apply:
        a = as_sparse_variable(a, what=f"{self}: input 0")
        b = _dense_input(b, f"{self}: input 1")
        gz = _dense_input(gz, f"{self}: input 2")
        out = SparseTensorType(a.type.format, upcast(b.type.dtype, gz.type.dtype), a.type.shape)
        return Apply(self, [a, b, gz], [out()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list) -> None:
        a, b, gz = inputs
        a = canonical_value(a)
        rows, cols = coordinates(a)
        out_type = node.outputs[0].type
        values = np.einsum("kj,kj->k", gz[rows], b[cols]).astype(out_type.dtype, copy=False)
        output_storage[0][0] = FORMATS[out_type.format]((values, a.indices.copy(), a.indptr.copy()), shape=a.shape)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: Sequence[Any]) -> list:
        return [sparse_shape(node.inputs[0], input_shapes[0])]


structured_dot_grad = StructuredDotGrad()


def structured_dot(x: Any, y: Any) -> Variable:
    """``x @ y`` with one sparse and one dense matrix, a dense matrix; the sparse input's gradient is structured.

    >>> from symlab.sparse.basic import csc_matrix
    >>> import symlab.tensor as st
    >>> structured_dot(csc_matrix("a"), st.dmatrix("b")).owner.op
    StructuredDot
    """
    x = as_sparse_variable(x) if is_sparse_value(x) else x
    y = as_sparse_variable(y) if is_sparse_value(y) else y
    if is_sparse_variable(x) and not is_sparse_variable(y):
        return _structured_dot(x, y)
    if is_sparse_variable(y) and not is_sparse_variable(x):
        dense = _dense_input(x, "structured_dot: input 0")
        return _structured_dot(transpose(y), dense.T).T
    raise TypeError(f"structured_dot: exactly one input must be sparse, received {describe(x)} and {describe(y)}")


class Dot(Op):
    """A product of a sparse and a dense matrix (either order), a dense matrix; the gradients are regular."""

    __props__ = ()

    def __str__(self) -> str:
        return "SparseDot"

    def make_node(self, x: Any, y: Any) -> Apply:
        if is_sparse_variable(x) == is_sparse_variable(y):
            raise TypeError(f"{self}: exactly one input must be sparse, received {describe(x)} and {describe(y)}")
        x = x if is_sparse_variable(x) else _dense_input(x, f"{self}: input 0")
        y = y if is_sparse_variable(y) else _dense_input(y, f"{self}: input 1")
        for k, v in enumerate((x, y)):
            if v.type.ndim != 2:
                raise TypeError(f"{self}: input {k} must be a matrix, received {v} of type {v.type}")
        out = TensorType(upcast(x.type.dtype, y.type.dtype), (x.type.shape[0], y.type.shape[1]))
        return Apply(self, [x, y], [out()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list) -> None:
        x, y = inputs
        _check_dot_shapes(self, x, y)
        output_storage[0][0] = np.asarray(x @ y, dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: Sequence[Any]) -> list:
        x, y = node.inputs
        rows = sparse_shape(x, input_shapes[0])[0] if is_sparse_variable(x) else input_shapes[0][0]
        cols = sparse_shape(y, input_shapes[1])[1] if is_sparse_variable(y) else input_shapes[1][1]
        return [(rows, cols)]

    def L_op(self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:  # noqa: N802
        from symlab.tensor.products import dot as dense_dot

        x, y = inputs
        (gz,) = output_grads
        if is_sparse_variable(x):  # gz @ y.T, made sparse; x.T @ gz
            return [SparseFromDense(x.type.format)(dense_dot(gz, y.T)), _dot(transpose(x), gz)]
        return [_dot(gz, transpose(y)), SparseFromDense(y.type.format)(dense_dot(x.T, gz))]


_dot = Dot()


def dot(x: Any, y: Any) -> Variable:
    """``x @ y`` with one sparse and one dense matrix (either order): a dense matrix.

    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> a = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0]]))
    >>> dot(a, np.ones((2, 1))).eval()
    array([[1.],
           [2.]])
    """
    x = as_sparse_variable(x) if is_sparse_value(x) else x
    y = as_sparse_variable(y) if is_sparse_value(y) else y
    return _dot(x, y)


# A sparse variable's operators and the type's conversion of dense matrices call these (symlab.sparse.registry).
register_sparse_ops(SparseOps(
    transpose=transpose,
    dense_from_sparse=dense_from_sparse,
    from_dense=SparseFromDense,
    shape=csm_shape,
    zeros_like=sp_zeros_like,
    ones_like=sp_ones_like,
    add=add,
    multiply=multiply,
    neg=neg,
    dot=dot,
    structured_dot=structured_dot,
))


__all__ = [
    "AddSD",
    "AddSS",
    "Dot",
    "SparseDenseMultiply",
    "StructuredDot",
    "StructuredDotGrad",
    "add",
    "add_s_d",
    "add_s_s",
    "dot",
    "mul_s_d",
    "multiply",
    "neg",
    "structured_add",
    "structured_dot",
    "structured_dot_grad",
    "structured_exp",
    "structured_log",
    "structured_maximum",
    "structured_minimum",
    "structured_pow",
    "structured_sigmoid",
    "subtract",
]
