"""``GraphView``: a graph you click. Select a node to read its details and see its inputs and clients lit.

``symlab.view(obj)`` opens one for a Variable, an Apply node, a list of them, a FunctionGraph or a
compiled Function. The picture is the static display's (the same view model, the same styles), drawn
by Graphviz in Python; clicking a node selects it, the panel beside the picture says what it is (its
kind, name, op and props, type, dtype, static shape, owner, inputs, clients), and every object named
there is a link. Large graphs are folded (a folded group expands when clicked), and the focus mode
draws only the neighbourhood of the selection, so a 2,000-node graph is never laid out whole.

Every click has its Python twin, for scripts and tests:

>>> import symlab
>>> import symlab.tensor as st
>>> x, y = st.dvector("x"), st.dvector("y")
>>> f = symlab.function([x, y], st.exp(x) * y + x)
>>> view = GraphView(f)
>>> view.select(f.maker.fgraph.inputs[0])
>>> view.details["clients"]
['(Elemwise{Composite{((exp(i0) * i1) + i0)},no_inplace}(x, y), 0)']
>>> view.selected is f.maker.fgraph.inputs[0], view.style
(True, 'compact')
>>> view
GraphView of a compiled Function: 1 node, compact style, selected input x
"""

from __future__ import annotations

from collections import deque
from typing import Any

import traitlets

from symlab.graph.basic import Apply, Variable
from symlab.notebook.details import describe, kind_of
from symlab.notebook.widget import ViewWidget, code_span
from symlab.printing.folding import toposort
from symlab.printing.model import GraphModel, build_model, build_part
from symlab.printing.subject import subject_of

__all__ = ["GraphView"]

#: Drawn nodes of a picture before folding (a 2,000-node graph is never laid out whole).
VIEW_MAX_NODES = 80
LEGENDS = {
    "structure": "blue box: Apply node · red box: Variable · green circle: Op · purple box: Type · "
                 "arrows: the references between them (owner, inputs[i], outputs[i], op, type)",
    "compact": "box: Apply node (its op) · green ellipse: input · grey ellipse: constant · blue ellipse: output · "
               "arrows: the intermediate variables, labelled with the input position",
}
_MOVES = ("up", "down", "left", "right")


