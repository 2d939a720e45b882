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
from typing import Any as AnyValue  # the op class `Any` below takes the plain name

import numpy as np

from symlab.graph.basic import Apply, Variable
from symlab.graph.null_type import disconnected, grad_undefined
from symlab.graph.op import Op
from symlab.tensor.basic import cast, get_scalar_constant_value, normalize_axes
from symlab.tensor.conversion import as_tensor_input, as_tensor_variable, constant, normalize_axis
from symlab.tensor.elemwise import DimShuffle
from symlab.tensor.math import abs as tabs
from symlab.tensor.math import eq, maximum, second, sqrt, switch
from symlab.tensor.type import TensorType


class Reduce(Op):
    """Reduce the ``axis`` dimensions of a tensor (``None``: all of them)."""

    __props__ = ("axis", "dtype")
    #: The NumPy reduction (``np.sum``...); subclasses set it.
    numpy_fn: Callable[..., AnyValue]

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

    def make_node(self, x: AnyValue) -> Apply:
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

    def keepdims_pattern(self, ndim: int) -> tuple[int | str, ...]:
        """The DimShuffle pattern that puts the reduced axes back as size-1 dimensions (``keepdims``)."""
        axes = self.reduced_axes(ndim)
        kept = iter(range(ndim - len(axes)))
        return tuple("x" if d in axes else next(kept) for d in range(ndim))

    def _expand(self, v: Variable, ndim: int) -> Variable:
        """Re-insert the reduced axes of ``v`` as broadcastable dimensions."""
        if not self.reduced_axes(ndim):
            return v
        return DimShuffle(v.ndim, self.keepdims_pattern(ndim))(v)


class Sum(Reduce):
    numpy_fn = staticmethod(np.sum)

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        (x,) = inputs
        return [second(x, self._expand(output_grads[0], x.ndim))]

    def R_op(self, inputs, eval_points):  # noqa: N802
        return [None if eval_points[0] is None else self(eval_points[0])]


class Prod(Reduce):
    """The product over ``axis``.

    Its gradient is the product of the other elements, also where some are zero: ``prod / x_i`` in a
    slice without zeros; in a slice with one zero, the product of the non-zero elements at the zero
    and 0 elsewhere; in a slice with two zeros or more, 0 everywhere (as PyTensor's ``Prod``). No
    division by zero is computed:

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x = st.dmatrix("x")
    >>> g = st.grad(st.prod(x, axis=1).sum(), x)
    >>> g.eval({x: np.array([[2.0, 3.0, 4.0], [2.0, 0.0, 4.0], [0.0, 3.0, 0.0]])})
    array([[12.,  8.,  6.],
           [ 0.,  8.,  0.],
           [ 0.,  0.,  0.]])
    """

    numpy_fn = staticmethod(np.prod)

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        (x,) = inputs
        axes = self.reduced_axes(x.ndim)
        zero = constant(0, dtype=x.dtype)
        one = constant(1, dtype=x.dtype)
        is_zero = eq(x, zero)
        zeros = self._expand(sum(is_zero, axes), x.ndim)  # zeros in each element's slice
        nonzero = switch(is_zero, one, x)
        others = self._expand(prod(nonzero, axes), x.ndim)  # the product of the slice's non-zero elements
        at_zero = switch(eq(zeros, 1), others, constant(0, dtype=others.dtype))
        elsewhere = switch(eq(zeros, 0), others / nonzero, constant(0, dtype=others.dtype))
        return [self._expand(output_grads[0], x.ndim) * switch(is_zero, at_zero, elsewhere)]


