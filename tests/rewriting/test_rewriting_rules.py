"""The standard rules (symlab.rewriting.rules): each on a graph where it applies and one where it must not."""

import numpy as np
import pytest
from oracle import Tolerance, assert_same_results
from rewriting_helpers import StepChecker, op_strings

import symlab.tensor as T
from symlab.graph.traversal import ancestors, equal_computations
from symlab.rewriting import default_db, rewrite_graph
from symlab.rewriting.rules import canonicalize, specialize, stabilize

RNG = np.random.default_rng(0)


def vec(name):
    return T.dvector(name)


def positive(shape):
    return RNG.uniform(0.5, 2.0, size=shape)


# rule -> (graph where it applies, graph where it must not); each builder returns (inputs, output)
CASES = {
    "mul_div": (lambda x, y: ((x, y), x * y / y), lambda x, y: ((x, y), x * y / x.sum())),
    "mul_div_swapped": (lambda x, y: ((x, y), y * x / y), lambda x, y: ((x, y), (y + x) / y)),
    "sub_self": (lambda x, y: ((x, y), T.exp(x) - T.exp(x) + y), lambda x, y: ((x, y), x - y)),
    "add_zero": (lambda x, y: ((x, y), T.exp(x) + 0.0), lambda x, y: ((x, y), T.exp(x) + 1.0)),
    "zero_add": (lambda x, y: ((x, y), 0.0 + T.exp(x)), lambda x, y: ((x, y), 2.0 + T.exp(x))),
    "sub_zero": (lambda x, y: ((x, y), T.exp(x) - 0.0), lambda x, y: ((x, y), T.exp(x) - 1.0)),
    "mul_one": (lambda x, y: ((x, y), T.exp(x) * 1.0), lambda x, y: ((x, y), T.exp(x) * 2.0)),
    "one_mul": (lambda x, y: ((x, y), 1.0 * T.exp(x)), lambda x, y: ((x, y), 3.0 * T.exp(x))),
    "div_one": (lambda x, y: ((x, y), T.exp(x) / 1.0), lambda x, y: ((x, y), T.exp(x) / 2.0)),
    "neg_neg": (lambda x, y: ((x, y), T.exp(T.neg(T.neg(x)))), lambda x, y: ((x, y), T.exp(-x))),
    "exp_log": (lambda x, y: ((x, y), T.exp(T.log(x)) * y), lambda x, y: ((x, y), T.exp(T.log1p(x)))),
    "log_exp": (lambda x, y: ((x, y), T.log(T.exp(x)) * y), lambda x, y: ((x, y), T.log(T.expm1(x)))),
    "log1p": (lambda x, y: ((x, y), T.log(1.0 + x)), lambda x, y: ((x, y), T.log(2.0 + x))),
    "log1p_swapped": (lambda x, y: ((x, y), T.log(x + 1.0)), lambda x, y: ((x, y), T.log(x + y))),
    "expm1": (lambda x, y: ((x, y), T.exp(x) - 1.0), lambda x, y: ((x, y), T.exp(x) - 2.0)),
    "log_sigmoid": (lambda x, y: ((x, y), T.log(T.sigmoid(x))), lambda x, y: ((x, y), T.log(T.tanh(x)))),
    "log_one_minus_sigmoid": (lambda x, y: ((x, y), T.log(1.0 - T.sigmoid(x))),
                              lambda x, y: ((x, y), T.log(2.0 - T.sigmoid(x)))),
    "pow_two": (lambda x, y: ((x, y), x ** 2), lambda x, y: ((x, y), x ** 3)),
    "mul_self": (lambda x, y: ((x, y), x * x + y), lambda x, y: ((x, y), x * y)),
    "pow_half": (lambda x, y: ((x, y), x ** 0.5), lambda x, y: ((x, y), x ** 1.5)),
    "pow_one": (lambda x, y: ((x, y), T.exp(x) ** 1), lambda x, y: ((x, y), T.exp(x) ** y)),
    "pow_minus_one": (lambda x, y: ((x, y), x ** -1), lambda x, y: ((x, y), x ** -2)),
    # written out only where a softplus of x or -x shares the exponential (a logistic loss); alone, kept whole
    "softplus_expanded": (lambda x, y: ((x, y), T.softplus(x) * T.softplus(-x)), lambda x, y: ((x, y), T.softplus(x) * y)),
    "sigmoid_expanded": (lambda x, y: ((x, y), T.sigmoid(x) * T.softplus(-x)), lambda x, y: ((x, y), T.sigmoid(x) * y)),
    "abs_neg": (lambda x, y: ((x, y), T.abs(-x) + y), lambda x, y: ((x, y), T.abs(x - y))),
}


