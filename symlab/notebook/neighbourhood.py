"""Which nodes are near a selection: the graph view's focus region, and where its arrow keys move.

A :class:`Neighbourhood` knows, for a graph's Apply nodes in order (inputs first), which nodes read each
node's outputs. :meth:`~Neighbourhood.region` is the focus mode's part of the graph: the nodes within
``radius`` edges of the selection (a lone input: the nodes reading it). :meth:`~Neighbourhood.move` is
where an arrow key goes from the selection: ``up`` to an input, ``down`` to a client, ``left``/``right``
to the node before or after it in the order.

>>> import symlab.tensor as st
>>> from symlab.printing.folding import toposort
>>> x = st.dvector("x")
>>> y = st.exp(st.sin(st.cos(x)))
>>> order, _ = toposort([y])
>>> near = Neighbourhood(order)
>>> sorted(str(n.op) for n in near.region(order[0], radius=1))
['Elemwise{cos,no_inplace}', 'Elemwise{sin,no_inplace}']
>>> near.move(order[1], "up", lambda var: []) is order[0], near.move(order[1], "right", lambda var: []) is order[2]
(True, True)
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from symlab.graph.basic import Apply, Variable

__all__ = ["MOVES", "Neighbourhood"]

#: The directions an arrow key moves the selection.
MOVES = ("up", "down", "left", "right")


class Neighbourhood:
    """Who reads whom among the Apply nodes ``order`` of a graph (inputs first)."""

    def __init__(self, order: list[Apply]) -> None:
        self.order = order
        self.consumers: dict[Apply, list[Apply]] = {n: [] for n in order}
        for node in order:
            for inp in node.inputs:
                if inp.owner in self.consumers:
                    self.consumers[inp.owner].append(node)

    def readers(self, var: Any) -> list[Apply]:
        """The nodes reading the variable ``var`` (none for anything else)."""
        return [n for n in self.order if isinstance(var, Variable) and any(i is var for i in n.inputs)]

    def region(self, selected: Apply | Variable, radius: int) -> set[Apply]:
        """The nodes within ``radius`` edges of ``selected`` (a variable: of its owner and its readers)."""
        start = [selected] if isinstance(selected, Apply) else []
        if isinstance(selected, Variable):
            start = ([selected.owner] if selected.owner is not None else []) + [
                n for n in self.order if any(i is selected for i in n.inputs)]
        region: set[Apply] = set()
        queue = deque((n, 0) for n in start if n in self.consumers)
        while queue:
            node, d = queue.popleft()
            if node in region:
                continue
            region.add(node)
            if d < radius:
                for other in [i.owner for i in node.inputs if i.owner in self.consumers] + self.consumers[node]:
                    queue.append((other, d + 1))
        if not region:  # a lone input or constant
            region = set(self.readers(selected))
        return region

    def move(self, obj: Any, direction: str, clients: Callable[[Variable], list[tuple[Any, int]]]) -> Any:
        """Where ``direction`` goes from ``obj`` (the selection; ``clients(var)`` its uses), or ``None``.

        With nothing selected (or a folded group) it goes to the last node.
        """
        if obj is None or isinstance(obj, list):
            return self.order[-1] if self.order else None
        node = obj if isinstance(obj, Apply) else (obj.owner if isinstance(obj, Variable) else None)
        if direction == "up":
            if isinstance(obj, Apply):
                return next((i.owner or i for i in obj.inputs), None)
            return obj.owner if isinstance(obj, Variable) else None
        if direction == "down":
            outs = obj.outputs if isinstance(obj, Apply) else [obj] if isinstance(obj, Variable) else []
            for out in outs:
                for client, _ in clients(out):
                    if client != "output":
                        return client
            return None
        if node is None or node not in self.consumers:
            return None
        position = self.order.index(node) + (-1 if direction == "left" else 1)
        return self.order[position] if 0 <= position < len(self.order) else None
