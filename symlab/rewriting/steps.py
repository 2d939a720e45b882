"""What a rewrite records: one :class:`RewriteStep` per rule application, and the records around it.

A :class:`~symlab.rewriting.trace.RewriteTrace` holds these records: the
steps (each with the graph's own events, :mod:`symlab.graph.changes`), the
rules tried on each node (:class:`Attempt`), what the rewriters reported
besides steps (:class:`TraceNote`), and how the trace was asked for
(:class:`RewriteRecipe`). Rules say where they are defined with a
:class:`SourceLocation`:

>>> import symlab.tensor as T
>>> from symlab.rewriting import rewrite_graph
>>> x = T.dvector("x")
>>> _, trace = rewrite_graph([x * (T.constant(2.0) + 3.0)], include=("fast_compile",))
>>> step = trace.steps[0]
>>> isinstance(step, RewriteStep), step.rule, step.accepted, [str(n.op) for n in step.removed]
(True, 'constant_folding', True, ['Elemwise{add,no_inplace}'])
>>> str(SourceLocation("rules.py", 12))
'rules.py:12'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from symlab.graph.basic import Apply, Variable
from symlab.graph.changes import GraphEvent, net_nodes

__all__ = [
    "UNKNOWN_LOCATION",
    "Attempt",
    "ReplayError",
    "RewriteRecipe",
    "RewriteStep",
    "RuleStats",
    "SourceLocation",
    "StepDiff",
    "TraceNote",
    "TraceSummary",
]


class SourceLocation(NamedTuple):
    """Where a rule is defined: ``file`` and ``line`` (``str()`` gives ``file:line``)."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


UNKNOWN_LOCATION = SourceLocation("<unknown>", 0)


@dataclass(eq=False, slots=True)
class RewriteStep:
    """One application of one rule.

    ``index`` counts from 1 in the trace; ``phase`` is the phase that ran the
    rule; ``rule`` its stable name and ``location`` its source. ``replacements``
    lists the ``(old, new)`` variables; ``removed`` and ``created`` the nodes
    that left and entered the graph (empty when the step was refused).
    ``reason`` says what the rule did, or why it was refused.
    """

    index: int
    phase: str
    rule: str
    location: SourceLocation
    replacements: list[tuple[Variable, Variable]]
    reason: str
    seconds: float
    accepted: bool
    #: The node the rule was applied to (``None`` for whole-graph rewriters).
    node: Apply | None = None
    #: What the step did to the graph, in order: the graph's typed events (:mod:`symlab.graph.changes`),
    #: empty for a refused step.
    events: list[GraphEvent] = field(default_factory=list, repr=False)

    @property
    def removed(self) -> list[Apply]:
        """The nodes this step took out of the graph."""
        return net_nodes(self.events)[0]

    @property
    def created(self) -> list[Apply]:
        """The nodes this step put into the graph."""
        return net_nodes(self.events)[1]

    def __str__(self) -> str:
        status = "accepted" if self.accepted else "REFUSED"
        pairs = ", ".join(f"{old} -> {new}" for old, new in self.replacements)
        return f"step {self.index} [{self.phase}] {self.rule} {status}: {pairs} ({self.reason})"


class TraceNote(NamedTuple):
    """Something a rewriter reports besides steps (e.g. it stopped at its bound)."""

    after_step: int
    phase: str
    rewriter: str
    message: str


class StepDiff(NamedTuple):
    """The nodes a step took out of the graph and put into it."""

    removed: list[Apply]
    added: list[Apply]


@dataclass
class RuleStats:
    """How often a rule was applied or refused and the time spent in it."""

    rule: str
    applied: int = 0
    refused: int = 0
    seconds: float = 0.0


class TraceSummary(list):
    """A list of :class:`RuleStats`, one per rule, in order of first use; prints as a table."""

    def as_dict(self) -> dict[str, RuleStats]:
        return {s.rule: s for s in self}

    def text(self) -> str:
        width = max([len("rule"), *(len(s.rule) for s in self)])
        lines = [f"{'rule':<{width}}  applied  refused  seconds"]
        for s in self:
            lines.append(f"{s.rule:<{width}}  {s.applied:>7}  {s.refused:>7}  {s.seconds:.6f}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text())


class Attempt(NamedTuple):
    """A rule tried on a node: ``outcome`` is ``"no match"``, ``"applied"`` or ``"refused"`` (then ``step`` is its step).

    ``after_step`` is the number of steps recorded before the attempt.
    """

    rule: str
    outcome: str
    after_step: int
    step: int | None = None


class ReplayError(RuntimeError):
    """The recorded steps cannot be replayed (the trace is incomplete)."""


class RewriteRecipe(NamedTuple):
    """How a trace was made (:func:`~symlab.rewriting.db.rewrite_fgraph` writes it): enough to rewrite again.

    ``rewrite`` is the function that made it, called again as ``rewrite(fgraph, include, exclude, db=db,
    max_use_ratio=max_use_ratio, record_attempts=True)`` by :meth:`RewriteTrace.record_attempts
    <symlab.rewriting.trace.RewriteTrace.record_attempts>`.
    """

    include: tuple[str, ...]
    exclude: tuple[str, ...]
    db: Any
    max_use_ratio: float
    rewrite: Callable[..., Any]
