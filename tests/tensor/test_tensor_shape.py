"""Tests of shape ops: Shape_i, Reshape, flatten, expand_dims, squeeze."""

from __future__ import annotations

import numpy as np
import pytest
from oracle import check_infer_shape

import symlab.tensor as st
from symlab.graph.null_type import DisconnectedType
from symlab.tensor.shape import Reshape, Shape_i

DTYPES = ["float64", "float32", "int32", "int8", "bool", "complex128"]


def sym_shape(shape):
    return tuple(st.constant(d, dtype="int64") for d in shape)


def data(shape, dtype="float64", seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 3).astype(dtype)


# -- Shape_i ----------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(0,), (2, 3), (4, 0, 5), (1, 1, 1)])
def test_shape_i_values(shape):
    x = st.tensor("float64", shape=(None,) * len(shape), name="x")
    for i in range(len(shape)):
        out = st.shape_i(x, i)
        assert isinstance(out.owner.op, Shape_i)
        v = out.eval({x: np.zeros(shape)})
        assert v.dtype == np.int64 and v.ndim == 0 and int(v) == shape[i]
        check_infer_shape(out, {x: np.zeros(shape)})


def test_shape_i_static_and_errors():
    x = st.tensor("float64", shape=(3, None), name="x")
    assert int(st.shape_i(x, 0).data) == 3
    assert st.shape_i(x, -1).owner.op == Shape_i(1)
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        st.shape_i(x, 2)
    with pytest.raises(ValueError, match=r"Shape_i\{2\}.*no dimension 2"):
        Shape_i(2)(x)
    assert str(Shape_i(1)) == "Shape_i{1}"
    assert isinstance(Shape_i(0).L_op([x], [st.shape_i(x, 1)], [None])[0].type, DisconnectedType)


# -- reshape -----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "in_shape, new_shape",
    [
        ((2, 3), (3, 2)),
        ((2, 3), (6,)),
        ((2, 3), (-1,)),
        ((2, 3), (1, -1, 1)),
        ((6,), (2, -1)),
        ((), (1, 1)),
        ((1,), ()),
        ((0, 3), (3, 0)),
        ((0, 3), (-1, 3)),
        ((2, 3, 4), (4, -1, 2)),
    ],
)
def test_reshape_values(dtype, in_shape, new_shape):
    x = st.tensor(dtype, shape=(None,) * len(in_shape), name="x")
    value = data(in_shape, dtype)
    out = st.reshape(x, new_shape)
    got = out.eval({x: value})
    expected = value.reshape(new_shape)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    check_infer_shape(out, {x: value})


def test_reshape_static_shapes():
    x = st.tensor("float64", shape=(2, 3), name="x")
    assert st.reshape(x, (3, 2)).type.shape == (3, 2)
    assert st.reshape(x, (-1,)).type.shape == (6,)
    assert st.reshape(x, (3, -1, 1)).type.shape == (3, 2, 1)
    n = st.lscalar("n")
    assert st.reshape(x, (n, -1)).type.shape == (None, None)
    assert st.reshape(x, (n, 3)).type.shape == (None, 3)
    y = st.dmatrix("y")
    assert st.reshape(y, (2, -1)).type.shape == (2, None)
    assert st.reshape(y, (2, 3)).type.shape == (2, 3)
    # the shape of another tensor gives static sizes too
    z = st.tensor("float64", shape=(6, None), name="z")
    assert st.reshape(y, z.shape).type.shape == (6, None)
    assert st.reshape(y, (st.shape_i(z, 0),)).type.shape == (6,)


def test_reshape_symbolic_entries_and_vector():
    x = st.dmatrix("x")
    n = st.iscalar("n")
    value = data((4, 3))
    out = st.reshape(x, (n, -1))
    np.testing.assert_array_equal(out.eval({x: value, n: 2}), value.reshape(2, -1))
    check_infer_shape(out, {x: value, n: 2})
    shp = st.lvector("shp")
    out = st.reshape(x, shp, ndim=3)
    assert out.type.shape == (None, None, None)
    for s in ([2, 2, 3], [-1, 2, 3], [2, 3, -1]):
        np.testing.assert_array_equal(out.eval({x: value, shp: s}), value.reshape(s))
        check_infer_shape(out, {x: value, shp: np.array(s)})
    # a vector of static length needs no ndim
    shp2 = st.tensor("int32", shape=(2,), name="shp2")
    out = st.reshape(x, shp2)
    assert out.owner.op == Reshape(2)
    check_infer_shape(out, {x: value, shp2: np.array([6, -1], dtype="int32")})


