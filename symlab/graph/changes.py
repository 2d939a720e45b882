"""What a FunctionGraph tells about its changes: typed edit events, whole changes, and the Feature protocol.

Every edit of a :class:`~symlab.graph.fg.FunctionGraph` is one of five
events, in the order it happened:

:class:`NodeImported`
    an Apply node entered the graph (with the inputs it had then);
:class:`VariableImported`
    a root variable (an input or a constant) entered the graph;
:class:`InputChanged`
    input ``index`` of ``node`` (or output ``index`` of the graph when
    ``node == "output"``) went from ``old`` to ``new``;
:class:`NodePruned`, :class:`VariablePruned`
    a node, or a constant, left the graph because nothing used it any more;
:class:`OutputAdded`, :class:`OutputRemoved`
    ``fgraph.add_output(var)`` / ``fgraph.remove_output(i)`` (the outputs
    after a removed one move down by one, and so do their ``("output", i)``
    clients).

Edits come in *changes*: a ``replace``, a ``replace_all_validate``, a
rewrite step, or a ``with fgraph.change(reason):`` block. A change either
commits (the graph's ``version`` grows by one and every feature's
``on_change_end(fgraph, change)`` hears one :class:`GraphChange`), or is
rolled back (the graph is put back as it was, the version stays, and no
``on_change_end`` is called: a refused change leaves no visible trace).

>>> import symlab.tensor as st
>>> from symlab.graph.fg import FunctionGraph
>>> class Watch(Feature):
...     def on_change_end(self, fgraph, change):
...         print(change.version, change.reason, [type(e).__name__ for e in change.events])
>>> x = st.dvector("x")
>>> fg = FunctionGraph([x], [st.exp(x) * 2.0], features=[Watch()])
>>> exp_out = fg.outputs[0].owner.inputs[0]
>>> fg.replace(exp_out, st.log(fg.inputs[0]), reason="demo")
1 demo ['NodeImported', 'InputChanged', 'NodePruned']
>>> fg.version
1
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from symlab.graph.basic import Apply, Variable

if TYPE_CHECKING:  # annotations only (tools/import_graph.py): the graph's module is built on this one
    from symlab.graph.fg import FunctionGraph


@dataclass(slots=True, eq=False)
class NodeImported:
    """``node`` entered the graph with these ``inputs``; its key serial is ``serial`` (outputs follow it)."""

    node: Apply
    inputs: tuple[Variable, ...]
    serial: int

    def __repr__(self) -> str:
        return f"NodeImported({self.node})"


@dataclass(slots=True, eq=False)
class VariableImported:
    """A root ``variable`` (graph input or constant) entered the graph with key serial ``serial``."""

    variable: Variable
    serial: int

    def __repr__(self) -> str:
        return f"VariableImported({self.variable})"


@dataclass(slots=True, eq=False)
class InputChanged:
    """Input ``index`` of ``node`` (output ``index`` of the graph when ``node == "output"``): ``old`` -> ``new``."""

    node: Any
    index: int
    old: Variable
    new: Variable

    def __repr__(self) -> str:
        return f"InputChanged({self.node}[{self.index}]: {self.old} -> {self.new})"


@dataclass(slots=True, eq=False)
class NodePruned:
    """``node`` (key serial ``serial``) left the graph: nothing used its outputs any more."""

    node: Apply
    serial: int

    def __repr__(self) -> str:
        return f"NodePruned({self.node})"


@dataclass(slots=True, eq=False)
class VariablePruned:
    """A root ``variable`` (a constant, key serial ``serial``) left the graph: nothing used it any more."""

    variable: Variable
    serial: int

    def __repr__(self) -> str:
        return f"VariablePruned({self.variable})"


@dataclass(slots=True, eq=False)
class OutputAdded:
    """``variable`` became output ``index`` of the graph (the last one)."""

    index: int
    variable: Variable

    def __repr__(self) -> str:
        return f"OutputAdded({self.index}: {self.variable})"


@dataclass(slots=True, eq=False)
class OutputRemoved:
    """Output ``index`` (``variable``) was removed; the outputs after it moved down by one."""

    index: int
    variable: Variable

    def __repr__(self) -> str:
        return f"OutputRemoved({self.index}: {self.variable})"


GraphEvent = NodeImported | VariableImported | InputChanged | NodePruned | VariablePruned | OutputAdded | OutputRemoved


@dataclass(slots=True, eq=False)
class GraphChange:
    """One committed change: the graph's ``version`` after it, its ``reason`` and its ``events`` in order."""

    version: int
    reason: str | None
    events: tuple[GraphEvent, ...]

    @property
    def imported(self) -> list[Apply]:
        """The nodes this change put into the graph (and did not take out again)."""
        return net_nodes(self.events)[1]

    @property
    def pruned(self) -> list[Apply]:
        """The nodes this change took out of the graph (that were there before it)."""
        return net_nodes(self.events)[0]

    @property
    def changed_inputs(self) -> list[InputChanged]:
        return [e for e in self.events if type(e) is InputChanged]


