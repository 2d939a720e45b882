"""``OpFromGraph`` nodes in the Numba backend: run inside the compiled code, cached on disk, or fall back cleanly.

Each graph is compiled in NUMBA mode with ``inline_small_ofg`` excluded where the op is small, so that the
node stays packaged and its kernel (symlab/compile/numba/kernels_inner_graph.py) is what runs; the tests
check the tier and the steps of the compiled function, not only its values.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from oracle import compile_function

import symlab
import symlab.tensor as st
from symlab.compile.builders import OpFromGraph
from symlab.compile.numba import kernel_source
from symlab.compile.numba.kernels import kernel_for
from symlab.compile.numba.kernels_inner_graph import MAX_EMBEDDED_CONSTANT
from symlab.graph import Apply, Op

pytestmark = pytest.mark.numba

NUMBA = symlab.get_mode("NUMBA").excluding("inline_small_ofg")


def compiled(inputs, outputs, mode=NUMBA):
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # a fallback would not test the kernel
        return symlab.function(inputs, outputs, mode=mode)


def assert_runs_in_machine_code(f, n_ofg=1):
    ofg = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, OpFromGraph)]
    assert len(ofg) == n_ofg, f.maker.fgraph.toposort()
    runner = f._runner
    assert runner.tier == "machine code" and runner.compile_info.fallback_ops == []
    assert runner.generated.single and [s.kind for s in runner.generated.steps] == ["segment"]
    assert all(n in runner.generated.steps[0].nodes for n in ofg)


def rng(seed=0):
    return np.random.default_rng(seed)


def test_several_outputs_run_inside_the_compiled_function():
    x, w = st.dmatrices("x", "w")
    op = OpFromGraph([x, w], [st.tanh(st.dot(x, w)), (x**2).sum(axis=1), x.T], name="layer")
    a, b = st.dmatrices("a", "b")
    h, s, t = op(a, b)
    f = compiled([a, b], [op(h, b)[0] * 2.0, s, t])
    assert_runs_in_machine_code(f, n_ofg=2)
    av, bv = rng().normal(size=(3, 3)), rng(1).normal(size=(3, 3))
    got = f(av, bv)
    ref = compile_function([a, b], [op(h, b)[0] * 2.0, s, t], "NUMPY")(av, bv)
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, rtol=1e-12)
    np.testing.assert_allclose(got[0], np.tanh(np.tanh(av @ bv) @ bv) * 2.0, rtol=1e-12)
    assert not np.shares_memory(got[2], av)  # the transposed input is copied at the boundary


def test_inner_graph_is_rewritten_and_fused_for_numba():
    x, y = st.dvectors("x", "y")
    op = OpFromGraph([x, y], [st.exp(x) * y + st.log(y) - st.tanh(x) * x + st.sqrt(y) * st.dot(x, y)])
    f = compiled([x, y], op(x, y))
    assert_runs_in_machine_code(f)
    (node,) = f.maker.fgraph.toposort()
    inner_ops = [type(n.op).__name__ for n in node.op.fgraph.toposort()]
    assert node.op.inner_rewritten and inner_ops.count("Elemwise") == 1  # fused into one loop
    xv, yv = rng().random(7) + 0.1, rng(1).random(7) + 0.1
    expected = np.exp(xv) * yv + np.log(yv) - np.tanh(xv) * xv + np.sqrt(yv) * (xv @ yv)
    np.testing.assert_allclose(f(xv, yv), expected, rtol=1e-12)


def test_constants_and_shared_variables_inside():
    x = st.dmatrix("x")
    table = st.constant(np.arange(6.0).reshape(2, 3) / 7.0)
    ints = st.constant(np.array([1, 2, 3], dtype="int32"))
    s = symlab.shared(np.array([0.5, 1.5, 2.5]), name="s")
    op = OpFromGraph([x], [(x + table) * s + ints, st.dot(x, table.T) * 3.0])
    f = compiled([x], op(x))
    assert_runs_in_machine_code(f)
    xv = rng().random((2, 3))
    a, b = f(xv)
    tv = np.arange(6.0).reshape(2, 3) / 7.0
    np.testing.assert_allclose(a, (xv + tv) * s.get_value() + [1, 2, 3], rtol=1e-14)
    np.testing.assert_allclose(b, xv @ tv.T * 3.0, rtol=1e-14)
    s.set_value(np.zeros(3))
    np.testing.assert_allclose(f(xv)[0], np.array([[1, 2, 3]] * 2, dtype=float))


def test_nested_opfromgraph_in_machine_code():
    x, y = st.dvectors("x", "y")
    inner = OpFromGraph([x, y], [st.dot(x, y) * x, x - y])
    outer = OpFromGraph([x, y], [inner(x, y)[0] + inner(y, x)[1] * st.dot(x, x)])
    f = compiled([x, y], outer(x, y))
    assert_runs_in_machine_code(f)
    xv, yv = rng().random(4), rng(1).random(4)
    np.testing.assert_allclose(f(xv, yv), (xv @ yv) * xv + (yv - xv) * (xv @ xv), rtol=1e-12)


def test_equal_ops_have_the_same_kernel_source():
    def make(name):
        x, w = st.dmatrices("x" + name, "w" + name)
        return OpFromGraph([x, w], [st.tanh(st.dot(x, w)) + 1.5], name=name)

    a, b = make("a"), make("<b>")
    x, w = st.dmatrices("x", "w")
    ka = kernel_for(a(x, w).owner, "k0")
    kb = kernel_for(b(x, w).owner, "k0")
    assert ka.source == kb.source and ka.globals == kb.globals
    assert "<b>" not in kb.source  # names never enter the code


SCRIPT = """
import json
import numpy as np
import symlab, symlab.tensor as st
from symlab.compile.builders import OpFromGraph
x, w = st.dmatrices("x", "w")
op = OpFromGraph([x, w], [st.tanh(st.dot(x, w)) * st.constant(np.array([[1.0, 2.0]]))])
h = x
for _ in range(3):
    h = op(h, w)
