"""Why a rule did or did not apply to a node: the stepper's answer to a click on a node, and what it offers there.

:class:`WhyNot` is the part of :class:`~symlab.notebook.stepper.RewriteStepper` that answers "why not"
(PyTensor #1476's question): the rules tried on a node and what came of each (applied, refused and why, or no
match). For a node with an inner graph the answer also offers to open it in place and to step into its own
rewrite (:mod:`~symlab.notebook.step_nesting`).

>>> import symlab.tensor as st
>>> from symlab.notebook.stepper import RewriteStepper
>>> a = st.dvector("a")
>>> stepper = RewriteStepper(a + a ** 10)
>>> stepper.step = stepper.total
>>> fused = stepper.trace.fgraph.toposort()[0]
>>> [(row["rule"], row["outcome"]) for row in stepper.why_not(fused)]
[('inplace_elemwise', 'refused')]
>>> stepper._on_why({"key": stepper.trace.key(fused)})
>>> stepper.card["why"]["inner"]["into"]
True
"""

from __future__ import annotations

from typing import Any

from symlab.graph.inner_graph import has_inner_graph
from symlab.notebook.inner_values import inner_op
from symlab.notebook.step_inner import inner_node
from symlab.rewriting.trace import ReplayError

__all__ = ["WhyNot"]


class WhyNot:
    """The "why not" answers of a rewrite stepper (mixed into :class:`~symlab.notebook.stepper.RewriteStepper`)."""

    trace: Any
    step: int
    card: dict[str, Any]
    _attempts_error: str | None
    _open: tuple[str, ...]

    # -- why not -------------------------------------------------------------------------------------------
    def why_not(self, node: Any) -> list[dict[str, Any]]:
        """The rules tried on ``node`` and what came of each: applied, refused (and why), or no match.

        ``node`` is a node of the rewritten graph, a copy the stepper drew, or its key, at any step.
        Applied and refused attempts are steps, always known; rules tried without a match are known when
        attempts were recorded, and learnt otherwise, on the first question, by rewriting the starting
        graph again with attempts recorded (:meth:`RewriteTrace.record_attempts`).
        """
        live = self._live(node)
        found: dict[tuple[str, str], dict[str, Any]] = {}

        def add(rule: str, outcome: str, step: int | None, reason: str) -> None:
            entry = found.setdefault((rule, outcome), {"rule": rule, "outcome": outcome, "steps": [], "times": 0,
                                                       "reason": reason})
            entry["times"] += 1
            if step is not None and step not in entry["steps"]:
                entry["steps"].append(step)

        attempts = self._attempts_on(live)
        for attempt in attempts or ():
            if attempt.outcome == "no match":
                add(attempt.rule, "no match", None, "its pattern did not match this node")
        for step in self.trace.steps:
            if step.node is live:
                add(step.rule, "applied" if step.accepted else "refused", step.index, step.reason)
        result = sorted(found.values(), key=lambda e: (e["steps"][0] if e["steps"] else 10**9, e["rule"]))
        if attempts is None:
            result.append({"rule": "", "outcome": "unknown", "steps": [], "times": 0,
                           "reason": f"rules that did not match are not known: {self._attempts_error}"})
        return result

    def _attempts_on(self, live: Any) -> Any:
        if self.trace.attempts is None and self._attempts_error is None:
            try:
                self.trace.record_attempts()
            except ReplayError as err:
                self._attempts_error = str(err)
        return self.trace.attempts_on(live)

    def _live(self, node: Any) -> Any:
        if isinstance(node, str):
            try:
                return self.trace.by_key(node)
            except KeyError:
                raise ValueError(f"RewriteStepper.why_not: no node of this rewrite has the key {node!r}") from None
        try:
            return self._cursor.origin(node)
        except KeyError:
            pass
        try:
            self.trace.key(node)
        except KeyError:
            raise ValueError(f"RewriteStepper.why_not: {node!r} is not a node of this rewrite") from None
        return node

    def _on_why(self, content: dict[str, Any]) -> None:
        key = content.get("key")
        if not isinstance(key, str):
            return
        if key.startswith("out") and key[3:].isdigit():  # a graph output: the node computing it at this step
            self._cursor.seek(self.step)
            outputs = self._cursor.fgraph.outputs
            k = int(key[3:])
            owner = outputs[k].owner if k < len(outputs) else None
            if owner is None:
                return
            key = self._cursor.key(owner)
        if "/" in key:  # a node inside an open node: the rules ran on the outer graph; step into to see its own
            inside = inner_node(self.trace, key)
            if inside is None:
                return
            with self.answer():
                self.card = {**self.card, "why": {"node": str(inside), "key": key, "rows": [],
                                                  "inner": self._inner_actions(key, inside)}}
            return
        try:
            node = self.trace.by_key(key)
        except KeyError:
            return
        if not hasattr(node, "op"):  # a variable: ask about the node that computes it
            node = node.owner
            if node is None:
                return
            key = self.trace.key(node)
        rows = self.why_not(node)
        with self.answer():
            self.card = {**self.card, "why": {"node": str(node), "key": key, "rows": rows,
                                              "inner": self._inner_actions(key, node)}}

    def _inner_actions(self, key: str, node: Any) -> dict[str, Any] | None:
        """What the card offers for a node with an inner graph: open it in place (or close it), step into it."""
        if not has_inner_graph(node.op):
            return None
        return {"key": key, "open": key in self._open, "into": inner_op(node.op) is not None}
