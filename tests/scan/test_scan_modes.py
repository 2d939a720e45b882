"""The loops of PyTensor's tutorial loop.rst, written anew, against NumPy loops in every mode.

loop.rst (pymc-devs/pytensor, ``doc/tutorial/loop.rst``) has eleven scan examples: a map of
``tanh(x W + b)`` over rows, a recurrence reading two sequences (one reversed), row and column norms,
a trace summed over index sequences, a state with taps ``[-2, -1]`` and a symbolic ``n_steps``, a
jacobian whose body calls ``grad``, a shared counter updated by the body, a map multiplied by a
random draw made outside the loop (its generator updated by the caller), ``A ** k`` by repeated
products, and a polynomial evaluated by a map then a sum. Each is written here with our own values;
all of them are outputs of ONE function per mode (one compile each: NumPy, FAST_COMPILE, DEBUG,
NanGuard, MonitorMode and Numba), whose values are checked against plain NumPy loops.
"""

import numpy as np
import pytest

import symlab
import symlab.tensor as st
from symlab.compile.modes import DebugMode
from symlab.compile.monitormode import MonitorMode
from symlab.scan.op import Scan


def monitor_mode():
    """MonitorMode recording the ops it saw run (a Scan node must be among them)."""
    seen = []
    mode = MonitorMode(post_func=lambda fgraph, i, node, fn: seen.append(type(node.op)))
    mode.seen = seen
    return mode


#: DEBUG checks perform twice, shapes, views and every rewrite against the unoptimized graph; its check of each
#: node's Numba kernel (tens of outer nodes, a Numba compile each) is left to the NUMBA case.
MODES = ["NUMPY", "FAST_COMPILE", "DEBUG", "NanGuard", "MonitorMode", pytest.param("NUMBA", marks=pytest.mark.numba)]
#: The loops the NUMBA case compiles, each loop costing seconds of Numba compiling: two taps of a state with a symbolic
#: n_steps, and (as in every case) the shared counter and the generator the caller updates.
NUMBA_EXAMPLES = ("two_taps",)


def loop_examples():
    """loop.rst's eleven loops: (inputs, {example: output}, updates, the shared counter, the generator)."""
    X, W, U, V, P, Y = (st.dmatrix(n) for n in ("X", "W", "U", "V", "P", "Y"))
    b, coefficients, A, v = st.dvector("b"), st.dvector("coefficients"), st.dvector("A"), st.dvector("v")
    n_sym, k, x0 = st.iscalar("n_sym"), st.iscalar("k"), st.dscalar("x0")
    M = st.dmatrix("M")
    out = {}
    # 1. a map over the rows of X, W and b non-sequences read as free variables
    out["map"], _ = symlab.scan(lambda row: st.tanh(st.dot(row, W) + b), sequences=X)
    # 2. a state reading Y forwards and P backwards
    out["recurrence"], _ = symlab.scan(
        lambda y, p, x_tm1: st.tanh(st.dot(x_tm1, W) + st.dot(y, U) + st.dot(p, V)),
        sequences=[Y, P[::-1]], outputs_info=[X[0]])
    # 3, 4. norms of the rows and of the columns
    out["row_norms"], _ = symlab.scan(lambda row: st.sqrt((row ** 2).sum()), sequences=[M])
    out["column_norms"], _ = symlab.scan(lambda col: st.sqrt((col ** 2).sum()), sequences=[M.T])
    # 5. the trace, summed over two index sequences into a scalar state
    traces, _ = symlab.scan(lambda i, j, total: total + M[i, j],
                            sequences=[st.arange(M.shape[0]), st.arange(M.shape[1])],
                            outputs_info=st.constant(np.float64(0.0)))
    out["trace"] = traces[-1]
    # 6. two taps of one state, n_steps symbolic
    out["two_taps"], _ = symlab.scan(
        lambda x_tm2, x_tm1: st.dot(x_tm2, U) + st.dot(x_tm1, V) + st.tanh(st.dot(x_tm1, W) + b),
        n_steps=n_sym, outputs_info=[dict(initial=X[:2], taps=[-2, -1])])
    # 7. the jacobian of tanh(v A'), one grad per row of it
    y = st.tanh(st.dot(v, W))
    out["jacobian"], _ = symlab.scan(lambda i: symlab.grad(y[i], v), sequences=[st.arange(y.shape[0])])
    # 8. a shared counter the body updates
    counter = symlab.shared(np.int64(3), name="counter")
    _, counter_updates = symlab.scan(lambda: {counter: counter + 2}, n_steps=n_sym)
    # 9. a map times a binomial mask drawn once, outside the loop; the caller updates the generator
    rng = st.random.shared_rng(seed=34, name="rng")
    next_rng, mask = rng.binomial(n=1, p=0.5, size=W[1].shape)
    out["masked"] = symlab.scan(lambda row: st.tanh(st.dot(row, W) + b) * mask, sequences=X, return_updates=False)
    # 10. A ** k by k products
    powers, _ = symlab.scan(lambda prior, B: prior * B, outputs_info=st.ones_like(A), non_sequences=A, n_steps=k)
    out["power"] = powers[-1]
    # 11. a polynomial: a map over the coefficients and their powers, then a sum
    terms, _ = symlab.scan(lambda c, power, free: c * free ** power, outputs_info=None,
                           sequences=[coefficients, st.arange(1000)], non_sequences=x0)
    out["polynomial"] = terms.sum()
    updates = dict(counter_updates)
    updates[rng] = next_rng
    inputs = [X, W, U, V, P, Y, b, coefficients, A, v, n_sym, k, x0, M]
    return inputs, out, updates, counter, rng


