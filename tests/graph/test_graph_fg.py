"""FunctionGraph: clients as seed 000 describes them, replacements, refusals, features."""

import numpy as np
import pytest

import symlab
import symlab.tensor as T
from symlab.graph import CycleError, equal_computations
from symlab.graph.features import History, ReplaceValidate
from symlab.graph.fg import FunctionGraph, InconsistencyError, MissingInputError


def seed_graph():
    v = T.vector()
    return v, FunctionGraph([v], [(v + 1).sum()])


def test_clients_seed_000():
    _, fg = seed_graph()
    topo = fg.toposort()
    assert [str(n.op) for n in topo] == ["DimShuffle{x}", "Elemwise{add,no_inplace}", "Sum{acc_dtype=float64}"]
    add_node, sum_node = topo[1], topo[2]
    assert repr(add_node.outputs[0].clients) == "[(Sum{acc_dtype=float64}(Elemwise{add,no_inplace}.0), 0)]"
    assert repr(sum_node.outputs[0].clients) == "[('output', 0)]"
    var = add_node.outputs[0]
    client = var.clients[0]
    assert type(client[0]).__name__ == "Apply"
    assert client[0].inputs[client[1]] is var
    var = sum_node.outputs[0]
    client = var.clients[0]
    assert client == ("output", 0)
    assert fg.outputs[client[1]] is var
    assert fg.clients[var] is var.clients
    fg.check_integrity()


def test_unused_variable_has_no_clients_and_free_variables_have_none_at_all():
    x, y = T.dvectors("x", "y")
    fg = FunctionGraph([x, y], [x * 2.0])
    assert fg.inputs[1].clients == []
    with pytest.raises(AttributeError, match="not part of a FunctionGraph"):
        _ = x.clients


def test_clone_leaves_the_user_graph_alone():
    v, fg = seed_graph()
    out = fg.outputs[0]
    assert fg.inputs[0] is not v and v.fgraph is None
    fg.replace(out.owner.inputs[0], fg.inputs[0] * 3.0, reason="test")
    assert v.fgraph is None
    user_out = (v + 1).sum()
    assert str(user_out.owner.inputs[0].owner.op) == "Elemwise{add,no_inplace}"


def test_refusals_at_construction():
    x = T.dvector("x")
    with pytest.raises(TypeError, match="is a Constant"):
        FunctionGraph([T.constant(1.0)], [x], clone=False)
    with pytest.raises(ValueError, match="root variables"):
        FunctionGraph([x * 2.0], [x * 3.0], clone=False)
    y = T.dvector("y")
    with pytest.raises(MissingInputError, match="neither an input nor a constant|neither an input"):
        FunctionGraph([x], [x + y])
    fg = FunctionGraph([x], [x * 2.0], clone=False)
    with pytest.raises(ValueError, match="another FunctionGraph"):
        FunctionGraph([x], [x * 2.0], clone=False)
    assert fg.inputs == [x]


def test_replace_prunes_and_keeps_clients_exact():
    x = T.dvector("x")
    fg = FunctionGraph([x], [T.exp(T.log(x)) * 2.0])
    mul = fg.outputs[0].owner
    exp_out = mul.inputs[0]
    before = len(fg.apply_nodes)
    fg.replace(exp_out, fg.inputs[0], reason="exp(log x) -> x")
    fg.check_integrity()
    assert len(fg.apply_nodes) == before - 2  # exp and log are gone
    assert exp_out not in fg.variables and exp_out.owner not in fg.apply_nodes
    assert (mul, 0) in fg.inputs[0].clients
    assert str(fg.outputs[0].owner.inputs[0]) == "x"


def test_replace_output_and_import_new_nodes():
    x = T.dvector("x")
    fg = FunctionGraph([x], [x * 2.0])
    fx = fg.inputs[0]
    fg.replace(fg.outputs[0], T.sqrt(fx) + fx, reason="new graph")
    fg.check_integrity()
    assert [str(n.op) for n in fg.toposort()] == ["Elemwise{sqrt,no_inplace}", "Elemwise{add,no_inplace}"]
    assert fg.outputs[0].clients == [("output", 0)]


def snapshot(fg):
    return symlab.dprint(fg.outputs, file="str"), {v: list(c) for v, c in fg.clients.items()}


