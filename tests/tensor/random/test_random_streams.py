"""Theano's stream classes: ``RandomStreams`` (symlab.tensor.shared_randomstreams) and ``MRG_RandomStreams``
(symlab.sandbox.rng_mrg), with Theano's signatures, on NumPy generators.

Distribution checks: mean and variance of 10^5 draws within 5 standard errors (the standard error of a variance
from the sample's fourth moment). Where a draw is one NumPy call, it equals NumPy's numbers bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import symlab
import symlab.tensor as T
from symlab.sandbox.rng_mrg import ChoiceRowsRV, MRG_RandomStreams, truncated_standard_normal
from symlab.tensor.random import basic
from symlab.tensor.random.basic import gamma
from symlab.tensor.random.utils import RandomStream
from symlab.tensor.shared_randomstreams import RandomStreams

N = 100_000
MODE = "NUMPY"


def assert_moments(x: np.ndarray, mean: float, var: float) -> None:
    """The sample mean and variance of ``x`` within 5 standard errors of ``mean`` and ``var``."""
    x = np.asarray(x, dtype="float64").ravel()
    n = x.size
    assert abs(x.mean() - mean) <= 5 * math.sqrt(var / n), (x.mean(), mean)
    fourth = np.mean((x - x.mean()) ** 4)
    assert abs(x.var() - var) <= 5 * math.sqrt(max(fourth - var**2, 1e-12) / n), (x.var(), var)


def draw(*outputs):
    return symlab.function([], list(outputs), mode=MODE)()


# -- RandomStream (PyTensor's) -----------------------------------------------------------------------


def test_random_stream_draws_every_distribution_of_the_namespace_on_generators_of_its_own() -> None:
    stream = RandomStream(seed=31)
    x = stream.normal(1.0, 2.0, size=N)
    k = stream.integers(0, 10, size=N)
    c = stream.categorical([0.25, 0.75], size=N)
    children = np.random.SeedSequence(31).spawn(3)
    x_, k_, c_ = draw(x, k, c)
    np.testing.assert_array_equal(x_, np.random.default_rng(children[0]).normal(1.0, 2.0, size=N))
    np.testing.assert_array_equal(k_, np.random.default_rng(children[1]).integers(0, 10, size=N))
    assert_moments(c_, 0.75, 0.75 * 0.25)
    assert [r.default_update for r, _ in stream.state_updates] == [n for _, n in stream.state_updates]
    for name in ("beta", "gamma", "poisson", "choice", "permutation", "multivariate_normal", "dirichlet"):
        assert callable(getattr(stream, name)), name
    with pytest.raises(AttributeError, match="RandomStream has no distribution 'wobble'"):
        stream.wobble
    with pytest.raises(ValueError, match="rng= cannot be given"):
        stream.normal(rng=symlab.shared(np.random.default_rng(0)))


def test_random_stream_takes_a_namespace_and_a_generator_constructor() -> None:
    made = []

    def ctor(seed_sequence):
        made.append(seed_sequence)
        return np.random.Generator(np.random.MT19937(seed_sequence))

    stream = RandomStream(seed=5, namespace=basic, rng_ctor=ctor)
    u = stream.uniform(size=3)
    assert len(made) == 1
    want = np.random.Generator(np.random.MT19937(np.random.SeedSequence(5).spawn(1)[0])).uniform(size=3)
    np.testing.assert_array_equal(u.eval(), want)
    stream.seed(5)
    assert len(made) == 2


# -- RandomStreams ------------------------------------------------------------------------------------


def test_random_streams_distributions_have_their_moments() -> None:
    srng = RandomStreams(seed=2024)
    u = srng.uniform((N,), low=-1.0, high=3.0)
    z = srng.normal((N,), avg=2.0, std=3.0)
    b = srng.binomial((N,), n=5, p=0.3)
    k = srng.random_integers((N,), low=2, high=5)
    c = srng.poisson((N,), lam=4.0)
    m = srng.multinomial((N // 10,), n=10, pvals=[0.2, 0.8])
    ch = srng.choice((N,), a=3, p=[0.2, 0.5, 0.3])
    u_, z_, b_, k_, c_, m_, ch_ = draw(u, z, b, k, c, m, ch)
    assert_moments(u_, 1.0, 16 / 12)
    assert u_.min() >= -1.0 and u_.max() < 3.0
    assert_moments(z_, 2.0, 9.0)
    assert b_.dtype == np.int64 and set(np.unique(b_)) <= set(range(6))
    assert_moments(b_, 1.5, 5 * 0.3 * 0.7)
    assert sorted(np.unique(k_).tolist()) == [2, 3, 4, 5]  # Theano's random_integers includes high
    assert_moments(k_, 3.5, (4**2 - 1) / 12)
    assert_moments(c_, 4.0, 4.0)
    assert m_.shape == (N // 10, 2) and np.all(m_.sum(axis=1) == 10)
    assert_moments(m_[:, 0], 2.0, 10 * 0.2 * 0.8)
    for value, p in enumerate([0.2, 0.5, 0.3]):
        assert_moments(ch_ == value, p, p * (1 - p))


def test_random_streams_draws_are_numpys_and_advance_by_default() -> None:
    srng = RandomStreams(seed=7)
    u = srng.uniform((3, 2), low=1.0, high=2.0)
    z = srng.normal((4,), avg=-1.0, std=0.5)
    gens = [rng.get_value() for rng, _ in srng.state_updates]
    f = symlab.function([], [u, z], mode=MODE)
    for _ in range(2):
        got_u, got_z = f()
        np.testing.assert_array_equal(got_u, gens[0].uniform(1.0, 2.0, size=(3, 2)))
        np.testing.assert_array_equal(got_z, gens[1].normal(-1.0, 0.5, size=4))
    same = symlab.function([], u, no_default_updates=True, mode=MODE)
    np.testing.assert_array_equal(same(), same())
    assert srng.updates() == srng.state_updates and srng.updates() is not srng.state_updates


def test_random_streams_seed_restarts_every_generator() -> None:
    srng = RandomStreams(seed=11)
    u, z = srng.uniform((5,)), srng.normal((5,))
    f = symlab.function([], [u, z], mode=MODE)
    first = f()
    assert np.any(f()[0] != first[0])
    srng.seed()
    np.testing.assert_array_equal(f()[0], first[0])
    srng.seed(12)
    other = f()
    srng.seed(12)
    np.testing.assert_array_equal(f()[1], other[1])
    assert np.any(other[1] != first[1])
    # a new stream of the same seed draws the same numbers
    again = RandomStreams(seed=11)
    np.testing.assert_array_equal(symlab.function([], again.uniform((5,)), mode=MODE)(), first[0])


def test_random_streams_theano_attributes_rng_update_and_item_access() -> None:
    srng = RandomStreams(seed=3)
    u = srng.uniform((2,))
    rng, next_rng = srng.state_updates[0]
    assert u.rng is rng and u.update == (rng, next_rng) and rng.default_update is next_rng
    current = srng[u.rng]
    assert current is rng.get_value(borrow=True)
    srng[u.rng] = np.random.default_rng(99)
    np.testing.assert_array_equal(u.eval(), np.random.default_rng(99).uniform(size=2))
    with pytest.raises(KeyError, match="is not a generator of this stream"):
        srng[symlab.shared(np.random.default_rng(0))]


def test_random_streams_size_can_be_symbolic_and_p_broadcasts() -> None:
    srng = RandomStreams(seed=5)
    probs = T.matrix("probs")
    sample = srng.binomial(size=probs.shape, n=1, p=probs, dtype=symlab.config.floatX)  # rbm.py's Gibbs sample
    x = T.matrix("x")
    mixed = srng.normal((x.shape[0], 3))
    f = symlab.function([probs, x], [sample, mixed], mode=MODE)
    p = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]])
    s, m = f(p, np.zeros((4, 2)))
    assert s.dtype == np.dtype(symlab.config.floatX) and m.shape == (4, 3)
    np.testing.assert_array_equal(s, p)  # probabilities 0 and 1 draw 0 and 1
    halves = f(np.full((200, 500), 0.5), np.zeros((1, 1)))[0]
    assert_moments(halves, 0.5, 0.25)


def test_random_streams_ndim_gives_the_length_of_a_symbolic_size() -> None:
    srng = RandomStreams(seed=1)
    size = T.lvector("size")
    u = srng.uniform(size, ndim=2)
    assert u.type.ndim == 2
    assert symlab.function([size], u, mode=MODE)(np.array([2, 5])).shape == (2, 5)
    with pytest.raises(ValueError, match="give ndim="):
        srng.uniform(size)
    with pytest.raises(ValueError, match="ndim=1 but the draw has 2 dimensions"):
        srng.normal((2, 3), ndim=1)
    with pytest.raises(TypeError, match="ndim must be None or an int >= 0, received 'two'"):
        srng.normal((2, 3), ndim="two")


def test_random_streams_dtypes_are_theanos() -> None:
    srng = RandomStreams(seed=1)
    assert srng.uniform((2,)).dtype == symlab.config.floatX
    assert srng.uniform((2,), dtype="float32").dtype == "float32"
    assert srng.normal((2,), avg=T.fscalar("a")).dtype == symlab.config.floatX  # floatX upcast with float32
    assert srng.binomial((2,), p=0.5).dtype == "int64"
    assert srng.binomial((2,), p=0.5, dtype="int8").dtype == "int8"
    assert srng.random_integers((2,), high=4, dtype="int32").dtype == "int32"


def test_random_streams_permutation_gen_and_unknown_names() -> None:
    srng = RandomStreams(seed=8)
    perm = srng.permutation(n=6)
    shape_draw = srng.gen(gamma, 3.0, scale=2.0, size=(N,))
    f = symlab.function([], [perm, shape_draw], mode=MODE)
    p1, g1 = f()
    assert sorted(p1.tolist()) == list(range(6))
    assert_moments(g1, 6.0, 12.0)  # gamma(shape 3, scale 2)
    assert len(srng.state_updates) == 2 and np.any(f()[1] != g1)
    with pytest.raises(AttributeError, match="RandomStreams has no attribute 'gamma'.*stream.gen"):
        srng.gamma
    batch = srng.permutation((3, 2), n=4).eval()
    assert batch.shape == (3, 2, 4) and np.all(np.sort(batch, axis=-1) == np.arange(4))
    with pytest.raises(ValueError, match="rng= cannot be given"):
        srng.gen(gamma, 1.0, rng=symlab.shared(np.random.default_rng(0)))


# -- MRG_RandomStreams --------------------------------------------------------------------------------


def test_mrg_streams_distributions_have_their_moments() -> None:
    srng = MRG_RandomStreams(seed=4321)
    u = srng.uniform((N,), low=2.0, high=4.0)
    z = srng.normal((N,), avg=-1.0, std=2.0)
    t = srng.normal((N,), avg=1.0, std=0.5, truncate=True)
    t2 = srng.truncated_normal((N,))
    b = srng.binomial((N,), p=0.25, dtype="float32")
    pv = np.tile([[0.1, 0.6, 0.3]], (N // 10, 1))
    m = srng.multinomial(pvals=pv, n=4)
    u_, z_, t_, t2_, b_, m_ = draw(u, z, t, t2, b, m)
    assert_moments(u_, 3.0, 4 / 12)
    assert_moments(z_, -1.0, 4.0)
    # a standard normal kept within 2 deviations has variance 1 - 2 * 2 * phi(2) / (Phi(2) - Phi(-2))
    phi2 = math.exp(-2.0) / math.sqrt(2 * math.pi)
    inside = math.erf(2 / math.sqrt(2))
    truncated_var = 1 - 4 * phi2 / inside
    assert np.all(np.abs(t_ - 1.0) <= 1.0) and np.all(np.abs(t2_) <= 2.0)
    assert_moments(t_, 1.0, 0.25 * truncated_var)
    assert_moments(t2_, 0.0, truncated_var)
    assert b_.dtype == np.float32 and set(np.unique(b_)) == {0.0, 1.0}
    assert_moments(b_, 0.25, 0.25 * 0.75)
    assert m_.shape == pv.shape and np.all(m_.sum(axis=1) == 4)
    assert_moments(m_[:, 1], 4 * 0.6, 4 * 0.6 * 0.4)


def test_mrg_uniform_is_numpys_and_binomial_thresholds_it() -> None:
    srng = MRG_RandomStreams(seed=77)
    u = srng.uniform((2, 3), low=-1.0, high=1.0)
    x = T.matrix("x")
    b = srng.binomial(size=x.shape, p=0.4, dtype=symlab.config.floatX)  # dA.py's corruption
    (g_u, _), (g_b, _) = [(r.get_value(), n) for r, n in srng.state_updates]
    f = symlab.function([x], [u, b], mode=MODE)
    got_u, got_b = f(np.zeros((3, 4)))
    np.testing.assert_array_equal(got_u, g_u.uniform(-1.0, 1.0, size=(2, 3)))
    np.testing.assert_array_equal(got_b, (g_b.uniform(size=(3, 4)) < 0.4).astype(symlab.config.floatX))
    probs = T.matrix("probs")
    gibbs = srng.binomial(size=probs.shape, n=1, p=probs, dtype=symlab.config.floatX)  # rbm.py's
    p = np.array([[1.0, 0.0], [0.0, 1.0]])
    np.testing.assert_array_equal(symlab.function([probs], gibbs, mode=MODE)(p), p)
    scalar = srng.binomial(p=T.dvector("pv"))  # size None: one draw per entry of p
    assert scalar.type.ndim == 1


def test_mrg_choice_with_and_without_replacement() -> None:
    srng = MRG_RandomStreams(seed=9)
    p = np.array([[0.5, 0.3, 0.2, 0.0], [0.0, 0.0, 0.5, 0.5]])
    rows = np.tile(p, (N // 20, 1))
    with_replacement = srng.choice(size=3, p=rows)
    without = srng.choice(size=2, p=rows, replace=False)
    a, b = draw(with_replacement, without)
    assert a.shape == (rows.shape[0], 3) and b.shape == (rows.shape[0], 2) and b.dtype == np.int64
    even, odd = a[0::2].ravel(), a[1::2].ravel()
    for value, q in enumerate(p[0]):
        assert_moments(even == value, q, q * (1 - q))
    assert set(np.unique(odd)) == {2, 3}
    assert np.all(b[:, 0] != b[:, 1])  # distinct within a row
    assert np.all(np.sort(b[1::2], axis=1) == [2, 3])
    first = b[0::2, 0]
    for value, q in enumerate(p[0]):
        assert_moments(first == value, q, q * (1 - q))
    assert str(without.owner.op) == 'choice_rows_rv{"(k)->(s)", draws=2}'


def test_mrg_bad_input_is_a_named_error() -> None:
    srng = MRG_RandomStreams()
    with pytest.raises(NotImplementedError, match="n must be 1 .* received 3"):
        srng.binomial((2,), n=3)
    with pytest.raises(ValueError, match="nstreams must be None or an int > 0, received 0"):
        srng.uniform((2,), nstreams=0)
    with pytest.raises(TypeError, match="seed must be an int >= 0 or 6 ints >= 0, received 'abc'"):
        MRG_RandomStreams("abc")
    with pytest.raises(ValueError, match="seed must be an int >= 0 or 6 ints >= 0, received -4"):
        MRG_RandomStreams(-4)
    assert MRG_RandomStreams([1, 2, 3, 4, 5, 6]).uniform((2,)).eval().shape == (2,)
    with pytest.raises(TypeError, match="pvals .* must be given"):
        srng.multinomial()
    with pytest.raises(ValueError, match="size and ndim must be None"):
        srng.multinomial(size=(3,), pvals=[[0.5, 0.5]])
    with pytest.raises(NotImplementedError, match="pvals must be a matrix"):
        srng.multinomial(pvals=[0.5, 0.5])
    with pytest.raises(NotImplementedError, match="a must be None"):
        srng.choice(size=1, a=3, p=[[1.0]])
    with pytest.raises(ValueError, match="p must be a matrix"):
        srng.choice(size=1, p=[0.5, 0.5])
    with pytest.raises(ValueError, match="size .* must be an int >= 1, received 0"):
        srng.choice(size=0, p=[[0.5, 0.5]])
    with pytest.raises(ValueError, match="cannot draw 3 distinct indices of rows of 2 probabilities"):
        srng.choice(size=3, p=[[0.5, 0.5]], replace=False)
    with pytest.raises(ValueError, match="bound must be > 0"):
        srng.gen(truncated_standard_normal, -1.0)
    assert srng.state_updates == []  # refused draws made no generator and took no seed of the stream
    first = srng.uniform((3,))
    np.testing.assert_array_equal(first.eval(), MRG_RandomStreams().uniform((3,)).eval())


def test_mrg_seed_and_default_updates() -> None:
    srng = MRG_RandomStreams(seed=123)
    u = srng.uniform((4,))
    f = symlab.function([], u, mode=MODE)
    first = f()
    assert np.any(f() != first)
    srng.seed()
    np.testing.assert_array_equal(f(), first)
    srng.seed(5)
    np.testing.assert_array_equal(f(), symlab.function([], MRG_RandomStreams(5).uniform((4,)), mode=MODE)())
    with pytest.raises(ValueError, match="seed must be"):
        srng.seed(-1)


def test_choice_rows_op_is_a_random_variable_with_its_draw_count() -> None:
    op = ChoiceRowsRV(2)
    assert op == ChoiceRowsRV(2) and op != ChoiceRowsRV(3)
    rng = symlab.shared(np.random.default_rng(0))
    d = op(np.full((5, 4), 0.25), rng=rng)
    assert d.type.shape == (5, 2)
    value = d.eval()
    assert np.all(value[:, 0] != value[:, 1])
