"""The set-up of every test run (unit tests, doctests, notebooks, browser tests).

A private disk cache and signing key: each pytest process (each xdist worker too) gets its own
temporary ``SYMLAB_CACHE_DIR``, shared by every test of the process (compiled graphs are loaded, not
recompiled, when a test compiles a graph another test compiled), and its own ``SYMLAB_SECRET_FILE``, the
key that signs the cache's entries (kept outside the cache, where symlab refuses it); both are removed at
the end. The user's ``~/.cache/symlab`` and ``~/.config/symlab`` are never touched. Notebook kernels and
Jupyter servers started by the tests inherit both.

The tier, chosen explicitly.

symlab compiles in tiers by default (``symlab.config.background_compile``): the first calls of a
compiled function run on the NumPy backend while Numba compiles on a worker thread. Which tier serves a
call then depends on timing. The suite turns the default off, here, before symlab is imported, and for
every process it starts (notebook kernels and Jupyter servers inherit the environment); the tests of the
tiered path (``tests/compile/test_compile_background.py``, ``tests/compile/test_compile_tiered_corpus.py``) turn it on
themselves and decide when the machine code becomes ready.
"""

import os
import shutil
import tempfile

os.environ["SYMLAB_BACKGROUND_COMPILE"] = "0"

_created: list[str] = []


def pytest_configure(config):
    cache = tempfile.mkdtemp(prefix="symlab-test-cache-")
    secret = tempfile.mkdtemp(prefix="symlab-test-secret-")
    _created.extend([cache, secret])
    os.environ["SYMLAB_CACHE_DIR"] = cache
    os.environ["SYMLAB_SECRET_FILE"] = os.path.join(secret, "cache_secret")

    import symlab

    symlab.config.background_compile = False


def pytest_unconfigure(config):
    for path in _created:
        shutil.rmtree(path, ignore_errors=True)
