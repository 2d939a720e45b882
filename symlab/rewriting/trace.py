"""The record of a rewrite: one :class:`RewriteStep` per rule application, and replay.

Every time a rule returns a replacement, the engine writes one step, accepted
or refused (with the reason), into a :class:`RewriteTrace`. The trace keeps a
copy of the graph as it was before the first step and, in each step, the edge
changes it made, so :meth:`RewriteTrace.graph_at` can rebuild the graph as it
stood after any step by replaying them on a fresh copy:

>>> import symlab.tensor as T
>>> from symlab.rewriting import rewrite_graph
>>> x = T.dvector("x")
>>> (out,), trace = rewrite_graph([x * (T.constant(2.0) + 3.0)], include=("fast_compile",))
>>> [(s.index, s.rule, s.accepted) for s in trace]
[(1, 'constant_folding', True), (2, 'constant_folding', True)]
>>> [str(n.op) for n in trace.graph_at(0).toposort()]
['Elemwise{add,no_inplace}', 'DimShuffle{x}', 'Elemwise{mul,no_inplace}']
>>> [str(n.op) for n in trace.graph_at(2).toposort()]
['Elemwise{mul,no_inplace}']
>>> print(trace.summary())  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
rule applied refused seconds
constant_folding 2 0 ...

Steps are numbered from 1: ``graph_at(0)`` is the starting graph,
``graph_at(k)`` the graph after step ``k``, ``graph_at(len(trace))`` the
final graph. A refused step leaves the graph as the step before it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from symlab.graph.basic import Apply, Constant, Variable
from symlab.graph.display import Displayable
from symlab.graph.fg import FunctionGraph


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
    #: What the step did to the graph, in order: ``("import", node, inputs)``,
    #: ``("change", node, i, old, new)`` and ``("prune", node)`` (what replay redoes).
    events: list[tuple[Any, ...]] = field(default_factory=list, repr=False)

    @property
    def removed(self) -> list[Apply]:
        """The nodes this step took out of the graph."""
        return _net_nodes(self.events)[0]

    @property
    def created(self) -> list[Apply]:
        """The nodes this step put into the graph."""
        return _net_nodes(self.events)[1]

    def __str__(self) -> str:
        status = "accepted" if self.accepted else "REFUSED"
        pairs = ", ".join(f"{old} -> {new}" for old, new in self.replacements)
        return f"step {self.index} [{self.phase}] {self.rule} {status}: {pairs} ({self.reason})"


def _net_nodes(events: list[tuple[Any, ...]]) -> tuple[list[Apply], list[Apply]]:
    """(removed, created): where each node imported or pruned by ``events`` ended up."""
    state: dict[Apply, bool] = {}  # node -> in the graph after the events
    was_in: dict[Apply, bool] = {}  # node -> in the graph before them
    for event in events:
        kind = event[0]
        if kind == "change":
            continue
        node = event[1]
        inside = kind == "import"
        was_in.setdefault(node, not inside)
        state[node] = inside
    removed = [n for n, inside in state.items() if was_in[n] and not inside]
    created = [n for n, inside in state.items() if not was_in[n] and inside]
    return removed, created


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


class ReplayError(RuntimeError):
    """The recorded steps cannot be replayed (the trace is incomplete)."""


class RewriteTrace(Displayable):
    """The steps of a rewrite and the graph they started from.

    ``trace.steps`` (also ``iter(trace)``, ``len(trace)``), ``trace.step(k)``,
    ``trace.graph_at(k)``, ``trace.diff(k)``, ``trace.summary()``,
    ``trace.notes`` (things rewriters reported, like stopping at a bound),
    ``trace.start`` (a copy of the starting graph) and ``trace.fgraph`` (the
    graph that was rewritten).
    """

    def __init__(self, fgraph: FunctionGraph) -> None:
        self.fgraph = fgraph
        # The starting graph is kept as its edges (each node with its inputs), which is
        # all replay needs and far cheaper than a copy; the copy is built when asked for.
        self._start_inputs = list(fgraph.inputs)
        self._start_outputs = list(fgraph.outputs)
        self._start_nodes = {node: tuple(node.inputs) for node in fgraph._nodes}
        self._start: FunctionGraph | None = None
        self.steps: list[RewriteStep] = []
        self.notes: list[TraceNote] = []
        #: Time spent in attempts that returned no replacement, per rule.
        self.idle_seconds: dict[str, float] = {}

    @property
    def start(self) -> FunctionGraph:
        """A copy of the graph as it was before the first step."""
        if self._start is None:
            self._start = self._build_start()[0]
        return self._start

    def _build_start(self) -> tuple[FunctionGraph, dict[Any, Any]]:
        """A fresh copy of the starting graph and the map from the live graph's objects to it."""
        memo: dict[Any, Any] = {"output": "output"}
        for inp in self._start_inputs:
            memo[inp] = inp.clone()
        for node in _snapshot_order(self._start_nodes):
            new_inputs = []
            for v in self._start_nodes[node]:
                new = memo.get(v)
                if new is None:
                    new = memo[v] = v.clone()  # a constant
                new_inputs.append(new)
            new_node = Apply(node.op, new_inputs, [o.clone() for o in node.outputs])
            new_node.tag.update(node.tag)
            memo[node] = new_node
            for old_out, new_out in zip(node.outputs, new_node.outputs):
                memo[old_out] = new_out
        outputs = []
        for out in self._start_outputs:
            if out not in memo:
                memo[out] = out.clone()  # a constant output
            outputs.append(memo[out])
        fg = FunctionGraph([memo[i] for i in self._start_inputs], outputs, clone=False)
        return fg, memo

    # -- sequence ------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.steps)

    def __iter__(self) -> Iterator[RewriteStep]:
        return iter(self.steps)

    def step(self, k: int) -> RewriteStep:
        """The step of index ``k`` (from 1)."""
        if not 1 <= k <= len(self.steps):
            raise IndexError(f"step {k} does not exist: the trace has steps 1..{len(self.steps)}")
        return self.steps[k - 1]

    @property
    def accepted(self) -> list[RewriteStep]:
        return [s for s in self.steps if s.accepted]

    @property
    def refused(self) -> list[RewriteStep]:
        return [s for s in self.steps if not s.accepted]

    # -- replay ----------------------------------------------------------------------------
    def replay(self, k: int) -> tuple[FunctionGraph, dict[Any, Any]]:
        """The graph after step ``k`` and the map from the live graph's objects to its own.

        Built from a fresh copy of the starting graph by redoing the edge
        changes of the accepted steps ``1..k``.
        """
        if not 0 <= k <= len(self.steps):
            raise IndexError(f"graph_at({k}): the trace has steps 1..{len(self.steps)} (0 is the start)")
        fg, memo = self._build_start()
        for step in self.steps[:k]:
            if step.accepted:
                _replay_events(fg, step, memo)
        return fg, memo

    def graph_at(self, k: int) -> FunctionGraph:
        """The graph as it stood after step ``k`` (``0``: before the first step)."""
        return self.replay(k)[0]

    def diff(self, k: int) -> StepDiff:
        """The nodes step ``k`` removed from the graph and added to it."""
        step = self.step(k)
        return StepDiff(list(step.removed), list(step.created))

    # -- statistics -----------------------------------------------------------------------------
    def summary(self) -> TraceSummary:
        """Applications, refusals and seconds per rule (time of fruitless attempts included)."""
        stats: dict[str, RuleStats] = {}
        for step in self.steps:
            s = stats.setdefault(step.rule, RuleStats(step.rule))
            if step.accepted:
                s.applied += 1
            else:
                s.refused += 1
            s.seconds += step.seconds
        for rule, seconds in self.idle_seconds.items():
            stats.setdefault(rule, RuleStats(rule)).seconds += seconds
        return TraceSummary(stats.values())

    def __str__(self) -> str:
        lines = [f"RewriteTrace: {len(self.accepted)} applied, {len(self.refused)} refused"]
        lines.extend(str(s) for s in self.steps)
        lines.extend(f"note after step {n.after_step} [{n.phase}] {n.rewriter}: {n.message}" for n in self.notes)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<RewriteTrace of {len(self.steps)} steps>"


