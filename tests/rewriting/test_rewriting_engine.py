"""The rewriting engine: node rewriters, patterns, walkers, equilibrium, merge, folding, database."""

import inspect

import numpy as np
import pytest
from rewriting_helpers import (
    StepChecker,
    assert_same_values,
    demo_double_neg,
    log_exp,
    mul_div,
    mul_one,
    op_strings,
    values,
)

import symlab
import symlab.tensor as T
from symlab.graph import Apply, Op
from symlab.graph.fg import FunctionGraph, InconsistencyError
from symlab.rewriting import (
    ConstPattern,
    EquilibriumGraphRewriter,
    GraphRewriter,
    MergeOptimizer,
    PatternError,
    PatternNodeRewriter,
    RewriteDatabase,
    RewriteError,
    SequentialGraphRewriter,
    constant_folding,
    default_db,
    in2out,
    node_rewriter,
    out2in,
    register,
    rewrite_graph,
)


def checked_graph(inputs, outputs):
    checker = StepChecker()
    fg = FunctionGraph(inputs, outputs, features=[checker])
    return fg, checker


def rewrite(rewriter, fg):
    trace = rewriter.rewrite(fg)
    fg.check_integrity()
    return trace


# -- node rewriters ------------------------------------------------------------------------------


def test_node_rewriter_decorator_name_tracks_location():
    assert demo_double_neg.name == "demo_double_neg"
    assert demo_double_neg.tracks() == [T.neg]
    src = inspect.getsourcefile(demo_double_neg.fn)
    line = demo_double_neg.fn.__code__.co_firstlineno
    assert demo_double_neg.location == (src, line)
    assert demo_double_neg.describe() == "-(-x) -> x"
    with pytest.raises(TypeError, match="tracks must list Op"):
        node_rewriter(["add"])(lambda fg, node: None)
    with pytest.raises(TypeError, match="takes a list of ops"):
        node_rewriter(lambda fg, node: None)


def test_double_negation_values_and_only_where_it_applies():
    x = T.dvector("x")
    fg, _ = checked_graph([x], [T.exp(T.neg(T.neg(x))) + (-x)])
    original = fg.clone()
    trace = rewrite(in2out(demo_double_neg), fg)
    assert [s.accepted for s in trace] == [True]
    assert op_strings(fg).count("Elemwise{neg,no_inplace}") == 1  # the single negation stays
    assert_same_values(fg, original, [np.array([0.5, -2.0])])


def test_tracks_limit_the_nodes_a_rule_sees():
    seen = []

    @node_rewriter([T.exp])
    def spy(fgraph, node):
        seen.append(str(node.op))

    @node_rewriter([T.Elemwise])
    def spy_class(fgraph, node):
        seen.append("class:" + str(node.op))

    x = T.dvector("x")
    fg = FunctionGraph([x], [T.exp(x) + T.log(x).sum()])
    in2out(spy, spy_class).rewrite(fg)
    assert seen.count("Elemwise{exp,no_inplace}") == 1
    assert "Elemwise{log,no_inplace}" not in seen
    assert sorted(s for s in seen if s.startswith("class:")) == [
        "class:Elemwise{add,no_inplace}", "class:Elemwise{exp,no_inplace}", "class:Elemwise{log,no_inplace}"]


def test_walk_orders():
    order = []

    @node_rewriter(None)
    def visit(fgraph, node):
        order.append(str(node.op))

    x = T.dvector("x")
    fg = FunctionGraph([x], [T.sqrt(T.exp(x))])
    in2out(visit).rewrite(fg)
    out2in(visit).rewrite(fg)
    assert order == ["Elemwise{exp,no_inplace}", "Elemwise{sqrt,no_inplace}"] * 1 + [
        "Elemwise{sqrt,no_inplace}", "Elemwise{exp,no_inplace}"]


def test_dict_and_partial_list_results():
    class TwoOut(Op):
        __props__ = ()

        def make_node(self, x):
            return Apply(self, [x], [x.type(), x.type()])

        def perform(self, node, inputs, out):
            out[0][0] = inputs[0] + 1
            out[1][0] = inputs[0] * 2

    @node_rewriter([TwoOut])
    def second_only(fgraph, node):
        return [None, node.inputs[0] * 2.0]

    @node_rewriter([TwoOut])
    def first_as_dict(fgraph, node):
        return {node.outputs[0]: node.inputs[0] + 1.0}

    x = T.dvector("x")
    a, b = TwoOut()(x)
    fg, _ = checked_graph([x], [a, b])
    original = fg.clone()
    trace = rewrite(SequentialGraphRewriter(second_only, first_as_dict), fg)
    assert [len(s.replacements) for s in trace] == [1, 1]
    assert "TwoOut" not in " ".join(op_strings(fg))
    assert_same_values(fg, original, [np.array([1.0, 3.0])])


