"""conv2d with Theano's semantics: values against SciPy for every border mode, stride, dilation and flip,
in NUMPY and NUMBA modes (same bits), gradients by finite differences (first and second order), shapes
inferred without computing, and the errors of bad inputs."""

import itertools
import warnings

import numpy as np
import pytest
from oracle import check_infer_shape
from scipy.signal import convolve2d, correlate2d

import symlab
import symlab.tensor as st
from symlab.gradient import Rop, verify_grad
from symlab.tensor.nnet.conv import Conv2d, Conv2dGradInputs, Conv2dGradWeights, conv2d
from symlab.tensor.shape_inference import symbolic_shape

BORDER_MODES = ["valid", "full", "half", 1, (2, 1)]


def reference(x, w, border_mode="valid", subsample=(1, 1), filter_flip=True, filter_dilation=(1, 1)):
    """SciPy's 2-d convolution (or correlation) of every (image, filter, channel) triple, summed over the
    channels; the dilated filter has zeros between its taps, the stride keeps every s-th pixel."""
    out_channels, channels, kh, kw = w.shape
    dh, dw = filter_dilation
    dilated = np.zeros((out_channels, channels, (kh - 1) * dh + 1, (kw - 1) * dw + 1))
    dilated[:, :, ::dh, ::dw] = w
    eh, ew = dilated.shape[2:]
    pad = {"valid": (0, 0), "full": (eh - 1, ew - 1), "half": (eh // 2, ew // 2)}.get(border_mode, border_mode)
    pad = (pad, pad) if isinstance(pad, int) else pad
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    apply = convolve2d if filter_flip else correlate2d
    rows = xp.shape[2] - eh + 1
    cols = xp.shape[3] - ew + 1
    out = np.zeros((x.shape[0], out_channels, rows, cols))
    for b, o, c in itertools.product(range(x.shape[0]), range(out_channels), range(channels)):
        out[b, o] += apply(xp[b, c], dilated[o, c], mode="valid")
    return out[:, :, :: subsample[0], :: subsample[1]]


def data(rng, x_shape=(2, 3, 7, 8), w_shape=(4, 3, 3, 2), dtype="float64"):
    return rng.standard_normal(x_shape).astype(dtype), rng.standard_normal(w_shape).astype(dtype)


def tensor4(dtype, name):
    return st.tensor(dtype, shape=(None,) * 4, name=name)


def tolerance(dtype):
    return {"rtol": 1e-5, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-12, "atol": 1e-12}


# -- values ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("filter_flip", [True, False])
@pytest.mark.parametrize("subsample", [(1, 1), (2, 3)])
@pytest.mark.parametrize("filter_dilation", [(1, 1), (2, 1)])
@pytest.mark.parametrize("border_mode", BORDER_MODES, ids=str)
def test_numpy_mode_matches_scipy(border_mode, subsample, filter_flip, filter_dilation, dtype):
    x, w = tensor4(dtype, "x"), tensor4(dtype, "w")
    params = dict(border_mode=border_mode, subsample=subsample, filter_flip=filter_flip, filter_dilation=filter_dilation)
    y = conv2d(x, w, **params)
    xv, wv = data(np.random.default_rng(0), dtype=dtype)
    got = symlab.function([x, w], y, mode="NUMPY")(xv, wv)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, reference(xv, wv, **params), **tolerance(dtype))


def test_filter_flip_is_a_true_convolution():
    """A 1x2 filter [a, b]: flipped, out[j] = b * x[j] + a * x[j + 1]; not flipped, a * x[j] + b * x[j + 1]."""
    x, w = st.dtensor4("x"), st.dtensor4("w")
    xv = np.array([[[[1.0, 10.0, 100.0]]]])
    wv = np.array([[[[2.0, 3.0]]]])
    assert conv2d(x, w).eval({x: xv, w: wv}).tolist() == [[[[23.0, 230.0]]]]
    assert conv2d(x, w, filter_flip=False).eval({x: xv, w: wv}).tolist() == [[[[32.0, 320.0]]]]


def test_mixed_dtypes_upcast():
    x, w = st.ftensor4("x"), st.dtensor4("w")
    y = conv2d(x, w, border_mode="half")
    assert y.dtype == "float64"
    xv, wv = data(np.random.default_rng(1), dtype="float32")
    got = y.eval({x: xv, w: wv.astype("float64")})
    np.testing.assert_allclose(got, reference(xv.astype("float64"), wv.astype("float64"), "half"), rtol=1e-12)


def test_chunked_batches_give_the_same_result(monkeypatch):
    """A batch cut in chunks of images (the im2col matrix kept small) computes the same as one chunk."""
    from symlab.tensor.nnet import conv as conv_module

    x, w = st.dtensor4("x"), st.dtensor4("w")
    y = conv2d(x, w, border_mode="full", subsample=(2, 1))
    gx, gw = symlab.grad((y**2).sum(), [x, w])
    xv, wv = data(np.random.default_rng(2), x_shape=(5, 3, 7, 8))
    whole = symlab.function([x, w], [y, gx, gw], mode="NUMPY")(xv, wv)
    monkeypatch.setattr(conv_module, "CHUNK_ELEMENTS", 1)  # one image per chunk
    assert conv_module.batch_chunk(10, 10) == 1
    chunked = symlab.function([x, w], [y, gx, gw], mode="NUMPY")(xv, wv)
    for a, b in zip(whole, chunked):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


# -- NUMBA mode: the kernels run (no fallback to perform) and give NUMPY mode's bits --------------------------------

#: Each Numba kernel is a compile of its own (about a second): the configurations below cover every border mode,
#: strides and dilations other than 1 on each axis and both flips, with the gradients of those that combine them
#: (the padded modes share their loops, with other literals; "valid" has loops of its own, without bounds tests).
NUMBA_CONFIGS = {
    "float64": [
        dict(border_mode=(2, 1), subsample=(2, 3), filter_flip=True, filter_dilation=(1, 2)),
        dict(border_mode="half", subsample=(1, 2), filter_flip=False, filter_dilation=(2, 1)),
    ],
    "float32": [dict(border_mode="valid", subsample=(2, 1), filter_flip=True, filter_dilation=(1, 2))],
}
#: Forward only.
NUMBA_FORWARD_CONFIGS = {
    "float64": [dict(border_mode="full", filter_flip=False)],  # an int border_mode is a pair (a tuple above)
    "float32": [],
}


@pytest.mark.numba
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_numba_mode_runs_the_kernels_and_matches_numpy_mode_bits(dtype):
    configs, forward_configs = NUMBA_CONFIGS[dtype], NUMBA_FORWARD_CONFIGS[dtype]
    x, w = tensor4(dtype, "x"), tensor4(dtype, "w")
    ys = [conv2d(x, w, **params) for params in configs]
    cost = sum((y * y).sum() for y in ys)
    outputs = [*ys, *symlab.grad(cost, [x, w]), *(conv2d(x, w, **params) for params in forward_configs)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a node falling back to its perform would warn
        f = symlab.function([x, w], outputs, mode="NUMBA")
        f.wait()
        assert f.tier == "machine code"
        assert f.compile_info.fallback_ops == []
        ops = {type(n.op) for n in f.maker.fgraph.apply_nodes}
        assert {Conv2d, Conv2dGradInputs, Conv2dGradWeights} <= ops
        xv, wv = data(np.random.default_rng(3), dtype=dtype)
        got = f(xv, wv)
    expected = symlab.function([x, w], outputs, mode="NUMPY")(xv, wv)
    for k, (a, b) in enumerate(zip(got, expected)):
        assert a.dtype == b.dtype == dtype and np.array_equal(a, b), (k, np.max(np.abs(a - b)))
    forward = [*zip(configs, got), *zip(forward_configs, got[len(configs) + 2 :])]
    for params, y in forward:
        np.testing.assert_allclose(y, reference(xv, wv, **params), **tolerance(dtype))
    # Wrong shapes, C-contiguous like the values above: a new layout would compile every kernel again.
    with pytest.raises(ValueError, match="differ in their number of channels"):
        f(xv, np.ascontiguousarray(wv[:, :2]))
    if configs[0]["border_mode"] == "valid":  # (the kernels of "valid" test no bounds: their own code)
        with pytest.raises(ValueError, match="do not fit"):
            f(np.ascontiguousarray(xv[:, :, :1, :1]), wv)


@pytest.mark.parametrize("mode", [pytest.param("DEBUG", marks=pytest.mark.numba), "FAST_COMPILE"])
def test_other_modes(mode):
    """DEBUG checks every node (infer_shape against the real shapes, optimized against unoptimized, each node's
    Numba kernel against its perform, inputs left unchanged); FAST_COMPILE runs the graph with few rewrites."""
    x, w = st.dtensor4("x"), st.dtensor4("w")
    params = dict(border_mode=(1, 2), subsample=(2, 1), filter_dilation=(1, 2))
    y = conv2d(x, w, **params)
    gx, gw = symlab.grad((y * y).sum(), [x, w])
    xv, wv = data(np.random.default_rng(10))
    got = symlab.function([x, w], [y, gx, gw], mode=mode)(xv, wv)
    expected = symlab.function([x, w], [y, gx, gw], mode="NUMPY")(xv, wv)
    np.testing.assert_allclose(got[0], reference(xv, wv, **params), rtol=1e-12, atol=1e-12)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


# -- gradients ------------------------------------------------------------------------------------------------------

GRAD_CONFIGS = [
    dict(border_mode="valid"),
    dict(border_mode="full", subsample=(2, 1), filter_flip=False),
    dict(border_mode="half", filter_dilation=(2, 1)),
    dict(border_mode=(1, 2), subsample=(2, 2), filter_dilation=(1, 2)),
    dict(border_mode=1, subsample=(1, 3), filter_flip=False, filter_dilation=(2, 2)),
]


@pytest.mark.parametrize("params", GRAD_CONFIGS, ids=str)
def test_verify_grad_input_and_filters(params):
    rng = np.random.default_rng(4)
    xv, wv = data(rng, x_shape=(2, 2, 6, 5), w_shape=(3, 2, 2, 3))
    verify_grad(lambda x, w: conv2d(x, w, **params), [xv, wv], rng=rng)


@pytest.mark.parametrize("params", GRAD_CONFIGS[1:4:2], ids=str)
def test_second_derivatives(params):
    """The gradient ops have gradients: verify_grad of the gradients with respect to the input and the filters."""
    rng = np.random.default_rng(5)
    xv, wv = data(rng, x_shape=(2, 2, 5, 5), w_shape=(2, 2, 2, 3))

    def gradient(k):
        def fn(x, w):
            y = conv2d(x, w, **params)
            return symlab.grad((y * y).sum(), [x, w])[k]

        return fn

    verify_grad(gradient(0), [xv, wv], rng=rng)
    verify_grad(gradient(1), [xv, wv], rng=rng)


def test_float32_gradients():
    rng = np.random.default_rng(6)
    xv, wv = data(rng, x_shape=(1, 2, 5, 6), w_shape=(2, 2, 3, 3), dtype="float32")
    verify_grad(lambda x, w: conv2d(x, w, border_mode="half", subsample=(2, 1)), [xv, wv], rng=rng)


def test_rop_is_the_directional_derivative():
    rng = np.random.default_rng(7)
    x, w = st.dtensor4("x"), st.dtensor4("w")
    ex, ew = st.dtensor4("ex"), st.dtensor4("ew")
    y = conv2d(x, w, border_mode="full", subsample=(1, 2))
    xv, wv = data(rng)
    exv, ewv = data(rng)
    got = Rop(y, [x, w], [ex, ew]).eval({x: xv, w: wv, ex: exv, ew: ewv})
    f = symlab.function([x, w], y, mode="NUMPY")
    eps = 1e-6
    expected = (f(xv + eps * exv, wv + eps * ewv) - f(xv - eps * exv, wv - eps * ewv)) / (2 * eps)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)


# -- shapes ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        dict(border_mode="valid"),
        dict(border_mode="full", subsample=(2, 3)),
        dict(border_mode="half", filter_dilation=(2, 3)),
        dict(border_mode=(3, 0), subsample=(3, 1), filter_dilation=(1, 2)),
    ],
    ids=str,
)
def test_infer_shape_matches_the_computed_shape(params):
    x, w = st.dtensor4("x"), st.dtensor4("w")
    y = conv2d(x, w, **params)
    xv, wv = data(np.random.default_rng(8), x_shape=(2, 3, 9, 11), w_shape=(4, 3, 3, 2))
    values = {x: xv, w: wv}
    check_infer_shape(y, values)
    gx, gw = symlab.grad((y * y).sum(), [x, w])
    check_infer_shape(gx, values)
    check_infer_shape(gw, values)
    real = y.eval(values).shape
    assert tuple(int(s.eval(values)) for s in symbolic_shape(y)) == real
    # The shapes inferred from the variables' shapes only (no convolution computed).
    assert not any(isinstance(n.op, Conv2d) for s in symbolic_shape(y) for n in _nodes(s))


