"""Groups that mean something: how a large graph's picture is folded to a budget of drawn nodes.

:class:`GroupTree` sorts the Apply nodes of a graph into nested groups a reader can name:

- the *forward* and the *backward* part of a gradient graph (the nodes :func:`symlab.grad` made carry
  ``node.tag.backward``; in a graph rewritten since, the backward part is what only the gradients need);
- the part only one output needs (``output 1 (gW1)``), when a graph has several outputs;
- a *named sub-expression*: a variable with a name and the nodes only it uses (``hidden = tanh(…)``);
- a *chain of elementwise ops*, each used only by the next;
- and, where a level still holds more items than a picture can draw, consecutive *stretches* of it
  (``mix3 … b6``, ``nodes 7–15``), so that no level is wider than the budget.

A group holds at least two nodes, never one. Its key ``g<n>`` is its rank in the tree (stable while the
graph is). A picture is a *frontier* of the tree: the groups opened show their items, the others are
drawn as one node. :meth:`GroupTree.auto_open` opens groups while the picture stays within a budget,
:meth:`GroupTree.fold` turns a set of opened groups into the :class:`~symlab.printing.folding.Fold` the
painters draw.

>>> import symlab.tensor as st
>>> x = st.dvector("x")
>>> h = st.tanh(st.exp(x) * 2 + 1)
>>> h.name = "h"
>>> y = h
>>> for _ in range(6):
...     y = st.sin(y) + 1
>>> order, leaves = toposort([y])
>>> tree = GroupTree(order, [y], fan_out=20)
>>> [(g.key, g.title) for g in tree.groups.values()]
[('g0', 'h = tanh(…): 6 nodes'), ('g1', 'elementwise chain: 18 nodes')]
>>> fold = tree.fold(set())
>>> len(fold.visible), [len(m) for m in fold.groups]
(0, [6, 18])
>>> [len(tree.fold({"g0"}).visible), len(tree.fold({"g0", "g1"}).visible)]
[6, 24]
>>> sorted(tree.auto_open(budget=12))  # h's nodes are drawn, the chain stays one node
['g0']
>>> [g.key for g in tree.path(order[-1])]
['g1']

A level wider than ``fan_out`` is cut into stretches (named by the names they compute, else by where they
are in the graph, inputs first):

>>> [g.title for g in GroupTree(order, [y], fan_out=8).groups.values()][1:3]
['elementwise chain: 18 nodes', 'nodes 7–15: 9 nodes']

Every walk over the nodes is iterative (only the tree's few levels nest): a graph of any depth is sorted
at the default recursion limit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from symlab.graph.basic import Apply, Constant, Variable
from symlab.printing.folding import Fold, toposort
from symlab.printing.painters import FANOUT_LIMIT

__all__ = ["Group", "GroupTree", "is_backward", "toposort"]

Item = Any  # an Apply node or a Group


def is_backward(node: Apply) -> bool:
    """True if :func:`symlab.grad` made ``node`` (the backward part of a gradient graph)."""
    tag = getattr(node, "tag", None)
    return bool(tag.get("backward")) if isinstance(tag, dict) else False


@dataclass(eq=False)
class Group:
    """A folded group: ``key`` (``g<n>``), what it is (``what``), its Apply ``members`` (inputs first),
    its ``items`` (sub-groups and nodes, one level down) and its ``parent`` (``None`` at the top)."""

    key: str
    what: str
    members: list[Apply]
    items: list[Item] = field(default_factory=list)
    parent: Group | None = None

    @property
    def title(self) -> str:
        """What the group is and how many nodes it holds: ``backward: 41 nodes``."""
        return f"{self.what}: {len(self.members)} nodes"

    @property
    def depth(self) -> int:
        depth, group = 0, self.parent
        while group is not None:
            depth, group = depth + 1, group.parent
        return depth

    def __repr__(self) -> str:
        return f"<Group {self.key} {self.title}>"


def _op_name(node: Apply) -> str:
    scalar_op = getattr(node.op, "scalar_op", None)
    text = str(scalar_op) if scalar_op is not None and type(node.op).__name__ == "Elemwise" else str(node.op)
    return text if len(text) <= 24 else text[:23] + "…"


def _is_elemwise(node: Apply) -> bool:
    return type(node.op).__name__ in ("Elemwise", "DimShuffle")


class GroupTree:
    """The groups of a graph (its Apply nodes ``order``, inputs first, computing ``outputs``).

    ``fan_out`` is the most items a level may hold before it is cut into stretches (the budget of a
    picture). See the module documentation.
    """

    def __init__(self, order: list[Apply], outputs: Iterable[Variable], fan_out: int = 40) -> None:
        self.order = list(order)
        self.outputs = list(outputs)
        self.fan_out = max(4, fan_out)
        self.position = {node: i for i, node in enumerate(self.order)}
        self.consumers: dict[Apply, list[Apply]] = {n: [] for n in self.order}
        for node in self.order:
            for inp in node.inputs:
                owner = inp.owner
                if owner in self.consumers and (not self.consumers[owner] or self.consumers[owner][-1] is not node):
                    self.consumers[owner].append(node)
        self.output_owners = {o.owner for o in self.outputs if o.owner is not None}
        # nodes computing from constants only (a DimShuffle of a constant) go along with their consumers
        self.constant_only: set[Apply] = set()
        for node in self.order:
            if all(isinstance(i, Constant) if i.owner is None else i.owner in self.constant_only for i in node.inputs):
                self.constant_only.add(node)
        self.groups: dict[str, Group] = {}
        self.group_of: dict[Apply, Group] = {}  # innermost group of each node in one
        self._reach = self._reaches()
        self.backward = self._backward()
        self.items = self._sort(self.order, None, top=True)

    # -- building ----------------------------------------------------------------------------------
    def _reaches(self) -> dict[Apply, int]:
        """For each node, the outputs it computes (a bit per output index), walked from the outputs."""
        reach = {n: 0 for n in self.order}
        for k, out in enumerate(self.outputs):
            if out.owner in reach:
                reach[out.owner] |= 1 << k
        for node in reversed(self.order):
            bits = reach[node]
            for c in self.consumers[node]:
                bits |= reach[c]
            reach[node] = bits
        return reach

    def _backward(self) -> set[Apply]:
        """The backward part: the nodes :func:`symlab.grad` made, and (in a graph rewritten since, where
        rewrites dropped the mark) every node only the gradient outputs need. The forward part is what the
        other outputs (a loss) need."""
        tagged = {n for n in self.order if is_backward(n)}
        if not tagged:
            return tagged
        after = set(tagged)  # the nodes computed from a gradient's nodes
        for node in self.order:
            if node not in after and any(i.owner in after for i in node.inputs):
                after.add(node)
        plain = [o.owner for o in self.outputs if o.owner in self.position and o.owner not in after]
        if not plain:
            return tagged
        needed: set[Apply] = set()
        stack = list(plain)
        while stack:
            node = stack.pop()
            if node in needed:
                continue
            needed.add(node)
            stack.extend(i.owner for i in node.inputs if i.owner in self.position and i.owner not in needed)
        return {n for n in self.order if n in tagged or n not in needed}

    def _new(self, what: str, members: list[Apply], parent: Group | None) -> Group:
        # numbered once the whole tree is built (preorder: a group before its sub-groups)
        return Group("", what, members, parent=parent)

    def _sort(self, nodes: list[Apply], parent: Group | None, top: bool = False) -> list[Item]:
        """The items of one level: ``nodes`` (inputs first) sorted into groups, each sorted in turn."""
        items = self._level(nodes, parent, top)
        if parent is None:
            self._number(items)
        return items

    def _level(self, nodes: list[Apply], parent: Group | None, top: bool) -> list[Item]:
        groups: list[Group] = []
        rest = list(nodes)
        whole = len(nodes)
        if top:
            backward = [n for n in rest if n in self.backward]
            if 2 <= len(backward) <= len(rest) - 2:
                forward = [n for n in rest if n not in self.backward]
                groups = [self._new("forward", forward, parent), self._new("backward", backward, parent)]
                rest = []
        if rest and len(self.outputs) > 1:
            found, rest = self._by_output(rest, parent, whole)
            groups += found
        if rest:
            found, rest = self._named(rest, parent, whole)
            groups += found
        items: list[Item] = [*groups, *rest]
        items = self._chains(items, parent, whole)
        items.sort(key=self._last)
        for group in (i for i in items if isinstance(i, Group)):
            self._fill(group)
        if len(items) > self.fan_out:
            items = self._stretches(items, parent)
        return items

    def _fill(self, group: Group) -> None:
        """Sort the members of ``group`` one level down (its sub-groups, its own nodes)."""
        group.items = self._level(group.members, group, top=False)
        if len(group.items) == 1 and isinstance(group.items[0], Group):  # a level that says nothing more
            group.items = group.items[0].items

    def _last(self, item: Item) -> int:
        return self.position[item.members[-1] if isinstance(item, Group) else item]

    def _by_output(self, nodes: list[Apply], parent: Group | None, whole: int) -> tuple[list[Group], list[Apply]]:
        """The nodes only one output needs, a group per output (when it holds 2 nodes or more, not all)."""
        by_output: dict[int, list[Apply]] = {}
        for node in nodes:
            bits = self._reach[node]
            if bits and bits & (bits - 1) == 0:
                by_output.setdefault(bits.bit_length() - 1, []).append(node)
        groups, taken = [], set()
        for k, members in sorted(by_output.items()):
            if 2 <= len(members) < whole:
                out = self.outputs[k]
                name = f" ({out.name})" if out.name else ""
                groups.append(self._new(f"output {k}{name}", members, parent))
                taken.update(members)
        return groups, [n for n in nodes if n not in taken]

    def _named(self, nodes: list[Apply], parent: Group | None, whole: int) -> tuple[list[Group], list[Apply]]:
        """Named sub-expressions: a named variable's node and the nodes only it uses (the largest first)."""
        inside = set(nodes)
        taken: set[Apply] = set()
        groups: list[Group] = []
        heads = [n for n in reversed(nodes) if _name_of(n) is not None]
        for head in heads:
            if head in taken:
                continue
            members = self._only_used_by(head, inside, taken)
            if 2 <= len(members) < whole:
                out = next(o for o in head.outputs if o.name is not None)
                groups.append(self._new(f"{out.name} = {_op_name(head)}(…)", members, parent))
                taken.update(members)
        return groups, [n for n in nodes if n not in taken]

    def _only_used_by(self, head: Apply, inside: set[Apply], taken: set[Apply]) -> list[Apply]:
        """``head`` and the nodes of ``inside`` whose every use leads to ``head`` (none in ``taken``)."""
        members = {head}
        used: dict[Apply, int] = {}
        stack = [head]
        while stack:
            node = stack.pop()
            for inp in node.inputs:
                p = inp.owner
                if p is None or p not in inside or p in members or p in taken or p in self.output_owners:
                    continue
                used[p] = used.get(p, 0) + 1
                # each consumer listed once: the node joins when every consumer (inside the level) has
                if used[p] == sum(1 for c in self.consumers[p] if c in inside):
                    members.add(p)
                    stack.append(p)
        return sorted(members, key=self.position.__getitem__)

    def _chains(self, items: list[Item], parent: Group | None, whole: int) -> list[Item]:
        """Chains of elementwise nodes among ``items``, each used only by the next: one group each."""
        loose = {i for i in items if isinstance(i, Apply) and _is_elemwise(i)}
        out: list[Item] = [i for i in items if i not in loose]
        done: set[Apply] = set()
        for node in sorted(loose, key=self.position.__getitem__):
            if node in done or node in self.constant_only:
                continue
            chain = [node]  # from the first node (inputs first), each node's one user next
            done.add(node)
            while True:
                last = chain[-1]
                users = self.consumers[last]
                if len(users) != 1 or users[0] not in loose or users[0] in done or last in self.output_owners:
                    break
                chain.append(users[0])
                done.add(users[0])
            # the constants' DimShuffles the chain alone reads go with it
            links = set(chain)
            chain += [i.owner for n in chain for i in n.inputs if i.owner in loose and i.owner in self.constant_only
                      and i.owner not in done and all(c in links for c in self.consumers[i.owner])]
            done.update(chain)
            if 2 <= len(chain) < whole and len(links) >= 2:
                out.append(self._new("elementwise chain", sorted(chain, key=self.position.__getitem__), parent))
            else:
                out.extend(chain)
        out.extend(n for n in loose if n not in done)
        return out

    def _stretches(self, items: list[Item], parent: Group | None) -> list[Item]:
        """Cut a level wider than the budget into consecutive stretches (inputs first)."""
        count = max(2, self.fan_out // 4)  # a few parts: room to open some of them
        size = -(-len(items) // count)
        out: list[Item] = []
        for start in range(0, len(items), size):
            part = items[start:start + size]
            if len(part) == 1:
                out.extend(part)
                continue
            members = sorted((n for item in part for n in (item.members if isinstance(item, Group) else [item])),
                             key=self.position.__getitem__)
            names = [name for n in members if (name := _name_of(n)) is not None]
            what = (f"{names[0]} … {names[-1]}" if len(names) > 1 else f"around {names[0]}" if names
                    else f"nodes {self.position[members[0]] + 1}–{self.position[members[-1]] + 1}")
            group = self._new(what, members, parent)
            group.items = part if len(part) <= self.fan_out else self._stretches(part, group)
            out.append(group)
        return out

    def _number(self, items: list[Item]) -> None:
        """Key every group ``g<n>`` in preorder and note each node's innermost group."""
        self.groups.clear()
        self.group_of.clear()
        stack = [(item, None) for item in reversed(items)]
        while stack:
            item, parent = stack.pop()
            if not isinstance(item, Group):
                if parent is not None:
                    self.group_of[item] = parent
                continue
            item.parent = parent
            item.key = f"g{len(self.groups)}"
            self.groups[item.key] = item
            stack.extend((sub, item) for sub in reversed(item.items))

    # -- reading -------------------------------------------------------------------------------------
    def path(self, node: Apply) -> list[Group]:
        """The groups holding ``node``, outermost first (empty: it is drawn at the top level)."""
        groups = []
        group = self.group_of.get(node)
        while group is not None:
            groups.append(group)
            group = group.parent
        return groups[::-1]

    def frontier(self, opened: set[str]) -> list[Item]:
        """What a picture with the groups ``opened`` draws: nodes, and the groups not opened."""
        shown: list[Item] = []
        stack = list(reversed(self.items))
        while stack:
            item = stack.pop()
            if isinstance(item, Group) and item.key in opened:
                stack.extend(reversed(item.items))
            else:
                shown.append(item)
        return shown

    def fold(self, opened: set[str]) -> Fold:
        """The :class:`~symlab.printing.folding.Fold` of the picture with the groups ``opened``."""
        shown = self.frontier(opened)
        visible = sorted((i for i in shown if isinstance(i, Apply)), key=self.position.__getitem__)
        groups = [i for i in shown if isinstance(i, Group)]
        fold = Fold(visible, group_of={n: k for k, g in enumerate(groups) for n in g.members},
                    groups=[list(g.members) for g in groups], leaf_budget=10**9)
        fold.keys = [g.key for g in groups]
        fold.titles = [g.title for g in groups]
        return fold

    def auto_open(self, budget: int, weight: Callable[[Apply], int] = lambda node: 1,
                  opened: Iterable[str] = (), within: Group | None = None) -> set[str]:
        """``opened`` and more groups opened, while the picture's drawn nodes stay within ``budget``.

        The shallowest groups open first and, among them, those that add the fewest drawn nodes.
        ``within`` opens only inside that group (what an expand shows).
        """
        opened = set(opened)
        shown = self.frontier(opened)
        tally = _Tally(self, shown, weight)
        while True:
            candidates = [i for i in shown if isinstance(i, Group) and (within is None or _inside(i, within))]
            best = None
            for group in sorted(candidates, key=lambda g: (g.depth, len(g.items), -self._last(g))):
                if tally.total + tally.grow(group) <= budget:
                    best = group
                    break
            if best is None:
                return opened
            opened.add(best.key)
            tally.open(best)
            at = shown.index(best)
            shown[at:at + 1] = best.items

    def size(self, shown: list[Item], weight: Callable[[Apply], int] = lambda node: 1) -> int:
        """About how many nodes a picture of ``shown`` draws: nodes, groups, leaves (an input used by many
        nodes once per use, as the painters draw it), outputs."""
        return _Tally(self, shown, weight).total


class _Tally:
    """The drawn nodes of a picture, kept up to date as groups open."""

    def __init__(self, tree: GroupTree, shown: list[Item], weight: Callable[[Apply], int]) -> None:
        self.weight = weight
        self.uses: dict[int, int] = {}  # leaf -> how many input slots of drawn nodes read it
        self.grouped: dict[int, int] = {}  # input (not a constant) -> how many groups read it
        self.leaves: dict[Group, set[int]] = {}
        self.total = len(tree.outputs)
        for item in shown:
            self.total += weight(item) if isinstance(item, Apply) else 1
            self._note(item, 1)
        self.total += sum(self._cost(leaf) for leaf in set(self.uses) | set(self.grouped))

    def _cost(self, leaf: int) -> int:
        """The drawn nodes of one leaf: one, or one per use (nodes' and groups') when many nodes read it."""
        n, g = self.uses.get(leaf, 0), self.grouped.get(leaf, 0)
        return n + g if n > FANOUT_LIMIT else 1 if n or g else 0

    def _group_leaves(self, group: Group) -> set[int]:
        found = self.leaves.get(group)
        if found is None:
            found = self.leaves[group] = {id(i) for n in group.members for i in n.inputs
                                          if i.owner is None and not isinstance(i, Constant)}
        return found

    def _note(self, item: Item, sign: int) -> None:
        if isinstance(item, Apply):
            for inp in item.inputs:
                if inp.owner is None:
                    self.uses[id(inp)] = self.uses.get(id(inp), 0) + sign
        else:
            for leaf in self._group_leaves(item):
                self.grouped[leaf] = self.grouped.get(leaf, 0) + sign

    def _touched(self, group: Group) -> set[int]:
        found = set(self._group_leaves(group))
        for item in group.items:
            if isinstance(item, Apply):
                found.update(id(i) for i in item.inputs if i.owner is None)
        return found

    def grow(self, group: Group) -> int:
        """How many drawn nodes opening ``group`` adds."""
        touched = self._touched(group)
        before = sum(self._cost(leaf) for leaf in touched)
        self._swap(group, 1)
        after = sum(self._cost(leaf) for leaf in touched)
        self._swap(group, -1)
        return sum(self.weight(i) if isinstance(i, Apply) else 1 for i in group.items) - 1 + after - before

    def _swap(self, group: Group, sign: int) -> None:
        self._note(group, -sign)
        for item in group.items:
            self._note(item, sign)

    def open(self, group: Group) -> None:
        self.total += self.grow(group)
        self._swap(group, 1)


def _inside(group: Group, outer: Group) -> bool:
    while group is not None:
        if group is outer:
            return True
        group = group.parent
    return False


def _name_of(node: Apply) -> str | None:
    return next((o.name for o in node.outputs if o.name is not None), None)
