"""Graph objects: the seed 000/004 examples and the refusals of Apply and Constant."""

import numpy as np
import pytest

import symlab.tensor as T
from symlab.graph import Apply, Constant, CycleError, GraphConstructionError, Op, Variable
from symlab.tensor import TensorType


def test_short_example_seed_000():
    x = T.matrix("x")
    y = T.matrix("y")
    z = T.matrix("z")
    e = x + y * z
    assert e.owner.op == T.add
    assert e.owner.inputs[0] is x
    product = e.owner.inputs[1]
    assert product.owner.op == T.mul
    assert product.owner.inputs == [y, z]
    assert x.owner is None and y.owner is None and z.owner is None


def test_long_example_seed_000():
    from symlab.tensor import Apply, Constant, TensorType, Variable, add, mul  # noqa: F401  (the seed's import)

    float64_matrix = TensorType(dtype="float64", broadcastable=(False, False))
    x = Variable(type=float64_matrix, name="x")
    y = Variable(type=float64_matrix, name="y")
    z = Variable(type=float64_matrix, name="z")
    mul_variable = Variable(type=float64_matrix)
    assert mul_variable.owner is None
    node_mul = Apply(op=mul, inputs=[y, z], outputs=[mul_variable])
    assert mul_variable.owner is node_mul
    assert mul_variable.index == 0
    add_variable = Variable(type=float64_matrix)
    assert add_variable.owner is None
    node_add = Apply(op=add, inputs=[x, mul_variable], outputs=[add_variable])
    assert add_variable.owner is node_add
    assert add_variable.index == 0
    e = add_variable
    assert e.owner.inputs[0] is x
    assert e.owner.inputs[1] is mul_variable
    assert e.owner.inputs[1].owner.inputs[0] is y
    assert e.owner.inputs[1].owner.inputs[1] is z
    # The hand-built graph computes what the short one does.
    values = {x: np.ones((2, 2)), y: np.full((2, 2), 2.0), z: np.full((2, 2), 3.0)}
    np.testing.assert_array_equal(e.eval(values), np.full((2, 2), 7.0))


def test_seed_004_long_example_with_result_spelling():
    # Seed 004 is the oldest note: ``Tensor``/``Result`` are ``TensorType``/``Variable`` here.
    float64_matrix = TensorType(dtype="float64", broadcastable=(False, False))
    y, z = Variable(type=float64_matrix, name="y"), Variable(type=float64_matrix, name="z")
    mul_result = Variable(type=float64_matrix)
    node_mul = Apply(op=T.mul, inputs=[y, z], outputs=[mul_result])
    assert mul_result.owner is node_mul and mul_result.index == 0


def test_variable_built_by_hand_is_a_tensor_variable():
    v = Variable(type=T.dmatrix, name="v")
    assert isinstance(v, T.TensorVariable)
    assert (v + v).owner.op == T.add


def test_automatic_wrapping_seed_000():
    e = T.dscalar("x") + 1
    x, one = e.owner.inputs
    assert isinstance(one, Constant)
    assert one.type == T.lscalar
    assert one.data == 1
    assert e.type == T.dscalar
    # ...which is the graph the seed builds by hand:
    node = Apply(
        op=T.add,
        inputs=[Variable(type=T.dscalar, name="x"), Constant(type=T.lscalar, data=1)],
        outputs=[Variable(type=T.dscalar)],
    )
    assert float(node.outputs[0].eval({node.inputs[0]: 2.5})) == 3.5


def test_apply_refuses_non_variable_inputs():
    with pytest.raises(GraphConstructionError, match=r"input 1 must be a Variable, received float"):
        Apply(T.add, [T.dscalar(), 1.0], [T.dscalar()])


def test_apply_refuses_owned_outputs():
    x = T.dscalar("x")
    y = x + x
    with pytest.raises(GraphConstructionError, match="already output 0 of"):
        Apply(T.add, [x, x], [y])
    assert y.owner.inputs == [x, x]  # unchanged


def test_apply_refuses_constant_output():
    with pytest.raises(GraphConstructionError, match="Constant"):
        Apply(T.neg, [T.dscalar()], [T.constant(1.0)])


def test_apply_refuses_cycles():
    a = T.dscalar("a")
    b = T.neg(a)
    # An ownerless variable that the inputs depend on cannot become an output.
    with pytest.raises(CycleError, match="cycle"):
        Apply(T.neg, [b], [a])
    with pytest.raises(CycleError, match="cycle"):
        Apply(T.neg, [a], [a])
    assert a.owner is None and b.owner.inputs == [a]


def test_constant_data_set_once_and_read_only():
    c = T.constant(np.arange(3.0))
    assert not c.data.flags.writeable
    with pytest.raises(ValueError):
        c.data[0] = 5.0
    with pytest.raises(AttributeError, match="only once"):
        c.data = np.zeros(3)
    np.testing.assert_array_equal(c.data, [0.0, 1.0, 2.0])


def test_constant_data_is_filtered():
    c = Constant(type=T.lscalar, data=1)
    assert c.data.dtype == np.int64
    with pytest.raises(TypeError, match="cannot store"):
        Constant(type=T.lscalar, data=1.5)


def test_variable_type_must_be_a_type():
    with pytest.raises(TypeError, match="expects a symlab Type instance, received 'float64'"):
        Variable(type="float64")


def test_op_props_equality_hash_and_str():
    class Scale(Op):
        __props__ = ("factor",)

        def __init__(self, factor):
            self.factor = factor

        def make_node(self, x):
            x = T.as_tensor_variable(x)
            return Apply(self, [x], [x.type()])

        def perform(self, node, inputs, output_storage):
            output_storage[0][0] = inputs[0] * self.factor

    assert Scale(2) == Scale(2) and Scale(2) != Scale(3)
    assert hash(Scale(2)) == hash(Scale(2))
    assert str(Scale(2)) == "Scale{factor=2}"
    x = T.dvector("x")
    np.testing.assert_array_equal(Scale(3)(x).eval({x: np.array([1.0, 2.0])}), [3.0, 6.0])

    class Anonymous(Op):
        pass

    assert Anonymous() != Anonymous()  # no __props__: identity
    with pytest.raises(NotImplementedError, match="make_node"):
        Anonymous()(x)


def test_op_call_default_output_and_return_list():
    class Two(Op):
        __props__ = ()
        default_output = 1

        def make_node(self, x):
            return Apply(self, [x], [x.type(), x.type()])

    x = T.dscalar("x")
    out = Two()(x)
    assert out.index == 1
    assert len(Two()(x, return_list=True)) == 2
    assert out.owner.default_output() is out


def test_apply_clone_with_new_inputs():
    x, y = T.dvectors("x", "y")
    node = (x + 1.0).owner
    new = node.clone_with_new_inputs([y, node.inputs[1]])
    assert new.inputs[0] is y and new.op == node.op and new.outputs[0] is not node.outputs[0]
    with pytest.raises(TypeError, match="Cannot convert"):
        node.clone_with_new_inputs([T.dmatrix("m"), node.inputs[1]])


def test_str_and_repr():
    x = T.dmatrix("x")
    y = x * 2.0
    assert repr(y) == "Elemwise{mul,no_inplace}.0"
    assert str(y.owner) == "Elemwise{mul,no_inplace}(x, DimShuffle{x,x}.0)"
    assert str(T.dvector()) == "<TensorType(float64, (?,))>"
    assert str(T.constant(np.ones(1))) == "TensorConstant{(1,) of 1.0}"
    assert str(T.constant(2.0)) == "TensorConstant{2.0}"
