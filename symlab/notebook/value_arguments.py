"""Reading what a values view is given: the outputs, a value for every input, the variables ``wrt`` names.

A :class:`ValuesGraph` is the graph a :class:`~symlab.notebook.values.ValuesView` computes: its outputs,
its Apply nodes in order, every variable once and the inputs that take values (the leaves that are not
constants). It reads what the user names in it, a variable or its name, and says plainly what is wrong:
which argument, what was expected, what was received.

>>> import symlab.tensor as st
>>> x, w = st.dscalar("x"), st.dscalar("w")
>>> graph = ValuesGraph(st.tanh(x * w), "ValuesView")
>>> [v.name for v in graph.leaves], len(graph.variables)
(['x', 'w'], 4)
>>> graph.read_inputs({"x": 2.0, w: 0.5})[x]
array(2.)
>>> graph.read_inputs({"x": 2.0})
Traceback (most recent call last):
ValueError: ValuesView: inputs has no value for w (TensorType(float64, ())); every input of the graph needs one (received values for: x)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from symlab.graph.basic import Apply, Constant, Variable
from symlab.notebook.value_text import describe, describe_value
from symlab.printing.folding import toposort

__all__ = ["ValuesGraph", "filter_value", "short_name"]


def short_name(var: Variable) -> str:
    """A variable as errors, controls and notes name it: :func:`describe` cut at about 30 characters."""
    return describe(var, 30)


def filter_value(var: Variable, value: Any, caller: str) -> Any:
    """``value`` as ``var``'s type holds it, or a TypeError naming the input, the expected and the received."""
    if isinstance(value, str | bytes):  # said plainly here (the browser's typed text is read before it comes here)
        raise TypeError(f"{caller}: bad value for input {short_name(var)}: expected {var.type} (a number or an "
                        f"array), received {describe_value(value)}")
    try:
        return var.type.filter(value)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{caller}: bad value for input {short_name(var)}: expected {var.type}, "
                        f"received {describe_value(value)} ({err})") from None


