"""Stabilizations (softplus, log1mexp, log_softmax, 1 - sigmoid), exp(log(x)) keeping its NaN, and the power rules.

Each rule: where it applies (the rewritten graph's ops), where it must not (dtypes, broadcasting, negative
bases of fractional powers, integer wrap-around), and the optimized values at extreme inputs against a
high-precision reference (``decimal``, 60 digits) or the unoptimized graph.
"""

import decimal
import math

import numpy as np
import pytest
from rewriting_helpers import StepChecker

import symlab
import symlab.tensor as T
from symlab.rewriting import rewrite_graph
from symlab.rewriting.rules import specialize, stabilize

EXTREMES = np.array([-np.inf, -1000.0, -750.0, -40.0, -30.0, -1.0, -1e-300, -0.0, 0.0, 1e-300, 1e-20, 1.0, 30.0,
                     40.0, 750.0, 1000.0, np.inf, np.nan])


def rewritten(out, **kw):
    kw.setdefault("exclude", ("fusion", "inplace"))
    return rewrite_graph(out, features=[StepChecker()], **kw)


def applied(trace):
    return {s.rule for s in trace if s.accepted}


def scalar_ops(fgraph):
    return [str(getattr(n.op, "scalar_op", n.op)) for n in fgraph.toposort()]


def _evaluate(inputs, out, values):
    with np.errstate(all="ignore"):
        return out.eval(dict(zip(inputs, values)))


def high_precision(f, values):
    """``f`` (on ``decimal.Decimal``) at each float of ``values``, rounded to float64; NaN where f raises."""
    out = []
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        for v in values:
            if math.isnan(v):
                out.append(math.nan)
                continue
            try:
                out.append(float(f(decimal.Decimal(float(v)))))
            except (decimal.InvalidOperation, ValueError):
                out.append(math.nan)
    return np.array(out)


def _softplus(d):
    if d.is_infinite():
        return d if d > 0 else decimal.Decimal(0)
    return (1 + d.exp()).ln()


def _log1mexp(d):
    if d > 0:
        raise ValueError("log of a negative number")
    if d == 0:
        return decimal.Decimal("-Infinity")
    if d == decimal.Decimal("-Infinity"):
        return decimal.Decimal(0)
    if -d < decimal.Decimal("1e-10"):
        one_minus = -(d + d * d / 2 + d * d * d / 6)  # -expm1(d), to 40 digits
    else:
        one_minus = 1 - d.exp()  # 50 digits left after the cancellation
    return one_minus.ln()


def _sigmoid(d):
    if d.is_infinite():
        return decimal.Decimal(1 if d > 0 else 0)
    return 1 / (1 + (-d).exp())


def compiled(inputs, out, mode):
    return symlab.function(inputs, out, mode=mode)


# -- every new row has a case below -------------------------------------------------------------

APPLIES = {
    "log1p_exp": lambda x: T.log1p(T.exp(x)),
    "neg_neg_stabilize": lambda x: -T.log(T.sigmoid(-x)),
    "one_minus_sigmoid": lambda x: 1.0 - T.sigmoid(x),
    "log1mexp": lambda x: T.log(1.0 - T.exp(x)),
    "one_minus_exp": lambda x: (1.0 - T.exp(x)) * 2.0,
    "sigmoid_from_exp": lambda x: T.exp(x) / (1.0 + T.exp(x)),
    "sigmoid_from_exp_swapped": lambda x: T.exp(x) / (T.exp(x) + 1.0),
    "sigmoid_from_reciprocal": lambda x: 1.0 / (1.0 + T.exp(-x)),
    "sigmoid_from_reciprocal_swapped": lambda x: 1.0 / (T.exp(-x) + 1.0),
    "pow_zero": lambda x: x ** 0,
    "pow_pow": lambda x: (x ** 5) ** 3,
    "pow_of_sqr": lambda x: (x ** 2) ** 3,
    "sqrt_sqr": lambda x: T.sqrt(T.sqr(x)),
    "pow_three": lambda x: x ** 3,
    "pow_four": lambda x: x ** 4,
}
REFUSES = {
    "log1p_exp": lambda x: T.log1p(T.exp(x) * 2.0),
    "neg_neg_stabilize": lambda x: -T.exp(-x),
    "one_minus_sigmoid": lambda x: 2.0 - T.sigmoid(x),
    "log1mexp": lambda x: T.log(2.0 - T.exp(x)),
    "one_minus_exp": lambda x: 1.0 - T.exp(x) * 2.0,
    "sigmoid_from_exp": lambda x: T.exp(x) / (1.0 + T.exp(-x)),
    "sigmoid_from_exp_swapped": lambda x: T.exp(x) / (T.exp(x) + 2.0),
    "sigmoid_from_reciprocal": lambda x: 1.0 / (1.0 + T.exp(x)),
    "sigmoid_from_reciprocal_swapped": lambda x: 2.0 / (T.exp(-x) + 1.0),
    "pow_zero": lambda x: x ** 1e-300,
    "pow_pow": lambda x: (x ** 3) ** (1.0 / 3.0),  # x < 0: NaN, not x
    "pow_of_sqr": lambda x: (x ** 0.5) ** 2,  # x < 0: NaN, not x
    "sqrt_sqr": lambda x: T.sqrt(T.sqr(x) + 1.0),
    "pow_three": lambda x: x ** 3.5,
    "pow_four": lambda x: x ** 5,
}


