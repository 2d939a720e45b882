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
replaced, and the line that would exclude it. Refused attempts are steps too, with the reason they were
refused.

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

import ast
import functools
import inspect
import json
import linecache
import sys
import textwrap
import tokenize
import weakref
from pathlib import Path
from typing import Any

import traitlets

from symlab.graph.basic import Variable
from symlab.graph.changes import InputChanged
from symlab.notebook.step_diff import diff_text, step_diff
from symlab.notebook.step_pictures import Layout, PaneCache, PaneSpec, paint_svg
from symlab.notebook.widget import ViewWidget, code_span
from symlab.rewriting.trace import ReplayError, RewriteStep, RewriteTrace, SourceLocation

__all__ = ["RewriteStepper", "exclude_line", "rule_source_at", "shown_path"]

#: Drawn nodes of a whole-graph pane before folding (the nodes a step changed always stay visible).
PANE_MAX_NODES = 40
#: Rows of the Markdown table of steps.
MARKDOWN_MAX_ROWS = 200
#: A graph of more nodes than this is drawn around each step's change (``stepper.full = True``: all of it).
NEIGHBOURHOOD_FROM = 40
#: Lines of a rule's source shown (the rule, and the function it hands its work to).
SOURCE_MAX_LINES = 160


@functools.lru_cache(maxsize=512)
def shown_path(file: str) -> str:
    """``file`` as the stepper shows it: relative to the directory holding symlab, else its name alone.

    A page made on one machine must not carry that machine's paths (home directories, checkouts):

    >>> import symlab.rewriting.fusion as fusion
    >>> shown_path(fusion.__file__)
    'symlab/rewriting/fusion.py'
    >>> shown_path("/home/someone/project/my_rules.py"), shown_path("<unknown>")
    ('my_rules.py', '<unknown>')
    """
    import symlab

    if file.startswith("<"):
        return file
    path = Path(file)
    root = Path(symlab.__file__).resolve().parent.parent
    try:
        return path.resolve().relative_to(root).as_posix()
    except (ValueError, OSError):
        return path.name


def _shown_location(location: SourceLocation) -> str:
    return f"{shown_path(location.file)}:{location.line}"


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


def exclude_line(trace: RewriteTrace, rule: str) -> str:
    """The line that leaves ``rule`` out, in the terms the trace was made in (a compile mode, or ``rewrite_graph``).

    >>> import symlab, symlab.tensor as st
    >>> a = st.dvector("a")
    >>> print(exclude_line(symlab.function([a], a * 2.0, mode="NUMPY").trace, "mul_one"))
    symlab.function(inputs, outputs, mode=symlab.get_mode("NUMPY").excluding("mul_one"))
    """
    quoted = json.dumps(rule)
    mode = trace.mode
    if mode is not None:
        from symlab.compile.modes import PREDEFINED, get_mode

        name = getattr(mode, "name", None)
        if name is not None and name in PREDEFINED and get_mode(name) is mode:
            chosen = "symlab.get_mode()" if get_mode() is mode else f"symlab.get_mode({json.dumps(name)})"
        else:  # a mode of one's own: the same linker and rules
            chosen = (f"symlab.compile.mode.Mode(linker={json.dumps(mode.linker)}, include={_words(mode.include)}, "
                      f"exclude={_words(mode.exclude)})")
        return f"symlab.function(inputs, outputs, mode={chosen}.excluding({quoted}))"
    recipe = trace.recipe
    excluded = (*recipe.exclude, rule) if recipe is not None else (rule,)
    include = ""
    if recipe is not None and tuple(recipe.include) != ("fast_run",):
        include = f"include={_words(recipe.include)}, "
    return f"rewrite_graph(outputs, {include}exclude={_words(excluded)})"


