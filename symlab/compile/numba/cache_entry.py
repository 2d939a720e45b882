"""One entry of the disk cache: its files, signed with the user's secret, checked before use, reset when not.

An entry ``<dir>/<key>/`` holds the generated module ``graph_<key>.py``, Numba's index (``.nbi``) and
machine-code (``.nbc``) files in its ``__pycache__``, and :data:`SIGNATURE_FILE`. Numba *unpickles* its
files, so whoever could put a file in an entry could run code in the next process: after symlab writes an
entry's module, and after each time Numba saves machine code into it, :func:`sign_entry` records an
HMAC-SHA256 of every file of the entry (over the entry's key, the file's name and its bytes) and an HMAC
of the whole list with the environment (:mod:`~symlab.compile.numba.environment`), with the user's key
(:mod:`~symlab.compile.numba.cache_secret`). Before anything of an entry is imported or reaches Numba's
loader, :func:`verify_entry` checks every file against it: a file unsigned, changed, added or missing, or
a list not signed with the user's key, is a miss whose reason starts with :data:`SIGNATURE_MISMATCH` (or
:data:`CORRUPTED` when the changed file is not even a well-formed pickle, checked without unpickling it,
or :data:`OTHER_ENVIRONMENT` for an entry of other versions); :func:`reset_entry` then leaves the entry
holding only its module, signed. The caller holds the entry's lock
(:func:`~symlab.compile.numba.cache_lock.entry_lock`) around each of these.

>>> import os, tempfile
>>> from pathlib import Path
>>> from symlab.compile.numba.cache_lock import entry_lock
>>> home = Path(tempfile.mkdtemp())
>>> previous = os.environ.get("SYMLAB_SECRET_FILE")
>>> os.environ["SYMLAB_SECRET_FILE"] = str(home / "secret")
>>> folder = home / "cache" / "k1"
>>> entry = CacheEntry("k1", folder, folder / "graph_k1.py", source="def graph_fn():\\n    return ()\\n")
>>> with entry_lock(folder):
...     reset_entry(entry)  # the module written, and signed
...     print(verify_entry(entry))
...     _ = (folder / "planted.py").write_text("print('hi')")
...     print(verify_entry(entry))
None
signature mismatch: planted.py is not signed (added)
>>> if previous is None:
...     del os.environ["SYMLAB_SECRET_FILE"]
... else:
...     os.environ["SYMLAB_SECRET_FILE"] = previous
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import os
import pickletools
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from symlab.compile.numba import environment
from symlab.compile.numba.cache_dir import make_private_dirs, private_subdir, require_private_dir, write_atomic
from symlab.compile.numba.cache_lock import entry_lock
from symlab.compile.numba.cache_secret import secret_key

CORRUPTED = "corrupted entry"
#: A file of the entry is unsigned, changed, added or missing, or the signature file is not the user's.
SIGNATURE_MISMATCH = "signature mismatch"
#: The entry was signed in another environment (other Numba, NumPy, Python or symlab versions, CPU, BLAS).
OTHER_ENVIRONMENT = "entry from another environment"

#: The file of an entry that lists its files' HMACs.
SIGNATURE_FILE = "symlab-signature.json"
SIGNATURE_FORMAT = 1


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
            reset_entry(self)


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


def manifest_mac(secret: bytes, doc: dict[str, Any]) -> str:
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
        "environment": environment.current_environment(),
        "files": {rel: _file_digest(secret, entry, rel) for rel in files},
    }
    doc["mac"] = manifest_mac(secret, doc)
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
        expected = manifest_mac(secret, doc)
        if not isinstance(files, dict) or not isinstance(mac, str):
            raise TypeError("files or mac of the wrong type")
    except Exception as err:  # a signature file symlab did not write
        return f"{SIGNATURE_MISMATCH}: {SIGNATURE_FILE} is unreadable ({type(err).__name__}: {str(err)[:200]})"
    if not hmac.compare_digest(expected, mac):
        return f"{SIGNATURE_MISMATCH}: {SIGNATURE_FILE} is not signed with this user's key (planted, changed or copied)"
    if doc["entry"] != entry.key:
        return f"{SIGNATURE_MISMATCH}: {SIGNATURE_FILE} signs entry {doc['entry']!r}, not {entry.key!r}"
    if doc["environment"] != environment.current_environment():
        return f"{OTHER_ENVIRONMENT}: signed with {doc['environment']!r}, this process is {environment.current_environment()!r}"
    return files


def pickle_problem(path: Path) -> str | None:
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
        problem = pickle_problem(entry.folder / rel)
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
        problem = pickle_problem(path)
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


def reset_entry(entry: CacheEntry) -> None:
    """Leave ``entry`` holding only its module (rewritten if needed) and an empty ``__pycache__``, signed.

    The ``__pycache__`` folder itself stays (only emptied): a process creating its functions at this moment
    checks that Numba can write there. The caller holds the entry's lock.
    """
    make_private_dirs(entry.folder)
    require_private_dir(entry.folder)
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
    private_subdir(entry.pycache)  # Numba would make it with the umask's mode
    sign_entry(entry)


__all__ = [
    "CORRUPTED",
    "OTHER_ENVIRONMENT",
    "SIGNATURE_FILE",
    "SIGNATURE_FORMAT",
    "SIGNATURE_MISMATCH",
    "CacheEntry",
    "check_numba_files",
    "manifest_mac",
    "pickle_problem",
    "reset_entry",
    "sign_entry",
    "verify_entry",
]
