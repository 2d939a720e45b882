"""The classic Theano models, written the way a Theano user writes them, train on symlab.

The models of the Deep Learning Tutorials (logistic regression, MLP, LeNet, denoising
autoencoders and their stack, RBM and DBN, the Elman network of rnnslu, the LSTM), in the
tutorials' style: classes holding shared ``W``/``b`` made with ``borrow=True``, ``T.nnet``
activations, ``conv2d`` and ``pool_2d``, ``givens`` slicing a shared data set by a minibatch
index, updates lists, ``if W is None`` / ``if not W`` tests. The random parts are drawn as the
tutorials draw them: the denoising autoencoders' corruption and the RBMs' Gibbs samples with
``theano_rng.binomial(size=x.shape, n=1, p=..., dtype=floatX)`` of Theano's ``RandomStreams`` or
``MRG_RandomStreams``, which advance their generators by default updates. The recurrences here are
unrolled over a fixed number of steps; the tutorials' own programs, which write them with ``scan``,
run at the end of this file.

Each model trains a few epochs on small synthetic data with a finite, falling cost, in the
NumPy and the Numba mode; one SGD step of the logistic regression and of the MLP equals the
same step written in NumPy.
"""

import importlib.util
import sys
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest

import symlab
import symlab.tensor as T
from symlab.sandbox.rng_mrg import MRG_RandomStreams
from symlab.tensor.nnet import conv2d
from symlab.tensor.shared_randomstreams import RandomStreams
from symlab.tensor.signal.pool import pool_2d

#: The NumPy backend, and the Numba backend (marked ``numba``: its first compile of a model's kernels takes seconds).
MODES = ["NUMPY", pytest.param("NUMBA", marks=pytest.mark.numba)]
#: The models below LeNet run on the NumPy backend only: compiled with Numba, each takes 30-60 s on the
#: 2-core machine (an unrolled LSTM has about 80 distinct kernels, one per constant slice), for no Numba
#: code path that the three models above and the kernel tests do not already cover.
NUMPY_ONLY = ["NUMPY"]


def floatx():
    return symlab.config.floatX


# -- the tutorials' building blocks, as a Theano user writes them ------------------------------------


class LogisticRegression:
    """Softmax regression: ``p(y | x) = softmax(x W + b)``."""

    def __init__(self, input, n_in, n_out, W=None, b=None):
        if W is None:
            W = symlab.shared(np.zeros((n_in, n_out), dtype=floatx()), name="W", borrow=True)
        if b is None:
            b = symlab.shared(np.zeros((n_out,), dtype=floatx()), name="b", borrow=True)
        self.W, self.b = W, b
        self.p_y_given_x = T.nnet.softmax(T.dot(input, self.W) + self.b)
        self.y_pred = T.argmax(self.p_y_given_x, axis=1)
        self.params = [self.W, self.b]
        self.input = input

    def negative_log_likelihood(self, y):
        return -T.mean(T.log(self.p_y_given_x)[T.arange(y.shape[0]), y])

    def errors(self, y):
        if y.ndim != self.y_pred.ndim:
            raise TypeError("y should have the same shape as self.y_pred")
        return T.mean(T.neq(self.y_pred, y))


class HiddenLayer:
    """A fully connected layer ``activation(x W + b)`` with Glorot's uniform initialisation."""

    def __init__(self, rng, input, n_in, n_out, W=None, b=None, activation=T.tanh):
        if W is None:
            bound = np.sqrt(6.0 / (n_in + n_out))
            values = np.asarray(rng.uniform(low=-bound, high=bound, size=(n_in, n_out)), dtype=floatx())
            if activation == T.nnet.sigmoid:
                values *= 4
            W = symlab.shared(value=values, name="W", borrow=True)
        if b is None:
            b = symlab.shared(value=np.zeros((n_out,), dtype=floatx()), name="b", borrow=True)
        self.W, self.b = W, b
        linear = T.dot(input, self.W) + self.b
        self.output = linear if activation is None else activation(linear)
        self.params = [self.W, self.b]


class MLP:
    """One tanh hidden layer and a softmax layer, with the L1 and squared L2 norms of the weights."""

    def __init__(self, rng, input, n_in, n_hidden, n_out):
        self.hidden = HiddenLayer(rng, input, n_in, n_hidden, activation=T.tanh)
        self.top = LogisticRegression(self.hidden.output, n_hidden, n_out)
        self.L1 = abs(self.hidden.W).sum() + abs(self.top.W).sum()
        self.L2_sqr = (self.hidden.W**2).sum() + (self.top.W**2).sum()
        self.negative_log_likelihood = self.top.negative_log_likelihood
        self.errors = self.top.errors
        self.params = self.hidden.params + self.top.params


class ConvPoolLayer:
    """LeNet's layer: ``tanh(max_pool(conv2d(x, W)) + b)``, one bias per feature map."""

    def __init__(self, rng, input, filter_shape, image_shape, poolsize=(2, 2)):
        assert image_shape[1] == filter_shape[1]
        fan_in = np.prod(filter_shape[1:])
        fan_out = filter_shape[0] * np.prod(filter_shape[2:]) // np.prod(poolsize)
        bound = np.sqrt(6.0 / (fan_in + fan_out))
        self.W = symlab.shared(
            np.asarray(rng.uniform(low=-bound, high=bound, size=filter_shape), dtype=floatx()), borrow=True
        )
        self.b = symlab.shared(np.zeros((filter_shape[0],), dtype=floatx()), borrow=True)
        conv_out = conv2d(input=input, filters=self.W, filter_shape=filter_shape, input_shape=image_shape)
        pooled = pool_2d(conv_out, ws=poolsize, ignore_border=True)
        self.output = T.tanh(pooled + self.b.dimshuffle("x", 0, "x", "x"))
        self.params = [self.W, self.b]


