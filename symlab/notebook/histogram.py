"""A histogram of many draws of a random variable, drawn from a *copy* of its generator (never advancing yours).

One evaluation of a graph shows one sample of a draw; its distribution shows only over many.
:func:`histogram` draws a random node ``draws`` times with its parameters' values, each time from the generator
the previous draw returned, starting from a copy of the generator the node reads: the user's shared generator
is read, never advanced, and the numbers are those the next ``draws`` calls of a function advancing it would give.
The result, a :class:`Histogram`, is counts and bin edges, with the sample's mean and standard deviation, written
as text (bars of ``█``), Markdown and SVG (drawn here: no plotting library), and shown by a notebook cell.
:meth:`symlab.notebook.values.ValuesView.histogram` draws it from the values view's own values.

>>> import numpy as np, symlab
>>> import symlab.tensor as st
>>> from symlab.tensor.random.basic import normal
>>> rng = symlab.shared(np.random.default_rng(7), name="rng")
>>> mu = st.dscalar("mu")
>>> x = normal(mu, 2.0, rng=rng)
>>> x.name = "x"
>>> h = histogram(x, {mu: 1.0}, draws=2000, bins=10)
>>> int(h.counts.sum()), h.draws, bool(abs(h.mean - 1.0) < 5 * 2.0 / np.sqrt(2000))
(2000, 2000, True)
>>> ours = np.random.default_rng(7).normal(1.0, 2.0, size=2000)   # the same numbers: NumPy's, in order
>>> bool(np.array_equal(h.counts, np.histogram(ours, bins=h.edges)[0]))
True
>>> rng.get_value().bit_generator.state == np.random.default_rng(7).bit_generator.state   # not advanced
True
>>> print(h.text(width=20).splitlines()[0])
x: 2000 draws of normal, mean 0.9201, std 1.969
"""

from __future__ import annotations

import base64
import html
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Variable
from symlab.notebook.bar_png import bars_png
from symlab.notebook.value_text import describe, number_text
from symlab.printing.drawing import is_generator

__all__ = ["MAX_DRAWS", "Histogram", "histogram", "random_node"]

#: The most draws one histogram makes.
MAX_DRAWS = 1_000_000
#: Integer draws spanning at most this many values get one bin per value.
INTEGER_BINS = 60


def random_node(var: Variable, caller: str = "histogram") -> Apply:
    """The random node whose draw ``var`` is (an output of a node that also returns a generator, not the generator).

    ``ValueError`` naming ``var`` and what computes it otherwise.
    """
    if not isinstance(var, Variable):
        raise TypeError(f"{caller}: expected a Variable (a random draw), received {type(var).__name__}")
    node = var.owner
    if node is None or is_generator(var) or not any(is_generator(out) for out in node.outputs):
        what = "a graph input" if node is None else f"computed by {node.op}"
        if is_generator(var):
            what = "a generator, not a draw"
        raise ValueError(f"{caller}: {describe(var)} is not a random draw ({what}); expected the draw of a random "
                         "variable, e.g. normal(0, 1)")
    return node


