"""A tensor's shape as a graph value: ``Shape`` reads it, ``Shape_i`` reads one size, ``SpecifyShape`` asserts it.

>>> import numpy as np
>>> import symlab.tensor as st
>>> x = st.dmatrix("x")
>>> x.shape.eval({x: np.zeros((2, 3))})
array([2, 3])
>>> y = st.specify_shape(x, (2, None))
>>> y.type
TensorType(float64, (2, ?))

Changing a shape (``reshape``, ``flatten``) is :mod:`symlab.tensor.shape`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Constant, Variable
from symlab.graph.null_type import disconnected
from symlab.graph.op import Op
from symlab.graph.type import Type
from symlab.tensor.conversion import as_tensor_variable, constant, normalize_axis
from symlab.tensor.type import TensorType, register_tensor_type_parts


class NoneTypeT(Type):
    """The type of the constant ``None`` (an unspecified size in ``SpecifyShape``)."""

    __props__ = ()

    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        if data is not None:
            raise TypeError(f"NoneTypeT accepts only None, received {data!r}")
        return None

    def __repr__(self) -> str:
        return "NoneTypeT"


class NoneConstantVariable(Constant):
    def __str__(self) -> str:
        return "NoneConst"


none_type = NoneTypeT()
NoneConst = NoneConstantVariable(none_type, None)


class Shape(Op):
    """The shape of a tensor, as a vector of int64."""

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        return Apply(self, [x], [TensorType("int64", (x.ndim,))()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(inputs[0].shape, dtype="int64")

    def infer_shape(self, fgraph, node, input_shapes):
        return [(constant(node.inputs[0].ndim, dtype="int64"),)]

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        return [disconnected()]


_shape = Shape()


def shape(x: Any) -> Variable:
    """The symbolic shape of ``x`` (an int64 vector)."""
    return _shape(x)


class SpecifyShape(Op):
    """Return ``x`` unchanged after checking (at run time) that its shape is ``shape``.

    Its output type carries the specified static sizes, which is how a
    wider type is narrowed (``TensorType.filter_variable``).
    """

    __props__ = ()
    view_map = {0: [0]}

    def make_node(self, x: Any, *shape: Any) -> Apply:
        x = as_tensor_variable(x)
        if len(shape) != x.ndim:
            raise ValueError(
                f"SpecifyShape: {x} has {x.ndim} dimensions ({x.type}), but {len(shape)} sizes were given"
            )
        sizes = [_size_variable(s) for s in shape]
        static = []
        for d, (s, known) in enumerate(zip(sizes, x.type.shape)):
            value = int(s.data) if isinstance(s, Constant) and s.data is not None else None
            if value is not None and known is not None and value != known:
                raise ValueError(
                    f"SpecifyShape: {x} has static size {known} in dimension {d} ({x.type}), "
                    f"which cannot be {value}"
                )
            static.append(value if value is not None else known)
        return Apply(self, [x, *sizes], [TensorType(x.dtype, tuple(static))()])

    def perform(self, node, inputs, output_storage):
        x, *shape = inputs
        if x.ndim != len(shape) or any(s is not None and int(s) != n for s, n in zip(shape, x.shape)):
            expected = tuple("?" if s is None else int(s) for s in shape)
            raise ValueError(f"SpecifyShape: the value has shape {x.shape}, expected {expected}")
        output_storage[0][0] = x

    def infer_shape(self, fgraph, node, input_shapes):
        x_shape = input_shapes[0]
        sizes = node.inputs[1:]
        return [tuple(x_shape[d] if isinstance(s.type, NoneTypeT) else s for d, s in enumerate(sizes))]

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        return [output_grads[0]] + [disconnected() for _ in inputs[1:]]

    def R_op(self, inputs, eval_points):  # noqa: N802
        if eval_points[0] is None:
            return [None]
        return [self(eval_points[0], *inputs[1:])]


_specify_shape = SpecifyShape()


def _size_variable(s: Any) -> Variable:
    if s is None:
        return NoneConst
    if isinstance(s, Variable):
        if isinstance(s.type, NoneTypeT):
            return s
        if not (isinstance(s.type, TensorType) and s.ndim == 0 and s.dtype.startswith(("int", "uint"))):
            raise TypeError(f"SpecifyShape: sizes must be integer scalars or None, received {s} ({s.type})")
        return s
    if isinstance(s, int | np.integer) and not isinstance(s, bool) and s >= 0:
        return constant(int(s), dtype="int64")
    raise TypeError(f"SpecifyShape: sizes must be non-negative ints or None, received {s!r}")


def specify_shape(x: Any, shape: Sequence[Any] | Any) -> Variable:
    """``x``, checked to have ``shape`` (entries may be ``None``); narrows its type.

    Returns ``x`` itself when nothing new would be specified.
    """
    x = as_tensor_variable(x)
    if isinstance(shape, int | np.integer | Variable) and not isinstance(shape, TensorType):
        shape = (shape,)
    shape = tuple(shape)
    if len(shape) == x.ndim and all(
        s is None or (isinstance(s, int | np.integer) and x.type.shape[d] == s) for d, s in enumerate(shape)
    ):
        return x
    return _specify_shape(x, *shape)


# ---------------------------------------------------------------------------------------
# One entry of a shape.


class Shape_i(Op):  # noqa: N801 - PyTensor's name
    """Size ``i`` of a tensor, as an int64 scalar (``x.shape[i]`` without indexing)."""

    __props__ = ("i",)

    def __init__(self, i: int) -> None:
        self.i = int(i)

    def __str__(self) -> str:
        return f"Shape_i{{{self.i}}}"

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        if not 0 <= self.i < x.ndim:
            raise ValueError(f"{self}: {x} ({x.type}) has no dimension {self.i}")
        return Apply(self, [x], [TensorType("int64", ())()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(inputs[0].shape[self.i], dtype="int64")

    def infer_shape(self, fgraph, node, input_shapes):
        return [()]

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        return [disconnected()]


def shape_i(x: Any, i: int) -> Variable:
    """Size ``i`` of ``x`` as an int64 scalar: a constant when the size is static.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x = st.tensor("float64", shape=(3, None), name="x")
    >>> st.shape_i(x, 0)
    TensorConstant{3}
    >>> int(st.shape_i(x, -1).eval({x: np.zeros((3, 5))}))
    5
    """
    x = as_tensor_variable(x)
    i = normalize_axis(i, x.ndim, "shape_i")
    if x.type.shape[i] is not None:
        return constant(x.type.shape[i], dtype="int64")
    return Shape_i(i)(x)


# TensorType.convert_variable narrows a variable to a static shape with specify_shape.
register_tensor_type_parts(specify_shape=specify_shape)

__all__ = ["Shape", "Shape_i", "SpecifyShape", "shape", "shape_i", "specify_shape"]
