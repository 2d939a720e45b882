"""What a values view says in words: the panel of the selection, its one-line summary and its Markdown twin.

:class:`ValuesPanels` is the part of :class:`~symlab.notebook.values.ValuesView` that reads the view's state
(its values, gradients, NaN spread, branches and open nodes) and writes it for people: the details panel of a
selected variable, operation or inner object, the ``__repr__`` line and the Markdown shown where widgets are not.

>>> import symlab.tensor as st
>>> from symlab.notebook.values import ValuesView
>>> x = st.dscalar("x")
>>> view = ValuesView(st.exp(x), {x: 0.0})
>>> view.select(x)
>>> [row["text"] for row in view.panel["rows"] if row["label"] == "value"]
['array(0.)']
"""

from __future__ import annotations

from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Constant, Variable
from symlab.notebook.loop_values import is_loop_node
from symlab.notebook.value_inner import NOT_COMPUTED, branch_lines
from symlab.notebook.value_text import describe, full_text, value_lines
from symlab.notebook.widget import code_span
from symlab.printing.outline import outline_markdown

__all__ = ["MARKDOWN_MAX_ROWS", "ValuesPanels"]

#: Rows of the Markdown table.
MARKDOWN_MAX_ROWS = 60


class ValuesPanels:
    """The words of a values view (mixed into :class:`~symlab.notebook.values.ValuesView`, whose state it reads)."""

    _inner: Any
    _keys: Any
    _values: dict[Variable, Any]
    _grad_values: dict[Variable, Any]

    def _open_actions(self, key: str, obj: Any) -> list[dict[str, str]]:
        """Open (or close) the inner graph of a selected node that has one."""
        if not isinstance(obj, Apply) or not self._sections(obj):
            return []
        if key in self._inner.keys:
            return [{"text": "close its inner graph", "key": key, "kind": "collapse"}]
        return [{"text": "open its inner graph here", "key": key, "kind": "expand"}]

    def _inner_panel(self, key: str, obj: Any) -> dict[str, Any]:
        """The panel of a node or variable inside an open node."""
        holder = key.rsplit("/", 1)[0]
        where = {"label": "inside", "items": [{"text": f"{self._inner.node(holder).op!s:.60} ({holder})",
                                               "key": holder}]}
        if isinstance(obj, Apply):
            rows = [{"label": "op", "text": str(obj.op)}, where]
            actions = self._open_actions(key, obj)
            return {"title": f"inner operation {_op_text(obj)}", "rows": rows, "actions": actions}
        computed, value = self._inner.value_of(key)
        grad = self._inner.grad_of(key)
        rows = [where, {"label": "type", "text": str(obj.type)},
                {"label": "value", "text": full_text(value) if computed else NOT_COMPUTED},
                {"label": "gradient", "text": full_text(grad) if grad is not None else "none shown"}]
        return {"title": f"inner variable {describe(obj)}", "rows": rows, "actions": []}

    # -- the panel -----------------------------------------------------------------------------------------
    def _variable_panel(self, var: Variable) -> dict[str, Any]:
        rows: list[dict[str, Any]] = [{"label": "kind", "text": _kind(var, self._outputs)},
                                      {"label": "type", "text": str(var.type)}]
        if var.owner is not None:
            rows.append({"label": "computed by", "items": [{"text": _op_text(var.owner),
                                                            "key": self._keys.key_of(var.owner)}]})
        rows.append({"label": "value", "text": full_text(self._values[var]) if var in self._values else
                     f"{NOT_COMPUTED}: only a branch an ifelse did not take needs it"})
        rows.append({"label": "gradient", "text": self._grad_text(var)})
        rows.append({"label": "NaN/inf", "text": self._nans.status(var, self._values)})
        return {"title": f"{_kind(var, self._outputs)} {describe(var)}", "rows": rows}

    def _apply_panel(self, node: Apply) -> dict[str, Any]:
        def items(variables: list[Variable]) -> list[dict[str, Any]]:
            return [{"text": f"{describe(v, 30)} = {' '.join(self._lines(v)[:1])}",
                     "key": self._keys.key_of(v)} for v in variables]

        status = "none"
        if node in self._nans.origins:
            status = f"born here: {self._nans.origin_text(node, self._values)}"
        elif node in self._nans.carriers:
            status = "carried from an input"
        rows = [{"label": "op", "text": str(node.op)}, {"label": "inputs", "items": items(list(node.inputs))},
                {"label": "outputs", "items": items(list(node.outputs))}, {"label": "NaN/inf", "text": status}]
        if node in self._branches:
            rows.insert(1, {"label": "branch", "text": "; ".join(branch_lines(self._branches[node]))})
        inside = self._inner.nan_origins(node, self._values) if node in self._nans.origins else []
        if inside:
            rows.append({"label": "NaN/inf inside", "items": [{"text": f"born at {k}", "key": k} for k in inside]})
        return {"title": f"operation {_op_text(node)}", "rows": rows}

    def _nan_note(self) -> str:
        """Where NaN or inf is born, in words; inside a node with an inner graph, the inner node too."""
        note = self._nans.summary(self._values)
        inside = []
        for origin in self._nans.origins[:3]:
            loop_text = self._loop_nan_text(origin) if is_loop_node(origin) else None
            if loop_text is not None:
                inside.append(loop_text)
                continue
            if isinstance(origin, Apply) and self._sections(origin):
                for key in self._inner.nan_origins(origin, self._values)[:1]:
                    found = self._inner.resolve(key)
                    what = _op_text(found[1]) if found is not None and isinstance(found[1], Apply) else key
                    inside.append(f"inside {_op_text(origin)}: born at {what} ({key})")
        return "; ".join([note, *inside]) if inside else note

    def _grad_text(self, var: Variable) -> str:
        if var in self._grad_values:
            return full_text(self._grad_values[var])
        if not self._wrt:
            return "not asked (pass wrt=[...] to see gradients)"
        return self._no_grad.get(var, "none: not on a path from wrt to the cost")

    # -- displays ------------------------------------------------------------------------------------------
    def _what(self) -> str:
        if len(self._outputs) == 1:
            return describe(self._outputs[0], 30)
        return f"{len(self._outputs)} outputs ({', '.join(describe(o, 20) for o in self._outputs[:3])}" + (
            ", …)" if len(self._outputs) > 3 else ")")

    def _counts(self, code: bool = False) -> list[str]:
        """What the view holds, in words (``code``: names as Markdown code spans)."""
        show = (lambda text: code_span(text, table=False)) if code else str
        scalars = sum(1 for val in self._inputs.values() if np.ndim(val) == 0)
        arrays = len(self._inputs) - scalars
        n = len(self._variables)
        parts = [f"{n} variable{'s' * (n != 1)}", f"{scalars} scalar input{'s' * (scalars != 1)}"]
        if arrays:
            parts.append(f"{arrays} array input{'s' * (arrays != 1)}")
        if self._wrt:
            parts.append("gradients wrt " + ", ".join(show(describe(w, 30)) for w in self._wrt))
        skipped = n - len(self._values)
        if skipped:
            parts.append(f"{skipped} not computed (a branch not taken)")
        return parts

    def summary(self) -> str:
        nan = [self._nans.summary(self._values)] if self._nans.origins else []
        return f"ValuesView of {self._what()}: " + ", ".join(self._counts() + nan)

    def markdown(self) -> str:
        nans, values = self._nans, self._values
        lines = [f"**ValuesView** of {code_span(self._what(), table=False)}: {', '.join(self._counts(code=True))}", ""]
        if nans.origins:  # user text (names, expressions) only inside code spans
            lines += [f"**NaN/inf:** {code_span(nans.origin_text(o, values), table=False)}" for o in nans.origins]
            loops = [self._loop_nan_text(o) for o in nans.origins if is_loop_node(o)]
            lines += [f"**In a loop:** {code_span(text, table=False)}" for text in loops if text] + [""]
        lines += ["| variable | kind | value | gradient |", "|---|---|---|---|"]
        for var in self._variables[:MARKDOWN_MAX_ROWS]:
            kind = _kind(var, self._outputs)
            if var in nans.bad:
                kind += " (NaN/inf born here)" if var in nans.origins or var.owner in nans.origins else " (NaN/inf)"
            grad = "; ".join(value_lines(self._grad_values[var])) if var in self._grad_values else ""
            value = code_span("; ".join(self._lines(var)[:1] if var not in values else value_lines(values[var])))
            lines.append(f"| {code_span(describe(var))} | {kind} | {value} | {code_span(grad) if grad else '-'} |")
        if len(self._variables) > MARKDOWN_MAX_ROWS:
            lines.append(f"\n… and {len(self._variables) - MARKDOWN_MAX_ROWS} more variables "
                         "(`view.value(var)` reads any of them).")
        lines += self._inner_markdown()
        lines += self._histogram_markdown()
        lines += ["", "Outline (the graph as text):", "", outline_markdown(self.outline, self.selected_key, self.marks)]
        return "\n".join(lines)

    def _inner_markdown(self) -> list[str]:
        """The branches taken and the values inside the open nodes, as Markdown."""
        lines: list[str] = []
        for (key, label), state in self._inner.section_states().items():
            lines.append(f"- branch {code_span(label, table=False)} of {key}: {state}"
                         + (" (greyed, not computed)" if state == "skipped" else ""))
        inner_lines = self._inner.lines()
        for key in self._inner.keys:
            rows = [(k, text) for k, text in inner_lines.items() if k.rsplit("/", 1)[0] == key]
            if not rows:
                continue
            node = self._inner.node(key)
            at = self._inner.iterations.get(key)  # a loop shows one iteration
            when = f", iteration t = {at}" if at is not None else ""
            lines += ["", f"Inside {code_span(_op_text(node), table=False)} ({key}{when}):", "", "| inner key | value |",
                      "|---|---|"]
            lines += [f"| {k} | {code_span('; '.join(text))} |" for k, text in rows[:MARKDOWN_MAX_ROWS]]
        return [""] + lines if lines else []


def _kind(var: Variable, outputs: tuple[Variable, ...]) -> str:
    if isinstance(var, Constant):
        return "constant"
    if var.owner is None:
        return "input"
    return "output" if var in outputs else "intermediate"


def _op_text(node: Apply) -> str:
    scalar_op = getattr(node.op, "scalar_op", None)
    return str(scalar_op) if scalar_op is not None and type(node.op).__name__ == "Elemwise" else str(node.op)