def _nodes(var):
    from symlab.graph import ancestors

    return [v.owner for v in ancestors([var]) if v.owner is not None]


def test_static_shapes_from_input_shape_and_filter_shape():
    x, w = st.dtensor4("x"), st.dtensor4("w")
    y = conv2d(x, w, input_shape=(500, 1, 28, 28), filter_shape=(20, 1, 5, 5))
    assert y.type.shape == (500, 20, 24, 24)
    assert conv2d(x, w, input_shape=(None, 3, 32, 32), filter_shape=(8, 3, 3, 3), border_mode="half",
                  subsample=(2, 2)).type.shape == (None, 8, 16, 16)
    # From the variables' static types, without declared shapes.
    xs, ws = st.tensor("float64", shape=(2, 3, 10, 10)), st.tensor("float64", shape=(4, 3, 3, 3))
    assert conv2d(xs, ws, border_mode="full", filter_dilation=(2, 2)).type.shape == (2, 4, 14, 14)
    gx, gw = symlab.grad(conv2d(xs, ws, subsample=(3, 3)).sum(), [xs, ws])
    assert gx.type.shape == (2, 3, 10, 10) and gw.type.shape == (4, 3, 3, 3)
    # A partly known shape gives what it can.
    assert conv2d(x, w, input_shape=(None, 1, 28, None), filter_shape=(20, 1, 5, 5)).type.shape == (None, 20, 24, None)


