"""``RewriteContext``: how every rewriter changes a graph, and how each change is recorded.

A rewriter hands its replacements to :meth:`RewriteContext.replace`, which
checks the types, replaces and validates as one change of the graph (undone
if anything refuses it) and, when a trace is being written, records one
:class:`~symlab.rewriting.trace.RewriteStep`, accepted or refused.

There is one way a step is recorded: the context listens to the graph's
committed changes (``on_change_end``), and each is one step, with the
graph's own typed events. A change made through :meth:`replace` carries
the rule, node and reason given there; a change a rewriter makes directly
on the graph is recorded as a step of that rewriter all the same. A refused
change leaves no event, so its step (refused, with the reason) has none:

>>> import symlab.tensor as T
>>> from symlab.graph.fg import FunctionGraph
>>> from symlab.rewriting.basic import GraphRewriter
>>> from symlab.rewriting.trace import RewriteTrace
>>> x = T.dvector("x")
>>> fg = FunctionGraph([x], [T.exp(x)])
>>> class ExpToLog(GraphRewriter):
...     name = "exp_to_log"
...     def apply(self, fgraph, ctx):
...         out = fgraph.outputs[0]
...         return ctx.replace(self, [(out, T.log(fgraph.inputs[0]))], reason="demo")
>>> with RewriteContext(fg, RewriteTrace(fg)) as ctx:
...     ctx.run(ExpToLog())
True
>>> step = ctx.trace.step(1)
>>> step.rule, step.accepted, [str(n.op) for n in step.removed], [str(n.op) for n in step.created]
('exp_to_log', True, ['Elemwise{exp,no_inplace}'], ['Elemwise{log,no_inplace}'])
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from time import perf_counter
from typing import Any

from symlab.graph.basic import Apply, CycleError, MissingInputError, Variable
from symlab.graph.changes import Feature, GraphChange, InputChanged
from symlab.graph.fg import FunctionGraph, InconsistencyError
from symlab.rewriting.rewriter import UNTRACKED, Rewriter
from symlab.rewriting.steps import Attempt, RewriteStep, TraceNote
from symlab.rewriting.trace import RewriteTrace


class RewriteError(RuntimeError):
    """A rule raised an exception (the graph is left as it was before the rule ran)."""


class _StepRecorder(Feature):
    """Turns each committed change of the graph into one step of the context's trace."""

    def __init__(self, ctx: RewriteContext) -> None:
        self.ctx = ctx

    def on_change_end(self, fgraph: FunctionGraph, change: GraphChange) -> None:
        self.ctx._committed(change)


