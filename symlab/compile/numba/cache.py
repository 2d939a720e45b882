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

import contextlib
import hashlib
import hmac
import io
import json
import linecache
import logging
import os
import pickletools
import platform
import re
import shutil
import stat
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator
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
#: A file of the entry is unsigned, changed, added or missing, or the signature file is not the user's.
SIGNATURE_MISMATCH = "signature mismatch"
#: The entry was signed in another environment (other Numba, NumPy, Python or symlab versions, CPU, BLAS).
OTHER_ENVIRONMENT = "entry from another environment"
#: The disk cache cannot be used safely (a directory or the secret refused): compiled in memory.
REFUSED = "disk cache refused"

#: The cache was closed (the interpreter is exiting: see :func:`close`): compiled in memory (a refusal, no warning).
CLOSED = "the disk cache is closed: the interpreter is exiting"

#: The file of an entry that lists its files' HMACs.
SIGNATURE_FILE = "symlab-signature.json"
SIGNATURE_FORMAT = 1
#: Seconds a process waits for another one to release an entry before it goes on without the lock.
LOCK_TIMEOUT = 600.0
#: The symlab modules generated code calls at run time: their code is in the machine code, so in the key.
RUNTIME_MODULES = (
    "jit_helpers.py",
    "kernels_reduction_order.py",
    "numpy_blas.py",
    "numpy_blas_library.py",
    "sum_order.py",
    "ufunc_loops.py",
    "ufunc_table.py",
)

#: Owner and mode checks need POSIX ownership (skipped on Windows).
_POSIX = hasattr(os, "geteuid")


class CacheSecurityWarning(UserWarning):
    """The disk cache (a directory, or the secret that signs it) is refused: symlab compiles in memory."""


class CacheRefused(Exception):
    """The disk cache cannot be used safely; the message names the path, what was expected and what was found."""


# -- where, and under which key -------------------------------------------------------------------------------------
def cache_dir() -> Path:
    """The cache directory: ``$SYMLAB_CACHE_DIR`` if set, else ``~/.cache/symlab`` (made absolute)."""
    env = os.environ.get("SYMLAB_CACHE_DIR")
    # Absolute: the module's path is its code's file name, which Numba's cache locator reads later.
    return Path(env).expanduser().absolute() if env else Path.home() / ".cache" / "symlab"


def secret_path() -> Path:
    """The file of the key that signs entries: ``$SYMLAB_SECRET_FILE``, else ``$XDG_CONFIG_HOME/symlab/cache_secret``."""
    env = os.environ.get("SYMLAB_SECRET_FILE")
    if env:
        return Path(env).expanduser().absolute()
    config = os.environ.get("XDG_CONFIG_HOME")
    base = Path(config).expanduser().absolute() if config else Path.home() / ".config"
    return base / "symlab" / "cache_secret"


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


def _runtime_hash() -> str:
    """A hash of the symlab modules the generated code calls: a change there changes the machine code."""
    digest = hashlib.sha256()
    here = Path(__file__).parent
    for name in RUNTIME_MODULES:
        digest.update(name.encode() + b"\0")
        try:
            digest.update((here / name).read_bytes())
        except OSError:  # pragma: no cover - a module left out of an installation
            digest.update(b"missing")
    return digest.hexdigest()[:16]


def _environment() -> str:
    """What the machine code depends on besides the source: the versions, the CPU, the BLAS it calls.

    Made without importing Numba, so that a graph's kernels can be named
    (and looked up) before Numba is loaded.
    """
    try:
        import llvmlite.binding as ll

        cpu = ll.get_host_cpu_name()
    except Exception:  # pragma: no cover - an unusual llvmlite
        cpu = platform.machine()
    import numpy

    from symlab import __version__ as symlab_version
    from symlab.compile.numba.numpy_blas_library import LIBRARY

    blas = LIBRARY.identity if LIBRARY is not None else "numba's"  # the machine code calls one or the other
    return (
        f"numba {_numba_version()}; numpy {numpy.__version__}; python {sys.version_info[:3]}; "
        f"symlab {symlab_version} (runtime {_runtime_hash()}); cpu {cpu}; blas {blas}"
    )


_ENV: str | None = None


def _current_environment() -> str:
    """The environment string of this process (computed once)."""
    global _ENV
    if _ENV is None:
        _ENV = _environment()
    return _ENV


