"""The locks of cache entries, and closing the cache at interpreter exit.

Every read or write of an entry's files holds the entry's lock (:func:`entry_lock`): reentrant for a
thread, exclusive among the threads of this process and, through ``flock`` on the entry's folder, among
processes, so two processes compiling the same graph at once each see a whole, signed entry. At
interpreter exit the cache is closed (:func:`close`): the reads and writes under way finish, no other
starts (a later :func:`entry_lock` raises :class:`CacheClosed`). On Windows there is no ``flock``: the
lock is among this process's threads only.

>>> import tempfile
>>> from pathlib import Path
>>> folder = Path(tempfile.mkdtemp())
>>> with entry_lock(folder):
...     with entry_lock(folder):  # reentrant in a thread
...         print("held")
held
>>> is_closed()
False
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from symlab.compile.numba.cache_dir import CacheRefused

log = logging.getLogger("symlab.cache")

#: Seconds a process waits for another one to release an entry before it goes on without the lock.
LOCK_TIMEOUT = 600.0


class _EntryLock:
    """One entry's lock in this process: reentrant for a thread, exclusive among threads and (flock) processes."""

    def __init__(self) -> None:
        self.rlock = threading.RLock()
        self.depth = 0
        self.fd = -1


_LOCKS: dict[str, _EntryLock] = {}
_LOCKS_GUARD = threading.Lock()


def _flock(folder: Path) -> int:
    """An exclusive ``flock`` on the directory ``folder``: its descriptor, or -1 where locks do not work.

    Waits at most :data:`LOCK_TIMEOUT` seconds, then goes on unlocked (safe: a concurrent writer can only
    make the next verification fail, which is a miss).
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return -1
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return -1
    deadline = time.monotonic() + LOCK_TIMEOUT
    pause = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() > deadline:
                log.warning("symlab cache: %s stayed locked %.0f s; going on without its lock", folder, LOCK_TIMEOUT)
                os.close(fd)
                return -1
            time.sleep(pause)
            pause = min(pause * 2, 0.05)
        except OSError:  # a file system without flock
            os.close(fd)
            return -1


#: Threads of this process holding an entry's lock now, and whether the cache is closed (see :func:`close`).
_HOLDERS = threading.Condition()
_holding = 0
_closed = False


class CacheClosed(CacheRefused):
    """The interpreter is exiting (:func:`close` was called): no entry's files are read or written any more."""


@contextlib.contextmanager
def entry_lock(folder: Path) -> Iterator[None]:
    """Hold the lock of the entry ``folder`` (reentrant in a thread) while reading or writing its files.

    Raises :class:`CacheClosed` once :func:`close` was called (a lock already held stays held until its work is
    done).
    """
    global _holding
    with _LOCKS_GUARD:
        lock = _LOCKS.setdefault(str(folder), _EntryLock())
    with lock.rlock:
        if lock.depth == 0:
            fd = -1 if _closed else _flock(folder)
            with _HOLDERS:
                if _closed:
                    if fd >= 0:
                        os.close(fd)
                    raise CacheClosed(
                        f"symlab: the disk cache is closed (the interpreter is exiting): {folder} not used"
                    )
                _holding += 1
            lock.fd = fd
        lock.depth += 1
        try:
            yield
        finally:
            lock.depth -= 1
            if lock.depth == 0:
                if lock.fd >= 0:
                    os.close(lock.fd)  # releases the flock
                    lock.fd = -1
                with _HOLDERS:
                    _holding -= 1
                    _HOLDERS.notify_all()


def _reset_holders_in_child() -> None:
    """In a forked child: no thread of the child holds an entry's lock (the parent's threads are not copied)."""
    global _HOLDERS, _holding
    _HOLDERS = threading.Condition()
    _holding = 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_holders_in_child)


def close(timeout: float) -> bool:
    """Stop using the disk cache in this process (at interpreter exit): True once no thread reads or writes it.

    Every read or write of an entry's files holds its lock; from now on no lock is given (the caller gets
    :class:`CacheClosed`: a cache refused, so it compiles in memory and saves nothing). The reads and
    writes under way may finish: this waits at most ``timeout`` seconds for them (each is short: a load
    of machine code, or writing a few files). An entry's files are written atomically and signed last,
    so even a write cut short leaves no file a later process would take as valid.
    """
    global _closed
    with _HOLDERS:
        _closed = True
        return _HOLDERS.wait_for(lambda: _holding == 0, timeout)


def is_closed() -> bool:
    """Whether :func:`close` was called: no entry's files are read or written any more in this process."""
    return _closed


__all__ = ["LOCK_TIMEOUT", "CacheClosed", "close", "entry_lock", "is_closed"]
