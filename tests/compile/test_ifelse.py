"""``ifelse``: values against NumPy in every mode, laziness in both tiers, gradients, shapes, sections, bad input."""

from __future__ import annotations

import numpy as np
import pytest

import symlab
import symlab.tensor as st
from symlab.compile.mode import Mode, MonitorMode
from symlab.gradient import grad, verify_grad
from symlab.graph import Apply, Op
from symlab.graph.fg import FunctionGraph
from symlab.graph.inner_graph import has_inner_graph, inner_sections
from symlab.ifelse import IfElse, IfElseBranchCountError, IfElseBranchError, IfElseConditionError, ifelse
from tests.hostile_names import HOSTILE
from tests.oracle import NUMPY_REFERENCE, assert_same_results, compile_function, perform

#: Every way to compile: the predefined modes, a monitor, and PyTensor's lazy linker names.
MODES = ["NUMPY", "NUMBA", "FAST_COMPILE", "DEBUG", "NanGuard", "monitor", "vm", "cvm"]


def mode_of(name: str):
    if name == "monitor":
        return MonitorMode(post_func=lambda *args: None)
    if name in ("vm", "cvm"):
        return Mode(linker=name)
    return name


class Boom(Op):
    """An op whose perform raises: a branch holding it must not run."""

    __props__ = ()

    def make_node(self, x):
        x = st.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        raise RuntimeError("Boom: this branch was computed")


class Counting(Op):
    """An op that counts its runs (and returns its input doubled)."""

    __props__ = ()
    runs = 0

    def make_node(self, x):
        x = st.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        type(self).runs += 1
        output_storage[0][0] = inputs[0] * 2.0


RNG = np.random.default_rng(32)
X, Y = RNG.normal(size=(4, 3)), RNG.normal(size=(5, 3))


@pytest.mark.parametrize("mode", MODES)
def test_values_against_numpy_in_every_mode(mode):
    c, x, y = st.iscalar("c"), st.dmatrix("x"), st.dmatrix("y")
    out = ifelse(c, st.exp(x).sum(axis=0), (y * 2.0).max(axis=0))
    f = compile_function([c, x, y], out, mode_of(mode))
    assert_same_results(f(1, X, Y), np.exp(X).sum(axis=0), NUMPY_REFERENCE)
    assert_same_results(f(0, X, Y), (Y * 2.0).max(axis=0), NUMPY_REFERENCE)
    assert_same_results(f(-3, X, Y), np.exp(X).sum(axis=0), NUMPY_REFERENCE)  # any non-zero is true


@pytest.mark.parametrize("mode", ["NUMPY", "NUMBA", "DEBUG"])
def test_several_outputs_mixed_dtypes_and_a_float_condition(mode):
    a, b = st.dscalars("a", "b")
    i, j = st.lvectors("i", "j")
    x, y = st.dvectors("x", "y")
    lo, idx, val = ifelse(st.lt(a, b), (a, i + 1, x * a), (b, j * 2, y - b))
    f = compile_function([a, b, i, j, x, y], [lo, idx, val], mode)
    iv, jv, xv, yv = np.arange(3), np.arange(4), np.linspace(0, 1, 3), np.linspace(1, 2, 5)
    got = f(1.0, 2.0, iv, jv, xv, yv)
    assert_same_results(got, [np.float64(1.0), iv + 1, xv * 1.0], NUMPY_REFERENCE)
    got = f(3.0, 2.0, iv, jv, xv, yv)
    assert_same_results(got, [np.float64(2.0), jv * 2, yv - 2.0], NUMPY_REFERENCE)


@pytest.mark.parametrize("mode", ["NUMPY", "NUMBA", "FAST_COMPILE", "vm", "cvm"])
def test_nested_ifelse(mode):
    c, d = st.iscalars("c", "d")
    x = st.dvector("x")
    inner = ifelse(d, st.exp(x), st.log(x))
    out = ifelse(c, (inner * 2.0).sum(), (x**2).sum())
    f = compile_function([c, d, x], out, mode_of(mode))
    xv = np.array([1.0, 2.0, 3.0])
    for cv, dv, expected in [(1, 1, 2 * np.exp(xv).sum()), (1, 0, 2 * np.log(xv).sum()), (0, 1, (xv**2).sum()),
                             (0, 0, (xv**2).sum())]:
        assert_same_results(f(cv, dv, xv), np.float64(expected), NUMPY_REFERENCE)


