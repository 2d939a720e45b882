"""The environment key: what compiled code depends on besides its source, and the cache key made of both.

An entry of the disk cache (:mod:`symlab.compile.numba.cache`) is named by :func:`cache_key`: a stable
hash of the generated source and of the environment string of this process, which names the versions of
Numba, NumPy, Python and symlab (with a hash of the symlab modules the generated code calls at run time,
:data:`RUNTIME_MODULES`), the CPU and the BLAS library kernels call
(:mod:`~symlab.compile.numba.numpy_blas`). A process of another version so finds another entry, and the
signature of an entry (:mod:`~symlab.compile.numba.cache_entry`) records the environment it was made in.
Nothing here imports Numba, so that a graph's kernels can be named (and looked up) before Numba is loaded.

>>> key = cache_key("def graph_fn():\\n    return ()\\n")
>>> len(key), key == cache_key("def graph_fn():\\n    return ()\\n")
(24, True)
>>> key == cache_key("def graph_fn():\\n    return (1,)\\n")
False
>>> current_environment().startswith("numba ")
True
"""

from __future__ import annotations

import hashlib
import platform
import sys
from pathlib import Path

from symlab.version import __version__ as symlab_version

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

    from symlab.compile.numba.numpy_blas_library import LIBRARY

    blas = LIBRARY.identity if LIBRARY is not None else "numba's"  # the machine code calls one or the other
    return (
        f"numba {_numba_version()}; numpy {numpy.__version__}; python {sys.version_info[:3]}; "
        f"symlab {symlab_version} (runtime {_runtime_hash()}); cpu {cpu}; blas {blas}"
    )


_ENV: str | None = None


def current_environment() -> str:
    """The environment string of this process (computed once)."""
    global _ENV
    if _ENV is None:
        _ENV = _environment()
    return _ENV


def cache_key(source: str) -> str:
    """A stable hash of ``source`` and of the versions, CPU and BLAS that compile it (24 hex digits)."""
    return hashlib.sha256(f"{current_environment()}\n{source}".encode()).hexdigest()[:24]


__all__ = ["RUNTIME_MODULES", "cache_key", "current_environment"]
