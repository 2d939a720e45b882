"""``ValuesView``: a graph's values, and its gradients, written on its picture; scalar inputs on sliders.

micrograd's best teaching idea, made interactive: every variable is a box holding its value (and,
with ``wrt``, the gradient of the cost with respect to it), every operation a small node between
boxes (the ``dataflow`` style of :mod:`symlab.printing`). A scalar is written with about 4
significant digits, a small array in full, a larger one as its shape, dtype, min/mean/max and its
NaN and inf counts (:mod:`~symlab.notebook.value_text`). Where a NaN or an infinity is born (a node
whose output has one while none of its inputs has) is painted red, and the nodes it flows through
orange. Each scalar input gets a number box and a slider in the browser
(:mod:`~symlab.notebook.value_sliders`); moving one re-evaluates the graph and answers once.

The values are those of ``Variable.eval``, the gradients those of :func:`symlab.grad`
(:mod:`~symlab.notebook.value_evaluation`); the arguments are read and checked by
:mod:`~symlab.notebook.value_arguments`. The view never changes the graph.

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

Inner graphs open in place (:mod:`~symlab.notebook.value_inner`): ``view.expand(node_or_key)`` runs a fused
``Composite`` or an ``OpFromGraph`` again on its input values and writes its inner values (and gradients)
inside its box, ``view.collapse(key)`` closes it. A scan node opens to its body at one iteration, with a slider
over the iterations and a plot of its states (:mod:`~symlab.notebook.value_loops`: ``view.iteration(node, t)``,
``view.at_iteration(node, t)``, ``view.loop_plot(node)``). The graph runs lazily, as compiled: an ``ifelse`` computes
only the branch it takes, is drawn open with the other branch greyed, and that branch's boxes say
``not computed``:

>>> from symlab.ifelse import ifelse
>>> c, v = st.dscalar("c"), st.dvector("v")
>>> chosen = ifelse(st.gt(c, 0.0), st.exp(v).sum(), st.log(v).sum())
>>> view = ValuesView(chosen, {c: 1.0, v: [1.0, 2.0]})
>>> sorted(view.section_states.values()), view.text(chosen.owner.inputs[2])
(['skipped', 'taken'], ['not computed'])

NaN and inf are traced to where they are born (inside an inner graph too, :attr:`nan_note`):

>>> x = st.dscalar("x")
>>> ValuesView(st.log(x - 1), {x: 0.0}).nan_note
'NaN born at log((x - 1)), from (x - 1) = -1.0'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, overload

import numpy as np
import traitlets

from symlab.graph.basic import Apply, Constant, Variable
from symlab.notebook.folds import VIEW_MAX_NODES, Folds
from symlab.notebook.inner_values import SectionCache, branch_sections
from symlab.notebook.keys import KeyIndex, Resolved, selection_marks
from symlab.notebook.shared_use import state_legend
from symlab.notebook.value_arguments import ValuesGraph, filter_value, short_name
from symlab.notebook.value_evaluation import NanSpread, evaluate_all, gradient_graphs
from symlab.notebook.value_inner import NOT_COMPUTED, OpenInner, branch_lines
from symlab.notebook.value_loops import ITERATION_SUFFIX, LoopValues
from symlab.notebook.value_panels import MARKDOWN_MAX_ROWS, ValuesPanels
from symlab.notebook.value_random import RandomValues
from symlab.notebook.value_sliders import Sliders, parse_number
from symlab.notebook.value_text import FULL_CHARS, describe_value, full_text, number_text, value_lines
from symlab.notebook.widget import ViewWidget
from symlab.printing.model import GraphModel, build_model
from symlab.printing.outline import outline_pairs, outline_text
from symlab.printing.subject import subject_of

__all__ = ["FULL_CHARS", "MARKDOWN_MAX_ROWS", "ValuesView", "full_text", "number_text", "value_lines"]

#: Drawn nodes (boxes and op nodes) before the picture is folded into groups: the graph view's budget.
VALUES_MAX_NODES = VIEW_MAX_NODES
LEGEND = ("box: a variable and its value (green: input, grey: constant, white: intermediate, blue: output) · "
          "ellipse: an operation · red: where a NaN or inf is born · orange: where it flows")
_HINT = "Click a box to see its whole value and gradient; move a slider to re-evaluate the graph."


class ValuesView(LoopValues, RandomValues, ValuesPanels, ViewWidget):
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
    #: The histogram asked for last (:meth:`histogram`): ``{"key", "title", "svg", "text"}`` (empty: none).
    histogram_panel = traitlets.Dict().tag(sync=True)

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
        graph = self._graph = ValuesGraph(outputs, "ValuesView")
        self._outputs, self._order, self._variables = graph.outputs, graph.order, graph.variables
        self._keys = KeyIndex(  # the key of every object: the one place keys resolve
            subject_of(list(self._outputs)), self._order, graph.all_leaves)
        self._max_nodes = max_nodes
        self._folds = Folds(self._order, self._outputs, max_nodes, lambda node: 1 + len(node.outputs))
        self._inputs = graph.read_inputs(inputs)
        self._wrt = graph.read_wrt(wrt)
        self._grads, self._no_grad = gradient_graphs(graph, self._wrt)
        self._sliders = Sliders(graph, ranges or {})
        self._sections = SectionCache()
        self._values, self._grad_values, self._branches = evaluate_all(
            graph, self._grads, self._inputs, "ValuesView", self._sections)
        for var, value in self._inputs.items():
            self._sliders.widen(var, value)
        self._nans = NanSpread.find(graph, self._values)
        self._inner = OpenInner(self._keys, self._sections)  # branch nodes open: the branch not taken greyed
        for node in self._order:
            if branch_sections(node, self._sections):
                self._inner.open(self._keys.key_of(node))
        self._inner.evaluate(self._values, self._grad_values, self._branches)
        self.model: GraphModel | None = None
        super().__init__(view="values")
        with self.answer():
            self._draw()
            self._select(None)

    # -- the Python twins of the controls ----------------------------------------------------------------
    def set(self, input: Variable | str, value: Any) -> None:
        """Give ``input`` (the variable or its name) a new value and re-evaluate: what moving its slider does.

        A bad value (a string, a wrong shape, a value the evaluation fails on) raises an error naming
        the input, what it expects and what it received, and leaves the view as it was.
        """
        graph = self._graph
        var = graph.input(input, "ValuesView.set")
        inputs = graph.in_order({**self._inputs, var: filter_value(var, value, "ValuesView.set")})
        values, grads, branches = evaluate_all(graph, self._grads, inputs, "ValuesView.set", self._sections)
        self._inputs, self._values, self._grad_values, self._branches = inputs, values, grads, branches
        self._sliders.widen(var, inputs[var])
        self._nans = NanSpread.find(graph, values)
        self._inner.evaluate(values, grads, branches)
        with self.answer():
            self._draw()  # its notice replaces any error the browser was shown
            self._select(self._resolve(self.selected_key))

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
        elif isinstance(target, str) and "/" in target:
            key = self._inner_key(target, "ValuesView.select")  # inside an open node
        else:
            key = self._keys.key_of(self._graph.variable(target, "ValuesView.select"))
        with self.answer():
            self._select(self._resolve(key))

    def value(self, var: Variable | str) -> Any:
        """The value of ``var`` (a variable of the graph, its name, or the key of an inner variable of an open node,
        ``"a5/v2"``): what is written on its box; ``None`` where it was not computed (a branch not taken)."""
        if isinstance(var, str) and "/" in var:
            return self._inner.value_of(self._inner_key(var, "ValuesView.value"))[1]
        return self._values.get(self._graph.variable(var, "ValuesView.value"))

    def computed(self, var: Variable | str) -> bool:
        """Whether ``var`` (as :meth:`value` takes it) was computed: False in a branch an ``ifelse`` did not take."""
        if isinstance(var, str) and "/" in var:
            return self._inner.value_of(self._inner_key(var, "ValuesView.computed"))[0]
        return self._graph.variable(var, "ValuesView.computed") in self._values

    def inner_values(self, node: Apply | str) -> dict[Variable, Any]:
        """``{inner variable: value}`` of the open node ``node`` (an Apply node or its key), as drawn inside it."""
        key = node if isinstance(node, str) else self._inner.key_of(node)
        if key is None or key not in self._inner.keys:
            raise ValueError(f"ValuesView.inner_values: {node!s:.80} is not an open node; open it with "
                             "view.expand(node) (view.open_inner lists the open ones)")
        return self._inner.inner_values(key)

    @property
    def open_inner(self) -> list[str]:
        """The keys of the nodes drawn open (their inner graph inside them), outermost first."""
        return list(self._inner.keys)

    @property
    def section_states(self) -> dict[tuple[str, str], str]:
        """``{(node key, branch label): "taken" | "skipped"}`` of every ``ifelse`` the evaluation ran."""
        return self._inner.section_states()

    def _inner_key(self, key: str, caller: str) -> str:
        if self._inner.resolve(key) is None:
            raise ValueError(f"{caller}: {key!r} is not the key of an inner variable (an open node's key, '/', "
                             "then the key in its inner graph: 'a5/v2')")
        return key

    def gradient(self, var: Variable | str) -> Any:
        """The gradient of the cost with respect to ``var``, or ``None`` where none is drawn.

        ``None`` without ``wrt``, for a variable on no path from ``wrt`` to the cost, and for integer
        and boolean variables.
        """
        v = self._graph.variable(var, "ValuesView.gradient")
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
        if isinstance(var, str) and "/" in var:
            return list(self._inner.lines().get(self._inner_key(var, "ValuesView.text"), []))
        v = self._graph.variable(var, "ValuesView.text")
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
        return list(self._nans.origins)

    @property
    def selected(self) -> Any:
        """The selected Variable or Apply node (or a folded group's list of nodes), or ``None``."""
        found = self._resolve(self.selected_key)
        return found.obj if found is not None else None

    def key_of(self, obj: Variable | Apply) -> str:
        """The stable key of a variable or an Apply node of the graph (its node in the picture, unless folded)."""
        try:
            return self._keys.key_of(obj)
        except KeyError:
            raise ValueError(f"ValuesView.key_of: {obj} is not part of this graph") from None

    # -- folding ---------------------------------------------------------------------------------------
    @property
    def groups(self) -> list[dict[str, Any]]:
        """The picture's groups, drawn or open: ``[{"key", "title", "count", "expanded"}]`` (see GraphView)."""
        return self._folds.groups()

    def expand(self, target: Apply | str) -> None:
        """Open a node with an inner graph (the Apply node or its key, ``a5``, or ``a5/a2`` inside an open one),
        drawn inside its box with its inner values; or draw the members of the folded group ``target`` (``g<n>``).

        A ``Composite`` or an ``OpFromGraph`` is run again on its input values (its inner variables get their
        values and gradients); an ``ifelse`` (open from the start) shows the branch it took, the other greyed.
        """
        key = self._openable_key(target)
        if key is not None:
            try:
                self._inner.open(key)
            except ValueError as err:
                raise ValueError(f"ValuesView.{err}") from None
            self._inner.evaluate(self._values, self._grad_values, self._branches)
            with self.answer():
                self._draw()
                self._select(self._resolve(self.selected_key))
                self.reveal = [key] if self.model is not None and key in self.model.nodes else []
            return
        if not isinstance(target, str):
            raise TypeError(f"ValuesView.expand: expected a node with an inner graph, its key or a group's key, "
                            f"received {type(target).__name__}")
        try:
            shown = self._folds.expand(target)
        except ValueError as err:
            raise ValueError(f"ValuesView.{err}") from None
        with self.answer():
            self._draw()
            self._select(self._resolve(self.selected_key))
            keys = [i.key if not isinstance(i, Apply) else self._keys.key(i) for i in shown]
            self.reveal = [k for k in keys if k in self.model.nodes]

    def collapse(self, key: str) -> None:
        """Close the open node ``key`` (or the innermost open node holding the key ``key``, ``a5/v2``), or fold
        back the group ``key`` came from (an open group's key, or a key of what it shows)."""
        if isinstance(key, Apply):
            key = self._inner.key_of(key) or ""
        closed = self._inner.close(key) if isinstance(key, str) else None
        if closed is not None:
            with self.answer():
                self._draw()
                self._select(self._resolve(self.selected_key))
                self.reveal = [closed] if self.model is not None and closed in self.model.nodes else []
            return
        found = self._resolve(key) if isinstance(key, str) else None
        try:
            group = self._folds.collapse(key, _node_of(found))
        except ValueError as err:
            raise ValueError(f"ValuesView.{err}") from None
        with self.answer():
            self._draw()
            self._select(self._resolve(self.selected_key))
            self.reveal = [group.key]

    def _openable_key(self, target: Any) -> str | None:
        """The key of the node with an inner graph ``target`` names, or ``None`` (a group's key)."""
        if isinstance(target, Apply):
            key = self._inner.key_of(target)
            if key is None:
                raise ValueError(f"ValuesView.expand: {target!s:.80} is not a node of this graph (nor of an open one)")
        elif isinstance(target, str) and ("/" in target or isinstance(self._keys.obj(target), Apply)):
            key = target
        else:
            return None
        node = self._inner.node(key)
        if node is None or not self._sections(node):
            what = f"{node.op}" if node is not None else f"no node of this graph has the key {key!r}"
            raise ValueError(f"ValuesView.expand: {what} has no inner graph to open (expected a Composite, an "
                             "OpFromGraph or an ifelse, or a group's key g<n>)")
        return key

    # -- browser messages ----------------------------------------------------------------------------
    def _on_value(self, content: dict[str, Any]) -> None:
        """A slider moved or a number was typed: ``{type: "value", key, value}`` (a loop's iteration: ``key#t``)."""
        if str(content.get("key", "")).endswith(ITERATION_SUFFIX):
            self._on_iteration_value(str(content["key"]), content.get("value"))
            return
        found = self._resolve(str(content.get("key", "")))
        var = found.obj if found is not None else None
        if not isinstance(var, Variable) or var not in self._inputs:
            raise ValueError(f"ValuesView: {content.get('key')!r} is not the key of an input")
        value = content.get("value")
        if isinstance(value, str):  # the number box sends what was typed: "1.5", "-inf", "nan"
            value = parse_number(value.strip())
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"ValuesView: bad value for input {short_name(var)}: expected a number, received "
                            f"{describe_value(value)}")
        self.set(var, value)

    def _on_text_mode(self, content: dict[str, Any]) -> None:
        with self.answer():
            self.text_mode = bool(content.get("on"))

    def _on_select(self, content: dict[str, Any]) -> None:
        """A click: the key is resolved once, and that resolution is what is selected."""
        key = str(content.get("key") or "")
        found = self._resolve(key)
        if key and found is None:
            return  # a click on an arrow, or on a picture that is gone
        with self.answer():
            self._select(found)

    def _on_expand(self, content: dict[str, Any]) -> None:
        self.expand(str(content.get("key")))

    def _on_collapse(self, content: dict[str, Any]) -> None:
        self.collapse(str(content.get("key")))

    # -- selecting ---------------------------------------------------------------------------------------
    def _resolve(self, key: str) -> Resolved | None:
        """What ``key`` is in the graph and the current picture (:meth:`KeyIndex.resolve`), or ``None``."""
        if key and "/" in key:  # an inner node or variable of an open node
            found = self._inner.resolve(key)
            if found is None:
                return None
            drawn = [key] if self.model is not None and key in self.model.nodes else []
            return Resolved(key, found[1], "apply" if isinstance(found[1], Apply) else "variable", drawn)
        return self._keys.resolve(key, self.model, self._folds.tree.groups) if key else None

    def _select(self, found: Resolved | None) -> None:
        """Select what a key resolved to (``None``: nothing): its marks and the panel (inside an :meth:`answer`)."""
        if found is None or found.kind not in ("apply", "variable", "group"):
            self.selected_key, self.marks, self.reveal = "", {}, []
            self.panel = {"rows": [], "hint": _HINT}
            return
        key, obj = found.key, found.obj
        self.selected_key = key
        if "/" in key:  # inside an open node: the panel of an inner object
            self.marks = {key: ["selected"]} if found.drawn else {}
            self.reveal = list(found.drawn)
            self.panel = self._inner_panel(key, obj)
            return
        self.marks = selection_marks(self._keys, self.model, obj, key, clients=self._clients) if (
            self.model is not None) else {}
        self.reveal = [k for k in found.drawn if k in self.model.nodes][:1] if self.model is not None else []
        if found.kind == "group":
            group = self._folds.group(key)
            title = group.title if group is not None else f"folded group of {len(obj)} nodes"
            actions = [{"text": f"expand {title}", "key": key, "kind": "expand"}] if (
                group is not None and key not in self._folds.opened) else []
            self.panel = {"title": title, "rows": [
                {"label": "why", "text": f"the picture draws about {self._max_nodes} nodes; expand the group, or pass "
                                         "max_nodes= to draw more (view.value(var) reads any value)"}],
                "actions": actions + self._collapse_action(found)}
            return
        self.panel = self._apply_panel(obj) if isinstance(obj, Apply) else self._variable_panel(obj)
        if isinstance(obj, Variable):
            self.panel["rows"] += self._random_rows(obj)
        self.panel["actions"] = self._open_actions(key, obj) + self._random_actions(key, obj) + self._collapse_action(found)

    def _clients(self, var: Variable) -> list[tuple[Any, int]]:
        return [(node, i) for node in self._order for i, inp in enumerate(node.inputs) if inp is var]

    def _collapse_action(self, found: Resolved) -> list[dict[str, str]]:
        outer = self._folds.to_close(found.key, _node_of(found))
        return [{"text": f"fold back {outer.title}", "key": outer.key, "kind": "collapse"}] if outer else []

    # -- drawing ---------------------------------------------------------------------------------------
    def _lines(self, var: Variable) -> list[str]:
        if var not in self._values:
            return [NOT_COMPUTED]
        lines = value_lines(self._values[var])
        if var in self._grad_values:
            grad = value_lines(self._grad_values[var])
            lines += [f"grad {grad[0]}", *grad[1:]]
        return lines

    def _draw(self) -> None:
        """The picture with the current values, its NaN marks, the controls and the captions."""
        nans = self._nans
        origins = [*nans.origins, *(o for n in nans.origins if isinstance(n, Apply) for o in n.outputs
                                    if o in nans.bad)]
        lines: dict[Any, list[str]] = {v: self._lines(v) for v in self._variables
                                       if not isinstance(v, Constant) or v in nans.bad}
        lines.update((node, branch_lines(branch)) for node, branch in self._branches.items())
        lines.update(self._inner.lines())
        # Only the origins are kept visible (their groups opened); a NaN flowing everywhere must not crowd it.
        self.model = build_model(list(self._outputs), "dataflow", classes={"nan-origin": origins}, lines=lines,
                                 caller="ValuesView", key=self._keys.keys, fold=self._folds.fold(show=nans.origins),
                                 open_inner=list(self._inner.keys), section_states=self._inner.section_states())
        marked = {id(o) for o in origins}
        carriers = [*nans.carriers, *(v for v in nans.bad if id(v) not in marked)]
        self.model.add_class([k for obj in carriers for k in self._drawn(obj)], "nan")
        inside = [k for node in nans.origins if isinstance(node, Apply) and self._inner.key_of(node) in self._inner.keys
                  for k in self._inner.nan_origins(node)]
        self.model.add_class([k for k in inside if k in self.model.nodes], "nan-origin")
        self.legend = LEGEND + state_legend(self.model)
        self.nan_note = self._nan_note()
        self.svg = self.show_picture("values", self.model, notes=(self.nan_note,) if self.nan_note else ())
        notes = [] if self.svg else ["Graphviz is not installed: no picture (the values and the panel still work)."]
        if self.model.note:
            notes.append(f"{self.model.note} (max_nodes={self._max_nodes}): click a group, then 'expand'.")
        self.notice = " ".join(notes)
        self.controls = [self._sliders.control(v, value, self._keys.key_of(v)) for v, value in self._inputs.items()]
        self.controls = self.controls + self._loop_controls()
        self.caption = self.summary()
        self._show_outline()

    def _show_outline(self) -> None:
        """Set :attr:`outline`: the tree (the graph never changes: walked once), with the current values."""
        pairs = self.__dict__.get("_outline_pairs")
        if pairs is None:
            pairs = self._outline_pairs = outline_pairs(list(self._outputs), "dataflow", caller="ValuesView")
        shown = []
        for row, var in pairs:
            if row["repeat"] and var.owner is not None or var not in self._graph.known:
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

def _node_of(found: Resolved | None) -> Apply | None:
    """The Apply node a resolved key draws (a variable's owner), or ``None`` (a group, an op, nothing)."""
    obj = found.obj if found is not None else None
    return obj if isinstance(obj, Apply) else obj.owner if isinstance(obj, Variable) else None
