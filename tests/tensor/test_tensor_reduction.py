"""Reductions: sum/prod/max/min/all/any, mean/var/std, argmax/argmin."""

import warnings
from functools import partial

import numpy as np
import pytest
from helpers import random_value
from oracle import NUMPY_REFERENCE, check_against_numpy

import symlab.tensor as st
from symlab.gradient import verify_grad
from symlab.graph.null_type import NullType
from symlab.tensor.reduction import Argmax, Argmin, ReducedSize

RNG = np.random.default_rng(42)
#: Test values of a shape and dtype (``helpers.random_value``) drawn from ``RNG``.
_value = partial(random_value, RNG)


def _var(value):
    return st.TensorType(value.dtype, (None,) * value.ndim)("x")


SHAPES_AXES = [
    ((), None),
    ((5,), None),
    ((5,), 0),
    ((5,), -1),
    ((3, 4), None),
    ((3, 4), 0),
    ((3, 4), -1),
    ((3, 4), (0, 1)),
    ((2, 3, 4), (0, 2)),
    ((2, 3, 4), (-1, -3)),
    ((2, 3, 4), ()),
]


# -- existing reductions ---------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("shape,axis", SHAPES_AXES)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("name", ["sum", "prod", "max", "min"])
def test_basic_reductions_match_numpy(name, dtype, shape, axis, keepdims):
    check_against_numpy(getattr(st, name), getattr(np, name), [_value(shape, dtype)], NUMPY_REFERENCE, axis=axis,
                        keepdims=keepdims)


@pytest.mark.parametrize("name", ["all", "any"])
@pytest.mark.parametrize("shape,axis", SHAPES_AXES)
def test_logical_reductions_match_numpy(name, shape, axis):
    check_against_numpy(getattr(st, name), getattr(np, name), [_value(shape, "bool")], NUMPY_REFERENCE, axis=axis)


@pytest.mark.parametrize("name", ["sum", "prod"])
@pytest.mark.parametrize("shape,axis", [((0,), None), ((0, 3), 0), ((3, 0), None), ((3, 0), 0)])
def test_empty_sum_prod(name, shape, axis):
    check_against_numpy(getattr(st, name), getattr(np, name), [np.zeros(shape)], NUMPY_REFERENCE, axis=axis)


