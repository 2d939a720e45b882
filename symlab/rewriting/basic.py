"""Rewriters: rules for one node, and the graph rewriters that apply them.

A :class:`NodeRewriter` looks at one node and returns its replacement; the
:func:`node_rewriter` decorator makes one from a function. Graph rewriters
apply node rewriters to a whole :class:`~symlab.graph.fg.FunctionGraph`:
:func:`in2out` / :func:`out2in` walk it once, an
:class:`EquilibriumGraphRewriter` repeats until nothing changes:

>>> import numpy as np
>>> import symlab.tensor as T
>>> from symlab.graph.fg import FunctionGraph
>>> @node_rewriter([T.neg])
... def double_negation(fgraph, node):
...     '''-(-x) -> x'''
...     (inner,) = node.inputs
...     if inner.owner is not None and inner.owner.op == T.neg:
...         return [inner.owner.inputs[0]]
>>> x = T.dvector("x")
>>> fg = FunctionGraph([x], [T.exp(-(-(-(-x))))])
>>> trace = EquilibriumGraphRewriter([double_negation]).rewrite(fg)
>>> [str(n.op) for n in fg.toposort()]
['Elemwise{exp,no_inplace}']
>>> [(s.rule, s.reason, s.accepted) for s in trace]
[('double_negation', '-(-x) -> x', True), ('double_negation', '-(-x) -> x', True)]
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from symlab.graph.basic import Apply
from symlab.graph.fg import FunctionGraph
from symlab.graph.op import Op
from symlab.rewriting.context import RewriteContext
from symlab.rewriting.rewriter import Rewriter
from symlab.rewriting.steps import UNKNOWN_LOCATION, SourceLocation
from symlab.rewriting.trace import RewriteTrace

#: What ``transform`` may return: nothing, one new variable per output, or ``{old: new}``.
TransformResult = Any


class NodeRewriter(Rewriter):
    """A rule for one node: :meth:`transform` returns the node's replacement, if any."""

    def tracks(self) -> Sequence[Op | type] | None:
        """The ops (instances, or classes) whose nodes this rule may change; ``None``: any node."""
        return None

    def transform(self, fgraph: FunctionGraph, node: Apply) -> TransformResult:
        """``False``/``None`` (no change), a list of new variables (one per output) or ``{old: new}``."""
        raise NotImplementedError(f"{type(self).__name__} must define transform(fgraph, node)")


class FunctionNodeRewriter(NodeRewriter):
    """A node rewriter made from a function ``fn(fgraph, node)`` (see :func:`node_rewriter`)."""

    def __init__(self, fn: Callable[[FunctionGraph, Apply], TransformResult], tracks: Sequence[Any] | None,
                 name: str | None = None) -> None:
        super().__init__(name or fn.__name__)
        self.fn = fn
        self._tracks = None if tracks is None else _check_tracks(tracks, self.name)
        self.__doc__ = fn.__doc__
        code = getattr(fn, "__code__", None)
        if code is not None:
            self._location = SourceLocation(code.co_filename, code.co_firstlineno)

    def tracks(self) -> list[Any] | None:
        return self._tracks

    def transform(self, fgraph: FunctionGraph, node: Apply) -> TransformResult:
        return self.fn(fgraph, node)

    def __call__(self, fgraph: FunctionGraph, node: Apply) -> TransformResult:
        return self.fn(fgraph, node)


def node_rewriter(tracks: Sequence[Any] | None, name: str | None = None) -> Callable[[Callable], FunctionNodeRewriter]:
    """Decorator: make a :class:`NodeRewriter` of ``fn(fgraph, node)``.

    ``tracks`` lists op instances (matched with ``==``) and op classes
    (``isinstance``); the rule is tried only on their nodes (``None``: all).
    The function's name is the rule's name unless ``name`` is given.
    """
    if callable(tracks) and not isinstance(tracks, Op | type):
        raise TypeError("node_rewriter(tracks) takes a list of ops; write @node_rewriter([op]) or @node_rewriter(None)")

    def decorate(fn: Callable) -> FunctionNodeRewriter:
        return FunctionNodeRewriter(fn, tracks, name)

    return decorate


def _check_tracks(tracks: Sequence[Any], name: str) -> list[Any]:
    if isinstance(tracks, Op | type):
        tracks = [tracks]
    out = list(tracks)
    for t in out:
        if not (isinstance(t, Op) or (isinstance(t, type) and issubclass(t, Op))):
            raise TypeError(f"rule {name}: tracks must list Op instances or Op classes, received {t!r}")
    return out