def test_a_rule_that_raises_leaves_the_graph_alone():
    @node_rewriter([T.exp])
    def broken(fgraph, node):
        raise KeyError("oops")

    x = T.dvector("x")
    fg = FunctionGraph([x], [T.exp(x)])
    before = op_strings(fg)
    with pytest.raises(RewriteError, match=r"rule broken .*test_rewriting_engine.py:\d+\) failed on .*KeyError"):
        in2out(broken).rewrite(fg)
    assert op_strings(fg) == before
    fg.check_integrity()


def test_a_bad_result_is_an_error():
    @node_rewriter([T.exp])
    def too_many(fgraph, node):
        return [node.inputs[0], node.inputs[0]]

    x = T.dvector("x")
    with pytest.raises(RewriteError, match="returned 2 replacements"):
        in2out(too_many).rewrite(FunctionGraph([x], [T.exp(x)]))


# -- patterns ---------------------------------------------------------------------------------------


def test_seed_003_pattern_applies_and_keeps_values():
    x, y = T.dvectors("x", "y")
    fg, _ = checked_graph([x, y], [T.exp(x * y / y) + x * y])
    original = fg.clone()
    trace = rewrite(in2out(mul_div), fg)
    assert [s.rule for s in trace] == ["demo_mul_div"]
    assert "Elemwise{true_div,no_inplace}" not in op_strings(fg)
    assert trace.step(1).reason == "true_div(mul(x, y), y) -> x"
    assert_same_values(fg, original, [np.array([1.5, 2.0]), np.array([3.0, -4.0])])


def test_pattern_variable_must_bind_the_same_variable():
    x, y, z = T.dvectors("x", "y", "z")
    fg = FunctionGraph([x, y, z], [x * y / z])
    trace = rewrite(in2out(mul_div), fg)
    assert len(trace) == 0
    assert "Elemwise{true_div,no_inplace}" in op_strings(fg)


def test_number_matches_a_constant_through_broadcasting():
    x = T.dmatrix("x")
    for expr, expected in [(x * 1.0, 1), (x * T.constant(np.ones((1, 1))), 1), (x * 2.0, 0), (x * x, 0)]:
        fg = FunctionGraph([x], [T.exp(expr)])
        assert len(rewrite(in2out(mul_one), fg)) == expected
    assert ConstPattern(1).matches(T.constant(np.ones((2, 2))))
    assert not ConstPattern(1).matches(T.constant(np.array([1.0, 2.0])))
    assert not ConstPattern(1, broadcast=False).matches((x * 1.0).owner.inputs[1])


def test_pattern_with_op_class_predicate_constraints_and_functions():
    def is_exp(op):
        return getattr(op, "scalar_op", None) is not None and str(op.scalar_op) == "exp"

    rule = PatternNodeRewriter(
        (T.Elemwise, {"pattern": "x", "constraint": lambda v: v.ndim == 1}, (is_exp, "y")),
        lambda x, y: x * T.exp(y),
        constraint=lambda fgraph, node, b: str(node.op) == "Elemwise{add,no_inplace}",
        allow_multiple_clients=True,
        name="add_to_mul",
    )
    assert rule.tracks() == [T.Elemwise]
    assert rule.reason == "Elemwise(x, is_exp(y)) -> <lambda>(x, y)"
    x, m = T.dvector("x"), T.dmatrix("m")
    fg = FunctionGraph([x, m], [x + T.exp(x), x - T.exp(x), m + T.exp(m)])
    trace = rewrite(in2out(rule), fg)
    assert len(trace) == 1
    assert str(fg.outputs[0].owner.op) == "Elemwise{mul,no_inplace}"


def test_inner_nodes_with_other_clients_are_not_matched_by_default():
    x, y = T.dvectors("x", "y")
    prod = x * y
    fg = FunctionGraph([x, y], [prod / y, prod])
    assert len(rewrite(in2out(mul_div), fg)) == 0
    shared = PatternNodeRewriter(mul_div.in_pattern, "x", allow_multiple_clients=True)
    assert len(rewrite(in2out(shared), fg)) == 1


