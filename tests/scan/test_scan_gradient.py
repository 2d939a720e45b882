"""Gradients through ``symlab.scan``: backpropagation through time against finite differences and hand-written
NumPy BPTT, the forward derivative (``R_op``), and ``jacobian``/``hessian`` built as loops (gradients.rst)."""

import warnings

import numpy as np
import pytest

import symlab
import symlab.tensor as st
from symlab.gradient import DisconnectedInputError, NullTypeGradError, Rop, hessian, jacobian, pushforward, verify_grad
from symlab.scan.op import Scan

NUMPY = "NUMPY"
RNG = np.random.default_rng(34)


def elman(x, h0, W_in, W, b, V):
    """An Elman RNN: h[t] = tanh(x[t] W_in + h[t-1] W + b), and a mapped readout y[t] = h[t] V."""
    (h, y), _ = symlab.scan(lambda x_t, h, W_in, W, b, V: [st.tanh(st.dot(x_t, W_in) + st.dot(h, W) + b),
                                                           st.dot(st.tanh(st.dot(x_t, W_in) + st.dot(h, W) + b), V)],
                            sequences=x, outputs_info=[h0, None], non_sequences=[W_in, W, b, V], name="elman")
    return h, y


def elman_point():
    return [RNG.normal(size=(4, 2)), RNG.normal(size=3), RNG.normal(size=(2, 3)), 0.5 * RNG.normal(size=(3, 3)),
            RNG.normal(size=3), RNG.normal(size=(3, 2))]


def test_elman_rnn_gradient_of_every_input_against_finite_differences():
    # the state's buffer and the mapped output together: gradients of the sequence, the initial state, every weight
    verify_grad(lambda *args: st.concatenate([elman(*args)[0].flatten(), elman(*args)[1].flatten()]), elman_point(),
                rng=np.random.default_rng(0), n_tests=1)
    x = st.dmatrix("x")
    h, _ = elman(x, st.zeros(3), *(st.constant(v) for v in elman_point()[2:]))
    g = symlab.grad(h[-1].sum(), x)
    back = g.owner.inputs[1].owner.inputs[0].owner  # set_subtensor(zeros, per_step[::-1])
    assert isinstance(back.op, Scan) and str(back.op) == "Scan{grad_of_elman}"


def test_sequence_taps_mit_sot_and_several_states_against_finite_differences():
    def fn(x, s_init, c0, a):
        def step(x_prev, x_next, s2, s1, c, a):
            s = a * s2 + st.tanh(s1) * x_prev + x_next
            return s, 0.9 * c + s * s1

        (s, c), _ = symlab.scan(step, sequences=dict(input=x, taps=[-1, 1]),
                                outputs_info=[dict(initial=s_init, taps=[-2, -1]), c0], non_sequences=a)
        return st.concatenate([s, c * 0.5])

    verify_grad(fn, [RNG.normal(size=6), RNG.normal(size=2), np.array(0.3), np.array(0.7)],
                rng=np.random.default_rng(1), n_tests=1)


def test_go_backwards_and_a_longer_initial_window_against_finite_differences():
    def fn(x, init):
        out, _ = symlab.scan(lambda x_t, h3, h1: st.sin(h3) * x_t + h1, sequences=x,
                             outputs_info=dict(initial=init, taps=[-3, -1]), go_backwards=True)
        return out

    verify_grad(fn, [RNG.normal(size=5), RNG.normal(size=4)], rng=np.random.default_rng(2), n_tests=1)


