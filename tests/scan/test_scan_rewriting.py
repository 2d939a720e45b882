"""The structural rewrites of scan (symlab/scan/rewriting.py, rewriting_memory.py): each rule fires where it
should (its step in the trace), changes the graph as it claims, gives the values the loop gives without it, and
leaves alone the loops it must not touch."""

import numpy as np
import pytest

import symlab
import symlab.tensor as st
from symlab.rewriting import rewrite_graph
from symlab.scan import Scan

NUMPY = symlab.get_mode("NUMPY")


def scan_nodes(fg):
    return [n for n in fg.toposort() if isinstance(n.op, Scan)]


def fired(trace, rule):
    return [s for s in trace if s.accepted and s.rule == rule]


def compile_both(inputs, outputs, rule, mode=NUMPY):
    """The function with every rule, and the same without ``rule``."""
    return symlab.function(inputs, outputs, mode=mode), symlab.function(inputs, outputs, mode=mode.excluding(rule))


#: Bodies of elementwise work on sequences keep it inside (to see the other rules on them).
KEEP_SEQ_WORK = NUMPY.excluding("scan_push_out_seq")


def assert_same(f, g, *args):
    for a, b in zip(f(*args), g(*args)) if isinstance(f(*args), list) else [(f(*args), g(*args))]:
        np.testing.assert_allclose(a, b, rtol=1e-12)


def body_ops(node):
    return [str(n.op) for n in node.op.fgraph.toposort()]


# -- scan_push_out_non_seq -------------------------------------------------------------------------------
def test_push_out_non_seq_moves_invariant_computation_out_and_keeps_what_reads_a_state_inside():
    x, w = st.dvector("x"), st.dvector("w")

    def step(v, acc, w):  # exp(w).sum() reads only the non-sequence; tanh(acc) reads the state
        return st.tanh(acc) + v * st.exp(w).sum()

    ys, _ = symlab.scan(step, sequences=x, outputs_info=st.constant(0.0), non_sequences=w)
    f, g = compile_both([x, w], ys, "scan_push_out_non_seq")
    steps = fired(f.trace, "scan_push_out_non_seq")
    assert len(steps) == 1 and "computed once before the loop" in steps[0].reason and "w" in steps[0].reason
    node = scan_nodes(f.maker.fgraph)[0]
    assert not any("exp" in op for op in body_ops(node))  # exp(w) and its sum moved out ...
    assert "tanh" in " ".join(body_ops(node))  # ... tanh(acc) stays
    outer = [str(n.op) for n in f.maker.fgraph.toposort() if not isinstance(n.op, Scan)]
    assert any("exp" in op for op in outer)
    assert any("exp" in op for op in body_ops(scan_nodes(g.maker.fgraph)[0]))  # excluded: inside
    xv, wv = np.array([0.5, -1.0, 2.0, 0.25]), np.array([0.1, -0.3])
    expected, acc = [], 0.0
    for v in xv:
        acc = np.tanh(acc) + v * np.exp(wv).sum()
        expected.append(acc)
    np.testing.assert_allclose(f(xv, wv), expected, rtol=1e-12)
    np.testing.assert_allclose(g(xv, wv), expected, rtol=1e-12)


def test_push_out_non_seq_does_not_fire_on_a_body_of_states_and_sequences_only():
    x = st.dvector("x")
    ys, _ = symlab.scan(lambda v, acc: acc * st.exp(acc) + v, sequences=x, outputs_info=st.constant(0.1))
    _, trace = rewrite_graph(ys, include=("scan_push_out_non_seq",))
    assert not fired(trace, "scan_push_out_non_seq")
    assert any("exp" in op for op in body_ops(scan_nodes(trace.fgraph)[0]))


