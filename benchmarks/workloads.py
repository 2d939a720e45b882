"""The benchmark workloads of issue 8: graph builders for symlab and PyTensor, hand-written NumPy references, data.

Each :class:`Workload` has

``data()``
    the input arrays (a fixed seed per workload, so every process sees the same numbers);
``build_symlab()`` / ``build_pytensor()``
    ``(inputs, outputs)``: the same graph built with ``symlab.tensor`` (and ``symlab.grad``) or
    ``pytensor.tensor`` (and ``pytensor.grad``), ready for ``function(inputs, outputs, ...)``;
``numpy(*arrays)``
    the list of output arrays computed by hand with NumPy, gradients derived by hand.

symlab and PyTensor are imported inside the builders only: importing this module imports NumPy
and nothing else, so a benchmark worker can time ``import symlab`` itself.

>>> w = WORKLOADS["elemwise_1e6"]
>>> [a.shape for a in w.data()]
[(1000000,), (1000000,)]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Builder = Callable[[], tuple[list[Any], list[Any]]]


@dataclass
class Workload:
    """One benchmark workload (see the module's docstring)."""

    name: str
    group: str  # "a".."e" as in the issue, or "x+y" for the small fixed-cost workload
    description: str
    data: Callable[[], list[np.ndarray]]
    build_symlab: Builder
    build_pytensor: Builder | None  # None: PyTensor has no such graph (run.py does not run it)
    numpy: Callable[..., list[np.ndarray]]
    #: Tolerances of the correctness check (compiled result against ``numpy``).
    rtol: float = 1e-7
    atol: float = 1e-10
    params: dict[str, Any] = field(default_factory=dict)
    #: Small inputs of the same types (the compile timing's first call: code compiled lazily at the first
    #: call is compiled then, at a negligible cost of computing). ``None``: ``data``.
    probe: Callable[[], list[np.ndarray]] | None = None


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# -- (a) elemwise chain: exp(-x**2)*sin(y) + log1p(x*x)*0.5 -------------------------------------------------------------


def _elemwise_expr(m: Any, x: Any, y: Any) -> Any:
    return m.exp(-(x**2)) * m.sin(y) + m.log1p(x * x) * 0.5


def elemwise_workload(n: int, label: str) -> Workload:
    def data() -> list[np.ndarray]:
        rng = _rng(1)
        return [rng.standard_normal(n), rng.standard_normal(n)]

    def build_symlab() -> tuple[list[Any], list[Any]]:
        import symlab.tensor as st

        x, y = st.dvector("x"), st.dvector("y")
        return [x, y], [_elemwise_expr(st, x, y)]

    def build_pytensor() -> tuple[list[Any], list[Any]]:
        import pytensor.tensor as pt

        x, y = pt.dvector("x"), pt.dvector("y")
        return [x, y], [_elemwise_expr(pt, x, y)]

    def reference(x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
        return [np.exp(-(x**2)) * np.sin(y) + np.log1p(x * x) * 0.5]

    return Workload(
        f"elemwise_{label}",
        "a",
        f"exp(-x**2)*sin(y) + log1p(x*x)*0.5, {n:,} float64",
        data,
        build_symlab,
        build_pytensor,
        reference,
        params={"n": n},
    )


# -- (b) logistic regression: loss and its gradients ---------------------------------------------------------------------


def logreg_workload(n: int = 10_000, d: int = 100) -> Workload:
    def data() -> list[np.ndarray]:
        rng = _rng(2)
        X = rng.standard_normal((n, d))
        w_true = rng.standard_normal(d)
        y = (X @ w_true + rng.standard_normal(n) > 0).astype(np.float64)
        w = rng.standard_normal(d) * 0.1
        b = np.array(0.1)
        return [X, y, w, b]

    def graph(m: Any, grad: Any, X: Any, y: Any, w: Any, b: Any) -> list[Any]:
        p = m.sigmoid(m.dot(X, w) + b)
        loss = -m.mean(y * m.log(p) + (1.0 - y) * m.log(1.0 - p))
        gw, gb = grad(loss, [w, b])
        return [loss, gw, gb]

    def build_symlab() -> tuple[list[Any], list[Any]]:
        import symlab
        import symlab.tensor as st

        X, y, w, b = st.dmatrix("X"), st.dvector("y"), st.dvector("w"), st.dscalar("b")
        return [X, y, w, b], graph(st, symlab.grad, X, y, w, b)

    def build_pytensor() -> tuple[list[Any], list[Any]]:
        import pytensor
        import pytensor.tensor as pt

        X, y, w, b = pt.dmatrix("X"), pt.dvector("y"), pt.dvector("w"), pt.dscalar("b")
        return [X, y, w, b], graph(pt, pytensor.grad, X, y, w, b)

    def reference(X: np.ndarray, y: np.ndarray, w: np.ndarray, b: np.ndarray) -> list[np.ndarray]:
        z = X @ w + b
        p = 1.0 / (1.0 + np.exp(-z))
        loss = -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))
        gz = (p - y) / len(y)  # d loss / d z
        return [np.asarray(loss), X.T @ gz, np.asarray(gz.sum())]

    return Workload(
        "logreg",
        "b",
        f"logistic regression loss + grad (w, b), X {n}x{d}",
        data,
        build_symlab,
        build_pytensor,
        reference,
        rtol=1e-6,
        params={"n": n, "d": d},
    )


