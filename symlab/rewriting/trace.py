"""The record of a rewrite: one :class:`RewriteStep` per rule application, and replay.

Every time a rule returns a replacement, the engine writes one step, accepted
or refused (with the reason), into a :class:`RewriteTrace`. The trace keeps
the edges of the graph as it was before the first step and, in each step, the
graph's own events (:mod:`symlab.graph.changes`), so :meth:`RewriteTrace.graph_at`
can rebuild the graph as it stood after any step, and a
:class:`~symlab.rewriting.cursor.TraceCursor` can walk the steps forward and
backward, each move costing what that step changed:

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

Every node and variable the trace ever saw has a *key*, stable across all
its steps: the key the rewritten graph gave it (``fgraph.key``), ``a<n>``
for a node and ``v<n>`` for a variable. "The same node" means the same
object of the rewritten graph: a node no step touched keeps its key at every
step; a rule that rebuilds a node, even with the same op and inputs, makes a
new node with a new key (the old one is removed), and so does an inplace
step (a new node with an inplace op). A node whose input a step changed is
still the same node, with the same key.

>>> cursor = trace.cursor()
>>> mul = [n for n in cursor.fgraph.toposort() if str(n.op) == "Elemwise{mul,no_inplace}"][0]
>>> key = cursor.key(mul)
>>> cursor.forward(); cursor.forward()
>>> cursor.position, cursor.key(cursor.object(key)) == key, trace.key(trace.fgraph.outputs[0].owner) == key
(2, True, True)

Reading a trace (replaying, stepping, drawing) never changes the rewritten
graph or any object of it: the replays are made of copies.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from symlab.graph.basic import Apply, Variable
from symlab.graph.changes import GraphEvent, NodeImported, VariableImported
from symlab.graph.destroyhandler import DestroyHandler
from symlab.graph.display import Displayable, register_graph_holder
from symlab.graph.fg import FunctionGraph
from symlab.rewriting.cursor import TraceCursor
from symlab.rewriting.steps import (
    UNKNOWN_LOCATION,
    Attempt,
    ReplayError,
    RewriteRecipe,
    RewriteStep,
    RuleStats,
    SourceLocation,
    StepDiff,
    TraceNote,
    TraceSummary,
)

__all__ = [
    "UNKNOWN_LOCATION",
    "Attempt",
    "ReplayError",
    "RewriteRecipe",
    "RewriteStep",
    "RewriteTrace",
    "RuleStats",
    "SourceLocation",
    "StepDiff",
    "TraceNote",
    "TraceSummary",
]


class RewriteTrace(Displayable):
    """The steps of a rewrite and the graph they started from.

    ``trace.steps`` (also ``iter(trace)``, ``len(trace)``), ``trace.step(k)``,
    ``trace.graph_at(k)``, ``trace.cursor()``, ``trace.diff(k)``,
    ``trace.key(obj)``, ``trace.summary()``, ``trace.notes`` (things
    rewriters reported, like stopping at a bound), ``trace.start`` (a copy
    of the starting graph) and ``trace.fgraph`` (the graph that was
    rewritten).
    """

    def __init__(self, fgraph: FunctionGraph) -> None:
        self.fgraph = fgraph
        # The starting graph is kept as its edges (each node with its inputs), which is
        # all replay needs and far cheaper than a copy; the copy is built when asked for.
        self._start_inputs = list(fgraph.inputs)
        self._start_outputs = list(fgraph.outputs)
        self._start_nodes = {node: tuple(node.inputs) for node in fgraph._nodes}
        #: The key serial of every object the trace saw (the rewritten graph's own: ``fgraph.key``).
        self._serials: dict[Any, int] = {**fgraph._nodes, **fgraph._variables}
        self._start: FunctionGraph | None = None
        self._reader: Any = None  # the cursor behind graph_at
        self.steps: list[RewriteStep] = []
        self.notes: list[TraceNote] = []
        #: Time spent in attempts that returned no replacement, per rule.
        self.idle_seconds: dict[str, float] = {}
        #: Every rule tried on every node (``record_attempts=True`` when rewriting), else ``None``: the
        #: answer to "why was my rule not applied here?". Off by default: it costs a list entry per attempt.
        self.attempts: dict[Apply, list[Attempt]] | None = None
        #: How the rewrite was asked for (``rewrite_fgraph`` sets it), what :meth:`record_attempts` replays.
        self.recipe: RewriteRecipe | None = None
        #: The compile mode whose rewrites made this trace (``symlab.function`` sets it), else ``None``.
        self.mode: Any = None

    def attempts_on(self, node: Apply) -> list[Attempt] | None:
        """The rules tried on ``node`` (a node of the rewritten graph), or ``None`` if attempts were not recorded."""
        if self.attempts is None:
            return None
        return list(self.attempts.get(node, ()))

    def record_attempts(self) -> dict[Apply, list[Attempt]]:
        """Learn every rule tried on every node of a trace made without attempts; ``trace.attempts``.

        Rewrites a fresh copy of the starting graph again, as the trace's :attr:`recipe` says, this time
        recording attempts, checks that the rewrite took the same steps (the same rules, accepted or
        refused alike, creating the same nodes) and files the attempts under this trace's own nodes.
        Nothing of the rewritten graph changes. Raises :class:`ReplayError` when the trace has no recipe
        (it was not made by ``rewrite_fgraph``) or the second rewrite went another way (a rule registered
        or removed since, say).

        >>> import symlab.tensor as T
        >>> from symlab.rewriting import rewrite_graph
        >>> a = T.dvector("a")
        >>> _, trace = rewrite_graph(a + a ** 10)
        >>> trace.attempts is None
        True
        >>> add = next(n for n in trace._start_nodes if "add" in str(n.op))
        >>> ("add_zero", "no match") in {(t.rule, t.outcome) for t in trace.record_attempts()[add]}
        True
        """
        if self.attempts is not None:
            return self.attempts
        recipe = self.recipe
        if recipe is None:
            raise ReplayError("this trace was not made by rewrite_fgraph (no recipe): rewrite again with "
                              "record_attempts=True to learn which rules were tried")
        fgraph, memo = self._build_start()
        handler = getattr(self.fgraph, "destroy_handler", None)
        if handler is not None:  # the same inputs protected as when the trace was made
            mutable = [k for k, v in enumerate(self._start_inputs) if v in handler.mutable_inputs]
            fgraph.attach_feature(DestroyHandler(mutable))
        again = recipe.rewrite(fgraph, recipe.include, recipe.exclude, db=recipe.db,
                               max_use_ratio=recipe.max_use_ratio, record_attempts=True)
        assert again is not None and again.attempts is not None
        live = {mine: original for original, mine in memo.items() if isinstance(original, Apply)}
        if len(again.steps) != len(self.steps):
            raise ReplayError(f"rewriting the starting graph again took {len(again.steps)} steps, not "
                              f"{len(self.steps)}: the rules changed since this trace was made")
        for first, second in zip(self.steps, again.steps):
            created, created_again = first.created, second.created
            if ((first.rule, first.accepted) != (second.rule, second.accepted)
                    or [n.op for n in created] != [n.op for n in created_again]):
                raise ReplayError(f"rewriting the starting graph again went another way at step {first.index} "
                                  f"({second.rule} instead of {first.rule}): the rules changed since")
            live.update(zip(created_again, created))
        attempts: dict[Apply, list[Attempt]] = {}
        for node, tried in again.attempts.items():
            original = live.get(node)
            if original is not None:
                attempts.setdefault(original, []).extend(tried)
        self.attempts = attempts
        return attempts

    @property
    def start(self) -> FunctionGraph:
        """A copy of the graph as it was before the first step."""
        if self._start is None:
            self._start = self._build_start()[0]
        return self._start

    def _build_start(self) -> tuple[FunctionGraph, dict[Any, Any]]:
        """A fresh copy of the starting graph and the map from the rewritten graph's objects to it."""
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

    # -- keys --------------------------------------------------------------------------------
    def key(self, obj: Apply | Variable) -> str:
        """The key of a node or variable of the rewritten graph, stable across every step of the trace."""
        serial = self._serials.get(obj)
        if serial is None:
            raise KeyError(f"RewriteTrace.key: the trace never saw {obj} ({type(obj).__name__})")
        return f"{'a' if isinstance(obj, Apply) else 'v'}{serial}"

    def by_key(self, key: str) -> Apply | Variable:
        """The object of the rewritten graph (it may have left the graph since) whose key is ``key``."""
        index = getattr(self, "_by_key", None)
        if index is None or len(index) != len(self._serials):
            index = {f"{'a' if isinstance(o, Apply) else 'v'}{s}": o for o, s in self._serials.items()}
            self._by_key = index
        try:
            return index[key]
        except KeyError:
            raise KeyError(f"RewriteTrace.by_key: no object of this trace has the key {key!r}") from None

    def _learn_keys(self, events: list[GraphEvent]) -> None:
        """Remember the keys the rewritten graph gave the objects a step brought in."""
        serials = self._serials
        for event in events:
            kind = type(event)
            if kind is NodeImported:
                serial = serials[event.node] = event.serial
                for j, out in enumerate(event.node.outputs):
                    serials[out] = serial + 1 + j
            elif kind is VariableImported:
                serials[event.variable] = event.serial

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
    def cursor(self, position: int = 0) -> TraceCursor:
        """A :class:`~symlab.rewriting.cursor.TraceCursor` at step ``position``: a replay you step through."""
        return TraceCursor(self, position)

    def replay(self, k: int) -> tuple[FunctionGraph, dict[Any, Any]]:
        """A new copy of the graph after step ``k`` and the map from the rewritten graph's objects to it.

        The map covers the objects of that graph (nodes, variables, and
        ``"output"``). The copy is the caller's to change.
        """
        if not 0 <= k <= len(self.steps):
            raise IndexError(f"graph_at({k}): the trace has steps 1..{len(self.steps)} (0 is the start)")
        reader = self._reader
        if reader is None or k < abs(reader.position - k):  # nearer the start than the reader: start afresh
            reader = self._reader = self.cursor(0)
        reader.seek(k)
        fg, equiv = reader.fgraph.clone_get_equiv(check_integrity=False)
        memo: dict[Any, Any] = {"output": "output"}
        for live, mine in reader._copy.items():
            new = equiv.get(mine)
            if new is not None:
                memo[live] = new
        return fg, memo

    def graph_at(self, k: int) -> FunctionGraph:
        """A new copy of the graph as it stood after step ``k`` (``0``: before the first step)."""
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


# The printers (symlab.printing.subject) draw a trace as its final graph, with its last step's nodes.
register_graph_holder(RewriteTrace, "trace")


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
