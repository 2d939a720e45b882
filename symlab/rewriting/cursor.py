"""``TraceCursor``: a replay of a rewrite that moves one step at a time, forward or backward.

A cursor holds one copy of the graph, at step :attr:`~TraceCursor.position`.
:meth:`~TraceCursor.forward` redoes the next step's events on it and
:meth:`~TraceCursor.backward` undoes the current step's, so a move costs
what that step changed, not the length of the trace; :meth:`~TraceCursor.seek`
moves to any step. The copy keeps its objects across moves: a node no step
touched is the same object at every step, and every object has the key the
rewritten graph gave it (:meth:`RewriteTrace.key <symlab.rewriting.trace.RewriteTrace.key>`):

>>> import symlab.tensor as T
>>> from symlab.rewriting import rewrite_graph
>>> a = T.dvector("a")
>>> _, trace = rewrite_graph(a + a ** 10, exclude=("inplace",))
>>> cursor = trace.cursor()
>>> [str(n.op) for n in cursor.fgraph.toposort()]
['DimShuffle{x}', 'Elemwise{pow,no_inplace}', 'Elemwise{add,no_inplace}']
>>> cursor.seek(len(trace))
>>> [str(n.op) for n in cursor.fgraph.toposort()]
['Elemwise{Composite{(i0 + (i0 ** 10))},no_inplace}']
>>> a_copy = cursor.fgraph.inputs[0]
>>> cursor.seek(0)
>>> cursor.fgraph.inputs[0] is a_copy, cursor.key(a_copy) == trace.key(trace.fgraph.inputs[0])
(True, True)

The copy belongs to the cursor: read it, draw it, but change a copy of it
(:meth:`~TraceCursor.graph`), never it. Nothing a cursor does touches the
rewritten graph or the objects of the user's graph.
"""

from __future__ import annotations

from typing import Any

from symlab.graph.basic import Apply, Variable
from symlab.graph.changes import InputChanged, NodeImported, OutputAdded, OutputRemoved
from symlab.graph.display import register_graph_holder
from symlab.graph.fg import FunctionGraph
from symlab.rewriting.steps import ReplayError, RewriteStep


