"""``RewriteStepper``: watch the optimizer work, one rule application per step, before and after.

``symlab.notebook.RewriteStepper(source)`` takes a compiled Function (its ``f.trace``), a
:class:`~symlab.rewriting.trace.RewriteTrace`, or outputs to rewrite (with ``include``/``exclude``).
Step 0 is the unoptimized graph and the last step the optimized one. At step ``k`` the two panes show
the graph before and after that step, the nodes it removed marked red in "before" and those it created
marked green in "after"; every node keeps its key from step to step. The rule card says which rule
did it (the name ``include``/``exclude`` accept), in which phase, where it is written, why, how long it
took, what it replaced, and the line that would exclude it. Refused attempts are steps too, with the
reason they were refused.

The controls have Python twins: ``stepper.step`` (settable), ``stepper.current``, ``stepper.graph``,
``stepper.next()``, ``stepper.prev()``, ``stepper.find(rule=...)``:

>>> import symlab.tensor as st
>>> a = st.dvector("a")
>>> stepper = RewriteStepper(a + a ** 10)
>>> stepper
RewriteStepper: step 0/3; constant_folding x1, elemwise_fusion x1, inplace_elemwise x1 (refused)
>>> stepper.find(rule="elemwise_fusion")
2
>>> stepper.step = 2
>>> stepper.card["rule"], stepper.card["status"], stepper.card["reason"]
('elemwise_fusion', 'applied', 'fused 2 Elemwise nodes into Elemwise{Composite{(i0 + (i0 ** 10))},no_inplace}')
>>> [str(n.op) for n in stepper.graph.toposort()]
['Elemwise{Composite{(i0 + (i0 ** 10))},no_inplace}']
"""

from __future__ import annotations

import inspect
import linecache
import tokenize
from typing import Any

import traitlets

from symlab.graph.basic import Variable
from symlab.notebook.widget import ViewWidget, code_span
from symlab.printing.model import GraphModel, build_model, build_part
from symlab.rewriting.trace import RewriteStep, RewriteTrace

__all__ = ["RewriteStepper"]

#: Drawn nodes of each pane before folding (the nodes a step changed always stay visible).
PANE_MAX_NODES = 60
#: Rows of the Markdown table of steps.
MARKDOWN_MAX_ROWS = 200
#: A graph of more nodes than this is drawn around each step's change (``stepper.full = True``: all of it).
NEIGHBOURHOOD_FROM = 300
#: How far from the changed nodes the neighbourhood reaches, and how many nodes it holds at most.
NEIGHBOURHOOD_RADIUS = 3
NEIGHBOURHOOD_MAX = 60


def _trace_of(source: Any, include: Any, exclude: Any) -> tuple[RewriteTrace, str]:
    """The trace to step through, and how to exclude a rule in the user's own terms (a format string)."""
    if isinstance(source, RewriteTrace):
        return source, 'rewrite_graph(outputs, exclude=("{rule}",))'
    maker = getattr(source, "maker", None)
    trace = getattr(source, "trace", None)
    if maker is not None and isinstance(trace, RewriteTrace):
        mode = getattr(maker.mode, "name", None) or "NUMBA"
        return trace, f'symlab.function(inputs, outputs, mode=symlab.get_mode("{mode}").excluding("{{rule}}"))'
    outputs = [source] if isinstance(source, Variable) else source
    if isinstance(outputs, list | tuple) and outputs and all(isinstance(o, Variable) for o in outputs):
        from symlab.rewriting import rewrite_graph

        _, trace = rewrite_graph(list(outputs), include=include, exclude=exclude, record_attempts=True)
        return trace, 'rewrite_graph(outputs, exclude=("{rule}",))'
    raise TypeError(
        "RewriteStepper expects a compiled Function, a RewriteTrace, or a Variable or list of Variables to "
        f"rewrite; received {type(source).__name__}"
    )


