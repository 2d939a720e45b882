"""The values view's random draws: which distribution a draw comes from, and a histogram of many draws on request.

A values view evaluates its graph once: a random draw shows one sample (the numbers that evaluation gave, from
the generator as it stands, never advancing it). Selecting a draw adds what it is drawn from to the panel, and an
action asking for a histogram of :data:`DEFAULT_DRAWS` draws; :meth:`RandomValues.histogram` is its Python twin.
The draws come from a copy of the generator (:func:`~symlab.notebook.histogram.histogram`): the view and the
user's shared generator stay as they were.

>>> import numpy as np, symlab
>>> from symlab.tensor.random.basic import normal
>>> from symlab.notebook.values import ValuesView
>>> rng = symlab.shared(np.random.default_rng(3), name="rng")
>>> x = normal(0.0, 1.0, size=(2,), rng=rng)
>>> x.name = "x"
>>> view = ValuesView(x, {})
>>> bool(np.array_equal(view.value(x), np.random.default_rng(3).normal(size=2)))  # one sample: NumPy's numbers
True
>>> view.text(rng) == view.text(x.owner.inputs[0]), view.text(rng)[0].startswith("PCG64 state #")
(True, True)
>>> view.select(x)
>>> [a["text"] for a in view.panel["actions"]]
['histogram of 1000 draws']
>>> h = view.histogram(x, draws=500)
>>> h.draws, h.per_draw, int(h.counts.sum()), view.histogram_panel["key"] == view.key_of(x)
(500, 2, 1000, True)
"""

from __future__ import annotations

from typing import Any

from symlab.graph.basic import Apply, Variable
from symlab.notebook.histogram import Histogram, histogram
from symlab.notebook.value_text import describe, generator_text
from symlab.printing.drawing import is_generator

__all__ = ["DEFAULT_DRAWS", "RandomValues", "is_draw"]

#: How many draws the panel's histogram action makes.
DEFAULT_DRAWS = 1000


def is_draw(var: Any) -> bool:
    """Whether ``var`` is the draw of a random node (an output, not a generator, of a node returning a generator)."""
    node = var.owner if isinstance(var, Variable) else None
    return node is not None and not is_generator(var) and any(is_generator(o) for o in node.outputs)


class RandomValues:
    """The values view's part for random draws (mixed into :class:`~symlab.notebook.values.ValuesView`)."""

    _values: dict[Variable, Any]
    _graph: Any
    _keys: Any

    def histogram(self, var: Variable | str, draws: int = DEFAULT_DRAWS, bins: int | None = None,
                  element: int | tuple[int, ...] | None = None) -> Histogram:
        """A histogram of ``draws`` draws of the random draw ``var`` (the variable, its name or its key), with the
        parameter values this view computed, from a copy of its generator (nothing the view shows changes, and the
        shared generator is not advanced); shown under the panel (:attr:`histogram_panel`). See
        :func:`~symlab.notebook.histogram.histogram` for ``bins`` and ``element``."""
        if isinstance(var, str) and var in self._keys and not any(v.name == var for v in self._graph.variables):
            var = self._keys.obj(var)
        v = self._graph.variable(var, "ValuesView.histogram")
        if v not in self._values:
            raise ValueError(f"ValuesView.histogram: {describe(v)} was not computed (a branch an ifelse did not take)")
        found = histogram(v, draws=draws, bins=bins, element=element, known=self._values,
                          caller="ValuesView.histogram")
        with self.answer():
            self.histogram_panel = {"key": self._keys.key_of(v), "title": found.heading(), "svg": found.svg(),
                                    "text": found.text()}
        self._histogram = found
        return found

    def _on_histogram(self, content: dict[str, Any]) -> None:
        """The panel's action: ``{type: "histogram", key}``."""
        self.histogram(str(content.get("key") or ""))

    def _random_rows(self, var: Variable) -> list[dict[str, Any]]:
        """What a draw is drawn from, and where its generator stands (the panel of a selected variable)."""
        rows: list[dict[str, Any]] = []
        if is_draw(var):
            node: Apply = var.owner
            generator = node.inputs[0]
            params = ", ".join(describe(p, 20) for p in node.inputs[2:])
            rows.append({"label": "random draw", "text": f"{getattr(node.op, 'name', node.op)}({params}): one sample, "
                                                         "the numbers this evaluation drew"})
            rows.append({"label": "drawn from", "items": [{"text": describe(generator),
                                                           "key": self._keys.key_of(generator)}]})
        elif is_generator(var) and var in self._values:
            rows.append({"label": "state", "text": generator_text(self._values[var])})
        return rows

    def _random_actions(self, key: str, var: Any) -> list[dict[str, str]]:
        if not is_draw(var) or var not in self._values:
            return []
        return [{"text": f"histogram of {DEFAULT_DRAWS} draws", "key": key, "kind": "histogram"}]

    def _histogram_markdown(self) -> list[str]:
        found = getattr(self, "_histogram", None)
        return ["", found.markdown()] if found is not None else []