def test_reshape_method():
    x = st.dmatrix("x")
    value = data((2, 3))
    np.testing.assert_array_equal(x.reshape(3, 2).eval({x: value}), value.reshape(3, 2))
    np.testing.assert_array_equal(x.reshape((6,)).eval({x: value}), value.reshape(6))
    n = st.lscalar("n")
    np.testing.assert_array_equal(x.reshape(n).eval({x: value, n: 6}), value.reshape(6))
    np.testing.assert_array_equal(x.flatten().eval({x: value}), value.flatten())


def test_reshape_errors():
    x = st.tensor("float64", shape=(2, 3), name="x")
    with pytest.raises(ValueError, match=r"Reshape\{ndim=2\}: cannot reshape x .*6 elements.* to \(4, 2\)"):
        st.reshape(x, (4, 2))
    with pytest.raises(ValueError, match=r"cannot reshape x .* to \(4, -1\)"):
        st.reshape(x, (4, -1))
    with pytest.raises(ValueError, match="at most one -1"):
        st.reshape(x, (-1, -1))
    with pytest.raises(ValueError, match="at most one -1"):
        st.reshape(x, (-2, 3))
    with pytest.raises(TypeError, match="shape entries must be ints or integer scalars"):
        st.reshape(x, (2.0, 3))
    with pytest.raises(TypeError, match="integer scalars, received f"):
        st.reshape(x, (st.dscalar("f"), 3))
    with pytest.raises(TypeError, match="vector of integers"):
        st.reshape(x, st.dvector("v"), ndim=1)
    with pytest.raises(ValueError, match="not static; pass ndim"):
        st.reshape(x, st.lvector("v"))
    with pytest.raises(ValueError, match="ndim=3 but the shape"):
        st.reshape(x, (6,), ndim=3)
    y = st.dmatrix("y")
    with pytest.raises(ValueError, match=r"Reshape\{ndim=1\}: cannot reshape an array of shape \(2, 3\) to \(5,\)"):
        st.reshape(y, (5,)).eval({y: np.zeros((2, 3))})
    shp = st.lvector("shp")
    with pytest.raises(ValueError, match=r"the value has shape \(3,\), expected \(2,\)"):
        st.reshape(y, shp, ndim=2).eval({y: np.zeros((2, 3)), shp: [1, 2, 3]})


@pytest.mark.parametrize("new_shape", [(3, 2), (-1,), (1, 6, 1)])
def test_reshape_grad(new_shape):
    from symlab.gradient import verify_grad

    verify_grad(lambda x: st.reshape(x, new_shape) * 2.0, [data((2, 3))], rng=np.random.default_rng(0))


def test_reshape_grad_types():
    x = st.dmatrix("x")
    out = st.reshape(x, (-1,))
    g = st.dvector("g")
    gx, gshp = out.owner.op.L_op(out.owner.inputs, [out], [g])
    assert gx.type == x.type
    assert isinstance(gshp.type, DisconnectedType)
    value = data((2, 3))
    np.testing.assert_array_equal(gx.eval({x: value, g: np.arange(6.0)}), np.arange(6.0).reshape(2, 3))


# -- flatten --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "in_shape, ndim",
    [((2, 3, 4), 1), ((2, 3, 4), 2), ((2, 3, 4), 3), ((0, 3, 4), 2), ((3, 0, 4), 1), ((), 1), ((5,), 1)],
)
def test_flatten_values(in_shape, ndim):
    x = st.tensor("float32", shape=(None,) * len(in_shape), name="x")
    value = data(in_shape, "float32")
    out = st.flatten(x, ndim)
    expected = value.reshape(in_shape[: ndim - 1] + (-1,)) if value.size else value.reshape(
        in_shape[: ndim - 1] + (int(np.prod(in_shape[ndim - 1 :])),)
    )
    got = out.eval({x: value})
    assert got.dtype == np.float32 and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    assert out.ndim == ndim