# -- scan_push_out_seq ------------------------------------------------------------------------------------
def test_push_out_seq_computes_elementwise_work_on_the_whole_sequence_before_the_loop():
    x, w, n = st.dvector("x"), st.dscalar("w"), st.lscalar("n")
    ys, _ = symlab.scan(lambda v, acc, w: acc * 0.5 + st.exp(v) * w, sequences=x, outputs_info=st.constant(0.0),
                        non_sequences=w, n_steps=n)
    f, g = compile_both([x, w, n], ys, "scan_push_out_seq")
    steps = fired(f.trace, "scan_push_out_seq")
    assert steps and "exp(x[t])" in steps[0].reason
    node = scan_nodes(f.maker.fgraph)[0]
    assert not any("exp" in op for op in body_ops(node)) and node.op.info.n_seqs == 1
    assert "exp" in " ".join(body_ops(scan_nodes(g.maker.fgraph)[0]))
    xv = np.array([0.5, -1.0, 2.0, 0.25, 9.0])  # longer than the 3 steps asked: only 3 entries are used
    expected, acc = [], 0.0
    for v in xv[:3]:
        acc = acc * 0.5 + np.exp(v) * 1.5
        expected.append(acc)
    np.testing.assert_allclose(f(xv, 1.5, 3), expected, rtol=1e-12)
    np.testing.assert_allclose(g(xv, 1.5, 3), expected, rtol=1e-12)
    # a node reading the state stays in the loop
    zs, _ = symlab.scan(lambda v, acc: st.exp(acc) * v, sequences=x, outputs_info=st.constant(0.1))
    _, trace = rewrite_graph(zs, include=("scan_push_out_seq",))
    assert not fired(trace, "scan_push_out_seq")


# -- scan_merge ----------------------------------------------------------------------------------------------
def test_push_out_seq_leaves_a_node_whose_type_would_change_outside():
    # found by the loop fuzzer: 2 / a of a float32 a is float32 in the body (a 0-d constant does not upcast),
    # but the same over the stacked sequence would be float64; the node stays in the loop
    g, i = st.fscalar("g"), st.dmatrix("i")
    out, _ = symlab.scan(lambda a, b: st.neq(2 / a, b), sequences=[st.stack([g, g, g])], non_sequences=[i])
    f, g_ = compile_both([g, i], out, "scan_push_out_seq")
    assert not fired(f.trace, "scan_push_out_seq")
    np.testing.assert_array_equal(f(np.float32(2.0), np.ones((2, 2))), np.zeros((3, 2, 2), dtype=bool))
    assert_same(f, g_, np.float32(0.5), np.full((2, 2), 4.0))


