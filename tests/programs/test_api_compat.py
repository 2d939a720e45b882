"""The API a PyTensor or Theano user types, with PyTensor's meaning (Theano's where PyTensor dropped the name).

shared(borrow=, shape=), get_value/set_value; bool() of a variable; tensor.join; vectors("xyz");
pp and printing.Print; compile.MonitorMode; Function.copy; config.change_flags; function(accept_inplace=);
compile.mode and get_default_mode; gradient.pushforward/pullback/hessian_vector_product;
graph.vectorize_graph.
"""

from __future__ import annotations

import numpy as np
import pytest

import symlab
import symlab.tensor as st
from symlab.compile.function import FunctionMaker
from symlab.gradient import DisconnectedInputError, Lop, Rop, hessian_vector_product, pullback, pushforward
from symlab.graph import vectorize_graph
from symlab.graph.replace import VectorizeError

# -- shared -------------------------------------------------------------------------------------------


def test_shared_copies_its_value_unless_borrowed():
    array = np.ones(2, dtype="float32")
    copied, kept = symlab.shared(array), symlab.shared(array, borrow=True)
    array += 1
    np.testing.assert_array_equal(copied.get_value(), [1.0, 1.0])
    np.testing.assert_array_equal(kept.get_value(), [2.0, 2.0])
    assert kept.get_value(borrow=True) is array
    assert kept.get_value() is not array


def test_shared_set_value_with_borrow_keeps_the_array():
    s = symlab.shared(np.zeros(3))
    new = np.arange(3.0)
    s.set_value(new, borrow=True)
    assert s.get_value(borrow=True) is new
    s.set_value(new)
    assert s.get_value(borrow=True) is not new
    np.testing.assert_array_equal(s.get_value(), new)


def test_shared_get_value_return_internal_type():
    s = symlab.shared(np.arange(4.0))
    internal = s.get_value(borrow=True, return_internal_type=True)
    assert isinstance(internal, np.ndarray) and internal is s.get_value(borrow=True)
    with pytest.raises(TypeError, match="return_internal_type must be True or False, received"):
        s.get_value(return_internal_type="yes")


def test_shared_static_shape():
    value = np.zeros((3, 1))
    assert symlab.shared(value).type.shape == (None, None)
    s = symlab.shared(value, shape=(None, 1))
    assert s.type.shape == (None, 1)
    # the static 1 broadcasts against a matrix, as the broadcasting tutorial says
    m = st.dmatrix("m")
    f = symlab.function([m], m + s, mode="NUMPY")
    np.testing.assert_array_equal(f(np.ones((3, 4))), np.ones((3, 4)))
    with pytest.raises(TypeError, match=r"shared variable .*cannot set"):
        s.set_value(np.zeros((3, 2)))


@pytest.mark.parametrize(
    ("shape", "error", "message"),
    [
        ((2, 1), ValueError, r"shape \(2, 1\) says axis 0 has size 2, but the value's shape is \(3, 1\)"),
        ((None,), ValueError, r"shape \(None,\) has 1 entries but the value has 2 dimensions"),
        ((None, 1.0), TypeError, r"shape entries must be int or None, received 1.0 at axis 1"),
        (3, TypeError, r"shape must be a tuple of sizes or None, received 3"),
    ],
)
def test_shared_bad_shape_is_refused(shape, error, message):
    with pytest.raises(error, match=message):
        symlab.shared(np.zeros((3, 1)), shape=shape)


def test_shared_bad_borrow_is_refused():
    with pytest.raises(TypeError, match="borrow must be True or False, received 'no'"):
        symlab.shared(1.0, borrow="no")


def test_shared_positional_arguments_keep_their_meaning():
    s = symlab.shared(np.zeros(2, dtype="float32"), "w", True)
    assert s.name == "w"
    with pytest.raises(TypeError):
        s.set_value(np.zeros(2))  # strict: float64 refused


