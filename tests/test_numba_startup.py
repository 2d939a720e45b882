"""What a fresh process loads to compile: SciPy's BLAS table, without ``scipy.linalg``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.numba

PROGRAM = """
import json, sys
import numpy as np
import symlab, symlab.tensor as st
assert "numba" not in sys.modules and "scipy" not in sys.modules
A, B = st.dmatrices("A", "B")
f = symlab.function([A, B], st.dot(A, B).sum())
a = np.arange(12.0).reshape(3, 4)
value = float(f(a, a.T))
loaded_without_linalg = "scipy.linalg" not in sys.modules
blas = sys.modules["scipy.linalg.cython_blas"]
import scipy.linalg
print(json.dumps({"value": value, "expected": float((a @ a.T).sum()), "without_linalg": loaded_without_linalg,
                  "same_module": scipy.linalg.cython_blas is blas,
                  "linalg_works": bool(np.allclose(scipy.linalg.inv(np.eye(2) * 2), np.eye(2) / 2))}))
"""


@pytest.mark.parametrize("cache", ["cold", "warm"])
def test_dot_compiles_and_runs_without_importing_scipy_linalg(tmp_path, cache):
    env = dict(os.environ, SYMLAB_CACHE_DIR=str(tmp_path))
    runs = 2 if cache == "warm" else 1
    for _ in range(runs):  # the second run loads the cached code
        done = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["value"] == got["expected"]
    assert got["without_linalg"], "Numba's setup imported scipy.linalg"
    assert got["same_module"] and got["linalg_works"]
