"""The disk cache of generated graph modules and of Numba's machine code for them.

A generated module (a graph's, a kernel's or the register machine's; see
:mod:`symlab.compile.numba.linker`) is written to
``<dir>/<key>/graph_<key>.py`` and imported from that path, so
Numba's own ``cache=True`` stores the compiled code in the ``__pycache__``
folder beside it. ``<dir>`` is ``~/.cache/symlab`` unless ``SYMLAB_CACHE_DIR``
says otherwise; ``<key>`` is a stable hash of the generated source, of the
versions of Numba, NumPy, Python and symlab (with a hash of the symlab modules
the generated code calls at run time), the CPU name and the BLAS library
kernels call (:mod:`~symlab.compile.numba.numpy_blas`), so a new process
compiling the same graph finds the same entry, and a process of another
version finds another one.

Every load checks the entry first: a module file that does not hold exactly
the expected source, or a Numba index or data file that fails its signature
(see *Security*), is a miss with its reason (``CacheEntry.miss_reason``):
the entry's files are removed and rebuilt, never trusted. Files are written
atomically (a temporary file, then ``os.replace``), so a reader never sees
half a file, and every read or write of an entry's files holds the entry's
lock (``flock`` on its folder), so two processes compiling the same graph
at once each see a whole, signed entry. In a process, compile threads
import the same modules: a module is run under a lock of its name and
enters ``sys.modules`` only whole (see :func:`import_entry`). At
interpreter exit the cache is closed (:func:`close`): the reads and writes
under way finish, no other starts.

The cache's parts, each in a module of its own (this module holds the
entry points, :func:`prepare_entry` and :func:`import_entry`, with the miss
reasons, and names the public names of the others):

* :mod:`~symlab.compile.numba.environment`: the environment string and the key (:func:`cache_key`);
* :mod:`~symlab.compile.numba.cache_dir`: the cache directory, private directories, atomic writes;
* :mod:`~symlab.compile.numba.cache_secret`: the user's secret that signs entries (:func:`secret_key`);
* :mod:`~symlab.compile.numba.cache_lock`: each entry's lock (:func:`entry_lock`), and :func:`close`;
* :mod:`~symlab.compile.numba.cache_entry`: an entry's files, signed (:func:`sign_entry`), checked
  (:func:`verify_entry`) and reset;
* :mod:`~symlab.compile.numba.loader_guard`: the guard that keeps Numba's loader to signed files
  (:func:`guard_dispatcher`, :func:`load_without_refresh`).

Security
--------
*Threat.* The cache holds code symlab runs: the generated modules, and
Numba's index (``.nbi``) and machine-code (``.nbc``) files, which Numba
*unpickles*: whoever can put a file in an entry can run code in the next
process that compiles the same graph. symlab therefore loads nothing from
the cache that the current user's symlab did not write:

* *Private directories.* symlab creates the cache directory (and the parents
  it creates), each entry and its ``__pycache__`` with mode ``0o700``, and
  before use refuses one that group or others can write to, or that another
  user owns (:class:`CacheSecurityWarning` names the directory, what was
  expected and what was found). A refused cache is not used at all: the
  graph is compiled in memory (``cache=False``) and the miss reason says why.
* *Signed entries.* After symlab writes an entry's module, and after each
  time Numba saves machine code into it (also an overload added later, on a
  first call with another layout), symlab records in
  ``<key>/symlab-signature.json`` an HMAC-SHA256 of every file of the entry
  (the ``.py``, every ``.nbi`` and ``.nbc``), over the entry's key, the
  file's name and its bytes, and an HMAC of the whole list with the
  environment. Before anything of an entry is imported or reaches Numba's
  loader (and again before each load or save Numba makes later), every file
  is checked against it: a file unsigned, changed, added or missing, or a
  list not signed with the user's key, is a miss whose reason starts with
  :data:`SIGNATURE_MISMATCH` (or :data:`CORRUPTED` when the changed file is
  not even a well-formed pickle, checked without unpickling it, or
  :data:`OTHER_ENVIRONMENT` for an entry of other versions): the entry's
  compiled files are removed and rebuilt, never loaded.
* *The key.* The HMAC key is a per-user secret of 32 random bytes (64 hex
  digits) kept *outside* the cache, in ``$SYMLAB_SECRET_FILE`` if set, else
  ``$XDG_CONFIG_HOME/symlab/cache_secret`` (``~/.config/symlab/cache_secret``),
  as Jupyter keeps the key that signs notebooks. It is created on first use
  with mode ``0o600`` (atomically: two processes creating it at once end up
  with one key), and refused (the disk cache is then not used) if it is not
  owned by the user, is readable or writable by group or others, is not 64
  or more hex digits, or lies inside the cache directory.

So someone able to write the cache directory but not read the user's secret
cannot forge an entry: a copied, restored or planted file is a miss. Out of
scope: anyone who can read the secret or act as the user (the same user,
root); the parents of the cache directory (not checked: one that others can
write to lets them swap the cache directory, whose owner is then wrong, or
whose files then fail their signatures); and Numba's own caches of functions
outside symlab's entries (a dispatcher whose cache Numba would keep
elsewhere, as with ``NUMBA_CACHE_DIR``, has its disk cache turned off, with
a warning). On Windows the owner and mode checks and the locks are skipped;
the signatures still apply.

>>> key = cache_key("def graph_fn():\\n    return ()\\n")
>>> len(key), key == cache_key("def graph_fn():\\n    return ()\\n")
(24, True)
>>> key == cache_key("def graph_fn():\\n    return (1,)\\n")
False
"""