# -- bool() ------------------------------------------------------------------------------------------


def test_a_variable_is_true_in_an_if():
    W = st.dmatrix("W")
    assert bool(W) and bool(W + 1) and bool(st.constant(0.0))
    chosen = W if W else None  # Theano's "if not W:" idiom
    assert chosen is W


@pytest.mark.parametrize("compare", [st.lt, st.le, st.gt, st.ge, st.eq, st.neq])
def test_a_comparison_refuses_bool(compare):
    x = st.dvector("x")
    with pytest.raises(TypeError, match="truth value of the comparison"):
        bool(compare(x, 1.0))


def test_a_chained_comparison_raises_instead_of_dropping_a_test():
    a, b, c = st.dscalars("abc")
    with pytest.raises(TypeError, match="a < b < c is not supported"):
        a < b < c  # noqa: B015 - the statement under test


# -- join, vectors("xyz") -------------------------------------------------------------------------------


def test_tensor_join_is_the_function():
    x, y = st.dmatrix("x"), st.dmatrix("y")
    z = st.join(1, x, y)
    a, b = np.ones((2, 1)), np.zeros((2, 3))
    np.testing.assert_array_equal(z.eval({x: a, y: b}), np.concatenate([a, b], axis=1))
    assert symlab.tensor.join is st.join and callable(symlab.tensor.join)
    from symlab.tensor.joining import Join

    assert isinstance(z.owner.op, Join)


def test_join_bad_input():
    x = st.dmatrix("x")
    with pytest.raises(TypeError, match="join: the first argument is the axis"):
        st.join(x, x)
    with pytest.raises(ValueError, match="needs at least one tensor"):
        st.join(0)


@pytest.mark.parametrize("plural", ["scalars", "vectors", "matrices", "dvectors", "imatrices", "fscalars"])
def test_plural_constructors_split_one_string_per_letter(plural):
    made = getattr(st, plural)("xyz")
    assert [v.name for v in made] == ["x", "y", "z"]
    single = getattr(st, plural)("w")
    assert single.name == "w" and isinstance(single, st.TensorVariable)
    assert [v.name for v in getattr(st, plural)("ab", "c")] == ["ab", "c"]
    assert [v.name for v in getattr(st, plural)(2)] == [None, None]


def test_plural_constructors_bad_names():
    with pytest.raises(TypeError, match=r"names must be strings .* received 3 \(int\) at position 1"):
        st.dvectors("a", 3)
    with pytest.raises(ValueError, match="empty name"):
        st.dvectors("")
    with pytest.raises(ValueError, match="count must be >= 0"):
        st.dvectors(-1)


# -- pp, Print ------------------------------------------------------------------------------------------


def test_pp_is_pprint_everywhere():
    x, y = st.dscalars("x", "y")
    assert symlab.pp(x + y) == symlab.printing.pp(x + y) == "(x + y)"
    from symlab import pp

    assert pp is symlab.printing.pprint


@pytest.mark.filterwarnings("ignore:symlab. op Print.*has no Numba kernel")
@pytest.mark.parametrize("mode", ["NUMPY", "NUMBA"])
def test_print_passes_the_value_and_prints_it(mode, capsys):
    x = st.dvector("x")
    printed = symlab.printing.Print("this is a very important value")(x)
    f = symlab.function([x], printed * 5, mode=mode)
    np.testing.assert_array_equal(f([1.0, 2.0, 3.0]), [5.0, 10.0, 15.0])
    assert capsys.readouterr().out == "this is a very important value __str__ = [1. 2. 3.]\n"
    np.testing.assert_array_equal(f([4.0]), [20.0])  # prints at every call
    assert capsys.readouterr().out == "this is a very important value __str__ = [4.]\n"