def test_shared_weight_read_in_the_body_and_a_while_loop():
    W = symlab.shared(0.5 * RNG.normal(size=(2, 2)), name="W")
    x = st.dmatrix("x")
    h, _ = symlab.scan(lambda x_t, h: st.tanh(st.dot(h, W) + x_t), sequences=x, outputs_info=st.zeros(2))
    cost = (h ** 2).sum()
    f = symlab.function([x], symlab.grad(cost, W), mode=NUMPY)
    c = symlab.function([x], cost, mode=NUMPY)
    xv = RNG.normal(size=(5, 2))
    numeric = np.zeros((2, 2))
    w0 = W.get_value()
    for idx in np.ndindex(2, 2):
        for sign in (1, -1):
            w = w0.copy()
            w[idx] += sign * 1e-6
            W.set_value(w)
            numeric[idx] += sign * c(xv) / 2e-6
    W.set_value(w0)
    np.testing.assert_allclose(f(xv), numeric, rtol=1e-6, atol=1e-8)

    # until: the loop stops when the state passes 2; the gradient covers the iterations it ran, zeros after
    def doubling(x, h0):
        out, _ = symlab.scan(lambda x_t, h: (h * 1.5 + x_t, symlab.scan.until(h > 2.0)), sequences=x, outputs_info=h0)
        return out

    xs = np.array([0.2, 0.3, 0.1, 0.4, 0.2, 0.3])
    verify_grad(doubling, [xs, np.array(0.9)], rng=np.random.default_rng(3), n_tests=1)
    x1, h0 = st.dvector("x"), st.dscalar("h0")
    gx = symlab.grad(doubling(x1, h0).sum(), x1).eval({x1: xs, h0: 0.9})
    assert gx[:2].all() and not gx[3:].any()  # it stopped after 3 iterations (h: 1.55, 2.625 > 2 at t=2)


def numpy_truncated_bptt(x, w, h0, k):
    """h[t] = tanh(w h[t-1] + x[t]), cost = sum(h): the gradient through the last k iterations only."""
    n = len(x)
    h = np.empty(n + 1)
    h[0] = h0
    for t in range(n):
        h[t + 1] = np.tanh(w * h[t] + x[t])
    gx, gw, carried = np.zeros(n), 0.0, 0.0
    for t in range(n - 1, max(n - k, 0) - 1, -1):
        d = (carried + 1.0) * (1 - h[t + 1] ** 2)  # the gradient of h[t+1] (cost and later iterations) through tanh
        gx[t] = d
        gw += d * h[t]
        carried = d * w
    gh0 = carried if k >= n else 0.0
    return gx, gw, gh0


def test_truncate_gradient_against_numpy_truncated_bptt():
    x, w, h0 = st.dvector("x"), st.dscalar("w"), st.dscalar("h0")
    xv, wv, h0v = RNG.normal(size=6), 0.8, 0.4
    for k in (2, 6, 9):
        h, _ = symlab.scan(lambda x_t, h, w: st.tanh(w * h + x_t), sequences=x, outputs_info=h0, non_sequences=w,
                           truncate_gradient=k)
        got = symlab.function([x, w, h0], symlab.grad(h.sum(), [x, w, h0]), mode=NUMPY)(xv, wv, h0v)
        for value, expected in zip(got, numpy_truncated_bptt(xv, wv, h0v, k)):
            np.testing.assert_allclose(value, expected, rtol=1e-10, atol=1e-12, err_msg=f"truncate_gradient={k}")


def test_gradient_of_some_outputs_others_disconnected_and_carried_values():
    x, a, b = st.dvector("x"), st.dscalar("a"), st.dscalar("b")
    # the state depends on a, the mapped output on b only
    (s, m), _ = symlab.scan(lambda x_t, s, a, b: [s * a + x_t, x_t * b], sequences=x, outputs_info=[st.constant(0.0), None],
                            non_sequences=[a, b])
    with pytest.raises(DisconnectedInputError, match="b"):
        symlab.grad(s[-1], b)
    gx, ga = symlab.grad(s[-1], [x, a])
    values = symlab.function([x, a, b], [gx, ga], mode=NUMPY, on_unused_input="ignore")([1.0, 2.0, 3.0], 0.5, 9.0)
    np.testing.assert_allclose(values[0], [0.25, 0.5, 1.0])
    np.testing.assert_allclose(values[1], 2 * 0.5 * 1.0 + 2.0)  # s = a^2 x0 + a x1 + x2
    gb = symlab.grad(m.sum(), b).eval({x: np.array([1.0, 2.0, 3.0]), a: 0.5, b: 2.0})
    assert float(gb) == 6.0
    # a shared variable updated inside the loop: its iterations are not kept, so a gradient through it is undefined
    acc = symlab.shared(0.0, name="acc")
    out, updates = symlab.scan(lambda x_t: (x_t * 2.0, {acc: acc + x_t}), sequences=x)
    assert symlab.grad(out.sum(), x).eval({x: np.array([1.0, 2.0])}).tolist() == [2.0, 2.0]
    with pytest.raises(NullTypeGradError, match="carries without keeping its iterations"):
        symlab.grad(updates[acc], x)