def test_every_new_row_has_a_case():
    rows = {r[0] for r in stabilize.EXTREME_ROWS + specialize.POWER_ROWS}
    assert rows == set(APPLIES) == set(REFUSES)


@pytest.mark.parametrize("rule", sorted(APPLIES))
def test_new_rule_applies_and_keeps_values(rule):
    x = T.dvector("x")
    out = APPLIES[rule](x)
    new, trace = rewritten(out)
    assert rule in applied(trace), str(trace)
    assert new.type == out.type
    values = np.array([-2.5, -1.0, -0.3, 0.0, 0.7, 1.5, 3.0]) if "log1mexp" not in rule else np.array([-3.0, -0.1])
    np.testing.assert_allclose(new.eval({trace.fgraph.inputs[0]: values}), _evaluate([x], out, [values]),
                               rtol=1e-14, atol=0)


@pytest.mark.parametrize("rule", sorted(REFUSES))
def test_new_rule_does_not_apply(rule):
    x = T.dvector("x")
    out = REFUSES[rule](x)
    new, trace = rewritten(out)
    assert rule not in applied(trace), str(trace)
    values = np.array([-2.5, -1.0, 0.0, 0.7, 3.0])
    np.testing.assert_allclose(new.eval({trace.fgraph.inputs[0]: values}), _evaluate([x], out, [values]),
                               rtol=1e-14, atol=0)


# -- exp(log(x)) and log(exp(x)) --------------------------------------------------------------------


def test_exp_log_keeps_the_nan_of_a_negative_x():
    x = T.dvector("x")
    out = T.exp(T.log(x))
    new, trace = rewritten(out)
    assert "exp_log" in applied(trace) and "exp" not in scalar_ops(trace.fgraph) and "log" not in scalar_ops(trace.fgraph)
    values = np.array([-1.0, -1e-300, -np.inf, np.nan, -0.0, 0.0, 1e-300, 2.0, 1e300, np.inf])
    expected = np.where(values >= 0, values, np.nan)  # what exp(log(x)) is, without its rounding
    before = _evaluate([x], out, [values])
    np.testing.assert_array_equal(np.isnan(before), np.isnan(expected))
    for mode in ("NUMPY", "NUMBA"):
        got = compiled([x], out, mode)(values)
        np.testing.assert_array_equal(got, expected)
        assert np.isnan(got[0])  # x = -1: NaN, as unoptimized
    f = T.fvector("f")
    new, trace = rewritten(T.exp(T.log(f)))
    assert "exp_log" in applied(trace) and new.dtype == "float32"
    with np.errstate(over="ignore"):
        got = compiled([f], T.exp(T.log(f)), "NUMPY")(values.astype("float32"))
    assert got.dtype == "float32" and np.isnan(got[0])


