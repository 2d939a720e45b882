"""Shape lifting: ``x.shape`` and ``Shape_i(x)`` computed from the shapes upstream, not from ``x``.

The shape of ``exp(a) @ b`` is ``(a.shape[0], b.shape[1])``: asking for it
must not compute the product. :func:`lift_shape` and :func:`lift_shape_i`
replace a shape query on a computed variable by
:func:`~symlab.tensor.shape_inference.symbolic_shape`, which uses each op's
``infer_shape``. They do nothing when ``x`` is a graph input or when some op
on the way cannot say its shape (the query would still read ``x``):

>>> import symlab.tensor as T
>>> from symlab.graph.traversal import ancestors
>>> from symlab.rewriting import rewrite_graph
>>> a, b = T.dmatrices("a", "b")
>>> out, trace = rewrite_graph(T.shape(T.exp(a) @ b), include=("canonicalize",))
>>> sorted({str(v.owner.op) for v in ancestors([out]) if v.owner is not None})
['DimShuffle{x}', 'Join{axis=0}', 'Shape_i{0}', 'Shape_i{1}']
>>> [s.rule for s in trace]
['lift_shape']
"""

from __future__ import annotations

import numpy as np

from symlab.graph.basic import Apply, Variable
from symlab.graph.fg import FunctionGraph
from symlab.graph.traversal import ancestors
from symlab.rewriting.basic import node_rewriter
from symlab.rewriting.db import register
from symlab.tensor.basic import constant
from symlab.tensor.shape import Shape, Shape_i
from symlab.tensor.shape_inference import symbolic_shape


def _lifted(x: Variable) -> tuple[Variable, ...] | None:
    """``x``'s shape from upstream shapes, or None if it would still read ``x`` (or ``x`` is a leaf)."""
    if x.owner is None:
        return None
    shape = symbolic_shape(x)
    if any(v is x for v in ancestors(list(shape))):
        return None
    return shape


@register("canonicalize", "shapes")
@node_rewriter([Shape])
def lift_shape(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """shape(f(a, ...)) -> the shape inferred from the shapes of a, ..."""
    shape = _lifted(node.inputs[0])
    if shape is None:
        return None
    if not shape:
        return [constant(np.zeros(0, dtype="int64"))]
    from symlab.tensor.join import stack

    return [stack(list(shape))]


@register("canonicalize", "shapes")
@node_rewriter([Shape_i])
def lift_shape_i(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """Shape_i(f(a, ...)) -> the size inferred from the shapes of a, ..."""
    shape = _lifted(node.inputs[0])
    if shape is None:
        return None
    return [shape[node.op.i]]


__all__ = ["lift_shape", "lift_shape_i"]