def _words(words: Any) -> str:
    """A tuple of strings as Python source, double-quoted: ``("a",)``, ``("a", "b")``."""
    items = [json.dumps(w) for w in words]
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"  # () when there are none


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
    #: The step as a text diff of its neighbourhood: rows ``{"sign": " " | "-" | "+", "text", "key"}``.
    diff = traitlets.List().tag(sync=True)
    #: Keys of the nodes the step removed (drawn in "before") and created (in "after"): what the browser shows.
    reveal_before = traitlets.List().tag(sync=True)
    reveal_after = traitlets.List().tag(sync=True)

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
        super().__init__(view="stepper", total=len(self.trace), steps=[_row(s) for s in self.trace.steps])
        self._ready = True
        with self.answer():
            self._draw()
        self._prefetch()

    # -- the controls' Python twins -------------------------------------------------------------------
    @property
    def current(self) -> RewriteStep | None:
        """The step shown (``None`` at step 0, the unoptimized graph)."""
        return self.trace.step(self.step) if self.step else None

    @property
    def graph(self) -> Any:
        """A copy of the graph after the current step (yours to change)."""
        self._cursor.seek(self.step)
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

    def diff_text(self) -> str:
        """The current step as a text diff of its neighbourhood (the ``diff`` trait, one ``sign text`` line each)."""
        return diff_text(self.diff)

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
            self._prefetch()

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
        try:
            node = self.trace.by_key(key)
        except KeyError:
            return
        if not hasattr(node, "op"):  # a variable: ask about the node that computes it
            node = node.owner
            if node is None:
                return
        rows = self.why_not(node)
        with self.answer():
            self.card = {**self.card, "why": {"node": str(node), "key": key, "rows": rows}}

    # -- check -----------------------------------------------------------------------------------------------
    def check(self, trials: int = 3, seed: int = 0) -> dict[str, Any]:
        """Evaluate the graph before and after the current step on random inputs; the largest difference.

        The inputs get values of their types (floats from a normal law, integers from 0 to 4, each unknown
        dimension of size 3). DebugMode's idea, made visible: a step that changes the results is a bug in
        its rule (or a rule that, like ``x * y / y -> x`` where ``y`` is 0, trades NaNs for numbers). The
        result counts the values compared, those NaN on both sides (nothing to compare there: a graph NaN
        everywhere says "every value compared was NaN") and those NaN on one side only.
        """
        import numpy as np

        from symlab.graph.evaluate import evaluate

        k = self.step
        if k == 0:
            return {"step": 0, "text": "step 0 is the starting graph: nothing to compare"}
        before = self.trace.graph_at(k - 1)
        after = self.trace.graph_at(k)
        rng = np.random.default_rng(seed)
        worst, nan_mismatch, both_nan, compared = 0.0, 0, 0, 0
        for _ in range(trials):
            values = [_random_value(v.type, rng) for v in before.inputs]
            got_before = evaluate(before.outputs, {v: np.array(x, copy=True) for v, x in zip(before.inputs, values)})
            got_after = evaluate(after.outputs, {v: np.array(x, copy=True) for v, x in zip(after.inputs, values)})
            for b, a in zip(got_before, got_after):
                kind = complex if np.iscomplexobj(b) or np.iscomplexobj(a) else float
                b, a = np.broadcast_arrays(np.asarray(b, dtype=kind), np.asarray(a, dtype=kind))
                compared += int(b.size)
                nan_b, nan_a = np.isnan(b), np.isnan(a)
                nan_mismatch += int(np.sum(nan_b != nan_a))
                both_nan += int(np.sum(nan_b & nan_a))
                both = ~(nan_b | nan_a)
                if both.any():
                    with np.errstate(invalid="ignore"):
                        diff = np.abs(b[both] - a[both])
                    diff = diff[np.isfinite(diff)]
                    worst = max(worst, float(diff.max()) if diff.size else 0.0)
        numbers = compared - both_nan - nan_mismatch
        text = f"step {k}: largest difference {worst:.3g} over {compared} values ({trials} random inputs)"
        if compared and both_nan == compared:
            text = (f"step {k}: every value compared was NaN on both sides ({compared} values, {trials} random "
                    "inputs): nothing to compare, the difference says nothing")
        elif both_nan:
            text += f"; {both_nan} of them NaN on both sides (left out), {numbers} compared as numbers"
        if nan_mismatch:
            text += f"; {nan_mismatch} values are NaN on one side only"
        return {"step": k, "max_difference": worst, "nan_mismatch": nan_mismatch, "both_nan": both_nan,
                "compared": compared, "trials": trials, "text": text}

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
        from symlab.notebook.stepper_export import export_page

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
        return PaneSpec("whole", state, (), tuple(dict.fromkeys(keep)))

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
            before, after = PaneSpec("part", k - 1, before_keys), PaneSpec("part", k, after_keys)
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
        """The rule card of step ``k`` (default: the current step)."""
        k = self.step if k is None else k
        step = self.trace.step(k) if k else None
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
            "location": _shown_location(step.location),
            "seconds": f"{step.seconds * 1e3:.3f} ms",
            "node": str(step.node) if step.node is not None else "",
            "replacements": [f"{old} -> {new}" for old, new in step.replacements],
            "removed": len(step.removed),
            "created": len(step.created),
            "exclude": exclude_line(self.trace, step.rule),
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
        if self.diff:
            text = self.diff_text()
            fence = "`" * max(3, 1 + max((len(run) for run in text.split() if set(run) == {"`"}), default=0))
            while fence in text:
                fence += "`"
            lines += ["", f"Step {self.step} ({code_span(self.current.rule if self.current else '', table=False)}) "
                      "as a text diff of its neighbourhood:", "", fence, text, fence]  # plain: no highlighter's markup
        return "\n".join(lines)