def test_print_attrs_and_global_fn(capsys):
    x = st.dmatrix("x")
    seen = []
    f = symlab.function(
        [x],
        [symlab.printing.Print("x", attrs=("shape", "sum"))(x).sum(),
         symlab.printing.Print("kept", global_fn=lambda op, v: seen.append((op.message, v.copy())))(x * 2)],
        mode="NUMPY",
    )
    total, twice = f(np.ones((2, 3)))
    assert float(total) == 6.0
    np.testing.assert_array_equal(twice, 2 * np.ones((2, 3)))
    assert capsys.readouterr().out == "x shape = (2, 3)\nx sum = 6.0\n"
    assert seen[0][0] == "kept" and np.array_equal(seen[0][1], twice)


def test_print_gradient_passes_through():
    x = st.dvector("x")
    cost = (symlab.printing.Print("x", global_fn=lambda op, v: None)(x) ** 2).sum()
    g = symlab.function([x], symlab.grad(cost, x), mode="NUMPY")
    np.testing.assert_allclose(g([1.0, -2.0]), [2.0, -4.0])
    symlab.gradient.verify_grad(lambda v: (symlab.printing.Print("v", global_fn=lambda op, a: None)(v) ** 3).sum(),
                                [np.array([0.5, -1.5])], rng=np.random.default_rng(0))


def test_print_bad_arguments():
    with pytest.raises(TypeError, match="attrs must be a sequence of attribute names, received the str 'shape'"):
        symlab.printing.Print("m", attrs="shape")
    with pytest.raises(TypeError, match="global_fn must be callable"):
        symlab.printing.Print("m", global_fn=3)
    with pytest.raises(TypeError, match="message must be a str"):
        symlab.printing.Print(3)


# -- MonitorMode ------------------------------------------------------------------------------------------


def test_monitor_mode_calls_the_hooks_around_each_node():
    calls = []

    def before(fgraph, i, node, fn):
        calls.append(("pre", i, str(node.op), [np.asarray(c[0]).tolist() for c in fn.inputs], fn.outputs[0][0]))

    def after(fgraph, i, node, fn):
        calls.append(("post", i, [np.asarray(c[0]).tolist() for c in fn.outputs]))

    x = st.dscalar("x")
    f = symlab.function([x], [5 * x], mode=symlab.compile.MonitorMode(pre_func=before, post_func=after))
    assert f(3.0)[0] == 15.0
    assert calls == [("pre", 0, "Elemwise{mul,no_inplace}", [5, 3.0], None), ("post", 0, [15.0])]


def test_monitor_mode_excluding_keeps_the_hooks():
    names = []
    mode = symlab.compile.MonitorMode(post_func=lambda g, i, node, fn: names.append(str(node.op))).excluding(
        "fusion", "inplace"
    )
    x = st.dvector("x")
    f = symlab.function([x], st.log(x) * x, mode=mode)
    np.testing.assert_allclose(f([1.0, 2.0]), [0.0, 2 * np.log(2.0)])
    assert names == ["Elemwise{log,no_inplace}", "Elemwise{mul,no_inplace}"]


def test_monitor_mode_bad_arguments():
    with pytest.raises(TypeError, match="pre_func must be callable or None"):
        symlab.compile.MonitorMode(pre_func="print")
    with pytest.raises(ValueError, match="cannot call a function between nodes"):
        symlab.compile.MonitorMode(linker="numba")
    with pytest.raises(ValueError, match="optimizer must be one of"):
        symlab.compile.MonitorMode(optimizer="o2")


# -- Function.copy ------------------------------------------------------------------------------------------


@pytest.fixture
def accumulator():
    state = symlab.shared(0)
    inc = st.iscalar("inc")
    return state, symlab.function([inc], state, updates=[(state, state + inc)], mode="NUMPY", name="acc")