class RewriteContext:
    """The graph being rewritten, the trace being written (or ``None``) and the current phase.

    Use it as a context manager: when recording, it attaches a feature that
    hears the graph's committed changes, and detaches it at the end.
    Features of the graph that define ``on_rewrite_step(fgraph, step)`` are
    called after every recorded step.
    """

    def __init__(self, fgraph: FunctionGraph, trace: RewriteTrace | None = None, phase: str = "") -> None:
        self.fgraph = fgraph
        self.trace = trace
        self.phase = phase
        self._recorder: _StepRecorder | None = None
        if trace is not None:
            self._recorder = _StepRecorder(self)
            fgraph.attach_feature(self._recorder)
        self._current: Rewriter | None = None
        #: What :meth:`replace` is about to change: ``(rewriter, node, reason, started)``.
        self._pending: tuple[Rewriter, Apply | None, str, float] | None = None
        self._pending_recorded = False
        #: Refusals already recorded, for the rules that report each refusal once.
        self._refused_seen: set[tuple[str, Any, str]] = set()

    # -- life cycle ----------------------------------------------------------------------------
    def close(self) -> None:
        """Detach the feature this context attached."""
        if self._recorder is not None:
            self.fgraph.remove_feature(self._recorder)
            self._recorder = None

    def __enter__(self) -> RewriteContext:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def recording(self) -> bool:
        return self.trace is not None

    # -- running rewriters ------------------------------------------------------------------------
    def run(self, rewriter: Rewriter) -> bool:
        """Apply a graph rewriter; True if it changed the graph."""
        previous, self._current = self._current, rewriter
        try:
            changed = rewriter.apply(self.fgraph, self)
        finally:
            self._current = previous
        return bool(changed)

    def attempt(self, rewriter: Rewriter, node: Apply) -> bool:
        """Try ``rewriter`` on ``node``; True if a replacement was made."""
        fgraph = self.fgraph
        if self.trace is None:
            try:
                result = rewriter.transform(fgraph, node)
            except Exception as err:
                raise _rule_error(rewriter, node, err) from err
            return bool(result) and self.replace(rewriter, result, node)
        started = perf_counter()
        try:
            result = rewriter.transform(fgraph, node)
        except Exception as err:
            raise _rule_error(rewriter, node, err) from err
        attempts = self.trace.attempts
        if not result:
            idle = self.trace.idle_seconds
            idle[rewriter.name] = idle.get(rewriter.name, 0.0) + perf_counter() - started
            if attempts is not None:
                attempts.setdefault(node, []).append(Attempt(rewriter.name, "no match", len(self.trace.steps)))
            return False
        before = len(self.trace.steps)
        accepted = self.replace(rewriter, result, node, started=started)
        if attempts is not None:
            last = len(self.trace.steps) if len(self.trace.steps) > before else None
            outcome = "applied" if accepted else "refused"
            attempts.setdefault(node, []).append(Attempt(rewriter.name, outcome, before, last))
        return accepted

    def replace(
        self,
        rewriter: Rewriter,
        replacements: Any,
        node: Apply | None = None,
        reason: str | None = None,
        started: float | None = None,
        once: bool = False,
        refusal_prefix: str = "",
    ) -> bool:
        """Replace each ``old`` variable by its ``new`` one, as one step; True if accepted.

        ``replacements`` is a list with one new variable (or ``None`` to keep
        it) per output of ``node``, a ``{old: new}`` dict, or a list of
        ``(old, new)`` pairs. A new variable whose type differs only by static
        shape is narrowed with ``filter_variable``; one of another dtype or
        rank is refused. So are replacements the graph's features refuse
        (``InconsistencyError``), cycles, and missing inputs: the graph is then
        left exactly as it was, and the refusal is recorded with its reason
        (after ``refusal_prefix``; with ``once=True``, only the first time the
        same rule is refused on the same node for the same reason).
        """
        if started is None and self.trace is not None:
            started = perf_counter()
        pairs = _as_pairs(rewriter, replacements, node)
        if not pairs:
            return False
        refusal: str | None = None
        checked: list[tuple[Variable, Variable]] = []
        for old, new in pairs:
            if old.type != new.type:
                try:
                    new = old.type.filter_variable(new, allow_convert=True)
                except TypeError:
                    refusal = (
                        f"type mismatch: {new} of type {new.type} cannot replace {old} of type {old.type}"
                    )
            checked.append((old, new))
        if refusal is None:
            refusal = self._apply(rewriter, checked, node, reason, started)
        if refusal is None:
            return True
        if self.trace is not None:
            self.refuse(rewriter, refusal_prefix + refusal, node=node, replacements=checked, once=once,
                        seconds=perf_counter() - started)
        return False

    def _apply(self, rewriter: Rewriter, pairs: list[tuple[Variable, Variable]], node: Apply | None,
               reason: str | None, started: float | None) -> str | None:
        """Make the replacements as one validated change; ``None`` if accepted, else why not."""
        recording = self.trace is not None
        if recording:
            self._pending = (rewriter, node, reason or rewriter.describe(), started)
            self._pending_recorded = False
        try:
            self.fgraph.replace_all_validate(pairs, reason=rewriter.name)
        except InconsistencyError as err:
            return f"failed validation: {err}"
        except CycleError as err:
            return f"cycle: {err}"
        except (TypeError, ValueError) as err:  # MissingInputError is a ValueError
            what = "missing input" if isinstance(err, MissingInputError) else type(err).__name__
            return f"{what}: {err}"
        finally:
            if recording:
                pending, self._pending = self._pending, None
        if recording and not self._pending_recorded:  # nothing to change: a step all the same
            self._record(rewriter, node, pairs, pending[2], pending[3], True, ())
        return None

    def refuse(
        self,
        rewriter: Rewriter,
        reason: str,
        node: Apply | None = None,
        replacements: Iterable[tuple[Variable, Variable]] = (),
        once: bool = False,
        seconds: float = 0.0,
    ) -> None:
        """Record a refused step of ``rewriter`` (nothing was changed) with its ``reason``.

        With ``once=True`` a refusal of the same rule, node and reason is
        recorded only the first time (a rule retried on each pass of a fixed
        point is not reported again).
        """
        if self.trace is None:
            return
        if once:
            key = (rewriter.name, node, reason)
            if key in self._refused_seen:
                return
            self._refused_seen.add(key)
        step = RewriteStep(len(self.trace.steps) + 1, self.phase, rewriter.name, rewriter.location,
                           list(replacements), reason, seconds, False, node, [])
        self._append(step)

    def note(self, rewriter: Rewriter, message: str) -> None:
        """Write a note in the trace (for example: an equilibrium stopped at its bound)."""
        if self.trace is not None:
            self.trace.notes.append(TraceNote(len(self.trace.steps), self.phase, rewriter.name, message))

    # -- recording ------------------------------------------------------------------------------------
    def _committed(self, change: GraphChange) -> None:
        """A change of the graph committed: record it as one step."""
        pending = self._pending
        if pending is not None and not self._pending_recorded:
            rewriter, node, reason, started = pending
            self._pending_recorded = True
            pairs = _pairs_of(change)
            self._record(rewriter, node, pairs, reason, started, True, change.events)
            return
        rewriter = self._current or UNTRACKED
        self._record(rewriter, None, _pairs_of(change),
                     "changes made directly on the graph, not through RewriteContext.replace", None, True,
                     change.events)

    def _record(self, rewriter: Rewriter, node: Apply | None, pairs: list[tuple[Variable, Variable]], reason: str,
                started: float | None, accepted: bool, events: Any) -> None:
        trace = self.trace
        seconds = 0.0 if started is None else perf_counter() - started
        step = RewriteStep(len(trace.steps) + 1, self.phase, rewriter.name, rewriter.location, pairs, reason,
                           seconds, accepted, node, list(events))
        trace._learn_keys(step.events)
        self._append(step)

    def _append(self, step: RewriteStep) -> None:
        self.trace.steps.append(step)
        self.fgraph.execute_callbacks("on_rewrite_step", step)


