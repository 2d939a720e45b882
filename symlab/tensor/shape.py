"""Shapes in the graph, PyTensor's ``tensor.shape``: ``reshape`` (a ``Reshape`` op) and ``flatten`` change one;
``shape``, ``shape_i`` and ``specify_shape`` read and assert one (they live below the joins that ``reshape``
needs, in :mod:`symlab.tensor.shape_of`, and are named here too).

>>> import numpy as np
>>> import symlab.tensor as st
>>> x = st.tensor("float64", shape=(2, 3), name="x")
>>> st.reshape(x, (3, -1)).type
TensorType(float64, (3, 2))
>>> st.flatten(x).eval({x: np.arange(6.0).reshape(2, 3)})
array([0., 1., 2., 3., 4., 5.])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Variable
from symlab.graph.null_type import disconnected
from symlab.graph.op import Op
from symlab.tensor.basic import static_int
from symlab.tensor.conversion import as_size, as_tensor_variable, constant, is_int_dtype
from symlab.tensor.joining import shape_vector, static_entries, vector_entry
from symlab.tensor.math import eq, int_div, switch
from symlab.tensor.shape_of import Shape, Shape_i, SpecifyShape, shape, shape_i, specify_shape
from symlab.tensor.type import TensorType


def _product(sizes: Sequence[Any]) -> Any:
    """The product of sizes (ints or int64 scalars): an int when all are ints."""
    result: Any = 1
    for s in sizes:
        if isinstance(s, Variable):
            known = static_int(s)
            s = known if known is not None else s
        result = result * s
    return result


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
        if not (shp.ndim == 1 and is_int_dtype(shp.dtype)):
            raise TypeError(f"{self}: the shape must be a vector of integers, received {shp} ({shp.type})")
        if shp.type.shape[0] not in (None, self.ndim):
            raise ValueError(f"{self}: the shape {shp} has {shp.type.shape[0]} entries, expected {self.ndim}")
        if shp.type.shape[0] is None:
            shp = specify_shape(shp, (self.ndim,))
        entries = static_entries(shp)
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
        x, shp = node.inputs
        static = node.outputs[0].type.shape
        entries = [vector_entry(shp, i) for i in range(self.ndim)]
        known = [static_int(e) for e in entries]
        out = []
        for i, e in enumerate(entries):
            if static[i] is not None:
                out.append(constant(static[i], dtype="int64"))
            elif known[i] is not None and known[i] >= 0:
                out.append(e)
            else:
                inferred = int_div(as_size(_product(input_shapes[0])), as_size(_product(entries[:i] + entries[i + 1 :])))
                out.append(inferred if known[i] == -1 else switch(eq(e, -1), inferred, e))
        return [tuple(out)]

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        x, _ = inputs
        return [reshape(output_grads[0], shape(x)), disconnected()]

    def R_op(self, inputs, eval_points):  # noqa: N802
        if eval_points[0] is None:
            return [None]
        return [self(eval_points[0], inputs[1])]


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
    shp = shape_vector(shape, "reshape")
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
    return reshape(x, [*kept, as_size(_product(sizes[ndim - 1 :]))])



__all__ = ["Reshape", "Shape", "Shape_i", "SpecifyShape", "flatten", "reshape", "shape", "shape_i", "specify_shape"]
