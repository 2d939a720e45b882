"""``ClientsInspector``: where each variable is used, on a picture that follows the graph as it changes.

Seed 000 teaches ``clients``: every place a variable is used, ``(node, i)`` with ``node.inputs[i] is var``
or ``('output', i)`` with ``fgraph.outputs[i] is var``; an empty list means the variable is not used.
The inspector shows them. Pick a variable (click it, or type its name in the search box); the panel lists
its clients, each one lit in the picture and a link to walk on to; unused variables are marked.

It is *live*: when another cell changes the graph (``fgraph.replace``, a rewrite run on it,
``fgraph.remove_output``...), it redraws once, after that cell, and says what changed since it last drew:
new clients, lost clients, nodes that came and nodes that left. The selection stays while its variable is
in the graph. A change that was refused and rolled back never committed: it shows nothing.

Open one with ``fgraph.inspect()``, ``f.inspect()`` for a compiled function, or
``ClientsInspector(fgraph_or_function)``. Every interaction has its Python twin:

>>> import symlab
>>> import symlab.tensor as st
>>> from symlab.graph.fg import FunctionGraph
>>> x, y = st.dvector("x"), st.dvector("y")
>>> fg = FunctionGraph([x, y], [st.exp(x) * y + x])
>>> inspector = ClientsInspector(fg)
>>> inspector.select("x")
>>> inspector.clients
[(Elemwise{exp,no_inplace}(x), 0), (Elemwise{add,no_inplace}(Elemwise{mul,no_inplace}.0, x), 1)]
>>> exp_out = inspector.clients[0][0].outputs[0]
>>> fg.replace(exp_out, st.sin(fg.inputs[0]), reason="by hand")      # what another cell does
>>> print(inspector.changes)
version 0 -> 1: 1 change (by hand)
  x: new client (Elemwise{sin,no_inplace}(x), 0)
  x: lost client (Elemwise{exp,no_inplace}(x), 0)
  node came: Elemwise{sin,no_inplace}(x)
  node left: Elemwise{exp,no_inplace}(x)
>>> inspector
ClientsInspector of a FunctionGraph: 3 nodes, selected input x with 2 clients, following the graph (version 1)
>>> inspector.close()
"""

from __future__ import annotations

import sys
import weakref
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import traitlets

from symlab.graph.basic import Apply, Variable
from symlab.graph.changes import Feature, GraphChange
from symlab.notebook.details import kind_of, title_of
from symlab.notebook.folds import VIEW_MAX_NODES
from symlab.notebook.graph_view import GraphView
from symlab.notebook.keys import Resolved
from symlab.notebook.shared_use import SharedUse, shared_use
from symlab.notebook.widget import code_span
from symlab.printing.subject import subject_of

__all__ = ["ClientChanges", "ClientsInspector"]

Client = tuple[Any, int]


def client_text(client: Client) -> str:
    """A client as seed 000 prints it: ``(node, i)`` or ``('output', i)``."""
    node, i = client
    return f"('output', {i})" if node == "output" else f"({node}, {i})"


@dataclass(frozen=True)
class ClientChanges:
    """What changed in a graph between two pictures of it.

    ``versions`` are the graph's versions then and now, ``reasons`` the reasons of the committed changes
    between them (with how many of each), ``new_clients``/``lost_clients`` the ``(variable, client)`` pairs
    gained and lost by variables that were in both pictures, ``nodes_added``/``nodes_left`` the Apply
    nodes that came and left, ``roots_left`` the constants that left. Empty (false) when nothing changed.
    """

    versions: tuple[int, int] = (0, 0)
    reasons: tuple[tuple[str, int], ...] = ()
    new_clients: tuple[tuple[Variable, Client], ...] = ()
    lost_clients: tuple[tuple[Variable, Client], ...] = ()
    nodes_added: tuple[Apply, ...] = ()
    nodes_left: tuple[Apply, ...] = ()
    roots_left: tuple[Variable, ...] = field(default=())

    def __bool__(self) -> bool:
        return self.versions[0] != self.versions[1]

    @property
    def count(self) -> int:
        """How many committed changes there were."""
        return sum(n for _, n in self.reasons)

    def title(self) -> str:
        if not self:
            return "no change since the graph was first drawn"
        n = self.count
        why = ", ".join(reason if k == 1 else f"{reason} ×{k}" for reason, k in self.reasons)
        return f"version {self.versions[0]} -> {self.versions[1]}: {n} change{'s' if n != 1 else ''} ({why})"

    def lines(self) -> Iterator[tuple[str, str, Any]]:
        """``(kind, text, object to link or None)`` for each fact, in the order the panel lists them."""
        for var, client in self.new_clients:
            yield "new", f"{var}: new client {client_text(client)}", client[0] if client[0] != "output" else var
        for var, client in self.lost_clients:
            yield "lost", f"{var}: lost client {client_text(client)}", var
        for node in self.nodes_added:
            yield "added", f"node came: {node}", node
        for node in self.nodes_left:
            yield "left", f"node left: {node}", None
        for var in self.roots_left:
            yield "left", f"constant left: {var}", None

    def __str__(self) -> str:
        return "\n".join([self.title(), *(f"  {text}" for _, text, _ in self.lines())])


