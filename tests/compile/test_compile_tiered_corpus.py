"""The whole compile corpus with the tiered default: the NumPy tier, then the machine code, the same bits.

``tests/compile/test_compile_corpus.py`` checks every op family in every mode with the tier chosen (the suite turns
the tiered default off). Here the default is on, as a user has it, and each case is called twice on each
tier: first while the worker thread is held before compiling (the NumPy tier serves), then after the machine
code is ready. The two tiers must give the same bits, NaN where NaN, and the values of the reference.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_compile_corpus import CORPUS, DIFFERENTIAL, SPECIAL_VALUES, UNOPTIMIZED, VALUES

import symlab

pytestmark = pytest.mark.numba


def _as_list(outputs, got):
    return list(got) if isinstance(outputs, list) else [got]


def _same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")


@pytest.mark.parametrize("case", sorted(CORPUS))
def test_corpus_on_both_tiers(case, held):
    inputs, outputs, reference = CORPUS[case]
    args = [VALUES[v.name] for v in inputs]
    before = [a.copy() for a in args]
    f = symlab.function(inputs, outputs)
    held_back = f.tier == "numpy"
    assert held_back or not f.maker.fgraph.apply_nodes  # a graph with nothing to compile is ready at once
    on_numpy = [_as_list(outputs, f(*args)) for _ in range(2)]
    held.set()
    assert f.wait(120) and f.tier == "machine code"
    on_machine_code = [_as_list(outputs, f(*args)) for _ in range(2)]
    expected = reference(*args)
    expected = expected if isinstance(outputs, list) else [expected]
    for got in on_numpy + on_machine_code:
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
    for got in on_numpy[1:] + on_machine_code:
        assert all(_same_bits(g, n) for g, n in zip(got, on_numpy[0])), case
    for a, b in zip(args, before):  # protected inputs are never modified, on either tier
        np.testing.assert_array_equal(a, b)
    assert f.compile_info.calls_before_ready == (2 if held_back else 0)


@pytest.mark.parametrize("case", sorted(DIFFERENTIAL))
def test_nan_and_inf_on_both_tiers(case, held):
    inputs, outputs = DIFFERENTIAL[case]
    args = [SPECIAL_VALUES[v.name] for v in inputs]
    expected = _as_list(outputs, symlab.function(inputs, outputs, mode=UNOPTIMIZED)(*args))
    f = symlab.function(inputs, outputs)
    on_numpy = _as_list(outputs, f(*args))
    held.set()
    assert f.wait(120) and f.tier == "machine code"
    on_machine_code = _as_list(outputs, f(*args))
    for n, m, e in zip(on_numpy, on_machine_code, expected):
        assert _same_bits(n, m), f"{case}: the tiers differ: {n!r} against {m!r}"
        np.testing.assert_allclose(n, e, rtol=1e-10, atol=1e-12, equal_nan=True)