# -- mean, var, std ---------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bool"])
@pytest.mark.parametrize("shape,axis", SHAPES_AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_mean_matches_numpy(dtype, shape, axis, keepdims):
    check_against_numpy(st.mean, np.mean, [_value(shape, dtype)], NUMPY_REFERENCE, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("shape,axis", SHAPES_AXES)
@pytest.mark.parametrize("ddof", [0, 1])
def test_var_std_match_numpy(name, dtype, shape, axis, ddof):
    check_against_numpy(getattr(st, name), getattr(np, name), [_value(shape, dtype)], NUMPY_REFERENCE, axis=axis,
                        ddof=ddof)


@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std_keepdims(name):
    check_against_numpy(getattr(st, name), getattr(np, name), [_value((3, 4), "float64")], NUMPY_REFERENCE, axis=1,
                        keepdims=True)


def test_var_of_complex_is_real():
    value = _value((3, 2), "float64") + 1j * _value((3, 2), "float64")
    check_against_numpy(st.var, np.var, [value], NUMPY_REFERENCE, axis=0)


@pytest.mark.parametrize("shape,axis", [((0,), None), ((0, 3), 0), ((3, 0), 1)])
def test_mean_of_empty_is_nan(shape, axis):
    check_against_numpy(st.mean, np.mean, [np.zeros(shape)], NUMPY_REFERENCE, axis=axis)


def test_var_with_ddof_too_large():
    check_against_numpy(st.var, np.var, [np.ones(2)], NUMPY_REFERENCE, ddof=3)


def test_mean_uses_static_count():
    x = st.tensor("float32", shape=(3, 4))
    m = st.mean(x, axis=1)
    assert not any(isinstance(n.op, ReducedSize) for n in _nodes(m))
    assert m.type == st.TensorType("float32", (3,))


def test_mean_symbolic_count():
    x = st.fmatrix("x")
    m = st.mean(x, axis=0)
    assert any(isinstance(n.op, ReducedSize) for n in _nodes(m))
    assert m.type == st.TensorType("float32", (None,))


def test_methods_on_variables():
    x = st.dmatrix("x")
    value = _value((3, 4), "float64")
    np.testing.assert_allclose(x.mean(axis=0).eval({x: value}), value.mean(axis=0))
    np.testing.assert_allclose(x.var(ddof=1).eval({x: value}), value.var(ddof=1))
    np.testing.assert_allclose(x.std(axis=1, keepdims=True).eval({x: value}), value.std(axis=1, keepdims=True))
    np.testing.assert_array_equal(x.argmax(axis=1).eval({x: value}), value.argmax(axis=1))
    np.testing.assert_array_equal(x.argmin().eval({x: value}), value.argmin())


def test_static_shapes():
    x = st.tensor("float64", shape=(2, None, 4))
    assert st.mean(x, axis=1).type.shape == (2, 4)
    assert st.var(x, axis=(0, 2), keepdims=True).type.shape == (1, None, 1)
    assert st.std(x).type.shape == ()
    assert st.argmax(x, axis=-1).type.shape == (2, None)
    assert st.argmin(x, axis=1, keepdims=True).type.shape == (2, 1, 4)
    assert st.argmax(x, keepdims=True).type.shape == (1, 1, 1)
    assert st.argmax(x).type == st.TensorType("int64", ())


def test_reduced_size_op():
    x = st.dtensor3("x")
    value = np.zeros((2, 3, 5))
    node = ReducedSize((0, 2))(x).owner
    assert int(node.outputs[0].eval({x: value})) == 10
    assert node.op.infer_shape(None, node, [_const_shape(value)]) == [()]
    with pytest.raises(ValueError, match=r"ReducedSize.*out of range"):
        ReducedSize((3,))(x)


# -- argmax / argmin -----------------------------------------------------------------------
@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bool"])
@pytest.mark.parametrize("shape,axis", [((), None), ((5,), None), ((5,), -1), ((3, 4), None), ((3, 4), 0),
                                        ((2, 3, 4), 1), ((2, 3, 4), -1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_argmax_argmin_match_numpy(name, dtype, shape, axis, keepdims):
    check_against_numpy(getattr(st, name), getattr(np, name), [_value(shape, dtype)], NUMPY_REFERENCE, axis=axis,
                        keepdims=keepdims)


def test_argmax_str_and_props():
    x = st.dmatrix("x")
    assert str(st.argmax(x, axis=-1).owner.op) == "Argmax{axis=1}"
    assert str(st.argmin(x).owner.op) == "Argmin{axis=None}"
    assert Argmax(1) == Argmax(1) and Argmax(1) != Argmin(1)


def test_argmax_errors():
    x = st.dmatrix("x")
    with pytest.raises(ValueError, match="argmax: axis 2 is out of range for a tensor of 2 dimensions"):
        st.argmax(x, axis=2)
    with pytest.raises(TypeError, match="argmin: axis must be an int"):
        st.argmin(x, axis=(0, 1))
    with pytest.raises(ValueError, match=r"Argmax\{axis=0\}: .* is empty"):
        st.argmax(st.tensor("float64", shape=(0, 3)), axis=0)
    with pytest.raises(ValueError, match=r"Argmax\{axis=5\}: axis 5 is out of range"):
        Argmax(5)(x)


def test_argmax_gradient_is_undefined():
    x = st.dvector("x")
    node = st.argmax(x).owner
    (g,) = node.op.L_op(node.inputs, node.outputs, [st.lscalar()])
    assert isinstance(g.type, NullType)
    assert "argmax" in g.type.why.lower() or "Argmax" in g.type.why


# -- errors ----------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [st.mean, st.var, st.std])
def test_bad_axis(fn):
    x = st.dmatrix("x")
    with pytest.raises(ValueError, match=r"(mean|var): axis 2 is out of range for a tensor of 2 dimensions"):
        fn(x, axis=2)
    with pytest.raises(ValueError, match="repeated axis"):
        fn(x, axis=(0, -2))


def test_mean_of_complex_stays_complex():
    value = _value((3, 2), "float32") + 1j * _value((3, 2), "float32")
    out, _ = check_against_numpy(st.mean, np.mean, [value.astype("complex64")], NUMPY_REFERENCE, axis=1)
    assert out.dtype == "complex64"


# -- infer_shape -----------------------------------------------------------------------------
def _const_shape(value):
    return tuple(st.constant(d, dtype="int64") for d in value.shape)


def _nodes(out):
    from symlab.graph.traversal import ancestors

    return [v.owner for v in ancestors([out]) if v.owner is not None]


@pytest.mark.parametrize("make", [
    lambda x: st.argmax(x, axis=1),
    lambda x: st.argmin(x),
    lambda x: st.sum(x, axis=(0, 2)),
    lambda x: st.max(x, axis=-1),
])
def test_infer_shape(make):
    x = st.dtensor3("x")
    value = _value((2, 3, 4), "float64")
    out = make(x)
    node = out.owner
    (shape,) = node.op.infer_shape(None, node, [_const_shape(value)])
    assert tuple(int(s.eval({})) for s in shape) == out.eval({x: value}).shape


# -- gradients -------------------------------------------------------------------------------
@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, False), (-1, True), ((0, 1), False)])
def test_mean_grad(axis, keepdims):
    verify_grad(lambda x: st.mean(x, axis=axis, keepdims=keepdims), [_value((3, 4), "float64")],
                rng=np.random.default_rng(0))


@pytest.mark.parametrize("ddof", [0, 1])
@pytest.mark.parametrize("axis", [None, 1])
def test_var_std_grad(ddof, axis):
    value = _value((3, 4), "float64")
    verify_grad(lambda x: st.var(x, axis=axis, ddof=ddof), [value], rng=np.random.default_rng(0))
    verify_grad(lambda x: st.std(x, axis=axis, ddof=ddof), [value], rng=np.random.default_rng(0))


def test_mean_grad_static_shape():
    verify_grad(lambda x: st.mean(st.specify_shape(x, (3, 4)), axis=0), [_value((3, 4), "float64")],
                rng=np.random.default_rng(0))


def test_mean_grad_float32():
    verify_grad(lambda x: st.mean(x, axis=1), [_value((3, 4), "float32")], rng=np.random.default_rng(0))


# -- the gradient of prod where some factors are zero ------------------------------------------------------
def _prod_of_others(value, axis):
    """d prod / d x_i by brute force: the product of the other elements of x_i's slice along ``axis``."""
    axes = tuple(range(value.ndim)) if axis is None else tuple(np.atleast_1d(axis))
    moved = np.moveaxis(value, axes, tuple(range(len(axes))))
    flat = moved.reshape(-1, *moved.shape[len(axes):])
    out = np.empty_like(flat)
    for i in range(flat.shape[0]):
        out[i] = np.prod(np.delete(flat, i, axis=0), axis=0)
    return np.moveaxis(out.reshape(moved.shape), tuple(range(len(axes))), axes)


PROD_AT_ZEROS = {  # no zero, one zero and two zeros in the first row (axis 1) and the first column (axis 0)
    "no zero": np.array([[1.5, -2.0, 0.5], [0.7, 1.2, -0.9]]),
    "one zero": np.array([[1.5, 0.0, 0.5], [0.7, 1.2, -0.9]]),
    "two zeros": np.array([[0.0, -2.0, 0.0], [0.0, 1.2, -0.9]]),
}


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("case", list(PROD_AT_ZEROS))
def test_prod_grad_is_the_product_of_the_others_also_at_zeros(case, axis):
    value = PROD_AT_ZEROS[case]
    verify_grad(lambda x: st.prod(x, axis=axis), [value], rng=np.random.default_rng(0))
    x = st.dmatrix("x")
    g = st.grad(st.prod(x, axis=axis).sum(), x).eval({x: value})
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(g, _prod_of_others(value, axis), rtol=1e-15, atol=0)


def test_prod_grad_at_zeros_of_a_3d_tensor_along_two_axes():
    value = RNG.standard_normal((2, 3, 4))
    value[0, 1, 2] = 0.0  # the slice x[:, 1, :] (reduced over axes 0 and 2) has one zero
    value[1, 2, 0] = value[0, 2, 3] = 0.0  # and x[:, 2, :] two
    verify_grad(lambda x: st.prod(x, axis=(0, 2)), [value], rng=np.random.default_rng(0))
    x = st.dtensor3("x")
    g = st.grad(st.prod(x, axis=(0, 2)).sum(), x).eval({x: value})
    np.testing.assert_allclose(g, _prod_of_others(value, (0, 2)), rtol=1e-14, atol=0)
    assert np.all(g[:, 2, :] == 0) and np.count_nonzero(g[:, 1, :]) == 1


@pytest.mark.numba
def test_prod_grad_at_zeros_compiled_in_every_mode():
    import symlab

    x = st.dmatrix("x")
    g = st.grad(st.prod(x, axis=1).sum() + st.prod(x), x)
    value = np.array([[1.5, -2.0, 0.5], [0.7, 0.0, -0.9], [0.0, 1.2, 0.0]])
    expected = _prod_of_others(value, 1) + _prod_of_others(value, None)
    for mode in ("NUMPY", "NUMBA"):
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)  # no op falls back to perform in NUMBA
            got = symlab.function([x], g, mode=mode)(value)
        np.testing.assert_allclose(got, expected, rtol=1e-15, atol=0, err_msg=mode)


# -- the gradient of max and min: tied elements share it ---------------------------------------------------
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_grad_of_an_element_repeated_by_indexing_matches_finite_differences(name):
    fn = getattr(st, name)
    value = np.array([0.1, 0.2, 0.3]) if name == "max" else np.array([0.3, 0.2, 0.1])
    verify_grad(lambda x: fn(x[[2, 2, 1]]), [value], rng=np.random.default_rng(0))
    verify_grad(lambda x: fn(x[[[0, 2], [2, 1]]], axis=1), [value], rng=np.random.default_rng(0))
    x = st.dvector("x")
    g = st.grad(fn(x[[2, 2, 1]]), x).eval({x: value})
    np.testing.assert_array_equal(g, [0.0, 0.0, 1.0])  # once, not twice


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_grad_is_shared_evenly_by_tied_elements(name):
    fn = getattr(st, name)
    x = st.dmatrix("x")
    value = np.array([[3.0, 1.0, 3.0], [2.0, 2.0, 2.0]]) * (1 if name == "max" else -1)
    cost = (fn(x, axis=1) * np.array([1.0, 3.0])).sum()
    np.testing.assert_allclose(st.grad(cost, x).eval({x: value}), [[0.5, 0.0, 0.5], [1.0, 1.0, 1.0]])
    g_all = st.grad(fn(x), x).eval({x: value})
    np.testing.assert_allclose(g_all, [[0.5, 0.0, 0.5], [0.0, 0.0, 0.0]])
    assert g_all.sum() == 1.0  # a subgradient: the shares add up to the whole


def test_max_grad_where_the_maximum_is_nan_is_zero_not_nan():
    x = st.dvector("x")
    g = st.grad(st.max(x), x).eval({x: np.array([np.nan, 1.0])})
    np.testing.assert_array_equal(g, [0.0, 0.0])


@pytest.mark.numba
def test_max_min_grad_compiled_in_every_mode():
    import symlab

    x = st.dmatrix("x")
    g = st.grad(st.max(x, axis=0).sum() + st.min(x[[0, 0, 1]]), x)
    value = np.array([[1.0, 2.0, 2.0], [1.0, 0.0, 3.0]])
    expected = np.array([[0.5, 1.0, 0.0], [0.5, 1.0, 1.0]])  # column 0 tied; min 0.0 at [1, 1], once
    for mode in ("NUMPY", "NUMBA"):
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)
            got = symlab.function([x], g, mode=mode)(value)
        np.testing.assert_array_equal(got, expected, err_msg=mode)


