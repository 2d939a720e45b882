"""The walk ``grad`` makes, step by step: what it visits, what arrives, what each rule builds, where gradients add up.

Seed 003: ``grad`` traverses the graph from the cost back to the inputs through every apply node; each op
says how to turn the gradients of its outputs into gradients of its inputs; the chain rule composes them.
``grad`` tells an observer (:class:`GradObserver`) each of those moments as it happens, and
:class:`GradWalk` is the observer that writes them down: one :class:`GradStep` per apply node, in grad's
own order. Nothing is recomputed or imitated: the steps are grad's, and ``walk.results`` is the graph that
``grad`` returned.

>>> import symlab.tensor as st
>>> a, b = st.dscalars("a", "b")
>>> c = a * b
>>> cost = st.log(c + st.exp(a))
>>> walk = GradWalk(cost, [a, b])
>>> for step in walk.steps:
...     print(step)
1. log: the rule of Elemwise{log,no_inplace} gives 1 gradient
2. add: the rule of Elemwise{add,no_inplace} gives 2 gradients
3. exp: the rule of Elemwise{exp,no_inplace} gives 1 gradient
4. mul: the rule of Elemwise{mul,no_inplace} gives 2 gradients; a's gradients add up
>>> [str(summed.variable) for summed in walk.steps[-1].sums]
['a']

A step of an op without a gradient, or of a value no gradient reaches, says why:

>>> x = st.dvector("x")
>>> walk = GradWalk((st.floor(x) * x).sum(), x, null_gradients="return")
>>> print(walk.steps[-1])
3. floor: the rule of Elemwise{floor,no_inplace} gives 0 gradients; none for x: the gradient of \
Elemwise{floor,no_inplace} with respect to input 0 (x) is undefined: it is not differentiable
>>> walk.problems[0].startswith("grad: cannot differentiate with respect to x")
True
>>> print(GradWalk((st.cast(x * 2, "int64") * x).sum(), x).steps[-1])
4. mul: no gradient: no gradient reaches its outputs: its client Cast{int64} gets no gradient itself
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from symlab.gradient.reverse_mode import grad
from symlab.graph.basic import Apply, Variable
from symlab.graph.null_type import NullType
from symlab.graph.traversal import ancestors

__all__ = ["GradObserver", "GradStep", "GradWalk"]

#: What a refused gradient means, for each word ``grad`` gives (see ``reverse_mode._refusal``).
REFUSALS = {
    "constant": "held constant (consider_constant): no gradient flows through it",
    "discrete": "an integer or boolean value: it has no gradient",
    "off path": "no requested input is upstream of it: its gradient is not needed",
    "none": "the rule says the output does not depend on it",
    "disconnected": "the rule says the output does not depend on it (disconnected)",
}


class GradObserver:
    """What ``grad(..., observer=...)`` tells as it walks; every method does nothing here.

    The calls come in this order: ``start`` once; per apply node ``visit``, then either ``nothing_arrives``,
    or the ``contribution`` of a gradient that cannot be computed followed by ``undefined``, or ``rule``
    followed by a ``contribution`` or a ``refused`` for each input; ``finish`` once.
    """

    def start(self, seeds: dict[Variable, Variable], nodes: list[Apply], on_path: set[Variable],
              constants: set[Variable]) -> None:
        """The walk begins: ``seeds`` (the cost's gradient 1, and ``known_grads``), ``nodes`` in the order they will
        be visited, the variables ``on_path`` between the wrt and the cost, and those held constant."""

    def visit(self, node: Apply, arriving: list[Variable | None]) -> None:
        """``node`` is visited; ``arriving[i]`` is the total gradient of its output ``i`` (None: none reached it)."""

    def nothing_arrives(self, node: Apply) -> None:
        """No gradient reached any output of ``node``: its rule is not called."""

    def undefined(self, node: Apply, null: Variable) -> None:
        """A gradient that cannot be computed (a ``NullType``) reached ``node``: it passes on to its inputs."""

    def rule(self, node: Apply, out_grads: list[Variable], input_grads: list[Variable | None]) -> None:
        """The op's ``L_op`` turned ``out_grads`` (zeros where nothing arrived) into ``input_grads``."""

    def contribution(self, node: Apply, index: int, gradient: Variable, before: Variable | None,
                     total: Variable) -> None:
        """Input ``index`` of ``node`` receives ``gradient``; its total was ``before`` and is now ``total``."""

    def refused(self, node: Apply, index: int, gradient: Variable | None, reason: str) -> None:
        """Input ``index`` of ``node`` receives nothing: ``reason`` is a key of :data:`REFUSALS`."""

    def finish(self, wrt: list[Variable], results: list[Variable], problems: list[str]) -> None:
        """The walk ends: ``results[i]`` is the gradient of ``wrt[i]``; ``problems[i]`` what grad says about it
        ("" when there is a gradient)."""


@dataclass(frozen=True)
class Contribution:
    """What input ``index`` of a step's node received: ``gradient`` (None when refused), the total gradient of
    ``variable`` ``before`` and ``after`` it, and ``reason`` (a sentence) when it received nothing."""

    index: int
    variable: Variable
    gradient: Variable | None
    before: Variable | None = None
    after: Variable | None = None
    reason: str = ""

    @property
    def summed(self) -> bool:
        """Whether this gradient was added to one already there (the chain rule's sum over clients); not when the
        total was an undefined gradient, which stays as it was (``after is before``)."""
        return (self.before is not None and self.gradient is not None and self.after is not self.gradient
                and self.after is not self.before)

    @property
    def undefined(self) -> bool:
        return self.gradient is not None and isinstance(self.gradient.type, NullType)


@dataclass
class GradStep:
    """One apply node of grad's walk.

    ``number`` counts from 1 in grad's order; ``kind`` is ``"rule"`` (the op's rule ran), ``"undefined"`` (a
    gradient that cannot be computed passed through) or ``"nothing"`` (no gradient reached the node);
    ``arriving`` holds the total gradient of each output (None where none arrived), ``out_grads`` what the rule
    was given, ``input_grads`` what it returned, ``contributions`` what each input received, ``new_nodes`` the
    apply nodes this step added to the gradient graph (its rule's and its sums, in topological order), and
    ``why`` says why a step built nothing.
    """

    number: int
    node: Apply
    arriving: tuple[Variable | None, ...]
    kind: str = "nothing"
    out_grads: tuple[Variable, ...] = ()
    input_grads: tuple[Variable | None, ...] = ()
    contributions: list[Contribution] = field(default_factory=list)
    new_nodes: tuple[Apply, ...] = ()
    why: str = ""

    @property
    def sums(self) -> list[Contribution]:
        """The contributions added to a gradient already there: where the chain rule sums over clients."""
        return [c for c in self.contributions if c.summed]

    @property
    def label(self) -> str:
        """The op in a word (``mul``, ``dot``), as the pictures write it."""
        return op_label(self.node)

    def __str__(self) -> str:
        head = f"{self.number}. {self.label}: "
        if self.kind != "rule":
            return head + f"no gradient: {self.why}"
        given = sum(1 for c in self.contributions if c.gradient is not None and not c.reason and not c.undefined)
        text = head + f"the rule of {self.node.op} gives {given} gradient{'' if given == 1 else 's'}"
        summed = list(dict.fromkeys(str(c.variable) for c in self.sums))
        if summed:
            text += "; " + ", ".join(summed) + ("'s gradients add up" if len(summed) == 1 else ": their gradients add up")
        for c in self.contributions:
            if c.undefined:
                text += f"; none for {c.variable}: {c.gradient.type.why}"  # type: ignore[union-attr]
            elif c.gradient is not None and c.after is not None and c.after is c.before and not c.reason:
                text += f"; {c.variable}'s gradient stays undefined"
        return text


def op_label(node: Apply) -> str:
    """An apply node's op in a word: the scalar op of an elementwise op (``mul``), else the op's class (``Sum``)."""
    op = node.op
    scalar = getattr(op, "scalar_op", None)
    return str(getattr(scalar, "name", None) or type(op).__name__)


class GradWalk(GradObserver):
    """Run ``grad(cost, wrt, **options)`` and keep every step of its walk.

    ``steps`` (a list of :class:`GradStep`, in grad's order), ``seeds`` (the gradients the walk starts from:
    the cost's 1, and ``known_grads``), ``results`` (what ``grad`` returned, the same graph), ``problems`` (per
    wrt, what grad said, "" when it has a gradient), ``totals`` (each variable's final total gradient), and
    ``forward_nodes`` (the apply nodes that were there before the walk). ``options`` are grad's; with
    ``null_gradients="return"`` and ``disconnected_inputs="ignore"`` a walk that grad would refuse can be
    watched to the end, and ``problems`` says what grad would have said.
    """

    def __init__(self, cost: Variable | None, wrt: Variable | Sequence[Variable], **options: Any) -> None:
        self.cost = cost
        self.wrt: list[Variable] = [wrt] if isinstance(wrt, Variable) else list(wrt)
        self.steps: list[GradStep] = []
        self.seeds: dict[Variable, Variable] = {}
        self.totals: dict[Variable, Variable] = {}
        self.problems: list[str] = []
        self.order: list[Apply] = []
        self.on_path: set[Variable] = set()
        self.constants: set[Variable] = set()
        self._known: set[Apply] = set()
        self._why_none: dict[Variable, str] = {}  # why no gradient reaches a variable, as its clients said
        self._current: GradStep | None = None
        self.results: Variable | list[Variable] = grad(cost, wrt, observer=self, **options)

    # -- what grad tells ---------------------------------------------------------------------------------------
    def start(self, seeds: dict[Variable, Variable], nodes: list[Apply], on_path: set[Variable],
              constants: set[Variable]) -> None:
        self.seeds = dict(seeds)
        self.totals = dict(seeds)
        self.order = list(nodes)
        self.on_path = set(on_path)
        self.constants = set(constants)
        roots = [v for v in self.seeds] + list(self.wrt)
        self._known = {v.owner for v in ancestors(roots) if v.owner is not None}
        self.forward_nodes: frozenset[Apply] = frozenset(self._known)
        self._grow(list(self.seeds.values()))  # a known gradient's own graph is the caller's, not the walk's

    def visit(self, node: Apply, arriving: list[Variable | None]) -> None:
        self._current = GradStep(len(self.steps) + 1, node, tuple(arriving))
        self.steps.append(self._current)

    def nothing_arrives(self, node: Apply) -> None:
        step = self._step(node)
        step.why = "no gradient reaches its outputs" + self._blocked_outputs(node)
        for inp in node.inputs:
            self._why_none.setdefault(inp, f"its client {op_label(node)} gets no gradient itself")

    def undefined(self, node: Apply, null: Variable) -> None:
        step = self._step(node)
        step.kind = "undefined"
        step.why = str(null.type.why)

    def rule(self, node: Apply, out_grads: list[Variable], input_grads: list[Variable | None]) -> None:
        step = self._step(node)
        step.kind = "rule"
        step.out_grads = tuple(out_grads)
        step.input_grads = tuple(input_grads)

    def contribution(self, node: Apply, index: int, gradient: Variable, before: Variable | None,
                     total: Variable) -> None:
        step = self._step(node)
        variable = node.inputs[index]
        step.contributions.append(Contribution(index, variable, gradient, before, total))
        self.totals[variable] = total
        step.new_nodes += self._grow([total])

    def refused(self, node: Apply, index: int, gradient: Variable | None, reason: str) -> None:
        step = self._step(node)
        variable = node.inputs[index]
        step.contributions.append(Contribution(index, variable, gradient, reason=REFUSALS[reason]))
        self._why_none.setdefault(variable, f"its client {op_label(node)} passes none ({REFUSALS[reason]})")

    def finish(self, wrt: list[Variable], results: list[Variable], problems: list[str]) -> None:
        self.problems = list(problems)
        self._current = None

    # -- reading -----------------------------------------------------------------------------------------------
    @property
    def gradient_nodes(self) -> list[Apply]:
        """Every apply node the walk built, in the order the steps built them."""
        return [node for step in self.steps for node in step.new_nodes]

    def total_after(self, variable: Variable, number: int) -> Variable | None:
        """The total gradient of ``variable`` once step ``number`` is done (0: the seeds only); None before any."""
        total = self.seeds.get(variable)
        for step in self.steps[:number]:
            for c in step.contributions:
                if c.variable is variable and c.after is not None:
                    total = c.after
        return total

    def step_of(self, node: Apply) -> GradStep:
        """The step that visited ``node``."""
        for step in self.steps:
            if step.node is node:
                return step
        raise KeyError(f"GradWalk.step_of: {node} is not visited by this walk (it is not between wrt and cost)")

    def __repr__(self) -> str:
        wrt = ", ".join(str(w) for w in self.wrt)
        return f"<GradWalk of {self.cost} wrt {wrt}: {len(self.steps)} steps, {len(self.gradient_nodes)} new nodes>"

    # -- helpers -----------------------------------------------------------------------------------------------
    def _step(self, node: Apply) -> GradStep:
        step = self._current
        if step is None or step.node is not node:
            raise RuntimeError(f"GradWalk: grad told about {node} outside its visit (the observer protocol's order)")
        return step

    def _grow(self, variables: list[Variable]) -> tuple[Apply, ...]:
        """The apply nodes behind ``variables`` not seen before, in topological order; they become known."""
        found: list[Apply] = []
        stack = [v.owner for v in variables if v.owner is not None and v.owner not in self._known]
        while stack:
            node = stack[-1]
            if node in self._known:
                stack.pop()
                continue
            waiting = [i.owner for i in node.inputs if i.owner is not None and i.owner not in self._known]
            if waiting:
                stack.extend(waiting)
                continue
            stack.pop()
            self._known.add(node)
            found.append(node)
        return tuple(found)

    def _blocked_outputs(self, node: Apply) -> str:
        """Why the gradient stops before ``node``'s outputs, as their clients said (or because they are held constant)."""
        reasons = []
        for out in node.outputs:
            if out in self.constants:
                reasons.append(f"{out} is held constant (consider_constant)")
            elif out in self._why_none:
                reasons.append(self._why_none[out] if len(node.outputs) == 1 else f"{out}: {self._why_none[out]}")
        return ": " + "; ".join(reasons) if reasons else ""


def walk_of(cost: Variable | None, wrt: Variable | Sequence[Variable],
            known_grads: Mapping[Variable, Any] | None = None, **options: Any) -> GradWalk:
    """A :class:`GradWalk` that runs to the end whatever grad would refuse (``problems`` says what it would say).

    >>> import symlab.tensor as st
    >>> x = st.dvector("x")
    >>> walk_of((x * 2).sum(), x).steps[-1].kind
    'rule'
    """
    options.setdefault("null_gradients", "return")
    options.setdefault("disconnected_inputs", "ignore")
    return GradWalk(cost, wrt, known_grads=known_grads, **options)