# -- a rule's source ------------------------------------------------------------------------------------------------
def _block_at(lines: list[str], line: int) -> list[str]:
    """The block (decorators, signature and body) that starts at ``line`` (from 1) of ``lines``."""
    try:
        return list(inspect.getblock(lines[line - 1:]))
    except (IndentationError, SyntaxError, tokenize.TokenError):
        return lines[line - 1:line + 20]


def _module_of(file: str) -> Any:
    for module in list(sys.modules.values()):
        if getattr(module, "__file__", None) == file:
            return module
    return None


def _hands_to(block: list[str], file: str, seen: set[str]) -> list[Any]:
    """The functions of ``file``'s module a thin function (``block``) hands its work to: those whose result it uses."""
    try:
        tree = ast.parse(textwrap.dedent("".join(block)))
    except SyntaxError:
        return []
    func = tree.body[0] if tree.body else None
    if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
        return []
    body = func.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        body = body[1:]  # the docstring
    if len(body) > 5:  # it does its own work
        return []
    module = _module_of(file)
    if module is None:
        return []
    found = []
    for statement in body:
        if isinstance(statement, ast.Expr):  # a call whose result is dropped: a preparation, not the work
            continue
        for node in ast.walk(statement):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id not in seen:
                target = getattr(module, node.func.id, None)
                code = getattr(target, "__code__", None)
                if inspect.isfunction(target) and code is not None and code.co_filename == file:
                    seen.add(node.func.id)
                    found.append(target)
    return found


def rule_source_at(location: SourceLocation, rule: str) -> str:
    """The source at ``location`` (a rule's), followed by the functions it hands its work to, if it only delegates."""
    file, line = location.file, location.line
    lines = linecache.getlines(file)
    if not 1 <= line <= len(lines):
        return f"(the source of {rule} is not available: {_shown_location(location)})"
    block = _block_at(lines, line)
    parts = ["".join(block).rstrip()]
    seen: set[str] = set()
    todo = [(block, 0)]
    while todo and sum(p.count("\n") + 1 for p in parts) < SOURCE_MAX_LINES:
        current, depth = todo.pop(0)
        if depth >= 2:
            continue
        for fn in _hands_to(current, file, seen):
            start = fn.__code__.co_firstlineno
            inner = _block_at(lines, start)
            where = _shown_location(SourceLocation(file, start))
            parts.append(f"# {rule} hands its work to {fn.__name__} ({where}):\n" + "".join(inner).rstrip())
            todo.append((inner, depth + 1))
    text = "\n\n".join(parts)
    kept = text.splitlines()
    if len(kept) > SOURCE_MAX_LINES:
        text = "\n".join(kept[:SOURCE_MAX_LINES]) + f"\n# … {len(kept) - SOURCE_MAX_LINES} more lines"
    return text


def _serial(key: str) -> int:
    """The number of a key (``a12`` -> 12): the order objects entered the graph."""
    return int(key[1:])


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


def _row(step: RewriteStep) -> list[Any]:
    """A row of the step list: index, phase, rule, accepted, and whether it moved no node (nothing came or went)."""
    quiet = step.accepted and not step.removed and not step.created
    return [step.index, step.phase, step.rule, step.accepted, quiet]
