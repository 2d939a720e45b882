"""The sliders of a values view: a range for each real scalar input, and what the browser shows for every input.

A real scalar input (float, int or uint, 0-d) gets a slider and a number box; any other input is written
out, with why it has no slider. A range the caller gives is kept; a default one is drawn around the value
and widened, never moved, when a value typed or set goes beyond it.

>>> import numpy as np
>>> import symlab.tensor as st
>>> from symlab.notebook.value_arguments import ValuesGraph
>>> x, v = st.dscalar("x"), st.dvector("v")
>>> sliders = Sliders(ValuesGraph(x * v, "example"), {})
>>> sliders.widen(x, np.array(0.5))
>>> sliders.ranges[x]
(-2.0, 3.0)
>>> control = sliders.control(x, np.array(0.5), "v0")
>>> control["min"], control["max"], control["entry"]
(-2.0, 3.0, '0.5')
>>> sliders.control(v, np.zeros(3), "v1")["why"]
'an array: no slider (only real scalar inputs have one); change it from Python with view.set(...)'
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from symlab.graph.basic import Variable
from symlab.notebook.value_arguments import ValuesGraph, short_name
from symlab.notebook.value_text import value_lines

__all__ = ["Sliders", "parse_number", "slidable"]


def slidable(var: Variable) -> bool:
    """Real scalar inputs get a slider."""
    dtype = str(getattr(var.type, "dtype", ""))
    return getattr(var.type, "ndim", None) == 0 and dtype.startswith(("float", "int", "uint"))


def parse_number(text: str) -> Any:
    """The number typed in a box (an int when it is one), or ``text`` itself when it is no number.

    >>> parse_number("3"), parse_number("-inf"), parse_number("one")
    (3, -inf, 'one')
    """
    try:
        return int(text) if text.lstrip("+-").isdigit() else float(text)
    except ValueError:
        return text


class Sliders:
    """The ranges of the sliders of ``graph``'s scalar inputs; ``ranges`` (``{input or name: (low, high)}``) fixes some."""

    def __init__(self, graph: ValuesGraph, ranges: Any) -> None:
        self.ranges: dict[Variable, tuple[float, float]] = {}
        self.fixed: set[Variable] = set()  # ranges the caller gave: never widened
        caller = graph.caller
        if not isinstance(ranges, Mapping):
            raise TypeError(f"{caller}: ranges must be a dict {{input: (low, high)}}, received {type(ranges).__name__}")
        for key, pair in ranges.items():
            var = graph.input(key, f"{caller}: ranges")
            if not slidable(var):
                raise ValueError(f"{caller}: ranges gives a range to {short_name(var)} ({var.type}), which has no "
                                 "slider (only real scalar inputs have one)")
            try:
                low, high = (float(v) for v in pair)
            except (TypeError, ValueError):
                raise ValueError(f"{caller}: ranges[{short_name(var)}] must be a pair (low, high) of numbers, "
                                 f"received {pair!r}") from None
            if not (math.isfinite(low) and math.isfinite(high) and low < high):
                raise ValueError(f"{caller}: ranges[{short_name(var)}] must be finite with low < high, received "
                                 f"{pair!r}")
            self.ranges[var] = (low, high)
            self.fixed.add(var)

    def widen(self, var: Variable, value: Any) -> None:
        """A default range around a scalar input's ``value``; widened (never moved) when the value leaves it."""
        if not slidable(var) or var in self.fixed:
            return
        number = float(value)
        if not math.isfinite(number):
            self.ranges.setdefault(var, (-1.0, 1.0))
            return
        half = 2 * max(1.0, abs(number))
        low, high = float(math.floor(number - half)), float(math.ceil(number + half))
        if var not in self.ranges:
            self.ranges[var] = (low, high)
            return
        old_low, old_high = self.ranges[var]
        if number > old_high:  # a typed value beyond the slider: make room for it on that side
            self.ranges[var] = (old_low, high)
        elif number < old_low:
            self.ranges[var] = (low, old_high)

    def control(self, var: Variable, value: Any, key: str) -> dict[str, Any]:
        """What the browser shows for the input ``var`` (keyed ``key``) holding ``value``: a slider and a number
        box, or why it has none."""
        entry: dict[str, Any] = {"key": key, "name": short_name(var), "dtype": str(value.dtype)}
        if not slidable(var):
            what = "an array" if np.ndim(value) else "not a real number"
            entry.update(editable=False, text="; ".join(value_lines(value)),
                         why=f"{what}: no slider (only real scalar inputs have one); change it from Python with "
                             f"view.set(...)")
            return entry
        low, high = self.ranges[var]
        integer = value.dtype.kind in "iu"
        if integer:  # a slider of whole numbers
            low, high = math.ceil(low), math.floor(high)
        number = value[()].item()
        entry.update(editable=True, integer=integer, min=low, max=high, step=1 if integer else (high - low) / 1000,
                     value=number if math.isfinite(number) else None,  # NaN is no JSON number: the box says it
                     entry=str(number) if integer else repr(float(number)))
        return entry
