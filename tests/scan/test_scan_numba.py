"""Scan on the Numba tier (the whole loop one compiled kernel) and ``scan_inner_graph`` (the body rewritten).

One compiled function holds several loops (each form of sequence, state and output); its values must equal
the NumPy mode's bit for bit. A second, small one has a body op without a kernel: the node falls back to
``perform`` and the reason names the op."""

import warnings

import numpy as np
import pytest

import symlab
import symlab.tensor as st
from symlab.compile.numba.kernels import kernel_for
from symlab.graph.basic import Apply
from symlab.graph.op import Op
from symlab.scan import Scan, ScanError, until
from symlab.tensor.elemwise import Elemwise
from symlab.tensor.random.utils import RandomStream

pytestmark = pytest.mark.numba


def scan_node(var):
    node = var.owner
    while not isinstance(node.op, Scan):
        node = node.inputs[0].owner
    return node


def loops():
    """Inputs and outputs of one graph holding two loops that use every part of the layout, and the shared
    variable the first one updates."""
    x, s, a, w, fib0 = st.dmatrix("x"), st.dvector("s"), st.dvector("a"), st.dvector("w"), st.dvector("fib0")
    limit, n = st.dscalar("limit"), st.lscalar("n")
    count = symlab.shared(np.int64(0), name="count")
    srng = RandomStream(5)

    def mix(x_t, x_next, s_t, f2, f1, h_prev, w):  # sequence taps [0, 1], a mit-sot, a sit-sot, a mapped output
        h = st.tanh(h_prev * w + x_t * 0.5 + x_next * 0.25 + s_t + srng.normal(0.0, 0.1))  # a native draw
        return [f2 + f1, h, h ** 2], {count: count + 1}

    (fib, hs, energies), updates = symlab.scan(
        mix, sequences=[dict(input=x, taps=[0, 1]), s], outputs_info=[dict(initial=fib0, taps=[-2, -1]), a, None],
        non_sequences=w, go_backwards=True, name="mix")  # backwards: the kernel reads reversed (strided) sequences
    doubling, tripled = symlab.scan(lambda v, lim: ([v * 2.0, v * 3.0], until(v * 2.0 > lim)),
                                    outputs_info=[st.constant(1.0), None], non_sequences=limit, n_steps=n,
                                    name="doubling")[0]
    # the while loop keeping only a ring of its last entries (what the save-memory rewrites make)
    node = scan_node(doubling)
    ring_op = node.op.clone_with_inner_graph(node.op.fgraph.clone(), info=node.op.info.replace(kept=(2, 3)))
    ring_doubling, ring_tripled = ring_op.make_node(*node.inputs).outputs
    outputs = [fib, hs, energies, ring_doubling, ring_tripled]
    return [x, s, a, w, fib0, limit, n], outputs, updates, count, (doubling, tripled)


def values():
    rng = np.random.default_rng(3)
    return [rng.normal(size=(10, 4)), rng.normal(size=12), rng.normal(size=4), rng.normal(size=4), np.array([1.0, 1.0]), 100.0, 50]


def test_numba_loops_equal_the_numpy_mode_bit_for_bit(held):
    inputs, outputs, updates, count, (doubling, tripled) = loops()
    (generator,) = [k for k in updates if k is not count]  # the body's draws advance it (a carried value)

    def seeded():
        generator.set_value(np.random.default_rng(11))
        return values()

    numpy_f = symlab.function(inputs, [*outputs, doubling, tripled], updates=updates, mode="NUMPY")
    *expected, doubling, tripled = numpy_f(*seeded())
    assert count.get_value() == 9
    numba_f = symlab.function(inputs, outputs, updates=updates, mode="NUMBA")
    first = numba_f(*seeded())  # the NumPy tier answers while Numba compiles (held until released)
    assert numba_f.tier == "numpy"
    held.set()
    assert numba_f.wait_compiled(300) and numba_f.tier == "machine code", numba_f.compile_info
    info = numba_f.compile_info
    assert info.fallback_ops == [] and info.numpy_ops == {} and info.error is None
    got = numba_f(*seeded())
    after = generator.get_value().normal(size=3)
    assert count.get_value() == 27  # the shared update ran in each of the three calls
    for e, f, g in zip(expected, first, got):
        assert e.shape == g.shape and e.dtype == g.dtype
        np.testing.assert_array_equal(e, f)
        np.testing.assert_array_equal(e, g)
    fib, hs, energies, ring_doubling, ring_tripled = got
    assert fib.tolist() == [2.0, 3.0, 5.0, 8.0, 13.0, 21.0, 34.0, 55.0, 89.0]
    assert doubling.tolist() == [2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0]  # stopped at the first true condition
    assert tripled.tolist() == [3.0, 6.0, 12.0, 24.0, 48.0, 96.0, 192.0]
    assert ring_doubling.tolist() == [64.0, 128.0] and ring_tripled.tolist() == [48.0, 96.0, 192.0]
    # a plain NumPy loop gives the same states
    x, s, a, w = values()[:4]
    h, draws = a, np.random.default_rng(11)
    numpy_f(*seeded())
    np.testing.assert_array_equal(generator.get_value().normal(size=3), after)  # both left it where NumPy leaves it
    for t in range(9):  # backwards: iteration t reads x[9 - t], x[10 - t] and s[8 - t] (the 9 last entries of s)
        h = np.tanh(h * w + x[8 - t] * 0.5 + x[9 - t] * 0.25 + s[11 - t] + draws.normal(0.0, 0.1))
        np.testing.assert_allclose(hs[t], h, rtol=1e-12)
        np.testing.assert_allclose(energies[t], h ** 2, rtol=1e-12)
    # the same input checks and messages as Scan.check_inputs, before any iteration
    for f in (numpy_f, numba_f):
        with pytest.raises(ScanError, match=r"^scan 'doubling': n_steps must be >= 0, received -2\n"):
            f(*values()[:-1], -2)
    assert count.get_value() == 36


