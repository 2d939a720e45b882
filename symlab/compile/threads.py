"""How many threads a compiled function's parallel work uses, so that it stays fast on a busy machine.

Three parts of a compiled function can run on several threads: Numba's parallel kernels (a large
elementwise graph with expensive operations, a softmax over many rows), the register machine of very
long elementwise chains, and the products that call NumPy's BLAS (OpenBLAS keeps a pool of threads of
its own). A parallel loop splits its work into equal shares and waits for the slowest: when another
process holds one of the cores, the thread that shares that core finishes last, and the call waits for
the other process's time slice. On two cores with one busy, a softmax took 8 ms on two threads and
1.1 ms on one.

So symlab does two things:

* the idle threads of Numba's OpenMP layer sleep instead of spinning (``OMP_WAIT_POLICY=PASSIVE``, set
  when symlab's Numba backend loads unless the environment already says otherwise): a spinning worker
  uses up its core's share, so the next parallel call waits for the other process;
* ``threads="auto"`` (the default) uses every core while the machine is otherwise idle and one thread
  fewer per core that other processes keep busy. :class:`CoreWatch` finds that out from ``/proc/stat``:
  the CPU time of all processes minus this process's own, read at most every
  :data:`WATCH_SECONDS` (about 40 us a read; a check in between costs a fraction of a microsecond).

``symlab.config.threads`` sets the count for every function (``"auto"`` or a number from 1 to
:func:`max_threads`; ``SYMLAB_THREADS`` in the environment), ``symlab.function(..., threads=n)`` for one.
The count is applied around each call, and only for a function that has parallel work (a function
without any pays nothing): to Numba (``numba.set_num_threads``, for the calling thread), to the register
machine (:func:`current_threads`, for the calling thread) and to OpenBLAS
(``openblas_set_num_threads_local``, which in the builds NumPy ships sets one count for the whole process:
calls that overlap on several threads hand it back in order, and the count from before the first comes
back when the last ends).

Numba's kernels give the same bits on any number of threads (each thread computes whole rows or
chunks; no reduction is split). OpenBLAS splits a product's sums between its threads, so a product's
last bits can change with the count: by at most about one rounding of the sum of the absolute products
(``|one - two| <= 4 eps (|A| @ |B|)`` is what the tests check; measured, 0.92 eps in float64). A function
that uses BLAS gives results within that tolerance, not bit for bit, when its thread count changes, for
example when ``"auto"`` follows the machine's load. Fix the count (``threads=1``, or any number) to make
such results bit for bit reproducible.

>>> plan = ThreadPlan(setting="auto", numba=True)
>>> plan.describe()
'threads=auto (Numba kernels)'
>>> 1 <= plan.count() <= max_threads()
True
"""

from __future__ import annotations

import ctypes
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from symlab.config import config, cpus_allowed, max_threads

#: The setting that follows the machine's load.
AUTO = "auto"
#: Seconds between two reads of ``/proc/stat`` (a check in between reuses the last answer).
WATCH_SECONDS = 0.2
#: Cores' worth of CPU time other processes must use before ``"auto"`` gives up a thread for them.
BUSY_THRESHOLD = 0.3