class DenoisingAutoencoder:
    """dA with tied weights, corrupting its input with 0/1 draws of a random stream (dA.py's)."""

    def __init__(self, numpy_rng, theano_rng=None, input=None, n_visible=64, n_hidden=16, W=None, bhid=None,
                 bvis=None):
        if not W:
            bound = 4 * np.sqrt(6.0 / (n_hidden + n_visible))
            values = np.asarray(numpy_rng.uniform(low=-bound, high=bound, size=(n_visible, n_hidden)), dtype=floatx())
            W = symlab.shared(value=values, name="W", borrow=True)
        if not bvis:
            bvis = symlab.shared(value=np.zeros(n_visible, dtype=floatx()), borrow=True)
        if not bhid:
            bhid = symlab.shared(value=np.zeros(n_hidden, dtype=floatx()), name="b", borrow=True)
        if not theano_rng:
            theano_rng = MRG_RandomStreams(numpy_rng.randint(2**30))
        self.theano_rng = theano_rng
        self.W, self.b, self.b_prime = W, bhid, bvis
        self.W_prime = self.W.T
        self.x = T.dmatrix(name="input") if input is None else input
        self.params = [self.W, self.b, self.b_prime]

    def get_corrupted_input(self, input, corruption_level):
        """Each entry of ``input`` kept with probability ``1 - corruption_level``, else zeroed."""
        return self.theano_rng.binomial(size=input.shape, n=1, p=1 - corruption_level, dtype=floatx()) * input

    def get_hidden_values(self, input):
        return T.nnet.sigmoid(T.dot(input, self.W) + self.b)

    def get_reconstructed_input(self, hidden):
        return T.nnet.sigmoid(T.dot(hidden, self.W_prime) + self.b_prime)

    def get_cost_updates(self, corruption_level, learning_rate):
        tilde_x = self.get_corrupted_input(self.x, corruption_level)
        z = self.get_reconstructed_input(self.get_hidden_values(tilde_x))
        cross_entropy = -T.sum(self.x * T.log(z) + (1 - self.x) * T.log(1 - z), axis=1)
        cost = T.mean(cross_entropy)
        gparams = T.grad(cost, self.params)
        return cost, [(p, p - learning_rate * g) for p, g in zip(self.params, gparams)]


class RBM:
    """Bernoulli RBM trained by CD-1, its Gibbs samples drawn with a random stream (rbm.py's)."""

    def __init__(self, input=None, n_visible=64, n_hidden=16, W=None, hbias=None, vbias=None, numpy_rng=None,
                 theano_rng=None):
        if numpy_rng is None:
            numpy_rng = np.random.RandomState(1234)
        if theano_rng is None:
            theano_rng = MRG_RandomStreams(numpy_rng.randint(2**30))
        self.theano_rng = theano_rng
        if W is None:
            bound = 4 * np.sqrt(6.0 / (n_hidden + n_visible))
            values = np.asarray(numpy_rng.uniform(low=-bound, high=bound, size=(n_visible, n_hidden)), dtype=floatx())
            W = symlab.shared(value=values, name="W", borrow=True)
        if hbias is None:
            hbias = symlab.shared(value=np.zeros(n_hidden, dtype=floatx()), name="hbias", borrow=True)
        if vbias is None:
            vbias = symlab.shared(value=np.zeros(n_visible, dtype=floatx()), name="vbias", borrow=True)
        self.input = input
        if not input:
            self.input = T.matrix("input")
        self.W, self.hbias, self.vbias = W, hbias, vbias
        self.params = [self.W, self.hbias, self.vbias]

    def free_energy(self, v):
        wx_b = T.dot(v, self.W) + self.hbias
        return -T.sum(T.log(1 + T.exp(wx_b)), axis=1) - T.dot(v, self.vbias)

    def propup(self, v):
        pre = T.dot(v, self.W) + self.hbias
        return pre, T.nnet.sigmoid(pre)

    def propdown(self, h):
        pre = T.dot(h, self.W.T) + self.vbias
        return pre, T.nnet.sigmoid(pre)

    def sample(self, mean):
        """A Bernoulli draw of probabilities ``mean``, as floats."""
        return self.theano_rng.binomial(size=mean.shape, n=1, p=mean, dtype=floatx())

    def get_cost_updates(self, lr):
        """CD-1: cost, updates and the reconstruction cross-entropy written on the pre-sigmoid."""
        _, h_mean = self.propup(self.input)
        h_sample = self.sample(h_mean)
        pre_v, v_mean = self.propdown(h_sample)
        chain_end = self.sample(v_mean)
        cost = T.mean(self.free_energy(self.input)) - T.mean(self.free_energy(chain_end))
        gparams = T.grad(cost, self.params, consider_constant=[chain_end])
        updates = OrderedDict((p, p - lr * g) for p, g in zip(self.params, gparams))
        reconstruction = -T.mean(
            T.sum(
                self.input * T.log(T.nnet.sigmoid(pre_v)) + (1 - self.input) * T.log(1 - T.nnet.sigmoid(pre_v)),
                axis=1,
            )
        )
        return cost, updates, reconstruction


def sgd(cost, params, learning_rate):
    return [(p, p - learning_rate * g) for p, g in zip(params, T.grad(cost, params))]


# -- synthetic data sets, stored as the tutorials' load_data stores MNIST ------------------------------