def rewritten(out, **kw):
    checker = StepChecker()  # check_integrity() after every step
    kw.setdefault("exclude", ("fusion", "inplace"))
    new, trace = rewrite_graph(out, features=[checker], **kw)
    return new, trace


def applied(trace):
    return {s.rule for s in trace if s.accepted}


def check_values(inputs, out, new, trace):
    vals = [positive(3) for _ in inputs]
    expected = out.eval(dict(zip(inputs, vals)))
    got = new.eval(dict(zip(trace.fgraph.inputs, vals)))
    assert_same_results(got, expected, Tolerance.uniform(1e-10))


def test_every_table_row_has_a_case():
    rows = {r[0] for m in (canonicalize, stabilize, specialize) for r in m.ROWS}
    assert rows == set(CASES)


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_applies(rule):
    inputs, out = CASES[rule][0](vec("x"), vec("y"))
    new, trace = rewritten(out, inputs=inputs)
    assert rule in applied(trace), str(trace)
    check_values(inputs, out, new, trace)


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_does_not_apply(rule):
    inputs, out = CASES[rule][1](vec("x"), vec("y"))
    new, trace = rewritten(out, inputs=inputs)
    assert rule not in applied(trace), str(trace)
    check_values(inputs, out, new, trace)


def test_rules_keep_the_output_type_when_a_constant_broadcasts():
    row = T.tensor("float64", shape=(1, None), name="row")
    ones = T.ones((3, 4))
    zeros = T.zeros((3, 4))
    for out, rule in [(row * ones, "mul_one"), (row + zeros, "add_zero"), (ones * row, "one_mul")]:
        new, trace = rewritten(out)
        assert rule not in applied(trace)
        assert new.type == out.type
        np.testing.assert_allclose(new.eval({trace.fgraph.inputs[0]: np.ones((1, 4))}), np.ones((3, 4)))
    m = T.dmatrix("m")
    new, trace = rewritten(m * T.ones((1, 1)))
    assert "mul_one" in applied(trace) and new is trace.fgraph.inputs[0]


def test_mul_div_refuses_a_broadcasting_x_and_another_dtype():
    row = T.tensor("float64", shape=(1, None), name="row")
    m = T.dmatrix("m")
    _, trace = rewritten(row * m / m)
    assert "mul_div" not in applied(trace)
    i = T.ivector("i")
    _, trace = rewritten(i * vec("y") / vec("y"))
    assert "mul_div" not in applied(trace)


def test_sub_self_gives_zeros_of_x_shape_and_dtype_without_computing_x():
    a = T.dmatrix("a")
    x = T.exp(a) @ a
    new, trace = rewritten(x - x)
    assert new.type == (x - x).type and "sub_self" in applied(trace)
    ops = {type(v.owner.op).__name__ for v in ancestors([new]) if v.owner is not None}
    assert "Dot" not in ops and "Elemwise" not in ops  # only shapes of a
    assert np.all(new.eval({trace.fgraph.inputs[0]: np.ones((2, 2))}) == np.zeros((2, 2)))
    i = T.ivector("i")
    new, _ = rewritten(i - i)
    assert new.dtype == "int32"


def test_nan_semantics_are_those_of_pytensor():
    x = vec("x")
    new, trace = rewritten(x - x)
    inf = np.array([np.inf])
    assert np.isnan((x - x).eval({x: inf})[0]) and new.eval({trace.fgraph.inputs[0]: inf})[0] == 0.0


# -- useless nodes and shapes -------------------------------------------------------------------


