"""Shapes as graph values: ``Shape`` reads one, ``SpecifyShape`` asserts one.

>>> import numpy as np
>>> import symlab.tensor as st
>>> x = st.dmatrix("x")
>>> x.shape.eval({x: np.zeros((2, 3))})
array([2, 3])
>>> y = st.specify_shape(x, (2, None))
>>> y.type
TensorType(float64, (2, ?))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Constant, Variable
from symlab.graph.op import Op
from symlab.graph.type import Type
from symlab.tensor.basic import as_tensor_variable, constant, get_scalar_constant_value
from symlab.tensor.elemwise import DimShuffle
from symlab.tensor.type import TensorType


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
        from symlab.graph.null_type import disconnected

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
        from symlab.graph.null_type import disconnected

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
# One entry of a shape, and what is statically known about shape vectors.


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
        from symlab.graph.null_type import disconnected

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
    from symlab.tensor.basic import normalize_axis

    x = as_tensor_variable(x)
    i = normalize_axis(i, x.ndim, "shape_i")
    if x.type.shape[i] is not None:
        return constant(x.type.shape[i], dtype="int64")
    return Shape_i(i)(x)


def _static_scalar(s: Variable) -> int | None:
    """The value of an integer scalar when it is known before running the graph."""
    value = _static_number(s)
    return None if value is None else int(value)


def _static_number(s: Variable) -> Any:
    """The value of a scalar when it is known before running the graph, else None."""
    try:
        return get_scalar_constant_value(s)
    except ValueError:
        return None


def _static_entries(v: Variable) -> tuple[int | None, ...]:
    """What is statically known of each entry of an integer vector of static length."""
    from symlab.tensor.joining import Join

    n = v.type.shape[0]
    if isinstance(v, Constant):
        return tuple(int(e) for e in v.data)
    owner = v.owner
    if owner is not None:
        op = owner.op
        if isinstance(op, Shape):
            return owner.inputs[0].type.shape
        if isinstance(op, SpecifyShape):
            return _static_entries(owner.inputs[0]) if owner.inputs[0].type.shape[0] is not None else (None,) * n
        if isinstance(op, DimShuffle) and op.new_order == ("x",):
            return (_static_scalar(owner.inputs[0]),)
        if isinstance(op, Join) and all(i.type.shape[0] is not None for i in owner.inputs):
            return sum((_static_entries(i) for i in owner.inputs), ())
    return (None,) * (n or 0)


def _vector_entry(v: Variable, i: int) -> Variable:
    """Entry ``i`` of an integer vector of static length, as an int64 scalar (no Subtensor)."""
    from symlab.tensor.basic import cast
    from symlab.tensor.joining import Join

    known = _static_entries(v)
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
                    return _vector_entry(piece, i)
                i -= piece.type.shape[0]
    from symlab.tensor.reduction import sum as tsum

    onehot = np.zeros(v.type.shape[0], dtype="int64")
    onehot[i] = 1
    return cast(tsum(v * constant(onehot)), "int64")


def _shape_vector(shape: Any, opname: str) -> Variable:
    """A shape given as an int, a sequence of ints/int scalars, or an int vector, as an int64 vector."""
    from symlab.tensor.basic import cast

    if isinstance(shape, Variable) and shape.ndim == 0:
        shape = (shape,)
    if isinstance(shape, int | np.integer) and not isinstance(shape, bool):
        shape = (shape,)
    if isinstance(shape, Variable):
        if not (isinstance(shape.type, TensorType) and shape.ndim == 1 and _is_int(shape.dtype)):
            raise TypeError(f"{opname}: the shape must be a vector of integers, received {shape} ({shape.type})")
        return shape if shape.dtype == "int64" else cast(shape, "int64")
    if not isinstance(shape, list | tuple):
        raise TypeError(f"{opname}: the shape must be a tuple of ints or an int vector, received {shape!r}")
    entries = []
    for s in shape:
        if isinstance(s, Variable):
            if not (isinstance(s.type, TensorType) and s.ndim == 0 and _is_int(s.dtype)):
                raise TypeError(f"{opname}: shape entries must be integer scalars, received {s} ({s.type})")
            entries.append(s)
        elif isinstance(s, int | np.integer) and not isinstance(s, bool):
            entries.append(int(s))
        else:
            raise TypeError(f"{opname}: shape entries must be ints or integer scalars, received {s!r}")
    if all(isinstance(s, int) for s in entries):
        return constant(np.array(entries, dtype="int64"))
    from symlab.tensor.joining import stack

    return stack([cast(s, "int64") if isinstance(s, Variable) else constant(s, dtype="int64") for s in entries])


def _is_int(dtype: str) -> bool:
    return dtype.startswith(("int", "uint"))


def _product(sizes: Sequence[Any]) -> Any:
    """The product of sizes (ints or int64 scalars): an int when all are ints."""
    result: Any = 1
    for s in sizes:
        if isinstance(s, Variable):
            known = _static_scalar(s)
            s = known if known is not None else s
        result = result * s
    return result


# ---------------------------------------------------------------------------------------
# Reshape and friends.


class Reshape(Op):
    """``x`` with its elements laid out in a new shape of ``ndim`` dimensions.

    The shape is an int64 vector input; one entry may be ``-1`` (inferred).
    """

    __props__ = ("ndim",)
    view_map = {0: [0]}

    def __init__(self, ndim: int) -> None:
        self.ndim = int(ndim)

    def make_node(self, x: Any, shp: Any) -> Apply:
        x = as_tensor_variable(x)
        shp = as_tensor_variable(shp)
        if not (shp.ndim == 1 and _is_int(shp.dtype)):
            raise TypeError(f"{self}: the shape must be a vector of integers, received {shp} ({shp.type})")
        if shp.type.shape[0] not in (None, self.ndim):
            raise ValueError(f"{self}: the shape {shp} has {shp.type.shape[0]} entries, expected {self.ndim}")
        if shp.type.shape[0] is None:
            shp = specify_shape(shp, (self.ndim,))
        entries = _static_entries(shp)
        return Apply(self, [x, shp], [TensorType(x.dtype, self._static_shape(x, entries))()])

    def _static_shape(self, x: Variable, entries: Sequence[int | None]) -> tuple[int | None, ...]:
        bad = [e for e in entries if e is not None and e < -1]
        if bad or list(entries).count(-1) > 1:
            raise ValueError(f"{self}: invalid shape {_show(entries)} for {x}: sizes are >= 0, with at most one -1")
        out = [None if e == -1 else e for e in entries]
        if None in x.type.shape:
            return tuple(out)
        size = int(np.prod(x.type.shape, dtype=np.int64))
        others = [e for e in entries if e != -1]
        if None in others:
            return tuple(out)
        known = int(np.prod(others, dtype=np.int64))
        if -1 in entries:
            if known == 0 or size % known:
                raise ValueError(f"{self}: cannot reshape {x} ({x.type}, {size} elements) to {_show(entries)}")
            out[list(entries).index(-1)] = size // known
        elif known != size:
            raise ValueError(f"{self}: cannot reshape {x} ({x.type}, {size} elements) to {_show(entries)}")
        return tuple(out)

    def perform(self, node, inputs, output_storage):
        x, shp = inputs
        shp = tuple(int(s) for s in shp)
        if len(shp) != self.ndim:
            raise ValueError(f"{self}: the shape {shp} has {len(shp)} entries, expected {self.ndim}")
        try:
            output_storage[0][0] = np.reshape(x, shp)
        except ValueError as err:
            raise ValueError(f"{self}: cannot reshape an array of shape {x.shape} to {shp}: {err}") from None

    def infer_shape(self, fgraph, node, input_shapes):
        from symlab.tensor.math import eq, int_div, switch

        x, shp = node.inputs
        static = node.outputs[0].type.shape
        entries = [_vector_entry(shp, i) for i in range(self.ndim)]
        known = [_static_scalar(e) for e in entries]
        out = []
        for i, e in enumerate(entries):
            if static[i] is not None:
                out.append(constant(static[i], dtype="int64"))
            elif known[i] is not None and known[i] >= 0:
                out.append(e)
            else:
                inferred = int_div(_as_size(_product(input_shapes[0])), _as_size(_product(entries[:i] + entries[i + 1 :])))
                out.append(inferred if known[i] == -1 else switch(eq(e, -1), inferred, e))
        return [tuple(out)]

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        from symlab.graph.null_type import disconnected

        x, _ = inputs
        return [reshape(output_grads[0], shape(x)), disconnected()]

    def R_op(self, inputs, eval_points):  # noqa: N802
        if eval_points[0] is None:
            return [None]
        return [self(eval_points[0], inputs[1])]


def _as_size(s: Any) -> Variable:
    return s if isinstance(s, Variable) else constant(int(s), dtype="int64")


def _show(entries: Sequence[int | None]) -> str:
    return "(" + ", ".join("?" if e is None else str(e) for e in entries) + ("," if len(entries) == 1 else "") + ")"


def reshape(x: Any, shape: Any, ndim: int | None = None) -> Variable:
    """``x`` reshaped to ``shape``: ints, int scalars and one ``-1``, or an int vector.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x = st.tensor("float64", shape=(2, 3), name="x")
    >>> y = st.reshape(x, (3, -1))
    >>> y.type
    TensorType(float64, (3, 2))
    >>> y.eval({x: np.arange(6.0).reshape(2, 3)})
    array([[0., 1.],
           [2., 3.],
           [4., 5.]])
    """
    x = as_tensor_variable(x)
    shp = _shape_vector(shape, "reshape")
    length = shp.type.shape[0]
    if ndim is None:
        if length is None:
            raise ValueError(f"reshape: the length of the shape {shp} ({shp.type}) is not static; pass ndim=")
        ndim = length
    elif length is not None and length != ndim:
        raise ValueError(f"reshape: ndim={ndim} but the shape {shp} has {length} entries")
    return Reshape(ndim)(x, shp)


def flatten(x: Any, ndim: int = 1) -> Variable:
    """``x`` with its trailing dimensions merged so that ``ndim`` remain.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x = st.tensor("float64", shape=(2, 3, 4), name="x")
    >>> st.flatten(x, 2).type
    TensorType(float64, (2, 12))
    """
    x = as_tensor_variable(x)
    if not isinstance(ndim, int | np.integer) or not 1 <= ndim <= max(x.ndim, 1):
        raise ValueError(f"flatten: ndim must be between 1 and {max(x.ndim, 1)} for {x} ({x.type}), received {ndim!r}")
    sizes = [shape_i(x, d) for d in range(x.ndim)]
    kept = sizes[: ndim - 1]
    return reshape(x, [*kept, _as_size(_product(sizes[ndim - 1 :]))])


def expand_dims(x: Any, axis: int | Sequence[int]) -> Variable:
    """``x`` with new dimensions of size 1 at ``axis`` (positions in the result).

    >>> import symlab.tensor as st
    >>> st.expand_dims(st.dmatrix("x"), (0, -1)).type
    TensorType(float64, (1, ?, ?, 1))
    """
    from symlab.tensor.basic import normalize_axes

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
    from symlab.tensor.basic import normalize_axes

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


__all__ = [
    "Reshape",
    "Shape",
    "Shape_i",
    "SpecifyShape",
    "expand_dims",
    "flatten",
    "reshape",
    "shape",
    "shape_i",
    "specify_shape",
    "squeeze",
]
