"""The lazy plan: regions moved before their ifelse behind guards, nesting, and the inplace orderings respected."""

from __future__ import annotations

import numpy as np

import symlab.scalar as ss
import symlab.tensor as st
from symlab.compile.lazy_plan import GUARD, NODE, lazy_plan, nodes_to_run
from symlab.graph.fg import FunctionGraph
from symlab.ifelse import ifelse
from symlab.tensor.elemwise import Elemwise


def ops(nodes):
    return [str(n.op) for n in nodes]


def test_every_node_once_and_each_region_just_before_its_ifelse():
    c, x, y = st.iscalar("c"), st.dvector("x"), st.dvector("y")
    shared = st.exp(x)
    out = ifelse(c, (shared * y).sum(), st.log(shared).sum()) + y.sum()
    fg = FunctionGraph([c, x, y], [out], clone=False)
    order = fg.toposort()
    plan = lazy_plan(order, fg.outputs)
    assert sorted(map(id, plan.order)) == sorted(map(id, order))
    choice = next(n for n in order if "if" in str(n.op))
    at = plan.order.index(choice)
    then, other = plan.guards
    assert plan.order[at - len(then.nodes) - len(other.nodes) : at] == then.nodes + other.nodes
    assert ops(then.nodes) == ["Elemwise{mul,no_inplace}", "Sum{acc_dtype=float64}"]
    assert plan.order.index(shared.owner) < at - 4  # needed by both branches: before both guards
    guards = [step for step in plan.program if step[0] == GUARD]
    assert [(g[3], g[4] - plan.program.index(g) - 1) for g in guards] == [(True, 2), (False, 2)]


def test_nested_ifelse_guards_nest():
    c, d, x = st.iscalar("c"), st.iscalar("d"), st.dvector("x")
    inner = ifelse(d, st.exp(x), st.log(x))
    out = ifelse(c, (inner * 2.0).sum(), x.sum())
    fg = FunctionGraph([c, d, x], [out])
    plan = lazy_plan(fg.toposort(), fg.outputs)
    outer_then = next(g for g in plan.guards if g.condition is fg.inputs[0] and g.taken_when)
    inner_guards = [g for g in plan.guards if g.condition is fg.inputs[1]]
    assert len(inner_guards) == 2
    for g in inner_guards:
        assert set(g.nodes) < set(outer_then.nodes)
        assert all(plan.guard_of[n] is g for n in g.nodes)  # the innermost guard
    start = next(k for k, s in enumerate(plan.program) if s[0] == GUARD and s[1] == outer_then.index)
    inner_starts = [k for k, s in enumerate(plan.program) if s[0] == GUARD and s[1] in {g.index for g in inner_guards}]
    assert all(start < k < plan.program[start][4] for k in inner_starts)
    # Evaluating lazily: with c false, no node of the outer then region runs (the inner guards included).
    skipped = set(outer_then.nodes)
    ran = list(nodes_to_run(fg.toposort(), fg.outputs, lambda v: np.int32(0)))
    assert not skipped & set(ran) and len(ran) == len(fg.toposort()) - len(skipped)


def test_a_region_an_inplace_node_would_be_moved_past_stays_eager():
    x = st.dvector("x")
    doubled = x * 2.0
    then = st.exp(doubled).sum()
    destroy = Elemwise(ss.add, {0: 0})(doubled, st.constant(1.0))  # writes into doubled
    cond = st.gt(destroy.max(), 0.0)
    out = ifelse(cond, then, x.sum())
    # A run order the destroy handler would give: exp reads doubled before the inplace add overwrites it.
    order = [doubled.owner, then.owner.inputs[0].owner, then.owner, destroy.owner, cond.owner.inputs[0].owner,
             cond.owner, out.owner.inputs[2].owner, out.owner]
    plan = lazy_plan(order, [out])
    assert [(b, why) for _n, b, why in plan.eager] == [("then", "moving it would pass Elemwise{add,inplace}, which "
                                                      "writes into memory the branch uses")]
    assert [g.branch for g in plan.guards] == ["else"]
    assert plan.order[:3] == order[:3]  # the eager region stays where it was, before the inplace add


def test_may_guard_keeps_a_region_eager_with_its_reason():
    c, x = st.iscalar("c"), st.dvector("x")
    out = ifelse(c, st.exp(x).sum(), st.log(x).sum())
    fg = FunctionGraph([c, x], [out])
    plan = lazy_plan(fg.toposort(), fg.outputs, lambda region: "no" if "exp" in ops(region)[0] else None)
    assert [(b, why) for _n, b, why in plan.eager] == [("then", "no")]
    assert "then of if{} (node 4): eager (no)" in plan.describe()
    assert [s[0] for s in plan.program] == [NODE, NODE, GUARD, NODE, NODE, NODE]
