"""Features: objects attached to a FunctionGraph that hear about every change.

A feature defines any of the callbacks ``on_attach(fgraph)``,
``on_detach(fgraph)``, ``on_import(fgraph, node, reason)``,
``on_prune(fgraph, node, reason)``, ``on_change_input(fgraph, node, i,
old, new, reason)`` and ``validate(fgraph)`` (or ``on_validate(fgraph)``).

``History`` records changes so they can be undone; ``ReplaceValidate``
replaces, validates and undoes the replacement if the graph became invalid:

>>> import symlab.tensor as st
>>> from symlab.graph.fg import FunctionGraph
>>> x = st.dvector("x")
>>> fg = FunctionGraph([x], [st.exp(x) * 2.0], features=[ReplaceValidate()])
>>> exp_out = fg.outputs[0].owner.inputs[0]
>>> fg.replace_validate(exp_out, fg.inputs[0] + 1.0, reason="demo")
>>> fg.outputs[0].owner.inputs[0].owner.op
Elemwise{add,no_inplace}
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from symlab.graph.basic import Variable
from symlab.graph.fg import FunctionGraph, InconsistencyError


class AlreadyThere(Exception):
    """The feature is already attached to this graph."""


class History:
    """Records input changes so that :meth:`revert` can undo them.

    Attaching it adds ``fgraph.checkpoint()`` and ``fgraph.revert(checkpoint)``.
    """

    def __init__(self) -> None:
        self._log: dict[FunctionGraph, list[tuple[Any, int, Variable, Variable]]] = {}
        self._replaying = False

    def on_attach(self, fgraph: FunctionGraph) -> None:
        if fgraph in self._log:
            raise AlreadyThere("History is already attached to this graph")
        self._log[fgraph] = []
        fgraph.checkpoint = lambda: len(self._log[fgraph])
        fgraph.revert = lambda checkpoint: self.revert(fgraph, checkpoint)

    def on_detach(self, fgraph: FunctionGraph) -> None:
        del self._log[fgraph]
        del fgraph.checkpoint
        del fgraph.revert

    def on_change_input(self, fgraph, node, i, old, new, reason=None) -> None:
        if not self._replaying:
            self._log[fgraph].append((node, i, old, new))

    def revert(self, fgraph: FunctionGraph, checkpoint: int) -> None:
        """Undo every change made since ``checkpoint``, newest first."""
        log = self._log[fgraph]
        self._replaying = True
        try:
            while len(log) > checkpoint:
                node, i, old, new = log.pop()
                current = fgraph.outputs[i] if node == "output" else node.inputs[i]
                if current is not new:
                    raise InconsistencyError(f"History.revert: {node}[{i}] changed outside the recorded history")
                if node != "output" and node not in fgraph.apply_nodes:
                    fgraph.import_node(node, reason="revert")
                fgraph.change_node_input(node, i, old, reason="revert")
        finally:
            self._replaying = False


class Validator:
    """Adds ``fgraph.validate()``: every feature's ``validate(fgraph)`` must pass."""

    def on_attach(self, fgraph: FunctionGraph) -> None:
        if hasattr(fgraph, "validate"):
            raise AlreadyThere("a Validator is already attached")
        fgraph.validate = lambda: _validate(fgraph)
        fgraph.consistent = lambda: _consistent(fgraph)

    def on_detach(self, fgraph: FunctionGraph) -> None:
        del fgraph.validate
        del fgraph.consistent


def _validate(fgraph: FunctionGraph) -> None:
    """Ask every feature: ``validate(fgraph)`` or ``on_validate(fgraph)`` raises if the graph is invalid."""
    fgraph.execute_callbacks("validate")
    fgraph.execute_callbacks("on_validate")


def _consistent(fgraph: FunctionGraph) -> bool:
    try:
        fgraph.validate()
    except InconsistencyError:
        return False
    return True


class ReplaceValidate(History, Validator):
    """Replace, then validate; on failure put the graph back as it was and raise.

    Attaching it adds ``fgraph.replace_validate(var, new, reason)`` and
    ``fgraph.replace_all_validate(pairs, reason)``.
    """

    def on_attach(self, fgraph: FunctionGraph) -> None:
        History.on_attach(self, fgraph)
        Validator.on_attach(self, fgraph)
        fgraph.replace_validate = lambda var, new, reason=None: self.replace_all_validate(fgraph, [(var, new)], reason)
        fgraph.replace_all_validate = lambda pairs, reason=None: self.replace_all_validate(fgraph, pairs, reason)

    def on_detach(self, fgraph: FunctionGraph) -> None:
        History.on_detach(self, fgraph)
        Validator.on_detach(self, fgraph)
        del fgraph.replace_validate
        del fgraph.replace_all_validate

    def replace_all_validate(
        self, fgraph: FunctionGraph, pairs: Iterable[tuple[Variable, Variable]], reason: str | None = None
    ) -> None:
        checkpoint = fgraph.checkpoint()
        try:
            for var, new in pairs:
                fgraph.replace(var, new, reason=reason)
            fgraph.validate()
        except Exception:
            fgraph.revert(checkpoint)
            raise
