"""The two pictures of a grad stepper, laid out once; each step is only marks (classes by key) on them.

The *forward* pane is the cost's graph in the ``dataflow`` style (a box per variable, micrograd's
picture); with values each box carries its value and a ``grad`` line the stepper rewrites step by step.
The *gradient* pane is the final gradient graph (what ``grad`` returned) in the ``compact`` style; a node
is shown from the step that built it on (``sl-gw-later`` hides it before, ``sl-gw-new`` marks it green at
its step). :meth:`GradPictures.marks` says which classes each drawn node and edge carries at a step, and
:func:`mark_svg` writes them into an SVG (what the browser does with ``classList``, for tests and pages). Ops
are labelled in both panes as the dataflow style labels them (``mul``, not ``Elemwise{mul,no_inplace}``).
:meth:`GradPictures.fallback_models` are the small pictures of a step for the Markdown fallback (PNG).

>>> import symlab.tensor as st
>>> from symlab.gradient.walk import walk_of
>>> a, b = st.dscalars("a", "b")
>>> walk = walk_of(st.log(a * b + st.exp(a)), [a, b])
>>> pictures = GradPictures(walk)
>>> marks = pictures.marks(4)
>>> pictures.forward_key(walk.steps[3].node) in [k for k, c in marks["forward"].items() if "sl-gw-current" in c]
True
>>> [k for k, c in marks["forward"].items() if "sl-gw-sum" in c] == [pictures.forward.key_of(a)]
True
>>> sorted({c for cs in pictures.marks(0)["gradient"].values() for c in cs})
['sl-gw-context', 'sl-gw-later']
"""

from __future__ import annotations

import re
from typing import Any

from symlab.graph.basic import Apply, Constant, Variable
from symlab.graph.null_type import NullType
from symlab.graph.traversal import ancestors

__all__ = ["FALLBACK_FIT", "FALLBACK_NODES", "FORWARD_MAX_NODES", "GRADIENT_MAX_NODES", "GradPictures", "mark_svg"]

#: Drawn nodes of the forward pane before it is folded (a step's marks go on the group of a folded node), and of
#: the gradient pane, never folded (its nodes appear one step at a time): a larger one is not drawn (the cards are).
FORWARD_MAX_NODES = 600
GRADIENT_MAX_NODES = 3000
#: The Markdown fallback's pictures (PNG): a pane of more Apply nodes than this is drawn as the part around the
#: step (one edge from its node, FALLBACK_RADIUS from the nodes it built), each picture at most FALLBACK_FIT inches.
FALLBACK_NODES = 16
FALLBACK_RADIUS = 2
FALLBACK_FIT = "11,8"
#: The line of a variable's box (forward pane, with values) that the stepper rewrites with its gradient so far.
NO_GRADIENT_YET = "grad ·"


def _defined(var: Any) -> bool:
    return isinstance(var, Variable) and not isinstance(var.type, NullType)


