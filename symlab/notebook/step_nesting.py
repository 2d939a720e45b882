"""A rewrite stepper's inner graphs: nodes drawn open in its panes, and steppers over the rewrites inside a node.

:class:`InnerSteps` is the part of :class:`~symlab.notebook.stepper.RewriteStepper` that opens inner graphs.
``stepper.expand(node_or_key)`` draws a node with an inner graph open in both panes at every step (its
inner graph, or an ``ifelse``'s branches, inside its box); ``stepper.collapse(key)`` closes it.
``stepper.step_into(node_or_key)`` returns a new stepper over the rewrite of that node's inner graph
(:func:`~symlab.notebook.step_inner.inner_rewrite`: the same rules, on a copy), whose ``parent`` is the
stepper it came from; ``inner.step_out()`` gives the parent back.

In the widget, the inner stepper is shown *in place*: the widget on screen (the outermost stepper's) shows
the inner stepper's steps, pictures and card, with a bar above them naming where it is (``nest``: one entry
per level) and a "back" button (message ``{"type": "step_out"}``); its controls, and the outer stepper's
Python twins (``outer.step = 3``, ``outer.next()``), then drive the inner stepper (``outer.shown``). Back at
the outer stepper, the step it showed is shown again.

>>> import symlab.tensor as st
>>> from symlab.notebook.stepper import RewriteStepper
>>> x = st.dvector("x")
>>> outer = RewriteStepper(st.exp(x) * 2 + x)
>>> outer.step = outer.total
>>> fused = outer.trace.fgraph.toposort()[0]
>>> inner = outer.step_into(fused)
>>> inner.parent is outer, outer.shown is inner, [level["title"] for level in outer.nest]
(True, True, ['the graph', 'inside a11: Composite{((exp(i0) * 2) + i0)}'])
>>> inner.step_out() is outer, outer.shown is outer, outer.step == outer.total
(True, True, True)
"""

from __future__ import annotations

from typing import Any

from symlab.graph.basic import Apply
from symlab.graph.inner_graph import has_inner_graph
from symlab.notebook.inner_values import inner_op
from symlab.notebook.step_inner import inner_node, inner_rewrite

__all__ = ["MIRRORED", "InnerSteps"]

#: The traits the widget on screen copies from the inner stepper it shows in place.
MIRRORED = ("total", "steps", "step", "compare", "full", "before_svg", "after_svg", "before_title", "after_title",
            "card", "notice", "diff", "reveal_before", "reveal_after", "open_keys")


