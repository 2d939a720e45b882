"""Walking, cloning, comparing and merging graphs whose nodes have inner graphs."""

from __future__ import annotations

import numpy as np
from inner_graph_helpers import Packaged, inner_fingerprint

import symlab.scalar as ss
import symlab.tensor as st
from symlab.graph.evaluate import evaluate
from symlab.graph.fg import FunctionGraph
from symlab.graph.traversal import (
    applys_with_inner,
    clone,
    clone_get_equiv,
    clone_inner_op,
    equal_computations,
    owns_inner_graph,
)
from symlab.rewriting.merge import MergeOptimizer
from symlab.scalar.composite import Composite
from symlab.tensor.elemwise import Elemwise


def _fused(x: st.TensorVariable) -> st.TensorVariable:
    a = ss.float64("a")
    return Elemwise(Composite([a], [ss.add(a, ss.exp(ss.neg(a)))]))(x)


def _packaged_square_plus_one() -> Packaged:
    u = st.dvector("u")
    return Packaged([u], [u * u + 1.0], name="sq1")


# -- clone ------------------------------------------------------------------------------------
def test_clone_shares_ops_unless_inner_graphs_are_cloned():
    x = st.dvector("x")
    op = _packaged_square_plus_one()
    y = op(x) + _fused(x)
    (x1,), (shared,) = clone([x], [y])
    (x2,), (copied,) = clone([x], [y], clone_inner_graphs=True)
    ops = [n.op for n in FunctionGraph([x], [y], clone=False).toposort()]
    shared_ops = [n.op for n in FunctionGraph([x1], [shared], clone=False).toposort()]
    copied_ops = [n.op for n in FunctionGraph([x2], [copied], clone=False).toposort()]
    assert all(a is b for a, b in zip(ops, shared_ops))
    for old, new in zip(ops, copied_ops):
        if owns_inner_graph(old):
            assert new is not old
        else:
            assert new is old  # ordinary ops stay shared
    value = np.array([0.5, -1.0, 2.0])
    expected = value * value + 1.0 + value + np.exp(-value)
    np.testing.assert_allclose(evaluate([copied], {x2: value})[0], expected)
    np.testing.assert_allclose(evaluate([y], {x: value})[0], expected)


def test_rewriting_a_cloned_inner_graph_leaves_the_original_untouched():
    x = st.dvector("x")
    op = _packaged_square_plus_one()
    y = op(x)
    before = inner_fingerprint([y])
    _, (copied,) = clone([x], [y], clone_inner_graphs=True)
    new_op = copied.owner.op
    assert not set(new_op.fgraph.variables) & set(op.fgraph.variables)
    # Rewrite the copy's inner graph: its ``+ 1.0`` becomes ``+ 2.0``.
    (inner_out,) = new_op.inner_outputs
    (u,) = new_op.inner_inputs
    new_op.fgraph.replace(inner_out, u * u + 2.0, reason="test")
    assert inner_fingerprint([y]) == before
    value = np.array([1.0, 3.0])
    np.testing.assert_allclose(evaluate([y], {x: value})[0], value**2 + 1.0)
    np.testing.assert_allclose(evaluate([copied], {copied.owner.inputs[0]: value})[0], value**2 + 2.0)


def test_nodes_sharing_an_op_share_its_copy():
    x = st.dvector("x")
    op = _packaged_square_plus_one()
    y = op(op(x))
    _, (copied,) = clone([x], [y], clone_inner_graphs=True)
    outer, inner = copied.owner, copied.owner.inputs[0].owner
    assert outer.op is inner.op and outer.op is not op


def test_clone_get_equiv_maps_nodes_and_copies_elemwise_composites():
    x = st.dvector("x")
    y = _fused(x)
    equiv = clone_get_equiv([x], [y], clone_inner_graphs=True)
    new = equiv[y.owner]
    assert new.op == y.owner.op and new.op is not y.owner.op
    assert new.op.scalar_op is not y.owner.op.scalar_op
    assert new.op.scalar_op.inner_outputs[0] is not y.owner.op.scalar_op.inner_outputs[0]
    assert str(new.op) == str(y.owner.op)


