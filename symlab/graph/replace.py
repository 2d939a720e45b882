"""``vectorize_graph``: the same computation over a batch, from a graph written for one item.

``vectorize_graph(outputs, replace={core: batched})`` rebuilds the graph of
``outputs`` with each ``core`` input replaced by ``batched``, a variable with the
same trailing dimensions and extra leading (batch) dimensions, and returns the
batched outputs: each output gets the batch dimensions of the inputs it depends
on. Nodes that depend on no replaced input are kept as they are.

Each op says how it batches through a rule registered with
:func:`register_vectorize` (symlab's tensor ops register theirs in
:mod:`symlab.tensor.vectorize_rules`, which ``import symlab.tensor`` imports:
elementwise ops, ``DimShuffle``, reductions, ``argmax``/``argmin``,
``dot``/``matmul``, shapes). An op without a rule is refused with an error
naming it. A replacement given as a value (an array) becomes a variable
through the converter the same module registers
(:func:`register_value_converter`: ``as_tensor_variable``).

>>> import numpy as np
>>> import symlab.tensor as st
>>> x, W = st.dvector("x"), st.dmatrix("W")
>>> y = st.tanh(st.dot(x, W)).sum()
>>> X = st.dmatrix("X")                      # a batch of x, one per row
>>> Y = vectorize_graph(y, replace={x: X})
>>> Y.type
TensorType(float64, (?,))
>>> xs, w = np.arange(6.0).reshape(3, 2) / 10, np.ones((2, 2))
>>> np.allclose(Y.eval({X: xs, W: w}), [np.tanh(row @ w).sum() for row in xs])
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from symlab.graph.basic import Apply, Variable
from symlab.graph.traversal import io_toposort

#: ``rule(op, node, new_inputs, batch_ndims) -> new outputs``; ``batch_ndims[k]``: the batch
#: dimensions of ``new_inputs[k]`` (0 for an input the replacements do not reach).
VectorizeRule = Callable[[Any, Apply, list[Variable], list[int]], Sequence[Variable]]

_RULES: dict[type, VectorizeRule] = {}
#: ``convert(value) -> Variable``: how a replacement given as a value becomes a variable.
_value_converter: Callable[[Any], Variable] | None = None


class VectorizeError(NotImplementedError):
    """An op of the graph has no batched form (no rule registered for it)."""


def register_vectorize(*op_classes: type) -> Callable[[VectorizeRule], VectorizeRule]:
    """Decorator: ``@register_vectorize(MyOp)`` registers how a node of ``MyOp`` batches."""

    def decorate(rule: VectorizeRule) -> VectorizeRule:
        for cls in op_classes:
            _RULES[cls] = rule
        return rule

    return decorate


def register_value_converter(convert: Callable[[Any], Variable]) -> None:
    """Make ``vectorize_graph`` turn a replacement given as a value into ``convert(value)``.

    The tensor layer registers ``as_tensor_variable`` (:mod:`symlab.tensor.vectorize_rules`).
    """
    global _value_converter
    if not callable(convert):
        raise TypeError(f"register_value_converter expects a callable, received {type(convert).__name__}")
    _value_converter = convert


def _rule_for(op: Any) -> VectorizeRule | None:
    for cls in type(op).__mro__:
        rule = _RULES.get(cls)
        if rule is not None:
            return rule
    return None


def vectorize_node(node: Apply, new_inputs: list[Variable], batch_ndims: list[int]) -> list[Variable]:
    """The outputs of ``node`` computed on ``new_inputs``, which carry ``batch_ndims`` leading dimensions."""
    rule = _rule_for(node.op)
    if rule is None:
        raise VectorizeError(
            f"vectorize_graph: {node.op} ({type(node.op).__module__}.{type(node.op).__qualname__}) has no "
            f"batched form, and node {node} depends on a replaced input; register one with "
            "symlab.graph.replace.register_vectorize"
        )
    outputs = list(rule(node.op, node, new_inputs, batch_ndims))
    if len(outputs) != len(node.outputs):
        raise VectorizeError(f"vectorize_graph: the rule of {node.op} returned {len(outputs)} outputs, expected "
                             f"{len(node.outputs)}")
    return outputs


def vectorize_graph(
    outputs: Variable | Sequence[Variable], replace: Mapping[Variable, Variable]
) -> Variable | list[Variable]:
    """The batched ``outputs``: the graph rebuilt with ``replace``'s keys replaced by their values.

    Each value must have the dtype of its key and at least its dimensions: the extra leading ones
    are the batch. The answer has the form of ``outputs`` (a variable or a list).
    """
    single = isinstance(outputs, Variable)
    outs = [outputs] if single else list(outputs)
    for k, out in enumerate(outs):
        if not isinstance(out, Variable):
            raise TypeError(f"vectorize_graph: outputs[{k}] must be a Variable, received {type(out).__name__}")
    if not isinstance(replace, Mapping):
        raise TypeError(f"vectorize_graph: replace must be a dict {{core: batched}}, received {type(replace).__name__}")
    new: dict[Variable, Variable] = {}
    batch: dict[Variable, int] = {}
    for k, (core, batched) in enumerate(replace.items()):
        if not isinstance(core, Variable):
            raise TypeError(f"vectorize_graph: replace key {k} must be a Variable, received {type(core).__name__}")
        if not isinstance(batched, Variable):
            if _value_converter is None:
                raise TypeError(f"vectorize_graph: the replacement of {core} is a {type(batched).__name__}, not a "
                                "Variable, and no converter of values is registered (import symlab.tensor)")
            batched = _value_converter(batched)
        core_ndim, ndim = getattr(core.type, "ndim", 0), getattr(batched.type, "ndim", 0)
        if ndim < core_ndim or getattr(core.type, "dtype", None) != getattr(batched.type, "dtype", None):
            raise TypeError(
                f"vectorize_graph: {batched} ({batched.type}) cannot replace {core} ({core.type}): it needs the "
                f"dtype {getattr(core.type, 'dtype', None)} and at least {core_ndim} dimensions"
            )
        new[core] = batched
        batch[core] = ndim - core_ndim
    for node in io_toposort(list(replace), outs):
        if not any(i in new for i in node.inputs):
            continue
        inputs = [new.get(i, i) for i in node.inputs]
        ndims = [batch.get(i, 0) for i in node.inputs]
        if not any(ndims):
            results = node.op.make_node(*inputs).outputs  # replaced by same-shaped values: no batch
        else:
            results = vectorize_node(node, inputs, ndims)
        for old, result in zip(node.outputs, results, strict=True):
            new[old] = result
            batch[old] = result.type.ndim - old.type.ndim
    result = [new.get(o, o) for o in outs]
    return result[0] if single else result


__all__ = ["VectorizeError", "register_value_converter", "register_vectorize", "vectorize_graph", "vectorize_node"]
