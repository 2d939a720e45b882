"""``DestroyHandler``: the feature that keeps inplace ops from overwriting values still needed.

An op *destroys* an input when its ``destroy_map`` says that an output is
written into that input's memory (``Elemwise{add,inplace}``); an output is a
*view* of an input when its ``view_map`` says so (``DimShuffle``,
``Subtensor``, ``SpecifyShape``, ``Reshape``). Views chain: every variable
belongs to the memory of one or more *roots* (variables that are views of
nothing), and overwriting a variable overwrites every variable that shares a
root with it.

The handler accepts a destroyer only when

* the memory it overwrites is neither a constant nor a protected graph input
  (graph inputs are protected unless listed in ``mutable_inputs``);
* no other node overwrites the same memory, and the destroyer reads no other
  alias of it;
* that memory is not a graph output, and every other node that reads it (or
  any alias of it) can run *before* the destroyer: :meth:`orderings` makes
  them do so, and a node that needs the destroyer's result while reading the
  old value makes the orderings cyclic, which is refused.

>>> import symlab.tensor as st
>>> from symlab.graph.fg import FunctionGraph
>>> from symlab.graph.basic import Apply
>>> from symlab.tensor.elemwise import Elemwise
>>> from symlab.scalar import basic as ps
>>> x = st.dvector("x")
>>> fg = FunctionGraph([x], [st.exp(x) * 2.0], features=[DestroyHandler()])
>>> exp_node = fg.outputs[0].owner.inputs[0].owner
>>> inplace = Apply(Elemwise(ps.exp, {0: 0}), exp_node.inputs, [exp_node.outputs[0].type()])
>>> fg.replace_validate(exp_node.outputs[0], inplace.outputs[0])
Traceback (most recent call last):
...
symlab.graph.changes.InconsistencyError: Elemwise{exp,inplace}(x) would overwrite x, a protected graph input (not mutable)

The graph is left as it was. The ``exp`` result is an intermediate, so the
multiplication may overwrite it:

>>> mul_node = fg.outputs[0].owner
>>> inplace = Apply(Elemwise(ps.mul, {0: 0}), mul_node.inputs, [mul_node.outputs[0].type()])
>>> fg.replace_validate(mul_node.outputs[0], inplace.outputs[0])
>>> fg.outputs[0].owner.op, fg.has_destroyers([exp_node.outputs[0]])
(Elemwise{mul,inplace}, True)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from symlab.graph.basic import Apply, Constant, CycleError, Variable
from symlab.graph.changes import Feature, InconsistencyError
from symlab.graph.features import AlreadyThere
from symlab.graph.traversal import io_toposort

if TYPE_CHECKING:  # annotations only (tools/import_graph.py): the graph's module is built on this one
    from symlab.graph.fg import FunctionGraph


def destroyed_inputs(node: Apply) -> list[int]:
    """The input indices ``node`` overwrites, in ``destroy_map`` order (no repeats).

    >>> import symlab.tensor as st
    >>> from symlab.tensor.elemwise import Elemwise
    >>> from symlab.scalar import basic as ps
    >>> x, y = st.dvectors("x", "y")
    >>> destroyed_inputs(Elemwise(ps.add, {0: 1}).make_node(x, y)), destroyed_inputs((x + y).owner)
    ([1], [])
    """
    return _map_inputs(getattr(node.op, "destroy_map", None) or {})


def viewed_inputs(node: Apply, output: int) -> list[int]:
    """The input indices whose memory output ``output`` of ``node`` is a view of."""
    view_map = getattr(node.op, "view_map", None) or {}
    return list(dict.fromkeys(view_map.get(output, ())))


def _map_inputs(mapping: dict[int, Sequence[int]]) -> list[int]:
    seen: dict[int, None] = {}
    for out in sorted(mapping):
        for i in mapping[out]:
            seen[i] = None
    return list(seen)


@dataclass
class _Analysis:
    """Everything the handler derives from the graph, rebuilt after each change."""

    #: ``var -> [vars it is a view of]`` and the reverse.
    view_i: dict[Variable, list[Variable]] = field(default_factory=dict)
    view_o: dict[Variable, list[Variable]] = field(default_factory=dict)
    #: ``root -> [destroyer nodes]``, every destroyer once per root.
    root_destroyers: dict[Variable, list[Apply]] = field(default_factory=dict)
    #: ``destroyer -> {node that must run before it: variable it reads}``.
    before: dict[Apply, dict[Apply, Variable]] = field(default_factory=dict)
    #: Reasons the graph is inconsistent, in a deterministic order.
    problems: list[str] = field(default_factory=list)
    #: ``None`` until the orderings were checked for a cycle, then the verdict.
    cycle: str | None = None
    cycle_checked: bool = False


class DestroyHandler(Feature):
    """Feature that validates destroyers and orders the readers of destroyed memory first.

    ``mutable_inputs`` lists the graph inputs that may be overwritten (as
    variables of the graph or as positions in ``fgraph.inputs``); all other
    inputs are protected. Once it is attached, the graph's
    ``fgraph.destroy_handler``, ``fgraph.destroyers(var)`` and
    ``fgraph.has_destroyers(vars)`` answer with it. A graph
    accepts one destroy handler only, and a handler serves one graph.

    The analysis is recomputed on demand after a change (callbacks only drop
    the cache); a graph without destroyers costs nothing to validate.
    """

    def __init__(self, mutable_inputs: Iterable[Variable | int] = ()) -> None:
        self._mutable_spec = list(mutable_inputs)
        self.fgraph: FunctionGraph = None  # the FunctionGraph it is attached to
        self.mutable_inputs: set[Variable] = set()
        self._destroyers: dict[Apply, None] = {}
        self._viewers: dict[Apply, None] = {}
        self._analysis: _Analysis | None = None
        #: ``(view_i, view_o)``: which variables are views of which; rebuilt only when a view changes.
        self._views: tuple[dict[Variable, list[Variable]], dict[Variable, list[Variable]]] | None = None

    # -- feature callbacks --------------------------------------------------------------------
    def on_attach(self, fgraph: FunctionGraph) -> None:
        if self.fgraph is not None:
            raise AlreadyThere("this DestroyHandler is already attached to a graph; make a new one")
        if fgraph.destroy_handler is not None:
            raise AlreadyThere("a DestroyHandler is already attached to this graph")
        mutable: set[Variable] = set()
        for spec in self._mutable_spec:
            if isinstance(spec, int):
                mutable.add(fgraph.inputs[spec])
            elif spec in fgraph.inputs:
                mutable.add(spec)
            else:
                raise ValueError(f"DestroyHandler: mutable input {spec} is not an input of {fgraph}")
        self.fgraph = fgraph
        self.mutable_inputs = mutable
        for node in fgraph.toposort():
            self._track(node)

    def on_detach(self, fgraph: FunctionGraph) -> None:
        self.fgraph = None
        self._destroyers.clear()
        self._viewers.clear()
        self._analysis = None
        self._views = None

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: str | None = None) -> None:
        self._track(node)

    def on_prune(self, fgraph: FunctionGraph, node: Apply, reason: str | None = None) -> None:
        self._destroyers.pop(node, None)
        if self._viewers.pop(node, False) is None:
            self._views = None
        self._analysis = None

    def on_change_input(self, fgraph: FunctionGraph, node: Any, i: int, old: Any, new: Any, reason: Any = None) -> None:
        if node in self._viewers:
            self._views = None
        self._analysis = None

    def _track(self, node: Apply) -> None:
        if getattr(node.op, "destroy_map", None):
            self._destroyers[node] = None
        if getattr(node.op, "view_map", None):
            self._viewers[node] = None
            self._views = None
        self._analysis = None

    def _view_maps(self) -> tuple[dict[Variable, list[Variable]], dict[Variable, list[Variable]]]:
        """``(view_i, view_o)``: ``var -> [vars it is a view of]`` and the reverse (cached until a view changes)."""
        if self._views is None:
            view_i: dict[Variable, list[Variable]] = {}
            view_o: dict[Variable, list[Variable]] = {}
            for node in self._viewers:
                for out_index, out in enumerate(node.outputs):
                    for i in viewed_inputs(node, out_index):
                        inp = node.inputs[i]
                        view_i.setdefault(out, []).append(inp)
                        view_o.setdefault(inp, []).append(out)
            self._views = (view_i, view_o)
        return self._views

    # -- queries ---------------------------------------------------------------------------------
    def roots(self, var: Variable) -> list[Variable]:
        """The variables, views of nothing, whose memory ``var`` shares."""
        view_i = self._view_maps()[0]
        found: dict[Variable, None] = {}
        seen = {var}
        stack = [var]
        while stack:
            v = stack.pop()
            parents = view_i.get(v)
            if not parents:
                found[v] = None
                continue
            for p in reversed(parents):
                if p not in seen:
                    seen.add(p)
                    stack.append(p)
        return list(found)

    def aliases(self, var: Variable) -> list[Variable]:
        """Every variable sharing memory with ``var`` (its roots and all their views), ``var`` included.

        >>> import symlab.tensor as st
        >>> from symlab.graph.fg import FunctionGraph
        >>> x = st.dmatrix("x")
        >>> fg = FunctionGraph([x], [x.T, x + 1.0], features=[DestroyHandler()])
        >>> fg.destroy_handler.aliases(fg.outputs[0])
        [x, DimShuffle{1,0}.0]
        """
        return self._impact(self.roots(var))

    def _impact(self, roots: Iterable[Variable]) -> list[Variable]:
        view_o = self._view_maps()[1]
        found: dict[Variable, None] = {}
        stack = list(reversed(list(roots)))
        while stack:
            v = stack.pop()
            if v in found:
                continue
            found[v] = None
            stack.extend(reversed(view_o.get(v, ())))
        return list(found)

    def destroyers(self, var: Variable) -> list[Apply]:
        """The nodes that overwrite the memory of ``var`` (or of any alias of it).

        Found locally, among the readers of ``var``'s aliases (no analysis of the whole graph).
        """
        if not self._destroyers:
            return []
        clients = self._graph().clients
        found: dict[Apply, None] = {}
        for alias in self.aliases(var):
            for client, i in clients.get(alias, ()):
                if client != "output" and client in self._destroyers and i in destroyed_inputs(client):
                    found[client] = None
        return list(found)

    def has_destroyers(self, variables: Iterable[Variable]) -> bool:
        """True if some node overwrites the memory of one of ``variables``.

        Rewrites use it to leave destroyed variables (and their aliases) alone.
        """
        if not self._destroyers:
            return False
        return any(self.destroyers(v) for v in variables)

    def is_protected(self, var: Variable) -> str | None:
        """Why ``var``'s memory may not be overwritten at all, or ``None`` if it may.

        A constant, a protected graph input, or a view of one of them.
        """
        for root in self.roots(var):
            kind = _protected_kind(root, self)
            if kind is not None:
                if root is not var:
                    return f"a view of the {kind} {root}"
                return f"a {kind}" + (" (not mutable)" if kind.startswith("protected") else "")
        return None

    # -- ordering and validation -----------------------------------------------------------------------
    def orderings(self, fgraph: FunctionGraph) -> dict[Apply, list[Apply]]:
        """``{destroyer: [nodes that must run before it]}``: the other readers of the memory it overwrites.

        On an inconsistent graph (between a replacement and its validation)
        the orderings may be cyclic; then none are returned, so that
        ``toposort`` still works, and :meth:`validate` reports the problem.
        """
        if not self._destroyers:
            return {}
        analysis = self._analyse()
        if self._find_cycle(analysis) is not None:
            return {}
        return {node: list(before) for node, before in analysis.before.items() if before}

    def validate(self, fgraph: FunctionGraph) -> None:
        """Raise :class:`InconsistencyError` if a destroyer may overwrite something still needed."""
        if not self._destroyers:
            return
        analysis = self._analyse()
        if analysis.problems:
            raise InconsistencyError(analysis.problems[0])
        cycle = self._find_cycle(analysis)
        if cycle is not None:
            raise InconsistencyError(cycle)

    def _find_cycle(self, analysis: _Analysis) -> str | None:
        if not analysis.cycle_checked:
            analysis.cycle_checked = True
            fgraph = self._graph()
            orderings = {node: list(before) for node, before in analysis.before.items() if before}
            try:
                io_toposort(fgraph.inputs, fgraph.outputs, orderings)
            except CycleError:
                analysis.cycle = _explain_cycle(fgraph, analysis)
        return analysis.cycle

    def _graph(self) -> FunctionGraph:
        if self.fgraph is None:
            raise RuntimeError("DestroyHandler is not attached to a graph")
        return self.fgraph

    def _analyse(self) -> _Analysis:
        if self._analysis is not None:
            return self._analysis
        fgraph = self._graph()
        a = _Analysis()
        a.view_i, a.view_o = self._view_maps()
        self._analysis = a
        for node in self._destroyers:
            self._analyse_destroyer(fgraph, node, a)
        return a

    def _analyse_destroyer(self, fgraph: FunctionGraph, node: Apply, a: _Analysis) -> None:
        before = a.before.setdefault(node, {})
        for d in destroyed_inputs(node):
            var = node.inputs[d]
            roots = self.roots(var)
            protected = self.is_protected(var)
            if protected is not None:
                a.problems.append(f"{node} would overwrite {var}, {protected}")
            for root in roots:
                others = a.root_destroyers.setdefault(root, [])
                if node not in others:
                    others.append(node)
                    if len(others) == 2:
                        a.problems.append(
                            f"{_memory(var, root)} would be overwritten by more than one node: {others[0]} and {others[1]}"
                        )
            impact = self._impact(roots)
            impacted = set(impact)
            tolerated = _tolerated(node, d)
            for j, other in enumerate(node.inputs):
                if j != d and other in impacted and j not in tolerated:
                    a.problems.append(
                        f"{node} overwrites its input {d} ({var}) while also reading input {j} ({other}), "
                        "which shares its memory"
                    )
            for alias in impact:
                for client, k in fgraph.clients.get(alias, ()):
                    if client == "output":
                        what = f"{alias}" if alias is var else f"{alias}, which shares memory with {var},"
                        a.problems.append(f"{node} would overwrite {what} but it is output {k} of the graph")
                    elif client is not node and client not in before:
                        before[client] = alias


def _memory(var: Variable, root: Variable) -> str:
    return f"{var}" if var is root else f"the memory of {root} (viewed by {var})"


def _protected_kind(root: Variable, handler: DestroyHandler) -> str | None:
    if isinstance(root, Constant):
        return "constant"
    fgraph = handler.fgraph
    if fgraph is not None and root in fgraph.inputs and root not in handler.mutable_inputs:
        return "protected graph input"
    return None


def _tolerated(node: Apply, destroyed: int) -> set[int]:
    """Inputs an op declares it may read while overwriting input ``destroyed``.

    ``op.destroyhandler_tolerate_aliased`` is a list of ``(destroyed, read)``
    index pairs, as in PyTensor.
    """
    pairs = getattr(node.op, "destroyhandler_tolerate_aliased", ()) or ()
    return {j for i, j in pairs if i == destroyed}


def _explain_cycle(fgraph: FunctionGraph, a: _Analysis) -> str:
    """Name a reader that needs a destroyer's result but also the value it overwrites.

    One depth-first walk over the graph's edges and the orderings finds a cycle; every cycle contains an
    ordering ``reader -> destroyer`` (the graph alone has none), and that pair is named.
    """
    must_precede: dict[Apply, list[Apply]] = {}
    for destroyer, before in a.before.items():
        for reader in before:
            must_precede.setdefault(reader, []).append(destroyer)

    def successors(node: Apply) -> list[Apply]:
        nexts = [c for out in node.outputs for c, _ in fgraph.clients.get(out, ()) if c != "output"]
        return nexts + must_precede.get(node, [])

    state: dict[Apply, int] = {}  # 1: on the current path, 2: done
    for start in list(fgraph._nodes):  # insertion order: a deterministic message
        if start in state:
            continue
        path: list[Apply] = [start]
        iterators = [iter(successors(start))]
        state[start] = 1
        while iterators:
            nxt = next(iterators[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                iterators.pop()
                continue
            seen = state.get(nxt)
            if seen == 1:  # a cycle: from nxt along the path back to nxt
                return _describe_cycle(path[path.index(nxt) :], a)
            elif seen is None:
                state[nxt] = 1
                path.append(nxt)
                iterators.append(iter(successors(nxt)))
    return "the nodes that read overwritten values cannot all run before the nodes that overwrite them (cycle)"


def _describe_cycle(cycle: list[Apply], a: _Analysis) -> str:
    """The cycle ``cycle[0] -> cycle[1] -> ... -> cycle[0]`` in words: its orderings and its data paths."""
    n = len(cycle)
    ordering = [a.before.get(cycle[(k + 1) % n], {}).get(cycle[k]) for k in range(n)]  # var of edge k, or None
    first = next(k for k in range(n) if ordering[k] is not None)
    cycle, ordering = cycle[first:] + cycle[:first], ordering[first:] + ordering[:first]
    if sum(v is not None for v in ordering) == 1:  # the usual case: one reader that also needs the result
        reader, destroyer = cycle[0], cycle[1 % n]
        return (
            f"{reader} reads {ordering[0]}, which {destroyer} overwrites, but it also needs the result of "
            f"{destroyer}, so it cannot run before it (cycle)"
        )
    parts = []
    k = 0
    while k < n:
        if ordering[k] is not None:
            reader, destroyer = cycle[k], cycle[(k + 1) % n]
            parts.append(f"{reader} must run before {destroyer} (it reads {ordering[k]}, which {destroyer} overwrites)")
            k += 1
            continue
        start = k
        while k < n and ordering[k] is None:
            k += 1
        parts.append(f"{cycle[k % n]} needs the result of {cycle[start]}")
    return "; ".join(parts) + ": these nodes cannot all run in order (cycle)"