def test_type_changing_replacement_is_refused_and_graph_unchanged():
    x = T.dvector("x")
    fg = FunctionGraph([x], [T.exp(x) * 2.0])
    before = snapshot(fg)
    exp_out = fg.outputs[0].owner.inputs[0]
    with pytest.raises(TypeError, match=r"cannot replace .*TensorType\(float64, \(\?,\)\).*TensorType\(float32"):
        fg.replace(exp_out, T.cast(fg.inputs[0], "float32"))
    with pytest.raises(TypeError, match="cannot stand in"):
        fg.replace(exp_out, T.dmatrix("m"))
    assert snapshot(fg) == before
    fg.check_integrity()


def test_narrowing_replacement_inserts_specify_shape():
    x = T.dvector("x")
    fg = FunctionGraph([x], [T.specify_shape(T.exp(x), (3,))])
    assert fg.outputs[0].type.shape == (3,)
    # A (?,) variable standing in for a (3,) one is narrowed by a SpecifyShape.
    fg.replace(fg.outputs[0], T.exp(fg.inputs[0]) + 1.0)
    out = fg.outputs[0]
    assert isinstance(out.owner.op, T.SpecifyShape) and out.type.shape == (3,)
    fg.check_integrity()
    # A (3,) variable can always stand in for a (?,) one.
    add_out = out.owner.inputs[0]
    fg.replace(add_out, T.specify_shape(fg.inputs[0], (3,)))
    fg.check_integrity()


def test_cycle_is_refused_and_graph_unchanged():
    x = T.dvector("x")
    fg = FunctionGraph([x], [T.exp(x) * 2.0])
    before = snapshot(fg)
    exp_out = fg.outputs[0].owner.inputs[0]
    with pytest.raises(CycleError, match="cycle"):
        fg.replace(exp_out, fg.outputs[0] + 1.0)
    mul = fg.outputs[0].owner
    with pytest.raises(CycleError, match="cycle"):
        fg.change_node_input(exp_out.owner, 0, mul.outputs[0])
    assert snapshot(fg) == before


class Recorder:
    def __init__(self):
        self.events = []

    def on_attach(self, fg):
        self.events.append("attach")

    def on_detach(self, fg):
        self.events.append("detach")

    def on_import(self, fg, node, reason):
        self.events.append(("import", str(node.op), reason))

    def on_prune(self, fg, node, reason):
        self.events.append(("prune", str(node.op), reason))

    def on_change_input(self, fg, node, i, old, new, reason):
        self.events.append(("change", i, reason))


def test_feature_callbacks():
    x = T.dvector("x")
    rec = Recorder()
    fg = FunctionGraph([x], [T.exp(x)], features=[rec])
    assert rec.events == ["attach"]
    fg.replace(fg.outputs[0], T.log(fg.inputs[0]), reason="swap")
    assert rec.events[1:] == [
        ("import", "Elemwise{log,no_inplace}", "swap"),
        ("change", 0, "swap"),
        ("prune", "Elemwise{exp,no_inplace}", "swap"),
    ]
    fg.remove_feature(rec)
    assert rec.events[-1] == "detach"


def test_history_reverts_to_the_exact_graph():
    x = T.dvector("x")
    fg = FunctionGraph([x], [T.exp(T.log(x)) * 2.0 + x], features=[History()])
    original, _ = fg.clone_get_equiv()
    checkpoint = fg.checkpoint()
    mul = fg.outputs[0].owner.inputs[0].owner
    fg.replace(mul.inputs[0], fg.inputs[0])
    fg.replace(fg.outputs[0], fg.inputs[0] * 5.0)
    fg.check_integrity()
    fg.revert(checkpoint)
    fg.check_integrity()
    assert equal_computations(fg.outputs, original.outputs, fg.inputs, original.inputs)


class RefuseLog:
    def validate(self, fg):
        for node in fg.apply_nodes:
            if str(node.op) == "Elemwise{log,no_inplace}":
                raise InconsistencyError("no log allowed")


def test_replace_validate_reverts_on_failure():
    x = T.dvector("x")
    fg = FunctionGraph([x], [T.exp(x) * 2.0], features=[ReplaceValidate(), RefuseLog()])
    before = snapshot(fg)
    exp_out = fg.outputs[0].owner.inputs[0]
    with pytest.raises(InconsistencyError, match="no log"):
        fg.replace_validate(exp_out, T.log(fg.inputs[0]))
    assert snapshot(fg) == before
    fg.check_integrity()
    fg.replace_validate(exp_out, T.sqrt(fg.inputs[0]))
    assert str(fg.outputs[0].owner.inputs[0].owner.op) == "Elemwise{sqrt,no_inplace}"
    assert fg.consistent()


