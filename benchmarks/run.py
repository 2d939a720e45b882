"""The benchmarks of issue 8: symlab against hand-written NumPy and PyTensor's NUMBA mode.

Run ``make bench`` (or ``.venv/bin/python benchmarks/run.py [--quick] ...``). Every figure is a
median over fresh processes (``benchmarks/worker.py``), each with its own compile-cache directory:
a ``cold`` process starts from an empty cache, a ``warm`` one (same directory) from the cache the
cold one filled. Steady-state calls are timed in the warm process, alternating with the NumPy
version. Prints the tables and the targets of the issue, and saves everything as JSON under
``benchmarks/results/``. See ``benchmarks/README.md`` for how to read the output.
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
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from workloads import WORKLOADS  # noqa: E402

#: ``symlab-background`` is symlab with ``config.background_compile`` (opt-in): measured for its first results.
SYSTEMS = ("symlab", "symlab-background", "pytensor")

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


def cache_env(directory: Path) -> dict[str, str]:
    """The environment of a worker whose compile caches (symlab, Numba, PyTensor) all live in ``directory``."""
    env = dict(os.environ)
    env["SYMLAB_CACHE_DIR"] = str(directory / "symlab")
    env["NUMBA_CACHE_DIR"] = str(directory / "numba")
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
                if system == "symlab-background" and w.group == "e":
                    continue  # the chains' steady state and compile are symlab's: nothing new to see
                if system == "pytensor" and w.group == "e":
                    if w.params["nodes"] > args.pytensor_max_chain or rep >= args.pytensor_chain_reps:
                        continue
                jobs.append((rep, name, system))
    return jobs


def measure_all(args: argparse.Namespace, systems: list[str]) -> dict[str, Any]:
    importers = [s for s in systems if s != "symlab-background"]  # it imports symlab, already timed
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
            env = cache_env(directory)
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
            f"[{j + 1}/{len(jobs)}] rep {rep + 1} {name} {system}: cold {_status(cold, 'compile_total')}, "
            f"warm {_status(warm, 'compile_total')}, call {_fmt(steady.get('compiled'))} "
            f"(NumPy {_fmt(steady.get('numpy'))})"
        )
    return raw


# -- summarizing ------------------------------------------------------------------------------------------------------------


def _median(values: list[float | None]) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summarize(raw: dict[str, Any]) -> dict[str, Any]:
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
            cold = [r for r in phases["cold"] if r["status"] == "ok"]
            warm = [r for r in phases["warm"] if r["status"] == "ok"]
            both = cold + warm
            steady = [r["steady"] for r in warm if "steady" in r]
            problems = sorted({p for r in both for p in r["check"]["problems"]})
            summary["workloads"].setdefault(name, {})[system] = {
                "backend": sorted({r["backend"] for r in both}),
                "nodes": both[0]["nodes"] if both else None,
                "build": _median([r["build"] for r in both]),
                "rewrite": _median([r.get("rewrite") for r in both]),
                "cold_compile": _median([r["compile_total"] for r in cold]),
                "warm_compile": _median([r["compile_total"] for r in warm]),
                "cold_first_result": _median([r["first_result"] for r in cold]),
                "warm_first_result": _median([r["first_result"] for r in warm]),
                "cold_returned": _median([r.get("returned") for r in cold]),
                "warm_returned": _median([r.get("returned") for r in warm]),
                "calls_before_ready": _median([r.get("calls_before_ready") for r in both]),
                "call": _median([s["compiled"] for s in steady]),
                "numpy_call": _median([s["numpy"] for s in steady]),
                "ratio_numpy": _median([s["ratio"] for s in steady]),
                "correct": None if not both else not problems,  # None: nothing ran to completion
                "problems": problems,
                "runs": {"cold": len(cold), "warm": len(warm)},
                "failures": sorted({r["status"] for r in phases["cold"] + phases["warm"] if r["status"] != "ok"}),
                "errors": sorted(
                    {
                        (r.get("error") or "").strip().splitlines()[-1:][0] if r.get("error") else "?"
                        for r in phases["cold"] + phases["warm"]
                        if r["status"] == "error"
                    }
                ),
            }
    return summary


def _get(summary: dict, name: str, system: str, key: str) -> Any:
    return summary["workloads"].get(name, {}).get(system, {}).get(key)


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def background_targets(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The latency limits of the issue, measured with background compilation (opt-in; not the issue's targets).

    With it, ``function(...)`` returns before Numba is done and the first calls run on the NumPy
    backend: these rows show what a user then waits, beside the issue's targets, which keep
    measuring the time until the machine code runs.
    """
    out: list[dict[str, Any]] = []
    system = "symlab-background"

    def row(label: str, value: float | None, limit: float, workload: str) -> None:
        correct = _get(summary, workload, system, "correct")
        status = "n/a" if value is None else ("PASS" if value <= limit else "FAIL")
        if value is not None and correct is False:
            status = "FAIL (wrong result)"
        out.append({"target": label, "value": value, "limit": limit, "unit": "s", "status": status})

    for n in summary["workloads"]:
        if WORKLOADS[n].group in "abcd" and system in summary["workloads"][n]:
            row(f"function() + probe call, warm < 0.15 s: {n}", _get(summary, n, system, "warm_returned"), 0.15, n)
    if system in summary["workloads"].get("add10", {}):
        for phase, limit in (("cold", 0.5), ("warm", 0.25)):
            value = _get(summary, "add10", system, f"{phase}_first_result")
            row(f"first result of x + y, fresh process, {phase} < {limit} s", value, limit, "add10")
    return out


