"""Evaluate a graph node by node with each op's ``perform`` (no compilation).

This is what ``Variable.eval`` uses: the slowest and simplest way to get a
value, and the reference the compiled backends are checked against.

>>> import symlab.tensor as st
>>> x = st.dvector("x")
>>> evaluate([x + 1], {x: [1.0, 2.0]})
[array([2., 3.])]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from symlab.graph.basic import Constant, MissingInputError, Variable, register_evaluator
from symlab.graph.traversal import graph_inputs, io_toposort

__all__ = ["MissingInputError", "evaluate"]


def evaluate(outputs: Sequence[Variable], inputs_to_values: Mapping[Any, Any]) -> list[Any]:
    """Values of ``outputs`` given ``{input_variable_or_name: value}``.

    Each value passes through its Variable's ``Type.filter``; an error names
    the input, the expected Type and what was received.
    """
    outputs = list(outputs)
    leaves = graph_inputs(outputs)
    by_name = {v.name: v for v in leaves if v.name is not None}
    values: dict[Variable, Any] = {}
    for key, value in inputs_to_values.items():
        var = by_name.get(key) if isinstance(key, str) else key
        if not isinstance(var, Variable):
            raise MissingInputError(
                f"eval: {key!r} is not an input of this graph; inputs are {[str(v) for v in leaves]}"
            )
        if isinstance(var, Constant):
            raise TypeError(f"eval: {var} is a Constant; it cannot be given a value")
        try:
            values[var] = var.type.filter(value)
        except TypeError as err:
            raise TypeError(
                f"eval: bad value for input {var} (expected {var.type}, received "
                f"{_describe(value)}): {err}"
            ) from None
    for node in io_toposort(list(values), outputs):
        args = [_value_of(inp, values) for inp in node.inputs]
        storage: list[list[Any]] = [[None] for _ in node.outputs]
        node.op.perform(node, args, storage)
        for out, cell in zip(node.outputs, storage):
            values[out] = cell[0]
    return [_value_of(out, values) for out in outputs]


# ``x.eval(...)`` is ``evaluate([x], ...)[0]``.
register_evaluator(evaluate)


def _value_of(var: Variable, values: dict[Variable, Any]) -> Any:
    if var in values:
        return values[var]
    if isinstance(var, Constant):
        return var.data
    get_value = getattr(var, "get_value", None)  # a shared variable holds its own value
    if get_value is not None:
        return get_value(borrow=True)
    raise MissingInputError(
        f"eval: the graph needs a value for input {var} ({var.type}), which was not given"
    )


def _describe(value: Any) -> str:
    dtype = getattr(value, "dtype", None)
    shape = getattr(value, "shape", None)
    if dtype is not None and shape is not None:
        return f"{type(value).__name__} of dtype {dtype} and shape {shape}"
    return f"{type(value).__name__} {value!r}"[:80]