@dataclass(frozen=True)
class _Snapshot:
    """The clients of a graph by stable keys, as a picture showed them (to compare with a later one)."""

    version: int
    clients: dict[str, frozenset[tuple[str, int]]]
    nodes: dict[str, Apply]
    variables: dict[str, Variable]

    @classmethod
    def of(cls, fg: Any) -> _Snapshot:
        key = fg.key
        clients = {key(v): frozenset(("output" if c[0] == "output" else key(c[0]), c[1]) for c in uses)
                   for v, uses in fg.clients.items()}
        # in key order (the order objects entered the graph), so what changed is listed the same way every run
        nodes = sorted(((key(n), n) for n in fg.apply_nodes), key=lambda kv: int(kv[0][1:]))
        variables = sorted(((key(v), v) for v in fg.clients), key=lambda kv: int(kv[0][1:]))
        return cls(fg.version, clients, dict(nodes), dict(variables))

    def compared_to(self, now: _Snapshot, reasons: Counter[str]) -> ClientChanges:
        def resolve(client: tuple[str, int], snapshot: _Snapshot) -> Client:
            where, i = client
            return (where, i) if where == "output" else (snapshot.nodes[where], i)

        def order(pair: tuple[str, tuple[str, int]]) -> tuple[int, int, int]:
            (var, (where, i)) = pair
            return int(var[1:]), -1 if where == "output" else int(where[1:]), i

        new: list[tuple[str, tuple[str, int]]] = []
        lost: list[tuple[str, tuple[str, int]]] = []
        for var, before in self.clients.items():
            after = now.clients.get(var)
            if after is None:
                continue
            new.extend((var, c) for c in after - before)
            lost.extend((var, c) for c in before - after)
        return ClientChanges(
            versions=(self.version, now.version),
            reasons=tuple(sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))),
            new_clients=tuple((now.variables[v], resolve(c, now)) for v, c in sorted(new, key=order)),
            lost_clients=tuple((now.variables[v], resolve(c, self)) for v, c in sorted(lost, key=order)),
            nodes_added=tuple(n for k, n in now.nodes.items() if k not in self.nodes),
            nodes_left=tuple(n for k, n in self.nodes.items() if k not in now.nodes),
            roots_left=tuple(v for k, v in self.variables.items()
                             if v.owner is None and k not in now.variables),
        )


class InspectorFeature(Feature):
    """The inspector's feature, held weakly by the graph: counts committed changes and asks for a redraw.

    It never draws: it only notes the change and, inside IPython, asks for one redraw after the cell
    (so a rewrite's thousands of changes cost a counter increment each, and nothing is drawn half-way).
    """

    def __init__(self, inspector: ClientsInspector) -> None:
        self._inspector = weakref.ref(inspector)
        self.reasons: Counter[str] = Counter()
        #: A redraw was asked for since the last picture (asked once, however many changes follow).
        self.asked = False

    def on_change_end(self, fgraph: Any, change: GraphChange) -> None:
        self.reasons[change.reason or "change"] += 1
        if not self.asked:
            self.asked = True
            inspector = self._inspector()
            if inspector is not None:
                inspector._after_this_cell()


def _shell() -> Any:
    """The running IPython shell, if IPython is loaded and running (never imported here)."""
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None else None


