"""``symlab.scan`` on the NumPy backend: each form of sequence, state and output against a NumPy loop,
the updates it returns, and the errors it names before any iteration runs."""

import numpy as np
import pytest

import symlab
import symlab.tensor as st
from symlab.scan import ScanError, ScanInfo, until
from symlab.scan.op import Scan

NUMPY = "NUMPY"


def run(inputs, outputs, *values, updates=None):
    return symlab.function(inputs, outputs, updates=updates, mode=NUMPY)(*values)


def scan_node(var):
    """The Scan node behind an output of ``symlab.scan`` (a state's output is a slice of its buffer)."""
    node = var.owner
    while not isinstance(node.op, Scan):
        node = node.inputs[0].owner
    return node


def test_symlab_scan_is_the_function_and_the_package():
    import symlab.scan.utils

    assert callable(symlab.scan) and symlab.scan.utils.until is until
    assert symlab.scan.scan is symlab.scan.basic.scan


def test_cumulative_sum_state_against_numpy():
    x = st.dvector("x")
    total, updates = symlab.scan(lambda x_t, acc: acc + x_t, sequences=x, outputs_info=st.constant(0.0))
    values = np.random.default_rng(0).normal(size=7)
    np.testing.assert_allclose(run([x], total, values), np.cumsum(values))
    assert updates == {} and isinstance(updates, symlab.scan.OrderedUpdates)


def test_sequence_taps_and_state_taps():
    x = st.dvector("x")
    diff, _ = symlab.scan(lambda xm1, x0, xp1: xp1 - 2 * x0 + xm1, sequences=dict(input=x, taps=[-1, 0, 1]))
    v = np.arange(8.0) ** 3
    np.testing.assert_allclose(run([x], diff, v), v[2:] - 2 * v[1:-1] + v[:-2])
    a = st.dvector("a")
    fib, _ = symlab.scan(lambda f2, f1: f2 + f1, outputs_info=dict(initial=a, taps=[-2, -1]), n_steps=8)
    expect = [1.0, 1.0]
    for _ in range(8):
        expect.append(expect[-2] + expect[-1])
    np.testing.assert_allclose(run([a], fib, np.ones(2)), expect[2:])
    node = scan_node(fib)
    assert node.op.info.state_taps == ((-2, -1),)
    assert node.op.inner_sections(node)[0].extra["input_labels"] == ["a[t-2]", "a[t-1]"]


def test_mapped_outputs_non_sequences_and_shortest_sequence():
    coefficients, x = st.dvector("coefficients"), st.dscalar("x")
    terms, _ = symlab.scan(lambda c, p, x: c * x ** p, sequences=[coefficients, st.arange(10_000)], non_sequences=x)
    c = np.array([1.0, 0.0, 2.0, -1.0])
    np.testing.assert_allclose(run([coefficients, x], terms, c, 3.0), c * 3.0 ** np.arange(4))


def test_several_states_and_mapped_in_one_loop_go_backwards():
    x = st.dvector("x")
    (acc, sq, prod), _ = symlab.scan(lambda v, a, p: (a + v, v * v, p * v), sequences=x,
                                     outputs_info=[st.constant(0.0), None, st.constant(1.0)], go_backwards=True)
    v = np.array([1.0, 2.0, 3.0, 4.0])
    got = run([x], [acc, sq, prod], v)
    np.testing.assert_allclose(got[0], np.cumsum(v[::-1]))
    np.testing.assert_allclose(got[1], v[::-1] ** 2)
    np.testing.assert_allclose(got[2], np.cumprod(v[::-1]))


