"""The algebraic canonicalizer (symlab.rewriting.rules.algebra): collect_terms and collect_factors."""

import numpy as np
import pytest
from oracle import REWRITES, UNOPTIMIZED, Tolerance, check_against_unoptimized
from rewriting_helpers import StepChecker

import symlab
import symlab.tensor as T
from symlab.graph.fg import FunctionGraph
from symlab.printing import pprint
from symlab.rewriting import default_db, rewrite_graph
from symlab.rewriting.basic import EquilibriumGraphRewriter
from symlab.rewriting.rules import algebra
from symlab.tensor.elemwise import Elemwise

RNG = np.random.default_rng(21)


def canonical(out, inputs=None):
    """The canonicalize phase alone with the unsafe cancel_factors too (every step checked on random inputs)."""
    new, trace = rewrite_graph(out, inputs=inputs, include=("canonicalize", "unsafe"), features=[StepChecker()])
    return new, trace


#: The rules of the module: collect_factors never cancels a factor; cancel_factors (unsafe, optional) does.
ALGEBRA = {"collect_terms", "collect_factors", "cancel_factors"}


def applied(trace):
    return [s.rule for s in trace if s.accepted]


def elemwise_nodes(fg):
    return [n for n in fg.toposort() if isinstance(n.op, Elemwise)]


def scalar_ops(fg):
    """The scalar operations the graph's Elemwise nodes compute (a fused Composite counts its inner ones)."""
    total = 0
    for n in elemwise_nodes(fg):
        inner = getattr(n.op.scalar_op, "nodes", None)
        total += len(inner) if inner is not None else 1
    return total


def sample(v, low=-2.0, high=2.0):
    shape = tuple(3 if s is None else s for s in v.type.shape)
    if v.dtype.startswith(("int", "uint")):
        return RNG.integers(1, 50, size=shape).astype(v.dtype)
    return RNG.uniform(low, high, size=shape).astype(v.dtype)


def check(inputs, out, low=-2.0, high=2.0, compare=REWRITES):
    """Optimized (NUMPY mode) against unoptimized values on random inputs in ``[low, high)``; returns the
    compiled optimized function."""
    vals = [sample(v, low, high) for v in inputs]
    return check_against_unoptimized(inputs, out, vals, compare, on_unused_input="ignore")


x, y, z = T.dvectors("x", "y", "z")


# -- the examples: the optimized graph is small, and the values are kept --------------------------


def test_a_sum_of_six_x_is_six_times_x():
    new, trace = canonical(x + x + x + x + x + x)
    assert pprint(new) == "([6.] * x)" and "collect_terms" in applied(trace)
    f = check([x], x + x + x + x + x + x)
    assert scalar_ops(f.maker.fgraph) == 1 and len(f.maker.fgraph.apply_nodes) == 1


def test_a_quotient_by_a_reciprocal_cancels_only_where_asked():
    out = (x / y) / (1 / y)
    new, trace = canonical(out)
    assert new is trace.fgraph.inputs[0] and applied(trace)[-1] == "cancel_factors"
    # by default y is not cancelled: where y is 0 the result stays NaN, as written
    f = check([x, y], out, low=0.5)
    assert scalar_ops(f.maker.fgraph) >= 1
    slow = symlab.function([x, y], out, mode=UNOPTIMIZED)
    at_zero = (np.array([2.0]), np.array([0.0]))
    assert np.isnan(f(*at_zero)[0]) and np.isnan(slow(*at_zero)[0])
    # asked for (the query includes "unsafe"), it is x, and 0/0 is forgotten
    unsafe = symlab.function([x, y], out, mode=symlab.get_mode("NUMPY").including("unsafe"))
    assert scalar_ops(unsafe.maker.fgraph) == 0 and unsafe(*at_zero)[0] == 2.0


def test_opposite_terms_cancel():
    out = x - x + y
    new, trace = canonical(out, inputs=[x, y])
    assert new is trace.fgraph.inputs[1]
    check([x, y], out)
    new, trace = canonical(x + y - x, inputs=[x, y])  # no table rule sees this one
    assert new is trace.fgraph.inputs[1] and applied(trace) == ["collect_terms"]


