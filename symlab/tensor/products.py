"""Products of tensors: ``dot``, ``matmul`` (the ``@`` operator) and ``outer``.

``Dot`` follows ``np.dot`` for vectors and matrices; ``MatMul`` follows
``np.matmul`` for stacks of matrices, whose batch dimensions broadcast like
an ``Elemwise`` (only dimensions of static size 1 broadcast).

>>> import numpy as np
>>> import symlab.tensor as st
>>> a = st.dmatrix("a")
>>> v = st.dvector("v")
>>> (a @ v).owner.op
dot
>>> st.dot(a, v).eval({a: np.eye(2), v: np.array([1.0, 2.0])})
array([1., 2.])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Variable
from symlab.graph.op import Op
from symlab.tensor.basic import cast
from symlab.tensor.conversion import as_tensor_input, constant, normalize_axis
from symlab.tensor.elemwise import DimShuffle
from symlab.tensor.reduction import sum as tsum
from symlab.tensor.type import TensorType

StaticShape = tuple[int | None, ...]


def _product_dtype(fn: Any, a: Variable, b: Variable, opname: str) -> str:
    """The dtype NumPy gives ``fn`` on arrays of the dtypes of ``a`` and ``b``."""
    try:
        return fn(np.zeros((1, 1), dtype=a.dtype), np.zeros((1, 1), dtype=b.dtype)).dtype.name
    except TypeError as err:
        raise TypeError(f"{opname}: unsupported dtypes {a} ({a.type}) and {b} ({b.type}): {err}") from None


def _check_inner(opname: str, a: Variable, b: Variable, ka: int | None, kb: int | None) -> None:
    if ka is not None and kb is not None and ka != kb:
        raise ValueError(
            f"{opname}: inner dimensions do not match: {a} ({a.type}) has {ka} columns, "
            f"{b} ({b.type}) has {kb} rows"
        )


def _grad_like(g: Variable, x: Variable) -> Variable:
    """The gradient ``g`` in ``x``'s dtype when ``x`` is real or complex."""
    if g.dtype != x.dtype and np.dtype(x.dtype).kind in "fc":
        return cast(g, x.dtype)
    return g


