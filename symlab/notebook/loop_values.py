"""A loop's values, iteration by iteration: what the values view shows inside an open scan node.

:class:`LoopRun` runs a scan node once on its input values (the op's own NumPy loop,
``Scan.perform_steps(inputs, record=...)``) and keeps, for each iteration, only what is needed later:

- the *inner input values* of the iteration (``x[t]``, ``h[t-1]``; the non-sequences once), from which every inner
  value of that iteration is computed again on demand (:meth:`LoopRun.values_at`), evaluating the body as an
  ``OpFromGraph`` body is (:func:`~symlab.notebook.inner_values.evaluate_lazily`). They are kept for every
  iteration while they fit in ``budget`` bytes (:data:`DEFAULT_BUDGET`); past that, for every ``stride``-th
  iteration only (and the last one, and the one where a NaN is born: where the view opens), and an iteration not
  kept is found by running the loop again up to it (the loop stops there);
- a *trace* of each state and mapped output across the iterations, for the plot (:class:`LoopPlot`): every
  element of a small value (:data:`MAX_LINES` elements or fewer), else its min, mean and max;
- the first iteration whose body makes a NaN or an infinity (:attr:`LoopRun.nan_at`).

Nothing here changes the graph or the op's body.

>>> import numpy as np
>>> import symlab
>>> import symlab.tensor as st
>>> x = st.dvector("x")
>>> acc, _ = symlab.scan(lambda x_t, a: a * 2 + x_t, sequences=x, outputs_info=st.constant(0.0), name="double")
>>> node = acc.owner.inputs[0].owner
>>> run = LoopRun(node, [np.int64(4), np.arange(4.0), np.zeros(1)])
>>> run.steps, run.trace_of(0)[1].ravel().tolist()
(4, [0.0, 1.0, 4.0, 11.0])
>>> values = run.values_at(2)
>>> body = node.op.fgraph
>>> float(values[body.inputs[1]]), float(values[body.outputs[0]])  # a[t-1] and a[t] at t = 2
(1.0, 4.0)
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Variable
from symlab.graph.inner_graph import InnerSection
from symlab.notebook.bar_png import lines_png
from symlab.notebook.inner_values import SectionCache, evaluate_lazily
from symlab.notebook.value_text import has_nan_inf, number_text

__all__ = ["DEFAULT_BUDGET", "MAX_LINES", "LoopPlot", "LoopRun", "is_loop_node", "loop_name", "loop_section"]

#: Bytes of inner input values a :class:`LoopRun` keeps before it keeps only every ``stride``-th iteration's.
DEFAULT_BUDGET = 32 * 2**20
#: A value with at most this many elements is plotted element by element; a larger one as its min, mean and max.
MAX_LINES = 8
#: Iterations whose inner values a :class:`LoopRun` keeps computed (the ones the slider moved over last).
RECENT = 4
_COLOURS = ("#4c6ef5", "#e8590c", "#2f9e44", "#c2255c", "#7048e8", "#1098ad", "#f08c00", "#495057")


def loop_section(node: Apply) -> InnerSection | None:
    """The body section of a loop node (a scan's), or ``None`` for any other node."""
    op = node.op
    if not (getattr(op, "has_inner_graph", False) and callable(getattr(op, "perform_steps", None))):
        return None
    sections = op.inner_sections(node)
    return sections[0] if sections and sections[0].extra.get("loop") else None


def is_loop_node(node: Any) -> bool:
    """Whether ``node`` is an Apply node of a loop (a scan)."""
    return isinstance(node, Apply) and loop_section(node) is not None


def loop_name(node: Apply) -> str:
    """How a message names the loop: ``scan 'rnn'`` (the name literal), ``scan (unnamed)``."""
    name = getattr(node.op, "user_name", None)
    return f"scan {name!r}" if name is not None else "scan (unnamed)"


class _Stop(Exception):
    """Raised by a recorder to end a run of the loop at the iteration it wanted."""


def _nbytes(values: Sequence[Any]) -> int:
    return sum(v.nbytes if isinstance(v, np.ndarray) else 64 for v in values)


def _summary(value: Any) -> np.ndarray:
    """The points a value adds to its trace: its elements (small), else its min, mean and max."""
    a = np.asarray(value)
    if a.dtype.kind not in "biuf":
        return np.full(1, np.nan)
    a = a.astype(float, copy=False)
    if a.size <= MAX_LINES:
        return a.ravel().copy()
    with np.errstate(all="ignore"):
        finite = a[np.isfinite(a)]
        if not finite.size:
            return np.full(3, np.nan)
        return np.array([finite.min(), a.mean(), finite.max()])


class LoopRun:
    """One run of the loop ``node`` on ``input_values`` (the values of ``node.inputs``); see the module docs."""

    def __init__(self, node: Apply, input_values: Sequence[Any], budget: int = DEFAULT_BUDGET) -> None:
        section = loop_section(node)
        if section is None:
            raise TypeError(f"LoopRun: {node.op} is not a loop (a scan node)")
        self.node, self.section, self.op = node, section, node.op
        self.inputs = list(input_values)
        info = section.extra["info"]
        self._traced = list(range(info.n_states + info.n_mapped))  # inner outputs with a trace
        self.labels = [section.extra["output_labels"][k] for k in self._traced]
        #: Iterations run (a while loop may stop before ``n_steps``).
        self.steps = 0
        #: The first iteration whose body output holds NaN or inf (``None``: none), and whether its inputs did.
        self.nan_at: int | None = None
        self.nan_in_inputs = False
        self.stride = 1
        self._budget = budget
        self._kept: dict[int, list[Any]] = {}
        self._traces: list[list[np.ndarray]] = [[] for _ in self._traced]
        self._summarised = [False for _ in self._traced]
        non_seqs = info.inner_slices()["non_seqs"]
        self._invariant = set(range(non_seqs.start, non_seqs.stop))
        self._fixed: dict[int, Any] = {}
        self._last: tuple[int, list[Any]] | None = None
        self._recent: OrderedDict[int, dict[Variable, Any]] = OrderedDict()
        self._sections = SectionCache(node.op.fgraph)
        planned = self.op.check_inputs(self.inputs)
        with np.errstate(all="ignore"):
            self.op.perform_steps(list(self.inputs), record=lambda t, ins, outs: self._record(t, ins, outs, planned))
        if self._last is not None:  # the last iteration too: where the view opens when no NaN is born
            self._kept.setdefault(*self._last)

    def _record(self, t: int, ins: list[Any], outs: list[Any], planned: int) -> None:
        if t == 0:  # the non-sequences are the same every iteration: kept once, shared by every kept iteration
            self._fixed = {k: ins[k] for k in self._invariant}
            varying = [v for k, v in enumerate(ins) if k not in self._fixed]
            self.stride = max(1, math.ceil(planned * _nbytes(varying) / self._budget))
            self._summarised = [np.size(outs[k]) > MAX_LINES for k in self._traced]
        ins = [self._fixed.get(k, v) for k, v in enumerate(ins)]
        if t % self.stride == 0:
            self._kept[t] = ins
        self._last = (t, ins)
        for trace, k in zip(self._traces, self._traced):
            trace.append(_summary(outs[k]))
        if self.nan_at is None and any(any(has_nan_inf(v)) for v in outs):
            self.nan_at = t
            self._kept[t] = ins  # where the view opens: kept whatever the stride
            self.nan_in_inputs = any(any(has_nan_inf(v)) for v in ins)
        self.steps = t + 1

    # -- one iteration ---------------------------------------------------------------------------------
    def check(self, t: Any, caller: str) -> int:
        """``t`` as an iteration of this run, or a ``ValueError`` naming the range."""
        if isinstance(t, bool) or not isinstance(t, int | np.integer):
            raise TypeError(f"{caller}: the iteration must be an int, received {type(t).__name__} {t!r:.40}")
        if not 0 <= t < self.steps:
            what = f"0 … {self.steps - 1}" if self.steps else "none: the loop ran 0 iterations"
            raise ValueError(f"{caller}: iteration {t} is out of range for {loop_name(self.node)} (iterations: {what})")
        return int(t)

    def inputs_at(self, t: int) -> list[Any]:
        """The inner input values of iteration ``t`` (kept, or found by running the loop again up to ``t``)."""
        t = self.check(t, "LoopRun.inputs_at")
        kept = self._kept.get(t)
        if kept is not None:
            return kept
        found: list[list[Any]] = []

        def record(k: int, ins: list[Any], outs: list[Any]) -> None:
            if k == t:
                found.append(ins)
                raise _Stop

        try:
            with np.errstate(all="ignore"):
                self.op.perform_steps(list(self.inputs), record=record)
        except _Stop:
            pass
        return found[0]

    def values_at(self, t: int) -> dict[Variable, Any]:
        """``{inner variable: value}`` of the body at iteration ``t`` (its inputs, every inner node, its outputs)."""
        t = self.check(t, "LoopRun.values_at")
        found = self._recent.get(t)
        if found is None:
            given = dict(zip(self.section.inputs, self.inputs_at(t)))
            targets = [o for o in self.section.outputs if o is not None]
            found = evaluate_lazily(targets, given, self._sections).values
            self._recent[t] = found
            while len(self._recent) > RECENT:
                self._recent.popitem(last=False)
        else:
            self._recent.move_to_end(t)
        return found

    # -- across iterations ---------------------------------------------------------------------------------
    def trace_of(self, k: int) -> tuple[list[str], np.ndarray]:
        """The trace of traced output ``k`` (a state, then a mapped output): ``(line names, (steps, lines) array)``."""
        rows = self._traces[k]
        if not rows:
            return [], np.zeros((0, 0))
        width = max(len(r) for r in rows)
        data = np.full((len(rows), width), np.nan)
        for i, r in enumerate(rows):
            data[i, : len(r)] = r
        if self._summarised[k]:
            return ["min", "mean", "max"], data
        return ([f"[{i}]" for i in range(width)] if width > 1 else [self.labels[k]]), data

    def plot(self, at: int | None = None) -> LoopPlot:
        """A :class:`LoopPlot` of every traced output across the iterations, ``at`` marked (the slider's place)."""
        return LoopPlot(loop_name(self.node), [(self.labels[k], *self.trace_of(k)) for k in range(len(self._traced))],
                        self.steps, at)


class LoopPlot:
    """Each state (and mapped output) of a loop across its iterations: one small chart each, as SVG, PNG and text.

    ``charts`` holds ``(label, line names, (steps, lines) array)`` per output; ``at`` the iteration marked.
    """

    def __init__(self, title: str, charts: list[tuple[str, list[str], np.ndarray]], steps: int, at: int | None) -> None:
        self.title, self.charts, self.steps, self.at = title, charts, steps, at

    @staticmethod
    def _scale(data: np.ndarray) -> tuple[float, float]:
        finite = data[np.isfinite(data)]
        if not finite.size:
            return 0.0, 1.0
        lo, hi = float(finite.min()), float(finite.max())
        return (lo - 0.5, hi + 0.5) if hi == lo else (lo, hi)

    def heights(self, k: int) -> np.ndarray:
        """Chart ``k``'s points as fractions of its height (0: its lowest value, 1: its highest; NaN, inf: NaN)."""
        data = self.charts[k][2]
        lo, hi = self._scale(data)
        with np.errstate(all="ignore"):
            out = (data - lo) / (hi - lo)
        return np.where(np.isfinite(data), out, np.nan)

    def marker(self) -> float | None:
        if self.at is None or self.steps < 1:
            return None
        return self.at / (self.steps - 1) if self.steps > 1 else 0.5

    def png(self, k: int, width: int = 360, height: int = 110) -> bytes:
        """Chart ``k`` as a PNG (lines only, no text): what an untrusted notebook shows."""
        h = self.heights(k)
        return lines_png([h[:, i] for i in range(h.shape[1])], _COLOURS, width=width, height=height,
                         marker=self.marker())

    def svg(self, width: int = 360, chart_height: int = 110) -> str:
        """Every chart as one SVG: a title per chart, a line per series (named in its ``<title>``), the range."""
        import html

        esc = html.escape
        left, right, head, foot = 8, 8, 18, 16
        plot_w, plot_h = width - left - right, chart_height - head - foot
        parts, y0 = [], 0
        for k, (label, names, data) in enumerate(self.charts):
            lo, hi = self._scale(data)
            h = self.heights(k)
            parts.append(f'<text x="{left}" y="{y0 + 12}">{esc(label)} ({esc(", ".join(names[:MAX_LINES]))})</text>')
            n = h.shape[0]
            for i in range(h.shape[1]):
                runs, run = [], []
                for s in range(n):
                    if np.isnan(h[s, i]):
                        if run:
                            runs.append(run)
                        run = []
                        continue
                    x = left + (s * plot_w / (n - 1) if n > 1 else plot_w / 2)
                    run.append(f"{x:.2f},{y0 + head + (1 - h[s, i]) * plot_h:.2f}")
                if run:
                    runs.append(run)
                colour = _COLOURS[i % len(_COLOURS)]
                for pts in runs:
                    parts.append(f'<polyline class="sl-loop-line" fill="none" stroke="{colour}" stroke-width="1.5" '
                                 f'points="{" ".join(pts)}"><title>{esc(label)} {esc(names[i])}</title></polyline>')
            base = y0 + head + plot_h
            parts.append(f'<line x1="{left}" y1="{base}" x2="{left + plot_w}" y2="{base}" stroke="#495057"/>')
            mark = self.marker()
            if mark is not None:
                x = left + mark * plot_w
                parts.append(f'<line class="sl-loop-at" x1="{x:.2f}" y1="{y0 + head}" x2="{x:.2f}" y2="{base}" '
                             f'stroke="#e8590c" stroke-dasharray="4 3"><title>t = {self.at}</title></line>')
            parts.append(f'<text x="{left}" y="{base + 12}">{esc(number_text(lo))} … {esc(number_text(hi))}, '
                         f't = 0 … {max(self.steps - 1, 0)}</text>')
            y0 += chart_height
        return (f'<svg xmlns="http://www.w3.org/2000/svg" class="sl-loop-plot" width="{width}" height="{y0}" '
                f'viewBox="0 0 {width} {y0}" font-family="sans-serif" font-size="10">' + "".join(parts) + "</svg>")

    def text(self, rows: int = 8) -> str:
        """The text twin: per chart, its lines' values at up to ``rows`` iterations spread over the run, and at ``at``."""
        out = [f"{self.title}: {self.steps} iteration{'s' * (self.steps != 1)}"
               + (f", t = {self.at} marked" if self.at is not None else "")]
        picks = sorted(set(np.linspace(0, self.steps - 1, min(rows, self.steps)).round().astype(int).tolist()
                           + ([self.at] if self.at is not None else []))) if self.steps else []
        for label, names, data in self.charts:
            out.append(f"{label}:")
            out.append("  t      " + "  ".join(n.rjust(10) for n in names))
            for t in picks:
                mark = ">" if t == self.at else " "
                out.append(f"{mark} {t:<6} " + "  ".join(number_text(v).rjust(10) for v in data[t]))
        return "\n".join(out)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        import base64

        bundle = {"text/plain": self.text(), "image/svg+xml": self.svg()}
        if self.charts:  # an untrusted notebook shows the PNG: the first chart
            bundle["image/png"] = base64.b64encode(self.png(0)).decode("ascii")
        return bundle

    def __repr__(self) -> str:
        return f"<LoopPlot of {self.title}: {len(self.charts)} chart(s), {self.steps} iterations>"