class GraphView(ViewWidget):
    """A clickable picture of a graph; see the module documentation."""

    #: The part of ``views.js`` that draws it.
    _script_view = "graph"

    svg = traitlets.Unicode("").tag(sync=True)
    #: The style drawn (``view.style``; not a trait named ``style``: ipywidgets' JavaScript reads that name as
    #: a reference to a Style widget).
    picture_style = traitlets.Unicode("compact").tag(sync=True)
    focus = traitlets.Bool(False).tag(sync=True)
    selected_key = traitlets.Unicode("").tag(sync=True)
    marks = traitlets.Dict().tag(sync=True)
    panel = traitlets.Dict().tag(sync=True)
    notice = traitlets.Unicode("").tag(sync=True)
    legend = traitlets.Unicode("").tag(sync=True)

    def __init__(self, obj: Any, style: str | None = None, max_nodes: int = VIEW_MAX_NODES,
                 focus_radius: int = 2) -> None:
        subject = subject_of(obj, "GraphView", kinds=("variable", "apply", "list", "fgraph", "function"))
        if style is None:
            from symlab.notebook.reprs import diagram_style

            style = diagram_style(obj)
        if style not in LEGENDS:
            raise ValueError(f"GraphView: style must be 'structure' or 'compact', received {style!r}")
        if not isinstance(max_nodes, int) or max_nodes < 1:
            raise ValueError(f"GraphView: max_nodes must be a positive int, received {max_nodes!r}")
        if not isinstance(focus_radius, int) or focus_radius < 1:
            raise ValueError(f"GraphView: focus_radius must be a positive int, received {focus_radius!r}")
        self._subject = subject
        self._max_nodes = max_nodes
        self._radius = focus_radius
        self._kept: set[Any] = set()  # nodes shown although folding would hide them (expanded groups)
        self._budget = max_nodes  # grows as groups are expanded
        self._index()
        self.model: GraphModel | None = None
        self._ready = False
        super().__init__(view=self._script_view, picture_style=style)
        self._ready = True
        with self.answer():
            self._draw()

    def _index(self) -> None:
        """Every key of the graph, its nodes in order and who uses each (from the graph as it is now)."""
        subject = self._subject
        self._full = build_model(subject, "compact", max_nodes=10**9)  # every key, for lookups
        self._order = toposort(list(subject.outputs))[0]
        self._consumers: dict[Apply, list[Apply]] = {n: [] for n in self._order}
        for node in self._order:
            for inp in node.inputs:
                if inp.owner in self._consumers:
                    self._consumers[inp.owner].append(node)
        self._version = subject.fgraph.version if subject.fgraph is not None else 0

    def refresh(self) -> bool:
        """Redraw if the FunctionGraph changed since the view drew it (True if it did).

        Every interaction asks first, so a view never answers about a graph that is gone. The selection
        stays when its object is still in the graph (keys are stable), and is cleared, saying so, when it
        left. Nothing is read while a change is open (``fgraph.changing``): a half-edited graph is never drawn.
        """
        fg = self._subject.fgraph
        if fg is None or fg.version == self._version or fg.changing:
            return False
        selected = self.selected if self.selected_key else None
        self._subject = subject_of(self._subject.obj, "GraphView", kinds=("fgraph", "function"))
        self._index()
        left_title = None
        if self.selected_key:
            try:
                self._full.obj(self.selected_key)
            except KeyError:  # not in the graph as it is now (or a folded group of the old picture)
                left_title = _title(selected, kind_of(selected))
        self._kept = {k for k in self._kept if k in fg}
        with self.answer():
            if left_title is not None:
                self.selected_key = ""
            self._draw()
            what = f"; the selected {left_title} left it" if left_title is not None else ""
            self.notice = f"the graph changed (version {fg.version}): redrawn{what}. " + self.notice
        return True

    # -- what is shown ---------------------------------------------------------------------------
    @property
    def style(self) -> str:
        """``"structure"`` (seed 000's object diagram) or ``"compact"`` (one box per Apply node); settable."""
        return self.picture_style

    @style.setter
    def style(self, value: str) -> None:
        if value not in LEGENDS:
            raise ValueError(f"GraphView.style must be 'structure' or 'compact', received {value!r}")
        self.picture_style = value

    @property
    def fgraph(self) -> Any:
        """The FunctionGraph the view draws (``None`` for bare Variables and Apply nodes)."""
        return self._subject.fgraph

    @property
    def selected(self) -> Any:
        """The selected object (an Apply node, a Variable, an Op, a Type), or ``None``."""
        return self._object(self.selected_key) if self.selected_key else None

    @property
    def details(self) -> dict[str, Any]:
        """What the panel shows: ``{label: text or [texts of the objects it names]}`` (empty: nothing selected)."""
        obj = self.selected
        if obj is None:
            return {}
        return {row.label: row.plain() for row in describe(obj, self.fgraph, self._order, self._subject.outputs)}

    def key_of(self, obj: Any) -> str:
        """The stable key under which ``obj`` is drawn (or would be: a folded node's own key)."""
        key = self._full_key(obj)
        if key is None and self.model is not None:
            try:
                key = self.model.key_of(obj)
            except KeyError:
                key = None
        if key is None:
            raise ValueError(f"GraphView: {obj!r} ({type(obj).__name__}) is not part of the graph this view shows")
        return key

    # -- the clicks' Python twins ----------------------------------------------------------------------
    def select(self, target: Any) -> None:
        """Select ``target``: an Apply node, a Variable, an Op, a Type, a key, or ``None`` (clear)."""
        self.refresh()
        key = self._key_for(target)
        with self.answer():
            self._select(key)

    def _key_for(self, target: Any) -> str:
        """The key to select for ``target`` (an object, or a key of the picture: a node's, an edge's, a group's)."""
        if target is None or target == "":
            return ""
        if not isinstance(target, str):
            return self.key_of(target)
        key = self._edge_variable(target) or target
        obj = self._object(key)
        if obj is None:
            raise ValueError(f"GraphView.select: no node of this graph has the key {target!r}; expected an object "
                             "of the graph (an Apply node, a Variable, an Op, a Type) or a key of its picture "
                             "(view.key_of(obj): 'v0', 'a2', ...)")
        if isinstance(obj, Variable) and self.model is not None and key not in self.model.nodes:
            key = self._full_key(obj) or key  # a copy of a variable drawn once per use: the variable
        return key

    def move(self, direction: str) -> None:
        """Move the selection along an edge: ``up`` (to an input), ``down`` (to a client), ``left``/``right``."""
        if direction not in _MOVES:
            raise ValueError(f"GraphView.move: direction must be one of {_MOVES}, received {direction!r}")
        target = self._neighbour(direction)
        if target is not None:
            self.select(target)

    def expand(self, group: str) -> None:
        """Draw the nodes a folded group (its key, ``g<n>``) hides."""
        node = self.model.nodes.get(group) if self.model is not None else None
        if node is None or node.kind != "group":
            raise ValueError(f"GraphView.expand: {group!r} is not a folded group of the picture")
        # A chunk at a time, the nodes nearest the visible part first: never the whole graph at once.
        chunk = _nearest(list(node.obj), self._max_nodes, self._consumers)
        self._kept.update(chunk)
        self._budget += len(chunk)
        with self.answer():
            self._draw()
            left = node.count - len(chunk)
            self.notice = f"expanded {len(chunk)} nodes" + (f" ({left} still folded)" if left > 0 else "") + ". " + (
                self.notice)

    # -- browser messages ----------------------------------------------------------------------------
    def _on_browser_message(self, widget: Any, content: Any, buffers: Any) -> None:
        self.refresh()  # a click on a picture of a graph that has changed since: redraw first
        super()._on_browser_message(widget, content, buffers)

    def _on_select(self, content: dict[str, Any]) -> None:
        key = content.get("key") or ""
        if key and self._object(self._edge_variable(key) or key) is None:
            return  # a click on something the graph no longer has
        with self.answer():  # the browser sends keys (the graph changed or not, refresh ran before this)
            self._select(self._key_for(key))

    def _on_style(self, content: dict[str, Any]) -> None:
        if content.get("style") in LEGENDS:
            self.picture_style = content["style"]

    def _on_focus(self, content: dict[str, Any]) -> None:
        self.focus = bool(content.get("focus"))

    def _on_move(self, content: dict[str, Any]) -> None:
        if content.get("direction") in _MOVES:
            if not self.selected_key:
                first = self._order[-1] if self._order else None
                if first is not None:
                    self.select(first)
                return
            self.move(content["direction"])

    def _on_expand(self, content: dict[str, Any]) -> None:
        self.expand(str(content.get("key")))

    @traitlets.validate("picture_style")
    def _valid_style(self, proposal: Any) -> str:
        if proposal["value"] not in LEGENDS:
            raise traitlets.TraitError(f"GraphView.style must be 'structure' or 'compact', not {proposal['value']!r}")
        return proposal["value"]

    @traitlets.observe("picture_style", "focus")
    def _redraw(self, change: Any) -> None:
        if not self._ready:
            return
        with self.answer():
            self._draw()

    # -- drawing -------------------------------------------------------------------------------------------
    def _draw(self) -> None:
        """Build the picture for the current style, focus and expanded groups, and the marks of the selection."""
        selected = self.selected
        focused = isinstance(selected, Apply | Variable)
        if self.focus and focused:
            self.model = self._focus_model(selected)
        else:
            self.model = build_model(self._subject, self.style, max_nodes=self._budget,
                                     classes={"kept": list(self._kept)} if self._kept else None)
        self.svg = self.show_picture("graph", self.model)
        self.legend = LEGENDS[self.style]
        notes = []
        if not self.svg:
            notes.append("Graphviz is not installed: no picture (the details still work).")
        if self.model.note:
            notes.append(f"{self.model.note}: click a group to see it, then 'expand'.")
        if self.focus:
            notes.append(f"focus: {len(self.model.nodes)} nodes around the selection" if focused
                         else "focus: select a node (not a group) to draw its neighbourhood")
        self.notice = " ".join(notes)
        if focused and self._picture_key(self.selected_key) is None:  # folded away: show it, then mark it
            self._kept.add(selected.owner if isinstance(selected, Variable) and selected.owner else selected)
            self._budget += 1
            self.model = build_model(self._subject, self.style, max_nodes=self._budget,
                                     classes={"kept": list(self._kept)})
            self.svg = self.show_picture("graph", self.model)
        self._select(self.selected_key)

    def _focus_model(self, selected: Any) -> GraphModel:
        start = [selected] if isinstance(selected, Apply) else []
        if isinstance(selected, Variable):
            start = ([selected.owner] if selected.owner is not None else []) + [
                n for n in self._order if any(i is selected for i in n.inputs)]
        region: set[Apply] = set()
        queue = deque((n, 0) for n in start if n in self._consumers)
        while queue:
            node, d = queue.popleft()
            if node in region:
                continue
            region.add(node)
            if d < self._radius:
                for other in [i.owner for i in node.inputs if i.owner in self._consumers] + self._consumers[node]:
                    queue.append((other, d + 1))
        if not region:  # a lone input or constant
            region = set(self._consumers_of_root(selected))
        return build_part([n for n in self._order if n in region], self.style, self._subject.key or self._full.key_of,
                          self._subject.fgraph, self._subject.outputs)

    def _consumers_of_root(self, var: Any) -> list[Apply]:
        return [n for n in self._order if isinstance(var, Variable) and any(i is var for i in n.inputs)]

    def _select(self, key: str) -> None:
        """Set the selection, its marks and the panel (inside an :meth:`answer`)."""
        self.selected_key = key
        obj = self._object(key) if key else None
        if obj is None:
            self.selected_key = ""
            self.marks = {}
            self.panel = {"rows": [], "hint": "Click a node (or an arrow) to see what it is, its inputs and its clients."}
            return
        marks: dict[str, list[str]] = {}

        def mark(target: Any, cls: str) -> None:
            k = self._picture_key(target if isinstance(target, str) else self._full_key(target) or "")
            if k is not None:
                for drawn in [*self.model.drawn_keys(k), *self._edges_carrying(k)]:
                    classes = marks.setdefault(drawn, [])
                    if cls not in classes:
                        classes.append(cls)

        if isinstance(obj, Apply):
            for inp in obj.inputs:
                mark(inp.owner if inp.owner is not None and self._drawn_as_edge(inp) else inp, "input")
            for out in obj.outputs:
                for client in self._clients(out):
                    mark(f"out{client[1]}" if client[0] == "output" else client[0], "client")
                if self._drawn_as_edge(out):
                    mark(out, "client")
        elif isinstance(obj, Variable):
            if obj.owner is not None:
                mark(obj.owner, "input")
            for client in self._clients(obj):
                mark(f"out{client[1]}" if client[0] == "output" else client[0], "client")
        mark(key, "selected")
        for copy in self.model.drawn_keys(key) if self.model is not None else ():
            marks[copy] = ["selected"]
        if self.model is not None and key in self.model.nodes and self.model.nodes[key].kind == "group":
            marks[key] = ["selected"]
        self.marks = marks
        if self.model is not None and key in self.model.nodes and self.model.nodes[key].kind == "group":
            rows = describe(self.model.nodes[key].obj)
            actions = [{"text": f"expand these {self.model.nodes[key].count} nodes", "key": key, "kind": "expand"}]
        else:
            rows = describe(obj, self.fgraph, self._order, self._subject.outputs)
            actions = []
        self.panel = {"title": _title(obj, kind_of(obj, self.fgraph)), "rows": [r.as_json(self._link_key) for r in rows],
                      "actions": actions}

    def _clients(self, var: Variable) -> list[tuple[Any, int]]:
        fg = self.fgraph
        if fg is not None and var in fg:
            return list(fg.clients[var])
        users = [(n, i) for n in self._order for i, inp in enumerate(n.inputs) if inp is var]
        users += [("output", k) for k, o in enumerate(self._subject.outputs) if o is var]
        return users

    def _full_key(self, obj: Any) -> str | None:
        """The key of ``obj`` in the whole graph (the graph's own key where there is a graph), or ``None``."""
        graph_key = self._subject.key
        try:
            return graph_key(obj) if graph_key is not None and isinstance(obj, Apply | Variable) else (
                self._full.key_of(obj))
        except KeyError:
            return None

    def _link_key(self, obj: Any) -> str | None:
        return self._full_key(obj)

    def _object(self, key: str) -> Any:
        if self.model is not None and key in self.model.nodes and self.model.nodes[key].kind == "group":
            return self.model.nodes[key].obj
        for model in (self._full, self.model):
            if model is not None:
                try:
                    return model.obj(key)
                except KeyError:
                    pass
        return None

    def _picture_key(self, key: str) -> str | None:
        """``key`` if the current picture draws it (as a node, or as the variable of an edge), else ``None``."""
        if self.model is None:
            return None
        if self.model.drawn_keys(key) or self._edges_carrying(key):
            return key
        return None

    def _edges_carrying(self, key: str) -> list[str]:
        if self.model is None:
            return []
        return [e.key for e in self.model.edges if e.var == key]

    def _edge_variable(self, key: str) -> str | None:
        """The key of the variable an edge of the picture carries, if ``key`` is an edge's."""
        if self.model is None:
            return None
        for e in self.model.edges:
            if e.key == key:
                return e.var
        return None

    def _drawn_as_edge(self, var: Variable) -> bool:
        key = self._full_key(var)
        return self.model is not None and key is not None and key not in self.model.nodes and bool(
            self._edges_carrying(key))

    def _neighbour(self, direction: str) -> Any:
        obj = self.selected
        if obj is None or isinstance(obj, list):
            return self._order[-1] if self._order else None
        node = obj if isinstance(obj, Apply) else (obj.owner if isinstance(obj, Variable) else None)
        if direction == "up":
            if isinstance(obj, Apply):
                return next((i.owner or i for i in obj.inputs), None)
            return obj.owner if isinstance(obj, Variable) else None
        if direction == "down":
            outs = obj.outputs if isinstance(obj, Apply) else [obj] if isinstance(obj, Variable) else []
            for out in outs:
                for client, _ in self._clients(out):
                    if client != "output":
                        return client
            return None
        if node is None or node not in self._consumers:
            return None
        position = self._order.index(node) + (-1 if direction == "left" else 1)
        return self._order[position] if 0 <= position < len(self._order) else None

    # -- displays ------------------------------------------------------------------------------------------
    def summary(self) -> str:
        what = _WHAT[self._subject.kind]
        n = len(self._order)
        text = f"GraphView of {what}: {n} node{'s' if n != 1 else ''}, {self.style} style"
        obj = self.selected
        if obj is not None:
            text += f", selected {_title(obj, kind_of(obj, self.fgraph))}"
        return text

    def markdown(self) -> str:
        what, n = _WHAT[self._subject.kind], len(self._order)
        lines = [f"**GraphView** of {what}: {n} node{'s' if n != 1 else ''}, {self.style} style", ""]
        if self.model is not None and self.model.note:
            lines += [f"{code_span(self.model.note, table=False)}", ""]
        details = self.details
        if details:
            obj = self.selected
            lines += [f"selected: {code_span(_title(obj, kind_of(obj, self.fgraph)), table=False)}", "", "| | |", "|---|---|"]
            for label, value in details.items():
                texts = value if isinstance(value, list) else [str(value)]
                lines.append(f"| {label} | {', '.join(code_span(t) for t in texts) or '-'} |")
            lines.append("")
        lines.append(f"Legend: {LEGENDS[self.style]}.")
        return "\n".join(lines)


