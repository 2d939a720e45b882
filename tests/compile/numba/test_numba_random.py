"""Random variables on the Numba tier: NumPy's bits, the generator's state, updates, copies, tiers and the cache.

Every distribution of ``symlab.tensor.random.basic.__all__`` is drawn in one graph (a chain of draws through one
shared generator), compiled once with ``mode="NUMBA"`` and once with ``mode="NUMPY"``: the draws are equal bit for
bit and the generators end in the same state. The draws Numba gives natively (``kernels_random.NATIVE``) run in
compiled code; the others run on NumPy by design, said by ``compile_info.numpy_ops`` and the profile, unwarned.
"""

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
from symlab.compile.io import In
from symlab.compile.numba import kernels_random
from symlab.compile.numba.kernels import RunsOnNumpy
from symlab.tensor.random import basic
from symlab.tensor.random.op import RandomVariable
from symlab.tensor.random.type import random_generator_type
from symlab.tensor.random.variable import rng as rng_variable
from symlab.tensor.random.variable import shared_rng

pytestmark = pytest.mark.numba

R = np.random.default_rng(2024)
COL = R.uniform(0.5, 3.0, (3, 1))  # broadcast against ROW: a (3, 4) draw, parameters read element by element
ROW = np.array([[0.3, 0.9, 1.0, 4.5]])
PROB = np.array([[0.0, 0.2, 0.7, 1.0]])
SIZE = (2, 3, 4)


def _cases(rng):
    """``{name in basic.__all__: [(label, draw), ...]}``: draws of every distribution, chained through ``rng``.

    Each draw takes the generator the previous one returned; ``rng`` is then the last next generator.
    """
    state = {"rng": rng}
    out: dict[str, list] = {}

    def draw(name, label, make):
        next_rng, x = make(state["rng"])
        state["rng"] = next_rng
        out.setdefault(name, []).append((label, x))

    def rv(name, *params, with_size=False):
        """Draws of ``name``: parameters broadcast together (and, ``with_size``, broadcast to ``SIZE`` too: the
        kernels of the others differ from these only by the draw's expression, so a few are enough)."""
        op = getattr(basic, name)
        for label, size in (("broadcast", None), ("size", SIZE))[: 2 if with_size else 1]:
            draw(name, label, lambda r, size=size: op(*params, size=size, rng=r, return_next_rng=True))

    rv("normal", COL - 2.0, ROW, with_size=True)
    rv("uniform", COL - 2.0, COL + ROW, with_size=True)
    rv("triangular", np.zeros((3, 1)), ROW * 0.2, COL + 1.0)
    rv("beta", ROW, COL)
    rv("halfnormal", COL, ROW)
    rv("lognormal", COL - 1.0, ROW)
    rv("_gamma", ROW, COL)
    rv("standard_gamma", ROW)
    rv("invgamma", COL, ROW)
    rv("pareto", COL, ROW)
    rv("gumbel", COL, ROW)
    rv("exponential", ROW)
    rv("weibull", ROW)
    rv("logistic", COL, ROW)
    rv("vonmises", COL, ROW)
    rv("cauchy", COL, ROW)
    rv("halfcauchy", COL, ROW)
    rv("wald", COL, ROW)
    rv("t", COL * 2.0, ROW, COL)
    rv("laplace", COL, ROW)
    rv("poisson", np.array([[0.5, 3.0, 9.99, 10.0], [12.0, 50.0, 0.0, 1e4], [1.0, 2.0, 30.0, 7.0]]), with_size=True)
    rv("geometric", np.array([[0.05, 0.5, 1.0, 0.9]]))
    rv("hypergeometric", np.array([[5, 10, 1, 8]]), np.array([[7], [3], [0]]), np.array([[4], [2], [1]]))
    rv("bernoulli", PROB, with_size=True)
    rv("binomial", np.array([[0, 5, 40, 1000]]), COL / 4.0, with_size=True)
    rv("negative_binomial", ROW * 3, np.array([[0.1], [0.5], [1.0]]))
    rv("nbinom", COL, np.array([[0.3, 0.6, 0.9, 1.0]]))
    rv("integers", np.array([[0], [-5], [3]]), np.array([[10, 12, 2**40, 7]]), with_size=True)
    # One n and p (the set-up of NumPy's binomial made once): inversion, on 1 - p, BTPE, nothing drawn, p = 1.
    for n, p in ((1, 0.8), (5, 0.3), (100, 0.9), (40, 0.5), (0, 0.5), (3, 0.0), (4, 1.0)):
        draw("binomial", f"n={n}, p={p}", lambda r, n=n, p=p: basic.binomial(n, p, size=SIZE, rng=r,
                                                                              return_next_rng=True))
    for p in (0.8, 0.0, 1.0):
        draw("bernoulli", f"p={p}", lambda r, p=p: basic.bernoulli(p, size=SIZE, rng=r, return_next_rng=True))
    draw("gamma", "scale", lambda r: basic.gamma(ROW, scale=COL, rng=r, return_next_rng=True))
    draw("chisquare", "df", lambda r: basic.chisquare(ROW * 3, rng=r, return_next_rng=True))
    draw("standard_normal", "size", lambda r: basic.standard_normal(size=SIZE, rng=r, return_next_rng=True))
    draw("categorical", "p", lambda r: basic.categorical(np.array([0.2, 0.5, 0.3]), size=5, rng=r, return_next_rng=True))
    draw("dirichlet", "alphas", lambda r: basic.dirichlet(np.array([[0.05, 1.0, 3.0], [2.0, 2.0, 0.5]]), rng=r,
                                                          return_next_rng=True))
    draw("multinomial", "n, p", lambda r: basic.multinomial(10, np.array([0.2, 0.5, 0.3]), size=2, rng=r,
                                                            return_next_rng=True))
    draw("multivariate_normal", "mean, cov", lambda r: basic.multivariate_normal(
        np.array([1.0, -1.0]), np.array([[2.0, 0.5], [0.5, 1.0]]), size=3, rng=r, return_next_rng=True))
    draw("choice", "replace=False", lambda r: basic.choice(10, size=4, replace=False, rng=r, return_next_rng=True))
    draw("choice", "p", lambda r: basic.choice(np.arange(5.0), size=3, p=np.full(5, 0.2), rng=r, return_next_rng=True))
    draw("permutation", "x", lambda r: basic.permutation(np.arange(6.0), rng=r, return_next_rng=True))
    for name in ("normal", "_gamma"):  # a float32 draw is float64's, rounded
        params = {"normal": (COL, ROW), "_gamma": (ROW, COL)}[name]
        op = getattr(basic, name)
        draw(name, "float32", lambda r, op=op, params=params: op(*params, rng=r, dtype="float32", return_next_rng=True))
    return out, state["rng"]


