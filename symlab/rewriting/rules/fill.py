"""Gradients made clean: the ``second`` (fill) that gradients introduce goes where shapes agree; useless
``Alloc`` goes.

``second(a, b)`` is ``b`` broadcast to the shape of ``a`` (the gradient of a
``sum`` is ``second(x, 1.0)``: ones of ``x``'s shape). Only ``a``'s shape is
read, never its values, so every rule here is exact, NaN and inf included:

- :func:`fill_useless`: ``second(a, b) -> b`` when ``b`` already has the
  result's type (same dtype, broadcasts no more: :func:`~symlab.rewriting.rules.table.fits`);
- :func:`fill_sink`: an elementwise op of a fill computes on the filled value
  and is filled afterwards, ``second(a, b) * c -> second(a, b * c)``, and not
  at all when ``c`` already gives the result's shape: ``second(a, 1.0) * c -> 1.0 * c``;
- :func:`fill_static_shape`: a constant filled to a shape known statically
  becomes that constant array (``Alloc``, then constant folding);
- :func:`useless_alloc`: ``Alloc(v, shape) -> v`` when ``v`` has the result's type;
- :func:`fill_to_alloc` (specialize): a fill whose model is computed only for its shape (``x - x`` of an
  expensive ``x``) becomes an ``Alloc`` of the shape inferred upstream, and the model is not computed.

The fill that remains is the one no other operand gives the shape of, kept as
``second`` (a shape-only op) where the shape is known only at run time:

>>> import symlab
>>> import symlab.tensor as T
>>> from symlab.rewriting import rewrite_graph
>>> x = T.dvector("x")
>>> g = symlab.grad(T.tanh(x).sum(), x)  # second(tanh(x), 1.0) * (1.0 - tanh(x) * tanh(x))
>>> out, trace = rewrite_graph(g, include=("canonicalize",))
>>> sorted({str(n.op.scalar_op) for n in trace.fgraph.toposort()})
['mul', 'sub', 'tanh']
>>> out, trace = rewrite_graph(symlab.grad(x.sum(), x), include=("canonicalize",))
>>> [str(n.op) for n in trace.fgraph.toposort()]
['Elemwise{second,no_inplace}']

``x - x`` is ``zeros_shaped_like(x)``, a fill, so that it vanishes in a sum
whose other terms give the shape (the ``sub_self`` row of
:mod:`~symlab.rewriting.rules.canonicalize`).
"""

from __future__ import annotations

from math import prod

import numpy as np

from symlab.graph.basic import Apply, Variable
from symlab.graph.fg import FunctionGraph
from symlab.rewriting.basic import node_rewriter
from symlab.rewriting.db import register
from symlab.rewriting.rules.shapes import _is_constant_tree, _lifted
from symlab.rewriting.rules.table import fits
from symlab.scalar.composite import Composite
from symlab.tensor import math as M
from symlab.tensor.alloc import Alloc, alloc
from symlab.tensor.basic import constant, get_scalar_constant_value
from symlab.tensor.elemwise import Elemwise

#: A constant is filled into a constant array of at most this many elements (constant folding copies it).
MAX_FOLDED_FILL = 10_000


def zeros_shaped_like(x: Variable) -> Variable:
    """Zeros of ``x``'s shape and dtype as a fill, ``second(x, 0)``: later rules drop it where the shape is given."""
    return M.second(x, constant(0, dtype=x.dtype))


def _is_fill(v: Variable) -> bool:
    return v.owner is not None and v.owner.op == M.second


def _neutral_other(op: Elemwise, inputs: list[Variable], k: int, b: Variable) -> Variable | None:
    """The other operand when ``b`` in place ``k`` changes nothing (``0 + c``, ``c - 0``, ``1 * c``), else None."""
    if len(inputs) != 2:
        return None
    try:
        value = get_scalar_constant_value(b)
    except ValueError:
        return None
    neutral = (op == M.add and value == 0) or (op == M.mul and value == 1) or (op == M.sub and k == 1 and value == 0)
    return inputs[1 - k] if neutral else None