def _snapshot_order(snapshot: dict[Apply, tuple[Variable, ...]]) -> list[Apply]:
    """The nodes of ``{node: inputs}`` ordered so that each comes after the nodes it uses."""
    order: list[Apply] = []
    done: set[Apply] = set()
    for root in snapshot:
        if root in done:
            continue
        stack = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if node in done:
                continue
            if expanded:
                done.add(node)
                order.append(node)
                continue
            stack.append((node, True))
            for v in reversed(snapshot[node]):
                owner = v.owner
                if owner is not None and owner in snapshot and owner not in done:
                    stack.append((owner, False))
    return order


def _replay_events(fg: FunctionGraph, step: RewriteStep, memo: dict[Any, Any]) -> None:
    def resolve(var: Variable) -> Variable:
        got = memo.get(var)
        if got is not None:
            return got
        if isinstance(var, Constant):
            return var  # constants are immutable and may be shared between graphs
        raise ReplayError(f"step {step.index} ({step.rule}) uses {var}, which the trace never saw created")

    for event in step.events:
        kind = event[0]
        if kind == "prune":
            continue  # replaying the changes prunes the same nodes
        if kind == "import":
            _, node, inputs = event
            if node in memo:
                continue
            new_node = Apply(node.op, [resolve(v) for v in inputs], [o.clone() for o in node.outputs])
            new_node.tag.update(node.tag)
            memo[node] = new_node
            for old_out, new_out in zip(node.outputs, new_node.outputs):
                memo[old_out] = new_out
        else:
            _, node, i, old, new = event
            target = memo.get(node)
            if target is None:
                raise ReplayError(f"step {step.index} ({step.rule}) changes {node}, unknown to the trace")
            # The change was checked (types, cycles) when it was made on the live graph.
            fg._change_input(target, i, resolve(old), resolve(new), step.rule)