@pytest.mark.parametrize(
    "in_pattern, out_pattern, message",
    [
        ("x", "x", "must be a tuple"),
        ((), "x", "must be a tuple"),
        (("add", "x"), "x", "first entry must be an op"),
        ((int, "x"), "x", "not an Op class"),
        ((T.exp, "x"), "y", "'y' is not a variable of the input pattern"),
        ((T.exp, "x"), lambda x, z: x, "asks for \\['z'\\]"),
        ((T.exp, {"pattern": "x", "when": 1}), "x", "a dict pattern has the keys"),
        ((T.exp, [1]), "x", "expected a tuple"),
        ((T.exp, "not a name"), "x", "must be an identifier"),
        ((T.exp, "x"), ("nope", "x"), "starts with an op or a function"),
    ],
)
def test_bad_patterns_raise_at_construction(in_pattern, out_pattern, message):
    with pytest.raises(PatternError, match=message):
        PatternNodeRewriter(in_pattern, out_pattern)


def test_pattern_location_is_where_it_is_written():
    line = inspect.currentframe().f_lineno + 1
    rule = PatternNodeRewriter((T.exp, "x"), "x")
    assert rule.location.file == __file__ and rule.location.line == line
    assert mul_div.location.file.endswith("rewriting_helpers.py")


# -- refusals ----------------------------------------------------------------------------------------


def test_type_changing_rewrite_is_refused_and_recorded():
    @node_rewriter([T.exp])
    def to_float32(fgraph, node):
        return [T.cast(node.inputs[0], "float32")]

    @node_rewriter([T.exp])
    def to_matrix(fgraph, node):
        return [T.dmatrix("m")]

    x = T.dvector("x")
    fg, _ = checked_graph([x], [T.exp(x) * 2.0])
    before = symlab.dprint(fg.outputs, file="str")
    trace = rewrite(in2out(to_float32, to_matrix), fg)
    assert [s.accepted for s in trace] == [False, False]
    assert all(s.reason.startswith("type mismatch") for s in trace)
    assert "float32" in trace.step(1).reason and trace.step(1).removed == [] and trace.step(1).created == []
    assert symlab.dprint(fg.outputs, file="str") == before


class NoLog:
    def validate(self, fgraph):
        if any(str(n.op) == "Elemwise{log,no_inplace}" for n in fgraph.apply_nodes):
            raise InconsistencyError("no log allowed")


def test_rewrite_failing_validation_is_refused_and_reverted():
    @node_rewriter([T.exp])
    def exp_to_log(fgraph, node):
        return [T.log(node.inputs[0])]

    x = T.dvector("x")
    fg, _ = checked_graph([x], [T.exp(x) * 2.0])
    fg.attach_feature(NoLog())
    before = symlab.dprint(fg.outputs, file="str")
    trace = rewrite(in2out(exp_to_log), fg)
    (step,) = trace.steps
    assert not step.accepted and step.reason == "failed validation: no log allowed"
    assert symlab.dprint(fg.outputs, file="str") == before


def test_cycle_is_refused():
    @node_rewriter([T.exp])
    def make_cycle(fgraph, node):
        return [fgraph.outputs[0] + 1.0]

    x = T.dvector("x")
    fg, _ = checked_graph([x], [T.exp(x) * 2.0])
    (step,) = rewrite(in2out(make_cycle), fg).steps
    assert not step.accepted and step.reason.startswith("cycle:")


def test_static_shape_difference_is_narrowed():
    @node_rewriter([T.exp])
    def sqrt_of_input(fgraph, node):
        return [T.sqrt(fgraph.inputs[0])]  # type (?,) for an output of type (3,)

    x = T.dvector("x")
    fg, _ = checked_graph([x], [T.exp(T.specify_shape(x, (3,)))])
    assert fg.outputs[0].type.shape == (3,)
    (step,) = rewrite(in2out(sqrt_of_input), fg).steps
    assert step.accepted and fg.outputs[0].type.shape == (3,)
    assert isinstance(fg.outputs[0].owner.op, T.SpecifyShape)
    assert step.replacements[0][1] is fg.outputs[0]


# -- equilibrium ------------------------------------------------------------------------------------


def test_equilibrium_reaches_a_fixed_point_across_rules():
    x, y = T.dvectors("x", "y")
    fg, checker = checked_graph([x, y], [T.log(T.exp(T.neg(T.neg(x * y / y)))) * 1.0])
    original = fg.clone()
    trace = rewrite(EquilibriumGraphRewriter([mul_div, demo_double_neg, log_exp, mul_one]), fg)
    assert fg.outputs[0] is fg.inputs[0]
    assert trace.notes == []
    assert sorted(s.rule for s in trace) == ["demo_double_neg", "demo_log_exp", "demo_mul_div", "demo_mul_one"]
    assert_same_values(fg, original, [np.array([1.0, 2.0]), np.array([3.0, 5.0])])
    assert sorted(checker.snapshots) == [1, 2, 3, 4]


