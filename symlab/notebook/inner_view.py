"""The graph view's half that opens inner graphs in place: open, close, and what the panel says inside one.

:class:`~symlab.notebook.graph_view.GraphView` (and the clients inspector built on it) mixes in
:class:`InnerGraphView`. ``view.expand(node_or_key)`` opens a node with an inner graph (a fused
``Composite``, an ``OpFromGraph``, an ``ifelse``) inside its box; ``view.collapse(key)`` closes it (its
key, a key drawn inside it, or a section's key). The open nodes' inner graphs count toward the picture's
budget (:meth:`InnerGraphView._weight` adds them to their node's weight, and the outer graph is folded
again when it no longer fits), and a big inner graph is itself folded. The browser's expand affordance
sends the node's key; Python decides what it is.

>>> import symlab
>>> import symlab.tensor as st
>>> from symlab.notebook.graph_view import GraphView
>>> x, y = st.dvector("x"), st.dvector("y")
>>> f = symlab.function([x, y], st.exp(x) * y + x)
>>> view = GraphView(f)
>>> view.expand("a8")
>>> view.open_inner, view.notice.split(". ")[0]
(['a8'], 'opened Elemwise{Composite{((exp(i0) * i1) + i0)},no_inplace}: body (6 drawn)')
>>> view.select("a8/a2")
>>> view.details["inside"], view.details["clients"]
(['body of Elemwise{Composite{((exp(i0) * i1) + i0)},no_inplace} [a8]'], ['(mul(exp.0, i1), 0)'])
>>> view.collapse("a8/a2")
>>> view.open_inner, view.selected_key
([], 'a8')
"""

from __future__ import annotations

from typing import Any

from symlab.graph.basic import Apply
from symlab.graph.inner_graph import has_inner_graph, inner_sections
from symlab.notebook.details import Row, describe, kind_of, title_of
from symlab.notebook.inner_nodes import InnerIndex, inner_marks, section_text
from symlab.notebook.node_search import NodeSearch
from symlab.printing.opening import MIN_INNER_NODES, inner_size

__all__ = ["InnerGraphView"]