class RewriteStepper(ViewWidget):
    """Step through a rewrite; see the module documentation."""

    step = traitlets.Int(0).tag(sync=True)
    total = traitlets.Int(0).tag(sync=True)
    before_svg = traitlets.Unicode("").tag(sync=True)
    after_svg = traitlets.Unicode("").tag(sync=True)
    before_title = traitlets.Unicode("").tag(sync=True)
    after_title = traitlets.Unicode("").tag(sync=True)
    card = traitlets.Dict().tag(sync=True)
    steps = traitlets.List().tag(sync=True)
    compare = traitlets.Bool(False).tag(sync=True)
    #: Draw the whole graph (folded), not only the neighbourhood of a large graph's change.
    full = traitlets.Bool(False).tag(sync=True)
    notice = traitlets.Unicode("").tag(sync=True)

    def __init__(self, source: Any, include: Any = ("fast_run",), exclude: Any = (), style: str = "compact",
                 max_nodes: int = PANE_MAX_NODES) -> None:
        if style not in ("structure", "compact"):
            raise ValueError(f"RewriteStepper: style must be 'structure' or 'compact', received {style!r}")
        self.trace, self._exclude_line = _trace_of(source, include, exclude)
        self._style = style
        self._max_nodes = max_nodes
        self._cursor = self.trace.cursor()
        self._ready = False
        super().__init__(view="stepper", total=len(self.trace), steps=[_row(s) for s in self.trace.steps])
        self._ready = True
        with self.answer():
            self._draw()

    # -- the controls' Python twins -------------------------------------------------------------------
    @property
    def current(self) -> RewriteStep | None:
        """The step shown (``None`` at step 0, the unoptimized graph)."""
        return self.trace.step(self.step) if self.step else None

    @property
    def graph(self) -> Any:
        """A copy of the graph after the current step (yours to change)."""
        return self._cursor.graph()

    def next(self) -> None:
        """Go to the next step (at the last one, stay)."""
        if self.step < self.total:
            self.step += 1

    def prev(self) -> None:
        """Go to the previous step (at step 0, stay)."""
        if self.step > 0:
            self.step -= 1

    def find(self, rule: str, start: int | None = None, backward: bool = False) -> int | None:
        """The next step (after ``start``, default the current one) that applied or tried ``rule``; ``None`` if none."""
        if not isinstance(rule, str):
            raise TypeError(f"RewriteStepper.find: rule must be a rule's name (str), received {type(rule).__name__}")
        here = self.step if start is None else start
        order = range(here - 1, 0, -1) if backward else range(here + 1, self.total + 1)
        for k in order:
            if self.trace.step(k).rule == rule:
                return k
        return None

    @traitlets.validate("step")
    def _valid_step(self, proposal: Any) -> int:
        k = proposal["value"]
        if not 0 <= k <= self.total:
            raise traitlets.TraitError(f"RewriteStepper.step must be in 0..{self.total} (0: unoptimized), received {k}")
        return k

    @traitlets.observe("step", "compare", "full")
    def _redraw(self, change: Any) -> None:
        if self._ready:
            with self.answer():
                self._draw()

    # -- browser messages -------------------------------------------------------------------------------
    def _on_goto(self, content: dict[str, Any]) -> None:
        target = content.get("step")
        if isinstance(target, int) and 0 <= target <= self.total:
            self.step = target

    def _on_move(self, content: dict[str, Any]) -> None:
        moves = {"next": self.next, "prev": self.prev, "first": lambda: setattr(self, "step", 0),
                 "last": lambda: setattr(self, "step", self.total)}
        action = moves.get(content.get("direction"))
        if action is not None:
            action()

    def _on_rule(self, content: dict[str, Any]) -> None:
        """Go to the next (or previous) use of the current rule."""
        current = self.current
        if current is not None:
            found = self.find(current.rule, backward=bool(content.get("backward")))
            if found is not None:
                self.step = found

    def _on_compare(self, content: dict[str, Any]) -> None:
        self.compare = bool(content.get("compare"))

    def _on_full(self, content: dict[str, Any]) -> None:
        self.full = bool(content.get("full"))

    def _on_source(self, content: dict[str, Any]) -> None:
        with self.answer():
            self.card = {**self.card, "source": self.rule_source()}

    def why_not(self, node: Any) -> list[dict[str, Any]]:
        """The rules tried on ``node`` and what came of each: applied, refused (and why), or no match.

        ``node`` is a node of the rewritten graph, a copy the stepper drew, or its key. Rules tried
        without a match are known when attempts were recorded (a stepper made from outputs records
        them; ``rewrite_graph(..., record_attempts=True)`` does too); applied and refused attempts are
        steps, always known.
        """
        live = self._live(node)
        found: dict[tuple[str, str], dict[str, Any]] = {}

        def add(rule: str, outcome: str, step: int | None, reason: str) -> None:
            entry = found.setdefault((rule, outcome), {"rule": rule, "outcome": outcome, "steps": [], "times": 0,
                                                       "reason": reason})
            entry["times"] += 1
            if step is not None and step not in entry["steps"]:
                entry["steps"].append(step)

        attempts = self.trace.attempts_on(live)
        for attempt in attempts or ():
            if attempt.outcome == "no match":
                add(attempt.rule, "no match", None, "its pattern did not match this node")
        for step in self.trace.steps:
            if step.node is live:
                add(step.rule, "applied" if step.accepted else "refused", step.index, step.reason)
        result = sorted(found.values(), key=lambda e: (e["steps"][0] if e["steps"] else 10**9, e["rule"]))
        if attempts is None:
            result.append({"rule": "", "outcome": "unknown", "steps": [], "times": 0,
                           "reason": "rules that did not match were not recorded: make the stepper from the outputs, "
                                     "or rewrite with rewrite_graph(..., record_attempts=True)"})
        return result

    def _live(self, node: Any) -> Any:
        if isinstance(node, str):
            return self.trace.by_key(node)
        try:
            return self._cursor.origin(node)
        except KeyError:
            pass
        try:
            self.trace.key(node)
        except KeyError:
            raise ValueError(f"RewriteStepper.why_not: {node!r} is not a node of this rewrite") from None
        return node

    def check(self, trials: int = 3, seed: int = 0) -> dict[str, Any]:
        """Evaluate the graph before and after the current step on random inputs; the largest difference.

        The inputs get values of their types (floats from a normal law, integers from 0 to 4, each unknown
        dimension of size 3). DebugMode's idea, made visible: a step that changes the results is a bug in
        its rule (or a rule that, like ``x * y / y -> x`` where ``y`` is 0, trades NaNs for numbers).
        """
        import numpy as np

        from symlab.graph.evaluate import evaluate

        k = self.step
        if k == 0:
            return {"step": 0, "text": "step 0 is the starting graph: nothing to compare"}
        before = self.trace.graph_at(k - 1)
        after = self.trace.graph_at(k)
        rng = np.random.default_rng(seed)
        worst, nan_mismatch = 0.0, 0
        for _ in range(trials):
            values = [_random_value(v.type, rng) for v in before.inputs]
            got_before = evaluate(before.outputs, {v: np.array(x, copy=True) for v, x in zip(before.inputs, values)})
            got_after = evaluate(after.outputs, {v: np.array(x, copy=True) for v, x in zip(after.inputs, values)})
            for b, a in zip(got_before, got_after):
                b, a = np.asarray(b, dtype=float), np.asarray(a, dtype=float)
                nan_mismatch += int(np.sum(np.isnan(b) != np.isnan(a)))
                both = ~(np.isnan(b) | np.isnan(a))
                if both.any():
                    with np.errstate(invalid="ignore"):
                        diff = np.abs(b[both] - a[both])
                    diff = diff[np.isfinite(diff)]
                    worst = max(worst, float(diff.max()) if diff.size else 0.0)
        text = f"step {k}: largest difference {worst:.3g} over {trials} random inputs"
        if nan_mismatch:
            text += f"; {nan_mismatch} values are NaN on one side only"
        return {"step": k, "max_difference": worst, "nan_mismatch": nan_mismatch, "trials": trials, "text": text}

    def _on_check(self, content: dict[str, Any]) -> None:
        result = self.check()
        with self.answer():
            self.card = {**self.card, "check": result["text"]}

    def _on_why(self, content: dict[str, Any]) -> None:
        key = content.get("key")
        if not isinstance(key, str):
            return
        try:
            node = self.trace.by_key(key)
        except KeyError:
            return
        if not hasattr(node, "op"):  # a variable: ask about the node that computes it
            node = node.owner
            if node is None:
                return
        with self.answer():
            self.card = {**self.card, "why": {"node": str(node), "key": key, "rows": self.why_not(node)}}

    def export_html(self, path: Any) -> Any:
        """Write one self-contained page of every step (pictures, cards, the same script inlined); its path.

        The page works without a kernel or a network: open it in a browser, step with the arrow keys, hand
        it in or attach it to a bug report. Checks and "why not" need the kernel and are left out. Every step
        is drawn once to make it: a long trace makes a long wait and a large file.
        """
        import json
        from pathlib import Path

        from symlab.notebook.widget import static_file

        keep = (self.step, self.compare)
        states = []
        try:
            self.compare = False
            for k in range(self.total + 1):
                self.step = k
                card = dict(self.card)
                if k:
                    card["source"] = self.rule_source()
                states.append({"before_svg": _bare_svg(self.before_svg), "after_svg": _bare_svg(self.after_svg),
                               "before_title": self.before_title, "after_title": self.after_title, "card": card})
            self.compare = True
            compare = {"before_svg": _bare_svg(self.before_svg), "after_svg": _bare_svg(self.after_svg),
                       "before_title": self.before_title, "after_title": self.after_title}
        finally:
            self.compare = keep[1]
            self.step = keep[0]
        data = {"states": states, "compare": compare, "steps": self.steps, "total": self.total}
        # JSON in a <script> element: no "<", ">" or "&" left to end it early, whatever the names hold.
        payload = json.dumps(data).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
        title = _html_text(f"symlab rewrite: {self.summary()}")
        page = (
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{title}</title><style>{static_file('views.css')}</style></head>\n"
            "<body><div id=\"symlab-stepper\"></div>\n"
            f"<script type=\"application/json\" id=\"symlab-steps\">{payload}</script>\n"
            f"<script type=\"module\">\n{static_file('views.js')}\n{static_file('offline.js')}\n</script>\n"
            "</body></html>\n"
        )
        target = Path(path)
        target.write_text(page, encoding="utf-8")
        return target

    def rule_source(self) -> str:
        """The source code of the current step's rule (read from its location), or why it cannot be shown."""
        step = self.current
        if step is None:
            return ""
        file, line = step.location.file, step.location.line
        lines = linecache.getlines(file)
        if not 1 <= line <= len(lines):
            return f"(the source of {step.rule} is not available: {step.location})"
        try:  # the block that starts there: decorators, signature and body
            block = inspect.getblock(lines[line - 1:])
        except (IndentationError, SyntaxError, tokenize.TokenError):
            block = lines[line - 1:line + 20]
        return "".join(block[:120]).rstrip()

    # -- drawing ---------------------------------------------------------------------------------------------
    def _model(self, marks: dict[str, list[Any]], around: list[Any] | None = None) -> tuple[GraphModel, tuple[str, ...]]:
        """The picture of the cursor's graph: all of it (folded), or, for a large graph, the nodes ``around``."""
        fg = self._cursor.fgraph
        size = len(fg._nodes)
        if self.full or around is None or size <= NEIGHBOURHOOD_FROM:
            return build_model(self._cursor, self._style, max_nodes=self._max_nodes, classes=marks), ()
        region = _neighbourhood(fg, around)
        order = sorted(region, key=lambda n: fg._nodes[n])  # the order the nodes entered the graph
        model = build_part(order, self._style, self._cursor.key, fg, fg.outputs, classes=marks)
        note = (f"the {len(region)} nodes around this step's change; {size - len(region)} nodes hidden "
                "(stepper.full = True, or 'whole graph', draws all of it)")
        return model, (note,)

    def _copies(self, nodes: list[Any]) -> list[Any]:
        """The cursor's copies of those of ``nodes`` it has (a node may not exist yet at this step)."""
        found = []
        for node in nodes:
            try:
                found.append(self._cursor.copy_of(node))
            except KeyError:
                pass
        return found

    def _draw(self) -> None:
        trace, cursor, k = self.trace, self._cursor, self.step
        if self.compare:
            cursor.seek(0)
            self.before_svg, self.before_title = self.show_picture("before", *self._model({})), "unoptimized (step 0)"
            cursor.seek(self.total)
            self.after_svg, self.after_title = self.show_picture("after", *self._model({})), f"optimized (step {self.total})"
            cursor.seek(k)
        elif k == 0:
            cursor.seek(0)
            self.before_svg, self.before_title = self.hide_picture("before"), ""
            self.after_svg, self.after_title = self.show_picture("after", *self._model({})), (
                "step 0: the graph before any rewrite")
        else:
            step = trace.step(k)
            cursor.seek(k - 1)
            removed = [cursor.copy_of(n) for n in step.removed]
            centre = removed or self._copies([step.node])
            self.before_svg = self.show_picture("before", *self._model({"removed": removed}, centre))
            self.before_title = f"before step {k}"
            cursor.forward()
            created = [cursor.copy_of(n) for n in step.created]
            status = "" if step.accepted else " (refused: unchanged)"
            self.after_svg = self.show_picture("after", *self._model({"created": created}, created or centre))
            self.after_title = f"after step {k}{status}"
        self.card = self._card()
        hidden = []
        if self.before_svg == "" and self.after_svg == "" and self.total:
            hidden.append("Graphviz is not installed: no pictures (the rule card still works).")
        self.notice = " ".join(hidden)

    def _card(self) -> dict[str, Any]:
        step = self.current
        if step is None:
            summary = self.trace.summary()
            return {"step": 0, "title": "step 0: the unoptimized graph",
                    "counts": [[s.rule, s.applied, s.refused, f"{s.seconds * 1e3:.2f} ms"] for s in summary
                               if s.applied or s.refused]}
        return {
            "step": step.index,
            "title": f"step {step.index} of {self.total}",
            "rule": step.rule,
            "phase": step.phase,
            "status": "applied" if step.accepted else "refused",
            "reason": step.reason,
            "location": str(step.location),
            "seconds": f"{step.seconds * 1e3:.3f} ms",
            "node": str(step.node) if step.node is not None else "",
            "replacements": [f"{old} -> {new}" for old, new in step.replacements],
            "removed": len(step.removed),
            "created": len(step.created),
            "exclude": self._exclude_line.format(rule=step.rule),
        }

    # -- displays ------------------------------------------------------------------------------------------
    def summary(self) -> str:
        counts = []
        for s in self.trace.summary():
            if not (s.applied or s.refused):  # tried, never matched: not a step
                continue
            text = f"{s.rule} x{s.applied}" if s.applied else f"{s.rule} x{s.refused} (refused)"
            if s.applied and s.refused:
                text += f" ({s.refused} refused)"
            counts.append(text)
        return f"RewriteStepper: step {self.step}/{self.total}; " + (", ".join(counts) or "no steps")

    def markdown(self) -> str:
        lines = [f"**RewriteStepper**: step {self.step} of {self.total}", "",
                 "| step | phase | rule | status | reason |", "|---|---|---|---|---|"]
        for step in self.trace.steps[:MARKDOWN_MAX_ROWS]:
            status = "applied" if step.accepted else "refused"
            lines.append(f"| {step.index} | {code_span(step.phase)} | {code_span(step.rule)} | {status} | {code_span(step.reason)} |")
        if self.total > MARKDOWN_MAX_ROWS:
            lines.append(f"| … | | {self.total - MARKDOWN_MAX_ROWS} more steps | | |")
        return "\n".join(lines)


