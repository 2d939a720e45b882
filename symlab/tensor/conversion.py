"""Turning values into tensors: ``constant`` and ``as_tensor_variable``, which every op's ``make_node`` calls.

>>> from symlab.tensor.conversion import as_tensor_variable
>>> c = as_tensor_variable(2.0)
>>> c, c.type
(TensorConstant{2.0}, TensorType(float64, ()))
>>> as_tensor_variable([[1, 2], [3, 4]]).type
TensorType(int64, (2, 2))

A list that holds variables becomes a ``stack`` of them. ``stack`` is an op of
:mod:`symlab.tensor.joining`, above this module (its inputs go through
``as_tensor_variable`` too): it registers itself here with :func:`register_list_stacker`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Constant, Variable
from symlab.scalar.type import check_dtype
from symlab.tensor.type import TensorType, register_tensor_type_parts

#: Python's own number types (not NumPy scalars, which subclass some of them).
PYTHON_SCALARS = (bool, int, float, complex)


#: What a value must be to become a tensor, said by the errors of :func:`constant` and :func:`as_tensor_variable`.
_TENSOR_LIKE = "a tensor Variable or a numeric value (a number, an array or nested lists of numbers)"

#: How a list holding variables becomes one tensor: :func:`symlab.tensor.joining.stack`, registered there.
_stack_list: Callable[[list[Variable]], Variable] | None = None


def register_list_stacker(stack: Callable[[list[Variable]], Variable]) -> None:
    """Make ``as_tensor_variable([x, 1.0, y])`` return ``stack([x, 1.0, y])`` (joining.py calls this)."""
    global _stack_list
    _stack_list = stack


def constant(value: Any, name: str | None = None, ndim: int | None = None, dtype: Any = None,
             what: str = "constant") -> Constant:
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
    return TensorType(data.dtype.name, data.shape).make_constant(data, name=name, weak=weak)


def as_tensor_variable(x: Any, name: str | None = None, ndim: int | None = None, dtype: Any = None,
                       what: str = "as_tensor_variable") -> Variable:
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
        if _stack_list is None:
            raise RuntimeError("as_tensor_variable: no stack is registered for lists of variables; "
                               "import symlab.tensor (it registers symlab.tensor.joining.stack)")
        return _stack_list([as_tensor_variable(e, what=f"{what}[{k}]") for k, e in enumerate(x)])
    return constant(x, name=name, ndim=ndim, dtype=dtype, what=what)


def as_tensor_input(x: Any, op: Any, position: Any) -> Variable:
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


def is_tensor_constant(x: Any) -> bool:
    """True for a constant of a ``TensorType`` (a ``TensorConstant``)."""
    return isinstance(x, Constant) and isinstance(x.type, TensorType)


def is_weak(x: Any) -> bool:
    """True for Python numbers and the weak constants made from them."""
    return type(x) in PYTHON_SCALARS or (is_tensor_constant(x) and x.weak)


def normalize_axis(axis: Any, ndim: int, opname: str) -> int:
    """``axis`` as a non-negative int below ``ndim``; ``ValueError`` naming ``opname``."""
    if not isinstance(axis, int | np.integer) or isinstance(axis, bool):
        raise TypeError(f"{opname}: axis must be an int, received {axis!r}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"{opname}: axis {axis} is out of range for a tensor of {ndim} dimensions")
    return int(axis) % ndim


def is_int_dtype(dtype: str) -> bool:
    """True for the signed and unsigned integer dtypes (not ``bool``)."""
    return dtype.startswith(("int", "uint"))


def as_size(s: Any) -> Variable:
    """A size (an int or an int64 scalar) as an int64 scalar."""
    return s if isinstance(s, Variable) else constant(int(s), dtype="int64")


register_tensor_type_parts(as_tensor_variable=as_tensor_variable)