@pytest.mark.parametrize("share_memory", [False, True])
def test_copy_with_swap_uses_another_shared_variable(accumulator, share_memory):
    state, acc = accumulator
    acc(10)
    new_state = symlab.shared(0)
    new_acc = acc.copy(share_memory=share_memory, swap={state: new_state})
    assert int(new_acc(100)) == 0 and int(new_acc(1)) == 100
    assert int(new_state.get_value()) == 101 and int(state.get_value()) == 10
    assert new_acc.name == "acc copy"
    assert (new_acc.maker.runner is acc.maker.runner) is share_memory


def test_copy_delete_updates(accumulator):
    state, acc = accumulator
    acc(10)
    frozen = acc.copy(delete_updates=True, name="frozen")
    assert int(frozen(9000)) == 10 and int(state.get_value()) == 10
    assert frozen.name == "frozen"
    assert len(frozen.maker.fgraph.outputs) == 1  # the update is no longer computed
    assert int(acc(1)) == 10 and int(state.get_value()) == 11  # the original still updates


def test_copy_does_not_rewrite_again(accumulator, monkeypatch):
    _, acc = accumulator
    import symlab.rewriting

    monkeypatch.setattr(symlab.rewriting, "rewrite_fgraph", lambda *a, **k: pytest.fail("rewrote again"))
    copied = acc.copy()
    assert int(copied(2)) == int(acc.copy(share_memory=True)(0)) - 2


def test_copy_bad_swap(accumulator):
    state, acc = accumulator
    stranger = symlab.shared(0)
    with pytest.raises(ValueError, match="is not a shared variable of this function"):
        acc.copy(swap={stranger: symlab.shared(0)})
    with pytest.raises(TypeError, match=r"cannot replace"):
        acc.copy(swap={state: symlab.shared(0.5)})
    with pytest.raises(TypeError, match="must map a shared variable to a shared variable"):
        acc.copy(swap={state: 3})
    with pytest.raises(TypeError, match="delete_updates must be True or False"):
        acc.copy(delete_updates="yes")


def test_copy_in_numba_mode():
    x = st.dvector("x")
    w = symlab.shared(np.ones(2), name="w")
    f = symlab.function([x], (w * x).sum(), updates={w: w * 2})
    g = f.copy(swap={w: symlab.shared(np.full(2, 3.0))}, delete_updates=True)
    assert float(g([1.0, 1.0])) == 6.0 and float(f([1.0, 1.0])) == 2.0
    np.testing.assert_array_equal(w.get_value(), [2.0, 2.0])


# -- config.change_flags, compile.mode ---------------------------------------------------------------------


def test_change_flags_restores_after_an_exception():
    before = (symlab.config.floatX, symlab.config.mode)
    with pytest.raises(RuntimeError), symlab.config.change_flags(floatX="float32", mode="NUMPY"):
        assert st.vector().dtype == "float32"
        raise RuntimeError
    assert (symlab.config.floatX, symlab.config.mode) == before


def test_change_flags_sets_the_default_mode():
    x = st.dvector("x")
    with symlab.config.change_flags(mode="FAST_COMPILE"):
        assert symlab.function([x], x + 1).maker.mode.name == "FAST_COMPILE"
        assert symlab.compile.get_default_mode().name == "FAST_COMPILE"


def test_change_flags_bad_flags_change_nothing():
    before = symlab.config.floatX
    with pytest.raises(ValueError, match="floatX must be one of"):
        symlab.config.change_flags(floatX="float128")
    with pytest.raises(AttributeError, match="unknown flag 'optimizer'"):
        symlab.config.change_flags(floatX="float32", optimizer="None")
    with pytest.raises(TypeError, match="config.mode must be a mode name"):
        symlab.config.change_flags(mode=3)
    assert symlab.config.floatX == before


def test_compile_mode_module_has_pytensor_names():
    from symlab.compile.mode import Mode, MonitorMode, get_default_mode, get_mode, predefined_modes

    assert Mode is symlab.compile.Mode and MonitorMode is symlab.compile.MonitorMode
    assert get_default_mode() is get_mode(symlab.config.mode)
    assert "NUMPY" in predefined_modes
    x = st.dvector("x")
    f = symlab.function([x], x * 2, mode=Mode(linker="numpy"))
    np.testing.assert_array_equal(f([1.0]), [2.0])


