"""The Type contract (seed 002), TensorType, ScalarType and the constructors."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st_

import symlab
import symlab.tensor as T
from symlab.graph.type import Type
from symlab.scalar import ScalarType
from symlab.tensor.type import TensorType


class DoubleType(Type):
    """The seed's example, as written there (with the typos fixed)."""

    def filter(self, x, strict=False, allow_downcast=None):
        if strict:
            if isinstance(x, float):
                return x
            raise TypeError("Expected a float!")
        elif allow_downcast:
            return float(x)
        else:
            x_float = float(x)
            if x_float == x:
                return x_float
            raise TypeError(
                f"The double type cannot accurately represent value {x} (of type {type(x)}): "
                "you must explicitly allow downcasting if you want to do this."
            )

    def values_eq_approx(self, x, y, tolerance=1e-4):
        return abs(x - y) / (abs(x) + abs(y)) < tolerance


def test_double_type_seed_002():
    double = DoubleType()
    assert double.filter(3) == 3.0 and isinstance(double.filter(3), float)
    with pytest.raises(TypeError, match="Expected a float"):
        double.filter(3, strict=True)
    assert double.filter(2.5, strict=True) == 2.5
    assert double.filter(np.float32(0.1), allow_downcast=True) == pytest.approx(0.1)
    with pytest.raises(TypeError, match="cannot accurately represent"):
        double.filter(2**60 + 1)  # an int that a float cannot hold exactly
    assert double.is_valid_value(1.0) and not double.is_valid_value(1)
    assert double.values_eq(1.0, 1.0)
    assert double.values_eq_approx(0.1 * 6, 0.1 + 0.1 + 0.1 + 0.1 + 0.1 + 0.1)
    # The equality caveat of the seed: two instances differ.
    double1, double2 = DoubleType(), DoubleType()
    assert double1 != double2
    assert double1 == double1 and hash(double1) == hash(double1)
    v = double("v")
    assert v.type is double and v.name == "v" and v.owner is None
    assert double.make_variable().name is None
    assert double.in_same_class(double) and not double.in_same_class(double2)
    assert double.is_super(double) is True and double.is_super(double2) is None
    assert double.convert_variable(v) is v and double2.convert_variable(v) is None
    assert double.filter_variable(v) is v
    with pytest.raises(TypeError, match="Cannot convert"):
        double2.filter_variable(v)
    c = double.filter_variable(2)
    assert c.data == 2.0
    assert double.filter_inplace(4, None) == 4.0
    assert double.may_share_memory(v, v)
    assert isinstance(double.clone(), DoubleType)


def test_tensor_type_repr_and_partial_shapes_seed_002():
    v1 = TensorType("float64", (2, None))()
    assert repr(v1.type) == "TensorType(float64, (2, ?))"
    v2 = TensorType("float64", (2, 1))()
    assert repr(v2.type) == "TensorType(float64, (2, 1))"
    assert v1.type.in_same_class(v2.type) is False
    assert v1.type.is_super(v2.type) is True
    assert v2.type.is_super(v1.type) is False
    assert v1.type.filter_variable(v2) is v2
    v3 = v2.type.filter_variable(v1)
    assert repr(v3) == "SpecifyShape.0"
    assert isinstance(v3.owner.op, T.SpecifyShape)
    assert v3.owner.inputs[0] is v1
    assert [str(i) for i in v3.owner.inputs[1:]] == ["TensorConstant{2}", "TensorConstant{1}"]
    assert v3.type == TensorType("float64", (2, 1))  # narrower than the seed's own note
    np.testing.assert_array_equal(v3.eval({v1: np.ones((2, 1))}), np.ones((2, 1)))
    with pytest.raises(ValueError, match="expected"):
        v3.eval({v1: np.ones((2, 3))})


def test_filter_variable_refusals_name_both_types():
    target = TensorType("float64", (2, None))
    for bad in [TensorType("float64", (3, None)), TensorType("float32", (2, None)), TensorType("float64", (2,))]:
        with pytest.raises(TypeError) as info:
            target.filter_variable(bad())
        assert repr(target) in str(info.value) and repr(bad) in str(info.value)


def test_tensor_type_construction():
    assert TensorType("float64", broadcastable=(False, True)).shape == (None, 1)
    t = TensorType("int32", (1, None, 3))
    assert t.ndim == 3 and t.broadcastable == (True, False, False)
    assert TensorType("float64", (2,)) == TensorType("float64", [2])
    assert hash(TensorType("float64", (2,))) == hash(TensorType("float64", (2,)))
    assert TensorType("float64", (2,)) != TensorType("float64", (None,))
    assert TensorType("float64", (2,)).clone(shape=(None,)) == TensorType("float64", (None,))
    with pytest.raises(TypeError, match="Unknown dtype"):
        TensorType("floatish", ())
    with pytest.raises(TypeError, match="non-negative ints or None"):
        TensorType("float64", (-1,))
    with pytest.raises(TypeError, match="bool"):
        TensorType("float64", (True,))
    with pytest.raises(TypeError, match="not both"):
        TensorType("float64", (1,), broadcastable=(True,))