def test_second_derivative_through_a_scan():
    # a Hessian-vector product (grad of grad: the gradient loop differentiated in turn) against finite differences
    # of the gradient, through sequence taps, a mit-sot state and go_backwards
    x, w, init = st.dvector("x"), st.dscalar("w"), st.dvector("init")
    h, _ = symlab.scan(lambda x_prev, x_t, h2, h1, w: st.tanh(w * h1 + x_t * x_prev) + 0.5 * h2 * h1,
                       sequences=dict(input=x, taps=[-1, 0]), outputs_info=dict(initial=init, taps=[-2, -1]),
                       non_sequences=w, go_backwards=True)
    grads = symlab.grad((h ** 2).sum(), [x, w, init])
    point = [RNG.normal(size=5), np.array(0.6), 0.5 * RNG.normal(size=2)]
    direction = [RNG.normal(size=5), np.array(0.3), RNG.normal(size=2)]
    hvp = symlab.grad(sum((g * d).sum() for g, d in zip(grads, direction)), [x, w, init])
    gradient = symlab.function([x, w, init], grads, mode=NUMPY)
    eps = 1e-6
    plus = gradient(*(p + eps * d for p, d in zip(point, direction)))
    minus = gradient(*(p - eps * d for p, d in zip(point, direction)))
    got = symlab.function([x, w, init], hvp, mode=NUMPY)(*point)
    for value, a, b in zip(got, plus, minus):
        np.testing.assert_allclose(value, (a - b) / (2 * eps), rtol=1e-6, atol=1e-8)


def test_rop_through_a_scan_against_finite_differences():
    x, h0, W = st.dmatrix("x"), st.dvector("h0"), st.dmatrix("W")
    vx, vh, vW = st.dmatrix("vx"), st.dvector("vh"), st.dmatrix("vW")
    (h, y), _ = symlab.scan(lambda x_t, h, W: [st.tanh(st.dot(h, W) + x_t), (h ** 2).sum()], sequences=x,
                            outputs_info=[h0, None], non_sequences=W)
    point = [RNG.normal(size=(4, 2)), RNG.normal(size=2), RNG.normal(size=(2, 2))]
    direction = [RNG.normal(size=(4, 2)), RNG.normal(size=2), RNG.normal(size=(2, 2))]
    forward = symlab.function([x, h0, W], [h, y], mode=NUMPY)
    eps = 1e-6
    plus = forward(*(p + eps * d for p, d in zip(point, direction)))
    minus = forward(*(p - eps * d for p, d in zip(point, direction)))
    numeric = [(a - b) / (2 * eps) for a, b in zip(plus, minus)]
    by_op = pushforward([h, y], [x, h0, W], [vx, vh, vW], use_op_pushforward=True)
    by_lop = Rop(h, [x, h0, W], [vx, vh, vW])
    got = symlab.function([x, h0, W, vx, vh, vW], [*by_op, by_lop], mode=NUMPY)(*point, *direction)
    np.testing.assert_allclose(got[0], numeric[0], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got[1], numeric[1], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got[2], numeric[0], rtol=1e-6, atol=1e-8)
    assert any(isinstance(n.op, Scan) and n.op.info.n_states == 2 for n in symlab.graph.traversal.applys_between(
        [x, h0, W, vx, vh, vW], by_op))