class _Extremum(Reduce):
    """``Max`` and ``Min``: the NumPy reduction, from ``initial`` if given (then an empty reduction is
    ``initial`` instead of an error, as ``np.max(x, initial=-np.inf)``).

    The gradient is shared evenly by the elements equal to the extremum: each of ``k`` tied elements
    gets ``1/k`` of it. Where the extremum is unique (almost everywhere) this is the derivative; at a
    tie it is a subgradient (the shares add up to the whole), and an element counted twice, as in
    ``max(x[[2, 2, 1]])``, gets the whole gradient once, which is what finite differences say
    (the convention of JAX's and TensorFlow's ``reduce_max``). Where no element equals the result
    (``initial`` is larger, or the result is NaN) no element gets any.
    """

    __props__ = ("axis", "dtype", "initial")
    show_dtype = False

    def __init__(
        self, axis: tuple[int, ...] | None = None, dtype: str | None = None, initial: float | int | None = None
    ) -> None:
        super().__init__(axis, dtype)
        self.initial = initial

    def __str__(self) -> str:
        text = super().__str__()
        if self.initial is None:
            return text
        field = f"initial={self.initial}"
        return f"{text[:-1]},{field}}}" if text.endswith("}") else f"{text}{{{field}}}"

    def make_node(self, x: AnyValue) -> Apply:
        node = super().make_node(x)
        if self.initial is not None:
            dtype = node.outputs[0].type.dtype
            kept = np.asarray(self.initial).astype(dtype)
            if not (kept == self.initial or (np.isnan(self.initial) and np.isnan(kept))):
                raise TypeError(
                    f"{self}: initial must be a value of the dtype of {node.inputs[0]} ({dtype}), "
                    f"received {self.initial!r}"
                )
        return node

    def perform(self, node, inputs, output_storage):
        if self.initial is None:
            return super().perform(node, inputs, output_storage)
        (x,) = inputs
        axes = self.reduced_axes(x.ndim)
        out_dtype = node.outputs[0].type.dtype
        output_storage[0][0] = np.asarray(type(self).numpy_fn(x, axis=axes, initial=self.initial), dtype=out_dtype)

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        (x,) = inputs
        (g,) = output_grads
        winners = eq(x, self._expand(outputs[0], x.ndim))
        ties = maximum(sum(winners, self.reduced_axes(x.ndim)), 1)  # 1 where none: no division by zero
        share = g / cast(ties, g.dtype)
        return [winners * self._expand(share, x.ndim)]


class Max(_Extremum):
    numpy_fn = staticmethod(np.max)


class Min(_Extremum):
    numpy_fn = staticmethod(np.min)


class _Logical(Reduce):
    show_dtype = False

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        return [grad_undefined(self, 0, inputs[0], "a logical reduction is not differentiable")]


class All(_Logical):
    numpy_fn = staticmethod(np.all)


class Any(_Logical):
    numpy_fn = staticmethod(np.any)


def _reduce(cls: type[Reduce], x: AnyValue, axis: AnyValue, keepdims: bool, dtype: AnyValue = None) -> Variable:
    x = as_tensor_input(x, cls.__name__.lower(), "x")
    if dtype is not None:
        x = cast(x, dtype)
    axes = normalize_axes(axis, x.ndim, cls.__name__.lower())
    op_axis = None if len(axes) == x.ndim else axes
    probe = cls(op_axis)
    out = cls(op_axis, probe.output_dtype(x.dtype))(x)
    if keepdims:
        out = probe._expand(out, x.ndim)
    return out


def sum(x: AnyValue, axis: AnyValue = None, keepdims: bool = False, dtype: AnyValue = None) -> Variable:  # noqa: A001
    """Sum over ``axis`` (all axes by default)."""
    return _reduce(Sum, x, axis, keepdims, dtype)


def prod(x: AnyValue, axis: AnyValue = None, keepdims: bool = False, dtype: AnyValue = None) -> Variable:
    """Product over ``axis``."""
    return _reduce(Prod, x, axis, keepdims, dtype)


def _extremum(
    cls: type[_Extremum], x: AnyValue, axis: AnyValue, keepdims: bool, initial: float | int | None
) -> Variable:
    if initial is None:
        return _reduce(cls, x, axis, keepdims)
    name = cls.__name__.lower()
    x = as_tensor_input(x, name, "x")
    if isinstance(initial, bool) or not isinstance(initial, int | float | np.integer | np.floating):
        raise TypeError(f"{name}: initial must be a Python or NumPy number, received {initial!r}")
    axes = normalize_axes(axis, x.ndim, name)
    op_axis = None if len(axes) == x.ndim else axes
    probe = cls(op_axis)
    out = cls(op_axis, probe.output_dtype(x.dtype), initial.item() if isinstance(initial, np.generic) else initial)(x)
    return probe._expand(out, x.ndim) if keepdims else out


def max(  # noqa: A001
    x: AnyValue, axis: AnyValue = None, keepdims: bool = False, *, initial: float | int | None = None
) -> Variable:
    """Maximum over ``axis``; from ``initial``, if given, as ``np.max`` (an empty reduction then gives it).

    The gradient is shared evenly by the elements equal to the maximum (see :class:`Max`).

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x = st.dvector("x")
    >>> float(st.max(x, initial=-np.inf).eval({x: np.zeros(0)}))
    -inf
    >>> st.grad(st.max(x), x).eval({x: np.array([3.0, 1.0, 3.0])})
    array([0.5, 0. , 0.5])
    """
    return _extremum(Max, x, axis, keepdims, initial)


