"""DestroyHandler: which destroyers are refused, the orderings it adds, and real values."""

import numpy as np
import pytest
from helpers import run_fgraph

import symlab.tensor as T
from symlab.graph.basic import Apply
from symlab.graph.destroyhandler import DestroyHandler, destroyed_inputs
from symlab.graph.features import AlreadyThere, ReplaceValidate
from symlab.graph.fg import FunctionGraph, InconsistencyError
from symlab.graph.traversal import io_toposort
from symlab.scalar import basic as ps
from symlab.tensor.elemwise import DimShuffle, Elemwise


def make_fg(inputs, outputs, mutable=()):
    return FunctionGraph(inputs, outputs, features=[ReplaceValidate(), DestroyHandler(mutable)])


def inplace_version(node, i=0):
    """An Elemwise node like ``node`` that writes its output into input ``i``."""
    return Apply(Elemwise(node.op.scalar_op, {0: i}), list(node.inputs), [node.outputs[0].type()])


def make_inplace(fg, node, i=0):
    """Replace ``node`` by its inplace version with validation; return the new node."""
    new = inplace_version(node, i)
    fg.replace_validate(node.outputs[0], new.outputs[0], reason="test")
    fg.check_integrity()
    return new


def refused(fg, node, i=0, match=None):
    """Check the inplace replacement is refused and the graph left exactly as it was."""
    before_nodes = fg.apply_nodes
    before_clients = {v: sorted(map(str, c)) for v, c in fg.clients.items()}
    before_destroyers = {n for n in fg.apply_nodes if destroyed_inputs(n)}
    with pytest.raises(InconsistencyError, match=match):
        make_inplace(fg, node, i)
    fg.check_integrity()
    assert fg.apply_nodes == before_nodes
    assert {v: sorted(map(str, c)) for v, c in fg.clients.items()} == before_clients
    assert {n for n in fg.apply_nodes if destroyed_inputs(n)} == before_destroyers
    fg.validate()


def node_of(fg, name):
    (node,) = [n for n in fg.apply_nodes if any(o.name == name for o in n.outputs)]
    return node


# -- refusals ----------------------------------------------------------------------------------------------
def test_graph_without_destroyers_is_valid_and_unordered():
    x = T.dmatrix("x")
    fg = make_fg([x], [x.T + 1.0])
    fg.validate()
    assert fg.destroy_handler.orderings(fg) == {}
    assert not fg.has_destroyers(fg.variables)


def test_protected_input_cannot_be_destroyed():
    x = T.dvector("x")
    fg = make_fg([x], [T.exp(x) * 2.0])
    exp_node = fg.outputs[0].owner.inputs[0].owner
    refused(fg, exp_node, match=r"would overwrite x, a protected graph input \(not mutable\)")


def test_view_of_protected_input_cannot_be_destroyed():
    x = T.dmatrix("x")
    fg = make_fg([x], [T.exp(x.T)])
    exp_node = fg.outputs[0].owner
    assert isinstance(exp_node.inputs[0].owner.op, DimShuffle)
    refused(fg, exp_node, match=r"a view of the protected graph input x")


def test_constant_and_view_of_constant_cannot_be_destroyed():
    x = T.tensor("float64", shape=(3,), name="x")
    c = T.constant(np.array([1.0, 2.0, 3.0]))
    fg = make_fg([x], [T.exp(x) + c])
    add = fg.outputs[0].owner
    refused(fg, add, 1, match=r"overwrite TensorConstant\{\[1. 2. 3.\]\}, a constant")

    m = T.tensor("float64", shape=(2, 2), name="m")
    cm = T.constant(np.eye(2))
    fg = make_fg([m], [T.exp(m) + cm.T])
    add = fg.outputs[0].owner
    refused(fg, add, 1, match=r"a view of the constant")


