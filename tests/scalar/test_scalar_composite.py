"""Composite: a scalar op made of an inner graph of scalar ops."""

import math

import numpy as np
import pytest

import symlab.scalar as ss
import symlab.tensor as st
from symlab.graph.basic import Constant
from symlab.graph.evaluate import evaluate
from symlab.scalar import Composite
from symlab.scalar.composite import composite_of
from symlab.tensor.elemwise import Elemwise


def seed_composite(dtype="float64"):
    x = ss.get_scalar_type(dtype)("x")
    return Composite([x], [ss.add(x, ss.pow(x, Constant(ss.int64, 10)))])


def test_seed_003_string_and_values():
    c = seed_composite()
    assert str(c) == "Composite{(i0 + (i0 ** 10))}"
    assert c.name == str(c)
    assert (c.nin, c.nout) == (1, 1)
    assert str(Elemwise(c)) == "Elemwise{Composite{(i0 + (i0 ** 10))},no_inplace}"
    np.testing.assert_array_equal(c.impl(np.array([0.0, 1.0, 2.0])), [0.0, 2.0, 1026.0])
    assert c.output_dtype("float64") == "float64"


def test_names_use_symbols_and_function_calls():
    a, b = ss.float64("a"), ss.float64("b")
    c = Composite([a, b], [ss.exp(ss.neg(a)), ss.maximum(a, ss.true_div(a, b))])
    assert str(c) == "Composite{exp((-i0)), maximum(i0, (i0 / i1))}"
    cast = Composite([a], [ss.Cast("float32")(a)])
    assert str(cast) == "Composite{Cast{float32}(i0)}"


def test_equal_computations_are_equal_ops_with_equal_hashes():
    c1, c2 = seed_composite(), seed_composite()
    assert c1 is not c2 and c1 == c2 and hash(c1) == hash(c2)
    assert Elemwise(c1) == Elemwise(c2) and hash(Elemwise(c1)) == hash(Elemwise(c2))
    assert seed_composite("float32") != c1  # another input dtype
    x = ss.float64("x")
    assert Composite([x], [ss.add(x, ss.pow(x, Constant(ss.int64, 11)))]) != c1  # another constant
    assert Composite([x], [ss.add(x, ss.pow(x, Constant(ss.int32, 10)))]) != c1  # another constant dtype
    assert Composite([x], [ss.mul(x, ss.pow(x, Constant(ss.int64, 10)))]) != c1  # another op
    y = ss.float64("y")
    assert Composite([x, y], [ss.sub(x, y)]) != Composite([y, x], [ss.sub(x, y)])  # inputs swapped


def test_inner_graph_is_copied_and_inputs_named():
    x = ss.float64("x")
    out = ss.exp(x)
    c = Composite([x], [out])
    assert c.inputs[0] is not x and c.inputs[0].name == "i0"
    assert c.outputs[0] is not out and out.owner.inputs[0] is x


def test_nested_composite_is_inlined():
    inner = seed_composite()
    a = ss.float64("a")
    nested = Composite([a], [ss.exp(inner(a))])
    x = ss.float64("x")
    flat = Composite([x], [ss.exp(ss.add(x, ss.pow(x, Constant(ss.int64, 10))))])
    assert nested == flat
    assert all(type(n.op) is not Composite for n in nested.nodes)


def test_multi_output_dtypes_values_and_elemwise():
    x, y = ss.float32("x"), ss.int64("y")
    c = Composite([x, y], [ss.mul(x, y), ss.lt(x, y), ss.add(y, Constant(ss.int64, 1))])
    assert c.output_dtypes("float32", "int64") == ("float64", "bool", "int64")
    with pytest.raises(TypeError, match="output_dtypes"):
        c.output_dtype("float32", "int64")
    with pytest.raises(TypeError, match="must have dtype float32"):
        c.output_dtypes("float64", "int64")
    xv, yv = np.array([1.5, -2.0], dtype="float32"), np.array([2, 3])
    p, q, r = c.impl(xv, yv)
    np.testing.assert_array_equal(p, xv.astype("float64") * yv)
    assert p.dtype == "float64" and q.dtype == "bool" and r.dtype == "int64"
    np.testing.assert_array_equal(q, [True, True])
    tx, ty = st.fvector("tx"), st.lvector("ty")
    outs = Elemwise(c)(tx, ty)
    assert all(o.type.shape == (None,) for o in outs)
    assert [o.dtype for o in outs] == ["float64", "bool", "int64"]
    values = evaluate(outs, {tx: xv, ty: yv})
    for got, want in zip(values, (p, q, r)):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_scalar_graph_evaluation_with_perform():
    x = ss.float64("x")
    c = Composite([x], [ss.exp(x), ss.neg(x)])
    outs = c(x)
    values = evaluate(outs, {x: 1.0})
    assert values == [pytest.approx(math.e), -1.0]


def test_outputs_get_the_broadcast_shape_and_do_not_alias_inputs():
    a, b = ss.float64("a"), ss.float64("b")
    c = Composite([a, b], [ss.exp(Constant(ss.float64, 0.0)), a])
    av, bv = np.ones((2, 1)), np.ones((1, 3))
    const, same = c.impl(av, bv)
    np.testing.assert_array_equal(const, np.ones((2, 3)))
    assert same.shape == (2, 3)
    single = Composite([a], [a]).impl(av)
    assert not np.shares_memory(single, av)


