"""Stable logistic models: the sigmoid recognised however it is written, its log and its gradient finite.

The rules of ``symlab.rewriting.rules.logistic`` with the sigmoid rows of ``stabilize``: where they apply
(the forms of ``1 / (1 + exp(-x))``), where they must not, the values they keep (against the graph as
written at moderate inputs, against a 60-digit reference at the extremes), the gradients (finite at
|z| = 1000 where the graph as written gives NaN; ``verify_grad`` at moderate points), and PyTensor's
tutorial logistic regression, run as written, against a stable NumPy implementation of the same steps.
"""

import decimal

import numpy as np
import pytest

import symlab
import symlab.tensor as T
from symlab.compile.modes import get_mode
from symlab.gradient import verify_grad
from symlab.printing import pprint
from symlab.rewriting import default_db, rewrite_graph
from symlab.rewriting.rules import logistic

STABILIZE_ONLY = ("specialize", "fusion", "inplace")
EXTREMES = np.array([-1000.0, -750.0, -100.0, -40.0, -1.0, 0.0, 1.0, 40.0, 100.0, 750.0, 1000.0])
MODERATE = np.array([-3.0, -1.0, -0.25, 0.0, 0.5, 2.0])


def applied(trace):
    return {s.rule for s in trace if s.accepted}


def scalar_ops(fgraph):
    return sorted({str(getattr(n.op, "scalar_op", n.op)) for n in fgraph.toposort()})


def high_precision_sigmoid(values):
    out = []
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        for v in values:
            out.append(float(1 / (1 + (-decimal.Decimal(float(v))).exp())))
    return np.array(out)


def stable_sigmoid(z):
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, 1 / (1 + e), e / (1 + e))


def softplus(z):
    return np.maximum(z, 0) + np.log1p(np.exp(-np.abs(z)))


# -- the sigmoid, however it is written ---------------------------------------------------------------------

x, f, m = T.dvector("x"), T.fvector("f"), T.dmatrix("m")

#: name -> (expression, the stabilized graph as pprint writes it)
SIGMOID_FORMS = {
    "reciprocal": (1 / (1 + T.exp(-x)), "sigmoid(x)"),
    "constant last": (1 / (T.exp(-x) + 1), "sigmoid(x)"),
    "float constants": (1.0 / (1.0 + T.exp(-x)), "sigmoid(x)"),
    "exp over one plus exp": (T.exp(x) / (1 + T.exp(x)), "sigmoid(x)"),
    "exp over exp plus one": (T.exp(x) / (T.exp(x) + 1.0), "sigmoid(x)"),
    "minus exp over one plus": (T.exp(-x) / (1 + T.exp(-x)), "sigmoid((-x))"),
    "sigmoid of minus x": (1 / (1 + T.exp(x)), "sigmoid((-x))"),
    "power minus one": ((1 + T.exp(-x)) ** -1, "sigmoid(x)"),
    "reciprocal op": (T.reciprocal(1 + T.exp(-x)), "sigmoid(x)"),
    "scaled": (3 * (1 + T.exp(-x)) ** -1, "([3.] * sigmoid(x))"),
    "numerator": (2 / (1 + T.exp(-x)), "([2] * sigmoid(x))"),
    "negated": (-1 / (1 + T.exp(x)), "(-sigmoid((-x)))"),
    "float32": (1 / (1 + T.exp(-f)), "sigmoid(f)"),
    "float32 with float constants": (1.0 / (1.0 + T.exp(-f)), "sigmoid(f)"),
    "matrix, broadcast constants": (1 / (1 + T.exp(-m)), "sigmoid(m)"),
    "a sum in the exp": (1 / (1 + T.exp(-m - x)), "sigmoid((m + DimShuffle{x,0}(x)))"),
    "a broadcast denominator": (T.ones((3, 6)) / (1 + T.exp(-x)), "second((3, 6) of 1.0, DimShuffle{x,0}(sigmoid(x)))"),
}


