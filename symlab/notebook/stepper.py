"""``RewriteStepper``: watch the optimizer work, one rule application per step, before and after.

``symlab.notebook.RewriteStepper(source)`` takes a compiled Function (its ``f.trace``), a
:class:`~symlab.rewriting.trace.RewriteTrace`, a FunctionGraph or outputs to rewrite (with
``include``/``exclude``). Step 0 is the unoptimized graph and the last step the optimized one. At step
``k`` the two panes show the graph before and after that step, the nodes it removed marked red in
"before" and those it created marked green in "after"; every node keeps its key from step to step. A
graph of more than ``NEIGHBOURHOOD_FROM`` nodes is drawn around each step's change (``stepper.full =
True``: all of it, folded). The traits ``reveal_before`` / ``reveal_after`` name the changed nodes the
browser brings into view, and ``diff`` is the step as a text diff of its neighbourhood
(:mod:`~symlab.notebook.step_diff`; ``stepper.diff_text()``). The rule card says which rule did it (the
name ``include``/``exclude`` accept), in which phase, where it is written, why, how long it took, what it
replaced, and the line that would exclude it (:mod:`~symlab.notebook.rule_card`; the rule's source,
:mod:`~symlab.notebook.rule_source`). Refused attempts are steps too, with the reason they were refused.
``stepper.check()`` compares a step's graphs on random inputs (:mod:`~symlab.notebook.step_check`),
``stepper.export_html(path)`` writes every step as one page (:mod:`~symlab.notebook.stepper_export`).
Inner graphs (:mod:`~symlab.notebook.step_nesting`): ``stepper.expand(node_or_key)`` draws a node with an
inner graph (a fused ``Composite``, an ``OpFromGraph``, a ``Scan``, an ``ifelse``) open in both panes, and
``stepper.step_into(node_or_key)`` returns a stepper over the rewrite of that node's own inner graph, with the
same rules on a copy (``inner.parent``, ``inner.step_out()``), shown in place in the widget with a way back.

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
>>> print(stepper.diff_text())
- a4 = Elemwise{pow,no_inplace}(a, [10] [v8])
- a6 = Elemwise{add,no_inplace}(a, a4)
+ a9 = Elemwise{Composite{(i0 + (i0 ** 10))},no_inplace}(a)
- out0 = a6
+ out0 = a9
>>> stepper.reveal_before, stepper.reveal_after
(['a4', 'a6'], ['a9'])
"""

from __future__ import annotations

import weakref
from typing import Any

import traitlets

from symlab.graph.basic import Variable
from symlab.graph.changes import InputChanged
from symlab.notebook.rule_card import exclude_line, step_card, step_row
from symlab.notebook.rule_source import rule_source_at, shown_path
from symlab.notebook.step_check import check_step
from symlab.notebook.step_diff import diff_text, step_diff
from symlab.notebook.step_moves import StepMoves
from symlab.notebook.step_nesting import InnerSteps
from symlab.notebook.step_pictures import Layout, PaneCache, PaneSpec, paint_svg
from symlab.notebook.step_why import WhyNot
from symlab.notebook.stepper_export import export_page
from symlab.notebook.widget import ViewWidget, code_span
from symlab.rewriting.trace import RewriteStep, RewriteTrace

__all__ = ["RewriteStepper", "exclude_line", "rule_source_at", "shown_path"]

#: Drawn nodes of a whole-graph pane before folding (the nodes a step changed always stay visible).
PANE_MAX_NODES = 40
#: Rows of the Markdown table of steps.
MARKDOWN_MAX_ROWS = 200
#: A graph of more nodes than this is drawn around each step's change (``stepper.full = True``: all of it).
NEIGHBOURHOOD_FROM = 40


def _trace_of(source: Any, include: Any, exclude: Any) -> RewriteTrace:
    """The trace to step through."""
    if isinstance(source, RewriteTrace):
        return source
    maker = getattr(source, "maker", None)
    trace = getattr(source, "trace", None)
    if maker is not None and isinstance(trace, RewriteTrace):
        if trace.mode is None:
            trace.mode = getattr(maker, "mode", None)
        return trace
    from symlab.graph.fg import FunctionGraph
    from symlab.rewriting import rewrite_graph

    if isinstance(source, FunctionGraph):  # a copy is rewritten: the caller's graph stays as it is
        _, made = rewrite_graph(list(source.outputs), include=include, exclude=exclude, inputs=list(source.inputs),
                                record_attempts=True)
        assert made is not None
        return made
    outputs = [source] if isinstance(source, Variable) else source
    if isinstance(outputs, list | tuple) and outputs and all(isinstance(o, Variable) for o in outputs):
        _, made = rewrite_graph(list(outputs), include=include, exclude=exclude, record_attempts=True)
        assert made is not None
        return made
    raise TypeError(
        "RewriteStepper expects a compiled Function, a RewriteTrace, a FunctionGraph, or a Variable or list of "
        f"Variables to rewrite; received {type(source).__name__}"
    )


