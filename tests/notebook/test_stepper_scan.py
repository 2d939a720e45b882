"""RewriteStepper and scan (no browser): the structural rewrites of a loop are steps like any other, and
``step_into`` a Scan node steps through the rewrite of its body (as for an OpFromGraph), ending on the body the
compiled function runs, with the op and the function's graph unchanged."""

import numpy as np

import symlab
import symlab.tensor as st
from symlab.graph.traversal import equal_computations
from symlab.notebook.stepper import RewriteStepper
from symlab.scan import Scan
from tests.inner_graph_helpers import inner_fingerprint


def key_of_scan(stepper):
    """The key of the first Scan node at the stepper's current step."""
    cursor = stepper._cursor
    cursor.seek(stepper.step)
    return next(cursor.key(n) for n in cursor.fgraph.toposort() if isinstance(n.op, Scan))


def rnn():
    x, w = st.dvector("x"), st.dscalar("w")
    ys, _ = symlab.scan(lambda v, h, w: st.tanh(h) * 1.0 + v * st.exp(w), sequences=x,
                        outputs_info=st.constant(0.0), non_sequences=w, name="rnn")
    return x, w, ys


def test_the_scan_rules_are_steps_and_step_into_a_scan_steps_through_its_body_rewrite():
    x, w, ys = rnn()
    written = ys.owner.inputs[0].owner.op
    before = inner_fingerprint(written.inner_outputs)
    f = symlab.function([x, w], ys[-1], mode="NUMPY")
    compiled_graph = inner_fingerprint(list(f.maker.fgraph.outputs))
    stepper = RewriteStepper(f)
    for rule in ("scan_push_out_non_seq", "scan_remove_unused", "scan_save_mem", "scan_inner_graph"):
        k = stepper.find(rule, start=0)
        assert k is not None and stepper.trace.step(k).accepted, rule
    k = stepper.find("scan_push_out_non_seq", start=0)
    stepper.step = k
    assert "exp(w)" in stepper.trace.step(k).reason  # what was pushed out, said with the body's labels
    # at step 0 the body has not been rewritten: step_into rewrites a copy of it with the function's rules
    stepper.step = 0
    key = key_of_scan(stepper)
    stepper.expand(key)
    inner = stepper.step_into(key)
    inner.step = inner.total
    assert inner.parent is stepper and inner.depth == 1 and inner.total >= 1
    assert [str(n.op) for n in inner.trace.graph_at(0).toposort()] == [str(n.op) for n in written.fgraph.toposort()]
    assert "mul_one" in [s.rule for s in inner.trace if s.accepted]  # tanh(h) * 1.0 inside the loop
    # at the last step the node holds the op scan_inner_graph made: its rewrite is the one stepped through
    stepper.step_out()
    stepper.step = stepper.total
    again = stepper.step_into(key_of_scan(stepper))
    compiled = next(n.op for n in f.maker.fgraph.toposort() if isinstance(n.op, Scan))
    assert again.trace is compiled.inner_trace
    final = again.trace.fgraph
    assert equal_computations(final.outputs, compiled.fgraph.outputs, final.inputs, compiled.fgraph.inputs)
    assert inner_fingerprint(written.inner_outputs) == before  # the op as written never changed
    assert inner_fingerprint(list(f.maker.fgraph.outputs)) == compiled_graph  # nor the function's graph
    xv = np.array([0.5, -1.0, 2.0])
    h = 0.0
    for v in xv:
        h = np.tanh(h) + v * np.exp(0.3)
    np.testing.assert_allclose(f(xv, 0.3), h)


def test_an_open_scan_stays_open_when_two_loops_are_merged_into_one():
    x = st.dvector("x")
    sums, _ = symlab.scan(lambda v, acc: acc + v, sequences=x, outputs_info=st.constant(0.0), name="sums")
    prods, _ = symlab.scan(lambda v, acc: acc * v, sequences=x, outputs_info=st.constant(1.0), name="prods")
    stepper = RewriteStepper(symlab.function([x], [sums, prods], mode="NUMPY"))
    key = key_of_scan(stepper)
    stepper.expand(key)
    k = stepper.find("scan_merge", start=0)
    assert k is not None
    stepper.step = k
    merged = key_of_scan(stepper)
    assert merged != key and stepper.open_inner == [key]
    assert {s.owner for s in stepper._pictures["after"][0].sections} == {merged}  # drawn open after the merge
