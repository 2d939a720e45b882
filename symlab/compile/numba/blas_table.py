"""SciPy's table of BLAS functions, loaded without importing ``scipy.linalg``.

Numba calls BLAS (for ``np.dot``) through the function table of SciPy's
extension module ``scipy.linalg.cython_blas``, and checks that it can import
it when it sets up its first compile or cache load in a process. Importing
it the usual way runs ``scipy/linalg/__init__.py``, which imports most of
SciPy's linear algebra: about 0.19 s, a third of a warm compile. The
extension module itself loads in about 2 ms and needs nothing of
``scipy.linalg``, so :func:`preload` loads it under its own name; Numba's
import then finds it in ``sys.modules``. A later ``import scipy.linalg``
runs the package as usual and uses the module already loaded.

Nothing is done when ``scipy.linalg`` is already imported, when SciPy is not
installed (Numba then has no BLAS, as before), or when the file is not where
SciPy keeps it.

>>> import sys
>>> preload()
>>> "scipy.linalg.cython_blas" in sys.modules
True
>>> hasattr(sys.modules["scipy.linalg.cython_blas"], "__pyx_capi__")
True
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

NAME = "scipy.linalg.cython_blas"


class _BindWhenParentLoads(importlib.abc.MetaPathFinder):
    """Import hook: once ``scipy.linalg`` has run, give it the preloaded module as ``cython_blas``."""

    def find_spec(self, fullname: str, path: Any, target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != "scipy.linalg":
            return None
        sys.meta_path.remove(self)  # one shot; the usual finders do the finding
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            if NAME in sys.modules:
                module.cython_blas = sys.modules[NAME]  # type: ignore[attr-defined]

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def preload() -> None:
    """Load ``scipy.linalg.cython_blas`` into ``sys.modules`` if it is not there (see the module's docstring)."""
    if NAME in sys.modules or "scipy.linalg" in sys.modules:
        return
    spec = importlib.util.find_spec("scipy")  # imports only SciPy's small top-level package, if any
    if spec is None or spec.submodule_search_locations is None:
        return
    for location in spec.submodule_search_locations:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = Path(location) / "linalg" / f"cython_blas{suffix}"
            if path.is_file():
                loader = importlib.machinery.ExtensionFileLoader(NAME, str(path))
                module_spec = importlib.util.spec_from_file_location(NAME, path, loader=loader)
                if module_spec is None:
                    return
                module = importlib.util.module_from_spec(module_spec)
                sys.modules[NAME] = module
                try:
                    loader.exec_module(module)
                except Exception:  # an unusual SciPy build: let Numba import it the usual way
                    del sys.modules[NAME]
                    return
                sys.meta_path.insert(0, _BindWhenParentLoads())
                return


__all__ = ["preload"]
