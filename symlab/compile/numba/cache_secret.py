"""The user's secret that signs cache entries: where it is kept, made on first use, refused unless private.

The HMAC key that signs the entries of the disk cache (:mod:`~symlab.compile.numba.cache_entry`) is a
per-user secret of 32 random bytes (64 hex digits) kept *outside* the cache, in ``$SYMLAB_SECRET_FILE``
if set, else ``$XDG_CONFIG_HOME/symlab/cache_secret`` (``~/.config/symlab/cache_secret``), as Jupyter
keeps the key that signs notebooks. It is created on first use with mode ``0o600`` (atomically: two
processes creating it at once end up with one key), and refused (:class:`CacheRefused`: the disk cache is
then not used) if it is not owned by the user, is readable or writable by group or others, is not 64 or
more hex digits, or lies inside the cache directory.

>>> import os, tempfile
>>> from pathlib import Path
>>> home = Path(tempfile.mkdtemp())
>>> previous = os.environ.get("SYMLAB_SECRET_FILE")
>>> os.environ["SYMLAB_SECRET_FILE"] = str(home / "config" / "secret")
>>> key = secret_key(home / "cache")
>>> len(key), oct(os.stat(home / "config" / "secret").st_mode & 0o777), secret_key(home / "cache") == key
(32, '0o600', True)
>>> if previous is None:
...     del os.environ["SYMLAB_SECRET_FILE"]
... else:
...     os.environ["SYMLAB_SECRET_FILE"] = previous
"""

from __future__ import annotations

import os
import stat
import tempfile
import threading
import time
from pathlib import Path

from symlab.compile.numba.cache_dir import POSIX, CacheRefused, cache_dir, describe_user, make_private_dirs


def secret_path() -> Path:
    """The file of the key that signs entries: ``$SYMLAB_SECRET_FILE``, else ``$XDG_CONFIG_HOME/symlab/cache_secret``."""
    env = os.environ.get("SYMLAB_SECRET_FILE")
    if env:
        return Path(env).expanduser().absolute()
    config = os.environ.get("XDG_CONFIG_HOME")
    base = Path(config).expanduser().absolute() if config else Path.home() / ".config"
    return base / "symlab" / "cache_secret"


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
        elif POSIX and st.st_uid != os.geteuid():
            found = f"a file owned by {describe_user(st.st_uid)}"
        elif POSIX and st.st_mode & 0o077:
            found = f"mode {stat.filemode(st.st_mode)} ({st.st_mode & 0o777:#o}): group or others can read or write it"
        if found is not None:
            raise CacheRefused(
                f"symlab: refusing the cache secret {path}: expected a file owned by "
                f"{describe_user(os.geteuid()) if POSIX else 'this user'} that only its owner can read and write (mode 0o600), "
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

    make_private_dirs(path.parent)
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


__all__ = ["secret_key", "secret_path"]
