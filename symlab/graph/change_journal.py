"""Changes as units: the journal of a FunctionGraph's edits, committed once or rolled back.

Every edit of a :class:`~symlab.graph.fg.FunctionGraph` (an input changed, a
node imported or pruned, an output added or removed) is written, while a
change is open, into a journal of :mod:`symlab.graph.changes` events. When
the outermost change ends, it commits: ``fgraph.version`` grows by one and
every feature's ``on_change_end`` hears one :class:`~symlab.graph.changes.GraphChange`.
When it raises, the journal is played backward and the graph is exactly as
it was, keys included:

>>> import symlab.tensor as st
>>> from symlab.graph.fg import FunctionGraph
>>> x = st.dvector("x")
>>> fg = FunctionGraph([x], [st.exp(x)])
>>> try:
...     with fg.change("try"):
...         fg.replace(fg.outputs[0], st.log(fg.inputs[0]))
...         raise RuntimeError("changed my mind")
... except RuntimeError:
...     pass
>>> fg.outputs[0].owner.op, fg.version
(Elemwise{exp,no_inplace}, 0)

:class:`ChangeJournal` is the part of ``FunctionGraph`` that does this; the
graph's own edits (``_import_node``, ``_change_input``, ``_insert_output``,
``_remove_output``, ``_prune_if_unused``, ``_forget``) are what it undoes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Self

from symlab.graph.basic import Variable
from symlab.graph.changes import (
    GraphChange,
    InputChanged,
    NodeImported,
    NodePruned,
    OutputAdded,
    OutputRemoved,
    VariableImported,
    VariablePruned,
)

__all__ = ["ChangeJournal"]


class ChangeJournal:
    """The changes of a FunctionGraph: ``with fgraph.change():``, commit and rollback (a part of the graph).

    The graph sets ``_journal`` (``None`` while no change is open), ``_restore``, ``_next_serial`` and
    ``version`` in its ``__init__``, and defines the edits this class undoes.
    """

    _journal: list[Any] | None
    _restore: dict[Any, int] | None
    _next_serial: int
    version: int

    @contextmanager
    def change(self, reason: str | None = None) -> Iterator[Self]:
        """Group the edits made in the ``with`` block into one change.

        If the block raises, every edit made in it is undone and the
        exception goes on; otherwise the change commits once (``version``
        grows by one, features hear one ``on_change_end``). Changes nest: an
        inner block that raises is undone alone, and the outermost block
        commits everything.
        """
        mark = self._begin()
        try:
            yield self
        except BaseException:
            self._rollback(mark)
            raise
        self._end(mark, reason)

    @property
    def changing(self) -> bool:
        """True while a change is open (inside a replace, a rewrite step, a ``with fgraph.change():`` block).

        The graph may then be half edited: a view waits for the change to end before it reads it.
        """
        return self._journal is not None

    def _atomic(self, reason: str | None, action: Callable[..., Any], *args: Any) -> None:
        """``action(*args)`` as one change: committed, or rolled back if it raises.

        (What :meth:`change` does, without a generator: rewrites make thousands of changes.)
        """
        mark = self._begin()
        try:
            action(*args)
        except BaseException:
            self._rollback(mark)
            raise
        self._end(mark, reason)

    def _begin(self) -> tuple[int, int]:
        """Open a change (or a nested part of the open one); the mark to end or roll back."""
        if self._journal is None:
            self._journal = []
            return -1, self._next_serial
        return len(self._journal), self._next_serial

    def _end(self, mark: tuple[int, int], reason: str | None) -> None:
        if mark[0] != -1:
            return  # a nested change: the outermost one commits
        events, self._journal = self._journal, None
        if not events:
            return
        self.version += 1
        callbacks = self._callbacks_for("on_change_end")
        if callbacks:
            change = GraphChange(self.version, reason, tuple(events))
            for callback in callbacks:
                callback(self, change)

    def _rollback(self, mark: tuple[int, int]) -> None:
        """Undo the edits made since ``mark``, newest first: the graph is then exactly as it was, keys included."""
        position, next_serial = mark
        journal = self._journal
        start = 0 if position == -1 else position
        undo = journal[start:]
        del journal[start:]
        # What the change pruned comes back with its key; the undoing edits are not part of any change.
        self._restore = {e.node if type(e) is NodePruned else e.variable: e.serial
                         for e in undo if type(e) is NodePruned or type(e) is VariablePruned}
        self._journal = None
        try:
            for e in reversed(undo):
                kind = type(e)
                if kind is InputChanged:
                    self._put_back(((e.node, e.index, e.new, e.old),))
                elif kind is OutputAdded:
                    self._remove_output(e.index, "revert")
                elif kind is OutputRemoved:
                    self._insert_output(e.index, e.variable, "revert")
                elif kind is NodeImported:
                    # A node the change brought in before it failed (add_output of a variable that needs a
                    # foreign input imports its other ancestors first): nothing uses it once the newer edits
                    # are undone, so it leaves, with the roots only it used.
                    if e.node in self._nodes:
                        for out in e.node.outputs:
                            self._prune_if_unused(out, "revert")
                elif kind is VariableImported:
                    if e.variable in self._variables and not self.clients.get(e.variable) and (
                            e.variable not in self.inputs):
                        self._forget(e.variable)
        finally:
            self._restore = None
            self._journal = None if position == -1 else journal
            self._next_serial = next_serial

    def _put_back(self, changes: Iterable[tuple[Any, int, Variable, Variable]]) -> None:
        """Undo input changes, newest first: each ``(node, i, new, old)`` makes input ``i`` of ``node`` ``old`` again.

        A node that was pruned after its input changed comes back first (with the inputs it had when it
        left); what the undone changes brought in is pruned as it loses its last client. Rolling back a
        change and stepping a trace backward both undo this way.
        """
        for node, i, new, old in changes:
            if node != "output" and node not in self._nodes:
                self._import_node(node, False, "revert")
            self._change_input(node, i, new, old, "revert")
