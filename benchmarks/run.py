"""The benchmarks of issue 8: symlab against hand-written NumPy and PyTensor's NUMBA mode.

Run ``make bench`` (or ``.venv-bench/bin/python benchmarks/run.py [--quick] ...``). Every figure is a
median over fresh processes (``benchmarks/worker.py``), each with its own compile-cache directory:
a ``cold`` process starts from an empty cache, a ``warm`` one (same directory) from the cache the
cold one filled. Steady-state calls are timed in the warm process, alternating with the NumPy
version.

The systems: ``symlab`` is symlab's default, tiered compilation (``function()`` returns before the
machine code is ready; the NumPy tier serves the calls meanwhile), whose figures are symlab's main
ones: time for ``function()`` to return, first result, time until the machine code is ready, steady
call. ``symlab-numba`` is the plain Numba path (``config.background_compile = False``), shown beside
it; ``pytensor`` is PyTensor's NUMBA mode. Prints the tables and the targets of the issue, measured
on the default, with the plain Numba path's value beside each, then the contended run of issue 36
(``bench_contended.py``: the steady calls while another process keeps one core busy; ``--contended`` runs
it alone, ``--no-contended`` skips it), and saves everything as JSON under ``benchmarks/results/``. See
``benchmarks/README.md`` for how to read the output.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from worker import SYSTEMS  # noqa: E402
from workloads import WORKLOADS  # noqa: E402

#: The system whose figures the targets measure (symlab's default), and the plain Numba path beside it.
DEFAULT, PLAIN = "symlab", "symlab-numba"

#: The figures the issue reports for PyTensor 3 NUMBA mode on a 2-core machine (for context only).
ISSUE_PYTENSOR = {
    "steady_ratio": {"elemwise_1e7": 1.7, "logreg": 5.0, "mlp": 1.5, "softmax": 1.0},
    "cold_compile": {"elemwise": 1.4, "logreg": 4.7, "mlp": 12.8, "softmax": 6.2},
    "chain_10000": {"rewrite": 11.5, "cold_compile": 209.0},
    "add10": {"first_result_cold": 1.07, "first_result_warm": 0.64, "call": 5e-6, "numpy_call": 0.65e-6},
}


# -- running workers ------------------------------------------------------------------------------------------------------


def run_worker(args: list[str], env: dict[str, str], timeout: float) -> dict[str, Any]:
    """Run ``worker.py args`` and return its record (``status`` ``ok``, ``timeout`` or ``error``)."""
    command = [sys.executable, str(HERE / "worker.py"), *args]
    started = time.perf_counter()
    try:
        proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "timeout": timeout, "wall": time.perf_counter() - started}
    wall = time.perf_counter() - started
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("BENCH_JSON: "):
            record = json.loads(line[len("BENCH_JSON: ") :])
            record["wall"] = wall
            return record
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-15:]
    return {"status": "error", "returncode": proc.returncode, "error": "\n".join(tail), "wall": wall}


def cache_env(directory: Path, system: str) -> dict[str, str]:
    """The environment of a worker whose compile caches (symlab, Numba, PyTensor) all live in ``directory``.

    symlab keeps Numba's machine code of its graphs in its own signed entries (``SYMLAB_CACHE_DIR``), and
    turns the disk cache off for a function whose code ``NUMBA_CACHE_DIR`` would send elsewhere: a symlab
    worker gets no ``NUMBA_CACHE_DIR`` (not even the caller's), or every warm process would compile again.
    PyTensor's workers get one, so that Numba caches nothing of theirs outside ``directory``.
    """
    env = dict(os.environ)
    env["SYMLAB_CACHE_DIR"] = str(directory / "symlab")
    if system == "pytensor":
        env["NUMBA_CACHE_DIR"] = str(directory / "numba")
    else:
        env.pop("NUMBA_CACHE_DIR", None)
    flags = env.get("PYTENSOR_FLAGS", "")
    env["PYTENSOR_FLAGS"] = ",".join(f for f in (flags, f"base_compiledir={directory / 'pytensor'}") if f)
    return env


def plan(args: argparse.Namespace, systems: list[str]) -> list[tuple[int, str, str]]:
    """``(rep, workload, system)`` of every cold+warm pair, repetitions outermost (spreads slow drifts)."""
    jobs = []
    for rep in range(args.reps):
        for name in args.workloads:
            for system in systems:
                w = WORKLOADS[name]
                if system == "pytensor" and w.build_pytensor is None:  # PyTensor has no such graph (LeNet)
                    continue
                if system == "pytensor" and w.group == "e":
                    if w.params["nodes"] > args.pytensor_max_chain or rep >= args.pytensor_chain_reps:
                        continue
                jobs.append((rep, name, system))
    return jobs


def measure_all(args: argparse.Namespace, systems: list[str]) -> dict[str, Any]:
    """Every worker of the run: the imports, then the cold+warm pairs of :func:`plan`; their raw records."""
    importers = [s for s in systems if s != PLAIN]  # the plain Numba path imports symlab: timed once
    raw: dict[str, Any] = {"import": {s: [] for s in importers}, "workloads": {}}
    log = lambda text: print(text, file=sys.stderr, flush=True)  # noqa: E731
    for k in range(args.import_reps):
        for system in importers:
            record = run_worker(["add10", system, "import"], dict(os.environ), args.timeout)
            raw["import"][system].append(record)
            log(f"import {system} ({k + 1}/{args.import_reps}): {_fmt(record.get('import'))}")
    jobs = plan(args, systems)
    worker_opts = ["--blocks", str(args.blocks), "--block-seconds", str(args.block_seconds), "--mode", args.mode]
    for j, (rep, name, system) in enumerate(jobs):
        slot = raw["workloads"].setdefault(name, {}).setdefault(system, {"cold": [], "warm": []})
        directory = Path(tempfile.mkdtemp(prefix=f"symlab-bench-{name}-{system}-"))
        try:
            env = cache_env(directory, system)
            cold = run_worker([name, system, "cold", *worker_opts], env, args.timeout)
            if cold["status"] == "ok":
                warm = run_worker([name, system, "warm", *worker_opts], env, args.timeout)
            else:
                warm = {"status": "skipped", "reason": f"cold run: {cold['status']}"}
        finally:
            shutil.rmtree(directory, ignore_errors=True)
        slot["cold"].append(cold)
        slot["warm"].append(warm)
        steady = warm.get("steady", {})
        log(
            f"[{j + 1}/{len(jobs)}] rep {rep + 1} {name} {system}: "
            f"cold returned {_status(cold, 'returned')} ready {_status(cold, 'ready')}, "
            f"warm returned {_status(warm, 'returned')} ready {_status(warm, 'ready')}, "
            f"call {_fmt(steady.get('compiled'))} (NumPy {_fmt(steady.get('numpy'))})"
        )
    return raw


# -- summarizing ------------------------------------------------------------------------------------------------------------


def _median(values: list[float | None]) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _kinds(values: list[Any]) -> str | None:
    """The distinct values, joined (``"numpy"``, ``"numpy, machine code"`` if the processes differed); None if none."""
    seen = [v for v in dict.fromkeys(values) if v is not None]
    return ", ".join(map(str, seen)) or None


def _cache(records: list[dict[str, Any]]) -> str | None:
    """``hit`` or ``miss (<reason>)`` of symlab's disk cache (each kind once, if the processes differed)."""

    def kind(record: dict[str, Any]) -> str | None:
        if record.get("cache_hit") is None:
            return None
        if record["cache_hit"]:
            return "hit"
        reason = (record.get("cache_miss_reason") or "").split(":")[0].strip()  # "new key", "signature mismatch"...
        return f"miss ({reason})" if reason else "miss"

    return _kinds([kind(r) for r in records])


def _phase_figures(records: list[dict[str, Any]], phase: str) -> dict[str, Any]:
    """The medians (and kinds) of one phase's ok records, under ``<phase>_<figure>`` keys."""
    return {
        f"{phase}_returned": _median([r.get("returned") for r in records]),
        f"{phase}_ready": _median([r.get("ready") for r in records]),
        f"{phase}_first_result": _median([r["first_result"] for r in records]),
        f"{phase}_tier_first_call": _kinds([r.get("tier_first_call") for r in records]),
        f"{phase}_calls_before_ready": _median([r.get("calls_before_ready") for r in records]),
        f"{phase}_cache": _cache(records),
    }


def _error_lines(records: list[dict[str, Any]]) -> list[str]:
    """The last line of each failed worker's error output, once each."""
    lines = {(r.get("error") or "?").strip().splitlines()[-1:][0] if r.get("error") else "?" for r in records}
    return sorted(lines)


def summarize_system(phases: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The medians of one workload on one system, over its cold and warm processes."""
    cold = [r for r in phases["cold"] if r["status"] == "ok"]
    warm = [r for r in phases["warm"] if r["status"] == "ok"]
    both = cold + warm
    steady = [r["steady"] for r in warm if "steady" in r]
    problems = sorted({p for r in both for p in r["check"]["problems"]})
    every = phases["cold"] + phases["warm"]
    return {
        "backend": sorted({r["backend"] for r in both}),
        "nodes": both[0]["nodes"] if both else None,
        "build": _median([r["build"] for r in both]),
        "rewrite": _median([r.get("rewrite") for r in both]),
        **_phase_figures(cold, "cold"),
        **_phase_figures(warm, "warm"),
        "cache_miss_reasons": sorted({r["cache_miss_reason"] for r in both if r.get("cache_miss_reason")}),
        "compile_errors": sorted({r["compile_error"] for r in both if r.get("compile_error")}),
        "steady_tier": _kinds([s.get("tier") for s in steady]),
        "call": _median([s["compiled"] for s in steady]),
        "numpy_call": _median([s["numpy"] for s in steady]),
        "ratio_numpy": _median([s["ratio"] for s in steady]),
        "correct": None if not both else not problems,  # None: nothing ran to completion
        "problems": problems,
        "runs": {"cold": len(cold), "warm": len(warm)},
        "failures": sorted({r["status"] for r in every if r["status"] != "ok"}),
        "errors": _error_lines([r for r in every if r["status"] == "error"]),
    }


def summarize(raw: dict[str, Any]) -> dict[str, Any]:
    """The medians of every import, workload and system (the ``summary`` of the JSON)."""
    summary: dict[str, Any] = {"import": {}, "workloads": {}}
    for system, records in raw["import"].items():
        ok = [r for r in records if r["status"] == "ok"]
        summary["import"][system] = {
            "import": _median([r["import"] for r in ok]),
            "numba_imported": any(r["numba_imported"] for r in ok),
            "runs": len(ok),
        }
    for name, by_system in raw["workloads"].items():
        for system, phases in by_system.items():
            summary["workloads"].setdefault(name, {})[system] = summarize_system(phases)
    return summary


def _get(summary: dict, name: str, system: str, key: str) -> Any:
    return summary["workloads"].get(name, {}).get(system, {}).get(key)


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


# -- targets ---------------------------------------------------------------------------------------------------------------


@dataclass
class Target:
    """One target of the issue: ``value(system)`` is what it measures on a symlab system, None if not measured."""

    label: str
    value: Callable[[str], Any]
    limit: float | bool
    unit: str = "x"  # "x" a ratio, "s" seconds, "" a yes/no
    #: The workloads it is measured on: a wrong result or a timeout there fails it.
    workloads: tuple[str, ...] = ()
    #: It compares with PyTensor: not measured (rather than failed) when PyTensor did not run or failed.
    pytensor: bool = False


def target_list(summary: dict[str, Any]) -> list[Target]:
    """The targets of the issue that the run measured: latency ones on what the caller of ``function()`` waits
    (with the default, tiered compilation), steady-call ones on the machine code (steady calls run on it)."""
    names = list(summary["workloads"])
    group = {n: WORKLOADS[n].group for n in names}
    get = lambda n, key: lambda system: _get(summary, n, system, key)  # noqa: E731
    out: list[Target] = []
    for n in (n for n in names if group[n] in "abcde"):
        out.append(Target(f"steady call <= NumPy: {n}", get(n, "ratio_numpy"), 1.0, workloads=(n,)))
    for n in (n for n in names if group[n] == "a"):
        out.append(Target(f"steady call <= 0.6x NumPy: {n}", get(n, "ratio_numpy"), 0.6, workloads=(n,)))
    for n in (n for n in names if group[n] == "random" and n.startswith("normal")):  # issue 33
        out.append(Target(f"draws within 1.2x NumPy's own Generator: {n}", get(n, "ratio_numpy"), 1.2, workloads=(n,)))
    for n in (n for n in names if group[n] == "scan"):  # issue 34: loops against PyTensor's Numba scan and a NumPy loop
        call = lambda system, n=n: _ratio(_get(summary, n, system, "call"), _get(summary, n, "pytensor", "call"))
        out.append(Target(f"steady call <= PyTensor's: {n}", call, 1.0, "x", (n,), True))
        out.append(Target(f"a step <= 2x the NumPy loop's: {n}", get(n, "ratio_numpy"), 2.0, workloads=(n,)))
    for n in (n for n in names if group[n] in "abcd"):
        out.append(Target(f"function() returns, warm < 0.15 s: {n}", get(n, "warm_returned"), 0.15, "s", (n,)))
    for n in (n for n in names if group[n] in "abcd"):  # issue 8's "cold compile <= 1/3 PyTensor's", as waited
        value = lambda system, n=n: _ratio(_get(summary, n, system, "cold_returned"), _pytensor_cold(summary, n))
        out.append(
            Target(f"function() returns, cold <= 1/3 PyTensor's cold compile: {n}", value, 1 / 3, "x", (n,), True)
        )
    for n in names:  # n/a where PyTensor did not run (not installed, or a chain longer than --pytensor-max-chain)
        value = lambda system, n=n: _ratio(_get(summary, n, system, "cold_ready"), _pytensor_cold(summary, n))
        out.append(Target(f"machine code ready, cold <= PyTensor's cold compile: {n}", value, 1.0, "x", (n,), True))
    if "chain_10000" in names:
        out += _chain_targets(summary, "chain_2000" in names)
    if "add10" in names:
        for phase in ("cold", "warm"):
            label = f"first result of x + y, fresh process, {phase} < 0.25 s"
            out.append(Target(label, get("add10", f"{phase}_first_result"), 0.25, "s", ("add10",)))
        out.append(
            Target("call overhead of 10-element x + y <= 3x NumPy", get("add10", "ratio_numpy"), 3.0, "x", ("add10",))
        )
    if "symlab" in summary["import"]:  # the same package on both paths: shown once
        imported = summary["import"]["symlab"]
        only_default = lambda value: lambda system: value if system == DEFAULT else None  # noqa: E731
        out.append(Target("import symlab < 0.2 s", only_default(imported["import"]), 0.2, "s"))
        out.append(Target("import symlab does not import Numba", only_default(imported["numba_imported"]), False, ""))
    return out


def _pytensor_cold(summary: dict[str, Any], name: str) -> float | None:
    """PyTensor's cold compile (``function()`` and the first call, where its Numba code compiles)."""
    return _get(summary, name, "pytensor", "cold_ready")


def _chain_targets(summary: dict[str, Any], with_2000: bool) -> list[Target]:
    """The chains' targets: rewriting, and the machine code's cold compile (``ready``) and its growth."""
    get = lambda key: lambda system: _get(summary, "chain_10000", system, key)  # noqa: E731
    out = [
        Target("chain_10000 rewriting < 1 s", get("rewrite"), 1.0, "s", ("chain_10000",)),
        Target("chain_10000 machine code ready, cold < 10 s", get("cold_ready"), 10.0, "s", ("chain_10000",)),
    ]
    if with_2000:

        def growth(system: str) -> float | None:
            big, small = (_get(summary, c, system, "cold_ready") for c in ("chain_10000", "chain_2000"))
            nodes = _ratio(*(_get(summary, c, system, "nodes") for c in ("chain_10000", "chain_2000")))
            return _ratio(_ratio(big, small), nodes)  # 1.0: exactly linear in the number of nodes

        label = "machine code ready 2,000 -> 10,000 nodes at most linear (growth / node ratio)"
        out.append(Target(label, growth, 1.0, "x", ("chain_2000", "chain_10000")))
    return out


def target_status(summary: dict[str, Any], target: Target, value: Any) -> str:
    """PASS, FAIL, ``FAIL (wrong result)``, ``FAIL (timeout)``, ``FAIL (worker error)`` or ``n/a`` (not
    measured) on the default."""
    failures = lambda system: {f for n in target.workloads for f in _get(summary, n, system, "failures") or []}  # noqa: E731
    if value is None:
        for failure in ("timeout", "error"):  # symlab's own failure fails the target; PyTensor's leaves it n/a
            if failure in failures(DEFAULT):
                return f"FAIL ({'worker error' if failure == 'error' else failure})"
        if target.pytensor and failures("pytensor"):
            return f"n/a (PyTensor: {', '.join(sorted(failures('pytensor')))})"
        return "n/a"
    if any(_get(summary, n, DEFAULT, "correct") is False for n in target.workloads):
        return "FAIL (wrong result)"  # a fast wrong result passes nothing
    passed = value == target.limit if isinstance(target.limit, bool) else value <= target.limit
    return "PASS" if passed else "FAIL"


def targets(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The targets: ``{"target", "value", "limit", "unit", "status", "plain_numba"}``, measured on the default
    (``symlab``); ``plain_numba`` is the same figure on the plain Numba path, for comparison (not judged)."""
    rows = []
    for t in target_list(summary):
        value = t.value(DEFAULT)
        row = {"target": t.label, "value": value, "limit": t.limit, "unit": t.unit}
        row["status"] = target_status(summary, t, value)
        row["plain_numba"] = t.value(PLAIN)
        rows.append(row)
    return rows


# -- printing ------------------------------------------------------------------------------------------------------------------


def _fmt(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.1f} us"


def _x(ratio: float | None) -> str:
    return "-" if ratio is None else f"{ratio:.2f}x"


def _status(record: dict[str, Any], key: str) -> str:
    return _fmt(record.get(key)) if record.get("status") == "ok" else record.get("status", "?")


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(r[k])) for r in [header, *rows]) for k in range(len(header))]
    line = lambda r: "  ".join(str(c).rjust(w) if k else str(c).ljust(w) for k, (c, w) in enumerate(zip(r, widths)))  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths]), *map(line, rows)])


def _shown(value: Any, unit: str) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value)
    return _fmt(value) if unit == "s" else _x(value)


def _target_table(title: str, target_rows: list[dict[str, Any]]) -> list[str]:
    """The targets' table (with the plain Numba path's value beside each) and the counts line."""
    rows = []
    for t in target_rows:
        limit = str(t["limit"]) if t["unit"] == "" else _shown(t["limit"], t["unit"])
        rows.append(
            [t["target"], _shown(t["value"], t["unit"]), limit, t["status"], _shown(t["plain_numba"], t["unit"])]
        )
    passed = sum(t["status"] == "PASS" for t in target_rows)
    failed = sum(t["status"].startswith("FAIL") for t in target_rows)
    counts = f"{passed} pass, {failed} fail, {len(target_rows) - passed - failed} not measured"
    return [_table([title, "measured", "limit", "", "plain Numba"], rows), counts]


def _check(s: dict[str, Any]) -> str:
    failures = f" ({','.join(s['failures'])})" if s["failures"] else ""
    return {True: "ok", False: "MISMATCH", None: "-"}[s["correct"]] + failures


def import_table(summary: dict[str, Any]) -> str:
    rows = []
    for system, s in summary["import"].items():
        rows.append([f"import {system}", _fmt(s["import"]), "yes" if s["numba_imported"] else "no", str(s["runs"])])
    return _table(["fresh process", "time", "imports numba", "runs"], rows)


def main_table(summary: dict[str, Any]) -> str:
    """Per workload and system: the latency figures, cold and warm, and the steady call beside NumPy's."""
    rows = []
    for name, by_system in summary["workloads"].items():
        for k, (system, s) in enumerate(by_system.items()):
            rows.append(
                [
                    "" if k else name,
                    system,
                    s["nodes"] or "-",
                    _fmt(s["build"]),
                    _fmt(s["rewrite"]),
                    *(
                        _fmt(s[f"{phase}_{key}"])
                        for key in ("returned", "first_result", "ready")
                        for phase in ("cold", "warm")
                    ),
                    _fmt(s["call"]),
                    _fmt(s["numpy_call"]),
                    _x(s["ratio_numpy"]),
                    _check(s),
                ]
            )
    header = ["workload", "system", "nodes", "build", "rewrite", "returned cold", "returned warm"]
    header += [
        "1st result cold",
        "1st result warm",
        "ready cold",
        "ready warm",
        "call",
        "NumPy call",
        "call/NumPy",
        "check",
    ]
    return _table(header, rows)


def _count(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def tiers_table(summary: dict[str, Any]) -> str | None:
    """What served the default's calls: the first call's tier, the NumPy tier's calls, the disk cache."""
    rows = []
    for name, by_system in summary["workloads"].items():
        s = by_system.get(DEFAULT)
        if s is None:
            continue
        before = lambda phase, s=s: _count(s[f"{phase}_calls_before_ready"])
        rows.append(
            [
                name,
                s["cold_tier_first_call"] or "-",
                s["warm_tier_first_call"] or "-",
                before("cold"),
                before("warm"),
                s["cold_cache"] or "-",
                s["warm_cache"] or "-",
                s["steady_tier"] or "-",
            ]
        )
    if not rows:
        return None
    header = ["workload", "1st call cold", "1st call warm", "on NumPy cold", "on NumPy warm"]
    header += ["cache cold", "cache warm", "steady calls"]
    return (
        "symlab's tiers (the default): the tier of the first real call, the calls the NumPy tier served\n"
        "before the machine code was ready (probe, first and second call), the disk cache, the steady calls' tier\n\n"
        + _table(header, rows)
    )


def ratio_table(summary: dict[str, Any]) -> str:
    """The ratios side by side: steady calls against NumPy and PyTensor, and the waits against PyTensor's compile."""
    rows = []
    for name in summary["workloads"]:
        g = lambda system, key, name=name: _get(summary, name, system, key)  # noqa: E731
        rows.append(
            [
                name,
                _x(g(DEFAULT, "ratio_numpy")),
                _x(g(PLAIN, "ratio_numpy")),
                _x(g("pytensor", "ratio_numpy")),
                _x(_ratio(g(DEFAULT, "call"), g("pytensor", "call"))),
                _x(_ratio(g(DEFAULT, "cold_returned"), g("pytensor", "cold_ready"))),
                _x(_ratio(g(DEFAULT, "cold_ready"), g("pytensor", "cold_ready"))),
                _x(_ratio(g(DEFAULT, "warm_ready"), g("pytensor", "warm_ready"))),
                _x(_ratio(g(PLAIN, "cold_ready"), g("pytensor", "cold_ready"))),
                _x(_ratio(g(PLAIN, "warm_ready"), g("pytensor", "warm_ready"))),
            ]
        )
    header = ["workload", "symlab/NumPy", "numba/NumPy", "PyTensor/NumPy", "symlab/PyTensor"]
    header += ["returned cold s/P", "ready cold s/P", "ready warm s/P", "numba cold s/P", "numba warm s/P"]
    return (
        "ratios (below 1: symlab is faster): steady calls; then the default's waits (function() returned,\n"
        "machine code ready) and the plain Numba path's compile, each over PyTensor's compile in the same phase\n\n"
        + _table(header, rows)
    )


def problem_notes(summary: dict[str, Any]) -> list[str]:
    """Mismatches, failed and timed-out workers, and Numba failures (the NumPy tier then served every call)."""
    notes = []
    for name, by_system in summary["workloads"].items():
        for system, s in by_system.items():
            notes += [f"{name} {system}: wrong result: {p}" for p in s["problems"]]
            notes += [f"{name} {system}: worker failed: {e}" for e in s["errors"]]
            notes += [f"{name} {system}: a worker timed out" for f in s["failures"] if f == "timeout"]
            notes += [f"{name} {system}: Numba failed: {e[:200]}" for e in s["compile_errors"]]
    return notes


def report(summary: dict[str, Any], target_rows: list[dict[str, Any]]) -> str:
    """Every table of the run, then the targets and their counts."""
    parts = [import_table(summary), main_table(summary)]
    tiers = tiers_table(summary)
    if tiers is not None:
        parts.append(tiers)
    parts.append(ratio_table(summary))
    notes = problem_notes(summary)
    if notes:
        parts.append("problems:\n  " + "\n  ".join(notes))
    table, counts = _target_table("target (issue 8, with the default: tiered compilation)", target_rows)
    parts += [table, f"targets: {counts}"]
    return "\n\n".join(parts)


# -- metadata, main ------------------------------------------------------------------------------------------------------------


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def metadata(args: argparse.Namespace, systems: list[str]) -> dict[str, Any]:
    def git(*cmd: str) -> str | None:
        try:
            return subprocess.run(["git", *cmd], cwd=HERE, capture_output=True, text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return None

    return {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "host": platform.node(),
        "machine": platform.machine(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "versions": {d: _version(d) for d in ("numpy", "numba", "llvmlite", "scipy", "pytensor", "symlab")},
        "git_commit": git("rev-parse", "HEAD"),
        "git_dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
        "systems": systems,
        "args": vars(args),
    }


def output_path(results_dir: Path, meta: dict[str, Any]) -> Path:
    stem = f"{meta['date'][:10]}-{meta['host'] or 'host'}"
    path = results_dir / f"{stem}.json"
    k = 2
    while path.exists():
        path = results_dir / f"{stem}-{k}.json"
        k += 1
    return path


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: 1 repetition, few blocks, PyTensor on chains up to 2,000 nodes"
    )
    parser.add_argument("--reps", type=int, help="fresh cold+warm process pairs per figure (default 3; quick 1)")
    parser.add_argument("--import-reps", type=int, help="fresh processes timing the imports (default 7; quick 3)")
    parser.add_argument("--blocks", type=int, help="alternating steady-state blocks per process (default 9; quick 3)")
    parser.add_argument("--block-seconds", type=float, help="minimum length of a block (default 0.05; quick 0.01)")
    parser.add_argument(
        "--timeout", type=float, help="seconds per worker process, then 'timeout' (default 600; quick 120)"
    )
    parser.add_argument(
        "--workloads",
        help=f"comma-separated names or groups (a-e, random...; default all: {','.join(WORKLOADS)}; the contended "
        "run: all but add10 and chain_10000)",
    )
    parser.add_argument(
        "--systems",
        default=",".join(SYSTEMS),
        help="comma-separated: symlab (the tiered default), symlab-numba (the plain Numba path), pytensor "
        "(only if importable); default all",
    )
    parser.add_argument("--no-pytensor", action="store_true", help="symlab and NumPy only")
    parser.add_argument("--no-views", action="store_true", help="skip the views' benchmarks (bench_views.py)")
    parser.add_argument(
        "--no-quality", action="store_true", help="skip the rewrite quality comparison (rewrite_quality.py)"
    )
    parser.add_argument(
        "--no-browser", action="store_true", help="skip the views' benchmarks in Chromium (bench_browser.py)"
    )
    parser.add_argument(
        "--contended",
        action="store_true",
        help="only the contended run (issue 36): the steady calls idle, with another process busy on one core, "
        "and with it on 1 thread (bench_contended.py)",
    )
    parser.add_argument("--no-contended", action="store_true", help="skip the contended run (bench_contended.py)")
    parser.add_argument("--skip-pytensor-chain", action="store_true", help="no PyTensor on the chains (e)")
    parser.add_argument(
        "--pytensor-max-chain", type=int, help="longest chain (e) PyTensor compiles (default 10000; quick 2000)"
    )
    parser.add_argument(
        "--pytensor-chain-reps",
        type=int,
        default=1,
        help="repetitions of PyTensor on the chains (e), whose cold compile takes minutes (default 1)",
    )
    parser.add_argument("--mode", default="NUMBA", help="mode of both systems (default NUMBA)")
    parser.add_argument("--results-dir", type=Path, default=HERE / "results")
    args = parser.parse_args(argv)
    defaults = {
        "reps": (3, 1),
        "import_reps": (7, 3),
        "blocks": (9, 3),
        "block_seconds": (0.05, 0.01),
        "timeout": (600.0, 120.0),
        "pytensor_max_chain": (10_000, 2_000),
    }
    for key, (full, quick) in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, quick if args.quick else full)
    if args.skip_pytensor_chain:
        args.pytensor_max_chain = 0
    if args.contended and args.no_contended:
        parser.error("--contended runs only the contended run, --no-contended skips it: not both")
    given = args.workloads is not None
    names = []
    for item in filter(None, (s.strip() for s in (args.workloads or ",".join(WORKLOADS)).split(","))):
        matches = [n for n, w in WORKLOADS.items() if item in (n, w.group)]
        if not matches:
            parser.error(f"unknown workload {item!r}; the workloads are {list(WORKLOADS)} (or groups a-e)")
        names += [n for n in matches if n not in names]
    args.workloads = names
    args.contended_workloads = names if given else None  # None: bench_contended's own default
    unknown = [s for s in args.systems.split(",") if s and s not in SYSTEMS]
    if unknown:  # symlab-background is gone: symlab is the tiered default now
        parser.error(f"unknown system(s) {unknown}; the systems are {list(SYSTEMS)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    systems = [s for s in SYSTEMS if s in args.systems.split(",")]
    if "pytensor" in systems and (args.no_pytensor or importlib.util.find_spec("pytensor") is None):
        if not args.no_pytensor:
            print("pytensor is not importable: comparing with NumPy only (make bench installs it)", file=sys.stderr)
        systems.remove("pytensor")
    meta = metadata(args, systems)
    if args.contended:  # the contended run alone (the metadata, its table and its targets)
        return main_contended(args, meta)
    started = time.perf_counter()
    raw = measure_all(args, systems)
    meta["seconds"] = time.perf_counter() - started
    summary = summarize(raw)
    target_rows = targets(summary)
    backends = sorted(
        {
            b
            for by in summary["workloads"].values()
            for system in (DEFAULT, PLAIN)
            for b in by.get(system, {}).get("backend", [])
        }
    )
    header = (
        f"symlab benchmarks, {meta['date']} on {meta['host']} ({meta['cpus']} CPUs), mode {args.mode}, "
        f"{args.reps} rep(s){' (quick)' if args.quick else ''}; symlab backend: {', '.join(backends) or '-'}; "
        f"PyTensor {meta['versions']['pytensor'] if 'pytensor' in systems else 'not run'}; "
        f"{meta['seconds']:.0f} s"
    )
    print(header + "\n\n" + report(summary, target_rows))
    contended = None
    if not args.no_contended:
        import bench_contended

        contended = bench_contended.run_section(args, _log)
        print("\n" + bench_contended.report(contended))
    view_rows: list[dict[str, Any]] = []
    if not args.no_views:
        import bench_views

        view_rows = bench_views.measure(args.quick)
        print("\n" + bench_views.report(view_rows))
    quality_rows: list[dict[str, Any]] = []
    if not args.no_quality:
        import rewrite_quality

        quality_rows = rewrite_quality.measure(args.quick, pytensor="pytensor" in systems)
        print("\n" + rewrite_quality.report(quality_rows))
    browser_rows: list[dict[str, Any]] = []
    if not args.no_browser:
        import bench_browser

        try:
            browser_rows = bench_browser.measure(args.quick)
            print("\n" + bench_browser.report(browser_rows))
        except bench_browser.BrowserUnavailable as err:
            print(f"\nViews in the browser: skipped, {err}")
        except Exception as err:  # the other sections' results are still saved
            print(f"\nViews in the browser: FAILED to run: {type(err).__name__}: {err}")
            browser_rows = [{"name": "browser benchmarks", "status": "FAIL", "error": f"{type(err).__name__}: {err}"}]
    document = {
        "meta": meta,
        "summary": summary,
        "targets": target_rows,
        "contended": contended,
        "views": view_rows,
        "rewrite_quality": quality_rows,
        "browser": browser_rows,
        "issue_pytensor": ISSUE_PYTENSOR,
        "raw": raw,
    }
    save(args, meta, document)
    return 0


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def main_contended(args: argparse.Namespace, meta: dict[str, Any]) -> int:
    """``--contended``: only the contended run (bench_contended.py), with the metadata; saved like a full run."""
    import bench_contended

    section = bench_contended.run_section(args, _log)
    meta["seconds"] = section["seconds"]
    header = (
        f"symlab benchmarks, contended run only, {meta['date']} on {meta['host']} ({meta['cpus']} CPUs), "
        f"mode {args.mode}, {args.reps} rep(s), {args.blocks} blocks; symlab {meta['versions']['symlab']}, "
        f"NumPy {meta['versions']['numpy']}, Numba {meta['versions']['numba']}"
    )
    print(header + "\n\n" + bench_contended.report(section))
    save(args, meta, {"meta": meta, "contended": section})
    return 0


def save(args: argparse.Namespace, meta: dict[str, Any], document: dict[str, Any]) -> Path:
    """Write ``document`` as ``<results-dir>/<date>-<host>[-k].json`` and say where."""
    args.results_dir.mkdir(parents=True, exist_ok=True)
    path = output_path(args.results_dir, meta)
    meta["args"]["results_dir"] = str(args.results_dir)
    path.write_text(json.dumps(document, indent=1, default=str) + "\n")
    print(f"\nsaved {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}")
    return path


if __name__ == "__main__":
    sys.exit(main())