def classes(n, n_in, n_classes, seed=0):
    """``n`` examples of ``n_in`` features in [0, 1), mostly 0 like MNIST's pixels, labelled by a linear teacher."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 1.0, size=(n, n_in)) * (rng.uniform(size=(n, n_in)) < 0.15)
    y = np.argmax((x - x.mean(axis=0)) @ rng.normal(size=(n_in, n_classes)), axis=1)
    return x, y


def shared_dataset(x, y=None):
    shared_x = symlab.shared(np.asarray(x, dtype=floatx()), borrow=True)
    if y is None:
        return shared_x
    shared_y = symlab.shared(np.asarray(y, dtype=floatx()), borrow=True)
    return shared_x, T.cast(shared_y, "int32")


def batch(data, index, size):
    return data[index * size : (index + 1) * size]


def epoch_means(step, n_batches, epochs=3):
    """The mean cost of each epoch of ``step(0) ... step(n_batches - 1)``."""
    return [float(np.mean([step(i) for i in range(n_batches)])) for _ in range(epochs)]


def assert_falls(means):
    assert np.all(np.isfinite(means)), means
    assert all(later < earlier for earlier, later in zip(means, means[1:])), means


# -- NumPy references of one SGD step ------------------------------------------------------------------


def np_softmax(a):
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def np_logistic_step(x, y, W, b, lr):
    n = x.shape[0]
    p = np_softmax(x @ W + b)
    cost = -np.mean(np.log(p[np.arange(n), y]))
    d = p.copy()
    d[np.arange(n), y] -= 1.0
    d /= n
    return cost, W - lr * (x.T @ d), b - lr * d.sum(axis=0)


def np_mlp_step(x, y, W1, b1, W2, b2, lr, l1, l2):
    n = x.shape[0]
    h = np.tanh(x @ W1 + b1)
    p = np_softmax(h @ W2 + b2)
    cost = (
        -np.mean(np.log(p[np.arange(n), y]))
        + l1 * (np.abs(W1).sum() + np.abs(W2).sum())
        + l2 * ((W1**2).sum() + (W2**2).sum())
    )
    d2 = p.copy()
    d2[np.arange(n), y] -= 1.0
    d2 /= n
    d1 = (d2 @ W2.T) * (1.0 - h**2)
    gW2 = h.T @ d2 + l1 * np.sign(W2) + 2 * l2 * W2
    gW1 = x.T @ d1 + l1 * np.sign(W1) + 2 * l2 * W1
    return cost, W1 - lr * gW1, b1 - lr * d1.sum(axis=0), W2 - lr * gW2, b2 - lr * d2.sum(axis=0)


# -- logistic regression (logistic_sgd) ----------------------------------------------------------------


def test_logistic_regression_trains_on_minibatches_given_by_index():
    mode = "NUMPY"  # in Numba: the one-step test below
    batch_size, lr = 20, 0.13
    train_x, train_y = shared_dataset(*classes(60, 28 * 28, 10, seed=1))
    test_x, test_y = shared_dataset(*classes(20, 28 * 28, 10, seed=2))
    index, x, y = T.lscalar(), T.matrix("x"), T.ivector("y")
    classifier = LogisticRegression(input=x, n_in=28 * 28, n_out=10)
    cost = classifier.negative_log_likelihood(y)
    test_model = symlab.function(
        [index], classifier.errors(y), givens={x: batch(test_x, index, 20), y: batch(test_y, index, 20)}, mode=mode
    )
    g_W, g_b = T.grad(cost=cost, wrt=classifier.W), T.grad(cost=cost, wrt=classifier.b)
    train_model = symlab.function(
        inputs=[index],
        outputs=cost,
        updates=[(classifier.W, classifier.W - lr * g_W), (classifier.b, classifier.b - lr * g_b)],
        givens={x: batch(train_x, index, batch_size), y: batch(train_y, index, batch_size)},
        mode=mode,
    )
    assert float(train_model(0)) == pytest.approx(np.log(10.0), abs=1e-12)  # zero weights: uniform p
    means = epoch_means(train_model, 3, epochs=4)
    assert_falls(means)
    assert np.all(np.isfinite(classifier.W.get_value())) and classifier.W.get_value().shape == (784, 10)
    error = float(test_model(0))
    assert 0.0 <= error <= 1.0 and error * 20 == round(error * 20)  # a fraction of the 20 examples


@pytest.mark.parametrize("mode", MODES)
def test_one_sgd_step_of_logistic_regression_equals_numpy(mode):
    rng = np.random.RandomState(3)
    data_x, data_y = classes(40, 30, 4, seed=3)
    W0, b0 = rng.normal(scale=0.3, size=(30, 4)), rng.normal(scale=0.1, size=4)
    train_x, train_y = shared_dataset(data_x, data_y)
    index, x, y = T.lscalar(), T.matrix("x"), T.ivector("y")
    W = symlab.shared(W0.copy(), name="W", borrow=True)
    b = symlab.shared(b0.copy(), name="b", borrow=True)
    classifier = LogisticRegression(x, 30, 4, W=W, b=b)
    assert classifier.W is W and classifier.b is b  # given parameters are kept (`if W is None`)
    cost = classifier.negative_log_likelihood(y)
    step = symlab.function(
        [index],
        cost,
        updates=sgd(cost, classifier.params, 0.5),
        givens={x: batch(train_x, index, 20), y: batch(train_y, index, 20)},
        mode=mode,
    )
    got_cost = step(1)
    want_cost, want_W, want_b = np_logistic_step(data_x[20:40], data_y[20:40], W0, b0, 0.5)
    np.testing.assert_allclose(got_cost, want_cost, rtol=0, atol=1e-10)
    np.testing.assert_allclose(W.get_value(), want_W, rtol=0, atol=1e-10)
    np.testing.assert_allclose(b.get_value(), want_b, rtol=0, atol=1e-10)


# -- multilayer perceptron (mlp) -------------------------------------------------------------------------


def test_mlp_with_l1_and_l2_regularisation_trains():
    mode = "NUMPY"  # in Numba: the one-step test below
    batch_size, lr, l1_reg, l2_reg = 20, 0.05, 0.0, 0.0001
    train_x, train_y = shared_dataset(*classes(60, 28 * 28, 10, seed=4))
    index, x, y = T.lscalar(), T.matrix("x"), T.ivector("y")
    classifier = MLP(np.random.RandomState(1234), x, n_in=28 * 28, n_hidden=50, n_out=10)
    cost = classifier.negative_log_likelihood(y) + l1_reg * classifier.L1 + l2_reg * classifier.L2_sqr
    train_model = symlab.function(
        [index],
        cost,
        updates=sgd(cost, classifier.params, lr),
        givens={x: batch(train_x, index, batch_size), y: batch(train_y, index, batch_size)},
        mode=mode,
    )
    errors = symlab.function(
        [index], classifier.errors(y), givens={x: batch(train_x, index, 60), y: batch(train_y, index, 60)}, mode=mode
    )
    before = float(errors(0))
    assert_falls(epoch_means(train_model, 3, epochs=4))
    assert float(errors(0)) <= before


@pytest.mark.parametrize("mode", MODES)
def test_one_sgd_step_of_the_mlp_equals_numpy(mode):
    lr, l1, l2 = 0.1, 0.001, 0.0001
    data_x, data_y = classes(20, 12, 3, seed=5)
    train_x, train_y = shared_dataset(data_x, data_y)
    index, x, y = T.lscalar(), T.matrix("x"), T.ivector("y")
    classifier = MLP(np.random.RandomState(5), x, n_in=12, n_hidden=7, n_out=3)
    classifier.top.W.set_value(np.random.RandomState(6).normal(scale=0.5, size=(7, 3)))  # not zeros: a real step
    start = [p.get_value() for p in classifier.params]
    cost = classifier.negative_log_likelihood(y) + l1 * classifier.L1 + l2 * classifier.L2_sqr
    step = symlab.function(
        [index],
        cost,
        updates=sgd(cost, classifier.params, lr),
        givens={x: batch(train_x, index, 10), y: batch(train_y, index, 10)},
        mode=mode,
    )
    got_cost = step(0)
    want = np_mlp_step(data_x[:10], data_y[:10], *start, lr, l1, l2)
    np.testing.assert_allclose(got_cost, want[0], rtol=0, atol=1e-10)
    for param, value in zip(classifier.params, want[1:]):
        np.testing.assert_allclose(param.get_value(), value, rtol=0, atol=1e-10)


# -- LeNet (convolutional_mlp), small -----------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_lenet_with_conv2d_and_max_pooling_trains(mode):
    batch_size, lr, nkerns = 4, 0.1, (3, 4)
    rng = np.random.RandomState(23455)
    train_x, train_y = shared_dataset(*classes(12, 14 * 14, 5, seed=7))
    index, x, y = T.lscalar(), T.matrix("x"), T.ivector("y")
    layer0 = ConvPoolLayer(
        rng, x.reshape((batch_size, 1, 14, 14)), filter_shape=(nkerns[0], 1, 3, 3), image_shape=(batch_size, 1, 14, 14)
    )  # 14 -> 12 -> 6
    layer1 = ConvPoolLayer(
        rng, layer0.output, filter_shape=(nkerns[1], nkerns[0], 3, 3), image_shape=(batch_size, nkerns[0], 6, 6)
    )  # 6 -> 4 -> 2
    layer2 = HiddenLayer(rng, layer1.output.flatten(2), n_in=nkerns[1] * 2 * 2, n_out=10, activation=T.tanh)
    layer3 = LogisticRegression(layer2.output, n_in=10, n_out=5)
    cost = layer3.negative_log_likelihood(y)
    params = layer3.params + layer2.params + layer1.params + layer0.params
    givens = {x: batch(train_x, index, batch_size), y: batch(train_y, index, batch_size)}
    shapes = symlab.function([index], [layer0.output.shape, layer1.output.shape], givens=givens, mode=mode)(0)
    assert [tuple(s) for s in shapes] == [(4, 3, 6, 6), (4, 4, 2, 2)]
    train_model = symlab.function([index], cost, updates=sgd(cost, params, lr), givens=givens, mode=mode)
    assert_falls(epoch_means(train_model, 3, epochs=4))


# -- denoising autoencoders (dA) and their stack (SdA) ----------------------------------------------------


def binary_images(n, n_in, seed):
    """Images of 0/1 pixels made of a few prototypes, so that an autoencoder has something to learn."""
    rng = np.random.default_rng(seed)
    prototypes = rng.uniform(size=(4, n_in)) < 0.5
    picks = prototypes[rng.integers(0, 4, size=n)]
    flips = rng.uniform(size=(n, n_in)) < 0.05
    return (picks ^ flips).astype(float)


def expected_corruption(streams, generator, shape, keep):
    """The mask a stream's binomial draws from ``generator``: NumPy's binomial (RandomStreams), or uniform draws
    below ``keep`` (MRG_RandomStreams thresholds uniform draws, as Theano's MRG binomial)."""
    if streams is RandomStreams:
        return generator.binomial(1, keep, size=shape).astype(floatx())
    return (generator.uniform(0.0, 1.0, size=shape) < keep).astype(floatx())


@pytest.mark.parametrize(
    ("streams", "mode"),
    [(RandomStreams, "NUMPY"), (MRG_RandomStreams, "NUMPY"), pytest.param(MRG_RandomStreams, "NUMBA", marks=pytest.mark.numba)],
)
def test_denoising_autoencoder_corrupted_by_a_random_stream_trains(streams, mode):
    batch_size, n_visible, level = 10, 64, 0.3
    data = binary_images(30, n_visible, seed=8)
    train_x = shared_dataset(data)
    index, x = T.lscalar(), T.matrix("x")
    numpy_rng = np.random.RandomState(123)
    theano_rng = streams(numpy_rng.randint(2**30))
    da = DenoisingAutoencoder(numpy_rng, theano_rng=theano_rng, input=x, n_visible=n_visible, n_hidden=16)
    cost, updates = da.get_cost_updates(corruption_level=level, learning_rate=0.1)
    train_da = symlab.function([index], cost, updates=updates, givens={x: batch(train_x, index, batch_size)}, mode=mode)
    ((rng, _),) = theano_rng.state_updates
    generator = rng.get_value()  # a copy, which NumPy advances alongside
    W0, b0, c0 = (p.get_value() for p in da.params)
    first = float(train_da(0))
    for k in range(2):
        mask = expected_corruption(streams, generator, (batch_size, n_visible), 1 - level)
        assert 0.6 < mask.mean() < 0.8
        if k == 0:
            h = 1 / (1 + np.exp(-((mask * data[:10]) @ W0 + b0)))
            z = 1 / (1 + np.exp(-(h @ W0.T + c0)))
            want = np.mean(-np.sum(data[:10] * np.log(z) + (1 - data[:10]) * np.log(1 - z), axis=1))
            assert first == pytest.approx(want, rel=1e-9)
        # the default update carried the generator on: the next call draws the next mask
        assert rng.get_value().bit_generator.state == generator.bit_generator.state
        if k == 0:
            train_da(1)
    assert_falls(epoch_means(train_da, 3, epochs=4))


@pytest.mark.parametrize("streams", [RandomStreams, MRG_RandomStreams])
def test_stacked_denoising_autoencoders_pretrain_then_finetune(streams):
    mode = "NUMPY"
    batch_size, n_in, sizes = 10, 64, [24, 12]
    data = binary_images(30, n_in, seed=10)
    labels = np.argmax(data @ np.random.default_rng(11).normal(size=(n_in, 3)), axis=1)
    train_x, train_y = shared_dataset(data, labels)
    rng = np.random.RandomState(89677)
    theano_rng = streams(rng.randint(2**30))
    index, x, y = T.lscalar("index"), T.matrix("x"), T.ivector("y")
    layers, autoencoders, params = [], [], []
    for i, size in enumerate(sizes):
        layer_input = x if i == 0 else layers[-1].output
        n_visible = n_in if i == 0 else sizes[i - 1]
        layer = HiddenLayer(rng, layer_input, n_visible, size, activation=T.nnet.sigmoid)
        da = DenoisingAutoencoder(rng, theano_rng, input=layer_input, n_visible=n_visible, n_hidden=size, W=layer.W,
                                  bhid=layer.b)
        assert da.W is layer.W and da.b is layer.b  # `if not W:` keeps a given shared variable
        layers.append(layer)
        autoencoders.append(da)
        params.extend(layer.params)
    top = LogisticRegression(layers[-1].output, sizes[-1], 3)
    params.extend(top.params)
    lr, corruption = T.scalar("lr"), T.scalar("corruption")
    for i, da in enumerate(autoencoders):
        cost, updates = da.get_cost_updates(corruption, lr)  # a symbolic corruption level, as SdA.py's
        pretrain = symlab.function(
            [index, symlab.In(corruption, value=0.2), symlab.In(lr, value=0.1)],
            cost,
            updates=updates,
            givens={x: batch(train_x, index, batch_size)},
            mode=mode,
        )
        ((rng_i, _),) = theano_rng.state_updates[i:]  # each layer's corruption draws on a generator of its own
        before = rng_i.get_value()
        assert_falls(epoch_means(lambda b, f=pretrain: f(index=b, corruption=0.2, lr=0.5), 3))
        assert rng_i.get_value().bit_generator.state != before.bit_generator.state
    finetune_cost = top.negative_log_likelihood(y)
    finetune = symlab.function(
        [index],
        finetune_cost,
        updates=sgd(finetune_cost, params, 0.1),
        givens={x: batch(train_x, index, batch_size), y: batch(train_y, index, batch_size)},
        mode=mode,
    )
    assert_falls(epoch_means(finetune, 3, epochs=4))


# -- RBM and DBN (rbm, DBN), CD-1 with Gibbs samples of a random stream --------------------------------------


def test_rbm_free_energy_and_reconstruction_cost_equal_numpy():
    rbm = RBM(n_visible=6, n_hidden=4, numpy_rng=np.random.RandomState(0))
    W = rbm.W.get_value()
    rbm.hbias.set_value(np.linspace(-1, 1, 4))
    rbm.vbias.set_value(np.linspace(0.5, -0.5, 6))
    v = binary_images(5, 6, seed=1)
    free_energy = symlab.function([rbm.input], rbm.free_energy(rbm.input), mode="NUMPY")(v)
    want = -np.sum(np.log1p(np.exp(v @ W + np.linspace(-1, 1, 4))), axis=1) - v @ np.linspace(0.5, -0.5, 6)
    np.testing.assert_allclose(free_energy, want, rtol=1e-12)
    # the reconstruction cross-entropy on the pre-sigmoid stays finite where the sigmoid saturates
    pre = T.matrix("pre")
    cost = -T.sum(rbm.input * T.log(T.nnet.sigmoid(pre)) + (1 - rbm.input) * T.log(1 - T.nnet.sigmoid(pre)))
    f = symlab.function([rbm.input, pre], [cost, T.grad(cost, pre)], mode="NUMPY")
    big = np.array([[800.0, -800.0, 30.0]])
    value, grad = f(np.array([[0.0, 1.0, 1.0]]), big)
    assert value == pytest.approx(1600.0 + np.log1p(np.exp(-30.0)), rel=1e-12)
    np.testing.assert_allclose(grad, [[1.0, -1.0, -1 / (1 + np.exp(30.0))]], rtol=1e-12)


@pytest.mark.parametrize("mode", NUMPY_ONLY)
def test_rbm_trained_by_contrastive_divergence_reconstructs_better(mode):
    batch_size, n_visible, n_hidden = 10, 36, 12
    data = binary_images(30, n_visible, seed=13)
    train_x = shared_dataset(data)
    index, x = T.lscalar(), T.matrix("x")
    rbm = RBM(input=x, n_visible=n_visible, n_hidden=n_hidden, numpy_rng=np.random.RandomState(123))
    assert rbm.input is x  # `if not input:` keeps the given variable
    _, updates, reconstruction = rbm.get_cost_updates(lr=0.1)
    train_rbm = symlab.function(
        [index], reconstruction, updates=updates, givens={x: batch(train_x, index, batch_size)}, mode=mode
    )
    # the two Gibbs samples draw on generators of their own, which the function advances (default updates)
    assert len(rbm.theano_rng.state_updates) == 2
    assert {r for r, _ in train_rbm.maker.updates} >= {r for r, _ in rbm.theano_rng.state_updates}
    means = epoch_means(train_rbm, 3, 6)
    assert np.all(np.isfinite(means)) and means[-1] < means[0], means


@pytest.mark.parametrize("mode", NUMPY_ONLY)
def test_deep_belief_network_shares_weights_with_its_rbms_and_finetunes(mode):
    batch_size, n_in, sizes = 10, 36, [16, 8]
    data = binary_images(30, n_in, seed=15)
    labels = np.argmax(data @ np.random.default_rng(16).normal(size=(n_in, 3)), axis=1)
    train_x, train_y = shared_dataset(data, labels)
    numpy_rng = np.random.RandomState(123)
    theano_rng = MRG_RandomStreams(numpy_rng.randint(2**30))  # DBN.py's: one stream for every RBM
    index, x, y = T.lscalar("index"), T.matrix("x"), T.ivector("y")
    layers, rbms, params = [], [], []
    for i, size in enumerate(sizes):
        layer_input = x if i == 0 else layers[-1].output
        n_visible = n_in if i == 0 else sizes[i - 1]
        layer = HiddenLayer(numpy_rng, layer_input, n_visible, size, activation=T.nnet.sigmoid)
        rbm = RBM(layer_input, n_visible, size, W=layer.W, hbias=layer.b, numpy_rng=numpy_rng, theano_rng=theano_rng)
        assert rbm.W is layer.W and rbm.hbias is layer.b
        layers.append(layer)
        rbms.append(rbm)
        params.extend(layer.params)
    top = LogisticRegression(layers[-1].output, sizes[-1], 3)
    params.extend(top.params)
    for rbm in rbms:
        _, updates, reconstruction = rbm.get_cost_updates(lr=0.05)
        pretrain = symlab.function(
            [index], reconstruction, updates=updates, givens={x: batch(train_x, index, batch_size)}, mode=mode
        )
        for b in range(3):
            assert np.isfinite(pretrain(b))
    assert len(theano_rng.state_updates) == 4  # two Gibbs samples of each RBM
    cost = top.negative_log_likelihood(y)
    finetune = symlab.function(
        [index],
        cost,
        updates=sgd(cost, params, 0.1),
        givens={x: batch(train_x, index, batch_size), y: batch(train_y, index, batch_size)},
        mode=mode,
    )
    assert_falls(epoch_means(finetune, 3, epochs=4))


# -- the Elman network of rnnslu, unrolled over fixed-length sentences -----------------------------------------


def context_windows(sentence, win):
    """rnnslu's ``contextwin``: each word with ``win // 2`` neighbours each side, padded with -1."""
    padded = [-1] * (win // 2) + list(sentence) + [-1] * (win // 2)
    return [padded[i : i + win] for i in range(len(sentence))]


def test_theano_softmax_of_a_vector_is_a_row_and_embeddings_are_looked_up_by_index():
    v = T.vector("v")
    row = T.nnet.softmax(v)
    assert row.ndim == 2
    got = symlab.function([v], row, mode="NUMPY")(np.array([1.0, 2.0, 3.0]))
    assert got.shape == (1, 3)
    np.testing.assert_allclose(got, np_softmax(np.array([[1.0, 2.0, 3.0]])), rtol=1e-14)
    emb = symlab.shared(np.arange(24.0).reshape(6, 4), name="embeddings")
    idxs = T.imatrix("idxs")
    x = emb[idxs].reshape((idxs.shape[0], 4 * 3))
    windows = np.asarray(context_windows([0, 3, 4], 3), dtype="int32")  # -1 pads: the last row
    np.testing.assert_array_equal(
        symlab.function([idxs], x, mode="NUMPY")(windows), np.arange(24.0).reshape(6, 4)[windows].reshape(3, 12)
    )


@pytest.mark.parametrize("mode", NUMPY_ONLY)
def test_elman_network_of_rnnslu_unrolled_trains_and_normalises_its_embeddings(mode):
    nh, nc, ne, de, cs = 8, 3, 12, 4, 3
    n_words = 4 if mode == "NUMPY" else 3  # each unrolled step adds its own Numba kernels
    rng = np.random.RandomState(345)

    def init(*shape):
        return symlab.shared(0.2 * rng.uniform(-1.0, 1.0, shape).astype(floatx()))

    emb, wx, wh, w = init(ne + 1, de), init(de * cs, nh), init(nh, nh), init(nh, nc)
    bh, b, h0 = (symlab.shared(np.zeros(n, dtype=floatx())) for n in (nh, nc, nh))
    params = [emb, wx, wh, w, bh, b, h0]
    idxs, y_sentence, lr = T.imatrix(), T.ivector("y_sentence"), T.scalar("lr")
    x = emb[idxs].reshape((idxs.shape[0], de * cs))
    h_tm1, rows = h0, []
    for t in range(n_words):  # what scan does over the words of a sentence
        h_t = T.nnet.sigmoid(T.dot(x[t], wx) + T.dot(h_tm1, wh) + bh)
        rows.append(T.nnet.softmax(T.dot(h_t, w) + b))  # a 1 x nc row
        h_tm1 = h_t
    s = T.stack(rows)  # n_words x 1 x nc, as scan stacks the rows
    p_y_given_x_sentence = s[:, 0, :]
    nll = -T.mean(T.log(p_y_given_x_sentence)[T.arange(x.shape[0]), y_sentence])
    updates = OrderedDict((p, p - lr * g) for p, g in zip(params, T.grad(nll, params)))
    sentence_train = symlab.function([idxs, y_sentence, lr], nll, updates=updates, mode=mode)
    normalize = symlab.function(
        inputs=[], updates={emb: emb / T.sqrt((emb**2).sum(axis=1)).dimshuffle(0, "x")}, mode=mode
    )
    data = np.random.default_rng(18)
    sentences = [data.integers(0, ne, size=n_words) for _ in range(5)]
    labels = [(s_ % nc).astype("int32") for s_ in sentences]

    def train(i):  # RNNSLU.train
        words = [np.asarray(window).astype("int32") for window in context_windows(sentences[i], cs)]
        cost = sentence_train(words, labels[i], 2.0)
        normalize()
        return cost

    normalize()  # the embeddings start on the unit sphere, where every step leaves them
    np.testing.assert_allclose(np.linalg.norm(emb.get_value(), axis=1), 1.0, rtol=1e-12)
    assert_falls(epoch_means(train, len(sentences), epochs=4))
    np.testing.assert_allclose(np.linalg.norm(emb.get_value(), axis=1), 1.0, rtol=1e-12)


# -- the LSTM of lstm.py, unrolled over a fixed number of time steps ---------------------------------------------


def ortho_weight(rng, n):
    u, _, _ = np.linalg.svd(rng.randn(n, n))
    return u.astype(floatx())


@pytest.mark.parametrize("mode", NUMPY_ONLY)
def test_lstm_unrolled_with_masks_trains(mode):
    dim, n_words, ydim = 6, 20, 2
    n_steps = 3 if mode == "NUMPY" else 2  # each unrolled step adds its own Numba kernels
    rng = np.random.RandomState(123)
    tparams = OrderedDict(
        Wemb=symlab.shared((0.5 * rng.randn(n_words, dim)).astype(floatx()), name="Wemb"),
        lstm_W=symlab.shared(np.concatenate([ortho_weight(rng, dim) for _ in range(4)], axis=1), name="lstm_W"),
        lstm_U=symlab.shared(np.concatenate([ortho_weight(rng, dim) for _ in range(4)], axis=1), name="lstm_U"),
        lstm_b=symlab.shared(np.zeros(4 * dim, dtype=floatx()), name="lstm_b"),
        U=symlab.shared((0.01 * rng.randn(dim, ydim)).astype(floatx()), name="U"),
        b=symlab.shared(np.zeros(ydim, dtype=floatx()), name="b"),
    )
    x = T.matrix("x", dtype="int64")
    mask = T.matrix("mask", dtype=floatx())
    y = T.vector("y", dtype="int64")
    n_samples = x.shape[1]
    emb = tparams["Wemb"][x.flatten()].reshape([x.shape[0], n_samples, dim])

    def _slice(_x, n):
        return _x[:, n * dim : (n + 1) * dim]

    state_below = T.dot(emb, tparams["lstm_W"]) + tparams["lstm_b"]
    h = c = T.alloc(np.asarray(0.0, dtype=floatx()), n_samples, dim)
    hs = []
    for t in range(n_steps):  # what scan does over the time steps
        m_ = mask[t]
        preact = T.dot(h, tparams["lstm_U"]) + state_below[t]
        i, f, o = (T.nnet.sigmoid(_slice(preact, k)) for k in range(3))
        c_new = f * c + i * T.tanh(_slice(preact, 3))
        c = m_[:, None] * c_new + (1.0 - m_)[:, None] * c
        h = m_[:, None] * (o * T.tanh(c)) + (1.0 - m_)[:, None] * h
        hs.append(h)
    proj = (T.stack(hs) * mask[:, :, None]).sum(axis=0) / mask.sum(axis=0)[:, None]
    pred = T.nnet.softmax(T.dot(proj, tparams["U"]) + tparams["b"])
    cost = -T.log(pred[T.arange(n_samples), y] + 1e-8).mean()
    params = list(tparams.values())
    f_train = symlab.function([x, mask, y], cost, updates=sgd(cost, params, 1.0), mode=mode)

    data = np.random.default_rng(19)
    lengths = data.integers(1, n_steps + 1, size=16)
    words = np.zeros((n_steps, 16), dtype="int64")
    masks_ = np.zeros((n_steps, 16), dtype=floatx())
    for k, length in enumerate(lengths):
        words[:length, k] = data.integers(1, n_words, size=length)
        masks_[:length, k] = 1.0
    targets = (np.sum(words >= n_words // 2, axis=0) * 2 > lengths).astype("int64")

    def step(i):
        cols = slice(i * 8, (i + 1) * 8)
        # contiguous minibatches, as lstm.py's prepare_data makes them
        return f_train(np.ascontiguousarray(words[:, cols]), np.ascontiguousarray(masks_[:, cols]), targets[cols])

    assert_falls(epoch_means(step, 2, epochs=4))


def test_dot_of_a_3d_tensor_and_a_matrix_is_numpy_dot():
    """lstm.py's ``T.dot(state_below, W)`` with a 3-d ``state_below``: NumPy's dot, and its gradient."""
    rng = np.random.default_rng(20)
    a, w, v = T.tensor3("a"), T.matrix("w"), T.vector("v")
    A, W, V = rng.normal(size=(3, 2, 4)), rng.normal(size=(4, 5)), rng.normal(size=4)
    got, got_v = symlab.function([a, w, v], [T.dot(a, w), T.dot(a, v)], mode="NUMPY")(A, W, V)
    np.testing.assert_allclose(got, np.dot(A, W), rtol=1e-14)
    np.testing.assert_allclose(got_v, np.dot(A, V), rtol=1e-14)
    symlab.gradient.verify_grad(lambda a_, w_: T.dot(a_, w_), [A, W], rng=np.random.default_rng(0))


# -- tools/classic_models.py: the tutorials' own programs, with only the renaming ------------------------------

TOOL = Path(__file__).resolve().parents[2] / "tools" / "classic_models.py"


def load_tool():
    name = "symlab_tool_classic_models"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, TOOL)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up
        spec.loader.exec_module(module)
    return sys.modules[name]


def test_the_tool_renames_the_name_theano_and_nothing_else():
    rename = load_tool().rename
    source = (
        "import theano\n"
        "import theano.tensor as T\n"
        "from theano.tensor.signal import pool\n"
        "from theano import tensor as T\n"
        "theano_rng = theano.shared(0)  # theano stays in comments\n"
        "s = 'theano'\n"
    )
    renamed, count = rename(source)
    assert count == 5
    assert renamed == (
        "import symlab\n"
        "import symlab.tensor as T\n"
        "from symlab.tensor.signal import pool\n"
        "from symlab import tensor as T\n"
        "theano_rng = symlab.shared(0)  # theano stays in comments\n"
        "s = 'theano'\n"
    )


@pytest.mark.skipif(
    not Path(load_tool().DEFAULT_SNAPSHOT).is_dir(), reason="no snapshot of lisa-lab/DeepLearningTutorials here"
)
def test_the_tutorials_programs_train_with_only_the_renaming():
    """logistic_sgd, mlp, dA and SdA (whose corruption draws with ``MRG_RandomStreams``); the programs with
    ``scan`` (rbm, DBN, rnnslu and lstm) are the next tests."""
    tool = load_tool()
    mods = tool.SnapshotModules(tool.DEFAULT_SNAPSHOT)
    programs = ("logistic_sgd", "mlp", "dA", "SdA")
    with mods.installed(), tool.default_mode("NUMPY"):
        results = [tool.run_program(name, mods) for name in programs]
    for result in results:
        assert result.trains, (result.program, result.error, result.trace)
        assert result.costs, result.program
        for means in result.costs.values():  # SdA: each layer's pretraining, then the finetuning
            assert_falls(means)
    assert len(results[3].costs) == 4
    assert not set(programs) & set(sys.modules)  # the programs' modules are forgotten


@pytest.mark.skipif(
    not Path(load_tool().DEFAULT_SNAPSHOT).is_dir(), reason="no snapshot of lisa-lab/DeepLearningTutorials here"
)
def test_the_tutorials_programs_with_scan_train_with_only_the_renaming():
    """rbm (its Gibbs chain of k=15 steps is a scan drawing from ``RandomStreams`` in its body, returning updates
    to which rbm.py adds the parameters' and the persistent chain's) and DBN (CD-1 chains of one step, for
    each of its three RBMs, then finetuning)."""
    tool = load_tool()
    mods = tool.SnapshotModules(tool.DEFAULT_SNAPSHOT)
    programs = ("rbm", "DBN")
    with mods.installed(), tool.default_mode("NUMPY"):
        results = [tool.run_program(name, mods) for name in programs]
    for result in results:
        assert result.trains, (result.program, result.error, result.trace)
    rbm, dbn = results
    assert list(rbm.costs) == ["PCD-15"] and np.all(np.isfinite(rbm.costs["PCD-15"]))
    assert list(dbn.costs) == ["pretrain 0", "pretrain 1", "pretrain 2", "finetune"]
    assert all(np.all(np.isfinite(means)) for means in dbn.costs.values())
    assert_falls(dbn.costs["finetune"])


@pytest.mark.skipif(
    not Path(load_tool().DEFAULT_SNAPSHOT).is_dir(), reason="no snapshot of lisa-lab/DeepLearningTutorials here"
)
def test_the_tutorials_recurrent_programs_train_through_time_with_only_the_renaming():
    """rnnslu (an Elman network: scan over the words of a sentence, a state and a mapped softmax row) and lstm
    (scan over time steps with masks, adadelta on the gradient through time) train with their own drivers."""
    tool = load_tool()
    mods = tool.SnapshotModules(tool.DEFAULT_SNAPSHOT)
    with mods.installed(), tool.default_mode("NUMPY"):
        results = [tool.run_program(name, mods) for name in ("rnnslu", "lstm")]
    for result in results:
        assert result.trains, (result.program, result.error, result.trace)
        (means,) = result.costs.values()
        assert_falls(means)


def elman_sgd_step_in_numpy(params, windows, labels, lr):
    """One step of rnnslu's ``sentence_train`` written in NumPy: the NLL, then backpropagation through time.

    ``params``: emb, wx, wh, w, bh, b, h0 (rnnslu's order); ``windows``: the context windows (word indices, -1
    the padding row, as ``emb[idxs]`` reads it). Returns the NLL and the parameters after the step."""
    emb, wx, wh, w, bh, b, h0 = params
    n, (_, de) = len(windows), emb.shape
    x = emb[windows].reshape(n, -1)
    hs, ps, h = [], [], h0
    for t in range(n):
        h = 1 / (1 + np.exp(-(x[t] @ wx + h @ wh + bh)))
        o = h @ w + b
        p = np.exp(o - o.max()) / np.exp(o - o.max()).sum()
        hs.append(h)
        ps.append(p)
    nll = -np.mean([np.log(ps[t][labels[t]]) for t in range(n)])
    grads = [np.zeros_like(v) for v in params]
    g_emb, g_wx, g_wh, g_w, g_bh, g_b, g_h0 = grads
    dh_next = np.zeros_like(h0)
    for t in reversed(range(n)):
        do = ps[t].copy()
        do[labels[t]] -= 1
        do /= n
        g_w += np.outer(hs[t], do)
        g_b += do
        da = (do @ w.T + dh_next) * hs[t] * (1 - hs[t])
        g_wx += np.outer(x[t], da)
        h_prev = hs[t - 1] if t else h0
        g_wh += np.outer(h_prev, da)
        g_bh += da
        dh_next = da @ wh.T
        np.add.at(g_emb, windows[t], (da @ wx.T).reshape(-1, de))
    g_h0 += dh_next
    return nll, [v - lr * g for v, g in zip(params, grads)]


@pytest.mark.skipif(
    not Path(load_tool().DEFAULT_SNAPSHOT).is_dir(), reason="no snapshot of lisa-lab/DeepLearningTutorials here"
)
def test_one_step_of_rnnslu_equals_backpropagation_through_time_in_numpy():
    """rnnslu.py's own ``RNNSLU`` (scan over a sentence; ``T.grad`` through the scan): its cost and its seven
    parameters after one ``sentence_train`` step equal the same step written in NumPy."""
    tool = load_tool()
    mods = tool.SnapshotModules(tool.DEFAULT_SNAPSHOT)
    with mods.installed(), tool.default_mode("NUMPY"):
        m = mods.load("rnnslu")
        np.random.seed(34)  # RNNSLU draws its initial weights from NumPy's global generator
        rnn = m.RNNSLU(nh=5, nc=3, ne=9, de=4, cs=3)
        sentence = [2, 7, 0, 8]
        windows = np.asarray(m.contextwin(sentence, 3), dtype="int32")
        labels = np.array([1, 0, 2, 1], dtype="int32")
        before = [p.get_value() for p in rnn.params]
        before[-1] = before[-1] + np.linspace(-0.5, 0.5, 5)  # a nonzero h0, so that its gradient shows
        rnn.h0.set_value(before[-1])
        nll = rnn.sentence_train(windows, labels, 0.3)
        after = [p.get_value() for p in rnn.params]
    want_nll, want = elman_sgd_step_in_numpy(before, windows, labels, 0.3)
    assert float(nll) == pytest.approx(want_nll, rel=1e-12)
    for param, got, expected in zip(rnn.params, after, want):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-13, err_msg=param.name)


@pytest.mark.skipif(
    not Path(load_tool().DEFAULT_SNAPSHOT).is_dir(), reason="no snapshot of lisa-lab/DeepLearningTutorials here"
)
def test_the_gibbs_chain_of_rbm_py_equals_numpy_replaying_its_generators():
    """rbm.py's CD-k chain: ``scan(self.gibbs_hvh, outputs_info=[None] * 5 + [chain_start], n_steps=k)``, whose
    body draws from rbm.py's ``RandomStreams`` (``MRG_RandomStreams``: a binomial is ``uniform(size) < p``; two new
    generators, carried through the loop and returned as updates). NumPy, given copies of the two generators,
    replays the chain: the same samples, bit for bit."""
    tool = load_tool()
    mods = tool.SnapshotModules(tool.DEFAULT_SNAPSHOT)
    with mods.installed(), tool.default_mode("NUMPY"):
        m = mods.load("rbm")
        numpy_rng = np.random.RandomState(34)
        rbm = m.RBM(input=T.matrix("x"), n_visible=6, n_hidden=4, numpy_rng=numpy_rng,
                    theano_rng=m.RandomStreams(numpy_rng.randint(2**30)))
        rbm.hbias.set_value(np.linspace(-1.0, 1.0, 4))
        rbm.vbias.set_value(np.linspace(0.5, -0.5, 6))
        start = T.matrix("start")
        outputs, updates = symlab.scan(rbm.gibbs_hvh, outputs_info=[None, None, None, None, None, start], n_steps=3,
                                       name="gibbs_hvh")
        v_generator, h_generator = updates  # the body draws v, then h
        chain = symlab.function([start], [outputs[1], outputs[2], outputs[5]], updates=updates)
        replay_v, replay_h = v_generator.get_value(), h_generator.get_value()
        W, hbias, vbias = rbm.W.get_value(), rbm.hbias.get_value(), rbm.vbias.get_value()
        h0 = (np.random.default_rng(0).random((5, 4)) < 0.5).astype(floatx())
        for _ in range(2):  # the second call goes on from the generators the first one left
            v_means, v_samples, h_samples = chain(h0)
            h = h0
            for t in range(3):
                v_mean = 1 / (1 + np.exp(-(h @ W.T + vbias)))
                np.testing.assert_allclose(v_means[t], v_mean, rtol=1e-13)
                v = (replay_v.uniform(0.0, 1.0, size=v_mean.shape) < v_means[t]).astype(floatx())
                np.testing.assert_array_equal(v_samples[t], v)
                h_mean = 1 / (1 + np.exp(-(v @ W + hbias)))
                h = (replay_h.uniform(0.0, 1.0, size=h_mean.shape) < h_mean).astype(floatx())
                np.testing.assert_array_equal(h_samples[t], h)
        assert v_generator.get_value().bit_generator.state == replay_v.bit_generator.state
        assert h_generator.get_value().bit_generator.state == replay_h.bit_generator.state