def min(  # noqa: A001
    x: AnyValue, axis: AnyValue = None, keepdims: bool = False, *, initial: float | int | None = None
) -> Variable:
    """Minimum over ``axis``; from ``initial``, if given, as ``np.min``.

    The gradient is shared evenly by the elements equal to the minimum (see :class:`Min`).

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x = st.dmatrix("x")
    >>> st.min(x, axis=1, initial=0.0).eval({x: np.array([[1.0, -2.0], [3.0, 4.0]])})
    array([-2.,  0.])
    """
    return _extremum(Min, x, axis, keepdims, initial)


def all(x: AnyValue, axis: AnyValue = None, keepdims: bool = False) -> Variable:  # noqa: A001
    """True where every element over ``axis`` is true."""
    return _reduce(All, x, axis, keepdims)


def any(x: AnyValue, axis: AnyValue = None, keepdims: bool = False) -> Variable:  # noqa: A001
    """True where some element over ``axis`` is true."""
    return _reduce(Any, x, axis, keepdims)



# ---------------------------------------------------------------------------------------
# Statistics: mean, var, std.
class ReducedSize(Op):
    """The number of elements in the ``axis`` dimensions of ``x`` (an int64 scalar).

    The count that ``mean`` divides by, when the sizes are not static:

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x = st.dmatrix("x")
    >>> ReducedSize((1,))(x).eval({x: np.zeros((2, 3))})
    array(3)
    """

    __props__ = ("axis",)

    def __init__(self, axis: tuple[int, ...]) -> None:
        self.axis = tuple(sorted(int(a) for a in axis))

    def make_node(self, x: AnyValue) -> Apply:
        x = as_tensor_variable(x)
        if self.axis and self.axis[-1] >= x.ndim:
            raise ValueError(f"{self}: axis {list(self.axis)} is out of range for {x} ({x.type})")
        return Apply(self, [x], [TensorType("int64", ())()])

    def perform(self, node, inputs, output_storage):
        sizes = [inputs[0].shape[d] for d in self.axis]
        output_storage[0][0] = np.asarray(np.prod(sizes, dtype="int64"), dtype="int64")

    def infer_shape(self, fgraph, node, input_shapes):
        return [()]

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        return [disconnected()]


def _count(x: Variable, axes: tuple[int, ...], ddof: int | float = 0) -> AnyValue:
    """``max(number of elements in axes - ddof, 0)``: a Python number when static, else a graph."""
    sizes = [x.type.shape[d] for d in axes]
    if None not in sizes:
        n = int(np.prod(sizes, dtype="int64")) - ddof
        return n if n > 0 else 0
    n = ReducedSize(axes)(x)
    if ddof:
        n = maximum(n - ddof, 0)
    return n


def _divide_by_count(total: Variable, count: AnyValue) -> Variable:
    """``total / count`` in ``total``'s dtype (a Python count is a weak constant)."""
    if isinstance(count, Variable):
        count = cast(count, total.dtype)
    return total / count


def _float_input(x: AnyValue, opname: str) -> Variable:
    """``x`` converted to float64 if it is boolean or integer, as NumPy's ``mean`` does."""
    x = as_tensor_variable(x)
    kind = np.dtype(x.dtype).kind
    if kind in "biu":
        return cast(x, "float64")
    if kind not in "fc":
        raise TypeError(f"{opname}: unsupported dtype {x.dtype} of {x} ({x.type})")
    return x


def mean(x: AnyValue, axis: AnyValue = None, keepdims: bool = False) -> Variable:
    """Arithmetic mean over ``axis``; integers give float64, like ``np.mean``.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x = st.imatrix("x")
    >>> m = st.mean(x, axis=0)
    >>> m.type
    TensorType(float64, (?,))
    >>> m.eval({x: np.array([[1, 2], [4, 4]], dtype="int32")})
    array([2.5, 3. ])
    """
    x = _float_input(x, "mean")
    axes = normalize_axes(axis, x.ndim, "mean")
    return _divide_by_count(sum(x, axes, keepdims), _count(x, axes))


