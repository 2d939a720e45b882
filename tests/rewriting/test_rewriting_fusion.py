"""Elemwise fusion: connected Elemwise regions become one Elemwise over a Composite."""

import time

import numpy as np
import pytest
from oracle import assert_same_results

import symlab.tensor as T
from symlab.graph.evaluate import evaluate
from symlab.graph.fg import FunctionGraph
from symlab.printing import debugprint
from symlab.rewriting import RewriteContext, RewriteTrace
from symlab.rewriting.fusion import RULE_NAME, fuse_elemwise
from symlab.scalar import Composite
from symlab.tensor.elemwise import Elemwise


def ops(fg):
    return [str(n.op) for n in fg.toposort()]


def fused_nodes(fg):
    return [n for n in fg.toposort() if isinstance(n.op, Elemwise) and isinstance(n.op.scalar_op, Composite)]


def check_same_values(inputs, outputs, values, expected_fusions=None):
    """Fuse a graph; assert integrity, unchanged types and exactly the unfused values."""
    unfused = FunctionGraph(inputs, outputs)
    fg = FunctionGraph(inputs, outputs)
    types = [o.type for o in fg.outputs]
    count = fuse_elemwise(fg)
    if expected_fusions is not None:
        assert count == expected_fusions
    fg.check_integrity()
    assert [o.type for o in fg.outputs] == types
    want = evaluate(unfused.outputs, dict(zip(unfused.inputs, values)))
    got = evaluate(fg.outputs, dict(zip(fg.inputs, values)))
    assert_same_results(got, want)
    return fg


def test_seed_003_one_fused_node():
    a = T.vector("a")
    b = a + a**10
    fg = FunctionGraph([a], [b])
    assert fuse_elemwise(fg) == 1
    (node,) = fg.toposort()
    assert isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, Composite)
    assert str(node.op) == "Elemwise{Composite{(i0 + (i0 ** 10))},no_inplace}"
    assert node.inputs == [fg.inputs[0]]
    fg.check_integrity()
    (value,) = evaluate(fg.outputs, {fg.inputs[0]: np.array([0.0, 1.0, 2.0])})
    np.testing.assert_array_equal(value, [0.0, 2.0, 1026.0])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("shape", [(3,), (0,), (1,)])