def _pairs_of(change: GraphChange) -> list[tuple[Variable, Variable]]:
    """The ``(old, new)`` variables of a change's input changes, each pair once, in order."""
    return list(dict.fromkeys((e.old, e.new) for e in change.events if type(e) is InputChanged))


def _as_pairs(rewriter: Rewriter, result: Any, node: Apply | None) -> list[tuple[Variable, Variable]]:
    if isinstance(result, Mapping):
        items: Iterable[Any] = result.items()
    elif isinstance(result, list | tuple):
        if node is not None and all(r is None or isinstance(r, Variable) for r in result):
            if len(result) != len(node.outputs):
                raise RewriteError(
                    f"rule {rewriter.name} returned {len(result)} replacements for {node}, which has "
                    f"{len(node.outputs)} outputs"
                )
            items = zip(node.outputs, result)
        else:
            items = result
    else:
        raise RewriteError(
            f"rule {rewriter.name} returned {type(result).__name__}; expected False/None, a list of "
            "variables (one per output), or a dict {old: new}"
        )
    pairs = []
    for item in items:
        try:
            old, new = item
        except (TypeError, ValueError):
            raise RewriteError(f"rule {rewriter.name} returned {item!r}, not an (old, new) pair") from None
        if new is None or old is new:
            continue
        if not isinstance(old, Variable) or not isinstance(new, Variable):
            raise RewriteError(
                f"rule {rewriter.name} must replace Variables by Variables, returned {old!r} -> {new!r}"
            )
        pairs.append((old, new))
    return pairs


def _rule_error(rewriter: Any, node: Apply, err: Exception) -> RewriteError:
    return RewriteError(f"rule {rewriter.name} ({rewriter.location}) failed on {node}: {type(err).__name__}: {err}")