def targets(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The targets of the issue: ``{"target", "value", "limit", "status"}`` with status PASS, FAIL or n/a."""
    out: list[dict[str, Any]] = []

    def check(
        label: str, value: float | None, limit: float, unit: str = "x", correct: bool | None = True, workload: str = ""
    ) -> None:
        timed_out = "timeout" in (_get(summary, workload, "symlab", "failures") or [])
        if value is None:
            status = "FAIL (timeout)" if timed_out else "n/a"
        else:
            status = "PASS" if value <= limit else "FAIL"
            if correct is False:  # a fast wrong result passes nothing
                status = "FAIL (wrong result)"
        out.append({"target": label, "value": value, "limit": limit, "unit": unit, "status": status})

    names = list(summary["workloads"])
    abcde = [n for n in names if WORKLOADS[n].group in "abcde"]
    abcd = [n for n in names if WORKLOADS[n].group in "abcd"]
    for n in abcde:
        ok = _get(summary, n, "symlab", "correct")
        check(f"steady call <= NumPy: {n}", _get(summary, n, "symlab", "ratio_numpy"), 1.0, correct=ok, workload=n)
    for n in names:
        if WORKLOADS[n].group == "a":
            ok = _get(summary, n, "symlab", "correct")
            check(
                f"steady call <= 0.6x NumPy: {n}",
                _get(summary, n, "symlab", "ratio_numpy"),
                0.6,
                correct=ok,
                workload=n,
            )
    for n in abcd:
        ratio = _ratio(_get(summary, n, "symlab", "cold_compile"), _get(summary, n, "pytensor", "cold_compile"))
        check(f"cold compile <= 1/3 PyTensor's: {n}", ratio, 1 / 3)
    for n in abcd:
        check(f"warm compile < 0.15 s: {n}", _get(summary, n, "symlab", "warm_compile"), 0.15, "s", workload=n)
    if "chain_10000" in names:
        check(
            "chain_10000 rewriting < 1 s",
            _get(summary, "chain_10000", "symlab", "rewrite"),
            1.0,
            "s",
            workload="chain_10000",
        )
        check(
            "chain_10000 cold compile < 10 s",
            _get(summary, "chain_10000", "symlab", "cold_compile"),
            10.0,
            "s",
            workload="chain_10000",
        )
        if "chain_2000" in names:
            big, small = (_get(summary, c, "symlab", "cold_compile") for c in ("chain_10000", "chain_2000"))
            nodes = _ratio(
                _get(summary, "chain_10000", "symlab", "nodes"), _get(summary, "chain_2000", "symlab", "nodes")
            )
            growth = _ratio(_ratio(big, small), nodes)  # 1.0: exactly linear in the number of nodes
            check("compile time 2,000 -> 10,000 nodes at most linear (growth / node ratio)", growth, 1.0)
    if "add10" in names:
        check(
            "first result of x + y, fresh process, cold < 0.5 s",
            _get(summary, "add10", "symlab", "cold_first_result"),
            0.5,
            "s",
        )
        check(
            "first result of x + y, fresh process, warm < 0.25 s",
            _get(summary, "add10", "symlab", "warm_first_result"),
            0.25,
            "s",
        )
        check("call overhead of 10-element x + y <= 3x NumPy", _get(summary, "add10", "symlab", "ratio_numpy"), 3.0)
    if "symlab" in summary["import"]:
        check("import symlab < 0.2 s", summary["import"]["symlab"]["import"], 0.2, "s")
        imported = summary["import"]["symlab"]["numba_imported"]
        out.append(
            {
                "target": "import symlab does not import Numba",
                "value": imported,
                "limit": False,
                "unit": "",
                "status": "FAIL" if imported else "PASS",
            }
        )
    return out


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


def _target_table(title: str, target_rows: list[dict[str, Any]]) -> list[str]:
    rows = []
    for t in target_rows:
        v = t["value"]
        shown = str(v) if isinstance(v, bool) else (_fmt(v) if t["unit"] == "s" else _x(v))
        limit = _fmt(t["limit"]) if t["unit"] == "s" else (str(t["limit"]) if t["unit"] == "" else _x(t["limit"]))
        rows.append([t["target"], shown, limit, t["status"]])
    passed = sum(t["status"] == "PASS" for t in target_rows)
    failed = sum(t["status"].startswith("FAIL") for t in target_rows)
    counts = f"{passed} pass, {failed} fail, {len(target_rows) - passed - failed} not measured"
    return [_table([title, "measured", "limit", ""], rows), counts]


def report(summary: dict[str, Any], target_rows: list[dict[str, Any]], background_rows: list[dict[str, Any]]) -> str:
    parts = []
    rows = []
    for system, s in summary["import"].items():
        rows.append([f"import {system}", _fmt(s["import"]), "yes" if s["numba_imported"] else "no", str(s["runs"])])
    parts.append(_table(["fresh process", "time", "imports numba", "runs"], rows))

    rows = []
    for name, by_system in summary["workloads"].items():
        for system, s in by_system.items():
            rows.append(
                [
                    name if system == "symlab" or "symlab" not in by_system else "",
                    system,
                    s["nodes"] or "-",
                    _fmt(s["build"]),
                    _fmt(s["rewrite"]),
                    _fmt(s["cold_compile"]),
                    _fmt(s["warm_compile"]),
                    _fmt(s["cold_first_result"]),
                    _fmt(s["warm_first_result"]),
                    _fmt(s["call"]),
                    _fmt(s["numpy_call"]),
                    _x(s["ratio_numpy"]),
                    {True: "ok", False: "MISMATCH", None: "-"}[s["correct"]]
                    + (f" ({','.join(s['failures'])})" if s["failures"] else ""),
                ]
            )
    parts.append(
        _table(
            [
                "workload",
                "system",
                "nodes",
                "build",
                "rewrite",
                "cold compile",
                "warm compile",
                "1st result cold",
                "1st result warm",
                "call",
                "NumPy call",
                "call/NumPy",
                "check",
            ],
            rows,
        )
    )

    rows = []
    for name in summary["workloads"]:
        g = lambda system, key, name=name: _get(summary, name, system, key)  # noqa: E731
        rows.append(
            [
                name,
                _x(g("symlab", "ratio_numpy")),
                _x(g("pytensor", "ratio_numpy")),
                _x(_ratio(g("symlab", "call"), g("pytensor", "call"))),
                _x(_ratio(g("symlab", "cold_compile"), g("pytensor", "cold_compile"))),
                _x(_ratio(g("symlab", "warm_compile"), g("pytensor", "warm_compile"))),
            ]
        )
    parts.append(
        _table(
            ["workload", "symlab/NumPy", "PyTensor/NumPy", "symlab/PyTensor", "cold compile s/P", "warm compile s/P"],
            rows,
        )
    )

    notes = []
    for name, by_system in summary["workloads"].items():
        for system, s in by_system.items():
            notes += [f"{name} {system}: wrong result: {p}" for p in s["problems"]]
            notes += [f"{name} {system}: worker failed: {e}" for e in s["errors"]]
            notes += [f"{name} {system}: a worker timed out" for f in s["failures"] if f == "timeout"]
    if notes:
        parts.append("problems:\n  " + "\n  ".join(notes))

    table, counts = _target_table("target (issue 8)", target_rows)
    parts += [table, f"targets: {counts}"]
    if background_rows:
        rows = []
        for name, by_system in summary["workloads"].items():
            s = by_system.get("symlab-background")
            if s is not None:
                rows.append(
                    [
                        name,
                        _fmt(s["cold_returned"]),
                        _fmt(s["warm_returned"]),
                        _fmt(s["cold_first_result"]),
                        _fmt(s["warm_first_result"]),
                        _fmt(s["cold_compile"]),
                        _fmt(s["warm_compile"]),
                        "-" if s["calls_before_ready"] is None else f"{s['calls_before_ready']:g}",
                    ]
                )
        parts.append(
            "background compilation (config.background_compile, opt-in): function() returns before Numba is done,\n"
            "calls run on the NumPy backend until the machine code is ready ('code ready': the compile columns above)\n\n"
            + _table(
                [
                    "workload",
                    "returned cold",
                    "returned warm",
                    "1st result cold",
                    "1st result warm",
                    "code ready cold",
                    "code ready warm",
                    "calls before",
                ],
                rows,
            )
        )
        table, counts = _target_table("the issue's latency limits, with background compilation", background_rows)
        parts += [table, f"with background compilation (not counted above): {counts}"]
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
        default=",".join(WORKLOADS),
        help=f"comma-separated names or groups a-e (default all: {','.join(WORKLOADS)})",
    )
    parser.add_argument(
        "--systems", default=",".join(SYSTEMS), help="symlab,symlab-background,pytensor (PyTensor only if importable)"
    )
    parser.add_argument("--no-pytensor", action="store_true", help="symlab and NumPy only")
    parser.add_argument("--no-views", action="store_true", help="skip the views' benchmarks (bench_views.py)")
    parser.add_argument(
        "--no-quality", action="store_true", help="skip the rewrite quality comparison (rewrite_quality.py)"
    )
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
    names = []
    for item in filter(None, (s.strip() for s in args.workloads.split(","))):
        matches = [n for n, w in WORKLOADS.items() if item in (n, w.group)]
        if not matches:
            parser.error(f"unknown workload {item!r}; the workloads are {list(WORKLOADS)} (or groups a-e)")
        names += [n for n in matches if n not in names]
    args.workloads = names
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    systems = [s for s in args.systems.split(",") if s in SYSTEMS]
    if "pytensor" in systems and (args.no_pytensor or importlib.util.find_spec("pytensor") is None):
        if not args.no_pytensor:
            print("pytensor is not importable: comparing with NumPy only (make bench installs it)", file=sys.stderr)
        systems.remove("pytensor")
    meta = metadata(args, systems)
    started = time.perf_counter()
    raw = measure_all(args, systems)
    meta["seconds"] = time.perf_counter() - started
    summary = summarize(raw)
    target_rows = targets(summary)
    background_rows = background_targets(summary)
    backends = sorted({b for by in summary["workloads"].values() for b in by.get("symlab", {}).get("backend", [])})
    header = (
        f"symlab benchmarks, {meta['date']} on {meta['host']} ({meta['cpus']} CPUs), mode {args.mode}, "
        f"{args.reps} rep(s){' (quick)' if args.quick else ''}; symlab backend: {', '.join(backends) or '-'}; "
        f"PyTensor {meta['versions']['pytensor'] if 'pytensor' in systems else 'not run'}; "
        f"{meta['seconds']:.0f} s"
    )
    print(header + "\n\n" + report(summary, target_rows, background_rows))
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
    args.results_dir.mkdir(parents=True, exist_ok=True)
    path = output_path(args.results_dir, meta)
    meta["args"]["results_dir"] = str(args.results_dir)
    document = {
        "meta": meta,
        "summary": summary,
        "targets": target_rows,
        "background_targets": background_rows,
        "views": view_rows,
        "rewrite_quality": quality_rows,
        "issue_pytensor": ISSUE_PYTENSOR,
        "raw": raw,
    }
    path.write_text(json.dumps(document, indent=1, default=str) + "\n")
    print(f"\nsaved {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
