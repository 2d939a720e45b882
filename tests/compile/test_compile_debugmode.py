"""DebugMode catches broken ops and wrong rewrites; NanGuard names the node that made a NaN."""

import numpy as np
import pytest

import symlab
import symlab.tensor as st
from symlab.compile.debugmode import (
    BadDestroyMap,
    BadInferShape,
    BadOutputType,
    BadRewrite,
    BadThunkOutput,
    BadViewMap,
    DebugModeError,
)
from symlab.compile.modes import DebugMode
from symlab.compile.nanguard import NanGuardError
from symlab.graph import Apply, Op
from symlab.rewriting import PatternNodeRewriter, default_db, register


class _Unary(Op):
    """Base of the deliberately broken ops: one float vector in, one out."""

    def make_node(self, x):
        x = st.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]


class NoisyDouble(_Unary):
    """Wrong perform: not a function of its input."""

    rng = np.random.default_rng(0)

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 2.0 + self.rng.normal(size=inputs[0].shape)


class WrongDtype(_Unary):
    """Wrong perform: float32 where the type says float64."""

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = (inputs[0] * 2.0).astype("float32")


class SneakyInplace(_Unary):
    """Writes into its input without declaring a destroy_map."""

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        x += 1.0
        output_storage[0][0] = x.copy()


class SecretView(_Unary):
    """Returns its input itself without declaring a view_map."""

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0]


class BadShape(_Unary):
    """Correct perform, wrong infer_shape."""

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 2.0

    def infer_shape(self, fgraph, node, input_shapes):
        (n,) = input_shapes[0]
        return [(n + 1,)]


def _compile(op, mode="DEBUG"):
    x = st.dvector("x")
    return symlab.function([x], (op(x * 3.0) + 1.0).sum(), mode=mode)


def test_the_ops_run_silently_in_numpy_mode():
    for op in (NoisyDouble(), WrongDtype(), SneakyInplace(), SecretView(), BadShape()):
        _compile(op, mode="NUMPY")(np.ones(3))


def test_wrong_perform_not_deterministic():
    with pytest.raises(BadThunkOutput, match=r"NoisyDouble.*two runs of perform on the same inputs disagree on output 0"):
        _compile(NoisyDouble())(np.ones(3))


def test_wrong_perform_dtype():
    with pytest.raises(BadOutputType, match=r"node \d \(WrongDtype.*output 0 should be a TensorType\(float64, \(\?,\)\).*float32"):
        _compile(WrongDtype())(np.ones(3))


def test_undeclared_inplace_write():
    with pytest.raises(BadDestroyMap) as info:
        _compile(SneakyInplace())(np.ones(3))
    message = str(info.value)
    assert "SneakyInplace" in message and "modified its input 0" in message and "undeclared inplace write" in message
    assert "Before: array([3., 3., 3.])" in message and "after: array([4., 4., 4.])" in message


def test_undeclared_write_into_a_protected_input():
    x = st.dvector("x")
    f = symlab.function([x], SneakyInplace()(x).sum(), mode="DEBUG")
    value = np.ones(2)
    with pytest.raises(BadDestroyMap, match="modified its input 0 \\(x\\)"):
        f(value)


def test_undeclared_view():
    with pytest.raises(BadViewMap, match=r"SecretView.*output 0 shares memory with input 0"):
        _compile(SecretView())(np.ones(3))


def test_wrong_infer_shape():
    with pytest.raises(BadInferShape, match=r"BadShape.*infer_shape says output 0 .* has shape \(4,\), perform produced shape \(3,\)"):
        _compile(BadShape())(np.ones(3))


def test_checks_can_be_turned_off():
    mode = DebugMode(check_infer_shape=False)
    assert float(_compile(BadShape(), mode=mode)(np.ones(3))) == 21.0


def test_a_wrong_rewrite_is_named_with_both_values():
    name = "test_compile_wrong_exp_to_cosh"
    register(PatternNodeRewriter((st.exp, "x"), (st.cosh, "x")), "canonicalize", name=name)
    try:
        x = st.dvector("x")
        f = symlab.function([x], (st.exp(x) * 2.0).sum(), mode="DEBUG")
        assert name in {s.rule for s in f.trace.accepted}
        with pytest.raises(BadRewrite) as info:
            f(np.array([0.5, 1.0]))
        message = str(info.value)
        assert f"rule {name!r}" in message and "changed the value of output 0" in message
        assert "unoptimized array(8.7340062)" in message  # 2 * (exp(0.5) + exp(1))
        assert "after the rewrite array(5.3414132)" in message  # 2 * (cosh(0.5) + cosh(1))
        assert "applied to node Elemwise{exp,no_inplace}(x)" in message
        assert "value before array([1.64872127, 2.71828183])" in message  # exp: the replaced variable's value
        assert "after array([1.12762597, 1.54308063])" in message  # cosh: its replacement's
        assert isinstance(info.value, DebugModeError)
        # the other modes run the wrong graph without noticing
        assert float(symlab.function([x], (st.exp(x) * 2.0).sum(), mode="NUMPY")([0.0])) == 2.0
    finally:
        default_db.remove(name)
    assert name not in default_db