class GraphRewriter(Rewriter):
    """A rewriter of a whole graph. Subclasses define :meth:`apply`.

    ``apply(fgraph, ctx)`` makes its changes through ``ctx.replace(self,
    ...)`` (so each is checked and recorded) and returns True if it changed
    the graph. :meth:`rewrite` runs it on its own and returns the trace.
    """

    def apply(self, fgraph: FunctionGraph, ctx: RewriteContext) -> bool:
        raise NotImplementedError(f"{type(self).__name__} must define apply(fgraph, ctx)")

    def rewrite(self, fgraph: FunctionGraph, record: bool = True, phase: str | None = None) -> RewriteTrace | None:
        """Apply this rewriter to ``fgraph``; the trace of its steps (``None`` if ``record=False``)."""
        trace = RewriteTrace(fgraph) if record else None
        with RewriteContext(fgraph, trace, phase if phase is not None else self.name) as ctx:
            ctx.run(self)
        return trace


# -- applying node rewriters ------------------------------------------------------------------------


class Dispatch:
    """The node rewriters to try on a node, found by its op (``tracks``), in their given order."""

    def __init__(self, rewriters: Iterable[NodeRewriter]) -> None:
        self.rewriters = list(rewriters)
        self._tracks = [rw.tracks() for rw in self.rewriters]
        self._cache: dict[int, tuple[Op, list[NodeRewriter]]] = {}

    def __call__(self, op: Op) -> list[NodeRewriter]:
        hit = self._cache.get(id(op))
        if hit is not None and hit[0] is op:
            return hit[1]
        found = [rw for rw, tracks in zip(self.rewriters, self._tracks) if tracks is None or _tracked(op, tracks)]
        self._cache[id(op)] = (op, found)
        return found


def _tracked(op: Op, tracks: list[Any]) -> bool:
    for t in tracks:
        if isinstance(t, type):
            if isinstance(op, t):
                return True
        elif t is op or t == op:
            return True
    return False


def walk(
    fgraph: FunctionGraph,
    ctx: RewriteContext,
    dispatch: Dispatch,
    order: str = "in_to_out",
    counts: dict[NodeRewriter, int] | None = None,
    max_use: float | None = None,
) -> tuple[bool, NodeRewriter | None]:
    """Try the rules on every node once; ``(changed, rule that went over max_use or None)``.

    Nodes are visited in toposort order (``out_to_in``: reversed); nodes
    created during the walk are not visited, nodes removed are skipped.
    """
    nodes = fgraph.toposort()
    if order == "out_to_in":
        nodes.reverse()
    changed = False
    for node in nodes:
        if node not in fgraph:
            continue
        for rw in dispatch(node.op):
            if ctx.attempt(rw, node):
                changed = True
                if counts is not None:
                    counts[rw] = n = counts.get(rw, 0) + 1
                    if max_use is not None and n > max_use:
                        return changed, rw
                if node not in fgraph:
                    break
    return changed, None


_ORDERS = ("in_to_out", "out_to_in")


def _check_order(order: str) -> str:
    if order not in _ORDERS:
        raise ValueError(f"order must be one of {_ORDERS}, received {order!r}")
    return order


class WalkingGraphRewriter(GraphRewriter):
    """Apply node rewriters to each node of the graph once, inputs first (or outputs first)."""

    def __init__(self, rewriters: Sequence[NodeRewriter], order: str = "in_to_out", name: str | None = None) -> None:
        self.rewriters = _node_rewriters(rewriters)
        self.order = _check_order(order)
        super().__init__(name or ("in2out" if order == "in_to_out" else "out2in") + "(" +
                         ",".join(r.name for r in self.rewriters) + ")")
        self._dispatch = Dispatch(self.rewriters)

    def apply(self, fgraph: FunctionGraph, ctx: RewriteContext) -> bool:
        return walk(fgraph, ctx, self._dispatch, self.order)[0]


def in2out(*rewriters: NodeRewriter, name: str | None = None) -> WalkingGraphRewriter:
    """Walk the graph inputs first, trying ``rewriters`` in order on each node."""
    return WalkingGraphRewriter(rewriters, "in_to_out", name)