# -- Theano's calling conventions -----------------------------------------------------------------------------------


def test_the_tutorial_layer_with_a_shared_filter_bank():
    """convolutional_mlp's LeNetConvPoolLayer: conv2d(input=..., filters=shared W, filter_shape=..., input_shape=...)."""
    rng = np.random.default_rng(9)
    W = symlab.shared(rng.uniform(-0.1, 0.1, (4, 1, 5, 5)), borrow=True)
    x = st.dtensor4("x")
    out = conv2d(input=x, filters=W, filter_shape=(4, 1, 5, 5), input_shape=(3, 1, 12, 12))
    assert out.type.shape == (3, 4, 8, 8)
    xv = rng.random((3, 1, 12, 12))
    np.testing.assert_allclose(out.eval({x: xv}), reference(xv, W.get_value()), rtol=1e-12)
    gW = symlab.grad(out.sum(), W)
    assert gW.type.shape == (4, 1, 5, 5)
    assert st.nnet.conv2d is conv2d  # as T.nnet.conv2d, and from symlab.tensor.nnet import conv2d


def test_image_shape_is_the_old_name_of_input_shape():
    x, w = st.dtensor4("x"), st.dtensor4("w")
    with pytest.warns(DeprecationWarning, match="image_shape is the old name of input_shape"):
        y = conv2d(x, w, image_shape=(2, 3, 8, 8), filter_shape=(4, 3, 3, 3))
    assert y.type.shape == (2, 4, 6, 6) and y.owner.op.imshp == (2, 3, 8, 8)
    with pytest.raises(ValueError, match="input_shape or its old name image_shape, not both"):
        conv2d(x, w, input_shape=(2, 3, 8, 8), image_shape=(2, 3, 8, 8))