class CoreWatch:
    """How many cores other processes keep busy, from the kernel's CPU counters (``/proc/stat``).

    :meth:`others` is the CPU time every process used on this process's CPUs, minus this process's own
    (all its threads, spinning ones included), over the wall time since the previous read, in cores:
    0.0 on an idle machine, about 1.0 while another process runs flat out. It reads the counters at most
    every ``interval`` seconds and answers from the last read in between. Where ``/proc/stat`` does not
    exist (macOS, Windows) it always answers 0.0.

    ``stat_path``, ``clock`` and ``own_seconds`` can be replaced, for tests:

    >>> import tempfile, pathlib
    >>> stat = pathlib.Path(tempfile.mkdtemp()) / "stat"
    >>> _ = stat.write_text("cpu  100 0 100 800 0 0 0 0 0 0\\ncpu0 100 0 100 800 0 0 0 0 0 0\\n")
    >>> now = [0.0]
    >>> watch = CoreWatch(str(stat), clock=lambda: now[0], own_seconds=lambda: 0.0, cpus=[0], ticks=100)
    >>> watch.others()  # the first read has nothing to compare with
    0.0
    >>> _ = stat.write_text("cpu  150 0 150 800 0 0 0 0 0 0\\ncpu0 150 0 150 800 0 0 0 0 0 0\\n")
    >>> now[0] = 1.0
    >>> watch.others()  # 100 ticks of 1/100 s in one second: one core busy
    1.0
    """

    def __init__(
        self,
        stat_path: str = "/proc/stat",
        clock: Callable[[], float] = time.monotonic,
        own_seconds: Callable[[], float] | None = None,
        cpus: list[int] | None = None,
        ticks: int | None = None,
        interval: float = WATCH_SECONDS,
    ) -> None:
        self.stat_path = stat_path
        self.clock = clock
        self.own_seconds = own_seconds or _own_cpu_seconds
        self.cpus = set(cpus) if cpus is not None else _cpu_set()
        self.ticks = ticks or _clock_ticks()
        self.interval = interval
        #: (time, busy ticks of the CPUs, own CPU seconds) at the last read, and the answer it gave.
        self._last: tuple[float, int, float] | None = None
        self._others = 0.0
        self.available = os.path.exists(stat_path)

    def others(self) -> float:
        """Cores other processes used since the previous read (at most every ``interval`` seconds)."""
        if not self.available:
            return 0.0
        now = self.clock()
        last = self._last
        if last is not None and now - last[0] < self.interval:
            return self._others
        busy = self._busy_ticks()
        own = self.own_seconds()
        if busy is None:
            self.available = False
            return 0.0
        if last is not None and now > last[0]:
            used = (busy - last[1]) / self.ticks - (own - last[2])
            self._others = max(0.0, round(used / (now - last[0]), 3))
        self._last = (now, busy, own)  # one assignment: threads reading at once see a whole state
        return self._others

    def _busy_ticks(self) -> int | None:
        """The busy ticks (not idle, not waiting for input or output) of this process's CPUs, or None."""
        try:
            with open(self.stat_path) as stat:
                lines = stat.read().splitlines()
        except OSError:
            return None
        total = 0
        for line in lines:
            name, _, rest = line.partition(" ")
            if not name.startswith("cpu") or name == "cpu" or not name[3:].isdigit():
                continue
            if int(name[3:]) not in self.cpus:
                continue
            fields = [int(v) for v in rest.split()]
            # user nice system idle iowait irq softirq steal ...: busy = all but idle and iowait
            total += sum(fields[:8]) - fields[3] - fields[4]
        return total


def _own_cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system


def _cpu_set() -> set[int]:
    try:
        return set(os.sched_getaffinity(0))
    except AttributeError:
        return set(range(os.cpu_count() or 1))


def _clock_ticks() -> int:
    try:
        return int(os.sysconf("SC_CLK_TCK"))
    except (AttributeError, ValueError, OSError):
        return 100


#: The process's watch (one for every function and thread).
WATCH = CoreWatch()
#: :func:`max_threads` when symlab loaded (Numba sizes its pool once, from the same numbers).
_MAX_THREADS = max_threads()


def auto_threads(watch: CoreWatch | None = None) -> int:
    """The threads ``"auto"`` uses now: every core, less one per core other processes keep busy.

    >>> 1 <= auto_threads() <= max_threads()
    True
    """
    top = _MAX_THREADS
    others = (watch or WATCH).others()
    if others <= BUSY_THRESHOLD:
        return top
    busy = max(1, round(others))
    return max(1, min(top, cpus_allowed() - busy))


# -- applying a count around a call -------------------------------------------------------------------------

_local = threading.local()


def current_threads() -> int:
    """The threads the parallel work of the call running on this thread may use (:func:`max_threads` outside one).

    The register machine reads it to split its blocks.
    """
    return getattr(_local, "count", None) or _MAX_THREADS