class ValuesGraph:
    """The graph of ``outputs`` (a Variable or a non-empty list of them), read once; ``caller`` starts its errors.

    ``order`` is its Apply nodes, inputs first; ``all_leaves`` what they read; ``variables`` every variable
    once (the leaves, then each node's outputs); ``leaves`` the leaves that take values (a shared variable
    holds its own but may be given one; constants take none).
    """

    def __init__(self, outputs: Variable | Any, caller: str) -> None:
        self.caller = caller
        self.outputs = _read_outputs(outputs, caller)
        self.order, self.all_leaves = toposort(list(self.outputs))
        self.variables = _variables(self.order, self.all_leaves)
        self.known = set(self.variables)
        self.leaves = [v for v in self.all_leaves if not isinstance(v, Constant)]

    # -- naming one --------------------------------------------------------------------------------------------
    def input(self, key: Any, caller: str) -> Variable:
        """The input of the graph ``key`` names: the variable itself or its name."""
        names = ", ".join(short_name(v) for v in self.leaves) or "none"
        if isinstance(key, str):
            found = [v for v in self.leaves if v.name == key]
            if len(found) == 1:
                return found[0]
            if found:
                raise ValueError(f"{caller}: {len(found)} inputs of this graph are named {key!r}; pass the variable")
            raise ValueError(f"{caller}: the graph has no input named {key!r}; its inputs are {names}")
        if not isinstance(key, Variable):
            raise TypeError(f"{caller}: an input is a Variable or its name, received {describe_value(key)}")
        if key in self.leaves:
            return key
        if isinstance(key, Constant):
            raise ValueError(f"{caller}: {short_name(key)} is a constant; it cannot be given a value")
        if key in self.known:
            raise ValueError(f"{caller}: {short_name(key)} is computed by the graph, not one of its inputs; "
                             f"its inputs are {names}")
        raise ValueError(f"{caller}: {short_name(key)} ({key.type}) is not an input of this graph; its inputs are "
                         f"{names}")

    def variable(self, target: Any, caller: str) -> Variable:
        """A variable of the graph: itself or its (unique) name."""
        if isinstance(target, str):
            found = [v for v in self.variables if v.name == target]
            if len(found) == 1:
                return found[0]
            if found:
                raise ValueError(f"{caller}: {len(found)} variables of this graph are named {target!r}; pass the "
                                 "variable")
            raise ValueError(f"{caller}: no variable of this graph is named {target!r}")
        if isinstance(target, Variable) and target in self.known:
            return target
        if isinstance(target, Variable):
            raise ValueError(f"{caller}: {short_name(target)} ({target.type}) is not a variable of this graph")
        raise TypeError(f"{caller}: expected a Variable of the graph or its name, received {describe_value(target)}")

    # -- the arguments ---------------------------------------------------------------------------------------------
    def read_inputs(self, inputs: Any) -> dict[Variable, Any]:
        """``{input variable or its name: value}`` as ``{input: filtered value}``, in the graph's order."""
        caller = self.caller
        if not isinstance(inputs, Mapping):
            raise TypeError(f"{caller}: inputs must be a dict {{input variable or its name: value}}, "
                            f"received {type(inputs).__name__}")
        given: dict[Variable, Any] = {}
        for key, value in inputs.items():
            var = self.input(key, f"{caller}: inputs")
            if var in given:
                raise ValueError(f"{caller}: inputs gives {short_name(var)} twice (as a variable and by its name)")
            given[var] = filter_value(var, value, f"{caller}: inputs")
        missing = [v for v in self.leaves if v not in given and not hasattr(v, "get_value")]
        if missing:
            wanted = ", ".join(f"{short_name(v)} ({v.type})" for v in missing)
            received = ", ".join(short_name(v) for v in given) or "none"
            raise ValueError(f"{caller}: inputs has no value for {wanted}; every input of the graph needs one "
                             f"(received values for: {received})")
        return self.in_order(given)

    def in_order(self, inputs: dict[Variable, Any]) -> dict[Variable, Any]:
        """``inputs`` in the graph's order of inputs."""
        return {v: inputs[v] for v in self.leaves if v in inputs}

    def read_wrt(self, wrt: Any) -> list[Variable]:
        """The variables (or names, or one of them) gradients start from; the cost must be one scalar output."""
        caller = self.caller
        if wrt is None:
            return []
        items = [wrt] if isinstance(wrt, Variable | str) else wrt
        try:
            items = list(items)
        except TypeError:
            raise TypeError(f"{caller}: wrt must be a Variable, its name or a list of them, received "
                            f"{describe_value(wrt)}") from None
        if len(self.outputs) != 1:
            raise ValueError(f"{caller}: wrt needs a single scalar cost, received {len(self.outputs)} outputs "
                             f"({', '.join(describe(o) for o in self.outputs)}); pass the cost alone as outputs")
        cost = self.outputs[0]
        if getattr(cost.type, "ndim", None) != 0:
            raise TypeError(f"{caller}: wrt needs a scalar (0-d) cost, received outputs {describe(cost)} of type "
                            f"{cost.type}; sum it (cost.sum()) or leave wrt out")
        chosen: list[Variable] = []
        for item in items:
            if isinstance(item, Variable) and item not in self.known:
                raise ValueError(f"{caller}: wrt {short_name(item)} ({item.type}) is not a variable of this graph; "
                                 f"expected one of its inputs ({', '.join(short_name(v) for v in self.leaves)}) or "
                                 "the variables computed from them")
            var = self.variable(item, f"{caller}: wrt")
            if var not in chosen:
                chosen.append(var)
        return chosen


def _read_outputs(outputs: Any, caller: str) -> tuple[Variable, ...]:
    items = [outputs] if isinstance(outputs, Variable) else outputs
    try:
        items = list(items)
    except TypeError:
        items = None
    if not items or not all(isinstance(v, Variable) for v in items):
        raise TypeError(f"{caller}: outputs must be a Variable or a non-empty list of Variables, received "
                        f"{describe_value(outputs)}")
    return tuple(items)


def _variables(order: list[Apply], leaves: list[Variable]) -> list[Variable]:
    """Every variable of the graph once: the leaves, then each node's outputs, inputs first."""
    seen: dict[Variable, None] = dict.fromkeys(leaves)
    for node in order:
        seen.update(dict.fromkeys(node.outputs))
    return list(seen)
