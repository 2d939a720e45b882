"""Fusion keeps an ifelse lazy: a node only one branch needs is fused only with nodes of that branch."""

from __future__ import annotations

import numpy as np
import pytest

import symlab
import symlab.tensor as st
from symlab.graph.fg import FunctionGraph
from symlab.graph.inner_graph import branch_lanes
from symlab.ifelse import ifelse
from symlab.rewriting.fusion import fuse_elemwise


def _graph():
    x = st.dvector("x")
    doubled = x * 2  # read by the condition and by both branches: in no branch
    condition = doubled.sum() > 0
    out = ifelse(condition, (st.exp(doubled) * 3).sum(), (st.log1p(doubled * doubled) - 1).sum())
    return x, out


def test_lanes_name_the_innermost_branch():
    x, out = _graph()
    fg = FunctionGraph([x], [out])
    order = fg.toposort()
    lanes = branch_lanes(fg, order)
    labels = {str(n.op): lane[1] for n, lane in lanes.items()}
    assert labels["Elemwise{exp,no_inplace}"] == "then"
    assert labels["Elemwise{log1p,no_inplace}"] == "else"
    doubled = next(n for n in order if str(n.op) == "Elemwise{mul,no_inplace}" and n.inputs[0] is fg.inputs[0])
    assert doubled not in lanes


def test_fusion_never_joins_a_branch_with_what_always_runs():
    x, out = _graph()
    fg = FunctionGraph([x], [out])
    fuse_elemwise(fg)
    lanes = branch_lanes(fg, fg.toposort())
    for node in fg.toposort():
        text = str(node.op)
        if "exp" in text:
            assert lanes.get(node, (None, None))[1] == "then", text
            assert "log1p" not in text
        if "log1p" in text:
            assert lanes.get(node, (None, None))[1] == "else", text


@pytest.mark.parametrize("mode", ["NUMPY", "NUMBA"])
def test_the_branch_not_taken_is_skipped_after_fusion(mode):
    x, out = _graph()
    f = symlab.function([x], out, mode=mode, profile=True)
    value = np.array([0.5, -0.25, 1.0])
    np.testing.assert_allclose(f(value), (np.exp(2 * value) * 3).sum())
    np.testing.assert_allclose(f(-value), (np.log1p(4 * value * value) - 1).sum())
    stats = {str(s.node.op): s for s in f.profile.nodes}
    exp_nodes = [s for text, s in stats.items() if "exp" in text]
    log_nodes = [s for text, s in stats.items() if "log1p" in text]
    assert exp_nodes and log_nodes
    assert all(s.skipped == 1 for s in exp_nodes + log_nodes), {t: (s.calls, s.skipped) for t, s in stats.items()}