def test_exp_log_and_log_exp_leave_complex_and_integer_inputs_alone():
    z = T.tensor("complex128", shape=(None,), name="z")
    _, trace = rewritten(T.exp(T.log(z)))
    assert "exp_log" not in applied(trace)
    _, trace = rewritten(T.log(T.exp(z)))  # log(exp(4j)) is (4 - 2 pi) j
    assert "log_exp" not in applied(trace)
    i = T.ivector("i")
    new, trace = rewritten(T.exp(T.log(i)))
    assert "exp_log" not in applied(trace) and new.dtype == "float64"


def test_log_exp_is_x_and_exact_where_exp_overflows():
    x = T.dvector("x")
    out = T.log(T.exp(x))
    new, trace = rewritten(out)
    assert "log_exp" in applied(trace) and new is trace.fgraph.inputs[0]
    values = np.array([-np.inf, -1000.0, -1.0, 0.0, 1.0, 700.0, np.inf, np.nan])
    np.testing.assert_array_equal(compiled([x], out, "NUMPY")(values), values)
    # the documented stabilization: exp(1000) = inf, so the unoptimized graph gives inf
    assert _evaluate([x], out, [np.array([1000.0])])[0] == np.inf
    assert compiled([x], out, "NUMPY")(np.array([1000.0]))[0] == 1000.0


# -- softplus ------------------------------------------------------------------------------------


SOFTPLUS_FORMS = {
    "log(1 + exp(x))": lambda x: T.log(1 + T.exp(x)),
    "log(exp(x) + 1)": lambda x: T.log(T.exp(x) + 1.0),
    "log1p(exp(x))": lambda x: T.log1p(T.exp(x)),
    "-log(sigmoid(-x))": lambda x: -T.log(T.sigmoid(-x)),
}


@pytest.mark.parametrize("form", sorted(SOFTPLUS_FORMS))
def test_softplus_forms_become_the_stable_softplus(form):
    x = T.dvector("x")
    out = SOFTPLUS_FORMS[form](x)
    new, trace = rewritten(out, include=("canonicalize", "stabilize"), exclude=())
    assert scalar_ops(trace.fgraph) == ["softplus"], str(trace)
    assert new.owner.inputs[0] is trace.fgraph.inputs[0]
    reference = high_precision(_softplus, EXTREMES)
    np.testing.assert_allclose(reference[np.isfinite(EXTREMES)], np.logaddexp(0.0, EXTREMES[np.isfinite(EXTREMES)]),
                               rtol=1e-15, atol=0)  # the reference is right
    for mode in ("NUMPY", "NUMBA"):
        f = compiled([x], out, mode)
        ops = {str(inner.op) for n in f.maker.fgraph.toposort() for inner in getattr(
            getattr(n.op, "scalar_op", None), "nodes", [])}
        # alone, it stays the one stable softplus (nothing to share its exponential with): one node
        assert [str(n.op) for n in f.maker.fgraph.toposort()] == ["Elemwise{softplus,no_inplace}"], ops
        np.testing.assert_allclose(f(EXTREMES), reference, rtol=1e-15, atol=1e-300)
        assert f(np.array([1000.0]))[0] == 1000.0
    assert np.isinf(_evaluate([x], out, [np.array([1000.0])])[0])  # unoptimized: inf


def test_softplus_keeps_float32_and_is_not_made_from_other_logs():
    f = T.fvector("f")
    out = T.log(1 + T.exp(f))
    new, trace = rewritten(out)
    assert "log1p_exp" in applied(trace) and new.dtype == "float32"
    got = compiled([f], out, "NUMBA")(np.array([100.0, -100.0, 0.0], dtype="float32"))
    assert got.dtype == "float32"
    np.testing.assert_allclose(got, np.array([100.0, 3.7200760e-44, np.log(2.0)], dtype="float32"), rtol=1e-6)
    x = T.dvector("x")
    _, trace = rewritten(T.log(1.0 + T.exp(x) * 2.0))
    assert "log1p_exp" not in applied(trace)