@pytest.mark.parametrize(("linker", "backend"), [("vm", "numpy"), ("py", "numpy"), ("cvm", "numba"), ("c|py", "numba")])
def test_pytensor_linker_names(linker, backend):
    from symlab.compile.mode import Mode

    a, b = st.dscalars("ab")
    x, y = st.dmatrices("xy")
    f = symlab.function([a, b, x, y], st.switch(st.lt(a, b), st.mean(x), st.mean(y)), mode=Mode(linker=linker))
    assert f.maker.linker.name == backend
    assert float(f(0.0, 1.0, np.ones((2, 2)), np.zeros((2, 2)))) == 1.0


# -- accept_inplace ---------------------------------------------------------------------------------------


def test_function_refuses_an_inplace_graph_unless_accepted():
    from symlab.scalar import basic as scalar
    from symlab.tensor.elemwise import Elemwise

    x, y = st.dvector("x"), st.dvector("y")
    out = Elemwise(scalar.add, {0: 0})(x, y)  # writes x + y into x
    with pytest.raises(TypeError, match=r"inplace operation .* pass accept_inplace=True"):
        symlab.function([x, y], out, mode="NUMPY")
    f = symlab.function([symlab.In(x, mutable=True), y], out, mode="NUMPY", accept_inplace=True)
    value = np.zeros(2)
    np.testing.assert_array_equal(f(value, np.ones(2)), [1.0, 1.0])
    with pytest.raises(TypeError, match="accept_inplace must be True or False"):
        FunctionMaker([x], x * 2, accept_inplace="yes")


# -- pushforward, pullback, hessian_vector_product ----------------------------------------------------------


def _eval(out, values):
    return symlab.function(list(values), out, mode="NUMPY", on_unused_input="ignore")(*values.values())


@pytest.mark.parametrize("use_op_pushforward", [False, True])
def test_pushforward_is_the_jacobian_times_a_vector(use_op_pushforward):
    rng = np.random.default_rng(1)
    W, V, x = st.dmatrix("W"), st.dmatrix("V"), st.dvector("x")
    y = st.tanh(st.dot(x, W))
    jv = pushforward(y, W, V, use_op_pushforward=use_op_pushforward)
    w, v, xv = rng.normal(size=(3, 2)), rng.normal(size=(3, 2)), rng.normal(size=3)
    got = _eval(jv, {W: w, V: v, x: xv})
    np.testing.assert_allclose(got, (1 - np.tanh(xv @ w) ** 2) * (xv @ v), rtol=1e-12)
    np.testing.assert_allclose(got, _eval(Rop(y, W, V), {W: w, V: v, x: xv}), rtol=1e-12)


def test_pushforward_by_ops_keeps_every_input_as_pytensor_does():
    W, V, x = st.dmatrix("W"), st.dmatrix("V"), st.dvector("x")
    jv = pushforward(st.dot(x, W), W, V, use_op_pushforward=True)
    assert W in symlab.graph.graph_inputs([jv])  # PyTensor's tutorial compiles it with W as an input
    f = symlab.function([W, V, x], jv, mode="NUMPY")
    np.testing.assert_array_equal(f([[1, 1], [1, 1]], [[2, 2], [2, 2]], [0, 1]), [2.0, 2.0])


