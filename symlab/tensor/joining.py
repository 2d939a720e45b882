"""Putting tensors together and taking them apart: ``concatenate``, ``join``, ``stack``, ``split``.

(The module is ``joining`` so that ``symlab.tensor.join`` is the function, as in PyTensor.) It also reads
the entries of short integer vectors such as shapes, which are often joins of scalars
(:func:`static_entries`, :func:`vector_entry`, :func:`shape_vector`).

>>> import numpy as np
>>> import symlab.tensor as st
>>> x = st.tensor("float64", shape=(2, None), name="x")
>>> y = st.tensor("float64", shape=(3, 4), name="y")
>>> z = st.concatenate([x, y])
>>> z.type
TensorType(float64, (5, 4))
>>> st.stack([x, x], axis=1).type
TensorType(float64, (2, 2, ?))
>>> a, b = st.split(y, [1, 2], axis=0)
>>> a.type, b.type
(TensorType(float64, (1, 4)), TensorType(float64, (2, 4)))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Constant, Variable
from symlab.graph.null_type import DisconnectedType, disconnected
from symlab.graph.op import Op
from symlab.tensor.basic import cast, expand_dims, static_int
from symlab.tensor.conversion import (
    as_size,
    as_tensor_input,
    as_tensor_variable,
    constant,
    is_int_dtype,
    is_weak,
    normalize_axis,
    register_list_stacker,
)
from symlab.tensor.elemwise import DimShuffle
from symlab.tensor.reduction import sum as tsum
from symlab.tensor.shape_of import Shape, SpecifyShape, shape_i
from symlab.tensor.type import TensorType


class Join(Op):
    """Concatenate tensors of the same rank along ``axis``.

    The output dtype is NumPy's promotion of the input dtypes.
    """

    __props__ = ("axis",)

    def __init__(self, axis: int) -> None:
        self.axis = int(axis)

    def make_node(self, *tensors: Any) -> Apply:
        if not tensors:
            raise ValueError(f"{self}: needs at least one tensor")
        tensors = [as_tensor_input(t, self, k) for k, t in enumerate(tensors)]
        ndim = tensors[0].ndim
        for k, t in enumerate(tensors):
            if t.ndim != ndim:
                raise TypeError(
                    f"{self}: all inputs need the same number of dimensions; input 0 ({tensors[0]}) has "
                    f"{ndim} ({tensors[0].type}) but input {k} ({t}) has {t.ndim} ({t.type})"
                )
        if not 0 <= self.axis < ndim:
            raise ValueError(f"{self}: axis {self.axis} is out of range for inputs of {ndim} dimensions")
        shape: list[int | None] = []
        for d in range(ndim):
            sizes = [t.type.shape[d] for t in tensors]
            if d == self.axis:
                shape.append(None if None in sizes else sum(sizes))
                continue
            known = {s for s in sizes if s is not None}
            if len(known) > 1:
                detail = ", ".join(f"input {k} {t} is {t.type}" for k, t in enumerate(tensors))
                raise ValueError(f"{self}: static sizes {sorted(known)} differ in dimension {d} ({detail})")
            shape.append(known.pop() if known else None)
        dtype = np.result_type(*[t.dtype for t in tensors]).name
        return Apply(self, tensors, [TensorType(dtype, tuple(shape))()])

    def perform(self, node, inputs, output_storage):
        dtype = node.outputs[0].type.dtype
        try:
            output_storage[0][0] = np.concatenate(inputs, axis=self.axis, dtype=dtype, casting="unsafe")
        except ValueError as err:
            shapes = ", ".join(str(v.shape) for v in inputs)
            raise ValueError(f"{self}: cannot join arrays of shapes {shapes}: {err}") from None

    def infer_shape(self, fgraph, node, input_shapes):
        static = node.outputs[0].type.shape
        out = []
        for d, size in enumerate(static):
            if size is not None:
                out.append(constant(size, dtype="int64"))
            elif d == self.axis:
                total = input_shapes[0][d]
                for s in input_shapes[1:]:
                    total = total + s[d]
                out.append(total)
            else:
                out.append(input_shapes[0][d])
        return [tuple(out)]

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        (g,) = output_grads
        pieces = split(g, [shape_i(t, self.axis) for t in inputs], axis=self.axis)
        return [_cast_like(p, t) for p, t in zip(pieces, inputs)]

    def R_op(self, inputs, eval_points):  # noqa: N802
        if any(e is None for e in eval_points):
            return [None]
        return [self(*eval_points)]


def _cast_like(g: Variable, x: Variable) -> Variable:
    """``g`` in the dtype of the float input ``x`` it is the gradient of."""
    if x.dtype != g.dtype and x.dtype.startswith(("float", "complex")):
        return cast(g, x.dtype)
    return g


class Split(Op):
    """Cut ``x`` along ``axis`` into ``n_splits`` pieces of the given (int scalar) sizes."""

    __props__ = ("n_splits", "axis")

    def __init__(self, n_splits: int, axis: int) -> None:
        self.n_splits = int(n_splits)
        self.axis = int(axis)
        self.view_map = {i: [0] for i in range(self.n_splits)}

    def make_node(self, x: Any, *sizes: Any) -> Apply:
        x = as_tensor_variable(x)
        if len(sizes) != self.n_splits:
            raise ValueError(f"{self}: expected {self.n_splits} sizes, received {len(sizes)}")
        if not 0 <= self.axis < x.ndim:
            raise ValueError(f"{self}: axis {self.axis} is out of range for {x} ({x.type})")
        sizes = [as_tensor_variable(s) for s in sizes]
        for k, s in enumerate(sizes):
            if not (s.ndim == 0 and is_int_dtype(s.dtype)):
                raise TypeError(f"{self}: size {k} must be an integer scalar, received {s} ({s.type})")
        known = [static_int(s) for s in sizes]
        if any(k is not None and k < 0 for k in known):
            raise ValueError(f"{self}: sizes must be non-negative, received {known}")
        total = x.type.shape[self.axis]
        if total is not None and None not in known and sum(known) != total:
            raise ValueError(
                f"{self}: sizes {known} add up to {sum(known)}, but dimension {self.axis} of {x} ({x.type}) is {total}"
            )
        outputs = []
        for k in known:
            shape = list(x.type.shape)
            shape[self.axis] = k
            outputs.append(TensorType(x.dtype, tuple(shape))())
        return Apply(self, [x, *sizes], outputs)

    def perform(self, node, inputs, output_storage):
        x, *sizes = inputs
        sizes = [int(s) for s in sizes]
        if any(s < 0 for s in sizes) or sum(sizes) != x.shape[self.axis]:
            raise ValueError(
                f"{self}: cannot split dimension {self.axis} of an array of shape {x.shape} into sizes {sizes}"
            )
        pieces = np.split(x, np.cumsum(sizes)[:-1], axis=self.axis)
        for cell, piece in zip(output_storage, pieces):
            cell[0] = piece

    def infer_shape(self, fgraph, node, input_shapes):
        x_shape = input_shapes[0]
        return [
            tuple(as_size(size) if d == self.axis else x_shape[d] for d in range(len(x_shape)))
            for size in node.inputs[1:]
        ]

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        x = inputs[0]
        grads = [  # zeros_like is a method of TensorVariable, whose module sits above every op
            o.zeros_like() if g is None or isinstance(g.type, DisconnectedType) else g
            for o, g in zip(outputs, output_grads)
        ]
        joined = concatenate(grads, axis=self.axis) if len(grads) > 1 else grads[0]
        return [_cast_like(joined, x)] + [disconnected() for _ in inputs[1:]]


def split(x: Any, sizes: Any, axis: int = 0) -> list[Variable]:
    """``x`` cut along ``axis`` into pieces of ``sizes`` (ints, int scalars or an int vector).

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x = st.dvector("x")
    >>> [p.eval({x: np.arange(5.0)}) for p in st.split(x, [2, 3])]
    [array([0., 1.]), array([2., 3., 4.])]
    """
    x = as_tensor_variable(x)
    axis = normalize_axis(axis, x.ndim, "split")
    if isinstance(sizes, Variable):
        if not (sizes.ndim == 1 and sizes.type.shape[0] is not None):
            raise ValueError(f"split: sizes {sizes} ({sizes.type}) must be a vector of static length")
        sizes = [vector_entry(sizes, i) for i in range(sizes.type.shape[0])]
    sizes = [s if isinstance(s, Variable) else constant(int(s), dtype="int64") for s in sizes]
    if not sizes:
        raise ValueError("split: needs at least one size")
    return Split(len(sizes), axis)(x, *sizes, return_list=True)


def concatenate(tensors: Sequence[Any], axis: int = 0) -> Variable:
    """Join ``tensors`` (of the same rank) along an existing ``axis``, as ``np.concatenate``.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x, y = st.dvector("x"), st.ivector("y")
    >>> st.concatenate([x, y]).eval({x: [1.0], y: [2, 3]})
    array([1., 2., 3.])
    """
    tensors = [as_tensor_input(t, "concatenate", k) for k, t in enumerate(tensors)]
    if not tensors:
        raise ValueError("concatenate: needs at least one tensor")
    if tensors[0].ndim == 0:
        raise ValueError(f"concatenate: cannot join 0-d tensors ({tensors[0]}); use stack")
    axis = normalize_axis(axis, tensors[0].ndim, "concatenate")
    if len(tensors) == 1:
        return tensors[0]
    return Join(axis)(*tensors)


def join(axis: int, *tensors: Any) -> Variable:
    """Join ``tensors`` along the existing ``axis``: PyTensor's and Theano's form of :func:`concatenate`.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x, y = st.dmatrix("x"), st.dmatrix("y")
    >>> st.join(0, x, y).eval({x: np.zeros((1, 2)), y: np.ones((2, 2))}).tolist()
    [[0.0, 0.0], [1.0, 1.0], [1.0, 1.0]]
    >>> st.join([x, y])
    Traceback (most recent call last):
    ...
    TypeError: join: the first argument is the axis (an int), received a list; write join(axis, *tensors)
    """
    if not isinstance(axis, int | np.integer) or isinstance(axis, bool):
        kind = type(axis).__name__
        raise TypeError(
            f"join: the first argument is the axis (an int), received a{'n' if kind[0] in 'aeiou' else ''} "
            f"{kind}; write join(axis, *tensors)"
        )
    if not tensors:
        raise ValueError("join: needs at least one tensor after the axis")
    return concatenate(list(tensors), axis=int(axis))


def stack(tensors: Sequence[Any], axis: int = 0) -> Variable:
    """Join ``tensors`` (of the same rank) along a new ``axis``, as ``np.stack``.

    Python numbers among them follow NumPy 2 promotion (they do not widen the dtype).

    >>> import symlab.tensor as st
    >>> x = st.fscalar("x")
    >>> v = st.stack([x, 1.0, 2.0])
    >>> v.type
    TensorType(float32, (3,))
    >>> v.eval({x: 0.5})
    array([0.5, 1. , 2. ], dtype=float32)
    """
    if not tensors:
        raise ValueError("stack: needs at least one tensor")
    weak = [is_weak(t) for t in tensors]
    tensors = [as_tensor_input(t, "stack", k) for k, t in enumerate(tensors)]
    ndim = tensors[0].ndim
    for k, t in enumerate(tensors):
        if t.ndim != ndim:
            raise ValueError(
                f"stack: all tensors need the same number of dimensions; tensor 0 ({tensors[0]}) has {ndim} "
                f"({tensors[0].type}) but tensor {k} ({t}) has {t.ndim} ({t.type})"
            )
    if any(weak) and not all(weak):
        probes = [t.data.item() if w else np.dtype(t.dtype) for t, w in zip(tensors, weak)]
        dtype = np.result_type(*probes).name
        tensors = [constant(t.data, dtype=dtype) if w else t for t, w in zip(tensors, weak)]
    axis = normalize_axis(axis, ndim + 1, "stack")
    return concatenate([expand_dims(t, axis) for t in tensors], axis=axis)


# as_tensor_variable (below every op) stacks a list that holds variables with this module's stack.
register_list_stacker(stack)


# ---------------------------------------------------------------------------------------
# The entries of short integer vectors (shapes, sizes), which are often made by joining scalars:
# what is known of each before the graph runs, and one entry as a scalar. reshape, alloc and split use them.
def static_entries(v: Variable) -> tuple[int | None, ...]:
    """What is statically known of each entry of an integer vector of static length."""
    n = v.type.shape[0]
    if isinstance(v, Constant):
        return tuple(int(e) for e in v.data)
    owner = v.owner
    if owner is not None:
        op = owner.op
        if isinstance(op, Shape):
            return owner.inputs[0].type.shape
        if isinstance(op, SpecifyShape):
            return static_entries(owner.inputs[0]) if owner.inputs[0].type.shape[0] is not None else (None,) * n
        if isinstance(op, DimShuffle) and op.new_order == ("x",):
            return (static_int(owner.inputs[0]),)
        if isinstance(op, Join) and all(i.type.shape[0] is not None for i in owner.inputs):
            return sum((static_entries(i) for i in owner.inputs), ())
    return (None,) * (n or 0)


def vector_entry(v: Variable, i: int) -> Variable:
    """Entry ``i`` of an integer vector of static length, as an int64 scalar (no Subtensor)."""
    known = static_entries(v)
    if known[i] is not None:
        return constant(known[i], dtype="int64")
    owner = v.owner
    if owner is not None:
        if isinstance(owner.op, Shape):
            return shape_i(owner.inputs[0], i)
        if isinstance(owner.op, DimShuffle) and owner.op.new_order == ("x",):
            return cast(owner.inputs[0], "int64")
        if isinstance(owner.op, Join) and all(p.type.shape[0] is not None for p in owner.inputs):
            for piece in owner.inputs:
                if i < piece.type.shape[0]:
                    return vector_entry(piece, i)
                i -= piece.type.shape[0]
    onehot = np.zeros(v.type.shape[0], dtype="int64")
    onehot[i] = 1
    return cast(tsum(v * constant(onehot)), "int64")


def shape_vector(shape: Any, opname: str) -> Variable:
    """A shape given as an int, a sequence of ints/int scalars, or an int vector, as an int64 vector."""
    if isinstance(shape, Variable) and shape.ndim == 0:
        shape = (shape,)
    if isinstance(shape, int | np.integer) and not isinstance(shape, bool):
        shape = (shape,)
    if isinstance(shape, Variable):
        if not (isinstance(shape.type, TensorType) and shape.ndim == 1 and is_int_dtype(shape.dtype)):
            raise TypeError(f"{opname}: the shape must be a vector of integers, received {shape} ({shape.type})")
        return shape if shape.dtype == "int64" else cast(shape, "int64")
    if not isinstance(shape, list | tuple):
        raise TypeError(f"{opname}: the shape must be a tuple of ints or an int vector, received {shape!r}")
    entries = []
    for s in shape:
        if isinstance(s, Variable):
            if not (isinstance(s.type, TensorType) and s.ndim == 0 and is_int_dtype(s.dtype)):
                raise TypeError(f"{opname}: shape entries must be integer scalars, received {s} ({s.type})")
            entries.append(s)
        elif isinstance(s, int | np.integer) and not isinstance(s, bool):
            entries.append(int(s))
        else:
            raise TypeError(f"{opname}: shape entries must be ints or integer scalars, received {s!r}")
    if all(isinstance(s, int) for s in entries):
        return constant(np.array(entries, dtype="int64"))
    return stack([cast(s, "int64") if isinstance(s, Variable) else constant(s, dtype="int64") for s in entries])


__all__ = ["Join", "Split", "concatenate", "join", "split", "stack"]
