"""Theano's ``tensor.nnet`` namespace: reachable as ``T.nnet``, each function with Theano's meaning.

Values against NumPy, gradients against finite differences (``verify_grad``), the compiled forms in the
NUMPY and NUMBA modes (one Numba compile for all of them), and bad inputs with clear messages.
"""

import subprocess
import sys

import numpy as np
import pytest

import symlab
import symlab.tensor as T
from symlab.gradient import verify_grad

RNG = np.random.default_rng(29)


def np_sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def np_softplus(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def np_softmax_rows(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def np_ultra_fast_sigmoid(x):
    a = np.abs(0.5 * x)
    t = np.where(a < 1.7, 1.5 * a / (1 + a), np.where(a < 3, 0.935409070603099 + 0.0458812946797165 * (a - 1.7),
                                                      0.99505475368673))
    return 0.5 * (np.sign(x) * t + 1)


# -- the namespace ------------------------------------------------------------------------------------------


def test_nnet_is_reachable_the_ways_theano_users_write_it():
    import symlab.tensor.nnet
    from symlab.tensor import nnet
    from symlab.tensor.nnet import conv

    assert T.nnet is nnet is symlab.tensor.nnet
    assert T.nnet.conv2d is conv.conv2d
    assert T.signal is sys.modules["symlab.tensor.signal"]
    assert T.nnet.sigmoid is T.sigmoid and T.nnet.softplus is T.softplus
    names = {}
    exec("from symlab.tensor import *", names)
    assert "nnet" not in names and "signal" not in names and "softmax" in names
    with pytest.raises(AttributeError, match="has no attribute 'nnett'"):
        T.nnett  # noqa: B018


def test_import_symlab_does_not_load_nnet():
    code = ("import sys, symlab, symlab.tensor as T; T.dvector('x'); "
            "print([m for m in ('symlab.tensor.nnet', 'symlab.tensor.signal', 'numba') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


# -- values --------------------------------------------------------------------------------------------------


def test_softmax_is_theanos_row_softmax():
    v, m = T.dvector("v"), T.dmatrix("m")
    sv, sm = T.nnet.softmax(v), T.nnet.softmax(m)
    assert sv.type.shape == (1, None) and sv.ndim == 2 and sm.ndim == 2  # a vector gives a 1 x n row
    xv, xm = RNG.standard_normal(5), RNG.standard_normal((3, 4)) * 300
    np.testing.assert_allclose(sv.eval({v: xv}), np_softmax_rows(xv)[None, :], rtol=1e-14)
    np.testing.assert_allclose(sm.eval({m: xm}), np_softmax_rows(xm), rtol=1e-13, atol=1e-300)
    assert T.nnet.softmax(T.ivector("i")).dtype == "float64"
    assert T.nnet.softmax(T.fmatrix("f")).dtype == "float32"
    assert T.softmax(m, axis=0).owner.op.axis == 0  # symlab.tensor.softmax keeps PyTensor's axis form


def test_relu_with_and_without_a_leak():
    x, alpha = T.dvector("x"), T.dscalar("alpha")
    values = np.array([-3.0, -0.5, 0.0, 0.5, 3.0])
    np.testing.assert_array_equal(T.nnet.relu(x).eval({x: values}), np.maximum(values, 0))
    np.testing.assert_allclose(T.nnet.relu(x, 0.1).eval({x: values}), np.where(values > 0, values, 0.1 * values),
                               rtol=1e-15)
    leak = T.nnet.relu(x, alpha).eval({x: values, alpha: 0.3})
    np.testing.assert_allclose(leak, np.where(values > 0, values, 0.3 * values), rtol=1e-15, atol=1e-16)
    assert T.nnet.relu(T.fvector("f")).dtype == "float32"
    g = symlab.grad(T.nnet.relu(x).sum(), x).eval({x: values})
    np.testing.assert_array_equal(g, [0.0, 0.0, 0.5, 1.0, 1.0])  # Theano's 0.5 * (x + |x|): 1/2 at 0


def test_hard_and_ultra_fast_sigmoid():
    x = T.dvector("x")
    values = np.linspace(-12.0, 12.0, 97)
    np.testing.assert_allclose(T.nnet.hard_sigmoid(x).eval({x: values}), np.clip(0.2 * values + 0.5, 0, 1),
                               rtol=1e-15, atol=1e-16)
    fast = T.nnet.ultra_fast_sigmoid(x).eval({x: values})
    np.testing.assert_allclose(fast, np_ultra_fast_sigmoid(values), rtol=1e-15)
    assert np.abs(fast - np_sigmoid(values)).max() < 0.028
    assert np.all(np.diff(fast) >= 0) and fast[48] == 0.5


def test_binary_crossentropy_values_and_its_sigmoid_form():
    p, t, o = T.dvector("p"), T.dvector("t"), T.dvector("o")
    pv, tv = np.array([0.1, 0.5, 0.9, 0.99]), np.array([0.0, 1.0, 1.0, 0.3])
    want = -(tv * np.log(pv) + (1 - tv) * np.log(1 - pv))
    np.testing.assert_allclose(T.nnet.binary_crossentropy(p, t).eval({p: pv, t: tv}), want, rtol=1e-14)
    ov = np.array([-1000.0, -2.0, 0.0, 3.0, 1000.0])
    tv = np.array([1.0, 0.0, 0.5, 1.0, 0.0])
    got = T.nnet.sigmoid_binary_crossentropy(o, t).eval({o: ov, t: tv})
    np.testing.assert_allclose(got, tv * np_softplus(-ov) + (1 - tv) * np_softplus(ov), rtol=1e-15)
    middle = slice(1, 4)  # where the sigmoid is not 0 or 1 in floating point
    s = np_sigmoid(ov[middle])
    np.testing.assert_allclose(got[middle], -(tv[middle] * np.log(s) + (1 - tv[middle]) * np.log(1 - s)), rtol=1e-14)
    g = symlab.grad(T.nnet.sigmoid_binary_crossentropy(o, t).sum(), o).eval({o: ov, t: tv})
    np.testing.assert_allclose(g, np_sigmoid(ov) - tv, rtol=1e-14, atol=1e-300)


def test_categorical_crossentropy_with_distributions_and_labels():
    p, onehot, labels = T.dmatrix("p"), T.dmatrix("onehot"), T.ivector("labels")
    probs = np_softmax_rows(RNG.standard_normal((4, 3)))
    lv = np.array([2, 0, 1, 1], dtype="int32")
    want = -np.log(probs[np.arange(4), lv])
    np.testing.assert_allclose(T.nnet.categorical_crossentropy(p, labels).eval({p: probs, labels: lv}), want,
                               rtol=1e-14)
    np.testing.assert_allclose(T.nnet.categorical_crossentropy(p, onehot).eval({p: probs, onehot: np.eye(3)[lv]}),
                               want, rtol=1e-14)
    soft = np.full((4, 3), 1 / 3)
    np.testing.assert_allclose(T.nnet.categorical_crossentropy(p, onehot).eval({p: probs, onehot: soft}),
                               -(soft * np.log(probs)).sum(axis=1), rtol=1e-14)
    probs[0, 0] = 0.0  # a zero probability away from the label: finite loss and gradient (only labels are read)
    g = symlab.grad(T.nnet.categorical_crossentropy(p, labels).sum(), p).eval({p: probs, labels: lv})
    assert np.isfinite(g).all() and g[0, 0] == 0.0 and g[0, 2] == -1 / probs[0, 2]


# -- gradients -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["softmax vector", "softmax matrix", "relu", "leaky relu", "hard_sigmoid",
                                  "ultra_fast_sigmoid", "binary_crossentropy", "sigmoid_binary_crossentropy",
                                  "categorical labels", "categorical distributions", "softplus", "sigmoid"])
def test_gradients_against_finite_differences(name):
    target = np.array([0.0, 1.0, 0.3, 1.0, 0.0])
    labels = np.array([1, 0, 2], dtype="int32")
    away_from_kinks = np.array([-7.3, -4.1, -1.2, 0.4, 2.9])  # no kink of relu, hard or ultra fast sigmoid
    cases = {
        "softmax vector": (lambda v: T.nnet.softmax(v), [RNG.standard_normal(5)]),
        "softmax matrix": (lambda m: T.nnet.softmax(m), [RNG.standard_normal((3, 4))]),
        "relu": (lambda v: T.nnet.relu(v), [away_from_kinks]),
        "leaky relu": (lambda v, a: T.nnet.relu(v, a), [away_from_kinks, np.array(0.2)]),
        "hard_sigmoid": (lambda v: T.nnet.hard_sigmoid(v), [away_from_kinks]),
        "ultra_fast_sigmoid": (lambda v: T.nnet.ultra_fast_sigmoid(v), [away_from_kinks]),
        "binary_crossentropy": (lambda p: T.nnet.binary_crossentropy(p, target), [np.array([0.2, 0.6, 0.5, 0.9, 0.1])]),
        "sigmoid_binary_crossentropy": (lambda o, t: T.nnet.sigmoid_binary_crossentropy(o, t),
                                        [away_from_kinks, target]),
        "categorical labels": (lambda m: T.nnet.categorical_crossentropy(T.nnet.softmax(m), labels),
                               [RNG.standard_normal((3, 4))]),
        "categorical distributions": (lambda m, q: T.nnet.categorical_crossentropy(T.nnet.softmax(m), q),
                                      [RNG.standard_normal((3, 4)), np_softmax_rows(RNG.standard_normal((3, 4)))]),
        "softplus": (lambda v: T.nnet.softplus(v), [away_from_kinks]),
        "sigmoid": (lambda v: T.nnet.sigmoid(v), [away_from_kinks]),
    }
    fn, point = cases[name]
    verify_grad(fn, point, rng=np.random.default_rng(3))


# -- compiled ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["NUMPY", "NUMBA"])
def test_compiled_forms_agree_with_numpy(mode):
    x, m, t, lab = T.dvector("x"), T.dmatrix("m"), T.dvector("t"), T.ivector("lab")
    z = np.array([-1000.0, -40.0, -1.5, 0.0, 0.7, 40.0, 1000.0])
    tv = np.array([1.0, 0.0, 1.0, 0.5, 0.0, 1.0, 0.0])
    mv = np.array([[1000.0, 0.0, -1000.0], [1.0, 2.0, 3.0]])
    lv = np.array([0, 2], dtype="int32")
    xent = T.nnet.binary_crossentropy(T.nnet.sigmoid(x), t)
    outs = [
        T.nnet.softmax(x), T.nnet.softmax(m), T.nnet.relu(x), T.nnet.relu(x, 0.25), T.nnet.hard_sigmoid(x),
        T.nnet.ultra_fast_sigmoid(x), T.nnet.softplus(x), xent, symlab.grad(xent.sum(), x),
        T.nnet.categorical_crossentropy(T.nnet.softmax(m), lab),
    ]
    got = symlab.function([x, m, t, lab], outs, mode=mode)(z, mv, tv, lv)
    want = [
        np_softmax_rows(z)[None, :], np_softmax_rows(mv), np.maximum(z, 0), np.where(z > 0, z, 0.25 * z),
        np.clip(0.2 * z + 0.5, 0, 1), np_ultra_fast_sigmoid(z), np_softplus(z),
        tv * np_softplus(-z) + (1 - tv) * np_softplus(z), (1 - tv) * np_sigmoid(z) - tv * np_sigmoid(-z),
        -np.log(np_softmax_rows(mv)[np.arange(2), lv]),
    ]
    for k, (a, b) in enumerate(zip(got, want)):
        assert a.shape == b.shape, k
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-300, err_msg=f"output {k}")


