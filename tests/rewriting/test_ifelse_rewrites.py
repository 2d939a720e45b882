"""The ifelse rewrites: each one applied (recorded in the trace), and the optimized graph against the unoptimized."""

from __future__ import annotations

import numpy as np
import pytest

import symlab.tensor as st
from symlab.ifelse import IfElse, ifelse
from symlab.rewriting import rewrite_graph
from tests.oracle import REWRITES, UNOPTIMIZED, assert_same_results, compile_function


def ifelse_nodes(f):
    return [n for n in f.maker.fgraph.toposort() if isinstance(n.op, IfElse)]


def accepted(f):
    return [s.rule for s in f.trace.accepted]


def against_unoptimized(inputs, outputs, cases, mode="NUMPY"):
    """Compile in ``mode`` and unoptimized; the same values on every case. Returns the optimized function."""
    optimized = compile_function(inputs, outputs, mode, on_unused_input="ignore")
    reference = compile_function(inputs, outputs, UNOPTIMIZED, on_unused_input="ignore")
    for values in cases:
        assert_same_results(optimized(*values), reference(*values), REWRITES)
    return optimized


X, Y = np.array([0.5, 1.5, 2.5]), np.array([3.0, 4.0])


@pytest.mark.parametrize("value", [1, 0])
def test_a_constant_condition_is_lifted(value):
    x, y = st.dvectors("x", "y")
    out = ifelse(st.constant(value, dtype="int8"), st.exp(x).sum(), st.log(y).sum())
    f = against_unoptimized([x, y], out, [(X, Y)])
    assert "ifelse_constant_condition" in accepted(f)
    assert not ifelse_nodes(f)
    kept = {str(n.op) for n in f.maker.fgraph.toposort()}
    assert any(("exp" if value else "log") in op for op in kept)
    assert not any(("log" if value else "exp") in op for op in kept)  # the other branch is gone


@pytest.mark.parametrize("mode", ["NUMPY", "NUMBA"])
def test_identical_branches_become_the_branch(mode):
    c, x, y = st.iscalar("c"), st.dvector("x"), st.dvector("y")
    e = st.exp(x)
    f = against_unoptimized([c, x, y], ifelse(c, e, e), [(1, X, Y), (0, X, Y)], mode)
    assert "ifelse_identical_branches" in accepted(f) and not ifelse_nodes(f)
    # Several outputs: the identical pair leaves; the others keep an ifelse of their own.
    g = against_unoptimized([c, x, y], ifelse(c, (e, x * 2.0), (e, y)), [(1, X, Y), (0, X, Y)], mode)
    assert "ifelse_identical_branches" in accepted(g)
    (node,) = ifelse_nodes(g)
    assert node.op.n_outs == 1


def test_an_ifelse_inside_a_branch_on_the_same_condition_takes_its_branch():
    c, x, y, z = st.iscalar("c"), st.dvector("x"), st.dvector("y"), st.dvector("z")
    out = ifelse(c, ifelse(c, st.exp(x), st.log(y)) * 2.0, z) + ifelse(c, z, ifelse(c, x, y * 3.0))
    cases = [(1, X, X + 1.0, X - 1.0), (0, X, X + 1.0, X - 1.0)]
    f = against_unoptimized([c, x, y, z], out, cases)
    assert "ifelse_same_condition_inside" in accepted(f)
    assert all(not any(isinstance(i.owner.op, IfElse) for i in n.inputs[1:] if i.owner is not None)
               for n in ifelse_nodes(f))
    # Directly inside: the inner else is dead, and goes.
    g = against_unoptimized([c, x, y, z], ifelse(c, ifelse(c, st.exp(x), st.log(y)), z) + 1.0, cases)
    assert "ifelse_same_condition_inside" in accepted(g)
    assert len(ifelse_nodes(g)) == 1 and not any("log" in str(n.op) for n in g.maker.fgraph.toposort())


@pytest.mark.parametrize("mode", ["NUMPY", "NUMBA"])
def test_ifelses_on_the_same_condition_merge_into_one_node(mode):
    a, b = st.dscalars("a", "b")
    x, y = st.dvectors("x", "y")
    cond = st.lt(a, b)
    first = ifelse(cond, st.exp(x).sum(), st.log(y).sum(), name="first")
    second = ifelse(cond, (x * 2.0).max(), (y - 1.0).min(), name="second")
    f = against_unoptimized([a, b, x, y], [first, second], [(0.0, 1.0, X, Y), (1.0, 0.0, X, Y)], mode)
    assert "ifelse_merge_same_condition" in accepted(f)
    (node,) = ifelse_nodes(f)
    assert node.op.n_outs == 2 and str(node.op) == "if{first&second}"


def test_ifelses_do_not_merge_when_one_needs_the_other():
    c, x, y = st.iscalar("c"), st.dvector("x"), st.dvector("y")
    first = ifelse(c, x.sum(), y.sum())
    second = ifelse(c, first * 2.0, first + 1.0)
    out, trace = rewrite_graph([first, second], include=("ifelse_merge_same_condition",))
    assert "ifelse_merge_same_condition" not in [s.rule for s in trace.accepted]


@pytest.mark.parametrize("mode", ["NUMPY", "NUMBA"])
def test_an_op_in_both_branches_is_pushed_out(mode):
    c, x, y = st.iscalar("c"), st.dvector("x"), st.dvector("y")
    z = st.dvector("z")
    out = ifelse(c, (st.exp(x) * z, x + 1.0), (st.exp(y) * z, y * 2.0))
    cases = [(1, X, X + 2.0, X), (0, X, X + 2.0, X)]
    f = against_unoptimized([c, x, y, z], out, cases, mode)
    assert "ifelse_push_out_common_op" in accepted(f)
    (node,) = ifelse_nodes(f)
    after = [n for n in f.maker.fgraph.toposort() if node in [i.owner for i in n.inputs]]
    assert after, "the pushed op reads the ifelse's output"
    exps = [n for n in f.maker.fgraph.toposort() if "exp" in str(n.op)]
    assert len(exps) == 1  # one exp, applied to the chosen value


def test_push_out_leaves_an_op_used_elsewhere():
    c, x, y = st.iscalar("c"), st.dvector("x"), st.dvector("y")
    ex = st.exp(x)
    out, trace = rewrite_graph([ifelse(c, ex, st.exp(y)), ex.sum()], include=("ifelse_push_out_common_op",))
    assert "ifelse_push_out_common_op" not in [s.rule for s in trace.accepted]


def test_the_rules_are_in_the_database_under_the_ifelse_tag():
    from symlab.rewriting import default_db

    selected = {e.name for phase in default_db.query(include=("ifelse",)) for e in phase.entries}
    for rule in ("ifelse_constant_condition", "ifelse_identical_branches", "ifelse_same_condition_inside",
                 "ifelse_merge_same_condition", "ifelse_push_out_common_op"):
        assert rule in default_db and rule in selected
        assert {"ifelse", "fast_compile"} <= default_db[rule].tags and default_db[rule].phase == "canonicalize"