def test_a_correct_graph_passes_every_check():
    x, y = st.dmatrix("x"), st.dvector("y")
    out = st.softmax(st.dot(x, y.reshape((3, 1)).T.T).T, axis=-1).sum() + (st.exp(x) * 2.0 + 1.0).max()
    f = symlab.function([x, y], out, mode="DEBUG")
    value = f(np.ones((2, 3)), np.ones(3))
    ref = symlab.function([x, y], out, mode="FAST_COMPILE")(np.ones((2, 3)), np.ones(3))
    np.testing.assert_allclose(value, ref)


def test_nanguard_names_the_node_and_its_inputs():
    x, y = st.dvectors("x", "y")
    f = symlab.function([x, y], (st.log(x) * y).sum(), mode="NanGuard")
    assert np.isfinite(f([1.0, 2.0], [1.0, 1.0]))
    with pytest.raises(NanGuardError) as info:
        f([-1.0, 2.0], [1.0, 1.0])
    message = str(info.value)
    assert message.startswith("NanGuard: node 0 (")
    assert "log" in message and "produced NaN in output 0" in message
    assert "input 0 (x): dtype float64, shape (2,), finite, min -1, max 2" in message
    g = symlab.function([x], (1.0 / x).sum() + x.sum(), mode="NanGuard")
    with pytest.raises(NanGuardError, match=r"(?s)produced inf.*input 1 \(x\): dtype float64, shape \(2,\), finite, min 0"):
        g([0.0, 1.0])
    quiet = symlab.function([x], (1.0 / x).sum(), mode=symlab.compile.NanGuardMode(inf_is_error=False))
    assert np.isinf(quiet([0.0, 1.0]))