# -- bad inputs --------------------------------------------------------------------------------------------------


def test_bad_inputs_say_what_was_expected_and_received():
    x = T.dvector("x")
    with pytest.raises(ValueError, match=r"nnet.softmax: c must be a vector or a matrix .* received t .*3 dimensions"):
        T.nnet.softmax(T.dtensor3("t"))
    with pytest.raises(ValueError, match="received s .*0 dimensions"):
        T.nnet.softmax(T.dscalar("s"))
    with pytest.raises(TypeError, match=r"nnet.softmax: c must be a tensor or an array-like of numbers, received 'a'"):
        T.nnet.softmax("a")
    with pytest.raises(TypeError, match=r"nnet.relu: alpha must be a tensor or an array-like of numbers, received 'leak'"):
        T.nnet.relu(x, "leak")
    with pytest.raises(TypeError, match=r"nnet.hard_sigmoid: x must have a real dtype, received c"):
        T.nnet.hard_sigmoid(T.cvector("c"))
    with pytest.raises(TypeError, match=r"nnet.binary_crossentropy: target must be real"):
        T.nnet.binary_crossentropy(x, T.cvector("c"))
    p = T.dmatrix("p")
    with pytest.raises(TypeError, match=r"labels need a matrix coding_dist and an integer vector true_dist, received "
                                        r"coding_dist p .* and true_dist f"):
        T.nnet.categorical_crossentropy(p, T.dvector("f"))
    with pytest.raises(TypeError, match=r"true_dist must have coding_dist's rank \(2, a distribution\) or one less "
                                        r"\(1, labels\), received coding_dist p .* and true_dist s"):
        T.nnet.categorical_crossentropy(p, T.iscalar("s"))
    with pytest.raises(ValueError, match="coding_dist must have at least one dimension"):
        T.nnet.categorical_crossentropy(T.dscalar("q"), T.dscalar("r"))
