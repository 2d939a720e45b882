"""The basic tensor functions (PyTensor's ``tensor.basic``): casting, rearranging axes, and reading a
value that is known before the graph runs.

``cast``, ``dimshuffle``, ``transpose``, ``expand_dims`` and ``squeeze`` build an ``Elemwise`` of a
``Cast`` or a ``DimShuffle``; :func:`get_scalar_constant_value` sees through them (and through static
sizes) to a constant. The conversions every op uses, ``as_tensor_variable`` and ``constant``, live
below the ops in :mod:`symlab.tensor.conversion` and are importable from here too, as in PyTensor.

>>> import symlab.tensor as st
>>> x = st.dmatrix("x")
>>> st.transpose(x).owner.op
DimShuffle{1,0}
>>> st.cast(x, "float32").type
TensorType(float32, (?, ?))
>>> get_scalar_constant_value(st.cast(st.as_tensor_variable(2), "float64"))
np.float64(2.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from symlab.config import config
from symlab.graph.basic import Variable
from symlab.scalar.basic import Cast
from symlab.scalar.type import check_dtype
from symlab.tensor.conversion import (
    PYTHON_SCALARS,
    as_tensor_input,
    as_tensor_variable,
    constant,
    is_tensor_constant,
    is_weak,
    normalize_axis,
)
from symlab.tensor.elemwise import DimShuffle, Elemwise
from symlab.tensor.shape_of import Shape_i

__all__ = [
    "PYTHON_SCALARS",
    "as_tensor_input",
    "as_tensor_variable",
    "cast",
    "constant",
    "dimshuffle",
    "expand_dims",
    "get_scalar_constant_value",
    "is_weak",
    "normalize_axes",
    "normalize_axis",
    "squeeze",
    "transpose",
]


def get_scalar_constant_value(v: Any) -> Any:
    """The value of ``v`` if it is known before running the graph, else ``ValueError``.

    Known values are constants whose elements are all equal, seen through
    ``DimShuffle``, casts, and sizes that a type gives statically (``Shape_i``).
    """
    if isinstance(v, (*PYTHON_SCALARS, np.number)):
        return v
    if is_tensor_constant(v):
        data = v.data
        if data.size > 0 and np.all(data == data.flat[0]):
            return data.flat[0]
    owner = getattr(v, "owner", None)
    if owner is not None:
        op = owner.op
        if isinstance(op, DimShuffle):
            return get_scalar_constant_value(owner.inputs[0])
        if isinstance(op, Elemwise) and isinstance(op.scalar_op, Cast):
            value = get_scalar_constant_value(owner.inputs[0])
            return np.asarray(value).astype(owner.outputs[0].dtype)[()]
        if isinstance(op, Shape_i) and owner.inputs[0].type.shape[op.i] is not None:
            return np.int64(owner.inputs[0].type.shape[op.i])
    raise ValueError(f"{v} is not a constant scalar")


def static_number(s: Variable) -> Any:
    """The value of a scalar when it is known before running the graph, else None."""
    try:
        return get_scalar_constant_value(s)
    except ValueError:
        return None


def static_int(s: Variable) -> int | None:
    """The value of an integer scalar when it is known before running the graph, else None."""
    value = static_number(s)
    return None if value is None else int(value)


def cast(x: Any, dtype: Any) -> Variable:
    """``x`` converted to ``dtype`` (returns ``x`` itself when it already has it)."""
    x = as_tensor_variable(x)
    dtype = check_dtype(config.floatX if dtype == "floatX" else dtype)
    if x.dtype == dtype:
        return x
    return Elemwise(Cast(dtype))(x)


def dimshuffle(x: Any, pattern: Sequence[int | str]) -> Variable:
    """Reorder, drop (size-1) or add (``'x'``) dimensions of ``x``."""
    x = as_tensor_variable(x)
    return DimShuffle(x.ndim, tuple(pattern))(x)


def transpose(x: Any, axes: Sequence[int] | None = None) -> Variable:
    """``x`` with its axes permuted (reversed by default), as ``np.transpose``."""
    x = as_tensor_variable(x)
    if axes is None:
        axes = tuple(range(x.ndim - 1, -1, -1))
    axes = tuple(normalize_axis(a, x.ndim, "transpose") for a in axes)
    if sorted(axes) != list(range(x.ndim)):
        raise ValueError(f"transpose: axes {axes} are not a permutation of the {x.ndim} axes of {x}")
    if axes == tuple(range(x.ndim)):
        return x
    return dimshuffle(x, axes)


def normalize_axes(axis: Any, ndim: int, opname: str) -> tuple[int, ...]:
    """``None`` (all axes), an int, a constant int scalar or a sequence of ints as sorted, distinct axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, Variable):
        axis = int(get_scalar_constant_value(axis))
    if isinstance(axis, int | np.integer):
        axis = (axis,)
    axes = tuple(normalize_axis(a, ndim, opname) for a in axis)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{opname}: repeated axis in {tuple(axis)}")
    return tuple(sorted(axes))


def expand_dims(x: Any, axis: int | Sequence[int]) -> Variable:
    """``x`` with new dimensions of size 1 at ``axis`` (positions in the result).

    >>> import symlab.tensor as st
    >>> st.expand_dims(st.dmatrix("x"), (0, -1)).type
    TensorType(float64, (1, ?, ?, 1))
    """
    x = as_tensor_variable(x)
    axes = (axis,) if isinstance(axis, int | np.integer) else tuple(axis)
    new = normalize_axes(axes, x.ndim + len(axes), "expand_dims")
    if len(new) != len(axes):
        raise ValueError(f"expand_dims: repeated axis in {axes}")
    rest = iter(range(x.ndim))
    pattern = ["x" if d in new else next(rest) for d in range(x.ndim + len(axes))]
    return DimShuffle(x.ndim, pattern)(x)


def squeeze(x: Any, axis: int | Sequence[int] | None = None) -> Variable:
    """``x`` without dimensions of static size 1 (all of them, or those in ``axis``).

    >>> import symlab.tensor as st
    >>> st.squeeze(st.tensor("float64", shape=(1, None, 1))).type
    TensorType(float64, (?,))
    """
    x = as_tensor_variable(x)
    if axis is None:
        axes = tuple(d for d, s in enumerate(x.type.shape) if s == 1)
    else:
        axes = normalize_axes(axis, x.ndim, "squeeze")
        for d in axes:
            if x.type.shape[d] != 1:
                size = "unknown" if x.type.shape[d] is None else x.type.shape[d]
                raise ValueError(
                    f"squeeze: cannot remove dimension {d} of {x} ({x.type}): its static size is {size}, not 1; "
                    "use specify_shape to declare it"
                )
    if not axes:
        return x
    return DimShuffle(x.ndim, [d for d in range(x.ndim) if d not in axes])(x)
