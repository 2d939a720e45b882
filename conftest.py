"""Every test run (unit tests, doctests, notebooks, browser tests) chooses its compilation tier explicitly.

symlab compiles in tiers by default (``symlab.config.background_compile``): the first calls of a
compiled function run on the NumPy backend while Numba compiles on a worker thread. Which tier serves a
call then depends on timing. The suite turns the default off, here, before symlab is imported, and for
every process it starts (notebook kernels and Jupyter servers inherit the environment); the tests of the
tiered path (``tests/test_compile_background.py``, ``tests/test_compile_tiered_corpus.py``) turn it on
themselves and decide when the machine code becomes ready.
"""

import os

os.environ["SYMLAB_BACKGROUND_COMPILE"] = "0"


def pytest_configure(config):
    import symlab

    symlab.config.background_compile = False
