"""The contended run of issue 36: the steady calls while another process keeps one core busy.

``run.py`` runs it after its main tables (``--no-contended`` skips it), or alone with ``--contended``
(``make bench BENCH_ARGS=--contended``). For each workload (``--workloads``; by default every workload
whose steady call the main run times, less :data:`LEFT_OUT`), in the plain Numba path's workers
(``symlab-numba``: the steady calls run the machine code in both systems, without the tiers' noise):

1. one ``cold`` worker fills a compile cache kept for the workload's repetitions;
2. per repetition (``--reps``), ``warm`` workers time the steady calls, alternating with the NumPy
   version in the same process (``--blocks``), under three conditions: **idle**; **contended**, the
   default threads (``SYMLAB_THREADS=auto``); **contended, 1 thread** (``SYMLAB_THREADS=1``). The two
   contended workers run (in alternating order) while a :class:`Hog` runs: ``python -c "while True:
   pass"`` in a session of its own, pinned to the last CPU this process may use, at nice 19, started
   before them and stopped right after.

The hog's own session is what makes it contend: the kernel's autogroup scheduling shares a core
between sessions first, so a niced process of the benchmark's own session would barely take any time
from it (a browser or another program runs in a session of its own, like this hog).

The report: per workload the medians over the repetitions (idle, contended, contended on 1 thread,
NumPy contended from the contended workers' NumPy column), the ratios contended / 1 thread and
contended / NumPy, the threads the calls used, the hog's CPU share; then the issue's targets as
PASS/FAIL lines. See ``benchmarks/README.md``, "The contended run".
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from run import _fmt, _median, _ratio, _table, _x, cache_env, run_worker  # noqa: E402
from workloads import WORKLOADS  # noqa: E402

#: The workers' system: the plain Numba path (the machine code serves every steady call in both systems).
SYSTEM = "symlab-numba"
#: The conditions, in the order they run in a repetition (the two contended ones alternate), and their
#: ``SYMLAB_THREADS``.
CONDITIONS = {"idle": "auto", "contended": "auto", "single": "1"}
#: Contended steady call at most this many times the contended single-threaded one (the issue's target).
SINGLE_LIMIT = 1.2
#: Idle, the elementwise workloads (group a) at most this many times NumPy (issue 8's target, kept by issue 36).
IDLE_ELEMWISE_LIMIT = 0.6
#: Cores' worth of other processes' CPU time above which an idle worker's machine was not idle (symlab's
#: ``"auto"`` gives up a thread above 0.3: ``symlab.compile.threads.BUSY_THRESHOLD``).
BUSY_IDLE = 0.3
#: Workloads the contended run leaves out unless ``--workloads`` names them, and why.
LEFT_OUT = {
    "add10": "a call of 10-element x + y: nothing parallel in it, and its fixed call cost is 2-3x NumPy's even "
    "idle (issue 8's target for it is 3x)",
    "chain_10000": "the register machine of chain_2000 again, five times longer: each warm worker spends about "
    "9 s building and rewriting the graph for the same finding",
}
#: Where the main run judges a workload's steady call against a limit other than NumPy's time, the contended
#: run keeps that limit: by group (a scan against a Python loop of NumPy calls: 2x; ``x + y``'s call: 3x) or
#: by name (the normal draws against NumPy's own ``Generator``: 1.2x).
NUMPY_LIMITS = {"scan": 2.0, "x+y": 3.0, "normal_1e6": 1.2}


def default_workloads() -> list[str]:
    """The workloads the contended run measures by default: all but :data:`LEFT_OUT`.

    >>> "softmax" in default_workloads() and "add10" not in default_workloads()
    True
    """
    return [n for n in WORKLOADS if n not in LEFT_OUT]


def numpy_limit(name: str) -> float:
    """The contended steady call's limit, in NumPy's (contended) time: 1.0 unless the main run allows more.

    >>> numpy_limit("softmax"), numpy_limit("cumsum_10000"), numpy_limit("normal_1e6"), numpy_limit("dropout_mlp")
    (1.0, 2.0, 1.2, 1.0)
    """
    return NUMPY_LIMITS.get(name, NUMPY_LIMITS.get(WORKLOADS[name].group, 1.0))


def allowed_cpus() -> list[int]:
    """The CPUs this process may run on."""
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # no affinity on this system (macOS): every CPU, and the hog runs unpinned
        return list(range(os.cpu_count() or 1))


def hog_cpu() -> int | None:
    """The CPU the hog runs on (the last one this process may use), or None with fewer than 2 CPUs."""
    allowed = allowed_cpus()
    return allowed[-1] if len(allowed) >= 2 else None


# -- the hog ------------------------------------------------------------------------------------------------------------

#: The hog's program: ``python -c HOG_CODE <parent pid> <cpu>``. It dies with the benchmark (Linux's parent-death
#: signal), pins itself to ``cpu`` (where the system can), lowers its priority to nice 19, and spins.
HOG_CODE = """import os, sys
parent, cpu = int(sys.argv[1]), int(sys.argv[2])
try:
    import ctypes
    ctypes.CDLL(None).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL: never outlive the benchmark
