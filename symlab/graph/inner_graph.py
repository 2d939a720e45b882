"""Ops with a graph inside: the ``HasInnerGraph`` protocol and the sections a view opens.

Some ops mean a whole graph: a fused ``Composite`` (a graph of scalar ops), an
``OpFromGraph`` (a user's graph packaged as one op), the body of a ``scan``. They
derive from :class:`HasInnerGraph`, PyTensor's name, and give their graph as
``fgraph`` (a :class:`~symlab.graph.fg.FunctionGraph`), ``inner_inputs`` and
``inner_outputs``; ``clone()`` copies the op with a fresh copy of its graph.

Input ``i`` of a node of such an op feeds ``inner_inputs[i]``, and
``inner_outputs[j]`` gives the node's output ``j``, unless the op says otherwise
(a loop's inputs are sequences and states). What a node shows when it is opened
is one or more :class:`InnerSection`, each a graph with its inputs wired to outer
variables: :func:`inner_sections` asks the op. An ``ifelse`` is the other kind:
its branches live in the outer graph (so merging, gradients and rewrites see
them, as in PyTensor), and its two sections, ``then`` and ``else``, are the
*regions* of outer nodes that only that branch needs.

>>> import symlab.scalar as ss
>>> from symlab.scalar.composite import Composite
>>> x = ss.float64("x")
>>> c = Composite([x], [ss.exp(ss.neg(x))])
>>> isinstance(c, HasInnerGraph), c.inner_inputs, [str(n.op) for n in c.fgraph.toposort()]
(True, [i0], ['neg', 'exp'])
>>> node = c.make_node(ss.float64("y"))
>>> [s.label for s in inner_sections(node)], inner_sections(node)[0].wiring()
(['body'], [(y, i0)])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from symlab.graph.basic import Apply, Variable
from symlab.graph.traversal import applys_between, graph_inputs

if TYPE_CHECKING:
    from symlab.graph.fg import FunctionGraph
    from symlab.graph.op import Op


class HasInnerGraph:
    """Mixin for an op whose meaning is a graph of its own (PyTensor's ``HasInnerGraph``).

    A subclass provides ``fgraph``, ``inner_inputs``, ``inner_outputs`` and
    ``clone()``. The default :meth:`inner_sections` wires input ``i`` of a node
    to ``inner_inputs[i]`` and ``inner_outputs[j]`` to output ``j`` in one
    section labelled ``body``; ops with another wiring (scan's taps) override it.
    """

    #: Ops that open (this mixin, an ``ifelse``, an ``Elemwise`` of a ``Composite``) say True.
    has_inner_graph: bool = True

    @property
    def inner_graph_op(self) -> HasInnerGraph:
        """The op that holds the graph: this one (an ``Elemwise`` of a ``Composite`` answers its Composite)."""
        return self

    @property
    def fgraph(self) -> FunctionGraph:
        """The inner graph, a FunctionGraph from ``inner_inputs`` to ``inner_outputs``."""
        raise NotImplementedError(f"{type(self).__name__} must define fgraph")

    @property
    def inner_inputs(self) -> list[Variable]:
        """The inner graph's inputs, one per input of a node (unless the op says otherwise)."""
        return list(self.fgraph.inputs)

    @property
    def inner_outputs(self) -> list[Variable]:
        """The inner graph's outputs, one per output of a node (unless the op says otherwise)."""
        return list(self.fgraph.outputs)

    def clone(self) -> Op:
        """A copy of the op with a copy of its inner graph (rewriting one leaves the other as it was)."""
        raise NotImplementedError(f"{type(self).__name__} must define clone()")

    def inner_sections(self, node: Apply, fgraph: FunctionGraph | None = None) -> list[InnerSection]:
        """The graphs ``node`` opens to: here one ``body``, inputs and outputs wired by position."""
        return [
            InnerSection(
                label="body",
                inputs=list(self.inner_inputs),
                outputs=list(self.inner_outputs),
                outer_inputs=list(node.inputs),
                outer_outputs=list(node.outputs),
                nodes=self.fgraph.toposort(),
                owned=True,
            )
        ]


@dataclass
class InnerSection:
    """One graph a node opens to, and how it is wired to the node's outer variables.

    ``inputs[i]`` receives the value of ``outer_inputs[i]`` and ``outputs[j]``
    gives ``outer_outputs[j]`` (``None`` where a position has no outer
    counterpart). ``nodes`` are the section's apply nodes in an order that runs
    them. ``owned`` is True when the nodes belong to the op (``Composite``,
    ``OpFromGraph``, scan) and False when they are a region of the outer graph
    (an ``ifelse`` branch): a view then moves those outer nodes into the box.
    ``condition`` is, for a branch, the outer variable that chooses it and
    ``taken_when`` the truth value that takes it.
    """

    label: str
    inputs: list[Variable]
    outputs: list[Variable]
    outer_inputs: list[Variable | None]
    outer_outputs: list[Variable | None]
    nodes: list[Apply]
    owned: bool = True
    condition: Variable | None = None
    taken_when: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def wiring(self) -> list[tuple[Variable, Variable]]:
        """``(outer, inner)`` pairs: which outer variable feeds which inner input."""
        return [(o, i) for o, i in zip(self.outer_inputs, self.inputs) if o is not None and o is not i]


def has_inner_graph(op: Any) -> bool:
    """True when ``op`` opens to one or more inner sections (it says so with ``has_inner_graph``)."""
    return bool(getattr(op, "has_inner_graph", False)) and callable(getattr(op, "inner_sections", None))


def inner_sections(node: Apply, fgraph: FunctionGraph | None = None) -> list[InnerSection]:
    """The sections ``node`` opens to (none for an ordinary op).

    ``fgraph``, when given, is the graph the node is in: a branch region is
    computed from its clients there; without it, from the node's own ancestors.
    """
    if not has_inner_graph(node.op):
        return []
    return list(node.op.inner_sections(node, fgraph))


def branch_lanes(fgraph: FunctionGraph, nodes: Sequence[Apply]) -> dict[Apply, tuple[int, str]]:
    """For each node that only one lazy branch needs, that branch: ``(position of its ifelse, label)``.

    ``nodes`` is ``fgraph``'s topological order. A node in nested branches gets the innermost one (the
    smallest region holding it). Nodes that no branch owns are not in the mapping. Rewrites that would tie
    nodes of two lanes together (fusing them; one overwriting a value the other reads) leave them apart,
    so the lazy run can still skip a branch.
    """
    lanes: dict[Apply, tuple[int, str]] = {}
    sizes: dict[Apply, int] = {}
    for k, node in enumerate(nodes):
        if not has_inner_graph(node.op) or getattr(node.op, "inner_graph_op", None) is not None:
            continue  # ops that own their graph (Composite, OpFromGraph) have no region of the outer graph
        for section in inner_sections(node, fgraph):
            if section.owned:
                continue
            for member in section.nodes:
                if member not in sizes or len(section.nodes) < sizes[member]:
                    sizes[member] = len(section.nodes)
                    lanes[member] = (k, section.label)
    return lanes


def inner_ops(outputs: Sequence[Variable]) -> list[Op]:
    """Every op holding an inner graph reachable from ``outputs``, inner graphs included, outermost first.

    An op that wraps one (an ``Elemwise`` of a ``Composite``) names it as ``inner_graph_op``.

    >>> import symlab.scalar as ss
    >>> from symlab.scalar.composite import Composite
    >>> x = ss.float64("x")
    >>> c = Composite([x], [ss.exp(x)])
    >>> inner_ops([c(ss.float64("y"))]) == [c]
    True
    """
    found: list[Any] = []
    seen: set[int] = set()
    pending = [list(outputs)]
    while pending:
        outs = pending.pop(0)
        for node in applys_between(graph_inputs(outs), outs):
            op = getattr(node.op, "inner_graph_op", None)
            if isinstance(op, HasInnerGraph) and id(op) not in seen:
                seen.add(id(op))
                found.append(op)
                pending.append(list(op.inner_outputs))
    return found


__all__ = ["HasInnerGraph", "InnerSection", "branch_lanes", "has_inner_graph", "inner_ops", "inner_sections"]
