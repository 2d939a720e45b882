"""Which FunctionGraphs hold a node or a variable: the registry of the graphs alive.

Membership is each graph's to say (``node in fgraph``); nothing is written on
the nodes. A :class:`~symlab.graph.fg.FunctionGraph` enters this registry when
it is made and leaves it when it is collected, so ``var.clients`` and
``node.fgraph`` can ask the graphs alive which of them holds an object:

>>> import symlab.tensor as st
>>> from symlab.graph.fg import FunctionGraph
>>> x = st.dvector("x")
>>> fg = FunctionGraph([x], [x * 2], clone=False)
>>> graphs_holding(x) == [fg], graphs_holding(st.dvector("y"))
(True, [])
"""

from __future__ import annotations

import gc
import weakref
from typing import Any

#: Every FunctionGraph alive (held weakly: the registry keeps none alive).
_LIVE_GRAPHS: weakref.WeakSet[Any] = weakref.WeakSet()


def add_live_graph(fgraph: Any) -> None:
    """Register ``fgraph`` (a FunctionGraph): it is asked by :func:`graphs_holding` while it lives."""
    _LIVE_GRAPHS.add(fgraph)


def live_graphs() -> list[Any]:
    """The FunctionGraphs alive, in no particular order."""
    return list(_LIVE_GRAPHS)


def graphs_holding(obj: Any) -> list[Any]:
    """The live FunctionGraphs that hold ``obj`` (a Variable or an Apply node)."""
    found = [g for g in list(_LIVE_GRAPHS) if obj in g]
    if len(found) > 1:  # a graph nothing refers to may wait for the cycle collector: ask it first
        gc.collect()
        found = [g for g in list(_LIVE_GRAPHS) if obj in g]
    return found
