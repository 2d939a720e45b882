"""Fixtures of the tests: the tiered compilation path, held or released by the test.

The session's set-up (a private disk cache and signing key, the tier chosen) is in the root
``conftest.py``, which the doctests and the notebook checks share.
"""

import threading

import pytest

# -- the tiered path (symlab.config.background_compile), for the tests that choose it ------------------------


@pytest.fixture
def background(monkeypatch):
    """Compile in tiers: the first calls run on the NumPy backend while Numba compiles on a worker thread."""
    import symlab

    monkeypatch.setattr(symlab.config, "background_compile", True)


@pytest.fixture
def held(monkeypatch, background):
    """An event the worker thread waits for before it compiles: the test decides when the code is ready."""
    from symlab.compile.numba import runner

    release = threading.Event()
    load = runner.load_compiled

    def held_load(*args, **kwargs):
        assert release.wait(60), "the test never released the compile"
        return load(*args, **kwargs)

    monkeypatch.setattr(runner, "load_compiled", held_load)
    yield release
    release.set()