def test_clone_inner_op_refuses_an_op_without_an_inner_graph():
    x = st.dvector("x")
    try:
        clone_inner_op((x + 1).owner.op)
    except TypeError as err:
        assert "inner graph" in str(err) and "add" in str(err)
    else:
        raise AssertionError("clone_inner_op accepted an ordinary op")


# -- equal_computations -----------------------------------------------------------------------
def test_distinct_packaged_ops_with_equal_inner_graphs_are_equal_computations():
    x = st.dvector("x")
    a, b = _packaged_square_plus_one(), _packaged_square_plus_one()
    assert a != b  # Packaged defines no equality: only the inner graphs can tell
    assert equal_computations([a(x)], [b(x)])
    u = st.dvector("u")
    c = Packaged([u], [u * u + 2.0])
    assert not equal_computations([a(x)], [c(x)])
    d = Packaged([u], [u + u * u])  # the same value, another computation
    assert not equal_computations([a(x)], [d(x)])


def test_equal_computations_of_nested_inner_graphs():
    def nested(constant: float) -> Packaged:
        u = st.dvector("u")
        v = st.dvector("v")
        inner = Packaged([v], [st.exp(v) * constant])
        return Packaged([u], [inner(u) + u])

    x = st.dvector("x")
    assert equal_computations([nested(2.0)(x)], [nested(2.0)(x)])
    assert not equal_computations([nested(2.0)(x)], [nested(3.0)(x)])


def test_equal_composites_compare_by_equality():
    x, y = st.dvectors("x", "y")
    assert equal_computations([_fused(x)], [_fused(x)])
    assert not equal_computations([_fused(x)], [_fused(y)])
    assert equal_computations([_fused(x)], [_fused(y)], [x], [y])


# -- the walker -------------------------------------------------------------------------------
def test_applys_with_inner_walks_nested_graphs_with_their_paths():
    v = st.dvector("v")
    inner_op = Packaged([v], [st.exp(v)], name="inner")
    u = st.dvector("u")
    outer_op = Packaged([u], [inner_op(u) * 2.0], name="outer")
    x = st.dvector("x")
    y = outer_op(x) + _fused(x)
    walked = [(tuple(str(p.op) for p in path), str(node.op)) for path, node in applys_with_inner([y])]
    assert walked == [
        ((), "outer"),
        (("outer",), "inner"),
        (("outer", "inner"), "Elemwise{exp,no_inplace}"),
        (("outer",), "DimShuffle{x}"),
        (("outer",), "Elemwise{mul,no_inplace}"),
        ((), "Elemwise{Composite{(i0 + exp((-i0)))},no_inplace}"),
        (("Elemwise{Composite{(i0 + exp((-i0)))},no_inplace}",), "neg"),
        (("Elemwise{Composite{(i0 + exp((-i0)))},no_inplace}",), "exp"),
        (("Elemwise{Composite{(i0 + exp((-i0)))},no_inplace}",), "add"),
        ((), "Elemwise{add,no_inplace}"),
    ]


def test_applys_with_inner_of_a_deep_nest_needs_no_recursion():
    u = st.dvector("u")
    op = Packaged([u], [u + 1.0])
    for _ in range(1500):  # deeper than Python's recursion limit
        u = st.dvector("u")
        op = Packaged([u], [op(u)])
    x = st.dvector("x")
    depths = [len(path) for path, _ in applys_with_inner([op(x)])]
    # 1501 packaged nodes at depths 0..1500, then the innermost graph's DimShuffle and add at depth 1501
    assert depths == [*range(1501), 1501, 1501]


# -- merge ------------------------------------------------------------------------------------
def test_merge_merges_nodes_of_equal_composites():
    x = st.dvector("x")
    fg = FunctionGraph([x], [_fused(x) * _fused(x)])
    assert len(fg.apply_nodes) == 3
    MergeOptimizer().rewrite(fg)
    assert len(fg.apply_nodes) == 2
    (mul,) = [n for n in fg.apply_nodes if not owns_inner_graph(n.op)]
    assert mul.inputs[0] is mul.inputs[1]


