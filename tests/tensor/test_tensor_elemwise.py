"""Elemwise and DimShuffle: values against NumPy, dtypes, broadcasting, errors, gradients."""

import numpy as np
import pytest
import scipy.special

import symlab.tensor as T
from symlab.gradient import verify_grad
from symlab.tensor.type import TensorType

RNG = np.random.default_rng(42)

# name -> (NumPy reference, domain of test values)
UNARY = {
    "neg": (np.negative, "any"),
    "abs": (np.abs, "any"),
    "sign": (np.sign, "any"),
    "sqr": (np.square, "any"),
    "reciprocal": (np.reciprocal, "positive"),
    "exp": (np.exp, "any"),
    "exp2": (np.exp2, "any"),
    "expm1": (np.expm1, "any"),
    "log": (np.log, "positive"),
    "log2": (np.log2, "positive"),
    "log10": (np.log10, "positive"),
    "log1p": (np.log1p, "positive"),
    "sqrt": (np.sqrt, "positive"),
    "sigmoid": (scipy.special.expit, "any"),
    "softplus": (lambda x: np.logaddexp(0, x), "any"),
    "sin": (np.sin, "any"),
    "cos": (np.cos, "any"),
    "tan": (np.tan, "unit"),
    "arcsin": (np.arcsin, "unit"),
    "arccos": (np.arccos, "unit"),
    "arctan": (np.arctan, "any"),
    "sinh": (np.sinh, "any"),
    "cosh": (np.cosh, "any"),
    "tanh": (np.tanh, "any"),
    "erf": (scipy.special.erf, "any"),
    "erfc": (scipy.special.erfc, "any"),
    "gamma": (scipy.special.gamma, "positive"),
    "gammaln": (scipy.special.gammaln, "positive"),
    "floor": (np.floor, "any"),
    "ceil": (np.ceil, "any"),
    "round": (np.round, "any"),
    "isnan": (np.isnan, "any"),
    "isinf": (np.isinf, "any"),
}
BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "true_div": np.true_divide,
    "int_div": np.floor_divide,
    "mod": np.mod,
    "pow": np.power,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "arctan2": np.arctan2,
    "lt": np.less,
    "gt": np.greater,
    "le": np.less_equal,
    "ge": np.greater_equal,
    "eq": np.equal,
    "neq": np.not_equal,
}
DIFFERENTIABLE_UNARY = [
    n for n in UNARY if n not in ("sign", "floor", "ceil", "round", "isnan", "isinf")
]


