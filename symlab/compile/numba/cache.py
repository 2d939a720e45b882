"""The disk cache of generated graph modules and of Numba's machine code for them.

A generated module (a graph's, a kernel's or the register machine's; see
:mod:`symlab.compile.numba.linker`) is written to
``<dir>/<key>/graph_<key>.py`` and imported from that path, so
Numba's own ``cache=True`` stores the compiled code in the ``__pycache__``
folder beside it. ``<dir>`` is ``~/.cache/symlab`` unless ``SYMLAB_CACHE_DIR``
says otherwise; ``<key>`` is a stable hash of the generated source, Numba's
and Python's versions, the CPU name and the BLAS library kernels call
(:mod:`~symlab.compile.numba.numpy_blas`), so a new process compiling the same
graph finds the same entry.

Every load checks the entry first: a module file that does not hold exactly
the expected source, or a Numba index or data file that cannot be read, is a
*corrupted entry*: the entry's files are removed and rebuilt, never trusted.
Files are written atomically (a temporary file, then ``os.replace``), so a
reader never sees half a file.

>>> key = cache_key("def graph_fn():\\n    return ()\\n")
>>> len(key), key == cache_key("def graph_fn():\\n    return ()\\n")
(24, True)
>>> key == cache_key("def graph_fn():\\n    return (1,)\\n")
False
"""

from __future__ import annotations

import hashlib
import logging
import os
import pickle
import pickletools
import platform
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

log = logging.getLogger("symlab.cache")

#: Miss reasons (``CacheEntry.miss_reason``).
NEW_KEY = "new key: this graph was never compiled with this cache directory"
INDEX_MISSING = "numba cache index missing"
STALE = "numba cache index stale: Numba recompiled"
CORRUPTED = "corrupted entry"