class TraceCursor:
    """A copy of a trace's graph at step :attr:`position`, moved by :meth:`forward`, :meth:`backward`, :meth:`seek`.

    ``trace`` is the :class:`~symlab.rewriting.trace.RewriteTrace` it replays (``trace.cursor()`` makes
    one; the trace's module is built on this one, so the annotation is ``Any``).
    """

    def __init__(self, trace: Any, position: int = 0) -> None:
        self.trace = trace
        fgraph, copy = trace._build_start()
        #: The graph at :attr:`position` (the cursor's own copy: do not change it).
        self.fgraph: FunctionGraph = fgraph
        #: The rewritten graph's objects -> their copies here (``"output"`` -> ``"output"``).
        self._copy: dict[Any, Any] = copy
        #: The copies -> the rewritten graph's objects.
        self._origin: dict[Any, Any] = {mine: live for live, mine in copy.items() if live != "output"}
        self.position = 0
        self.seek(position)

    # -- moving ----------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.trace.steps)

    def forward(self) -> None:
        """Redo the next step (a refused one changes nothing) and move to it."""
        if self.position >= len(self.trace.steps):
            raise IndexError(f"TraceCursor.forward: already at the last step ({self.position})")
        step = self.trace.steps[self.position]
        if step.accepted:
            self._redo(step)
        self.position += 1

    def backward(self) -> None:
        """Undo the current step and move to the one before it."""
        if self.position <= 0:
            raise IndexError("TraceCursor.backward: already at step 0 (the start)")
        step = self.trace.steps[self.position - 1]
        if step.accepted:
            self._undo(step)
        self.position -= 1

    def seek(self, k: int) -> None:
        """Move to step ``k`` (``0``: the start, ``len(trace)``: the final graph), step by step."""
        if not isinstance(k, int) or not 0 <= k <= len(self.trace.steps):
            raise IndexError(f"TraceCursor.seek({k!r}): the trace has steps 1..{len(self.trace.steps)} (0 is the start)")
        while self.position < k:
            self.forward()
        while self.position > k:
            self.backward()

    @property
    def step(self) -> RewriteStep | None:
        """The step the cursor is at (``None`` at step 0)."""
        return self.trace.steps[self.position - 1] if self.position else None

    # -- identity ---------------------------------------------------------------------------------
    def key(self, obj: Apply | Variable) -> str:
        """The stable key of ``obj``, a copy held by this cursor or an object of the rewritten graph."""
        return self.trace.key(self._origin.get(obj, obj))

    def object(self, key: str) -> Apply | Variable:
        """This cursor's copy of the object whose key is ``key`` (it may not be in the graph at this step)."""
        live = self.trace.by_key(key)
        mine = self._copy.get(live)
        if mine is None:
            raise KeyError(f"TraceCursor.object: {key!r} ({live}) enters the graph after step {self.position}")
        return mine

    def origin(self, obj: Apply | Variable) -> Apply | Variable:
        """The object of the rewritten graph that this cursor's ``obj`` copies."""
        try:
            return self._origin[obj]
        except KeyError:
            raise KeyError(f"TraceCursor.origin: {obj} is not an object of this cursor") from None

    def copy_of(self, obj: Apply | Variable) -> Apply | Variable:
        """This cursor's copy of ``obj``, an object of the rewritten graph."""
        try:
            return self._copy[obj]
        except KeyError:
            raise KeyError(f"TraceCursor.copy_of: the cursor has no copy of {obj} (yet)") from None

    def graph(self) -> FunctionGraph:
        """A new copy of the graph at this step, yours to change."""
        return self.fgraph.clone(check_integrity=False)

    def __repr__(self) -> str:
        return f"<TraceCursor at step {self.position}/{len(self.trace.steps)}>"

    # -- replay -----------------------------------------------------------------------------------
    def _resolve(self, var: Variable, step: RewriteStep) -> Variable:
        mine = self._copy.get(var)
        if mine is not None:
            return mine
        if var.owner is None:  # a constant this step brought in: a copy of it, never the object itself
            mine = self._copy[var] = var.clone()
            self._origin[mine] = var
            return mine
        raise ReplayError(f"step {step.index} ({step.rule}) uses {var}, which the trace never saw created")

    def _redo(self, step: RewriteStep) -> None:
        fgraph, copy = self.fgraph, self._copy
        for event in step.events:
            kind = type(event)
            if kind is NodeImported:
                node = event.node
                if node in copy:  # seen before (the cursor came back): the same copy, same inputs as then
                    continue
                mine = Apply(node.op, [self._resolve(v, step) for v in event.inputs], [o.clone() for o in node.outputs])
                mine.tag.update(node.tag)
                copy[node] = mine
                self._origin[mine] = node
                for live_out, my_out in zip(node.outputs, mine.outputs):
                    copy[live_out] = my_out
                    self._origin[my_out] = live_out
            elif kind is InputChanged:
                target = copy.get(event.node)
                if target is None:
                    raise ReplayError(f"step {step.index} ({step.rule}) changes {event.node}, unknown to the trace")
                # The change was checked (types, cycles) when it was made on the rewritten graph.
                fgraph._change_input(target, event.index, self._resolve(event.old, step),
                                     self._resolve(event.new, step), step.rule)
            elif kind is OutputAdded:
                fgraph._insert_output(event.index, self._resolve(event.variable, step), step.rule)
            elif kind is OutputRemoved:
                fgraph._remove_output(event.index, step.rule)
            # Prunes and imports of roots follow from the input and output changes.

    def _undo(self, step: RewriteStep) -> None:
        """Take ``step`` back: its input and output changes, newest first."""
        copy, fgraph = self._copy, self.fgraph
        inputs: list[tuple[Any, int, Any, Any]] = []  # a run of input changes, put back together
        for event in reversed(step.events):
            kind = type(event)
            if kind is InputChanged:
                inputs.append((copy[event.node], event.index, copy[event.new], copy[event.old]))
                continue
            if kind is not OutputAdded and kind is not OutputRemoved:
                continue
            if inputs:
                fgraph._put_back(inputs)
                inputs = []
            if kind is OutputAdded:
                fgraph._remove_output(event.index, None)
            else:
                fgraph._insert_output(event.index, copy[event.variable], None)
        if inputs:
            fgraph._put_back(inputs)


# The printers (symlab.printing.subject) draw a cursor as the graph at its step.
register_graph_holder(TraceCursor, "cursor")
