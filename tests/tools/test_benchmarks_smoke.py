"""The benchmark workloads compute what their hand-written NumPy references compute (small sizes, NumPy backend).

No timing here: ``make bench`` measures; this only keeps benchmarks/workloads.py correct.
"""


import numpy as np
import pytest
from helpers import load_benchmark

import symlab

workloads = load_benchmark("workloads")
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
    assert {w.group for w in full.values()} == {"a", "b", "c", "d", "e", "x+y", "lenet", "ofg", "cond", "random", "scan"}
    lenet = full["lenet"]  # issue 29: convolutional_mlp's sizes
    assert lenet.params == {"batch": 500, "image": 28, "nkerns": [20, 50], "hidden": 500}
    assert lenet.build_pytensor is None and _load_run().plan(_plan_args(), ["symlab", "pytensor"]) == [
        (0, "lenet", "symlab")
    ]
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
    return load_benchmark("run")


def _plan_args():
    """The options of a run of the LeNet workload alone (run.plan's view of them)."""
    import argparse

    return argparse.Namespace(reps=1, workloads=["lenet"], pytensor_max_chain=0, pytensor_chain_reps=1)


def _record(first_result, returned, ready=None, steady=None, ok=True, tier="numpy", cache_hit=False):
    """A made-up worker record (see benchmarks/worker.py for the fields)."""
    record = {
        "status": "ok",
        "backend": "numba",
        "nodes": 1,
        "build": 1e-4,
        "rewrite": 1e-3,
        "returned": returned,
        "ready": returned if ready is None else ready,
        "first_result": first_result,
        "tier_first_call": tier,
        "calls_before_ready": 3 if tier == "numpy" else 0,
        "cache_hit": cache_hit,
        "cache_miss_reason": None if cache_hit else "new key: this graph was never compiled with this cache directory",
        "check": {"ok": ok, "problems": [] if ok else ["output 0 differs"]},
    }
    if steady is not None:
        record["steady"] = {"compiled": steady, "numpy": 1e-6, "ratio": steady / 1e-6, "tier": "machine code"}
    return record


def _pair(cold, warm):
    return {"cold": [cold], "warm": [warm]}


def _made_up_raw():
    """Worker records of a small run: the tiered default, the plain Numba path and PyTensor (softmax: symlab failed)."""
    return {
        "import": {"symlab": [{"status": "ok", "import": 0.08, "numba_imported": False}]},
        "workloads": {
            "add10": {
                "symlab": _pair(
                    _record(0.15, 0.08, ready=0.7),
                    _record(0.3, 0.09, ready=0.35, steady=2.8e-6, cache_hit=True),
                ),
                "symlab-numba": _pair(
                    _record(0.9, 0.8, tier="machine code"),
                    _record(0.36, 0.3, steady=2.7e-6, tier="machine code", cache_hit=True),
                ),
                "pytensor": _pair(_record(1.0, 0.8, tier=None), _record(0.7, 0.45, steady=5e-6, tier=None)),
            },
            "logreg": {
                "symlab": _pair(_record(0.3, 0.05, ready=2.6), _record(0.3, 0.2, ready=0.35, steady=0.9e-6, ok=False)),
                "symlab-numba": _pair(
                    _record(3.0, 2.7, tier="machine code"), _record(0.5, 0.28, steady=0.9e-6, tier="machine code")
                ),
                "pytensor": _pair(_record(4.0, 3.0, tier=None), _record(1.0, 0.7, steady=4e-6, tier=None)),
            },
            "softmax": {  # symlab's worker failed: its targets fail, not "n/a"
                "symlab": _pair(
                    {"status": "error", "error": "Traceback ...\nRuntimeError: boom"},
                    {"status": "skipped", "reason": "cold run: error"},
                ),
                "pytensor": _pair(_record(2.0, 1.5, tier=None), _record(1.0, 0.7, steady=4e-6, tier=None)),
            },
        },
    }