def test_until_stops_after_the_first_true_iteration():
    x = st.dscalar("x")
    values, _ = symlab.scan(lambda v: (v * 2, until(v * 2 > 50)), outputs_info=x, n_steps=100)
    assert run([x], values, 1.0).tolist() == [2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
    assert scan_node(values).op.info.as_while


def test_shared_update_returned_by_the_body():
    k = symlab.shared(np.int64(0), name="k")
    n = st.iscalar("n")
    result, updates = symlab.scan(lambda: {k: k + 1}, n_steps=n)
    assert result == [] and list(updates) == [k]
    symlab.function([n], [], updates=updates, mode=NUMPY)(5)
    assert k.get_value() == 5


def test_random_stream_inside_the_body_is_an_update_of_the_loop():
    from symlab.tensor.random.utils import RandomStream

    srng = RandomStream(3)
    w = st.dmatrix("w")
    out, updates = symlab.scan(lambda v: v * srng.binomial(1, 0.5, size=v.shape), sequences=w)
    (generator,) = updates
    assert generator.default_update is None  # the loop's update replaces the body's
    f = symlab.function([w], out, updates=updates, mode=NUMPY)
    first, second = f(np.ones((4, 3))), f(np.ones((4, 3)))
    assert first.shape == (4, 3) and set(np.unique(first)) <= {0.0, 1.0}
    assert not np.array_equal(first, second)  # the generator advanced between the calls


def test_errors_name_the_input_before_any_iteration():
    x = st.dvector("x")
    with pytest.raises(TypeError, match=r"returns out0\[t\] of type TensorType\(float32.*state"):
        symlab.scan(lambda v, h: st.cast(h + v, "float32"), sequences=x, outputs_info=st.constant(0.0))
    with pytest.raises(ValueError, match="n_steps must be >= 0, received -2"):
        symlab.scan(lambda v: v, sequences=x, n_steps=-2)
    short, _ = symlab.scan(lambda v: v, sequences=x, n_steps=10)
    with pytest.raises(ScanError, match=r"sequence 0 \(x\[t\]\) has 3 entries, fewer than the 10 iterations"):
        run([x], short, np.arange(3.0))
    n = st.iscalar("n")
    negative, _ = symlab.scan(lambda h: h + 1, outputs_info=st.constant(0.0), n_steps=n)
    with pytest.raises(ScanError, match="n_steps must be >= 0, received -1"):
        run([n], negative, -1)
    with pytest.raises(ValueError, match="taps of output 0 must be negative"):
        symlab.scan(lambda h: h, outputs_info=dict(initial=x, taps=[0]), n_steps=2)


def test_a_failing_iteration_is_named():
    m = st.dmatrix("m")
    picked, _ = symlab.scan(lambda row: row[[0, 5]], sequences=m)
    with pytest.raises(IndexError) as info:
        run([m], picked, np.ones((3, 2)))
    assert any("stopped at iteration 0 (of n_steps=3)" in note for note in info.value.__notes__)


def test_shapes_are_inferred_without_running_the_loop():
    x, w = st.dvector("x"), st.dmatrix("w")
    acc, _ = symlab.scan(lambda v, h: h + v, sequences=x, outputs_info=st.zeros_like(x[0]))
    rows, _ = symlab.scan(lambda v: w @ v, sequences=w.T)
    from symlab.tensor.shape_inference import symbolic_shape

    (length,) = symbolic_shape(acc)
    assert int(length.eval({x: np.ones(6)})) == 6
    shape = symbolic_shape(rows)
    assert [int(s.eval({w: np.ones((2, 5))})) for s in shape] == [5, 2]


def test_ring_buffer_keeps_the_last_entries():
    x = st.dvector("x")
    acc, _ = symlab.scan(lambda v, h2, h1: h1 + h2 * v, sequences=x,
                         outputs_info=dict(initial=st.dvector("h"), taps=[-2, -1]))
    node = scan_node(acc)
    kept = node.op.clone_with_inner_graph(node.op.fgraph.clone(), node.op.info.replace(kept=(2,)))
    v, h = np.arange(1.0, 8.0), np.array([1.0, 2.0])
    full = node.op.perform_steps([np.int64(7), v, h])[0]
    tail = kept.perform_steps([np.int64(7), v, h])[0]
    np.testing.assert_allclose(tail, full[-2:])
    with pytest.raises(ValueError, match=r"kept\[0\] must be None or an int >= 2"):
        ScanInfo(n_seqs=0, state_taps=((-2, -1),), n_mapped=0, n_untraced=0, n_non_seqs=0, kept=(1,))