class InnerSteps:
    """Open nodes, and steppers into inner graphs, for a rewrite stepper (see the module documentation)."""

    trace: Any
    step: int
    total: int

    def _init_inner(self) -> None:
        self.parent: Any = None
        self._open: tuple[str, ...] = ()
        self._stack: list[Any] = []  # the inner steppers this widget shows in place, outermost first
        self._saved: dict[str, Any] = {}  # what this widget showed before stepping in
        self._mirroring = False
        self._where = "the graph"

    # -- open nodes ---------------------------------------------------------------------------------
    @property
    def open_inner(self) -> list[str]:
        """The keys of the nodes drawn open in the panes (their inner graphs inside them)."""
        return list(self._open)

    def _key_for(self, target: Any, caller: str) -> str:
        """The key of the node ``target`` names (a node of any step, a copy the stepper drew, or a key)."""
        if isinstance(target, str):
            key = target
        elif isinstance(target, Apply):
            try:
                live = self._cursor.origin(target)
            except KeyError:
                live = target
            try:
                key = self.trace.key(live)
            except KeyError:
                raise ValueError(f"RewriteStepper.{caller}: {target!s:.80} is not a node of this rewrite") from None
        else:
            raise TypeError(f"RewriteStepper.{caller}: expected an Apply node of this rewrite or its key, received "
                            f"{type(target).__name__}")
        node = inner_node(self.trace, key)
        if node is None:
            raise ValueError(f"RewriteStepper.{caller}: no node of this rewrite has the key {key!r}")
        if not has_inner_graph(node.op):
            raise ValueError(f"RewriteStepper.{caller}: {node.op} ({key}) has no inner graph (expected a fused "
                             "Composite, an OpFromGraph, a Scan or an ifelse)")
        return key

    def expand(self, target: Any) -> None:
        """Draw the node ``target`` (a node, or its key; ``a5/a2`` inside an open one) open in both panes."""
        key = self._key_for(target, "expand")
        parts = key.split("/")
        wanted = ["/".join(parts[:k]) for k in range(1, len(parts) + 1)]
        self._open = tuple(sorted(set(self._open) | set(wanted), key=lambda k: (k.count("/"), k)))
        self._redraw_open([key])

    def collapse(self, key: Any) -> None:
        """Close the open node ``key`` (or the innermost open node holding the key ``key``) and those inside it."""
        if isinstance(key, Apply):
            key = self._key_for(key, "collapse")
        holders = [k for k in self._open if key == k or str(key).startswith(k + "/")]
        if not holders:
            raise ValueError(f"RewriteStepper.collapse: {key!r} is not an open node (open: "
                             f"{', '.join(self._open) or 'none'})")
        closed = max(holders, key=len)
        self._open = tuple(k for k in self._open if not (k == closed or k.startswith(closed + "/")))
        self._redraw_open([closed])

    def _pane_open(self) -> tuple[str, ...]:
        """The keys the panes draw open: the open keys, and the nodes a step made of an open node (the same op
        kind replacing it: an ``OpFromGraph`` or a ``Scan`` whose inner graph was rewritten, a ``Composite`` made
        inplace, two loops merged into one),
        or made it from, so that an open node stays open from step to step."""
        if not self._open:
            return ()
        links = self.__dict__.get("_links")
        if links is None:
            links = self._links = _replacement_links(self.trace)
        found: set[str] = set()
        for key in self._open:
            head, slash, rest = key.partition("/")
            found.update(f"{other}{slash}{rest}" for other in _reach(links, head))
        return tuple(sorted(found, key=lambda k: (k.count("/"), k)))

    def _redraw_open(self, keys: list[str]) -> None:
        with self.answer():
            self._draw()
            self.reveal_after = [k for k in keys if k in self._drawn_after] or self.reveal_after
        self._prefetch()

    def _on_expand(self, content: dict[str, Any]) -> None:
        self.expand(str(content.get("key") or ""))

    def _on_collapse(self, content: dict[str, Any]) -> None:
        self.collapse(str(content.get("key") or ""))

    # -- stepping into a node's inner graph -------------------------------------------------------------
    def step_into(self, target: Any) -> Any:
        """A stepper over the rewrite of the inner graph of ``target`` (a node with a graph of its own, or its key).

        The inner graph (an ``OpFromGraph``'s, a ``Scan``'s body, a fused ``Composite``'s) is rewritten by the rules this
        stepper's rewrite ran, on a copy (the op is never changed). The new stepper's ``parent`` is this one;
        the widget on screen shows it in place (``step_out()`` goes back).
        """
        key = self._key_for(target, "step_into")
        node = inner_node(self.trace, key)
        owner = inner_op(node.op)
        if owner is None:
            raise ValueError(f"RewriteStepper.step_into: {node.op} ({key}) has no graph of its own to step into; "
                             "the branches of an ifelse are nodes of the outer graph (expand it to see them)")
        inner = type(self)(inner_rewrite(self.trace, node), style=self._style, max_nodes=self._max_nodes)
        inner.parent = self
        inner._where = f"inside {key}: {owner}"
        root = self._root()
        root._show(inner)
        return inner

    def step_out(self) -> Any:
        """Leave this inner stepper: its parent, which the widget on screen shows again."""
        if self.parent is None:
            if self._stack:  # the widget on screen shows an inner stepper: back one level
                return self._stack[-1].step_out()
            raise ValueError("RewriteStepper.step_out: this stepper is not inside another one (no parent)")
        self._root()._show(self.parent)
        return self.parent

    @property
    def shown(self) -> Any:
        """The stepper this widget shows: itself, or the inner stepper it shows in place."""
        return self._stack[-1] if self._stack else self

    @property
    def depth(self) -> int:
        """How many steppers this one is inside (0: the outermost)."""
        return 0 if self.parent is None else 1 + self.parent.depth

    def _root(self) -> Any:
        return self if self.parent is None else self.parent._root()

    def _show(self, stepper: Any) -> None:
        """Show ``stepper`` (this one, or one inside it) in this widget."""
        chain = []
        level = stepper
        while level is not None and level is not self:
            chain.append(level)
            level = level.parent
        if not self._stack and chain:
            self._saved = {"step": self.step, "compare": self.compare, "full": self.full}
        for old in self._stack:
            if old not in chain:
                old.unobserve(self._mirror_answer, names="drawn")
        for new in chain:
            if new not in self._stack:
                new.observe(self._mirror_answer, names="drawn")
        self._stack = list(reversed(chain))
        if self._stack:
            self._mirror()
            return
        self._mirroring = True
        try:
            with self.hold_sync():
                self.total, self.steps = len(self.trace), self._step_rows()
                for name, value in self._saved.items():
                    setattr(self, name, value)
        finally:
            self._mirroring = False
        with self.answer():
            self.nest = self._nest()
            self._draw()

    def _mirror_answer(self, change: Any) -> None:
        if self._stack and change["owner"] is self._stack[-1]:
            self._mirror()

    def _mirror(self) -> None:
        """Copy what the inner stepper shown in place shows (one answer to the browser)."""
        top = self._stack[-1]
        self._mirroring = True
        try:
            with self.answer():
                for name in MIRRORED:
                    setattr(self, name, getattr(top, name))
                self.nest = self._nest()
        finally:
            self._mirroring = False

    def _nest(self) -> list[dict[str, Any]]:
        """The levels shown: this stepper, then each inner one (what the bar above the panes names)."""
        levels = [self, *self._stack]
        return [{"title": s._where, "depth": k, "total": s.total} for k, s in enumerate(levels)]

    def _on_step_into(self, content: dict[str, Any]) -> None:
        self.step_into(str(content.get("key") or ""))

    def _on_step_out(self, content: dict[str, Any]) -> None:
        if self._stack:
            self._stack[-1].step_out()

    def _routed(self, content: Any) -> Any:
        """The stepper a browser message is for: the inner one shown in place (``step_out`` is this widget's)."""
        if self._stack and isinstance(content, dict) and content.get("type") != "step_out":
            return self._stack[-1]
        return None



def _kind(op: Any) -> type:
    owner = inner_op(op)
    return type(owner if owner is not None else op)


def _replacement_links(trace: Any) -> dict[str, set[str]]:
    """``key -> keys`` of nodes with an inner graph that an accepted step replaced one by the other (one created,
    of the same kind of op as each one removed: a node rewritten, or several merged into one, as ``scan_merge``)."""
    links: dict[str, set[str]] = {}
    for step in trace.steps:
        if not step.accepted:
            continue
        old = [n for n in step.removed if has_inner_graph(n.op)]
        new = [n for n in step.created if has_inner_graph(n.op)]
        if old and len(new) == 1 and all(_kind(o.op) is _kind(new[0].op) for o in old):
            b = trace.key(new[0])
            for a in (trace.key(o) for o in old):
                links.setdefault(a, set()).add(b)
                links.setdefault(b, set()).add(a)
    return links


def _reach(links: dict[str, set[str]], key: str) -> set[str]:
    seen, pending = {key}, [key]
    while pending:
        for other in links.get(pending.pop(), ()):
            if other not in seen:
                seen.add(other)
                pending.append(other)
    return seen
