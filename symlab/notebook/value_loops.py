"""The values view's part for loops: the iteration an open scan node shows, its slider, and the plot of its states.

An open scan node (``view.expand(node)``) shows the inner values of one iteration ``t`` (where a NaN is born,
else the last), written in its body's boxes, and ``t = 37 of 0 … 99`` on the node. The browser shows a slider
over ``t`` beside the inputs' sliders (its control's key is ``"<node key>#t"``). The Python twins:

- ``view.iteration(node, t)``: show iteration ``t`` (what moving the slider does; the node is opened if closed);
- ``view.iterations``: ``{node key: t}`` of the open loops;
- ``view.at_iteration(node, t)``: ``{inner variable: value}`` of the body at iteration ``t`` (a read: the view
  does not change);
- ``view.loop_plot(node)``: a :class:`~symlab.notebook.loop_values.LoopPlot` of each state across the
  iterations (SVG, PNG, text), also shown under the view.

>>> import numpy as np
>>> import symlab
>>> import symlab.tensor as st
>>> from symlab.notebook.values import ValuesView
>>> x = st.dvector("x")
>>> acc, _ = symlab.scan(lambda x_t, a: a * 2 + x_t, sequences=x, outputs_info=st.constant(0.0), name="double")
>>> node = acc.owner.inputs[0].owner
>>> view = ValuesView(acc, {x: np.arange(4.0)})
>>> view.iteration(node, 2)
>>> view.iterations == {view.key_of(node): 2}, view.text(view.key_of(node) + "/v1")  # a[t-1] at t = 2
(True, ['1.0'])
>>> body = node.op.fgraph
>>> float(view.at_iteration(node, 3)[body.outputs[0]])
11.0
>>> print(view.loop_plot(node).text().splitlines()[0])
scan 'double': 4 iterations, t = 2 marked
"""

from __future__ import annotations

from typing import Any

from symlab.graph.basic import Apply, Constant, Variable
from symlab.notebook.loop_values import LoopPlot, LoopRun, is_loop_node, loop_name
from symlab.notebook.value_text import describe, has_nan_inf, nan_words

__all__ = ["ITERATION_SUFFIX", "LoopValues"]

#: A loop's slider is keyed ``"<node key>#t"``.
ITERATION_SUFFIX = "#t"