# -- infer_shape in terms of other variables of the graph ---------------------------------------------------
class ShapedLike(Op):
    """``x`` transposed in shape; ``infer_shape`` gives it from the graph's first input, not from the node's."""

    def __init__(self, order):
        self.order = order

    def make_node(self, x):
        x = st.as_tensor_variable(x)
        return Apply(self, [x], [st.dmatrix()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        output_storage[0][0] = x.reshape(x.shape[::-1]).copy()  # (2, 3) -> (3, 2)

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(fgraph.inputs[0].shape[d] for d in self.order)]


def test_infer_shape_of_a_reshape_to_another_variables_shape_is_computed_from_the_calls_inputs():
    a, b = st.dmatrix("a"), st.dmatrix("b")
    for out in (st.exp(a).reshape((a.shape[1], a.shape[0])), st.exp(a).reshape(b.shape)):
        got = symlab.function([a, b], out, mode="DEBUG", on_unused_input="ignore")(np.ones((2, 3)), np.ones((3, 2)))
        np.testing.assert_array_equal(got, np.full((3, 2), np.e))
    right = symlab.function([a], ShapedLike((1, 0))(st.exp(a)) * 2.0, mode="DEBUG")
    assert right(np.ones((2, 3))).shape == (3, 2)
    wrong = symlab.function([a], ShapedLike((0, 1))(st.exp(a)) * 2.0, mode="DEBUG")
    with pytest.raises(BadInferShape, match=r"ShapedLike.*infer_shape says output 0 .* has shape \(2, 3\), perform "
                       r"produced shape \(3, 2\)"):
        wrong(np.ones((2, 3)))


# -- rewrites compared at the precision that flowed through the graph ---------------------------------------
def test_a_float32_computation_cast_to_float64_is_compared_at_float32_precision():
    from symlab.compile.bad_rewrite import lowest_precision

    e = st.fvector("e")
    out = st.cast(e ** 3, "float64")  # pow_three: e * e * e, an ulp of float32 away from e ** 3
    assert lowest_precision([out]) == "float32" and lowest_precision([st.dvector("d") * 2.0]) == "float64"
    value = np.array([2.084], dtype="float32")
    got = symlab.function([e], out, mode="DEBUG")(value)
    assert got.dtype == "float64"
    np.testing.assert_allclose(got, out.eval({e: value}), rtol=2e-7)


def test_a_wrong_rewrite_of_a_float32_computation_is_still_named():
    name = "test_compile_wrong_exp_to_cosh_float32"
    register(PatternNodeRewriter((st.exp, "x"), (st.cosh, "x")), "canonicalize", name=name)
    try:
        e = st.fvector("e")
        f = symlab.function([e], st.cast(st.exp(e) * 2.0, "float64"), mode="DEBUG")
        with pytest.raises(BadRewrite, match=f"rule {name!r}.*changed the value of output 0"):
            f(np.array([0.5, 1.0], dtype="float32"))
    finally:
        default_db.remove(name)


# -- stabilizations judged against the graph as written, evaluated accurately --------------------------------
def test_a_stabilization_where_the_graph_as_written_loses_digits_is_not_blamed():
    """log(1 - p) near p = 1 keeps few digits of 1 - p (none from x = 37 on: -inf): log_one_minus_sigmoid's
    -softplus(x) is right there, judged against the graph computed in extended precision and its own rounding."""
    from symlab.compile.bad_rewrite import unfair_elements

    x, f = st.dvector("x"), st.fvector("f")
    values = np.array([-800.0, -30.0, -2.0, 0.5, 12.0, 27.0, 36.0, 40.0, 800.0])
    for var, dtype, rtol in ((x, "float64", 1e-15), (f, "float32", 1e-6)):
        out = st.log(1 - 1 / (1 + st.exp(-var)))
        fn = symlab.function([var], out, mode="DEBUG")
        assert {"log_one_minus_sigmoid"} <= {s.rule for s in fn.trace.accepted}
        got = fn(values.astype(dtype))
        assert got.dtype == dtype
        np.testing.assert_allclose(got, -np.logaddexp(0.0, values.astype(dtype)), rtol=rtol)
        with np.errstate(all="ignore"):  # the graph as written: wrong digits, then -inf
            as_written = symlab.function([var], out, mode=DebugMode().excluding("logistic"))(values.astype(dtype))
        assert np.isneginf(as_written[-1]) and not np.allclose(as_written, got, rtol=1e-7)
    # the rule: a value right to the original's own rounding error passes, a value off where it is accurate does not
    before, accurate = np.array([0.0, -30.00102]), np.array([-1e-20, -30.00004])
    assert not unfair_elements(before, np.array([-1e-20, -30.0]), accurate, np.array([0.0, 2e-3]), 1e-7, 1e-9,
                               stabilize=True).any()
    assert unfair_elements(before, np.array([-1e-20, -30.0]), accurate, np.array([0.0, 1e-9]), 1e-7, 1e-9,
                           stabilize=True).tolist() == [False, True]


def test_a_wrong_stabilize_rewrite_is_still_named():
    """A sign error in a stabilize rule: wrong where the graph as written is accurate, so blamed, with the values."""
    from symlab.compile.bad_rewrite import WIDE

    name = "test_compile_wrong_log_one_minus_sigmoid"
    register(PatternNodeRewriter((st.log, (st.sub, 1, (st.sigmoid, "x"))), (st.neg, (st.softplus, (st.neg, "x")))),
             "stabilize", name=name)
    try:
        x = st.dvector("x")
        mode = DebugMode().excluding("log_one_minus_sigmoid")
        f = symlab.function([x], st.log(1 - 1 / (1 + st.exp(-x))), mode=mode)
        assert name in {s.rule for s in f.trace.accepted}
        with pytest.raises(BadRewrite) as info:
            f(np.array([-2.0, 0.5, 30.0, 800.0]))
        message = str(info.value)
        assert f"[stabilize] rule {name!r}" in message and "changed the value of output 0" in message
        # 800: -inf as written, finite after: a stabilization; the three others are wrong (30: where the graph as
        # written keeps 3 digits, -30.001, and its extended-precision value is -30.0000004)
        assert "wrong at 3 of 4 elements" in message
        assert "(0,): -0.12692801104297252, -2.1269280110429727, -0.12692801104297" in message
        if WIDE is not np.float64:  # extended precision: 64 significant bits
            assert "(2,): -30.001020555434774, -9.3576229688397368e-14, -30.00000044053" in message
        ok = symlab.function([x], st.log(1 - 1 / (1 + st.exp(-x))), mode="DEBUG")  # the right rule
        np.testing.assert_allclose(ok(np.array([-2.0, 0.5, 30.0, 800.0])), -np.logaddexp(0, [-2.0, 0.5, 30.0, 800.0]),
                                   rtol=1e-15)
    finally:
        default_db.remove(name)


@pytest.mark.parametrize("phase", ["canonicalize", "stabilize"])
def test_making_a_nan_finite_is_allowed_to_a_stabilization_only(phase):
    """x / x -> 1 turns 0 / 0 = NaN into 1: a change of value for an ordinary rewrite (canonicalize keeps values),
    allowed to a stabilize rewrite, whose purpose is to make finite what the graph as written is not."""
    name = f"test_compile_div_self_{phase}"
    register(PatternNodeRewriter((st.true_div, "x", "x"), (st.second, "x", 1.0)), phase, name=name)
    try:
        x = st.dvector("x")
        f = symlab.function([x], x / x + x, mode="DEBUG")
        assert name in {s.rule for s in f.trace.accepted}
        if phase == "stabilize":
            np.testing.assert_array_equal(f(np.array([0.0, 2.0])), [1.0, 3.0])
        else:
            with pytest.raises(BadRewrite, match=rf"(?s)rule {name!r}.*wrong at 1 of 2 elements.*\(0,\): nan, 1, nan"):
                f(np.array([0.0, 2.0]))
        np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [2.0, 3.0])  # where it keeps the values: no error
    finally:
        default_db.remove(name)