# -- (c) 2-layer MLP, softmax cross-entropy, forward and backward -------------------------------------------------------


def mlp_workload(batch: int = 256, n_in: int = 784, n_hidden: int = 256, n_out: int = 10) -> Workload:
    def data() -> list[np.ndarray]:
        rng = _rng(3)
        X = rng.standard_normal((batch, n_in))
        Y = np.eye(n_out)[rng.integers(0, n_out, batch)]
        W1 = rng.standard_normal((n_in, n_hidden)) * np.sqrt(2.0 / n_in)
        b1 = np.zeros(n_hidden) + 0.01
        W2 = rng.standard_normal((n_hidden, n_out)) * np.sqrt(1.0 / n_hidden)
        b2 = np.zeros(n_out)
        return [X, Y, W1, b1, W2, b2]

    def graph(m: Any, grad: Any, X: Any, Y: Any, W1: Any, b1: Any, W2: Any, b2: Any) -> list[Any]:
        h = m.maximum(m.dot(X, W1) + b1, 0.0)
        logits = m.dot(h, W2) + b2
        loss = -m.mean(m.sum(Y * m.log_softmax(logits, axis=1), axis=1))
        return [loss, *grad(loss, [W1, b1, W2, b2])]

    def build_symlab() -> tuple[list[Any], list[Any]]:
        import symlab
        import symlab.tensor as st

        ins = [st.dmatrix("X"), st.dmatrix("Y"), st.dmatrix("W1"), st.dvector("b1"), st.dmatrix("W2"), st.dvector("b2")]
        return ins, graph(st, symlab.grad, *ins)

    def build_pytensor() -> tuple[list[Any], list[Any]]:
        import pytensor
        import pytensor.tensor as pt
        from pytensor.tensor.special import log_softmax

        ins = [pt.dmatrix("X"), pt.dmatrix("Y"), pt.dmatrix("W1"), pt.dvector("b1"), pt.dmatrix("W2"), pt.dvector("b2")]

        class M:  # pytensor.tensor with log_softmax, which lives in pytensor.tensor.special
            def __getattr__(self, name: str) -> Any:
                return log_softmax if name == "log_softmax" else getattr(pt, name)

        return ins, graph(M(), pytensor.grad, *ins)

    def reference(*arrays: np.ndarray) -> list[np.ndarray]:
        X, Y, W1, b1, W2, b2 = arrays
        a = X @ W1 + b1
        h = np.maximum(a, 0.0)
        logits = h @ W2 + b2
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_sm = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        loss = -np.mean(np.sum(Y * log_sm, axis=1))
        d_logits = (np.exp(log_sm) - Y) / X.shape[0]
        gW2 = h.T @ d_logits
        gb2 = d_logits.sum(axis=0)
        d_a = (d_logits @ W2.T) * (a > 0)
        gW1 = X.T @ d_a
        gb1 = d_a.sum(axis=0)
        return [np.asarray(loss), gW1, gb1, gW2, gb2]

    return Workload(
        "mlp",
        "c",
        f"MLP {n_in}-{n_hidden}-{n_out}, batch {batch}, loss + 4 grads",
        data,
        build_symlab,
        build_pytensor,
        reference,
        rtol=1e-6,
        atol=1e-9,
        params={"batch": batch, "sizes": [n_in, n_hidden, n_out]},
    )


# -- (d) softmax along axis 1 --------------------------------------------------------------------------------------------


