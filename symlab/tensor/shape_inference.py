"""A variable's shape from its inputs' shapes alone, through each op's ``infer_shape``.

This is how ``x.shape`` can be known without computing ``x``: the shape of
``exp(a) @ b`` is ``(a.shape[0], b.shape[1])`` whatever the values.

>>> import symlab.tensor as st
>>> a, b = st.dmatrices("a", "b")
>>> rows, cols = symbolic_shape(st.exp(a) @ b)
>>> rows.owner.op, rows.owner.inputs[0] is a, cols.owner.inputs[0] is b
(Shape_i{0}, True, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from symlab.graph.basic import Constant, Variable
from symlab.graph.traversal import io_toposort
from symlab.tensor.basic import constant
from symlab.tensor.shape_of import shape_i
from symlab.tensor.type import TensorType

ShapeTuple = tuple[Variable, ...]


def symbolic_shape(
    var: Variable,
    stop_at: Sequence[Variable] = (),
    memo: dict[Variable, ShapeTuple] | None = None,
) -> ShapeTuple:
    """The shape of ``var`` as int64 scalars computed only from shapes upstream.

    The walk starts from the graph's leaves (or ``stop_at``, whose shapes are
    read directly) and asks each node's op for ``infer_shape``; an op that
    cannot answer has its output's shape read directly instead. ``memo``
    caches shapes between calls on the same graph.
    """
    memo = {} if memo is None else memo
    if var in memo:
        return memo[var]
    stops = set(stop_at)
    for node in io_toposort(list(stops), [var]):
        if all(o in memo for o in node.outputs):
            continue
        in_shapes = [memo.get(i) or _read_shape(i) for i in node.inputs]
        try:
            out_shapes = node.op.infer_shape(None, node, in_shapes)
        except NotImplementedError:
            out_shapes = [_read_shape(o) for o in node.outputs]
        for out, shp in zip(node.outputs, out_shapes):
            memo[out] = _checked(out, shp)
    if var not in memo:
        memo[var] = _read_shape(var)
    return memo[var]


def _read_shape(var: Variable) -> ShapeTuple:
    """``var``'s shape read from the variable itself (constants where the type knows it)."""
    if not isinstance(var.type, TensorType):
        return ()
    if isinstance(var, Constant):
        return tuple(constant(int(s), dtype="int64") for s in np.shape(var.data))
    return tuple(shape_i(var, d) for d in range(var.type.ndim))


def _checked(out: Variable, shape: Any) -> ShapeTuple:
    shape = tuple(shape)
    if isinstance(out.type, TensorType) and len(shape) != out.type.ndim:
        raise ValueError(
            f"{out.owner.op}.infer_shape returned {len(shape)} sizes for output {out} of {out.type.ndim} dimensions"
        )
    return shape


__all__ = ["symbolic_shape"]