class LoopValues:
    """The values view's part for loops (mixed into :class:`~symlab.notebook.values.ValuesView`)."""

    _values: dict[Variable, Any]
    _inner: Any
    _keys: Any

    def _loop_key(self, node: Apply | str, caller: str) -> tuple[str, Apply]:
        """The key and the node of the loop ``node`` (an Apply node or its key, outer or ``a5/a2``)."""
        key = node if isinstance(node, str) else self._inner.key_of(node)
        found = self._inner.node(key) if key is not None else None
        if found is None or not is_loop_node(found):
            raise ValueError(f"{caller}: {node!s:.80} is not a loop (expected a scan node of this graph or its key)")
        return key, found

    def _loop_inputs(self, key: str, node: Apply, caller: str) -> list[Any]:
        known = self._values if "/" not in key else self._inner.inner_values(key.rsplit("/", 1)[0])
        if not all(v in known or isinstance(v, Constant) for v in node.inputs):
            raise ValueError(f"{caller}: {loop_name(node)} was not computed (a branch not taken, or the node "
                             "holding it is not open)")
        return [known[v] if v in known else v.data for v in node.inputs]

    def _loop_run(self, node: Apply | str, caller: str) -> tuple[str, LoopRun]:
        key, found = self._loop_key(node, caller)
        return key, self._inner.loop_run(key, found, self._loop_inputs(key, found, caller))

    def iteration(self, node: Apply | str, t: int) -> None:
        """Show iteration ``t`` of the loop ``node`` in its box: what moving its slider does (opens it if closed)."""
        key, run = self._loop_run(node, "ValuesView.iteration")
        t = run.check(t, "ValuesView.iteration")
        if key not in self._inner.keys:
            self._inner.open(key)
        self._inner.iterations[key] = t
        self._inner.evaluate(self._values, self._grad_values, self._branches)  # type: ignore[attr-defined]
        with self.answer():  # type: ignore[attr-defined]
            self._draw()  # type: ignore[attr-defined]
            if self.histogram_panel.get("loop") == key:  # type: ignore[attr-defined]
                self._show_loop_plot(key, run)

    @property
    def iterations(self) -> dict[str, int]:
        """``{node key: t}``: the iteration each open loop shows."""
        return {k: t for k, t in self._inner.iterations.items() if k in self._inner.keys}

    def at_iteration(self, node: Apply | str, t: int) -> dict[Variable, Any]:
        """``{inner variable: value}`` of the body of the loop ``node`` at iteration ``t`` (the view is unchanged)."""
        _, run = self._loop_run(node, "ValuesView.at_iteration")
        return dict(run.values_at(run.check(t, "ValuesView.at_iteration")))

    def loop_plot(self, node: Apply | str) -> LoopPlot:
        """Each state (and mapped output) of the loop ``node`` across its iterations, the shown one marked; also
        shown under the view (:attr:`histogram_panel`, the view's picture panel)."""
        key, run = self._loop_run(node, "ValuesView.loop_plot")
        with self.answer():  # type: ignore[attr-defined]
            return self._show_loop_plot(key, run)

    def _show_loop_plot(self, key: str, run: LoopRun) -> LoopPlot:
        plot = run.plot(self._inner.iterations.get(key))
        self.histogram_panel = {"key": key, "loop": key, "title": plot.title,  # type: ignore[attr-defined]
                                "svg": plot.svg(), "text": plot.text()}
        return plot

    def _loop_controls(self) -> list[dict[str, Any]]:
        """A slider over ``t`` for each open loop that ran (key ``"<node key>#t"``)."""
        controls = []
        for key in self._inner.keys:
            run, t = self._inner.loops.get(key), self._inner.iterations.get(key)
            if run is None or t is None or key not in self._inner.runs:
                continue
            controls.append({"key": key + ITERATION_SUFFIX, "name": f"t of {loop_name(run.node)}", "dtype": "int64",
                             "editable": True, "integer": True, "min": 0, "max": run.steps - 1, "step": 1,
                             "value": t, "entry": str(t)})
        return controls

    def _on_iteration_value(self, key: str, value: Any) -> None:
        """The slider of a loop moved (``{type: "value", key: "<node key>#t", value}``)."""
        if isinstance(value, str):
            value = value.strip()
            if not value.lstrip("-").isdigit():
                raise TypeError(f"ValuesView: the iteration must be a whole number, received {value!r:.40}")
            value = int(value)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        self.iteration(key[: -len(ITERATION_SUFFIX)], value)

    def _loop_nan_text(self, node: Apply) -> str | None:
        """``first NaN at iteration 37 of scan 'rnn', node log(...) in the body (a9/a4)``, or ``None``."""
        key = self._inner.key_of(node)
        if key is None:
            return None
        loop = self._inner.nan_loop(node, self._values, key)
        if loop is None or loop.nan_at is None:
            return None
        inside = self._inner.nan_origins(node, self._values, key)
        where = f"{loop_name(node)} (of {loop.steps})"
        if loop.nan_in_inputs:
            return f"first NaN or inf at iteration {loop.nan_at} of {where}: given in that iteration's inputs"
        found = self._inner.resolve(inside[0]) if inside else None
        if found is None or not isinstance(found[1], Apply):
            return f"first NaN or inf at iteration {loop.nan_at} of {where}"
        values = loop.values_at(loop.nan_at)
        out = next((o for o in found[1].outputs if o in values and any(has_nan_inf(values[o]))), found[1].outputs[0])
        return (f"first {nan_words(values.get(out))} at iteration {loop.nan_at} of {where}, node {describe(out, 60)} "
                f"in the body ({inside[0]})")
