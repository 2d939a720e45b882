"""The fill rules (symlab.rewriting.rules.fill): no ``second``/``Alloc``/``Shape_i`` where the shape is known to
agree, the fill kept where it is not, values of the unoptimized graph, gradients of finite differences."""

import numpy as np
import pytest
from oracle import Tolerance, check_against_unoptimized

import symlab
import symlab.gradient as G
import symlab.tensor as T
from symlab.rewriting import default_db, rewrite_graph
from symlab.rewriting.rules import fill
from symlab.scalar.composite import Composite
from symlab.tensor.alloc import Alloc
from symlab.tensor.shape import Shape_i

RNG = np.random.default_rng(21)
#: rule -> (phase, a tag)
RULES = {
    "fill_useless": ("canonicalize", "fill"),
    "fill_sink": ("canonicalize", "fill"),
    "fill_static_shape": ("canonicalize", "fill"),
    "useless_alloc": ("canonicalize", "fill"),
    "fill_to_alloc": ("specialize", "fill"),
    "lift_stack_of_elemwise": ("canonicalize", "shapes"),
    "lift_dimshuffle_of_reciprocal_sum": ("canonicalize", "shapes"),
}


def op_names(fgraph):
    """Every op of the graph, the scalar ops inside fused Composites included."""
    names = []
    for node in fgraph.apply_nodes:
        names.append(type(node.op).__name__)
        scalar = getattr(node.op, "scalar_op", None)
        if isinstance(scalar, Composite):
            names += [n.op.name for n in scalar.nodes]
        elif scalar is not None:
            names.append(scalar.name)
    return names


def compiled(inputs, outputs, mode="NUMPY"):
    f = symlab.function(inputs, outputs, mode=mode)
    return f, op_names(f.maker.fgraph)


def assert_same_as_unoptimized(inputs, outputs, values):
    # NaN and inf in the same places; other rules (sigmoid written out...) may round differently
    check_against_unoptimized(inputs, outputs, values, Tolerance.uniform(1e-12, 1e-300))


def finite_difference_grad(f, x, eps=1e-6):
    out = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        plus, minus = x.copy(), x.copy()
        plus[idx] += eps
        minus[idx] -= eps
        out[idx] = (f(plus) - f(minus)) / (2 * eps)
    return out


def test_rules_are_registered_in_their_phase_with_their_reason():
    for name, (phase, tag) in RULES.items():
        entry = default_db[name]
        assert entry.phase == phase and "fast_run" in entry.words and tag in entry.words
        reason = entry.rewriter.describe()
        assert reason and reason == entry.rewriter.__doc__.strip().splitlines()[0]


@pytest.mark.parametrize("cost", [
    lambda x: ((2 * x) ** 2).sum(),
    lambda x: T.tanh(x).sum(),
    lambda x: T.exp(x).sum(),
    lambda x: T.log(x).sum(),
    lambda x: (x ** 3).sum(),
    lambda x: T.sigmoid(x).sum(),
    lambda x: (T.sin(x) * T.cos(x)).sum(),
    lambda x: T.log(T.exp(x).sum()),
])
def test_gradients_compile_without_fill_and_match_finite_differences(cost):
    x = T.dvector("x")
    g = symlab.grad(cost(x), x)
    f, ops = compiled([x], g)
    assert "second" not in ops and "Alloc" not in ops and "Shape_i" not in ops, ops
    value = RNG.uniform(0.3, 1.5, size=5)
    c = symlab.function([x], cost(x), mode="NUMPY")
    np.testing.assert_allclose(f(value), finite_difference_grad(lambda v: float(c(v)), value), rtol=1e-6, atol=1e-8)
    assert_same_as_unoptimized([x], g, [value])


def test_issue_example_grad_of_square():
    x = T.dvector("x")
    f, ops = compiled([x], symlab.grad(((2 * x) ** 2).sum(), x))
    assert "second" not in ops
    value = RNG.normal(size=4)
    np.testing.assert_allclose(f(value), 8 * value)