def _distributions():
    """The public distributions of ``basic.__all__``: every RandomVariable instance and distribution function."""
    names = set()
    for name in basic.__all__:
        obj = getattr(basic, name)
        if isinstance(obj, RandomVariable) or (callable(obj) and not isinstance(obj, type)):
            names.add(name)
    return names


def _compile(mode, updates=True, seed=11):
    rng = shared_rng(np.random.default_rng(seed), name="rng")
    cases, last = _cases(rng)
    labels = [(name, label) for name, draws in cases.items() for label, _ in draws]
    outputs = [x for draws in cases.values() for _, x in draws]
    f = symlab.function([], outputs, updates={rng: last} if updates else None, mode=mode, profile=mode == "NUMBA")
    return f, rng, labels


@pytest.fixture(scope="module")
def both_modes():
    """The graph of every distribution compiled in both modes, each on its own generator seeded alike."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = _compile("NUMBA")
    reference = _compile("NUMPY")
    return compiled, reference, [str(w.message) for w in caught]


def test_every_distribution_is_drawn():
    """A distribution added to ``basic.__all__`` must be added to ``_cases`` (a new one is not silently skipped)."""
    rng = shared_rng(np.random.default_rng(0))
    cases, _ = _cases(rng)
    assert _distributions() - set(cases) == set(), "draw the new distributions in _cases"


def test_numba_gives_numpys_bits_and_state(both_modes):
    (f, rng_f, labels), (g, rng_g, _), _ = both_modes
    for call in range(2):  # the second call draws from the states the first left: the updates advance them
        got, want = f(), g()
        for (name, label), a, b in zip(labels, got, want, strict=True):
            assert a.dtype == b.dtype and a.shape == b.shape, (name, label)
            assert np.array_equal(a, b, equal_nan=True), f"call {call}: {name} ({label}) differs between the tiers"
        assert random_generator_type.values_eq(rng_f.get_value(), rng_g.get_value()), f"state after call {call}"
    first = np.random.default_rng(11)
    assert not random_generator_type.values_eq(rng_f.get_value(), first)  # they did advance


def test_native_draws_run_in_compiled_code_and_the_others_are_reported(both_modes):
    (f, _rng, _labels), _, messages = both_modes
    runner = f.maker.runner
    on_numpy = {str(node.op) for step in runner.generated.steps if step.kind == "python" for node in step.nodes}
    expected = set()
    for node in f.maker.fgraph.toposort():
        if isinstance(node.op, RandomVariable):
            try:
                kernels_random.native_draw(node.op)
            except RunsOnNumpy:
                expected.add(str(node.op))
    assert on_numpy == expected == set(f.compile_info.numpy_ops)
    names = {op.split("_rv")[0] for op in expected}
    assert {"normal", "uniform", "binomial", "poisson", "beta", "gamma", "exponential", "integers",
            "bernoulli"}.isdisjoint(names)  # the scalar distributions are native
    assert {"multivariate_normal", "dirichlet", "multinomial", "categorical"} <= names
    assert all(why and "runs on NumPy" in why for why in f.compile_info.numpy_ops.values())
    assert f.compile_info.fallback_ops == []
    assert not [m for m in messages if "has no Numba kernel" in m]  # by design: not warned
    assert "on NumPy by design" in f.profile.summary() and "multivariate_normal" in f.profile.summary()


def test_without_updates_the_shared_generator_keeps_its_state():
    rng = shared_rng(np.random.default_rng(3), name="rng")
    x = basic.normal(COL, ROW, rng=rng)
    y = basic.poisson(4.0, size=5, rng=rng)
    f = symlab.function([], [x, y], mode="NUMBA")
    assert f.maker.runner.generated.private_copies  # the compiled draws advance copies made by the runner
    first, second = f(), f()
    for a, b in zip(first, second):
        assert np.array_equal(a, b)
    assert random_generator_type.values_eq(rng.get_value(), np.random.default_rng(3))
    assert np.array_equal(first[0], np.random.default_rng(3).normal(COL, ROW))
    assert np.array_equal(first[1], np.random.default_rng(3).poisson(4.0, 5))  # each draw from the same state


def test_mutable_input_advances_the_callers_generator_and_a_protected_one_is_copied():
    r = rng_variable("r")
    next_r, x = basic.uniform(0.0, 1.0, size=4, rng=r, return_next_rng=True)
    advancing = symlab.function([In(r, mutable=True)], x, mode="NUMBA")
    protected = symlab.function([r], x, mode="NUMBA")
    mine, reference = np.random.default_rng(8), np.random.default_rng(8)
    assert np.array_equal(protected(mine), reference.uniform(0.0, 1.0, 4))
    assert random_generator_type.values_eq(mine, np.random.default_rng(8))  # a protected input is not advanced
    reference = np.random.default_rng(8)
    assert np.array_equal(advancing(mine), reference.uniform(0.0, 1.0, 4))
    assert np.array_equal(advancing(mine), reference.uniform(0.0, 1.0, 4))
    assert random_generator_type.values_eq(mine, reference)


def test_bad_parameter_raises_before_drawing_in_both_tiers():
    scale = st.dvector("scale")
    rng_n = shared_rng(np.random.default_rng(1), name="rng")
    next_rng, x = basic.normal(0.0, scale, rng=rng_n, return_next_rng=True)
    for mode in ("NUMBA", "NUMPY"):
        f = symlab.function([scale], x, updates={rng_n: next_rng}, mode=mode)
        with pytest.raises(ValueError, match="scale"):
            f(np.array([1.0, -1.0, 2.0]))
        assert random_generator_type.values_eq(rng_n.get_value(), np.random.default_rng(1)), mode
    with pytest.raises(ValueError, match="broadcast"):  # a parameter that does not broadcast to size
        n = st.dvector("n")
        h = symlab.function([n], basic.normal(n, 1.0, size=(2, 3), rng=rng_n), mode="NUMBA")
        h(np.ones(4))


def test_tiered_compile_gives_the_same_sequence_across_the_switch(held):
    rng = shared_rng(np.random.default_rng(21), name="rng")
    next_rng, x = basic.normal(0.0, 1.0, size=3, rng=rng, return_next_rng=True)
    f = symlab.function([], x, updates={rng: next_rng}, mode="NUMBA")
    reference = np.random.default_rng(21)
    assert f.tier == "numpy"
    for _ in range(2):
        assert np.array_equal(f(), reference.normal(0.0, 1.0, 3))
    held.set()
    assert f.wait(120) and f.tier == "machine code"
    for _ in range(2):
        assert np.array_equal(f(), reference.normal(0.0, 1.0, 3))
    assert f.compile_info.calls_before_ready == 2
    assert random_generator_type.values_eq(rng.get_value(), reference)


SCRIPT = """
import json
import numpy as np
import symlab
from symlab.tensor.random.basic import binomial, normal
from symlab.tensor.random.variable import rng as rng_variable
from symlab.tensor.random.variable import shared_rng
symlab.config.background_compile = False
rng = shared_rng(np.random.default_rng(4), name="rng")
r1, x = normal(0.5, 2.0, size=4, rng=rng, return_next_rng=True)
r2, y = binomial(10, 0.3, size=4, rng=r1, return_next_rng=True)
f = symlab.function([], [x, y], updates={rng: r2}, mode="NUMBA")
g = symlab.function([], x, mode="NUMBA")
ref = np.random.default_rng(4)
ok = True
for _ in range(3):
    a, b = f()
    ok = ok and np.array_equal(a, ref.normal(0.5, 2.0, 4)) and np.array_equal(b, ref.binomial(10, 0.3, 4))
