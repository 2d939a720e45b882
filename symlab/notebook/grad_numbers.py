"""The numbers of a backward pass: every value and every gradient of a :class:`~symlab.gradient.walk.GradWalk`.

micrograd writes a ``grad`` on every node as ``backward()`` reaches it. :class:`GradNumbers` gives the grad
stepper those numbers for grad's own walk: given a value for each input of the graph, it evaluates once (each
op's NumPy ``perform``, as the values view does, :func:`~symlab.notebook.value_evaluation.evaluate_all`)
every forward variable and every gradient variable the walk made, and answers what arrives at a step, what an
input receives, and the total gradient of a variable after any step. :meth:`GradNumbers.finite_difference`
checks a gradient against the cost itself: d cost / d var by central differences, the variable's value
perturbed element by element and everything downstream of it recomputed. Reading never changes the graph
(shared variables are read, never written; a random draw comes from a copy of its generator).

micrograd's neuron, ``o = tanh(x1*w1 + x2*w2 + b)``:

>>> import symlab.tensor as st
>>> from symlab.gradient.walk import GradWalk
>>> x1, x2, w1, w2, b = st.dscalars("x1", "x2", "w1", "w2", "b")
>>> n = x1 * w1 + x2 * w2 + b
>>> o = st.tanh(n)
>>> walk = GradWalk(o, [x1, x2, w1, w2, b])
>>> numbers = GradNumbers(walk, {x1: 2.0, x2: 0.0, w1: -3.0, w2: 1.0, b: 6.8813735870195432})
>>> numbers.text(numbers.value(o)), numbers.text(numbers.total(n, 1))
('0.7071', '0.5')
>>> [numbers.text(numbers.value(g)) for g in walk.results]
['-1.5', '0.5', '1.0', '0.0', '0.5']
>>> numbers.text(numbers.finite_difference(w1))
'1.0'
>>> numbers.arriving(walk.steps[0])  # the cost's gradient, 1, arrives at tanh
(array(1.),)

Bad values get the values view's errors:

>>> GradNumbers(walk, {"x1": 2.0, x2: 0.0, w1: -3.0, w2: 1.0})
Traceback (most recent call last):
ValueError: GradNumbers: inputs has no value for b (TensorType(float64, ())); every input of the graph needs one \
(received values for: x1, x2, w1, w2)
>>> GradNumbers(walk, {x1: 2.0, x2: 0.0, w1: -3.0, w2: 1.0, b: [6.9]})
Traceback (most recent call last):
TypeError: GradNumbers: inputs: bad value for input b: expected TensorType(float64, ()), received list [6.9] \
(TensorType(float64, ()) expected 0 dimensions, received 1 (an array of shape (1,)))
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from symlab.gradient.walk import Contribution, GradStep, GradWalk
from symlab.graph.basic import Constant, Variable
from symlab.graph.null_type import DisconnectedType, NullType
from symlab.notebook.inner_values import evaluate_lazily
from symlab.notebook.value_arguments import ValuesGraph, short_name
from symlab.notebook.value_evaluation import evaluate_all
from symlab.notebook.value_text import describe_value, generator_text, number_text

__all__ = ["ENTRIES_SHOWN", "GradNumbers"]

#: How many entries of an array :meth:`GradNumbers.text` writes after its shape.
ENTRIES_SHOWN = 3

_CALLER = "GradNumbers"


def _is_undefined(var: Variable) -> bool:
    """A gradient that cannot be computed (``NullType``) or that does not exist (``DisconnectedType``)."""
    return isinstance(var.type, NullType | DisconnectedType)


def _undefined_reason(var: Variable) -> str:
    if isinstance(var.type, NullType):
        return str(var.type.why)
    return "the output does not depend on it (a disconnected gradient)"


class GradNumbers:
    """Every value and gradient of ``walk``'s graph, evaluated once with ``values`` (``{input or its name: value}``).

    ``values`` needs a value for every input of the cost and of the gradients (a shared variable holds its own,
    which ``values`` may replace); a missing, unknown or badly typed input raises the values view's error, naming
    it, what was expected and what was received. Then :meth:`value` is the value of any forward or gradient
    variable of the walk, :meth:`arriving` the gradient arriving at a step's outputs, :meth:`received` what an
    input receives, :meth:`total` a variable's total gradient after step ``k``, all read from that one
    evaluation; :meth:`finite_difference` recomputes what is downstream of a variable. A gradient that cannot be
    computed (``NullType``: through ``floor``, ``argmax``) has the value None, and :meth:`undefined_reason` says
    why.
    """

    def __init__(self, walk: GradWalk, values: Mapping[Variable | str, Any]) -> None:
        if not isinstance(walk, GradWalk):
            raise TypeError(f"{_CALLER}: walk must be a GradWalk, received {describe_value(walk)}")
        self.walk = walk
        self.forward_outputs: list[Variable] = list(dict.fromkeys([*walk.seeds, *walk.wrt]))
        self.made = self._gradient_variables()
        self._undefined = {g: _undefined_reason(g) for g in self.made if _is_undefined(g)}
        targets = list(dict.fromkeys([*self.forward_outputs, *(g for g in self.made if g not in self._undefined)]))
        self.graph = ValuesGraph(targets, _CALLER)
        #: The input values, as each input's type holds them (``{input: value}``, in the graph's order).
        self.inputs = self.graph.read_inputs(values)
        self._values, _, _ = evaluate_all(self.graph, {}, self.inputs, _CALLER)
        self._downstream: dict[Variable, frozenset[Variable]] = {}

    # -- what the walk made ------------------------------------------------------------------------------------
    def _gradient_variables(self) -> list[Variable]:
        """Every gradient the walk speaks of: seeds, what arrives at each step, each contribution, the results."""
        walk = self.walk
        found: list[Variable] = list(walk.seeds.values())
        for step in walk.steps:
            found += [g for g in step.arriving if g is not None]
            for c in step.contributions:
                if not c.reason:
                    found += [g for g in (c.gradient, c.before, c.after) if g is not None]
        results = walk.results if isinstance(walk.results, list) else [walk.results]
        found += results
        found += walk.totals.values()
        return list(dict.fromkeys(found))

    # -- reading -----------------------------------------------------------------------------------------------
    def value(self, var: Variable) -> Any:
        """The value of ``var``, a forward or gradient variable of the walk (None for a gradient that is undefined).

        A variable the walk did not make nor evaluate raises a KeyError naming it.
        """
        if not isinstance(var, Variable):
            raise TypeError(f"{_CALLER}.value: expected a Variable of the walk, received {describe_value(var)}")
        if var in self._undefined:
            return None
        if var in self._values:
            return self._values[var]
        if var in self.graph.known:
            raise KeyError(f"{_CALLER}.value: {short_name(var)} has no value: it is needed only by a branch that "
                           "an ifelse did not take")
        raise KeyError(f"{_CALLER}.value: {short_name(var)} ({var.type}) is not a variable this walk made or "
                       "evaluated (not in the cost's graph, nor a gradient of the walk)")

    def undefined_reason(self, var: Variable) -> str:
        """Why the gradient ``var`` (or the total gradient of the forward variable ``var``) has no value; "" if it has.

        >>> import symlab.tensor as st
        >>> from symlab.gradient.walk import walk_of
        >>> x = st.dvector("x")
        >>> walk = walk_of((st.floor(x) * x).sum(), x)
        >>> numbers = GradNumbers(walk, {x: [0.5, 1.5]})
        >>> numbers.value(walk.results) is None
        True
        >>> numbers.undefined_reason(x).endswith("is undefined: it is not differentiable")
        True
        """
        if var in self._undefined:
            return self._undefined[var]
        total = self.walk.totals.get(var)
        if total is not None and total in self._undefined:
            return self._undefined[total]
        self.value(var)  # a KeyError for a variable that is not the walk's
        return ""

    def arriving(self, step: GradStep) -> tuple[Any, ...]:
        """The value of the total gradient arriving at each output of ``step``'s node (None where none arrives)."""
        self._check_step(step)
        return tuple(None if g is None else self.value(g) for g in step.arriving)

    def received(self, contribution: Contribution) -> Any:
        """The value of the gradient an input receives (None when it receives none, or an undefined one)."""
        if not isinstance(contribution, Contribution):
            raise TypeError(f"{_CALLER}.received: expected a Contribution of a step, received "
                            f"{describe_value(contribution)}")
        if contribution.gradient is None or contribution.reason:
            return None
        return self.value(contribution.gradient)

    def total(self, var: Variable, k: int) -> Any:
        """The value of ``var``'s total gradient once step ``k`` is done (0: the seeds only); None before any."""
        steps = len(self.walk.steps)
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or not 0 <= k <= steps:
            raise ValueError(f"{_CALLER}.total: k must be a step number from 0 to {steps}, received {k!r}")
        if not isinstance(var, Variable):
            raise TypeError(f"{_CALLER}.total: expected a Variable of the walk, received {describe_value(var)}")
        if var not in self.graph.known:
            raise KeyError(f"{_CALLER}.total: {short_name(var)} ({var.type}) is not a variable of this walk's graph")
        total = self.walk.total_after(var, int(k))
        return None if total is None else self.value(total)

    # -- checking against the cost -------------------------------------------------------------------------------
    def finite_difference(self, var: Variable, eps: float | None = None) -> np.ndarray:
        """d cost / d ``var`` by central differences, shaped like ``var``: each element of ``var``'s value is moved
        by ``±eps`` and everything downstream of ``var`` recomputed (``var`` may be an input or an intermediate
        variable, as micrograd's ``n.grad`` inside ``tanh(n)``). ``eps`` defaults to 1e-6 (1e-3 in float32).

        With ``known_grads`` as well as a cost, the differenced function is the one grad differentiates: the cost
        plus ``sum(g * y)`` for each known gradient ``g`` of ``y`` (``g`` held at its value). Without a cost there
        is nothing to difference: a ValueError says so.

        >>> import symlab.tensor as st
        >>> from symlab.gradient.walk import GradWalk
        >>> x = st.dvector("x")
        >>> square = x * x
        >>> numbers = GradNumbers(GradWalk(st.exp(square).sum(), x), {x: [0.5, -1.0]})
        >>> numbers.finite_difference(square).round(6).tolist(), numbers.total(square, 2).round(6).tolist()
        ([1.284025, 2.718282], [1.284025, 2.718282])
        """
        caller = f"{_CALLER}.finite_difference"
        var = self._forward(var, caller)
        if self.walk.cost is None:
            raise ValueError(f"{caller}: this walk has no cost (grad was given known_grads only), so there is no "
                             f"d cost / d {short_name(var)} to compute by finite differences")
        dtype = str(getattr(var.type, "dtype", ""))
        if not dtype.startswith("float"):
            what = f"a {dtype} variable" if dtype else f"not a tensor ({var.type})"
            raise ValueError(f"{caller}: {short_name(var)} is {what}: it has no gradient, so there is nothing to "
                             "difference; expected a float variable")
        step = (1e-6 if dtype == "float64" else 1e-3) if eps is None else float(eps)
        if not step > 0:
            raise ValueError(f"{caller}: eps must be a positive number, received {eps!r}")
        base = np.array(self._values[var], dtype=dtype, copy=True)
        downstream = self._downstream_of(var)
        known = {v: value for v, value in self._values.items() if v not in downstream}
        result = np.zeros(base.shape, dtype="float64")
        for index in np.ndindex(base.shape):
            plus, minus = base.copy(), base.copy()
            plus[index] += step
            minus[index] -= step
            moved = float(plus[index]) - float(minus[index])  # what the dtype kept of 2 * eps
            result[index] = (self._objective(var, plus, known) - self._objective(var, minus, known)) / moved
        return result.astype(dtype, copy=False)

    def _objective(self, var: Variable, value: np.ndarray, known: dict[Variable, Any]) -> float:
        """The function grad differentiates, with ``var`` set to ``value``: sum over the seeds of ``seed * y``."""
        seeds = self.walk.seeds
        run = evaluate_lazily(list(seeds), {var: value}, known=known)
        total = 0.0
        for y, seed in seeds.items():
            total += float(np.sum(np.asarray(self._values[seed], dtype="float64") *
                                  np.asarray(run.values[y], dtype="float64")))
        return total

    def _downstream_of(self, var: Variable) -> frozenset[Variable]:
        """``var`` and every variable computed from it (what a perturbation of it changes)."""
        found = self._downstream.get(var)
        if found is None:
            reached = {var}
            for node in self.graph.order:
                if any(i in reached for i in node.inputs):
                    reached.update(node.outputs)
            found = self._downstream[var] = frozenset(reached)
        return found

    def _forward(self, var: Any, caller: str) -> Variable:
        """``var`` if it is a forward variable of the walk that has a value, else a clear error."""
        if not isinstance(var, Variable):
            raise TypeError(f"{caller}: expected a Variable of the cost's graph, received {describe_value(var)}")
        if var in self._undefined or (var in self.graph.known and not self._is_forward(var)):
            raise ValueError(f"{caller}: {short_name(var)} is a gradient the walk made, not a variable of the "
                             "cost's graph; finite differences are taken in the forward graph")
        self.value(var)  # a KeyError for a variable that is not the walk's
        if isinstance(var, Constant):
            raise ValueError(f"{caller}: {short_name(var)} is a constant: the cost has no derivative in it")
        return var

    def _is_forward(self, var: Variable) -> bool:
        return var.owner is None or var.owner in self.walk.forward_nodes

    def _check_step(self, step: Any) -> None:
        if not isinstance(step, GradStep):
            raise TypeError(f"{_CALLER}: expected a GradStep of the walk, received {describe_value(step)}")
        if not any(s is step for s in self.walk.steps):
            raise KeyError(f"{_CALLER}: step {step.number} ({step.label}) is not a step of this walk")

    # -- writing -----------------------------------------------------------------------------------------------
    @staticmethod
    def text(value: Any) -> str:
        """A value in a few characters: a number in 4 significant digits, an array as its shape and first entries.

        >>> GradNumbers.text(0.70710678), GradNumbers.text(np.arange(6.0).reshape(2, 3)), GradNumbers.text(None)
        ('0.7071', '(2, 3) [0.0, 1.0, 2.0, …]', 'none')
        >>> GradNumbers.text(np.array([1.5, -2.0]))
        '(2,) [1.5, -2.0]'
        """
        if value is None:
            return "none"
        if isinstance(value, np.random.Generator):
            return generator_text(value)
        array = np.asarray(value)
        if array.dtype.kind not in "biufc":
            text = " ".join(repr(value).split())
            return text if len(text) <= 40 else text[:39] + "…"
        if array.ndim == 0:
            return number_text(array[()])
        entries = [number_text(x) for x in array.flat[:ENTRIES_SHOWN]]
        more = ", …" if array.size > ENTRIES_SHOWN else ""
        return f"{array.shape} [{', '.join(entries)}{more}]"

    def __repr__(self) -> str:
        given = ", ".join(f"{short_name(v)} = {self.text(value)}" for v, value in self.inputs.items())
        return f"<GradNumbers of {self.walk.cost} with {given or 'no inputs'}: {len(self._values)} values>"
