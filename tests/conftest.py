"""Test session setup: a private Numba disk cache for the session.

Each pytest process (each xdist worker too) gets its own temporary
``SYMLAB_CACHE_DIR``, shared by every test of the process (compiled graphs are
loaded, not recompiled, when a test compiles a graph another test compiled),
and removed at the end. The user's ``~/.cache/symlab`` is never touched.
"""

import os
import shutil
import tempfile
import threading

import pytest

_created: list[str] = []


def pytest_configure(config):
    path = tempfile.mkdtemp(prefix="symlab-test-cache-")
    _created.append(path)
    os.environ["SYMLAB_CACHE_DIR"] = path


def pytest_unconfigure(config):
    for path in _created:
        shutil.rmtree(path, ignore_errors=True)


# -- the tiered path (symlab.config.background_compile), for the tests that choose it ------------------------


@pytest.fixture
def background(monkeypatch):
    """Compile in tiers: the first calls run on the NumPy backend while Numba compiles on a worker thread."""
    import symlab

    monkeypatch.setattr(symlab.config, "background_compile", True)


@pytest.fixture
def held(monkeypatch, background):
    """An event the worker thread waits for before it compiles: the test decides when the code is ready."""
    from symlab.compile.numba import linker

    release = threading.Event()
    load = linker.load_compiled

    def held_load(*args, **kwargs):
        assert release.wait(60), "the test never released the compile"
        return load(*args, **kwargs)

    monkeypatch.setattr(linker, "load_compiled", held_load)
    yield release
    release.set()
