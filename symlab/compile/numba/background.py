"""The background compiles under way in this process: registered, waited for, and made safe at fork and exit.

A :class:`~symlab.compile.numba.runner.NumbaRunner` made with ``background=True`` compiles on a daemon
worker thread; while it does, it is registered here (:func:`register`). :func:`wait_all` waits for every
compile under way; a ``fork`` waits for them (at most :data:`FORK_WAIT_SECONDS`), and a child forked while
one still runs keeps that function on the NumPy tier; at interpreter exit they are abandoned safely
(:func:`_at_exit`: the functions answer on the NumPy tier, the disk cache is closed, LLVM is held).

>>> is_exiting(), FORK_WAIT_SECONDS
(False, 60.0)
>>> wait_all(timeout=-1)
Traceback (most recent call last):
...
ValueError: wait_all: timeout must be None or a number of seconds >= 0, received -1
"""

from __future__ import annotations

import atexit
import logging  # noqa: F401 - imported before the fork hook below is registered: see the comment there
import os
import threading
from time import perf_counter
from typing import Protocol


class BackgroundCompile(Protocol):
    """What this module asks of a compile under way (a :class:`~symlab.compile.numba.runner.NumbaRunner`)."""

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the compile is over (at most ``timeout`` seconds); whether it is."""
        ...

    def abandon_in_child(self) -> None:
        """In a child forked while it compiled: no thread will finish it; the NumPy tier serves."""
        ...

    def abandon_at_exit(self) -> None:
        """The interpreter exits while it compiles: make it ready now, on the NumPy tier."""
        ...


#: Runners compiling on a worker thread now; a fork waits for them (see :func:`_before_fork`), the interpreter's
#: exit abandons them (see :func:`_at_exit`), :func:`wait_all` waits for them.
_compiling: set[BackgroundCompile] = set()
_compiling_lock = threading.Lock()
#: How long a fork waits for the compiles under way before it goes on without them.
FORK_WAIT_SECONDS = 60.0
#: At exit: how long the reads and writes of cache entries under way may take to finish (each is short).
EXIT_CACHE_WAIT_SECONDS = 2.0
#: At exit: how long the LLVM call a worker is making may take to return (see :func:`_at_exit`).
EXIT_LLVM_WAIT_SECONDS = 60.0
#: Set when the interpreter exits: no background compile starts or goes on from then.
_exiting = False
#: Set when a worker thread first goes on to Numba (so it may be inside LLVM when the interpreter exits).
_numba_started = False


def may_start_numba() -> bool:
    """On a worker thread, before it first uses Numba: False if the interpreter is exiting (the compile stops)."""
    global _numba_started
    with _compiling_lock:
        if _exiting:
            return False
        _numba_started = True
        return True


def _before_fork() -> None:
    """Wait for the compiles under way (their worker threads do not exist in a forked child)."""
    if threading.current_thread().name == "symlab-numba-compile":
        return  # a fork from a compile thread itself (Numba does not fork): it would wait for itself
    deadline = perf_counter() + FORK_WAIT_SECONDS
    with _compiling_lock:
        pending = list(_compiling)
    for runner in pending:
        runner.wait(max(deadline - perf_counter(), 0.0))


def _after_fork_in_child() -> None:
    """In the child: every compile still under way in the parent stays on the NumPy tier here."""
    global _compiling_lock
    _compiling_lock = threading.Lock()
    for runner in list(_compiling):
        runner.abandon_in_child()
    _compiling.clear()


# Fork hooks run "before" in the reverse order of their registration: ours is registered after logging's (imported
# above), so it runs first, and a compile thread that logs (Numba's import does) can finish while a fork waits for
# it; logging's hook, run after ours, holds logging's lock during the fork itself.
if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)


def wait_all(timeout: float | None = None) -> bool:
    """Wait until every background compile under way has finished (at most ``timeout`` seconds); True once all have.

    A process exits without waiting for them (see :func:`_at_exit`): call this first to have the
    machine code of every compiled function written to the disk cache, for the next process to load. A
    compile started while this waits is waited for too.

    >>> import symlab
    >>> import symlab.tensor as st
    >>> previous, symlab.config.background_compile = symlab.config.background_compile, True  # the default
    >>> x = st.dvector("x")
    >>> f = symlab.function([x], st.exp(x).sum() * 2.5)
    >>> float(f([0.0, 0.0]))  # computed now (by the NumPy tier if the machine code is not ready yet)
    5.0
    >>> wait_all()
    True
    >>> f.tier
    'machine code'
    >>> symlab.config.background_compile = previous
    """
    if timeout is not None and (not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout < 0):
        raise ValueError(f"wait_all: timeout must be None or a number of seconds >= 0, received {timeout!r}")
    deadline = None if timeout is None else perf_counter() + timeout
    while True:
        with _compiling_lock:
            pending = list(_compiling)
        if not pending:
            return True
        for runner in pending:
            if not runner.wait(None if deadline is None else max(deadline - perf_counter(), 0.0)):
                return False


def _hold_llvm(timeout: float) -> bool:
    """Take llvmlite's lock and keep it: no other thread enters LLVM from now on. True if taken.

    Waits for the LLVM call under way to return (llvmlite makes one call at a time, under this lock).
    The lock is reentrant: this thread (the one finalizing the interpreter) can still use LLVM.
    """
    try:
        from llvmlite.binding import ffi  # the worker that set _numba_started imports it if it has not yet

        lock = ffi.lib._lock._lock
    except (ImportError, AttributeError):  # pragma: no cover - an llvmlite laid out otherwise
        return False
    return bool(lock.acquire(timeout=timeout))


def _at_exit() -> None:
    """At interpreter exit (an ``atexit`` hook): abandon the background compiles under way, safely.

    Nobody will call the functions they compile, so the process does not wait for them (it used to wait,
    10-15 s for a few graphs, at the end of every script and test run). Their worker threads are daemon
    threads, which the interpreter does not join; what stays is making their end safe:

    * each such function is made ready on the NumPy tier (code run by a later exit hook still computes
      right; ``compile_info.error`` is a :class:`~symlab.compile.numba.runner.CompileAbandoned`), and no new compile starts;
    * the disk cache is closed (:func:`~symlab.compile.numba.cache_lock.close`): the reads and writes of entries
      under way may finish (a load that is nearly done), none starts. Files are written atomically and
      signed last: an entry whose compile was cut short is a miss for the next process, never a load;
    * llvmlite's lock is taken and kept: a worker in LLVM returns from its call, then blocks at its next
      one until the process ends. A thread still running LLVM's code while the process runs LLVM's static
      destructors (after the interpreter's end) crashes it (seen: segmentation faults, LLVM assertions).
      A worker in Python code stops when the interpreter ends; one that had not gone on to Numba never does.

    Registered when this module is imported, before Numba registers its own hooks: it runs after them, and
    after the program's hooks registered since (``atexit`` runs the last registered first).
    """
    global _exiting
    with _compiling_lock:
        _exiting = True
        pending = list(_compiling)
        numba_started = _numba_started
    if not pending:
        return
    for runner in pending:
        runner.abandon_at_exit()
    from symlab.compile.numba import cache_lock  # a worker past may_start_numba may import it, and write, later

    cache_lock.close(EXIT_CACHE_WAIT_SECONDS)
    if numba_started:
        _hold_llvm(EXIT_LLVM_WAIT_SECONDS)


atexit.register(_at_exit)


def register(runner: BackgroundCompile) -> bool:
    """Count ``runner`` among the compiles under way; False (not counted) if the interpreter is exiting."""
    with _compiling_lock:
        if _exiting:
            return False
        _compiling.add(runner)
        return True


def unregister(runner: BackgroundCompile) -> None:
    """``runner``'s compile is over (or never started)."""
    with _compiling_lock:
        _compiling.discard(runner)


def is_exiting() -> bool:
    """Whether the interpreter is exiting (:func:`_at_exit` ran): no background compile starts from now on."""
    return _exiting


__all__ = [
    "EXIT_CACHE_WAIT_SECONDS",
    "EXIT_LLVM_WAIT_SECONDS",
    "FORK_WAIT_SECONDS",
    "BackgroundCompile",
    "is_exiting",
    "may_start_numba",
    "register",
    "unregister",
    "wait_all",
]