@pytest.mark.parametrize("mode", ["NUMPY", "FAST_COMPILE", "DEBUG", "NanGuard", "monitor", "vm"])
def test_numpy_tier_never_runs_the_branch_not_taken(mode):
    c, x = st.iscalar("c"), st.dvector("x")
    f = symlab.function([c, x], ifelse(c, Boom()(x).sum(), (x * 3.0).sum()), mode=mode_of(mode))
    assert float(f(0, np.ones(3))) == 9.0
    with pytest.raises(RuntimeError, match="Boom: this branch was computed"):
        f(1, np.ones(3))
    g = symlab.function([c, x], ifelse(c, (x * 3.0).sum(), Boom()(x).sum()), mode=mode_of(mode))
    assert float(g(1, np.ones(3))) == 9.0


@pytest.mark.parametrize("mode", ["NUMPY", "DEBUG", "monitor"])
def test_numpy_tier_counts_one_run_per_call_of_the_taken_branch(mode):
    c, x = st.iscalar("c"), st.dvector("x")
    nested = ifelse(c, Counting()(x), Counting()(x + 1.0))
    f = symlab.function([c, x], ifelse(c, nested.sum(), x.sum()), mode=mode_of(mode))
    Counting.runs = 0
    assert float(f(0, np.ones(2))) == 2.0
    assert Counting.runs == 0  # neither Counting node is behind the else of the outer ifelse
    assert float(f(1, np.ones(2))) == 4.0
    # DEBUG runs perform twice and the unoptimized reference once, lazily too: the inner else Counting never runs
    assert Counting.runs == (3 if mode == "DEBUG" else 1)


def test_numba_code_never_enters_the_branch_not_taken():
    # The then branch reshapes x to a size it does not have: the kernel raises whenever the branch runs.
    c, x = st.iscalar("c"), st.dvector("x")
    bad = st.reshape(x, (x.shape[0] + 1,)).sum()
    f = compile_function([c, x], ifelse(c, bad, (x * 3.0).sum()), "NUMBA", profile=True)
    assert f.tier == "machine code" and not f.compile_info.fallback_ops
    assert "guarded region" in f.compile_info.lazy_plan
    assert float(f(0, np.ones(4))) == 12.0
    with pytest.raises(ValueError):
        f(1, np.ones(4))
    then_nodes = [s for s in f.profile.nodes if "Reshape" in str(s.node.op)]
    assert then_nodes and all(s.calls == 0 and s.skipped == 1 for s in then_nodes)


def test_numba_source_guards_each_region_and_the_plan_changes_the_cache_key(monkeypatch):
    from symlab.compile.lazy_plan import lazy_plan
    from symlab.compile.numba import graph_source
    from symlab.compile.numba.environment import cache_key

    c, x = st.iscalar("c"), st.dvector("x")
    out = ifelse(c, st.exp(x).sum(), st.log(x).sum())
    lazy = compile_function([c, x], out, "NUMBA")
    source = lazy._runner.generated.source
    assert "then region" in source and "else region" in source and "else:" in source
    assert lazy.compile_info.cache_key == cache_key(source)
    # The same graph with every region kept eager: another plan, another source, another cache entry.
    monkeypatch.setattr(graph_source, "lazy_plan", lambda order, outputs, may_guard=None: lazy_plan(
        order, outputs, lambda region: "kept eager by the test"))
    eager = compile_function([c, x], out, "NUMBA")
    assert "region" not in eager._runner.generated.source and "kept eager by the test" in eager.compile_info.lazy_plan
    assert eager.compile_info.cache_key != lazy.compile_info.cache_key
    for f in (lazy, eager):
        assert_same_results(f(1, np.array([0.5])), np.float64(np.exp(0.5)), NUMPY_REFERENCE)
        assert_same_results(f(0, np.array([0.5])), np.float64(np.log(0.5)), NUMPY_REFERENCE)