def softmax_workload(n: int = 1000) -> Workload:
    def data() -> list[np.ndarray]:
        return [_rng(4).standard_normal((n, n)) * 3.0]

    def build_symlab() -> tuple[list[Any], list[Any]]:
        import symlab.tensor as st

        x = st.dmatrix("x")
        return [x], [st.softmax(x, axis=1)]

    def build_pytensor() -> tuple[list[Any], list[Any]]:
        import pytensor.tensor as pt
        from pytensor.tensor.special import softmax

        x = pt.dmatrix("x")
        return [x], [softmax(x, axis=1)]

    def reference(x: np.ndarray) -> list[np.ndarray]:
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return [e / e.sum(axis=1, keepdims=True)]

    return Workload(
        "softmax",
        "d",
        f"softmax of {n}x{n} along axis 1",
        data,
        build_symlab,
        build_pytensor,
        reference,
        params={"n": n},
    )


# -- (e) long chains of elemwise nodes with repeated subexpressions ------------------------------------------------------


def _chain_step(m: Any, a: Any, b: Any, x: Any) -> tuple[Any, Any]:
    """One step of the chain; each subexpression is built twice (the rewrites must merge them).

    A contraction (Lipschitz constant below 1), so rounding differences do not grow along the chain.
    """
    s1 = m.sin(a) * 0.5
    s2 = m.sin(a) * 0.5  # repeated
    c1 = m.cos(b) * 0.25
    c2 = m.cos(b) * 0.25  # repeated
    return m.tanh(s1 + c2 + x) * 0.9, (s2 - c1) * 0.9