def test_values_over_dtypes_and_shapes(dtype, shape):
    x, y = T.TensorType(dtype, (None,))("x"), T.TensorType(dtype, (None,))("y")
    outs = [(x * 3 + y) * (x - 1) // 2 if dtype.startswith("int") else T.exp(x * 0.1) / (y * y + 1.5) - x]
    rng = np.random.default_rng(0)
    xv = (rng.integers(-5, 5, shape) if dtype.startswith("int") else rng.normal(size=shape)).astype(dtype)
    yv = (rng.integers(-5, 5, shape) if dtype.startswith("int") else rng.normal(size=shape)).astype(dtype)
    fg = check_same_values([x, y], outs, [xv, yv], expected_fusions=1)
    assert len(fg.apply_nodes) == 1


def test_mixed_dtypes_keep_the_unfused_casts():
    f, i = T.fvector("f"), T.ivector("i")
    out = (f * 0.1 + i) * T.cast(i, "float32") - T.sqrt(f)
    fv = np.array([0.3, 2.0, 5.5], dtype="float32")
    iv = np.array([1, -2, 7], dtype="int32")
    fg = check_same_values([f, i], [out], [fv, iv], expected_fusions=1)
    assert fg.outputs[0].dtype == "float64"  # float32 and int32 make float64 (NumPy 2)


def test_zero_dimensional_graphs_fold_constants():
    s = T.dscalar("s")
    fg = check_same_values([s], [T.exp(s * 2.0) + 1.0], [np.float64(0.5)], expected_fusions=1)
    (node,) = fg.toposort()
    assert node.inputs == [fg.inputs[0]]
    assert str(node.op.scalar_op) == "Composite{(exp((i0 * 2.0)) + 1.0)}"


@pytest.mark.parametrize(
    "xshape, yshape",
    [((None, None), (1, None)), ((None, 1), (1, None)), ((2, 3), (2, 1)), ((1, 1), (1, 1)), ((0, 3), (1, 3))],
)
def test_broadcasting_patterns(xshape, yshape):
    x, y = T.TensorType("float64", xshape)("x"), T.TensorType("float64", yshape)("y")
    out = T.tanh(x * y + 1.0) - y
    concrete = {None: 2}
    xv = np.arange(np.prod([concrete.get(s, s) for s in xshape]), dtype="float64").reshape(
        [concrete.get(s, s) for s in xshape]
    )
    yv = np.linspace(-1, 1, int(np.prod([concrete.get(s, s) if s != 3 else 3 for s in yshape]))).reshape(
        [concrete.get(s, s) for s in yshape]
    )
    check_same_values([x, y], [out], [xv, yv], expected_fusions=1)


def test_runtime_broadcast_errors_are_kept():
    x, y = T.dvectors("x", "y")
    fg = FunctionGraph([x, y], [T.exp(x) + y])
    fuse_elemwise(fg)
    with pytest.raises(ValueError, match="do not match"):
        evaluate(fg.outputs, {fg.inputs[0]: np.ones(3), fg.inputs[1]: np.ones(1)})


def test_static_output_types_are_kept_without_specify_shape():
    x = T.TensorType("float64", (3,))("x")
    y = T.dvector("y")
    e = T.exp(y)
    fg = FunctionGraph([x, y], [e * x, e])
    assert fuse_elemwise(fg) == 1
    assert ops(fg) == ["Elemwise{Composite{exp(i0), (exp(i0) * i1)},no_inplace}"]
    assert [o.type.shape for o in fg.outputs] == [(3,), (None,)]


def test_multi_output_region():
    x = T.dvector("x")
    e = T.exp(x)
    outs = [e * 2.0, e + 1.0, e.sum()]
    fg = check_same_values([x], outs, [np.array([0.0, 1.0, -2.0])], expected_fusions=1)
    (fused,) = fused_nodes(fg)
    assert len(fused.outputs) == 3
    assert str(fused.op.scalar_op) == "Composite{exp(i0), (exp(i0) * 2.0), (exp(i0) + 1.0)}"
    assert fg.outputs[0].owner is fused and fg.outputs[1].owner is fused
    assert fg.outputs[2].owner.inputs[0].owner is fused


def test_not_fused_across_a_sum():
    x = T.dvector("x")
    e = T.exp(x)
    out = e * 2.0 + e.sum()
    fg = check_same_values([x], [out], [np.array([0.5, 1.5])], expected_fusions=1)
    # exp feeds the Sum, which feeds the add: fusing exp too would make a cycle
    assert ops(fg) == [
        "Elemwise{exp,no_inplace}",
        "Sum{acc_dtype=float64}",
        "DimShuffle{x}",
        "Elemwise{Composite{((i0 * 2.0) + i1)},no_inplace}",
    ]


def test_not_fused_across_different_ndims_or_broadcast_patterns():
    m, v = T.dmatrix("m"), T.dvector("v")
    fg = check_same_values([m, v], [m + T.exp(v)], [np.ones((2, 3)), np.arange(3.0)], expected_fusions=0)
    assert "Elemwise{exp,no_inplace}" in ops(fg)
    r = T.drow("r")
    fg = check_same_values([m, r], [m + T.exp(r)], [np.ones((2, 3)), np.ones((1, 3))], expected_fusions=0)
    assert len(fg.apply_nodes) == 2


def test_single_nodes_and_inplace_nodes_are_left_alone():
    x = T.dvector("x")
    fg = FunctionGraph([x], [T.exp(x)])
    assert fuse_elemwise(fg) == 0 and ops(fg) == ["Elemwise{exp,no_inplace}"]
    inplace_exp = Elemwise(T.exp.scalar_op, {0: 0})
    fg = FunctionGraph([x], [inplace_exp(x * 2.0)])
    assert fuse_elemwise(fg) == 0 and len(fg.apply_nodes) == 3


def test_fusion_is_idempotent_and_deterministic():
    x, y = T.dvectors("x", "y")

    def build():
        return FunctionGraph([x, y], [T.exp(x) * y + T.log(y), (x - y) ** 2])

    first, second = build(), build()
    assert fuse_elemwise(first) == fuse_elemwise(second) == 2
    assert ops(first) == ops(second)
    assert fuse_elemwise(first) == 0


def fuse_recorded(fg):
    """fuse_elemwise in a recording rewrite context: (count, trace)."""
    trace = RewriteTrace(fg)
    with RewriteContext(fg, trace) as ctx:
        count = fuse_elemwise(fg, ctx)
    return count, trace


def test_each_fusion_is_one_step_of_the_trace():
    a = T.vector("a")
    fg = FunctionGraph([a], [a + a**10])
    count, trace = fuse_recorded(fg)
    (step,) = trace.steps
    assert count == 1 and step.rule == RULE_NAME == "elemwise_fusion" and step.accepted
    # the region, and the broadcast of the constant 10 that went into the Composite
    assert sorted(str(n.op) for n in step.removed) == ["DimShuffle{x}", "Elemwise{add,no_inplace}",
                                                       "Elemwise{pow,no_inplace}"]
    assert step.created[0] in fg.apply_nodes and "Composite" in step.reason
    assert str(step.node.op) == "Elemwise{add,no_inplace}"


def test_refused_fusion_leaves_the_graph_and_is_reported():
    class Refuse:
        def validate(self, fgraph):
            from symlab.graph.fg import InconsistencyError

            raise InconsistencyError("refused for the test")

    a = T.vector("a")
    fg = FunctionGraph([a], [a + a**10])
    fg.attach_feature(Refuse())
    before = ops(fg)
    count, trace = fuse_recorded(fg)
    assert count == 0 and ops(fg) == before and fg.version == 0
    fg.check_integrity()
    (step,) = trace.steps
    assert not step.accepted and "refused for the test" in step.reason and not step.events
    assert len(step.replacements) == 1  # the fused node's output for the region's


def test_long_chain_is_fused_quickly_without_recursion():
    x = T.dvector("x")
    y = x
    for k in range(1000):
        y = T.sin(y) if k % 2 else y * 1.0001 + 0.5
    fg = FunctionGraph([x], [y])
    start = time.perf_counter()
    assert fuse_elemwise(fg) == 1
    assert time.perf_counter() - start < 5.0
    assert len(fg.apply_nodes) == 1
    unfused = FunctionGraph([x], [y])
    value = np.array([0.1, -2.0])
    np.testing.assert_array_equal(
        evaluate(fg.outputs, {fg.inputs[0]: value})[0], evaluate(unfused.outputs, {unfused.inputs[0]: value})[0]
    )


def test_many_separate_regions():
    x = T.dvector("x")
    y = x
    for _ in range(200):
        y = T.exp(y * 0.5 + 1.0).sum() * x
    fg = FunctionGraph([x], [y])
    start = time.perf_counter()
    assert fuse_elemwise(fg) == 200  # one region per loop, and the last mul
    assert time.perf_counter() - start < 5.0
    fg.check_integrity()


def test_debugprint_shows_the_inner_graph():
    a = T.vector("a")
    fg = FunctionGraph([a], [a + a**10])
    fuse_elemwise(fg)
    assert debugprint(fg, file="str") == (
        "Elemwise{Composite{(i0 + (i0 ** 10))},no_inplace} [id A] ''\n"
        " |a [id B]\n"
        "\n"
        "Inner graphs:\n"
        "\n"
        "Elemwise{Composite{(i0 + (i0 ** 10))},no_inplace} [id A]\n"
        " >add [id C] ''\n"
        " > |i0 [id D]\n"
        " > |pow [id E] ''\n"
        " >   |i0 [id D]\n"
        " >   |Constant{10} [id F]\n"
    )


def test_existing_multi_output_composite_is_inlined_into_a_larger_region():
    import symlab.scalar as ss

    a, b = ss.float64("a"), ss.float64("b")
    inner = Composite([a, b], [ss.exp(a), ss.mul(a, b)])
    x, y = T.dvectors("x", "y")
    o1, o2 = Elemwise(inner)(x * 2.0, y)
    fg = check_same_values(
        [x, y], [o1 + o2, T.log(o2)], [np.array([1.0, 2.0]), np.array([3.0, 4.0])], expected_fusions=1
    )
    (node,) = fg.toposort()
    assert str(node.op.scalar_op) == "Composite{(exp((i0 * 2.0)) + ((i0 * 2.0) * i1)), log(((i0 * 2.0) * i1))}"