def test_old_tuning_keywords_are_ignored_and_logical_shapes_refused():
    x, w = st.dtensor4("x"), st.dtensor4("w")
    with pytest.warns(UserWarning, match=r"\['unroll_batch'\] only tuned Theano's C code"):
        y = conv2d(x, w, unroll_batch=4)
    assert y.owner.op == Conv2d()
    with pytest.raises(ValueError, match="imshp_logical"):
        conv2d(x, w, imshp_logical=(1, 8, 8))
    with pytest.raises(TypeError, match=r"unexpected keyword arguments \['bordermode'\]"):
        conv2d(x, w, bordermode="full")
    with pytest.raises(NotImplementedError, match="received num_groups=2"):
        conv2d(x, w, num_groups=2)


def test_border_modes_that_mean_the_same_are_the_same_op():
    assert Conv2d(border_mode=0) == Conv2d(border_mode=(0, 0)) == Conv2d(border_mode="valid")
    assert Conv2d(border_mode=2) == Conv2d(border_mode=(2, 2)) != Conv2d(border_mode=(2, 1))
    assert Conv2d(border_mode=[1, 2]).border_mode == (1, 2)


# -- bad inputs -----------------------------------------------------------------------------------------------------


def test_mismatched_channels_name_both_shapes():
    x, w = st.dtensor4("x"), st.dtensor4("w")
    with pytest.raises(ValueError) as err:
        conv2d(x, w, input_shape=(8, 3, 32, 32), filter_shape=(16, 4, 3, 3))
    message = str(err.value)
    assert "input x has 3 channels (input shape (8, 3, 32, 32))" in message
    assert "filters w expect 4 (filter shape (16, 4, 3, 3))" in message
    # Known only when the function runs: the values' shapes are named.
    y = conv2d(x, w)
    with pytest.raises(ValueError, match=r"input has 3 channels \(input shape \(1, 3, 5, 5\)\) but the filters expect "
                                         r"2 \(filter shape \(2, 2, 3, 3\)\)"):
        symlab.function([x, w], y, mode="NUMPY")(np.zeros((1, 3, 5, 5)), np.zeros((2, 2, 3, 3)))