def numpy_loops(X, W, U, V, P, Y, b, coefficients, A, v, n, k, x0, M, mask):
    """The same eleven loops as NumPy loops."""
    want = {"map": np.array([np.tanh(row @ W + b) for row in X])}
    x, rows = X[0], []
    for t in range(len(Y)):
        x = np.tanh(x @ W + Y[t] @ U + P[len(P) - 1 - t] @ V)
        rows.append(x)
    want["recurrence"] = np.array(rows)
    want["row_norms"] = np.array([np.sqrt(np.sum(r ** 2)) for r in M])
    want["column_norms"] = np.array([np.sqrt(np.sum(M[:, j] ** 2)) for j in range(M.shape[1])])
    want["trace"] = sum(M[i, i] for i in range(min(M.shape)))
    history = [X[0], X[1]]
    for _ in range(n):
        history.append(history[-2] @ U + history[-1] @ V + np.tanh(history[-1] @ W + b))
    want["two_taps"] = np.array(history[2:])
    want["jacobian"] = ((1 - np.tanh(v @ W) ** 2) * W).T
    want["masked"] = np.array([np.tanh(row @ W + b) * mask for row in X])
    power = np.ones_like(A)
    for _ in range(k):
        power = power * A
    want["power"] = power
    want["polynomial"] = sum(c * x0 ** i for i, c in enumerate(coefficients))
    return want


@pytest.mark.parametrize("mode_name", MODES)
def test_loop_rst_examples_against_numpy_loops(mode_name):
    mode = {"MonitorMode": monitor_mode, "DEBUG": lambda: DebugMode(check_numba=False)}.get(mode_name, lambda: mode_name)()
    inputs, out, updates, counter, rng = loop_examples()
    names = list(NUMBA_EXAMPLES if mode_name == "NUMBA" else out)
    f = symlab.function(inputs, [out[n] for n in names], updates=updates, mode=mode, on_unused_input="ignore")
    assert any(isinstance(node.op, Scan) for node in f.maker.fgraph.toposort())
    data = np.random.default_rng(5)
    values = [data.normal(size=(4, 3)) * 0.5 for _ in range(6)]  # X, W, U, V, P, Y
    values[1] = data.normal(size=(3, 3)) * 0.5  # W square: the recurrences feed x back through it
    values[2], values[3] = (data.normal(size=(3, 3)) * 0.5 for _ in range(2))
    b, coefficients = data.normal(size=3), np.array([1.0, 0.0, 2.0, -1.5])
    A, v = np.array([0.5, -1.0, 2.0]), data.normal(size=3)
    M = data.normal(size=(3, 5))
    args = [*values, b, coefficients, A, v, 5, 4, 1.5, M]
    replay = rng.get_value()  # a copy: NumPy replays the draw of the mask from it
    for call in range(2):
        mask = replay.binomial(1, 0.5, size=3).astype(float)
        got = dict(zip(names, f(*args)))
        want = numpy_loops(*args, mask)
        for name in names:
            np.testing.assert_allclose(got[name], want[name], rtol=1e-10, atol=1e-12, err_msg=f"{mode_name}: {name}")
        assert int(counter.get_value()) == 3 + 2 * 5 * (call + 1)  # 5 iterations of +2 per call
    if mode_name == "MonitorMode":
        assert Scan in mode.seen