def test_log_sigmoid_leaves_unsigned_integers_alone():
    """-softplus(-u) wraps -u around for an unsigned u: log(sigmoid(3)) is not -softplus(253)."""
    u = T.tensor("uint8", shape=(None,), name="u")
    out = T.log(T.sigmoid(u))
    new, trace = rewritten(out)
    assert "log_sigmoid" not in applied(trace)
    values = np.array([0, 3, 255], dtype="uint8")
    np.testing.assert_allclose(new.eval({trace.fgraph.inputs[0]: values}), np.log(1 / (1 + np.exp(-values.astype(float)))))


# -- 1 - sigmoid(x), log(1 - exp(x)), log(softmax(x)) --------------------------------------------------


def test_one_minus_sigmoid_is_sigmoid_of_minus_x_at_the_extremes():
    x = T.dvector("x")
    out = 1.0 - T.sigmoid(x)
    _, trace = rewritten(out, include=("canonicalize", "stabilize"), exclude=())
    assert "one_minus_sigmoid" in applied(trace) and scalar_ops(trace.fgraph) == ["neg", "sigmoid"]
    reference = high_precision(lambda d: _sigmoid(-d), EXTREMES)
    for mode in ("NUMPY", "NUMBA"):
        np.testing.assert_allclose(compiled([x], out, mode)(EXTREMES), reference, rtol=1e-15, atol=0)
    assert _evaluate([x], out, [np.array([40.0])])[0] == 0.0  # unoptimized: 1 - 1
    i = T.ivector("i")
    _, trace = rewritten(1.0 - T.sigmoid(i))  # -i wraps around at the smallest int32
    assert "one_minus_sigmoid" not in applied(trace)


def test_log1mexp_at_the_extremes():
    x = T.dvector("x")
    out = T.log(1.0 - T.exp(x))
    _, trace = rewritten(out)
    assert "log1mexp" in applied(trace) and "sub" not in scalar_ops(trace.fgraph)
    values = np.array([-np.inf, -1000.0, -40.0, -30.0, -1.0, -math.log(2.0), -0.5, -1e-20, -1e-300, -0.0, 0.0,
                       1e-300, 1.0, 1000.0, np.inf, np.nan])
    reference = high_precision(_log1mexp, values)
    with np.errstate(all="ignore"):
        assert _evaluate([x], out, [np.array([-1e-20])])[0] == -np.inf  # unoptimized: log(0)
    for mode in ("NUMPY", "NUMBA"):
        got = compiled([x], out, mode)(values)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(reference))  # x > 0: NaN, as unoptimized
        np.testing.assert_allclose(got, reference, rtol=2e-16, atol=0)


@pytest.mark.parametrize("rule", ["sigmoid_from_exp", "sigmoid_from_exp_swapped", "sigmoid_from_reciprocal",
                                  "sigmoid_from_reciprocal_swapped"])
def test_sigmoid_written_with_exp_becomes_the_sigmoid_op(rule):
    x = T.dvector("x")
    out = APPLIES[rule](x)
    _, trace = rewritten(out, include=("canonicalize", "stabilize"), exclude=())
    assert rule in applied(trace) and scalar_ops(trace.fgraph) == ["sigmoid"], str(trace)
    reference = high_precision(_sigmoid, EXTREMES)
    for mode in ("NUMPY", "NUMBA"):
        np.testing.assert_allclose(compiled([x], out, mode)(EXTREMES), reference, rtol=1e-15, atol=0)
    if "reciprocal" not in rule:
        assert np.isnan(_evaluate([x], out, [np.array([1000.0])])[0])  # unoptimized: inf / inf
    f = T.fvector("f")
    new, trace = rewritten(APPLIES[rule](f))
    assert rule in applied(trace) and new.dtype == "float32"


def test_one_minus_exp_is_minus_expm1_and_leaves_logs_to_log1mexp():
    x = T.dvector("x")
    out = 1.0 - T.exp(x)
    _, trace = rewritten(out, include=("canonicalize", "stabilize"), exclude=())
    assert scalar_ops(trace.fgraph) == ["expm1", "neg"]
    reference = high_precision(lambda d: 1 - d.exp(), EXTREMES[:-1])
    got = compiled([x], out, "NUMBA")(EXTREMES)
    tiny = np.abs(EXTREMES[:-1]) < 1e-15
    np.testing.assert_allclose(got[:-1][~tiny], reference[~tiny], rtol=1e-15, atol=0)
    np.testing.assert_array_equal(got[:-1][tiny], -EXTREMES[:-1][tiny])  # 1 - exp(x) is 0 there, -expm1(x) is -x
    assert np.isnan(got[-1])
    _, trace = rewritten(T.log(1.0 - T.exp(x)))
    assert "log1mexp" in applied(trace) and "one_minus_exp" not in applied(trace)