def test_numba_guards_a_region_with_a_python_step_between_the_compiled_steps():
    c, x = st.iscalar("c"), st.dvector("x")
    with pytest.warns(UserWarning, match="Counting"):
        f = symlab.function([c, x], ifelse(c, Counting()(x).sum(), (x * 3.0).sum()), mode="NUMBA", profile=True)
    assert f.tier == "machine code" and f.compile_info.error is None
    assert "then of if{}: holds a Python step; guarded by the runner" in f.compile_info.lazy_plan
    Counting.runs = 0
    assert float(f(0, np.ones(2))) == 6.0
    assert Counting.runs == 0
    assert float(f(1, np.ones(2))) == 4.0
    assert Counting.runs == 1
    counting = next(s for s in f.profile.nodes if str(s.node.op) == "Counting")
    assert (counting.calls, counting.skipped) == (1, 1)
    with pytest.warns(UserWarning, match="Boom"):
        g = symlab.function([c, x], ifelse(c, (x * 3.0).sum(), Boom()(x).sum()), mode="NUMBA")
    assert float(g(1, np.ones(3))) == 9.0
    with pytest.raises(RuntimeError, match="Boom: this branch was computed"):
        g(0, np.ones(3))


@pytest.mark.parametrize("branch_value", [2.0, -2.0])
def test_verify_grad_on_both_branches(branch_value):
    def fn(x, y):
        return ifelse(st.gt(x.sum(), 0.0), st.exp(x) * y, y**3 + x)

    x0 = np.full(3, branch_value) + np.array([0.1, 0.2, 0.3])
    verify_grad(fn, [x0, np.array([0.5, -1.5, 2.0])], rng=np.random.default_rng(0))


@pytest.mark.parametrize("mode", ["NUMPY", "NUMBA"])
def test_compiled_gradient_is_each_branch_behind_the_same_condition(mode):
    c, x, y = st.iscalar("c"), st.dvector("x"), st.dvector("y")
    z = ifelse(c, x * 2.0, y**2)
    gx, gy = grad(z.sum(), [x, y])
    f = compile_function([c, x, y], [gx, gy], mode)
    xv, yv = np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0])
    assert_same_results(f(1, xv, yv), [np.full(2, 2.0), np.zeros(3)], NUMPY_REFERENCE)
    assert_same_results(f(0, xv, yv), [np.zeros(2), 2 * yv], NUMPY_REFERENCE)
    g_c = grad(z.sum(), c, disconnected_inputs="ignore")
    assert float(g_c.eval({c: 1, x: xv, y: yv})) == 0.0


def test_r_op_is_the_chosen_branch_direction():
    c, x, y = st.iscalar("c"), st.dvector("x"), st.dvector("y")
    vx, vy = st.dvector("vx"), st.dvector("vy")
    out = ifelse(c, x * 2.0, y * 3.0)
    direction = out.owner.op.R_op(out.owner.inputs, [None, vx * 2.0, vy * 3.0])[0]
    values = {x: np.ones(2), y: np.ones(4), vx: np.array([1.0, 2.0]), vy: np.arange(4.0)}
    assert_same_results(direction.eval({c: 1, **values}), np.array([2.0, 4.0]), NUMPY_REFERENCE)
    assert_same_results(direction.eval({c: 0, **values}), 3.0 * np.arange(4.0), NUMPY_REFERENCE)
    jvp = symlab.gradient.Rop(out, [x, y], [vx, vy])
    assert_same_results(jvp.eval({c: 1, **values}), np.array([2.0, 4.0]), NUMPY_REFERENCE)


def test_infer_shape_is_an_ifelse_of_the_shapes_and_static_sizes_join():
    c, x, y = st.iscalar("c"), st.TensorType("float64", (3, 2))("x"), st.TensorType("float64", (4, 2))("y")
    out = ifelse(c, x, y)
    assert out.type.shape == (None, 2)
    node = out.owner
    shapes = [(), tuple(st.constant(d, dtype="int64") for d in (3, 2)), tuple(st.constant(d, dtype="int64") for d in (4, 2))]
    inferred = node.op.infer_shape(None, node, shapes)[0]
    assert isinstance(inferred[0].owner.op, IfElse)
    assert [int(s.eval({c: 1})) for s in inferred] == [3, 2]
    assert [int(s.eval({c: 0})) for s in inferred] == [4, 2]


def test_perform_copies_unless_as_view():
    c, x, y = st.iscalar("c"), st.dvector("x"), st.dvector("y")
    xv, yv = np.ones(2), np.zeros(2)
    copied = perform(IfElse(1)(c, x, y).owner, [np.int32(1), xv, yv])[0]
    assert not np.shares_memory(copied, xv)
    view_node = IfElse(1, as_view=True)(c, x, y).owner
    assert view_node.op.view_map == {0: [1]} and str(view_node.op) == "if{inplace}"
    assert perform(view_node, [np.int32(1), xv, yv])[0] is xv
    assert not np.shares_memory(perform(view_node, [np.int32(0), xv, yv])[0], yv)