def test_useless_dimshuffle_and_merged_chains():
    m = T.dmatrix("m")
    new, trace = rewritten(T.exp(m.T.T))
    assert op_strings(trace.fgraph) == ["Elemwise{exp,no_inplace}"]
    assert {"merge_dimshuffles"} <= applied(trace)
    new, trace = rewritten(T.exp(T.expand_dims(m.T, 0)))
    ds = [n.op for n in trace.fgraph.toposort() if isinstance(n.op, T.DimShuffle)]
    assert [str(op) for op in ds] == ["DimShuffle{x,1,0}"]
    val = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(new.eval({trace.fgraph.inputs[0]: val}), np.exp(val.T[None]))
    new, trace = rewritten(T.exp(m.T))  # a real transpose stays
    assert "DimShuffle{1,0}" in op_strings(trace.fgraph)
    assert not applied(trace) & {"useless_dimshuffle", "merge_dimshuffles"}


def test_useless_specify_shape():
    s = T.tensor("float64", shape=(2, None), name="s")
    new, trace = rewritten(T.exp(T.SpecifyShape()(s, 2, None)))  # specify_shape() would not build it
    assert "useless_specify_shape" in applied(trace) and op_strings(trace.fgraph) == ["Elemwise{exp,no_inplace}"]
    m = T.dmatrix("m")
    new, trace = rewritten(T.exp(T.specify_shape(m, (2, None))))
    assert "useless_specify_shape" not in applied(trace)
    with pytest.raises(ValueError):
        new.eval({trace.fgraph.inputs[0]: np.ones((3, 3))})


def test_useless_reshape():
    s = T.tensor("float64", shape=(2, 3), name="s")
    new, trace = rewritten(T.exp(T.reshape(s, (2, 3))))
    assert "useless_reshape" in applied(trace) and op_strings(trace.fgraph) == ["Elemwise{exp,no_inplace}"]
    m = T.dmatrix("m")
    new, trace = rewritten(T.exp(T.reshape(m, m.shape)))
    assert "useless_reshape" in applied(trace) and op_strings(trace.fgraph) == ["Elemwise{exp,no_inplace}"]
    new, trace = rewritten(T.exp(T.reshape(s, (3, 2))))
    assert "useless_reshape" not in applied(trace)
    np.testing.assert_allclose(new.eval({trace.fgraph.inputs[0]: np.ones((2, 3))}), np.full((3, 2), np.e))


def test_shape_queries_do_not_compute_x():
    a, b = T.dmatrices("a", "b")
    x = T.exp(a) @ b.T
    for query, rule in [(x.shape, "lift_shape"), (T.shape_i(x, 1), "lift_shape_i")]:
        new, trace = rewritten(query)
        assert rule in applied(trace)
        ops = {type(v.owner.op).__name__ for v in ancestors([new]) if v.owner is not None}
        assert not ops & {"Dot", "Elemwise"}, ops
        av, bv = np.ones((2, 3)), np.ones((5, 3))
        np.testing.assert_array_equal(new.eval(dict(zip(trace.fgraph.inputs, [av, bv]))),
                                      query.eval({a: av, b: bv}))
    new, trace = rewritten(T.shape(a))  # a graph input: nothing to lift
    assert not applied(trace) & {"lift_shape", "lift_shape_i"}