def test_log_softmax_from_log_of_softmax():
    x = T.dmatrix("x")
    out = T.log(T.softmax(x, axis=1))
    new, trace = rewritten(out)
    assert "log_softmax" in applied(trace) and type(new.owner.op).__name__ == "LogSoftmax"
    prim = T.log(T.exp(x) / T.exp(x).sum(axis=1, keepdims=True))
    _, trace = rewritten(prim)
    assert {"softmax_from_primitives", "log_softmax"} <= applied(trace)
    values = np.array([[1000.0, 0.0, -1000.0], [0.0, -np.inf, 1.0], [np.nan, 0.0, 1.0], [5.0, 5.0, 5.0]])
    with np.errstate(all="ignore"):
        shifted = values - np.nanmax(values, axis=1, keepdims=True)
        reference = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    for mode in ("NUMPY", "NUMBA"):
        got = compiled([x], out, mode)(values)
        np.testing.assert_allclose(got, reference, rtol=1e-15)
        assert got[0, 2] == -2000.0  # unoptimized: log(0) = -inf
    with np.errstate(all="ignore"):
        assert np.isneginf(_evaluate([x], out, [values])[0, 2])


# -- powers ---------------------------------------------------------------------------------------


def test_pow_zero_gives_ones_of_the_shape_and_dtype_even_for_nan_and_inf():
    x = T.dvector("x")
    new, trace = rewritten(x ** 0)
    assert "pow_zero" in applied(trace) and "pow" not in scalar_ops(trace.fgraph)
    values = np.array([np.nan, np.inf, -np.inf, 0.0, -2.0])
    np.testing.assert_array_equal(new.eval({trace.fgraph.inputs[0]: values}), np.power(values, 0))
    i = T.ivector("i")
    new, trace = rewritten(i ** 0)
    assert "pow_zero" in applied(trace) and new.dtype == "int32"
    new, trace = rewritten(i ** 0.0)  # float64 ones: not ones_like(i)
    assert "pow_zero" not in applied(trace) and new.dtype == "float64"
    row = T.tensor("float64", shape=(1, None), name="row")
    out = row ** T.zeros((3, 4))
    new, trace = rewritten(out)  # the zeros broadcast row: ones_like(row) has the wrong shape
    assert "pow_zero" not in applied(trace) and new.type == out.type
    np.testing.assert_array_equal(new.eval({trace.fgraph.inputs[0]: np.ones((1, 4))}), np.ones((3, 4)))