class RewriteStepper(StepMoves, WhyNot, InnerSteps, ViewWidget):
    """Step through a rewrite; see the module documentation."""

    _step_zero = "unoptimized"

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
    #: The step as a text diff of its neighbourhood: rows ``{"sign": " " | "-" | "+", "text", "key"}``.
    diff = traitlets.List().tag(sync=True)
    #: Keys of the nodes the step removed (drawn in "before") and created (in "after"): what the browser shows.
    reveal_before = traitlets.List().tag(sync=True)
    reveal_after = traitlets.List().tag(sync=True)
    #: The keys of the nodes drawn open (``stepper.expand(key)``), and the levels shown: this stepper, then the
    #: steppers into inner graphs shown in place (``[{"title", "depth", "total"}]``; :mod:`~symlab.notebook.step_nesting`).
    open_keys = traitlets.List().tag(sync=True)
    nest = traitlets.List().tag(sync=True)

    def __init__(self, source: Any, include: Any = ("fast_run",), exclude: Any = (), style: str = "compact",
                 max_nodes: int = PANE_MAX_NODES) -> None:
        if style not in ("structure", "compact"):
            raise ValueError(f"RewriteStepper: style must be 'structure' or 'compact', received {style!r}")
        if not isinstance(max_nodes, int) or isinstance(max_nodes, bool) or max_nodes < 1:
            raise ValueError(f"RewriteStepper: max_nodes must be a positive int, received {max_nodes!r}")
        self.trace = _trace_of(source, include, exclude)
        self._style = style
        self._max_nodes = max_nodes
        self._cursor = self.trace.cursor()
        self._panes = PaneCache(self.trace, style, max_nodes)
        self._small = len(self.trace._start_nodes) <= NEIGHBOURHOOD_FROM
        self._attempts_error: str | None = None
        self._ready = False
        self._init_inner()
        self._drawn_after: set[str] = set()
        super().__init__(view="stepper", total=len(self.trace), steps=self._step_rows())
        self.nest = self._nest()
        self._ready = True
        with self.answer():
            self._draw()
        self._prefetch()

    # -- the controls' Python twins (and next(), prev(): StepMoves) -----------------------------------
    @property
    def current(self) -> RewriteStep | None:
        """The step shown (``None`` at step 0, the unoptimized graph)."""
        return self.trace.step(self.step) if self.step else None

    @property
    def graph(self) -> Any:
        """A copy of the graph after the current step (yours to change)."""
        self._cursor.seek(self.step)
        return self._cursor.graph()

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

    def diff_text(self) -> str:
        """The current step as a text diff of its neighbourhood (the ``diff`` trait, one ``sign text`` line each)."""
        return diff_text(self.diff)

    def _step_rows(self) -> list[list[Any]]:
        return [step_row(s) for s in self.trace.steps]

    @traitlets.observe("step", "compare", "full")
    def _redraw(self, change: Any) -> None:
        if not self._ready or self._mirroring:
            return
        if self._stack:  # an inner stepper is shown in place: the controls drive it (and it is mirrored back)
            setattr(self._stack[-1], change["name"], change["new"])
            return
        with self.answer():
            self._draw()
        self._prefetch()

    # -- browser messages -------------------------------------------------------------------------------
    def _on_browser_message(self, widget: Any, content: Any, buffers: Any) -> None:
        inner = self._routed(content)  # an inner stepper shown in place: its controls are the ones on screen
        if inner is None:
            super()._on_browser_message(widget, content, buffers)
            return
        try:
            handler = getattr(inner, f"_on_{content['type']}", None)
            if handler is not None:
                handler(content)
        except Exception as err:  # said on the inner stepper, which the widget mirrors
            with inner.answer():
                inner.notice = f"{type(err).__name__}: {err}"
        finally:
            self.send({"type": "ack"})

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

    def close(self) -> None:
        """Close the widget, and the inner steppers it shows in place."""
        for inner in reversed(self.__dict__.get("_stack", [])):
            inner.unobserve(self._mirror_answer, names="drawn")
            inner.close()
        self.__dict__["_stack"] = []
        super().close()

    # -- check -----------------------------------------------------------------------------------------------
    def check(self, trials: int = 3, seed: int = 0) -> dict[str, Any]:
        """Evaluate the graph before and after the current step on random inputs; the largest difference.

        The inputs get values of their types (floats from a normal law, integers from 0 to 4, each unknown
        dimension of size 3). DebugMode's idea, made visible: a step that changes the results is a bug in
        its rule (or a rule that, like ``x * y / y -> x`` where ``y`` is 0, trades NaNs for numbers). The
        result counts the values compared, those NaN on both sides (nothing to compare there: a graph NaN
        everywhere says "every value compared was NaN") and those NaN on one side only
        (:func:`~symlab.notebook.step_check.check_step`).
        """
        return check_step(self.trace, self.step, trials, seed)

    def _on_check(self, content: dict[str, Any]) -> None:
        result = self.check()
        with self.answer():
            self.card = {**self.card, "check": result["text"]}

    # -- export ----------------------------------------------------------------------------------------------
    def export_html(self, path: Any) -> Any:
        """Write one self-contained page of every step (pictures, cards, diffs, the same script inlined); its path.

        The page works without a kernel or a network, opened from a file: step with the arrow keys, hand
        it in or attach it to a bug report. Checks and "why not" need the kernel and are left out. Each
        graph state is laid out once and stored once (the marks of a step are painted in the page), the
        data is gzip-compressed (the page unpacks it with the browser's ``DecompressionStream``), and no
        path of the machine that made it is written. See :mod:`symlab.notebook.stepper_export`.
        """
        return export_page(self, path)

    # -- the rule's source -----------------------------------------------------------------------------------
    def rule_source(self) -> str:
        """The source code of the current step's rule (read from its location), or why it cannot be shown.

        When the rule's own method only hands the work to a function of its module (fusion, inplace),
        that function follows it.
        """
        step = self.current
        if step is None:
            return ""
        return rule_source_at(step.location, step.rule)

    # -- drawing ---------------------------------------------------------------------------------------------
    def _changed(self, k: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The keys of step ``k``'s change in the graph before it and after it (what its panes centre on)."""
        trace = self.trace
        step = trace.step(k)
        removed = tuple(sorted((trace.key(n) for n in step.removed), key=_serial))
        created = tuple(sorted((trace.key(n) for n in step.created), key=_serial))
        touched = tuple(dict.fromkeys(trace.key(e.node) for e in step.events
                                      if type(e) is InputChanged and e.node != "output"))
        node: tuple[str, ...] = ()
        if step.node is not None:
            try:
                node = (trace.key(step.node),)
            except KeyError:
                pass
        return removed or touched or node, created or touched or node

    def _whole(self, state: int) -> PaneSpec:
        """The whole graph after step ``state``, keeping visible what the steps into and out of it changed."""
        keep: tuple[str, ...] = ()
        if state >= 1:
            keep += self._changed(state)[1]
        if state < self.total:
            keep += self._changed(state + 1)[0]
        return PaneSpec("whole", state, (), tuple(dict.fromkeys(keep)), self._pane_open())

    def _frame(self, k: int, compare: bool) -> dict[str, Any]:
        """What step ``k`` shows: the two panes' specs and marks, their titles (no drawing yet)."""
        if compare:
            return {"before": (self._whole(0), {}), "after": (self._whole(self.total), {}),
                    "before_title": "unoptimized (step 0)", "after_title": f"optimized (step {self.total})"}
        if k == 0:
            return {"before": None, "after": (self._whole(0), {}), "before_title": "",
                    "after_title": "step 0: the graph before any rewrite"}
        step = self.trace.step(k)
        before_keys, after_keys = self._changed(k)
        if self._small or self.full:
            before, after = self._whole(k - 1), self._whole(k)
        else:
            opened = self._pane_open()
            before, after = PaneSpec("part", k - 1, before_keys, (), opened), PaneSpec("part", k, after_keys, (), opened)
        removed = {self.trace.key(n): "removed" for n in step.removed}
        created = {self.trace.key(n): "created" for n in step.created} if step.accepted else {}
        status = "" if step.accepted else " (refused: unchanged)"
        return {"before": (before, removed), "after": (after, created), "before_title": f"before step {k}",
                "after_title": f"after step {k}{status}", "reveal": (before_keys, after_keys)}

    def _step_diff(self, k: int, cursor: Any = None) -> list[dict[str, str]]:
        """The text diff of step ``k`` (cached; drawn on ``cursor``, default the stepper's own)."""
        cache = self._panes.extra
        rows = cache.get(("diff", k))
        if rows is None:
            rows = cache[("diff", k)] = step_diff(cursor if cursor is not None else self._cursor, k)
        return rows

    def _draw(self) -> None:
        k = self.step
        frame = self._frame(k, self.compare)
        panes = [frame["before"], frame["after"]]
        specs = [p[0] for p in panes if p is not None]
        layouts = iter(self._panes.layouts(self._cursor, specs))
        svgs, drawn = [], []
        for slot, pane in zip(("before", "after"), panes):
            if pane is None:
                self.hide_picture(slot)
                svgs.append("")
                drawn.append(set())
                continue
            layout = next(layouts)
            self._keep_picture(slot, layout, pane[1])
            svgs.append(paint_svg(layout.svg, pane[1]))
            drawn.append(set(layout.model.nodes))
        self.before_svg, self.after_svg = svgs
        self.before_title, self.after_title = frame["before_title"], frame["after_title"]
        before_keys, after_keys = frame.get("reveal", ((), ()))
        self.reveal_before = [key for key in before_keys if key in drawn[0]]
        self.reveal_after = [key for key in after_keys if key in drawn[1]]
        self.diff = self._step_diff(k) if k and not self.compare else []
        self.card = self._card()
        hidden = []
        if self.before_svg == "" and self.after_svg == "" and self.total:
            hidden.append("Graphviz is not installed: no pictures (the rule card still works).")
        self.notice = " ".join(hidden)
        self._drawn_after = drawn[1]
        self.open_keys = list(self._open)

    def _keep_picture(self, slot: str, layout: Layout, marks: dict[str, str]) -> None:
        """Remember ``slot``'s model, marked, for the Markdown fallback's PNG (as ``show_picture`` does)."""
        for node in layout.model.nodes.values():
            node.classes.difference_update(("created", "removed"))
        for key, cls in marks.items():
            if key in layout.model.nodes:
                layout.model.nodes[key].classes.add(cls)
        pictures = self.__dict__.setdefault("_pictures", {})
        pictures.pop(slot, None)
        pictures[slot] = (layout.model, layout.notes)

    def _prefetch(self) -> None:
        """Draw the steps next to this one in the background (a step then only paints what is ready)."""
        if self.compare:
            return
        stepper = weakref.ref(self)  # the background work must not keep a closed view alive
        moves = []
        for k in (self.step + 1, self.step - 1, self.step + 2):  # the likeliest move first
            if not 0 <= k <= self.total:
                continue
            frame = self._frame(k, False)
            specs = [p[0] for p in (frame["before"], frame["after"]) if p is not None]

            def diff(cursor: Any, k: int = k) -> None:
                alive = stepper()
                if alive is not None:
                    alive._step_diff(k, cursor)

            moves.append((specs, diff if k and ("diff", k) not in self._panes.extra else None))
        self._panes.prefetch(moves)

    def _card(self, k: int | None = None) -> dict[str, Any]:
        """The rule card of step ``k`` (default: the current step).

        Inside a node (a stepper stepped into), the line that leaves the rule out is the outermost rewrite's:
        an inner graph is rewritten with the outer rewrite's rules, so that is where a rule is left out.
        """
        card = step_card(self.trace, self.step if k is None else k)
        if self.parent is not None and "exclude" in card:
            card["exclude"] = exclude_line(self._root().trace, card["rule"])
        return card

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
        where = f" {self._where}" if self.parent is not None else ""
        text = f"RewriteStepper{where}: step {self.step}/{self.total}; " + (", ".join(counts) or "no steps")
        if self._open:
            text += f"; open: {', '.join(self._open)}"
        if self._stack:
            top = self._stack[-1]
            text += f"; showing the rewrite {top._where} (step {top.step}/{top.total})"
        return text

    def markdown(self) -> str:
        if self._stack:  # the inner stepper shown in place is what the widget shows
            levels = " › ".join(code_span(level["title"], table=False) for level in self.nest)
            return f"**RewriteStepper**, showing the rewrite of an inner graph: {levels}\n\n{self._stack[-1].markdown()}"
        where = f" {code_span(self._where, table=False)}" if self.parent is not None else ""
        lines = [f"**RewriteStepper**{where}: step {self.step} of {self.total}", "",
                 "| step | phase | rule | status | reason |", "|---|---|---|---|---|"]
        for step in self.trace.steps[:MARKDOWN_MAX_ROWS]:
            status = "applied" if step.accepted else "refused"
            lines.append(f"| {step.index} | {code_span(step.phase)} | {code_span(step.rule)} | {status} | {code_span(step.reason)} |")
        if self.total > MARKDOWN_MAX_ROWS:
            lines.append(f"| … | | {self.total - MARKDOWN_MAX_ROWS} more steps | | |")
        if self.diff:
            text = self.diff_text()
            fence = "`" * max(3, 1 + max((len(run) for run in text.split() if set(run) == {"`"}), default=0))
            while fence in text:
                fence += "`"
            lines += ["", f"Step {self.step} ({code_span(self.current.rule if self.current else '', table=False)}) "
                      "as a text diff of its neighbourhood:", "", fence, text, fence]  # plain: no highlighter's markup
        return "\n".join(lines)


def _serial(key: str) -> int:
    """The number of a key (``a12`` -> 12): the order objects entered the graph."""
    return int(key[1:])
