"""The guard on Numba's loader: a function of a cache entry loads and saves only verified, signed files.

Numba reads a function's cached machine code in its cache's ``_load_overload`` and writes it in
``_save_overload``; both *unpickle* the entry's index. :func:`guard_dispatcher` wraps them so that each
runs under the entry's lock after :func:`~symlab.compile.numba.cache_entry.verify_entry` (a mismatch
wipes the entry: a miss, never a load), and signs the entry after each save. :func:`load_without_refresh`
lets a guarded function load its machine code without Numba's full registry refresh (about 0.1 s).
Both lean on Numba's cache internals; a Numba without them keeps its own loading, or has its disk cache
turned off, with a :class:`~symlab.compile.numba.cache_dir.CacheSecurityWarning`.

>>> class NoCache:  # a dispatcher without a disk cache is returned as it is
...     _cache = None
>>> d = NoCache()
>>> load_without_refresh(d) is d
True
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path
from typing import Any

from symlab.compile.numba.cache_dir import CacheRefused, CacheSecurityWarning, private_subdir
from symlab.compile.numba.cache_entry import CacheEntry, reset_entry, sign_entry, verify_entry
from symlab.compile.numba.cache_lock import entry_lock

log = logging.getLogger("symlab.cache")


def load_without_refresh(dispatcher: Any) -> Any:
    """Let ``dispatcher`` load its cached machine code without Numba's full registry refresh; return it.

    Numba's ``Cache.load_overload`` first refreshes the target context: it
    imports and installs every typing and lowering registry Numba has (about
    0.1 s, half of a warm process's wait for its first result). Machine code
    loaded from the disk needs none of them, only Numba's runtime (NRT),
    which is initialized here. A miss still compiles as usual: Numba's
    compiler refreshes the context itself before it starts.

    The load goes through the cache's ``_load_overload`` looked up at each
    call, so the verification :func:`~symlab.compile.numba.cache.import_entry` installs there always runs.
    This leans on Numba's cache internals (``_load_overload``,
    ``_guard_against_spurious_io_errors``, ``rtsys``); a Numba without them
    keeps its own loading, which is slower but the same.
    """
    cache = getattr(dispatcher, "_cache", None)
    load = getattr(cache, "_load_overload", None)
    guard = getattr(cache, "_guard_against_spurious_io_errors", None)
    try:
        from numba.core.runtime import rtsys
    except ImportError:  # pragma: no cover - a Numba laid out otherwise
        return dispatcher
    if load is None or guard is None or not callable(getattr(rtsys, "initialize", None)):
        return dispatcher  # no disk cache (Numba's NullCache), or internals this does not know

    def load_overload(sig: Any, target_context: Any) -> Any:
        rtsys.initialize(target_context)
        with guard():
            return cache._load_overload(sig, target_context)

    cache.load_overload = load_overload
    return dispatcher


_WARNED_ELSEWHERE: set[str] = set()


def _disable_cache(dispatcher: Any, cache: Any, kind: str, why: str) -> None:
    """Turn off ``dispatcher``'s disk cache (it compiles in memory), warning ``why`` once per ``kind`` and process."""
    disable = getattr(cache, "disable", None)
    if callable(disable):
        disable()
    else:  # pragma: no cover - a cache without disable(): never loaded from
        dispatcher._cache = None
    if kind not in _WARNED_ELSEWHERE:
        _WARNED_ELSEWHERE.add(kind)
        warnings.warn(why, CacheSecurityWarning, stacklevel=3)


def guard_dispatcher(dispatcher: Any, entry: CacheEntry) -> None:
    """Make ``dispatcher`` (a function of ``entry``'s module) load and save only verified, signed cache files.

    Numba reads an entry's files in its cache's ``_load_overload`` (the index,
    then a data file) and ``_save_overload`` (the index again, before it
    adds an overload): both are wrapped to run under the entry's lock after
    :func:`verify_entry` (a mismatch wipes the entry: a miss, never a load),
    and a save is followed by :func:`sign_entry`, so an overload Numba adds
    later (another layout, on a first call) is signed too. A cache kept
    elsewhere than the entry's ``__pycache__``, or internals this does not
    know, turn the function's disk cache off.
    """
    from numba.core.caching import NullCache

    cache = getattr(dispatcher, "_cache", None)
    if cache is None or isinstance(cache, NullCache) or getattr(cache, "_symlab_guarded", False):
        return
    name = getattr(getattr(dispatcher, "py_func", None), "__qualname__", repr(dispatcher))
    load = getattr(cache, "_load_overload", None)
    save = getattr(cache, "_save_overload", None)
    if load is None or save is None:
        _disable_cache(
            dispatcher,
            cache,
            "internals",
            f"symlab: this Numba's cache ({type(cache).__name__}) has no _load_overload/"
            "_save_overload for symlab to verify; symlab's functions are compiled without the disk cache",
        )
        return
    where = Path(str(getattr(cache, "cache_path", "")))
    if where != entry.pycache:
        _disable_cache(
            dispatcher,
            cache,
            "elsewhere",
            (
                f"symlab: Numba would keep the machine code of {name} in {where} (NUMBA_CACHE_DIR?), expected the "
                f"signed entry folder {entry.pycache}; symlab's functions whose code would go elsewhere are "
                "compiled in memory, without the disk cache (this warning is given once)"
            ),
        )
        return

    def verified(action: str) -> bool:
        """True if the entry's files are signed; else wipe them (a miss). The caller holds the lock."""
        problem = verify_entry(entry)
        if problem is None:
            return True
        log.debug("symlab cache: entry %s before the %s of %s: %s; rebuilding", entry.key, action, name, problem)
        reset_entry(entry)
        return False

    def guarded_load(sig: Any, target_context: Any) -> Any:
        try:
            with entry_lock(entry.folder):
                if not verified("load"):  # changed since prepare_entry: a miss (Numba compiles), never a load
                    return None
                return load(sig, target_context)
        except (CacheRefused, OSError) as err:  # the cache failed under us: a miss, never a crash
            log.debug("symlab cache: entry %s: no load of %s (%s: %s)", entry.key, name, type(err).__name__, err)
            return None

    def guarded_save(sig: Any, data: Any) -> Any:
        try:
            with entry_lock(entry.folder):
                verified("save")  # Numba's save unpickles the index first: it must be signed, or gone
                private_subdir(entry.pycache)
                try:
                    return save(sig, data)
                finally:
                    sign_entry(entry)
        except (CacheRefused, OSError) as err:  # the code runs; only the disk copy is lost
            log.debug("symlab cache: entry %s: %s not saved (%s: %s)", entry.key, name, type(err).__name__, err)
            return None

    cache._load_overload = guarded_load
    cache._save_overload = guarded_save
    cache._symlab_guarded = True


__all__ = ["guard_dispatcher", "load_without_refresh"]
