"""Traversal, sorting, cloning and comparison, including graphs far deeper than the recursion limit."""

import sys

import pytest

import symlab.tensor as T
from symlab.graph import (
    ancestors,
    applys_between,
    clone,
    clone_replace,
    equal_computations,
    graph_inputs,
    io_toposort,
    orphans_between,
    vars_between,
)
from symlab.graph.basic import CycleError


def test_traversal_seed_003():
    x = T.dmatrix("x")
    y = x * 2.0
    assert type(y.owner).__name__ == "Apply"
    assert y.owner.op.name == "Elemwise{mul,no_inplace}"
    assert len(y.owner.inputs) == 2
    assert y.owner.inputs[0] is x
    assert repr(y.owner.inputs[1]) == "DimShuffle{x,x}.0"
    assert type(y.owner.inputs[1]) is T.TensorVariable
    assert isinstance(y.owner.inputs[1].owner.op, T.DimShuffle)
    assert repr(y.owner.inputs[1].owner.inputs) == "[TensorConstant{2.0}]"


def test_inputs_ancestors_and_between():
    x, y, z = T.dmatrices("x", "y", "z")
    p = y * z
    e = x + p
    assert graph_inputs([e]) == [x, y, z]
    assert list(ancestors([e])) == [e, x, p, y, z]
    assert set(vars_between([p], [e])) == {e, x, p}
    assert list(applys_between([x, y, z], [e])) == [e.owner, p.owner]
    c = e + 1.0
    assert [str(v) for v in orphans_between([x, y, z], [c])] == ["TensorConstant{1.0}"]
    assert list(ancestors([e], blockers=[p])) == [e, x, p]


def test_toposort_is_deterministic_and_respects_dependencies():
    x = T.dvector("x")
    a, b = T.exp(x), T.log(x)
    out = a * b + a
    order = io_toposort([x], [out])
    for k, node in enumerate(order):
        for inp in node.inputs:
            if inp.owner is not None:
                assert order.index(inp.owner) < k
    assert [str(n.op) for n in order] == [str(n.op) for n in io_toposort([x], [out])]
    assert [str(n.op) for n in order] == [
        "Elemwise{exp,no_inplace}",
        "Elemwise{log,no_inplace}",
        "Elemwise{mul,no_inplace}",
        "Elemwise{add,no_inplace}",
    ]


def test_toposort_orderings_and_cycle_detection():
    x = T.dvector("x")
    a, b = T.exp(x), T.log(x)
    out = a + b
    order = io_toposort([x], [out], orderings={a.owner: [b.owner]})
    assert order.index(b.owner) < order.index(a.owner)
    with pytest.raises(CycleError):
        io_toposort([x], [out], orderings={a.owner: [out.owner]})


def test_clone_copies_everything_and_leaves_original():
    x, y = T.dvectors("x", "y")
    e = x * y + 1.0
    (nx, ny), (ne,) = clone([x, y], [e])
    assert nx is not x and ny is not y and ne is not e
    assert nx.name == "x"
    assert graph_inputs([ne])[:2] == [nx, ny]
    assert equal_computations([e], [ne], [x, y], [nx, ny])
    assert e.owner.inputs[0].owner.inputs == [x, y]
    _, (shared_leaves,) = clone([x, y], [e], copy_inputs=False)
    assert graph_inputs([shared_leaves])[:2] == [x, y]


def test_clone_replace():
    x, y = T.dscalars("x", "y")
    e = x * 2.0 + x
    r = clone_replace(e, {x: y + 1.0})
    assert float(r.eval({y: 1.0})) == 6.0
    assert graph_inputs([e])[0] is x  # user graph unchanged
    assert float(clone_replace(e, {x: 3.0}).eval({})) == 9.0
    with pytest.raises(TypeError, match="Cannot convert"):
        clone_replace(e, {x: T.dvector("v")})


def test_equal_computations():
    x, y = T.dvectors("x", "y")
    assert equal_computations([x + y], [x + y])
    assert not equal_computations([x + y], [y + x])
    assert equal_computations([x * 2.0], [x * 2.0])
    assert not equal_computations([x * 2.0], [x * 3.0])
    a, b = T.dvectors("a", "b")
    assert equal_computations([x + y], [a + b], [x, y], [a, b])
    assert not equal_computations([x + y], [a + b])


def test_deep_chain_at_default_recursion_limit():
    limit = sys.getrecursionlimit()
    x = T.dscalar("x")
    y = x
    n = 20 * limit  # far past the recursion limit: a recursive walk would overflow
    for _ in range(n):
        y = T.neg(y)
    assert sys.getrecursionlimit() == limit
    order = io_toposort([x], [y])
    assert len(order) == n
    assert graph_inputs([y]) == [x]
    (nx,), (ny,) = clone([x], [y])
    assert equal_computations([y], [ny], [x], [nx])
    assert sum(1 for _ in ancestors([y])) == n + 1
    assert float(y.eval({x: 1.5})) == 1.5  # an even number of negations