@pytest.mark.parametrize("by", ["position", "variable"])
def test_mutable_input_may_be_destroyed_and_really_is(by):
    x = T.dvector("x")
    if by == "position":
        fg = make_fg([x], [T.exp(x) * 2.0], mutable=[0])
    else:
        fg = FunctionGraph([x], [T.exp(x) * 2.0], clone=False, features=[ReplaceValidate(), DestroyHandler([x])])
    exp_node = fg.outputs[0].owner.inputs[0].owner
    new = make_inplace(fg, exp_node)
    assert str(new.op) == "Elemwise{exp,inplace}"
    assert fg.destroyers(fg.inputs[0]) == [new]
    value = np.array([0.0, 1.0])
    (out,) = run_fgraph(fg, [value], copy_mutable=False)
    np.testing.assert_allclose(out, 2 * np.exp([0.0, 1.0]))
    np.testing.assert_allclose(value, np.exp([0.0, 1.0]))  # the caller's buffer was reused
    value = np.array([0.0, 1.0])
    run_fgraph(fg, [value])  # a copy is passed
    np.testing.assert_array_equal(value, [0.0, 1.0])


def test_mutable_input_must_be_an_input():
    x, y = T.dvectors("x", "y")
    with pytest.raises(ValueError, match="not an input"):
        make_fg([x], [x + 1.0], mutable=[y])


def test_destroyed_value_that_is_a_graph_output_is_refused():
    x = T.dvector("x")
    e = T.exp(x)
    e.name = "e"
    fg = make_fg([x], [e, e * 2.0])
    mul = fg.outputs[1].owner
    refused(fg, mul, 0, match="it is output 0 of the graph")
    # a view of the destroyed value as output is refused too
    m = T.dmatrix("m")
    e = T.exp(m)
    fg = make_fg([m], [e.T, e * 2.0])
    refused(fg, fg.outputs[1].owner, 0, match="shares memory with .* output 0 of the graph")


def test_double_destroy_is_refused_directly_and_through_a_view():
    x = T.dmatrix("x")
    e = T.exp(x)
    e.name = "e"
    fg = make_fg([x], [e + 1.0, e * 2.0, T.neg(e.T)])
    add, mul, neg = (o.owner for o in fg.outputs)
    new_add = make_inplace(fg, add)
    refused(fg, mul, 0, match="overwritten by more than one node")
    refused(fg, neg, 0, match=r"the memory of e .* more than one node")
    assert fg.destroyers(node_of(fg, "e").outputs[0]) == [new_add]


def test_input_aliasing_within_the_destroyer_is_refused():
    x = T.dmatrix("x")
    e = T.exp(x)
    fg = make_fg([x], [e + e, e * e.T])
    add, mul = (o.owner for o in fg.outputs)
    refused(fg, add, 0, match=r"also reading input 1 .* shares its memory")
    refused(fg, add, 1, match=r"also reading input 0")
    refused(fg, mul, 0, match=r"shares its memory")


def test_reader_that_needs_the_destroyer_result_is_refused():
    x = T.dvector("x")
    e = T.exp(x)
    e.name = "e"
    y = e + 1.0
    y.name = "y"
    fg = make_fg([x], [y * e])  # y * e reads e but needs y, which would overwrite e
    refused(fg, node_of(fg, "y"), 0, match=r"reads e, which .* overwrites, but it also needs the result")


def test_two_destroyers_each_reading_what_the_other_overwrites_is_refused():
    x = T.dvector("x")
    a, b = T.exp(x), T.sin(x)
    fg = make_fg([x], [a + b, b * a])
    add, mul = (o.owner for o in fg.outputs)
    make_inplace(fg, add, 0)  # overwrites a; mul reads a so it runs first
    refused(fg, mul, 0, match="cycle")  # would overwrite b, which add reads: each must run first
    # The message names both orderings of the cycle (no data path is involved).
    refused(fg, mul, 0, match=r"add,inplace.* must run before .*mul,inplace.*; .*mul,inplace.* must run before")


