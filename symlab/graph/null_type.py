"""Types for gradients that do not exist: ``NullType`` and ``DisconnectedType``.

An op that cannot differentiate with respect to an input returns a
``NullType`` variable carrying the reason. ``symlab.grad`` raises that reason
only if such a gradient would reach the requested answer.

>>> from symlab.graph.null_type import NullType
>>> NullType("argmax is not differentiable")()
<NullType: argmax is not differentiable>
"""

from __future__ import annotations

from typing import Any

from symlab.graph.basic import Variable
from symlab.graph.type import Type


class NullType(Type):
    """The type of an undefined gradient; ``why`` says why it is undefined."""

    __props__ = ("why",)

    def __init__(self, why: str = "(no explanation given)") -> None:
        self.why = why

    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        raise ValueError(f"No values may be assigned to a NullType ({self.why})")

    def __repr__(self) -> str:
        return f"NullType: {self.why}"


class DisconnectedType(Type):
    """The type of the gradient of an output that does not depend on an input."""

    __props__ = ()

    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        raise ValueError("No values may be assigned to a DisconnectedType")

    def __repr__(self) -> str:
        return "DisconnectedType"


def grad_undefined(op: Any, index: int, variable: Variable, why: str = "") -> Variable:
    """A NullType variable saying that ``op``'s gradient w.r.t. input ``index`` is undefined."""
    reason = f"the gradient of {op} with respect to input {index} ({variable}) is undefined"
    return NullType(f"{reason}: {why}" if why else reason)()


def disconnected() -> Variable:
    """A DisconnectedType variable: this input does not influence the output."""
    return DisconnectedType()()
