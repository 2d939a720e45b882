"""Shared variables and updates: values kept between calls, updates committed only after a full call."""

import numpy as np
import pytest

import symlab
import symlab.tensor as st

MODES = ["NUMPY", "FAST_COMPILE", "NUMBA", "DEBUG", "NanGuard"]


def test_get_and_set_value_copy_unless_borrowed():
    value = np.arange(3.0)
    w = symlab.shared(value, name="w")
    assert w.type == st.TensorType("float64", (None,)) and w.name == "w"
    value[0] = 100.0
    assert w.get_value()[0] == 0.0  # shared() copies
    got = w.get_value()
    got[1] = 50.0
    assert w.get_value()[1] == 1.0  # get_value() copies
    assert w.get_value(borrow=True) is w.get_value(borrow=True)
    new = np.zeros(3)
    w.set_value(new, borrow=True)
    assert w.get_value(borrow=True) is new
    w.set_value(new)
    assert w.get_value(borrow=True) is not new
    w.set_value([1, 2, 3, 4])  # another length: fine; ints convert losslessly
    assert w.get_value().dtype == np.float64 and w.get_value().shape == (4,)


def test_set_value_is_filtered_by_type():
    w = symlab.shared(np.zeros(2, dtype="int32"), name="w")
    with pytest.raises(TypeError, match=r"shared variable w: cannot set a value of dtype float64, ndim 1 and shape \(2,\)"):
        w.set_value(np.array([1.5, 2.0]))
    with pytest.raises(TypeError, match="ndim 2"):
        w.set_value(np.zeros((2, 2), dtype="int32"))
    s = symlab.shared(np.zeros(2), name="s", strict=True)
    with pytest.raises(TypeError, match="strict"):
        s.set_value([1.0, 2.0])
    d = symlab.shared(np.zeros(2, dtype="float32"), allow_downcast=True)
    d.set_value(np.array([1.0, 2.0]))
    assert d.get_value().dtype == np.float32
    with pytest.raises(TypeError, match="symbolic variable"):
        symlab.shared(st.dvector("x"))
    with pytest.raises(TypeError, match="numeric"):
        symlab.shared("abc")


def test_shared_variables_have_tensor_operators():
    w = symlab.shared(np.ones((2, 3)), name="w")
    f = symlab.function([], [w.T, w.sum(axis=0), w[0] * 2.0])
    t, s, r = f()
    assert t.shape == (3, 2) and s.tolist() == [2.0] * 3 and r.tolist() == [2.0] * 3


@pytest.mark.parametrize("mode", MODES)
def test_updates_are_applied_after_the_call(mode):
    counter = symlab.shared(np.int64(0), name="counter")
    acc = symlab.shared(np.zeros(2), name="acc")
    x = st.dvector("x")
    f = symlab.function([x], [acc * 1.0, counter], updates=[(acc, acc + x), (counter, counter + 1)], mode=mode)
    old_acc, old_count = f([1.0, 2.0])
    assert old_acc.tolist() == [0.0, 0.0] and int(old_count) == 0  # outputs see the values before the updates
    assert acc.get_value().tolist() == [1.0, 2.0] and int(counter.get_value()) == 1
    f([1.0, 1.0])
    assert acc.get_value().tolist() == [2.0, 3.0] and int(counter.get_value()) == 2
    acc.set_value([10.0, 10.0])  # the function reads the current value at each call
    assert f([0.0, 0.0])[0].tolist() == [10.0, 10.0]
    swap_a, swap_b = symlab.shared(1.0, "a"), symlab.shared(2.0, "b")
    symlab.function([], [], updates={swap_a: swap_b, swap_b: swap_a}, mode=mode)()
    assert (float(swap_a.get_value()), float(swap_b.get_value())) == (2.0, 1.0)


@pytest.mark.parametrize("mode", MODES)
def test_a_failed_call_leaves_shared_values_and_updates_untouched(mode):
    w = symlab.shared(np.ones(3), name="w")
    n = symlab.shared(np.int64(0), name="n")
    x = st.dvector("x")
    # the update of n is computable even when x has the wrong length; nothing may be stored anyway
    f = symlab.function([x], (w * x).sum(), updates={w: w - 0.1 * x, n: n + 1}, mode=mode)
    stored = w.get_value(borrow=True)
    with pytest.raises(TypeError, match=r"input 0 \('x'\)"):
        f(np.ones((2, 2)))
    with pytest.raises(ValueError):
        f(np.ones(2))  # error inside a node (shape mismatch)
    assert w.get_value(borrow=True) is stored
    np.testing.assert_array_equal(w.get_value(), np.ones(3))
    assert int(n.get_value()) == 0
    f(np.ones(3))
    np.testing.assert_allclose(w.get_value(), np.full(3, 0.9))
    assert int(n.get_value()) == 1


def test_update_values_do_not_alias_outputs_or_inputs():
    w = symlab.shared(np.zeros(2), name="w")
    x = st.dvector("x")
    f = symlab.function([x], w + x, updates={w: w + x})
    out = f(np.ones(2))
    out[0] = 99.0
    assert w.get_value().tolist() == [1.0, 1.0]
    value = np.full(2, 5.0)
    g = symlab.function([x], [], updates={w: x})
    g(value)
    value[0] = -1.0
    assert w.get_value().tolist() == [5.0, 5.0]


@pytest.mark.parametrize("mode", ["NUMBA", "DEBUG"])
def test_sgd_on_logistic_regression_decreases_the_loss(mode):
    rng = np.random.default_rng(0)
    data = rng.normal(size=(80, 3))
    labels = (data @ np.array([1.5, -2.0, 0.5]) + 0.3 > 0).astype("float64")
    w = symlab.shared(np.zeros(3), name="w")
    b = symlab.shared(0.0, name="b")
    X, y = st.dmatrix("X"), st.dvector("y")
    p = 1.0 / (1.0 + st.exp(-(st.dot(X, w) + b)))
    loss = -(y * st.log(p) + (1.0 - y) * st.log(1.0 - p)).mean()
    gw, gb = symlab.grad(loss, [w, b])
    lr = 0.5
    train = symlab.function([X, y], loss, updates=[(w, w - lr * gw), (b, b - lr * gb)], mode=mode)
    predict = symlab.function([X], p > 0.5, mode=mode)
    losses = [float(train(data, labels)) for _ in range(30)]
    assert losses[0] == pytest.approx(np.log(2.0))
    assert all(b < a for a, b in zip(losses, losses[1:]))
    assert losses[-1] < 0.4
    assert (predict(data) == labels.astype(bool)).mean() > 0.9
    assert np.all(w.get_value() != 0.0)


def test_eval_reads_shared_values():
    w = symlab.shared(np.array([1.0, 2.0]), "w")
    np.testing.assert_array_equal((w * 2.0).eval(), [2.0, 4.0])
