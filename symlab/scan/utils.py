"""``until``: the stopping condition a loop body may return (PyTensor's ``pytensor.scan.utils.until``).

A body that returns ``until(condition)`` after its outputs (and updates) makes the scan a *while* loop:
it stops after the first iteration whose condition is true, and ``n_steps`` is then the most it may run.

>>> import symlab
>>> import symlab.tensor as st
>>> x = st.dscalar("x")
>>> values, _ = symlab.scan(lambda v: (v * 2, until(v * 2 > 50)), outputs_info=x, n_steps=100)
>>> values.eval({x: 1.0}).tolist()
[2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
"""

from __future__ import annotations

from typing import Any

from symlab.graph.basic import Variable


class until:  # noqa: N801 (Theano's and PyTensor's name)
    """The condition that ends a scan's loop: true at an iteration, that iteration is the last one."""

    def __init__(self, condition: Any) -> None:
        from symlab.tensor.conversion import as_tensor_variable

        try:
            condition = as_tensor_variable(condition)
        except (TypeError, ValueError) as err:
            raise TypeError(f"until: the condition must be a scalar tensor, received {condition!r:.60} ({err})") from None
        if not isinstance(condition, Variable) or condition.type.ndim != 0:
            raise TypeError(f"until: the condition must be a scalar (0-d) tensor, received {condition.type}")
        self.condition = condition

    def __repr__(self) -> str:
        return f"until({self.condition})"


__all__ = ["until"]
