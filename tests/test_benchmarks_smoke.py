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


def _load_run():
    spec = importlib.util.spec_from_file_location("symlab_bench_run", _PATH.parent / "run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _record(first_result, compile_total, returned, steady=None, ok=True):
    record = {
        "status": "ok",
        "backend": "numba",
        "nodes": 1,
        "build": 1e-4,
        "rewrite": 1e-3,
        "compile_total": compile_total,
        "returned": returned,
        "first_result": first_result,
        "calls_before_ready": 3,
        "check": {"ok": ok, "problems": [] if ok else ["output 0 differs"]},
    }
    if steady is not None:
        record["steady"] = {"compiled": steady, "numpy": 1e-6, "ratio": steady / 1e-6}
    return record


def test_background_compilation_is_reported_beside_the_issues_targets_not_among_them():
    """Made-up worker records through summarize, targets and report: what passes, and where it is counted."""
    run = _load_run()
    raw = {
        "import": {"symlab": [{"status": "ok", "import": 0.08, "numba_imported": False}]},
        "workloads": {
            "add10": {
                "symlab": {"cold": [_record(0.9, 0.8, 0.8)], "warm": [_record(0.36, 0.3, 0.3, steady=2.8e-6)]},
                "symlab-background": {"cold": [_record(0.15, 0.86, 0.08)], "warm": [_record(0.3, 0.33, 0.09)]},
            },
            "logreg": {
                "symlab": {"cold": [_record(3.0, 2.7, 2.7)], "warm": [_record(0.5, 0.28, 0.28, steady=0.9e-6)]},
                "symlab-background": {"cold": [_record(0.3, 2.6, 0.05)], "warm": [_record(0.3, 0.35, 0.2, ok=False)]},
            },
        },
    }
    summary = run.summarize(raw)
    assert summary["workloads"]["add10"]["symlab-background"]["call"] is None  # not timed: the same machine code
    issue = {t["target"]: t["status"] for t in run.targets(summary)}
    assert issue["first result of x + y, fresh process, cold < 0.5 s"] == "FAIL"  # symlab's default path
    assert issue["warm compile < 0.15 s: logreg"] == "FAIL"
    background = {t["target"]: t["status"] for t in run.background_targets(summary)}
    assert background == {
        "function() + probe call, warm < 0.15 s: logreg": "FAIL (wrong result)",  # 0.2 s, and a mismatch
        "first result of x + y, fresh process, cold < 0.5 s": "PASS",
        "first result of x + y, fresh process, warm < 0.25 s": "FAIL",  # 0.3 s
    }
    text = run.report(summary, run.targets(summary), run.background_targets(summary))
    assert "background compilation (config.background_compile, opt-in)" in text
    assert "with background compilation (not counted above): 1 pass, 2 fail, 0 not measured" in text
    counts = [line for line in text.splitlines() if line.startswith("targets: ")]
    assert len(counts) == 1 and "PASS" not in counts[0]


@pytest.mark.numba
@pytest.mark.parametrize("name", [n for n, w in SMALL.items() if w.group != "e"])
def test_compiled_workload_has_the_numpy_backends_bits(name):
    """NUMBA mode computes the very bits of NUMPY mode on these workloads: its elementwise kernels, sums,
    (log-)softmax and products call NumPy's own loops and BLAS. (Calls made on the NumPy backend while the
    machine code compiles in the background therefore return what the machine code will.) The chains (e)
    run on the register machine, whose scalar code rounds differently."""
    w = SMALL[name]
    data = w.data()
    results = {}
    for mode in ("NUMPY", "NUMBA"):
        inputs, outputs = w.build_symlab()
        got = symlab.function(inputs, outputs, mode=mode)(*data)
        results[mode] = [np.asarray(g) for g in got]
    for k, (a, b) in enumerate(zip(results["NUMPY"], results["NUMBA"])):
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True), (k, np.max(np.abs(a - b)))


def _load_quality():
    spec = importlib.util.spec_from_file_location("symlab_bench_rewrite_quality", _PATH.parent / "rewrite_quality.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_rewrite_quality_quick_counts_correct_graphs():
    """rewrite_quality.py --quick without PyTensor: every case compiles, is counted, and computes what the
    unoptimized graph computes; the full corpus has at least 40 expressions."""
    quality = _load_quality()
    assert len(quality.corpus()) >= 40
    rows = quality.measure(quick=True, pytensor=False)
    assert rows and all("nodes" in r["symlab"] and r["symlab"]["correct"] for r in rows), rows
    by_name = {r["name"]: r["symlab"] for r in rows}
    assert by_name["x - x + y"] == {"nodes": 0, "ops": 0, "correct": True}
    text = quality.report(rows)
    assert "PyTensor not installed" in text and "x - x + y" in text
    assert quality.main(["--quick", "--no-pytensor"]) == 0
