"""The register machine that runs very large fused elemwise nodes (``symlab.compile.numba.elemwise_vm``).

The machine must give what the node's NumPy ``perform`` gives, for every op it
has, on both float dtypes, with broadcasting, 0-d, empty and non-contiguous
inputs; run in parallel with the same numbers as serially; go through the disk
cache like graph modules; and leave every other node to the generated loops.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from oracle import REGISTER_MACHINE, assert_same_results, perform

import symlab
import symlab.scalar as ss
import symlab.tensor as st
from symlab.compile.numba import elemwise_vm
from symlab.compile.numba.elemwise_vm import (
    OPCODES,
    VMLoad,
    load_vm,
    supported_ops,
    translate,
    vm_callable,
    vm_program,
)
from symlab.compile.numba.linker import compile_node
from symlab.scalar.basic import scalar_op
from symlab.scalar.composite import Composite
from symlab.tensor.elemwise import Elemwise

pytestmark = pytest.mark.numba


@pytest.fixture
def machine_for_all(monkeypatch):
    """Every Composite runs on the machine, however small."""
    monkeypatch.setattr(elemwise_vm, "VM_MIN_OPS", 1)


def chain_composite(length: int, dtype: str = "float64") -> Composite:
    x, y = ss.get_scalar_type(dtype)("x"), ss.get_scalar_type(dtype)("y")
    v = x
    for k in range(length):
        v = ss.add(ss.mul(ss.sin(v), 0.5), y) if k % 2 else ss.mul(ss.tanh(ss.sub(v, y)), 0.75)
    return Composite([x, y], [v])


def test_translate_reuses_registers_and_shares_constants():
    composite = chain_composite(300)
    program = translate(composite, "float64")
    assert len(program.code) == len(composite.nodes)
    assert sorted(program.constants.tolist()) == [0.5, 0.75]
    # 2 inputs, 2 constants and the few temporaries alive at once: not one register per operation
    assert program.n_registers <= 8
    assert program.ops == {"sin", "mul", "add", "sub", "tanh"}
    assert [OPCODES["tanh"]] == sorted({int(c) for c in program.code[:, 0]} & {OPCODES["tanh"]})


def test_machine_source_is_deterministic_and_holds_only_the_ops_asked_for():
    ops = frozenset({"add", "exp"})
    source = elemwise_vm.vm_source("float64", ops)
    assert source == elemwise_vm.vm_source("float64", ops)
    assert "# add" in source and "# exp" in source and "# sin" not in source
    assert source.count("def vm_run(") == 1 and "nogil=True" in source
    with pytest.raises(ValueError, match="no operations"):
        elemwise_vm.vm_source("float64", frozenset({"lt"}))  # a comparison gives bool, not float64


def _inputs_for(name: str, dtype: str, shape: tuple[int, ...], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    if name in ("arcsin", "arccos"):
        a = rng.uniform(-0.95, 0.95, shape)
    elif name in ("log", "log2", "log10", "sqrt", "gamma", "gammaln", "psi", "pow"):
        a = rng.uniform(0.2, 3.0, shape)
    else:
        a = rng.normal(size=shape) * 2.0
    return [a.astype(dtype), rng.uniform(0.5, 2.0, shape).astype(dtype), rng.normal(size=shape).astype(dtype)]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_every_op_of_the_machine_matches_perform(machine_for_all, dtype):
    """One node computes every op of the machine (one output each): compiled against ``perform``."""
    names = sorted(supported_ops(dtype))
    assert {"add", "mul", "exp", "log1p", "sin", "tanh", "sigmoid", "psi", "clip", "maximum"} <= set(names)
    s = [ss.get_scalar_type(dtype)(n) for n in ("a", "b", "c")]
    outputs = [scalar_op(name)(*s[: scalar_op(name).nin]) for name in names]
    node = Elemwise(Composite(s, outputs))(
        st.TensorType(dtype, (None, None))("x"), st.TensorType(dtype, (1, None))("row"), st.TensorType(dtype, ())("z")
    )[0].owner
    assert vm_program(node) is not None
    run = compile_node(node)
    for name_for_domain in ("exp", "log", "arcsin"):
        full, row, scalar = _inputs_for(name_for_domain, dtype, (3, 5), 1)
        cases = [
            (full, row[:1], scalar[0, 0]),
            (full[::-1, ::-1], row[:1, ::-1], scalar[1, 1]),  # negative strides
            (np.asfortranarray(full), row[:1], scalar[2, 2]),  # not C-contiguous
            (full[:0], row[:1], scalar[0, 1]),  # empty
        ]
        for x, r, z in cases:
            z = np.asarray(z)
            with np.errstate(all="ignore"):
                expected = perform(node, [x, r, z])
                got = run(x, r, z)
            for name, g, e in zip(names, got, expected, strict=True):
                assert_same_results(g, e, REGISTER_MACHINE, what=f"{name} on {dtype}")


def test_zero_d_inputs_and_outputs(machine_for_all):
    x, y = st.dscalars("x", "y")
    f = symlab.function([x, y], st.exp(x) * y + st.sin(y) - 1.0)
    assert f.maker.runner.compile_info.vm_nodes == 1
    got = f(0.5, 2.0)
    assert got.shape == () and np.isclose(got, np.exp(0.5) * 2.0 + np.sin(2.0) - 1.0, rtol=1e-15)


def test_runtime_broadcast_is_refused_like_the_generated_kernels(machine_for_all):
    x, y = st.dmatrices("x", "y")
    f = symlab.function([x, y], st.exp(x) + st.sin(y))
    assert f.maker.runner.compile_info.vm_nodes == 1
    with pytest.raises(ValueError, match="do not match in dimension 0"):
        f(np.ones((3, 2)), np.ones((1, 2)))


def test_threaded_run_gives_the_same_numbers_as_one_thread(monkeypatch):
    composite = chain_composite(40)
    node = Elemwise(composite)(st.dvector("x"), st.dvector("y")).owner
    program = translate(composite, "float64")
    machine = load_vm("float64", program.ops)
    ranges = []

    def recording(*args):
        ranges.append(args[-2:])
        return machine.function(*args)

    recorded = VMLoad(recording, False, 0.0, None)
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=50_001), rng.normal(size=50_001)
    monkeypatch.setattr(elemwise_vm, "_thread_count", lambda: 3)
    monkeypatch.setattr(elemwise_vm, "PARALLEL_MIN_WORK", 1 << 62)
    one_thread = vm_callable(node, program, recorded)(x, y)[0]
    assert len(ranges) == 1
    ranges.clear()
    monkeypatch.setattr(elemwise_vm, "PARALLEL_MIN_WORK", 0)
    threaded = vm_callable(node, program, recorded)(x, y)[0]
    assert len(ranges) == 3  # three disjoint ranges of blocks that cover them all
    starts, stops = sorted(r[0] for r in ranges), sorted(r[1] for r in ranges)
    assert starts[0] == 0 and starts[1:] == stops[:-1]
    np.testing.assert_array_equal(threaded, one_thread)
    assert_same_results(one_thread, perform(node, [x, y])[0], REGISTER_MACHINE)


def test_a_long_chain_runs_on_the_machine_and_agrees_with_numpy_mode():
    """Above VM_MIN_OPS (the default), a fused chain is one machine node; everything else is unchanged."""
    a, b, x = st.dvectors("a", "b", "x")
    u, v = a, b
    for _ in range(30):  # 30 steps of 7 elemwise ops: one fused node of about 210 scalar ops
        u, v = st.tanh(st.sin(u) * 0.5 + st.cos(v) * 0.25 + x) * 0.9, (st.sin(u) * 0.5 - st.cos(v) * 0.25) * 0.9
    out = (u + v).sum()  # the reduction stays a generated kernel
    f = symlab.function([a, b, x], out, profile=True)
    ref = symlab.function([a, b, x], out, mode="NUMPY")
    info = f.maker.runner.compile_info
    assert info.vm_nodes == 1
    kinds = [step.kind for step in f.maker.runner.generated.steps]
    assert "vm" in kinds and "segment" in kinds
    rng = np.random.default_rng(1)
    args = [rng.normal(size=257) for _ in range(3)]
    np.testing.assert_allclose(f(*args), ref(*args), rtol=1e-12)
    assert f.profile.nodes[[n.op for n in f.maker.runner.nodes].index(f.maker.runner.generated.steps[kinds.index("vm")].nodes[0].op)].calls == 1


def test_mixed_dtypes_and_small_fusions_keep_the_generated_loop(machine_for_all):
    x = st.dvector("x")
    i = st.lvector("i")
    node = (st.exp(x) * st.cast(i, "float64")).owner  # an int64 input: not for the machine
    fused = symlab.function([x, i], st.exp(x) * st.cast(i, "float64") + 1.0)
    assert fused.maker.runner.compile_info.vm_nodes == 0
    assert vm_program(node) is None
    np.testing.assert_allclose(fused(np.ones(3), np.arange(3)), np.exp(1.0) * np.arange(3) + 1.0)


def test_debug_mode_checks_the_machine_against_perform(machine_for_all):
    x, y = st.dvectors("x", "y")
    f = symlab.function([x, y], st.exp(x) * st.log1p(y * y) + 0.5, mode="DEBUG")
    np.testing.assert_allclose(f(np.arange(4.0), np.ones(4)), np.exp(np.arange(4.0)) * np.log1p(1.0) + 0.5)


SCRIPT = r"""
import json, sys
import numpy as np
import symlab, symlab.tensor as st
from symlab.compile.numba import elemwise_vm
elemwise_vm.VM_MIN_OPS = 1
x, y = st.dvectors("x", "y")
f = symlab.function([x, y], st.tanh(st.exp(x) * y) - st.cos(y))
info = f.maker.runner.compile_info
value = f(np.arange(3.0), np.ones(3))
print("RESULT " + json.dumps({"hit": info.cache_hit, "reason": info.miss_reason, "vm": info.vm_nodes,
                              "compile": info.numba_compile_seconds, "value": value.tolist()}))
"""


def _run_in_fresh_process(cache: str) -> dict:
    import json

    env = {**os.environ, "SYMLAB_CACHE_DIR": cache}
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    line = [s for s in done.stdout.splitlines() if s.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT ") :])


def test_the_machine_goes_through_the_disk_cache_and_survives_corruption(tmp_path):
    expected = (np.tanh(np.exp(np.arange(3.0))) - np.cos(1.0)).tolist()
    first = _run_in_fresh_process(str(tmp_path))
    assert first["vm"] == 1 and first["hit"] is False and "register machine" in first["reason"]
    assert first["compile"] > 0
    second = _run_in_fresh_process(str(tmp_path))
    assert second["hit"] is True and second["compile"] == 0.0
    np.testing.assert_allclose(first["value"], expected, rtol=1e-15)
    assert second["value"] == first["value"]
    damaged = 0
    for index in tmp_path.glob("*/__pycache__/*.nbi"):
        index.write_bytes(b"not a pickle")
        damaged += 1
    assert damaged
    third = _run_in_fresh_process(str(tmp_path))
    assert third["hit"] is False and "corrupted" in third["reason"]
    assert third["value"] == first["value"]
