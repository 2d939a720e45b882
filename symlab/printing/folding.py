"""Folding: what a big graph's picture leaves out, and how it sorts the nodes it draws.

A graph with more nodes than a picture's budget is *folded*: nodes that
compute the same thing as an earlier one (same op, same inputs) are drawn
once, marked ``×k``, and if that is not enough the nodes farthest from both
the inputs and the outputs (the middle of deep chains) are hidden in summary
groups. The nodes nearest the outputs and the inputs, and the highlighted
ones, stay visible.

>>> import symlab.tensor as st
>>> x = st.dvector("x")
>>> y = x
>>> for _ in range(50):
...     y = st.exp(y)
>>> order, leaves = toposort([y])
>>> len(order), leaves == [x]
(50, True)
>>> fold = fold_graph(order, leaves, [y], 10, set(), compact_cost(set()))
>>> len(fold.visible) + sum(len(g) for g in fold.groups), len(fold.groups)
(50, 1)

Every walk uses explicit stacks or queues: a graph of any depth folds at
the default recursion limit.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from symlab.graph.basic import Apply, Constant, Variable


def toposort(outputs: list[Variable], cut: frozenset[int] = frozenset()) -> tuple[list[Apply], list[Variable]]:
    """The Apply nodes computing ``outputs``, inputs first, and the leaves they use (no recursion).

    Variables whose ``id`` is in ``cut`` are leaves: the walk does not go to their owners.
    """
    order: list[Apply] = []
    leaves: list[Variable] = []
    seen: set[int] = set()
    stack: list[tuple[Any, bool]] = [(v, False) for v in reversed(outputs)]
    while stack:
        item, expanded = stack.pop()
        if expanded:
            order.append(item)
            continue
        if isinstance(item, Variable):
            node = item.owner
            if node is None or id(item) in cut:
                if id(item) not in seen:
                    seen.add(id(item))
                    leaves.append(item)
                continue
            item = node
        if id(item) in seen:
            continue
        seen.add(id(item))
        stack.append((item, True))
        stack.extend((inp, False) for inp in reversed(item.inputs))
    return order, leaves


# -- folding -----------------------------------------------------------------------------------
@dataclass
class Fold:
    """What a picture draws of a graph: the ``visible`` nodes, the merged repeats, the hidden groups."""

    visible: list[Apply]
    rep: dict[Apply, Apply] = field(default_factory=dict)  # a repeated node -> the one drawn for it
    copies: Counter = field(default_factory=Counter)  # drawn node -> how many nodes it stands for
    group_of: dict[Apply, int] = field(default_factory=dict)  # hidden node -> its summary node
    groups: list[list[Apply]] = field(default_factory=list)
    #: How many graph inputs used only by summary nodes may be drawn.
    leaf_budget: int = 0
    #: The key and the title of each group (:class:`~symlab.printing.grouping.GroupTree`'s); empty: ``g<k>``
    #: and ``… N nodes …``.
    keys: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)

    def canonical(self, node: Apply) -> Apply:
        """The node drawn for ``node``: itself, or the first copy of a repeated subgraph."""
        return self.rep.get(node, node)

    def group_inputs(self, is_drawn: Any) -> list[tuple[int, Variable]]:
        """``(group, variable)`` for each variable a summary node uses from outside.

        Constants are left out, and graph inputs not drawn yet too when they
        are more than :attr:`leaf_budget`.
        """
        pairs: list[tuple[int, Variable]] = []
        new_leaves: set[int] = set()
        seen: set[tuple[int, int]] = set()
        for k, members in enumerate(self.groups):
            inside = set(members)
            for node in members:
                for inp in node.inputs:
                    if (k, id(inp)) in seen:
                        continue
                    seen.add((k, id(inp)))
                    owner = inp.owner
                    if owner is None:
                        if isinstance(inp, Constant):
                            continue
                        if not is_drawn(inp):
                            new_leaves.add(id(inp))
                    elif self.canonical(owner) in inside:
                        continue
                    pairs.append((k, inp))
        if len(new_leaves) > self.leaf_budget:
            pairs = [(k, v) for k, v in pairs if id(v) not in new_leaves]
        return pairs


def _signature(node: Apply, key: Any) -> Any:
    sig = (node.op, tuple(key(i) for i in node.inputs), len(node.outputs))
    try:
        hash(sig)
    except TypeError:
        return ("unique", id(node))
    return sig


def _merge_repeats(order: list[Apply], keep: set[int]) -> tuple[dict[Apply, Apply], Counter]:
    """Map each node that computes the same thing as an earlier one to that earlier node."""
    first: dict[Any, Apply] = {}
    rep: dict[Apply, Apply] = {}
    copies: Counter = Counter()

    def key(var: Variable) -> Any:
        owner = var.owner
        if owner is None:
            signature = getattr(var, "signature", None)
            if isinstance(var, Constant) and signature is not None:
                try:
                    return ("const", signature())
                except Exception:  # a constant that cannot describe itself stays unique
                    pass
            return ("leaf", id(var))
        return ("out", id(rep.get(owner, owner)), var.index)

    constant_only: set[Apply] = set()
    for node in order:
        if all(isinstance(i, Constant) if i.owner is None else i.owner in constant_only for i in node.inputs):
            constant_only.add(node)  # a broadcast constant: cheap to repeat, a hub if merged
            continue
        if id(node) in keep:
            continue
        sig = _signature(node, key)
        seen = first.get(sig)
        if seen is None:
            first[sig] = node
        else:
            rep[node] = seen
            copies[seen] += 1
    for node in copies:
        copies[node] += 1
    return rep, copies


def fold_graph(
    order: list[Apply],
    leaves: list[Variable],
    outputs: list[Variable],
    max_nodes: int,
    highlight: set[int],
    cost: Any,
    merge: bool = True,
) -> Fold:
    """Fold the nodes ``order`` (inputs first) of a graph to about ``max_nodes`` drawn nodes.

    ``highlight`` holds the ``id()`` of nodes that must stay visible;
    ``cost(node, kept)`` is how many drawn nodes keeping ``node`` costs
    (:func:`structure_cost`, :func:`compact_cost`, :func:`dataflow_cost`).
    With ``merge=False`` repeats are never drawn once (in a picture of
    values each node holds its own) and the graph is folded without the
    shortcuts that count one drawn node per Apply: the caller has found it
    too big.
    """
    if merge:
        if len(order) + len(leaves) + len(outputs) <= max_nodes:
            return Fold(list(order))
        rep, copies = _merge_repeats(order, highlight)
    else:
        rep, copies = {}, Counter()
    uniq = [n for n in order if n not in rep]
    if merge and len(uniq) + len(leaves) + len(outputs) <= max_nodes:
        return Fold(uniq, rep, copies)

    def canon(node: Apply) -> Apply:
        return rep.get(node, node)

    # Apply-to-Apply edges between the drawn (canonical) nodes.
    producers: dict[Apply, list[Apply]] = {n: [] for n in uniq}
    consumers: dict[Apply, list[Apply]] = {n: [] for n in uniq}
    for node in uniq:
        for inp in node.inputs:
            if inp.owner is not None:
                p = canon(inp.owner)
                producers[node].append(p)
                consumers[p].append(node)

    # Nodes that compute from constants only (a DimShuffle of a constant) go along with their consumers.
    constant_only: set[Apply] = set()
    for node in uniq:
        if all(
            isinstance(i, Constant) if i.owner is None else canon(i.owner) in constant_only for i in node.inputs
        ):
            constant_only.add(node)
    # Keep the highlighted nodes, then alternately the nodes nearest the outputs and nearest the inputs.
    from_outputs = _bfs([canon(o.owner) for o in outputs if o.owner is not None], producers)
    fed = [n for n in uniq if any(i.owner is None and not isinstance(i, Constant) for i in n.inputs)]
    from_inputs = _bfs(fed, consumers)
    candidates = [n for n in uniq if id(n) in highlight]
    for a, b in zip(from_outputs, from_inputs):
        candidates.extend((a, b))
    candidates.extend(from_outputs[len(from_inputs) :])
    budget = max(2, max_nodes - len(outputs) - 2)
    kept: set[Apply] = set()
    spent = 0
    for node in candidates:
        if node in kept or node in constant_only:
            continue
        group = [node] + [p for p in producers[node] if p in constant_only and p not in kept]
        price = sum(cost(n, kept) for n in group)
        if spent + price > budget and kept:
            break
        kept.update(group)
        spent += price
    hidden = [n for n in uniq if n not in kept]

    # The hidden nodes form summary nodes: one per connected piece, or one for all if they are many.
    parent = {n: n for n in hidden}

    def find(n: Apply) -> Apply:
        while parent[n] is not n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    hidden_set = set(hidden)
    for node in hidden:
        for p in producers[node]:
            if p in hidden_set:
                ra, rb = find(node), find(p)
                if ra is not rb:
                    parent[ra] = rb
    pieces: dict[Apply, list[Apply]] = {}
    for node in hidden:
        pieces.setdefault(find(node), []).append(node)
    groups = list(pieces.values())
    if len(groups) > max(1, max_nodes // 10):
        groups = [hidden]
    lone = {members[0] for members in groups if len(members) == 1}  # a group of one node says nothing: draw it
    if lone:
        kept.update(lone)
        groups = [members for members in groups if len(members) > 1]
    group_of = {n: k for k, members in enumerate(groups) for n in members}
    leaf_budget = max(0, budget - spent - len(groups))
    return Fold([n for n in uniq if n in kept], rep, copies, group_of, groups, leaf_budget)


def _bfs(starts: Iterable[Apply], neighbours: dict[Apply, list[Apply]]) -> list[Apply]:
    seen: set[Apply] = set()
    out: list[Apply] = []
    queue = deque()
    for s in starts:
        if s not in seen:
            seen.add(s)
            queue.append(s)
    while queue:
        node = queue.popleft()
        out.append(node)
        for n in neighbours[node]:
            if n not in seen:
                seen.add(n)
                queue.append(n)
    return out


def obj_key(kind: str, obj: Any) -> Any:
    """Key an Op or Type by equality when it is hashable, else by identity."""
    try:
        hash(obj)
    except TypeError:
        return (kind, "id", id(obj))
    return (kind, obj)


def structure_cost(b_seen: dict[str, set]) -> Any:
    """The cost of a node in the structure style: its box, its outputs, and the ops, types, leaves it adds."""
    def cost(node: Apply, kept: set[Apply]) -> int:
        price = 1 + len(node.outputs)
        for key, objs in (("op", [node.op]), ("type", [v.type for v in node.outputs])):
            for obj in objs:
                k = obj_key(key, obj)
                if k not in b_seen[key]:
                    b_seen[key].add(k)
                    price += 1
        for inp in node.inputs:
            if inp.owner is None and id(inp) not in b_seen["leaf"]:
                b_seen["leaf"].add(id(inp))
                price += 2  # the variable and, often, its type
        return price

    return cost


def compact_cost(seen: set[int]) -> Any:
    """The cost of a node in the compact style: its box and the leaves it adds."""
    def cost(node: Apply, kept: set[Apply]) -> int:
        price = 1
        for inp in node.inputs:
            if inp.owner is None and id(inp) not in seen:
                seen.add(id(inp))
                price += 1
        return price

    return cost


def dataflow_cost(seen: set[int]) -> Any:
    """The cost of a node in the dataflow style: its op, the boxes of its outputs and the leaves it adds."""
    leaves = compact_cost(seen)

    def cost(node: Apply, kept: set[Apply]) -> int:
        return leaves(node, kept) + len(node.outputs)

    return cost
