"""``RewriteContext``: how every rewriter changes a graph, and how each change is recorded.

A rewriter never calls ``fgraph.replace`` itself: it hands its replacements
to :meth:`RewriteContext.replace`, which checks the types, replaces and
validates (reverting on failure), and, when a trace is being written, records
one :class:`~symlab.rewriting.trace.RewriteStep`, accepted or refused:

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

from collections.abc import Callable, Iterable, Mapping
from time import perf_counter
from typing import TYPE_CHECKING, Any

from symlab.graph.basic import Apply, CycleError, Variable
from symlab.graph.features import ReplaceValidate
from symlab.graph.fg import FunctionGraph, InconsistencyError
from symlab.rewriting.trace import RewriteStep, RewriteTrace, TraceNote

if TYPE_CHECKING:  # pragma: no cover
    from symlab.rewriting.basic import GraphRewriter, NodeRewriter, Rewriter


class RewriteError(RuntimeError):
    """A rule raised an exception (the graph is left as it was before the rule ran)."""


class _ChangeLog:
    """Feature that collects the imports, input changes and prunes of the current step, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: Any) -> None:
        self.events.append(("import", node, tuple(node.inputs)))

    def on_prune(self, fgraph: FunctionGraph, node: Apply, reason: Any) -> None:
        self.events.append(("prune", node))

    def on_change_input(self, fgraph, node, i, old, new, reason=None) -> None:
        self.events.append(("change", node, i, old, new))

    def take(self) -> list[tuple[Any, ...]]:
        events = self.events
        self.events = []
        return events


