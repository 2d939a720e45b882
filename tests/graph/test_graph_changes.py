"""What views stand on: change events, a version counter, weak features, no pointers on nodes, stable keys."""

import gc
import weakref

import numpy as np
import pytest

import symlab
import symlab.tensor as T
from symlab.graph import Feature, MissingInputError
from symlab.graph.changes import InputChanged, NodeImported, NodePruned, VariableImported
from symlab.graph.fg import FunctionGraph, InconsistencyError
from symlab.printing import debugprint


class Changes(Feature):
    """Records each committed change, and each edit callback."""

    def __init__(self):
        self.changes = []
        self.edits = []

    def on_change_end(self, fgraph, change):
        assert fgraph.version == change.version
        fgraph.check_integrity()  # the graph is consistent when a change ends
        self.changes.append(change)

    def on_change_input(self, fgraph, node, i, old, new, reason):
        self.edits.append(("change", reason))


class Refuse(Feature):
    def __init__(self):
        self.on = False

    def validate(self, fgraph):
        if self.on:
            raise InconsistencyError("refused for the test")


def exp_graph():
    x = T.dvector("x")
    return FunctionGraph([x], [T.exp(x) * 2.0 + x])


def structure(fg):
    """Everything a read must leave as it was: text, clients, keys, version."""
    return (
        debugprint(fg.outputs, file="str"),
        {fg.key(v): sorted(str(c) for c in cl) for v, cl in fg.clients.items()},
        sorted(fg.key(n) for n in fg.apply_nodes),
        fg.version,
    )


# -- one event per committed change, none for a refused one -----------------------------------------------
def test_one_completion_event_per_replace():
    fg = exp_graph()
    watch = Changes()
    fg.attach_feature(watch)
    exp_out = fg.outputs[0].owner.inputs[0].owner.inputs[0]
    fg.replace(exp_out, T.log(fg.inputs[0]), reason="exp -> log")
    (change,) = watch.changes
    assert change.version == fg.version == 1 and change.reason == "exp -> log"
    kinds = [type(e) for e in change.events]
    assert kinds == [NodeImported, InputChanged, NodePruned]
    assert [str(n.op) for n in change.imported] == ["Elemwise{log,no_inplace}"]
    assert [str(n.op) for n in change.pruned] == ["Elemwise{exp,no_inplace}"]
    # replacing a variable by itself, or nothing to do, is no change
    fg.replace(fg.outputs[0], fg.outputs[0])
    assert len(watch.changes) == 1 and fg.version == 1


def test_replace_all_and_nested_changes_are_one_change():
    fg = exp_graph()
    watch = Changes()
    fg.attach_feature(watch)
    x = fg.inputs[0]
    mul = fg.outputs[0].owner.inputs[0]
    with fg.change("batch"):
        fg.replace(mul, x * 3.0)
        with fg.change("inner"):
            fg.replace(fg.outputs[0], T.sin(fg.inputs[0]))
    assert [c.reason for c in watch.changes] == ["batch"] and fg.version == 1
    fg.replace_all([(fg.outputs[0], T.cos(x))], reason="pairs")
    assert [c.reason for c in watch.changes] == ["batch", "pairs"] and fg.version == 2


def test_refused_change_is_rolled_back_unseen_with_its_keys():
    fg = exp_graph()
    watch, refuse = Changes(), Refuse()
    fg.attach_feature(watch)
    fg.attach_feature(refuse)
    before = structure(fg)
    keys = {fg.key(o): o for o in [*fg.apply_nodes, *fg.variables]}
    refuse.on = True
    exp_out = fg.outputs[0].owner.inputs[0].owner.inputs[0]
    with pytest.raises(InconsistencyError, match="refused for the test"):
        fg.replace_validate(exp_out, T.log(fg.inputs[0]) + 1.0)
    assert watch.changes == [] and fg.version == 0
    assert structure(fg) == before
    assert all(fg.by_key(k) is o for k, o in keys.items())  # the same objects under the same keys
    # the edits and their undoing were heard, as edits (the destroy handler needs them)
    assert ("change", "revert") in watch.edits
    fg.check_integrity()
    # a failed inner change inside a committed one: only the inner part is undone
    refuse.on = False
    with fg.change("outer"):
        fg.replace(exp_out, T.sin(fg.inputs[0]))
        with pytest.raises(ValueError), fg.change("inner"):
            fg.replace(fg.outputs[0], T.cos(fg.inputs[0]))
            raise ValueError("give up the inner part")
    assert [c.reason for c in watch.changes] == ["outer"]
    assert "sin" in debugprint(fg.outputs, file="str") and "cos" not in debugprint(fg.outputs, file="str")