@pytest.mark.parametrize("name", sorted(SIGMOID_FORMS))
def test_sigmoid_forms_become_the_sigmoid_op(name):
    out, expected = SIGMOID_FORMS[name]
    new, trace = rewrite_graph(out, exclude=STABILIZE_ONLY)
    assert pprint(new) == expected, str(trace)
    assert new.type == out.type
    assert "exp" not in scalar_ops(trace.fgraph) and "true_div" not in scalar_ops(trace.fgraph)
    inputs = trace.fgraph.inputs
    originals = [v for v in symlab.graph.traversal.graph_inputs([out]) if v.name in {i.name for i in inputs}]
    shape = {"x": (6,), "f": (6,), "m": (3, 6)}
    rng = np.random.default_rng(0)
    values = {i.name: (rng.standard_normal(shape[i.name]) * 3).astype(i.dtype) for i in inputs}
    got = new.eval({i: values[i.name] for i in inputs})
    want = out.eval({v: values[v.name] for v in originals})
    np.testing.assert_allclose(got, want, rtol=1e-6 if out.dtype == "float32" else 1e-14)


def test_sigmoid_from_quotient_is_exact_at_the_extremes():
    out = 1 / (1 + T.exp(-x))
    reference = high_precision_sigmoid(EXTREMES)
    for mode in ("NUMPY", "NUMBA"):
        np.testing.assert_allclose(symlab.function([x], out, mode=mode)(EXTREMES), reference, rtol=1e-15, atol=0)
    with np.errstate(all="ignore"):
        scaled = symlab.function([x], 2.0 * T.exp(x) / (1.0 + T.exp(x)), mode="NUMPY")(EXTREMES)
    np.testing.assert_allclose(scaled, 2 * high_precision_sigmoid(EXTREMES), rtol=1e-15, atol=0)


