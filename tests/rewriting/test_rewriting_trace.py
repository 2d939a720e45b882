"""The rewrite trace: steps with provenance, replay with graph_at, diff and summary."""

from collections import Counter

import numpy as np
import pytest
from rewriting_helpers import (
    StepChecker,
    assert_same_values,
    demo_double_neg,
    log_exp,
    mul_div,
    mul_one,
    op_strings,
    same_graph,
)

import symlab.tensor as T
from symlab.graph.fg import FunctionGraph, InconsistencyError
from symlab.rewriting import (
    EquilibriumGraphRewriter,
    GraphRewriter,
    MergeOptimizer,
    RewriteDatabase,
    constant_folding,
    node_rewriter,
    rewrite_graph,
)


@node_rewriter([T.sqrt])
def sqrt_to_float32(fgraph, node):
    """A rule that would change the dtype: always refused."""
    return [T.cast(node.inputs[0], "float32")]


@node_rewriter([T.exp])
def exp_to_log(fgraph, node):
    """exp(x) -> log(x), which the NoLog feature refuses."""
    return [T.log(node.inputs[0])]


class NoLog:
    def validate(self, fgraph):
        if any(str(n.op) == "Elemwise{log,no_inplace}" for n in fgraph.apply_nodes):
            raise InconsistencyError("no log allowed")


def rich_db():
    db = RewriteDatabase()
    db.register(MergeOptimizer(), "canonicalize", "fast_compile")
    db.register(constant_folding, "canonicalize", "fast_compile")
    db.register(mul_div, "canonicalize")
    db.register(mul_one, "canonicalize")
    db.register(demo_double_neg, "canonicalize")
    db.register(log_exp, "stabilize")
    db.register(sqrt_to_float32, "specialize")
    return db


def rich_graph():
    x, y = T.dvectors("x", "y")
    terms = []
    for k in range(6):
        c = T.constant(float(k)) + 1.0
        terms.append(T.log(T.exp(T.neg(T.neg(x * y / y)))) * c * 1.0 + T.sqrt(y * y) * (T.constant(2.0) * 3.0))
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return [x, y], [total, T.exp(y) * 1.0]


@pytest.fixture(scope="module")
def optimized():
    inputs, outputs = rich_graph()
    checker = StepChecker()
    (_, trace) = rewrite_graph(outputs, db=rich_db(), features=[checker])
    return trace, checker


def test_steps_have_provenance(optimized):
    trace, _ = optimized
    assert len(trace) > 20
    assert [s.index for s in trace] == list(range(1, len(trace) + 1))
    rules = {s.rule for s in trace}
    assert {"merge", "constant_folding", "demo_mul_div", "demo_mul_one", "demo_double_neg", "demo_log_exp",
            "sqrt_to_float32"} <= rules
    phases = [s.phase for s in trace]
    assert phases == sorted(phases, key=["canonicalize", "stabilize", "specialize"].index)
    step = next(s for s in trace if s.rule == "demo_double_neg")
    assert step.location == (demo_double_neg.fn.__code__.co_filename, demo_double_neg.fn.__code__.co_firstlineno)
    assert step.reason == "-(-x) -> x" and step.accepted and step.seconds >= 0
    assert [str(n.op) for n in step.removed] == ["Elemwise{neg,no_inplace}", "Elemwise{neg,no_inplace}"]
    assert step.created == [] and step.node.op == T.neg
    ((old, new),) = step.replacements
    assert old is step.node.outputs[0] and new is trace.fgraph.inputs[0]  # x*y/y was x already
    refused = [s for s in trace if not s.accepted]
    assert refused and all(s.rule == "sqrt_to_float32" for s in refused)
    assert all(s.reason.startswith("type mismatch") and not s.removed and not s.created for s in refused)
    assert "REFUSED" in str(refused[0]) and "sqrt_to_float32" in str(trace)


def test_graph_at_replays_every_step(optimized):
    trace, checker = optimized
    assert sorted(checker.snapshots) == [s.index for s in trace]
    start = trace.graph_at(0)
    assert same_graph(start, trace.start)
    previous = start
    for step in trace:
        replayed = trace.graph_at(step.index)
        replayed.check_integrity()
        assert same_graph(replayed, checker.snapshots[step.index]), f"step {step.index} ({step.rule})"
        if not step.accepted:
            assert same_graph(replayed, previous)
        previous = replayed
    assert same_graph(trace.graph_at(len(trace)), trace.fgraph)
    assert same_graph(trace.graph_at(len(trace)), trace.fgraph)  # replay does not use up the trace
    with pytest.raises(IndexError):
        trace.graph_at(len(trace) + 1)


def test_replayed_graphs_compute_the_same_values(optimized):
    trace, _ = optimized
    vals = [np.array([0.5, 1.5, 2.0]), np.array([1.0, -2.0, 3.0])]
    for k in range(0, len(trace) + 1, 5):
        assert_same_values(trace.graph_at(k), trace.start, vals)
    assert_same_values(trace.fgraph, trace.start, vals)
    assert len(trace.fgraph.apply_nodes) < len(trace.start.apply_nodes) / 3