class ClientsInspector(GraphView):
    """A live picture of a FunctionGraph's clients; see the module documentation."""

    _script_view = "inspector"

    #: What changed since the previous picture: ``{"title", "rows": [{"kind", "text", "key"?}]}``.
    changes_panel = traitlets.Dict().tag(sync=True)
    #: True while the inspector follows the graph (False after :meth:`close`).
    live = traitlets.Bool(True).tag(sync=True)

    def __init__(self, obj: Any, select: Any = None, style: str = "compact", max_nodes: int = VIEW_MAX_NODES,
                 focus_radius: int = 2) -> None:
        subject = subject_of(obj, "ClientsInspector", kinds=("fgraph", "function"))
        self._fgraph = subject.fgraph
        self._snapshot = _Snapshot.of(self._fgraph)
        self._changes = ClientChanges((self._fgraph.version, self._fgraph.version))
        self._hook: tuple[Any, Any] | None = None
        super().__init__(obj, style=style, max_nodes=max_nodes, focus_radius=focus_radius)
        self._watcher = InspectorFeature(self)
        self._fgraph.attach_feature(self._watcher, weak=True)
        self._show_changes()
        if select is not None:
            self.select(select)

    # -- following the graph ------------------------------------------------------------------------------
    def _after_this_cell(self) -> None:
        """Ask IPython for one redraw after the running cell (once, however many changes the cell makes)."""
        if self._hook is not None or not self.live:
            return
        shell = _shell()
        if shell is None:  # a script: the next read or click redraws
            return
        ref = weakref.ref(self)

        def after_cell(result: Any = None) -> None:
            try:
                shell.events.unregister("post_run_cell", after_cell)
            except ValueError:  # close() took it off during this very event (the cell was run again): nothing to do
                return
            inspector = ref()
            if inspector is not None:
                inspector._hook = None
                inspector.refresh()

        shell.events.register("post_run_cell", after_cell)
        self._hook = (shell, after_cell)

    def refresh(self) -> bool:
        """Redraw if the graph changed since the last picture, showing what changed (True if it redrew)."""
        if not self.live:
            return False
        return super().refresh()

    def _index(self) -> None:
        super()._index()
        if not hasattr(self, "_watcher"):  # the first picture: nothing to compare with
            return
        now = _Snapshot.of(self._fgraph)
        self._changes = self._snapshot.compared_to(now, self._watcher.reasons)
        self._snapshot = now
        self._watcher.reasons = Counter()
        self._watcher.asked = False

    def _draw(self) -> None:
        super()._draw()
        if hasattr(self, "_watcher"):
            self._show_changes()

    def _show_changes(self) -> None:
        changes = self._changes
        rows = []
        for kind, text, obj in changes.lines():
            row: dict[str, Any] = {"kind": kind, "text": text}
            key = self._full_key(obj) if obj is not None else None
            if key:
                row["key"] = key
            rows.append(row)
        self.changes_panel = {"title": f"since the last picture: {changes.title()}" if changes else "",
                              "rows": rows}

    def _select(self, found: Resolved | None) -> None:
        super()._select(found)
        marks = {k: list(v) for k, v in self.marks.items()}

        def mark(obj: Any, cls: str) -> None:
            k = self._full_key(obj)
            if k is None or self.model is None:
                return
            for drawn in [*self.model.drawn_keys(k), *self._edges_carrying(k)]:
                classes = marks.setdefault(drawn, [])
                if cls not in classes:
                    classes.append(cls)

        fg = self._fgraph
        for var, uses in fg.clients.items():
            if not uses:
                mark(var, "unused")
        for node in self._changes.nodes_added:
            if node in fg:
                mark(node, "new")
        for _, (node, _i) in self._changes.new_clients:
            if node != "output" and node in fg:
                mark(node, "new")
        self.marks = marks

    # -- reading ---------------------------------------------------------------------------------------------
    @property
    def fgraph(self) -> Any:
        """The FunctionGraph the inspector follows."""
        return self._fgraph

    @property
    def clients(self) -> list[Client] | None:
        """The clients of the selected variable now (of an Apply node's outputs), ``None`` if nothing is selected.

        Live: read from the graph as it is (the picture is redrawn first if the graph changed).
        """
        self.refresh()
        obj = self.selected
        place = self._inner.find(self.selected_key) if obj is not None else None
        fg = place.fgraph if place is not None and place.fgraph is not None else self._fgraph  # inside an inner graph
        if isinstance(obj, Variable):
            return list(fg.clients[obj])
        if isinstance(obj, Apply):
            return [c for out in obj.outputs for c in fg.clients[out]]
        return None

    @property
    def shared_use(self) -> SharedUse | None:
        """For a selected shared variable, the compiled functions alive that update it (for a generator: advance
        it) and those that only read it (a generator: they draw the same numbers each call); ``None`` otherwise.

        A read: nothing is called or advanced (:func:`~symlab.notebook.shared_use.shared_use`).
        """
        self.refresh()
        obj = self.selected
        if not isinstance(obj, Variable) or obj.owner is not None or getattr(obj, "container", None) is None:
            return None
        return shared_use(obj)

    @property
    def changes(self) -> ClientChanges:
        """What changed between the previous picture and this one (the picture is redrawn first if stale)."""
        self.refresh()
        return self._changes

    @property
    def unused(self) -> list[Variable]:
        """The graph's variables that nothing uses (empty clients lists), in key order."""
        self.refresh()
        fg = self._fgraph
        return sorted((v for v, uses in fg.clients.items() if not uses), key=lambda v: int(fg.key(v)[1:]))

    def search(self, text: str) -> list[Variable]:
        """The graph's variables whose name contains ``text`` (any case), in key order; shown as links too.

        The graph view's search (:meth:`GraphView.search`) by name only: it lists the matches
        (:attr:`matches`) and does not move the selection (the box's Enter, ``pick``, selects the first).
        """
        if not isinstance(text, str):
            raise TypeError(f"ClientsInspector.search: text must be a str, received {type(text).__name__}")
        self.refresh()
        fg = self._fgraph
        found = [v for v in self._find(text.strip(), names_only=True)
                 if isinstance(v, Variable) and v.name is not None and text.strip().lower() in v.name.lower()]
        # the graph's variables in key order, then those inside open inner graphs (``a5/v0``) by key
        found.sort(key=lambda v: (0, int(fg.key(v)[1:]), "") if v in fg else (1, 0, self._search.key(v) or ""))
        with self.answer():
            self._show_matches(found, text)
            if not found and text.strip():
                self.notice = f"no variable named like {text.strip()!r}"
        return found

    def select(self, target: Any) -> None:
        """Select ``target``: a Variable, an Apply node, a variable's name, a key, or ``None`` (clear).

        A name must be unique in the graph; a key (``v3``, ``a7``) is what the picture's clicks send.
        """
        if isinstance(target, str) and target:
            self.refresh()
            named = [v for v in self._fgraph.clients if v.name == target]
            if len(named) > 1:
                keys = ", ".join(self._fgraph.key(v) for v in named)
                raise ValueError(f"ClientsInspector.select: {len(named)} variables are named {target!r} "
                                 f"(keys {keys}): select one by its key or the variable itself")
            if named:
                target = named[0]
            elif "/" in target and self._inner.obj(target) is not None:
                pass  # a key inside an open inner graph (``a5/v0``)
            else:
                try:
                    self._fgraph.by_key(target)
                except KeyError:
                    raise ValueError(f"ClientsInspector.select: no variable of this graph is named {target!r}, "
                                     "and no node or variable has that key") from None
        super().select(target)

    # -- browser messages (a click sends a key: GraphView's _on_select) ---------------------------------------
    def _on_search(self, content: dict[str, Any]) -> None:
        found = self.search(str(content.get("text") or ""))
        if content.get("pick") and found:
            with self.answer():
                self._reveal_object(found[0])
                self._select(self.resolve(self._search.key(found[0]) or ""))

    # -- ending ----------------------------------------------------------------------------------------------
    def close(self) -> None:
        """Stop following the graph: detach from it, forget the pending redraw, close the widget."""
        watcher = getattr(self, "_watcher", None)  # None: the constructor failed before attaching it
        if self.live and watcher is not None:
            self.live = False
            if watcher in self._fgraph.features:
                self._fgraph.remove_feature(watcher)
            if self._hook is not None:
                shell, callback = self._hook
                self._hook = None
                try:
                    shell.events.unregister("post_run_cell", callback)
                except ValueError:  # already gone
                    pass
        super().close()

    # -- displays --------------------------------------------------------------------------------------------
    def summary(self) -> str:
        what = "a compiled Function" if self._subject.kind == "function" else "a FunctionGraph"
        n = len(self._order)
        text = f"ClientsInspector of {what}: {n} node{'s' if n != 1 else ''}"
        obj = self.selected
        if obj is not None:
            text += f", selected {title_of(obj, kind_of(obj, self._fgraph))}"
            if isinstance(obj, Variable) and obj in self._fgraph:
                k = len(self._fgraph.clients[obj])
                text += f" with {k} client{'s' if k != 1 else ''}" if k else " (unused: no clients)"
        state = f"following the graph (version {self._fgraph.version})" if self.live else "closed"
        return f"{text}, {state}{self._inner_summary()}"

    def markdown(self) -> str:
        what = "a compiled Function" if self._subject.kind == "function" else "a FunctionGraph"
        n = len(self._order)
        state = f"following the graph (version {self._fgraph.version})" if self.live else "closed"
        lines = [f"**ClientsInspector** of {what}: {n} node{'s' if n != 1 else ''}, {state}", ""]
        obj = self.selected
        if isinstance(obj, Variable | Apply):
            uses = [(obj, c) for c in self.clients or []]  # an inner graph's own clients inside an open node
            lines += [f"clients of {code_span(title_of(obj, kind_of(obj, self._fgraph)), table=False)}:", ""]
            lines += [f"- {code_span(client_text(c), table=False)}" for _, c in uses] or ["- none: `[]`, the variable is unused"]
            lines.append("")
            use = self.shared_use
            if use is not None:
                lines += [code_span(str(use), table=False), ""]
        lines += self._inner_markdown()
        unused = [v for v, uses in self._fgraph.clients.items() if not uses]
        if unused:
            lines += ["unused (no clients): " + ", ".join(code_span(str(v), table=False) for v in unused), ""]
        if self._changes:
            lines += [f"since the last picture: {code_span(self._changes.title(), table=False)}", ""]
            lines += [f"- {kind}: {code_span(text, table=False)}" for kind, text, _ in self._changes.lines()]
            lines.append("")
        return "\n".join(lines).rstrip() + "\n"