def test_filter_larger_than_the_input_in_valid_mode():
    x, w = st.dtensor4("x"), st.dtensor4("w")
    with pytest.raises(ValueError, match=r"do not fit in the input \(input shape \(\?, 1, 4, 4\)\) with "
                                         r"border_mode='valid'"):
        conv2d(x, w, input_shape=(None, 1, 4, 4), filter_shape=(2, 1, 5, 5))
    with pytest.raises(ValueError, match=r"filter shape \(2, 1, 3, 3\), dilation \(2, 2\)\) do not fit"):
        conv2d(x, w, input_shape=(1, 1, 4, 4), filter_shape=(2, 1, 3, 3), filter_dilation=(2, 2))
    f = symlab.function([x, w], conv2d(x, w), mode="NUMPY")
    with pytest.raises(ValueError, match=r"filter shape \(2, 1, 5, 5\).*input shape \(1, 1, 4, 4\).*0 x 0 pixels"):
        f(np.zeros((1, 1, 4, 4)), np.zeros((2, 1, 5, 5)))
    # The same filter fits once the input is padded.
    assert conv2d(x, w, border_mode="full").eval({x: np.ones((1, 1, 4, 4)), w: np.ones((2, 1, 5, 5))}).shape == (1, 2, 8, 8)


@pytest.mark.parametrize("border_mode", ["same", -1, (1, 2, 3), (1, -2), 1.5, None, (1.0, 1)], ids=repr)
def test_bad_border_mode(border_mode):
    x, w = st.dtensor4("x"), st.dtensor4("w")
    with pytest.raises(ValueError, match=r'border_mode: expected "valid", "full", "half", a non-negative int or a '
                                         rf"pair of non-negative ints, received {_escaped(border_mode)}"):
        conv2d(x, w, border_mode=border_mode)


