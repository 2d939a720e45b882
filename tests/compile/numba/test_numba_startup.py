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


GENERATE = """
import sys
import symlab, symlab.tensor as st
from symlab.compile.function import FunctionMaker
from symlab.compile.numba.graph_source import generate_module
x, w = st.dmatrix("x"), st.dvector("w")
v = st.dvector("v")
chain = v
for k in range(60):  # long enough for the register machine
    chain = st.tanh(chain * 1.01 + st.exp(-chain)) - st.log1p(chain * chain)
graphs = {
    "blocked loops": [st.exp(-v ** 2) * st.sin(v) + st.log1p(v * v) * 0.5],
    "BLAS products and reductions": [symlab.grad(st.softplus(st.dot(x, w)).sum(), w)],
    "softmax": [st.special.softmax(x, axis=1)],
    "register machine": [chain],
}
for name, outputs in graphs.items():
    # NUMPY runs the same rewrites as NUMBA (fast_run) and links without Numba: the graph NUMBA would compile
    fgraph = FunctionMaker([x, w, v], outputs, mode="NUMPY", on_unused_input="ignore").fgraph
    gen = generate_module(fgraph.toposort(), fgraph.inputs, fgraph.outputs)
    keys = [k.module_name for k in gen.kernels if not k.inline]
    kinds = sorted({step.kind for step in gen.steps})
    print(name, "+".join(kinds), all(len(k) == len("symlab_kernel_") + 24 for k in keys), "numba" in sys.modules)
"""


def test_kernel_source_and_cache_keys_are_made_without_importing_numba():
    """What ``symlab.function`` does before a background compile starts must not pay Numba's import."""
    done = subprocess.run([sys.executable, "-c", GENERATE], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert [line.rsplit(" ", 2)[1:] for line in lines] == [["True", "False"]] * 4, lines
    assert lines[-1].startswith("register machine vm"), lines  # the chain did become a register-machine program
