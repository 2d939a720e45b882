"""PyTensor's prng.rst ("Pseudo random number generation"), section by section, in our own code.

Every example of the page that needs neither ``scan`` nor JAX, written here with our own structure; the numbers
are NumPy's ``Generator`` numbers, which the page shows (seed 123) and which are asserted both as the page prints
them and against NumPy itself. Functions compile in the NumPy mode, except the page's Numba section.
"""

from __future__ import annotations

import numpy as np
import pytest

import symlab
import symlab.tensor as pt
from symlab.compile import In
from symlab.compile.builders import OpFromGraph

MODE = "NUMPY"
#: The first uniform draws of default_rng(123), as the page prints them.
PAGE_UNIFORMS = [0.68235186, 0.05382102, 0.22035987, 0.18437181, 0.1759059, 0.81209451]
#: The first normal draws of default_rng(123), as the page prints them.
PAGE_NORMALS = [-0.9891213503478509, -0.3677866514678832]


def function(*args, **kwargs):
    return symlab.function(*args, mode=kwargs.pop("mode", MODE), **kwargs)


def test_the_page_numbers_are_numpys():
    """The basics, NumPy: the numbers the rest of the page expects."""
    np.testing.assert_allclose(np.random.default_rng(123).uniform(size=6), PAGE_UNIFORMS, rtol=1e-7)
    np.testing.assert_array_equal(np.random.default_rng(123).normal(size=2), PAGE_NORMALS)


def test_a_function_of_a_generator_input_copies_it():
    """The basics, PyTensor: the same draws at every call, until the caller advances the generator."""
    rng = pt.random.rng("rng")
    next_rng, x = pt.random.uniform(rng=rng, size=2, return_next_rng=True)
    f = function([rng], x)
    rng_val = np.random.default_rng(123)
    state = rng_val.bit_generator.state
    first, again = f(rng_val), f(rng_val)
    np.testing.assert_allclose(first, PAGE_UNIFORMS[:2], rtol=1e-7)
    np.testing.assert_array_equal(again, first)
    assert rng_val.bit_generator.state == state  # the input was not changed
    for k in (1, 2):
        rng_val.bit_generator.advance(1)
        np.testing.assert_allclose(f(rng_val), PAGE_UNIFORMS[k : k + 2], rtol=1e-7)


def test_returning_the_next_generator_threads_the_state():
    """The basics: ``function([rng], [next_rng, x])`` called on its own next generator."""
    rng = pt.random.rng("rng")
    next_rng, x = pt.random.uniform(rng=rng, size=2, return_next_rng=True)
    f = function([rng], [next_rng, x])
    value = np.random.default_rng(123)
    for k in range(3):
        value, x_val = f(value)
        assert isinstance(value, np.random.Generator)
        np.testing.assert_allclose(x_val, PAGE_UNIFORMS[2 * k : 2 * k + 2], rtol=1e-7)


def test_a_shared_generator_set_by_hand_then_by_updates():
    """Shared variables: ``set_value(next_rng_val)`` by hand, then the ``updates`` argument doing it."""
    rng = pt.random.shared_rng(np.random.default_rng(123))
    next_rng, x = pt.random.uniform(rng=rng, return_next_rng=True)
    f = function([], [next_rng, x])
    shown = []
    for _ in range(3):
        next_rng_val, x_val = f()
        shown.append(float(x_val))
        rng.set_value(next_rng_val)
    assert shown == [0.6823518632481435, 0.053821018802222675, 0.22035987277261138]
    rng = pt.random.shared_rng(np.random.default_rng(123))
    next_rng, x = pt.random.uniform(rng=rng, return_next_rng=True)
    f = function([], x, updates={rng: next_rng})
    np.testing.assert_allclose([f(), f(), f()], PAGE_UNIFORMS[:3], rtol=1e-7)