@register("canonicalize", "fill")
@node_rewriter([M.second])
def fill_useless(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """second(a, b) -> b when b already has the shape and dtype of the result"""
    b = node.inputs[1]
    return [b] if fits(b, node.outputs[0]) else None


@register("canonicalize", "fill")
@node_rewriter([Elemwise])
def fill_sink(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """f(second(a, b), c) -> f(b, c), or second(a, f(b, c)) when only a gives the shape"""
    op = node.op
    if op == M.second or len(node.outputs) != 1 or isinstance(op.scalar_op, Composite) or op.inplace_pattern:
        return None
    fills = [k for k, i in enumerate(node.inputs) if _is_fill(i)]
    if not fills:
        return None
    out = node.outputs[0]
    unfilled = [i.owner.inputs[1] if k in fills else i for k, i in enumerate(node.inputs)]
    try:
        new = op(*unfilled)
    except (TypeError, ValueError):
        return None
    if fits(new, out):
        return [new]  # the other operands give the shape: the fills were only ones, zeros... broadcast
    # Sink one fill below this node: worth it only if nothing else reads the fill (no node is added).
    for k in fills:
        fill = node.inputs[k]
        if len(fgraph.clients[fill]) != 1:
            continue
        a, b = fill.owner.inputs
        for inner in (_neutral_other(op, node.inputs, k, b), None):
            try:
                if inner is None:
                    inner = op(*[b if j == k else i for j, i in enumerate(node.inputs)])
                wrapped = M.second(a, inner)
            except (TypeError, ValueError):
                continue
            # The filled value must keep the result's broadcast pattern (fusion then fuses it with its
            # neighbours, as it did the fill), be a constant (folded) or an operand (0 + c): a scalar-shaped
            # node would be one node more, which fusion cannot fuse with full-shaped ones.
            same_pattern = [n == 1 for n in inner.type.shape] == [n == 1 for n in out.type.shape]
            if fits(wrapped, out) and (same_pattern or _is_constant_tree(inner) or inner in node.inputs):
                return [wrapped]
    return None


@register("canonicalize", "fill")
@node_rewriter([M.second])
def fill_static_shape(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """second(a, c) -> the constant array c broadcast to a's shape, when that shape is known statically"""
    a, c = node.inputs
    out = node.outputs[0]
    shape = out.type.shape
    if None in shape or prod(shape) > MAX_FOLDED_FILL:
        return None
    if any(client != "output" and isinstance(client.op, Elemwise) for client, _ in fgraph.clients[out]):
        return None  # fill_sink's business: in a product or a sum the fill usually vanishes
    try:
        value = get_scalar_constant_value(c)
    except ValueError:
        return None
    new = alloc(constant(np.asarray(value, dtype=out.dtype)), *shape)
    return [new] if fits(new, out) else None


@register("specialize", "fill")
@node_rewriter([M.second])
def fill_to_alloc(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """second(a, b) -> Alloc(b, a's shape from upstream) when a is computed only for its shape"""
    a, b = node.inputs
    if a.owner is None:
        return None  # an input's shape costs nothing to read
    if any(client == "output" or client.op != M.second or i != 0 for client, i in fgraph.clients[a]):
        return None  # a is computed anyway
    shape = _lifted(a)
    if shape is None:
        return None
    new = alloc(b, *shape)
    return [new] if fits(new, node.outputs[0]) else None


@register("canonicalize", "fill", "shapes")
@node_rewriter([Alloc])
def useless_alloc(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """Alloc(v, shape) -> v when v already has the shape and dtype of the result"""
    v = node.inputs[0]
    out = node.outputs[0]
    if v.ndim != out.ndim:
        return None
    return [v] if fits(v, out) else None


__all__ = [
    "MAX_FOLDED_FILL",
    "fill_sink",
    "fill_static_shape",
    "fill_to_alloc",
    "fill_useless",
    "useless_alloc",
    "zeros_shaped_like",
]
