"""The Numba backend's disk cache across processes, the fallback warning, DebugMode's kernel check,
and that ``import symlab`` does not import Numba."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import symlab
import symlab.tensor as st
from symlab.compile.debugmode import BadThunkOutput
from symlab.compile.numba.kernels import _REGISTRY, Kernel, register_kernel
from symlab.graph import Apply, Op

pytestmark = pytest.mark.numba

SCRIPT = """
import json, sys
import numpy as np
import symlab, symlab.tensor as st
x, y = st.dvectors("x", "y")
out = st.exp(-x ** 2) * st.sin(y) + st.log1p(x * x) * {factor}
f = symlab.function([x, y], out, profile=True)
a, b = np.linspace(0, 1, 5), np.linspace(1, 2, 5)
ok = bool(np.allclose(f(a, b), np.exp(-a ** 2) * np.sin(b) + np.log1p(a * a) * {factor}))
p = f.profile
print(json.dumps({{"hit": p.cache_hit, "reason": p.cache_miss_reason, "ok": ok,
                  "load": p.cache_load_seconds, "compile": p.numba_compile_seconds,
                  "path": f._runner.compile_info.module_path}}))
"""


def run(cache, factor=0.5):
    env = dict(os.environ, SYMLAB_CACHE_DIR=str(cache))
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(factor=factor)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    path = tmp_path_factory.mktemp("cache")
    first = run(path)
    assert first["hit"] is False and first["reason"].startswith("new key") and first["ok"]
    assert first["compile"] > 0
    return path


def test_second_process_hits(cache):
    second = run(cache)
    assert second["hit"] is True and second["reason"] is None and second["ok"]
    assert second["load"] > 0 and second["compile"] == 0


def test_changed_graph_misses(cache):
    other = run(cache, factor=0.25)
    assert other["hit"] is False and other["reason"].startswith("new key") and other["ok"]


@pytest.mark.parametrize("what", ["module", "index", "data"])
def test_corrupted_entry_is_rebuilt(cache, what):
    entry = run(cache)  # a hit: the entry is complete
    module = entry["path"]
    folder = os.path.join(os.path.dirname(module), "__pycache__")
    if what == "module":
        with open(module, "a") as f:
            f.write("garbage = (\n")
    else:
        suffix = ".nbi" if what == "index" else ".nbc"
        files = [os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(suffix)]
        assert files
        for name in files:
            with open(name, "r+b") as f:
                size = os.path.getsize(name)
                f.truncate(size // 2)
    rebuilt = run(cache)
    assert rebuilt["ok"] and rebuilt["hit"] is False
    assert rebuilt["reason"].startswith("corrupted entry"), rebuilt["reason"]
    assert run(cache)["hit"] is True  # repaired


def test_import_symlab_does_not_import_numba():
    code = "import sys, symlab, symlab.tensor; print('numba' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "False", done.stderr


class OnlyPerform(Op):
    """An op with a perform and no Numba kernel."""

    __props__ = ()

    def make_node(self, x):
        x = st.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 3.0


def test_fallback_warns_and_is_correct():
    x = st.dvector("x")
    with pytest.warns(UserWarning, match="OnlyPerform.*has no Numba kernel"):
        f = symlab.function([x], st.exp(OnlyPerform()(st.exp(x) + 1.0)) * 2.0)
    steps = [s.kind for s in f._runner.generated.steps]
    assert "python" in steps and "segment" in steps
    a = np.array([0.0, 0.5])
    np.testing.assert_allclose(f(a), np.exp((np.exp(a) + 1.0) * 3.0) * 2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per op class
        symlab.function([x], OnlyPerform()(x))


class Twice(Op):
    __props__ = ()

    def make_node(self, x):
        x = st.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 2.0


@pytest.fixture
def wrong_kernel():
    @register_kernel(Twice)
    def _wrong(op, node, name):
        return Kernel(name, f"def {name}(x):\n    return x * 3.0\n")

    yield
    del _REGISTRY[Twice]


def test_debug_mode_catches_a_wrong_kernel(wrong_kernel):
    x = st.dvector("x")
    f = symlab.function([x], Twice()(x) + 1.0, mode="DEBUG")
    with pytest.raises(BadThunkOutput, match=r"Twice.*Numba kernel and perform disagree.*perform array\(\[2\.\].*Numba array\(\[3\.\]"):
        f(np.array([1.0]))


def test_debug_mode_passes_on_a_corpus():
    x, y = st.dmatrices("x", "y")
    v = st.dvector("v")
    outs = [st.exp(-x**2) * st.sin(y) + st.log1p(x * x) * 0.5, x.sum(axis=0) + v, st.dot(x, y.T), x.T.reshape((-1,)), (x > y).sum()]
    f = symlab.function([x, y, v], outs, mode="DEBUG")
    rng = np.random.default_rng(0)
    f(rng.normal(size=(3, 4)), rng.normal(size=(3, 4)), rng.normal(size=4))


def test_cache_logging(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("SYMLAB_CACHE_DIR", str(tmp_path))
    x = st.dvector("x")
    with caplog.at_level("DEBUG", logger="symlab.cache"):
        symlab.function([x], x * 7.25)
    assert any("new key" in r.getMessage() for r in caplog.records)


SHARED_KERNELS = """
import json
import numpy as np
import symlab, symlab.tensor as st
x, y = st.dvectors("x", "y")
out = (st.exp(x) * y).sum() * {factor} + st.dot(x, y)
f = symlab.function([x, y], out)
info = f._runner.compile_info
value = float(f(np.linspace(0, 1, 4), np.linspace(1, 2, 4)))
print(json.dumps({{"hit": info.cache_hit, "compiled": info.kernels_compiled, "loaded": info.kernels_loaded,
                  "kernels": len(f._runner.generated.kernels), "value": value}}))