def cache_dir() -> Path:
    """The cache directory: ``$SYMLAB_CACHE_DIR`` if set, else ``~/.cache/symlab``."""
    env = os.environ.get("SYMLAB_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "symlab"


def _numba_version() -> str:
    """Numba's version, read from its installed distribution: importing Numba costs 0.1-0.2 s."""
    import importlib.util

    spec = importlib.util.find_spec("numba")
    if spec is not None and spec.origin is not None:
        site = Path(spec.origin).parent.parent
        found = sorted(site.glob("numba-*.dist-info"))
        if len(found) == 1:
            return found[0].name[len("numba-") : -len(".dist-info")]
    from importlib.metadata import version

    return version("numba")


def _environment() -> str:
    """What the machine code depends on besides the source: Numba, Python, the CPU, the BLAS it calls.

    Made without importing Numba, so that a graph's kernels can be named
    (and looked up) before Numba is loaded.
    """
    try:
        import llvmlite.binding as ll

        cpu = ll.get_host_cpu_name()
    except Exception:  # pragma: no cover - an unusual llvmlite
        cpu = platform.machine()
    from symlab.compile.numba.numpy_blas_library import LIBRARY

    blas = LIBRARY.identity if LIBRARY is not None else "numba's"  # the machine code calls one or the other
    return f"numba {_numba_version()}; python {sys.version_info[:3]}; cpu {cpu}; blas {blas}"


_ENV: str | None = None


def cache_key(source: str) -> str:
    """A stable hash of ``source`` and of the versions, CPU and BLAS that compile it (24 hex digits)."""
    global _ENV
    if _ENV is None:
        _ENV = _environment()
    return hashlib.sha256(f"{_ENV}\n{source}".encode()).hexdigest()[:24]


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


@dataclass
class CacheEntry:
    """One graph's cache entry: where it is and what loading it found."""

    key: str
    folder: Path
    module_path: Path
    #: The reason the entry cannot give compiled code, or None if it may (decided before compiling).
    miss_reason: str | None = None
    #: The function whose Numba index tells whether the entry was ever compiled.
    main: str = "graph_fn"

    @property
    def pycache(self) -> Path:
        return self.folder / "__pycache__"

    def index_files(self) -> list[Path]:
        return sorted(self.pycache.glob("*.nbi")) if self.pycache.is_dir() else []

    def has_index(self, function: str | None = None) -> bool:
        stem = f"{self.module_path.stem}.{function or self.main}-"
        return any(p.name.startswith(stem) for p in self.index_files())

    def wipe_compiled(self) -> None:
        """Remove Numba's files of this entry (they will be rebuilt)."""
        shutil.rmtree(self.pycache, ignore_errors=True)


def check_numba_files(entry: CacheEntry) -> str | None:
    """A description of the first unreadable Numba index or data file of ``entry``, or None."""
    for index in entry.index_files():
        try:
            with open(index, "rb") as f:
                pickle.load(f)  # numba's version
                _stamp, overloads = pickle.loads(f.read())
            for name in dict(overloads).values():
                # Walk the data file's pickle opcodes without building its objects (they
                # refer to the graph's module, not imported yet): garbage or truncation fails.
                with open(entry.pycache / name, "rb") as f:
                    for _ in pickletools.genops(f.read()):
                        pass
        except Exception as err:  # any failure means the files cannot be trusted
            return f"{index.name} (or its data file) is unreadable: {type(err).__name__}: {err}"
    return None


def prepare_entry(
    source: str, key: str | None = None, directory: Path | None = None, main: str = "graph_fn"
) -> CacheEntry:
    """Find or create the entry of ``source``; check it, repair it, and set ``miss_reason``.

    ``main`` names the function whose Numba index shows that the entry was compiled before.
    """
    key = key or cache_key(source)
    folder = (directory or cache_dir()) / key
    entry = CacheEntry(key, folder, folder / f"graph_{key}.py", main=main)
    data = source.encode()
    try:
        existing = entry.module_path.read_bytes()
    except FileNotFoundError:
        existing = None
    if existing is None:
        entry.miss_reason = NEW_KEY
        entry.wipe_compiled()
        write_atomic(entry.module_path, data)
    elif existing != data:
        entry.miss_reason = f"{CORRUPTED}: the module file {entry.module_path.name} does not hold the generated source"
        entry.wipe_compiled()
        write_atomic(entry.module_path, data)
    else:
        problem = check_numba_files(entry)
        if problem is not None:
            entry.miss_reason = f"{CORRUPTED}: {problem}"
            entry.wipe_compiled()
        elif not entry.has_index():
            entry.miss_reason = INDEX_MISSING
            # Compile every function of the module anew: the cached code of a function compiled while a parallel
            # function it calls was loaded from the cache crashes Numba when it is loaded again.
            entry.wipe_compiled()
    if entry.miss_reason is not None:
        log.debug("symlab cache: entry %s: %s", key, entry.miss_reason)
    return entry


def load_without_refresh(dispatcher: Any) -> Any:
    """Let ``dispatcher`` load its cached machine code without Numba's full registry refresh; return it.

    Numba's ``Cache.load_overload`` first refreshes the target context: it
    imports and installs every typing and lowering registry Numba has (about
    0.1 s, half of a warm process's wait for its first result). Machine code
    loaded from the disk needs none of them, only Numba's runtime (NRT),
    which is initialized here. A miss still compiles as usual: Numba's
    compiler refreshes the context itself before it starts.

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
            return load(sig, target_context)

    cache.load_overload = load_overload
    return dispatcher


def import_entry(entry: CacheEntry, fresh: bool = False, name: str | None = None) -> ModuleType:
    """Import the entry's module from its path (reused from ``sys.modules`` unless ``fresh``).

    ``name`` is the module's name in ``sys.modules`` (default ``symlab_graph_<key>``): a kernel module is
    registered under the name the graph modules import it by.
    """
    name = name or f"symlab_graph_{entry.key}"
    module = sys.modules.get(name)
    if module is not None and not fresh:
        return module
    # Compiled from the source (no .pyc), with the file's path as its name: Numba's cache
    # locator finds the file, and its cache goes to the __pycache__ beside it.
    source = entry.module_path.read_text()
    module = ModuleType(name)
    module.__file__ = str(entry.module_path)
    sys.modules[name] = module
    try:
        exec(compile(source, str(entry.module_path), "exec"), module.__dict__)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


__all__ = [
    "CORRUPTED",
    "INDEX_MISSING",
    "NEW_KEY",
    "STALE",
    "CacheEntry",
    "cache_dir",
    "cache_key",
    "check_numba_files",
    "import_entry",
    "load_without_refresh",
    "prepare_entry",
    "write_atomic",
]