class GradPictures:
    """The forward and gradient pictures of ``walk`` (with ``numbers``' values on the forward one), laid out once.

    ``forward`` / ``gradient`` are the :class:`~symlab.printing.drawing.GraphModel` of each pane (``gradient``
    None when the walk built nothing to draw); ``forward_svg`` / ``gradient_svg`` their unmarked SVG (``""``
    without Graphviz). Building them reads the graphs and never changes them.
    """

    def __init__(self, walk: Any, numbers: Any = None, forward_max: int = FORWARD_MAX_NODES,
                 gradient_max: int = GRADIENT_MAX_NODES, render: bool = True) -> None:
        from symlab.printing.diagram import to_dot
        from symlab.printing.model import build_model

        self.walk = walk
        self.numbers = numbers
        self.too_big = 0  # the gradient pane's node count when it is too big to draw
        self._grad_lines = self._gradient_texts() if numbers is not None else {}
        lines = self._final_lines = self._value_lines() if numbers is not None else None
        self.forward = build_model([walk.cost], "dataflow", max_nodes=forward_max, lines=lines, caller="GradStepper")
        self.gradient_outputs = self._gradient_outputs()
        self.gradient = self._gradient_model(gradient_max)
        self.forward_dot = to_dot(self.forward).source
        self.gradient_dot = to_dot(self.gradient).source if self.gradient is not None else ""
        self.forward_svg = self.gradient_svg = ""
        if render:
            from symlab.notebook.step_pictures import render_many

            sources = [self.forward_dot] + ([self.gradient_dot] if self.gradient_dot else [])
            svgs = render_many(sources)
            self.forward_svg = svgs[0]
            self.gradient_svg = svgs[1] if len(svgs) > 1 else ""
        self._built = self._built_steps()
        self._edge_steps = self._edge_built_steps()

    # -- keys ------------------------------------------------------------------------------------------------
    def forward_key(self, obj: Any) -> str | None:
        """The key ``obj`` (an apply node or a variable of the cost's graph) is drawn under in the forward pane."""
        keys = self.__dict__.setdefault("_forward_keys", {})
        if obj not in keys:
            keys[obj] = _key(self.forward, obj)
        return keys[obj]

    def gradient_key(self, obj: Any) -> str | None:
        """The key ``obj`` is drawn under in the gradient pane (None: not drawn there)."""
        return _key(self.gradient, obj) if self.gradient is not None else None

    # -- what is drawn ---------------------------------------------------------------------------------------
    def _gradient_model(self, limit: int) -> Any:
        """The gradient pane's model: the gradient graph, the forward values it reads drawn as leaves (their own
        graph is the left pane's), never folded; None when there is nothing to draw or more than ``limit`` nodes."""
        from symlab.printing.folding import toposort
        from symlab.printing.model import build_model

        if not self.gradient_outputs:
            return None
        forward = [o for n in self.walk.forward_nodes for o in n.outputs]
        order, leaves = toposort(self.gradient_outputs, frozenset(id(v) for v in forward))
        if len(order) + len(leaves) > limit:
            self.too_big = len(order) + len(leaves)
            return None
        return _short_labels(build_model(self.gradient_outputs, "compact", max_nodes=10**9, cut=forward,
                                         caller="GradStepper"))

    def _gradient_outputs(self) -> list[Variable]:
        """The variables the gradient pane draws: grad's results, and what the walk built that they do not use."""
        results = self.walk.results if isinstance(self.walk.results, list) else [self.walk.results]
        outputs = [r for r in results if _defined(r)]
        used = {v.owner for v in ancestors(outputs) if v.owner is not None}
        built = self.walk.gradient_nodes
        read = {i.owner for n in built for i in n.inputs if i.owner is not None}
        for node in built:  # a node no later node reads (a gradient of a variable that goes nowhere): drawn too
            if node not in used and node not in read:
                outputs.extend(o for o in node.outputs if _defined(o) and o not in outputs)
        return list(dict.fromkeys(outputs))

    def _built_steps(self) -> dict[str, int]:
        """The step at which each drawn node of the gradient pane appears (0: there before the walk)."""
        model = self.gradient
        if model is None:
            return {}
        made: dict[Any, int] = {}
        for step in self.walk.steps:
            for node in step.new_nodes:
                made[node] = step.number
        made_keys = self._made_keys(made)
        found: dict[str, int] = {}
        for key, drawn in model.nodes.items():
            obj = drawn.obj
            if drawn.kind == "group" and isinstance(obj, list) and any(n in made for n in obj):
                found[key] = min(made[n] for n in obj if n in made)
            elif isinstance(obj, Apply) and obj in made:
                found[key] = made[obj]
        # what the walk did not build (a forward value it reads, an input, a constant) appears with its first
        # reader; an output with the node that computes it; what is left was there from the start
        heads: dict[str, list[str]] = {}
        for edge in model.edges:
            heads.setdefault(edge.tail, []).append(edge.head)
        for key in reversed(list(model.nodes)):  # readers come after what they read in drawing order, mostly
            if key not in found:
                steps = [found[h] for h in heads.get(key, ()) if h in found]
                if steps:
                    found[key] = min(steps)
        changed = True
        while changed:  # the rest, in any order
            changed = False
            for edge in model.edges:
                head = found.get(edge.head)
                if head is not None and found.get(edge.tail, head + 1) > head and edge.tail not in made_keys:
                    found[edge.tail] = head
                    changed = True
                if edge.head not in found and edge.tail in found:
                    found[edge.head] = found[edge.tail]
                    changed = True
        return {key: found.get(key, 0) for key in model.nodes}

    def _context_keys(self) -> set[str]:
        """The gradient pane's nodes that are not the walk's: the forward values and inputs its gradients read."""
        cache = self.__dict__.get("_context_cache")
        if cache is None:
            made = self._made_keys()
            cache = self.__dict__["_context_cache"] = {
                key for key, node in (self.gradient.nodes.items() if self.gradient is not None else ())
                if key not in made and (node.kind == "input" or isinstance(node.obj, Apply))}
        return cache

    def _made_keys(self, made: dict[Any, int] | None = None) -> set[str]:
        """The gradient pane's keys of the nodes the walk built (``made``: node -> step, given on the first call)."""
        cache = self.__dict__.get("_made_key_cache")
        if cache is None:
            cache = self.__dict__["_made_key_cache"] = {k for k in (self.gradient_key(n) for n in made or {}) if k}
        return cache

    def _edge_built_steps(self) -> dict[str, int]:
        if self.gradient is None:
            return {}
        built = self._built
        return {e.key: max(built.get(e.tail, 0), built.get(e.head, 0)) for e in self.gradient.edges}

    # -- values ----------------------------------------------------------------------------------------------
    def _gradient_texts(self) -> dict[Variable, list[tuple[int, str]]]:
        """Per variable of the cost's graph, its total gradient's text after each step that changed it."""
        numbers, walk = self.numbers, self.walk
        texts: dict[Variable, list[tuple[int, str]]] = {}
        for var, seed in walk.seeds.items():
            texts[var] = [(0, "grad " + numbers.text(numbers.value(seed)))]
        for step in walk.steps:
            for c in step.contributions:
                if c.after is not None and _defined(c.after):
                    texts.setdefault(c.variable, []).append((step.number, "grad " + numbers.text(numbers.value(c.after))))
        return texts

    def _value_lines(self) -> dict[Variable, list[str]]:
        numbers = self.numbers
        lines: dict[Variable, list[str]] = {}
        for var in ancestors([self.walk.cost]):
            if isinstance(var, Constant):
                continue
            try:
                data = numbers.text(numbers.value(var))
            except Exception:  # a value the numbers cannot give (a random generator's state): no line
                continue
            final = self._grad_lines.get(var)
            lines[var] = ["data " + data, final[-1][1] if final else NO_GRADIENT_YET]
        return lines

    def _lines_at(self, k: int) -> dict[Variable, list[str]] | None:
        """The lines of the forward boxes at step ``k``: ``data`` and the ``grad`` so far (None without values)."""
        if self.numbers is None:
            return None
        lines = {}
        for var, (data, _) in self._final_lines.items():
            text = NO_GRADIENT_YET
            for number, line in self._grad_lines.get(var, ()):
                if number <= k:
                    text = line
            lines[var] = [data, text]
        return lines

    def labels(self, k: int) -> dict[str, str]:
        """The ``grad`` line of each variable box of the forward pane at step ``k`` (with values; else empty)."""
        found: dict[str, str] = {}
        for var, texts in self._grad_lines.items():
            key = self.forward_key(var)
            if key is None or self.forward.nodes[key].kind == "group":
                continue
            text = NO_GRADIENT_YET
            for number, line in texts:
                if number <= k:
                    text = line
            found[key] = text
        return found

    # -- marks -----------------------------------------------------------------------------------------------
    def marks(self, k: int) -> dict[str, dict[str, list[str]]]:
        """The classes of the drawn nodes and edges of each pane at step ``k`` (``{"forward": {key: [...]}, ...}``).

        Forward pane: ``sl-gw-visited`` (visited before ``k``), ``sl-gw-current`` (step ``k``'s node, with
        ``sl-gw-undefined`` / ``sl-gw-nothing`` when its rule did not run), ``sl-gw-arriving`` (its outputs, or
        the cost at step 0), ``sl-gw-backward`` (the edges the gradient arrived along), ``sl-gw-giving`` (the
        edges to the inputs it gives a gradient), ``sl-gw-sum`` (a variable whose contributions add up at
        ``k``), ``sl-gw-summed`` (added up before). Gradient pane: ``sl-gw-context`` (a forward value or an
        input that gradients read), ``sl-gw-new`` (built at ``k``), ``sl-gw-later`` (shown from a later step on:
        hidden), ``sl-gw-sum`` (a sum of step ``k``).
        """
        walk = self.walk
        forward: dict[str, list[str]] = {}

        def add(table: dict[str, list[str]], key: str | None, cls: str) -> None:
            if key is not None and cls not in table.setdefault(key, []):
                table[key].append(cls)

        for step in walk.steps[:max(0, k - 1)]:
            add(forward, self.forward_key(step.node), "sl-gw-visited")
            for c in step.sums:
                add(forward, self.forward_key(c.variable), "sl-gw-summed")
        edges = self._forward_edges()
        if k == 0:
            for var in walk.seeds:
                add(forward, self.forward_key(var), "sl-gw-arriving")
        else:
            step = walk.steps[k - 1]
            node_key = self.forward_key(step.node)
            add(forward, node_key, "sl-gw-current")
            if step.kind != "rule":
                add(forward, node_key, f"sl-gw-{step.kind}")
            for out, arriving in zip(step.node.outputs, step.arriving):
                out_key = self.forward_key(out)
                if arriving is None or out_key is None or out_key == node_key:
                    continue
                add(forward, out_key, "sl-gw-arriving")
                for edge_key in edges.get((node_key, out_key), ()):
                    add(forward, edge_key, "sl-gw-backward")
                for head, edge_key in self._edges_from(out_key):  # from the clients the gradient came back from
                    if head in self._visited_keys(k):
                        add(forward, edge_key, "sl-gw-backward")
            for c in step.contributions:
                if c.gradient is None or c.reason:
                    continue
                for edge_key in edges.get((self.forward_key(c.variable), node_key), ()):  # a + a: both edges
                    add(forward, edge_key, "sl-gw-giving")
                if c.summed:
                    add(forward, self.forward_key(c.variable), "sl-gw-sum")
        return {"forward": forward, "gradient": self._gradient_marks(k)}

    def _forward_edges(self) -> dict[tuple[str, str], list[str]]:
        """The keys of the forward pane's edges from tail to head (two for a variable read twice, ``a + a``)."""
        if "_edges" not in self.__dict__:
            edges: dict[tuple[str, str], list[str]] = {}
            for e in self.forward.edges:
                edges.setdefault((e.tail, e.head), []).append(e.key)
            self.__dict__["_edges"] = edges
        return self.__dict__["_edges"]

    def _edges_from(self, tail: str) -> list[tuple[str, str]]:
        by_tail = self.__dict__.get("_by_tail")
        if by_tail is None:
            by_tail = self.__dict__["_by_tail"] = {}
            for e in self.forward.edges:
                by_tail.setdefault(e.tail, []).append((e.head, e.key))
        return by_tail.get(tail, [])

    def _visited_keys(self, k: int) -> set[str]:
        cache = self.__dict__.setdefault("_visited_cache", {})
        if k not in cache:
            cache[k] = {self.forward_key(s.node) for s in self.walk.steps[:k - 1]} - {None}
        return cache[k]

    def _gradient_marks(self, k: int) -> dict[str, list[str]]:
        made = self._made_keys()
        context = self._context_keys()
        marks: dict[str, list[str]] = {}
        for key, built in self._built.items():
            classes = ["sl-gw-context"] if key in context else []
            if built > k:
                classes.append("sl-gw-later")
            elif built == k and key in made:
                classes.append("sl-gw-new")
            if classes:
                marks[key] = classes
        for key, built in self._edge_steps.items():
            if built > k:
                marks[key] = ["sl-gw-later"]
            elif built == k and k:
                marks[key] = ["sl-gw-new"]
        if k:
            for c in self.walk.steps[k - 1].sums:
                key = self.gradient_key(c.after.owner) if c.after is not None and c.after.owner is not None else None
                if key is not None:
                    marks.setdefault(key, []).append("sl-gw-sum")
        return marks

    def fallback_models(self, k: int) -> list[tuple[str, Any]]:
        """The pictures of step ``k`` for the Markdown fallback: ``[("forward", model), ("gradient", model)]``.

        Small enough to stay light in a notebook file: the forward graph whole when it has at most
        :data:`FALLBACK_NODES` apply nodes, else its part within one edge of the node visited
        (of the cost at step 0); the gradient graph as built so far (the nodes of later steps left out), or its part
        around the nodes the step built (none at step 0, or at a step that built nothing: no picture). The node
        visited is ``highlight``, the variables summed ``selected``, the nodes built ``created``.
        """
        from symlab.printing.folding import toposort
        from symlab.printing.model import build_model

        walk = self.walk
        step = walk.steps[k - 1] if k else None
        models = []
        order, _ = toposort([walk.cost])
        centre = [step.node] if step is not None else ([walk.cost.owner] if walk.cost.owner is not None else [])
        if len(order) > FALLBACK_NODES and centre:
            region = _region(order, centre, 1)  # a box per value, its data and grad lines: wide; its neighbours
            part = [n for n in order if n in region]
            ends, cut = _part_ends(part, [walk.cost])
        else:
            ends, cut = [walk.cost], []
        marked = {"highlight": [step.node] if step is not None else [walk.cost],
                  "selected": [c.variable for c in step.sums] if step is not None else []}
        models.append(("forward", build_model(ends, "dataflow", max_nodes=10**9, cut=cut, lines=self._lines_at(k),
                                              classes=marked, caller="GradStepper")))
        if step is None or not step.new_nodes or self.gradient is None:
            return models
        built = [n for s in walk.steps[:k] for n in s.new_nodes]
        if len(built) > FALLBACK_NODES:
            region = _region(built, list(step.new_nodes))
            built = [n for n in built if n in region]
        results = [r for r in (walk.results if isinstance(walk.results, list) else [walk.results]) if _defined(r)]
        ends, cut = _part_ends(built, results)
        models.append(("gradient", _short_labels(build_model(ends, "compact", max_nodes=10**9, cut=cut,
                                                             classes={"created": list(step.new_nodes)},
                                                             caller="GradStepper"))))
        return models

    def shown(self, k: int) -> list[str]:
        """The keys of the gradient pane's nodes shown at step ``k`` (not hidden as built later)."""
        return [key for key, built in self._built.items() if built <= k]

    def marked_svgs(self, k: int) -> tuple[str, str]:
        """The two SVGs with step ``k``'s marks and ``grad`` lines written in (what the browser shows)."""
        marks = self.marks(k)
        return (mark_svg(self.forward_svg, marks["forward"], self.labels(k)),
                mark_svg(self.gradient_svg, marks["gradient"]))