def _bare_svg(svg: str) -> str:
    """``svg`` without its XML prologue and DOCTYPE (which names a URL): the ``<svg>`` element alone."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg


def _html_text(text: str) -> str:
    import html

    return html.escape(text, quote=True)


def _random_value(t: Any, rng: Any) -> Any:
    """A random value of type ``t`` (a tensor type): unknown dimensions of size 3."""
    import numpy as np

    shape = tuple(3 if d is None else d for d in getattr(t, "shape", ()))
    dtype = np.dtype(getattr(t, "dtype", "float64"))
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        return rng.integers(0, 5, shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    raise TypeError(f"RewriteStepper.check: no random values for inputs of type {t!r}")


def _neighbourhood(fgraph: Any, centre: list[Any]) -> set[Any]:
    """The nodes of ``fgraph`` at most NEIGHBOURHOOD_RADIUS edges from ``centre`` (breadth first, bounded)."""
    region: set[Any] = set()
    frontier = [n for n in centre if n in fgraph._nodes]
    for _ in range(NEIGHBOURHOOD_RADIUS + 1):
        following = []
        for node in frontier:
            if node in region or len(region) >= NEIGHBOURHOOD_MAX:
                continue
            region.add(node)
            following.extend(i.owner for i in node.inputs if i.owner is not None and i.owner not in region)
            for out in node.outputs:
                following.extend(c for c, _ in fgraph.clients.get(out, ()) if c != "output" and c not in region)
        frontier = following
    return region


def _row(step: RewriteStep) -> list[Any]:
    """A row of the step list: index, phase, rule, accepted, and whether it moved no node (nothing came or went)."""
    quiet = step.accepted and not step.removed and not step.created
    return [step.index, step.phase, step.rule, step.accepted, quiet]
