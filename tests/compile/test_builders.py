"""``OpFromGraph`` (symlab.compile.builders): values in every mode, gradients, shapes, merge, inlining, bad input.

The cases follow PyTensor's tests/compile/test_builders.py and the OpFromGraph examples of its documents
(opfromgraph.rst's class docstring, d3viz/index.rst), run with ``pytensor`` renamed ``symlab``.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from oracle import (
    UNOPTIMIZED,
    assert_same_results,
    check_against_numpy,
    check_against_unoptimized,
    check_infer_shape,
    compile_function,
    compiled_in_modes,
)

import symlab
import symlab.tensor as st
from symlab.compile.builders import OpFromGraph
from symlab.compile.builders_rewrites import AUTO_INLINE_MAX_NODES, is_small_elementwise
from symlab.gradient import DisconnectedInputError, grad, pushforward, verify_grad
from symlab.graph.basic import MissingInputError
from symlab.graph.fg import FunctionGraph
from symlab.graph.inner_graph import HasInnerGraph, inner_ops, inner_sections
from symlab.graph.null_type import DisconnectedType, NullType, disconnected
from symlab.rewriting import MergeOptimizer

MODES = ("NUMBA", "NUMPY", "FAST_COMPILE", "DEBUG")
RTOL = 1e-12


def rng(seed=0):
    return np.random.default_rng(seed)


def mlp_op(name="layer"):
    x, w = st.dmatrix("x"), st.dmatrix("w")
    return OpFromGraph([x, w], [st.tanh(st.dot(x, w)), (x**2).sum(axis=1)], name=name)


# -- values in every mode -------------------------------------------------------------------------------------
def test_several_outputs_in_every_mode_against_numpy():
    op = mlp_op()
    x, w = st.dmatrix("xx"), st.dmatrix("ww")
    h, s = op(x, w)
    h2, _ = op(h, w)  # the op applied twice, on its own output
    fns = compiled_in_modes("ofg-mlp", [x, w], [h2 + 1.0, s], modes=MODES)
    xv, wv = rng().normal(size=(3, 4)), rng(1).normal(size=(4, 4))
    first = np.tanh(xv @ wv)
    expected = [np.tanh(first @ wv) + 1.0, (xv**2).sum(axis=1)]
    for mode, f in zip(MODES, fns):
        got = f(xv, wv)
        np.testing.assert_allclose(got[0], expected[0], rtol=RTOL, err_msg=mode)
        np.testing.assert_allclose(got[1], expected[1], rtol=RTOL, err_msg=mode)


def test_check_against_numpy_and_unoptimized():
    op = mlp_op()

    def sym(x, w):
        return op(x, w)[0] * 2.0

    out, got = check_against_numpy(sym, lambda x, w: np.tanh(x @ w) * 2.0,
                                   [rng().normal(size=(2, 3)), rng(2).normal(size=(3, 5))], "values", names=("x", "w"))
    assert got.shape == (2, 5) and isinstance(out.owner.inputs[0].owner.op, OpFromGraph)
    x, w = out.owner.inputs[0].owner.inputs
    check_against_unoptimized([x, w], [out], [rng().normal(size=(2, 3)), rng(2).normal(size=(3, 5))], "values")


def test_shared_variable_inside_is_an_implicit_input():
    s = symlab.shared(np.array([1.0, 2.0, 3.0]), name="s")
    x = st.dvector("x")
    op = OpFromGraph([x], [x * s + 1.0])
    assert op.shared_inputs == [s] and op.n_explicit_inputs == 1 and len(op.inner_inputs) == 2
    y = st.dvector("y")
    out = op(y)
    assert out.owner.inputs[1] is s
    fns = compiled_in_modes("ofg-shared", [y], out, modes=MODES)
    for f in fns:
        np.testing.assert_array_equal(f(np.ones(3)), [2.0, 3.0, 4.0])
    s.set_value(np.array([0.0, 0.0, 1.0]))
    for f in fns:
        np.testing.assert_array_equal(f(np.ones(3)), [1.0, 1.0, 2.0])
    # the shared variable can also be passed explicitly (PyTensor 3's way)
    op2 = OpFromGraph([x, s], [x * s + 1.0])
    assert op2.shared_inputs == [] and op2(y, s).eval({y: np.ones(3)}).tolist() == [1.0, 1.0, 2.0]
    with pytest.raises(MissingInputError, match=r"output 0 needs s .*shared variable used implicitly"):
        OpFromGraph([x], [x * s], strict=True)


def test_constants_stay_inside():
    x = st.dvector("x")
    table = st.constant(np.array([10.0, 20.0, 30.0]))
    op = OpFromGraph([x], [x + table])
    assert len(op(x).owner.inputs) == 1
    for f in compiled_in_modes("ofg-const", [x], op(x), modes=MODES):
        np.testing.assert_array_equal(f(np.array([1.0, 2.0, 3.0])), [11.0, 22.0, 33.0])
    # a constant given as an input is an ordinary input (PyTensor's test_explicit_input_from_constant)
    a = st.dscalar("a")
    c = st.constant(1.0, dtype="float64", name="c")
    op2 = OpFromGraph([a, c], [a + c])
    assert op2(a, c).eval({a: 5.0}) == 6.0 and op2(a, a).eval({a: 5.0}) == 10.0


def test_nested_opfromgraph():
    x, y = st.dvectors("x", "y")
    u, v = x + y, x - y
    op_ft = OpFromGraph([x, y], [u, v])
    op_ift = OpFromGraph([x, y], [u / 2, v / 2])
    nested = OpFromGraph([x, y], list(op_ift(*op_ft(x, y))), name="roundtrip")
    assert inner_ops([nested(x, y)[0]]) == [nested, op_ift, op_ft]
    xx, yy = st.dvector("xx"), st.dvector("yy")
    xv, yv = rng().random(16), rng(1).random(16)
    for mode, f in zip(MODES, compiled_in_modes("ofg-nested", [xx, yy], nested(xx, yy), modes=MODES)):
        a, b = f(xv, yv)
        np.testing.assert_allclose(a, xv, rtol=1e-14, err_msg=mode)
        np.testing.assert_allclose(b, yv, rtol=1e-14, err_msg=mode)


def test_graph_is_copied():
    x = st.dvector("x")
    y = st.exp(x)
    op = OpFromGraph([x], [y])
    x.name, y.name = "renamed", "also"
    assert [str(v) for v in op.inner_inputs] == ["x"] and op.inner_outputs[0] is not y
    assert op.inner_outputs[0].owner.inputs[0] is op.inner_inputs[0]
    copy = op.clone()
    assert copy == op and copy.fgraph is not op.fgraph and copy.inner_outputs[0] is not op.inner_outputs[0]


def test_output_that_is_an_input_or_a_view_is_copied():
    x = st.dmatrix("x")
    op = OpFromGraph([x], [x, x.T])
    value = np.arange(6.0).reshape(2, 3)
    for mode, f in zip(MODES, compiled_in_modes("ofg-alias", [x], op(x), modes=MODES)):
        same, t = f(value)
        np.testing.assert_array_equal(t, value.T)
        assert not np.shares_memory(same, value) and not np.shares_memory(t, value), mode


# -- the HasInnerGraph protocol -------------------------------------------------------------------------------
def test_protocol():
    op = mlp_op()
    x, w = st.dmatrices("a", "b")
    node = op(x, w)[0].owner
    assert isinstance(op, HasInnerGraph) and op.has_inner_graph
    (section,) = inner_sections(node)
    assert section.label == "body" and section.wiring() == list(zip([x, w], op.inner_inputs))
    assert section.outer_outputs == node.outputs and section.nodes == op.fgraph.toposort()


def test_connection_pattern():
    x, y, z = st.dmatrices("x", "y", "z")
    op1 = OpFromGraph([x, y, z], [x * y, y * z])
    assert op1.connection_pattern(None) == [[True, False], [True, True], [False, True]]
    m, n, p, q = st.dmatrices("m", "n", "p", "q")
    o1, o2 = op1(m, n, p)
    op2 = OpFromGraph([m, n, p, q], list(op1(o1, q, o2)))
    assert op2.connection_pattern(None) == [[True, False], [True, True], [False, True], [True, True]]


# -- infer_shape ------------------------------------------------------------------------------------------------
def test_infer_shape():
    x, y = st.dmatrices("x", "y")
    op = OpFromGraph([x, y], [x + y, st.dot(x, y.T), x.sum(axis=0)])
    q, p = st.dmatrices("q", "p")
    givens = {q: np.ones((3, 4)), p: np.ones((3, 4))}
    for out in op(q, p):
        check_infer_shape(out, givens)
    shapes = op.infer_shape(None, op(q, p)[0].owner, [(q.shape[0], q.shape[1]), (p.shape[0], p.shape[1])])
    assert [len(s) for s in shapes] == [2, 2, 1]
    assert [int(s.eval({q: np.ones((3, 4)), p: np.ones((5, 4))})) for s in shapes[1]] == [3, 5]
    # the shape graph uses the outer variables, never the inner ones
    inner = set(op.fgraph.variables)
    assert not any(v in inner for s in shapes for v in symlab.graph.traversal.ancestors(list(s)))


# -- equality, hash and merge ---------------------------------------------------------------------------------
def test_equality_and_hash():
    x, y = st.dvectors("x", "y")
    a = OpFromGraph([x, y], [st.exp(x) * y + 2.0], name="a")
    u, v = st.dvectors("u", "v")
    b = OpFromGraph([u, v], [st.exp(u) * v + 2.0], name="b")  # other names: the same computation
    assert a == b and hash(a) == hash(b)
    assert a != OpFromGraph([x, y], [st.exp(x) * y + 3.0])  # another constant
    assert a != OpFromGraph([x, y], [st.exp(y) * x + 2.0])  # other wiring
    assert a != OpFromGraph([x, y], [st.exp(x) * y + 2.0], inline=True)
    assert a != OpFromGraph([x, y], [st.log(x) * y + 2.0])  # another op
    assert a != OpFromGraph([st.fvector("x"), y], [st.exp(x) * y + 2.0][:0] or [y * 1.0])  # other types

    def override(i, o, g):
        return [g[0], g[0]]

    assert OpFromGraph([x, y], [x * y], lop_overrides=override) == OpFromGraph([x, y], [x * y], lop_overrides=override)
    assert OpFromGraph([x, y], [x * y], lop_overrides=override) != OpFromGraph([x, y], [x * y])


def test_merge_of_two_equal_nodes():
    x, y = st.dvectors("x", "y")
    op = OpFromGraph([x, y], [st.exp(x) * y, st.tanh(x) - y])
    other = OpFromGraph([x, y], [st.exp(x) * y, st.tanh(x) - y])
    assert op is not other
    fg = FunctionGraph([x, y], [op(x, y)[0] + other(x, y)[0]])
    trace = MergeOptimizer().rewrite(fg)
    ofg_nodes = [n for n in fg.toposort() if isinstance(n.op, OpFromGraph)]
    assert len(ofg_nodes) == 1 and [s.rule for s in trace if s.accepted] == ["merge"]
    f = symlab.function([x, y], op(x, y)[0] + other(x, y)[0], mode="NUMPY")
    assert sum(isinstance(n.op, OpFromGraph) for n in f.maker.fgraph.toposort()) == 1
    xv, yv = rng().random(5), rng(1).random(5)
    np.testing.assert_allclose(f(xv, yv), 2 * np.exp(xv) * yv, rtol=RTOL)


# -- gradients ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("inline", [False, True])
def test_grad_from_the_inner_graph(inline):
    x, y = st.dvectors("x", "y")
    op = OpFromGraph([x, y], [st.exp(x) * y, st.tanh(x) - y], inline=inline)
    verify_grad(lambda a, b: op(a, b)[0].sum() + (op(a, b)[1] ** 2).sum(), [rng().random(3), rng(1).random(3)],
                rng=rng(2))
    g = grad(op(x, y)[0].sum(), y)
    assert isinstance(g.owner.op, OpFromGraph) and str(g.owner.op) == f"OpFromGraph{{inline={inline}}}"


def test_grad_of_grad_and_only_one_output_used():
    x, y, z = st.dmatrices("x", "y", "z")
    op = OpFromGraph([x, y, z], [x + y * z])
    f = op(x, y, z)
    f = f - grad(f.sum(), y)
    f = f - grad(f.sum(), y)
    fn = symlab.function([x, y, z], f, mode="NUMPY")
    ones = np.ones((2, 2))
    np.testing.assert_allclose(fn(ones, ones * 3, ones * 5), np.full((2, 2), 6.0))
    two = OpFromGraph([x, y], [x * y, st.exp(x)])
    verify_grad(lambda a, b: two(a, b)[1].sum(), [rng().random((2, 2)), rng(1).random((2, 2))], rng=rng())


def sigmoid_grad_doubled(inputs, outputs, output_grads):
    (y,), (g,) = outputs, output_grads
    return [2.0 * y * (1.0 - y) * g]


def test_lop_override_callable_and_opfromgraph():
    x = st.dvector("x")
    y = 1.0 / (1.0 + st.exp(-x))
    y_, dedy = st.dvectors("y_", "dedy")
    op_lop = OpFromGraph([x, y_, dedy], [2.0 * y_ * (1.0 - y_) * dedy])
    xx = st.dvector("xx")
    expected = 2.0 * grad(st.sigmoid(xx).sum(), xx)
    xv = rng().random(32)
    for override, key in ((sigmoid_grad_doubled, "lop_overrides"), (op_lop, "pullback")):
        op = OpFromGraph([x], [y], **{key: override})
        got = grad(op(xx).sum(), xx)
        np.testing.assert_allclose(got.eval({xx: xv}), expected.eval({xx: xv}), rtol=1e-12)
        # the override is the gradient verify_grad checks: twice the true one, so it must fail
        with pytest.raises(AssertionError):
            verify_grad(lambda a, op=op: op(a).sum(), [xv], rng=rng())


def test_lop_override_list_of_each_form():
    x, y, z = st.dvectors("x", "y", "z")
    xv, yv, zv = rng().random(4), rng(1).random(4), rng(2).random(4)

    def rescale_dy(inps, outputs, out_grads):
        return inps[2] * 2 * out_grads[0]

    op = OpFromGraph([x, y, z], [x + y * z], lop_overrides=[None, rescale_dy, None])
    dx, dy, dz = grad(op(x, y, z).sum(), [x, y, z])
    values = {x: xv, y: yv, z: zv}
    np.testing.assert_allclose(dx.eval(values), np.ones(4))
    np.testing.assert_allclose(dy.eval(values), 2 * zv)  # overridden: doubled
    np.testing.assert_allclose(dz.eval(values), yv)
    # an OpFromGraph entry gets the flattened (inputs, outputs, output_grads)
    a, b, c, out, g = st.dvectors("a", "b", "c", "out", "g")
    three_g = OpFromGraph([a, b, c, out, g], [3.0 * g])
    op2 = OpFromGraph([x, y, z], [x + y * z], lop_overrides=[three_g, None, NullType("no gradient for z")()])
    dx2, dy2 = grad(op2(x, y, z).sum(), [x, y])
    np.testing.assert_allclose(dx2.eval(values), 3.0 * np.ones(4))
    np.testing.assert_allclose(dy2.eval(values), zv)
    with pytest.raises(symlab.gradient.NullTypeGradError, match="no gradient for z"):
        grad(op2(x, y, z).sum(), z)
    op3 = OpFromGraph([x, y], [x * 2.0 + y], lop_overrides=[None, disconnected()])
    with pytest.raises(DisconnectedInputError):
        grad(op3(x, y).sum(), y)
    verify_grad(lambda a: op3(a, a * 0.0 + 1.0).sum(), [xv], rng=rng())


def test_connection_pattern_override_with_disconnected_gradient():
    x, y = st.dvectors("x", "y")

    def back(inputs, outputs, output_gradients):
        return [output_gradients[0], DisconnectedType()()]

    op = OpFromGraph([x, y], [y + st.round(y)], lop_overrides=back, connection_pattern=[[True], [False]],
                     on_unused_input="ignore")
    g = grad(op(x, y).sum(), x)
    np.testing.assert_allclose(g.eval({x: np.ones(5), y: np.ones(5)}), np.ones(5))
    assert op.connection_pattern(None) == [[True], [False]]


@pytest.mark.parametrize("use_op_pushforward", [True, False])
def test_rop_from_the_inner_graph(use_op_pushforward):
    a, m = st.dvector("a"), st.dmatrix("M")
    op = OpFromGraph([a, m], [st.dot(a, m), -st.dot(a, m)])
    x, w, du = st.dvector("x"), st.dmatrix("W"), st.dvector("du")
    xv, wv, duv = rng().random(6), rng(1).random((6, 6)), rng(2).random(6)
    for k, sign in ((0, 1.0), (1, -1.0)):
        dv = pushforward(op(x, w)[k], x, du, use_op_pushforward=use_op_pushforward)
        fn = symlab.function([x, w, du], dv, mode="NUMPY")
        np.testing.assert_allclose(fn(xv, wv, duv), sign * duv @ wv, rtol=1e-12)


def test_rop_overrides():
    x, y, u, v = st.dvectors("x", "y", "u", "v")

    def ro(inps, epts):
        return [epts[0] * inps[1] * 2.0 + inps[0] * epts[1] * 1.5]

    op_rop = OpFromGraph([x, y, u, v], ro([x, y], [u, v]))
    xx, yy, du, dv = st.dvectors("xx", "yy", "du", "dv")
    vals = rng().random((4, 8))
    for override in (ro, op_rop, [lambda inps, epts: ro(inps, epts)[0]]):
        op = OpFromGraph([x, y], [x * y], rop_overrides=override)
        dw = pushforward(op(xx, yy), [xx, yy], [du, dv], use_op_pushforward=True)
        fn = symlab.function([xx, yy, du, dv], dw, mode="NUMPY")
        np.testing.assert_allclose(fn(*vals), vals[0] * vals[3] * 1.5 + vals[1] * vals[2] * 2.0, rtol=1e-12)


# -- the rewrites -----------------------------------------------------------------------------------------------
def test_inline_rewrite_is_in_the_trace_and_matches_unoptimized():
    x, y = st.dvectors("x", "y")
    op = OpFromGraph([x, y], [st.exp(x) * y + st.log(y) - st.tanh(x) * x + st.sqrt(y)], inline=True)
    assert len(op.fgraph.toposort()) > AUTO_INLINE_MAX_NODES
    xx, yy = st.dvectors("xx", "yy")
    out = op(xx, yy) * 2.0
    vals = [rng().random(4) + 0.5, rng(1).random(4) + 0.5]
    f = check_against_unoptimized([xx, yy], out, vals, "values", mode="NUMPY")
    assert [s.rule for s in f.trace if s.accepted][0] == "inline_ofg_expansion"
    step = next(s for s in f.trace if s.rule == "inline_ofg_expansion")
    assert [type(n.op).__name__ for n in step.removed] == ["OpFromGraph"]
    assert not any(isinstance(n.op, OpFromGraph) for n in f.maker.fgraph.toposort())
    ref = compile_function([xx, yy], out, UNOPTIMIZED)
    assert any(isinstance(n.op, OpFromGraph) for n in ref.maker.fgraph.toposort())
    # inlined, fusion crosses the former boundary: the elementwise ops of inside and outside are one node
    g = symlab.function([xx, yy], out, mode="NUMPY")
    assert sum(type(n.op).__name__ == "Elemwise" for n in g.maker.fgraph.toposort()) == 1


def test_small_elementwise_graph_is_inlined_unless_excluded():
    x = st.dvector("x")
    small = OpFromGraph([x], [st.exp(x) * 2.0])
    assert is_small_elementwise(small) and AUTO_INLINE_MAX_NODES >= 3
    big = OpFromGraph([x], [st.dot(x, x) * x])
    assert not is_small_elementwise(big)
    f = symlab.function([x], small(small(x)), mode="NUMPY")
    assert [s.rule for s in f.trace if s.accepted][:2] == ["inline_small_ofg", "inline_small_ofg"]
    kept = symlab.function([x], small(small(x)), mode=symlab.get_mode("NUMPY").excluding("inline_small_ofg"))
    assert sum(isinstance(n.op, OpFromGraph) for n in kept.maker.fgraph.toposort()) == 2
    xv = rng().random(3)
    np.testing.assert_allclose(f(xv), np.exp(np.exp(xv) * 2.0) * 2.0, rtol=1e-14)
    np.testing.assert_allclose(kept(xv), f(xv), rtol=1e-14)


def test_inner_graph_is_rewritten_with_the_functions_mode():
    x = st.dvector("x")
    op = OpFromGraph([x], [st.log(1.0 + st.exp(x)) + st.dot(x, x)])  # softplus after stabilization
    n_inner = len(op.fgraph.toposort())
    f = symlab.function([x], op(x), mode="NUMPY")
    step = next(s for s in f.trace if s.rule == "ofg_inner_graph")
    assert step.accepted and "include=['fast_run']" in step.reason
    (node,) = f.maker.fgraph.toposort()
    assert node.op.inner_rewritten and node.op.inner_trace is not None and len(node.op.inner_trace) > 0
    assert not op.inner_rewritten and len(op.fgraph.toposort()) == n_inner > len(node.op.fgraph.toposort())  # the user's op is left as it was
    np.testing.assert_allclose(f(np.array([800.0, 0.0])), [800.0 + 640000.0, np.log(2.0) + 640000.0], rtol=1e-12)


# -- bad input -------------------------------------------------------------------------------------------------
def test_missing_input_is_named():
    x, w = st.dvector("x"), st.dvector("w")
    before = (x + w).owner
    with pytest.raises(MissingInputError, match=r"output 1 needs w .*neither among the inputs \['x'\]"):
        OpFromGraph([x], [x * 2.0, x + w])
    assert (x + w).owner.op == before.op and x.owner is None
    with pytest.raises(MissingInputError):
        OpFromGraph([], [st.lscalar("n")])


def test_bad_arguments():
    x = st.dmatrix("x")
    with pytest.raises(TypeError, match="must be lists"):
        OpFromGraph((x,), (x,))
    with pytest.raises(TypeError, match=r"input 0 must be a Variable, received int"):
        OpFromGraph([1], [x])
    with pytest.raises(TypeError, match=r"output 0 must be a Variable, received str"):
        OpFromGraph([x], ["x"])
    with pytest.raises(ValueError, match=r"\['x'\] appear more than once"):
        OpFromGraph([x, x], [x * 2.0])
    with pytest.raises(NotImplementedError, match="updates"):
        OpFromGraph([x], [x], updates={})
    with pytest.raises(TypeError, match=r"unexpected keyword arguments \['bogus'\]"):
        OpFromGraph([x], [x], bogus=1)
    with pytest.raises(ValueError, match="needs 1 entries, received 2"):
        OpFromGraph([x], [x * 2.0], lop_overrides=[None, None])
    with pytest.raises(TypeError, match=r"lop_overrides\[0\] must be None"):
        OpFromGraph([x], [x * 2.0], lop_overrides=[3])
    with pytest.raises(ValueError, match="connection_pattern must be 1 lists"):
        OpFromGraph([x], [x * 2.0], connection_pattern=[[True], [True]])


def test_bad_calls_leave_the_graph_unchanged():
    x = st.dmatrix("x")
    op = OpFromGraph([x], [x * 2.0], name="twice")
    y = st.dmatrix("y")
    with pytest.raises(ValueError, match=r"twice\{inline=False\}: expected 1 input\(s\) \['x'\], received 0"):
        op()
    with pytest.raises(ValueError, match=r"expected 1 input\(s\)"):
        op.make_node(y, y)
    with pytest.raises(TypeError, match=r"input 0 \(x\) must be of type TensorType\(float64, \(\?, \?\)\), received "
                                        r"TensorType\(float64, \(\?,\)\)"):
        op(st.dvector("v"))
    assert op == OpFromGraph([x], [x * 2.0]) and len(op.fgraph.toposort()) == 2  # the op is as it was
    assert op(y).eval({y: np.ones((1, 1))}).tolist() == [[2.0]]


# -- names ---------------------------------------------------------------------------------------------------------
HOSTILE = '<script>alert("x")</script> & {inline=True} \n\x1b[31m'


def test_hostile_names_round_trip_literally():
    x = st.dvector(HOSTILE)
    op = OpFromGraph([x], [st.exp(x) * st.dot(x, x)], name=HOSTILE)  # not small: never inlined
    assert str(op) == HOSTILE + "{inline=False}" and op.name == str(op)
    assert str(op.inner_inputs[0]) == HOSTILE
    out = op(st.dvector("y"))
    text = symlab.dprint(out, file="str")
    assert HOSTILE + "{inline=False}" in text
    assert HOSTILE in symlab.dprint(op.fgraph, file="str") and str(op.inner_inputs) == f"[{HOSTILE}]"
    f = symlab.function(out.owner.inputs, out, mode="NUMPY")
    assert HOSTILE + "{inline=False}" in f.dprint(file="str")
    g = grad(out.sum(), out.owner.inputs[0])
    assert str(g.owner.op) == HOSTILE + "_LOp{inline=False}"


# -- PyTensor's documents, pytensor renamed symlab ----------------------------------------------------------------
def test_doc_opfromgraph_basic():
    from symlab import function
    from symlab import tensor as pt

    x, y, z = pt.scalars("xyz")
    e = x + y * z
    op = OpFromGraph([x, y, z], [e])
    e2 = op(x, y, z) + op(z, y, x)
    fn = function([x, y, z], [e2])
    (got,) = fn(2.0, 3.0, 4.0)
    assert float(got) == (2 + 3 * 4) + (4 + 3 * 2)


def test_doc_opfromgraph_shared():
    from symlab import config, function
    from symlab import tensor as pt

    x, y, z = pt.scalars("xyz")
    s = symlab.shared(np.random.default_rng(0).random((2, 2)).astype(config.floatX))
    e = x + y * z + s
    op = OpFromGraph([x, y, z, s], [e])
    e2 = op(x, y, z, s) + op(z, y, x, s)
    fn = function([x, y, z], [e2])
    np.testing.assert_allclose(fn(1.0, 2.0, 3.0)[0], 12.0 + 2 * s.get_value(), rtol=1e-6)
    op_implicit = OpFromGraph([x, y, z], [e])  # Theano's and PyTensor 2's way: s is an implicit input
    fn2 = function([x, y, z], [op_implicit(x, y, z) + op_implicit(z, y, x)])
    np.testing.assert_allclose(fn2(1.0, 2.0, 3.0)[0], fn(1.0, 2.0, 3.0)[0])


def test_doc_opfromgraph_per_input_override():
    from symlab import function, grad
    from symlab import tensor as pt

    x, y, z = pt.scalars("xyz")
    e = x + y * z

    def rescale_dy(inps, outputs, out_grads):
        x, y, z = inps
        (g,) = out_grads
        return z * 2

    op = OpFromGraph([x, y, z], [e], pullback=[None, rescale_dy, None])
    e2 = op(x, y, z)
    dx, dy, dz = grad(e2, [x, y, z])
    fn = function([x, y, z], [dx, dy, dz])
    assert [float(v) for v in fn(2.0, 3.0, 4.0)] == [1.0, 8.0, 3.0]


def test_doc_d3viz_examples():
    import symlab as pytensor
    import symlab.tensor as pt

    x, y, z = pt.scalars("xyz")
    e = pt.sigmoid((x + y + z) ** 2)
    op = pytensor.compile.builders.OpFromGraph([x, y, z], [e])
    e2 = op(x, y, z) + op(z, y, x)
    f = pytensor.function([x, y, z], e2)

    def sig(v):
        return 1.0 / (1.0 + np.exp(-v))

    np.testing.assert_allclose(f(0.1, 0.2, 0.3), 2 * sig(0.36), rtol=1e-6)

    x, y, z = pt.scalars("xyz")
    e = x * y
    op = pytensor.compile.builders.OpFromGraph([x, y], [e])
    e2 = op(x, y) + z
    op2 = pytensor.compile.builders.OpFromGraph([x, y, z], [e2])
    e3 = op2(x, y, z) + z
    f = pytensor.function([x, y, z], [e3])
    assert float(f(2.0, 3.0, 4.0)[0]) == 14.0
    assert symlab.OpFromGraph is OpFromGraph


def test_results_are_the_same_across_calls():
    op = mlp_op()
    x, w = st.dmatrix("x"), st.dmatrix("w")
    f = symlab.function([x, w], op(x, w), mode="NUMPY")
    xv, wv = rng().random((2, 2)), rng(1).random((2, 2))
    assert_same_results(f(xv, wv), f(xv, wv), "bits")


def test_pickle_round_trip_after_compiling():
    op = mlp_op("<pickled>")
    x, w = st.dmatrices("x", "w")
    symlab.function([x, w], op(x, w), mode="NUMPY")  # leaves a rewritten copy and its trace on the op
    back = pickle.loads(pickle.dumps(op))
    assert back == op and str(back) == "<pickled>{inline=False}"
    xv, wv = rng().random((2, 2)), rng(1).random((2, 2))
    assert_same_results(back(x, w)[0].eval({x: xv, w: wv}), op(x, w)[0].eval({x: xv, w: wv}), "bits")


def test_overrides_with_a_shared_variable_used_implicitly():
    s = symlab.shared(np.array([0.5, 2.0, 1.5]), name="s")
    x = st.dvector("x")
    xv = rng().random(3)

    def only_x(inputs, outputs, grads):  # a gradient for the explicit input only: s gets the default
        return [grads[0] * inputs[1] * 3.0]

    for override in ([lambda i, o, g: g[0] * i[1] * 3.0], only_x):
        op = OpFromGraph([x], [x * s + st.exp(s)], lop_overrides=override)
        gx, gs = grad(op(x).sum(), [x, s])
        np.testing.assert_allclose(gx.eval({x: xv}), 3.0 * s.get_value())
        np.testing.assert_allclose(gs.eval({x: xv}), xv + np.exp(s.get_value()))  # the inner graph's
    op = OpFromGraph([x], [x * s])
    verify_grad(lambda a: op(a).sum(), [xv], rng=rng())


def test_asking_the_connection_pattern_does_not_change_equality():
    x, y = st.dvectors("x", "y")
    a, b = OpFromGraph([x, y], [x * 2.0]), OpFromGraph([x, y], [x * 2.0])
    assert a.connection_pattern(None) == [[True], [False]]
    assert a == b and hash(a) == hash(b)
    given = OpFromGraph([x, y], [x * 2.0], connection_pattern=[[True], [True]])
    assert given != a and given.connection_pattern(None) == [[True], [True]]