from __future__ import annotations

import linecache
import logging
import os
import re
import sys
import threading
import warnings
from pathlib import Path
from types import ModuleType

from symlab.compile.numba.cache_dir import (
    CacheRefused,
    CacheSecurityWarning,
    cache_dir,
    make_private_dirs,
    private_subdir,
    require_private_dir,
    write_atomic,
)
from symlab.compile.numba.cache_entry import (
    CORRUPTED,
    OTHER_ENVIRONMENT,
    SIGNATURE_FILE,
    SIGNATURE_MISMATCH,
    CacheEntry,
    check_numba_files,
    reset_entry,
    sign_entry,
    verify_entry,
)
from symlab.compile.numba.cache_lock import CacheClosed, close, entry_lock, is_closed
from symlab.compile.numba.cache_secret import secret_key, secret_path
from symlab.compile.numba.environment import cache_key
from symlab.compile.numba.loader_guard import guard_dispatcher, load_without_refresh

log = logging.getLogger("symlab.cache")

#: Miss reasons (``CacheEntry.miss_reason``); those of a file that fails its signature
#: (:data:`SIGNATURE_MISMATCH`, :data:`CORRUPTED`, :data:`OTHER_ENVIRONMENT`) are
#: :mod:`~symlab.compile.numba.cache_entry`'s.
NEW_KEY = "new key: this graph was never compiled with this cache directory"
INDEX_MISSING = "numba cache index missing"
STALE = "numba cache index stale: Numba recompiled"
#: The disk cache cannot be used safely (a directory or the secret refused): compiled in memory.
REFUSED = "disk cache refused"

#: The cache was closed (the interpreter is exiting: see :func:`close`): compiled in memory (a refusal, no warning).
CLOSED = "the disk cache is closed: the interpreter is exiting"


def _refusal(root: Path, folder: Path) -> str | None:
    """Create the cache directory and the entry ``folder`` (0o700); why they cannot be used safely, or None.

    A refusal is warned about once per message and process.
    """
    try:
        make_private_dirs(root)
        require_private_dir(root)
        secret_key(root)
        private_subdir(folder)
        return None
    except CacheRefused as err:
        return _refused(str(err))
    except OSError as err:  # a read-only or full file system, no permission
        return _refused(
            f"symlab: cannot use the disk cache directory {root} ({type(err).__name__}: {err}); compiling in memory, "
            "without the disk cache"
        )


def _refused(message: str) -> str:
    """Warn (once per message and process) that the disk cache is refused; the message, as a miss reason."""
    if message not in _WARNED:
        _WARNED.add(message)
        warnings.warn(message, CacheSecurityWarning, stacklevel=4)
    return message.removeprefix("symlab: ")


_WARNED: set[str] = set()


def _repair(entry: CacheEntry) -> str | None:
    """Check ``entry`` and rebuild what cannot be used: the miss reason, or None if its code may be loaded.

    The caller holds the entry's lock.
    """
    try:
        existing: bytes | None = entry.module_path.read_bytes()
    except FileNotFoundError:
        existing = None
    if existing is None:
        reason = NEW_KEY
    elif existing != entry.source.encode():
        reason = f"{CORRUPTED}: the module file {entry.module_path.name} does not hold the generated source"
    else:
        if os.path.lexists(entry.pycache):
            require_private_dir(entry.pycache)
        reason = verify_entry(entry)
        if reason is None and not entry.has_index():
            # Compile every function of the module anew: the cached code of a function compiled while a parallel
            # function it calls was loaded from the cache crashes Numba when it is loaded again.
            reason = INDEX_MISSING
        if reason is None:
            return None
    reset_entry(entry)
    return reason


