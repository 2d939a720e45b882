"""Run the classic Theano "Deep Learning Tutorials" on symlab, with only the renaming.

For each of the nine programs of the tutorials (``code/logistic_sgd.py`` ... ``code/lstm.py`` of
the lisa-lab/DeepLearningTutorials repository), this script

1. reads the program from a git snapshot of the repository (``git show HEAD:code/NAME.py``);
2. renames ``theano`` to ``symlab`` and nothing else: every Python name token ``theano``
   becomes ``symlab`` (``import theano.tensor as T``, ``from theano.tensor.signal import pool``,
   ``from theano.tensor.nnet import conv2d``, ``theano.shared``, ``theano.config.floatX`` ...);
   strings and comments are left alone;
3. imports it as a module (not as ``__main__``, so its training driver does not run and no
   data set is loaded or downloaded); the programs import each other
   (``from logistic_sgd import LogisticRegression``) and the snapshot's helpers (``utils``,
   ``imdb``), which are served from the snapshot the same way;
4. builds the model class(es) the program defines the way its own driver does (the same
   constructors, cost, ``grad``, updates and ``symlab.function(..., updates=, givens=)`` on
   shared data sets) on small synthetic data of the right shapes, and trains a few epochs.

It prints one row per program: does it import, does it build (every function of the driver
compiles), does it train (finite cost, and falling where the cost is a training loss), the
cost of the first and last epoch, and otherwise the first error, classified as ``needs scan``,
``needs random streams`` or ``other``, with the tutorial line where it happened.

Usage (from the repository root)::

    .venv/bin/python tools/classic_models.py [SNAPSHOT] [--mode NUMPY|NUMBA|...] [--only NAME ...] [-v]

``SNAPSHOT`` is the git directory of the snapshot (default: :data:`DEFAULT_SNAPSHOT`).
``--mode`` is the mode the programs' own ``symlab.function`` calls get (they pass none; the
default here is ``NUMPY``, because Numba's first compile of a model's kernels takes tens of
seconds; with symlab's default background compile the first calls of a ``NUMBA`` function may
run on the NumPy tier: ``SYMLAB_BACKGROUND_COMPILE=0`` waits for the machine code); ``-v``
prints the full traceback of each failure.

The data are synthetic, shaped like the drivers' (MNIST-like rows of 28 x 28 pixels in [0, 1],
mostly 0, one sparse prototype image per class; word-index sentences; padded sequences). The
sizes are the drivers' where they are cheap (batch 20, 500 hidden units, LeNet's nkerns
[20, 50]); the stacked models use layers of 100 units instead of 1000, the LSTM 16 dimensions
instead of 128. Each row of the table says its sizes.

The only stand-in: when Pillow is not installed, ``rbm`` and ``dA`` (which fall back to
``import Image`` for drawing their filters, which this script never does) get a module
``Image`` whose functions raise.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.abc
import importlib.util
import io
import linecache
import subprocess
import sys
import time
import tokenize
import traceback
import types
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

DEFAULT_SNAPSHOT = "/work/.mirror/lisa-lab+DeepLearningTutorials/repo/.git"

#: The nine programs, in the order of the tutorial.
PROGRAMS = ("logistic_sgd", "mlp", "convolutional_mlp", "dA", "SdA", "rbm", "DBN", "rnnslu", "lstm")
#: The snapshot's helper modules the programs import (``utils`` draws filters, ``imdb`` loads reviews).
HELPERS = ("utils", "imdb")

N_EPOCHS = 3


# -- reading and renaming -------------------------------------------------------------------------


def read_source(snapshot: str, name: str) -> str:
    """The text of ``code/<name>.py`` at the snapshot's HEAD."""
    done = subprocess.run(
        ["git", "-C", snapshot, "show", f"HEAD:code/{name}.py"], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise FileNotFoundError(f"code/{name}.py is not in the snapshot {snapshot}: {done.stderr.strip()}")
    return done.stdout


def snapshot_module_names(snapshot: str) -> set[str]:
    """The module names of the snapshot's ``code/*.py`` files."""
    done = subprocess.run(
        ["git", "-C", snapshot, "ls-tree", "--name-only", "HEAD", "code/"], capture_output=True, text=True, check=True
    )
    paths = done.stdout.split()
    return {p[len("code/") : -len(".py")] for p in paths if p.endswith(".py") and p.count("/") == 1}


def rename(source: str) -> tuple[str, int]:
    """``source`` with every name token ``theano`` replaced by ``symlab``, and the count.

    Only Python names change (``import theano.tensor as T`` -> ``import symlab.tensor as T``);
    ``theano_rng``, strings and comments are other tokens and stay. Both words have six
    letters, so every other token keeps its position.

    >>> rename("import theano.tensor as T  # theano\\nx = theano_rng\\n")
    ('import symlab.tensor as T  # theano\\nx = theano_rng\\n', 1)
    """
    lines = source.splitlines(keepends=True)
    count = 0
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.NAME and tok.string == "theano":
            row, col = tok.start
            line = lines[row - 1]
            lines[row - 1] = line[:col] + "symlab" + line[col + len("theano") :]
            count += 1
    return "".join(lines), count


# -- serving the snapshot's modules ---------------------------------------------------------------


def _pillow_missing() -> bool:
    return importlib.util.find_spec("PIL") is None


def _image_stand_in(module: types.ModuleType) -> None:
    def fromarray(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("Pillow is not installed: classic_models.py's stand-in 'Image' module cannot draw images")

    module.fromarray = fromarray


class SnapshotModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports the programs and their helpers from the snapshot's ``code/``, renamed (see :func:`rename`).

    Each module gets its own name (never ``__main__``) and a ``__file__`` inside the snapshot's
    ``code/`` folder; its renamed text is put in :mod:`linecache` so tracebacks show its lines.
    """

    def __init__(self, snapshot: str) -> None:
        self.snapshot = snapshot
        self.available = snapshot_module_names(snapshot) & set(PROGRAMS + HELPERS)
        self.stand_ins: dict[str, Callable[[types.ModuleType], None]] = {}
        if _pillow_missing():
            self.stand_ins["Image"] = _image_stand_in
        self.renamed: dict[str, int] = {}

    def filename(self, name: str) -> str:
        return f"{self.snapshot}/code/{name}.py"

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if path is None and (fullname in self.available or fullname in self.stand_ins):
            return importlib.util.spec_from_loader(fullname, self, origin=self.filename(fullname))
        return None

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        name = module.__name__
        if name in self.stand_ins:
            self.stand_ins[name](module)
            return
        source, count = rename(read_source(self.snapshot, name))
        self.renamed[name] = count
        filename = self.filename(name)
        linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
        module.__file__ = filename
        with warnings.catch_warnings():  # the tutorials' docstrings hold LaTeX: "invalid escape sequence"
            warnings.simplefilter("ignore", (DeprecationWarning, SyntaxWarning))
            code = compile(source, filename, "exec")
        exec(code, module.__dict__)  # noqa: S102 - running the tutorial is the point

    @contextlib.contextmanager
    def installed(self) -> Iterator[SnapshotModules]:
        """Serve the snapshot's modules for the duration of the block, then forget them."""
        names = self.available | set(self.stand_ins)
        before = {n: sys.modules[n] for n in names if n in sys.modules}
        for n in before:
            del sys.modules[n]
        sys.meta_path.insert(0, self)
        try:
            yield self
        finally:
            sys.meta_path.remove(self)
            for n in names:
                sys.modules.pop(n, None)
            sys.modules.update(before)

    def load(self, name: str) -> types.ModuleType:
        return importlib.import_module(name)


def default_mode(mode: str | None) -> contextlib.AbstractContextManager[Any]:
    """Make ``symlab.function`` calls that name no mode use ``mode`` (``None``: leave the default)."""
    import symlab

    if mode is None:
        return contextlib.nullcontext()
    symlab.compile.get_mode(mode)  # a clear error for an unknown name
    return symlab.config.change_flags(mode=mode)


# -- synthetic data -------------------------------------------------------------------------------


def mnist_like(rng: np.random.Generator, n: int, n_in: int = 28 * 28, n_classes: int = 10) -> tuple[Any, Any]:
    """``n`` examples of ``n_in`` pixels in [0, 1], mostly 0 like MNIST's: one sparse prototype
    image per class, with a quarter of its ink moved at random, and the class labels."""
    prototypes = rng.uniform(0.5, 1.0, size=(n_classes, n_in)) * (rng.uniform(size=(n_classes, n_in)) < 0.15)
    y = rng.integers(0, n_classes, size=n)
    keep = rng.uniform(size=(n, n_in)) < 0.75
    stray = rng.uniform(0.5, 1.0, size=(n, n_in)) * (rng.uniform(size=(n, n_in)) < 0.04)
    return np.maximum(prototypes[y] * keep, stray), y


def shared_dataset(x: Any, y: Any) -> tuple[Any, Any]:
    """Shared variables as ``load_data`` makes them: floatX data, floatX labels cast to int32."""
    import symlab
    import symlab.tensor as T

    floatx = symlab.config.floatX
    shared_x = symlab.shared(np.asarray(x, dtype=floatx), borrow=True)
    shared_y = symlab.shared(np.asarray(y, dtype=floatx), borrow=True)
    return shared_x, T.cast(shared_y, "int32")


def mnist_datasets(n_train: int, n_test: int, seed: int = 0) -> list[tuple[Any, Any]]:
    """``[(train_x, train_y), (valid_x, valid_y), (test_x, test_y)]`` like ``load_data``'s result."""
    rng = np.random.default_rng(seed)
    x, y = mnist_like(rng, n_train + 2 * n_test)
    train = shared_dataset(x[:n_train], y[:n_train])
    valid = shared_dataset(x[n_train : n_train + n_test], y[n_train : n_train + n_test])
    test = shared_dataset(x[n_train + n_test :], y[n_train + n_test :])
    return [train, valid, test]


def minibatch(data: Any, index: Any, batch_size: int) -> Any:
    return data[index * batch_size : (index + 1) * batch_size]


# -- building the models as the drivers do --------------------------------------------------------


@dataclass
class Phase:
    """One training loop of a driver: ``step(i)`` trains on minibatch ``i`` and returns its cost.

    ``must_fall``: the cost is a training loss that must fall (False for monitoring proxies
    such as an RBM's pseudo-likelihood).
    """

    name: str
    step: Callable[[int], Any]
    n_batches: int
    must_fall: bool = True


@dataclass
class Built:
    phases: list[Phase]
    sizes: str
    check: Callable[[], str] | None = None  # run after training (e.g. the test error)


def build_logistic_sgd(mods: SnapshotModules) -> Built:
    import symlab
    import symlab.tensor as T

    m = mods.load("logistic_sgd")
    batch_size, learning_rate = 20, 0.13
    (train_x, train_y), _, (test_x, test_y) = mnist_datasets(60, 20)
    index = T.lscalar()
    x = T.matrix("x")
    y = T.ivector("y")
    classifier = m.LogisticRegression(input=x, n_in=28 * 28, n_out=10)
    cost = classifier.negative_log_likelihood(y)
    test_model = symlab.function(
        inputs=[index],
        outputs=classifier.errors(y),
        givens={x: minibatch(test_x, index, batch_size), y: minibatch(test_y, index, batch_size)},
    )
    g_w = T.grad(cost=cost, wrt=classifier.W)
    g_b = T.grad(cost=cost, wrt=classifier.b)
    updates = [(classifier.W, classifier.W - learning_rate * g_w), (classifier.b, classifier.b - learning_rate * g_b)]
    train_model = symlab.function(
        inputs=[index],
        outputs=cost,
        updates=updates,
        givens={x: minibatch(train_x, index, batch_size), y: minibatch(train_y, index, batch_size)},
    )
    return Built(
        [Phase("sgd", train_model, 3)],
        "60 x 784, batch 20, 10 classes",
        lambda: f"test error {float(test_model(0)):.2f}",
    )


def build_mlp(mods: SnapshotModules) -> Built:
    import symlab
    import symlab.tensor as T

    m = mods.load("mlp")
    batch_size, learning_rate, l1_reg, l2_reg, n_hidden = 20, 0.01, 0.00, 0.0001, 500
    (train_x, train_y), (valid_x, valid_y), _ = mnist_datasets(60, 20)
    index = T.lscalar()
    x = T.matrix("x")
    y = T.ivector("y")
    classifier = m.MLP(rng=np.random.RandomState(1234), input=x, n_in=28 * 28, n_hidden=n_hidden, n_out=10)
    cost = classifier.negative_log_likelihood(y) + l1_reg * classifier.L1 + l2_reg * classifier.L2_sqr
    validate_model = symlab.function(
        inputs=[index],
        outputs=classifier.errors(y),
        givens={x: minibatch(valid_x, index, batch_size), y: minibatch(valid_y, index, batch_size)},
    )
    gparams = [T.grad(cost, param) for param in classifier.params]
    updates = [(param, param - learning_rate * gparam) for param, gparam in zip(classifier.params, gparams)]
    train_model = symlab.function(
        inputs=[index],
        outputs=cost,
        updates=updates,
        givens={x: minibatch(train_x, index, batch_size), y: minibatch(train_y, index, batch_size)},
    )
    return Built(
        [Phase("sgd", train_model, 3)],
        "60 x 784, batch 20, 500 hidden",
        lambda: f"valid error {float(validate_model(0)):.2f}",
    )


def build_convolutional_mlp(mods: SnapshotModules) -> Built:
    import symlab
    import symlab.tensor as T

    m = mods.load("convolutional_mlp")
    batch_size, learning_rate, nkerns = 20, 0.1, (20, 50)
    rng = np.random.RandomState(23455)
    (train_x, train_y), _, (test_x, test_y) = mnist_datasets(60, 20)
    index = T.lscalar()
    x = T.matrix("x")
    y = T.ivector("y")
    layer0 = m.LeNetConvPoolLayer(
        rng,
        input=x.reshape((batch_size, 1, 28, 28)),
        image_shape=(batch_size, 1, 28, 28),
        filter_shape=(nkerns[0], 1, 5, 5),
        poolsize=(2, 2),
    )
    layer1 = m.LeNetConvPoolLayer(
        rng,
        input=layer0.output,
        image_shape=(batch_size, nkerns[0], 12, 12),
        filter_shape=(nkerns[1], nkerns[0], 5, 5),
        poolsize=(2, 2),
    )
    layer2 = m.HiddenLayer(rng, input=layer1.output.flatten(2), n_in=nkerns[1] * 4 * 4, n_out=500, activation=T.tanh)
    layer3 = m.LogisticRegression(input=layer2.output, n_in=500, n_out=10)
    cost = layer3.negative_log_likelihood(y)
    test_model = symlab.function(
        [index], layer3.errors(y), givens={x: minibatch(test_x, index, batch_size), y: minibatch(test_y, index, batch_size)}
    )
    params = layer3.params + layer2.params + layer1.params + layer0.params
    grads = T.grad(cost, params)
    updates = [(p, p - learning_rate * g) for p, g in zip(params, grads)]
    train_model = symlab.function(
        [index],
        cost,
        updates=updates,
        givens={x: minibatch(train_x, index, batch_size), y: minibatch(train_y, index, batch_size)},
    )
    return Built(
        [Phase("sgd", train_model, 3)],
        f"60 x 1x28x28, batch 20, nkerns {list(nkerns)}",
        lambda: f"test error {float(test_model(0)):.2f}",
    )


def build_dA(mods: SnapshotModules) -> Built:  # noqa: N802 - the program's name
    import symlab
    import symlab.tensor as T

    m = mods.load("dA")
    batch_size = 20
    (train_x, _), _, _ = mnist_datasets(60, 0)
    index = T.lscalar()
    x = T.matrix("x")
    rng = np.random.RandomState(123)
    theano_rng = m.RandomStreams(rng.randint(2**30))
    da = m.dA(numpy_rng=rng, theano_rng=theano_rng, input=x, n_visible=28 * 28, n_hidden=500)
    cost, updates = da.get_cost_updates(corruption_level=0.3, learning_rate=0.1)
    train_da = symlab.function([index], cost, updates=updates, givens={x: minibatch(train_x, index, batch_size)})
    return Built([Phase("dA, corruption 0.3", train_da, 3)], "60 x 784, batch 20, 500 hidden")


def build_SdA(mods: SnapshotModules) -> Built:  # noqa: N802 - the program's name
    m = mods.load("SdA")
    batch_size, hidden = 10, [100, 100, 100]
    datasets = mnist_datasets(30, 10)
    sda = m.SdA(numpy_rng=np.random.RandomState(89677), n_ins=28 * 28, hidden_layers_sizes=hidden, n_outs=10)
    pretraining_fns = sda.pretraining_functions(train_set_x=datasets[0][0], batch_size=batch_size)
    train_fn, validate_model, _ = sda.build_finetune_functions(datasets=datasets, batch_size=batch_size, learning_rate=0.1)
    phases = [
        Phase(f"pretrain {i}", lambda b, fn=fn, c=c: fn(index=b, corruption=c, lr=0.1), 3)
        for i, (fn, c) in enumerate(zip(pretraining_fns, [0.1, 0.2, 0.3]))
    ]
    phases.append(Phase("finetune", train_fn, 3))
    return Built(phases, f"30 x 784, batch 10, hidden {hidden}", lambda: f"valid error {np.mean(validate_model()):.2f}")


def build_rbm(mods: SnapshotModules) -> Built:
    import symlab
    import symlab.tensor as T

    m = mods.load("rbm")
    batch_size, n_hidden = 20, 100
    (train_x, _), _, _ = mnist_datasets(60, 0)
    index = T.lscalar()
    x = T.matrix("x")
    rng = np.random.RandomState(123)
    theano_rng = m.RandomStreams(rng.randint(2**30))
    persistent_chain = symlab.shared(np.zeros((batch_size, n_hidden), dtype=symlab.config.floatX), borrow=True)
    rbm = m.RBM(input=x, n_visible=28 * 28, n_hidden=n_hidden, numpy_rng=rng, theano_rng=theano_rng)
    cost, updates = rbm.get_cost_updates(lr=0.1, persistent=persistent_chain, k=15)
    train_rbm = symlab.function(
        [index], cost, updates=updates, givens={x: minibatch(train_x, index, batch_size)}, name="train_rbm"
    )
    # the pseudo-likelihood the driver prints is a monitoring proxy, not the loss minimised
    return Built([Phase("PCD-15", train_rbm, 3, must_fall=False)], f"60 x 784, batch 20, {n_hidden} hidden, k=15")


def build_DBN(mods: SnapshotModules) -> Built:  # noqa: N802 - the program's name
    m = mods.load("DBN")
    batch_size, hidden = 10, [100, 100, 100]
    datasets = mnist_datasets(30, 10)
    dbn = m.DBN(numpy_rng=np.random.RandomState(123), n_ins=28 * 28, hidden_layers_sizes=hidden, n_outs=10)
    pretraining_fns = dbn.pretraining_functions(train_set_x=datasets[0][0], batch_size=batch_size, k=1)
    train_fn, validate_model, _ = dbn.build_finetune_functions(datasets=datasets, batch_size=batch_size, learning_rate=0.1)
    # the pretraining cost is the reconstruction cross-entropy proxy of CD-1: monitored, not minimised
    phases = [
        Phase(f"pretrain {i}", lambda b, fn=fn: fn(index=b, lr=0.01), 3, must_fall=False)
        for i, fn in enumerate(pretraining_fns)
    ]
    phases.append(Phase("finetune", train_fn, 3))
    return Built(phases, f"30 x 784, batch 10, hidden {hidden}", lambda: f"valid error {np.mean(validate_model()):.2f}")


def build_rnnslu(mods: SnapshotModules) -> Built:
    m = mods.load("rnnslu")
    vocsize, nclasses, win, learning_rate = 30, 5, 7, 0.0970806646812754
    rng = np.random.default_rng(345)
    sentences = [rng.integers(0, vocsize, size=int(n)).astype("int32") for n in rng.integers(4, 9, size=6)]
    labels = [(s % nclasses).astype("int32") for s in sentences]
    np.random.seed(345)
    rnn = m.RNNSLU(nh=20, nc=nclasses, ne=vocsize, de=10, cs=win)

    def step(i: int) -> Any:
        # RNNSLU.train, keeping the cost it drops
        words = [np.asarray(w).astype("int32") for w in m.contextwin(sentences[i], win)]
        cost = rnn.sentence_train(words, labels[i], learning_rate)
        rnn.normalize()
        return cost

    def check() -> str:
        pred = rnn.classify(np.asarray(m.contextwin(sentences[0], win)).astype("int32"))
        return f"sentence 0: {int(np.sum(pred == labels[0]))}/{len(labels[0])} labels right"

    return Built([Phase("sentence sgd", step, len(sentences))], "6 sentences of 4-8 words, 30 words, 5 labels", check)


def build_lstm(mods: SnapshotModules) -> Built:
    import symlab.tensor as T

    m = mods.load("lstm")
    options = {
        "dim_proj": 16,
        "n_words": 50,
        "encoder": "lstm",
        "use_dropout": True,
        "decay_c": 0.0,
        "ydim": 2,
    }
    rng = np.random.default_rng(7)
    seqs = [list(rng.integers(2, options["n_words"], size=int(n))) for n in rng.integers(3, 10, size=24)]
    targets = [int(np.sum(np.asarray(s) > options["n_words"] // 2) * 2 > len(s)) for s in seqs]
    _, prepare_data = m.get_dataset("imdb")
    params = m.init_params(options)
    tparams = m.init_tparams(params)
    use_noise, x, mask, y, _, f_pred, cost = m.build_model(tparams, options)
    grads = T.grad(cost, wrt=list(tparams.values()))
    lr = T.scalar(name="lr")
    f_grad_shared, f_update = m.adadelta(lr, tparams, grads, x, mask, y, cost)
    batch_size = 8

    def step(i: int) -> Any:
        use_noise.set_value(1.0)
        batch = slice(i * batch_size, (i + 1) * batch_size)
        bx, bmask, by = prepare_data(seqs[batch], targets[batch])
        value = f_grad_shared(bx, bmask, by)
        f_update(0.0001)
        return value

    def check() -> str:
        use_noise.set_value(0.0)
        bx, bmask, _ = prepare_data(seqs, targets)
        return f"train accuracy {np.mean(f_pred(bx, bmask) == np.asarray(targets)):.2f}"

    return Built([Phase("adadelta", step, len(seqs) // batch_size)], "24 sequences of 3-9 words, 50 words, dim 16", check)


BUILDERS: dict[str, Callable[[SnapshotModules], Built]] = {
    "logistic_sgd": build_logistic_sgd,
    "mlp": build_mlp,
    "convolutional_mlp": build_convolutional_mlp,
    "dA": build_dA,
    "SdA": build_SdA,
    "rbm": build_rbm,
    "DBN": build_DBN,
    "rnnslu": build_rnnslu,
    "lstm": build_lstm,
}


# -- running and reporting ------------------------------------------------------------------------


@dataclass
class Result:
    program: str
    imports: bool = False
    builds: bool = False
    trains: bool = False
    renamed: int = 0
    sizes: str = ""
    costs: dict[str, list[float]] = field(default_factory=dict)  # epoch-mean costs per phase
    note: str = ""
    error: str = ""
    kind: str = ""
    where: str = ""
    trace: str = ""
    seconds: float = 0.0

    @property
    def status(self) -> str:
        if self.trains:
            return "trains"
        if self.builds:
            return "builds only"
        if self.imports:
            return "build fails"
        return "import fails"


def classify(exc: BaseException, tutorial_line: str) -> str:
    """``needs scan``, ``needs random streams`` or ``other`` for an exception of a tutorial."""
    text = f"{type(exc).__name__}: {exc} {tutorial_line}"
    if "rng_mrg" in text or "RandomStreams" in text or "shared_randomstreams" in text:
        return "needs random streams"
    if getattr(exc, "name", None) == "scan" or ".scan(" in tutorial_line or "'scan'" in str(exc):
        return "needs scan"
    return "other"


def tutorial_frame(exc: BaseException, mods: SnapshotModules) -> tuple[str, str]:
    """The innermost traceback frame inside a tutorial program: ``("dA.py:43", source line)``."""
    prefix = f"{mods.snapshot}/code/"
    where, line = "", ""
    frames = traceback.extract_tb(exc.__traceback__)
    for frame in frames:
        if frame.filename.startswith(prefix):
            where = f"{frame.filename[len(prefix):]}:{frame.lineno}"
            line = (frame.line or "").strip()
    if not where:  # in this script's own part of the driver (the data sets, the training loop)
        for frame in frames:
            if frame.filename == __file__:
                where, line = f"classic_models.py:{frame.lineno}", (frame.line or "").strip()
    return where, line


def _scalar(value: Any) -> float:
    return float(np.asarray(value, dtype=float))


def run_program(name: str, mods: SnapshotModules, verbose: bool = False) -> Result:
    result = Result(name)
    start = time.perf_counter()
    stage = "import"
    try:
        mods.load(name)
        result.imports = True
        result.renamed = mods.renamed.get(name, 0)
        stage = "build"
        built = BUILDERS[name](mods)
        result.builds = True
        result.sizes = built.sizes
        stage = "train"
        ok = True
        for phase in built.phases:
            means = []
            for _ in range(N_EPOCHS):
                means.append(float(np.mean([_scalar(phase.step(b)) for b in range(phase.n_batches)])))
            result.costs[phase.name] = means
            problem = ""
            if not np.all(np.isfinite(means)):
                problem = f"{phase.name}: cost not finite {means}"
            elif phase.must_fall and not means[-1] < means[0]:
                problem = f"{phase.name}: cost not falling {means}"
            if problem and ok:  # the first phase that fails is the one reported
                ok, result.note = False, problem
        if built.check is not None and ok:
            result.note = built.check()
        result.trains = ok
    except Exception as exc:  # noqa: BLE001 - the report is the point: every failure is recorded
        where, line = tutorial_frame(exc, mods)
        result.error = f"{type(exc).__name__}: {exc}".splitlines()[0][:160]
        result.kind = classify(exc, line)
        result.where = f"{stage} {where} `{line[:70]}`" if where else stage
        result.trace = traceback.format_exc()
        if not result.imports:
            result.renamed = mods.renamed.get(name, 0)
    result.seconds = time.perf_counter() - start
    if verbose and result.trace:
        print(result.trace, file=sys.stderr)
    return result


def format_table(results: Sequence[Result]) -> str:
    """The table of results and a summary line."""
    rows = [("program", "renamed", "status", "cost, epoch 1 -> 3", "time", "detail")]
    for r in results:
        if r.costs:
            cost = "; ".join(f"{k} {v[0]:.3g} -> {v[-1]:.3g}" for k, v in r.costs.items())
        else:
            cost = "-"
        if r.error:
            detail = f"[{r.kind}] {r.where}: {r.error}"
        else:
            detail = f"{r.sizes}; {r.note}" if r.note else r.sizes
        rows.append((r.program, str(r.renamed), r.status, cost, f"{r.seconds:.1f}s", detail))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row[:5], widths)) + "  " + row[5] for row in rows]
    lines.insert(1, "-" * (sum(widths) + 2 * 5 + 6))
    n = len(results)
    kinds: dict[str, list[str]] = {}
    for r in results:
        if not r.trains:
            kinds.setdefault(r.kind or "cost check", []).append(r.program)
    summary = (
        f"imports {sum(r.imports for r in results)}/{n}, builds {sum(r.builds for r in results)}/{n}, "
        f"trains {sum(r.trains for r in results)}/{n}"
    )
    if kinds:
        summary += "; not training: " + ", ".join(f"{k} ({', '.join(v)})" for k, v in sorted(kinds.items()))
    lines.append("")
    lines.append(summary)
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("snapshot", nargs="?", default=DEFAULT_SNAPSHOT, help="git directory of the snapshot")
    parser.add_argument("--mode", default="NUMPY", help="mode for the programs' symlab.function calls (default NUMPY)")
    parser.add_argument("--only", nargs="+", choices=PROGRAMS, help="run only these programs")
    parser.add_argument("-v", "--verbose", action="store_true", help="print the traceback of each failure")
    args = parser.parse_args(argv)

    mods = SnapshotModules(args.snapshot)
    results = []
    with mods.installed(), default_mode(args.mode):
        for name in args.only or PROGRAMS:
            results.append(run_program(name, mods, verbose=args.verbose))
    print(f"classic models of {args.snapshot}, mode {args.mode}")
    print(format_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