def test_reseeding_a_shared_generator():
    """Reseeding: ``set_value(np.random.default_rng(123), borrow=True)`` starts the draws again."""
    rng = pt.random.shared_rng(np.random.default_rng(123), borrow=True)
    next_rng, x = pt.random.normal(rng=rng, return_next_rng=True)
    f = function([], x, updates={rng: next_rng})
    assert [float(f()), float(f())] == PAGE_NORMALS
    mine = np.random.default_rng(123)
    rng.set_value(mine, borrow=True)
    assert rng.get_value(borrow=True) is mine
    assert [float(f()), float(f())] == PAGE_NORMALS


def test_the_high_level_api_and_seed_arguments():
    """High-level API: ``rng.normal()`` returns ``(next_rng, draw)``; ``shared_rng(seed=)``, ``set_value(seed=)``."""
    rng = pt.random.shared_rng(np.random.default_rng(123), name="rng")
    next_rng, x = rng.normal()
    f = function([], x, updates={rng: next_rng})
    assert float(f()) != float(f())
    rng = pt.random.shared_rng(seed=123)
    next_rng, x = rng.normal()
    f = function([], x, updates={rng: next_rng})
    x1 = f()
    rng.set_value(seed=123)
    assert f() == x1 == PAGE_NORMALS[0]


def test_an_inplace_random_variable_advances_its_generator():
    """Inplace optimization: an op with ``inplace = True`` draws from the generator itself (``d={0: [0]}``)."""
    rng = pt.random.shared_rng(np.random.default_rng(123), name="rng")
    next_rng, x = pt.random.uniform(rng=rng, return_next_rng=True)
    assert x.owner.op.inplace is False
    f = function([], x)
    assert "destroy_map" not in symlab.dprint(f, print_destroy_map=True, file="str")
    assert float(f()) == float(f()) == pytest.approx(PAGE_UNIFORMS[0], rel=1e-7)

    class InplaceUniform(type(pt.random.uniform)):
        inplace = True

    rng = pt.random.shared_rng(np.random.default_rng(123), name="rng")
    x = InplaceUniform()(rng=rng)
    assert x.owner.op.inplace is True and x.owner.op.destroy_map == {0: [0]}
    inplace_f = function([], x, accept_inplace=True)
    assert "destroy_map={0: [0]}" in symlab.dprint(inplace_f, print_destroy_map=True, file="str")
    np.testing.assert_allclose([inplace_f(), inplace_f()], PAGE_UNIFORMS[:2], rtol=1e-7)


def test_random_make_inplace_for_a_mutable_input_and_for_an_updated_shared_generator(capsys):
    """random_make_inplace: the rewrite makes the draw inplace when the generator may change (``In(mutable=True)``,
    or a shared generator that the function updates), and ``optimizer_verbose`` says so."""
    rng = pt.random.rng("rng")
    next_rng, x = rng.uniform()
    with symlab.config.change_flags(optimizer_verbose=True):
        inplace_f = function([In(rng, mutable=True)], [x])
    assert capsys.readouterr().out.startswith("rewriting: rewrite random_make_inplace replaces uniform_rv")
    assert inplace_f.maker.fgraph.outputs[0].owner.op.inplace
    value = np.random.default_rng(123)
    np.testing.assert_allclose([inplace_f(value)[0], inplace_f(value)[0]], PAGE_UNIFORMS[:2], rtol=1e-7)
    function([In(rng, mutable=True)], [x])
    assert capsys.readouterr().out == ""  # the flag is off again
    with pytest.raises(TypeError, match="config.optimizer_verbose must be True or False, received 'yes'"):
        symlab.config.change_flags(optimizer_verbose="yes")

    rng = pt.random.shared_rng(np.random.default_rng(123), name="rng")
    next_rng, x = rng.uniform()
    inplace_f = function([], [x], updates={rng: next_rng})
    text = symlab.dprint(inplace_f, print_destroy_map=True, file="str")
    assert text.count("destroy_map={0: [0]}") == 2  # the draw, and the next generator stored by the update
    np.testing.assert_allclose([inplace_f()[0] for _ in range(3)], PAGE_UNIFORMS[:3], rtol=1e-7)
    # a function that does not update the generator keeps the copying op: the same number at every call
    plain = function([], x)
    assert not plain.maker.fgraph.outputs[0].owner.op.inplace