# -- orderings and values --------------------------------------------------------------------------------
def test_orderings_put_other_readers_first_and_values_are_right():
    x = T.dmatrix("x")
    e = T.exp(x)
    e.name = "e"
    s = T.sin(e.T)
    s.name = "s"
    y = e + 1.0
    y.name = "y"
    fg = make_fg([x], [y, s * 3.0])
    expected = [np.exp(np.eye(2)) + 1, np.sin(np.exp(np.eye(2)).T) * 3]
    # Reading s and the transpose before y would be the natural order only by luck: force y first.
    new = make_inplace(fg, node_of(fg, "y"), 0)
    readers = fg.destroy_handler.orderings(fg)[new]
    view_node = node_of(fg, "s").inputs[0].owner
    assert node_of(fg, "s") in readers and view_node in readers
    order = fg.toposort()
    assert order.index(node_of(fg, "s")) < order.index(new)
    assert order == io_toposort(fg.inputs, fg.outputs, fg.destroy_handler.orderings(fg))
    value = np.eye(2)
    for got, want in zip(run_fgraph(fg, [value]), expected):
        np.testing.assert_allclose(got, want)
    np.testing.assert_array_equal(value, np.eye(2))  # the protected input is untouched


def test_chain_of_destroyers_on_a_view():
    x = T.dmatrix("x")
    e = T.exp(x)
    e.name = "e"
    y = e.T + 1.0
    fg = make_fg([x], [y * 2.0])
    add = fg.outputs[0].owner.inputs[0].owner
    e_var = node_of(fg, "e").outputs[0]
    new_add = make_inplace(fg, add, 0)  # overwrites a view of the intermediate e
    assert fg.destroyers(e_var) == [new_add]
    new_mul = make_inplace(fg, fg.outputs[0].owner, 0)  # and then the add's result
    assert fg.destroyers(e_var) == [new_add]
    elemwise = [str(n.op) for n in fg.toposort() if isinstance(n.op, Elemwise)]
    assert elemwise == ["Elemwise{exp,no_inplace}", "Elemwise{add,inplace}", "Elemwise{mul,inplace}"]
    assert fg.destroyers(new_add.outputs[0]) == [new_mul]
    value = np.array([[0.0, 1.0], [2.0, 3.0]])
    (out,) = run_fgraph(fg, [value])
    np.testing.assert_allclose(out, (np.exp(value).T + 1) * 2)
    np.testing.assert_array_equal(value, [[0.0, 1.0], [2.0, 3.0]])


def test_has_destroyers_sees_aliases():
    x = T.dmatrix("x")
    e = T.exp(x)
    e.name = "e"
    t = e.T
    t.name = "t"
    fg = make_fg([x], [T.neg(e) + 1.0, t * 2.0])
    neg = fg.outputs[0].owner.inputs[0].owner
    e_var = node_of(fg, "e").outputs[0]
    t_var = node_of(fg, "t").outputs[0]
    assert fg.destroy_handler.aliases(t_var) == [e_var, t_var]
    assert not fg.has_destroyers([t_var])
    new = make_inplace(fg, neg, 0)
    assert fg.has_destroyers([t_var]) and fg.has_destroyers([e_var])
    assert fg.destroyers(t_var) == [new]
    assert not fg.has_destroyers([fg.inputs[0]])
    # the destroyer pruned away: nothing is destroyed any more
    fg.replace_validate(new.outputs[0], T.neg(fg.inputs[0]), reason="test")
    fg.check_integrity()
    assert not fg.has_destroyers([e_var])


def test_toposort_works_between_a_bad_replacement_and_its_validation():
    x = T.dvector("x")
    e = T.exp(x)
    e.name = "e"
    y = e + 1.0
    y.name = "y"
    fg = make_fg([x], [y * e])
    add = node_of(fg, "y")
    new = inplace_version(add)
    fg.replace(add.outputs[0], new.outputs[0], reason="unvalidated")
    assert len(fg.toposort()) == 4  # the cyclic orderings are withheld
    with pytest.raises(InconsistencyError):
        fg.validate()
    assert not fg.consistent()


