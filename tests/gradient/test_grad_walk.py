"""GradWalk records grad's own walk: the same nodes in the same order, and the same graph as ``grad`` returns."""

import numpy as np
import pytest

import symlab
import symlab.tensor as st
from symlab.gradient import GradObserver, GradWalk
from symlab.graph.traversal import ancestors, equal_computations, io_toposort


def _neuron():
    x1, x2, w1, w2, b = st.dscalars("x1", "x2", "w1", "w2", "b")
    n = x1 * w1 + x2 * w2 + b
    return st.tanh(n), [x1, x2, w1, w2, b]


class Spy(GradObserver):
    """Writes down every call, to check the protocol's order."""

    def __init__(self):
        self.calls = []

    def __getattribute__(self, name):
        method = object.__getattribute__(self, name)
        if name in ("start", "visit", "nothing_arrives", "undefined", "rule", "contribution", "refused", "finish"):
            def spy(*args, **kwargs):
                self.calls.append((name, args))
                return method(*args, **kwargs)
            return spy
        return method


def test_the_walk_is_grads_own_and_gives_the_same_graph():
    cost, inputs = _neuron()
    walk = GradWalk(cost, inputs)
    plain = symlab.grad(cost, inputs)
    assert equal_computations(walk.results, plain)
    # one step per apply node between the inputs and the cost, latest first (grad's reversed topological order)
    assert [step.node for step in walk.steps] == walk.order
    assert walk.order == list(reversed(io_toposort(inputs, [cost])))
    assert all(step.kind == "rule" for step in walk.steps)
    # every gradient node was built by exactly one step, and the results are built of them and forward nodes
    built = walk.gradient_nodes
    assert len(built) == len(set(built))
    behind = {v.owner for v in ancestors(walk.results) if v.owner is not None}
    assert behind <= set(built) | set(walk.forward_nodes)


def test_observer_calls_come_in_the_documented_order():
    cost, inputs = _neuron()
    spy = Spy()
    symlab.grad(cost, inputs, observer=spy)
    names = [name for name, _ in spy.calls]
    assert names[0] == "start" and names[-1] == "finish"
    visits = [str(args[0].op.scalar_op) for name, args in spy.calls if name == "visit"]
    assert visits == ["tanh", "add", "add", "mul", "mul"]
    current = None
    for name, args in spy.calls[1:-1]:  # every call between two visits is about the node visited last
        if name == "visit":
            current = args[0]
        else:
            assert args[0] is current, name
    assert [name for name, _ in spy.calls if name not in ("visit", "contribution")] == ["start"] + ["rule"] * 5 + ["finish"]
    spy = Spy()
    symlab.grad(cost, inputs[2:], observer=spy)  # x1, x2 are not asked for: the mul rules give them nothing
    assert [args[3] for name, args in spy.calls if name == "refused"] == ["off path", "off path"]


def test_a_variable_with_two_clients_sums_its_gradients_at_the_last_client():
    a, b = st.dscalars("a", "b")
    cost = st.log(a * b + st.exp(a))
    walk = GradWalk(cost, [a, b])
    sums = [(step.label, str(c.variable)) for step in walk.steps for c in step.sums]
    assert sums == [("mul", "a")]
    summed = walk.steps[-1].sums[0]
    assert summed.after.owner.op == (summed.before + summed.gradient).owner.op
    assert summed.after.owner in walk.steps[-1].new_nodes
    point = {a: 0.5, b: -1.5}
    dv = 0.5 * -1.5 + np.exp(0.5)
    assert np.isclose(walk.totals[a].eval(point), (-1.5 + np.exp(0.5)) / dv)
    assert walk.total_after(a, 3).eval(point) == pytest.approx(np.exp(0.5) / dv)  # only the exp path so far


def test_undefined_and_discrete_gradients_are_steps_that_say_why():
    x = st.dvector("x")
    walk = GradWalk((st.floor(x) * x).sum(), x, null_gradients="return")
    floor = walk.steps[-1]
    assert floor.label == "floor" and floor.contributions[0].undefined
    assert "undefined" in floor.contributions[0].gradient.type.why
    assert walk.problems[0].startswith("grad: cannot differentiate with respect to x")
    with pytest.raises(symlab.gradient.NullTypeGradError):
        GradWalk((st.floor(x) * x).sum(), x)

    i = st.lvector("i")
    walk = GradWalk((st.cast(x * 2, "int64") * x + i).sum(), [x, i])
    reasons = {(step.label, str(c.variable)): c.reason for step in walk.steps for c in step.contributions if c.reason}
    assert "integer" in reasons[("add", "i")]
    cast, double = walk.steps[-2:]
    assert cast.kind == double.kind == "nothing"
    assert "integer" in cast.why and "Cast{int64} gets no gradient" in double.why
    assert walk.problems == ["", ""]


def test_constants_and_known_grads():
    x, y = st.dvectors("x", "y")
    held = x * 3
    walk = GradWalk((held * y).sum(), [x, y], consider_constant=[held], disconnected_inputs="ignore")
    assert "constant" in [c for step in walk.steps for c in step.contributions if c.variable is held][0].reason
    assert walk.problems[0].startswith("grad: the cost does not depend on x")
    g = st.dvector("g")
    walk = GradWalk(None, x, known_grads={held: g})
    assert [step.label for step in walk.steps] == ["mul"]
    assert walk.seeds == {held: g}
    assert equal_computations([walk.results], [symlab.grad(None, x, known_grads={held: g})])


def test_an_undefined_total_stays_undefined_when_a_defined_gradient_arrives_after_it():
    # found by tests/gradient/test_grad_walk_programs.py's random costs: round's undefined gradient reached e first,
    # then mul's defined one was added to it, and grad raised a TypeError from add instead of saying why
    from symlab.gradient import NullTypeGradError
    from symlab.gradient.walk import walk_of
    from symlab.graph.null_type import NullType

    e = st.dvector("e")
    cost = (e * 2 + st.round(e)).sum()
    with pytest.raises(NullTypeGradError, match=r"cannot differentiate with respect to e: the gradient of "
                                                 r"Elemwise\{round,no_inplace\}"):
        symlab.grad(cost, e)
    walk = walk_of(cost, e)
    assert isinstance(walk.results.type, NullType) and walk.results is walk.totals[e]
    mul = walk.steps[-1]
    (received,) = [c for c in mul.contributions if c.variable is e]
    assert received.after is received.before is walk.results and not received.summed and not mul.sums
    assert str(mul).endswith("e's gradient stays undefined")
