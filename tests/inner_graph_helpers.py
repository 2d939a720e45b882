"""A test-only op with an inner graph (``Packaged``) and a fingerprint of inner graphs.

``Packaged`` is the smallest ``HasInnerGraph`` tensor op: a graph of tensor ops
packaged as one op, evaluated with ``perform`` by walking its inner graph. It
defines no equality of its own (an op is only ``==`` to itself), so the tests
see what ``equal_computations`` and the printers do with such ops when
``OpFromGraph`` is not there. :func:`inner_fingerprint` is a text of every
inner graph reachable from some outputs (ops, wiring, names, types and the
identity of the inner variables), to check that a read changes none of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from symlab.graph.basic import Apply, Variable
from symlab.graph.evaluate import evaluate
from symlab.graph.fg import FunctionGraph
from symlab.graph.inner_graph import HasInnerGraph, InnerSection
from symlab.graph.op import Op
from symlab.graph.traversal import (
    applys_between,
    applys_with_inner,
    clone_get_equiv,
    graph_inputs,
    io_toposort,
    owns_inner_graph,
)


class Packaged(HasInnerGraph, Op):
    """The graph from ``inputs`` to ``outputs`` (tensor variables) as one op (a copy of it is kept)."""

    def __init__(self, inputs: Sequence[Variable], outputs: Sequence[Variable], name: str | None = None) -> None:
        equiv = clone_get_equiv(list(inputs), list(outputs), copy_inputs=True, copy_orphans=True)
        self._fgraph = FunctionGraph([equiv[i] for i in inputs], [equiv[o] for o in outputs], clone=False)
        if name is not None:
            self.name = name

    @property
    def fgraph(self) -> FunctionGraph:
        return self._fgraph

    def clone(self) -> Packaged:
        return Packaged(self.inner_inputs, self.inner_outputs, name=getattr(self, "_name", None))

    def make_node(self, *inputs: Any) -> Apply:
        inner = self.inner_inputs
        if len(inputs) != len(inner):
            raise TypeError(f"{self} takes {len(inner)} inputs, received {len(inputs)}")
        variables = [i.type.filter_variable(v) for i, v in zip(inner, inputs)]
        return Apply(self, variables, [o.type() for o in self.inner_outputs])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        values = evaluate(self.inner_outputs, dict(zip(self.inner_inputs, inputs)))
        for storage, value in zip(output_storage, values):
            storage[0] = value


def inner_fingerprint(outputs: Sequence[Variable]) -> list[tuple[Any, ...]]:
    """Every inner graph under ``outputs``: its op, and each inner node's op, inputs and outputs (with ids)."""
    out: list[tuple[Any, ...]] = []
    for path, node in applys_with_inner(outputs):
        if path:
            out.append((
                len(path), id(node), str(node.op),
                tuple((id(v), v.name, str(v.type)) for v in node.inputs),
                tuple((id(v), v.name, str(v.type)) for v in node.outputs),
            ))
        if owns_inner_graph(node.op):
            inner = getattr(node.op, "scalar_op", node.op) if not isinstance(node.op, HasInnerGraph) else node.op
            out.append((
                "op", id(inner), str(inner),
                tuple(id(v) for v in inner.inner_inputs), tuple(id(v) for v in inner.inner_outputs),
                len(inner.fgraph.apply_nodes),
            ))
    return out


class Choose(Op):
    """A test-only eager ``ifelse``: inputs ``[condition, then_value, else_value]``, the branches in the outer
    graph, opened (``inner_sections``) as the regions only each branch needs, like ``symlab.ifelse``."""

    has_inner_graph = True

    def make_node(self, condition: Any, then_value: Any, else_value: Any) -> Apply:
        return Apply(self, [condition, then_value, else_value], [then_value.type()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        output_storage[0][0] = inputs[1] if inputs[0] else inputs[2]

    def inner_sections(self, node: Apply, fgraph: Any = None) -> list[InnerSection]:
        condition, then_value, else_value = node.inputs
        leaves = graph_inputs(node.inputs)
        regions = [set(applys_between(leaves, [v])) for v in node.inputs]
        out = []
        for label, k, taken in (("then", 1, True), ("else", 2, False)):
            others = set().union(*(r for j, r in enumerate(regions) if j != k))
            nodes = [n for n in io_toposort(leaves, [node.inputs[k]]) if n not in others]
            inputs = [v for n in nodes for v in n.inputs if v.owner not in nodes]
            out.append(InnerSection(label, list(dict.fromkeys(inputs)), [node.inputs[k]], [None] * len(set(inputs)),
                                    [node.outputs[0]], nodes, owned=False, condition=condition, taken_when=taken))
        return out
