"""pool_2d (Theano's semantics): values against an explicit loop, gradients, shapes, kernels, errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from oracle import FORMULA_REFERENCE, assert_same_results

import symlab
import symlab.tensor as st
from symlab.gradient import Lop, Rop, grad, verify_grad
from symlab.graph.evaluate import evaluate
from symlab.tensor.shape_inference import symbolic_shape
from symlab.tensor.signal import pool
from symlab.tensor.signal.pool import (
    AveragePoolGrad,
    DownsampleFactorMaxGradGrad,
    MaxPoolGrad,
    Pool,
    max_pool_2d_same_size,
    pool_2d,
)

RNG = np.random.default_rng(29)
MODES = ["max", "sum", "average_inc_pad", "average_exc_pad"]


# -- the reference: one window at a time, written from Theano's documented rules ------------------------------
def ref_starts(size, ws, stride, pad, ignore_border):
    """The first (padded) position of each window along one dimension."""
    if ignore_border:
        return list(range(0, size + 2 * pad - ws + 1, stride))
    if stride >= ws:  # one window per stride step that begins inside the image
        return list(range(0, size, stride))
    n = 1  # as many windows as it takes to reach the last pixel
    while (n - 1) * stride + ws < size:
        n += 1
    return [k * stride for k in range(n)]


def ref_pool(x, ws, ignore_border, stride=None, pad=(0, 0), mode="max"):
    stride = ws if stride is None else stride
    h, w = x.shape[-2:]
    rows = ref_starts(h, ws[0], stride[0], pad[0], ignore_border)
    cols = ref_starts(w, ws[1], stride[1], pad[1], ignore_border)
    out = np.zeros(x.shape[:-2] + (len(rows), len(cols)), dtype=x.dtype)
    for lead in np.ndindex(*x.shape[:-2]):
        image = x[lead]
        for i, r in enumerate(rows):
            for j, c in enumerate(cols):
                pixels, in_padded_image = [], 0
                for pr in range(r, r + ws[0]):
                    for pc in range(c, c + ws[1]):
                        if pr < h + 2 * pad[0] and pc < w + 2 * pad[1]:
                            in_padded_image += 1
                        if pad[0] <= pr < pad[0] + h and pad[1] <= pc < pad[1] + w:
                            pixels.append(float(image[pr - pad[0], pc - pad[1]]))
                if mode == "max":
                    value = max(pixels)
                elif mode == "sum":
                    value = sum(pixels)
                elif mode == "average_inc_pad":
                    value = sum(pixels) / in_padded_image
                else:
                    value = sum(pixels) / len(pixels)
                out[lead + (i, j)] = value
    return out


def distinct(shape, dtype="float64"):
    """Values with no ties (a max pool's gradient is then differentiable around them)."""
    values = RNG.permutation(np.prod(shape)).reshape(shape) / np.prod(shape) * 4 - 2
    return (values + RNG.uniform(-0.01, 0.01, shape)).astype(dtype)


def sym(value):
    return st.tensor(value.dtype.name, shape=(None,) * value.ndim)


def test_reference_counts_windows_as_theano_documents():
    # Theano's docstring: a (5, 5) input with ws=(2, 2) gives (2, 2) with ignore_border=True, (3, 3) without.
    assert ref_pool(np.zeros((5, 5)), (2, 2), True).shape == (2, 2)
    assert ref_pool(np.zeros((5, 5)), (2, 2), False).shape == (3, 3)
    assert Pool.out_shape((10, 3, 5, 5), (2, 2), ignore_border=True) == [10, 3, 2, 2]
    assert Pool.out_shape((10, 3, 5, 5), (2, 2), ignore_border=False) == [10, 3, 3, 3]


# -- values: every mode, both borders, strides, padding, ranks and float dtypes ------------------------------
#: (input shape, ws, ignore_border, stride, pad)
CASES = [
    ((5, 7), (2, 2), True, None, (0, 0)),
    ((5, 7), (2, 2), False, None, (0, 0)),
    ((6, 7), (3, 2), False, (1, 1), (0, 0)),  # stride smaller than the window: overlapping windows
    ((6, 7), (3, 3), True, (1, 2), (0, 0)),
    ((7, 8), (2, 2), False, (3, 3), (0, 0)),  # stride larger than the window: skipped pixels
    ((7, 8), (2, 3), True, (4, 3), (0, 0)),
    ((5, 6), (3, 3), True, None, (1, 2)),  # padding
    ((5, 6), (3, 2), True, (2, 1), (2, 1)),
    ((2, 5, 6), (2, 3), False, (1, 2), (0, 0)),  # 3-d
    ((2, 3, 5, 5), (3, 3), True, (2, 2), (1, 1)),  # 4-d
    ((2, 3, 4, 5), (4, 5), True, None, (0, 0)),  # the window is the whole image
    ((1, 2, 4, 5), (5, 6), False, None, (0, 0)),  # larger than the image: one partial window
]


def _check(got, x, case, mode):
    shape, ws, ignore_border, stride, pad = case
    expected = ref_pool(x, ws, ignore_border, stride, pad, mode)  # of x's dtype
    assert_same_results(got, expected, FORMULA_REFERENCE)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-ws{c[1]}-ib{c[2]}-st{c[3]}-pad{c[4]}")
def test_numpy_mode_matches_loop_reference(case, mode, dtype):
    shape, ws, ignore_border, stride, pad = case
    value = RNG.standard_normal(shape).astype(dtype)
    x = sym(value)
    out = pool_2d(x, ws, ignore_border=ignore_border, stride=stride, pad=pad, mode=mode)
    got = symlab.function([x], out, mode="NUMPY")(value)
    _check(got, value, case, mode)
    assert out.type.ndim == value.ndim


def _numba_function(inputs, outputs, monkeypatch):
    """A NUMBA-mode function, checked to run every node in compiled code (no fallback to ``perform``)."""
    from symlab.compile.numba import kernel_source

    monkeypatch.setattr(kernel_source, "_warned_ops", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f = symlab.function(inputs, outputs, mode="NUMBA")
    fallbacks = [str(w.message) for w in caught if "has no Numba kernel" in str(w.message)]
    assert not fallbacks, fallbacks
    return f


#: Few, to keep Numba compiles few: each kernel has the window's parameters as literals.
NUMBA_CASES = [
    (((2, 2, 6, 7), (3, 2), False, (1, 1), (0, 0)), "float64"),  # 4-d, overlapping and partial windows
    (((5, 6), (3, 2), True, (2, 1), (2, 1)), "float32"),  # 2-d, padding
    (((2, 7, 8), (2, 2), False, (3, 3), (0, 0)), "float32"),  # 3-d, stride larger than the window
]


@pytest.mark.numba
@pytest.mark.parametrize("mode", MODES)
def test_numba_mode_matches_loop_reference_and_numpy_gradients(mode, monkeypatch):
    """One compiled function per mode (every node runs a kernel): each pooled output equals the loop's, and
    the gradients (for max, the gradient's gradient too) equal the NumPy path's."""
    cases = [c for c, _ in NUMBA_CASES]
    values = [distinct(c[0], dtype) for c, dtype in NUMBA_CASES]
    xs = [sym(v) for v in values]
    outs = [pool_2d(x, c[1], ignore_border=c[2], stride=c[3], pad=c[4], mode=mode) for x, c in zip(xs, cases)]
    # vector-Jacobian products with given cotangents: the gradient ops alone, no elemwise kernels to compile
    us = [o.type() for o in outs[:2]]
    grads = [Lop(y, x, u) for x, y, u in zip(xs, outs, us)]
    if mode == "max":  # MaxPoolGrad is linear in its cotangent: its vector-Jacobian product is DownsampleFactorMaxGradGrad
        v = xs[0].type()
        us.append(v)
        grads.append(Lop(grads[0], us[0], v))
    cotangents = [distinct(u_value.shape, u_value.dtype) for u_value in
                  symlab.function(xs[:2], outs[:2], mode="NUMPY")(*values[:2])] + [distinct(values[0].shape)] * (mode == "max")
    f = _numba_function(xs + us, outs + grads, monkeypatch)
    got = f(*values, *cotangents)
    for pooled, value, case in zip(got, values, cases):
        _check(pooled, value, case, mode)
    expected = symlab.function(xs[:2] + us, grads, mode="NUMPY")(*values[:2], *cotangents)
    for g, e in zip(got[len(outs):], expected):
        assert g.dtype == e.dtype and g.shape == e.shape
        tol = 1e-5 if g.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol)
    # a non-contiguous input (a transposed view) gives the same values
    view = np.ascontiguousarray(values[0].T).T
    assert not view.flags.c_contiguous
    _check(f(view, *values[1:], *cotangents)[0], values[0], cases[0], mode)


@pytest.mark.numba
def test_numba_max_propagates_nan_and_pools_integers(monkeypatch):
    x = st.dmatrix("x")
    i = st.imatrix("i")
    outs = [pool_2d(x, (2, 2), ignore_border=True), pool_2d(i, (2, 3), ignore_border=False),
            pool_2d(i, (2, 2), ignore_border=True, mode="sum")]
    f = _numba_function([x, i], outs, monkeypatch)
    value = np.array([[1.0, np.nan, 5.0, 2.0], [0.0, 3.0, 1.0, 7.0]])
    ints = RNG.integers(-50, 50, size=(5, 7)).astype("int32")
    got = f(value, ints)
    ref = symlab.function([x, i], outs, mode="NUMPY")(value, ints)
    np.testing.assert_array_equal(got[0], [[np.nan, 7.0]])
    np.testing.assert_array_equal(ref[0], [[np.nan, 7.0]])
    for g, r in zip(got[1:], ref[1:]):
        assert g.dtype == r.dtype == np.int32
        np.testing.assert_array_equal(g, r)
    np.testing.assert_array_equal(got[1], ref_pool(ints, (2, 3), False))
    np.testing.assert_array_equal(got[2], ref_pool(ints, (2, 2), True, mode="sum"))


# -- gradients ----------------------------------------------------------------------------------------------
#: (input shape, ws, ignore_border, stride, pad): small, every kind of window
GRAD_CASES = [
    ((1, 2, 4, 5), (2, 2), False, None, (0, 0)),
    ((2, 4, 5), (2, 3), True, (1, 1), (0, 0)),
    ((4, 5), (3, 2), True, (2, 1), (1, 1)),
    ((4, 5), (2, 2), False, (3, 3), (0, 0)),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", GRAD_CASES, ids=lambda c: f"{c[0]}-ws{c[1]}-ib{c[2]}-st{c[3]}-pad{c[4]}")
def test_verify_grad(case, mode):
    shape, ws, ignore_border, stride, pad = case
    verify_grad(lambda x: pool_2d(x, ws, ignore_border=ignore_border, stride=stride, pad=pad, mode=mode),
                [distinct(shape)], rng=np.random.default_rng(0))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", GRAD_CASES[1:3], ids=lambda c: f"{c[0]}-ws{c[1]}-st{c[3]}-pad{c[4]}")
def test_verify_grad_of_the_gradient(case, mode):
    """The gradient ops have gradients: MaxPoolGrad through DownsampleFactorMaxGradGrad, the others through Pool."""
    shape, ws, ignore_border, stride, pad = case

    def first_derivative(x):
        y = pool_2d(x, ws, ignore_border=ignore_border, stride=stride, pad=pad, mode=mode)
        return grad((y**2).sum(), x)

    verify_grad(first_derivative, [distinct(shape)], rng=np.random.default_rng(1))


def test_gradient_ops_and_their_gradients():
    x = st.dtensor4("x")
    y = pool_2d(x, (2, 2), ignore_border=True)
    g = grad((y**2).sum(), x)
    assert isinstance(g.owner.op, MaxPoolGrad)
    gg = grad((g**2).sum(), x)
    assert any(isinstance(n.op, DownsampleFactorMaxGradGrad) for n in symlab.graph.traversal.io_toposort([x], [gg]))
    a = pool_2d(x, (2, 2), ignore_border=True, mode="average_exc_pad")
    ga = grad(a.sum(), x)
    assert isinstance(ga.owner.op, AveragePoolGrad) and ga.owner.op.mode == "average_exc_pad"


def test_max_gradient_goes_to_every_pixel_equal_to_the_maximum():
    """Theano's MaxPoolGrad: a tie gives the window's gradient to each of the tied pixels."""
    x = st.dmatrix("x")
    g = grad(pool_2d(x, (2, 2), ignore_border=True).sum(), x)
    value = np.array([[1.0, 3.0], [3.0, 2.0]])
    np.testing.assert_array_equal(g.eval({x: value}), [[0.0, 1.0], [1.0, 0.0]])


@pytest.mark.parametrize("mode", ["max", "average_exc_pad"])
def test_rop_matches_finite_differences(mode):
    x, v = st.dtensor3("x"), st.dtensor3("v")
    y = pool_2d(x, (2, 3), ignore_border=False, stride=(1, 2), mode=mode)
    xv, vv = distinct((2, 4, 5)), RNG.standard_normal((2, 4, 5))
    got = Rop(y, x, v).eval({x: xv, v: vv})
    eps = 1e-6
    f = symlab.function([x], y, mode="NUMPY")
    np.testing.assert_allclose(got, (f(xv + eps * vv) - f(xv - eps * vv)) / (2 * eps), rtol=1e-6, atol=1e-6)


# -- shapes --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-ws{c[1]}-ib{c[2]}-st{c[3]}-pad{c[4]}")
def test_infer_shape(case):
    shape, ws, ignore_border, stride, pad = case
    expected = ref_pool(np.zeros(shape), ws, ignore_border, stride, pad).shape
    x = st.tensor("float64", shape=(None,) * len(shape))
    y = pool_2d(x, ws, ignore_border=ignore_border, stride=stride, pad=pad)
    sizes = symbolic_shape(y)
    nodes = symlab.graph.traversal.io_toposort([x], list(sizes))
    assert not any(isinstance(n.op, Pool) for n in nodes)  # the shape is computed from x's shape alone
    value = np.zeros(shape)
    assert tuple(int(v) for v in evaluate(list(sizes), {x: value})) == expected
    # with a static input shape, the output type knows its shape
    static = st.tensor("float64", shape=shape)
    assert pool_2d(static, ws, ignore_border=ignore_border, stride=stride, pad=pad).type.shape == expected
    # the gradient keeps the input's shape
    g = grad(pool_2d(x, ws, ignore_border=ignore_border, stride=stride, pad=pad).sum(), x)
    assert tuple(int(v) for v in evaluate(list(symbolic_shape(g, stop_at=[x])), {x: value})) == shape


# -- the API a Theano user types ----------------------------------------------------------------------------------
def test_theano_old_argument_names_and_the_tutorial_call():
    x = st.dtensor4("x")
    value = distinct((2, 3, 6, 6))
    # convolutional_mlp.py: pool.pool_2d(input=conv_out, ds=poolsize, ignore_border=True)
    with pytest.warns(DeprecationWarning, match="'ds'"):
        old = pool.pool_2d(input=x, ds=(2, 2), ignore_border=True)
    np.testing.assert_array_equal(old.eval({x: value}), ref_pool(value, (2, 2), True))
    with pytest.warns(DeprecationWarning):
        renamed = pool_2d(x, ds=(3, 3), st=(2, 2), padding=(1, 1), ignore_border=True, mode="sum")
    assert renamed.owner.op == Pool((3, 3), ignore_border=True, stride=(2, 2), pad=(1, 1), mode="sum")
    with pytest.raises(ValueError, match="received both ws=.*ds="):
        pool_2d(x, ws=(2, 2), ds=(3, 3))


def test_default_ignore_border_is_false_and_parameters_may_be_constants():
    x = st.dmatrix("x")
    value = distinct((5, 5))
    assert pool_2d(x, (2, 2)).eval({x: value}).shape == (3, 3)
    op = pool_2d(x, st.constant(np.array([2, 2])), stride=np.array([1, 1]), ignore_border=True).owner.op
    assert op.ws == (2, 2) and op.stride == (1, 1) and all(type(v) is int for v in op.ws + op.stride)
    assert pool_2d(x, [st.constant(2), 2], ignore_border=True).owner.op.ws == (2, 2)


def test_max_pool_2d_same_size_and_integer_inputs():
    x = st.dmatrix("x")
    value = distinct((4, 4))
    got = max_pool_2d_same_size(x, (2, 2)).eval({x: value})
    expected = np.where(value == np.kron(ref_pool(value, (2, 2), True), np.ones((2, 2))), value, 0.0)
    np.testing.assert_array_equal(got, expected)
    i = st.lmatrix("i")
    ints = RNG.integers(-9, 9, size=(5, 4))
    for mode in ("max", "sum"):
        out = pool_2d(i, (2, 2), ignore_border=False, mode=mode)
        assert out.dtype == "int64"
        np.testing.assert_array_equal(out.eval({i: ints}), ref_pool(ints, (2, 2), False, mode=mode))


def test_package_layout():
    import symlab.tensor.signal

    assert symlab.tensor.signal.pool is pool and pool.pool_2d is pool_2d


# -- bad input ---------------------------------------------------------------------------------------------------
def test_window_larger_than_the_image_names_both_shapes():
    static = st.tensor("float64", shape=(2, 3, 3, 8))
    with pytest.raises(ValueError, match=r"ws=\(4, 4\) is larger than the image.*\(2, 3, 3, 8\).*\(3, 8\)"):
        pool_2d(static, (4, 4), ignore_border=True)
    with pytest.raises(ValueError, match=r"ws=\(6, 3\).*padded by pad=\(1, 1\)"):
        pool_2d(static, (6, 3), ignore_border=True, pad=(1, 1))
    x = st.dtensor4("x")
    y = pool_2d(x, (4, 4), ignore_border=True)  # the shape is only known when it runs
    with pytest.raises(ValueError, match=r"ws=\(4, 4\) is larger than the image.*\(2, 3, 3, 8\)"):
        symlab.function([x], y, mode="NUMPY")(np.zeros((2, 3, 3, 8)))
    assert pool_2d(static, (4, 4), ignore_border=False).type.shape == (2, 3, 1, 2)  # partial windows are kept


@pytest.mark.numba
def test_numba_window_larger_than_the_image(monkeypatch):
    x = st.dtensor4("x")
    f = _numba_function([x], pool_2d(x, (4, 4), ignore_border=True, mode="sum"), monkeypatch)
    with pytest.raises(ValueError, match=r"ws=\(4, 4\) is larger than the image"):
        f(np.zeros((2, 3, 3, 8)))
    np.testing.assert_allclose(f(np.ones((1, 1, 4, 9))), [[[[16.0, 16.0]]]])


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"ws": (2, 2), "pad": (2, 1), "ignore_border": True}, NotImplementedError,
         r"padding must be smaller than the window.*pad=\(2, 1\) with ws=\(2, 2\)"),
        ({"ws": (3, 3), "pad": (1, 1), "ignore_border": False}, NotImplementedError,
         r"ignore_border=True.*pad=\(1, 1\) with ignore_border=False"),
        ({"ws": (0, 2)}, ValueError, r"ws must be positive, received ws=\(0, 2\)"),
        ({"ws": (2, 2), "stride": (2, -1)}, ValueError, r"stride must be positive, received stride=\(2, -1\)"),
        ({"ws": (2, 2), "pad": (-1, 0), "ignore_border": True}, ValueError, r"pad=\(-1, 0\)"),
        ({"ws": (2, 2), "mode": "average"}, ValueError, r"mode must be one of 'max', .*received 'average'"),
        ({"ws": (2, 2, 2)}, ValueError, r"ws: expected a pair of integers .*received \(2, 2, 2\)"),
        ({"ws": (2.0, 2)}, TypeError, r"ws: expected integers, received float 2.0"),
        ({"ws": 2}, TypeError, r"ws: expected a pair of integers, received int 2"),
        ({}, ValueError, r"expected the window size ws"),
    ],
)
def test_bad_parameters(kwargs, error, message):
    x = st.dtensor4("x")
    with pytest.raises(error, match=message):
        pool_2d(x, **kwargs)


def test_bad_inputs():
    with pytest.raises(TypeError, match=r"at least 2 dimensions.*received x \(.*\) of 1"):
        pool_2d(st.dvector("x"), (2, 2))
    with pytest.raises(TypeError, match=r"average must be a floating tensor, received i"):
        pool_2d(st.imatrix("i"), (2, 2), mode="average_inc_pad")
    with pytest.raises(TypeError, match=r"ws: expected a pair of integers known when the graph is built.*n"):
        pool_2d(st.dmatrix("x"), st.lvector("n"))
    with pytest.raises(TypeError, match=r"integers known when the graph is built.*received the symbolic variable k"):
        pool_2d(st.dmatrix("x"), (st.lscalar("k"), 2))
    with pytest.raises(TypeError, match=r"gz must have 4 dimensions like the input x"):
        MaxPoolGrad((2, 2))(st.dtensor4("x"), st.dtensor4("m"), st.dmatrix("gz"))
    with pytest.raises(ValueError, match="AveragePoolGrad: mode must be"):
        AveragePoolGrad((2, 2), mode="max")