def test_intermediates_are_cast_like_the_unfused_graph():
    # float32 * float64-constant is computed in float64 and cast to float32 at each step
    x = ss.float32("x")
    t = ss.mul(x, Constant(ss.float64, 0.1))
    t = ss.Cast("float32")(t)
    c = Composite([x], [ss.add(t, t)])
    xv = np.array([1.0, 3.0, 7.0], dtype="float32")
    expected = np.asarray(xv * np.float64(0.1), dtype="float32")
    expected = expected + expected
    got = c.impl(xv)
    assert got.dtype == "float32"
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
def test_python_source_compiles_and_matches_impl_on_scalars(dtype):
    x, y = ss.get_scalar_type(dtype)("x"), ss.get_scalar_type(dtype)("y")
    outs = [
        ss.add(ss.mul(x, y), ss.pow(x, Constant(ss.int64, 2))),
        ss.maximum(ss.sub(x, y), ss.neg(y)),
        ss.switch(ss.lt(x, y), x, y),
        ss.abs(ss.sub(y, x)),
    ]
    c = Composite([x, y], outs)
    source, namespace = c.python_source("fused")
    assert source.startswith(f"def fused(i0, i1):\n    t0 = np.{dtype}(")
    exec(source, namespace)
    fn = namespace["fused"]
    for xv, yv in [(3, 2), (-1, 4), (0, 0), (7, -5)]:
        a, b = np.asarray(xv, dtype=dtype)[()], np.asarray(yv, dtype=dtype)[()]
        got, want = fn(a, b), c.impl(a, b)
        assert len(got) == len(want) == 4
        for g, w in zip(got, want):
            assert np.asarray(g).dtype == w.dtype
            assert g == w


def test_python_source_uses_impl_for_ops_without_expr_and_namespace_constants():
    x = ss.float64("x")
    c = Composite([x], [ss.mul(ss.sigmoid(x), Constant(ss.float64, np.inf)), ss.softplus(x)])
    source, namespace = c.python_source()
    assert "impl_0(i0)" in source and "impl_1(i0)" in source and "c0" in source
    assert namespace["impl_0"] is ss.sigmoid.impl and namespace["c0"] == np.inf
    exec(source, namespace)
    for v in (-3.0, 0.0, 2.5):
        got, want = namespace["composite"](np.float64(v)), c.impl(np.float64(v))
        assert got[0] == want[0] and got[1] == pytest.approx(want[1], rel=1e-15)
    with pytest.raises(ValueError, match="identifier"):
        c.python_source("not a name")


def test_composite_of_finds_the_inputs():
    a, b = ss.float64("a"), ss.float64("b")
    assert str(composite_of([ss.mul(ss.exp(a), b)])) == "Composite{(exp(i0) * i1)}"


def test_refusals():
    x = ss.float64("x")
    with pytest.raises(TypeError, match="ScalarType"):
        Composite([st.dvector("v")], [x])
    with pytest.raises(ValueError, match="neither an input nor a constant"):
        Composite([x], [ss.add(x, ss.float64("z"))])
    with pytest.raises(ValueError, match="root variable"):
        Composite([ss.exp(x)], [x])
    c = seed_composite()
    with pytest.raises(TypeError, match="must be of type"):
        c(ss.float32("f"))
    with pytest.raises(TypeError, match="takes 1 inputs"):
        c.impl(1.0, 2.0)


def test_gradient_of_a_fused_elemwise_is_not_implemented():
    c = seed_composite()
    v = st.dvector("v")
    out = Elemwise(c)(v)
    with pytest.raises(NotImplementedError, match="unfused graph"):
        out.owner.op.L_op([v], [out], [st.ones_like(out)])


def test_long_chain_name_is_bounded():
    x = ss.float64("x")
    y = x
    for _ in range(1000):
        y = ss.add(ss.mul(y, y), x)
    c = Composite([x], [y])
    assert len(str(c)) < 300 and str(c).startswith("Composite{") and str(c).endswith("}")
    assert c == composite_of([y])


def test_impl_frees_each_intermediate_after_its_last_read():
    """A chain of ten operations holds a few arrays at a time, not all ten (NumPy reports its buffers to tracemalloc)."""
    import tracemalloc

    x = ss.float64("x")
    value = x
    for k in range(10):
        value = ss.mul(ss.add(value, Constant(ss.float64, float(k))), value) if k % 2 else ss.exp(ss.neg(value))
    keep = ss.sin(x)  # an intermediate read at the very end must stay alive until then
    c = Composite([x], [ss.add(value, keep)])
    xv = np.linspace(-1, 1, 100_000)  # 0.8 MB an array
    expected = xv.copy()
    for k in range(10):
        expected = (expected + k) * expected if k % 2 else np.exp(-expected)
    expected = expected + np.sin(xv)
    tracemalloc.start()
    try:
        result = c.impl(xv)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_allclose(result, expected, rtol=1e-12)
    assert len(c.nodes) == 22 and peak < 5 * xv.nbytes, peak  # all 22 kept alive would be 17.6 MB
    freed = [v for done in c._last_uses for v in done]
    assert len(freed) == len(set(freed)) == len(c.nodes) - 1  # every intermediate once; the output never