@dataclass(frozen=True)
class Histogram:
    """``counts`` in the bins between ``edges`` of ``values`` numbers (``draws`` draws, each of ``per_draw``
    elements pooled, or the one element asked for), their ``mean`` and ``std``, the first draw (``sample``), and
    a ``title`` naming the draw (literal text)."""

    title: str
    distribution: str
    counts: np.ndarray
    edges: np.ndarray
    draws: int
    per_draw: int
    mean: float
    std: float
    sample: Any

    @property
    def values(self) -> int:
        """How many numbers are counted: ``draws`` times the elements of each draw counted."""
        return int(self.counts.sum())

    def heading(self) -> str:
        pooled = f" ({self.per_draw} elements each, pooled)" if self.per_draw > 1 else ""
        return (f"{self.title}: {self.draws} draws of {self.distribution}{pooled}, mean {number_text(self.mean)}, "
                f"std {number_text(self.std)}")

    def text(self, width: int = 40) -> str:
        """The histogram as text: a heading, then a bar of ``█`` per bin (the fullest ``width`` long) and its count."""
        top = max(int(self.counts.max()), 1)
        labels = [f"[{number_text(a)}, {number_text(b)})" for a, b in zip(self.edges[:-1], self.edges[1:])]
        pad = max(len(label) for label in labels)
        lines = [self.heading()]
        for label, count in zip(labels, self.counts):
            bar = "█" * round(width * int(count) / top)
            lines.append(f"{label.ljust(pad)} {bar} {int(count)}")
        return "\n".join(lines)

    def markdown(self) -> str:
        """The histogram as Markdown: the text in a code block (literal, whatever the title holds)."""
        body = self.text()
        runs = [len(line.strip()) for line in body.split("\n") if line.strip() and set(line.strip()) == {"`"}]
        fence = "`" * max(3, max(runs, default=0) + 1)  # longer than any line that could close it
        return f"{fence}text\n{body}\n{fence}\n"

    def svg(self, width: int = 360, height: int = 150) -> str:
        """The histogram as an SVG picture (bars, the mean as a dashed line, the range under it); text escaped."""
        left, right, top, bottom = 8, 8, 22, 30
        plot_w, plot_h = width - left - right, height - top - bottom
        most = max(int(self.counts.max()), 1)
        lo, hi = float(self.edges[0]), float(self.edges[-1])
        span = hi - lo or 1.0
        bars = []
        for a, b, count in zip(self.edges[:-1], self.edges[1:], self.counts):
            x0 = left + (float(a) - lo) / span * plot_w
            x1 = left + (float(b) - lo) / span * plot_w
            h = plot_h * int(count) / most
            bars.append(f'<rect class="sl-bar" x="{x0:.2f}" y="{top + plot_h - h:.2f}" width="{max(x1 - x0 - 1, 0.5):.2f}"'
                        f' height="{h:.2f}" fill="#4c6ef5"><title>[{number_text(a)}, {number_text(b)}): '
                        f'{int(count)}</title></rect>')
        mean_x = left + (self.mean - lo) / span * plot_w
        esc = html.escape
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" class="sl-histogram" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="10">'
            f'<text x="{left}" y="13">{esc(self.heading())}</text>'
            + "".join(bars)
            + f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="#495057"/>'
            f'<line class="sl-mean" x1="{mean_x:.2f}" y1="{top}" x2="{mean_x:.2f}" y2="{top + plot_h}" stroke="#e8590c" '
            f'stroke-dasharray="4 3"><title>mean {esc(number_text(self.mean))}</title></line>'
            f'<text x="{left}" y="{height - 12}">{esc(number_text(lo))}</text>'
            f'<text x="{left + plot_w}" y="{height - 12}" text-anchor="end">{esc(number_text(hi))}</text>'
            "</svg>"
        )

    def __repr__(self) -> str:
        return f"<Histogram {self.heading()}>"

    def png(self) -> bytes:
        """The bars as a PNG (no text): what a notebook shows where it hides SVG (untrusted)."""
        most = max(int(self.counts.max()), 1)
        lo, hi = float(self.edges[0]), float(self.edges[-1])
        mean = (self.mean - lo) / (hi - lo) if hi > lo else None
        return bars_png([int(c) / most for c in self.counts], mean=mean)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        # No Markdown here: JupyterLab ranks it above SVG, and the picture would give way to the text.
        return {"text/plain": self.text(), "image/svg+xml": self.svg(),
                "image/png": base64.b64encode(self.png()).decode("ascii")}


def _parameters(node: Apply, inputs: Mapping[Variable, Any], known: Mapping[Variable, Any] | None,
                caller: str) -> tuple[Any, list[Any]]:
    """The values of the node's generator and other inputs: from ``known``, else evaluated from ``inputs``."""
    from symlab.notebook.inner_values import evaluate_lazily

    known = known or {}
    missing = [v for v in node.inputs if v not in known]
    values = dict(known)
    if missing:
        try:
            values.update(evaluate_lazily(missing, dict(inputs), known=known).values)
        except Exception as err:
            raise type(err)(f"{caller}: computing the parameters of {node.op} failed: {err}") from err
    generator, *rest = (values[v] for v in node.inputs)
    return generator, rest


