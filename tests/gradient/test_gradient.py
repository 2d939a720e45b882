"""symlab.grad and friends: values against finite differences and closed forms, and the errors."""

import numpy as np
import pytest

import symlab
import symlab.tensor as T
from symlab.gradient import (
    DisconnectedInputError,
    GradientError,
    Lop,
    NullTypeGradError,
    Rop,
    grad,
    verify_grad,
)
from symlab.graph import Apply, Op

RNG = np.random.default_rng(7)


def test_grad_is_exported_and_is_an_ordinary_graph():
    assert symlab.grad is grad
    x = T.dvector("x")
    g = symlab.grad((x**3).sum(), x)
    assert g.owner is not None
    np.testing.assert_allclose(g.eval({x: np.array([1.0, 2.0])}), [3.0, 12.0])


def test_grad_list_and_shared_subexpressions():
    x, y = T.dscalars("x", "y")
    p = x * y
    cost = p * p + p
    gx, gy = grad(cost, [x, y])
    xv, yv = 1.5, -2.0
    pv = xv * yv
    assert float(gx.eval({x: xv, y: yv})) == pytest.approx((2 * pv + 1) * yv)
    assert float(gy.eval({x: xv, y: yv})) == pytest.approx((2 * pv + 1) * xv)


def test_cost_must_be_scalar():
    with pytest.raises(TypeError, match="cost must be a scalar"):
        grad(T.dvector("v") * 2.0, T.dvector("w"))


def test_disconnected_inputs():
    x, y = T.dvectors("x", "y")
    cost = x.sum()
    with pytest.raises(DisconnectedInputError, match="does not depend on y"):
        grad(cost, y)
    with pytest.warns(UserWarning, match="does not depend on y"):
        g = grad(cost, y, disconnected_inputs="warn")
    np.testing.assert_array_equal(g.eval({y: np.ones(2)}), [0.0, 0.0])
    np.testing.assert_array_equal(grad(cost, y, disconnected_inputs="ignore").eval({y: np.ones(3)}), np.zeros(3))


def test_integer_inputs_have_zero_gradient():
    i = T.ivector("i")
    x = T.dvector("x")
    gi = grad((x * i).sum(), i)
    assert gi.dtype == "float64"
    np.testing.assert_array_equal(gi.eval({i: np.array([1, 2], "int32")}), [0.0, 0.0])


def test_gradient_only_through_booleans_is_explained():
    x = T.dvector("x")
    with pytest.raises(DisconnectedInputError, match="only through integer or boolean values"):
        grad((x > 0).sum(), x)


def test_null_gradient_raises_only_when_it_reaches_the_answer():
    x, y = T.dvectors("x", "y")
    cost = (x * 2.0 + T.round(y)).sum()
    # (the gradient graph reads y's shape through the sum, so y needs a value)
    np.testing.assert_array_equal(grad(cost, x).eval({x: np.ones(2), y: np.ones(2)}), [2.0, 2.0])
    with pytest.raises(NullTypeGradError, match=r"Elemwise\{round,no_inplace\}.*not differentiable"):
        grad(cost, y)
    null = grad(cost, y, null_gradients="return")
    assert "NullType" in repr(null.type)


def test_consider_constant_and_known_grads():
    x = T.dscalar("x")
    y = x * x
    z = y * x
    g = grad(z, x, consider_constant=[y])
    assert float(g.eval({x: 3.0})) == 9.0  # y treated as a constant: dz/dx = y
    v = T.dvector("v")
    w = T.exp(v)
    g = grad(None, v, known_grads={w: np.array([1.0, 2.0])})
    np.testing.assert_allclose(g.eval({v: np.zeros(2)}), [1.0, 2.0])


def test_lop_and_rop_match_the_jacobian():
    x = T.dvector("x")
    f = T.exp(x) * x.sum()
    xv = np.array([0.2, -0.4, 0.9])
    jac = np.diag(np.exp(xv)) * xv.sum() + np.exp(xv)[:, None]
    u = np.array([1.0, -2.0, 0.5])
    vec = T.dvector("vec")
    np.testing.assert_allclose(Lop(f, x, vec).eval({x: xv, vec: u}), u @ jac)
    np.testing.assert_allclose(Rop(f, x, vec).eval({x: xv, vec: u}), jac @ u)


def test_verify_grad_catches_a_wrong_gradient():
    class BadSquare(Op):
        __props__ = ()

        def make_node(self, x):
            x = T.as_tensor_variable(x)
            return Apply(self, [x], [x.type()])

        def perform(self, node, inputs, output_storage):
            output_storage[0][0] = inputs[0] ** 2

        def L_op(self, inputs, outputs, output_grads):
            return [output_grads[0] * inputs[0] * 3.0]  # should be 2x

    with pytest.raises(GradientError, match="gradient of input 0 disagrees"):
        verify_grad(BadSquare(), [np.array([1.0, 2.0])], rng=RNG)