def test_tensor_filter_semantics():
    t = TensorType("float64", (None, 2))
    out = t.filter([[1, 2]])
    assert out.dtype == np.float64 and out.shape == (1, 2)
    with pytest.raises(TypeError, match=r"expected 2 dimensions, received 1 \(an array of shape \(2,\)\)"):
        t.filter([1.0, 2.0])
    with pytest.raises(TypeError, match=r"expected static shape \(\?, 2\), received an array of shape \(1, 3\)"):
        t.filter(np.ones((1, 3)))
    with pytest.raises(TypeError, match="strict"):
        t.filter(np.ones((1, 2), dtype="float32"), strict=True)
    with pytest.raises(TypeError, match="strict"):
        t.filter([[1.0, 2.0]], strict=True)
    a = np.ones((3, 2))
    assert t.filter(a, strict=True) is a
    f32 = TensorType("float32", (None,))
    with pytest.raises(TypeError, match="loss of precision"):
        f32.filter(np.ones(2, dtype="float64"))
    assert f32.filter(np.ones(2, dtype="float64"), allow_downcast=True).dtype == np.float32
    assert f32.filter(np.ones(2, dtype="int16")).dtype == np.float32  # safe cast
    i32 = TensorType("int32", (None,))
    with pytest.raises(TypeError, match="cannot store"):
        i32.filter([1.5])
    assert i32.filter([1.0, 2.0]).dtype == np.int32  # lossless
    assert i32.filter([1.5], allow_downcast=True).tolist() == [1]
    with pytest.raises(TypeError, match="symbolic Variable"):
        t.filter(T.dmatrix("m"))
    with pytest.raises(TypeError, match="numeric value"):
        t.filter([["a", "b"]])


def test_python_float_into_floatx():
    old = symlab.config.floatX
    try:
        symlab.config.floatX = "float32"
        assert TensorType("float32", ()).filter(0.1).dtype == np.float32
        assert T.scalar("s").type == TensorType("float32", ())
    finally:
        symlab.config.floatX = old
    with pytest.raises(ValueError, match="floatX"):
        symlab.config.floatX = "int8"


def test_values_eq_approx_nan_inf_and_dtype_tolerance():
    t = TensorType("float64", (None,))
    assert t.values_eq_approx(np.array([np.nan, np.inf, -np.inf, 1.0]), np.array([np.nan, np.inf, -np.inf, 1.0 + 1e-12]))
    assert not t.values_eq_approx(np.array([np.inf]), np.array([-np.inf]))
    assert not t.values_eq_approx(np.array([1.0]), np.array([1.001]))
    f32 = TensorType("float32", (None,))
    assert f32.values_eq_approx(np.array([1.0], "float32"), np.array([1.00001], "float32"))
    assert not t.values_eq_approx(np.ones(2), np.ones(3))
    assert t.values_eq(np.ones(2), np.ones(2)) and not t.values_eq(np.ones(2), np.ones(2, dtype="float32"))


@given(st_.lists(st_.integers(0, 5), max_size=4), st_.sampled_from(["int8", "float32", "float64", "complex128", "bool"]))
def test_get_size_matches_nbytes(shape, dtype):
    a = np.zeros(shape, dtype=dtype)
    t = TensorType(dtype, (None,) * a.ndim)
    assert t.get_size(t.get_shape_info(a)) == a.nbytes


def test_may_share_memory():
    t = TensorType("float64", (None,))
    a = np.arange(4.0)
    assert t.may_share_memory(a, a[1:]) and not t.may_share_memory(a, a.copy())


def test_constructors():
    assert T.dmatrix == TensorType("float64", (None, None))
    assert T.irow == TensorType("int32", (1, None))
    assert T.fcol == TensorType("float32", (None, 1))
    assert T.bscalar == TensorType("int8", ())
    assert T.wvector == TensorType("int16", (None,))
    assert T.ltensor3 == TensorType("int64", (None,) * 3)
    assert T.ctensor4 == TensorType("complex64", (None,) * 4)
    assert T.zmatrix.dtype == "complex128"
    x = T.dmatrix("x")
    assert isinstance(x, T.TensorVariable) and x.name == "x"
    a, b = T.dvectors("a", "b")
    assert (a.name, b.name, a.type) == ("a", "b", T.dvector)
    assert [v.type for v in T.matrices("p", "q")] == [T.dmatrix, T.dmatrix]
    assert len(T.iscalars(3)) == 3
    assert T.vector("v", dtype="int8").type == T.bvector
    assert T.tensor("float32", shape=(2, None), name="t").type == TensorType("float32", (2, None))
    with pytest.raises(TypeError, match="shape"):
        T.tensor("float32")


def test_scalar_type():
    f = ScalarType("float64")
    assert repr(f) == "ScalarType(float64)" and f == ScalarType("float64")
    assert f.filter(3) == 3.0
    with pytest.raises(TypeError, match="single number"):
        f.filter([1.0, 2.0])
    assert f.values_eq_approx(1.0, 1.0 + 1e-12)
    assert f.get_size(f.get_shape_info(1.0)) == 8


def test_empty_props_make_all_instances_equal():
    class Singleton(DoubleType):
        __props__ = ()

    assert Singleton() == Singleton() and hash(Singleton()) == hash(Singleton())
    assert Singleton() != DoubleType()
    assert DoubleType() != DoubleType()  # no __props__: identity, as seed 002 says