def _chain_steps(m: Any, nodes: int, a: Any, b: Any, x: Any) -> tuple[Any, Any]:
    for _ in range(nodes // CHAIN_NODES_PER_STEP):
        a, b = _chain_step(m, a, b, x)
    return a, b


#: Elemwise nodes one chain step adds: 4 sin/cos, 4 mul by constants, 2 add, tanh, 2 mul by 0.9, sub (and 6
#: DimShuffles broadcasting the constants: 20 graph nodes a step).
CHAIN_NODES_PER_STEP = 14


def chain_workload(nodes: int, size: int = 1000) -> Workload:
    def data() -> list[np.ndarray]:
        rng = _rng(5)
        return [rng.standard_normal(size), rng.standard_normal(size), rng.standard_normal(size) * 0.1]

    def build_symlab() -> tuple[list[Any], list[Any]]:
        import symlab.tensor as st

        a, b, x = st.dvector("a"), st.dvector("b"), st.dvector("x")
        return [a, b, x], [st.add(*_chain_steps(st, nodes, a, b, x))]

    def build_pytensor() -> tuple[list[Any], list[Any]]:
        import pytensor.tensor as pt

        a, b, x = pt.dvector("a"), pt.dvector("b"), pt.dvector("x")
        return [a, b, x], [pt.add(*_chain_steps(pt, nodes, a, b, x))]

    def reference(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> list[np.ndarray]:
        for _ in range(nodes // CHAIN_NODES_PER_STEP):  # each repeated subexpression computed once, as by hand
            s = np.sin(a) * 0.5
            c = np.cos(b) * 0.25
            a, b = np.tanh(s + c + x) * 0.9, (s - c) * 0.9
        return [a + b]

    return Workload(
        f"chain_{nodes}",
        "e",
        f"chain of {nodes:,} elemwise nodes (half repeated), {size} float64",
        data,
        build_symlab,
        build_pytensor,
        reference,
        rtol=1e-6,
        atol=1e-9,
        params={"nodes": nodes, "size": size},
    )


# -- LeNet: one SGD step of the Deep Learning Tutorials' convolutional_mlp ---------------------------------------------


def lenet_workload(
    batch: int = 500, image: int = 28, nkerns: tuple[int, int] = (20, 50), k: int = 5, hidden: int = 500, n_out: int = 10
) -> Workload:
    """convolutional_mlp's LeNet (conv 5x5, 2x2 max pool, tanh; twice; a tanh hidden layer; a logistic layer):
    the negative log-likelihood, its gradients and the SGD update of the 8 parameters, in one function."""
    lr = 0.1
    conv_out = (image - k + 1) // 2
    flat = nkerns[1] * ((conv_out - k + 1) // 2) ** 2
    shapes = [(nkerns[0], 1, k, k), (nkerns[0],), (nkerns[1], nkerns[0], k, k), (nkerns[1],),
              (flat, hidden), (hidden,), (hidden, n_out), (n_out,)]

    def data_of(n: int) -> list[np.ndarray]:
        rng = _rng(7)
        X = rng.random((n, 1, image, image))
        y = rng.integers(0, n_out, n)
        params = []
        for shape in shapes:
            if len(shape) == 1:
                params.append(np.zeros(shape))
                continue
            fan_in, fan_out = (np.prod(shape[1:]), shape[0] * np.prod(shape[2:]) // 4) if len(shape) == 4 else shape
            bound = np.sqrt(6.0 / (fan_in + fan_out))
            params.append(rng.uniform(-bound, bound, shape))  # (the tutorial's logistic layer starts at zero)
        return [X, y, *params]

    def build_symlab() -> tuple[list[Any], list[Any]]:
        import symlab
        import symlab.tensor as st
        from symlab.tensor.nnet.conv import conv2d
        from symlab.tensor.signal.pool import pool_2d

        X, y = st.dtensor4("X"), st.lvector("y")
        names = ["W0", "b0", "W1", "b1", "W2", "b2", "W3", "b3"]
        params = [st.tensor("float64", shape=(None,) * len(s), name=n) for n, s in zip(names, shapes)]
        W0, b0, W1, b1, W2, b2, W3, b3 = params

        def layer(inp: Any, W: Any, b: Any, channels: int, size: int, filter_shape: tuple) -> Any:
            out = conv2d(inp, W, input_shape=(None, channels, size, size), filter_shape=filter_shape)
            pooled = pool_2d(out, ws=(2, 2), ignore_border=True)
            return st.tanh(pooled + b.dimshuffle("x", 0, "x", "x"))

        h0 = layer(X, W0, b0, 1, image, shapes[0])
        h1 = layer(h0, W1, b1, nkerns[0], conv_out, shapes[2])
        h2 = st.tanh(st.dot(h1.flatten(2), W2) + b2)
        p_y = st.softmax(st.dot(h2, W3) + b3)
        cost = -st.mean(st.log(p_y)[st.arange(y.shape[0]), y])
        grads = symlab.grad(cost, params)
        return [X, y, *params], [cost, *(p - lr * g for p, g in zip(params, grads))]

    def reference(X: np.ndarray, y: np.ndarray, *params: np.ndarray) -> list[np.ndarray]:
        return _lenet_numpy_step(X, y, list(params), lr)

    return Workload(
        "lenet" if batch == 500 else f"lenet_{batch}",
        "lenet",
        f"LeNet SGD step (convolutional_mlp), batch {batch}, {image}x{image}, kernels {nkerns}",
        lambda: data_of(batch),
        build_symlab,
        None,  # PyTensor 3 has neither conv2d nor pool_2d
        reference,
        rtol=1e-6,
        atol=1e-9,
        params={"batch": batch, "image": image, "nkerns": list(nkerns), "hidden": hidden},
        probe=lambda: data_of(2),
    )


def _windows(x: np.ndarray, k: int) -> np.ndarray:
    """(batch, channels, rows, cols, k, k): the k x k windows of x, a view."""
    return np.lib.stride_tricks.sliding_window_view(x, (k, k), axis=(2, 3))


def _conv_valid(x: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Theano's conv2d (flipped filters, valid): one tensordot of the windows."""
    out = np.tensordot(_windows(x, W.shape[2]), W[:, :, ::-1, ::-1], axes=([1, 4, 5], [1, 2, 3]))
    return out.transpose(0, 3, 1, 2)


def _conv_valid_grad_input(g: np.ndarray, W: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The gradient of ``_conv_valid`` with respect to its input: each filter tap's products added to its slice."""
    k = W.shape[2]
    rows, cols = g.shape[2], g.shape[3]
    taps = np.tensordot(g, W[:, :, ::-1, ::-1], axes=([1], [0]))  # (batch, rows, cols, channels, k, k)
    out = np.zeros(shape)
    for u in range(k):
        for v in range(k):
            out[:, :, u : u + rows, v : v + cols] += taps[:, :, :, :, u, v].transpose(0, 3, 1, 2)
    return out


def _maxpool(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """2x2 max pooling (ignore_border) and the mask of the maxima (Theano gives each maximum the gradient)."""
    b, c, h, w = a.shape
    blocks = a[:, :, : h // 2 * 2, : w // 2 * 2].reshape(b, c, h // 2, 2, w // 2, 2)
    pooled = blocks.max(axis=(3, 5))
    return pooled, blocks == pooled[:, :, :, None, :, None]


def _unpool(g: np.ndarray, mask: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    out = np.zeros(shape)
    b, c, h, w = mask.shape[0], mask.shape[1], mask.shape[2] * 2, mask.shape[4] * 2
    out[:, :, :h, :w] = (mask * g[:, :, :, None, :, None]).reshape(b, c, h, w)
    return out


def _lenet_numpy_step(X: np.ndarray, y: np.ndarray, params: list[np.ndarray], lr: float) -> list[np.ndarray]:
    """The LeNet step by hand: forward, the NLL cost, backward (gradients derived by hand), SGD."""
    W0, b0, W1, b1, W2, b2, W3, b3 = params
    n, k = X.shape[0], W0.shape[2]
    c0 = _conv_valid(X, W0)
    p0, m0 = _maxpool(c0)
    h0 = np.tanh(p0 + b0[None, :, None, None])
    c1 = _conv_valid(h0, W1)
    p1, m1 = _maxpool(c1)
    h1 = np.tanh(p1 + b1[None, :, None, None])
    f1 = h1.reshape(n, -1)
    h2 = np.tanh(f1 @ W2 + b2)
    z = h2 @ W3 + b3
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    cost = -np.mean(logp[np.arange(n), y])
    dz = np.exp(logp)
    dz[np.arange(n), y] -= 1.0
    dz /= n
    gW3, gb3 = h2.T @ dz, dz.sum(axis=0)
    da2 = (dz @ W3.T) * (1.0 - h2**2)
    gW2, gb2 = f1.T @ da2, da2.sum(axis=0)
    da1 = (da2 @ W2.T).reshape(h1.shape) * (1.0 - h1**2)
    gb1 = da1.sum(axis=(0, 2, 3))
    dc1 = _unpool(da1, m1, c1.shape)
    gW1 = np.tensordot(dc1, _windows(h0, k), axes=([0, 2, 3], [0, 2, 3]))[:, :, ::-1, ::-1]
    dh0 = _conv_valid_grad_input(dc1, W1, h0.shape)
    da0 = dh0 * (1.0 - h0**2)
    gb0 = da0.sum(axis=(0, 2, 3))
    dc0 = _unpool(da0, m0, c0.shape)
    gW0 = np.tensordot(dc0, _windows(X, k), axes=([0, 2, 3], [0, 2, 3]))[:, :, ::-1, ::-1]
    grads = [gW0, gb0, gW1, gb1, gW2, gb2, gW3, gb3]
    return [np.asarray(cost), *(p - lr * g for p, g in zip(params, grads))]


# -- OpFromGraph applied 1,000 times in a chain (issue 32) ---------------------------------------------------------------


def _ofg_step(m: Any, x: Any, w: Any) -> Any:
    """The inner graph: a contraction (||w|| < 1), so the chain neither explodes nor rounds apart."""
    return m.tanh(m.dot(x, w)) * 0.5 + x * 0.5


def ofg_chain_workload(applications: int = 1000, size: int = 50) -> Workload:
    """``x = op(x, w)`` ``applications`` times, ``op`` one ``OpFromGraph`` of :func:`_ofg_step`: compile and call."""

    def data() -> list[np.ndarray]:
        rng = _rng(7)
        return [rng.standard_normal(size), rng.standard_normal((size, size)) / (2.0 * np.sqrt(size))]

    def build(m: Any, ofg: Any) -> tuple[list[Any], list[Any]]:
        x, w = m.dvector("x"), m.dmatrix("w")
        op = ofg([x, w], [_ofg_step(m, x, w)])
        h = x
        for _ in range(applications):
            h = op(h, w)
        return [x, w], [h]

    def build_symlab() -> tuple[list[Any], list[Any]]:
        import symlab.tensor as st
        from symlab.compile.builders import OpFromGraph

        return build(st, OpFromGraph)

    def build_pytensor() -> tuple[list[Any], list[Any]]:
        import pytensor.tensor as pt
        from pytensor.compile.builders import OpFromGraph

        return build(pt, OpFromGraph)

    def reference(x: np.ndarray, w: np.ndarray) -> list[np.ndarray]:
        for _ in range(applications):
            x = np.tanh(x @ w) * 0.5 + x * 0.5
        return [x]

    return Workload(
        f"ofg_chain_{applications}",
        "ofg",
        f"OpFromGraph applied {applications:,} times in a chain, {size} float64",
        data,
        build_symlab,
        build_pytensor,
        reference,
        rtol=1e-9,
        atol=1e-12,
        params={"applications": applications, "size": size},
    )


# -- conditions.rst: ifelse against switch (issue 32) -----------------------------------------------------------------


def conditions_workload(kind: str, rows: int = 10_000, cols: int = 1_000) -> Workload:
    """PyTensor's conditions.rst: ``ifelse`` (lazy: one mean) or ``switch`` (both means) of ``lt(a, b)``."""

    def data() -> list[np.ndarray]:
        rng = _rng(8)
        return [np.array(0.0), np.array(1.0), rng.standard_normal((rows, cols)), rng.standard_normal((rows, cols))]

    def build(m: Any, choose: Any) -> tuple[list[Any], list[Any]]:
        a, b = m.dscalar("a"), m.dscalar("b")
        x, y = m.dmatrix("x"), m.dmatrix("y")
        return [a, b, x, y], [choose(m.lt(a, b), m.mean(x), m.mean(y))]

    def build_symlab() -> tuple[list[Any], list[Any]]:
        import symlab.tensor as st
        from symlab.ifelse import ifelse

        return build(st, ifelse if kind == "ifelse" else st.switch)

    def build_pytensor() -> tuple[list[Any], list[Any]]:
        import pytensor.tensor as pt
        from pytensor.ifelse import ifelse

        return build(pt, ifelse if kind == "ifelse" else pt.switch)

    def reference(a: np.ndarray, b: np.ndarray, x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
        if kind == "ifelse":
            return [np.asarray(x.mean() if a < b else y.mean())]
        return [np.asarray(np.where(a < b, x.mean(), y.mean()))]

    return Workload(
        f"conditions_{kind}" + ("" if (rows, cols) == (10_000, 1_000) else f"_{rows}x{cols}"),
        "cond",
        f"conditions.rst: {kind}(lt(a, b), mean(x), mean(y)), x and y {rows}x{cols} float64",
        data,
        build_symlab,
        build_pytensor,
        reference,
        rtol=1e-9,
        atol=1e-12,
        params={"kind": kind, "rows": rows, "cols": cols},
    )


# -- x + y on 10 elements: fixed costs (first result in a fresh process, call overhead) -----------------------------------


def add_workload(n: int = 10) -> Workload:
    def data() -> list[np.ndarray]:
        rng = _rng(6)
        return [rng.standard_normal(n), rng.standard_normal(n)]

    def build_symlab() -> tuple[list[Any], list[Any]]:
        import symlab.tensor as st

        x, y = st.dvector("x"), st.dvector("y")
        return [x, y], [x + y]

    def build_pytensor() -> tuple[list[Any], list[Any]]:
        import pytensor.tensor as pt

        x, y = pt.dvector("x"), pt.dvector("y")
        return [x, y], [x + y]

    def reference(x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
        return [x + y]

    return Workload(
        "add10",
        "x+y",
        f"x + y, {n} float64 (fixed costs)",
        data,
        build_symlab,
        build_pytensor,
        reference,
        params={"n": n},
    )


# -- random: 10^6 normal draws, and a dropout MLP training step (issue 33) ------------------------------------------------

#: Calls a compiled random workload may have made before the checked one (the probe, the first, second and
#: post-compile calls, the steady compile's first): the check accepts the draws of any of the first this many calls.
RANDOM_CALLS_CHECKED = 8


class Draws(np.ndarray):
    """The output of a random workload's NumPy reference: NumPy's result, which also knows the results of the first
    calls from the seed (``candidates()``). A compiled function's calls advance its own generator, so the check
    (:func:`compare`) accepts a result equal (to the workload's tolerances) to one of those calls' results."""

    candidates: Callable[[], list[np.ndarray]]

    @classmethod
    def of(cls, value: np.ndarray, candidates: Callable[[], list[np.ndarray]]) -> Draws:
        out = np.asarray(value).view(cls)
        out.candidates = candidates
        return out


def _seeded_results(seed: int, step: Callable[[np.random.Generator], list[np.ndarray]], k: int) -> list[np.ndarray]:
    """Output ``k`` of the first :data:`RANDOM_CALLS_CHECKED` calls of ``step`` on a generator seeded ``seed``."""
    rng = _rng(seed)
    return [np.asarray(step(rng)[k]) for _ in range(RANDOM_CALLS_CHECKED)]


def normals_workload(n: int = 1_000_000, seed: int = 9) -> Workload:
    """``n`` standard normal draws per call from a shared generator that each call advances (its default update),
    against NumPy's own ``Generator.normal(size=n)``."""

    def build(m: Any, shared: Any) -> tuple[list[Any], list[Any]]:
        rng = shared(np.random.default_rng(seed))
        next_rng, x = m.random.normal(0.0, 1.0, size=n, rng=rng, return_next_rng=True)
        rng.default_update = next_rng  # each call advances the generator (PyTensor's way; RandomStream does it too)
        return [], [x]

    def build_symlab() -> tuple[list[Any], list[Any]]:
        import symlab
        import symlab.tensor as st

        return build(st, symlab.shared)

    def build_pytensor() -> tuple[list[Any], list[Any]]:
        import pytensor
        import pytensor.tensor as pt

        return build(pt, pytensor.shared)

    generator = _rng(seed)

    def reference() -> list[np.ndarray]:
        return [Draws.of(generator.normal(size=n), lambda: _seeded_results(seed, lambda g: [g.normal(size=n)], 0))]

    return Workload(
        "normal_1e6" if n == 1_000_000 else f"normal_{n}",
        "random",
        f"{n:,} normal draws a call, the shared generator advanced by its update",
        list,
        build_symlab,
        build_pytensor,
        reference,
        rtol=0.0,
        atol=0.0,  # NumPy's bits
        params={"n": n},
    )


def dropout_mlp_workload(batch: int = 128, n_in: int = 784, n_hidden: int = 256, n_out: int = 10,
                         keep: float = 0.8, lr: float = 0.1, seed: int = 10) -> Workload:
    """One SGD step of a ReLU MLP with dropout on the hidden layer: the mask a ``binomial(1, keep)`` draw from a
    shared generator each call advances (inverted dropout: kept units scaled by ``1/keep``), the softmax
    cross-entropy, its gradients and the updated parameters."""

    def data() -> list[np.ndarray]:
        rng = _rng(seed)
        X = rng.standard_normal((batch, n_in))
        Y = np.eye(n_out)[rng.integers(0, n_out, batch)]
        W1 = rng.standard_normal((n_in, n_hidden)) * np.sqrt(2.0 / n_in)
        b1 = np.zeros(n_hidden) + 0.01
        W2 = rng.standard_normal((n_hidden, n_out)) * np.sqrt(1.0 / n_hidden)
        b2 = np.zeros(n_out)
        return [X, Y, W1, b1, W2, b2]

    def graph(m: Any, grad: Any, log_softmax: Any, shared: Any, X: Any, Y: Any, W1: Any, b1: Any, W2: Any,
              b2: Any) -> list[Any]:
        rng = shared(np.random.default_rng(seed + 1))
        next_rng, mask = m.random.binomial(1, keep, size=(batch, n_hidden), rng=rng, return_next_rng=True)
        rng.default_update = next_rng
        h = m.maximum(m.dot(X, W1) + b1, 0.0) * mask * (1.0 / keep)
        logits = m.dot(h, W2) + b2
        loss = -m.mean(m.sum(Y * log_softmax(logits, axis=1), axis=1))
        params = [W1, b1, W2, b2]
        return [loss, *(p - lr * g for p, g in zip(params, grad(loss, params)))]

    names = ["X", "Y", "W1", "b1", "W2", "b2"]

    def build_symlab() -> tuple[list[Any], list[Any]]:
        import symlab
        import symlab.tensor as st

        ins = [st.dmatrix(k) if k[0] in "XYW" else st.dvector(k) for k in names]
        return ins, graph(st, symlab.grad, st.log_softmax, symlab.shared, *ins)

    def build_pytensor() -> tuple[list[Any], list[Any]]:
        import pytensor
        import pytensor.tensor as pt
        from pytensor.tensor.special import log_softmax

        ins = [pt.dmatrix(k) if k[0] in "XYW" else pt.dvector(k) for k in names]
        return ins, graph(pt, pytensor.grad, log_softmax, pytensor.shared, *ins)

    def step(g: np.random.Generator, X: np.ndarray, Y: np.ndarray, W1: np.ndarray, b1: np.ndarray, W2: np.ndarray,
             b2: np.ndarray) -> list[np.ndarray]:
        scale = g.binomial(1, keep, size=(batch, n_hidden)) * (1.0 / keep)
        a = X @ W1 + b1
        h = np.maximum(a, 0.0) * scale
        logits = h @ W2 + b2
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_sm = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        loss = -np.mean(np.sum(Y * log_sm, axis=1))
        d_logits = (np.exp(log_sm) - Y) / X.shape[0]
        d_a = (d_logits @ W2.T) * scale * (a > 0)
        grads = [X.T @ d_a, d_a.sum(axis=0), h.T @ d_logits, d_logits.sum(axis=0)]
        return [np.asarray(loss), *(p - lr * gp for p, gp in zip((W1, b1, W2, b2), grads))]

    generator = _rng(seed + 1)

    def reference(*arrays: np.ndarray) -> list[np.ndarray]:
        out = step(generator, *arrays)
        return [Draws.of(v, lambda k=k: _seeded_results(seed + 1, lambda g: step(g, *arrays), k)) for k, v in enumerate(out)]

    return Workload(
        "dropout_mlp" if batch == 128 else f"dropout_mlp_{batch}",
        "random",
        f"dropout MLP {n_in}-{n_hidden}-{n_out} SGD step, batch {batch}, binomial(1, {keep}) mask on the hidden layer",
        data,
        build_symlab,
        build_pytensor,
        reference,
        rtol=1e-6,
        atol=1e-9,
        params={"batch": batch, "sizes": [n_in, n_hidden, n_out], "keep": keep},
    )


def all_workloads() -> dict[str, Workload]:
    """The workloads of the benchmark, by name, at the sizes of the issue."""
    small = {w.group: w for w in small_workloads().values()}
    ws = [
        elemwise_workload(1_000_000, "1e6"),
        elemwise_workload(10_000_000, "1e7"),
        logreg_workload(),
        mlp_workload(),
        softmax_workload(),
        chain_workload(2_000),
        chain_workload(10_000),
        add_workload(),
    ]
    for w in ws:
        w.probe = small[w.group].data
    ws.append(lenet_workload())  # its probe: 2 images of the same size (the graph declares the image shape)
    ofg = ofg_chain_workload()
    ofg.probe = small["ofg"].data  # the same graph on 3 elements
    ws.append(ofg)
    for kind in ("switch", "ifelse"):
        cond = conditions_workload(kind)
        cond.probe = conditions_workload(kind, 4, 3).data
        ws.append(cond)
    # The random workloads' probes are their own inputs: the draws' sizes are in their graphs.
    normals = normals_workload()
    normals.probe = normals.data
    dropout = dropout_mlp_workload()
    dropout.probe = dropout.data
    ws += [normals, dropout]
    ws += _scan_group().scan_workloads(Workload)  # issue 34
    return {w.name: w for w in ws}


def _scan_group() -> Any:
    """``benchmarks/workloads_scan.py``, the loop workloads (issue 34), imported from this module's folder."""
    import sys
    from pathlib import Path

    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    import workloads_scan

    return workloads_scan


def small_workloads() -> dict[str, Workload]:
    """The same workloads at small sizes (for the smoke test)."""
    ws = [
        elemwise_workload(1000, "small"),
        logreg_workload(50, 7),
        mlp_workload(8, 12, 6, 3),
        softmax_workload(9),
        chain_workload(140, size=5),
        add_workload(),
        lenet_workload(batch=3, image=14, nkerns=(2, 3), k=3, hidden=5, n_out=4),
        ofg_chain_workload(50, size=3),
        conditions_workload("switch", 40, 30),
        conditions_workload("ifelse", 40, 30),
        normals_workload(1000),
        dropout_mlp_workload(batch=6, n_in=12, n_hidden=8, n_out=3),
    ]
    ws += _scan_group().scan_workloads(Workload, small=True)
    return {w.name: w for w in ws}


def count_nodes(outputs: list[Any]) -> int:
    """Apply nodes of a symlab or PyTensor graph (before any rewriting)."""
    seen: set[int] = set()
    stack = [o.owner for o in outputs if o.owner is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(i.owner for i in node.inputs if i.owner is not None)
    return len(seen)


def compare(results: list[Any], expected: list[np.ndarray], rtol: float, atol: float) -> dict[str, Any]:
    """``{"ok", "max_abs_err", "problems"}`` of compiled results against the NumPy reference."""
    problems: list[str] = []
    max_err = 0.0
    if len(results) != len(expected):
        return {"ok": False, "max_abs_err": None, "problems": [f"{len(results)} outputs, expected {len(expected)}"]}
    for k, (got, want) in enumerate(zip(results, expected)):
        got = np.asarray(got)
        if got.shape != want.shape:
            problems.append(f"output {k}: shape {got.shape}, expected {want.shape}")
            continue
        if isinstance(want, Draws):  # a random workload: the result of one of the first calls from the seed
            if not any(np.allclose(got, c, rtol=rtol, atol=atol) for c in want.candidates()):
                problems.append(f"output {k}: not NumPy's result of any of the first {RANDOM_CALLS_CHECKED} calls "
                                "from the seed")
            continue
        if got.size:
            max_err = max(max_err, float(np.max(np.abs(got - want))))
        if not np.allclose(got, want, rtol=rtol, atol=atol):
            problems.append(f"output {k}: values differ (max abs err {float(np.max(np.abs(got - want))):.3g})")
    return {"ok": not problems, "max_abs_err": max_err, "problems": problems}


WORKLOADS = all_workloads()

__all__ = ["WORKLOADS", "Draws", "Workload", "all_workloads", "compare", "count_nodes", "small_workloads"]
