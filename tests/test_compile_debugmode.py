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