class RewriteContext:
    """The graph being rewritten, the trace being written (or ``None``) and the current phase.

    Use it as a context manager: it attaches what it needs to the graph
    (``ReplaceValidate`` if missing, and a change log when recording) and
    detaches it at the end. Features of the graph that define
    ``on_rewrite_step(fgraph, step)`` are called after every recorded step.
    """

    def __init__(self, fgraph: FunctionGraph, trace: RewriteTrace | None = None, phase: str = "") -> None:
        self.fgraph = fgraph
        self.trace = trace
        self.phase = phase
        self._attached: list[Any] = []
        if not hasattr(fgraph, "replace_all_validate"):
            feature = ReplaceValidate()
            fgraph.attach_feature(feature)
            self._attached.append(feature)
        self._log: _ChangeLog | None = None
        if trace is not None:
            self._log = _ChangeLog()
            fgraph.attach_feature(self._log)
            self._attached.append(self._log)
        self._current: Rewriter | None = None
        self._features_seen: list[Any] = []
        self._listeners: list[Callable[[FunctionGraph, RewriteStep], Any]] = []

    # -- life cycle ----------------------------------------------------------------------------
    def close(self) -> None:
        """Detach the features this context attached."""
        self._flush()
        while self._attached:
            self.fgraph.remove_feature(self._attached.pop())

    def __enter__(self) -> RewriteContext:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def recording(self) -> bool:
        return self.trace is not None

    # -- running rewriters ------------------------------------------------------------------------
    def run(self, rewriter: GraphRewriter) -> bool:
        """Apply a graph rewriter; True if it changed the graph."""
        previous, self._current = self._current, rewriter
        try:
            changed = rewriter.apply(self.fgraph, self)
        finally:
            self._current = previous
        self._flush(rewriter)
        return bool(changed)

    def attempt(self, rewriter: NodeRewriter, node: Apply) -> bool:
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
        if not result:
            idle = self.trace.idle_seconds
            idle[rewriter.name] = idle.get(rewriter.name, 0.0) + perf_counter() - started
            return False
        return self.replace(rewriter, result, node, started=started)

    def replace(
        self,
        rewriter: Rewriter,
        replacements: Any,
        node: Apply | None = None,
        reason: str | None = None,
        started: float | None = None,
    ) -> bool:
        """Replace each ``old`` variable by its ``new`` one, as one step; True if accepted.

        ``replacements`` is a list with one new variable (or ``None`` to keep
        it) per output of ``node``, a ``{old: new}`` dict, or a list of
        ``(old, new)`` pairs. A new variable whose type differs only by static
        shape is narrowed with ``filter_variable``; one of another dtype or
        rank is refused. So are replacements the graph's features refuse
        (``InconsistencyError``), cycles, and missing inputs: the graph is then
        left exactly as it was, and the refusal is recorded with its reason.
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
                    continue
            checked.append((old, new))
        name = rewriter.name
        log = self._log
        if refusal is None:
            if log is not None and log.events:
                self._flush()
            try:
                self.fgraph.replace_all_validate(checked, reason=name)
            except InconsistencyError as err:
                refusal = f"failed validation: {err}"
            except CycleError as err:
                refusal = f"cycle: {err}"
            except (TypeError, ValueError) as err:
                refusal = f"{type(err).__name__}: {err}"
        if log is None:
            return refusal is None
        events = log.take()
        if refusal is None:
            self._record(name, rewriter, checked, reason or rewriter.describe(), perf_counter() - started, True,
                         node, events)
            return True
        self._record(name, rewriter, checked, refusal, perf_counter() - started, False, node, [])
        return False

    def record_direct(
        self,
        rewriter: Rewriter,
        reason: str,
        accepted: bool = True,
        node: Apply | None = None,
        replacements: Iterable[tuple[Variable, Variable]] | None = None,
        seconds: float = 0.0,
    ) -> None:
        """Record, as one step, what ``rewriter`` just did directly on the graph.

        For rewriters that call ``fgraph.replace_all_validate`` themselves
        (fusion, inplace): call it right after each accepted or refused
        replacement. An accepted step gets the changes logged since the last
        step; a refused one (the graph was put back) gets none. The
        replacements default to the ``(old, new)`` pairs of the logged changes.
        """
        log = self._log
        if log is None:
            return
        events = log.take()
        if not accepted:
            events = []  # the refused change was put back
        if replacements is None:
            replacements = dict.fromkeys((e[3], e[4]) for e in events if e[0] == "change")
        self._record(rewriter.name, rewriter, list(replacements), reason, seconds, accepted, node, events)

    def discard_direct(self) -> None:
        """Forget the changes logged since the last step (a direct change that was put back)."""
        if self._log is not None:
            self._log.take()

    def note(self, rewriter: Rewriter, message: str) -> None:
        """Write a note in the trace (for example: an equilibrium stopped at its bound)."""
        if self.trace is not None:
            self.trace.notes.append(TraceNote(len(self.trace.steps), self.phase, rewriter.name, message))

    # -- recording ------------------------------------------------------------------------------------
    def _record(self, name, rewriter, pairs, reason, seconds, accepted, node, events) -> None:
        trace = self.trace
        step = RewriteStep(len(trace.steps) + 1, self.phase, name, rewriter.location, pairs, reason, seconds,
                           accepted, node, events)
        trace.steps.append(step)
        features = self.fgraph._features
        if features != self._features_seen:
            self._features_seen = list(features)
            self._listeners = [f.on_rewrite_step for f in features if hasattr(f, "on_rewrite_step")]
        for listener in self._listeners:
            listener(self.fgraph, step)

    def _flush(self, rewriter: Rewriter | None = None) -> None:
        """Record changes made directly on the graph (not through :meth:`replace`) as one step."""
        log = self._log
        if log is None or not log.events:
            return
        events = log.take()
        if all(e[0] == "prune" for e in events):
            return
        if rewriter is None:
            rewriter = self._current
        if rewriter is None:
            from symlab.rewriting.basic import UNTRACKED as rewriter
        pairs = list(dict.fromkeys((e[3], e[4]) for e in events if e[0] == "change"))
        reason = "changes made directly on the graph, not through RewriteContext.replace"
        self._record(rewriter.name, rewriter, pairs, reason, 0.0, True, None, events)


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
