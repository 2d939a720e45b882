"""Mode.including / excluding: PyTensor's names of the rules symlab has under another name, and an
error (never a silent no-op) for a name that selects nothing."""

import numpy as np
import pytest

import symlab
import symlab.tensor as st
from symlab.compile import Mode, get_mode
from symlab.rewriting import RewriteDatabase, rewrite_graph
from symlab.rewriting.aliases import PYTENSOR_NAMES
from symlab.rewriting.db import default_db
from symlab.rewriting.patterns import PatternNodeRewriter


def ops(f):
    return [str(node.op) for node in f.maker.fgraph.toposort()]


def fused(f):
    return [node for node in f.maker.fgraph.toposort() if type(getattr(node.op, "scalar_op", None)).__name__ == "Composite"]


def test_every_alias_stands_for_registered_rules():
    known = default_db.known_words()
    for alias, names in PYTENSOR_NAMES.items():
        assert alias not in known, f"{alias} is a symlab rule or tag itself: it needs no alias"
        assert names and set(names) <= set(default_db.names()), (alias, set(names) - set(default_db.names()))
        assert default_db.resolve([alias], "exclude") == names


def test_debug_faq_monitor_mode_excluding_pytensor_names_sees_every_node():
    """debug_faq.rst: ``MonitorMode(post_func=detect_nan).excluding('local_elemwise_fusion', 'inplace')``."""
    culprits = []

    def detect_nan(fgraph, index, node, thunk):
        if any(np.isnan(storage[0]).any() for storage in thunk.outputs):
            culprits.append(str(node.op))

    mode = symlab.compile.MonitorMode(post_func=detect_nan).excluding("local_elemwise_fusion", "inplace")
    assert mode.exclude == ("elemwise_fusion", "inplace")
    x = st.dvector("x")
    f = symlab.function([x], [st.log(x) * x], mode=mode)
    assert not fused(f) and ops(f) == ["Elemwise{log,no_inplace}", "Elemwise{mul,no_inplace}"]
    np.testing.assert_allclose(f(np.array([1.0, 2.0]))[0], [0.0, 2 * np.log(2.0)])
    assert culprits == []
    f(np.array([0.0, 1.0]))
    assert culprits == ["Elemwise{mul,no_inplace}"]  # log(0) * 0 = -inf * 0: the mul makes the NaN
    # Without the exclusion the two nodes are fused into one: the alias did exclude the fusion.
    assert fused(symlab.function([x], [st.log(x) * x], mode=symlab.compile.MonitorMode().excluding("inplace")))


@pytest.mark.parametrize("mode", ["NUMPY", "NUMBA"])
def test_excluding_an_alias_equals_excluding_symlab_s_rules(mode):
    x = st.dvector("x")
    out = st.log(1 + x) + x**2
    values = np.array([0.5, 2.0, 3.0])
    by_alias = symlab.function([x], out, mode=get_mode(mode).excluding("local_log1p", "local_pow_specialize", "fusion"))
    by_name = symlab.function(
        [x], out, mode=get_mode(mode).excluding("log1p", "log1p_swapped", "pow_two", "fusion")
    )
    default = symlab.function([x], out, mode=get_mode(mode).excluding("fusion"))
    assert ops(by_alias) == ops(by_name)
    assert "Elemwise{log1p,no_inplace}" in ops(default) and "Elemwise{sqr,no_inplace}" in ops(default)
    assert not any("log1p" in op or "sqr" in op for op in ops(by_alias)), ops(by_alias)
    expected = np.log1p(values) + values**2
    for f in (by_alias, default):
        np.testing.assert_allclose(f(values), expected, rtol=1e-13)


