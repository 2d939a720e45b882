"""Turning values into tensors, and the basic structural ops.

>>> import symlab.tensor as st
>>> c = st.as_tensor_variable(2.0)
>>> c, c.type
(TensorConstant{2.0}, TensorType(float64, ()))
>>> st.as_tensor_variable([[1, 2], [3, 4]]).type
TensorType(int64, (2, 2))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Variable
from symlab.scalar.type import check_dtype
from symlab.tensor.type import TensorType
from symlab.tensor.variable import TensorConstant, TensorVariable

#: Python's own number types (not NumPy scalars, which subclass some of them).
PYTHON_SCALARS = (bool, int, float, complex)


#: What a value must be to become a tensor, said by the errors of :func:`constant` and :func:`as_tensor_variable`.
_TENSOR_LIKE = "a tensor Variable or a numeric value (a number, an array or nested lists of numbers)"


def constant(value: Any, name: str | None = None, ndim: int | None = None, dtype: Any = None,
             what: str = "constant") -> TensorConstant:
    """A ``TensorConstant`` holding ``value`` (a Python number becomes a *weak* constant).

    ``what`` names the value in errors (``"dot: input b"``): which input of what received it.
    """
    weak = type(value) in PYTHON_SCALARS and dtype is None
    try:
        data = np.asarray(value, dtype=None if dtype is None else check_dtype(dtype))
    except (TypeError, ValueError, OverflowError) as err:
        raise TypeError(f"{what}: expected {_TENSOR_LIKE}, received {type(value).__name__} {value!r:.60} "
                        f"(it cannot make a tensor: {err})") from None
    if data.dtype == object or data.dtype.kind in "USV":
        raise TypeError(f"{what}: expected {_TENSOR_LIKE}, received {type(value).__name__} {value!r:.60}")
    if ndim is not None and data.ndim != ndim:
        if data.ndim > ndim and all(s == 1 for s in data.shape[: data.ndim - ndim]):
            data = data.reshape(data.shape[data.ndim - ndim :])
        elif data.ndim < ndim:
            data = data.reshape((1,) * (ndim - data.ndim) + data.shape)
        else:
            raise ValueError(f"constant: value of shape {data.shape} cannot have {ndim} dimensions")
    return TensorConstant(TensorType(data.dtype.name, data.shape), data, name=name, weak=weak)


def as_tensor_variable(x: Any, name: str | None = None, ndim: int | None = None, dtype: Any = None,
                       what: str = "as_tensor_variable") -> TensorVariable:
    """``x`` as a tensor Variable: variables pass through, values become constants.

    A list that contains variables is stacked. ``ndim`` checks (or, for
    constants, pads) the rank; ``dtype`` applies to new constants only.
    ``what`` names ``x`` in errors: the operation and which of its inputs
    (``"dot: input b"``), so that a wrong argument is named where it was given.
    """
    if isinstance(x, Apply):
        x = x.default_output()
    if isinstance(x, Variable):
        if not isinstance(x.type, TensorType):
            raise TypeError(f"{what}: expected a TensorType variable, received {x} of type {x.type}")
        if ndim is not None and x.ndim != ndim:
            raise ValueError(
                f"{what}: {x} has {x.ndim} dimensions ({x.type}), expected {ndim}"
            )
        return x
    if isinstance(x, list | tuple) and any(isinstance(e, Variable) for e in _flatten(x)):
        from symlab.tensor.joining import stack

        return stack([as_tensor_variable(e, what=f"{what}[{k}]") for k, e in enumerate(x)])
    return constant(x, name=name, ndim=ndim, dtype=dtype, what=what)


def as_tensor_input(x: Any, op: Any, position: Any) -> TensorVariable:
    """:func:`as_tensor_variable` for input ``position`` of ``op`` (an Op, or a function's name).

    Its errors say which input of which operation received what: ``dot: input b: expected a tensor
    Variable or a numeric value (...), received str 'abc'``. The message is only built when it is needed.
    """
    try:
        return as_tensor_variable(x)
    except (TypeError, ValueError):
        return as_tensor_variable(x, what=f"{op}: input {position}")  # fails again, saying where


def _flatten(seq: Sequence[Any]):
    for e in seq:
        if isinstance(e, list | tuple):
            yield from _flatten(e)
        else:
            yield e


def is_weak(x: Any) -> bool:
    """True for Python numbers and the weak constants made from them."""
    return type(x) in PYTHON_SCALARS or (isinstance(x, TensorConstant) and x.weak)


def get_scalar_constant_value(v: Any) -> Any:
    """The value of ``v`` if it is known before running the graph, else ``ValueError``.

    Known values are constants whose elements are all equal, seen through
    ``DimShuffle``, casts, and sizes that a type gives statically (``Shape_i``).
    """
    if isinstance(v, (*PYTHON_SCALARS, np.number)):
        return v
    if isinstance(v, TensorConstant):
        data = v.data
        if data.size > 0 and np.all(data == data.flat[0]):
            return data.flat[0]
    owner = getattr(v, "owner", None)
    if owner is not None:
        from symlab.scalar.basic import Cast
        from symlab.tensor.elemwise import DimShuffle, Elemwise
        from symlab.tensor.shape import Shape_i

        op = owner.op
        if isinstance(op, DimShuffle):
            return get_scalar_constant_value(owner.inputs[0])
        if isinstance(op, Elemwise) and isinstance(op.scalar_op, Cast):
            value = get_scalar_constant_value(owner.inputs[0])
            return np.asarray(value).astype(owner.outputs[0].dtype)[()]
        if isinstance(op, Shape_i) and owner.inputs[0].type.shape[op.i] is not None:
            return np.int64(owner.inputs[0].type.shape[op.i])
    raise ValueError(f"{v} is not a constant scalar")


def cast(x: Any, dtype: Any) -> TensorVariable:
    """``x`` converted to ``dtype`` (returns ``x`` itself when it already has it)."""
    from symlab.scalar.basic import Cast
    from symlab.tensor.elemwise import Elemwise

    x = as_tensor_variable(x)
    dtype = check_dtype("float64" if dtype == "floatX" else dtype)
    if x.dtype == dtype:
        return x
    return Elemwise(Cast(dtype))(x)


def dimshuffle(x: Any, pattern: Sequence[int | str]) -> TensorVariable:
    """Reorder, drop (size-1) or add (``'x'``) dimensions of ``x``."""
    from symlab.tensor.elemwise import DimShuffle

    x = as_tensor_variable(x)
    return DimShuffle(x.ndim, tuple(pattern))(x)


def transpose(x: Any, axes: Sequence[int] | None = None) -> TensorVariable:
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


def normalize_axis(axis: Any, ndim: int, opname: str) -> int:
    """``axis`` as a non-negative int below ``ndim``; ``ValueError`` naming ``opname``."""
    if not isinstance(axis, int | np.integer) or isinstance(axis, bool):
        raise TypeError(f"{opname}: axis must be an int, received {axis!r}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"{opname}: axis {axis} is out of range for a tensor of {ndim} dimensions")
    return int(axis) % ndim


def normalize_axes(axis: Any, ndim: int, opname: str) -> tuple[int, ...]:
    """``None`` (all axes), an int or a sequence of ints as sorted, distinct axes."""
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