f = symlab.function([x, w], h, mode=symlab.get_mode("NUMBA").excluding("inline_small_ofg"))
info = f._runner.compile_info
xv, wv = np.ones((2, 2)) * 0.1, np.eye(2) * 0.5
print(json.dumps({"hit": info.cache_hit, "reason": info.miss_reason, "tier": f._runner.tier,
                  "single": f._runner.generated.single, "value": f(xv, wv).tolist()}))
"""


def test_disk_cache_serves_a_second_process(tmp_path):
    env = dict(os.environ, SYMLAB_CACHE_DIR=str(tmp_path))
    runs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    first, second = runs
    assert first["hit"] is False and first["reason"].startswith("new key")
    assert second["hit"] is True and second["reason"] is None
    assert first["tier"] == second["tier"] == "machine code" and first["single"] and second["single"]
    h = np.ones((2, 2)) * 0.1
    for _ in range(3):
        h = np.tanh(h @ (np.eye(2) * 0.5)) * np.array([[1.0, 2.0]])
    np.testing.assert_allclose(first["value"], h, rtol=1e-14)
    assert second["value"] == first["value"]


class PythonOnly(Op):
    __props__ = ()

    def make_node(self, x):
        x = st.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 3.0


def test_inner_op_without_kernel_falls_back_to_perform(monkeypatch):
    monkeypatch.setattr(kernel_source, "_warned_ops", set())
    x = st.dvector("x")
    op = OpFromGraph([x], [st.exp(PythonOnly()(x) + st.dot(x, x))], name="uses_python")
    with pytest.warns(UserWarning, match=r"uses_python\{inline=False\}.*inner op PythonOnly"):
        f = symlab.function([x], op(x) * 2.0, mode=NUMBA)
    assert f._runner.compile_info.fallback_ops == ["uses_python{inline=False}"]
    assert [s.kind for s in f._runner.generated.steps] == ["python", "segment"]
    xv = np.array([0.1, 0.2])
    np.testing.assert_allclose(f(xv), np.exp(xv * 3.0 + xv @ xv) * 2.0, rtol=1e-14)
    g = symlab.function([x], op(x) * 2.0, mode=NUMBA, profile=True)
    g(xv)
    assert g._runner.compile_info.fallback_ops == ["uses_python{inline=False}"]
    assert "uses_python{inline=False}" in g.profile.summary()  # its own line: it ran between compiled segments


def test_too_large_constant_falls_back(monkeypatch):
    monkeypatch.setattr(kernel_source, "_warned_ops", set())
    x = st.dvector("x")
    big = st.constant(np.ones(MAX_EMBEDDED_CONSTANT + 1))
    op = OpFromGraph([x], [st.dot(big, big) * x])
    with pytest.warns(UserWarning, match="too large to embed"):
        f = symlab.function([x], op(x), mode=NUMBA.excluding("constant_folding"))
    assert [s.kind for s in f._runner.generated.steps] == ["python"]
    np.testing.assert_allclose(f(np.array([1.0, 2.0])), [MAX_EMBEDDED_CONSTANT + 1.0, 2 * (MAX_EMBEDDED_CONSTANT + 1.0)])


def test_gradient_ops_run_in_machine_code():
    x, y = st.dvectors("x", "y")
    op = OpFromGraph([x, y], [st.exp(x) * st.dot(x, y)], name="f")
    cost = op(x, y).sum()
    gx, gy = symlab.grad(cost, [x, y])
    f = compiled([x, y], [gx, gy])
    assert f._runner.tier == "machine code" and f._runner.generated.single
    assert [str(n.op) for n in f.maker.fgraph.toposort() if isinstance(n.op, OpFromGraph)] == ["f_LOp{inline=False}"]
    xv, yv = rng().random(5), rng(1).random(5)
    d = xv @ yv
    e = np.exp(xv)
    np.testing.assert_allclose(f(xv, yv)[0], e * d + e.sum() * yv, rtol=1e-12)
    np.testing.assert_allclose(f(xv, yv)[1], e.sum() * xv, rtol=1e-12)


def test_unusual_outputs_match_the_numpy_backend():
    """Repeated outputs, constant outputs (0-d and 1-d), an input passed through, integer and boolean results."""
    x, i = st.dvector("x"), st.ivector("i")
    e = st.exp(x) * st.dot(x, x)
    op = OpFromGraph([x, i], [e, e, st.constant(np.array([1.0, 2.0])), st.constant(3.0), x, i * 2, x > 0.5])
    y, j = st.dvector("y"), st.ivector("j")
    f = compiled([y, j], op(y, j))
    assert_runs_in_machine_code(f)
    ref = compile_function([y, j], op(y, j), "NUMPY")
    yv, jv = np.array([0.25, 1.0]), np.array([3, -4], dtype="int32")
    got, expected = f(yv, jv), ref(yv, jv)
    for g, r in zip(got, expected):
        assert g.dtype == r.dtype and g.shape == r.shape
        np.testing.assert_array_equal(g, r)
    assert not np.shares_memory(got[0], got[1]) and not np.shares_memory(got[4], yv)
