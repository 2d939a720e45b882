"""The NumPy backend: run the optimized graph node by node with each op's ``perform``.

Every variable of the graph gets one storage cell (a one-element list). A
call fills the input cells, runs the nodes in ``fgraph.toposort()`` order
(which includes the destroy handler's orderings: the readers of a value run
before the inplace node that overwrites it) and reads the output cells. All
cells but the constants' are emptied after the call, so no array is kept
between calls.

An output that may share memory with an input, a shared value, a constant or
another output (through ``view_map``/``destroy_map`` chains) is copied,
unless its :class:`~symlab.compile.io.Out` says ``borrow=True``; that is
decided once, when the runner is built:

>>> import numpy as np
>>> import symlab.tensor as st
>>> from symlab.graph.fg import FunctionGraph
>>> x = st.dmatrix("x")
>>> fg = FunctionGraph([x], [x.T, x * 2.0])
>>> run = NumpyLinker().make_runner(fg)
>>> run.copied_outputs
[0]
>>> value = np.arange(4.0).reshape(2, 2)
>>> t, twice = run([value])
>>> np.shares_memory(t, value), twice.tolist()
(False, [[0.0, 2.0], [4.0, 6.0]])

A graph with an ``ifelse`` runs lazily: the runner follows the graph's
:class:`~symlab.compile.lazy_plan.LazyPlan`, and the nodes only the branch not
taken needs are skipped (their cells stay empty):

>>> import symlab.tensor as st
>>> from symlab.ifelse import ifelse
>>> c = st.iscalar("c")
>>> fg = FunctionGraph([c, x], [ifelse(c, st.exp(x).sum(), (x * 2.0).sum())])
>>> run = NumpyLinker().make_runner(fg)
>>> float(run([np.array(0, dtype="int32"), np.ones((2, 2))])[0])
8.0
>>> [str(run.nodes[k].op) for k in run.last_skipped]  # the then branch was not computed
['Elemwise{exp,no_inplace}', 'Sum{acc_dtype=float64}']
"""

from __future__ import annotations

import copy as copy_module
import os
import threading
import weakref
from collections.abc import Iterator, Sequence
from time import perf_counter
from typing import Any

import numpy as np

from symlab.compile.lazy_plan import GUARD, LazyPlan, lazy_plan
from symlab.graph.basic import Apply, Constant, Variable
from symlab.graph.fg import FunctionGraph
from symlab.ifelse.op import truth

Cell = list  # a one-element list: ``cell[0]`` is the value


def alias_roots(fgraph: FunctionGraph) -> dict[Variable, frozenset[Variable]]:
    """For each variable, the variables whose memory it may share (itself if a view of nothing).

    Follows ``view_map`` and ``destroy_map``: the output of a view or of an
    inplace node shares the memory of the inputs it maps to.
    """
    roots: dict[Variable, frozenset[Variable]] = {}

    def of(var: Variable) -> frozenset[Variable]:
        got = roots.get(var)
        if got is None:
            got = roots[var] = frozenset((var,))
        return got

    for node in fgraph.toposort():
        view_map = getattr(node.op, "view_map", None) or {}
        destroy_map = getattr(node.op, "destroy_map", None) or {}
        for j, out in enumerate(node.outputs):
            sources = [*view_map.get(j, ()), *destroy_map.get(j, ())]
            if sources:
                roots[out] = frozenset().union(*(of(node.inputs[i]) for i in sources))
            else:
                roots[out] = frozenset((out,))
    return roots


def outputs_to_copy(fgraph: FunctionGraph, borrow: Sequence[bool] | None = None) -> list[int]:
    """Indices of the outputs that must be copied so the caller owns every array returned."""
    borrow = list(borrow) if borrow is not None else [False] * len(fgraph.outputs)
    roots = alias_roots(fgraph)
    fixed = set(fgraph.inputs)
    seen: set[Variable] = set()
    copied = []
    for k, out in enumerate(fgraph.outputs):
        r = roots.get(out, frozenset((out,)))
        shared_memory = any(v in fixed or isinstance(v, Constant) for v in r) or bool(r & seen)
        if shared_memory and not borrow[k]:
            copied.append(k)
        seen |= r
    return copied


def copy_value(value: Any) -> Any:
    """A copy of an output value (arrays are copied; immutable scalars returned as they are).

    A NumPy ``Generator`` (the value of a random variable's generator) has no ``copy`` method: its state is
    copied whole, so a draw from the copy leaves the original where it was.
    """
    copy = getattr(value, "copy", None)
    if copy is None and isinstance(value, np.random.Generator):
        return copy_module.deepcopy(value)
    return copy() if copy is not None else value


def annotate_node_error(err: BaseException, index: int, n_nodes: int, node: Apply, values: Sequence[Any]) -> None:
    """Add a note to ``err`` naming the node that failed and describing its input values."""
    from symlab.graph.sharedvalue import describe_value

    lines = [f"symlab: raised by node {index} of {n_nodes} (toposort order): {node}"]
    for i, (var, value) in enumerate(zip(node.inputs, values)):
        lines.append(f"  input {i} ({var}, {var.type}): {describe_value(value)}")
    err.add_note("\n".join(lines))


#: Every runner, so that a forked child gets fresh locks (one held by another thread at the fork stays held).
_RUNNERS: weakref.WeakSet = weakref.WeakSet()


def _fresh_locks_in_child() -> None:
    for runner in list(_RUNNERS):
        runner._lock = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_fresh_locks_in_child)