def test_second_derivative_through_grad():
    x = T.dscalar("x")
    g = grad(T.sin(x) * x, x)
    gg = grad(g, x)
    xv = 0.7
    assert float(gg.eval({x: xv})) == pytest.approx(2 * np.cos(xv) - xv * np.sin(xv))


def test_jacobian_and_hessian():
    from symlab.gradient import hessian, jacobian

    x = T.tensor("float64", shape=(3,), name="x")
    xv = np.array([0.5, -1.0, 2.0])
    j = jacobian(T.exp(x) * x[0], x)
    expected = np.diag(np.exp(xv)) * xv[0]
    expected[:, 0] += np.exp(xv)
    np.testing.assert_allclose(j.eval({x: xv}), expected)
    h = hessian((x**3).sum() + x[0] * x[1], x)
    expected_h = np.diag(6 * xv)
    expected_h[0, 1] = expected_h[1, 0] = 1.0
    np.testing.assert_allclose(h.eval({x: xv}), expected_h)
    with pytest.raises(ValueError, match="does not depend on w"):
        jacobian(T.dvector("v") * 2.0, T.dvector("w"))


def test_jacobian_forms_agree_unrolled_looped_and_vectorized():
    """A static length unrolls; an unknown one loops (symlab.scan); vectorize=True batches; a matrix
    expression's Jacobian has its shape followed by wrt's; hessian of an unknown length loops too."""
    from symlab.gradient import hessian, jacobian

    xv = np.array([0.5, -1.0, 2.0])
    expected = np.diag(np.exp(xv)) * xv[0]
    expected[:, 0] += np.exp(xv)
    x_static, x = T.tensor("float64", shape=(3,), name="xs"), T.dvector("x")
    forms = {
        "unrolled": (x_static, jacobian(T.exp(x_static) * x_static[0], x_static)),
        "looped": (x, jacobian(T.exp(x) * x[0], x)),
    }
    for label, (var, j) in forms.items():
        np.testing.assert_allclose(j.eval({var: xv}), expected, err_msg=label)
    # vectorize=True batches the gradient graph (its ops need batched forms: no indexing here)
    vectorized = jacobian(T.exp(x) * x.sum(), x, vectorize=True).eval({x: xv})
    np.testing.assert_allclose(vectorized, np.diag(np.exp(xv)) * xv.sum() + np.exp(xv)[:, None])
    assert str(forms["looped"][1].owner.op) == "Scan{jacobian}"
    m = T.dmatrix("m")
    mv = np.arange(6.0).reshape(2, 3)
    jm = jacobian(m ** 2, m).eval({m: mv})
    assert jm.shape == (2, 3, 2, 3)
    np.testing.assert_allclose(jm.reshape(6, 6), np.diag(2 * mv.ravel()))
    h = hessian((x ** 3).sum() + x[0] * x[1], x)
    expected_h = np.diag(6 * xv)
    expected_h[0, 1] = expected_h[1, 0] = 1.0
    np.testing.assert_allclose(h.eval({x: xv}), expected_h)
    w = T.dvector("w")
    zeros = jacobian(x * 2.0, [x, w], disconnected_inputs="ignore")[1].eval({x: xv, w: np.ones(2)})
    np.testing.assert_array_equal(zeros, np.zeros((3, 2)))


def test_grad_of_a_composite_model_against_finite_differences():
    # logistic regression loss, as a user writes it
    verify_grad(
        lambda w, X, y: -(y * T.log(T.sigmoid(X @ w)) + (1 - y) * T.log(1 - T.sigmoid(X @ w))).mean(),
        [RNG.normal(size=3), RNG.normal(size=(5, 3)), (RNG.random(5) > 0.5).astype("float64")],
        rng=RNG,
    )
    verify_grad(
        lambda W, b, X: T.log_softmax(T.tanh(X @ W + b), axis=1)[T.arange(4), T.constant(np.array([0, 1, 1, 0]))].sum(),
        [RNG.normal(size=(3, 2)), RNG.normal(size=2), RNG.normal(size=(4, 3))],
        rng=RNG,
    )


def test_grad_with_respect_to_an_intermediate_and_the_inputs_above_it():
    # A neuron: the gradient with respect to its pre-activation and to the weight that feeds it, in one call
    # (the walk must go through the intermediate variable to reach the weight).
    x, w, b = T.dscalars("x", "w", "b")
    pre = x * w + b
    out = T.tanh(pre)
    g_pre, g_w, g_x, g_b = grad(out, [pre, w, x, b])
    f = symlab.function([x, w, b], [g_pre, g_w, g_x, g_b])
    xv, wv, bv = 0.5, -1.5, 0.25
    d_pre = 1 - np.tanh(xv * wv + bv) ** 2
    np.testing.assert_allclose(f(xv, wv, bv), [d_pre, d_pre * xv, d_pre * wv, d_pre], rtol=1e-12)
    step = 1e-6
    numeric_w = (np.tanh(xv * (wv + step) + bv) - np.tanh(xv * (wv - step) + bv)) / (2 * step)
    assert float(f(xv, wv, bv)[1]) == pytest.approx(numeric_w, rel=1e-7)
