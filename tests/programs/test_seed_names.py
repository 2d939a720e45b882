"""The seeds' historical names run as written: Tensor and Result (seed 004), gof.Apply (seeds 000 and 003),
tensor.grad (seed 003), transfer and register_transfer (seed 002)."""

import numpy as np
import pytest

import symlab
import symlab.tensor as T
from symlab import gof
from symlab.graph import Apply, Variable
from symlab.tensor import TensorType


def test_seed_004_long_example_as_written():
    namespace: dict = {}
    exec("from symlab.tensor import *", namespace)  # the seed's `from theano.tensor import *`
    exec(
        "float64_matrix = Tensor(dtype = 'float64',              # double\n"
        "                        broadcastable = (False, False)) # matrix\n"
        "x = Result(type = float64_matrix, name = 'x')\n"
        "y = Result(type = float64_matrix, name = 'y')\n"
        "z = Result(type = float64_matrix, name = 'z')\n"
        "mul_result = Result(type = float64_matrix)\n"
        "assert mul_result.owner is None\n"
        "node_mul = Apply(op = mul, inputs = [y, z], outputs = [mul_result])\n"
        "assert mul_result.owner is node_mul and mul_result.index == 0\n"
        "add_result = Result(type = float64_matrix)\n"
        "assert add_result.owner is None\n"
        "node_add = Apply(op = add, inputs = [x, mul_result], outputs = [add_result])\n"
        "assert add_result.owner is node_add and add_result.index == 0\n"
        "e = add_result\n"
        "assert e.owner.inputs[0] is x\n"
        "assert e.owner.inputs[1] is mul_result\n"
        "assert e.owner.inputs[1].owner.inputs[0] is y\n"
        "assert e.owner.inputs[1].owner.inputs[1] is z\n",
        namespace,
    )
    assert namespace["Tensor"] is TensorType and namespace["Result"] is Variable
    assert namespace["float64_matrix"] == TensorType("float64", (None, None))
    x, y, z, e = (namespace[k] for k in "xyze")
    values = {x: np.ones((2, 2)), y: np.full((2, 2), 2.0), z: np.full((2, 2), 3.0)}
    np.testing.assert_array_equal(e.eval(values), np.full((2, 2), 7.0))


def test_gof_apply_builds_nodes_as_seeds_000_and_003_write():
    x = gof.Variable(type=T.dscalar, name="x")
    node = gof.Apply(op=T.add, inputs=[x, gof.Constant(type=T.lscalar, data=1)], outputs=[gof.Variable(type=T.dscalar)])
    e = node.outputs[0]
    assert gof.Apply is Apply and gof.Result is Variable and symlab.gof is gof
    assert float(e.eval({x: 2.5})) == 3.5


def test_tensor_grad_jacobian_hessian_are_the_gradient_modules():
    from symlab import gradient

    assert T.grad is gradient.grad and T.jacobian is gradient.jacobian and T.hessian is gradient.hessian
    x = T.dvector("x")
    g = T.grad((x**3).sum(), x)
    np.testing.assert_allclose(g.eval({x: np.array([1.0, 2.0])}), [3.0, 12.0])
    with pytest.raises(AttributeError, match="module 'symlab.tensor' has no attribute 'gradd'"):
        T.gradd  # noqa: B018


def test_transfer_to_cpu_is_the_variable_and_registered_targets_are_asked_newest_first():
    x = T.dvector("x")
    assert x.transfer("cpu") is x and T.transfer(x, None) is x
    calls = []

    def first(var, target):
        calls.append(("first", target))
        return var * 1.0 if target == "dev" else None

    def second(var, target):
        calls.append(("second", target))
        return var * 2.0 if target == "dev" else None

    T.register_transfer(first)
    T.register_transfer(second)
    try:
        moved = x.transfer("dev")
        assert calls == [("second", "dev")]
        np.testing.assert_array_equal(moved.eval({x: np.array([1.0, 3.0])}), [2.0, 6.0])
    finally:
        T.unregister_transfer(second)
        T.unregister_transfer(first)
    with pytest.raises(ValueError, match=r"cannot move x to target 'gpu'.*register_transfer"):
        x.transfer("gpu")
    with pytest.raises(TypeError, match="fn must be callable, received int"):
        T.register_transfer(3)
    with pytest.raises(ValueError, match="was never registered"):
        T.unregister_transfer(first)


def test_star_import_gives_the_language_not_the_submodules():
    namespace: dict = {}
    exec("from symlab.tensor import *", namespace)
    assert "type" not in namespace and "math" not in namespace  # Python's own type() stays usable
    assert {"dmatrix", "add", "mul", "Apply", "Tensor", "Result", "grad", "hessian"} <= set(namespace)