class InnerGraphView:
    """What a graph view does with inner graphs (mixed into :class:`~symlab.notebook.graph_view.GraphView`)."""

    # -- budget --------------------------------------------------------------------------------------------
    def _inner_max(self) -> int:
        """The most drawn nodes one open inner graph uses before it is folded."""
        return max(MIN_INNER_NODES, self._max_nodes // 2)

    def _inner_costs(self) -> dict[int, int]:
        """``id(node) -> drawn nodes its open inner graphs add`` (outer open nodes only: nested ones are inside
        their outer node's share)."""
        if self._costs is None:
            costs: dict[int, int] = {}
            for key in self._inner.open:
                node = self._keys.obj(key) if "/" not in key else None
                if isinstance(node, Apply):
                    owned = [s for s in inner_sections(node, self.fgraph) if s.owned]
                    costs[id(node)] = sum(min(self._inner_max(), inner_size(s, self.style)) for s in owned)
            self._costs = costs
        return self._costs

    def _open_shown(self) -> list[Any]:
        """The outer nodes an open inner graph needs drawn: the open nodes and their branches' regions."""
        shown: list[Any] = []
        for key in self._inner.open:
            node = self._keys.obj(key) if "/" not in key else None
            if isinstance(node, Apply):
                shown.append(node)
                shown.extend(n for s in inner_sections(node, self.fgraph) if not s.owned for n in s.nodes)
        return shown

    def _inner_changed(self) -> None:
        """The open set changed: the weights, the search over inner objects, and the fold if it no longer fits."""
        self._costs = None
        self._search = NodeSearch(self._keys, self._inner.items)
        self._folds.refit(self._open_shown())

    # -- opening and closing ----------------------------------------------------------------------------------
    def _open_inner(self, key: str) -> None:
        self._inner.open_node(key)
        self._inner_changed()
        with self.answer():
            self._draw()
            model = self.model
            sections = [s for s in model.sections if s.owner == key]
            members = [m for s in sections for m in s.members]
            self.reveal = [k for k in [key, *members] if k in model.nodes]
            node = self._inner.obj(key)
            parts = ", ".join(f"{s.caption} ({len(s.members)} drawn)" for s in sections)
            what = f"{node.op}: {parts}" if sections else f"{node.op} (not drawn here: it is folded away)"
            self.notice = f"opened {what}. " + self.notice

    def _close_inner(self, owner: str) -> None:
        node = self._inner.obj(owner)
        self._inner.close(owner)
        self._inner_changed()
        with self.answer():
            if self.selected_key.startswith(owner + "/"):
                self.selected_key = owner  # its box stands for what was selected inside
            self._draw()
            self.reveal = [owner]
            self.notice = f"closed the inner graph of {node.op if node is not None else owner}. " + self.notice

    def _inner_owner(self, key: str) -> str | None:
        """The open node ``key`` closes: itself, the node a section or a drawn key is in, or ``None``."""
        opened = self._inner.open
        if key in opened:
            return key
        head = key.split(":", 1)[0]
        if ":" in key and head in opened:
            return head
        model = self.model
        if model is not None and key in model.container:
            return model.section(model.container[key]).owner
        parts = key.split("/")
        for n in range(len(parts) - 1, 0, -1):
            prefix = "/".join(parts[:n])
            if prefix in opened:
                return prefix
        return None

    # -- the panel -----------------------------------------------------------------------------------------------
    def _inner_selection(self, key: str, obj: Any) -> tuple[dict[str, list[str]], list[Row], Any, str] | None:
        """``(marks, rows, link, title)`` of a selection inside an open inner graph (its inputs and clients in
        that graph, its links to keys there), or ``None`` when ``key`` is not inside one."""
        place = self._inner.find(key)
        if place is None or self.model is None:
            return None
        index = InnerIndex(place)
        rows = describe(obj, place.fgraph) if place.fgraph is not None else describe(obj, None, [], ())

        def link(o: Any) -> str | None:
            return index.key(o) or self._link_key(o)

        return inner_marks(place, self.model, key), rows, link, title_of(obj, kind_of(obj, place.fgraph))

    def _inner_rows(self, key: str, obj: Any, rows: list[Row], link: Any,
                    actions: list[dict[str, str]]) -> tuple[list[Row], Any]:
        """Add to a selection's panel where it is (the open nodes and sections holding it) and the actions that
        open or close an inner graph; the link function knows the nodes holding it."""
        model = self.model
        owners: dict[int, str] = {}
        if model is not None:
            path = [s.key for s in model.sections_of(key)] if key in model.container else []
            place = self._inner.find(key) if not path and "/" in key else None
            if place is not None and f"{place.owner_key}:{place.section.label}" in {s.key for s in model.sections}:
                path = [s.key for s in model.sections_of(place.owner_key)] + [
                    f"{place.owner_key}:{place.section.label}"]
            items = []
            for skey in path:
                section = model.section(skey)
                owner = model.obj(section.owner)
                owners[id(owner)] = section.owner
                items.append((section_text(model, skey), owner))
            if items:
                rows = [rows[0], Row("inside", None, items), *rows[1:]]
            if path:
                owner_key = model.section(path[-1]).owner
                actions.append({"text": f"close the inner graph of {model.obj(owner_key).op}", "key": owner_key,
                                "kind": "collapse"})
        if isinstance(obj, Apply) and has_inner_graph(obj.op):
            if key in self._inner.open:
                actions.insert(0, {"text": f"close the inner graph of {obj.op}", "key": key, "kind": "collapse"})
            elif self._inner.openable(key):
                actions.insert(0, {"text": f"open the inner graph of {obj.op}", "key": key, "kind": "expand"})

        def linked(o: Any) -> str | None:
            return owners.get(id(o)) or link(o)

        return rows, linked

    def _inner_summary(self) -> str:
        """``, open: a8`` for the view's one-line summary (empty when nothing is open)."""
        return f", open: {', '.join(self._inner.open)}" if self._inner.open else ""

    def _inner_markdown(self) -> list[str]:
        """The Markdown lines saying which inner graphs are open, each section and how many nodes it draws."""
        model = self.model
        if not self._inner.open or model is None:
            return []
        from symlab.notebook.widget import code_span

        lines = ["Open inner graphs:", ""]
        for key in self._inner.open:
            node = self._inner.obj(key)
            parts = [f"{s.caption}{' (not taken)' if s.state == 'skipped' else ''}: {len(s.members)} drawn"
                     for s in model.sections if s.owner == key]
            text = f"[{key}] {node.op}" if node is not None else f"[{key}]"
            lines.append(f"- {code_span(text, table=False)}: {code_span('; '.join(parts) or 'folded away', table=False)}")
        return [*lines, ""]
