"""The inner-graph protocol: what an op with a graph inside says about it, and what a view opens."""

from __future__ import annotations

import pickle

import numpy as np

import symlab
import symlab.scalar as ss
import symlab.tensor as st
from symlab.graph.inner_graph import HasInnerGraph, has_inner_graph, inner_ops, inner_sections
from symlab.scalar.composite import Composite


def test_composite_exposes_its_graph_and_wiring():
    x, y = ss.float64("x"), ss.float64("y")
    c = Composite([x, y], [ss.mul(ss.exp(x), y)])
    assert isinstance(c, HasInnerGraph) and has_inner_graph(c)
    assert c.inner_inputs == c.fgraph.inputs and c.inner_outputs == c.fgraph.outputs
    assert [str(n.op) for n in c.fgraph.toposort()] == ["exp", "mul"]
    a, b = ss.float64("a"), ss.float64("b")
    node = c.make_node(a, b)
    (section,) = inner_sections(node)
    assert section.label == "body" and section.owned
    assert section.wiring() == [(a, c.inner_inputs[0]), (b, c.inner_inputs[1])]
    assert section.outer_outputs == node.outputs


def test_clone_is_equal_but_separate():
    x = ss.float64("x")
    c = Composite([x], [ss.exp(ss.neg(x))])
    copy = c.clone()
    assert copy == c and hash(copy) == hash(c)
    assert copy.fgraph is not c.fgraph
    assert not set(copy.fgraph.variables) & set(c.fgraph.variables)


def test_fused_elemwise_opens_to_its_composite():
    x, y = st.dvectors("x", "y")
    f = symlab.function([x, y], st.exp(x) * y + x, mode="NUMPY")
    (node,) = f.maker.fgraph.toposort()
    assert has_inner_graph(node.op)
    (section,) = inner_sections(node, f.maker.fgraph)
    assert [o for o, _ in section.wiring()] == node.inputs
    assert inner_ops(f.maker.fgraph.outputs) == [node.op.scalar_op]
    plain = (x + 1).owner
    assert not has_inner_graph(plain.op) and inner_sections(plain) == []


def test_pickled_composite_rebuilds_its_graph():
    x = ss.float64("x")
    c = Composite([x], [ss.add(x, ss.exp(x))])
    c.fgraph  # build it before pickling: it is not part of the pickled state
    again = pickle.loads(pickle.dumps(c))
    assert again == c
    assert [str(n.op) for n in again.fgraph.toposort()] == ["exp", "add"]
    assert np.allclose(again.impl(np.array([0.0, 1.0])), [1.0, 1.0 + np.e])