def _escaped(value):
    import re

    return re.escape(repr(value))


@pytest.mark.parametrize("name", ["subsample", "filter_dilation"])
@pytest.mark.parametrize("value", [(0, 1), 2, (1, 2, 3), (1.5, 1), (-1, -1)], ids=repr)
def test_bad_subsample_and_dilation(name, value):
    x, w = st.dtensor4("x"), st.dtensor4("w")
    with pytest.raises(ValueError, match=rf"conv2d: {name}: expected a pair of positive ints \(rows, cols\), "
                                         rf"received {_escaped(value)}"):
        conv2d(x, w, **{name: value})


def test_inputs_must_be_4d_float_tensors():
    w = st.dtensor4("w")
    m = st.dmatrix("m")
    with pytest.raises(TypeError, match=r"conv2d: input must be a 4-d tensor \(batch, channels, rows, cols\), received "
                                        r"m \(TensorType\(float64, \(\?, \?\)\)\) with 2 dimensions"):
        conv2d(m, w)
    with pytest.raises(TypeError, match=r"conv2d: filters must be a 4-d tensor \(out_channels, channels, rows, cols\), "
                                        r"received .* with 3 dimensions"):
        conv2d(w, st.dtensor3("k"))
    with pytest.raises(TypeError, match=r"conv2d: input must have a floating dtype, received i \(TensorType\(int64"):
        conv2d(st.tensor("int64", shape=(None,) * 4, name="i"), w)
    with pytest.raises(TypeError, match="conv2d: input input"):
        conv2d("abc", w)


def test_declared_shapes_are_checked():
    x, w = st.dtensor4("x"), st.dtensor4("w")
    with pytest.raises(ValueError, match=r"input_shape \(2, 3, 8, 8\) disagrees with x5 .* in dimension 0: 2 against 5"):
        conv2d(st.tensor("float64", shape=(5, 3, 8, 8), name="x5"), w, input_shape=(2, 3, 8, 8))
    with pytest.raises(ValueError, match=r"filter_shape: expected 4 sizes \(positive ints or None\), received \(3, 3\)"):
        conv2d(x, w, filter_shape=(3, 3))
    f = symlab.function([x, w], conv2d(x, w, input_shape=(2, 3, 8, 8)), mode="NUMPY")
    with pytest.raises(ValueError, match=r"the input has shape \(1, 3, 8, 8\), but the graph was built for \(2, 3, 8, 8\)"):
        f(np.zeros((1, 3, 8, 8)), np.zeros((1, 3, 3, 3)))


def test_gradient_ops_check_their_inputs():
    x, top = st.dtensor4("x"), st.dtensor4("top")
    with pytest.raises(TypeError, match=r"shape must be a vector of 2 ints \(rows, cols\), received"):
        Conv2dGradWeights()(x, top, st.dvector("s"))
    with pytest.raises(TypeError, match=r"topgrad must be a 4-d tensor \(batch, out_channels, out_rows, out_cols\)"):
        Conv2dGradInputs()(x, st.dmatrix("t"), np.array([4, 4]))
    gi = Conv2dGradInputs(subsample=(2, 2))(st.dtensor4("w"), top, np.array([7, 7]))
    with pytest.raises(ValueError, match=r"output gradient has shape \(1, 2, 2, 2\), expected \(1, 2, 3, 3\)"):
        gi.eval({gi.owner.inputs[0]: np.zeros((2, 3, 2, 2)), top: np.zeros((1, 2, 2, 2))})
