"""Making arrays from nothing but a shape: ``alloc``, ``zeros``, ``ones``, ``full``, ``arange``, ``eye``.

>>> import numpy as np
>>> import symlab.tensor as st
>>> n = st.lscalar("n")
>>> z = st.zeros((2, n))
>>> z.type
TensorType(float64, (2, ?))
>>> z.eval({n: 3})
array([[0., 0., 0.],
       [0., 0., 0.]])
>>> st.arange(5).eval()
array([0, 1, 2, 3, 4])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from symlab.config import config
from symlab.graph.basic import Apply, Variable
from symlab.graph.null_type import disconnected
from symlab.graph.op import Op
from symlab.tensor.basic import cast, static_int, static_number
from symlab.tensor.conversion import as_size, as_tensor_input, as_tensor_variable, constant, is_int_dtype, is_weak
from symlab.tensor.joining import shape_vector, vector_entry
from symlab.tensor.math import ceil, maximum
from symlab.tensor.reduction import sum as tsum
from symlab.tensor.shape_of import shape_i
from symlab.tensor.type import TensorType


class Alloc(Op):
    """``value`` broadcast to the shape given by int scalar inputs (a new, writable array).

    Like an ``Elemwise``, a dimension of ``value`` broadcasts only if its static size is 1.
    """

    __props__ = ()

    def make_node(self, value: Any, *shape: Any) -> Apply:
        value = as_tensor_input(value, self, "value")
        sizes = [_size_input(s, k) for k, s in enumerate(shape)]
        if len(sizes) < value.ndim:
            raise ValueError(
                f"Alloc: the value {value} ({value.type}) has {value.ndim} dimensions, more than the "
                f"{len(sizes)} of the shape"
            )
        lead = len(sizes) - value.ndim
        static: list[int | None] = []
        for d, s in enumerate(sizes):
            known = static_int(s)
            if known is not None and known < 0:
                raise ValueError(f"Alloc: size {d} is {known}; sizes must be non-negative")
            v = value.type.shape[d - lead] if d >= lead else 1
            if known is not None and v is not None and v not in (1, known):
                raise ValueError(
                    f"Alloc: cannot broadcast {value} ({value.type}) to size {known} in dimension {d}: "
                    f"its static size there is {v}"
                )
            static.append(known if known is not None else (v if v != 1 else None))
        return Apply(self, [value, *sizes], [TensorType(value.dtype, tuple(static))()])

    def perform(self, node, inputs, output_storage):
        value, *shape = inputs
        shape = tuple(int(s) for s in shape)
        value_type = node.inputs[0].type
        lead = len(shape) - value.ndim
        for d, n in enumerate(value.shape):
            if value_type.shape[d] != 1 and n != shape[lead + d]:
                raise ValueError(
                    f"Alloc: cannot broadcast a value of shape {value.shape} to {shape}: dimension {lead + d} "
                    f"is {n}, not {shape[lead + d]} (only dimensions of static size 1 broadcast)"
                )
        if any(n < 0 for n in shape):
            raise ValueError(f"Alloc: negative size in the shape {shape}")
        out = np.empty(shape, dtype=node.outputs[0].type.dtype)
        out[...] = value
        output_storage[0][0] = out

    def infer_shape(self, fgraph, node, input_shapes):
        static = node.outputs[0].type.shape
        return [tuple(s if n is None else constant(n, dtype="int64") for s, n in zip(node.inputs[1:], static))]

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        value = inputs[0]
        g = output_grads[0]
        lead = g.ndim - value.ndim
        spread = [lead + d for d, n in enumerate(value.type.shape) if n == 1 and g.type.shape[lead + d] != 1]
        if spread:
            g = tsum(g, axis=spread, keepdims=True)
        if lead:
            g = tsum(g, axis=tuple(range(lead)))
        if g.dtype != value.dtype and value.dtype.startswith(("float", "complex")):
            g = cast(g, value.dtype)
        return [g] + [disconnected() for _ in inputs[1:]]


def _size_input(s: Any, k: int, op: Any = "Alloc") -> Variable:
    if isinstance(s, int | np.integer) and not isinstance(s, bool):
        return constant(int(s), dtype="int64")
    s = as_tensor_input(s, op, f"size {k}")
    if not (s.ndim == 0 and is_int_dtype(s.dtype)):
        raise TypeError(f"Alloc: size {k} must be an int or an integer scalar, received {s} ({s.type})")
    return s if s.dtype == "int64" else cast(s, "int64")


_alloc = Alloc()


def alloc(value: Any, *shape: Any) -> Variable:
    """An array of shape ``shape`` (ints or int scalars) filled with ``value`` (broadcast).

    >>> import symlab.tensor as st
    >>> st.alloc(st.as_tensor_variable([1, 2]), 3, 2).eval()
    array([[1, 2],
           [1, 2],
           [1, 2]])
    """
    return _alloc(value, *shape)


def _shape_entries(shape: Any) -> list[Variable]:
    vector = shape_vector(shape, "alloc")
    n = vector.type.shape[0]
    if n is None:
        raise ValueError(f"alloc: the shape {vector} ({vector.type}) needs a static length")
    return [vector_entry(vector, i) for i in range(n)]


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Variable:
    """An array of ``shape`` filled with ``fill_value``; the dtype is NumPy's (``np.full``) by default.

    >>> import symlab.tensor as st
    >>> st.full((2,), 7).eval()
    array([7, 7])
    """
    value = as_tensor_variable(fill_value)
    if dtype is not None:
        value = cast(value, config.floatX if dtype == "floatX" else dtype)
    return alloc(value, *_shape_entries(shape))


def zeros(shape: Any, dtype: Any = None) -> Variable:
    """An array of zeros (of ``config.floatX`` by default).

    >>> import symlab.tensor as st
    >>> st.zeros(2, dtype="int32").eval()
    array([0, 0], dtype=int32)
    """
    return full(shape, constant(0, dtype=_dtype(dtype)))


def ones(shape: Any, dtype: Any = None) -> Variable:
    """An array of ones (of ``config.floatX`` by default).

    >>> import symlab.tensor as st
    >>> st.ones((1, 2)).eval()
    array([[1., 1.]])
    """
    return full(shape, constant(1, dtype=_dtype(dtype)))


def _dtype(dtype: Any) -> str:
    return config.floatX if dtype is None or dtype == "floatX" else dtype


def full_like(x: Any, fill_value: Any, dtype: Any = None) -> Variable:
    """An array of ``x``'s shape filled with ``fill_value``, of ``x``'s dtype by default.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x = st.ivector("x")
    >>> st.full_like(x, 2.7).eval({x: np.zeros(2, dtype="int32")})
    array([2, 2], dtype=int32)
    """
    x = as_tensor_variable(x)
    dtype = x.dtype if dtype is None else _dtype(dtype)
    value = as_tensor_variable(fill_value)
    if isinstance(fill_value, Variable):
        value = cast(value, dtype)
    else:
        value = constant(np.asarray(fill_value).astype(dtype))
    return alloc(value, *[shape_i(x, d) for d in range(x.ndim)])


def zeros_like(x: Any, dtype: Any = None) -> Variable:
    """Zeros of ``x``'s shape and (by default) dtype.

    >>> import symlab.tensor as st
    >>> st.zeros_like(st.dmatrix("x")).type
    TensorType(float64, (?, ?))
    """
    return full_like(x, 0, dtype)


def ones_like(x: Any, dtype: Any = None) -> Variable:
    """Ones of ``x``'s shape and (by default) dtype."""
    return full_like(x, 1, dtype)