def test_reduced_size_counts_an_input_not_a_computed_result():
    from symlab.tensor.reduction import ReducedSize

    m, v = T.dmatrix("m"), T.dvector("v")
    row = T.tensor("float64", shape=(1, None), name="row")
    # the count of an elementwise result is the count of an input with that axis, seen through a DimShuffle
    for query, source in [(ReducedSize((0,))(T.exp(m) * v), m), (ReducedSize((0, 1))(T.log(m.T + 1.0)), m),
                          (ReducedSize((1,))(row * T.exp(m)), row), (ReducedSize((0,))(row * T.exp(m)), m)]:
        new, trace = rewritten(query)
        assert "lift_reduced_size" in applied(trace)
        ops = {type(v.owner.op).__name__ for v in ancestors([new]) if v.owner is not None}
        assert ops == {"ReducedSize"} and new.owner.inputs[0].name == source.name
        mv, vv, rv = np.ones((4, 3)), np.ones(3), np.ones((1, 3))
        given = {k: x for k, x in zip([m, v, row], [mv, vv, rv]) if k in set(ancestors([query]))}
        by_name = {k.name: x for k, x in given.items()}
        np.testing.assert_array_equal(new.eval({k: by_name[k.name] for k in trace.fgraph.inputs}), query.eval(given))
    # a static count is a constant; an axis broadcast in every input is not lifted
    static = T.tensor("float64", shape=(5, None), name="static")
    new, trace = rewritten(ReducedSize((0,))(T.exp(static)))
    assert isinstance(new, T.TensorConstant) and int(new.data) == 5
    new, trace = rewritten(ReducedSize((0,))(T.exp(m)[:, 0]))  # a Subtensor: its count is not an input's
    assert "lift_reduced_size" not in applied(trace)
    new, trace = rewritten(ReducedSize((0,))(row * 2.0))  # the only input is broadcast on axis 0: size 1, static
    assert int(new.data) == 1


def test_constant_sums_fold():
    x = vec("x")
    new, trace = rewritten((T.constant(2.0) + 3.0) + x)
    assert op_strings(trace.fgraph) == ["Elemwise{add,no_inplace}"]
    (c,) = [i for i in new.owner.inputs if isinstance(i, T.TensorConstant)]
    assert float(np.asarray(c.data).ravel()[0]) == 5.0


# -- stabilize: softmax and logsumexp -----------------------------------------------------------


@pytest.mark.parametrize("axis", [0, 1, None])
@pytest.mark.parametrize("shifted", [False, True])
def test_softmax_from_primitives_is_the_softmax_op(axis, shifted):
    x = T.dmatrix("x")
    z = x - x.max(axis=axis, keepdims=True) if shifted else x
    e = T.exp(z)
    prim = e / e.sum(axis=axis, keepdims=True)
    new, trace = rewritten(prim)
    ref, _ = rewritten(T.softmax(x, axis=axis))
    assert isinstance(new.owner.op, T.Softmax) and new.owner.op.axis == axis
    assert equal_computations([new], [ref], trace.fgraph.inputs, _.fgraph.inputs)
    assert "softmax_from_primitives" in applied(trace)
    assert ("softmax_shift" in applied(trace)) == shifted
    val = RNG.normal(size=(3, 4))
    np.testing.assert_allclose(new.eval({trace.fgraph.inputs[0]: val}), prim.eval({x: val}))


def test_softmax_from_primitives_does_not_apply_to_other_quotients():
    x, y = T.dmatrices("x", "y")
    for out in [T.exp(x) / T.exp(y).sum(axis=1, keepdims=True),  # the sum of another exp
                T.exp(x) / T.exp(x).sum(axis=0).dimshuffle("x", 0).T]:  # not the keepdims layout
        _, trace = rewritten(out)
        assert "softmax_from_primitives" not in applied(trace)
    _, trace = rewritten(T.softmax(x - y, axis=1))  # y is not constant along the axis
    assert "softmax_shift" not in applied(trace)


def test_softmax_and_log_sigmoid_are_finite_after_rewriting():
    x = vec("x")
    prim = T.exp(x) / T.exp(x).sum(keepdims=True)
    big = np.array([1000.0, 0.0])
    with np.errstate(all="ignore"):
        assert not np.all(np.isfinite(prim.eval({x: big})))
    new, trace = rewritten(prim)
    np.testing.assert_allclose(new.eval({trace.fgraph.inputs[0]: big}), [1.0, 0.0])
    ls = T.log(T.sigmoid(x))
    assert np.isinf(ls.eval({x: np.array([-1000.0])})[0])
    new, trace = rewritten(ls)
    np.testing.assert_allclose(new.eval({trace.fgraph.inputs[0]: np.array([-1000.0, 0.0])}), [-1000.0, np.log(0.5)])