def test_equilibrium_bound_is_recorded():
    @node_rewriter([T.exp])
    def rebuild(fgraph, node):
        return [T.exp(node.inputs[0])]  # a new node each time: never a fixed point

    x = T.dvector("x")
    fg, _ = checked_graph([x], [T.exp(x)])
    trace = rewrite(EquilibriumGraphRewriter([rebuild], max_use_ratio=3), fg)
    assert len(trace) == 4
    (note,) = trace.notes
    assert note.after_step == 4 and "stopped at the bound" in note.message and "rebuild" in note.message
    trace = rewrite(EquilibriumGraphRewriter([rebuild], max_passes=2), fg)
    assert len(trace) == 2 and "max_passes=2" in trace.notes[0].message


# -- merge and constant folding ----------------------------------------------------------------------


def test_merge_common_subexpressions_and_equal_constants():
    x, y = T.dvectors("x", "y")
    out = T.exp(x + y) * 2.0 + T.exp(x + y) * T.constant(2.0)
    fg, _ = checked_graph([x, y], [out, (x + y).sum()])
    original = fg.clone()
    trace = rewrite(MergeOptimizer(), fg)
    reasons = [s.reason for s in trace]
    assert reasons.count("equal constants") == 1
    nodes = op_strings(fg)
    assert nodes.count("Elemwise{add,no_inplace}") == 2  # x + y once, and the outer +
    assert nodes.count("Elemwise{exp,no_inplace}") == 1 and nodes.count("Elemwise{mul,no_inplace}") == 1
    outer = fg.outputs[0].owner
    assert outer.inputs[0] is outer.inputs[1]
    assert_same_values(fg, original, [np.array([0.1, 0.2]), np.array([1.0, -1.0])])
    assert len(rewrite(MergeOptimizer(), fg)) == 0


def test_merge_keeps_distinct_constants_and_weakness_apart():
    x = T.dvector("x")
    fg = FunctionGraph([x], [x * 2.0 + x * 3.0 + x * T.constant(np.float64(2.0), dtype="float64")])
    assert len(rewrite(MergeOptimizer(), fg)) == 0


def test_constant_folding_of_seed_expression():
    x = T.dvector("x")
    fg, _ = checked_graph([x], [(T.constant(2.0) + 3.0) * x])
    original = fg.clone()
    trace = rewrite(in2out(constant_folding), fg)
    assert [s.rule for s in trace] == ["constant_folding", "constant_folding"]
    assert op_strings(fg) == ["Elemwise{mul,no_inplace}"]
    folded = fg.outputs[0].owner.inputs[0]
    assert isinstance(folded, T.TensorConstant) and folded.type == T.TensorType("float64", (1,))
    assert float(folded.data[0]) == 5.0
    assert_same_values(fg, original, [np.array([1.0, 2.0])])


def test_constant_folding_respects_the_op_and_needs_constants():
    class NoFold(Op):
        __props__ = ()

        def make_node(self, x):
            x = T.as_tensor_variable(x)
            return Apply(self, [x], [x.type()])

        def perform(self, node, inputs, out):
            out[0][0] = inputs[0] + 1

        def do_constant_folding(self, fgraph, node):
            return False

    x = T.dvector("x")
    c = T.constant(np.array([1.0, 2.0]))
    fg = FunctionGraph([x], [NoFold()(c) + x, x.shape, T.shape(c)])
    trace = rewrite(in2out(constant_folding), fg)
    assert [str(s.node.op) for s in trace] == ["Shape"]
    assert "NoFold" in op_strings(fg) and "Shape" in op_strings(fg)  # x.shape is not folded
    assert list(fg.outputs[2].data) == [2]


# -- database and rewrite_graph -----------------------------------------------------------------------


def demo_db():
    db = RewriteDatabase()
    db.register(MergeOptimizer(), "canonicalize", "fast_compile")
    db.register(constant_folding, "canonicalize", "fast_compile")
    db.register(mul_div, "canonicalize", "algebra")
    db.register(log_exp, "stabilize", "algebra")
    db.register(demo_double_neg, "specialize", "fast_compile")
    return db


def test_query_phases_in_order_and_fast_compile():
    db = demo_db()
    assert [(p.name, [e.name for e in p.entries]) for p in db.query()] == [
        ("canonicalize", ["merge", "constant_folding", "demo_mul_div"]),
        ("stabilize", ["demo_log_exp"]),
        ("specialize", ["demo_double_neg"]),
    ]
    assert [[e.name for e in p.entries] for p in db.query(["fast_compile"])] == [
        ["merge", "constant_folding"], ["demo_double_neg"]]


