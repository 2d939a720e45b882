"""Every op family compiled in every mode, checked against NumPy."""

import numpy as np
import pytest
from oracle import GRAPH_REFERENCE, UNOPTIMIZED, assert_same_results, inputs_unchanged

import symlab
import symlab.tensor as st
from symlab.compile.nanguard import NanGuardError

MODES = ["NUMPY", "FAST_COMPILE", "NUMBA", "DEBUG", "NanGuard"]

rng = np.random.default_rng(42)
VALUES = {
    "x": rng.normal(size=(3, 4)),
    "y": rng.normal(size=(3, 4)),
    "v": rng.normal(size=4),
    "i": np.array([2, 0, 1], dtype="int64"),
    "p": rng.uniform(0.5, 2.0, size=(3, 4)),
    "w": rng.normal(size=4),
}


def _corpus():
    x, y, p = st.dmatrix("x"), st.dmatrix("y"), st.dmatrix("p")
    v = st.dvector("v")
    i = st.lvector("i")

    def softmax(a):
        e = np.exp(a - a.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    return {
        "elemwise_arith": ([x, y], x * 2.0 + y ** 2 - x / (1.0 + y * y), lambda x, y: x * 2 + y**2 - x / (1 + y * y)),
        "elemwise_unary": ([x], st.exp(x) + st.tanh(x) - abs(x), lambda x: np.exp(x) + np.tanh(x) - abs(x)),
        "elemwise_log": ([p], st.log(p) * st.sqrt(p), lambda p: np.log(p) * np.sqrt(p)),
        "elemwise_broadcast": ([x, v], x + v, lambda x, v: x + v),
        "elemwise_compare": ([x, y], st.switch(x > y, x, y), lambda x, y: np.where(x > y, x, y)),
        "sum_all": ([x], x.sum(), lambda x: x.sum()),
        "sum_axis": ([x], x.sum(axis=0) + x.max(axis=1).sum(), lambda x: x.sum(0) + x.max(1).sum()),
        "mean_var": ([x], x.mean(axis=1) + x.var(axis=1), lambda x: x.mean(1) + x.var(1)),
        "prod_min": ([p], p.prod(axis=0) - p.min(axis=0), lambda p: p.prod(0) - p.min(0)),
        "argmax": ([x], st.argmax(x, axis=1), lambda x: np.argmax(x, axis=1)),
        "dot_mv": ([x, v], st.dot(x, v), lambda x, v: x @ v),
        "dot_mm": ([x, y], st.dot(x, y.T), lambda x, y: x @ y.T),
        "matmul": ([x, y], x.T @ y, lambda x, y: x.T @ y),
        "outer": ([v], st.outer(v, v), lambda v: np.outer(v, v)),
        "slice": ([x], x[1:, ::2] * 2.0, lambda x: x[1:, ::2] * 2),
        "index_int": ([x], x[0] + x[:, 1].sum(), lambda x: x[0] + x[:, 1].sum()),
        "index_advanced": ([x, i], x[i], lambda x, i: x[i]),
        "softmax": ([x], st.softmax(x, axis=-1), softmax),
        "log_softmax": ([x], st.log_softmax(x, axis=-1), lambda x: np.log(softmax(x))),
        "reshape": ([x], x.reshape((4, 3)).T + 1.0, lambda x: x.reshape(4, 3).T + 1),
        "flatten": ([x], st.flatten(x) * 3.0, lambda x: x.ravel() * 3),
        "join": ([x, y], st.concatenate([x, y], axis=0) * 3.0, lambda x, y: np.concatenate([x, y]) * 3),
        "stack": ([x, y], st.stack([x, y], axis=1), lambda x, y: np.stack([x, y], axis=1)),
        "transpose_view": ([x], x.T, lambda x: x.T),
        "identity": ([x], x, lambda x: x),
        "shape": ([x], x.shape[0] * x.shape[1], lambda x: np.int64(x.shape[0] * x.shape[1])),
        "several_outputs": ([x], [x.sum(), x * 2.0, x.T], lambda x: [x.sum(), x * 2, x.T]),
    }


CORPUS = _corpus()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", sorted(CORPUS))
def test_corpus_against_numpy(case, mode):
    inputs, outputs, reference = CORPUS[case]
    args = [VALUES[v.name] for v in inputs]
    f = symlab.function(inputs, outputs, mode=mode)
    with inputs_unchanged(args):  # protected inputs are never modified
        got = f(*args)
        expected = reference(*args)
    assert_same_results(got, expected, GRAPH_REFERENCE)
    if not isinstance(outputs, list):
        assert np.asarray(got).dtype == outputs.dtype
    # a second call gives the same result (no state leaks between calls)
    assert_same_results(f(*args), got)


@pytest.mark.parametrize("mode", MODES)
def test_returned_arrays_are_the_callers_own(mode):
    x = st.dmatrix("x")
    f = symlab.function([x], [x, x.T, x * 2.0, x * 2.0], mode=mode)
    value = np.ones((2, 3))
    a, t, m1, m2 = f(value)
    assert not np.shares_memory(a, value) and not np.shares_memory(t, value)
    assert not np.shares_memory(m1, m2)
    a[...] = 5.0  # the caller may write into what it received
    np.testing.assert_array_equal(value, np.ones((2, 3)))


# -- optimized against unoptimized, with NaN and inf among the inputs ----------------------------------------
#
# Every mode's rewrites must keep the values of the unoptimized graph, NaN and inf in the same places. The
# rules documented as assuming finite inputs (symlab/rewriting/rules/__init__.py: the seed's ``x*y/y -> x``,
# ``x - x -> 0``, the cancellation of terms of the algebra canonicalizer) give the mathematically expected
# value where the unoptimized graph gives NaN (``inf - inf``, ``0/0``): the cases below contain none of
# their patterns; those rules are checked on finite inputs (the corpus above, tests/rewriting/).


def _with_nan_and_inf(value):
    if value.dtype.kind != "f":
        return value
    value = value.copy()
    flat = value.reshape(-1)
    flat[[0, 1 % flat.size, 2 % flat.size]] = [np.nan, np.inf, -np.inf]
    return value


SPECIAL_VALUES = {name: _with_nan_and_inf(value) for name, value in VALUES.items()}


def _differential_corpus():
    x, y, p = st.dmatrix("x"), st.dmatrix("y"), st.dmatrix("p")
    v = st.dvector("v")
    w = st.dvector("w")
    cases = {name: (inputs, outputs) for name, (inputs, outputs, _) in CORPUS.items()}
    cases.update({
        "grad_tanh": ([x], symlab.grad(st.tanh(x).sum(), x)),
        "grad_square": ([x], symlab.grad(((2.0 * x) ** 2).sum(), x)),
        "grad_exp_log": ([p], symlab.grad((st.exp(p) + st.log(p)).sum(), p)),
        "grad_sigmoid": ([x], symlab.grad(st.sigmoid(x).sum(), x)),
        "grad_sum_matrix": ([x], symlab.grad(x.sum(), x)),
        "grad_mean_broadcast": ([x, v], symlab.grad((x * v).mean(), [x, v])),
        "squared_error": ([x, y, w], symlab.grad(((st.dot(x, w) - y.sum(axis=1)) ** 2).sum(), w)),
        "log1p_expm1": ([x], st.log(1.0 + x) + (st.exp(x) - 1.0)),
        "log_sigmoid": ([x], st.log(st.sigmoid(x)) + st.log(1.0 - st.sigmoid(x))),
        "logsumexp": ([x], st.log(st.exp(x).sum(axis=1))),
        "softmax_primitives": ([x], st.exp(x) / st.exp(x).sum(axis=1, keepdims=True)),
        "powers": ([p], p ** 2 + p ** 0.5 + p ** -1 + p ** 1),
        "neutral_constants": ([x], -(-x) * 1.0 + 0.0 - 0.0),  # noqa: B002
        "fill_broadcast": ([x, v], st.second(x, 1.0) * v + st.second(v, 2.0)),
    })
    return cases


DIFFERENTIAL = _differential_corpus()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", sorted(DIFFERENTIAL))
def test_optimized_equals_unoptimized_with_nan_and_inf(case, mode):
    inputs, outputs = DIFFERENTIAL[case]
    args = [SPECIAL_VALUES[v.name] for v in inputs]
    expected = symlab.function(inputs, outputs, mode=UNOPTIMIZED)(*args)
    f = symlab.function(inputs, outputs, mode=mode)
    if mode == "NanGuard":
        try:
            got = f(*args)
        except NanGuardError:
            return  # the mode's purpose: stop at the first NaN or inf
    else:
        got = f(*args)
    single = not isinstance(outputs, list)
    assert_same_results([got] if single else got, [expected] if single else expected, GRAPH_REFERENCE)