def _short_labels(model: Any) -> Any:
    """``model`` (compact style) with its ops labelled as the forward pane's dataflow style labels them (``mul``,
    not ``Elemwise{mul,no_inplace}``; the tooltip keeps the op in full)."""
    from symlab.printing.painters import op_lines

    for node in model.nodes.values():
        if node.kind == "apply" and isinstance(node.obj, Apply):
            node.label = op_lines(node.obj.op) + node.label[1:]
    return model


def _region(order: list[Apply], centre: list[Apply], radius: int = FALLBACK_RADIUS) -> set[Apply]:
    """The nodes of ``order`` within ``radius`` edges of ``centre`` (fewer edges when that is too many)."""
    from symlab.notebook.neighbourhood import Neighbourhood

    near = Neighbourhood(order)
    for edges in range(radius, -1, -1):
        region = set(centre) & set(order)
        for node in centre:
            if node in near.consumers:
                region |= near.region(node, edges) if edges else {node}
        if len(region) <= FALLBACK_NODES or not edges:
            return region
    return set(centre)


def _part_ends(part: list[Apply], outputs: list[Variable]) -> tuple[list[Variable], list[Variable]]:
    """Where the part ``part`` of a graph ends (what no node of it reads, and ``outputs`` it computes) and starts
    (the variables it reads that are computed outside it)."""
    inside = set(part)
    read = {i for n in part for i in n.inputs}
    ends = [o for n in part for o in n.outputs if _defined(o) and (o not in read or o in outputs)]
    cut = list(dict.fromkeys(i for n in part for i in n.inputs if i.owner is not None and i.owner not in inside))
    return ends, cut