def test_sub_self_vanishes_in_a_sum_without_shape_ops():
    x, y = T.dvectors("x", "y")
    f, ops = compiled([x, y], x - x + y)
    assert ops == []  # the output is y itself
    assert_same_as_unoptimized([x, y], x - x + y, [RNG.normal(size=3), RNG.normal(size=3)])
    out, trace = rewrite_graph(x - x + y, include=("canonicalize",))
    assert out is trace.fgraph.inputs[1]
    assert "sub_self" in [s.rule for s in trace]


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_sub_self_keeps_the_dtype(dtype):
    x, y = T.vector("x", dtype=dtype), T.vector("y", dtype=dtype)
    f, ops = compiled([x, y], x - x + y)
    a, b = np.arange(3).astype(dtype), np.arange(3, 6).astype(dtype)
    out = f(a, b)
    assert out.dtype == dtype and ops == []
    np.testing.assert_array_equal(out, b)
    g, _ = compiled([x], x - x)
    zeros = g(a)
    assert zeros.dtype == dtype and zeros.shape == (3,) and not zeros.any()


def test_sub_self_keeps_the_broadcast_shape():
    """x - x + v with x a matrix: v alone is a row, the result a matrix: x's shape is kept, as a fill."""
    x, v = T.dmatrix("x"), T.dvector("v")
    f, ops = compiled([x, v], x - x + v)
    assert "Alloc" not in ops and "Shape_i" not in ops
    assert "second" in ops  # v broadcast to x's shape, known only at run time
    a, b = RNG.normal(size=(3, 4)), RNG.normal(size=4)
    np.testing.assert_array_equal(f(a, b), np.broadcast_to(b, (3, 4)))
    assert_same_as_unoptimized([x, v], x - x + v, [a, b])


def test_fill_kept_where_the_shape_is_only_known_at_run_time():
    """The gradient of a matrix's sum is ones of its shape: the shape only the input gives at run time."""
    x = T.dmatrix("x")
    f, ops = compiled([x], symlab.grad(x.sum(), x))
    assert ops.count("second") == 1
    assert np.array_equal(f(np.zeros((2, 5))), np.ones((2, 5)))
    assert f(np.zeros((0, 3))).shape == (0, 3)


def test_fill_of_a_static_shape_becomes_a_constant():
    z = T.tensor("float64", shape=(3,), name="z")
    out, trace = rewrite_graph(symlab.grad(z.sum(), z), include=("canonicalize",))
    assert "fill_static_shape" in [s.rule for s in trace]
    assert not trace.fgraph.apply_nodes
    np.testing.assert_array_equal(out.data, np.ones(3))


def test_fill_sink_adds_no_node_when_the_fill_has_other_clients():
    x, y = T.dmatrix("x"), T.dscalar("y")
    filled = T.second(x, y)
    out, trace = rewrite_graph([T.exp(filled), filled * 2.0], include=("canonicalize",))
    ops = sorted(str(n.op) for n in trace.fgraph.apply_nodes)
    assert ops == ["DimShuffle{x,x}", "Elemwise{exp,no_inplace}", "Elemwise{mul,no_inplace}",
                   "Elemwise{second,no_inplace}"]  # one fill, shared; no second fill made per client


def test_useless_alloc():
    x = T.dvector("x")
    out, trace = rewrite_graph(T.alloc(x, T.shape_i(x, 0)) * 2.0, include=("canonicalize",))
    assert not any(isinstance(n.op, Alloc | Shape_i) for n in trace.fgraph.apply_nodes)
    assert "useless_alloc" in [s.rule for s in trace]
    s, n = T.dscalar("s"), T.lscalar("n")
    out, trace = rewrite_graph(T.alloc(s, n), include=("canonicalize",))
    assert isinstance(out.owner.op, Alloc)  # a scalar made a vector: not useless


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gradient_dtype_kept(dtype):
    x = T.vector("x", dtype=dtype)
    g = symlab.grad(T.tanh(x).sum(), x)
    f, ops = compiled([x], g)
    value = RNG.normal(size=4).astype(dtype)
    assert f(value).dtype == dtype and "second" not in ops
    assert_same_as_unoptimized([x], g, [value])


