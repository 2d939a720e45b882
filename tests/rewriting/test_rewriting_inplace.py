"""Inplace insertion: which Elemwise nodes may overwrite an input, the trace, and real values."""

import numpy as np
import pytest
from helpers import run_fgraph
from oracle import Tolerance, assert_same_results, inputs_unchanged

import symlab.tensor as T
from symlab.graph.destroyhandler import DestroyHandler, destroyed_inputs
from symlab.graph.evaluate import evaluate
from symlab.graph.features import ReplaceValidate
from symlab.graph.fg import FunctionGraph
from symlab.rewriting import RewriteContext, RewriteTrace
from symlab.rewriting.inplace import (
    RULE_DIMSHUFFLE,
    RULE_ELEMWISE,
    insert_inplace,
    insert_inplace_elemwise,
    try_inplace_elemwise,
)
from symlab.tensor.elemwise import DimShuffle, Elemwise


class Recorder:
    """Records every step of the trace as (rule, node, new_node, accepted, reason), checking the graph after each."""

    def __init__(self, fg):
        self.fg = fg
        self.steps = []

    def on_rewrite_step(self, fg, step):
        fg.check_integrity()
        fg.validate()
        new_node = step.created[0] if step.created else None
        if step.accepted:
            assert new_node in fg.apply_nodes and step.node not in fg.apply_nodes
        else:
            assert new_node is None and not step.events
        self.steps.append((step.rule, step.node, new_node, step.accepted, step.reason))

    def elemwise(self):
        return [(str(node.op.scalar_op), accepted, reason) for rule, node, _, accepted, reason in self.steps
                if rule == RULE_ELEMWISE]


def recorded(fg, run):
    """Run ``run(ctx)`` in a recording rewrite context of ``fg``; the Recorder of its steps and run's result."""
    rec = Recorder(fg)
    fg.attach_feature(rec)
    with RewriteContext(fg, RewriteTrace(fg)) as ctx:
        result = run(ctx)
    fg.remove_feature(rec)
    return rec, result


def rewrite(inputs, outputs, **kwargs):
    fg = FunctionGraph(inputs, outputs)
    rec, changed = recorded(fg, lambda ctx: insert_inplace(fg, ctx, **kwargs))
    fg.check_integrity()
    return fg, rec, changed


def ops(fg):
    return [str(n.op) for n in fg.toposort()]


def check_values(inputs, outputs, fg, values):
    """The inplace graph gives the original graph's values and leaves the inputs alone."""
    expected = evaluate(outputs, dict(zip(inputs, [np.array(v, copy=True) for v in values])))
    with inputs_unchanged(values):
        got = run_fgraph(fg, values)
    assert_same_results(got, expected, Tolerance.uniform(1e-7))  # assert_allclose's default rtol
    return got


def test_chain_becomes_inplace_after_the_first_node_and_values_match():
    x = T.dvector("x")
    outputs = [T.tanh(T.exp(x) * 2.0 + 1.0) - x]
    fg, rec, changed = rewrite([x], outputs)
    assert [op for op in ops(fg) if "Elemwise" in op] == [
        "Elemwise{exp,no_inplace}",
        "Elemwise{mul,inplace}",
        "Elemwise{add,inplace}",
        "Elemwise{tanh,inplace}",
        "Elemwise{sub,inplace}",
    ]
    assert len([c for c in changed if isinstance(c[1].op, Elemwise)]) == 4
    assert rec.elemwise()[0] == (
        "exp",
        False,
        "no input can hold the result: input 0 (x) is a protected graph input (not mutable)",
    )
    check_values([x], outputs, fg, [np.array([0.5, -1.0, 2.0])])


def test_protected_inputs_are_never_destroyed():
    x, y = T.dvectors("x", "y")
    outputs = [x + y, x * y]
    fg, rec, changed = rewrite([x, y], outputs)
    assert changed == [] and not any(n.op.inplace_pattern for n in fg.apply_nodes)
    assert [accepted for _, accepted, _ in rec.elemwise()] == [False, False]
    assert "input 1 (y) is a protected graph input" in rec.elemwise()[0][2]
    check_values([x, y], outputs, fg, [np.array([1.0, 2.0]), np.array([3.0, 4.0])])


def test_mutable_input_is_overwritten():
    x = T.dvector("x")
    fg = FunctionGraph([x], [T.exp(x) + 1.0], features=[ReplaceValidate(), DestroyHandler([0])])
    changed = insert_inplace_elemwise(fg)
    assert [str(new.op) for _, new in changed] == ["Elemwise{exp,inplace}", "Elemwise{add,inplace}"]
    value = np.array([0.0, 1.0])
    (out,) = run_fgraph(fg, [value], copy_mutable=False)
    assert out is value  # the result lives in the caller's buffer
    np.testing.assert_allclose(value, np.exp([0.0, 1.0]) + 1)


