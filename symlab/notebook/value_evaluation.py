"""Evaluating a graph for the values view: every value and gradient at once, and where a NaN or inf is born.

The values are those of ``Variable.eval`` (each op's ``perform``), computed as lazily as the graph runs: a
branch not taken by an ``ifelse`` is not computed (:mod:`~symlab.notebook.inner_values`),
the gradients those of :func:`symlab.gradient.grad` (reverse mode, asked once for every variable on a path
from ``wrt`` to the cost, then evaluated with the values). A NaN or an infinity is *born* at a node whose
output has one while none of its inputs has (or at an input or constant holding one); the nodes it then
flows through *carry* it. Nothing here changes the graph.

>>> import symlab.tensor as st
>>> from symlab.notebook.value_arguments import ValuesGraph
>>> x = st.dscalar("x")
>>> graph = ValuesGraph(st.exp(st.log(x - 1)), "example")
>>> values, _, _ = evaluate_all(graph, {}, graph.read_inputs({x: 0.0}), "example")
>>> spread = NanSpread.find(graph, values)
>>> [str(node.op) for node in spread.origins], [str(node.op) for node in spread.carriers]
(['Elemwise{log,no_inplace}'], ['Elemwise{exp,no_inplace}'])
>>> spread.summary(values)
'NaN born at log((x - 1)), from (x - 1) = -1.0'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from symlab.graph.basic import Apply, Constant, Variable
from symlab.notebook.inner_values import Branch, SectionCache, evaluate_lazily
from symlab.notebook.value_arguments import ValuesGraph, short_name
from symlab.notebook.value_text import describe, has_nan_inf, nan_words, value_lines

__all__ = ["NanSpread", "evaluate_all", "gradient_graphs"]


def _discrete(var: Variable) -> bool:
    """Integer and boolean variables have no gradient."""
    dtype = getattr(var.type, "dtype", None)
    return dtype is not None and not str(dtype).startswith(("float", "complex"))


def gradient_graphs(graph: ValuesGraph, wrt: list[Variable]) -> tuple[dict[Variable, Variable], dict[Variable, str]]:
    """The gradient graph of every variable on a path from ``wrt`` to the cost, from one ``grad`` call; and why
    the others on such a path have none."""
    if not wrt:
        return {}, {}
    from symlab.gradient import grad
    from symlab.graph.null_type import NullType

    cost = graph.outputs[0]
    downstream = set(wrt)
    for node in graph.order:
        if any(i in downstream for i in node.inputs):
            downstream.update(node.outputs)
    used = {i for node in graph.order for i in node.inputs} | {cost}  # an unused output is on no path
    path = [v for v in graph.variables if v in downstream and v in used]
    no_grad = {v: "none: integer and boolean variables have no gradient" for v in path if _discrete(v)}
    path = [v for v in path if v not in no_grad]
    grads: dict[Variable, Variable] = {}
    if path:
        found = grad(cost, path, disconnected_inputs="ignore", null_gradients="return")
        for var, g in zip(path, found):
            if isinstance(g.type, NullType):
                no_grad[var] = f"none: {g.type.why}"
            else:
                grads[var] = g
    return grads, no_grad


def evaluate_all(graph: ValuesGraph, grads: dict[Variable, Variable], inputs: dict[Variable, Any], caller: str,
                 sections: SectionCache | None = None) -> tuple[dict[Variable, Any], dict[Variable, Any],
                                                               dict[Apply, Branch]]:
    """Every value the graph computes, every gradient, and what each branch node chose.

    The graph runs lazily, as it runs compiled (:func:`~symlab.notebook.inner_values.evaluate_lazily`): the
    nodes only a branch not taken needs are not computed, and have no value. The gradients reuse the values;
    a variable without a value gets no gradient (what computing it would need is computed apart, never shown
    as a value). An evaluation that fails raises the same kind of error, saying with which inputs (``caller``
    first).
    """
    try:
        run = evaluate_lazily(list(graph.outputs), inputs, sections)
        values = run.values
        wanted = {var: g for var, g in grads.items() if var in values}
        grad_run = evaluate_lazily(list(wanted.values()), inputs, sections, known=values) if wanted else None
    except Exception as err:
        given = ", ".join(f"{short_name(v)} = {' '.join(value_lines(val))}" for v, val in inputs.items())
        message = f"{caller}: evaluating the graph with {given} failed: {err}"
        try:
            again = type(err)(message)  # the same kind of error, saying with which inputs
        except Exception:  # an error class that wants other arguments
            again = RuntimeError(message)
        raise again from err
    known = set(graph.variables)
    values = {v: val for v, val in values.items() if v in known}
    for var in graph.variables:  # a constant holds its value, whichever branch reads it
        if isinstance(var, Constant) and var not in values:
            values[var] = var.data
    grad_values = {var: grad_run.values[g] for var, g in wanted.items()} if grad_run is not None else {}
    return values, grad_values, run.branches


@dataclass(frozen=True)
class NanSpread:
    """Where NaN or inf is in a graph's values: ``bad`` (the variables holding one), ``origins`` (where one is
    born: inputs and constants holding one, then Apply nodes none of whose inputs has one) and ``carriers``
    (the Apply nodes it flows through)."""

    bad: frozenset[Variable]
    origins: tuple[Apply | Variable, ...]
    carriers: tuple[Apply, ...]

    @classmethod
    def find(cls, graph: ValuesGraph, values: dict[Variable, Any]) -> NanSpread:
        """Where NaN or inf is born in ``values`` (no input has one) and where it flows."""
        bad = {v for v in graph.variables if v in values and any(has_nan_inf(values[v]))}
        origins: list[Any] = [v for v in graph.leaves if v in bad]
        origins += [v for v in graph.variables if isinstance(v, Constant) and v in bad]
        carriers: list[Any] = []
        for node in graph.order:
            if not any(o in bad for o in node.outputs):
                continue
            (carriers if any(i in bad for i in node.inputs) else origins).append(node)
        return cls(frozenset(bad), tuple(origins), tuple(carriers))

    def origin_text(self, origin: Apply | Variable, values: dict[Variable, Any]) -> str:
        """``NaN born at log((x - 1)), from (x - 1) = -1.0``: where, and from what."""
        if isinstance(origin, Variable):
            what = nan_words(values[origin])
            return f"{what} given as {'constant' if isinstance(origin, Constant) else 'input'} {describe(origin, 30)}"
        out = next(o for o in origin.outputs if o in self.bad)
        froms = [f"{describe(i, 30)} = {value_lines(values[i])[0]}" for i in origin.inputs[:3]]
        more = ", …" if len(origin.inputs) > 3 else ""
        return f"{nan_words(values[out])} born at {describe(out)}, from {', '.join(froms)}{more}"

    def summary(self, values: dict[Variable, Any]) -> str:
        """The first three origins in words (``""``: no NaN or inf anywhere)."""
        return "; ".join(self.origin_text(o, values) for o in self.origins[:3]) + (
            f"; and {len(self.origins) - 3} more" if len(self.origins) > 3 else "")

    def status(self, var: Variable, values: dict[Variable, Any]) -> str:
        """What the panel says of ``var``: ``none``, born here (and how), or carried from upstream."""
        if var not in self.bad:
            return "none"
        if var in self.origins:
            return f"born here: {self.origin_text(var, values)}"
        if var.owner is not None and var.owner in self.origins:
            return f"born here: {self.origin_text(var.owner, values)}"
        return f"{nan_words(values[var])}, carried from upstream"