def test_merge_keeps_one_node_of_one_packaged_op_and_two_of_distinct_ones():
    x = st.dvector("x")
    op = _packaged_square_plus_one()
    fg = FunctionGraph([x], [op(x) + op(x)])
    MergeOptimizer().rewrite(fg)
    assert sum(n.op is op for n in fg.apply_nodes) == 1
    other = _packaged_square_plus_one()  # no equality of its own: merge cannot know they are the same
    fg = FunctionGraph([x], [op(x) + other(x)])
    MergeOptimizer().rewrite(fg)
    assert len([n for n in fg.apply_nodes if isinstance(n.op, Packaged)]) == 2


# -- OpFromGraph and ifelse ---------------------------------------------------------------------
def _axpy(name: str = "axpy", factor: float = 2.0):
    from symlab.compile.builders import OpFromGraph

    a, b = st.dvectors("a", "b")
    return OpFromGraph([a, b], [a + factor * b], name=name)


def test_opfromgraph_clone_and_equal_computations():
    x, y = st.dvectors("x", "y")
    op = _axpy()
    z = op(x, st.exp(y))
    (x1, y1), (copied,) = clone([x, y], [z], clone_inner_graphs=True)
    assert copied.owner.op == op and copied.owner.op is not op
    assert copied.owner.op.fgraph is not op.fgraph
    assert not set(copied.owner.op.fgraph.variables) & set(op.fgraph.variables)
    value = {x: np.array([1.0, 2.0]), y: np.array([0.0, 1.0])}
    np.testing.assert_allclose(evaluate([copied], {x1: value[x], y1: value[y]})[0], value[x] + 2 * np.exp(value[y]))
    other_name = _axpy(name="other")  # names do not count: the same computation
    assert equal_computations([z], [other_name(x, st.exp(y))])
    assert not equal_computations([z], [_axpy(factor=3.0)(x, st.exp(y))])
    assert not equal_computations([z], [op(st.exp(y), x)])


def test_merge_merges_two_equal_opfromgraph_nodes():
    x, y = st.dvectors("x", "y")
    fg = FunctionGraph([x, y], [_axpy()(x, y) * _axpy(name="again")(x, y)])
    MergeOptimizer().rewrite(fg)
    ofg_nodes = [n for n in fg.apply_nodes if owns_inner_graph(n.op)]
    assert len(ofg_nodes) == 1
    (mul,) = [n for n in fg.apply_nodes if n not in ofg_nodes]
    assert mul.inputs[0] is mul.inputs[1]
    value = [np.array([1.0, 2.0]), np.array([3.0, -1.0])]
    np.testing.assert_allclose(evaluate(fg.outputs, dict(zip(fg.inputs, value)))[0], (value[0] + 2 * value[1]) ** 2)


def test_walker_opens_opfromgraph_but_walks_ifelse_branches_in_the_outer_graph():
    from symlab.ifelse import ifelse

    x, y = st.dvectors("x", "y")
    c = st.dscalar("c")
    op = _axpy()
    z = ifelse(c > 0, op(x, y), st.exp(y))
    walked = [(len(path), str(node.op)) for path, node in applys_with_inner([z])]
    assert walked == [
        (0, "Elemwise{gt,no_inplace}"),
        (0, "axpy{inline=False}"),
        (1, "DimShuffle{x}"),
        (1, "Elemwise{mul,no_inplace}"),
        (1, "Elemwise{add,no_inplace}"),
        (0, "Elemwise{exp,no_inplace}"),
        (0, "if{}"),
    ]
    assert not owns_inner_graph(z.owner.op)
    _, (copied,) = clone([x, y, c], [z], clone_inner_graphs=True)
    assert copied.owner.op is z.owner.op  # an ifelse owns no graph: nothing to copy
    assert copied.owner.inputs[1].owner.op is not op