def test_type_and_cycle_refusals_change_nothing():
    fg = exp_graph()
    watch = Changes()
    fg.attach_feature(watch)
    before = structure(fg)
    mul = fg.outputs[0].owner.inputs[0]
    with pytest.raises(TypeError, match="cannot replace"):
        fg.replace(mul, T.dmatrix("m"))
    with pytest.raises(symlab.graph.CycleError):
        fg.replace(mul.owner.inputs[0], mul * 1.0)
    assert structure(fg) == before and watch.changes == []


def test_keys_are_stable_and_never_reused():
    fg = exp_graph()
    keys = {o: fg.key(o) for o in [*fg.apply_nodes, *fg.variables]}
    exp_node = fg.outputs[0].owner.inputs[0].owner.inputs[0].owner
    fg.replace(exp_node.outputs[0], T.log(fg.inputs[0]))
    for obj, key in keys.items():
        if obj in fg:
            assert fg.key(obj) == key and fg.by_key(key) is obj
    new_keys = {fg.key(o) for o in [*fg.apply_nodes, *fg.variables]}
    assert keys[exp_node] not in new_keys
    with pytest.raises(KeyError, match="not in this graph"):
        fg.key(exp_node)
    with pytest.raises(KeyError, match="no node or variable"):
        fg.by_key(keys[exp_node])
    log_node = fg.outputs[0].owner.inputs[0].owner.inputs[0].owner
    assert int(fg.key(log_node)[1:]) > max(int(k[1:]) for k in keys.values())
    # copies number their objects deterministically, from 0
    copy, again = fg.clone(), fg.clone()
    assert [copy.key(n) for n in copy.toposort()] == [again.key(n) for n in again.toposort()]
    assert copy.key(copy.inputs[0]) == "v0"


# -- features: a declared protocol, held weakly if asked -----------------------------------------------------
def test_feature_subclass_callbacks_are_called_only_where_overridden():
    calls = []

    class OnlyImports(Feature):
        def on_import(self, fgraph, node, reason):
            calls.append(str(node.op))

    fg = exp_graph()
    feature = OnlyImports()
    fg.attach_feature(feature)
    assert fg._callbacks_for("on_prune") == () and len(fg._callbacks_for("on_import")) == 1
    fg.replace(fg.outputs[0], T.sin(fg.inputs[0]))
    assert calls == ["Elemwise{sin,no_inplace}"]
    fg.remove_feature(feature)
    with pytest.raises(ValueError, match="not attached"):
        fg.remove_feature(feature)


def test_a_weakly_held_feature_goes_away_with_its_view():
    fg = exp_graph()
    watch = Changes()
    fg.attach_feature(watch, weak=True)
    assert fg.features == [watch]
    fg.replace(fg.outputs[0], T.sin(fg.inputs[0]))
    assert len(watch.changes) == 1
    ref = weakref.ref(watch)
    del watch
    gc.collect()
    assert ref() is None and fg.features == []
    fg.replace(fg.outputs[0], T.cos(fg.inputs[0]))  # nothing is called, nothing fails
    assert fg._features == [] and fg._callbacks_for("on_change_end") == ()


def test_a_graph_does_not_keep_a_weak_feature_alive_but_keeps_a_strong_one():
    fg = exp_graph()
    strong = Changes()
    fg.attach_feature(strong)
    ref = weakref.ref(strong)
    del strong
    gc.collect()
    assert ref() is not None and fg.features == [ref()]


def test_history_reverts_committed_changes_as_one_change():
    from symlab.graph.features import History

    fg = exp_graph()
    watch = Changes()
    fg.attach_feature(History())
    fg.attach_feature(watch)
    before = structure(fg)[:3]
    mark = fg.checkpoint()
    fg.replace(fg.outputs[0], T.sin(fg.inputs[0]))
    fg.replace(fg.outputs[0], T.cos(fg.inputs[0]))
    fg.revert(mark)
    assert structure(fg)[:3][0] == before[0] and [c.reason for c in watch.changes][-1] == "revert"
    with pytest.raises(AttributeError, match="History"):
        exp_graph().checkpoint()


# -- no pointers on nodes: reads leave graphs as they were -----------------------------------------------------
def test_clients_where_one_graph_or_several_hold_a_variable():
    x = T.dvector("x")
    out = T.exp(x) + 2.0
    fg = FunctionGraph([x], [out], clone=False)
    assert x.clients == fg.clients[x] and x.fgraph is fg and out.owner.fgraph is fg
    # a constant that two graphs hold: clients is ambiguous, each graph answers for itself
    c = [v for v in fg.variables if isinstance(v, T.TensorConstant)][0]
    y = T.dvector("y")
    fg2 = FunctionGraph([y], [y * c], clone=False)
    with pytest.raises(AttributeError, match="2 FunctionGraphs hold .*fgraph.clients"):
        _ = c.clients
    assert fg.clients[c] != fg2.clients[c] and len(fg2.clients[c]) == 1
    with pytest.raises(AttributeError, match="not part of a FunctionGraph"):
        _ = T.dvector("free").clients