def test_flatten_static_and_errors():
    x = st.tensor("float64", shape=(2, None, 4), name="x")
    assert st.flatten(x).type.shape == (None,)
    assert st.flatten(x, 2).type.shape == (2, None)
    assert st.flatten(x, 3).type.shape == (2, None, 4)
    assert st.flatten(st.tensor("float64", shape=(2, 3, 4)), 2).type.shape == (2, 12)
    assert st.flatten(st.dscalar()).type.shape == (1,)
    with pytest.raises(ValueError, match="flatten: ndim must be between 1 and 3"):
        st.flatten(x, 4)
    with pytest.raises(ValueError, match="flatten: ndim must be between 1 and 3"):
        st.flatten(x, 0)


def test_flatten_grad():
    from symlab.gradient import verify_grad

    verify_grad(lambda x: st.flatten(x, 2) ** 2, [data((2, 3, 2))], rng=np.random.default_rng(0))


# -- expand_dims / squeeze ----------------------------------------------------------------


@pytest.mark.parametrize("in_shape, axis", [((2, 3), 0), ((2, 3), -1), ((2, 3), (0, 3)), ((), 0), ((0,), (1, 0))])
def test_expand_dims(in_shape, axis):
    x = st.tensor("int32", shape=(None,) * len(in_shape), name="x")
    value = data(in_shape, "int32")
    out = st.expand_dims(x, axis)
    expected = np.expand_dims(value, axis)
    np.testing.assert_array_equal(out.eval({x: value}), expected)
    assert out.eval({x: value}).shape == expected.shape
    assert out.type.shape == tuple(1 if n == 1 and len(expected.shape) > len(in_shape) and s is None else s
                                   for s, n in zip(out.type.shape, expected.shape))
    assert all(out.type.shape[a] == 1 for a in np.atleast_1d(np.array(axis) % expected.ndim))


def test_expand_dims_errors():
    x = st.dmatrix("x")
    with pytest.raises(ValueError, match="expand_dims: axis 3 is out of range"):
        st.expand_dims(x, 3)
    with pytest.raises(ValueError, match="repeated axis"):
        st.expand_dims(x, (0, 0))


def test_squeeze():
    x = st.tensor("float64", shape=(1, None, 1, 3), name="x")
    value = data((1, 2, 1, 3))
    out = st.squeeze(x)
    assert out.type.shape == (None, 3)
    np.testing.assert_array_equal(out.eval({x: value}), np.squeeze(value))
    out = x.squeeze(axis=-2)
    assert out.type.shape == (1, None, 3)
    np.testing.assert_array_equal(out.eval({x: value}), np.squeeze(value, -2))
    assert st.squeeze(x, (0, 2)).type.shape == (None, 3)
    y = st.dmatrix("y")
    assert st.squeeze(y) is y
    s = st.tensor("float64", shape=(1, 1))
    assert st.squeeze(s).type.shape == ()


def test_squeeze_errors():
    x = st.tensor("float64", shape=(1, None, 3), name="x")
    with pytest.raises(ValueError, match=r"squeeze: cannot remove dimension 1 of x .*static size is unknown, not 1"):
        st.squeeze(x, 1)
    with pytest.raises(ValueError, match=r"dimension 2 .*static size is 3, not 1"):
        st.squeeze(x, (0, 2))
    with pytest.raises(ValueError, match="squeeze: axis 3 is out of range"):
        st.squeeze(x, 3)


def test_expand_squeeze_grad():
    from symlab.gradient import verify_grad

    verify_grad(lambda x: st.squeeze(st.expand_dims(x, (0, 2))) * 3.0, [data((2, 3))], rng=np.random.default_rng(0))


def test_shape_api_unchanged():
    x = st.dmatrix("x")
    assert st.shape(x).type.shape == (2,)
    assert st.specify_shape(x, (2, None)).type.shape == (2, None)