"""


def test_a_new_graph_loads_the_kernels_other_graphs_compiled(tmp_path):
    """Each kernel is a cache entry of its own: a changed graph compiles its new kernels and graph function only."""

    def run_shared(factor):
        env = dict(os.environ, SYMLAB_CACHE_DIR=str(tmp_path))
        code = SHARED_KERNELS.format(factor=factor)
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    a = np.linspace(0, 1, 4)
    b = np.linspace(1, 2, 4)
    first = run_shared(0.5)
    assert first["hit"] is False and first["compiled"] == first["kernels"] >= 3 and first["loaded"] == 0
    changed = run_shared(0.25)  # only the kernel that multiplies by the constant differs
    assert changed["hit"] is False and changed["compiled"] == 1 and changed["loaded"] == changed["kernels"] - 1
    again = run_shared(0.25)  # the graph function compiled with loaded kernels loads and runs
    assert again["hit"] is True and again["compiled"] == 0
    for got, factor in ((first, 0.5), (changed, 0.25), (again, 0.25)):
        assert np.isclose(got["value"], (np.exp(a) * b).sum() * factor + a @ b, rtol=1e-14)


WITHOUT_REFRESH = """
import json
import numpy as np
from numba.core.base import BaseContext
refreshes = []
refresh = BaseContext.refresh
BaseContext.refresh = lambda self: (refreshes.append(1), refresh(self))[1]
import symlab, symlab.tensor as st
x, y = st.dvectors("x", "y")
A = st.dmatrix("A")
fused = symlab.function([x, y], st.exp(-x ** 2) * st.sin(y) + st.log1p(x * x) * 0.5)
products = symlab.function([A, x], [st.dot(A, x).sum(), st.dot(A.T, A)])
softmax = symlab.function([A], st.special.softmax(A, axis=1))
a, b = np.linspace(0, 1, 200_001), np.linspace(1, 2, 200_001)
m = np.arange(12.0).reshape(3, 4) / 10
e = np.exp(m - m.max(axis=1, keepdims=True))
checks = [
    np.array_equal(fused(a, b), np.exp(-a ** 2) * np.sin(b) + np.log1p(a * a) * 0.5),
    np.allclose(products(m, b[:4])[0], (m @ b[:4]).sum()),
    np.allclose(products(m, b[:4])[1], m.T @ m),
    np.allclose(softmax(m), e / e.sum(axis=1, keepdims=True)),
]
fns = (fused, products, softmax)
print(json.dumps({"hits": [f._runner.compile_info.cache_hit for f in fns], "refreshes": len(refreshes),
                  "parallel": "prange" in fused._runner.generated.source, "checks": [bool(c) for c in checks]}))
"""


def test_a_cache_hit_loads_without_refreshing_numba_registries(tmp_path):
    """Loading machine code skips Numba's registry refresh (0.1 s of a warm process), and the code still runs:
    a parallel fused kernel, BLAS products and a sum, a softmax."""

    def run_once():
        env = dict(os.environ, SYMLAB_CACHE_DIR=str(tmp_path))
        done = subprocess.run([sys.executable, "-c", WITHOUT_REFRESH], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    cold = run_once()
    assert cold["hits"] == [False] * 3 and cold["refreshes"] > 0 and all(cold["checks"]) and cold["parallel"]
    warm = run_once()
    assert warm["hits"] == [True] * 3 and all(warm["checks"]), warm
    assert warm["refreshes"] == 0


def test_load_without_refresh_leaves_unknown_caches_alone():
    """A dispatcher without a disk cache, or a cache without the internals the fast load uses, keeps Numba's load."""
    from symlab.compile.numba.cache import load_without_refresh

    class NoCache:
        _cache = None

    class OtherCache:
        def load_overload(self, sig, target_context):
            return "numba's own"

    class Dispatcher:
        _cache = OtherCache()

    assert load_without_refresh(NoCache) is NoCache
    d = Dispatcher()
    assert load_without_refresh(d) is d and d._cache.load_overload(None, None) == "numba's own"