def test_values_with_nan_and_inf_are_those_of_the_unoptimized_graph():
    """The fill rules read shapes, never values: exact with NaN and inf (x - x is not among these cases)."""
    x, y = T.dvectors("x", "y")
    m = T.dmatrix("m")
    value = np.array([np.nan, np.inf, -np.inf, 0.0, -1.5, 2.0])
    other = np.array([1.0, np.nan, 2.0, -np.inf, 0.5, np.inf])
    cases = [
        ([x], symlab.grad(T.tanh(x).sum(), x), [value]),
        ([x], symlab.grad(((2 * x) ** 2).sum(), x), [value]),
        ([x, y], symlab.grad((x * y).sum(), [x, y]), [value, other]),
        ([x, y], T.second(x, 1.0) * y + T.second(y, 0.0), [value, other]),
        ([m], symlab.grad((m * m).sum(), m), [value.reshape(2, 3)]),
    ]
    for inputs, outputs, values in cases:
        assert_same_as_unoptimized(inputs, outputs, values)


def test_hessian_and_jacobian_of_small_functions():
    z = T.tensor("float64", shape=(3,), name="z")
    value = np.array([0.5, -1.0, 2.0])
    h = G.hessian((z ** 3).sum(), z)
    f, ops = compiled([z], h)
    assert "second" not in ops and "IncSubtensor" not in ops and "Join" not in ops
    assert len(f.maker.fgraph.apply_nodes) <= 2  # PyTensor FAST_RUN: 2 nodes
    np.testing.assert_allclose(f(value), np.diag(6 * value))
    assert_same_as_unoptimized([z], h, [np.array([np.nan, np.inf, -2.0])])
    j = G.jacobian(T.exp(z), z)
    f, ops = compiled([z], j)
    assert "Join" not in ops
    np.testing.assert_allclose(f(value), np.diag(np.exp(value)))


def test_zeros_shaped_like():
    x = T.ivector("x")
    z = fill.zeros_shaped_like(x)
    assert z.type == x.type
    assert np.array_equal(z.eval({x: np.array([4, 5], dtype="int32")}), np.zeros(2, dtype="int32"))


def test_x_minus_x_of_an_expensive_x_is_not_computed():
    """x - x is a fill of x; when nothing else needs x, the fill becomes an Alloc of the shapes upstream."""
    a = T.dmatrix("a")
    x = T.exp(a) @ a
    f, ops = compiled([a], x - x)
    assert "Dot" not in ops and "second" not in ops and "exp" not in ops, ops
    out = f(np.ones((2, 2)))
    assert out.dtype == "float64" and np.array_equal(out, np.zeros((2, 2)))
    b = T.dmatrix("b")
    f, ops = compiled([a, b], [x - x + b, x])  # x is computed anyway: the fill stays (no shape ops)
    assert "Alloc" not in ops and "Shape_i" not in ops


def test_lift_stack_of_elemwise():
    z = T.tensor("float64", shape=(3,), name="z")
    out, trace = rewrite_graph(T.stack([z * 2.0, z * 3.0]), include=("canonicalize",))
    assert "lift_stack_of_elemwise" in [s.rule for s in trace]
    assert not any(type(n.op).__name__ == "Join" for n in trace.fgraph.apply_nodes)
    value = np.array([1.0, np.nan, -np.inf])
    np.testing.assert_array_equal(out.eval({trace.fgraph.inputs[0]: value}), np.stack([value * 2, value * 3]))
    y = T.tensor("float64", shape=(3,), name="y")
    out, trace = rewrite_graph(T.stack([T.exp(z), T.exp(y)]), include=("canonicalize",))
    assert "lift_stack_of_elemwise" not in [s.rule for s in trace]  # nothing shared: the Join stays
    out, trace = rewrite_graph(T.stack([T.exp(z), T.log(z)]), include=("canonicalize",))
    assert "lift_stack_of_elemwise" not in [s.rule for s in trace]  # different ops


def test_gradient_of_logsumexp_is_a_softmax():
    x = T.dvector("x")
    g = symlab.grad(T.log(T.exp(x).sum()), x)
    f, ops = compiled([x], g)
    assert ops == ["Softmax"], ops
    value = RNG.normal(size=5)
    np.testing.assert_allclose(f(value), np.exp(value) / np.exp(value).sum(), rtol=1e-12)
    m = T.dmatrix("m")  # a sum along one axis of a matrix: not a scalar, the rule does not apply; still right
    g = symlab.grad(T.log(T.exp(m).sum(axis=1)).sum(), m)
    assert_same_as_unoptimized([m], g, [RNG.normal(size=(2, 3))])