def _nearest(members: list[Apply], count: int, consumers: dict[Apply, list[Apply]]) -> list[Apply]:
    """Up to ``count`` of a group's ``members``: those next to nodes outside the group first (breadth first)."""
    inside = set(members)
    frontier = [n for n in members if any(c not in inside for c in consumers.get(n, ()))
                or any(i.owner is not None and i.owner not in inside for i in n.inputs)]
    chosen: dict[Apply, None] = {}
    queue = deque(frontier or members[:1])
    while queue and len(chosen) < count:
        node = queue.popleft()
        if node in chosen:
            continue
        chosen[node] = None
        queue.extend(i.owner for i in node.inputs if i.owner in inside and i.owner not in chosen)
        queue.extend(c for c in consumers.get(node, ()) if c in inside and c not in chosen)
    return list(chosen)


def _title(obj: Any, kind: str) -> str:
    if kind == "group":
        return f"folded group of {len(obj)} nodes"
    if kind == "apply":
        return f"apply node {obj.op}"
    if kind in ("op", "type"):
        return f"{kind} {obj!r}" if kind == "type" else f"op {obj}"
    return f"{kind} {obj}"


_WHAT = {"variable": "a Variable", "apply": "an Apply node", "list": "a list of variables",
         "fgraph": "a FunctionGraph", "function": "a compiled Function"}