def cache_key(source: str) -> str:
    """A stable hash of ``source`` and of the versions, CPU and BLAS that compile it (24 hex digits)."""
    return hashlib.sha256(f"{_current_environment()}\n{source}".encode()).hexdigest()[:24]


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` (mode 0o600) through a temporary file in the same folder and ``os.replace``."""
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


# -- private directories ----------------------------------------------------------------------------------------------
def _user(uid: int) -> str:
    """``uid`` with its user name, for messages."""
    try:
        import pwd

        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def _make_private_dirs(path: Path) -> None:
    """Create ``path`` and its missing parents with mode 0o700 (an existing one is left as it is, and checked later)."""
    missing: list[Path] = []
    p = path
    while not os.path.lexists(p) and p.parent != p:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        try:
            d.mkdir(mode=0o700)
        except FileExistsError:
            continue  # another process made it at the same moment: it is checked before use like any other
        os.chmod(d, 0o700)  # mkdir's mode went through the umask


def _dir_problem(path: Path) -> str | None:
    """What makes the directory ``path`` unfit to hold code symlab runs (another owner, group/other write), or None."""
    if not _POSIX:
        return None
    try:
        st = os.stat(path)  # follows a symbolic link: the directory that would be used is checked
    except OSError as err:
        return f"a path that cannot be read ({err.strerror})"
    if not stat.S_ISDIR(st.st_mode):
        return f"a {stat.filemode(st.st_mode)[0]!r}-type file, not a directory"
    if st.st_uid != os.geteuid():
        return f"a directory owned by {_user(st.st_uid)}"
    if st.st_mode & 0o022:
        return f"mode {stat.filemode(st.st_mode)} ({st.st_mode & 0o777:#o}): group or others can write to it"
    return None


def _require_private_dir(path: Path) -> None:
    """Raise :class:`CacheRefused` unless ``path`` is a directory of this user that no one else can write to."""
    problem = _dir_problem(path)
    if problem is not None:
        raise CacheRefused(
            f"symlab: refusing the disk cache directory {path}: expected a directory owned by {_user(os.geteuid())} "
            f"that only its owner can write to (symlab creates it with mode 0o700), found {problem}; compiling in "
            "memory, without the disk cache (fix its owner or mode, or set SYMLAB_CACHE_DIR to a private directory)"
        )


def _private_subdir(path: Path) -> None:
    """Create the directory ``path`` (mode 0o700) if missing, then require it private."""
    if not os.path.lexists(path):
        try:
            path.mkdir(mode=0o700)
            os.chmod(path, 0o700)
        except FileExistsError:
            pass
    _require_private_dir(path)


# -- the secret key ---------------------------------------------------------------------------------------------------
_SECRETS: dict[Path, bytes] = {}
_SECRET_LOCK = threading.Lock()


class _SecretIncomplete(CacheRefused):
    """The secret file is too short: perhaps another process is still writing it (without hard links)."""


def _read_secret(path: Path) -> bytes | None:
    """The key in ``path``, None if there is no such file; :class:`CacheRefused` if it is not private or not a key."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except OSError as err:
        raise CacheRefused(
            f"symlab: cannot read the cache secret {path} ({err.strerror}); compiling in memory"
        ) from err
    try:
        st = os.fstat(fd)
        found = None
        if not stat.S_ISREG(st.st_mode):
            found = "not a regular file"
        elif _POSIX and st.st_uid != os.geteuid():
            found = f"a file owned by {_user(st.st_uid)}"
        elif _POSIX and st.st_mode & 0o077:
            found = f"mode {stat.filemode(st.st_mode)} ({st.st_mode & 0o777:#o}): group or others can read or write it"
        if found is not None:
            raise CacheRefused(
                f"symlab: refusing the cache secret {path}: expected a file owned by "
                f"{_user(os.geteuid()) if _POSIX else 'this user'} that only its owner can read and write (mode 0o600), "
                f"found {found}; compiling in memory, without the disk cache (remove it: symlab makes a new one)"
            )
        data = os.read(fd, 4096)
    finally:
        os.close(fd)
    try:
        key = bytes.fromhex(data.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        key = b""
    if len(key) < 32:
        # A file made this instant may still be being written (where there are no hard links): worth a retry.
        error = _SecretIncomplete if time.time() - st.st_mtime < 2.0 else CacheRefused
        raise error(
            f"symlab: refusing the cache secret {path}: expected at least 64 hexadecimal digits, found "
            f"{len(data)} bytes that are not; compiling in memory, without the disk cache (remove it: symlab makes a new one)"
        )
    return key


def _create_secret(path: Path) -> None:
    """Create the secret file ``path`` (mode 0o600) unless it exists; two processes at once end up with one key."""
    import secrets

    _make_private_dirs(path.parent)
    data = secrets.token_hex(32).encode() + b"\n"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")  # mode 0o600
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)  # atomic, and fails if the file exists: the first key made is everyone's key
        except FileExistsError:
            pass
        except OSError:  # no hard links on this file system: an exclusive create, written at once
            try:
                out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                return
            try:
                os.write(out, data)
            finally:
                os.close(out)
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


_OUTSIDE: set[tuple[Path, Path]] = set()


def _check_outside(secret: Path, root: Path) -> None:
    """Raise :class:`CacheRefused` if the secret lies in the cache directory (whoever writes there could swap it)."""
    if (secret, root) in _OUTSIDE:
        return
    s, r = secret.resolve(), root.resolve()
    if s != r and r not in s.parents:
        _OUTSIDE.add((secret, root))
        return
    raise CacheRefused(
        f"symlab: refusing the cache secret {secret}: expected a file outside the cache directory {root}, "
        "found it inside (anyone who can write the cache could replace it); compiling in memory, without the "
        "disk cache (set SYMLAB_SECRET_FILE elsewhere)"
    )


def secret_key(root: Path | None = None) -> bytes:
    """The user's key that signs cache entries (created on first use); :class:`CacheRefused` if unusable.

    ``root`` is the cache directory, which must not hold the secret.
    """
    path = secret_path()
    _check_outside(path, root or cache_dir())
    got = _SECRETS.get(path)
    if got is not None:
        return got
    with _SECRET_LOCK:
        for attempt in range(40):
            try:
                got = _read_secret(path)
            except _SecretIncomplete:
                if attempt == 39:
                    raise
                time.sleep(0.025)  # another process may be writing it without hard links
                continue
            if got is not None:
                break
            _create_secret(path)
        assert got is not None
        _SECRETS[path] = got
        return got


# -- locks ----------------------------------------------------------------------------------------------------------
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


# -- entries ----------------------------------------------------------------------------------------------------------
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
    #: The generated source the module file must hold (what is imported).
    source: str = ""
    #: False: the disk cache was refused; the module is compiled in memory and nothing is read or written.
    disk: bool = True

    @property
    def pycache(self) -> Path:
        return self.folder / "__pycache__"

    @property
    def signature_path(self) -> Path:
        return self.folder / SIGNATURE_FILE

    def index_files(self) -> list[Path]:
        return sorted(self.pycache.glob("*.nbi")) if self.disk and self.pycache.is_dir() else []

    def has_index(self, function: str | None = None) -> bool:
        stem = f"{self.module_path.stem}.{function or self.main}-"
        return any(p.name.startswith(stem) for p in self.index_files())

    def wipe_compiled(self) -> None:
        """Remove Numba's files of this entry (they will be rebuilt) and sign what is left."""
        if not self.disk:
            return
        with entry_lock(self.folder):
            _reset(self)


def _entry_files(entry: CacheEntry) -> tuple[list[str], list[str]]:
    """The regular files of ``entry`` (paths relative to its folder) but the signature, and anything else.

    "Anything else" (symbolic links, folders other than ``__pycache__``...) is never written by symlab or
    Numba, so it is reported, never followed.
    """
    files: list[str] = []
    odd: list[str] = []
    for prefix, folder in (("", entry.folder), ("__pycache__/", entry.pycache)):
        try:
            listing = list(os.scandir(folder))
        except FileNotFoundError:
            continue
        for item in listing:
            rel = prefix + item.name
            if not prefix and item.name == SIGNATURE_FILE:
                continue
            if not prefix and item.name == "__pycache__" and item.is_dir(follow_symlinks=False):
                continue
            if item.is_file(follow_symlinks=False):
                files.append(rel)
            else:
                odd.append(rel)
    return sorted(files), sorted(odd)


#: File digests already computed: (key id, path, inode, size, mtime, ctime) -> hex. A file whose status did not
#: change since it was hashed is not read again (a write, a rename over it or a chmod changes its ctime).
_DIGESTS: dict[tuple[bytes, str, int, int, int, int], str] = {}


_KEY_IDS: dict[bytes, bytes] = {}


def _file_digest(secret: bytes, entry: CacheEntry, rel: str) -> str:
    """The HMAC-SHA256 (hex) of the file ``rel`` of ``entry``: over the entry's key, the file's name and its bytes.

    Raises ``OSError`` if the file cannot be opened (gone, or a link: never followed).
    """
    key_id = _KEY_IDS.get(secret)
    if key_id is None:
        key_id = _KEY_IDS[secret] = hashlib.sha256(secret).digest()[:8]
    fd = os.open(entry.folder / rel, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)  # the status of the very file read
        memo = (key_id, str(entry.folder / rel), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        got = _DIGESTS.get(memo)
        if got is None:
            mac = hmac.new(secret, b"symlab-cache-file\0" + entry.key.encode() + b"\0" + rel.encode() + b"\0", "sha256")
            mac.update(f.read())
            got = _DIGESTS[memo] = mac.hexdigest()
    return got


def _manifest_mac(secret: bytes, doc: dict[str, Any]) -> str:
    """The HMAC of a signature file's content (everything but ``mac``), in a canonical form."""
    body = {k: doc[k] for k in ("format", "entry", "environment", "files")}
    return hmac.new(secret, json.dumps(body, sort_keys=True, separators=(",", ":")).encode(), "sha256").hexdigest()


def sign_entry(entry: CacheEntry) -> None:
    """Record the HMAC of every file of ``entry`` in its signature file (the caller holds the entry's lock)."""
    secret = secret_key(entry.folder.parent)
    files, _odd = _entry_files(entry)  # odd things are not signed: the next verification reports them
    doc: dict[str, Any] = {
        "format": SIGNATURE_FORMAT,
        "entry": entry.key,
        "environment": _current_environment(),
        "files": {rel: _file_digest(secret, entry, rel) for rel in files},
    }
    doc["mac"] = _manifest_mac(secret, doc)
    write_atomic(entry.signature_path, json.dumps(doc, indent=1, sort_keys=True).encode() + b"\n")


def _read_signature(entry: CacheEntry, secret: bytes) -> dict[str, str] | str:
    """The signed file digests of ``entry``, or the reason they cannot be trusted."""
    try:
        raw = entry.signature_path.read_bytes()
    except FileNotFoundError:
        return f"{SIGNATURE_MISMATCH}: {SIGNATURE_FILE} is missing (the entry was never signed by this symlab)"
    try:
        doc = json.loads(raw)
        files, mac = doc["files"], doc["mac"]
        expected = _manifest_mac(secret, doc)
        if not isinstance(files, dict) or not isinstance(mac, str):
            raise TypeError("files or mac of the wrong type")
    except Exception as err:  # a signature file symlab did not write
        return f"{SIGNATURE_MISMATCH}: {SIGNATURE_FILE} is unreadable ({type(err).__name__}: {str(err)[:200]})"
    if not hmac.compare_digest(expected, mac):
        return f"{SIGNATURE_MISMATCH}: {SIGNATURE_FILE} is not signed with this user's key (planted, changed or copied)"
    if doc["entry"] != entry.key:
        return f"{SIGNATURE_MISMATCH}: {SIGNATURE_FILE} signs entry {doc['entry']!r}, not {entry.key!r}"
    if doc["environment"] != _current_environment():
        return f"{OTHER_ENVIRONMENT}: signed with {doc['environment']!r}, this process is {_current_environment()!r}"
    return files


def _pickle_problem(path: Path) -> str | None:
    """Why ``path`` is not a well-formed Numba index (two pickles) or data file (one), or None.

    Walks the pickle opcodes without building any object, so a planted payload is never run here.
    """
    try:
        stream = io.BytesIO(path.read_bytes())
        for _ in range(2 if path.suffix == ".nbi" else 1):
            for _op in pickletools.genops(stream):
                pass
    except Exception as err:  # truncation, garbage: any failure
        return f"{type(err).__name__}: {str(err)[:200]}"
    return None


def _changed(entry: CacheEntry, rel: str) -> str:
    """The miss reason of the file ``rel`` of ``entry`` whose digest is not the signed one."""
    if rel.endswith((".nbi", ".nbc")):
        problem = _pickle_problem(entry.folder / rel)
        if problem is not None:
            return f"{CORRUPTED}: {rel} is unreadable ({problem}); {SIGNATURE_MISMATCH}"
    return f"{SIGNATURE_MISMATCH}: {rel} changed since symlab signed it"


def verify_entry(entry: CacheEntry) -> str | None:
    """Check every file of ``entry`` against its signature file: None if all match, else the miss reason.

    Hashes each file once per change (see ``_DIGESTS``). The caller holds the entry's lock.
    """
    secret = secret_key(entry.folder.parent)
    signed = _read_signature(entry, secret)
    if isinstance(signed, str):
        return signed
    files, odd = _entry_files(entry)
    if odd:
        return f"{SIGNATURE_MISMATCH}: {sorted(odd)[0]} is not a regular file (added)"
    for rel in sorted(signed):
        if rel not in files:
            return f"{SIGNATURE_MISMATCH}: {rel} is missing"
    for rel in files:
        if rel not in signed:
            return f"{SIGNATURE_MISMATCH}: {rel} is not signed (added)"
    for rel in files:
        try:
            digest = _file_digest(secret, entry, rel)
        except OSError as err:
            return f"{SIGNATURE_MISMATCH}: {rel} cannot be read ({err.strerror})"
        if not hmac.compare_digest(digest, str(signed[rel])):
            return _changed(entry, rel)
    return None


def check_numba_files(entry: CacheEntry) -> str | None:
    """A description of the first malformed Numba index or data file of ``entry``, or None (nothing is unpickled)."""
    data_files = sorted(entry.pycache.glob("*.nbc")) if entry.index_files() else []
    for path in [*entry.index_files(), *data_files]:
        problem = _pickle_problem(path)
        if problem is not None:
            return f"{path.name} is unreadable: {problem}"
    return None


def _remove(path: Path) -> None:
    """Remove ``path`` (a file, a link or a folder tree), never following a link."""
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink()
    except FileNotFoundError:
        pass


def _reset(entry: CacheEntry) -> None:
    """Leave ``entry`` holding only its module (rewritten if needed) and an empty ``__pycache__``, signed.

    The ``__pycache__`` folder itself stays (only emptied): a process creating its functions at this moment
    checks that Numba can write there. The caller holds the entry's lock.
    """
    _make_private_dirs(entry.folder)
    _require_private_dir(entry.folder)
    for item in list(entry.folder.iterdir()):
        if item.name not in (entry.module_path.name, SIGNATURE_FILE, "__pycache__"):
            _remove(item)  # anything added
    pycache = entry.pycache
    if pycache.is_symlink() or (os.path.lexists(pycache) and not pycache.is_dir()):
        _remove(pycache)
    for item in list(pycache.iterdir()) if pycache.is_dir() else []:
        _remove(item)  # Numba's files, and anything added
    if entry.source:
        data = entry.source.encode()
        try:
            same = entry.module_path.read_bytes() == data
        except OSError:
            same = False
        if not same:
            write_atomic(entry.module_path, data)
    _private_subdir(entry.pycache)  # Numba would make it with the umask's mode
    sign_entry(entry)


def _refusal(root: Path, folder: Path) -> str | None:
    """Create the cache directory and the entry ``folder`` (0o700); why they cannot be used safely, or None.

    A refusal is warned about once per message and process.
    """
    try:
        _make_private_dirs(root)
        _require_private_dir(root)
        secret_key(root)
        _private_subdir(folder)
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
            _require_private_dir(entry.pycache)
        reason = verify_entry(entry)
        if reason is None and not entry.has_index():
            # Compile every function of the module anew: the cached code of a function compiled while a parallel
            # function it calls was loaded from the cache crashes Numba when it is loaded again.
            reason = INDEX_MISSING
        if reason is None:
            return None
    _reset(entry)
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
    refused = CLOSED if _closed else _refusal(root, folder)
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


# -- loading ----------------------------------------------------------------------------------------------------------
def load_without_refresh(dispatcher: Any) -> Any:
    """Let ``dispatcher`` load its cached machine code without Numba's full registry refresh; return it.

    Numba's ``Cache.load_overload`` first refreshes the target context: it
    imports and installs every typing and lowering registry Numba has (about
    0.1 s, half of a warm process's wait for its first result). Machine code
    loaded from the disk needs none of them, only Numba's runtime (NRT),
    which is initialized here. A miss still compiles as usual: Numba's
    compiler refreshes the context itself before it starts.

    The load goes through the cache's ``_load_overload`` looked up at each
    call, so the verification :func:`import_entry` installs there always runs.
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
        _reset(entry)
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
                _private_subdir(entry.pycache)
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


def _import_lock(name: str) -> threading.Lock:
    """The lock that makes finding or running the module ``name`` one step among this process's threads."""
    with _LOCKS_GUARD:
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
