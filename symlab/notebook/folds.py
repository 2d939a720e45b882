"""What a view has folded and opened: the one folding state the graph view and the values view share.

A :class:`Folds` holds a graph's :class:`~symlab.printing.grouping.GroupTree` and the set of groups drawn
open. At first it opens as many groups as the budget allows (:data:`VIEW_MAX_NODES` drawn nodes by
default); :meth:`Folds.expand` opens one more group in place (and, inside it, what fits a budget more),
:meth:`Folds.collapse` folds back the group a key came from, :meth:`Folds.show` opens whatever hides a
node. Group keys (``g<n>``) and node keys never change while the graph does not.

>>> import symlab.tensor as st
>>> from symlab.printing.folding import toposort
>>> x = st.dvector("x")
>>> y = x
>>> for k in range(30):
...     y = st.exp(y) if k % 2 else st.sin(y)
>>> folds = Folds(toposort([y])[0], [y], budget=10)
>>> [(g["key"], g["title"], g["expanded"]) for g in folds.groups()][:3]
[('g0', 'nodes 1–15: 15 nodes', True), ('g1', 'nodes 1–8: 8 nodes', False), ('g2', 'nodes 9–15: 7 nodes', False)]
>>> shown = folds.expand("g1")
>>> [g["expanded"] for g in folds.groups()][:3], len(shown)
([True, True, False], 8)
>>> folds.collapse("g1").key, [g["expanded"] for g in folds.groups()][:3]
('g1', [True, False, False])
>>> folds.collapse("g1").key  # g1 is folded: the group it came from
'g0'
>>> [g["title"] for g in folds.groups()][:2]
['nodes 1–15: 15 nodes', 'nodes 16–30: 15 nodes']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from symlab.graph.basic import Apply, Variable
from symlab.printing.folding import Fold
from symlab.printing.grouping import Group, GroupTree

__all__ = ["VIEW_MAX_NODES", "Folds"]

#: Drawn nodes of a picture before folding into groups (a 2,000-node graph is never laid out whole).
VIEW_MAX_NODES = 40


class Folds:
    """The groups of a graph (Apply nodes ``order``, inputs first, computing ``outputs``) and which are open.

    ``budget`` is about how many nodes a picture draws; ``weight(node)`` how many drawn nodes an Apply node
    costs in the view's style (1 in the compact style; its op and its output boxes in the dataflow style).
    """

    def __init__(self, order: list[Apply], outputs: Iterable[Variable], budget: int = VIEW_MAX_NODES,
                 weight: Callable[[Apply], int] | None = None) -> None:
        self.budget = budget
        self.weight = weight or (lambda node: 1)
        self.tree = GroupTree(order, outputs, fan_out=budget)
        self._opened: set[str] | None = None
        #: The groups opened by ``expand`` (what the reader asked for), innermost last: what "fold back" closes
        #: first, rather than a small group opened on its own because it fit the budget.
        self._asked: list[str] = []

    @property
    def opened(self) -> set[str]:
        """The groups drawn open: at first as many as the budget allows (the outermost, smallest first)."""
        if self._opened is None:
            self._opened = self.tree.auto_open(self.budget, self.weight)
        return self._opened

    def reset(self) -> None:
        """Open groups as the budget allows again (the view's style changed, or its graph)."""
        self._opened = None
        self._asked = []

    def refit(self, show: Iterable[Any] = ()) -> bool:
        """Fold again to the budget after a node's weight changed (an inner graph opened or closed), the nodes of
        ``show`` drawn; True if what is open changed.

        A picture over the budget starts again from the groups that hide ``show`` and opens more while it
        fits, then the groups the reader expanded, while they fit; one under it opens more groups.
        """
        before = set(self.opened)
        if self.tree.size(self.tree.frontier(before), self.weight) <= self.budget:
            self._opened = self.tree.auto_open(self.budget, self.weight, before)
            return self._opened != before
        path = {g.key for obj in show for g in self._path(obj)}
        opened = self.tree.auto_open(self.budget, self.weight, path)
        for key in self._asked:  # what the reader opened, while it fits
            group = self.group(key)
            if group is None:
                continue
            trial = opened | {g.key for g in self.tree.path(group.members[0]) if _inside(group, g)}
            if self.tree.size(self.tree.frontier(trial), self.weight) <= self.budget:
                opened = trial
        self._opened = opened
        self._asked = [k for k in self._asked if k in opened]
        return opened != before

    def _path(self, obj: Any) -> list[Group]:
        node = obj if isinstance(obj, Apply) else obj.owner if isinstance(obj, Variable) else None
        return self.tree.path(node) if node is not None and node in self.tree.position else []

    def fold(self, show: Iterable[Any] = ()) -> Fold:
        """The :class:`~symlab.printing.folding.Fold` to draw, the nodes of ``show`` never folded away."""
        for obj in show:
            self.show(obj)
        return self.tree.fold(self.opened)

    def group(self, key: str) -> Group | None:
        """The group keyed ``key``, or ``None``."""
        return self.tree.groups.get(key) if isinstance(key, str) else None

    def groups(self) -> list[dict[str, Any]]:
        """The groups drawn or open, outermost first: ``[{"key", "title", "count", "expanded"}]``.

        A group inside a folded one is not listed (open the outer one first).
        """
        opened = self.opened
        listed = []
        stack = [g for g in reversed(self.tree.items) if isinstance(g, Group)]
        while stack:
            group = stack.pop()
            is_open = group.key in opened
            listed.append({"key": group.key, "title": group.title, "count": len(group.members), "expanded": is_open})
            if is_open:
                stack.extend(g for g in reversed(group.items) if isinstance(g, Group))
        return listed

    def show(self, obj: Any) -> bool:
        """Open the groups hiding ``obj`` (a node, or a variable's owner); True if some were opened."""
        node = obj if isinstance(obj, Apply) else obj.owner if isinstance(obj, Variable) else None
        if node is None or node not in self.tree.position:
            return False
        path = {g.key for g in self.tree.path(node)}
        if path <= self.opened:
            return False
        self.opened.update(path)
        return True

    def expand(self, key: str) -> list[Any]:
        """Open the group ``key`` (and the groups holding it), and inside it what fits half a budget more.

        Returns what the picture now draws of it: its nodes and sub-groups. ``ValueError`` if there is no
        such group.
        """
        found = self.group(key)
        if found is None:
            listed = ", ".join(g["key"] for g in self.groups()) or "none (nothing is folded)"
            raise ValueError(f"expand: {key!r} is not a folded group of the picture; the groups of this graph are "
                             f"{listed}")
        opened = self.opened
        self._asked = [k for k in self._asked if k != found.key] + [found.key]
        outer: Group | None = found
        while outer is not None:
            opened.add(outer.key)
            outer = outer.parent
        size = self.tree.size(self.tree.frontier(opened), self.weight)
        self._opened = self.tree.auto_open(max(size, self.budget) + self.budget // 2, self.weight, opened,
                                           within=found)
        members = set(found.members)
        return [i for i in self.tree.frontier(self._opened)
                if (isinstance(i, Group) and _inside(i, found)) or (isinstance(i, Apply) and i in members)]

    def to_close(self, key: str, node: Apply | None = None) -> Group | None:
        """The open group ``key`` came from: the group itself when open, else the innermost open group
        holding it (a folded group's parent, or ``node``'s) that the reader expanded, or, if none was, the
        innermost open group holding it; ``None`` if there is none."""
        opened = self.opened
        group = self.group(key)
        if group is not None:
            if group.key not in opened:
                group = group.parent
        elif node is not None and node in self.tree.position:
            path = self.tree.path(node)
            group = path[-1] if path else None
        while group is not None and group.key not in opened:
            group = group.parent
        asked = group
        while asked is not None and asked.key not in self._asked:
            asked = asked.parent
        return asked if asked is not None and asked.key in opened else group

    def collapse(self, key: str, node: Apply | None = None) -> Group:
        """Fold back the group ``key`` came from (see :meth:`to_close`); ``ValueError`` if none is open."""
        group = self.to_close(key, node)
        if group is None:
            raise ValueError(f"collapse: {key!r} is neither an expanded group nor drawn inside one")
        closed = {g.key for g in self.tree.groups.values() if _inside(g, group)}
        self.opened.difference_update(closed)
        self._asked = [k for k in self._asked if k not in closed]
        return group


def _inside(group: Group | None, outer: Group) -> bool:
    while group is not None:
        if group is outer:
            return True
        group = group.parent
    return False
