"""``ValuesView``: a graph's values, and its gradients, written on its picture; scalar inputs on sliders.

micrograd's best teaching idea, made interactive: every variable is a box holding its value (and,
with ``wrt``, the gradient of the cost with respect to it), every operation a small node between
boxes (the ``dataflow`` style of :mod:`symlab.printing`). A scalar is written with about 4
significant digits, a small array in full, a larger one as its shape, dtype, min/mean/max and its
NaN and inf counts. Where a NaN or an infinity is born (a node whose output has one while none of
its inputs has) is painted red, and the nodes it flows through orange. Each scalar input gets a
number box and a slider in the browser; moving one re-evaluates the graph and answers once.

The values are those of ``Variable.eval`` (:func:`symlab.graph.evaluate.evaluate`, each op's
``perform``), the gradients those of :func:`symlab.grad` (reverse mode, asked once for every variable
on a path from ``wrt`` to the cost, then evaluated with the values). The view never changes the graph.

Every control has a Python twin, for scripts and tests:

>>> import symlab.tensor as st
>>> x1, x2, w1, w2, b = (st.dscalar(name) for name in ("x1", "x2", "w1", "w2", "b"))
>>> n = x1 * w1 + x2 * w2 + b
>>> n.name = "n"
>>> o = st.tanh(n)
>>> o.name = "o"
>>> view = ValuesView(o, {x1: 2.0, x2: 0.0, w1: -3.0, w2: 1.0, b: 6.8813735870195432}, wrt=[w1, w2])
>>> view
ValuesView of o: 10 variables, 5 scalar inputs, gradients wrt w1, w2
>>> view.text(n), view.text(w1), view.text(x1)  # x1 is on no path from w1 or w2 to o: no gradient
(['0.8814', 'grad 0.5'], ['-3.0', 'grad 1.0'], ['2.0'])
>>> view.set("x2", 1.0)  # what moving x2's slider does
>>> view.text(o), view.gradient(w2)
(['0.9546', 'grad 1.0'], array(0.08871187))

NaN and inf are traced to where they are born:

>>> x = st.dscalar("x")
>>> ValuesView(st.log(x - 1), {x: 0.0}).nan_note
'NaN born at log((x - 1)), from (x - 1) = -1.0'
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, overload

import numpy as np
import traitlets

from symlab.graph.basic import Apply, Constant, Variable
from symlab.notebook.folds import VIEW_MAX_NODES, Folds
from symlab.notebook.keys import KeyIndex, selection_marks
from symlab.notebook.widget import ViewWidget, code_span
from symlab.printing.folding import toposort
from symlab.printing.model import GraphModel, build_model
from symlab.printing.outline import outline_markdown, outline_pairs, outline_text
from symlab.printing.subject import subject_of

__all__ = ["ValuesView", "full_text", "number_text", "value_lines"]

#: Drawn nodes (boxes and op nodes) before the picture is folded into groups: the graph view's budget.
VALUES_MAX_NODES = VIEW_MAX_NODES
#: Arrays of at most this many elements are written in full on the picture.
SMALL_ARRAY = 6
#: The panel's numpy repr of a value is cut after this many characters.
FULL_CHARS = 4000
#: Rows of the Markdown table.
MARKDOWN_MAX_ROWS = 60
LEGEND = ("box: a variable and its value (green: input, grey: constant, white: intermediate, blue: output) · "
          "ellipse: an operation · red: where a NaN or inf is born · orange: where it flows")
_HINT = "Click a box to see its whole value and gradient; move a slider to re-evaluate the graph."


# -- numbers as text ---------------------------------------------------------------------------
def number_text(x: Any) -> str:
    """A number in about 4 significant digits; a float that rounds to a small integer keeps a ``.0``.

    >>> [number_text(v) for v in (2.0, -0.70710678, 6.8813735870195432, 0.99999999, 1234.5678, 1e-7)]
    ['2.0', '-0.7071', '6.881', '1.0', '1235', '1e-07']
    >>> [number_text(v) for v in (float("nan"), -math.inf, 3, True, 1 - 2j)]
    ['nan', '-inf', '3', 'True', '1.0-2.0j']
    """
    if isinstance(x, bool | np.bool_):
        return str(bool(x))
    if isinstance(x, int | np.integer):
        return str(int(x))
    if isinstance(x, complex | np.complexfloating):
        sign = "-" if x.imag < 0 else "+"
        return f"{number_text(x.real)}{sign}{number_text(abs(x.imag))}j"
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    text = f"{x:.4g}"
    digits = text.lstrip("-")
    if digits.isdigit() and len(digits) < 4:  # 2.0 reads as a float (1235.0 would claim a 5th digit)
        text += ".0"
    return text


def _nested(a: np.ndarray) -> str:
    if a.ndim == 0:
        return number_text(a[()])
    return "[" + ", ".join(_nested(part) for part in a) + "]"


def _counts(a: np.ndarray) -> list[str]:
    """The min/mean/max of the finite elements and the NaN/inf counts of a large array."""
    if a.dtype.kind == "b":
        return [f"{int(a.sum())} True of {a.size}"]
    if a.dtype.kind == "c":
        a = np.abs(a)  # the size of complex numbers: what min and max can compare
        prefix = "|x| "
    else:
        prefix = ""
    if a.dtype.kind != "f":
        return [f"{prefix}min {number_text(a.min())}, mean {number_text(a.mean())}, max {number_text(a.max())}"]
    finite = a[np.isfinite(a)]
    lines = []
    if finite.size:
        lines.append(f"{prefix}min {number_text(finite.min())}, mean {number_text(finite.mean())}, "
                     f"max {number_text(finite.max())}")
    nans, infs = int(np.isnan(a).sum()), int(np.isinf(a).sum())
    lines.append(f"{nans} NaN, {infs} inf" if nans or infs else "no NaN/inf")
    return lines


def value_lines(value: Any) -> list[str]:
    """How a value is written on the picture: a scalar, a small array in full, or a summary.

    >>> value_lines(np.array(0.5)), value_lines(np.array([1.0, np.nan]))
    (['0.5'], ['[1.0, nan]'])
    >>> value_lines(np.arange(12.0).reshape(3, 4))
    ['shape (3, 4) float64', 'min 0.0, mean 5.5, max 11.0', 'no NaN/inf']
    """
    if value is None:
        return ["no value"]
    try:
        a = np.asarray(value)
    except Exception:  # something numpy cannot hold: its repr says what it is
        a = None
    if a is None or a.dtype.kind not in "biufc":
        text = " ".join(repr(value).split())
        return [text if len(text) <= 40 else text[:39] + "…"]
    if a.ndim == 0:
        return [number_text(a[()])]
    if a.size == 0:
        return [f"empty, shape {a.shape} {a.dtype}"]
    if a.size <= SMALL_ARRAY:
        return [_nested(a)]
    return [f"shape {a.shape} {a.dtype}", *_counts(a)]


def full_text(value: Any, limit: int = FULL_CHARS) -> str:
    """``repr`` of a value as numpy prints it, cut after ``limit`` characters (the panel's text).

    >>> print(full_text(np.eye(2)))
    array([[1., 0.],
           [0., 1.]])
    >>> full_text(np.zeros(5000), limit=30)
    'array([0., 0., 0., ..., 0., 0.… (cut at 30 characters)'
    """
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"… (cut at {limit} characters)"


def _bad(value: Any) -> tuple[bool, bool]:
    """``(has NaN, has inf)`` of a value (numbers only; anything else has neither)."""
    try:
        a = np.asarray(value)
    except Exception:
        return False, False
    if a.dtype.kind not in "fc":
        return False, False
    return bool(np.isnan(a).any()), bool(np.isinf(a).any())


def _describe_value(value: Any) -> str:
    """What was received, for error messages."""
    dtype, shape = getattr(value, "dtype", None), getattr(value, "shape", None)
    if dtype is not None and shape is not None:
        return f"{type(value).__name__} of dtype {dtype} and shape {shape}"
    text = f"{type(value).__name__} {value!r}"
    return text if len(text) <= 80 else text[:79] + "…"


def _discrete(var: Variable) -> bool:
    """Integer and boolean variables have no gradient."""
    dtype = getattr(var.type, "dtype", None)
    return dtype is not None and not str(dtype).startswith(("float", "complex"))


def describe(var: Variable, limit: int = 40) -> str:
    """A variable in words: its name, a leaf's text, or its expression, shortened to about ``limit`` characters.

    >>> import symlab.tensor as st
    >>> x = st.dscalar("x")
    >>> describe(st.log(x - 1)), describe(st.tanh(((x * 2 + 1) * 3 + 4) * 5), limit=20)
    ('log((x - 1))', 'tanh((… * 5))')
    """
    from symlab.printing.pprint import leaf_text, pprint

    if var.name is not None:
        return var.name
    if var.owner is None:
        return leaf_text(var)
    text = ""
    for max_chars in (limit, limit // 2, 1):  # shorter subexpressions until it fits
        text = pprint(var, max_chars=max_chars)
        if len(text) <= limit:
            return text
    return text[: limit - 1] + "…"


# -- the view ------------------------------------------------------------------------------------
class ValuesView(ViewWidget):
    """The values (and gradients) of a graph on its picture; see the module documentation.

    ``outputs`` is a Variable or a list of them; ``inputs`` gives every input of the graph a value,
    ``{variable or name: value}``; ``wrt`` (a variable, a name or a list of them) asks for the
    gradients of the cost, the one scalar output, with respect to every variable on a path from
    them to the cost. ``ranges`` sets the range of scalar inputs' sliders, ``{input: (low, high)}``
    (by default one around each value, widened when a value goes outside it); graphs of more than
    ``max_nodes`` drawn nodes are folded (the nodes where a NaN is born stay visible).
    """

    svg = traitlets.Unicode("").tag(sync=True)
    selected_key = traitlets.Unicode("").tag(sync=True)
    marks = traitlets.Dict().tag(sync=True)
    panel = traitlets.Dict().tag(sync=True)
    #: One entry per input: a scalar's slider and number box, or why it has none.
    controls = traitlets.List().tag(sync=True)
    caption = traitlets.Unicode("").tag(sync=True)
    nan_note = traitlets.Unicode("").tag(sync=True)
    notice = traitlets.Unicode("").tag(sync=True)
    legend = traitlets.Unicode(LEGEND).tag(sync=True)
    #: Keys the browser brings into view after drawing: the selection, or the nodes an expand showed.
    reveal = traitlets.List().tag(sync=True)
    #: The text twin: the graph as debugprint-style rows ``{"key", "depth", "text", "repeat", "also"}`` keyed by
    #: variable (the boxes of the picture), each variable's value and gradient after it.
    outline = traitlets.List().tag(sync=True)
    #: True: the browser shows the outline beside the picture (message ``{"type": "text_mode", "on": bool}``).
    text_mode = traitlets.Bool(False).tag(sync=True)

    def __init__(
        self,
        outputs: Variable | Iterable[Variable],
        inputs: Mapping[Variable | str, Any],
        wrt: Variable | str | Iterable[Variable | str] | None = None,
        *,
        ranges: Mapping[Variable | str, tuple[float, float]] | None = None,
        max_nodes: int = VALUES_MAX_NODES,
    ) -> None:
        if not isinstance(max_nodes, int) or isinstance(max_nodes, bool) or max_nodes < 1:
            raise ValueError(f"ValuesView: max_nodes must be a positive int, received {max_nodes!r}")
        self._outputs = _read_outputs(outputs)
        self._order, leaves = toposort(list(self._outputs))
        self._variables = _variables(self._order, leaves)
        self._known = set(self._variables)
        # Leaves that take values: not constants; a shared variable holds its own but may be given one.
        self._leaves = [v for v in leaves if not isinstance(v, Constant)]
        self._keys = KeyIndex(  # the key of every object: the one place keys resolve
            subject_of(list(self._outputs)), self._order, leaves)
        self._max_nodes = max_nodes
        self._folds = Folds(self._order, self._outputs, max_nodes, lambda node: 1 + len(node.outputs))
        self._inputs = self._read_inputs(inputs)
        self._wrt = self._read_wrt(wrt)
        self._grads, self._no_grad = self._gradient_graphs()
        self._ranges: dict[Variable, tuple[float, float]] = {}
        self._fixed: set[Variable] = set()  # ranges the caller gave: never widened
        self._read_ranges(ranges or {})
        self._values, self._grad_values = self._evaluate(self._inputs, "ValuesView")
        for var in self._inputs:
            self._widen(var)
        self._find_nans()
        self.model: GraphModel | None = None
        super().__init__(view="values")
        with self.answer():
            self._draw()
            self._select("")

    # -- reading the arguments ----------------------------------------------------------------------
    def _read_inputs(self, inputs: Any) -> dict[Variable, Any]:
        if not isinstance(inputs, Mapping):
            raise TypeError("ValuesView: inputs must be a dict {input variable or its name: value}, "
                            f"received {type(inputs).__name__}")
        given: dict[Variable, Any] = {}
        for key, value in inputs.items():
            var = self._input(key, "ValuesView: inputs")
            if var in given:
                raise ValueError(f"ValuesView: inputs gives {_show(var)} twice (as a variable and by its name)")
            given[var] = self._filter(var, value, "ValuesView: inputs")
        missing = [v for v in self._leaves if v not in given and not hasattr(v, "get_value")]
        if missing:
            wanted = ", ".join(f"{_show(v)} ({v.type})" for v in missing)
            received = ", ".join(_show(v) for v in given) or "none"
            raise ValueError(f"ValuesView: inputs has no value for {wanted}; every input of the graph needs one "
                             f"(received values for: {received})")
        return {v: given[v] for v in self._leaves if v in given}  # in the graph's order

    def _input(self, key: Any, caller: str) -> Variable:
        """The input of the graph ``key`` names: the variable itself or its name."""
        names = ", ".join(_show(v) for v in self._leaves) or "none"
        if isinstance(key, str):
            found = [v for v in self._leaves if v.name == key]
            if len(found) == 1:
                return found[0]
            if found:
                raise ValueError(f"{caller}: {len(found)} inputs of this graph are named {key!r}; pass the variable")
            raise ValueError(f"{caller}: the graph has no input named {key!r}; its inputs are {names}")
        if not isinstance(key, Variable):
            raise TypeError(f"{caller}: an input is a Variable or its name, received {_describe_value(key)}")
        if key in self._leaves:
            return key
        if isinstance(key, Constant):
            raise ValueError(f"{caller}: {_show(key)} is a constant; it cannot be given a value")
        if key in self._known:
            raise ValueError(f"{caller}: {_show(key)} is computed by the graph, not one of its inputs; "
                             f"its inputs are {names}")
        raise ValueError(f"{caller}: {_show(key)} ({key.type}) is not an input of this graph; its inputs are {names}")

    @staticmethod
    def _filter(var: Variable, value: Any, caller: str) -> Any:
        """``value`` as ``var``'s type holds it, or a TypeError naming the input, the expected and the received."""
        if isinstance(value, str | bytes):  # said plainly here (the browser's typed text is read in _on_value)
            raise TypeError(f"{caller}: bad value for input {_show(var)}: expected {var.type} (a number or an array), "
                            f"received {_describe_value(value)}")
        try:
            return var.type.filter(value)
        except (TypeError, ValueError) as err:
            raise TypeError(f"{caller}: bad value for input {_show(var)}: expected {var.type}, "
                            f"received {_describe_value(value)} ({err})") from None

    def _variable(self, target: Any, caller: str) -> Variable:
        """A variable of the graph: itself or its (unique) name."""
        if isinstance(target, str):
            found = [v for v in self._variables if v.name == target]
            if len(found) == 1:
                return found[0]
            if found:
                raise ValueError(f"{caller}: {len(found)} variables of this graph are named {target!r}; pass the "
                                 "variable")
            raise ValueError(f"{caller}: no variable of this graph is named {target!r}")
        if isinstance(target, Variable) and target in self._known:
            return target
        if isinstance(target, Variable):
            raise ValueError(f"{caller}: {_show(target)} ({target.type}) is not a variable of this graph")
        raise TypeError(f"{caller}: expected a Variable of the graph or its name, received {_describe_value(target)}")

    def _read_wrt(self, wrt: Any) -> list[Variable]:
        if wrt is None:
            return []
        items = [wrt] if isinstance(wrt, Variable | str) else wrt
        try:
            items = list(items)
        except TypeError:
            raise TypeError("ValuesView: wrt must be a Variable, its name or a list of them, received "
                            f"{_describe_value(wrt)}") from None
        if len(self._outputs) != 1:
            raise ValueError(f"ValuesView: wrt needs a single scalar cost, received {len(self._outputs)} outputs "
                             f"({', '.join(describe(o) for o in self._outputs)}); pass the cost alone as outputs")
        cost = self._outputs[0]
        if getattr(cost.type, "ndim", None) != 0:
            raise TypeError(f"ValuesView: wrt needs a scalar (0-d) cost, received outputs {describe(cost)} of type "
                            f"{cost.type}; sum it (cost.sum()) or leave wrt out")
        chosen: list[Variable] = []
        for item in items:
            if isinstance(item, Variable) and item not in self._known:
                raise ValueError(f"ValuesView: wrt {_show(item)} ({item.type}) is not a variable of this graph; "
                                 f"expected one of its inputs ({', '.join(_show(v) for v in self._leaves)}) or the "
                                 "variables computed from them")
            var = self._variable(item, "ValuesView: wrt")
            if var not in chosen:
                chosen.append(var)
        return chosen

    def _read_ranges(self, ranges: Any) -> None:
        if not isinstance(ranges, Mapping):
            raise TypeError("ValuesView: ranges must be a dict {input: (low, high)}, received "
                            f"{type(ranges).__name__}")
        for key, pair in ranges.items():
            var = self._input(key, "ValuesView: ranges")
            if not _slidable(var):
                raise ValueError(f"ValuesView: ranges gives a range to {_show(var)} ({var.type}), which has no slider "
                                 "(only real scalar inputs have one)")
            try:
                low, high = (float(v) for v in pair)
            except (TypeError, ValueError):
                raise ValueError(f"ValuesView: ranges[{_show(var)}] must be a pair (low, high) of numbers, received "
                                 f"{pair!r}") from None
            if not (math.isfinite(low) and math.isfinite(high) and low < high):
                raise ValueError(f"ValuesView: ranges[{_show(var)}] must be finite with low < high, received {pair!r}")
            self._ranges[var] = (low, high)
            self._fixed.add(var)

    # -- computing ---------------------------------------------------------------------------------
    def _gradient_graphs(self) -> tuple[dict[Variable, Variable], dict[Variable, str]]:
        """The gradient graph of every variable on a path from ``wrt`` to the cost, from one ``grad`` call."""
        if not self._wrt:
            return {}, {}
        import symlab
        from symlab.graph.null_type import NullType

        cost = self._outputs[0]
        downstream = set(self._wrt)
        for node in self._order:
            if any(i in downstream for i in node.inputs):
                downstream.update(node.outputs)
        used = {i for node in self._order for i in node.inputs} | {cost}  # an unused output is on no path
        path = [v for v in self._variables if v in downstream and v in used]
        no_grad = {v: "none: integer and boolean variables have no gradient" for v in path if _discrete(v)}
        path = [v for v in path if v not in no_grad]
        grads: dict[Variable, Variable] = {}
        if path:
            found = symlab.grad(cost, path, disconnected_inputs="ignore", null_gradients="return")
            for var, g in zip(path, found):
                if isinstance(g.type, NullType):
                    no_grad[var] = f"none: {g.type.why}"
                else:
                    grads[var] = g
        return grads, no_grad

    def _evaluate(self, inputs: dict[Variable, Any], caller: str) -> tuple[dict[Variable, Any], dict[Variable, Any]]:
        """Every variable's value and every gradient, in one evaluation (the gradients reuse the values)."""
        from symlab.graph.evaluate import evaluate

        targets = [*self._variables, *self._grads.values()]
        try:
            with np.errstate(all="ignore"):  # NaN and inf are shown on the picture, not warned about
                results = evaluate(targets, inputs)
        except Exception as err:
            given = ", ".join(f"{_show(v)} = {' '.join(value_lines(val))}" for v, val in inputs.items())
            message = f"{caller}: evaluating the graph with {given} failed: {err}"
            try:
                again = type(err)(message)  # the same kind of error, saying with which inputs
            except Exception:  # an error class that wants other arguments
                again = RuntimeError(message)
            raise again from err
        n = len(self._variables)
        values = dict(zip(self._variables, results[:n]))
        grads = dict(zip(self._grads, results[n:]))
        return values, grads

    def _find_nans(self) -> None:
        """Where NaN or inf is born (no input has one) and where it flows."""
        bad = {v for v in self._variables if any(_bad(self._values[v]))}
        origins: list[Any] = [v for v in self._leaves if v in bad]
        origins += [v for v in self._variables if isinstance(v, Constant) and v in bad]
        carriers: list[Any] = []
        for node in self._order:
            if not any(o in bad for o in node.outputs):
                continue
            (carriers if any(i in bad for i in node.inputs) else origins).append(node)
        self._bad = bad
        self._origins = origins
        self._carriers = carriers

    # -- the Python twins of the controls ----------------------------------------------------------------
    def set(self, input: Variable | str, value: Any) -> None:
        """Give ``input`` (the variable or its name) a new value and re-evaluate: what moving its slider does.

        A bad value (a string, a wrong shape, a value the evaluation fails on) raises an error naming
        the input, what it expects and what it received, and leaves the view as it was.
        """
        var = self._input(input, "ValuesView.set")
        inputs = {**self._inputs, var: self._filter(var, value, "ValuesView.set")}
        inputs = {v: inputs[v] for v in self._leaves if v in inputs}
        values, grads = self._evaluate(inputs, "ValuesView.set")
        self._inputs, self._values, self._grad_values = inputs, values, grads
        self._widen(var)
        self._find_nans()
        with self.answer():
            self._draw()  # its notice replaces any error the browser was shown
            self._select(self.selected_key)

    def select(self, target: Any) -> None:
        """Select a variable or an Apply node of the graph (or a variable's name, or a key; ``None`` clears)."""
        if target is None or target == "":
            key = ""
        elif isinstance(target, Apply):
            if target not in set(self._order):
                raise ValueError(f"ValuesView.select: {target} is not a node of this graph")
            key = self._keys.key_of(target)
        elif isinstance(target, str) and target not in {v.name for v in self._variables} and (
                target in self._keys or self._folds.group(target) is not None):
            key = target  # a key: a node's, a variable's or a group's
        else:
            key = self._keys.key_of(self._variable(target, "ValuesView.select"))
        with self.answer():
            self._select(key)

    def value(self, var: Variable | str) -> Any:
        """The value of ``var`` (a variable of the graph or its name): what is written on its box."""
        return self._values[self._variable(var, "ValuesView.value")]

    def gradient(self, var: Variable | str) -> Any:
        """The gradient of the cost with respect to ``var``, or ``None`` where none is drawn.

        ``None`` without ``wrt``, for a variable on no path from ``wrt`` to the cost, and for integer
        and boolean variables.
        """
        v = self._variable(var, "ValuesView.gradient")
        return self._grad_values.get(v)

    @overload
    def text(self) -> str: ...

    @overload
    def text(self, var: Variable | str) -> list[str]: ...

    def text(self, var: Variable | str | None = None) -> str | list[str]:
        """The lines written under ``var``'s name on the picture: its value, then ``grad ...``.

        Without ``var``, the text twin of the whole view: the graph as a debugprint-style tree
        (:attr:`outline`), each variable followed by its lines, the selected rows marked ``>`` and the
        selection's inputs and clients ``*``.
        """
        if var is None:
            return outline_text(self.outline, self.selected_key, self.marks)
        v = self._variable(var, "ValuesView.text")
        return self._lines(v)

    @property
    def inputs(self) -> dict[Variable, Any]:
        """The current value of each input (copies: changing them changes nothing; use :meth:`set`)."""
        return {v: np.array(val, copy=True) if isinstance(val, np.ndarray) else val for v, val in self._inputs.items()}

    @property
    def outputs(self) -> tuple[Variable, ...]:
        """The variables the view computes (the cost, when there are gradients)."""
        return self._outputs

    @property
    def wrt(self) -> list[Variable]:
        """The variables the gradients start from (empty: no gradients)."""
        return list(self._wrt)

    @property
    def nan_origins(self) -> list[Apply | Variable]:
        """Where a NaN or an inf is born: Apply nodes none of whose inputs has one, inputs and constants holding one."""
        return list(self._origins)

    @property
    def selected(self) -> Any:
        """The selected Variable or Apply node (or a folded group's list of nodes), or ``None``."""
        return self._object(self.selected_key)

    def key_of(self, obj: Variable | Apply) -> str:
        """The stable key of a variable or an Apply node of the graph (its node in the picture, unless folded)."""
        try:
            return self._keys.key_of(obj)
        except KeyError:
            raise ValueError(f"ValuesView.key_of: {obj} is not part of this graph") from None

    # -- browser messages ----------------------------------------------------------------------------
    def _on_value(self, content: dict[str, Any]) -> None:
        """A slider moved or a number was typed: ``{type: "value", key, value}``."""
        var = self._object(str(content.get("key", "")))
        if not isinstance(var, Variable) or var not in self._inputs:
            raise ValueError(f"ValuesView: {content.get('key')!r} is not the key of an input")
        value = content.get("value")
        if isinstance(value, str):  # the number box sends what was typed: "1.5", "-inf", "nan"
            value = _parse_number(value.strip())
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"ValuesView: bad value for input {_show(var)}: expected a number, received "
                            f"{_describe_value(value)}")
        self.set(var, value)

    def _on_text_mode(self, content: dict[str, Any]) -> None:
        with self.answer():
            self.text_mode = bool(content.get("on"))

    def _on_select(self, content: dict[str, Any]) -> None:
        key = str(content.get("key") or "")
        if key and self._object(key) is None:
            return  # a click on an arrow, or on a picture that is gone
        with self.answer():
            self._select(key)

    # -- drawing ---------------------------------------------------------------------------------------
    def _lines(self, var: Variable) -> list[str]:
        lines = value_lines(self._values[var])
        if var in self._grad_values:
            grad = value_lines(self._grad_values[var])
            lines += [f"grad {grad[0]}", *grad[1:]]
        return lines

    def _draw(self) -> None:
        """The picture with the current values, its NaN marks, the controls and the captions."""
        origins = [*self._origins, *(o for n in self._origins if isinstance(n, Apply) for o in n.outputs
                                     if o in self._bad)]
        lines = {v: self._lines(v) for v in self._variables if not isinstance(v, Constant) or v in self._bad}
        # Only the origins are kept visible (their groups opened); a NaN flowing everywhere must not crowd it.
        self.model = build_model(list(self._outputs), "dataflow", classes={"nan-origin": origins}, lines=lines,
                                 caller="ValuesView", key=self._keys.keys, fold=self._folds.fold(show=self._origins))
        marked = {id(o) for o in origins}
        carriers = [*self._carriers, *(v for v in self._bad if id(v) not in marked)]
        self.model.add_class([k for obj in carriers for k in self._drawn(obj)], "nan")
        self.nan_note = self._nan_text()
        self.svg = self.show_picture("values", self.model, notes=(self.nan_note,) if self.nan_note else ())
        notes = [] if self.svg else ["Graphviz is not installed: no picture (the values and the panel still work)."]
        if self.model.note:
            notes.append(f"{self.model.note} (max_nodes={self._max_nodes}): click a group, then 'expand'.")
        self.notice = " ".join(notes)
        self.controls = [self._control(v) for v in self._inputs]
        self.caption = self.summary()
        self._show_outline()

    def _show_outline(self) -> None:
        """Set :attr:`outline`: the tree (the graph never changes: walked once), with the current values."""
        pairs = self.__dict__.get("_outline_pairs")
        if pairs is None:
            pairs = self._outline_pairs = outline_pairs(list(self._outputs), "dataflow", caller="ValuesView")
        shown = []
        for row, var in pairs:
            if row["repeat"] and var.owner is not None or var not in self._values:
                shown.append(row)  # a repeated node: its values are on its first row
            else:
                shown.append({**row, "text": f"{row['text']} = {'; '.join(self._lines(var))}"})
        self.outline = shown

    def _drawn(self, obj: Any) -> list[str]:
        """The keys of the nodes that draw ``obj`` in the picture (none when it is folded away)."""
        if self.model is None:
            return []
        try:
            key = self.model.key_of(obj)
        except KeyError:
            return []
        return [k for k in self.model.drawn_keys(key) if self.model.nodes[k].kind != "group"]

    def _nan_text(self) -> str:
        return "; ".join(self._origin_text(o) for o in self._origins[:3]) + (
            f"; and {len(self._origins) - 3} more" if len(self._origins) > 3 else "")

    def _origin_text(self, origin: Any) -> str:
        """``NaN born at log((x - 1)), from (x - 1) = -1.0``: where, and from what."""
        if isinstance(origin, Variable):
            what = _nan_words(self._values[origin])
            return f"{what} given as {'constant' if isinstance(origin, Constant) else 'input'} {describe(origin, 30)}"
        out = next(o for o in origin.outputs if o in self._bad)
        froms = [f"{describe(i, 30)} = {value_lines(self._values[i])[0]}" for i in origin.inputs[:3]]
        more = ", …" if len(origin.inputs) > 3 else ""
        return f"{_nan_words(self._values[out])} born at {describe(out)}, from {', '.join(froms)}{more}"

    def _control(self, var: Variable) -> dict[str, Any]:
        """What the browser shows for an input: a slider and a number box, or why it has none."""
        value = self._inputs[var]
        entry: dict[str, Any] = {"key": self._keys.key_of(var), "name": _show(var), "dtype": str(value.dtype)}
        if not _slidable(var):
            what = "an array" if np.ndim(value) else "not a real number"
            entry.update(editable=False, text="; ".join(value_lines(value)),
                         why=f"{what}: no slider (only real scalar inputs have one); change it from Python with "
                             f"view.set(...)")
            return entry
        low, high = self._ranges[var]
        integer = value.dtype.kind in "iu"
        if integer:  # a slider of whole numbers
            low, high = math.ceil(low), math.floor(high)
        number = value[()].item()
        entry.update(editable=True, integer=integer, min=low, max=high, step=1 if integer else (high - low) / 1000,
                     value=number if math.isfinite(number) else None,  # NaN is no JSON number: the box says it
                     entry=str(number) if integer else repr(float(number)))
        return entry

    def _widen(self, var: Variable) -> None:
        """A default range around a scalar input's value; widened (never moved) when the value leaves it."""
        if not _slidable(var) or var in self._fixed:
            return
        number = float(self._inputs[var])
        if not math.isfinite(number):
            self._ranges.setdefault(var, (-1.0, 1.0))
            return
        half = 2 * max(1.0, abs(number))
        low, high = float(math.floor(number - half)), float(math.ceil(number + half))
        if var not in self._ranges:
            self._ranges[var] = (low, high)
            return
        old_low, old_high = self._ranges[var]
        if number > old_high:  # a typed value beyond the slider: make room for it on that side
            self._ranges[var] = (old_low, high)
        elif number < old_low:
            self._ranges[var] = (low, old_high)

    def _object(self, key: str) -> Any:
        found = self._keys.resolve(key, self.model, self._folds.tree.groups) if key else None
        return found.obj if found is not None else None

    def _select(self, key: str) -> None:
        """Set the selection, its marks and the panel (inside an :meth:`answer`)."""
        found = self._keys.resolve(key, self.model, self._folds.tree.groups) if key else None
        if found is None or found.kind not in ("apply", "variable", "group"):
            self.selected_key, self.marks, self.reveal = "", {}, []
            self.panel = {"rows": [], "hint": _HINT}
            return
        key, obj = found.key, found.obj
        self.selected_key = key
        self.marks = selection_marks(self._keys, self.model, obj, key, clients=self._clients) if (
            self.model is not None) else {}
        self.reveal = [k for k in (found.drawn or self._keys.drawn(obj, self.model, key)) if k in self.model.nodes][
            :1] if self.model is not None else []
        group = self._folds.group(key)
        if found.kind == "group":
            title = group.title if group is not None else f"folded group of {len(obj)} nodes"
            actions = [{"text": f"expand {title}", "key": key, "kind": "expand"}] if (
                group is not None and key not in self._folds.opened) else []
            self.panel = {"title": title, "rows": [
                {"label": "why", "text": f"the picture draws about {self._max_nodes} nodes; expand the group, or pass "
                                         "max_nodes= to draw more (view.value(var) reads any value)"}],
                "actions": actions + self._collapse_action(key)}
            return
        self.panel = self._apply_panel(obj) if isinstance(obj, Apply) else self._variable_panel(obj)
        self.panel["actions"] = self._collapse_action(key)

    def _clients(self, var: Variable) -> list[tuple[Any, int]]:
        return [(node, i) for node in self._order for i, inp in enumerate(node.inputs) if inp is var]

    def _collapse_action(self, key: str) -> list[dict[str, str]]:
        found = self._keys.resolve(key, self.model, self._folds.tree.groups)
        obj = found.obj if found is not None else None
        node = obj if isinstance(obj, Apply) else obj.owner if isinstance(obj, Variable) else None
        outer = self._folds.to_close(key, node)
        return [{"text": f"fold back {outer.title}", "key": outer.key, "kind": "collapse"}] if outer else []

    # -- folding ---------------------------------------------------------------------------------------
    @property
    def groups(self) -> list[dict[str, Any]]:
        """The picture's groups, drawn or open: ``[{"key", "title", "count", "expanded"}]`` (see GraphView)."""
        return self._folds.groups()

    def expand(self, group: str) -> None:
        """Draw the members of the folded group ``group`` (``g<n>``) in place, with their values."""
        try:
            shown = self._folds.expand(group)
        except ValueError as err:
            raise ValueError(f"ValuesView.{err}") from None
        with self.answer():
            self._draw()
            self._select(self.selected_key)
            keys = [i.key if not isinstance(i, Apply) else self._keys.key(i) for i in shown]
            self.reveal = [k for k in keys if k in self.model.nodes]

    def collapse(self, key: str) -> None:
        """Fold back the group ``key`` came from (an open group's key, or a key of what it shows)."""
        found = self._keys.resolve(key, self.model, self._folds.tree.groups) if isinstance(key, str) else None
        obj = found.obj if found is not None else None
        node = obj if isinstance(obj, Apply) else obj.owner if isinstance(obj, Variable) else None
        try:
            group = self._folds.collapse(key, node)
        except ValueError as err:
            raise ValueError(f"ValuesView.{err}") from None
        with self.answer():
            self._draw()
            self._select(self.selected_key)
            self.reveal = [group.key]

    def _on_expand(self, content: dict[str, Any]) -> None:
        self.expand(str(content.get("key")))

    def _on_collapse(self, content: dict[str, Any]) -> None:
        self.collapse(str(content.get("key")))

    def _variable_panel(self, var: Variable) -> dict[str, Any]:
        rows: list[dict[str, Any]] = [{"label": "kind", "text": _kind(var, self._outputs)},
                                      {"label": "type", "text": str(var.type)}]
        if var.owner is not None:
            rows.append({"label": "computed by", "items": [{"text": _op_text(var.owner),
                                                            "key": self._keys.key_of(var.owner)}]})
        rows.append({"label": "value", "text": full_text(self._values[var])})
        rows.append({"label": "gradient", "text": self._grad_text(var)})
        rows.append({"label": "NaN/inf", "text": self._nan_status(var)})
        return {"title": f"{_kind(var, self._outputs)} {describe(var)}", "rows": rows}

    def _apply_panel(self, node: Apply) -> dict[str, Any]:
        def items(variables: list[Variable]) -> list[dict[str, Any]]:
            return [{"text": f"{describe(v, 30)} = {' '.join(value_lines(self._values[v]))}",
                     "key": self._keys.key_of(v)} for v in variables]

        status = "none"
        if node in self._origins:
            status = f"born here: {self._origin_text(node)}"
        elif node in self._carriers:
            status = "carried from an input"
        rows = [{"label": "op", "text": str(node.op)}, {"label": "inputs", "items": items(list(node.inputs))},
                {"label": "outputs", "items": items(list(node.outputs))}, {"label": "NaN/inf", "text": status}]
        return {"title": f"operation {_op_text(node)}", "rows": rows}

    def _grad_text(self, var: Variable) -> str:
        if var in self._grad_values:
            return full_text(self._grad_values[var])
        if not self._wrt:
            return "not asked (pass wrt=[...] to see gradients)"
        return self._no_grad.get(var, "none: not on a path from wrt to the cost")

    def _nan_status(self, var: Variable) -> str:
        if var not in self._bad:
            return "none"
        if var in self._origins:
            return f"born here: {self._origin_text(var)}"
        if var.owner is not None and var.owner in self._origins:
            return f"born here: {self._origin_text(var.owner)}"
        return f"{_nan_words(self._values[var])}, carried from upstream"

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
        return parts

    def summary(self) -> str:
        nan = [self._nan_text()] if self._origins else []
        return f"ValuesView of {self._what()}: " + ", ".join(self._counts() + nan)

    def markdown(self) -> str:
        lines = [f"**ValuesView** of {code_span(self._what(), table=False)}: {', '.join(self._counts(code=True))}", ""]
        if self._origins:  # user text (names, expressions) only inside code spans
            lines += [f"**NaN/inf:** {code_span(self._origin_text(o), table=False)}" for o in self._origins] + [""]
        lines += ["| variable | kind | value | gradient |", "|---|---|---|---|"]
        for var in self._variables[:MARKDOWN_MAX_ROWS]:
            kind = _kind(var, self._outputs)
            if var in self._bad:
                kind += " (NaN/inf born here)" if var in self._origins or var.owner in self._origins else " (NaN/inf)"
            grad = "; ".join(value_lines(self._grad_values[var])) if var in self._grad_values else ""
            value = code_span("; ".join(value_lines(self._values[var])))
            lines.append(f"| {code_span(describe(var))} | {kind} | {value} | {code_span(grad) if grad else '-'} |")
        if len(self._variables) > MARKDOWN_MAX_ROWS:
            lines.append(f"\n… and {len(self._variables) - MARKDOWN_MAX_ROWS} more variables "
                         "(`view.value(var)` reads any of them).")
        lines += ["", "Outline (the graph as text):", "", outline_markdown(self.outline, self.selected_key, self.marks)]
        return "\n".join(lines)