def test_a_product_of_three_x_is_a_cube():
    new, trace = canonical(x * x * x)
    assert pprint(new) == "(x ** [3.])" and applied(trace)[0] == "collect_factors"
    f = check([x], x * x * x)
    assert scalar_ops(f.maker.fgraph) <= 2  # specialize may write the cube back as x * sqr(x)
    new, trace = canonical(x * x)  # pow(x, 2) is not fewer operations than x * x: left alone
    assert pprint(new) == "(x * x)"


def test_constants_of_a_product_are_folded_first():
    new, trace = canonical(2 * x * 3)
    assert pprint(new) == "([6.] * x)"
    f = check([x], 2 * x * 3)
    assert scalar_ops(f.maker.fgraph) == 1


def test_the_gradient_of_a_square_is_eight_x():
    g = symlab.grad(((2 * x) ** 2).sum(), x)
    new, trace = rewrite_graph(g, exclude=("fusion", "inplace"))
    assert pprint(new) == "([8.] * x)"
    f = check([x], g)
    assert scalar_ops(f.maker.fgraph) == 1 and len(f.maker.fgraph.apply_nodes) == 1


@pytest.mark.parametrize("build, text", [
    (lambda: x * 2.0 - (y + 1.0) + x + 3.0, "((([3.] * x) - y) + [2.])"),
    (lambda: -(2.0 * x), "([-2.] * x)"),
    (lambda: -(x - y), "(y - x)"),
    (lambda: x + (-y), "(x - y)"),
    (lambda: -x + y + 1.0 - 4.0, "((y - x) - [3.])"),
    (lambda: 1.0 - (y + x) + 2.0, "(([3.] - y) - x)"),
    (lambda: x * 3.0 + y - 3.0 * x, "y"),
    (lambda: (x * y) * (2.0 / x) * 0.5, "y"),
    (lambda: x * x * y / x, "(x * y)"),
    (lambda: x * (-y) * -3.0, "(([3.] * x) * y)"),
    (lambda: 2.0 * x / (4.0 * y * z), "(([0.5] * x) / (y * z))"),
    (lambda: x / 2.0 / 2.0, "(x / [4.])"),
    (lambda: x ** 2 * x / y ** 3, "((x ** [3.]) / (y ** [3]))"),  # y ** 3 left as written
    (lambda: x ** 2 * x / (y * y * y), "((x ** [3.]) / (y ** [3.]))"),
    (lambda: (x * y) / (y * x * z), "([1.] / z)"),
])
def test_canonical_forms_read_well_and_keep_the_values(build, text):
    out = build()
    new, trace = canonical(out, inputs=[x, y, z])
    assert pprint(new) == text, (pprint(new), applied(trace))
    assert ALGEBRA & set(applied(trace))
    check([x, y, z], out, low=0.5)


# -- types: broadcasting and dtypes exactly kept ------------------------------------------------------------


def test_a_cancelled_term_that_broadcast_leaves_a_fill():
    row = T.tensor("float64", shape=(1, None), name="row")
    m = T.dmatrix("m")
    out = row + m - m
    new, trace = canonical(out)
    assert new.type == out.type
    assert str(new.owner.op.scalar_op) == "second" and len(elemwise_nodes(trace.fgraph)) == 1
    check([row, m], out)
    new, _ = canonical(row * m / m)
    assert new.type == (row * m / m).type and len(elemwise_nodes(_.fgraph)) == 1
    check([row, m], row * m / m, low=0.5)


def test_a_row_collected_with_a_matrix_keeps_the_matrix_shape():
    row = T.tensor("float64", shape=(1, None), name="row")
    m = T.dmatrix("m")
    out = row + m + row + row
    new, trace = canonical(out)
    assert new.type == out.type and "collect_terms" in applied(trace)
    check([row, m], out)


@pytest.mark.parametrize("dtype", ["int32", "int8", "uint8", "float32"])
def test_dtypes_are_kept(dtype):
    a, b = T.tensor(dtype, shape=(None,), name="a"), T.tensor(dtype, shape=(None,), name="b")
    for out in [a + a + a, a * a * a, 2 * a * 3, a + b - a, a + 100 + 100, a * b * a * 5 * a]:
        assert out.dtype == dtype
        new, trace = canonical(out)
        assert new.dtype == dtype and new.type == out.type
        assert ALGEBRA & set(applied(trace)), str(out)
        check([a, b], out, compare=Tolerance(float64=(1e-12, 0.0), float32=(1e-5, 0.0)))
    new, _ = canonical(a + a + a)
    const = new.owner.inputs[0]
    assert const.dtype == dtype  # 3 * a with a constant of a's dtype


