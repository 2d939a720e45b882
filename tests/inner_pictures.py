"""Graphs with inner graphs that the picture and view tests of issue 32 share.

:func:`fused` is a compiled function with one fused ``Composite`` node, :func:`branch_graph` a graph with an
``ifelse``, :func:`nested_ofg` an ``OpFromGraph`` holding another, :data:`HOSTILE` names a user may give.
"""

from __future__ import annotations

from typing import Any

import symlab
import symlab.tensor as st
from symlab.compile.builders import OpFromGraph
from symlab.graph.fg import FunctionGraph
from symlab.ifelse import ifelse

HOSTILE = ['<script>alert("x")</script>', "C:\\new\\N", 'a"b&amp;', "<lambda>"]


def fused() -> tuple[Any, FunctionGraph, Any, str]:
    """A compiled function with one fused Composite node: (the function, its graph, the node, the node's key)."""
    x, y = st.dvector("x"), st.dvector("y")
    f = symlab.function([x, y], st.exp(x) * y + x)
    fg = f.maker.fgraph
    (node,) = [n for n in fg.toposort() if getattr(n.op, "has_inner_graph", False)]
    return f, fg, node, fg.key(node)


def branch_graph() -> tuple[FunctionGraph, Any, str, Any, Any]:
    """An ``ifelse`` in a graph: (the graph, the ifelse node, its key, the then branch's node, the else's)."""
    a, b = st.dscalar("a"), st.dscalar("b")
    out = ifelse(st.lt(a, b), st.exp(st.sin(a)), st.cos(b) * 2)
    fg = FunctionGraph([a, b], [out])
    node = fg.outputs[0].owner
    return fg, node, fg.key(node), node.inputs[1].owner, node.inputs[2].owner


def nested_ofg() -> tuple[FunctionGraph, Any, str, str, OpFromGraph]:
    """``wrap(a) * 2`` with ``wrap`` an OpFromGraph using ``scale_exp``, another: (the graph, wrap's node, its
    key, the key of scale_exp's node inside it, scale_exp)."""
    x, y = st.dvector("x"), st.dvector("y")
    inner_op = OpFromGraph([x, y], [st.exp(x) * y], name="scale_exp")
    outer_op = OpFromGraph([x], [inner_op(x, x) + 1], name="wrap")
    a = st.dvector("a")
    fg = FunctionGraph([a], [outer_op(a) * 2])
    (node,) = [n for n in fg.toposort() if isinstance(n.op, OpFromGraph)]
    (inner_node,) = [n for n in node.op.fgraph.toposort() if isinstance(n.op, OpFromGraph)]
    return fg, node, fg.key(node), f"{fg.key(node)}/{node.op.fgraph.key(inner_node)}", inner_op


def thousand_nodes_with_ofg(body_nodes: int) -> tuple[FunctionGraph, Any, str]:
    """A 1,000-node chain with, halfway, an OpFromGraph ``big_body`` of ``body_nodes`` inner steps: (the graph,
    the op's node, its key)."""
    u = st.dvector("u")
    body = u
    for k in range(body_nodes):
        body = st.sin(body) + k if k % 2 else st.exp(body)
    op = OpFromGraph([u], [body], name="big_body")
    x = st.dvector("x")
    y = x
    for k in range(1000):
        y = st.cos(y) if k % 3 else y * 2
        if k == 500:
            y = op(y)
    fg = FunctionGraph([x], [y])
    (node,) = [n for n in fg.toposort() if isinstance(n.op, OpFromGraph)]
    return fg, node, fg.key(node)