def test_gradients_rst_jacobian_and_hessian_by_scan():
    # gradients.rst, "Computing the Jacobian": a loop over the rows, grad of an outer variable inside the body
    x = st.dvector("x")
    y = x ** 2
    J, updates = symlab.scan(lambda i, y, x: symlab.grad(y[i], x), sequences=st.arange(y.shape[0]), non_sequences=[y, x])
    f = symlab.function([x], J, updates=updates, mode=NUMPY)
    np.testing.assert_allclose(f([4.0, 4.0]), [[8.0, 0.0], [0.0, 8.0]])
    # "Computing the Hessian"
    cost = (x ** 2).sum()
    gy = symlab.grad(cost, x)
    H, updates = symlab.scan(lambda i, gy, x: symlab.grad(gy[i], x), sequences=st.arange(gy.shape[0]),
                             non_sequences=[gy, x])
    np.testing.assert_allclose(symlab.function([x], H, updates=updates, mode=NUMPY)([4.0, 4.0]), [[2.0, 0.0], [0.0, 2.0]])
    # the library's jacobian/hessian of a vector of unknown length are the same loops
    z = st.exp(x) * x.sum()
    xv = np.array([0.3, -0.2, 1.1])
    expected_j = np.diag(np.exp(xv)) * xv.sum() + np.exp(xv)[:, None]
    np.testing.assert_allclose(jacobian(z, x).eval({x: xv}), expected_j)
    c = (x ** 3).sum() * x.sum()
    s = xv.sum()
    expected_h = np.diag(6 * xv * s) + 3 * xv[:, None] ** 2 + 3 * xv[None, :] ** 2
    np.testing.assert_allclose(hessian(c, x).eval({x: xv}), expected_h)


@pytest.mark.numba
def test_gradient_loops_on_numba_equal_numpy():
    x, w, init = st.dvector("x"), st.dscalar("w"), st.dvector("init")
    h, _ = symlab.scan(lambda x_t, h2, h1, w: st.tanh(w * h1 + x_t) + 0.5 * h2, sequences=x,
                       outputs_info=dict(initial=init, taps=[-2, -1]), non_sequences=w)
    outputs = symlab.grad((h ** 2).sum(), [x, w, init])
    values = (RNG.normal(size=5), 0.7, RNG.normal(size=2))
    expected = symlab.function([x, w, init], outputs, mode=NUMPY)(*values)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = symlab.function([x, w, init], outputs, mode="NUMBA")(*values)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert not [str(m.message) for m in caught if "could not compile" in str(m.message)]


def test_random_draws_in_the_body():
    from symlab.tensor.random.utils import RandomStream

    srng = RandomStream(7)
    x, w = st.dvector("x"), st.dscalar("w")
    # noise added before tanh: the gradient reads tanh's value from the loop's buffer, not the generator
    h, _ = symlab.scan(lambda x_t, h, w: st.tanh(w * h + x_t + srng.normal(0, 0.5)), sequences=x,
                       outputs_info=st.constant(0.0), non_sequences=w)
    cost = (h ** 2).sum()
    grads = symlab.function([x, w], symlab.grad(cost, [x, w]), mode=NUMPY)  # no updates: the same draws every call
    c = symlab.function([x, w], cost, mode=NUMPY)
    xv, wv, eps = RNG.normal(size=4), 0.7, 1e-6
    gx, gw = grads(xv, wv)
    np.testing.assert_allclose(gw, (c(xv, wv + eps) - c(xv, wv - eps)) / (2 * eps), rtol=1e-6)
    np.testing.assert_allclose(gx[0], (c(xv + [eps, 0, 0, 0], wv) - c(xv - [eps, 0, 0, 0], wv)) / (2 * eps), rtol=1e-6)

    # a mask the gradient needs at every iteration: undefined while the loop keeps only the generator's end...
    def masked(x_t, h, w):
        mask = srng.binomial(1, 0.5).astype("float64")
        return st.tanh(w * h + x_t) * mask, mask

    h, _ = symlab.scan(lambda x_t, h, w: masked(x_t, h, w)[0], sequences=x, outputs_info=st.constant(0.0), non_sequences=w)
    with pytest.raises(NullTypeGradError, match="return those values"):
        symlab.grad(h.sum(), x)
    # ... and defined once the loop returns the mask too
    (h, m), _ = symlab.scan(masked, sequences=x, outputs_info=[st.constant(0.0), None], non_sequences=w)
    gx, mv, hv = symlab.function([x, w], [symlab.grad(h.sum(), x), m, h], mode=NUMPY)(np.ones(3), 0.5)
    expected, carried = np.zeros(3), 0.0
    for t in range(2, -1, -1):  # backpropagation by hand: h[t] = tanh(0.5 h[t-1] + x[t]) * mask[t]
        pre = 0.5 * (hv[t - 1] if t else 0.0) + 1.0
        expected[t] = (1.0 + carried) * mv[t] * (1 - np.tanh(pre) ** 2)
        carried = expected[t] * 0.5
    np.testing.assert_allclose(gx, expected)