class ARange(Op):
    """``np.arange(start, stop, step)`` of int or float scalars, in ``dtype``."""

    __props__ = ("dtype",)

    def __init__(self, dtype: str) -> None:
        self.dtype = np.dtype(dtype).name

    def make_node(self, start: Any, stop: Any, step: Any) -> Apply:
        inputs = [as_tensor_input(v, self, name) for name, v in zip(("start", "stop", "step"), (start, stop, step))]
        for name, v in zip(("start", "stop", "step"), inputs):
            if v.ndim != 0 or v.dtype.startswith("complex") or v.dtype == "bool":
                raise TypeError(f"{self}: {name} must be a real scalar, received {v} ({v.type})")
        values = [_static_value(v) for v in inputs]
        if values[2] == 0:
            raise ValueError(f"{self}: step cannot be 0")
        length = None if None in values else _arange_length(*values)
        return Apply(self, inputs, [TensorType(self.dtype, (length,))()])

    def perform(self, node, inputs, output_storage):
        start, stop, step = (v.item() for v in inputs)
        if step == 0:
            raise ValueError(f"{self}: step cannot be 0")
        output_storage[0][0] = np.arange(start, stop, step, dtype=self.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        n = node.outputs[0].type.shape[0]
        if n is not None:
            return [(constant(n, dtype="int64"),)]
        start, stop, step = node.inputs
        return [(cast(maximum(ceil((stop - start) / step), 0), "int64"),)]

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        g = output_grads[0]
        if is_int_dtype(self.dtype) or self.dtype == "bool":
            return [disconnected() for _ in inputs]
        start, stop, step = inputs
        n = shape_i(outputs[0], 0)
        k = arange(0, n, dtype=self.dtype)
        grads = [tsum(g), zeros_like(stop), tsum(g * k)]
        return [
            disconnected() if is_int_dtype(x.dtype) else (cast(gx, x.dtype) if gx.dtype != x.dtype else gx)
            for x, gx in zip(inputs, grads)
        ]


def _static_value(v: Variable) -> int | float | None:
    value = static_number(v)
    if value is None:
        return None
    return int(value) if is_int_dtype(v.dtype) else float(value)


def _arange_length(start: float, stop: float, step: float) -> int:
    if all(isinstance(v, int) for v in (start, stop, step)):
        return max(0, -((start - stop) // step))
    return max(0, math.ceil((stop - start) / step))


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None) -> Variable:
    """Evenly spaced values in ``[start, stop)``, with NumPy's semantics and default dtype.

    >>> import symlab.tensor as st
    >>> n = st.iscalar("n")
    >>> st.arange(n).type
    TensorType(int32, (?,))
    >>> st.arange(1, 2, 0.25).eval()
    array([1.  , 1.25, 1.5 , 1.75])
    """
    if stop is None:
        start, stop = 0, start
    args = [start, stop, step]
    if dtype is None:
        tensors = [as_tensor_input(a, "arange", name) for name, a in zip(("start", "stop", "step"), args)]
        weak = [is_weak(a) for a in args]
        probes = [t.data.item() if w and not all(weak) else np.dtype(t.dtype) for t, w in zip(tensors, weak)]
        if all(weak):
            probes = [np.asarray(a).dtype for a in args]
        dtype = np.result_type(*probes).name
    return ARange(_dtype(dtype))(*args)


class Eye(Op):
    """An ``n`` by ``m`` array with ones on diagonal ``k``, as ``np.eye``."""

    __props__ = ("dtype",)

    def __init__(self, dtype: str) -> None:
        self.dtype = np.dtype(dtype).name

    def make_node(self, n: Any, m: Any, k: Any) -> Apply:
        inputs = [_size_input(v, i, self) if i < 2 else as_tensor_input(v, self, "k") for i, v in enumerate((n, m, k))]
        if not (inputs[2].ndim == 0 and is_int_dtype(inputs[2].dtype)):
            raise TypeError(f"{self}: k must be an integer scalar, received {inputs[2]} ({inputs[2].type})")
        shape = (static_int(inputs[0]), static_int(inputs[1]))
        return Apply(self, inputs, [TensorType(self.dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        n, m, k = (int(v) for v in inputs)
        output_storage[0][0] = np.eye(n, m, k, dtype=self.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(as_size(s) for s in node.inputs[:2])]

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        return [disconnected() for _ in inputs]


def eye(n: Any, m: Any = None, k: Any = 0, dtype: Any = None) -> Variable:
    """The identity-like matrix of ``np.eye`` (``config.floatX`` by default).

    >>> import symlab.tensor as st
    >>> st.eye(2, 3, k=1).eval()
    array([[0., 1., 0.],
           [0., 0., 1.]])
    """
    return Eye(_dtype(dtype))(n, n if m is None else m, k)


__all__ = [
    "ARange",
    "Alloc",
    "Eye",
    "alloc",
    "arange",
    "eye",
    "full",
    "full_like",
    "ones",
    "ones_like",
    "zeros",
    "zeros_like",
]