def sample(shape, dtype, domain="any"):
    if domain == "positive":
        values = RNG.uniform(0.5, 3.0, size=shape)
    elif domain == "unit":
        values = RNG.uniform(-0.9, 0.9, size=shape)
    else:
        values = RNG.uniform(-3.0, 3.0, size=shape)
    return values.astype(dtype)


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3)])
def test_unary_values(name, dtype, shape):
    reference, domain = UNARY[name]
    x = T.tensor(dtype, shape=(None,) * len(shape), name="x")
    value = sample(shape, dtype, domain)
    out = getattr(T, name)(x)
    result = out.eval({x: value})
    expected = np.asarray(reference(value))
    assert result.dtype == expected.dtype, (result.dtype, expected.dtype)
    assert out.dtype == expected.dtype.name
    assert result.shape == expected.shape
    np.testing.assert_allclose(result, expected, rtol=1e-5 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize(
    "dtypes", [("float64", "float64"), ("float32", "float64"), ("int32", "float32"), ("int64", "int64"), ("int8", "int16")]
)
def test_binary_values_and_dtypes(name, dtypes):
    a = T.tensor(dtypes[0], shape=(None, None), name="a")
    b = T.tensor(dtypes[1], shape=(None,), name="b")
    av = sample((2, 3), "float64", "positive").astype(dtypes[0]) + 1
    bv = sample((3,), "float64", "positive").astype(dtypes[1]) + 1
    out = getattr(T, name)(a, b)
    result = out.eval({a: av, b: bv})
    with np.errstate(all="ignore"):
        expected = BINARY[name](av, bv)
    assert result.dtype == expected.dtype and out.dtype == expected.dtype.name
    np.testing.assert_allclose(result, expected, rtol=1e-6)


def test_ternary_ops():
    x = T.dvector("x")
    v = np.array([-2.0, 0.5, 3.0])
    np.testing.assert_array_equal(T.clip(x, -1.0, 1.0).eval({x: v}), np.clip(v, -1, 1))
    np.testing.assert_array_equal(T.switch(x > 0, x, 0.0).eval({x: v}), np.where(v > 0, v, 0))
    np.testing.assert_array_equal(T.where(x > 0, 1.0, x).eval({x: v}), np.where(v > 0, 1.0, v))


def test_bitwise_and_logic():
    a, b = T.ivectors("a", "b")
    av, bv = np.array([1, 6, 3], "int32"), np.array([3, 5, 0], "int32")
    np.testing.assert_array_equal((a & b).eval({a: av, b: bv}), av & bv)
    np.testing.assert_array_equal((a | b).eval({a: av, b: bv}), av | bv)
    np.testing.assert_array_equal((a ^ b).eval({a: av, b: bv}), av ^ bv)
    np.testing.assert_array_equal((~a).eval({a: av}), ~av)
    with pytest.raises(TypeError, match=r"Elemwise\{and_,no_inplace\}.*not accepted"):
        T.dvector("f") & T.dvector("g")


def test_operators_build_the_right_ops():
    x, y = T.dvectors("x", "y")
    xv, yv = np.array([1.0, -2.0]), np.array([3.0, 4.0])
    cases = {
        x + y: xv + yv, x - y: xv - yv, x * y: xv * yv, x / y: xv / yv, x // y: xv // yv, x % y: xv % yv,
        x**2: xv**2, -x: -xv, abs(x): np.abs(xv), 2.0 - x: 2.0 - xv, 1.0 / x: 1.0 / xv, 2.0**y: 2.0**yv,
        x < y: xv < yv, x >= y: xv >= yv,
    }
    for expr, expected in cases.items():
        np.testing.assert_array_equal(expr.eval({x: xv, y: yv}), expected)


def test_weak_python_scalars_follow_numpy2():
    assert (T.fvector() + 1.0).dtype == "float32"
    assert (T.ivector() + 1).dtype == "int32"
    assert (T.bvector() * 2).dtype == "int8"
    assert (T.ivector() + 1.5).dtype == "float64"
    assert (T.fvector() + T.constant(np.float64(1.0))).dtype == "float64"  # a NumPy scalar is not weak
    assert T.add(1, 2).dtype == "int64"
    f = T.fvector("f")
    assert (f + 1.0).eval({f: np.ones(2, "float32")}).dtype == np.float32
    with pytest.raises(TypeError, match="out of bounds|not accepted"):
        T.bvector() + 1000


def test_broadcasting_is_explicit():
    x = T.dmatrix("x")
    v = T.dvector("v")
    out = x + v
    assert isinstance(out.owner.inputs[1].owner.op, T.DimShuffle)
    assert out.owner.inputs[1].type == TensorType("float64", (1, None))
    xv, vv = np.ones((2, 3)), np.arange(3.0)
    np.testing.assert_array_equal(out.eval({x: xv, v: vv}), xv + vv)
    row = T.drow("r")
    np.testing.assert_array_equal((x * row).eval({x: xv, row: vv[None]}), xv * vv)


def test_static_shapes():
    a = T.tensor("float64", shape=(2, None), name="a")
    b = T.tensor("float64", shape=(None, 3), name="b")
    assert (a + b).type.shape == (2, 3)
    c = T.tensor("float64", shape=(1, 1), name="c")
    assert (c + c).type.shape == (1, 1)
    assert (a + c).type.shape == (2, None)
    with pytest.raises(ValueError, match=r"static sizes \[2, 3\] in dimension 0 cannot broadcast"):
        T.tensor("float64", shape=(2,)) + T.tensor("float64", shape=(3,))


def test_runtime_broadcasting_of_non_broadcastable_dims_is_refused():
    x, y = T.dvectors("x", "y")
    with pytest.raises(ValueError, match="do not match in dimension 0"):
        (x + y).eval({x: np.ones(3), y: np.ones(1)})


def test_empty_and_zero_d():
    x = T.dmatrix("x")
    assert (x * 2.0).eval({x: np.ones((0, 3))}).shape == (0, 3)
    s = T.dscalar("s")
    result = (s + 1.0).eval({s: 2.0})
    assert result.shape == () and result == 3.0


def test_cast():
    x = T.dvector("x")
    assert T.cast(x, "float64") is x
    y = T.cast(x, "int32")
    assert y.dtype == "int32" and str(y.owner.op) == "Elemwise{Cast{int32},no_inplace}"
    np.testing.assert_array_equal(y.eval({x: np.array([1.7, -1.7])}), [1, -1])
    assert x.astype("float32").dtype == "float32"


def test_dimshuffle():
    x = T.tensor("float64", shape=(None, 1, None), name="x")
    v = np.arange(6.0).reshape(2, 1, 3)
    y = x.dimshuffle(2, "x", 0)
    assert y.type.shape == (None, 1, None)
    np.testing.assert_array_equal(y.eval({x: v}), v[:, 0, :].T[:, None, :])
    np.testing.assert_array_equal(x.dimshuffle(0, 2).eval({x: v}), v[:, 0, :])
    m = T.dmatrix("m")
    mv = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(m.T.eval({m: mv}), mv.T)
    np.testing.assert_array_equal(m.transpose(1, 0).eval({m: mv}), mv.T)
    with pytest.raises(ValueError, match="only dimensions of static size 1 can be dropped"):
        m.dimshuffle(0)
    with pytest.raises(ValueError, match="appears twice"):
        m.dimshuffle(0, 0)
    with pytest.raises(ValueError, match="pattern entries"):
        m.dimshuffle(0, 2)
    assert str(T.DimShuffle(2, (1, 0))) == "DimShuffle{1,0}"


def test_dimshuffle_gradient():
    verify_grad(lambda a: a.dimshuffle(1, "x", 0), [RNG.random((2, 3))], rng=RNG)
    verify_grad(lambda a: a.dimshuffle(1), [RNG.random((1, 3))], rng=RNG)


@pytest.mark.parametrize("name", DIFFERENTIABLE_UNARY)
def test_unary_gradients(name):
    _, domain = UNARY[name]
    verify_grad(lambda a: getattr(T, name)(a), [sample((2, 3), "float64", domain)], rng=RNG)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "true_div", "pow", "maximum", "minimum", "arctan2", "mod"])