@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp_written_from_primitives_is_stabilised(keepdims):
    x = T.dmatrix("x")
    out = T.log(T.exp(x).sum(axis=1, keepdims=keepdims))
    new, trace = rewritten(out)
    assert "logsumexp_stable" in applied(trace) and new.type == out.type
    assert [s.rule for s in trace].count("logsumexp_stable") == 1  # the stable form is left alone
    big = np.array([[1000.0, 1000.0], [0.0, 0.0]])
    with np.errstate(all="ignore"):
        assert np.isinf(out.eval({x: big})).any()
    got = new.eval({trace.fgraph.inputs[0]: big})
    expected = np.log(2.0) + np.array([1000.0, 0.0])
    np.testing.assert_allclose(got.ravel(), expected)
    small = RNG.normal(size=(3, 2))
    np.testing.assert_allclose(new.eval({trace.fgraph.inputs[0]: small}), out.eval({x: small}))


def test_logsumexp_does_not_apply_to_a_log_of_another_sum():
    x = T.dmatrix("x")
    _, trace = rewritten(T.log(T.sqr(x).sum(axis=1)))
    assert "logsumexp_stable" not in applied(trace)


# -- the database ------------------------------------------------------------------------------


def test_phases_and_tags():
    phases = {p.name: [e.name for e in p.entries] for p in default_db.query()}
    assert list(phases) == ["canonicalize", "stabilize", "specialize", "fusion", "inplace"]
    assert {"mul_div", "sub_self", "add_zero", "neg_neg", "lift_shape", "useless_reshape"} <= set(phases["canonicalize"])
    assert {"log1p", "expm1", "log_sigmoid", "softmax_from_primitives", "logsumexp_stable"} <= set(phases["stabilize"])
    assert {"pow_two", "pow_half"} <= set(phases["specialize"])
    assert phases["fusion"] == ["elemwise_fusion"]
    assert phases["inplace"] == ["inplace_elemwise", "inplace_dimshuffle", "random_make_inplace"]
    fast = {e.name for p in default_db.query(["fast_compile"]) for e in p.entries}
    # The logistic rules run in FAST_COMPILE too: stability is not an optimization. A fast compile must not train
    # a hand-written logistic regression to NaN (log(1 - p) = log(0), (1 - y) / (1 - p) = inf) where the default
    # mode gives numbers; they are the rules tagged ``logistic`` (the logistic module's and the stabilize rows
    # it relies on), every one needed by some hand-written form of the loss or its gradient.
    logistic_rules = {e.name for p in default_db.query(["logistic"]) for e in p.entries}
    assert {"sigmoid_from_quotient", "sigmoid_distribute", "log_sigmoid", "log_one_minus_sigmoid"} <= logistic_rules
    assert fast <= {"merge", "constant_folding", *canonicalize.CHEAP, "useless_dimshuffle", "merge_dimshuffles",
                    "useless_specify_shape", "useless_reshape", *logistic_rules,
                    "inline_ofg_expansion", "ofg_inner_graph",  # OpFromGraph's (symlab/compile/builders_rewrites.py)
                    "scan_inner_graph",  # a loop's body rewritten with the function's rules (symlab/scan/inner_rewrite.py)
                    # ifelse's (symlab/ifelse/rewrites.py): cheap, and a constant condition must not run both branches
                    "ifelse_constant_condition", "ifelse_identical_branches", "ifelse_same_condition_inside",
                    "ifelse_merge_same_condition", "ifelse_push_out_common_op"}
    assert logistic_rules <= fast and all(default_db[name].phase == "stabilize" for name in logistic_rules)
    assert "add_zero" in fast and "elemwise_fusion" not in fast and "inplace_elemwise" not in fast
    assert not {"log1p", "expm1", "softmax_from_primitives", "logsumexp_stable"} & fast  # the rest of stabilize: not


def test_rule_location_is_its_table_row():
    rule = default_db["mul_div"].rewriter
    path, line = rule.location
    assert path.endswith("canonicalize.py")
    with open(path) as f:
        assert '("mul_div"' in f.read().splitlines()[line - 1]


