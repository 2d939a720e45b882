"""NumPy's own BLAS library in this process: its file, integer width and CBLAS function addresses.

Found without importing Numba, so that cache keys (which name it) and kernel
source can be made before Numba is loaded; :mod:`~symlab.compile.numba.numpy_blas`
gives the functions to compiled code.

>>> LIBRARY is None or LIBRARY.int_bits in (32, 64)
True
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: The CBLAS functions kernels call, by their names without prefix or suffix.
FUNCTIONS = ("sgemm", "dgemm", "sgemv", "dgemv", "sdot", "ddot")
#: CBLAS's constants (``CBLAS_ORDER``, ``CBLAS_TRANSPOSE``); ``CblasTrans`` is ``NO_TRANS + 1``, so kernels pass
#: ``NO_TRANS + t`` with ``t`` 1 for a transposed operand.
ROW_MAJOR, NO_TRANS = 101, 111


@dataclass(frozen=True)
class BlasLibrary:
    """A BLAS library loaded in this process: its file, integer width and function addresses."""

    path: str
    int_bits: int
    addresses: dict[str, int]

    @property
    def identity(self) -> str:
        """What a cache key must know of it: the file's name and the integer width."""
        return f"{Path(self.path).name} int{self.int_bits}"


#: (prefix, suffix, integer bits) of the CBLAS names of the libraries NumPy's wheels ship.
_NAMINGS = (("scipy_cblas_", "64_", 64), ("cblas_", "64_", 64), ("scipy_cblas_", "", 32))


def _candidates() -> list[Path]:
    """The BLAS files that NumPy's wheel puts next to its package."""
    package = Path(np.__file__).parent
    folders = [package.parent / "numpy.libs", package / ".dylibs"]
    return sorted(p for folder in folders if folder.is_dir() for p in folder.iterdir() if "blas" in p.name.lower())


def find_library() -> BlasLibrary | None:
    """NumPy's BLAS with the CBLAS functions of :data:`FUNCTIONS`, or None."""
    for path in _candidates():
        try:
            library = ctypes.CDLL(str(path))  # already loaded by NumPy: this only finds it
        except OSError:
            continue
        for prefix, suffix, bits in _NAMINGS:
            try:
                addresses = {f: ctypes.cast(getattr(library, f"{prefix}{f}{suffix}"), ctypes.c_void_p).value for f in FUNCTIONS}
            except AttributeError:
                continue
            if all(addresses.values()):
                return BlasLibrary(str(path), bits, {f: int(a) for f, a in addresses.items()})
    return None


#: NumPy's BLAS as found in this process, or None.
LIBRARY: BlasLibrary | None = find_library()


def symbol(function: str) -> str:
    """The LLVM symbol under which ``function`` (``dgemm``...) is registered."""
    return f"symlab_blas_{function}"


__all__ = ["FUNCTIONS", "LIBRARY", "NO_TRANS", "ROW_MAJOR", "BlasLibrary", "find_library", "symbol"]
