"""benchmarks/bench_contended.py without timing: its hog, its medians and targets on made-up worker records.

No timing here: ``make bench`` (or ``run.py --contended``) measures; this keeps the contended run's bookkeeping
right and checks that its CPU-bound process really runs where it should and never outlives its block.
"""

import os

import pytest
from helpers import load_benchmark

bench = load_benchmark("bench_contended")
run = load_benchmark("run")


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.skipif(bench.hog_cpu() is None, reason="the hog needs at least 2 CPUs")
def test_the_hog_spins_in_a_session_of_its_own_on_the_last_cpu_and_is_stopped():
    cpu = bench.hog_cpu()
    with bench.hogging(cpu) as hog:
        pid = hog.proc.pid
        assert hog.running is True  # its CPU time grew
        assert os.getsid(pid) == pid != os.getsid(0)  # setsid: another autogroup than the benchmark's
        assert os.getpgid(pid) == pid
        assert os.sched_getaffinity(pid) == {cpu} == {max(os.sched_getaffinity(0))}
        assert os.getpriority(os.PRIO_PROCESS, pid) == 19
    assert hog.proc is None and _gone(pid)
    record = hog.record()
    tick = 1 / os.sysconf("SC_CLK_TCK")  # /proc counts CPU time in ticks: over a short run, two ticks of slack
    assert record["running"] is True and 0 < record["share"] <= 1 + 2 * tick / record["seconds"]


@pytest.mark.skipif(bench.hog_cpu() is None, reason="the hog needs at least 2 CPUs")
def test_the_hog_is_stopped_when_the_measurement_fails():
    with pytest.raises(KeyboardInterrupt):
        with bench.hogging(bench.hog_cpu()) as hog:
            pid = hog.proc.pid
            raise KeyboardInterrupt
    assert _gone(pid)


def _worker(compiled, numpy, threads="auto", counts=None, others=0.0, ok=True):
    """A made-up warm worker record (benchmarks/worker.py's fields the contended run reads)."""
    steady = {"compiled": compiled, "numpy": numpy, "ratio": compiled / numpy, "threads": threads}
    steady["thread_counts"] = counts or {"2" if threads == "auto" else str(threads): 3}
    steady["threading"] = {"other_processes_cores": others}
    problems = [] if ok else ["output 0: values differ (max abs err 1)"]
    return {"status": "ok", "check": {"ok": ok, "problems": problems}, "steady": steady}


def _slot(idle, contended, single, numpy, share=0.97, running=True, **contended_options):
    reps = len(contended)
    return {
        "cold": {"status": "ok", "check": {"ok": True, "problems": []}},
        "idle": [_worker(t, numpy * 0.9) for t in idle],
        "contended": [_worker(t, numpy, counts={"1": 3}, others=1.0, **contended_options) for t in contended],
        "single": [_worker(t, numpy, threads=1, others=1.0) for t in single],
        "hog": [{"cpu": 1, "running": running, "share": share, "seconds": 5.0}] * reps,
    }


def test_medians_ratios_and_the_issues_targets_from_worker_records():
    raw = {
        "softmax": _slot([1.2e-3, 1.1e-3, 1.3e-3], [2.5e-3, 2.4e-3, 9.0e-3], [2.3e-3, 2.2e-3, 2.4e-3], 5e-3),
        "elemwise_1e6": _slot([6e-3], [16e-3], [13e-3], 17e-3),  # over 1.2x single: FAIL, still under NumPy
        "cumsum_10000": _slot([1e-3], [1.5e-3], [1.4e-3], 1e-3),  # a scan: judged against 2x its NumPy loop
    }
    summary = {name: bench.summarize_workload(slot) for name, slot in raw.items()}
    softmax = summary["softmax"]
    assert softmax["idle"] == pytest.approx(1.2e-3) and softmax["contended"] == pytest.approx(2.5e-3)
    assert softmax["single"] == pytest.approx(2.3e-3) and softmax["numpy_contended"] == pytest.approx(5e-3)
    assert softmax["ratio_single"] == pytest.approx(2.5 / 2.3)  # medians over the repetitions: 9 ms was one slow rep
    assert softmax["ratio_numpy"] == pytest.approx(0.5) and softmax["idle_ratio_numpy"] == pytest.approx(1.2 / 4.5)
    assert softmax["threads"]["contended"] == {"setting": "auto", "counts": {"1": 9}}
    assert bench.threads_shown(softmax["threads"]) == ("auto: 2 -> 1", "1: 1")
    assert softmax["hog_share"] == pytest.approx(0.97) and softmax["hog_running"] is True
    assert softmax["correct"] is True and softmax["runs"] == {"idle": 3, "contended": 3, "single": 3}

    status = {t["target"]: t["status"] for t in bench.targets(summary)}
    assert status == {
        "contended <= 1.2x contended 1 thread: softmax": "PASS",
        "contended <= NumPy contended: softmax": "PASS",
        "contended <= 1.2x contended 1 thread: elemwise_1e6": "FAIL",
        "contended <= NumPy contended: elemwise_1e6": "PASS",
        "contended <= 1.2x contended 1 thread: cumsum_10000": "PASS",
        "contended <= 2x NumPy (as idle) contended: cumsum_10000": "PASS",
        "idle <= 0.6x NumPy: elemwise_1e6": "PASS",  # the elementwise group (a) only
    }
    assert summary["elemwise_1e6"]["idle_ratio_numpy"] == pytest.approx(6 / (0.9 * 17))


