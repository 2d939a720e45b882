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

:func:`lift_reduced_size` counts the elements of an input, not of a computed
result: the ``mean`` of a loss divides by the count of its labels, and the
loss's value need not be computed for its gradient.

:func:`lift_stack_of_elemwise` stacks operands instead of results: the rows of
a Jacobian, ``stack([c0 * exp(z), c1 * exp(z), c2 * exp(z)])`` with constant
``c0, c1, c2``, become one product of the constant matrix and ``exp(z)``
broadcast along the new axis:

>>> z = T.tensor("float64", shape=(3,), name="z")
>>> out, trace = rewrite_graph(T.stack([z * 2.0, z * 3.0]), include=("canonicalize",))
>>> [str(n.op) for n in trace.fgraph.toposort()]
['DimShuffle{x,0}', 'Elemwise{mul,no_inplace}']

:func:`lift_dimshuffle_of_reciprocal_sum` writes the gradient of
``log(sum(exp(x)))``, ``exp(x) * (1 / sum(exp(x)))`` broadcast, as the
division the stabilize phase recognises as a softmax.
"""

from __future__ import annotations

import numpy as np

from symlab.graph.basic import Apply, Constant, Variable
from symlab.graph.fg import FunctionGraph
from symlab.graph.traversal import ancestors
from symlab.rewriting.basic import node_rewriter
from symlab.rewriting.db import register
from symlab.rewriting.rules.table import fits
from symlab.tensor import math as M
from symlab.tensor.basic import constant
from symlab.tensor.elemwise import DimShuffle, Elemwise
from symlab.tensor.joining import Join
from symlab.tensor.reduction import ReducedSize, Sum
from symlab.tensor.shape_inference import symbolic_shape
from symlab.tensor.shape_of import Shape, Shape_i


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
    from symlab.tensor.joining import stack

    return [stack(list(shape))]


@register("canonicalize", "shapes")
@node_rewriter([Shape_i])
def lift_shape_i(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """Shape_i(f(a, ...)) -> the size inferred from the shapes of a, ..."""
    shape = _lifted(node.inputs[0])
    if shape is None:
        return None
    return [shape[node.op.i]]


def _size_source(x: Variable, axes: tuple[int, ...]) -> tuple[Variable, tuple[int, ...]] | None:
    """A variable upstream of ``x`` with the same sizes on ``axes`` (its own axes returned), or None."""
    owner = x.owner
    if owner is None:
        return None
    if isinstance(owner.op, DimShuffle):
        order = owner.op.new_order
        if any(order[a] == "x" for a in axes):
            return None  # a size-1 axis: ``x``'s static shape says so, and constant folding answers
        return owner.inputs[0], tuple(sorted(int(order[a]) for a in axes))
    if isinstance(owner.op, Elemwise):
        # the output's size on an axis is that of every input not statically broadcastable there
        for inp in owner.inputs:
            if inp.ndim == x.ndim and all(inp.type.shape[a] != 1 for a in axes):
                return inp, axes
    return None


@register("canonicalize", "shapes")
@node_rewriter([ReducedSize])
def lift_reduced_size(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """ReducedSize(f(a, ...)) -> ReducedSize(a): count the elements of an input, not of a computed result"""
    (x,) = node.inputs
    axes = node.op.axis
    sizes = [x.type.shape[a] for a in axes]
    if None not in sizes:
        return [constant(np.prod(sizes, dtype="int64"), dtype="int64")]
    source = None
    while (found := _size_source(x, axes)) is not None:
        x, axes = found
        source = found
    if source is None:
        return None
    return [ReducedSize(axes)(x)]


# -- a stack of the same elementwise computation ---------------------------------------------------------


#: At most this many nodes of one part are lifted (a Jacobian's rows are small; a bound keeps the rule linear).
MAX_LIFTED_NODES = 64


def _stacked_part(v: Variable, axis: int) -> Variable | None:
    """``u`` if ``v`` is ``u`` with a new size-1 ``axis`` inserted (``DimShuffle{..., x, ...}``: what ``stack`` makes)."""
    owner = v.owner
    if owner is None or not isinstance(owner.op, DimShuffle):
        return None
    order = owner.op.new_order
    n = owner.op.input_ndim
    if order != tuple(range(axis)) + ("x",) + tuple(range(axis, n)):
        return None
    return owner.inputs[0]


def _is_constant_tree(v: Variable, limit: int = 32) -> bool:
    """True if ``v`` is a constant, or computed from constants only in at most ``limit`` nodes (constant
    folding makes it one)."""
    stack, seen = [v], set()
    while stack:
        u = stack.pop()
        if isinstance(u, Constant) or u in seen:
            continue
        if u.owner is None or len(seen) >= limit:
            return False
        seen.add(u)
        stack.extend(u.owner.inputs)
    return True


def _lift(parts: list[Variable], axis: int, budget: list[int]) -> Variable | None:
    """``stack(parts, axis)`` written as one elementwise computation on stacked operands, or None."""
    expand = DimShuffle(parts[0].ndim, tuple(range(axis)) + ("x",) + tuple(range(axis, parts[0].ndim)))
    first = parts[0]
    if all(p is first for p in parts):
        return expand(first)  # the same operand for every part: broadcast along the new axis
    if any(p.type != first.type for p in parts):
        return None
    if all(_is_constant_tree(p) for p in parts):
        return Join(axis)(*[expand(p) for p in parts])  # folded into one constant
    owners = [p.owner for p in parts]
    op = owners[0].op if owners[0] is not None else None
    if not isinstance(op, Elemwise) or len(owners[0].outputs) != 1 or op.inplace_pattern \
            or any(o is None or o.op != op for o in owners):
        return None
    budget[0] -= 1
    if budget[0] < 0:
        return None
    inputs = []
    for j in range(len(owners[0].inputs)):
        lifted = _lift([o.inputs[j] for o in owners], axis, budget)
        if lifted is None:
            return None
        inputs.append(lifted)
    return op(*inputs)


@register("canonicalize", "shapes")
@node_rewriter([Join])
def lift_stack_of_elemwise(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """stack([f(a, c1), f(a, c2), ...]) -> f(a, stack([c1, c2, ...])): one elementwise op on stacked operands"""
    axis = node.op.axis
    parts = [_stacked_part(v, axis) for v in node.inputs]
    if len(parts) < 2 or any(p is None for p in parts):
        return None
    if all(p is parts[0] for p in parts) or all(_is_constant_tree(p) for p in parts):
        return None  # nothing to share (a broadcast of one part would change the dtype or nothing), or folded
    new = _lift(parts, axis, [MAX_LIFTED_NODES])
    if new is None or not fits(new, node.outputs[0]):
        return None
    return [new]


@register("canonicalize", "shapes")
@node_rewriter([DimShuffle])
def lift_dimshuffle_of_reciprocal_sum(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """DimShuffle(c / sum(e)) -> c / DimShuffle(sum(e)): a division by a broadcast sum, as softmax is written"""
    (v,) = node.inputs
    owner = v.owner
    if owner is None or owner.op != M.true_div or v.ndim != 0 or len(fgraph.clients[v]) != 1:
        return None
    c, total = owner.inputs
    if not isinstance(c, Constant) or total.owner is None or not isinstance(total.owner.op, Sum):
        return None
    new = M.true_div(node.op(c), node.op(total))
    return [new] if fits(new, node.outputs[0]) else None


__all__ = [
    "MAX_LIFTED_NODES",
    "lift_dimshuffle_of_reciprocal_sum",
    "lift_reduced_size",
    "lift_shape",
    "lift_shape_i",
    "lift_stack_of_elemwise",
]