def test_softplus_written_out_shares_its_work_and_stays_exact_at_the_extremes():
    """specialize: softplus(x) -> max(x, 0) + log1p(exp(-|x|)); softplus(x) and softplus(-x) share one exp and log1p."""
    import symlab

    x = T.dvector("x")
    f = symlab.function([x], [T.softplus(x), T.softplus(-x)], mode="NUMPY")
    (node,) = f.maker.fgraph.toposort()  # one fused node
    ops = [str(inner.op) for inner in node.op.scalar_op.nodes]
    assert ops.count("log1p") == 1 and ops.count("exp") == 1 and "softplus" not in ops
    values = np.array([-800.0, -40.0, -1.0, -1e-300, 0.0, 1e-300, 1.0, 40.0, 800.0, np.inf, -np.inf])
    for mode in ("NUMPY", "NUMBA"):
        pos, neg = symlab.function([x], [T.softplus(x), T.softplus(-x)], mode=mode)(values)
        np.testing.assert_allclose(pos, np.logaddexp(0.0, values), rtol=1e-15, atol=0)
        np.testing.assert_allclose(neg, np.logaddexp(0.0, -values), rtol=1e-15, atol=0)


def test_sigmoid_written_out_uses_one_exp_and_stays_exact_at_the_extremes():
    """specialize: sigmoid(x) -> switch(x >= 0, 1 / (1 + e), e / (1 + e)) with e = exp(-|x|), shared with softplus."""
    import scipy.special

    import symlab

    x = T.dvector("x")
    outs = [T.sigmoid(x), T.softplus(x)]
    f = symlab.function([x], outs, mode="NUMPY")
    (node,) = f.maker.fgraph.toposort()  # one fused node
    ops = [str(inner.op) for inner in node.op.scalar_op.nodes]
    assert ops.count("exp") == 1 and "sigmoid" not in ops and "softplus" not in ops
    values = np.array([-800.0, -40.0, -1.0, -1e-300, 0.0, -0.0, 1e-300, 1.0, 40.0, 800.0, np.inf, -np.inf, np.nan])
    for mode in ("NUMPY", "NUMBA"):
        sig, _ = symlab.function([x], outs, mode=mode)(values)
        np.testing.assert_allclose(sig, scipy.special.expit(values), rtol=4e-16, atol=0)
    f32 = T.fvector("f")
    got = symlab.function([f32], T.sigmoid(f32))(values.astype("float32"))
    assert got.dtype == "float32"
    np.testing.assert_allclose(got, scipy.special.expit(values.astype("float32")), rtol=1e-6, atol=0)


def test_distributed_product_cancels_the_divisions_of_a_logistic_gradient():
    """canonicalize + unsafe: (a/p + b/q) * p * q -> a*q + b*p; a logistic model's gradient then has no division.
    By default (the rule is unsafe: p = 0 gives NaN before and a number after) the stabilize phase's logistic
    rules, whose factors sigmoid(u) cannot be 0 for a finite u, give the same graph."""
    import symlab

    X, y, w = T.dmatrix("X"), T.dvector("y"), T.dvector("w")
    p = T.sigmoid(T.dot(X, w))
    loss = -T.mean(y * T.log(p) + (1.0 - y) * T.log(1.0 - p))
    (gw,) = symlab.grad(loss, [w])
    new, trace = rewritten(gw, include=("canonicalize", "unsafe"))
    assert "distribute_cancelling_divisions" in applied(trace)
    new, trace = rewritten(gw, include=("canonicalize",))
    assert "distribute_cancelling_divisions" not in applied(trace)
    f = symlab.function([X, y, w], gw, mode="NUMPY")
    divisions = [
        inner for node in f.maker.fgraph.toposort() if hasattr(node.op, "scalar_op") and hasattr(node.op.scalar_op, "nodes")
        for inner in node.op.scalar_op.nodes if str(inner.op) == "true_div" and node.outputs[0].ndim == 1
    ]
    # no division by p or 1 - p is left, and the sigmoid stays one op (the loss's value, which would
    # share its exponential, is not computed: only its count is, from y)
    assert divisions == []
    assert any(getattr(n.op, "scalar_op", None) is not None and "sigmoid" in str(n.op) for n in f.maker.fgraph.toposort())
    rng = np.random.default_rng(5)
    Xv, yv, wv = rng.standard_normal((50, 4)), (rng.uniform(size=50) > 0.5).astype(float), rng.standard_normal(4)
    pv = 1.0 / (1.0 + np.exp(-(Xv @ wv)))
    np.testing.assert_allclose(f(Xv, yv, wv), Xv.T @ (pv - yv) / 50, rtol=1e-12, atol=1e-15)