# -- max and min from an initial value ---------------------------------------------------------------------
@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("shape,axis", [((0,), None), ((3, 0), 1), ((0, 3), 0), ((0, 3), None), ((3, 4), 1), ((3, 4), None)])
def test_max_min_with_initial_match_numpy(name, shape, axis):
    initial = -np.inf if name == "max" else 0.25
    value = RNG.standard_normal(shape)
    x = st.dmatrix("x") if len(shape) == 2 else st.dvector("x")
    out = getattr(st, name)(x, axis=axis, initial=initial)
    expected = getattr(np, name)(value, axis=axis, initial=initial)
    got = out.eval({x: value})
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_max_with_initial_op_and_errors():
    x = st.dmatrix("x")
    out = st.max(x, axis=1, initial=-np.inf)
    assert str(out.owner.op) == "Max{axis=[1],initial=-inf}" and out.owner.op.initial == -np.inf
    assert out.owner.op != st.max(x, axis=1).owner.op  # initial is a property of the op
    assert st.max(x, axis=1, keepdims=True, initial=0.0).type.shape == (None, 1)
    with pytest.raises(TypeError, match=r"initial must be a value of the dtype of i \(int32\), received 0.5"):
        st.max(st.ivector("i"), initial=0.5)
    with pytest.raises(TypeError, match=r"max: initial must be a Python or NumPy number, received 'low'"):
        st.max(x, initial="low")
    # the gradient: none where the initial value is the result
    g = st.grad(st.max(x, axis=1, initial=2.0).sum(), x).eval({x: np.array([[1.0, 3.0], [0.0, 1.0]])})
    np.testing.assert_array_equal(g, [[0.0, 1.0], [0.0, 0.0]])


@pytest.mark.numba
def test_max_min_with_initial_numba_kernel_matches_numpy():
    import symlab

    x = st.dmatrix("x")
    outs = [st.max(x, axis=1, initial=-np.inf), st.min(x, initial=np.inf), st.max(x, axis=0, initial=0.5)]
    f = symlab.function([x], outs, mode="NUMBA")
    for value in (np.zeros((3, 0)), np.array([[1.0, -2.0], [np.nan, 0.25], [-1.0, -3.0]])):
        for got, fn, kw in zip(f(value), (np.max, np.min, np.max),
                               ({"axis": 1, "initial": -np.inf}, {"initial": np.inf}, {"axis": 0, "initial": 0.5})):
            np.testing.assert_array_equal(got, fn(value, **kw))