def test_clone_false_refuses_objects_another_graph_holds():
    x = T.dvector("x")
    out = T.exp(x)
    fg = FunctionGraph([x], [out], clone=False)
    with pytest.raises(ValueError, match="another FunctionGraph"):
        FunctionGraph([x], [out * 2.0], clone=False)
    assert fg.clients[x] == [(out.owner, 0)]


def test_reading_a_trace_leaves_the_compiled_graph_and_the_user_graph_alone():
    a = T.dvector("a")
    user_out = a + a**10 + T.exp(T.log(a * 1.0))
    user_text = debugprint(user_out, file="str")
    f = symlab.function([a], user_out)
    fg = f.maker.fgraph
    before = structure(fg)
    constants = [v for v in fg.variables if isinstance(v, T.TensorConstant)]
    trace = f.trace
    for k in range(len(trace) + 1):  # every replay
        trace.graph_at(k)
    cursor = trace.cursor()
    cursor.seek(len(trace))
    cursor.seek(0)
    _ = trace.start
    str(trace), trace.summary(), f._repr_mimebundle_(include=["text/plain", "text/vnd.graphviz"])
    trace._repr_mimebundle_(include=["text/vnd.graphviz"])
    symlab.formats.fgraph_to_dag(fg)
    assert structure(fg) == before
    fg.check_integrity()
    for c in constants:  # the stamped pointer bug: a read made c.clients raise for good
        assert c.clients == fg.clients[c]
    assert debugprint(user_out, file="str") == user_text
    np.testing.assert_allclose(f(np.array([1.0, 2.0])), [3.0, 2.0 + 1024 + 2.0])


def test_one_missing_input_error_class():
    x, y = T.dvector("x"), T.dvector("y")
    with pytest.raises(symlab.graph.MissingInputError):
        FunctionGraph([x], [x + y])
    with pytest.raises(MissingInputError):
        (x + y).eval({x: np.ones(2)})
    with pytest.raises(MissingInputError):
        symlab.function([x], x + y)
    assert symlab.graph.MissingInputError is symlab.graph.evaluate.__globals__["MissingInputError"]


def test_events_name_the_roots_that_enter():
    x = T.dvector("x")
    fg = FunctionGraph([x], [T.exp(x)])
    watch = Changes()
    fg.attach_feature(watch)
    fg.replace(fg.outputs[0], fg.inputs[0] * 5.0)
    (change,) = watch.changes
    roots = [e.variable for e in change.events if type(e) is VariableImported]
    assert [str(r) for r in roots] == ["TensorConstant{5.0}"]


def test_remove_output_and_add_output_keep_clients_exact_and_roll_back():
    x, y = T.dvectors("x", "y")
    fg = FunctionGraph([x, y], [T.exp(x), (x + y) * 2, T.log(y)])
    seen = Changes()
    fg.attach_feature(seen)
    first, middle, last = fg.outputs
    fg.remove_output(0, reason="drop")
    # the outputs after the removed one move down, and so do their ("output", i) clients
    assert fg.outputs == [middle, last]
    assert fg.clients[middle] == [("output", 0)] and fg.clients[last] == [("output", 1)]
    assert first.owner not in fg and first not in fg.clients  # nothing used it any more: pruned
    change = seen.changes[-1]
    assert (change.version, change.reason) == (1, "drop") and change.pruned == [first.owner]
    assert [type(e).__name__ for e in change.events] == ["OutputRemoved", "NodePruned"]
    fg.check_integrity()

    fg.add_output(T.sqrt(fg.inputs[0]), reason="more")
    assert len(fg.outputs) == 3 and fg.clients[fg.outputs[2]] == [("output", 2)]
    assert fg.version == 2 and seen.changes[-1].imported == [fg.outputs[2].owner]
    fg.check_integrity()

    # a change that fails half-way is undone whole: outputs, clients, nodes and keys as they were
    before, keys = structure(fg), {fg.key(n) for n in fg.apply_nodes}
    with pytest.raises(RuntimeError):
        with fg.change("failing"):
            fg.remove_output(1)
            fg.add_output(fg.inputs[1] * 3.0)
            raise RuntimeError("refused")
    assert structure(fg) == before and {fg.key(n) for n in fg.apply_nodes} == keys
    assert fg.version == 2 and len(seen.changes) == 2
    fg.check_integrity()


def test_bad_output_edits_name_the_argument_and_change_nothing():
    x, z = T.dvectors("x", "z")
    fg = FunctionGraph([x], [T.exp(x)])
    before = structure(fg)
    with pytest.raises(IndexError, match=r"output_idx must be an int in \[-1, 1\), received 1"):
        fg.remove_output(1)
    with pytest.raises(TypeError, match="add_output: var must be a Variable, received str"):
        fg.add_output("x")
    with pytest.raises(MissingInputError, match="needs z"):
        fg.add_output(fg.inputs[0] + z)
    assert structure(fg) == before and fg.version == 0
    fg.check_integrity()