def _key(model: Any, obj: Any) -> str | None:
    try:
        key = model.key_of(obj)
    except KeyError:
        return None
    return key if key in model.nodes or any(e.key == key for e in model.edges) else None


_GROUP = re.compile(r'<g id="([^"]+)" class="(node|edge)([^"]*)"')


def mark_svg(svg: str, marks: dict[str, list[str]], labels: dict[str, str] | None = None) -> str:
    """``svg`` (Graphviz's, unmarked) with ``marks`` (key -> classes) added to its nodes' and edges' ``class``, and
    the last text line of each node of ``labels`` (key -> text) replaced by it (XML-escaped).

    >>> svg = '<g id="a1" class="node"><text>x</text><text>grad ·</text></g>'
    >>> print(mark_svg(svg, {"a1": ["sl-gw-current"]}, {"a1": "grad <1>"}))
    <g id="a1" class="node sl-gw-current"><text>x</text><text>grad &lt;1&gt;</text></g>
    """
    from html import escape

    def classes(match: re.Match[str]) -> str:
        extra = marks.get(match.group(1))
        tail = match.group(3) + ("".join(f" {c}" for c in extra) if extra else "")
        return f'<g id="{match.group(1)}" class="{match.group(2)}{tail}"'

    svg = _GROUP.sub(classes, svg)
    for key, text in (labels or {}).items():
        start = svg.find(f'<g id="{key}" class="node')
        if start < 0:
            continue
        end = svg.find("</g>", start)
        last = svg.rfind("<text", start, end)
        if last < 0:
            continue
        open_end = svg.index(">", last) + 1
        close = svg.index("</text>", open_end)
        svg = svg[:open_end] + escape(text, quote=False) + svg[close:]
    return svg