def histogram(var: Variable, inputs: Mapping[Variable, Any] | None = None, draws: int = 1000,
              bins: int | None = None, element: int | tuple[int, ...] | None = None, *,
              known: Mapping[Variable, Any] | None = None, caller: str = "histogram") -> Histogram:
    """A :class:`Histogram` of ``draws`` draws of the random draw ``var``.

    ``inputs`` gives the values of the graph inputs its parameters need (``{variable: value}``); ``known``
    values already computed (a values view's). The node draws ``draws`` times, each draw from the generator the
    previous one returned, starting from a copy of the generator it reads: the shared generator is never
    advanced. A draw of several elements is pooled (``per_draw`` elements each), unless ``element`` picks one
    (an index into the draw). ``bins``: the number of bins (default: one per value for integer draws spanning
    at most 60 values, else 20 at most).
    """
    from symlab.tensor.random.type import copy_generator  # loaded with the first histogram, not by import symlab

    if isinstance(draws, bool) or not isinstance(draws, int | np.integer) or not 1 <= draws <= MAX_DRAWS:
        raise ValueError(f"{caller}: draws must be an int from 1 to {MAX_DRAWS}, received {draws!r}")
    if bins is not None and (isinstance(bins, bool) or not isinstance(bins, int | np.integer) or bins < 1):
        raise ValueError(f"{caller}: bins must be a positive int or None, received {bins!r}")
    node = random_node(var, caller)
    generator, rest = _parameters(node, inputs or {}, known, caller)
    if not isinstance(generator, np.random.Generator):
        raise TypeError(f"{caller}: the generator of {node.op} holds {type(generator).__name__}, expected a "
                        "numpy.random.Generator")
    op = node.op.clone_with(inplace=True)  # draws advance our copy in place: no copy per draw
    state = copy_generator(generator)
    index = node.outputs.index(var)
    storage: list[list[Any]] = [[None] for _ in node.outputs]
    chunks = []
    first = None
    for _ in range(int(draws)):
        op.perform(node, [state, *rest], storage)
        state = storage[0][0] if is_generator(node.outputs[0]) else state
        value = np.asarray(storage[index][0])
        if first is None:
            first = value.copy()
        if element is not None:
            try:
                value = value[element]
            except (IndexError, TypeError):
                raise ValueError(f"{caller}: element {element!r} is not an index of a draw of shape "
                                 f"{value.shape}") from None
        chunks.append(np.ravel(value))
    numbers = np.concatenate(chunks)
    per_draw = numbers.size // int(draws)
    counts, edges = _bins(numbers, bins)
    return Histogram(describe(var), str(getattr(node.op, "name", node.op)), counts, edges, int(draws), per_draw,
                     float(numbers.mean()) if numbers.size else math.nan,
                     float(numbers.std()) if numbers.size else math.nan, first)


def _bins(numbers: np.ndarray, bins: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Counts and edges: one bin per integer value when the values are few, else ``bins`` (20) equal bins."""
    if numbers.dtype.kind == "b":
        numbers = numbers.astype(np.int64)
    finite = numbers[np.isfinite(numbers)] if numbers.dtype.kind in "fc" else numbers
    if not finite.size:
        return np.zeros(1, dtype=np.int64), np.array([0.0, 1.0])
    if bins is None and numbers.dtype.kind in "iu" and int(finite.max()) - int(finite.min()) < INTEGER_BINS:
        edges = np.arange(int(finite.min()), int(finite.max()) + 2) - 0.5
        return np.histogram(finite, bins=edges)[0], edges
    counts, edges = np.histogram(finite, bins=bins or 20)
    return counts, edges