def _openblas_setter() -> Callable[[int], int] | None:
    """OpenBLAS's ``openblas_set_num_threads_local`` in NumPy's BLAS, or None.

    Despite its name it sets the count of the whole process in OpenBLAS's pthreads builds (NumPy's): it
    returns the count before and sets the global one (see :func:`_hold_blas`).
    """
    from symlab.compile.numba.numpy_blas_library import LIBRARY

    if LIBRARY is None:
        return None
    try:
        setter = ctypes.CDLL(LIBRARY.path).openblas_set_num_threads_local
    except (OSError, AttributeError):
        return None
    setter.argtypes = [ctypes.c_int]
    setter.restype = ctypes.c_int
    return setter


_BLAS_SETTER: Any = "unknown"


def _blas_setter() -> Callable[[int], int] | None:
    global _BLAS_SETTER
    if _BLAS_SETTER == "unknown":
        _BLAS_SETTER = _openblas_setter()
    return _BLAS_SETTER


@dataclass(frozen=True)
class ThreadPlan:
    """What a compiled function's call does about threads.

    ``setting``: ``"auto"``, a count, or None to follow ``symlab.config.threads`` at each call.
    ``numba``: the call runs Numba's parallel kernels; ``machine``: it runs the register machine (which
    splits its blocks among threads of its own); ``blas``: it calls BLAS. A plan with none of them runs
    its calls as they are.

    >>> plan = ThreadPlan(setting=1, numba=False, blas=True)
    >>> plan.count(), plan.describe()
    (1, 'threads=1 (BLAS)')
    >>> plan.call(lambda x: x + current_threads(), 10)  # the call runs with the count applied
    11
    """

    setting: int | str | None
    numba: bool = False
    blas: bool = False
    machine: bool = False

    @property
    def parallel(self) -> bool:
        """Whether the call has work that can run on several threads."""
        return self.numba or self.blas or self.machine

    def resolved_setting(self) -> int | str:
        """``"auto"`` or a count: the function's own setting, else ``symlab.config.threads``."""
        return self.setting if self.setting is not None else config.threads

    def count(self) -> int:
        """The threads a call made now uses (1 for a function with nothing parallel)."""
        if not self.parallel:
            return 1
        setting = self.resolved_setting()
        return auto_threads() if setting == AUTO else int(setting)

    def describe(self) -> str:
        """``threads=auto (Numba kernels, BLAS)``, ``threads=1 (nothing parallel)``...: for ``repr``."""
        uses = (("Numba kernels", self.numba), ("register machine", self.machine), ("BLAS", self.blas))
        parts = [name for name, used in uses if used]
        if not parts:
            return "threads=1 (nothing parallel)"
        return f"threads={self.resolved_setting()} ({', '.join(parts)})"

    def call(self, run: Callable[..., Any], *args: Any) -> Any:
        """``run(*args)`` with this plan's thread count applied to Numba, OpenBLAS and the register machine.

        ``"auto"`` on an idle machine changes nothing (no call into Numba or OpenBLAS); a count is set
        for the call on the calling thread only (OpenBLAS's for the whole process: see the module's
        docstring) and restored afterwards, also when the call raises.
        """
        if not self.parallel:
            return run(*args)
        return self.run_on(self.count(), run, *args)

    def run_on(self, n: int, run: Callable[..., Any], *args: Any) -> Any:
        """``run(*args)`` on ``n`` threads, a count :meth:`count` gave (a profile records the same count)."""
        if not self.parallel or (n == current_threads() and self.resolved_setting() == AUTO):
            return run(*args)
        return _run_with(n, self.numba, self.blas, run, args)