def test_inner_sections_are_the_branch_regions():
    c, x, y = st.iscalar("c"), st.dvector("x"), st.dvector("y")
    shared = st.exp(x)
    out = ifelse(c, (shared * y).sum(), st.log(shared).sum())
    node = out.owner
    assert has_inner_graph(node.op)
    for fgraph in (None, FunctionGraph([c, x, y], [out], clone=False)):
        then, other = inner_sections(node, fgraph)
        assert (then.label, then.taken_when, then.owned, then.condition) == ("then", True, False, c)
        assert (other.label, other.taken_when, other.owned) == ("else", False, False)
        assert [str(n.op) for n in then.nodes] == ["Elemwise{mul,no_inplace}", "Sum{acc_dtype=float64}"]
        assert [str(n.op) for n in other.nodes] == ["Elemwise{log,no_inplace}", "Sum{acc_dtype=float64}"]
        assert then.inputs == [shared, y] and then.outputs == [node.inputs[1]]
        assert then.outer_outputs == node.outputs and then.wiring() == []
    # In a graph where the then branch's product is also an output, it is needed outside: not in the region.
    c, x, y = st.iscalar("c"), st.dvector("x"), st.dvector("y")  # fresh: the graph above holds the others
    product = st.exp(x) * y
    out2 = ifelse(c, product.sum(), x.sum())
    fg = FunctionGraph([c, x, y], [out2, product], clone=False)
    then_nodes = inner_sections(out2.owner, fg)[0].nodes
    assert [str(n.op) for n in then_nodes] == ["Sum{acc_dtype=float64}"]
    assert len(inner_sections(out2.owner)[0].nodes) == 3  # without the graph: exp, mul and sum (its own ancestors)


def _text(*variables):
    return [symlab.dprint(v, file="str") for v in variables]


@pytest.mark.parametrize(
    ("build", "error", "words"),
    [
        (lambda c, x, y, m: ifelse(x, x, y), IfElseConditionError, ["input 0", "'x'", "1 dimensions"]),
        (lambda c, x, y, m: ifelse("yes", x, y), IfElseConditionError, ["input 0", "str"]),
        (lambda c, x, y, m: ifelse(c, x, m), IfElseBranchError, ["output 0", "'x'", "'m'", "number of dimensions"]),
        (lambda c, x, y, m: ifelse(c, x, st.lvector("i")), IfElseBranchError, ["dtype", "float64", "int64", "'i'"]),
        (lambda c, x, y, m: ifelse(c, [x, y], [y]), IfElseBranchCountError, ["2 then", "1 else"]),
        (lambda c, x, y, m: ifelse(c, [], []), IfElseBranchCountError, ["at least one"]),
        (lambda c, x, y, m: IfElse(1)(c, x, y, y), IfElseBranchCountError, ["expected 2", "received 3"]),
        (lambda c, x, y, m: IfElse(0), ValueError, ["n_outs", "positive"]),
    ],
)
def test_bad_input_is_a_named_error_and_leaves_the_graph(build, error, words):
    c, x, y, m = st.iscalar("c"), st.dvector("x"), st.dvector("y"), st.dmatrix("m")
    ex = (x * 2.0 + y).sum()
    before = _text(ex)
    with pytest.raises(error) as info:
        build(c, x, y, m)
    for word in words:
        assert word in str(info.value), (word, str(info.value))
    assert _text(ex) == before


@pytest.mark.parametrize("name", HOSTILE)
@pytest.mark.parametrize("mode", ["NUMPY", "NUMBA"])
def test_hostile_names_are_literal_and_compile(name, mode):
    c, x = st.iscalar(name), st.dvector(name)
    out = ifelse(c, st.exp(x), x * 2.0, name=name)
    assert str(out.owner.op) == f"if{{{name}}}"
    assert f"if{{{name}}}" in symlab.dprint(out, file="str")
    f = compile_function([c, x], out, mode)
    assert_same_results(f(1, np.array([0.0])), np.array([1.0]), NUMPY_REFERENCE)
    assert_same_results(f(0, np.array([1.5])), np.array([3.0]), NUMPY_REFERENCE)
    if mode == "NUMBA":
        assert name not in f._runner.generated.source or name in ("x", "c")
