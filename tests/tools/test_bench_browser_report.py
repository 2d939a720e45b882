"""benchmarks/bench_browser.py without a browser: its rows, its table, and what it says when Chromium is missing.

No timing here: ``make bench`` (or ``benchmarks/bench_browser.py``) measures in Chromium; this only keeps the
benchmark's bookkeeping right.
"""

import pytest
from helpers import load_benchmark

bench = load_benchmark("bench_browser")


def test_a_row_is_judged_on_its_median_against_its_target():
    fast = bench._row("MLP: click to paint", [0.030, 0.040, 0.090], bench.CLICK)
    assert fast["seconds"] == pytest.approx(0.040) and fast["max"] == pytest.approx(0.090) and fast["count"] == 3
    assert fast["status"] == "PASS"
    slow = bench._row("MLP: step to paint", [0.120, 0.110, 0.090], bench.STEP["mlp"])
    assert slow["status"] == "FAIL" and slow["limit"] == 0.1
    assert bench._row("nothing measured", [], 1.0)["status"] == "FAIL"


def test_the_targets_are_the_issues():
    assert bench.CLICK == 0.05
    assert bench.STEP == {"teaching": 0.1, "mlp": 0.1, "big": 0.15}
    assert bench.FIRST_DISPLAY["mlp"] == 0.5 and bench.FIRST_DISPLAY["big"] == 1.5
    assert (bench.EXPORT_SECONDS, bench.EXPORT_BYTES) == (3.0, 2_000_000)
    # every case is measured against a target of its size
    assert {size for _, size, _, _ in bench.CASES} <= set(bench.FIRST_DISPLAY) == set(bench.STEP)
    assert {kind for _, _, kind, _ in bench.CASES} == {"view", "stepper"}


def test_the_table_shows_each_figure_with_its_target_and_verdict():
    rows = [
        bench._row("a + a ** 10: graph view: first display", [0.12, 0.13], 0.5, cold=0.19),
        bench._row("1,000 nodes: stepper: step to paint", [0.2, 0.3], 0.15, answer=0.18),
        {"name": "MLP's 83 steps: exported page size", "bytes": 430_000, "limit_bytes": 2_000_000, "status": "PASS"},
    ]
    table = bench.report(rows)
    lines = table.splitlines()
    assert len(lines) == 4 and lines[0].startswith("Views in the browser")
    assert "125 ms" in lines[1] and "cold   190 ms" in lines[1] and "target < 500 ms  PASS" in lines[1]
    assert "250 ms" in lines[2] and "max    300 ms" in lines[2] and "target < 150 ms  FAIL" in lines[2]
    assert "answer  180 ms" in lines[2] and "answer" not in lines[1]
    assert "0.43 MB" in lines[3] and "target < 2 MB  PASS" in lines[3]


def test_without_chromium_it_measures_nothing_and_says_why(monkeypatch, tmp_path):
    import browser_lab

    monkeypatch.setattr(browser_lab, "CHROMIUM", str(tmp_path / "no-chromium"))
    with pytest.raises(bench.BrowserUnavailable, match="Chromium is not installed at .*no-chromium"):
        bench.measure(quick=True, log=lambda text: None)
    assert bench.main(["--quick", "--results-dir", str(tmp_path / "results")]) == 0
    assert not (tmp_path / "results").exists()  # nothing measured, nothing saved