def test_nested_powers_only_where_the_values_are_kept():
    x = T.dvector("x")
    moderate = np.array([-np.inf, -2.0, -0.5, -0.0, 0.0, 0.5, 3.0, np.inf, np.nan])
    extreme = np.array([-1e200, -1e-200, 1e-200, 1e200])  # the original under- or overflows inside
    for out, rule, ops, exact in [
        ((x ** 5) ** 3, "pow_pow", ["DimShuffle{x}", "pow"], lambda v: v ** 15.0),
        ((x ** 5) ** -3, "pow_pow", ["DimShuffle{x}", "pow"], lambda v: v ** -15.0),
        ((x ** 2) ** 3, "pow_of_sqr", ["DimShuffle{x}", "pow"], lambda v: v ** 6.0),
        ((x ** 2) ** 0.5, "pow_of_sqr", ["abs"], np.abs),
        ((x ** -2) ** 0.5, "pow_pow", ["abs", "reciprocal"], lambda v: 1.0 / np.abs(v)),
        ((x ** 2) ** 0.25, "pow_of_sqr", ["abs", "sqrt"], lambda v: np.sqrt(np.abs(v))),
        ((x ** 6) ** 0.5, "pow_pow", ["abs", "sqr", "mul"], lambda v: np.abs(v) ** 3.0),
    ]:
        new, trace = rewritten(out)
        assert rule in applied(trace), str(trace)
        assert sorted(scalar_ops(trace.fgraph)) == sorted(ops), str(trace)
        with np.errstate(all="ignore"):
            for values in (moderate, extreme):
                np.testing.assert_allclose(new.eval({trace.fgraph.inputs[0]: values}), exact(values), rtol=1e-14,
                                           atol=0)
            np.testing.assert_allclose(new.eval({trace.fgraph.inputs[0]: moderate}), out.eval({x: moderate}),
                                       rtol=1e-14, atol=0)
    # (x**2)**0.5 at 1e200: the original overflows to inf, |x| is 1e200 (a stabilization)
    new, trace = rewritten((x ** 2) ** 0.5)
    assert new.eval({trace.fgraph.inputs[0]: np.array([-1e200])})[0] == 1e200
    # refused: a fractional power of a power that may be negative, integers (wrap-around), float32 kept
    for out in [(x ** 3) ** 0.5, (x ** 0.5) ** 4, (x ** 1.5) ** 2.0]:
        _, trace = rewritten(out)
        assert not {"pow_pow", "pow_of_sqr"} & applied(trace), str(trace)
    i = T.ivector("i")
    _, trace = rewritten((i ** 5) ** 3)
    assert "pow_pow" not in applied(trace)
    f = T.fvector("f")
    new, trace = rewritten((f ** 5) ** 3)
    assert "pow_pow" in applied(trace) and new.dtype == "float32"


def test_sqrt_of_a_square_is_abs():
    x = T.dvector("x")
    out = T.sqrt(x ** 2)
    new, trace = rewritten(out)
    assert {"pow_two", "sqrt_sqr"} <= applied(trace) and scalar_ops(trace.fgraph) == ["abs"]
    values = np.array([-np.inf, -3.0, -0.0, 0.0, 1e-300, 2.5, np.inf, np.nan])
    np.testing.assert_array_equal(compiled([x], out, "NUMPY")(values), np.abs(values))
    assert compiled([x], out, "NUMBA")(np.array([1e200]))[0] == 1e200  # the original overflows: inf
    i = T.ivector("i")
    new, trace = rewritten(T.sqrt(i ** 2))  # abs(i) is int32, the sqrt float64
    assert "sqrt_sqr" not in applied(trace) and new.dtype == "float64"


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int8", "uint8"])
def test_small_integer_powers_are_products_with_the_same_values(dtype):
    x = T.tensor(dtype, shape=(None,), name="x")
    for n, rule in [(3, "pow_three"), (4, "pow_four")]:
        out = x ** n
        new, trace = rewritten(out)
        assert rule in applied(trace) and "pow" not in scalar_ops(trace.fgraph) and new.type == out.type
        if dtype.startswith("float"):
            with np.errstate(over="ignore"):  # float32: 1e103 is inf
                values = np.array([-np.inf, -1e103, -2.5, -0.0, 1e-110, 3.0, 1e80, np.inf, np.nan]).astype(dtype)
        else:
            values = np.array([0, 1, 2, 7, 100, 127], dtype=dtype)  # the int8 powers wrap around, both ways alike
        expected = _evaluate([x], out, [values])  # Elemwise{pow}: np.power
        for mode in ("NUMPY", "NUMBA"):
            got = compiled([x], out, mode)(values)
            assert got.dtype == expected.dtype
            np.testing.assert_allclose(got, expected, rtol=4 * np.finfo(dtype).eps if dtype.startswith("f") else 0)


def test_integer_powers_by_minus_one_stay_powers():
    i = T.ivector("i")
    _, trace = rewritten(i ** -1)  # NumPy raises on integers to negative powers: no 1 // i
    assert "pow_minus_one" not in applied(trace)
    x = T.dvector("x")
    new, trace = rewritten(x ** -1)
    assert "pow_minus_one" in applied(trace)
    values = np.array([-0.0, 0.0, np.inf, -np.inf, np.nan, 4.0])
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(new.eval({trace.fgraph.inputs[0]: values}), np.power(values, -1.0))
