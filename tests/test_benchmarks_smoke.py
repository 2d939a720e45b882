"""The benchmark workloads compute what their hand-written NumPy references compute (small sizes, NumPy backend).

No timing here: ``make bench`` measures; this only keeps benchmarks/workloads.py correct.
"""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import symlab

_PATH = Path(__file__).resolve().parent.parent / "benchmarks" / "workloads.py"


def _load_workloads():
    spec = importlib.util.spec_from_file_location("symlab_bench_workloads", _PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


workloads = _load_workloads()
SMALL = workloads.small_workloads()


@pytest.mark.parametrize("name", list(SMALL))
def test_symlab_workload_matches_numpy_reference(name):
    w = SMALL[name]
    data = w.data()
    inputs, outputs = w.build_symlab()
    f = symlab.function(inputs, outputs, mode="NUMPY")
    got = f(*data)
    expected = w.numpy(*data)
    check = workloads.compare(list(got), expected, w.rtol, w.atol)
    assert check["ok"], check["problems"]
    # The same data twice: the generators use fixed seeds.
    for a, b in zip(data, w.data()):
        np.testing.assert_array_equal(a, b)


def test_full_size_workloads_cover_the_issue():
    full = workloads.all_workloads()
    assert {w.group for w in full.values()} == {"a", "b", "c", "d", "e", "x+y"}
    assert {w.params.get("nodes") for w in full.values() if w.group == "e"} == {2000, 10_000}
    for w in full.values():  # the probe inputs (compile timing) have the types of the real inputs
        real, probe = w.data(), w.probe()
        assert [(a.dtype, a.ndim) for a in real] == [(a.dtype, a.ndim) for a in probe]


def test_chain_merges_repeated_subexpressions():
    w = SMALL["chain_140"]
    inputs, outputs = w.build_symlab()
    before = workloads.count_nodes(outputs)
    f = symlab.function(inputs, outputs, mode="NUMPY")
    assert len(f.maker.fgraph.apply_nodes) < before
