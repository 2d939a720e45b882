"""Reductions over axes: ``sum prod max min all any``.

Each is one ``Reduce`` op with a NumPy reduction; ``keepdims`` is a
``DimShuffle`` after it, so the op itself stays simple.

>>> import numpy as np
>>> import symlab.tensor as st
>>> x = st.dmatrix("x")
>>> s = x.sum()
>>> s.owner.op
Sum{acc_dtype=float64}
>>> x.sum(axis=0, keepdims=True).type
TensorType(float64, (1, ?))
>>> x.max(axis=1).eval({x: np.array([[1.0, 5.0], [7.0, 2.0]])})
array([5., 7.])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Variable
from symlab.graph.op import Op
from symlab.tensor.basic import as_tensor_variable, normalize_axes
from symlab.tensor.elemwise import DimShuffle
from symlab.tensor.type import TensorType


class Reduce(Op):
    """Reduce the ``axis`` dimensions of a tensor (``None``: all of them)."""

    __props__ = ("axis", "dtype")
    #: The NumPy reduction (``np.sum``...); subclasses set it.
    numpy_fn: Callable[..., Any]

    def __init__(self, axis: tuple[int, ...] | None = None, dtype: str | None = None) -> None:
        self.axis = None if axis is None else tuple(sorted(int(a) for a in axis))
        self.dtype = dtype

    @property
    def acc_dtype(self) -> str | None:
        return self.dtype

    def __str__(self) -> str:
        parts = []
        if self.axis is not None:
            parts.append(f"axis={list(self.axis)}")
        if self.dtype is not None and self.show_dtype:
            parts.append(f"acc_dtype={self.dtype}")
        name = type(self).__name__
        return f"{name}{{{','.join(parts)}}}" if parts else name

    show_dtype = True

    def output_dtype(self, input_dtype: str) -> str:
        return np.asarray(type(self).numpy_fn(np.ones(1, dtype=input_dtype))).dtype.name

    def reduced_axes(self, ndim: int) -> tuple[int, ...]:
        return tuple(range(ndim)) if self.axis is None else self.axis

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        axes = self.reduced_axes(x.ndim)
        if axes and axes[-1] >= x.ndim:
            raise ValueError(f"{self}: axis {list(axes)} is out of range for {x} ({x.type})")
        try:
            dtype = self.output_dtype(x.dtype)
        except TypeError as err:
            raise TypeError(f"{self}: does not accept {x} of dtype {x.dtype}: {err}") from None
        if self.dtype is not None and self.dtype != dtype:
            raise TypeError(f"{self} expects an input whose reduction has dtype {self.dtype}, received {x.type}")
        shape = tuple(s for d, s in enumerate(x.type.shape) if d not in axes)
        return Apply(self, [x], [TensorType(dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        axes = self.reduced_axes(x.ndim)
        out_dtype = node.outputs[0].type.dtype
        output_storage[0][0] = np.asarray(type(self).numpy_fn(x, axis=axes), dtype=out_dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        axes = self.reduced_axes(node.inputs[0].ndim)
        return [tuple(s for d, s in enumerate(input_shapes[0]) if d not in axes)]

    def _expand(self, v: Variable, ndim: int) -> Variable:
        """Re-insert the reduced axes of ``v`` as broadcastable dimensions."""
        axes = self.reduced_axes(ndim)
        pattern, k = [], 0
        for d in range(ndim):
            if d in axes:
                pattern.append("x")
            else:
                pattern.append(k)
                k += 1
        return DimShuffle(v.ndim, pattern)(v) if axes else v


class Sum(Reduce):
    numpy_fn = staticmethod(np.sum)

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        from symlab.tensor.math import second

        (x,) = inputs
        return [second(x, self._expand(output_grads[0], x.ndim))]

    def R_op(self, inputs, eval_points):  # noqa: N802
        return [None if eval_points[0] is None else self(eval_points[0])]


class Prod(Reduce):
    numpy_fn = staticmethod(np.prod)

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        (x,) = inputs
        # d prod / d x_i = prod / x_i (inputs with zeros need the product of the others).
        return [self._expand(output_grads[0] * outputs[0], x.ndim) / x]


class _Extremum(Reduce):
    show_dtype = False

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        from symlab.tensor.math import eq

        (x,) = inputs
        winners = eq(x, self._expand(outputs[0], x.ndim))
        return [winners * self._expand(output_grads[0], x.ndim)]


class Max(_Extremum):
    numpy_fn = staticmethod(np.max)


class Min(_Extremum):
    numpy_fn = staticmethod(np.min)


class _Logical(Reduce):
    show_dtype = False

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        from symlab.graph.null_type import grad_undefined

        return [grad_undefined(self, 0, inputs[0], "a logical reduction is not differentiable")]


class All(_Logical):
    numpy_fn = staticmethod(np.all)


class Any(_Logical):
    numpy_fn = staticmethod(np.any)


def _reduce(cls: type[Reduce], x: Any, axis: Any, keepdims: bool, dtype: Any = None) -> Variable:
    x = as_tensor_variable(x)
    if dtype is not None:
        from symlab.tensor.basic import cast

        x = cast(x, dtype)
    axes = normalize_axes(axis, x.ndim, cls.__name__.lower())
    op_axis = None if len(axes) == x.ndim else axes
    probe = cls(op_axis)
    out = cls(op_axis, probe.output_dtype(x.dtype))(x)
    if keepdims:
        out = probe._expand(out, x.ndim)
    return out


def sum(x: Any, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> Variable:  # noqa: A001
    """Sum over ``axis`` (all axes by default)."""
    return _reduce(Sum, x, axis, keepdims, dtype)


def prod(x: Any, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> Variable:
    """Product over ``axis``."""
    return _reduce(Prod, x, axis, keepdims, dtype)


def max(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:  # noqa: A001
    """Maximum over ``axis``."""
    return _reduce(Max, x, axis, keepdims)


def min(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:  # noqa: A001
    """Minimum over ``axis``."""
    return _reduce(Min, x, axis, keepdims)


def all(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:  # noqa: A001
    """True where every element over ``axis`` is true."""
    return _reduce(All, x, axis, keepdims)


def any(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:  # noqa: A001
    """True where some element over ``axis`` is true."""
    return _reduce(Any, x, axis, keepdims)



__all__ = ["All", "Any", "Max", "Min", "Prod", "Reduce", "Sum", "all", "any", "max", "min", "prod", "sum"]