def _run_with(n: int, numba_threads: bool, blas: bool, run: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    previous = getattr(_local, "count", None)
    numba_before = blas_token = None
    if numba_threads:
        import numba

        numba_before = numba.get_num_threads()
        numba.set_num_threads(n)
    setter = _blas_setter() if blas else None
    if setter is not None:
        blas_token = _hold_blas(setter, n)
    _local.count = n
    try:
        return run(*args)
    finally:
        _local.count = previous
        if numba_before is not None:
            numba.set_num_threads(numba_before)
        if setter is not None and blas_token is not None:
            _release_blas(setter, blas_token)


#: OpenBLAS's count is one for the whole process: the calls that hold a count now, on every thread, oldest
#: first (a token and the count each), and the count from before the first of them. A call that ends sets
#: the count of the newest call still holding one, or, the last, the count from before: restoring each
#: call's own "before" would leave the count of whichever overlapping call ended last.
_blas_lock = threading.Lock()
_blas_holders: list[tuple[object, int]] = []
_blas_outside = 1


def _hold_blas(setter: Callable[[int], int], n: int) -> object:
    """Set OpenBLAS's count to ``n`` for a call; the token :func:`_release_blas` takes when it ends."""
    global _blas_outside
    token = object()
    with _blas_lock:
        before = setter(n)
        if not _blas_holders:
            _blas_outside = max(1, before)
        _blas_holders.append((token, n))
    return token


def _release_blas(setter: Callable[[int], int], token: object) -> None:
    with _blas_lock:
        _blas_holders[:] = [held for held in _blas_holders if held[0] is not token]
        setter(_blas_holders[-1][1] if _blas_holders else _blas_outside)


# -- the OpenMP wait policy ------------------------------------------------------------------------------------

#: What :func:`prefer_passive_waiting` found or did (``threading_info()`` reports it).
WAIT_POLICY_NOTE = "not yet decided (symlab's Numba backend is not loaded)"


def prefer_passive_waiting() -> str:
    """Make OpenMP's idle threads sleep instead of spinning (``OMP_WAIT_POLICY=PASSIVE``), unless already decided.

    The GNU OpenMP runtime reads the variable once, when it loads, which Numba does at its first parallel
    call: symlab's Numba backend calls this when it loads. A value the environment already has is kept,
    and a runtime loaded before cannot change any more: the note returned says which happened.
    """
    global WAIT_POLICY_NOTE
    given = os.environ.get("OMP_WAIT_POLICY")
    if given is not None:
        WAIT_POLICY_NOTE = f"OMP_WAIT_POLICY={given} (from the environment)"
    elif _openmp_loaded():
        WAIT_POLICY_NOTE = "left as it was: an OpenMP runtime was loaded before symlab's Numba backend"
    else:
        os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
        WAIT_POLICY_NOTE = "OMP_WAIT_POLICY=PASSIVE (set by symlab: idle threads sleep)"
    return WAIT_POLICY_NOTE


def _openmp_loaded() -> bool:
    try:
        with open("/proc/self/maps") as maps:
            return any("libgomp" in line or "libomp" in line or "libiomp" in line for line in maps)
    except OSError:
        return False


def threading_info() -> dict[str, Any]:
    """The process's threading facts: the most threads, the current ``"auto"`` count and what it saw,
    the OpenMP wait policy, whether OpenBLAS's count can be set, and Numba's threading layer once chosen.

    >>> info = threading_info()
    >>> sorted(info)
    ['auto_threads', 'blas_threads_settable', 'config_threads', 'max_threads', 'numba_layer', 'other_processes_cores', 'wait_policy']
    """
    import sys

    layer = None
    numba = sys.modules.get("numba")
    if numba is not None:
        try:
            layer = numba.threading_layer()
        except ValueError:  # no parallel call yet: the layer is chosen at the first
            layer = None
    return {
        "max_threads": max_threads(),
        "config_threads": config.threads,
        "auto_threads": auto_threads(),
        "other_processes_cores": WATCH.others(),
        "wait_policy": WAIT_POLICY_NOTE,
        "blas_threads_settable": _blas_setter() is not None,
        "numba_layer": layer,
    }


__all__ = [
    "AUTO",
    "BUSY_THRESHOLD",
    "WATCH",
    "WATCH_SECONDS",
    "CoreWatch",
    "ThreadPlan",
    "auto_threads",
    "current_threads",
    "max_threads",
    "prefer_passive_waiting",
    "threading_info",
]
