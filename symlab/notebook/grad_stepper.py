"""``GradStepper``: watch differentiation happen, one apply node of grad's walk per step, with its numbers.

``GradStepper(cost, wrt, values=None)`` (or ``symlab.view(cost, walk=wrt, values=...)``) runs
:func:`~symlab.gradient.walk.walk_of` (grad itself, told to run to the end: a gradient that is undefined or
disconnected is a step that says why, and the last step says what ``grad`` would have said). Step 0 is the
start (the cost's gradient is 1); step ``k`` is grad's ``k``-th visit. The left pane is the forward graph
(micrograd's picture: a box per value): the node visited, the edges the gradient arrived along lit
backward, the variables whose contributions add up marked Σ, the nodes already visited dimmed. The right
pane is the final gradient graph, laid out once and revealed step by step: the nodes a step built green,
the later ones hidden. The card says what the op's rule computed (``stepper.rule_source()`` shows the rule),
what each input received and its total so far. With ``values`` every gradient has its number (a
:class:`~symlab.notebook.grad_numbers.GradNumbers`), and each box of the left pane its ``grad`` line,
filled in as the walk reaches it. From the last step, ``open_rewrites()`` (the "compiled →" button) opens a
:class:`~symlab.notebook.stepper.RewriteStepper` on the raw gradient graph: the chain rule's graph becoming
the compiled one.

micrograd's neuron:

>>> import symlab.tensor as st
>>> x1, x2, w1, w2, b = st.dscalars("x1", "x2", "w1", "w2", "b")
>>> o = st.tanh(x1 * w1 + x2 * w2 + b)
>>> o.name = "o"
>>> stepper = GradStepper(o, [x1, x2, w1, w2, b], values={x1: 2.0, x2: 0.0, w1: -3.0, w2: 1.0, b: 6.8813735870195432})
>>> stepper
GradStepper: step 0/5; d o / d x1, x2, w1, w2, b; 7 gradient nodes; with values
>>> stepper.next()
>>> stepper.current.label, stepper.card["arriving"][0]["value"]
('tanh', '1.0')
>>> stepper.play()
[2, 3, 4, 5]
>>> [(c["input"], c["value"]) for c in stepper.card["contributions"]]
[('x1', '-1.5'), ('w1', '1.0')]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import anywidget
import traitlets

from symlab.graph.basic import Constant, Variable
from symlab.graph.null_type import NullType
from symlab.graph.traversal import graph_inputs
from symlab.notebook.grad_step_card import card_markdown, markdown_table, step_card, step_row
from symlab.notebook.grad_step_pictures import FALLBACK_FIT, FORWARD_MAX_NODES, GRADIENT_MAX_NODES, GradPictures
from symlab.notebook.step_moves import StepMoves
from symlab.notebook.widget import ViewWidget, code_span

__all__ = ["GradStepper"]

_CALLER = "GradStepper"


def _describe(obj: Any) -> str:
    text = " ".join(repr(obj).split())
    return f"{type(obj).__name__} {text if len(text) <= 60 else text[:59] + '…'}"


def _check_cost(cost: Any) -> Variable:
    if not isinstance(cost, Variable):
        raise TypeError(f"{_CALLER}: cost must be a scalar Variable (the value to differentiate), "
                        f"received {_describe(cost)}")
    if getattr(cost.type, "ndim", None) != 0:
        raise TypeError(f"{_CALLER}: cost must be a scalar Variable (ndim 0), received {cost} of type {cost.type}; "
                        "reduce it first, e.g. cost.sum() or cost.mean()")
    return cost


def _check_wrt(wrt: Any) -> list[Variable]:
    items = [wrt] if isinstance(wrt, Variable) else wrt
    if not isinstance(items, Sequence) or isinstance(items, str) or not items:
        raise TypeError(f"{_CALLER}: wrt must be a Variable or a non-empty list of Variables, received {_describe(wrt)}")
    for i, item in enumerate(items):
        if not isinstance(item, Variable):
            raise TypeError(f"{_CALLER}: wrt[{i}] must be a Variable, received {_describe(item)}")
    return list(items)


def _check_values(values: Any, cost: Variable) -> Any:
    if values is None:
        return None
    if not isinstance(values, Mapping):
        raise TypeError(f"{_CALLER}: values must be a dict {{input or its name: value}}, received {_describe(values)}")
    inputs = [v for v in graph_inputs([cost]) if not isinstance(v, Constant)]
    names = {v.name for v in inputs if v.name}
    for key in values:
        if isinstance(key, Variable) and key not in inputs:
            raise ValueError(f"{_CALLER}: values names {key} ({key.type}), which is not an input of the cost's graph; "
                             f"expected one of: {', '.join(str(v) for v in inputs) or 'none'}")
        if isinstance(key, str) and key not in names:
            raise ValueError(f"{_CALLER}: values names {key!r}, which is not the name of an input of the cost's graph; "
                             f"expected one of: {', '.join(sorted(names)) or 'none'}")
        if not isinstance(key, Variable | str):
            raise TypeError(f"{_CALLER}: values keys must be inputs (Variables) or their names, "
                            f"received {_describe(key)}")
    return values


class GradStepper(StepMoves, ViewWidget):
    """Step through grad's walk; see the module documentation.

    Traits the browser reads: ``step``, ``total``, ``forward_svg`` / ``gradient_svg`` (sent once), ``marks``
    (``{"forward" | "gradient": {key: [class, ...]}}`` of the step), ``labels`` (the forward boxes' ``grad``
    lines at the step, with values), ``reveal_forward`` / ``reveal_gradient`` (keys to bring into view),
    ``card``, ``steps`` (the table's rows), ``notice`` and ``compiled`` (the rewrite stepper, once opened).
    """

    step = traitlets.Int(0).tag(sync=True)
    total = traitlets.Int(0).tag(sync=True)
    forward_svg = traitlets.Unicode("").tag(sync=True)
    gradient_svg = traitlets.Unicode("").tag(sync=True)
    forward_title = traitlets.Unicode("").tag(sync=True)
    gradient_title = traitlets.Unicode("").tag(sync=True)
    marks = traitlets.Dict().tag(sync=True)
    labels = traitlets.Dict().tag(sync=True)
    reveal_forward = traitlets.List().tag(sync=True)
    reveal_gradient = traitlets.List().tag(sync=True)
    card = traitlets.Dict().tag(sync=True)
    steps = traitlets.List().tag(sync=True)
    notice = traitlets.Unicode("").tag(sync=True)
    #: Whether the values are shown (a GradNumbers was made).
    with_values = traitlets.Bool(False).tag(sync=True)
    #: The RewriteStepper of the compiled gradient, shown under the widget once opened (the "compiled →" button).
    compiled = anywidget.WidgetTrait().tag(sync=True)

    def __init__(self, cost: Any, wrt: Any, values: Mapping[Any, Any] | None = None, *,
                 max_nodes: int = FORWARD_MAX_NODES, gradient_max_nodes: int = GRADIENT_MAX_NODES,
                 **options: Any) -> None:
        from symlab.gradient.walk import walk_of

        cost = _check_cost(cost)
        wrt_list = _check_wrt(wrt)
        values = _check_values(values, cost)
        for name, limit in (("max_nodes", max_nodes), ("gradient_max_nodes", gradient_max_nodes)):
            if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
                raise ValueError(f"{_CALLER}: {name} must be a positive int, received {limit!r}")
        self.walk = walk_of(cost, wrt_list if not isinstance(wrt, Variable) else wrt, **options)
        self.numbers: Any = None
        if values is not None:
            from symlab.notebook.grad_numbers import GradNumbers

            self.numbers = GradNumbers(self.walk, values)
        self._pictures_of = GradPictures(self.walk, self.numbers, max_nodes, gradient_max_nodes)
        self._rows = [step_row(self.walk, k, self.numbers) for k in range(len(self.walk.steps) + 1)]
        self._cards: dict[int, dict[str, Any]] = {}
        self._rewrites: Any = None
        self._ready = False
        pictures = self._pictures_of
        notice = "" if pictures.forward_svg else "Graphviz is not installed: no pictures (the cards still work)."
        if pictures.too_big:
            notice = (f"The gradient graph has {pictures.too_big} nodes, more than gradient_max_nodes="
                      f"{gradient_max_nodes}: it is not drawn (the cards and the forward graph are).")
        super().__init__(view="gradwalk", total=len(self.walk.steps), steps=self._rows,
                         forward_svg=pictures.forward_svg, gradient_svg=pictures.gradient_svg, notice=notice,
                         forward_title="the forward graph (the walk goes backward through it)",
                         gradient_title="the gradient graph, as the walk builds it",
                         with_values=self.numbers is not None)
        self._ready = True
        with self.answer():
            self._draw()

    # -- the controls' Python twins (and next(), prev(): StepMoves) ------------------------------------------
    @property
    def current(self) -> Any:
        """The :class:`~symlab.gradient.walk.GradStep` shown (None at step 0, the start)."""
        return self.walk.steps[self.step - 1] if self.step else None

    def play(self) -> list[int]:
        """Move one step at a time to the last, each answered as a click would be; the steps visited."""
        visited = []
        while self.step < self.total:
            self.next()
            visited.append(self.step)
        return visited

    def rule_source(self) -> str:
        """The source of the current step's gradient rule (its op's ``L_op``/``grad``, or the scalar rule); "" at 0."""
        step = self.current
        if step is None:
            return ""
        from symlab.notebook.grad_rule_source import gradient_rule_source

        return gradient_rule_source(step.node)

    def open_rewrites(self) -> Any:
        """A :class:`~symlab.notebook.stepper.RewriteStepper` on the compiled gradient (``symlab.function(inputs,
        walk.results)``'s rewrite): the raw chain-rule graph at its step 0, the compiled one at its last step.

        Shown under the widget (its ``compiled`` trait) and returned. Raises a ValueError when no gradient can be
        compiled (every one undefined).
        """
        if self._rewrites is None:
            from symlab.compile.function import function
            from symlab.notebook.stepper import RewriteStepper

            outputs = self.gradients()
            if not outputs:
                raise ValueError(f"{_CALLER}.open_rewrites: no gradient to compile: "
                                 + "; ".join(p for p in self.walk.problems if p))
            from symlab.compile.shared import SharedVariable

            found = [v for v in graph_inputs(outputs) if not isinstance(v, Constant | SharedVariable)]
            inputs = [w for w in self.walk.wrt if w in found] + [v for v in found if v not in self.walk.wrt]
            compiled = function(inputs, outputs, on_unused_input="ignore")
            self._rewrites = RewriteStepper(compiled)
            with self.answer():
                self.compiled = self._rewrites
        return self._rewrites

    def gradients(self) -> list[Variable]:
        """grad's results that are gradients (not undefined), in the order of ``wrt``."""
        results = self.walk.results if isinstance(self.walk.results, list) else [self.walk.results]
        return [r for r in results if isinstance(r, Variable) and not isinstance(r.type, NullType)]

    @property
    def forward_model(self) -> Any:
        """The forward pane's :class:`~symlab.printing.drawing.GraphModel` (``model.obj(key)``: what a key draws)."""
        return self._pictures_of.forward

    @property
    def gradient_model(self) -> Any:
        """The gradient pane's GraphModel (None when the walk built nothing to draw, or too much)."""
        return self._pictures_of.gradient

    def marked_svgs(self, k: int | None = None) -> tuple[str, str]:
        """The forward and gradient SVGs with step ``k``'s marks (default: the current step's) written in: the
        classes the browser puts on each node and edge, and the ``grad`` lines of the forward boxes."""
        k = self.step if k is None else k
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= self.total:
            raise ValueError(f"{_CALLER}.marked_svgs: k must be a step from 0 to {self.total}, received {k!r}")
        return self._pictures_of.marked_svgs(k)

    @traitlets.observe("step")
    def _redraw(self, change: Any) -> None:
        if not self._ready:
            return
        with self.answer():
            self._draw()

    # -- drawing -----------------------------------------------------------------------------------------------
    def card_of(self, k: int) -> dict[str, Any]:
        """The card of step ``k`` (cached; the rule's source is added on demand, see :meth:`rule_source`)."""
        card = self._cards.get(k)
        if card is None:
            card = self._cards[k] = step_card(self.walk, k, self.numbers)
        return card

    def _reveal(self, k: int) -> tuple[list[str], list[str]]:
        pictures = self._pictures_of
        if k == 0:
            forward = [pictures.forward_key(v) for v in self.walk.seeds]
            return [key for key in forward if key], []
        step = self.walk.steps[k - 1]
        forward_key = pictures.forward_key(step.node)
        gradient = [pictures.gradient_key(n) for n in step.new_nodes]
        return ([forward_key] if forward_key else []), [key for key in gradient if key]

    def _draw(self) -> None:
        k = self.step
        pictures = self._pictures_of
        self.marks = pictures.marks(k)
        self.labels = pictures.labels(k)
        self.reveal_forward, self.reveal_gradient = self._reveal(k)
        self.card = dict(self.card_of(k))

    # -- browser messages --------------------------------------------------------------------------------------
    def _on_source(self, content: dict[str, Any]) -> None:
        with self.answer():
            self.card = {**self.card, "source": self.rule_source()}

    def _on_compiled(self, content: dict[str, Any]) -> None:
        self.open_rewrites()

    def close(self) -> None:
        """Close the widget, and the rewrite stepper it opened."""
        rewrites = self.__dict__.get("_rewrites")
        if rewrites is not None:
            rewrites.close()
        super().close()

    # -- export ------------------------------------------------------------------------------------------------
    def export_html(self, path: Any) -> Any:
        """Write one self-contained page that plays every step without a kernel or a network; its path.

        The two pictures are stored once, each step as its marks, ``grad`` lines and card (with the rule's
        source); see :mod:`symlab.notebook.grad_stepper_export`.
        """
        from symlab.notebook.grad_stepper_export import export_page

        return export_page(self, path)

    # -- displays ----------------------------------------------------------------------------------------------
    def summary(self) -> str:
        walk = self.walk
        wrt = ", ".join(str(w) for w in walk.wrt)
        text = (f"{_CALLER}: step {self.step}/{self.total}; d {walk.cost} / d {wrt}; "
                f"{len(walk.gradient_nodes)} gradient nodes")
        if self.numbers is not None:
            text += "; with values"
        problems = sum(1 for p in walk.problems if p)
        if problems:
            text += f"; {problems} without a gradient"
        return text

    def markdown(self) -> str:
        walk = self.walk
        wrt = ", ".join(code_span(str(w), table=False) for w in walk.wrt)
        lines = [f"**{_CALLER}**: the gradient of {code_span(str(walk.cost), table=False)} with respect to {wrt}, "
                 f"step {self.step} of {self.total}", ""]
        lines += markdown_table(self._rows, self.step)
        lines += [""] + card_markdown(self.card_of(self.step))
        return "\n".join(lines)

    def _fallback_pictures(self) -> list[tuple[str, Any, dict[str, Any]]]:
        """The two panes at the current step, for where the widget cannot run (:meth:`pictures_markdown` makes them
        PNG images): the forward graph (whole when small, else the part around the node visited) with the ``grad``
        lines so far, and the gradient graph as built so far (or its part around the step's new nodes); each at most
        ``FALLBACK_FIT`` inches."""
        return [(slot, model, {"fit": FALLBACK_FIT}) for slot, model in self._pictures_of.fallback_models(self.step)]