def test_variable_read_by_two_nodes_is_destroyed_by_one_and_read_first_by_the_other():
    x = T.dvector("x")
    e = T.exp(x)
    e.name = "e"
    outputs = [T.sin(e), T.cos(e)]
    fg, rec, _ = rewrite([x], outputs)
    sin, cos = (o.owner for o in fg.outputs)
    assert str(sin.op) == "Elemwise{sin,inplace}" and str(cos.op) == "Elemwise{cos,no_inplace}"
    assert rec.elemwise()[-1] == ("cos", False, "no input can hold the result: input 0 (e) is already overwritten by "
                                                f"{sin}")
    order = fg.toposort()
    assert order.index(cos) < order.index(sin)
    assert fg.destroy_handler.orderings(fg)[sin] == [cos]
    check_values([x], outputs, fg, [np.array([0.1, 0.2, 0.3])])


def test_refused_candidate_then_next_input_accepted():
    x, y = T.dvectors("x", "y")
    a, b = T.exp(x), T.exp(y)
    a.name, b.name = "a", "b"
    c = a + b
    outputs = [c * a]  # c needs a, and the mul reads a after c: c may not overwrite a
    fg, rec, _ = rewrite([x, y], outputs)
    add_steps = [s for s in rec.elemwise() if s[0] == "add"]
    assert [accepted for _, accepted, _ in add_steps] == [False, True]
    assert add_steps[0][2].startswith("input 0: destroy handler: ")
    assert "cannot run before" in add_steps[0][2]
    assert add_steps[1][2] == "overwrite input 1 (b)"
    add = fg.outputs[0].owner.inputs[0].owner
    assert add.op.destroy_map == {0: [1]}
    assert str(fg.outputs[0].owner.op) == "Elemwise{mul,inplace}"
    check_values([x, y], outputs, fg, [np.array([0.0, 1.0]), np.array([2.0, 3.0])])


def test_same_input_twice_is_not_overwritten():
    x = T.dvector("x")
    e = T.exp(x)
    outputs = [e * e]
    fg, rec, _ = rewrite([x], outputs)
    mul_steps = [s for s in rec.elemwise() if s[0] == "mul"]
    assert [accepted for _, accepted, _ in mul_steps] == [False, False]
    assert all("shares its memory" in reason for _, _, reason in mul_steps)
    assert str(fg.outputs[0].owner.op) == "Elemwise{mul,no_inplace}"
    check_values([x], outputs, fg, [np.array([0.5, 1.5])])


def test_constants_broadcast_inputs_and_other_types_are_not_candidates():
    m = T.tensor("float64", shape=(2, None), name="m")
    v = T.dvector("v")
    i = T.ivector("i")
    c = T.constant(np.ones((2, 2)))
    e = T.exp(m)
    outputs = [c + e + T.exp(v), e * c, T.true_div(i * 2, 3)]
    fg, rec, _ = rewrite([m, v, i], outputs)
    reasons = [(op, reason) for op, accepted, reason in rec.elemwise() if not accepted]
    # c + e: the constant is skipped, and e's type (2, ?) is wider than the output's (2, 2)
    add_inner = fg.outputs[0].owner.inputs[0].owner
    assert add_inner.op.inplace_pattern == ()
    (reason,) = [r for op, r in reasons if op == "add"]
    assert "input 0 (TensorConstant{(2, 2) of 1.0}) is a constant" in reason
    assert "input 1 (Elemwise{exp,no_inplace}.0) has type TensorType(float64, (2, ?)), not the output's " \
           "TensorType(float64, (2, 2))" in reason
    # (c + e) + exp(v): input 0 fits; the broadcast view of exp(v) does not
    add_outer = fg.outputs[0].owner
    assert add_outer.op.inplace_pattern == ((0, 0),)
    # i * 2 is int32, true_div gives float64: no input has the output's dtype
    div = fg.outputs[2].owner
    assert div.op.inplace_pattern == ()
    (reason,) = [r for op, r in reasons if op == "true_div"]
    assert "input 0 (Elemwise{mul,no_inplace}.0) has type TensorType(int32, (?,)), not the output's" in reason
    check_values([m, v, i], outputs, fg, [np.eye(2), np.array([1.0, 2.0]), np.array([3, 4], dtype="int32")])


def test_constant_skipped_and_other_input_taken():
    m = T.tensor("float64", shape=(2, 2), name="m")
    c = T.constant(np.ones((2, 2)))
    outputs = [c + T.exp(m)]
    fg, _, _ = rewrite([m], outputs)
    assert fg.outputs[0].owner.op.inplace_pattern == ((0, 1),)
    check_values([m], outputs, fg, [np.eye(2)])
    np.testing.assert_array_equal(c.data, np.ones((2, 2)))