# -- helpers -----------------------------------------------------------------------------------------
def _read_outputs(outputs: Any) -> tuple[Variable, ...]:
    items = [outputs] if isinstance(outputs, Variable) else outputs
    try:
        items = list(items)
    except TypeError:
        items = None
    if not items or not all(isinstance(v, Variable) for v in items):
        raise TypeError("ValuesView: outputs must be a Variable or a non-empty list of Variables, received "
                        f"{_describe_value(outputs)}")
    return tuple(items)


def _variables(order: list[Apply], leaves: list[Variable]) -> list[Variable]:
    """Every variable of the graph once: the leaves, then each node's outputs, inputs first."""
    seen: dict[Variable, None] = dict.fromkeys(leaves)
    for node in order:
        seen.update(dict.fromkeys(node.outputs))
    return list(seen)


def _parse_number(text: str) -> Any:
    """The number typed in a box (an int when it is one), or ``text`` itself when it is no number."""
    try:
        return int(text) if text.lstrip("+-").isdigit() else float(text)
    except ValueError:
        return text


def _slidable(var: Variable) -> bool:
    """Real scalar inputs get a slider."""
    dtype = str(getattr(var.type, "dtype", ""))
    return getattr(var.type, "ndim", None) == 0 and dtype.startswith(("float", "int", "uint"))


def _show(var: Variable) -> str:
    return describe(var, 30)


def _kind(var: Variable, outputs: tuple[Variable, ...]) -> str:
    if isinstance(var, Constant):
        return "constant"
    if var.owner is None:
        return "input"
    return "output" if var in outputs else "intermediate"


def _op_text(node: Apply) -> str:
    scalar_op = getattr(node.op, "scalar_op", None)
    return str(scalar_op) if scalar_op is not None and type(node.op).__name__ == "Elemwise" else str(node.op)


def _nan_words(value: Any) -> str:
    nan, inf = _bad(value)
    return "NaN and inf" if nan and inf else "NaN" if nan else "inf"