def net_nodes(events: tuple[GraphEvent, ...] | list[GraphEvent]) -> tuple[list[Apply], list[Apply]]:
    """``(removed, created)``: the nodes ``events`` took out of the graph and put into it, net."""
    state: dict[Any, bool] = {}  # node -> in the graph after the events
    was_in: dict[Any, bool] = {}  # node -> in the graph before them
    for event in events:
        kind = type(event)
        if kind is NodeImported:
            was_in.setdefault(event.node, False)
            state[event.node] = True
        elif kind is NodePruned:
            was_in.setdefault(event.node, True)
            state[event.node] = False
    removed = [n for n, inside in state.items() if was_in[n] and not inside]
    created = [n for n, inside in state.items() if not was_in[n] and inside]
    return removed, created


class InconsistencyError(Exception):
    """A feature found the graph invalid (raised by ``validate``)."""


class Feature:
    """The callbacks a FunctionGraph calls on its attached features; every one is optional.

    Subclass it (or write a class with any of these methods) and attach it
    with ``fgraph.attach_feature(feature)``; ``weak=True`` holds it by a weak
    reference, so a view that goes away leaves nothing attached. The graph
    calls only the methods a feature overrides.

    ``on_attach(fgraph)`` may refuse by raising; ``validate(fgraph)`` raises
    :class:`InconsistencyError` when the graph is invalid
    (``replace_validate`` then rolls the change back); ``orderings(fgraph)``
    returns ``{node: [nodes that must run before it]}``. The edit callbacks
    are called for every edit, including the edits that roll a refused
    change back (``reason == "revert"``); ``on_change_end`` is called once
    per committed change, after the graph is consistent again.

    Every callback's ``fgraph`` is the :class:`~symlab.graph.fg.FunctionGraph`
    the feature is attached to.
    """

    def on_attach(self, fgraph: FunctionGraph) -> None:
        """The feature was attached to ``fgraph``."""

    def on_detach(self, fgraph: FunctionGraph) -> None:
        """The feature was removed from ``fgraph``."""

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: str | None) -> None:
        """``node`` entered the graph."""

    def on_change_input(
        self, fgraph: FunctionGraph, node: Any, i: int, old: Variable, new: Variable, reason: str | None
    ) -> None:
        """Input ``i`` of ``node`` (or output ``i`` when ``node == "output"``) became ``new``."""

    def on_prune(self, fgraph: FunctionGraph, node: Apply, reason: str | None) -> None:
        """``node`` left the graph."""

    def on_change_end(self, fgraph: FunctionGraph, change: GraphChange) -> None:
        """A change committed: the graph is consistent, ``fgraph.version == change.version``."""

    def validate(self, fgraph: FunctionGraph) -> None:
        """Raise ``InconsistencyError`` if the graph is not valid."""

    def orderings(self, fgraph: FunctionGraph) -> dict[Apply, list[Apply]]:
        """Extra ``{node: [nodes that must run before it]}`` for ``fgraph.toposort()``."""
        return {}


#: The callbacks of the protocol, in the order the graph looks them up.
CALLBACKS = ("on_attach", "on_detach", "on_import", "on_change_input", "on_prune", "on_change_end", "validate",
             "orderings")
