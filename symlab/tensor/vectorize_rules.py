"""How symlab's tensor ops batch, for :func:`symlab.graph.replace.vectorize_graph`.

Each rule receives the node, its new inputs and how many leading batch dimensions each
carries, and returns the node's outputs computed on the batch:

- elementwise ops broadcast: the batch dimensions simply lead (inputs of fewer dimensions
  are padded on the left, as ``Elemwise`` always does);
- ``DimShuffle`` keeps the batch dimensions in front and shifts its pattern;
- reductions (``sum``, ``max``..., ``argmax``, the size a ``mean`` divides by) shift their axes
  (an ``argmax`` over the whole of a tensor of several dimensions has no batched form);
- ``dot`` and ``matmul`` become a ``MatMul`` over the broadcast batch dimensions;
- ``shape`` and ``Shape_i`` give the core shape (they do not get batch dimensions).

(``Print``, an op of the printing layer above, registers its own rule.)

>>> import symlab.tensor as st
>>> from symlab.graph.replace import vectorize_graph
>>> v, M = st.dvector("v"), st.dmatrix("M")
>>> vectorize_graph(v.sum(), {v: M}).eval({M: [[1.0, 2.0], [3.0, 4.0]]}).tolist()
[3.0, 7.0]
"""

from __future__ import annotations

from typing import Any

from symlab.graph.basic import Apply, Variable
from symlab.graph.replace import VectorizeError, register_value_converter, register_vectorize
from symlab.tensor.basic import as_tensor_variable
from symlab.tensor.elemwise import DimShuffle, Elemwise
from symlab.tensor.products import Dot, MatMul
from symlab.tensor.reduction import ArgReduce, Reduce, ReducedSize
from symlab.tensor.shape_of import Shape, Shape_i

# A replacement given as an array becomes a tensor constant.
register_value_converter(as_tensor_variable)


def _pad(x: Variable, batch: int, target: int) -> Variable:
    """``x`` (with ``batch`` batch dimensions) with size-1 batch dimensions added in front, up to ``target``."""
    if batch == target:
        return x
    return DimShuffle(x.ndim, ("x",) * (target - batch) + tuple(range(x.ndim)))(x)


@register_vectorize(Elemwise)
def _elementwise(op: Any, node: Apply, inputs: list[Variable], batch: list[int]) -> list[Variable]:
    if op.inplace_pattern:
        op = Elemwise(op.scalar_op)  # the batched node is a new computation: nothing to overwrite
    return op.make_node(*inputs).outputs


@register_vectorize(DimShuffle)
def _dimshuffle(op: DimShuffle, node: Apply, inputs: list[Variable], batch: list[int]) -> list[Variable]:
    (x,), (b,) = inputs, batch
    order = tuple(range(b)) + tuple(e if e == "x" else e + b for e in op.new_order)
    return [DimShuffle(x.ndim, order)(x)]


@register_vectorize(Reduce, ReducedSize)
def _reduce(op: Any, node: Apply, inputs: list[Variable], batch: list[int]) -> list[Variable]:
    (x,), (b,) = inputs, batch
    core_ndim = node.inputs[0].ndim
    axes = tuple(range(core_ndim)) if op.axis is None else op.axis
    props = op._props_dict()
    props["axis"] = tuple(a + b for a in axes)
    return [type(op)(**props)(x)]


@register_vectorize(ArgReduce)
def _argreduce(op: ArgReduce, node: Apply, inputs: list[Variable], batch: list[int]) -> list[Variable]:
    (x,), (b,) = inputs, batch
    core_ndim = node.inputs[0].ndim
    if op.axis is None and core_ndim != 1:
        raise VectorizeError(
            f"vectorize_graph: {op} searches the flattened {core_ndim}-d {node.inputs[0]}; batched, the index "
            "would mix items (give it an axis)"
        )
    axis = (0 if op.axis is None else op.axis) + b
    return [type(op)(axis=axis)(x)]


@register_vectorize(Dot, MatMul)
def _product(op: Any, node: Apply, inputs: list[Variable], batch: list[int]) -> list[Variable]:
    (a, b), (ba, bb) = inputs, batch
    core_a, core_b = node.inputs[0].ndim, node.inputs[1].ndim
    if min(core_a, core_b) == 0:
        raise VectorizeError(f"vectorize_graph: {op} of a scalar ({node}) has no batched form here")
    if isinstance(op, Dot) and (core_a > 2 or core_b > 2):
        raise VectorizeError(f"vectorize_graph: {op} of tensors of more than 2 dimensions ({node}) is not batched")
    if core_a == 1:  # a row: (..., 1, n)
        a = DimShuffle(a.ndim, tuple(range(a.ndim - 1)) + ("x", a.ndim - 1))(a)
    if core_b == 1:  # a column: (..., n, 1)
        b = DimShuffle(b.ndim, tuple(range(b.ndim)) + ("x",))(b)
    extra_a, extra_b = ba + max(core_a - 2, 0), bb + max(core_b - 2, 0)
    width = max(extra_a, extra_b)
    out = MatMul()(_pad(a, extra_a, width), _pad(b, extra_b, width))
    keep = list(range(out.ndim))
    if core_a == 1:
        keep.remove(out.ndim - 2)
    if core_b == 1:
        keep.remove(out.ndim - 1)
    if len(keep) != out.ndim:
        out = DimShuffle(out.ndim, tuple(keep))(out)
    return [out]


@register_vectorize(Shape)
def _shape(op: Shape, node: Apply, inputs: list[Variable], batch: list[int]) -> list[Variable]:
    (x,), (b,) = inputs, batch
    return [op(x)[b:]]


@register_vectorize(Shape_i)
def _shape_i(op: Shape_i, node: Apply, inputs: list[Variable], batch: list[int]) -> list[Variable]:
    (x,), (b,) = inputs, batch
    return [Shape_i(op.i + b)(x)]


__all__: list[str] = []