def test_dimshuffle_views_are_renamed():
    x = T.dmatrix("x")
    outputs = [T.exp(x.T) + 1.0]
    fg, rec, changed = rewrite([x], outputs)
    assert "InplaceDimShuffle{1,0}" in ops(fg) and "InplaceDimShuffle{x,x}" in ops(fg)
    assert not any(isinstance(n.op, DimShuffle) and not n.op.inplace for n in fg.apply_nodes)
    renamed = [s for s in rec.steps if s[0] == RULE_DIMSHUFFLE]
    assert len(renamed) == 2 and all(s[3] for s in renamed)
    check_values([x], outputs, fg, [np.arange(4.0).reshape(2, 2)])
    fg2, _, _ = rewrite([x], outputs, dimshuffle=False)
    assert "DimShuffle{1,0}" in ops(fg2)


def test_rerunning_changes_nothing_and_the_caller_graph_is_untouched():
    x = T.dvector("x")
    out = T.exp(x) * 2.0
    fg, _, changed = rewrite([x], [out])
    assert changed
    rec, changed = recorded(fg, lambda ctx: insert_inplace(fg, ctx))
    assert changed == [] and all(not accepted for *_, accepted, _ in rec.steps)
    assert str(out.owner.op) == "Elemwise{mul,no_inplace}"


def test_try_inplace_elemwise_ignores_other_nodes():
    x = T.dvector("x")
    fg = FunctionGraph([x], [T.sum(T.exp(x) * 2.0)])
    assert try_inplace_elemwise(fg, fg.outputs[0].owner) is None
    mul = fg.outputs[0].owner.inputs[0].owner
    new = try_inplace_elemwise(fg, mul)
    assert new is not None and try_inplace_elemwise(fg, new) is None


def test_seed_003_expression_values():
    a = T.dvector("a")
    outputs = [a + a ** 10]
    fg, _, _ = rewrite([a], outputs)
    check_values([a], outputs, fg, [np.array([0.5, 1.0, 1.1])])


@pytest.mark.parametrize("seed", range(40))
def test_random_graphs_keep_their_values(seed):
    rng = np.random.default_rng(seed)
    x, y = T.dmatrix("x"), T.dmatrix("y")
    pool = [x, y]
    unary = [T.sin, T.cos, T.tanh, T.neg, lambda v: v.T, lambda v: v * 0.5]
    binary = [T.add, T.sub, T.mul, lambda a, b: T.maximum(a, b.T)]
    for _ in range(int(rng.integers(3, 12))):
        if rng.random() < 0.4:
            v = unary[rng.integers(len(unary))](pool[rng.integers(len(pool))])
        else:
            a, b = (pool[k] for k in rng.integers(len(pool), size=2))
            v = binary[rng.integers(len(binary))](a, b)
        pool.append(v)
    picks = sorted({int(k) for k in rng.integers(2, len(pool), size=int(rng.integers(1, 4)))})
    outputs = [pool[k] for k in picks] + [pool[-1]]
    fg, rec, _ = rewrite([x, y], outputs)
    values = [rng.normal(size=(3, 3)), rng.normal(size=(3, 3))]
    check_values([x, y], outputs, fg, values)
    destroyers = [n for n in fg.apply_nodes if destroyed_inputs(n)]
    assert all(n.inputs[d] not in fg.inputs for n in destroyers for d in destroyed_inputs(n))
    assert all(isinstance(reason, str) and reason for *_, reason in rec.steps)


def test_two_output_composite_gets_an_input_per_output():
    import symlab.scalar as ss
    from symlab.scalar import composite

    i0, i1 = ss.float64("i0"), ss.float64("i1")
    op = Elemwise(composite.Composite([i0, i1], [ss.add(i0, i1), ss.mul(i0, i1)]))
    x, y = T.dvectors("x", "y")
    s, p = op(T.exp(x), T.sin(y))
    outputs = [s * 2.0, p - x]
    fg, rec, _ = rewrite([x, y], outputs)
    node = fg.outputs[0].owner.inputs[0].owner
    assert node.op.inplace_pattern == ((0, 0), (1, 1))
    accepted = [reason for _, ok, reason in rec.elemwise() if ok]
    assert "output 0 overwrite input 0 (Elemwise{exp,no_inplace}.0)" in accepted
    assert "output 1 overwrite input 1 (Elemwise{sin,no_inplace}.0)" in accepted
    check_values([x, y], outputs, fg, [np.array([0.5, 1.0]), np.array([2.0, 3.0])])