def test_pullback_is_a_vector_times_the_jacobian():
    rng = np.random.default_rng(2)
    W, v, x = st.dmatrix("W"), st.dvector("v"), st.dvector("x")
    y = st.dot(x, W) ** 2
    w, vv, xv = rng.normal(size=(3, 2)), rng.normal(size=2), rng.normal(size=3)
    got = _eval(pullback(y, W, v), {W: w, v: vv, x: xv})
    np.testing.assert_allclose(got, np.outer(xv, 2 * (xv @ w) * vv), rtol=1e-12)
    np.testing.assert_allclose(got, _eval(Lop(y, W, v), {W: w, v: vv, x: xv}), rtol=1e-12)
    both = pullback(y, [W, x], v)
    assert isinstance(both, list) and len(both) == 2


def test_hessian_vector_product_against_the_hessian():
    x, p = st.dvector("x"), st.dvector("p")
    cost = (x ** 3).sum() + (x[0] * x[1]) ** 2
    xv, pv = np.array([0.5, -1.5]), np.array([2.0, 1.0])
    H = np.array([[6 * xv[0] + 2 * xv[1] ** 2, 4 * xv[0] * xv[1]], [4 * xv[0] * xv[1], 6 * xv[1] + 2 * xv[0] ** 2]])
    np.testing.assert_allclose(_eval(hessian_vector_product(cost, x, p), {x: xv, p: pv}), H @ pv, rtol=1e-12)
    np.testing.assert_allclose(_eval(pushforward(symlab.grad(cost, x), x, p), {x: xv, p: pv}), H @ pv, rtol=1e-12)


def test_jacobian_products_disconnected_and_bad_input():
    x, y, v = st.dvector("x"), st.dvector("y"), st.dvector("v")
    with pytest.raises(DisconnectedInputError):
        pullback(x * 2, y, v)
    assert pullback(x * 2, [x, y], v, disconnected_inputs="ignore", return_disconnected="none")[1] is None
    zero = pushforward(y * 2, x, v, disconnected_outputs="ignore")
    np.testing.assert_array_equal(_eval(zero, {y: np.ones(2)}), [0.0, 0.0])
    with pytest.raises(ValueError, match=r"tangents\[0\] .* must have the dimensions of wrt\[0\]"):
        pushforward(x * 2, x, st.dmatrix("m"))
    with pytest.raises(ValueError, match="f has 1 variable.* but cotangents has 2"):
        pullback(x * 2, x, [v, v])
    with pytest.raises(ValueError, match="return_disconnected must be one of"):
        pushforward(x * 2, x, v, return_disconnected="disconnected")
    with pytest.raises(TypeError, match="cost must be a scalar"):
        hessian_vector_product(x * 2, x, v)


def test_use_op_pushforward_through_an_op_without_r_op():
    from symlab.graph import Apply, Op

    class Twice(Op):
        __props__ = ()

        def make_node(self, x):
            x = st.as_tensor_variable(x)
            return Apply(self, [x], [x.type()])

        def perform(self, node, inputs, output_storage):
            output_storage[0][0] = inputs[0] * 2

        def grad(self, inputs, output_grads):
            return [output_grads[0] * 2]

    class Opaque(Twice):
        def grad(self, inputs, output_grads):
            raise NotImplementedError("no gradient")

    x, v = st.dvector("x"), st.dvector("v")
    y = Twice()(x)  # no R_op: its node goes through its gradient
    expected = [2.0, 6.0]
    for use_op_pushforward in (False, True):
        jv = pushforward(y, x, v, use_op_pushforward=use_op_pushforward)
        np.testing.assert_array_equal(_eval(jv, {x: np.ones(2), v: [1.0, 3.0]}), expected)
    with pytest.raises(NotImplementedError, match="Opaque has neither an R_op nor a gradient"):
        pushforward(Opaque()(x), x, v, use_op_pushforward=True)


# -- vectorize_graph --------------------------------------------------------------------------------------


def test_vectorize_graph_jacobian_as_in_the_tutorial():
    x = st.dvector("x")
    y = x ** 2
    row_cotangent = st.dvector("row_cotangent")
    J = vectorize_graph(pullback(y, x, row_cotangent), replace={row_cotangent: st.eye(x.size)})
    np.testing.assert_array_equal(symlab.function([x], J, mode="NUMPY")([4.0, 4.0]), [[8.0, 0.0], [0.0, 8.0]])