class Halve(Op):
    """An op with a perform and no Numba kernel."""

    __props__ = ()

    def make_node(self, v):
        v = st.as_tensor_variable(v)
        return Apply(self, [v], [v.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] / 2.0


def test_a_body_op_without_kernel_makes_the_loop_fall_back_and_says_which():
    x = st.dvector("x")
    out, _ = symlab.scan(lambda v, acc: Halve()(acc) + v, sequences=x, outputs_info=st.constant(0.0), name="halving")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f = symlab.function([x], out, mode="NUMBA")
        assert f.wait_compiled(300)
    assert f.compile_info.fallback_ops == ["Scan{halving}"], f.compile_info.fallback_ops
    said = " ".join(str(w.message) for w in caught)
    assert "scan 'halving': its body's op Halve has no Numba kernel" in said
    v = np.arange(4.0)
    expect = [0.0]
    for e in v:
        expect.append(expect[-1] / 2.0 + e)
    np.testing.assert_array_equal(f(v), expect[1:])


def test_the_body_is_rewritten_and_fused_the_original_left_as_it_was():
    x = st.dvector("x")
    out, _ = symlab.scan(lambda v, acc: st.exp(v) * 2.0 + st.sin(acc) - 1.0, sequences=x, outputs_info=st.constant(0.0))
    original = scan_node(out).op
    before = [str(n.op) for n in original.fgraph.toposort()]
    f = symlab.function([x], out, mode="NUMPY")
    assert "scan_inner_graph" in [s.rule for s in f.trace if s.accepted]
    (node,) = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, Scan)]
    assert node.op.inner_rewritten and node.op.inner_trace is not None
    assert node.op.inner_trace.fgraph is not original.fgraph
    body = node.op.fgraph.toposort()
    assert len(body) == 1 and isinstance(body[0].op, Elemwise) and "Composite" in str(body[0].op)  # fused
    assert [str(n.op) for n in original.fgraph.toposort()] == before and not original.inner_rewritten
    v = np.linspace(0.0, 1.0, 5)
    acc, expect = 0.0, []
    for e in v:
        acc = np.exp(e) * 2.0 + np.sin(acc) - 1.0
        expect.append(acc)
    np.testing.assert_allclose(f(v), expect, rtol=1e-14)


def test_equal_loops_have_equal_kernel_source():
    """The disk cache is keyed by the source of each kernel module: two separately built equal loops (as a new
    process builds them) must give the same source, with no address or counter in it."""

    def source():
        x = st.dvector("x")
        out, _ = symlab.scan(lambda v, acc: acc * 0.5 + v, sequences=x, outputs_info=st.constant(0.0), name="s")
        return kernel_for(scan_node(out), "k0")

    first, second = source(), source()
    assert first.source == second.source and first.globals == second.globals
    assert "id(" not in first.source and "0x" not in first.source


def test_an_error_in_the_compiled_body_names_the_iteration():
    # compiled code cannot say at which iteration its body failed: the call is re-run on the NumPy tier to say it
    m = st.dmatrix("m")
    picked, _ = symlab.scan(lambda row: row[[0, 5]], sequences=m, name="pick")
    f = symlab.function([m], picked, mode="NUMBA")
    assert f.wait_compiled(300)
    np.testing.assert_array_equal(f(np.arange(12.0).reshape(2, 6)), [[0.0, 5.0], [6.0, 11.0]])
    assert f.tier == "machine code"
    with pytest.raises(IndexError) as info:
        f(np.ones((3, 2)))
    notes = "\n".join(info.value.__notes__)
    assert "the machine code raised this; re-run on the NumPy tier" in notes
    assert "scan 'pick' stopped at iteration 0 (of n_steps=3)" in notes
    assert "AdvancedSubtensor" in notes
