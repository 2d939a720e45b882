"""``GraphView``: a graph you click. Select a node to read its details and see its inputs and clients lit.

``symlab.view(obj)`` opens one for a Variable, an Apply node, a list of them, a FunctionGraph or a
compiled Function. The picture is the static display's (the same view model, the same styles), drawn
by Graphviz in Python; clicking a node selects it, the panel beside the picture says what it is (its
kind, name, op and props, type, dtype, static shape, owner, inputs, clients), and every object named
there is a link. The focus mode draws only the neighbourhood of the selection; where it cuts the graph,
a dashed stub says how many more clients a value has (never an "output").

A large graph is folded by meaning to a budget (:data:`VIEW_MAX_NODES` drawn nodes, ``max_nodes=``): the
forward and the backward part of a gradient graph, the part only one output needs, a named
sub-expression (``hidden = tanh(…): 4 nodes``), a chain of elementwise ops; a group holds two nodes or
more. ``expand``/``collapse`` open and fold back a group in place (``groups`` lists them), ``search``
finds nodes by name, op, type or key and opens what hides the first; keys never change across any of it.
A node with an inner graph (a fused ``Composite``, an ``OpFromGraph``, an ``ifelse``) carries a "+" button:
``expand`` opens it in place, its inner graph drawn inside its box under keys ``<node key>/<inner key>``
(:mod:`symlab.notebook.inner_view`), and ``collapse`` closes it.
:mod:`symlab.notebook.keys` is the one place a key is resolved (once per click), :mod:`symlab.notebook.folds`
what is open, :mod:`symlab.notebook.node_search` the search, :mod:`symlab.notebook.neighbourhood` the focus
region and the arrow keys' moves, :mod:`symlab.notebook.details` the panel's rows.

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

A gradient, folded into its two parts, searched and expanded:

>>> w = st.dvector("w")
>>> h = st.tanh(x * w)
>>> h.name = "h"
>>> cost = (h * y).sum() + (w ** 2).sum()
>>> view = GraphView([cost, symlab.grad(cost, w)], max_nodes=8)
>>> [(g["key"], g["title"], g["expanded"]) for g in view.groups]
[('g0', 'forward: 8 nodes', False), ('g3', 'backward: 16 nodes', False)]
>>> view.search("h")[0] is h, view.selected_key, view.groups[0]["expanded"]  # opened to show h
(True, 'v6', True)
>>> view.collapse("g0")
>>> view.expand("g3")
>>> view.notice.split(". ")[0]
'expanded backward: 16 nodes: 6 nodes and 2 groups'
"""

from __future__ import annotations

from typing import Any

import traitlets

from symlab.graph.basic import Apply, Variable
from symlab.graph.sharedvalue import SharedVariable
from symlab.notebook.details import describe, kind_of, title_of
from symlab.notebook.folds import VIEW_MAX_NODES, Folds
from symlab.notebook.inner_nodes import InnerGraphs
from symlab.notebook.inner_view import InnerGraphView
from symlab.notebook.keys import KeyIndex, Resolved, selection_marks
from symlab.notebook.neighbourhood import MOVES, Neighbourhood
from symlab.notebook.node_search import NodeSearch
from symlab.notebook.shared_use import shared_use_rows, state_legend
from symlab.notebook.widget import ViewWidget, code_span
from symlab.printing.folding import toposort
from symlab.printing.grouping import Group
from symlab.printing.model import GraphModel, build_model, build_part
from symlab.printing.outline import open_outline, outline_markdown, outline_pairs, outline_text
from symlab.printing.subject import subject_of

__all__ = ["GraphView"]

LEGENDS = {
    "structure": "blue box: Apply node · red box: Variable · green circle: Op · purple box: Type · "
                 "arrows: the references between them (owner, inputs[i], outputs[i], op, type)",
    "compact": "box: Apply node (its op) · green ellipse: input · grey ellipse: constant · blue ellipse: output · "
               "arrows: the intermediate variables, labelled with the input position",
}