def out2in(*rewriters: NodeRewriter, name: str | None = None) -> WalkingGraphRewriter:
    """Walk the graph outputs first, trying ``rewriters`` in order on each node."""
    return WalkingGraphRewriter(rewriters, "out_to_in", name)


def _node_rewriters(rewriters: Iterable[Any]) -> list[NodeRewriter]:
    out = list(rewriters)
    for r in out:
        if not isinstance(r, NodeRewriter):
            raise TypeError(f"expected NodeRewriter instances, received {r!r} ({type(r).__name__})")
    return out


class EquilibriumGraphRewriter(GraphRewriter):
    """Apply node rewriters (and graph rewriters) until the graph stops changing.

    Each pass runs the graph rewriters, then walks the graph once with the node
    rewriters. It stops at a fixed point, or at its bound: a rule applied more
    than ``max_use_ratio`` times the number of nodes the graph had, or
    ``max_passes`` passes. Stopping at the bound is written in the trace's
    ``notes``.
    """

    def __init__(
        self,
        rewriters: Sequence[NodeRewriter | GraphRewriter],
        max_use_ratio: float = 10.0,
        max_passes: int = 100,
        order: str = "in_to_out",
        name: str | None = None,
    ) -> None:
        super().__init__(name or "equilibrium")
        self.node_rewriters: list[NodeRewriter] = []
        self.graph_rewriters: list[GraphRewriter] = []
        for r in rewriters:
            if isinstance(r, NodeRewriter):
                self.node_rewriters.append(r)
            elif isinstance(r, GraphRewriter):
                self.graph_rewriters.append(r)
            else:
                raise TypeError(f"{self.name}: expected node or graph rewriters, received {r!r}")
        if max_use_ratio <= 0 or max_passes < 1:
            raise ValueError(f"{self.name}: max_use_ratio must be > 0 and max_passes >= 1")
        self.max_use_ratio = max_use_ratio
        self.max_passes = max_passes
        self.order = _check_order(order)
        self._dispatch = Dispatch(self.node_rewriters)

    def apply(self, fgraph: FunctionGraph, ctx: RewriteContext) -> bool:
        size = max(1, len(fgraph.apply_nodes))
        max_use = self.max_use_ratio * size
        counts: dict[NodeRewriter, int] = {}
        any_change = False
        for _ in range(self.max_passes):
            changed = False
            for g in self.graph_rewriters:
                changed = ctx.run(g) or changed
            walked, over = walk(fgraph, ctx, self._dispatch, self.order, counts, max_use)
            changed = changed or walked
            any_change = any_change or changed
            if over is not None:
                ctx.note(self, f"stopped at the bound: {over.name} was applied {counts[over]} times, more than "
                               f"max_use_ratio={self.max_use_ratio:g} x {size} nodes")
                return any_change
            if not changed:
                return any_change
        ctx.note(self, f"stopped at the bound: max_passes={self.max_passes} passes without reaching a fixed point")
        return any_change


class SequentialGraphRewriter(GraphRewriter):
    """Apply rewriters one after the other (a node rewriter walks the graph once, inputs first)."""

    def __init__(self, *rewriters: NodeRewriter | GraphRewriter, name: str | None = None) -> None:
        super().__init__(name or "sequential")
        self.rewriters: list[GraphRewriter] = []
        for r in rewriters:
            if isinstance(r, NodeRewriter):
                r = in2out(r)
            if not isinstance(r, GraphRewriter):
                raise TypeError(f"{self.name}: expected node or graph rewriters, received {r!r}")
            self.rewriters.append(r)

    def apply(self, fgraph: FunctionGraph, ctx: RewriteContext) -> bool:
        changed = False
        for r in self.rewriters:
            changed = ctx.run(r) or changed
        return changed


#: Modules whose frames :func:`caller_location` skips: the engine's own.
ENGINE_MODULES = frozenset({"symlab.rewriting", "symlab.rewriting.basic", "symlab.rewriting.rewriter", "symlab.rewriting.patterns",
                            "symlab.rewriting.db", "symlab.rewriting.context"})


def caller_location() -> SourceLocation:
    """The file and line of the first caller outside the engine's modules (where a rule is written)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__", "") not in ENGINE_MODULES:
            return SourceLocation(frame.f_code.co_filename, frame.f_lineno)
        frame = frame.f_back
    return UNKNOWN_LOCATION