def test_distribution_applies_only_when_every_division_cancels():
    x, y, z = T.dvectors("x", "y", "z")
    p = T.exp(z)
    cases = {
        "cancels": ((x / p - y / (1.0 - p)) * (p * (1.0 - p)), True),
        "negated sum": (-(x / p + y / z) * p * z, True),
        "one term does not cancel": ((x / p + y) * p, False),
        "divisor not a factor": ((x / p + y / z) * p, False),
    }
    vals = {name: positive(3) for name in "xyz"}
    for label, (out, expect) in cases.items():
        new, trace = rewritten(out, include=("canonicalize", "distribute_cancelling_divisions"))
        assert ("distribute_cancelling_divisions" in applied(trace)) is expect, label
        got = new.eval({v: vals[v.name] for v in trace.fgraph.inputs})
        want = out.eval({v: vals[v.name] for v in (x, y, z) if v in ancestors([out])})
        np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=label)


def test_distribution_is_unsafe_and_off_by_default():
    """(1/p + 1/q)*p*q is NaN at p = 0 (inf * 0) and q + p after the rule: it changes a finite input's value,
    so it is tagged unsafe, selected by "unsafe" or its name, never by its phase."""
    import symlab
    from symlab.compile.modes import get_mode

    p, q = T.dvectors("p", "q")
    out = (1.0 / p + 1.0 / q) * p * q
    values = [np.array([0.0, 2.0]), np.array([1.0, 4.0])]
    for include in [("canonicalize",), ("canonicalize", "unsafe"), ("canonicalize", "distribute_cancelling_divisions")]:
        new, trace = rewritten(out, include=include)
        assert ("distribute_cancelling_divisions" in applied(trace)) is (len(include) == 2), include
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(symlab.function([p, q], out, mode="NUMPY")(*values), [np.nan, 6.0])
        unsafe = symlab.function([p, q], out, mode=get_mode("NUMPY").including("unsafe"))
    np.testing.assert_array_equal(unsafe(*values), [1.0, 6.0])
    assert {"unsafe", "optional"} <= default_db["distribute_cancelling_divisions"].tags


def test_distribution_is_refused_when_it_would_change_the_type():
    """(a/P + b/P) * P with vectors a, b and a matrix P would be the vector a + b: refused, the output stays a matrix."""
    a, b = T.dvectors("a", "b")
    P = T.dmatrix("P")
    out = (a / P + b / P) * P
    new, trace = rewritten(out, include=("canonicalize", "distribute_cancelling_divisions"))
    assert "distribute_cancelling_divisions" not in applied(trace)
    assert new.type == out.type


def test_distribution_looks_at_a_bounded_number_of_operands():
    """Long products and sums (thousands of nodes deep) are rewritten without recursion, looking at a few operands."""
    from symlab.rewriting.rules.canonicalize import MAX_OPERANDS

    xs = [T.dvector(f"x{i}") for i in range(3000)]
    product = xs[0]
    for v in xs[1:]:
        product = product * v
    total = xs[0] / xs[1]
    for v in xs[2:]:
        total = total + v / xs[1]
    for out in (product, total * xs[1]):
        new, trace = rewritten(out, include=("canonicalize", "distribute_cancelling_divisions"))
        # the product has no sum to distribute over; the sum has more than MAX_OPERANDS terms
        assert "distribute_cancelling_divisions" not in applied(trace)
    few = xs[0] / xs[1]
    for v in xs[2:MAX_OPERANDS]:
        few = few + v / xs[1]
    new, trace = rewritten(few * xs[1], include=("canonicalize", "distribute_cancelling_divisions"))
    assert "distribute_cancelling_divisions" in applied(trace)
    vals = {v.name: positive(3) for v in xs[:MAX_OPERANDS]}
    want = sum(vals[f"x{i}"] for i in [0, *range(2, MAX_OPERANDS)])
    np.testing.assert_allclose(new.eval({v: vals[v.name] for v in trace.fgraph.inputs}), want, rtol=1e-12)