def test_toposort_is_cached_and_follows_feature_orderings():
    x = T.dvector("x")
    a, b = T.exp(x), T.log(x)
    fg = FunctionGraph([x], [a, b], clone=False)
    first = fg.toposort()
    assert fg.toposort() == first
    assert [str(n.op) for n in first] == ["Elemwise{exp,no_inplace}", "Elemwise{log,no_inplace}"]
    stale = T.sqrt(x).owner  # never part of the graph

    class LogFirst:
        def orderings(self, fg):
            return {a.owner: [b.owner, stale], stale: [a.owner]}

    fg.attach_feature(LogFirst())
    fg.replace(b, T.log(x))  # any change invalidates the cache
    order = fg.toposort()
    assert stale not in order and len(order) == 2
    assert [str(n.op) for n in order] == ["Elemwise{exp,no_inplace}", "Elemwise{log,no_inplace}"]
    b2 = fg.outputs[1]

    class LogFirstNow:
        def orderings(self, fg):
            return {a.owner: [b2.owner]}

    fg.attach_feature(LogFirstNow())
    assert fg.toposort() == [b2.owner, a.owner]


def test_clone_of_a_function_graph():
    x = T.dvector("x")
    fg = FunctionGraph([x], [T.exp(x) * 2.0 + 1.0])
    fg2 = fg.clone()
    assert fg2.inputs[0] is not fg.inputs[0]
    assert equal_computations(fg.outputs, fg2.outputs, fg.inputs, fg2.inputs)
    assert not (set(fg.variables) & set(fg2.variables))
    fg2.check_integrity()


def test_deep_graph_at_default_recursion_limit():
    x = T.dscalar("x")
    y = x
    for _ in range(20_000):
        y = T.neg(y)
    fg = FunctionGraph([x], [y])
    assert len(fg.apply_nodes) == 20_000
    fg.replace(fg.outputs[0].owner.inputs[0], fg.inputs[0])
    assert len(fg.apply_nodes) == 1
    fg.check_integrity()


def test_values_are_preserved_through_replacements():
    x = T.dvector("x")
    fg = FunctionGraph([x], [(x * 2.0) / 2.0 + 0.0])
    value = np.array([1.0, -3.0])
    div_out = fg.outputs[0].owner.inputs[0]
    fg.replace(div_out, fg.inputs[0], reason="x*y/y -> x")
    np.testing.assert_array_equal(fg.outputs[0].eval({fg.inputs[0]: value}), value + 0.0)


def test_validate_callback_is_consulted_without_any_other_feature():
    class Refuse:
        def validate(self, fg):
            raise InconsistencyError("refused by validate")

    x = T.dvector("x")
    fg = FunctionGraph([x], [T.exp(x)], features=[Refuse()])
    before = snapshot(fg)
    with pytest.raises(InconsistencyError, match="refused by validate"):
        fg.replace_validate(fg.outputs[0], T.log(fg.inputs[0]))
    assert snapshot(fg) == before and fg.version == 0


@pytest.mark.parametrize("seed", range(6))
def test_cycle_check_agrees_with_a_full_ancestor_walk_under_random_replacements(seed):
    """The level-pruned cycle check refuses exactly the replacements a full walk finds cyclic."""
    from symlab.graph.traversal import ancestors

    rng = np.random.default_rng(seed)
    xs = [T.dvector(f"x{k}") for k in range(3)]
    pool = list(xs)
    for _ in range(30):
        a, b = (pool[k] for k in rng.integers(0, len(pool), 2))
        pool.append(T.exp(a) + b if rng.random() < 0.5 else a * b)
    fg = FunctionGraph(xs, pool[-3:], clone=False)
    refused = accepted = 0
    for _ in range(60):
        variables = sorted(fg.variables, key=str)  # a reproducible order
        candidates = [v for v in variables if v.type == xs[0].type]
        var = candidates[rng.integers(len(candidates))]
        other = candidates[rng.integers(len(candidates))]
        new = other + 1.0 if rng.random() < 0.5 else other  # a new node or a node of the graph
        if var is new or var not in fg:
            continue
        cyclic = any(v is var for v in ancestors([new]))
        if cyclic:
            with pytest.raises(CycleError):
                fg.replace(var, new)
            refused += 1
        else:
            fg.replace(var, new)
            accepted += 1
        fg.check_integrity()  # includes: every node's level is above its inputs'
    assert refused and accepted
