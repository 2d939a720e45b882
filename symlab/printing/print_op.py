"""``Print``: an op that prints its input's value each time the compiled function computes it.

Theano's and PyTensor's debugging op: ``Print(message)(x)`` is ``x`` (the same
value, passed through as a view), and computing it prints ``message``, then
each attribute named in ``attrs`` (called if it is a method) with its value.
The default prints ``str(value)``. ``global_fn(op, value)``, when given, is
called instead of printing.

>>> import numpy as np
>>> import symlab
>>> import symlab.tensor as st
>>> x = st.dvector("x")
>>> x_printed = Print("x is")(x)
>>> f = symlab.function([x], x_printed * 5, mode="NUMPY")
>>> f([1.0, 2.0]).tolist()
x is __str__ = [1. 2.]
[5.0, 10.0]
>>> g = symlab.function([x], Print("x", attrs=("shape", "sum"))(x).mean(), mode="NUMPY")
>>> float(g([1.0, 3.0]))
x shape = (2,)
x sum = 4.0
2.0

The gradient passes through it unchanged (and prints nothing). On the Numba
backend (the default mode) a ``Print`` node runs its Python ``perform``
between the compiled segments of the graph (printing needs the interpreter;
the linker says so once with a warning naming the op).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from symlab.graph.basic import Apply, Variable
from symlab.graph.op import Op
from symlab.graph.replace import register_vectorize


def print_attributes(op: Print, value: Any) -> None:
    """The default ``global_fn``: print ``op.message``, then each attribute of ``op.attrs`` with its value."""
    for attr in op.attrs:
        found = getattr(value, attr)
        shown = found() if callable(found) else found
        print(op.message, attr, "=", shown)


class Print(Op):
    """``Print(message, attrs=("__str__",), global_fn=print_attributes)(x)``: ``x``, printed when computed."""

    __props__ = ("message", "attrs", "global_fn")
    view_map = {0: [0]}

    def __init__(
        self,
        message: str = "",
        attrs: Sequence[str] = ("__str__",),
        global_fn: Callable[[Print, Any], Any] = print_attributes,
    ) -> None:
        if not isinstance(message, str):
            raise TypeError(f"Print: message must be a str, received {type(message).__name__} {message!r:.60}")
        if isinstance(attrs, str):
            raise TypeError(f"Print: attrs must be a sequence of attribute names, received the str {attrs!r}; "
                            f"write ({attrs!r},)")
        attrs = tuple(attrs)
        for attr in attrs:
            if not isinstance(attr, str):
                raise TypeError(f"Print: attrs must be attribute names (str), received {attr!r}")
        if not callable(global_fn):
            raise TypeError(f"Print: global_fn must be callable as global_fn(op, value), received {global_fn!r}")
        self.message = message
        self.attrs = attrs
        self.global_fn = global_fn

    def make_node(self, x: Any) -> Apply:
        if not isinstance(x, Variable):
            from symlab.tensor.basic import as_tensor_variable

            x = as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: Any) -> None:
        (value,) = inputs
        output_storage[0][0] = value
        self.global_fn(self, value)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: Sequence[Any]) -> list:
        return [input_shapes[0]]

    def L_op(self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:  # noqa: N802
        return list(output_grads)

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list:  # noqa: N802
        return list(eval_points)

    def do_constant_folding(self, fgraph: Any, node: Apply) -> bool:
        return False  # it must print when the function runs, not once while compiling

    def __str__(self) -> str:
        return f"Print{{{self.message}}}"


@register_vectorize(Print)
def _vectorize_print(op: Print, node: Apply, inputs: list[Variable], batch: list[int]) -> list[Variable]:
    """A batch passes through ``Print`` (:func:`symlab.graph.replace.vectorize_graph`): it prints the batch."""
    return op.make_node(*inputs).outputs


__all__ = ["Print", "print_attributes"]