# -- attaching -----------------------------------------------------------------------------------------------
def test_one_handler_per_graph_and_one_graph_per_handler():
    x = T.dvector("x")
    fg = make_fg([x], [x + 1.0])
    with pytest.raises(AlreadyThere):
        fg.attach_feature(DestroyHandler())
    handler = fg.destroy_handler
    with pytest.raises(AlreadyThere):
        FunctionGraph([x], [x * 2.0], features=[handler])
    fg.remove_feature(handler)
    assert fg.destroy_handler is None and not fg.has_destroyers(fg.variables) and fg.destroyers(fg.inputs[0]) == []
    fg.attach_feature(DestroyHandler())
    assert fg.destroy_handler is not handler


def test_attaching_to_a_graph_that_already_has_destroyers():
    x = T.dvector("x")
    e = T.exp(x)
    node = Elemwise(ps.mul, {0: 0}).make_node(e, e.type.filter_variable(T.exp(x)))
    fg = FunctionGraph([x], [node.outputs[0]], features=[ReplaceValidate()])
    handler = DestroyHandler()
    fg.attach_feature(handler)
    fg.validate()
    (destroyer,) = [n for n in fg.apply_nodes if destroyed_inputs(n)]
    assert fg.destroyers(destroyer.inputs[0]) == [destroyer]
    bad = Elemwise(ps.neg, {0: 0}).make_node(x)
    fg2 = FunctionGraph([x], [bad.outputs[0]], features=[ReplaceValidate(), DestroyHandler()])
    with pytest.raises(InconsistencyError, match="protected graph input"):
        fg2.validate()


# -- the ops -------------------------------------------------------------------------------------------------
def test_elemwise_inplace_writes_into_the_input_buffer():
    x, y = T.dvectors("x", "y")
    node = Elemwise(ps.add, {0: 1}).make_node(x, y)
    assert str(node.op) == "Elemwise{add,inplace}" and node.op.destroy_map == {0: [1]}
    a, b = np.array([1.0, 2.0]), np.array([10.0, 20.0])
    cells = [[None]]
    node.op.perform(node, [a, b], cells)
    assert cells[0][0] is b
    np.testing.assert_array_equal(b, [11.0, 22.0])
    np.testing.assert_array_equal(a, [1.0, 2.0])
    with pytest.raises(ValueError, match="read-only"):
        node.op.perform(node, [a, np.asarray(T.constant(np.ones(2)).data)], [[None]])


def test_elemwise_inplace_needs_an_input_of_the_output_type():
    v, m = T.dvector("v"), T.dmatrix("m")
    with pytest.raises(TypeError, match="cannot be written into input 0"):
        Elemwise(ps.add, {0: 0}).make_node(v, m)  # v is broadcast
    i = T.ivector("i")
    with pytest.raises(TypeError, match="cannot be written into input 0"):
        Elemwise(ps.true_div, {0: 0}).make_node(i, i)  # int input, float output
    Elemwise(ps.add, {0: 1}).make_node(v, m)


def test_inplace_dimshuffle_is_only_a_name():
    plain, inplace = DimShuffle(1, ("x", 0)), DimShuffle(1, ("x", 0), inplace=True)
    assert str(plain) == "DimShuffle{x,0}" and str(inplace) == "InplaceDimShuffle{x,0}"
    assert plain != inplace and plain == DimShuffle(1, ("x", 0))
    assert plain.view_map == inplace.view_map == {0: [0]}
    x = T.dvector("x")
    np.testing.assert_array_equal(inplace(x).eval({x: [1.0, 2.0]}), [[1.0, 2.0]])
