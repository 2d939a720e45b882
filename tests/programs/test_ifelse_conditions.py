"""PyTensor's tutorial, conditions.rst ("IfElse vs Switch"), on symlab: the page's example with ``pytensor``
renamed ``symlab``, on smaller matrices, and the claim that ``ifelse`` does about half the work of ``switch``
measured by what the nodes run and read, never by time."""

from __future__ import annotations

import numpy as np
import pytest

import symlab
from symlab import tensor as pt
from symlab.compile.mode import MonitorMode
from symlab.ifelse import ifelse

ROWS, COLS = 400, 100  # the page: 10000 x 1000 (benchmarks/workloads.py measures that size)


def page_example(linker: str, profile: bool = False):
    """The page's code, renamed: ``pytensor.function(..., mode=pytensor.compile.mode.Mode(linker='vm'))``."""
    a, b = pt.scalars("a", "b")
    x, y = pt.matrices("x", "y")
    z_switch = pt.switch(pt.lt(a, b), pt.mean(x), pt.mean(y))
    z_lazy = ifelse(pt.lt(a, b), pt.mean(x), pt.mean(y))
    f_switch = symlab.function([a, b, x, y], z_switch, mode=symlab.compile.mode.Mode(linker=linker), profile=profile)
    f_lazyifelse = symlab.function([a, b, x, y], z_lazy, mode=symlab.compile.mode.Mode(linker=linker), profile=profile)
    return (a, b, x, y), z_switch, z_lazy, f_switch, f_lazyifelse


def big_matrices():
    dtype = symlab.config.floatX
    return np.ones((ROWS, COLS), dtype=dtype), 2 * np.ones((ROWS, COLS), dtype=dtype)


@pytest.mark.parametrize("linker", ["vm", "cvm"])
def test_the_page_example_runs_and_both_versions_agree(linker):
    *_, f_switch, f_lazyifelse = page_example(linker)
    big_mat1, big_mat2 = big_matrices()
    val1, val2 = 0.0, 1.0
    for _ in range(3):  # the page calls each n_times
        assert float(f_switch(val1, val2, big_mat1, big_mat2)) == 1.0
        assert float(f_lazyifelse(val1, val2, big_mat1, big_mat2)) == 1.0
    assert float(f_lazyifelse(val2, val1, big_mat1, big_mat2)) == float(f_switch(val2, val1, big_mat1, big_mat2)) == 2.0


@pytest.mark.parametrize("linker", ["vm", "cvm"])
def test_the_profile_shows_the_branch_not_taken_was_skipped(linker):
    *_, f_switch, f_lazyifelse = page_example(linker, profile=True)
    big_mat1, big_mat2 = big_matrices()
    n_times = 4
    for _ in range(n_times):
        f_switch(0.0, 1.0, big_mat1, big_mat2)
        f_lazyifelse(0.0, 1.0, big_mat1, big_mat2)
    reads = {"switch": f_switch.profile, "ifelse": f_lazyifelse.profile}
    sums = {k: [s for s in p.nodes if "Sum" in str(s.node.op)] for k, p in reads.items()}
    # switch: both means every call; ifelse: the mean of x every call, the mean of y never.
    assert sorted(s.calls for s in sums["switch"]) == [n_times, n_times]
    assert sorted(s.calls for s in sums["ifelse"]) == [0, n_times]
    assert f_switch.profile.skipped_runs == 0 and f_lazyifelse.profile.skipped_runs > 0
    summary = f_lazyifelse.profile.summary()
    assert "lazy ifelse:" in summary and "[skipped" in summary and "lazy ifelse:" not in f_switch.profile.summary()


def test_ifelse_reads_about_half_the_elements_switch_reads():
    """Measured: the elements each node run reads, summed over a call (a MonitorMode's post_func counts them)."""
    (a, b, x, y), z_switch, z_lazy, *_ = page_example("vm")
    counted = {"elements": 0}

    def count(fgraph, i, node, cells):
        counted["elements"] += sum(int(np.size(cell[0])) for cell in cells.inputs if cell[0] is not None)

    work = {}
    big_mat1, big_mat2 = big_matrices()
    for key, out in (("switch", z_switch), ("ifelse", z_lazy)):
        f = symlab.function([a, b, x, y], out, mode=MonitorMode(post_func=count))
        counted["elements"] = 0
        f(0.0, 1.0, big_mat1, big_mat2)
        work[key] = counted["elements"]
    ratio = work["ifelse"] / work["switch"]
    assert 0.45 < ratio < 0.55, work
