"""softmax, log_softmax, logsumexp."""

import warnings
from functools import partial

import numpy as np
import pytest
from helpers import random_value
from oracle import FORMULA_REFERENCE, check_against_numpy

import symlab.tensor as st
from symlab.gradient import verify_grad
from symlab.tensor.special import LogSoftmax, Softmax

RNG = np.random.default_rng(3)
#: Test values of a shape and dtype (``helpers.random_value``) drawn from ``RNG``.
_value = partial(random_value, RNG, scale=3.0)


def _real(x):
    """Integers as float64 (as symlab computes them), floats as they are."""
    return x.astype("float64") if x.dtype.kind in "iu" else x


def np_softmax(x, axis=-1):
    x = _real(x)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def np_log_softmax(x, axis=-1):
    x = _real(x)
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def np_logsumexp(x, axis=None, keepdims=False):
    x = _real(x)
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


SHAPES_AXES = [((5,), -1), ((5,), 0), ((3, 4), -1), ((3, 4), 0), ((2, 3, 4), 1), ((2, 3, 4), -3), ((3, 4), None),
               ((1, 4), 0)]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("shape,axis", SHAPES_AXES)
def test_softmax_matches_numpy(dtype, shape, axis):
    _, got = check_against_numpy(st.softmax, np_softmax, [_value(shape, dtype)], FORMULA_REFERENCE, axis=axis)
    np.testing.assert_allclose(got.sum(axis=axis), 1.0, rtol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("shape,axis", SHAPES_AXES)
def test_log_softmax_matches_numpy(dtype, shape, axis):
    check_against_numpy(st.log_softmax, np_log_softmax, [_value(shape, dtype)], FORMULA_REFERENCE, axis=axis)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("shape,axis", [((), None), ((5,), None), ((5,), 0), ((3, 4), -1), ((3, 4), (0, 1)),
                                        ((2, 3, 4), (0, 2)), ((2, 3, 4), ())])
@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp_matches_numpy(dtype, shape, axis, keepdims):
    check_against_numpy(st.logsumexp, np_logsumexp, [_value(shape, dtype)], FORMULA_REFERENCE, axis=axis,
                        keepdims=keepdims)


def test_large_and_infinite_inputs():
    x = st.dmatrix("x")
    value = np.array([[1000.0, 1000.0, -1000.0], [-np.inf, 0.0, -np.inf], [-np.inf, -np.inf, -np.inf]])
    sm = st.softmax(x).eval({x: value})
    np.testing.assert_allclose(sm[:2], [[0.5, 0.5, 0.0], [0.0, 1.0, 0.0]])
    assert np.isnan(sm[2]).all()  # 0 / 0, like scipy.special.softmax
    lsm = st.log_softmax(x).eval({x: value})
    np.testing.assert_allclose(lsm[:2], [[-np.log(2), -np.log(2), -2000 - np.log(2)], [-np.inf, 0.0, -np.inf]])
    lse = st.logsumexp(x, axis=1).eval({x: value})
    np.testing.assert_allclose(lse, [1000 + np.log(2), 0.0, -np.inf])


def test_empty_input():
    x = st.dmatrix("x")
    assert st.softmax(x).eval({x: np.zeros((0, 3))}).shape == (0, 3)
    assert st.log_softmax(x, axis=0).eval({x: np.zeros((0, 3))}).shape == (0, 3)


def test_zero_dim_input():
    x = st.dscalar("x")
    assert float(st.softmax(x, axis=None).eval({x: 3.0})) == 1.0
    assert float(st.log_softmax(x, axis=None).eval({x: 3.0})) == 0.0
    assert float(st.logsumexp(x).eval({x: 3.0})) == 3.0


def test_static_shapes_and_str():
    x = st.tensor("float32", shape=(2, None, 4))
    assert st.softmax(x).type == x.type
    assert st.log_softmax(x, axis=0).type == x.type
    assert st.logsumexp(x, axis=1).type == st.TensorType("float32", (2, 4))
    assert st.logsumexp(x, axis=(0, 2), keepdims=True).type.shape == (1, None, 1)
    assert st.softmax(st.imatrix()).dtype == "float64"
    assert str(st.softmax(x, axis=-2).owner.op) == "Softmax{axis=1}"
    assert str(st.log_softmax(x).owner.op) == "LogSoftmax{axis=2}"
    assert Softmax(1) == Softmax(1) and Softmax(1) != LogSoftmax(1) and Softmax(0) != Softmax(1)


def test_errors():
    x = st.dmatrix("x")
    with pytest.raises(ValueError, match="softmax: axis 2 is out of range for a tensor of 2 dimensions"):
        st.softmax(x, axis=2)
    with pytest.raises(ValueError, match="log_softmax: axis -3 is out of range"):
        st.log_softmax(x, axis=-3)
    with pytest.raises(ValueError, match="logsumexp: axis 5 is out of range"):
        st.logsumexp(x, axis=5)
    with pytest.raises(TypeError, match=r"softmax: unsupported dtype complex128 .*expected a real number dtype"):
        st.softmax(st.zmatrix("z"))
    with pytest.raises(TypeError, match=r"Softmax\{axis=0\}: expects a floating tensor, received .*int32"):
        Softmax(0)(st.ivector())
    with pytest.raises(ValueError, match=r"LogSoftmax\{axis=2\}: axis 2 is out of range"):
        LogSoftmax(2)(x)


@pytest.mark.parametrize("op", [Softmax(1), LogSoftmax(0), Softmax(None)])
def test_infer_shape(op):
    x = st.dmatrix("x")
    value = _value((3, 4))
    node = op(x).owner
    (shape,) = op.infer_shape(None, node, [tuple(st.constant(d, dtype="int64") for d in value.shape)])
    assert tuple(int(s.eval({})) for s in shape) == node.outputs[0].eval({x: value}).shape


@pytest.mark.parametrize("shape,axis", [((5,), -1), ((3, 4), 0), ((3, 4), 1), ((2, 3, 4), 1), ((3, 4), None)])
def test_softmax_grads(shape, axis):
    value = _value(shape) / 3
    verify_grad(lambda x: st.softmax(x, axis=axis), [value], rng=np.random.default_rng(0))
    verify_grad(lambda x: st.log_softmax(x, axis=axis), [value], rng=np.random.default_rng(0))


@pytest.mark.parametrize("shape,axis,keepdims", [((5,), None, False), ((3, 4), 1, False), ((3, 4), 0, True),
                                                 ((2, 3, 4), (0, 2), False)])
def test_logsumexp_grad(shape, axis, keepdims):
    verify_grad(lambda x: st.logsumexp(x, axis=axis, keepdims=keepdims), [_value(shape) / 3],
                rng=np.random.default_rng(0))


def test_softmax_grad_float32():
    verify_grad(lambda x: st.softmax(x), [_value((3, 4), "float32") / 3], rng=np.random.default_rng(0))


def test_logsumexp_grad_with_ties():
    # the maximum is shared: its gradient terms cancel exactly
    verify_grad(lambda x: st.logsumexp(x, axis=1), [np.array([[1.0, 1.0, 0.5], [2.0, 2.0, 2.0]])],
                rng=np.random.default_rng(0))


@pytest.mark.numba
def test_logsumexp_of_an_empty_input_is_minus_inf_in_every_mode():
    """log(sum(exp(x))) over nothing is log(0) = -inf, in st.logsumexp and in the stabilized rewrite of the
    expression (both subtract a maximum, which starts from -inf instead of raising on an empty input)."""
    import symlab

    x = st.dmatrix("x")
    outs = [st.logsumexp(x), st.logsumexp(x, axis=1), st.log(st.exp(x).sum(axis=0)), st.log(st.exp(x).sum())]
    for mode in ("NUMPY", "NUMBA"):
        f = symlab.function([x], outs, mode=mode)
        assert "logsumexp_stable" in {s.rule for s in f.trace.accepted}
        for value in (np.zeros((3, 0)), np.zeros((0, 2))):
            with np.errstate(divide="ignore"):
                expected = [np.log(np.exp(value).sum(axis=a)) for a in (None, 1, 0, None)]
            for got, want in zip(f(value), expected):
                assert got.shape == want.shape and np.all(got == want), (mode, value.shape, got, want)
        big = np.array([[1000.0, 1000.0], [-1000.0, 0.0], [-np.inf, -np.inf]])
        total, rows, columns, _ = f(big)
        np.testing.assert_allclose(rows, [1000.0 + np.log(2.0), np.log1p(np.exp(-1000.0)), -np.inf])
        assert np.isfinite(total) and np.all(np.isfinite(columns))
