"""Features: objects attached to a FunctionGraph that hear about its changes.

The protocol is declared once, by :class:`~symlab.graph.changes.Feature`
(``on_attach``, ``on_detach``, ``on_import``, ``on_change_input``,
``on_prune``, ``on_change_end``, ``validate``, ``orderings``). Nothing is
patched onto the graph: what a feature offers is a method of the graph that
asks for it (``fgraph.checkpoint()`` needs a :class:`History`,
``fgraph.destroyers(var)`` a destroy handler). The graph's module is built
on this one (it finds these features by their class).

Replacing with validation is built into the graph: ``replace_validate``
and ``replace_all_validate`` make one change, ask every feature's
``validate`` and undo the change when one refuses. :class:`ReplaceValidate`
and :class:`Validator` remain as the names PyTensor code attaches:

>>> import symlab.tensor as st
>>> from symlab.graph.fg import FunctionGraph
>>> x = st.dvector("x")
>>> fg = FunctionGraph([x], [st.exp(x) * 2.0], features=[ReplaceValidate()])
>>> exp_out = fg.outputs[0].owner.inputs[0]
>>> fg.replace_validate(exp_out, fg.inputs[0] + 1.0, reason="demo")
>>> fg.outputs[0].owner.inputs[0].owner.op
Elemwise{add,no_inplace}

A :class:`History` keeps the committed changes so that they can be undone
later, all at once:

>>> fg = FunctionGraph([x], [st.exp(x) * 2.0], features=[History()])
>>> mark = fg.checkpoint()
>>> fg.replace(fg.outputs[0], st.log(fg.inputs[0]))
>>> fg.outputs[0].owner.op
Elemwise{log,no_inplace}
>>> fg.revert(mark)
>>> fg.outputs[0].owner.op
Elemwise{mul,no_inplace}
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from symlab.graph.changes import Feature, GraphChange, InconsistencyError, InputChanged

if TYPE_CHECKING:  # annotations only (tools/import_graph.py): the graph's module is built on this one
    from symlab.graph.fg import FunctionGraph

__all__ = ["AlreadyThere", "Feature", "History", "ReplaceValidate", "Validator"]


class AlreadyThere(Exception):
    """The feature is already attached to this graph."""


class History(Feature):
    """Keeps every committed change so that ``fgraph.revert(fgraph.checkpoint())`` can undo them.

    One History serves one graph.
    """

    def __init__(self) -> None:
        self._fgraph: FunctionGraph = None  # the FunctionGraph it is attached to
        self._log: list[InputChanged] = []
        self._reverting = False

    def on_attach(self, fgraph: FunctionGraph) -> None:
        if self._fgraph is not None:
            raise AlreadyThere("this History is already attached to a graph; make a new one")
        if fgraph.get_feature(History) is not None:
            raise AlreadyThere("a History is already attached to this graph")
        self._fgraph = fgraph
        self._log = []

    def on_detach(self, fgraph: FunctionGraph) -> None:
        self._fgraph = None
        self._log = []

    def on_change_end(self, fgraph: FunctionGraph, change: GraphChange) -> None:
        if not self._reverting:
            self._log.extend(e for e in change.events if type(e) is InputChanged)

    def checkpoint(self, fgraph: FunctionGraph) -> int:
        return len(self._log)

    def revert(self, fgraph: FunctionGraph, checkpoint: int) -> None:
        """Undo every change committed since ``checkpoint``, newest first, as one change."""
        if not 0 <= checkpoint <= len(self._log):
            raise ValueError(f"History.revert: checkpoint {checkpoint} is not one of 0..{len(self._log)}")
        undo = self._log[checkpoint:]
        self._reverting = True
        try:
            with fgraph.change("revert"):
                for event in reversed(undo):
                    node = event.node
                    current = fgraph.outputs[event.index] if node == "output" else node.inputs[event.index]
                    if current is not event.new:
                        raise InconsistencyError(
                            f"History.revert: {node}[{event.index}] changed outside the recorded history"
                        )
                    if node != "output" and node not in fgraph:
                        fgraph.import_node(node, reason="revert")
                    fgraph.change_node_input(node, event.index, event.old, reason="revert")
        finally:
            self._reverting = False
        del self._log[checkpoint:]


class Validator(Feature):
    """Kept for PyTensor code that attaches it: ``fgraph.validate()`` is a method of every graph."""


class ReplaceValidate(History, Validator):
    """Kept for PyTensor code that attaches it: ``replace_validate`` is a method of every graph.

    Attaching it also keeps a :class:`History` (``checkpoint``/``revert``).
    """

    def on_attach(self, fgraph: FunctionGraph) -> None:
        if fgraph.get_feature(ReplaceValidate) is not None:
            raise AlreadyThere("a ReplaceValidate is already attached to this graph")
        History.on_attach(self, fgraph)