def test_integers_wrap_as_before():
    a = T.tensor("int8", shape=(None,), name="a")
    out = a * a * a + a + a + 120 + 120
    vals = np.arange(-128, 128, dtype="int8")
    check_against_unoptimized([a], out, [vals], "values")


def test_mixed_dtypes_are_left_alone():
    i = T.ivector("i")
    out = i + x + i  # i + i would be int32 arithmetic where the original adds in float64
    new, trace = canonical(out)
    assert "collect_terms" not in applied(trace)
    check([i, x], out)


def test_integer_division_is_not_touched():
    i, j = T.ivectors("i", "j")
    for out in [i // j * j, (i * j) // j, i // 2 * 2, (i // j) // (j // j)]:
        new, trace = canonical(out)
        ops = [str(n.op.scalar_op) for n in elemwise_nodes(trace.fgraph)]
        assert "int_div" in ops and not ALGEBRA & set(applied(trace))
    a, b = T.ivectors("a", "b")
    out = a * b / b  # true_div of ints is float64: its int operands are not cancelled
    new, trace = canonical(out)
    assert "collect_factors" not in applied(trace)
    check([a, b], out)


# -- sharing, size and termination --------------------------------------------------------------------------


def test_a_term_used_elsewhere_is_not_opened():
    s = x + y  # used twice: opening it into the outer sum would compute x + y twice
    out = T.exp(s) * (s + x)
    new, trace = canonical(out)
    adds = [n for n in elemwise_nodes(trace.fgraph) if str(n.op.scalar_op) == "add"]
    assert len(adds) == 2 and "collect_terms" not in applied(trace)
    p = x * y
    out = T.exp(p) + p * x * x * x
    new, trace = canonical(out)
    assert "collect_factors" in applied(trace)  # p * x ** 3, p = x * y still computed once
    assert sum(str(n.op.scalar_op) == "mul" for n in elemwise_nodes(trace.fgraph)) == 2
    check([x, y], out)


def test_the_graph_never_grows():
    cases = [x + y, x * y, x - y, x / y, -x, x * x, x + x, 2.0 * x, x + 1.0, 1.0 - x, x * x * y, T.exp(x) + 1.0]
    for out in cases:
        new, trace = canonical(out)
        assert "collect_terms" not in applied(trace) and "collect_factors" not in applied(trace), pprint(out)
    for out in [x + x + y + x - z * 2.0 + z, (x * y) / (x * 3.0) * y * y]:
        before = len(elemwise_nodes(FunctionGraph([x, y, z], [out])))
        new, trace = canonical(out, inputs=[x, y, z])
        assert len(elemwise_nodes(trace.fgraph)) < before


def test_rewriting_reaches_a_fixed_point():
    rules = EquilibriumGraphRewriter([algebra.collect_terms, algebra.collect_factors])
    outs = [x + x + x - y + 2.0 * y + 1.0 + 2.0, x * x * 2.0 / (y * x) * 3.0 * y, (x / y) / (1 / y), -(x - y) * -2.0]
    fg = FunctionGraph([x, y], outs)
    first = rules.rewrite(fg)
    assert len([s for s in first if s.accepted]) >= len(outs)
    text = [pprint(o) for o in fg.outputs]
    second = rules.rewrite(fg)
    assert [s for s in second if s.accepted] == [] and [pprint(o) for o in fg.outputs] == text
    for rule in (algebra.collect_terms, algebra.collect_factors):
        for node in fg.toposort():
            assert not rule.transform(fg, node)


def test_a_long_sum_is_collected_in_linear_steps():
    out = x
    for k in range(200):
        out = out + (x if k % 2 else y)
    new, trace = canonical(out)
    assert pprint(new) in ("(([101.] * x) + ([100.] * y))", "(([100.] * y) + ([101.] * x))")
    assert len(trace.steps) < 1000
    check([x, y], out, compare=Tolerance.uniform(1e-10))


def test_nan_and_inf_where_nothing_cancels_are_kept():
    inf = np.array([np.inf, -np.inf, np.nan, 1.0])
    for out in [x + x + x, x * x * x, 2 * x * 3, x * 2.0 + 1.0 + 1.0]:
        check_against_unoptimized([x], out, [inf], "values")


def test_cancelling_assumes_finite_values_as_documented():
    inf = np.array([np.inf])
    out = x - x + y
    fast = symlab.function([x, y], out, mode="NUMPY")
    slow = symlab.function([x, y], out, mode=UNOPTIMIZED)
    assert np.isnan(slow(inf, np.ones(1))[0]) and fast(inf, np.ones(1))[0] == 1.0
    assert "assumes finite *inputs*" in algebra.__doc__ and "``cancel_factors`` does" in algebra.__doc__


def test_rules_are_registered_in_canonicalize_for_fast_run_only():
    for name in ("collect_terms", "collect_factors"):
        entry = default_db[name]
        assert entry.phase == "canonicalize" and "fast_compile" not in entry.tags
        assert entry.rewriter.describe() == entry.rewriter.__doc__.splitlines()[0]
        assert "collected" in entry.rewriter.describe()
    names = [e.name for p in default_db.query() for e in p.entries]
    assert names.index("mul_div") < names.index("collect_factors")
    assert names.index("sub_self") < names.index("collect_terms")
    _, trace = rewrite_graph(x + x + x, include=("fast_compile",))
    assert "collect_terms" not in applied(trace)
    _, trace = rewrite_graph(x + x + x, exclude=("algebra",))
    assert "collect_terms" not in applied(trace)
    unsafe = default_db["cancel_factors"]
    assert {"optional", "unsafe"} <= unsafe.tags and "cancel_factors" not in names


def test_trace_points_at_the_rule():
    _, trace = canonical(x + x + x)
    step = next(s for s in trace if s.rule == "collect_terms")
    assert step.reason == algebra.collect_terms.describe() and step.location.file.endswith("algebra.py")


def test_everything_cancelled_is_a_constant_filled_to_the_shape():
    for out, value in [(x + y - x - y, 0.0), ((x * y) / (y * x), 1.0), (x / y / x * y * 2.0, 2.0)]:
        new, trace = canonical(out, inputs=[x, y])
        assert new.type == out.type and ALGEBRA & set(applied(trace))
        assert [str(n.op.scalar_op) for n in elemwise_nodes(trace.fgraph)] == ["second"]
        # x + y - x - y is not exactly 0 in floating point
        f = check([x, y], out, low=0.5, compare=Tolerance.uniform(1e-12, 1e-12))
        np.testing.assert_array_equal(f(np.ones(4), np.ones(4)), np.full(4, value))
    a, b = T.dscalars("a", "b")
    new, trace = canonical(a * b / (b * a), inputs=[a, b])
    assert isinstance(new, T.TensorConstant) and new.data == 1.0 and new.type == (a * b / (b * a)).type


def test_double_negation_is_left_to_the_table():
    _, trace = canonical(T.neg(T.neg(x)))
    assert applied(trace) == ["neg_neg"]
    _, trace = rewrite_graph(T.neg(T.neg(x)), include=("canonicalize",), exclude=("neg_neg",))
    assert "collect_terms" not in applied(trace)


def test_a_negated_factor_joins_the_sign_of_the_sum():
    # grad(sin(x) * cos(x)) is (-sin x) * sin x + cos x * cos x: cos(x)**2 - sin(x)**2, five operations
    out = symlab.grad((T.sin(x) * T.cos(x)).sum(), x)
    f = check([x], out)
    assert scalar_ops(f.maker.fgraph) == 5
    inner = [str(n.op) for n in f.maker.fgraph.toposort()[0].op.scalar_op.nodes]
    assert "neg" not in inner and "sub" in inner
    shared = T.neg(x)  # a negation used elsewhere stays, and is not computed twice
    new, trace = canonical(shared * y + z + shared, inputs=[x, y, z])
    assert sum(str(n.op.scalar_op) == "neg" for n in elemwise_nodes(trace.fgraph)) <= 1
    check([x, y, z], shared * y + z + shared)