def test_a_wrong_result_a_failed_worker_or_a_hog_that_did_not_run_pass_nothing():
    summary = {
        "softmax": bench.summarize_workload(_slot([1e-3], [1e-3], [1e-3], 5e-3, ok=False)),
        "logreg": bench.summarize_workload(_slot([1e-3], [1e-3], [1e-3], 5e-3, running=False)),
        "mlp": bench.summarize_workload(
            {**_slot([1e-3], [1e-3], [1e-3], 5e-3), "contended": [{"status": "error", "error": "Traceback\nboom"}]}
        ),
    }
    status = {t["target"]: t["status"] for t in bench.targets(summary)}
    assert status["contended <= NumPy contended: softmax"] == "FAIL (wrong result)"
    assert status["contended <= 1.2x contended 1 thread: logreg"] == "n/a (the hog did not run)"
    assert status["contended <= 1.2x contended 1 thread: mlp"] == "FAIL (worker error)"
    text = bench.report({"skipped": None, "cpu": 1, "reps": 1, "seconds": 3.0, "summary": summary,
                         "targets": bench.targets(summary)})
    assert "softmax: wrong result: output 0: values differ" in text
    assert "mlp: worker failed: boom" in text and "logreg: the hog did not run" in text
    assert status["contended <= NumPy contended: mlp"] == "FAIL (worker error)"
    assert text.splitlines()[-1] == "contended targets: 0 pass, 4 fail, 2 not measured"


def test_the_report_shows_each_workload_and_says_when_the_run_was_skipped():
    summary = {"softmax": bench.summarize_workload(_slot([1.2e-3], [2.5e-3], [2.3e-3], 5e-3))}
    section = {"skipped": None, "cpu": 1, "reps": 1, "seconds": 3.0, "summary": summary,
               "targets": bench.targets(summary)}
    lines = bench.report(section).splitlines()
    row = next(line for line in lines if line.startswith("softmax "))
    for shown in ("1.2 ms", "2.5 ms", "2.3 ms", "5.0 ms", "1.09x", "0.50x", "auto: 2 -> 1", "1: 1", "0.97"):
        assert shown in row


def test_on_one_cpu_the_contended_run_says_it_needs_two_and_measures_nothing(monkeypatch):
    monkeypatch.setattr(bench.os, "sched_getaffinity", lambda pid: {0})
    assert bench.hog_cpu() is None
    monkeypatch.setattr(bench, "measure", lambda *a: pytest.fail("nothing is measured on one CPU"))
    section = bench.run_section(run.parse_args(["--contended"]), print)
    assert section["skipped"] == "needs at least 2 CPUs (this process may use 1)" and section["summary"] == {}
    assert bench.report(section).endswith("skipped, needs at least 2 CPUs (this process may use 1)")


def test_run_py_runs_the_contended_run_alone_or_skips_it():
    args = run.parse_args(["--contended"])
    assert args.contended and args.contended_workloads is None  # bench_contended's default
    assert "add10" not in bench.default_workloads() and "lenet" in bench.default_workloads()
    assert run.parse_args(["--workloads", "d,logreg"]).contended_workloads == ["softmax", "logreg"]
    assert run.parse_args(["--no-contended"]).no_contended
    with pytest.raises(SystemExit):
        run.parse_args(["--contended", "--no-contended"])