class NumpyRunner:
    """A callable that runs one graph: ``runner(input_values) -> output_values``.

    Subclasses (profiling, NanGuard, DebugMode) override :meth:`execute`.

    A call runs in the runner's storage cells, one per variable, so calls from several threads take turns
    (a lock; NumPy releases the GIL inside its loops, but the cells are the runner's, not the call's):
    each gets its own results.
    """

    def __init__(self, fgraph: FunctionGraph, borrow_outputs: Sequence[bool] | None = None) -> None:
        self.fgraph = fgraph
        self.nodes: list[Apply] = fgraph.toposort()
        storage: dict[Variable, Cell] = {}
        constants: set[int] = set()

        def cell(var: Variable) -> Cell:
            c = storage.get(var)
            if c is None:
                if isinstance(var, Constant):
                    c = [var.data]
                    constants.add(id(c))
                else:
                    c = [None]
                storage[var] = c
            return c

        self.storage = storage
        self.input_cells = [cell(v) for v in fgraph.inputs]
        self.thunks: list[tuple[Any, Apply, list[Cell], list[Cell]]] = [
            (node.op.perform, node, [cell(v) for v in node.inputs], [cell(v) for v in node.outputs])
            for node in self.nodes
        ]
        self.output_cells = [cell(v) for v in fgraph.outputs]
        #: The lazy plan: each ifelse branch's region runs only when its condition chooses it.
        self.plan: LazyPlan = lazy_plan(self.nodes, fgraph.outputs)
        self._program: list[tuple[Any, ...]] | None = (
            [(kind, *rest[:1], cell(rest[1]), *rest[2:]) if kind == GUARD else (kind, *rest)
             for kind, *rest in self.plan.program]
            if self.plan.lazy
            else None
        )
        #: The toposort indices of the nodes the last call skipped (branches not taken).
        self.last_skipped: list[int] = []
        self.copied_outputs = outputs_to_copy(fgraph, borrow_outputs)
        self._temporary = [c for c in storage.values() if id(c) not in constants]
        self._lock = threading.RLock()  # re-entrant: a perform that calls this runner again does not deadlock
        _RUNNERS.add(self)

    def __call__(self, input_values: Sequence[Any]) -> list[Any]:
        with self._lock:
            for c, value in zip(self.input_cells, input_values):
                c[0] = value
            try:
                self.execute()
                outputs = [c[0] for c in self.output_cells]
            finally:
                for c in self._temporary:
                    c[0] = None
        for k in self.copied_outputs:
            outputs[k] = copy_value(outputs[k])
        return outputs

    #: A :class:`~symlab.compile.profiling.ProfileStats` to record node times into, or None.
    profile: Any = None

    def execute(self) -> None:
        """Run the nodes the call needs once, in the plan's order, reading and writing the storage cells."""
        stats = self.profile.nodes if self.profile is not None else None
        for k, (perform, node, ins, outs) in self.scheduled():
            self.run_node(k, perform, node, [c[0] for c in ins], outs, stats)

    def scheduled(self) -> Iterator[tuple[int, tuple[Any, Apply, list[Cell], list[Cell]]]]:
        """``(toposort index, thunk)`` of each node to run now, in run order, skipping the branches not taken.

        A generator: a guard reads its condition's cell when the run reaches it, after the nodes before it
        ran. Each subclass's :meth:`execute` loops over it, so every runner is lazy the same way. The
        indices skipped are kept in :attr:`last_skipped` and, with a profile, counted per node.
        """
        program = self._program
        if program is None:
            self.last_skipped = []
            yield from enumerate(self.thunks)
            return
        thunks = self.thunks
        skipped: list[int] = []
        p, end = 0, len(program)
        while p < end:
            step = program[p]
            if step[0] == GUARD:
                _kind, _guard, cond_cell, taken_when, after = step
                if truth(cond_cell[0]) != taken_when:
                    skipped.extend(s[1] for s in program[p + 1 : after] if s[0] != GUARD)
                    p = after
                    continue
            else:
                k = step[1]
                yield k, thunks[k]
            p += 1
        self.last_skipped = skipped
        if self.profile is not None:
            stats = self.profile.nodes
            for k in skipped:
                stats[k].skipped += 1

    def run_node(self, k: int, perform: Any, node: Apply, args: list[Any], outs: list[list[Any]], stats: Any) -> None:
        """Run node ``k``: an error names the node and its inputs; with ``stats``, its time goes to ``stats[k]``."""
        started = perf_counter()
        try:
            perform(node, args, outs)
        except Exception as err:
            annotate_node_error(err, k, len(self.nodes), node, args)
            raise
        if stats is not None:
            stats[k].seconds += perf_counter() - started
            stats[k].calls += 1


class NumpyLinker:
    """Builds :class:`NumpyRunner` objects (``mode.linker == "numpy"``)."""

    name = "numpy"
    runner_class: type[NumpyRunner] = NumpyRunner

    def make_runner(
        self, fgraph: FunctionGraph, borrow_outputs: Sequence[bool] | None = None, trace: Any = None
    ) -> NumpyRunner:
        """A runner for ``fgraph`` (``trace``, the rewrite trace, is for linkers that check rewrites)."""
        return self.runner_class(fgraph, borrow_outputs)


__all__ = ["NumpyLinker", "NumpyRunner", "alias_roots", "annotate_node_error", "copy_value", "outputs_to_copy"]
