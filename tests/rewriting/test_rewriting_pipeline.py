"""The whole fast_run pipeline: standard rules, fusion and inplace, their trace and replay."""

import numpy as np
import pytest
from helpers import run_fgraph
from rewriting_helpers import StepChecker, op_strings, same_graph

import symlab
import symlab.tensor as T
from symlab.graph.evaluate import evaluate
from symlab.rewriting import rewrite_graph

RNG = np.random.default_rng(1)


def logistic_regression():
    x = T.dmatrix("x")
    w, y = T.dvectors("w", "y")
    b = T.dscalar("b")
    p = T.sigmoid(T.dot(x, w) + b)
    loss = -(y * T.log(p) + (1 - y) * T.log(1 - p)).mean()
    gw, gb = symlab.grad(loss, [w, b])
    inputs = [x, w, y, b]
    values = [RNG.normal(size=(5, 3)), RNG.normal(size=3), (RNG.uniform(size=5) > 0.5).astype(float), 0.3]
    return inputs, [loss, gw, gb], values


@pytest.fixture(scope="module")
def optimized():
    inputs, outputs, values = logistic_regression()
    checker = StepChecker()  # check_integrity() after every step, and a copy of the graph
    new, trace = rewrite_graph(outputs, inputs=inputs, features=[checker])
    return inputs, outputs, values, new, trace, checker


def test_fast_run_keeps_the_values(optimized):
    inputs, outputs, values, new, trace, _ = optimized
    expected = evaluate(outputs, dict(zip(inputs, values)))
    got = run_fgraph(trace.fgraph, values)  # inplace nodes: run in toposort order
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-10)


def test_every_phase_runs_and_the_final_graph_validates(optimized):
    *_, trace, _ = optimized
    phases = [s.phase for s in trace]
    assert set(phases) >= {"canonicalize", "stabilize", "fusion", "inplace"}
    assert phases == sorted(phases, key=["canonicalize", "stabilize", "specialize", "fusion", "inplace"].index)
    fg = trace.fgraph
    assert fg.destroy_handler is not None
    fg.destroy_handler.validate(fg)
    fg.check_integrity()
    assert any("inplace" in s for s in op_strings(fg))
    assert {"log_sigmoid", "log_one_minus_sigmoid", "elemwise_fusion", "inplace_elemwise"} <= {
        s.rule for s in trace.accepted}


def test_replay_matches_the_live_graph_after_every_step(optimized):
    *_, trace, checker = optimized
    assert len(trace) > 10
    for step in trace:
        assert same_graph(trace.graph_at(step.index), checker.snapshots[step.index]), step
    assert same_graph(trace.graph_at(len(trace)), trace.fgraph)


def test_fusion_and_inplace_steps_are_one_step_each_with_provenance(optimized):
    *_, trace, _ = optimized
    fusions = [s for s in trace if s.rule == "elemwise_fusion"]
    assert fusions and all(s.accepted and s.phase == "fusion" for s in fusions)
    for s in fusions:
        assert s.reason.startswith("fused ") and len(s.created) == 1 and len(s.removed) >= 2
        assert "Composite" in str(s.created[0].op) and s.replacements
        assert s.location.file.endswith(("fusion.py", "inplace.py"))
    inplace = [s for s in trace if s.rule == "inplace_elemwise" and s.accepted]
    assert inplace and all(s.phase == "inplace" and "overwrite input" in s.reason for s in inplace)
    assert all(len(s.created) == 1 and s.created[0].op.destroy_map for s in inplace)


def test_refused_inplace_is_recorded_with_its_reason():
    x = T.dvector("x")
    new, trace = rewrite_graph(T.exp(x), features=[StepChecker()])
    (step,) = trace.refused
    assert step.rule == "inplace_elemwise" and step.phase == "inplace"
    assert "protected graph input" in step.reason and not step.created and not step.removed
    assert op_strings(trace.fgraph) == ["Elemwise{exp,no_inplace}"]
    # refusals are not repeated on the second pass of the phase's fixed point
    new, trace = rewrite_graph(T.exp(x) * 2.0 + T.log(x))
    reasons = [(s.node, s.reason) for s in trace.refused]
    assert len(reasons) == len(set(reasons)) >= 1


def test_seed_003_a_plus_a_pow_10_is_one_fused_node():
    a = T.dvector("a")
    new, trace = rewrite_graph(a + a ** 10, features=[StepChecker()])
    assert op_strings(trace.fgraph) == ["Elemwise{Composite{(i0 + (i0 ** 10))},no_inplace}"]
    val = RNG.uniform(size=4)
    np.testing.assert_allclose(run_fgraph(trace.fgraph, [val])[0], val + val ** 10)
    x, y = T.dvectors("x", "y")
    new, trace = rewrite_graph(x * y / y)
    assert new is trace.fgraph.inputs[0] and [s.rule for s in trace.accepted] == ["mul_div"]


def test_gradient_graphs_shrink():
    inputs, outputs, _ = logistic_regression()
    before = len(symlab.graph.fg.FunctionGraph(inputs, outputs).apply_nodes)
    # softplus_expanded and sigmoid_expanded write each as several elemwise nodes (fusion makes them one):
    # left out here
    _, trace = rewrite_graph(outputs, inputs=inputs, exclude=("fusion", "inplace", "softplus_expanded", "sigmoid_expanded"))
    algebra = len(trace.fgraph.apply_nodes)
    _, trace = rewrite_graph(outputs, inputs=inputs)
    assert len(trace.fgraph.apply_nodes) < algebra < before
    x = T.dvector("x")
    g = symlab.grad((T.exp(x) * 1.0 + 0.0).sum(), x)
    _, trace = rewrite_graph(g, exclude=("fusion", "inplace"))
    assert len(trace.fgraph.apply_nodes) < len(symlab.graph.fg.FunctionGraph([x], [g]).apply_nodes)


def test_softmax_pipeline_and_gradient_values():
    x = T.dmatrix("x")
    e = T.exp(x - x.max(axis=1, keepdims=True))
    sm = e / e.sum(axis=1, keepdims=True)
    cost = (sm * T.arange(4.0)).sum()
    g = symlab.grad(cost, x)
    new, trace = rewrite_graph([sm, g], inputs=[x], features=[StepChecker()])
    assert "Softmax{axis=1}" in op_strings(trace.fgraph)
    val = RNG.normal(size=(3, 4)) * 100
    got = run_fgraph(trace.fgraph, [val])
    with np.errstate(all="ignore"):
        expected = evaluate([sm, g], {x: val})
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-12)


def test_without_a_trace_the_result_is_the_same():
    inputs, outputs, values = logistic_regression()
    _, trace = rewrite_graph(outputs, inputs=inputs)
    new, none = rewrite_graph(outputs, inputs=inputs, record=False)
    assert none is None
    assert symlab.dprint(new, file="str") == symlab.dprint(list(trace.fgraph.outputs), file="str")