def test_including_an_alias_runs_symlab_s_rules():
    x = st.dvector("x")
    out = st.log(1 + x)
    plain = symlab.function([x], out, mode="FAST_COMPILE")
    stable = symlab.function([x], out, mode=get_mode("FAST_COMPILE").including("local_log1p"))
    assert "Elemwise{log1p,no_inplace}" not in ops(plain) and ops(stable) == ["Elemwise{log1p,no_inplace}"]
    tiny = np.array([1e-20, 1e-10])
    np.testing.assert_array_equal(stable(tiny), np.log1p(tiny))  # log(1 + 1e-20) would be 0
    assert plain(tiny)[0] == 0.0


def test_shape_info_excluding_local_shape_to_shape_i_runs_the_computation():
    """shape_info.rst: with ``local_shape_to_shape_i`` excluded, the shape of a join runs the join, so a bad
    input raises instead of giving an inferred shape."""
    x, y = st.dmatrix("x"), st.dmatrix("y")
    shape = st.join(0, x, y).shape
    xv, yv = np.ones((5, 4)), np.ones((3, 3))
    inferred = symlab.function([x, y], shape, mode="NUMPY")
    np.testing.assert_array_equal(inferred(xv, yv), [8, 4])  # from the shapes alone: the mismatch is hidden
    checked = symlab.function([x, y], shape, mode=get_mode("NUMPY").excluding("local_shape_to_shape_i"))
    assert "Join{axis=0}" in ops(checked)
    with pytest.raises(ValueError, match="cannot join arrays of shapes"):
        checked(xv, yv)
    np.testing.assert_array_equal(checked(xv, np.ones((3, 4))), [8, 4])


@pytest.mark.parametrize("method", ["excluding", "including"])
def test_an_unknown_name_raises_with_the_closest_known_names(method):
    base = get_mode("NUMPY")
    with pytest.raises(ValueError, match=rf"Mode\.{method}: \['local_elemwise_fusio'\] name no rule or tag") as info:
        getattr(base, method)("local_elemwise_fusio")
    assert "'local_elemwise_fusion'" in str(info.value) and "'elemwise_fusion'" in str(info.value)
    with pytest.raises(ValueError, match="'local_remove_all_assert'.*nothing close"):
        getattr(base, method)("fusion", "local_remove_all_assert")
    with pytest.raises(TypeError, match="expected rule names or tags"):
        getattr(base, method)(3)
    assert base == get_mode("NUMPY") and base.exclude == () and base.include == ("fast_run",)


def test_mode_constructor_checks_and_resolves_its_words():
    assert Mode("numpy", exclude=("local_mul_canonizer",)).exclude == ("collect_factors", "mul_div", "mul_div_swapped")
    with pytest.raises(ValueError, match=r"Mode exclude: \['fussion'\].*'fusion'"):
        Mode("numpy", exclude=("fussion",))
    with pytest.raises(ValueError, match=r"Mode include: \['fast_runn'\]"):
        Mode("numpy", include=("fast_runn",))


def test_rewrite_graph_takes_the_aliases_too():
    x = st.dvector("x")
    _, trace = rewrite_graph(st.exp(x) * 2 + 1, exclude=("local_elemwise_fusion", "inplace"))
    assert "elemwise_fusion" not in [s.rule for s in trace]
    _, trace = rewrite_graph(st.exp(x) * 2 + 1, exclude=("inplace",))
    assert "elemwise_fusion" in [s.rule for s in trace]
    with pytest.raises(ValueError, match=r"include: \['canonicalise'\].*'canonicalize'"):
        rewrite_graph(x + 0, include=("canonicalise",))


def test_a_rule_registered_under_an_alias_name_wins_over_the_alias():
    db = RewriteDatabase()
    rule = PatternNodeRewriter((st.log, (st.add, 1, "x")), (st.log1p, "x"))
    db.register(rule, "stabilize", name="local_log1p")
    assert db.resolve(["local_log1p"], "exclude") == ("local_log1p",)
    # An alias whose rules this database does not have names nothing here.
    with pytest.raises(ValueError, match=r"\['local_elemwise_fusion'\] name no rule or tag"):
        db.resolve(["local_elemwise_fusion"], "exclude")
