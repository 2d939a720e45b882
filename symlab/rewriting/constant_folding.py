"""Constant folding: a node whose inputs are all constants is replaced by its value.

The value is computed with the op's ``perform`` and becomes a constant of the
output's exact type. An op can refuse with ``do_constant_folding``:

>>> import symlab.tensor as T
>>> from symlab.graph.fg import FunctionGraph
>>> from symlab.rewriting.basic import in2out
>>> x = T.dvector("x")
>>> fg = FunctionGraph([x], [(T.constant(2.0) + 3.0) * x])
>>> trace = in2out(constant_folding).rewrite(fg)
>>> fg.outputs[0].owner.inputs[0], fg.outputs[0].owner.inputs[0].type
(TensorConstant{(1,) of 5.0}, TensorType(float64, (1,)))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Constant
from symlab.graph.fg import FunctionGraph
from symlab.rewriting.basic import node_rewriter


@node_rewriter(None)
def constant_folding(fgraph: FunctionGraph, node: Apply) -> list[Constant] | None:
    """All inputs are constants: replace the node by its value."""
    inputs = node.inputs
    for inp in inputs:
        if not isinstance(inp, Constant):
            return None
    if not node.op.do_constant_folding(fgraph, node):
        return None
    destroyed = {i for ins in node.op.destroy_map.values() for i in ins}
    # an op that writes into its inputs gets copies: constants are read-only
    values = [np.array(inp.data, copy=True) if k in destroyed else inp.data for k, inp in enumerate(inputs)]
    storage: list[list[Any]] = [[None] for _ in node.outputs]
    try:
        node.op.perform(node, values, storage)
        return [out.type.make_constant(_own(cell[0])) for out, cell in zip(node.outputs, storage)]
    except Exception:  # no perform, or a value the type refuses: leave the node to run time
        return None


def _own(value: Any) -> Any:
    """A copy of ``value`` if it is a view of another array (a constant must own its data)."""
    if isinstance(value, np.ndarray) and value.base is not None:
        return value.copy()
    return value