class Dot(Op):
    """``np.dot`` of two vectors or matrices (vector . vector gives a scalar).

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x, y = st.dvectors("x", "y")
    >>> float(st.dot(x, y).eval({x: np.array([1.0, 2.0]), y: np.array([3.0, 4.0])}))
    11.0
    """

    __props__ = ()

    def __str__(self) -> str:
        return "dot"

    def make_node(self, a: Any, b: Any) -> Apply:
        a, b = as_tensor_input(a, self, "a"), as_tensor_input(b, self, "b")
        for name, x in (("first", a), ("second", b)):
            if x.ndim not in (1, 2):
                raise TypeError(f"dot: the {name} input {x} ({x.type}) must be a vector or a matrix, has {x.ndim} "
                                "dimensions; use matmul for stacks of matrices")
        _check_inner("dot", a, b, a.type.shape[-1], b.type.shape[0])
        dtype = _product_dtype(np.dot, a, b, "dot")
        shape = a.type.shape[:-1] + b.type.shape[1:]
        return Apply(self, [a, b], [TensorType(dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        a, b = inputs
        if a.shape[-1] != b.shape[0]:
            raise ValueError(f"dot: inner dimensions of shapes {a.shape} and {b.shape} do not match")
        output_storage[0][0] = np.asarray(np.dot(a, b), dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        sa, sb = input_shapes
        return [tuple(sa[:-1]) + tuple(sb[1:])]

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        a, b = inputs
        (gz,) = output_grads
        if a.ndim == 1 and b.ndim == 1:
            ga, gb = gz * b, gz * a
        elif a.ndim == 2 and b.ndim == 1:
            ga, gb = outer(gz, b), dot(a.T, gz)
        elif a.ndim == 1:
            ga, gb = dot(b, gz), outer(a, gz)
        else:
            ga, gb = dot(gz, b.T), dot(a.T, gz)
        return [_grad_like(ga, a), _grad_like(gb, b)]

    def R_op(self, inputs, eval_points):  # noqa: N802
        a, b = inputs
        ea, eb = eval_points
        terms = [dot(ea, b) if ea is not None else None, dot(a, eb) if eb is not None else None]
        terms = [t for t in terms if t is not None]
        if not terms:
            return [None]
        return [terms[0] if len(terms) == 1 else terms[0] + terms[1]]


_dot = Dot()


def dot(a: Any, b: Any) -> Variable:
    """``np.dot``: a 0-d input multiplies; vectors and matrices give a :class:`Dot`; with more
    dimensions (Theano's ``T.dot`` of a 3-d ``x`` and a matrix ``W``, as in an LSTM), the sum
    over the last axis of ``a`` and the second-to-last axis of ``b`` (a :func:`tensordot`).

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> a = st.dmatrix("a")
    >>> st.dot(a, a).eval({a: np.array([[1.0, 2.0], [3.0, 4.0]])})
    array([[ 7., 10.],
           [15., 22.]])
    >>> x = st.tensor3("x")
    >>> st.dot(x, a).eval({x: np.ones((2, 3, 2)), a: np.array([[1.0, 2.0], [3.0, 4.0]])}).shape
    (2, 3, 2)
    """
    a, b = as_tensor_input(a, "dot", "a"), as_tensor_input(b, "dot", "b")
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.ndim > 2 or b.ndim > 2:
        return tensordot(a, b, axes=[[a.ndim - 1], [max(b.ndim - 2, 0)]])
    return _dot(a, b)


def _swap_last(x: Variable) -> Variable:
    """``x`` with its two last axes exchanged."""
    n = x.ndim
    return DimShuffle(n, (*range(n - 2), n - 1, n - 2))(x)


def _batch_shape(op: Op, a: Variable, b: Variable) -> StaticShape:
    """Broadcast static batch shape of two same-rank inputs (size-1 broadcasts)."""
    shape: list[int | None] = []
    for d, (sa, sb) in enumerate(zip(a.type.shape[:-2], b.type.shape[:-2])):
        if sa == 1 or sb == 1:
            shape.append(sb if sa == 1 else sa)
        elif sa is not None and sb is not None and sa != sb:
            raise ValueError(
                f"{op}: batch dimension {d} cannot broadcast: {a} ({a.type}) has size {sa}, {b} ({b.type}) has {sb}"
            )
        else:
            shape.append(sa if sa is not None else sb)
    return tuple(shape)


class MatMul(Op):
    """``np.matmul`` of two stacks of matrices of the same rank (at least 2).

    Batch dimensions broadcast only where the static size is 1; ``matmul``
    pads lower-rank inputs and handles vectors before building this op.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x = st.dtensor3("x")
    >>> y = st.matmul(x, x)
    >>> y.owner.op, y.type
    (MatMul, TensorType(float64, (?, ?, ?)))
    """

    __props__ = ()

    def make_node(self, a: Any, b: Any) -> Apply:
        a, b = as_tensor_input(a, self, "a"), as_tensor_input(b, self, "b")
        if a.ndim < 2 or b.ndim != a.ndim:
            raise TypeError(
                f"{self}: expects two inputs of the same rank (at least 2), received {a} ({a.type}) "
                f"and {b} ({b.type}); use matmul() for other ranks"
            )
        _check_inner(str(self), a, b, a.type.shape[-1], b.type.shape[-2])
        dtype = _product_dtype(np.matmul, a, b, str(self))
        shape = _batch_shape(self, a, b) + (a.type.shape[-2], b.type.shape[-1])
        return Apply(self, [a, b], [TensorType(dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        a, b = inputs
        ta, tb = (i.type.shape for i in node.inputs)
        for d in range(a.ndim - 2):
            if ta[d] != 1 and tb[d] != 1 and a.shape[d] != b.shape[d]:
                raise ValueError(
                    f"{self}: shapes {a.shape} and {b.shape} differ in batch dimension {d}; a size-1 "
                    "dimension broadcasts only when its static shape is 1"
                )
        if a.shape[-1] != b.shape[-2]:
            raise ValueError(f"{self}: inner dimensions of shapes {a.shape} and {b.shape} do not match")
        output_storage[0][0] = np.asarray(np.matmul(a, b), dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        a, b = node.inputs
        sa, sb = input_shapes
        out = []
        for d, size in enumerate(node.outputs[0].type.shape[:-2]):
            if size is not None:
                out.append(constant(size, dtype="int64"))
            else:
                out.append(sb[d] if a.type.shape[d] == 1 else sa[d])
        return [(*out, sa[-2], sb[-1])]

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        a, b = inputs
        (gz,) = output_grads
        grads = []
        for x, g in ((a, _matmul(gz, _swap_last(b))), (b, _matmul(_swap_last(a), gz))):
            summed = [d for d in range(x.ndim - 2) if x.type.shape[d] == 1 and g.type.shape[d] != 1]
            if summed:
                g = tsum(g, axis=summed, keepdims=True)
            grads.append(_grad_like(g, x))
        return grads


_matmul = MatMul()


def matmul(a: Any, b: Any) -> Variable:
    """``np.matmul`` (the ``@`` operator): matrix products broadcast over leading dimensions.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x = st.dtensor3("x")
    >>> v = st.dvector("v")
    >>> (x @ v).eval({x: np.ones((2, 3, 4)), v: np.arange(4.0)})
    array([[6., 6., 6.],
           [6., 6., 6.]])
    """
    a, b = as_tensor_input(a, "matmul", "a"), as_tensor_input(b, "matmul", "b")
    for name, x in (("first", a), ("second", b)):
        if x.ndim == 0:
            raise ValueError(f"matmul: the {name} input {x} ({x.type}) is 0-d; matmul needs at least 1 dimension")
    if a.ndim <= 2 and b.ndim <= 2:
        return _dot(a, b)
    a2 = DimShuffle(1, ("x", 0))(a) if a.ndim == 1 else a
    b2 = DimShuffle(1, (0, "x"))(b) if b.ndim == 1 else b
    ndim = max(a2.ndim, b2.ndim)
    a2, b2 = (DimShuffle(x.ndim, ("x",) * (ndim - x.ndim) + tuple(range(x.ndim)))(x) for x in (a2, b2))
    out = _matmul(a2, b2)
    if a.ndim == 1:
        out = DimShuffle(ndim, (*range(ndim - 2), ndim - 1))(out)
    if b.ndim == 1:
        out = DimShuffle(out.ndim, tuple(range(out.ndim - 1)))(out)
    return out


def outer(a: Any, b: Any) -> Variable:
    """Outer product of two vectors (0-d inputs count as vectors of one element).

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x, y = st.dvectors("x", "y")
    >>> st.outer(x, y).eval({x: np.array([1.0, 2.0]), y: np.array([1.0, 10.0, 100.0])})
    array([[  1.,  10., 100.],
           [  2.,  20., 200.]])
    """
    a, b = as_tensor_input(a, "outer", "a"), as_tensor_input(b, "outer", "b")
    for name, x in (("first", a), ("second", b)):
        if x.ndim > 1:
            raise TypeError(f"outer: the {name} input {x} ({x.type}) must be a vector, has {x.ndim} dimensions")
    column = DimShuffle(a.ndim, (*range(a.ndim), "x") if a.ndim else ("x", "x"))(a)
    row = DimShuffle(b.ndim, ("x", *range(b.ndim)) if b.ndim else ("x", "x"))(b)
    return column * row


def _normalize_tensordot_axes(a: Variable, b: Variable, axes: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if isinstance(axes, int | np.integer):
        if not 0 <= axes <= min(a.ndim, b.ndim):
            raise ValueError(f"tensordot: cannot sum over {axes} axes of {a} ({a.type}) and {b} ({b.type})")
        return tuple(range(a.ndim - axes, a.ndim)), tuple(range(axes))
    try:
        axes_a, axes_b = axes
    except (TypeError, ValueError):
        raise TypeError(f"tensordot: axes must be an int or a pair of axis lists, received {axes!r}") from None
    axes_a = (axes_a,) if isinstance(axes_a, int | np.integer) else tuple(axes_a)
    axes_b = (axes_b,) if isinstance(axes_b, int | np.integer) else tuple(axes_b)
    if len(axes_a) != len(axes_b):
        raise ValueError(f"tensordot: axes {axes_a} and {axes_b} have different lengths")
    axes_a = tuple(normalize_axis(d, a.ndim, "tensordot") for d in axes_a)
    axes_b = tuple(normalize_axis(d, b.ndim, "tensordot") for d in axes_b)
    if len(set(axes_a)) != len(axes_a) or len(set(axes_b)) != len(axes_b):
        raise ValueError(f"tensordot: repeated axis in {axes!r}")
    return axes_a, axes_b


class TensorDot(Op):
    """``np.tensordot(a, b, axes=(axes_a, axes_b))`` with explicit axis lists.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x = st.dtensor3("x")
    >>> y = st.dmatrix("y")
    >>> st.tensordot(x, y, axes=([1, 2], [0, 1])).eval({x: np.ones((2, 3, 4)), y: np.ones((3, 4))})
    array([12., 12.])
    """

    __props__ = ("axes_a", "axes_b")

    def __init__(self, axes_a: Sequence[int], axes_b: Sequence[int]) -> None:
        self.axes_a = tuple(int(d) for d in axes_a)
        self.axes_b = tuple(int(d) for d in axes_b)

    def _free(self, ndim: int, summed: tuple[int, ...]) -> list[int]:
        return [d for d in range(ndim) if d not in summed]

    def make_node(self, a: Any, b: Any) -> Apply:
        a, b = as_tensor_input(a, self, "a"), as_tensor_input(b, self, "b")
        for x, axes in ((a, self.axes_a), (b, self.axes_b)):
            if any(not 0 <= d < x.ndim for d in axes):
                raise ValueError(f"{self}: axes {axes} out of range for {x} ({x.type})")
        for da, db in zip(self.axes_a, self.axes_b):
            sa, sb = a.type.shape[da], b.type.shape[db]
            if sa is not None and sb is not None and sa != sb:
                raise ValueError(
                    f"{self}: summed axis {da} of {a} ({a.type}) has size {sa}, axis {db} of {b} ({b.type}) has {sb}"
                )
        dtype = _product_dtype(np.dot, a, b, "tensordot")
        shape = tuple(a.type.shape[d] for d in self._free(a.ndim, self.axes_a)) + tuple(
            b.type.shape[d] for d in self._free(b.ndim, self.axes_b)
        )
        return Apply(self, [a, b], [TensorType(dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        a, b = inputs
        out = np.tensordot(a, b, axes=(list(self.axes_a), list(self.axes_b)))
        output_storage[0][0] = np.asarray(out, dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        a, b = node.inputs
        sa, sb = input_shapes
        return [tuple(sa[d] for d in self._free(a.ndim, self.axes_a)) + tuple(
            sb[d] for d in self._free(b.ndim, self.axes_b)
        )]

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        a, b = inputs
        (gz,) = output_grads
        free_a, free_b = self._free(a.ndim, self.axes_a), self._free(b.ndim, self.axes_b)
        na = len(free_a)
        gz_a, gz_b = list(range(na, gz.ndim)), list(range(na))
        pair_a = dict(zip(self.axes_b, self.axes_a))  # summed axis of b -> its partner in a
        pair_b = dict(zip(self.axes_a, self.axes_b))
        # gz . b over b's free axes: a's free axes, then the partners of b's summed axes in b's order.
        ga = TensorDot(gz_a, free_b)(gz, b)
        ga_order = free_a + [pair_a[d] for d in sorted(self.axes_b)]
        ga = DimShuffle(a.ndim, tuple(ga_order.index(d) for d in range(a.ndim)))(ga)
        # a . gz over a's free axes: the partners of a's summed axes in a's order, then b's free axes.
        gb = TensorDot(free_a, gz_b)(a, gz)
        gb_order = [pair_b[d] for d in sorted(self.axes_a)] + free_b
        gb = DimShuffle(b.ndim, tuple(gb_order.index(d) for d in range(b.ndim)))(gb)
        return [_grad_like(ga, a), _grad_like(gb, b)]


def tensordot(a: Any, b: Any, axes: Any = 2) -> Variable:
    """``np.tensordot``: sum products over ``axes`` (an int, or a pair of axis lists)."""
    a, b = as_tensor_input(a, "tensordot", "a"), as_tensor_input(b, "tensordot", "b")
    axes_a, axes_b = _normalize_tensordot_axes(a, b, axes)
    return TensorDot(axes_a, axes_b)(a, b)


__all__ = ["Dot", "MatMul", "TensorDot", "dot", "matmul", "outer", "tensordot"]
