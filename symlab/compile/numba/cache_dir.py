"""The cache directory: where it is, and the private directories and atomic writes that keep it the user's.

The directory is ``$SYMLAB_CACHE_DIR`` if set, else ``~/.cache/symlab``. symlab creates it (and the
parents it creates), each entry and its ``__pycache__`` with mode ``0o700`` (:func:`make_private_dirs`),
and before use refuses one that group or others can write to, or that another user owns
(:func:`require_private_dir` raises :class:`CacheRefused`, whose message names the directory, what was
expected and what was found; the cache then warns with :class:`CacheSecurityWarning` and compiles in
memory). Files are written atomically (:func:`write_atomic`), so a reader never sees half a file. On
Windows the owner and mode checks are skipped.

>>> import os, tempfile
>>> from pathlib import Path
>>> root = Path(tempfile.mkdtemp()) / "made" / "private"
>>> make_private_dirs(root)
>>> oct(os.stat(root).st_mode & 0o777), dir_problem(root) is None
('0o700', True)
>>> write_atomic(root / "f.txt", b"whole")
>>> (root / "f.txt").read_bytes()
b'whole'
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

#: Owner and mode checks need POSIX ownership (skipped on Windows).
POSIX = hasattr(os, "geteuid")


class CacheSecurityWarning(UserWarning):
    """The disk cache (a directory, or the secret that signs it) is refused: symlab compiles in memory."""


class CacheRefused(Exception):
    """The disk cache cannot be used safely; the message names the path, what was expected and what was found."""



def cache_dir() -> Path:
    """The cache directory: ``$SYMLAB_CACHE_DIR`` if set, else ``~/.cache/symlab`` (made absolute)."""
    env = os.environ.get("SYMLAB_CACHE_DIR")
    # Absolute: the module's path is its code's file name, which Numba's cache locator reads later.
    return Path(env).expanduser().absolute() if env else Path.home() / ".cache" / "symlab"


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


def describe_user(uid: int) -> str:
    """``uid`` with its user name, for messages."""
    try:
        import pwd

        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def make_private_dirs(path: Path) -> None:
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


def dir_problem(path: Path) -> str | None:
    """What makes the directory ``path`` unfit to hold code symlab runs (another owner, group/other write), or None."""
    if not POSIX:
        return None
    try:
        st = os.stat(path)  # follows a symbolic link: the directory that would be used is checked
    except OSError as err:
        return f"a path that cannot be read ({err.strerror})"
    if not stat.S_ISDIR(st.st_mode):
        return f"a {stat.filemode(st.st_mode)[0]!r}-type file, not a directory"
    if st.st_uid != os.geteuid():
        return f"a directory owned by {describe_user(st.st_uid)}"
    if st.st_mode & 0o022:
        return f"mode {stat.filemode(st.st_mode)} ({st.st_mode & 0o777:#o}): group or others can write to it"
    return None


def require_private_dir(path: Path) -> None:
    """Raise :class:`CacheRefused` unless ``path`` is a directory of this user that no one else can write to."""
    problem = dir_problem(path)
    if problem is not None:
        raise CacheRefused(
            f"symlab: refusing the disk cache directory {path}: expected a directory owned by {describe_user(os.geteuid())} "
            f"that only its owner can write to (symlab creates it with mode 0o700), found {problem}; compiling in "
            "memory, without the disk cache (fix its owner or mode, or set SYMLAB_CACHE_DIR to a private directory)"
        )


def private_subdir(path: Path) -> None:
    """Create the directory ``path`` (mode 0o700) if missing, then require it private."""
    if not os.path.lexists(path):
        try:
            path.mkdir(mode=0o700)
            os.chmod(path, 0o700)
        except FileExistsError:
            pass
    require_private_dir(path)


__all__ = [
    "POSIX",
    "CacheRefused",
    "CacheSecurityWarning",
    "cache_dir",
    "describe_user",
    "dir_problem",
    "make_private_dirs",
    "private_subdir",
    "require_private_dir",
    "write_atomic",
]