def test_include_and_exclude_by_name_and_tag():
    db = demo_db()

    def names(**kw):
        return [e.name for p in db.query(**kw) for e in p.entries]

    assert names(exclude=["algebra"]) == ["merge", "constant_folding", "demo_double_neg"]
    assert names(exclude=["demo_mul_div", "specialize"]) == ["merge", "constant_folding", "demo_log_exp"]
    assert names(include=["algebra"]) == ["demo_mul_div", "demo_log_exp"]
    assert names(include=["fast_compile", "demo_log_exp"]) == ["merge", "constant_folding", "demo_log_exp",
                                                               "demo_double_neg"]
    with pytest.raises(ValueError, match="name no rule or tag"):
        db.query(include=["fast_runn"])
    x, y = T.dvectors("x", "y")
    out, trace = rewrite_graph(T.log(T.exp(x * y / y)), db=db, exclude=["stabilize"])
    assert [s.rule for s in trace] == ["demo_mul_div"] and str(out.owner.op) == "Elemwise{log,no_inplace}"


def test_reregistering_a_name_replaces_the_rule_in_place():
    db = demo_db()
    replacement = PatternNodeRewriter((T.true_div, "x", "x"), lambda x: T.ones_like(x))
    db.register(replacement, "canonicalize", name="demo_mul_div")
    registered = db["demo_mul_div"].rewriter
    assert registered.name == "demo_mul_div" and registered.reason == replacement.reason
    assert replacement.name == "true_div(x, x) -> <lambda>(x)"  # the caller's rule is not renamed
    assert [e.name for e in db.query()[0].entries] == ["merge", "constant_folding", "demo_mul_div"]
    assert len(db) == 5


def test_position_places_a_group_between_phases_and_optional_rules():
    db = demo_db()
    db.register(mul_one, "stabilize", "optional", name="late_mul_one", position=1.5)
    assert [p.name for p in db.query()] == ["canonicalize", "stabilize", "specialize"]
    assert [p.name for p in db.query(include=["fast_run", "late_mul_one"])] == [
        "canonicalize", "stabilize", "stabilize@1.5", "specialize"]
    with pytest.raises(ValueError, match="several phases"):
        db.register(mul_one, "stabilize", "specialize")
    with pytest.raises(ValueError, match="phase or query tag"):
        db.register(mul_one, name="fast_run")


def test_register_in_the_default_database_and_decorator_form():
    @register("canonicalize", name="test_engine_neg")
    @node_rewriter([T.neg])
    def my_rule(fgraph, node):
        return demo_double_neg.transform(fgraph, node)

    try:
        assert default_db["test_engine_neg"].rewriter is my_rule
        x = T.dvector("x")
        checker = StepChecker()
        out, trace = rewrite_graph(T.neg(T.neg(x)) * 1.0, exclude=["neg_neg"], features=[checker])  # the standard rule
        assert "test_engine_neg" in [s.rule for s in trace]
        _, trace = rewrite_graph(T.neg(T.neg(x)), exclude=["test_engine_neg"])
        assert "test_engine_neg" not in [s.rule for s in trace]
    finally:
        default_db.remove("test_engine_neg")
    assert "test_engine_neg" not in default_db
    assert {"merge", "constant_folding"} <= set(default_db.names())


def test_rewrite_graph_leaves_the_user_graph_alone_and_keeps_values():
    x, y = T.dvectors("x", "y")
    user_out = T.exp(x * y / y) * (T.constant(2.0) + 1.0)
    before = symlab.dprint(user_out, file="str")
    db = demo_db()
    (out,), trace = rewrite_graph([user_out], db=db, features=[StepChecker()])
    assert symlab.dprint(user_out, file="str") == before
    assert isinstance(out.owner.inputs[1], T.TensorConstant)
    vals = [np.array([1.0, 2.0]), np.array([3.0, 4.0])]
    np.testing.assert_allclose(values(trace.fgraph, vals)[0], user_out.eval(dict(zip([x, y], vals))))
    out2, no_trace = rewrite_graph(user_out, db=db, record=False)
    assert no_trace is None and symlab.dprint(out2, file="str") == symlab.dprint(out, file="str")


def test_graph_rewriter_must_define_apply():
    x = T.dvector("x")
    with pytest.raises(NotImplementedError, match="must define apply"):
        GraphRewriter().rewrite(FunctionGraph([x], [x * 1.0]))