def prepare_entry(
    source: str, key: str | None = None, directory: Path | None = None, main: str = "graph_fn"
) -> CacheEntry:
    """Find or create the entry of ``source``; check it, repair it, and set ``miss_reason``.

    ``main`` names the function whose Numba index shows that the entry was compiled before. When the
    cache directory or the secret is refused, or the cache is closed (:data:`CLOSED`), the entry is in
    memory (``disk`` False) and its ``miss_reason`` starts with :data:`REFUSED`.
    """
    key = key or cache_key(source)
    root = (directory or cache_dir()).absolute()
    folder = root / key
    entry = CacheEntry(key, folder, folder / f"graph_{key}.py", main=main, source=source)
    refused = CLOSED if is_closed() else _refusal(root, folder)
    if refused is None:
        try:
            with entry_lock(folder):
                try:
                    entry.miss_reason = _repair(entry)
                except CacheRefused as err:  # its __pycache__ is not private
                    refused = _refused(str(err))
                except OSError as err:  # the file system failed under us
                    refused = _refused(
                        f"symlab: cannot use the cache entry {folder} ({type(err).__name__}: {err}); "
                        "compiling in memory, without the disk cache"
                    )
        except CacheClosed:  # closed while this thread waited for the lock
            refused = CLOSED
    if refused is not None:
        entry.disk = False
        entry.miss_reason = f"{REFUSED}: {refused}"
        return entry
    if entry.miss_reason is not None:
        log.debug("symlab cache: entry %s: %s", key, entry.miss_reason)
    return entry


#: The ``cache=True`` of a decorator of generated code (turned off for a module compiled in memory).
_CACHE_OPTION = re.compile(r"^(@numba\.njit\([^\n]*?)\bcache=True\b", re.M)


def import_entry(entry: CacheEntry, fresh: bool = False, name: str | None = None) -> ModuleType:
    """Import the entry's module (reused from ``sys.modules`` unless ``fresh``), its functions guarded.

    ``name`` is the module's name in ``sys.modules`` (default ``symlab_graph_<key>``): a kernel module is
    registered under the name the graph modules import it by. The code run is the verified
    ``entry.source``; an entry in memory (``disk`` False) runs it with Numba's disk cache off.

    Several compile threads import the same modules (graphs share kernels): finding or running a module is
    one step under a lock of its name, and the module enters ``sys.modules`` only once it has run whole,
    replacing the previous one if ``fresh``. (Put there before it ran, as before, another thread could take
    it half run: ``AttributeError: module ... has no attribute 'kernel'``, or, in a graph module whose
    kernel module another thread was running afresh, ``ImportError: cannot import name 'kernel'``.)
    """
    name = name or f"symlab_graph_{entry.key}"
    with _import_lock(name):
        module = sys.modules.get(name)
        if module is not None and not fresh:
            return module
        module = _execute_entry(entry, name)
        # Published only whole: a thread finding the name in sys.modules (``from <kernel module> import kernel``
        # in a graph module, or this function) never sees a module still running, or one whose run failed.
        sys.modules[name] = module
        return module


_IMPORT_LOCKS: dict[str, threading.Lock] = {}
_IMPORT_LOCKS_GUARD = threading.Lock()


def _import_lock(name: str) -> threading.Lock:
    """The lock that makes finding or running the module ``name`` one step among this process's threads."""
    with _IMPORT_LOCKS_GUARD:
        return _IMPORT_LOCKS.setdefault(name, threading.Lock())


def _execute_entry(entry: CacheEntry, name: str) -> ModuleType:
    """Run the entry's verified source as a new module named ``name`` (not put in ``sys.modules``)."""
    source = entry.source or entry.module_path.read_text()
    module = ModuleType(name)
    if entry.disk:
        # Compiled from the source (no .pyc), with the file's path as its name: Numba's cache
        # locator finds the file, and its cache goes to the __pycache__ beside it.
        filename = str(entry.module_path)
        module.__file__ = filename
    else:
        source = _CACHE_OPTION.sub(r"\1cache=False", source)
        filename = f"<symlab {name}>"  # no file: tracebacks read the source from linecache
        linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    exec(compile(source, filename, "exec"), module.__dict__)
    if entry.disk:
        for value in list(module.__dict__.values()):
            if getattr(getattr(value, "py_func", None), "__globals__", None) is module.__dict__:
                guard_dispatcher(value, entry)
    return module


__all__ = [
    "CLOSED",
    "CORRUPTED",
    "INDEX_MISSING",
    "NEW_KEY",
    "OTHER_ENVIRONMENT",
    "REFUSED",
    "SIGNATURE_FILE",
    "SIGNATURE_MISMATCH",
    "STALE",
    "CacheClosed",
    "CacheEntry",
    "CacheRefused",
    "CacheSecurityWarning",
    "cache_dir",
    "cache_key",
    "check_numba_files",
    "close",
    "entry_lock",
    "guard_dispatcher",
    "import_entry",
    "load_without_refresh",
    "prepare_entry",
    "secret_key",
    "secret_path",
    "sign_entry",
    "verify_entry",
    "write_atomic",
]