def test_binary_gradients_with_broadcasting(name):
    a = sample((2, 3), "float64", "positive")
    b = sample((3,), "float64", "positive") + 0.1
    verify_grad(lambda p, q: getattr(T, name)(p, q), [a, b], rng=RNG)
    verify_grad(lambda p, q: getattr(T, name)(p, q), [a, sample((1, 3), "float64", "positive")], rng=RNG)


def test_ternary_and_misc_gradients():
    v = np.array([-2.0, 0.1, 0.5, 3.0])
    verify_grad(lambda a: T.clip(a, -1.0, 1.0), [v], rng=RNG)
    verify_grad(lambda a: T.switch(a > 0, a * 2.0, a**2), [v], rng=RNG)
    verify_grad(lambda a: a * (a > 0), [v], rng=RNG)  # relu
    verify_grad(lambda a: T.cast(a, "float32") * 2.0, [v], rng=RNG, abs_tol=1e-3, rel_tol=1e-3)


def test_float32_gradients():
    verify_grad(lambda a: T.tanh(a) * a, [sample((3,), "float32")], rng=RNG)


# -- clip of a signed zero: NumPy's result for scalar bounds, the same bits in every mode --------------------
CLIP_VALUES = [-0.0, 0.0, np.nan, 1.0, -1.0, -np.inf, np.inf, 3.0]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("size", [1, 2, 9])
def test_clip_with_scalar_bounds_has_numpys_bits(dtype, size):
    """NumPy's clip with scalar bounds keeps x where lo <= x <= hi: clip(-0.0, 0.0, 3.0) is -0.0 (its loop for
    array bounds gives the bound, 0.0). A one-element x is NumPy's scalar-bounds result too."""
    x = T.tensor(dtype, shape=(None,), name="x")
    v = np.array((CLIP_VALUES * 2)[:size], dtype=dtype)
    for lo, hi in [(0.0, 3.0), (-0.0, 3.0), (-1.0, 0.0), (-1.0, -0.0), (3.0, 0.0), (np.nan, 3.0), (0.0, np.nan)]:
        got = T.clip(x, np.asarray(lo, dtype), np.asarray(hi, dtype)).eval({x: v})
        want = np.clip(v, np.asarray(lo, dtype), np.asarray(hi, dtype))
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want), err_msg=f"clip({v}, {lo}, {hi})")


def test_clip_with_array_bounds_is_the_scalar_bounds_result_element_by_element():
    """With bounds of x's shape, each element is clipped as by scalar bounds: x where lo <= x <= hi (NumPy's
    own loop for such bounds returns the bound where x equals it, and takes one loop or the other by how
    its iterator lays out the bounds, not by their values); NaN where x or a bound is NaN."""
    import itertools

    combos = np.array(list(itertools.product(CLIP_VALUES, repeat=3)))
    x, lo, hi = T.dvectors("x", "lo", "hi")
    got = T.clip(x, lo, hi).eval({x: combos[:, 0], lo: combos[:, 1], hi: combos[:, 2]})
    want = np.array([np.clip(np.array([a]), b, c)[0] for a, b, c in combos])  # one element, scalar bounds
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.numba
def test_clip_numba_kernels_have_the_numpy_modes_bits():
    import itertools
    import warnings

    import symlab

    combos = np.array(list(itertools.product(CLIP_VALUES, repeat=3)))
    x, lo, hi = T.dvectors("x", "lo", "hi")
    outs = [T.clip(x, lo, hi), T.clip(x, 0.0, 3.0), T.clip(x * 1.5, -0.0, 1.0) + 1.0, T.exp(T.clip(x, 0.0, 3.0))]
    values = [combos[:, 0].copy(), combos[:, 1].copy(), combos[:, 2].copy()]
    results = {}
    for mode in ("NUMPY", "NUMBA"):
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)  # every node has its kernel
            f = symlab.function([x, lo, hi], outs, mode=mode)
        results[mode] = [f(*values), f(*(v[:1] for v in values))]  # and a one-element x
    for numpy_out, numba_out in zip(results["NUMPY"], results["NUMBA"]):
        for a, b in zip(numpy_out, numba_out):
            np.testing.assert_array_equal(a, b)
            np.testing.assert_array_equal(np.signbit(a), np.signbit(b))
