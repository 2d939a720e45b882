"""Test session setup: a private Numba disk cache for the session.

Each pytest process (each xdist worker too) gets its own temporary
``SYMLAB_CACHE_DIR``, shared by every test of the process (compiled graphs are
loaded, not recompiled, when a test compiles a graph another test compiled),
and removed at the end. The user's ``~/.cache/symlab`` is never touched.
"""

import os
import shutil
import tempfile

_created: list[str] = []


def pytest_configure(config):
    path = tempfile.mkdtemp(prefix="symlab-test-cache-")
    _created.append(path)
    os.environ["SYMLAB_CACHE_DIR"] = path


def pytest_unconfigure(config):
    for path in _created:
        shutil.rmtree(path, ignore_errors=True)