def test_scan_merge_makes_one_loop_of_two_over_the_same_steps_and_not_of_dependent_ones():
    x, w = st.dvector("x"), st.dscalar("w")
    sums, _ = symlab.scan(lambda v, acc: acc + v, sequences=x, outputs_info=st.constant(0.0), name="sums")
    prods, _ = symlab.scan(lambda v, acc, w: acc * v + w, sequences=x, outputs_info=st.constant(1.0),
                           non_sequences=w, name="prods")
    squares, _ = symlab.scan(lambda v: v ** 2, sequences=x, name="squares")
    outs = [sums[-1], prods, squares]
    f, g = compile_both([x, w], outs, "scan_merge", KEEP_SEQ_WORK)
    assert len(fired(f.trace, "scan_merge")) == 2
    assert len(scan_nodes(f.maker.fgraph)) == 1 and len(scan_nodes(g.maker.fgraph)) == 3
    merged = scan_nodes(f.maker.fgraph)[0]
    assert merged.op.info.n_states == 2 and merged.op.info.n_mapped == 1
    assert merged.op.info.n_seqs == 1  # the sequence they shared is read once
    assert all(name in str(merged.op) for name in ("sums", "prods", "squares"))
    xv = np.array([1.0, 2.0, -0.5, 3.0])
    for a, b in zip(f(xv, 0.5), g(xv, 0.5)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(f(xv, 0.5)[0], xv.sum())
    # a loop reading another's output is not merged with it
    again, _ = symlab.scan(lambda s, acc: acc + s, sequences=sums, outputs_info=st.constant(0.0))
    h = symlab.function([x], again, mode=NUMPY)
    assert not fired(h.trace, "scan_merge") and len(scan_nodes(h.maker.fgraph)) == 2
    np.testing.assert_allclose(h(xv), np.cumsum(np.cumsum(xv)))


def test_scan_merge_leaves_loops_of_different_lengths_apart():
    x, y = st.dvector("x"), st.dvector("y")
    a, _ = symlab.scan(lambda v: v + 1.0, sequences=x)
    b, _ = symlab.scan(lambda v: v * 2.0, sequences=y)
    f = symlab.function([x, y], [a, b], mode=NUMPY)
    assert not fired(f.trace, "scan_merge") and len(scan_nodes(f.maker.fgraph)) == 2
    ra, rb = f([1.0, 2.0], [3.0, 4.0, 5.0])
    np.testing.assert_allclose(ra, [2.0, 3.0])
    np.testing.assert_allclose(rb, [6.0, 8.0, 10.0])


def test_scan_merge_of_a_mapped_loop_and_a_state_loop_sharing_a_non_sequence_keeps_each_output_its_own():
    # found by the loop fuzzer: the merged node lists states before mapped outputs, and the shared input is
    # read once; each output must still be the value of its own loop
    x, w = st.dvector("x"), st.dvector("w")
    doubled, _ = symlab.scan(lambda v: v * 2.0, non_sequences=[w], n_steps=2)
    summed, _ = symlab.scan(lambda h, v: h + v, outputs_info=x, non_sequences=[w], n_steps=2)
    f, g = compile_both([x, w], [doubled, summed], "scan_merge")
    assert fired(f.trace, "scan_merge") and len(scan_nodes(f.maker.fgraph)) == 1
    got = f(np.zeros(2), np.ones(2))
    np.testing.assert_allclose(got[0], [[2.0, 2.0], [2.0, 2.0]])
    np.testing.assert_allclose(got[1], [[1.0, 1.0], [2.0, 2.0]])
    assert_same(f, g, np.zeros(2), np.ones(2))


# -- scan_save_mem -----------------------------------------------------------------------------------------------
def buffer_length(f, args, output=0):
    """The length of the compiled loop's buffer ``output`` at run time, for input values ``args``."""
    node = scan_nodes(f.maker.fgraph)[0]
    run = symlab.function(f.maker.fgraph.inputs, node.outputs[output], mode=NUMPY.excluding("scan_save_mem"))
    return len(run(*args)), node.op.info.kept


def fib_loop():
    """A state with taps (-2, -1): its buffer starts with a window of 2."""
    init = st.dvector("init")
    n = st.lscalar("n")
    fib, _ = symlab.scan(lambda a, b: a + b, outputs_info=dict(initial=init, taps=[-2, -1]), n_steps=n)
    return init, n, fib


def test_save_mem_keeps_only_the_tail_each_reader_needs():
    init, n, fib = fib_loop()
    window = 2
    buffer = fib.owner.inputs[0]  # scan's output is the buffer without its window: buffer[window:]
    readers = {
        "fib[-1]": (fib[-1], 2),  # at least the window is kept
        "fib[-2]": (fib[-2], 2),
        "fib[-2:]": (fib[-2:], 2),
        "fib[-3:]": (fib[-3:], 3),
        "fib[-4:-1]": (fib[-4:-1], 4),
        "buffer[window:][-1]": (buffer[window:][-1], 2),
        "buffer[-3]": (buffer[-3], 3),
    }
    for label, (out, kept) in readers.items():
        f, g = compile_both([init, n], out, "scan_save_mem")
        assert fired(f.trace, "scan_save_mem"), label
        for steps in (1, 2, 3, 7):  # a loop shorter than the kept tail, and longer
            try:
                expected = g([1.0, 1.0], steps)
            except IndexError:  # fib[-2] of a loop of 1 step: the same error on the shorter buffer
                with pytest.raises(IndexError):
                    f([1.0, 1.0], steps)
                continue
            np.testing.assert_allclose(f([1.0, 1.0], steps), expected, err_msg=f"{label}, n={steps}")
        length, info_kept = buffer_length(f, ([1.0, 1.0], 7))
        assert info_kept == (kept,) and length == kept, label
    f = symlab.function([init, n], fib[-1], mode=NUMPY)
    assert f([1.0, 1.0], 10) == 144.0  # 2, 3, 5, 8, 13, 21, 34, 55, 89, 144
    assert window == fib.owner.inputs[0].owner.op.info.window(0)


def test_save_mem_keeps_the_whole_buffer_when_a_reader_needs_it():
    init, n, fib = fib_loop()
    for out in ([fib, fib[-1]], [fib[0]], [fib.owner.inputs[0][-1], fib.owner.inputs[0]]):
        f = symlab.function([init, n], out, mode=NUMPY)
        assert not fired(f.trace, "scan_save_mem")
        assert scan_nodes(f.maker.fgraph)[0].op.info.kept == (None,)
    f = symlab.function([init, n], [fib, fib[-1]], mode=NUMPY)
    whole, last = f([1.0, 1.0], 5)
    np.testing.assert_allclose(whole, [2.0, 3.0, 5.0, 8.0, 13.0])
    assert last == 13.0


def test_save_mem_keeps_one_entry_of_a_mapped_output_read_at_its_end():
    x = st.dvector("x")
    squares, _ = symlab.scan(lambda v: v ** 2, sequences=x)
    f, g = compile_both([x], squares[-1], "scan_save_mem")
    assert len(fired(f.trace, "scan_save_mem")) == 1
    xv = np.arange(1.0, 7.0)
    assert f(xv) == g(xv) == 36.0
    assert buffer_length(f, (xv,)) == (1, (1,))


# -- scan_remove_unused ----------------------------------------------------------------------------------------------
def test_remove_unused_drops_unread_outputs_states_and_inputs():
    x, w, u = st.dvector("x"), st.dscalar("w"), st.dscalar("u")

    def step(v, a, b, w, w2, u):  # b is never read by a; the mapped output v*3 is never read; u unread
        return a + v * w * w2, b * 2.0 + a, v * 3.0

    (a, b, mapped), _ = symlab.scan(step, sequences=x, outputs_info=[st.constant(0.0), st.constant(1.0), None],
                                    non_sequences=[w, w, u])
    f, g = compile_both([x, w, u], a, "scan_remove_unused", KEEP_SEQ_WORK)
    steps = fired(f.trace, "scan_remove_unused")
    assert steps and "u (not read)" in steps[0].reason and "state out1[t]" in steps[0].reason
    info = scan_nodes(f.maker.fgraph)[0].op.info
    assert (info.n_states, info.n_mapped, info.n_non_seqs) == (1, 0, 1)
    before = scan_nodes(g.maker.fgraph)[0].op.info
    assert (before.n_states, before.n_mapped, before.n_non_seqs) == (2, 1, 3)
    xv = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(f(xv, 2.0, 5.0), np.cumsum(xv * 4.0))
    np.testing.assert_allclose(g(xv, 2.0, 5.0), np.cumsum(xv * 4.0))


def test_remove_unused_keeps_an_unread_state_whose_taps_another_output_reads():
    x = st.dvector("x")
    (a, b), _ = symlab.scan(lambda v, a, b: (a + b, b + v), sequences=x,
                            outputs_info=[st.constant(0.0), st.constant(0.0)])
    f = symlab.function([x], a, mode=NUMPY)
    assert scan_nodes(f.maker.fgraph)[0].op.info.n_states == 2
    xv = np.array([1.0, 2.0, 3.0])
    expected = np.cumsum(np.concatenate([[0.0], np.cumsum(xv)[:-1]]))
    np.testing.assert_allclose(f(xv), expected)


def test_remove_unused_reads_a_value_given_twice_through_one_input():
    from symlab.scan import ScanInfo

    v, p, q = st.dscalar("v"), st.dscalar("p"), st.dscalar("q")
    info = ScanInfo(n_seqs=1, state_taps=(), n_mapped=1, n_untraced=0, n_non_seqs=2)
    op = Scan([v, p, q], [v * p + q], info, name="twice")
    x, w = st.dvector("x"), st.dscalar("w")
    out = op(x.shape[0], x, w, w)
    f, g = compile_both([x, w], out, "scan_remove_unused", KEEP_SEQ_WORK)
    steps = fired(f.trace, "scan_remove_unused")
    assert steps and "non_seq1 (the same value as non_seq0)" in steps[0].reason
    assert scan_nodes(f.maker.fgraph)[0].op.info.n_non_seqs == 1
    xv = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(f(xv, 2.0), xv * 2.0 + 2.0)
    np.testing.assert_allclose(g(xv, 2.0), xv * 2.0 + 2.0)


@pytest.mark.parametrize("rule", ["scan_remove_unused", "scan_push_out_non_seq", "scan_push_out_seq", "scan_merge",
                                  "scan_save_mem"])
def test_each_rule_is_a_named_fast_run_rule_with_a_description(rule):
    from symlab.rewriting.db import default_db

    entry = default_db[rule]
    assert "scan" in entry.tags and "fast_run" in entry.words and "fast_compile" not in entry.tags
    assert entry.rewriter.describe() != rule  # a sentence, not the name again