@pytest.mark.parametrize(
    ("build", "numpy_fn"),
    [
        (lambda v, W: st.exp(v) * 2 + v, lambda v, W: np.exp(v) * 2 + v),
        (lambda v, W: v.dimshuffle("x", 0) * W, lambda v, W: v[None, :] * W),
        (lambda v, W: (v ** 2).sum(), lambda v, W: (v ** 2).sum()),
        (lambda v, W: v.max(), lambda v, W: v.max()),
        (lambda v, W: st.argmax(v), lambda v, W: np.argmax(v)),
        (lambda v, W: v.mean(), lambda v, W: v.mean()),
        (lambda v, W: st.dot(v, W), lambda v, W: v @ W),
        (lambda v, W: st.dot(W.T, v), lambda v, W: W.T @ v),
        (lambda v, W: st.dot(v, v), lambda v, W: v @ v),
        (lambda v, W: st.matmul(W.T, W) * v.sum(), lambda v, W: (W.T @ W) * v.sum()),
        (lambda v, W: v.shape[0] * v, lambda v, W: v.shape[0] * v),
    ],
)
def test_vectorize_graph_equals_a_loop_over_the_batch(build, numpy_fn):
    rng = np.random.default_rng(3)
    v, W, V = st.dvector("v"), st.dmatrix("W"), st.dmatrix("V")
    batched = vectorize_graph(build(v, W), {v: V})
    vs, w = rng.normal(size=(4, 3)), rng.normal(size=(3, 3))
    got = symlab.function([V, W], batched, mode="NUMPY", on_unused_input="ignore")(vs, w)
    np.testing.assert_allclose(got, np.stack([numpy_fn(row, w) for row in vs]), rtol=1e-12)


def test_vectorize_graph_of_a_matrix_input_and_a_list():
    M, T = st.dmatrix("M"), st.dtensor3("T")
    outs = vectorize_graph([M.sum(axis=0), M.T, st.dot(M, M)], {M: T})
    assert isinstance(outs, list) and [o.ndim for o in outs] == [2, 3, 3]
    t = np.random.default_rng(4).normal(size=(2, 3, 3))
    f = symlab.function([T], outs, mode="NUMPY")
    s, tr, sq = f(t)
    np.testing.assert_allclose(s, t.sum(axis=1))
    np.testing.assert_allclose(tr, np.transpose(t, (0, 2, 1)))
    np.testing.assert_allclose(sq, t @ t)


def test_vectorize_graph_unbatched_parts_are_kept():
    v, W = st.dvector("v"), st.dmatrix("W")
    shared_part = st.exp(W)
    out = vectorize_graph(st.dot(v, shared_part), {v: st.dmatrix("V")})
    assert shared_part in symlab.graph.ancestors([out])


def test_vectorize_graph_refuses_an_op_without_a_batched_form():
    x = st.dvector("x")
    with pytest.raises(VectorizeError, match=r"Subtensor.*has no batched form"):
        vectorize_graph(x[1:], {x: st.dmatrix("X")})
    m = st.dmatrix("m")
    with pytest.raises(VectorizeError, match="searches the flattened"):
        vectorize_graph(st.argmax(m), {m: st.dtensor3("t")})


def test_vectorize_graph_bad_replacements():
    x = st.dvector("x")
    with pytest.raises(TypeError, match=r"cannot replace x .* at least 1 dimensions"):
        vectorize_graph(x * 2, {x: st.dscalar("s")})
    with pytest.raises(TypeError, match="dtype float64"):
        vectorize_graph(x * 2, {x: st.imatrix("i")})
    with pytest.raises(TypeError, match="replace must be a dict"):
        vectorize_graph(x * 2, [(x, st.dmatrix())])