class GraphView(InnerGraphView, ViewWidget):
    """A clickable picture of a graph; see the module documentation."""

    #: The view of the views' script that draws it (``static/views/graph_view.js``; ``main.js`` dispatches).
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
    #: The search's matches: ``[{"key", "text", "kind"}]`` (at most :data:`~symlab.notebook.node_search.MAX_MATCHES`).
    matches = traitlets.List().tag(sync=True)
    #: Keys the browser brings into view after drawing: the selection, or the nodes an expand showed.
    reveal = traitlets.List().tag(sync=True)
    #: The text twin: the whole graph as debugprint-style rows ``{"key", "depth", "text", "repeat", "also"}``.
    outline = traitlets.List().tag(sync=True)
    #: True: the browser shows the outline beside the picture (message ``{"type": "text_mode", "on": bool}``).
    text_mode = traitlets.Bool(False).tag(sync=True)

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
        self._order, leaves = toposort(list(subject.outputs))
        self._keys = KeyIndex(subject, self._order, leaves)  # every key of the whole graph, for lookups
        inner = self.__dict__.get("_inner")
        if inner is None:
            self._inner = InnerGraphs(self._keys, subject.fgraph)  # the inner graphs drawn open, in place
        else:
            inner.reindex(self._keys, subject.fgraph)
        self._costs: dict[int, int] | None = None
        # what each object is searched by (the open inner graphs' too), read on the first search
        self._search = NodeSearch(self._keys, self._inner.items)
        self._folds = Folds(self._order, subject.outputs, self._max_nodes, self._weight)  # what is folded, opened
        self._near = Neighbourhood(self._order)  # who reads whom: the focus region, the arrow keys
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
        if self.selected_key and self._inner.obj(self.selected_key) is None:  # inner keys: while their node opens
            # not in the graph as it is now (or a folded group of the old picture)
            left_title = title_of(selected, kind_of(selected))
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
        self.refresh()
        if not self.selected_key:
            return {}
        out: dict[str, Any] = {}
        for row in self.panel.get("rows", []):
            items = [item["text"] for item in row.get("items", [])]
            out[row["label"]] = items or row.get("text", row.get("empty", "none"))
        return out

    @property
    def text(self) -> str:
        """The text twin: the whole graph as a debugprint-style tree (:attr:`outline`), one row a line.

        The selected rows start with ``>``, the selection's inputs and clients (the :attr:`marks`) with ``*``
        and end with their marks; every row ends with its key, the key a click on the picture sends.
        """
        self.refresh()
        return outline_text(self.outline, self.selected_key, self.marks)

    def key_of(self, obj: Any) -> str:
        """The stable key under which ``obj`` is drawn (or would be: a folded node's own key)."""
        key = self._full_key(obj)
        if key is None and self.model is not None:
            try:
                key = self.model.key_of(obj)
            except KeyError:
                key = None
        if key is None and isinstance(obj, SharedVariable):
            # A compiled function's graph holds a copy of each shared variable, on the same container: yours.
            twin = next((i for i in self._subject.inputs if isinstance(i, SharedVariable)
                         and i.container is obj.container), None)
            key = None if twin is None else self._full_key(twin)
        if key is None:
            raise ValueError(f"GraphView: {obj!r} ({type(obj).__name__}) is not part of the graph this view shows")
        return key

    # -- the clicks' Python twins ----------------------------------------------------------------------
    def select(self, target: Any) -> None:
        """Select ``target``: an Apply node, a Variable, an Op, a Type, a key, or ``None`` (clear)."""
        self.refresh()
        found = self._resolution_for(target)
        with self.answer():
            if found is not None and found.kind in ("apply", "variable") and self._reveal_object(found.obj):
                found = self.resolve(found.key)  # a selection is drawn, not folded away: the picture changed
            self._select(found)

    def _resolution_for(self, target: Any) -> Resolved | None:
        """What to select for ``target`` (an object, or a key of the picture: a node's, an edge's, a group's)."""
        if target is None or target == "":
            return None
        found = self.resolve(target if isinstance(target, str) else self.key_of(target))
        if found is None and isinstance(target, str):
            raise ValueError(f"GraphView.select: no node of this graph has the key {target!r}; expected an object "
                             "of the graph (an Apply node, a Variable, an Op, a Type) or a key of its picture "
                             "(view.key_of(obj): 'v0', 'a2', ...)")
        return found

    def resolve(self, key: str) -> Resolved | None:
        """What ``key`` is (its object, kind, and the keys of the picture drawing it), or ``None``.

        The one place a key is resolved (:meth:`KeyIndex.resolve` over the graph, the picture and its groups):
        a click resolves its key once, and that resolution is what :meth:`select` and the panel use.
        """
        if not key:
            return None
        found = self._keys.resolve(key, self.model, self._folds.tree.groups)
        if found is None and "/" in key:  # inside an open inner graph, and not drawn (folded there)
            obj = self._inner.obj(key)
            if isinstance(obj, Apply | Variable):
                drawn = self.model.drawn_keys(key) if self.model is not None else []
                found = Resolved(key, obj, "apply" if isinstance(obj, Apply) else "variable", drawn)
        return found

    def move(self, direction: str) -> None:
        """Move the selection along an edge: ``up`` (to an input), ``down`` (to a client), ``left``/``right``."""
        if direction not in MOVES:
            raise ValueError(f"GraphView.move: direction must be one of {MOVES}, received {direction!r}")
        target = self._near.move(self.selected, direction, self._clients)
        if target is not None:
            self.select(target)

    @property
    def max_nodes(self) -> int:
        """The budget: about how many nodes the picture draws before folding the rest into groups."""
        return self._max_nodes

    @property
    def groups(self) -> list[dict[str, Any]]:
        """The groups of the picture, drawn or open: ``[{"key", "title", "count", "expanded"}]``, outermost first.

        A group inside a folded one is not listed (expand the outer one first, or :meth:`search` for a node).
        """
        return self._folds.groups()

    @property
    def open_inner(self) -> list[str]:
        """The keys of the nodes whose inner graphs are drawn open, in the order they were opened."""
        return list(self._inner.open)

    def expand(self, group: Any) -> None:
        """Open in place what ``group`` names: a folded group (its key, ``g<n>``), or a node with an inner graph
        (the node or its key: a fused ``Composite``, an ``OpFromGraph``, an ``ifelse``; ``a5/a2`` inside one).

        A group holds at most a budget of items: its members, or sub-groups of them that expand in turn. An
        inner graph is drawn inside its node's box, its inputs wired to the outer ones. What it shows is
        brought into view (:attr:`reveal`); the selection stays.
        """
        self.refresh()
        key = group if isinstance(group, str) else self.key_of(group)
        if key not in self._folds.tree.groups and self._inner.openable(key):
            self._open_inner(key)
            return
        try:
            shown = self._folds.expand(key)
        except ValueError as err:
            raise ValueError(f"GraphView.{err}; nor is {key!r} a node with an inner graph (a fused Composite, "
                             "an OpFromGraph, an ifelse)") from None
        group = key
        found = self._folds.group(group)
        with self.answer():
            self._draw()
            keys = [i.key if isinstance(i, Group) else self._keys.key(i) for i in shown]
            self.reveal = [k for k in keys if k in self.model.nodes]
            sub = sum(1 for i in shown if isinstance(i, Group))
            self.notice = (f"expanded {found.title}: {len(shown) - sub} nodes"
                           + (f" and {sub} groups" if sub else "") + ". " + self.notice)

    def collapse(self, key: Any) -> None:
        """Fold back the group that ``key`` came from: an open group's key, or the key of a node (or a group)
        it shows. The selection stays (a selected node folded away lights the group that hides it).

        An open inner graph closes the same way: its node's key (or the node), a key drawn inside it, or a
        section's key (``a5:body``). A selection inside it moves to its node."""
        self.refresh()
        if not isinstance(key, str):
            key = self.key_of(key)
        owner = self._inner_owner(key) if key not in self._folds.tree.groups else None
        if owner is not None:
            self._close_inner(owner)
            return
        try:
            group = self._folds.collapse(key, _node_of(self.resolve(key)))
        except ValueError as err:
            raise ValueError(f"GraphView.{err}") from None
        with self.answer():
            self._draw()
            self.reveal = [group.key]
            self.notice = f"folded back {group.title}. " + self.notice

    def search(self, text: str) -> list[Any]:
        """The Apply nodes and Variables matching ``text``: by name, op text, type text or key (any case).

        An exact key match comes first, then exact names, then the graph's order (inputs first). Sets :attr:`matches` and selects
        the first match, expanding whatever group hides it; ``search("")`` clears the matches.
        """
        if not isinstance(text, str):
            raise TypeError(f"{type(self).__name__}.search: text must be a str, received {type(text).__name__}")
        self.refresh()
        found = self._find(text.strip(), names_only=False)
        with self.answer():
            self._show_matches(found, text)
            if found:
                self._reveal_object(found[0])
                self._select(self.resolve(self._search.key(found[0]) or ""))
        return found

    def _find(self, words: str, names_only: bool) -> list[Any]:
        """The search mechanism the graph view and the inspector share: matching nodes and variables."""
        return self._search.find(words, names_only)

    def _show_matches(self, found: list[Any], text: str) -> None:
        self.matches = self._search.match_rows(found, self.fgraph)
        words = text.strip()
        self.notice = "" if found or not words else f"nothing matches {words!r} (names, ops, types and keys searched)"

    def _reveal_object(self, obj: Any) -> bool:
        """Open the groups hiding ``obj`` (a node, or a variable's owner), so the picture draws it; True if it
        drew the picture again."""
        if self._folds.show(obj) and not self.focus:
            self._draw()
            return True
        return False

    # -- browser messages ----------------------------------------------------------------------------
    def _on_browser_message(self, widget: Any, content: Any, buffers: Any) -> None:
        self.refresh()  # a click on a picture of a graph that has changed since: redraw first
        super()._on_browser_message(widget, content, buffers)

    def _on_select(self, content: dict[str, Any]) -> None:
        """A click: its key is resolved once, and that resolution is selected (again only if the picture changed)."""
        key = str(content.get("key") or "")
        found = self.resolve(key)
        if key and found is None:
            return  # a click on something the graph no longer has
        with self.answer():  # the browser sends keys (the graph changed or not, refresh ran before this)
            if found is not None and not found.drawn and found.kind in ("apply", "variable") and (
                    self._reveal_object(found.obj)):  # a match or a link to a folded node: open what hides it
                found = self.resolve(found.key)  # what draws it in the new picture
            self._select(found)

    def _on_collapse(self, content: dict[str, Any]) -> None:
        self.collapse(str(content.get("key")))

    def _on_search(self, content: dict[str, Any]) -> None:
        text = str(content.get("text") or "")
        if content.get("pick", True):
            self.search(text)
            return
        with self.answer():
            self._show_matches(self._find(text.strip(), names_only=False), text)

    def _on_style(self, content: dict[str, Any]) -> None:
        if content.get("style") in LEGENDS:
            self.picture_style = content["style"]

    def _on_focus(self, content: dict[str, Any]) -> None:
        self.focus = bool(content.get("focus"))

    def _on_move(self, content: dict[str, Any]) -> None:
        if content.get("direction") in MOVES:
            if not self.selected_key:
                first = self._order[-1] if self._order else None
                if first is not None:
                    self.select(first)
                return
            self.move(content["direction"])

    def _on_expand(self, content: dict[str, Any]) -> None:
        self.expand(str(content.get("key")))

    def _on_text_mode(self, content: dict[str, Any]) -> None:
        with self.answer():
            self.text_mode = bool(content.get("on"))

    @traitlets.validate("picture_style")
    def _valid_style(self, proposal: Any) -> str:
        if proposal["value"] not in LEGENDS:
            raise traitlets.TraitError(f"GraphView.style must be 'structure' or 'compact', not {proposal['value']!r}")
        return proposal["value"]

    @traitlets.observe("picture_style", "focus")
    def _redraw(self, change: Any) -> None:
        if not self._ready:
            return
        if change["name"] == "picture_style":
            self._folds.reset()  # a node costs more drawn nodes in the structure style: fold again
        with self.answer():
            self._draw()

    # -- drawing -------------------------------------------------------------------------------------------
    def _draw(self) -> None:
        """Build the picture for the current style, focus and expanded groups, and the marks of the selection."""
        self._show_outline()
        # a node or a variable (a group, an op or a type: no focus); inside an open inner graph, its outer node
        selected = self._keys.obj(self.selected_key.split("/", 1)[0])
        focused = isinstance(selected, Apply | Variable)
        if self.focus and focused:
            self.model = self._focus_model(selected)
        else:
            self.model = build_model(self._subject, self.style, fold=self._folds.fold(self._open_shown()),
                                     key=self._keys.keys, open_inner=self._inner.open, max_nodes=self._max_nodes,
                                     inner_max_nodes=self._inner_max())
        self.svg = self.show_picture("graph", self.model)
        self.legend = LEGENDS[self.style] + state_legend(self.model)
        notes = []
        if not self.svg:
            notes.append("Graphviz is not installed: no picture (the details still work).")
        if self.model.note:
            notes.append(f"{self.model.note}: click a group to see what it holds, then 'expand'.")
        if self.focus:
            notes.append(f"focus: {len(self.model.nodes)} nodes around the selection" if focused
                         else "focus: select a node (not a group) to draw its neighbourhood")
        self.notice = " ".join(notes)
        self._select(self.resolve(self.selected_key))

    def _weight(self, node: Apply) -> int:
        """How many drawn nodes one Apply node costs in the current style."""
        # structure: its box, its outputs' boxes, an op or type circle, the boxes around the groups it sits with
        base = 1 if self.style == "compact" else 3 + len(node.outputs)
        return base + self._inner_costs().get(id(node), 0) if self._inner.open else base

    def _show_outline(self) -> None:
        """Set :attr:`outline` from the whole graph (not the folded picture), again only when the graph changed
        (the outer rows, walked once per version) or what is open did (the open nodes' rows added to them)."""
        fg = self._subject.fgraph
        base = (self._subject, fg.version if fg is not None else 0)
        if getattr(self, "_outline_base", (None,))[0] != base:
            pairs = outline_pairs(self._subject, "compact", key=self._keys.keys, caller=type(self).__name__)
            self._outline_base = (base, pairs)
        stamp = (base, tuple(self._inner.open))
        if getattr(self, "_outline_stamp", None) != stamp:
            self._outline_stamp = stamp
            pairs = self._outline_base[1]
            if self._inner.open:
                pairs = open_outline(pairs, self._keys.keys, "compact", self._inner.open, fg, type(self).__name__)
            self.outline = [row for row, _ in pairs]

    def _focus_model(self, selected: Any) -> GraphModel:
        region = self._near.region(selected, self._radius)

        def uses(var: Variable) -> int:  # the clients a cut edge goes on to: never drawn as graph outputs
            return sum(1 for c, _ in self._clients(var) if c == "output" or c not in region)

        return build_part([n for n in self._order if n in region], self.style, self._keys.keys,
                          self._subject.fgraph, self._subject.outputs, uses=uses, open_inner=self._inner.open)

    def _select(self, found: Resolved | None) -> None:
        """Select what a key resolved to (``None``: nothing): its marks, the panel (inside an :meth:`answer`)."""
        if found is None:
            self.selected_key = ""
            self.marks = {}
            self.reveal = []
            self.panel = {"rows": [], "hint": "Click a node (or an arrow) to see what it is, its inputs and its clients."}
            return
        key, obj = found.key, found.obj
        self.selected_key = key
        inside = self._inner_selection(key, obj) if "/" in key and found.kind in ("apply", "variable") else None
        if inside is not None:  # inside an open inner graph: its inputs and clients there
            self.marks, rows, link, title = inside
        else:
            self.marks = selection_marks(self._keys, self.model, obj, key, clients=self._clients) if (
                self.model is not None) else {}
            link = self._link_key
        group = self._folds.group(key) if found.kind == "group" else None
        actions: list[dict[str, str]] = []
        if found.kind == "group":
            rows = describe(obj)
            title = group.title if group is not None else title_of(obj, "group")
            if (group is None and "/" not in key) or (group is not None and group.key not in self._folds.opened):
                actions.append({"text": f"expand {title}", "key": key, "kind": "expand"})
        elif inside is None:
            rows = describe(obj, self.fgraph, self._order, self._subject.outputs)
            rows += shared_use_rows(obj)  # a shared variable: the functions alive that update it or only read it
            title = title_of(obj, kind_of(obj, self.fgraph))
        if found.kind in ("apply", "variable"):
            rows, link = self._inner_rows(key, obj, rows, link, actions)
        if not self.focus:
            outer = self._folds.to_close(key, _node_of(found))
            if outer is not None:
                actions.append({"text": f"fold back {outer.title}", "key": outer.key, "kind": "collapse"})
        # into view: the node drawing the selection, else an arrow carrying it, else the group hiding it
        drawn = found.drawn
        if not drawn:  # a variable whose arrows all go into folded groups: the box lit for it
            drawn = [k for k, classes in self.marks.items() if "selected" in classes]
        self.reveal = sorted(drawn, key=lambda k: k not in self.model.nodes)[:1] if self.model is not None else []
        self.panel = {"title": title, "rows": [r.as_json(link) for r in rows], "actions": actions}

    def _clients(self, var: Variable) -> list[tuple[Any, int]]:
        fg = self.fgraph
        if fg is not None and var in fg:
            return list(fg.clients[var])
        users = [(n, i) for n in self._order for i, inp in enumerate(n.inputs) if inp is var]
        users += [("output", k) for k, o in enumerate(self._subject.outputs) if o is var]
        return users

    def _full_key(self, obj: Any) -> str | None:
        """The key of ``obj`` in the whole graph (the graph's own key where there is a graph), or ``None``."""
        key = self._keys.key(obj)
        if key is None and self.model is not None and not isinstance(obj, Apply | Variable):
            try:  # an op or a type: drawn under the picture's own key (structure style)
                key = self.model.key_of(obj)
            except KeyError:
                return None
        return key

    def _link_key(self, obj: Any) -> str | None:
        return self._full_key(obj)

    def _object(self, key: str) -> Any:
        found = self.resolve(key)
        return found.obj if found is not None else None

    def _edges_carrying(self, key: str) -> list[str]:
        if self.model is None:
            return []
        return [e.key for e in self.model.edges if e.var == key]

    # -- displays ------------------------------------------------------------------------------------------
    def summary(self) -> str:
        what = _WHAT[self._subject.kind]
        n = len(self._order)
        text = f"GraphView of {what}: {n} node{'s' if n != 1 else ''}, {self.style} style{self._inner_summary()}"
        obj = self.selected
        if obj is not None:
            text += f", selected {title_of(obj, kind_of(obj, self.fgraph))}"
        return text

    def markdown(self) -> str:
        what, n = _WHAT[self._subject.kind], len(self._order)
        lines = [f"**GraphView** of {what}: {n} node{'s' if n != 1 else ''}, {self.style} style", ""]
        if self.model is not None and self.model.note:
            lines += [f"{code_span(self.model.note, table=False)}", ""]
        lines += self._inner_markdown()
        details = self.details
        if details:
            obj = self.selected
            lines += [f"selected: {code_span(title_of(obj, kind_of(obj, self.fgraph)), table=False)}", "", "| | |", "|---|---|"]
            for label, value in details.items():
                texts = value if isinstance(value, list) else [str(value)]
                lines.append(f"| {label} | {', '.join(code_span(t) for t in texts) or '-'} |")
            lines.append("")
        lines += ["Outline (the graph as text):", "", outline_markdown(self.outline, self.selected_key, self.marks), ""]
        lines.append(f"Legend: {LEGENDS[self.style]}{state_legend(self.model)}.")
        return "\n".join(lines)


def _node_of(found: Resolved | None) -> Apply | None:
    """The Apply node a resolved key draws (a variable's owner), or ``None`` (a group, an op, a type, nothing)."""
    obj = found.obj if found is not None else None
    return obj if isinstance(obj, Apply) else obj.owner if isinstance(obj, Variable) else None


_WHAT = {"variable": "a Variable", "apply": "an Apply node", "list": "a list of variables",
         "fgraph": "a FunctionGraph", "function": "a compiled Function"}