def test_diff_gives_the_nodes_each_step_removed_and_added(optimized):
    trace, _ = optimized
    for step in trace:
        removed, added = trace.diff(step.index)
        before = Counter(op_strings(trace.graph_at(step.index - 1)))
        after = Counter(op_strings(trace.graph_at(step.index)))
        assert before - Counter(str(n.op) for n in removed) + Counter(str(n.op) for n in added) == after
        if not step.accepted:
            assert removed == [] and added == []


def test_summary_counts_applications_refusals_and_time(optimized):
    trace, _ = optimized
    summary = trace.summary()
    stats = summary.as_dict()
    for rule in {s.rule for s in trace}:
        steps = [s for s in trace if s.rule == rule]
        assert stats[rule].applied == sum(s.accepted for s in steps)
        assert stats[rule].refused == sum(not s.accepted for s in steps)
        assert stats[rule].seconds >= sum(s.seconds for s in steps)
    assert stats["sqrt_to_float32"].applied == 0 and stats["sqrt_to_float32"].refused >= 1
    text = str(summary)
    assert text.splitlines()[0].split() == ["rule", "applied", "refused", "seconds"]
    assert all(rule in text for rule in stats)


def test_validation_refusals_are_replayed_as_no_change():
    x = T.dvector("x")
    fg = FunctionGraph([x], [T.exp(T.neg(T.neg(x))) + T.exp(x)], features=[NoLog()])
    checker = StepChecker()
    fg.attach_feature(checker)
    trace = EquilibriumGraphRewriter([exp_to_log, demo_double_neg]).rewrite(fg)
    # pass 1: the double negation goes, both exp are refused; pass 2: refused again, no change: done
    assert [(s.rule, s.accepted) for s in trace] == [("demo_double_neg", True)] + [("exp_to_log", False)] * 4
    assert all(s.reason == "failed validation: no log allowed" for s in trace if not s.accepted)
    for step in trace:
        assert same_graph(trace.graph_at(step.index), checker.snapshots[step.index])


def test_changes_made_directly_on_the_graph_are_recorded_and_replayable():
    class Direct(GraphRewriter):
        name = "direct"

        def apply(self, fgraph, ctx):
            for node in fgraph.toposort():
                if node.op == T.exp:
                    fgraph.replace(node.outputs[0], T.sqrt(node.inputs[0]))
                    return True
            return False

    x = T.dvector("x")
    checker = StepChecker()
    fg = FunctionGraph([x], [T.exp(x) * 2.0 + T.exp(x * 3.0)], features=[checker])
    trace = EquilibriumGraphRewriter([Direct()]).rewrite(fg)
    assert [s.rule for s in trace] == ["direct", "direct"]
    assert [str(n.op) for n in trace.step(1).created] == ["Elemwise{sqrt,no_inplace}"]
    for step in trace:
        assert same_graph(trace.graph_at(step.index), checker.snapshots[step.index])
    assert "Elemwise{exp,no_inplace}" not in op_strings(trace.graph_at(2))


def test_equilibrium_bound_is_in_the_trace_and_replay_still_works():
    @node_rewriter([T.exp])
    def rebuild(fgraph, node):
        return [T.exp(node.inputs[0])]

    x = T.dvector("x")
    checker = StepChecker()
    fg = FunctionGraph([x], [T.exp(x) + T.exp(x * 2.0)], features=[checker])
    trace = EquilibriumGraphRewriter([rebuild], max_use_ratio=1, name="eq").rewrite(fg)
    (note,) = trace.notes
    assert note.rewriter == "eq" and note.after_step == len(trace) and "stopped at the bound" in note.message
    assert "stopped at the bound" in str(trace)
    for step in trace:
        assert same_graph(trace.graph_at(step.index), checker.snapshots[step.index])


def test_trace_of_the_default_database_on_the_seed_expression():
    x = T.dvector("x")
    out, trace = rewrite_graph((T.constant(2.0) + 3.0) * x, include=("fast_compile",))
    assert [s.rule for s in trace] == ["constant_folding", "constant_folding"]
    assert op_strings(trace.graph_at(0)) == ["Elemwise{add,no_inplace}", "DimShuffle{x}", "Elemwise{mul,no_inplace}"]
    assert op_strings(trace.graph_at(1)) == ["DimShuffle{x}", "Elemwise{mul,no_inplace}"]
    assert op_strings(trace.graph_at(2)) == ["Elemwise{mul,no_inplace}"]
    assert trace.step(1).location.file.endswith("constant_folding.py")
    with pytest.raises(IndexError, match="steps 1..2"):
        trace.step(3)


def test_the_recipe_keeps_the_function_that_made_the_trace():
    from symlab.rewriting import rewrite_fgraph

    a = T.dvector("a")
    _, trace = rewrite_graph(a + a ** 10)
    assert trace.recipe.rewrite is rewrite_fgraph
    assert trace.recipe.include == ("fast_run",)