def var(x: AnyValue, axis: AnyValue = None, keepdims: bool = False, ddof: int | float = 0) -> Variable:
    """Variance over ``axis``, dividing by ``count - ddof`` as ``np.var``.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x = st.dvector("x")
    >>> float(st.var(x, ddof=1).eval({x: np.array([1.0, 2.0, 3.0])}))
    1.0
    """
    x = _float_input(x, "var")
    axes = normalize_axes(axis, x.ndim, "var")
    deviation = x - mean(x, axes, keepdims=True)
    if np.dtype(x.dtype).kind == "c":
        deviation = tabs(deviation)
    return _divide_by_count(sum(deviation * deviation, axes, keepdims), _count(x, axes, ddof))


def std(x: AnyValue, axis: AnyValue = None, keepdims: bool = False, ddof: int | float = 0) -> Variable:
    """Standard deviation over ``axis``: ``sqrt(var(x, axis, keepdims, ddof))``.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x = st.dmatrix("x")
    >>> st.std(x, axis=1).eval({x: np.array([[1.0, 3.0], [2.0, 2.0]])})
    array([1., 0.])
    """
    return sqrt(var(x, axis, keepdims, ddof))


# ---------------------------------------------------------------------------------------
# Positions of extrema: argmax, argmin.
class ArgReduce(Op):
    """Index (int64) of the extremum along ``axis``; ``None`` searches the flattened tensor."""

    __props__ = ("axis",)
    numpy_fn: Callable[..., AnyValue]

    def __init__(self, axis: int | None = None) -> None:
        self.axis = None if axis is None else int(axis)

    def make_node(self, x: AnyValue) -> Apply:
        x = as_tensor_variable(x)
        if self.axis is not None and not 0 <= self.axis < x.ndim:
            raise ValueError(f"{self}: axis {self.axis} is out of range for {x} ({x.type})")
        searched = x.type.shape if self.axis is None else (x.type.shape[self.axis],)
        if 0 in searched:
            raise ValueError(f"{self}: {x} ({x.type}) is empty along the searched axis; there is no extremum")
        shape = () if self.axis is None else tuple(s for d, s in enumerate(x.type.shape) if d != self.axis)
        return Apply(self, [x], [TensorType("int64", shape)()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(type(self).numpy_fn(inputs[0], axis=self.axis), dtype="int64")

    def infer_shape(self, fgraph, node, input_shapes):
        if self.axis is None:
            return [()]
        return [tuple(s for d, s in enumerate(input_shapes[0]) if d != self.axis)]

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        return [grad_undefined(self, 0, inputs[0], "an index is not a differentiable function")]


class Argmax(ArgReduce):
    numpy_fn = staticmethod(np.argmax)


class Argmin(ArgReduce):
    numpy_fn = staticmethod(np.argmin)


def _arg_reduce(cls: type[ArgReduce], x: AnyValue, axis: AnyValue, keepdims: bool) -> Variable:
    x = as_tensor_variable(x)
    if axis is None:
        out = cls(None)(x)
        return DimShuffle(0, ("x",) * x.ndim)(out) if keepdims else out
    if isinstance(axis, Variable):
        axis = int(get_scalar_constant_value(axis))
    axis = normalize_axis(axis, x.ndim, cls.__name__.lower())
    out = cls(axis)(x)
    if keepdims:
        pattern = [*range(axis), "x", *range(axis, x.ndim - 1)]
        out = DimShuffle(x.ndim - 1, pattern)(out)
    return out


def argmax(x: AnyValue, axis: int | None = None, keepdims: bool = False) -> Variable:
    """Index of the maximum along ``axis`` (of the flattened tensor when ``None``), as ``np.argmax``.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x = st.dmatrix("x")
    >>> st.argmax(x, axis=1).eval({x: np.array([[1.0, 5.0], [7.0, 2.0]])})
    array([1, 0])
    >>> int(st.argmax(x).eval({x: np.array([[1.0, 5.0], [7.0, 2.0]])}))
    2
    """
    return _arg_reduce(Argmax, x, axis, keepdims)


def argmin(x: AnyValue, axis: int | None = None, keepdims: bool = False) -> Variable:
    """Index of the minimum along ``axis`` (of the flattened tensor when ``None``), as ``np.argmin``.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x = st.dvector("x")
    >>> int(st.argmin(x).eval({x: np.array([3.0, -1.0, 2.0])}))
    1
    """
    return _arg_reduce(Argmin, x, axis, keepdims)


__all__ = [
    "All",
    "Any",
    "ArgReduce",
    "Argmax",
    "Argmin",
    "Max",
    "Min",
    "Prod",
    "ReducedSize",
    "Reduce",
    "Sum",
    "all",
    "any",
    "argmax",
    "argmin",
    "max",
    "mean",
    "min",
    "prod",
    "std",
    "sum",
    "var",
]