def test_the_targets_measure_the_tiered_default_with_the_plain_numba_path_beside():
    """Made-up worker records through summarize, targets and report: what passes, and what is shown beside."""
    run = _load_run()
    summary = run.summarize(_made_up_raw())
    add10 = summary["workloads"]["add10"]
    assert add10["symlab"]["cold_ready"] == 0.7 and add10["symlab"]["cold_returned"] == 0.08
    assert add10["symlab"]["cold_tier_first_call"] == "numpy" and add10["symlab"]["warm_cache"] == "hit"
    assert add10["symlab"]["cold_cache"] == "miss (new key)"
    rows = {t["target"]: t for t in run.targets(summary)}
    status = {name: t["status"] for name, t in rows.items()}
    assert status["first result of x + y, fresh process, cold < 0.25 s"] == "PASS"  # 0.15 s on the NumPy tier
    assert status["first result of x + y, fresh process, warm < 0.25 s"] == "FAIL"  # 0.3 s
    assert rows["first result of x + y, fresh process, cold < 0.25 s"]["plain_numba"] == 0.9
    assert status["machine code ready, cold <= PyTensor's cold compile: add10"] == "PASS"  # 0.7 / 0.8
    assert status["function() returns, warm < 0.15 s: logreg"] == "FAIL (wrong result)"  # a mismatch fails it
    assert status["function() returns, cold <= 1/3 PyTensor's cold compile: logreg"] == "FAIL (wrong result)"
    assert rows["function() returns, warm < 0.15 s: logreg"]["plain_numba"] == 0.28
    assert status["call overhead of 10-element x + y <= 3x NumPy"] == "PASS"  # 2.8x, on the machine code
    assert status["import symlab does not import Numba"] == "PASS"
    assert rows["import symlab < 0.2 s"]["plain_numba"] is None  # the same import: shown once
    text = run.report(summary, run.targets(summary))
    assert "softmax symlab: worker failed: RuntimeError: boom" in text
    assert status["function() returns, warm < 0.15 s: softmax"] == "FAIL (worker error)"
    assert status["machine code ready, cold <= PyTensor's cold compile: softmax"] == "FAIL (worker error)"
    assert "symlab's tiers (the default)" in text and "plain Numba" in text
    assert "symlab-numba" in text and "symlab-background" not in text
    passed, failed = sum(s == "PASS" for s in status.values()), sum(s.startswith("FAIL") for s in status.values())
    assert f"targets: {passed} pass, {failed} fail" in text


def test_every_workload_runs_on_both_symlab_paths_and_the_old_system_is_refused():
    run = _load_run()
    args = run.parse_args(["--quick", "--workloads", "e,add10"])
    jobs = run.plan(args, list(run.SYSTEMS))
    for name in ("chain_2000", "chain_10000", "add10"):
        assert {s for _, n, s in jobs if n == name} >= {"symlab", "symlab-numba"}
    assert ("chain_10000", "pytensor") not in {(n, s) for _, n, s in jobs}  # --quick: PyTensor up to 2,000 nodes
    with pytest.raises(SystemExit):
        run.parse_args(["--systems", "symlab-background"])


@pytest.mark.numba
def test_the_worker_measures_both_symlab_paths(tmp_path):
    """add10 through benchmarks/worker.py in fresh processes, with run.py's cache environment: the tiered default
    says which tier served and when the machine code was ready; its warm process loads the cold one's cache and
    times its steady calls on the machine code. No time is checked."""
    run = _load_run()
    opts = ["--blocks", "1", "--block-seconds", "0.001"]
    records = {}
    for system, phases in (("symlab", ("cold", "warm")), ("symlab-numba", ("cold",))):
        env = run.cache_env(tmp_path / system, system)
        for phase in phases:
            record = run.run_worker(["add10", system, phase, *opts], env, timeout=300)
            assert record["status"] == "ok", record.get("error")
            assert record["check"]["ok"], record["check"]
            records[system, phase] = record
    cold, warm = records["symlab", "cold"], records["symlab", "warm"]
    assert cold["background_compile"] is True  # set by the worker, whatever the environment says
    assert cold["tier_first_call"] in ("numpy", "machine code") and cold["ready"] > 0
    assert cold["cache_hit"] is False and warm["cache_hit"] is True, warm.get("cache_miss_reason")
    assert warm["steady"]["tier"] == "machine code" and warm["steady"]["compiled"] > 0
    plain = records["symlab-numba", "cold"]
    assert plain["background_compile"] is False and plain["tier_first_call"] == "machine code"
    assert plain["ready"] == plain["returned"]


@pytest.mark.numba
@pytest.mark.parametrize(
    "name", [n for n, w in SMALL.items() if w.group != "e"]
)
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
    return load_benchmark("rewrite_quality")


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