same = np.random.default_rng(0)
same.bit_generator.state = rng.get_value().bit_generator.state  # g draws from a copy of the state f left
expected = same.normal(0.5, 2.0, 4)
ok = ok and np.array_equal(g(), expected) and np.array_equal(g(), expected)
print(json.dumps({"hit": [f.compile_info.cache_hit, g.compile_info.cache_hit], "ok": bool(ok)}))
"""


def test_disk_cache_reloads_a_random_graph(tmp_path):
    """A fresh process loads the machine code of a graph drawing random numbers and gives NumPy's numbers."""
    env = dict(os.environ, SYMLAB_CACHE_DIR=str(tmp_path))
    runs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert runs[0] == {"hit": [False, False], "ok": True}
    assert runs[1] == {"hit": [True, True], "ok": True}


def test_a_copy_of_a_computed_generator_is_drawn_by_perform():
    """A draw that is not inplace from a generator another node computes: only perform can copy it mid-run."""
    rng = shared_rng(np.random.default_rng(6), name="rng")
    r1, x = basic.normal(0.0, 1.0, size=3, rng=rng, return_next_rng=True)
    y = basic.uniform(0.0, 1.0, size=2, rng=r1)  # r1 is an output too: y's draw must not advance it
    f = symlab.function([], [x, y, r1], mode="NUMBA")
    (op, why), = f.compile_info.numpy_ops.items()
    assert op.startswith("uniform_rv") and "copy of a generator" in why
    a, b, after = f()
    reference = np.random.default_rng(6)
    assert np.array_equal(a, reference.normal(0.0, 1.0, 3)) and np.array_equal(b, reference.uniform(0.0, 1.0, 2))
    state = np.random.default_rng(6)
    state.normal(0.0, 1.0, 3)
    assert random_generator_type.values_eq(after, state)  # the next generator of x's draw, not advanced by y's
    assert random_generator_type.values_eq(rng.get_value(), np.random.default_rng(6))


def test_a_node_compiled_alone_draws_from_a_copy():
    """``compile_node`` (DebugMode's check, to_dask's tasks) copies the generator of a draw that is not inplace."""
    from symlab.compile.numba.standalone import compile_node

    x = basic.poisson(np.array([1.0, 20.0]), rng=shared_rng(np.random.default_rng(0)))
    run = compile_node(x.owner)
    mine = np.random.default_rng(12)
    next_rng, draw = run(mine, None, np.array([1.0, 20.0]))
    assert np.array_equal(draw, np.random.default_rng(12).poisson([1.0, 20.0]))
    assert next_rng is not mine and random_generator_type.values_eq(mine, np.random.default_rng(12))