def test_chained_draws_and_the_reuse_warning():
    """Multiple random variables: chain the next generators; reusing one warns (and repeats the numbers)."""
    rng = pt.random.shared_rng(np.random.default_rng(123), name="rng")
    next_rng, x = rng.normal()
    final_rng, y = next_rng.normal()
    f = function([], [x, y], updates={rng: final_rng})
    np.testing.assert_array_equal(f(), PAGE_NORMALS)
    reference = np.random.default_rng(123)
    reference.normal(size=2)
    np.testing.assert_array_equal(f(), reference.normal(size=2))
    loose = pt.random.rng()
    _, a = loose.normal()
    with pytest.warns(UserWarning, match="already used by a draw"):
        _, b = loose.normal()
    g = function([loose], [a, b])
    first, second = g(np.random.default_rng(5))
    assert first == second


def test_separate_generators_spawned_from_one_seed_sequence():
    """Multiple RNG variables: one generator for each draw, spawned from a ``SeedSequence``."""
    ss = np.random.SeedSequence(123)
    rng_x_np, rng_y_np = [np.random.default_rng(s) for s in ss.spawn(2)]
    rng_x = pt.random.shared_rng(rng_x_np, name="rng_x")
    rng_y = pt.random.shared_rng(rng_y_np, name="rng_y")
    next_rng_x, x = rng_x.normal(loc=0, scale=10)
    next_rng_y, y = rng_y.normal(loc=x, scale=0.1)
    next_rng_x.name, next_rng_y.name = "next_rng_x", "next_rng_y"
    f = function([], [x, y], updates={rng_x: next_rng_x, rng_y: next_rng_y})
    ref_x, ref_y = [np.random.default_rng(s) for s in np.random.SeedSequence(123).spawn(2)]
    for _ in range(2):
        x_val, y_val = f()
        want_x = ref_x.normal(0, 10)
        assert x_val == want_x and y_val == ref_y.normal(want_x, 0.1)
    assert rng_x_np.bit_generator.state != rng_x.get_value().bit_generator.state  # the shared one was a copy


def test_a_random_draw_inside_an_op_from_graph():
    """OpFromGraph: a lognormal draw built as an OpFromGraph of ``rng -> (next_rng, exp(normal))``."""

    def create_lognormal_ofg():
        rng = pt.random.rng(name="rng")
        next_rng, x = rng.normal()
        return OpFromGraph([rng], [next_rng, pt.exp(x)])

    lognormal_ofg = create_lognormal_ofg()
    rng = pt.random.shared_rng(seed=123, name="rng")
    next_rng, x = lognormal_ofg(rng)
    final_rng, y = lognormal_ofg(next_rng)
    f = function([], [x, y], updates={rng: final_rng})
    got = [f(), f(), f()]
    page = [[0.37190332, 0.69226486], [3.62525729, 1.21406523], [2.50986985, 1.78087317]]
    np.testing.assert_allclose(got, page, rtol=1e-7)
    np.testing.assert_array_equal(np.ravel(got), np.exp(np.random.default_rng(123).normal(size=6)))


@pytest.mark.numba
def test_the_numba_mode_draws_numpys_numbers():
    """Other backends, Numba: a shared generator updated by a Numba-mode function."""
    rng = pt.random.shared_rng(np.random.default_rng(123), name="randomstate_rng")
    next_rng, x = rng.normal()
    numba_fn = function([], x, updates={rng: next_rng}, mode="NUMBA")
    assert "randomstate_rng" in symlab.dprint(numba_fn, print_type=True, file="str")
    assert [float(numba_fn()), float(numba_fn())] == PAGE_NORMALS
