"""Random walks: loops whose steps are random draws, against NumPy replaying the same generators.

Two ways a loop draws (PyTensor's prng.rst, "Random variables in inner graphs"): a ``RandomStream``
drawing inside the body (its generator, made by the body, is carried through the loop and updated by
the function through the updates scan returns), and a generator given in ``outputs_info`` that the
body returns advanced (the caller puts the final generator in the function's updates). Both draw with
NumPy ``Generator`` methods, so NumPy, given a copy of the generator, replays the walk bit for bit.
"""

import numpy as np
import pytest

import symlab
import symlab.tensor as st
from symlab.compile.modes import DebugMode
from symlab.tensor.random.utils import RandomStream

#: DebugMode runs perform twice from the same generator states and checks the rewrites against the unoptimized
#: graph; its per-node Numba check (a Numba compile per node, the loop's included: seconds) runs in the first test only.
MODES = ["NUMPY", pytest.param(DebugMode(check_numba=False, name="DEBUG"), id="DEBUG")]


@pytest.mark.parametrize("mode", ["NUMPY", pytest.param("DEBUG", marks=pytest.mark.numba, id="DEBUG with its Numba check"),
                                  pytest.param("NUMBA", marks=pytest.mark.numba)])
def test_random_walk_of_random_stream_draws_inside_the_loop(mode, monkeypatch):
    """Normal steps with a drift (a non-sequence); on the Numba tier, the loop and its draws are one kernel (which
    DEBUG also runs, node by node, against ``perform``: the same values and the same generator states)."""
    monkeypatch.setattr(symlab.config, "background_compile", False)
    srng = RandomStream(seed=33)
    start, drift, n = st.dscalar("start"), st.dscalar("drift"), st.iscalar("n")
    walk, updates = symlab.scan(lambda position, mu: position + srng.normal(mu, 0.5), outputs_info=start,
                                non_sequences=drift, n_steps=n, name="walk")
    (generator,) = updates  # the body's generator, carried through the loop
    assert generator.default_update is None  # its update is the loop's final generator, in `updates`
    f = symlab.function([start, drift, n], walk, updates=updates, mode=mode)
    if mode == "NUMBA":
        assert f.maker.runner.numpy_fallback is None
    replay = generator.get_value()  # a copy
    for n_steps in (6, 3):
        position, positions = 1.0, []
        for _ in range(n_steps):  # the NumPy loop: the same draws, added in the same order
            position = position + replay.normal(0.25, 0.5)
            positions.append(position)
        np.testing.assert_array_equal(f(1.0, 0.25, n_steps), positions)
        assert generator.get_value().bit_generator.state == replay.bit_generator.state
    assert f(1.0, 0.25, 0).shape == (0,)  # no step: no draw, the generator stays
    assert generator.get_value().bit_generator.state == replay.bit_generator.state


@pytest.mark.parametrize("mode", MODES)
def test_lattice_walk_with_the_generator_carried_in_outputs_info(mode):
    rng = st.random.shared_rng(np.random.default_rng(2026), name="rng")
    start, p = st.lvector("start"), st.dscalar("p")

    def step(position, generator, up):
        next_generator, coin = generator.binomial(n=1, p=up, size=position.shape)
        return position + 2 * coin - 1, next_generator

    (walk, last_generator), updates = symlab.scan(step, outputs_info=[start, rng], non_sequences=p, n_steps=8)
    assert dict(updates) == {}  # the generator is the caller's: it makes the update
    f = symlab.function([start, p], walk, updates={rng: last_generator}, mode=mode)
    replay = rng.get_value()
    origin = np.array([0, 10, -5])
    for _ in range(2):
        coins = np.array([replay.binomial(1, 0.7, size=3) for _ in range(8)])
        np.testing.assert_array_equal(f(origin, 0.7), origin + np.cumsum(2 * coins - 1, axis=0))
        assert rng.get_value().bit_generator.state == replay.bit_generator.state


def test_a_generator_passed_as_a_non_sequence_draws_the_same_step_every_iteration():
    """prng.rst's warning: the generator is not threaded through the loop, so every iteration sees one state."""
    rng = st.random.shared_rng(seed=7, name="rng")
    walk, _ = symlab.scan(lambda position, generator: position + generator.normal()[1],
                          outputs_info=st.constant(0.0), non_sequences=rng, n_steps=4)
    step = np.random.default_rng(7).normal()
    np.testing.assert_allclose(symlab.function([], walk, mode="NUMPY")(), step * np.arange(1, 5), rtol=1e-15)