REFUSED = {
    "not one plus": 1 / (2 + T.exp(-x)),
    "a scaled exp": 1 / (1 + 2 * T.exp(-x)),
    "exp over another exp": T.exp(x) / T.exp(x + 1.0),
    "a plain variable": (x / m) * m,
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_forms_that_are_not_a_sigmoid_are_left_alone(name):
    out = REFUSED[name]
    new, trace = rewrite_graph(out, exclude=STABILIZE_ONLY)
    assert not applied(trace) & {"sigmoid_from_quotient", "sigmoid_distribute"}, str(trace)
    assert "sigmoid" not in scalar_ops(trace.fgraph)


def test_integer_arguments_are_left_alone():
    """-i of an int32 wraps around at its smallest value: 1 / (1 + exp(i)) is not rewritten to sigmoid(-i)."""
    i = T.ivector("i")
    out = 1 / (1 + T.exp(i))
    new, trace = rewrite_graph(out, exclude=STABILIZE_ONLY)
    assert "sigmoid_from_quotient" not in applied(trace)
    v = np.array([-3, 0, 2], dtype="int32")
    np.testing.assert_allclose(new.eval({trace.fgraph.inputs[0]: v}), 1 / (1 + np.exp(v)), rtol=1e-15)


def test_only_sigmoid_and_exp_factors_are_cancelled():
    """sigmoid(u)/sigmoid(u) cancels (never 0 for a finite u); x/x does not (x may be 0)."""
    v = T.dvector("v")
    s = T.sigmoid(x)
    new, trace = rewrite_graph((v / s) * s * 2.0, exclude=STABILIZE_ONLY)
    assert "sigmoid_from_quotient" in applied(trace) and pprint(new) == "(v * [2.])"
    new, trace = rewrite_graph((v / x) * x, exclude=STABILIZE_ONLY)
    assert "true_div" in scalar_ops(trace.fgraph)
    with np.errstate(all="ignore"):
        value = new.eval(dict(zip(trace.fgraph.inputs, [np.ones(2), np.zeros(2)])))
    assert np.isnan(value).all()  # 0/0 kept


# -- logs and cross-entropies -------------------------------------------------------------------------------

z, y = T.dvector("z"), T.dvector("y")
P_FORMS = {
    "reciprocal": lambda: 1 / (1 + T.exp(-z)),
    "power": lambda: (1 + T.exp(-z)) ** -1,
    "sigmoid": lambda: T.sigmoid(z),
    "one minus": lambda: 1 - 1 / (1 + T.exp(z)),
    "exp over one plus exp": lambda: T.exp(z) / (1 + T.exp(z)),
}
LOSSES = {
    "log p": (lambda p: T.log(p), lambda zv, yv: -softplus(-zv)),
    "log(1 - p)": (lambda p: T.log(1 - p), lambda zv, yv: -softplus(zv)),
    "log1p(-p)": (lambda p: T.log1p(-p), lambda zv, yv: -softplus(zv)),
    "cross-entropy": (lambda p: -y * T.log(p) - (1 - y) * T.log(1 - p),
                      lambda zv, yv: yv * softplus(-zv) + (1 - yv) * softplus(zv)),
    "Theano's binary_crossentropy": (lambda p: T.nnet.binary_crossentropy(p, y),
                                     lambda zv, yv: yv * softplus(-zv) + (1 - yv) * softplus(zv)),
}
LABELS = np.array([1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0])


@pytest.mark.parametrize("p_form", sorted(P_FORMS))
@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_losses_and_gradients_are_finite_at_any_finite_input(p_form, loss):
    expression, reference = LOSSES[loss]
    p = P_FORMS[p_form]()
    out = expression(p)
    g = symlab.grad(out.sum(), z)
    fn = symlab.function([z, y], [out, g], mode="NUMPY", on_unused_input="ignore")
    value, gradient = fn(EXTREMES, LABELS)
    np.testing.assert_allclose(value, reference(EXTREMES, LABELS), rtol=1e-13, atol=1e-300)
    eps = 1e-7  # the gradient against central differences of the NumPy reference, at every point
    numeric = (reference(EXTREMES + eps, LABELS) - reference(EXTREMES - eps, LABELS)) / (2 * eps)
    np.testing.assert_allclose(gradient, numeric, rtol=1e-6, atol=1e-8)
    with np.errstate(all="ignore"):
        unoptimized = symlab.function([z, y], g, mode=get_mode("NUMPY").excluding("logistic"),
                                      on_unused_input="ignore")(EXTREMES, LABELS)
    if p_form != "sigmoid" or loss != "log p":
        assert not np.isfinite(unoptimized).all()  # the graph as written: inf or NaN somewhere


def test_stabilized_losses_end_in_softplus_forms():
    p = 1 / (1 + T.exp(-z))
    out = -y * T.log(p) - (1 - y) * T.log(1 - p)
    new, trace = rewrite_graph(out, exclude=STABILIZE_ONLY)
    assert pprint(new) == "(((-y) * (-softplus((-z)))) - (([1] - y) * (-softplus(z))))"
    assert {"log_sigmoid", "log_one_minus_sigmoid"} <= applied(trace)
    assert applied(trace) & {"sigmoid_from_reciprocal", "sigmoid_from_quotient"}
    new, trace = rewrite_graph(T.log1p(-T.sigmoid(z)), exclude=STABILIZE_ONLY)
    assert pprint(new) == "(-softplus(z))" and "log1p_neg_sigmoid" in applied(trace)


@pytest.mark.parametrize("p_form", sorted(P_FORMS))
def test_cross_entropy_gradient_by_finite_differences(p_form):
    rng = np.random.default_rng(1)
    labels = np.array([1.0, 0.0, 1.0, 1.0, 0.0])

    def loss(zv):
        p = {"reciprocal": lambda: 1 / (1 + T.exp(-zv)), "power": lambda: (1 + T.exp(-zv)) ** -1,
             "sigmoid": lambda: T.sigmoid(zv), "one minus": lambda: 1 - 1 / (1 + T.exp(zv)),
             "exp over one plus exp": lambda: T.exp(zv) / (1 + T.exp(zv))}[p_form]()
        return -labels * T.log(p) - (1 - labels) * T.log(1 - p)

    verify_grad(loss, [np.array([-4.0, -0.5, 0.1, 1.5, 3.0])], rng=rng)


def test_the_compiled_cross_entropy_gradient_in_numba_is_finite():
    p = 1 / (1 + T.exp(-z))
    cost = (-y * T.log(p) - (1 - y) * T.log(1 - p)).mean()
    fn = symlab.function([z, y], [cost, symlab.grad(cost, z)], mode="NUMBA")
    value, gradient = fn(EXTREMES, LABELS)
    n = len(EXTREMES)
    np.testing.assert_allclose(value, np.mean(LABELS * softplus(-EXTREMES) + (1 - LABELS) * softplus(EXTREMES)),
                               rtol=1e-14)
    exact = ((1 - LABELS) * stable_sigmoid(EXTREMES) - LABELS * stable_sigmoid(-EXTREMES)) / n  # no 1 - p
    np.testing.assert_allclose(gradient, exact, rtol=1e-12, atol=1e-300)


# -- the rule table -----------------------------------------------------------------------------------------


def test_rules_are_registered_described_and_safe():
    own = ("sigmoid_from_quotient", "sigmoid_distribute", "sigmoid_factor_sum", *(row[0] for row in logistic.ROWS))
    for name in (*own, *logistic.STABILIZE_ROWS):
        entry = default_db[name]
        assert entry.phase == "stabilize" and "logistic" in entry.tags and "unsafe" not in entry.tags, name
        assert "optional" not in entry.tags and name in {e.name for p in default_db.query() for e in p.entries}
    for name in ("sigmoid_from_quotient", "sigmoid_distribute", "sigmoid_factor_sum"):
        rule = default_db[name].rewriter
        assert rule.describe() == rule.__doc__.strip().splitlines()[0]
        path, _ = rule.location
        assert path.endswith("logistic.py")
    for name in own:
        assert f"``{name}``" in logistic.__doc__ or f"``{name[:-len('_swapped')]}``" in logistic.__doc__, name


def test_the_rules_are_recorded_in_the_trace_and_replay():
    p = 1 / (1 + T.exp(-z))
    cost = (-y * T.log(p) - (1 - y) * T.log(1 - p)).sum()
    _, trace = rewrite_graph(symlab.grad(cost, z), exclude=STABILIZE_ONLY)
    steps = [s for s in trace if s.rule in ("sigmoid_from_quotient", "sigmoid_distribute")]
    assert steps and all(s.phase == "stabilize" and s.accepted for s in steps)
    assert {s.rule for s in steps} == {"sigmoid_from_quotient", "sigmoid_distribute"}
    final = trace.graph_at(len(trace))
    assert scalar_ops(final) == scalar_ops(trace.fgraph) and "true_div" not in scalar_ops(final)


# -- PyTensor's tutorial: "A Real Example: Logistic Regression" -----------------------------------------------


def tutorial_logistic_regression(training_steps):
    """doc/tutorial/examples.rst of PyTensor as written, ``pytensor`` renamed (prints left out, values returned)."""
    import numpy as np

    import symlab as pytensor
    import symlab.tensor as pt

    rng = np.random.default_rng(2882)

    N = 400                                   # training sample size
    feats = 784                               # number of input variables

    # generate a dataset: D = (input_values, target_class)
    D = (rng.standard_normal((N, feats)), rng.integers(size=N, low=0, high=2))

    # Declare PyTensor symbolic variables
    x = pt.dmatrix("x")
    y = pt.dvector("y")

    w = pytensor.shared(rng.standard_normal(feats), name="w")

    # initialize the bias term
    b = pytensor.shared(0., name="b")
    initial_w = w.get_value()

    # Construct PyTensor expression graph
    p_1 = 1 / (1 + pt.exp(-pt.dot(x, w) - b))       # Probability that target = 1
    prediction = p_1 > 0.5                          # The prediction thresholded
    xent = -y * pt.log(p_1) - (1-y) * pt.log(1-p_1) # Cross-entropy loss function
    cost = xent.mean() + 0.01 * (w ** 2).sum()      # The cost to minimize
    gw, gb = pt.grad(cost, [w, b])                  # Compute the gradient of the cost

    # Compile
    train = pytensor.function(
              inputs=[x,y],
              outputs=[prediction, xent],
              updates=((w, w - 0.1 * gw), (b, b - 0.1 * gb)))
    predict = pytensor.function(inputs=[x], outputs=prediction)

    # Train
    for i in range(training_steps):  # noqa: B007 (the tutorial's loop, as written)
        pred, err = train(D[0], D[1])

    return D, initial_w, w, b, err, predict(D[0]), train


def numpy_logistic_regression(D, w, training_steps):
    """The same gradient descent in NumPy, with a stable sigmoid: dcost/dz = (sigmoid(z) - y) / N."""
    x, y = D[0], D[1].astype(float)
    b = 0.0
    for _ in range(training_steps):
        z = x @ w + b
        dz = (stable_sigmoid(z) - y) / len(y)
        w, b = w - 0.1 * (x.T @ dz + 0.02 * w), b - 0.1 * dz.sum()
    z = x @ w + b
    return w, b, y * softplus(-z) + (1 - y) * softplus(z)


MODES = {
    "NUMPY": ("NUMPY", 25),
    "NUMBA": ("NUMBA", 25),
    "FAST_COMPILE": ("FAST_COMPILE", 25),  # the logistic rules are fast_compile rules too
    # every check, the rewrites' included: DebugMode judges a stabilization against the graph as written computed
    # in extended precision, not against the digits it loses (log(1 - p) near p = 1)
    "DEBUG": ("DEBUG", 2),
}


@pytest.mark.parametrize("name", sorted(MODES))
def test_tutorial_logistic_regression_trains_to_the_numpy_weights(name):
    mode, steps = MODES[name]
    with symlab.config.change_flags(mode=mode):
        D, w0, w, b, err, prediction, train = tutorial_logistic_regression(steps)
    w, b = w.get_value(), b.get_value()
    want_w, want_b, _ = numpy_logistic_regression(D, w0, steps)
    assert np.isfinite(w).all() and np.isfinite(b)
    np.testing.assert_allclose(w, want_w, rtol=0, atol=1e-9)
    assert abs(b - want_b) < 1e-9
    assert np.isfinite(err).all()
    _, _, want_err = numpy_logistic_regression(D, w0, steps - 1)  # err is the loss before the last update
    np.testing.assert_allclose(err, want_err, rtol=1e-9, atol=1e-12)
    assert prediction.dtype == bool and prediction.shape == (400,)


def test_tutorial_logistic_regression_in_the_default_tiered_mode(monkeypatch):
    """Calls served by the NumPy tier while Numba compiles, then by the machine code: the same weights."""
    monkeypatch.setattr(symlab.config, "background_compile", True)
    D, w0, w, b, err, prediction, train = tutorial_logistic_regression(10)
    train.wait()
    for _ in range(10):
        train(D[0], D[1])
    assert train.tier == "machine code"
    want_w, want_b, _ = numpy_logistic_regression(D, w0, 20)
    np.testing.assert_allclose(w.get_value(), want_w, rtol=0, atol=1e-9)
    assert abs(b.get_value() - want_b) < 1e-9


def test_tutorial_graph_shows_the_sigmoid_and_softplus():
    """The rewritten graph of the training step, printed by debugprint: sigmoid and softplus, no division by p."""
    mode = get_mode("NUMPY").excluding("softplus_expanded", "sigmoid_expanded", "fusion")
    with symlab.config.change_flags(mode=mode):
        *_, train = tutorial_logistic_regression(1)
    text = symlab.dprint(train, file="str")
    assert "Elemwise{sigmoid" in text and "Elemwise{softplus" in text and "Elemwise{exp" not in text
    divisions = [n for n in train.maker.fgraph.toposort() if str(getattr(n.op, "scalar_op", "")) == "true_div"]
    assert all(n.inputs[1].owner is None or "Cast" in str(n.inputs[1].owner.op) for n in divisions), text


def test_tutorial_in_debug_mode_keeps_the_stabilizations_the_strict_comparison_would_blame():
    """The graph as written loses digits of the tutorial's loss (log(1 - p_1) near p_1 = 1, -inf past it) and
    its gradient is NaN: DebugMode's default checks accept the stabilized step and its values are NumPy's."""
    from symlab.compile.bad_rewrite import run_all

    with symlab.config.change_flags(mode="DEBUG"):
        D, w0, w, b, err, prediction, train = tutorial_logistic_regression(1)
    assert {"sigmoid_from_quotient", "log_one_minus_sigmoid"} <= applied(train.trace)
    start = train.trace.start
    with np.errstate(all="ignore"):
        as_written = run_all(start, [D[0], D[1].astype(float), w0, np.array(0.0)])  # inputs x, y, w, b
    xent_as_written = as_written[start.outputs[1]]
    _, _, want_err = numpy_logistic_regression(D, w0, 0)
    assert not np.allclose(xent_as_written, want_err, rtol=1e-7, atol=1e-9)  # the digits the strict check used
    assert not np.isfinite(as_written[start.outputs[2]]).any()  # the new weights: NaN
    np.testing.assert_allclose(err, want_err, rtol=1e-12, atol=1e-14)
    want_w, want_b, _ = numpy_logistic_regression(D, w0, 1)
    np.testing.assert_allclose(w.get_value(), want_w, rtol=0, atol=1e-12)