except (OSError, AttributeError):
    pass
if os.getppid() != parent:
    sys.exit(0)
if hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, {cpu})
os.nice(19)
while True: pass
"""


def _stat(pid: int) -> tuple[float, int] | None:
    """Process ``pid``'s CPU time (user + system, seconds) and nice value, from ``/proc/<pid>/stat``; None if
    unreadable (no ``/proc``, or the process is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rpartition(")")[2].split()  # from field 3 (state) on
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), int(fields[16])  # fields 14, 15, 19


class Hog:
    """A CPU-bound process in a session of its own (``setsid``), pinned to ``cpu``, at nice 19.

    :meth:`start` starts it and waits until its CPU time grows (``running``: True, False, or None where
    ``/proc`` cannot tell); :meth:`stop` kills its process group and measures its CPU ``share`` (cores'
    worth of CPU it used from start to stop: about 1.0 when it had its core to itself). Use :func:`hogging`,
    which stops it whatever happens.
    """

    def __init__(self, cpu: int) -> None:
        self.cpu = cpu
        self.proc: subprocess.Popen | None = None
        self.running: bool | None = None
        self.share: float | None = None
        self.seconds: float | None = None
        self._start: tuple[float, float | None] | None = None

    def start(self, settle: float = 3.0) -> None:
        # start_new_session: the child calls setsid() before it runs Python, as `setsid python ...` does
        self.proc = subprocess.Popen(
            [sys.executable, "-c", HOG_CODE, str(os.getpid()), str(self.cpu)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.perf_counter() + settle
        stat = _stat(self.proc.pid)
        while stat is not None and stat[1] != 19 and time.perf_counter() < deadline and self.proc.poll() is None:
            time.sleep(0.01)  # Python's start-up: the loop begins once the hog has reniced itself
            stat = _stat(self.proc.pid)
        first = None if stat is None else stat[0]
        self._start = (time.perf_counter(), first)
        if first is None:  # no /proc here (or the hog is gone already)
            self.running = None if self.proc.poll() is None else False
            return
        self.running = False
        while time.perf_counter() < deadline and self.proc.poll() is None:
            time.sleep(0.05)
            stat = _stat(self.proc.pid)
            if stat is not None and stat[1] == 19 and stat[0] - first >= 0.04:  # the loop's CPU time grows
                self.running = True
                return

    def stop(self) -> None:
        if self.proc is None:
            return
        if self._start is not None:
            started, first = self._start
            last = _stat(self.proc.pid)
            self.seconds = time.perf_counter() - started
            if first is not None and last is not None and self.seconds > 0:
                self.share = round((last[0] - first) / self.seconds, 3)
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # its own session and group: the group id is its pid
        except (ProcessLookupError, PermissionError):
            self.proc.kill()
        self.proc.wait(timeout=10)
        self.proc = None

    def record(self) -> dict[str, Any]:
        return {"cpu": self.cpu, "running": self.running, "share": self.share, "seconds": self.seconds}


@contextmanager
def hogging(cpu: int) -> Iterator[Hog]:
    """A running :class:`Hog` on ``cpu`` for the ``with`` block; killed on the way out, also on an exception,
    Ctrl-C or SIGTERM."""
    hog = Hog(cpu)

    def terminate(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, terminate)  # so that `finally` runs on a plain kill too
    try:
        hog.start()
        yield hog
    finally:
        hog.stop()
        signal.signal(signal.SIGTERM, previous)


# -- measuring ----------------------------------------------------------------------------------------------------------


def _env(base: dict[str, str], threads: str) -> dict[str, str]:
    return {**base, "SYMLAB_THREADS": threads}


def measure(args: argparse.Namespace, names: list[str], log: Callable[[str], None]) -> dict[str, Any]:
    """The workers of the contended run: per workload one cold worker, then ``args.reps`` repetitions of the
    three conditions; their raw records and the hog's (``{"cpu", "workloads": {name: {...}}}``)."""
    cpu = hog_cpu()
    raw: dict[str, Any] = {"cpu": cpu, "workloads": {}}
    opts = ["--blocks", str(args.blocks), "--block-seconds", str(args.block_seconds), "--mode", args.mode]
    for j, name in enumerate(names):
        slot: dict[str, Any] = {"cold": None, "hog": [], **{c: [] for c in CONDITIONS}}
        raw["workloads"][name] = slot
        directory = Path(tempfile.mkdtemp(prefix=f"symlab-bench-contended-{name}-"))
        try:
            base = cache_env(directory, SYSTEM)
            slot["cold"] = run_worker([name, SYSTEM, "cold", *opts], _env(base, "auto"), args.timeout)
            if slot["cold"]["status"] != "ok":
                log(f"contended [{j + 1}/{len(names)}] {name}: cold worker {slot['cold']['status']}, skipped")
                continue
            for rep in range(args.reps):
                slot["idle"].append(run_worker([name, SYSTEM, "warm", *opts], _env(base, "auto"), args.timeout))
                order = ["contended", "single"] if rep % 2 == 0 else ["single", "contended"]
                with hogging(cpu) as hog:
                    for condition in order:
                        env = _env(base, CONDITIONS[condition])
                        slot[condition].append(run_worker([name, SYSTEM, "warm", *opts], env, args.timeout))
                slot["hog"].append(hog.record())
                share = "?" if hog.share is None else f"{hog.share:.2f}"
                log(
                    f"contended [{j + 1}/{len(names)}] rep {rep + 1} {name}: idle {_last(slot, 'idle')}, "
                    f"contended {_last(slot, 'contended')}, 1 thread {_last(slot, 'single')}, "
                    f"NumPy {_last(slot, 'contended', 'numpy')} (hog CPU {share})"
                )
        finally:
            shutil.rmtree(directory, ignore_errors=True)
    return raw


def _last(slot: dict[str, Any], condition: str, key: str = "compiled") -> str:
    """The last worker's steady call of ``condition`` (or its NumPy call), or its status."""
    record = slot[condition][-1]
    return _fmt(record["steady"][key]) if "steady" in record else record.get("status", "?")


# -- summarizing --------------------------------------------------------------------------------------------------------


def _threads(steadies: list[dict[str, Any]]) -> dict[str, Any]:
    """``{"setting": "auto", "counts": {"1": 7, "2": 2}}``: the steady function's thread setting and the thread
    counts its calls used (blocks of each), over the repetitions (``setting`` None without records)."""
    settings = list(dict.fromkeys(str(s["threads"]) for s in steadies if "threads" in s))
    counts: dict[str, int] = {}
    for s in steadies:
        for count, blocks in s.get("thread_counts", {}).items():
            counts[count] = counts.get(count, 0) + blocks
    return {"setting": "/".join(settings) or None, "counts": counts}


def _counts(threads: dict[str, Any]) -> str:
    """``"1"``, or ``"1 (7), 2 (2)"`` (blocks of each) when the calls used different counts."""
    counts = threads["counts"]
    if len(counts) <= 1:
        return next(iter(counts), "-")
    return ", ".join(f"{c} ({n})" for c, n in sorted(counts.items(), key=lambda item: -item[1]))


def threads_shown(threads: dict[str, dict[str, Any]]) -> tuple[str, str]:
    """``("auto: 2 -> 1", "1: 1")``: idle -> contended (the default setting), and the 1-thread workers'.

    >>> threads_shown({"idle": {"setting": "auto", "counts": {"2": 9}},
    ...                "contended": {"setting": "auto", "counts": {"1": 8, "2": 1}},
    ...                "single": {"setting": "1", "counts": {"1": 9}}})
    ('auto: 2 -> 1 (8), 2 (1)', '1: 1')
    """
    idle, contended, single = threads["idle"], threads["contended"], threads["single"]
    if idle["setting"] == contended["setting"]:
        default = f"{idle['setting'] or '-'}: {_counts(idle)} -> {_counts(contended)}"
    else:
        default = f"{idle['setting'] or '-'}: {_counts(idle)} -> {contended['setting'] or '-'}: {_counts(contended)}"
    return default, f"{single['setting'] or '-'}: {_counts(single)}"


def summarize_workload(slot: dict[str, Any]) -> dict[str, Any]:
    """The medians of one workload's contended run (the ``summary`` of the JSON's ``contended`` part)."""
    records = [slot["cold"], *(r for c in CONDITIONS for r in slot[c])] if slot["cold"] else []
    ok = {c: [r for r in slot[c] if r.get("status") == "ok" and "steady" in r] for c in CONDITIONS}
    steady = {c: [r["steady"] for r in ok[c]] for c in CONDITIONS}
    call = {c: _median([s["compiled"] for s in steady[c]]) for c in CONDITIONS}
    problems = sorted({p for r in records if r.get("status") == "ok" for p in r["check"]["problems"]})
    shares = [h["share"] for h in slot["hog"]]
    running = [h["running"] for h in slot["hog"]]
    seen = lambda c: _median([s.get("threading", {}).get("other_processes_cores") for s in steady[c]])  # noqa: E731
    return {
        "idle": call["idle"],
        "contended": call["contended"],
        "single": call["single"],
        "numpy_idle": _median([s["numpy"] for s in steady["idle"]]),
        "numpy_contended": _median([s["numpy"] for s in steady["contended"]]),
        "idle_ratio_numpy": _median([s["ratio"] for s in steady["idle"]]),
        "ratio_single": _ratio(call["contended"], call["single"]),
        "ratio_numpy": _median([s["ratio"] for s in steady["contended"]]),
        "threads": {c: _threads(steady[c]) for c in CONDITIONS},
        "others_seen": {c: seen(c) for c in CONDITIONS},  # cores other processes used, as the workers saw
        "hog_share": _median(shares),
        "hog_running": None if not running else all(r is not False for r in running),
        "correct": None if not any(ok.values()) else not problems,
        "problems": problems,
        "runs": {c: len(ok[c]) for c in CONDITIONS},
        "failures": sorted({r["status"] for r in records if r.get("status") != "ok"}),
        "errors": sorted({(r.get("error") or "?").strip().splitlines()[-1] for r in records if r.get("error")}),
    }


def _status(s: dict[str, Any], value: float | None, limit: float, contended: bool) -> str:
    if s["correct"] is False:
        return "FAIL (wrong result)"  # a fast wrong result passes nothing
    if value is None:
        for failure, shown in (("timeout", "timeout"), ("error", "worker error")):
            if failure in s["failures"]:
                return f"FAIL ({shown})"
        return "n/a"
    if contended and s["hog_running"] is False:
        return "n/a (the hog did not run)"
    return "PASS" if value <= limit else "FAIL"


def targets(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The issue's targets: per workload, contended <= 1.2x 1 thread and <= NumPy contended; idle, (a) <= 0.6x
    NumPy. Each ``{"target", "value", "limit", "status"}``."""
    rows = []

    def add(label: str, s: dict[str, Any], value: float | None, limit: float, contended: bool = True) -> None:
        rows.append({"target": label, "value": value, "limit": limit, "status": _status(s, value, limit, contended)})

    for name, s in summary.items():
        add(f"contended <= {SINGLE_LIMIT:g}x contended 1 thread: {name}", s, s["ratio_single"], SINGLE_LIMIT)
        limit = numpy_limit(name)
        shown = "NumPy" if limit == 1.0 else f"{limit:g}x NumPy (as idle)"
        add(f"contended <= {shown} contended: {name}", s, s["ratio_numpy"], limit)
    for name, s in summary.items():
        if WORKLOADS[name].group == "a":
            add(f"idle <= {IDLE_ELEMWISE_LIMIT:g}x NumPy: {name}", s, s["idle_ratio_numpy"], IDLE_ELEMWISE_LIMIT, False)
    return rows


def run_section(args: argparse.Namespace, log: Callable[[str], None]) -> dict[str, Any]:
    """Measure and judge the contended run: ``{"cpu", "skipped", "workloads", "summary", "targets", "raw",
    "seconds"}`` (``skipped``: why nothing was measured, else None)."""
    names = args.contended_workloads or default_workloads()
    section: dict[str, Any] = {"cpu": hog_cpu(), "workloads": names, "reps": args.reps, "blocks": args.blocks}
    section.update(skipped=None, summary={}, targets=[], raw={}, seconds=0.0)
    if section["cpu"] is None:
        section["skipped"] = f"needs at least 2 CPUs (this process may use {len(allowed_cpus())})"
        return section
    started = time.perf_counter()
    section["raw"] = measure(args, names, log)
    section["seconds"] = time.perf_counter() - started
    section["summary"] = {n: summarize_workload(slot) for n, slot in section["raw"]["workloads"].items()}
    section["targets"] = targets(section["summary"])
    return section


# -- printing -----------------------------------------------------------------------------------------------------------


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def report(section: dict[str, Any]) -> str:
    """The contended run's table, its notes and its PASS/FAIL lines."""
    title = "Contended (issue 36): steady calls while another process keeps one core busy"
    if section["skipped"]:
        return f"{title}: skipped, {section['skipped']}"
    rows = []
    for name, s in section["summary"].items():
        default_threads, single_threads = threads_shown(s["threads"])
        others = "/".join(_share(s["others_seen"][c]) for c in CONDITIONS)
        rows.append(
            [
                name,
                _fmt(s["idle"]),
                _x(s["idle_ratio_numpy"]),
                _fmt(s["contended"]),
                _fmt(s["single"]),
                _fmt(s["numpy_contended"]),
                _x(s["ratio_single"]),
                _x(s["ratio_numpy"]),
                default_threads,
                single_threads,
                _share(s["hog_share"]),
                others,
                {True: "ok", False: "MISMATCH", None: "-"}[s["correct"]],
            ]
        )
    header = ["workload", "idle", "idle/NumPy", "contended", "contended 1 thread", "NumPy contended"]
    header += ["contended/1 thread", "contended/NumPy", "threads idle -> contended", "threads 1", "hog CPU"]
    header += ["others idle/cont./1", "check"]
    lines = [
        f"{title}: the hog on CPU {section['cpu']} (its own session, nice 19), {SYSTEM} workers, "
        f"medians of {section['reps']} rep(s), {section['seconds']:.0f} s",
        "",
        _table(header, rows),
    ]
    notes = [f"{n}: wrong result: {p}" for n, s in section["summary"].items() for p in s["problems"]]
    notes += [f"{n}: worker failed: {e}" for n, s in section["summary"].items() for e in s["errors"]]
    notes += [f"{n}: a worker timed out" for n, s in section["summary"].items() if "timeout" in s["failures"]]
    notes += [f"{n}: the hog did not run" for n, s in section["summary"].items() if s["hog_running"] is False]
    busy = {n: s["others_seen"]["idle"] for n, s in section["summary"].items()}
    notes += [
        f"{n}: the idle workers saw other processes use {v:.2f} cores: the machine was not idle"
        for n, v in busy.items()
        if v is not None and v > BUSY_IDLE
    ]
    if notes:
        lines += ["", "problems:\n  " + "\n  ".join(notes)]
    target_rows = [[t["target"], _x(t["value"]), _x(t["limit"]), t["status"]] for t in section["targets"]]
    passed = sum(t["status"] == "PASS" for t in section["targets"])
    failed = sum(t["status"].startswith("FAIL") for t in section["targets"])
    counts = f"{passed} pass, {failed} fail, {len(section['targets']) - passed - failed} not measured"
    lines += ["", _table(["target (issue 36)", "measured", "limit", ""], target_rows), f"contended targets: {counts}"]
    return "\n".join(lines)


if __name__ == "__main__":  # the same as `run.py --contended ...`
    import run

    sys.exit(run.main(["--contended", *sys.argv[1:]]))
