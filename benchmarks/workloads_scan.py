"""The loop workloads of the benchmark (issue 34, group ``scan``): ``scan`` against PyTensor's Numba scan and a
plain NumPy loop.

- ``rnn_forward``: an Elman RNN, ``h_t = tanh(x_t W + h_{t-1} U + b)``, sequence 100, batch 32, input and hidden
  128, and the loss ``sum(h ** 2)`` over every step;
- ``rnn_backward``: the same loss and its gradients with respect to ``W``, ``U`` and ``b`` (backpropagation
  through time: ``symlab.grad`` through the scan; the NumPy version derived by hand);
- ``cumsum_10000``: a cumulative sum of 10,000 steps (a scalar state: what a step costs when it does almost
  nothing);
- ``power_iteration_1000``: 1,000 steps of ``v = A v / ||A v||`` on a 64x64 matrix, the last ``v``.

The NumPy versions are Python loops over NumPy calls (the "plain NumPy loop" of the issue): the steady call's
ratio against them says what a step costs against a step's own arithmetic.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _rnn_data(steps: int, batch: int, n_in: int, hidden: int) -> list[np.ndarray]:
    rng = _rng(34)
    x = rng.standard_normal((steps, batch, n_in))
    W = rng.standard_normal((n_in, hidden)) / np.sqrt(n_in)
    U = rng.standard_normal((hidden, hidden)) * (0.9 / np.sqrt(hidden))
    b = rng.standard_normal(hidden) * 0.1
    return [x, W, U, b]


def _rnn_graph(m: Any, scan: Any, grad: Any, backward: bool) -> tuple[list[Any], list[Any]]:
    x, W, U, b = m.tensor3("x"), m.dmatrix("W"), m.dmatrix("U"), m.dvector("b")
    h0 = m.zeros((x.shape[1], U.shape[0]))
    h, _ = scan(lambda x_t, h_prev, W, U, b: m.tanh(m.dot(x_t, W) + m.dot(h_prev, U) + b), sequences=x,
                outputs_info=h0, non_sequences=[W, U, b])
    loss = m.sum(h ** 2)
    return [x, W, U, b], [loss, *grad(loss, [W, U, b])] if backward else [loss]


def _rnn_numpy(backward: bool) -> Any:
    def reference(x: np.ndarray, W: np.ndarray, U: np.ndarray, b: np.ndarray) -> list[np.ndarray]:
        h = np.zeros((x.shape[1], U.shape[0]))
        hs = []
        for x_t in x:
            h = np.tanh(x_t @ W + h @ U + b)
            hs.append(h)
        loss = np.asarray(sum(float(np.sum(v ** 2)) for v in hs))
        if not backward:
            return [loss]
        gW, gU, gb = np.zeros_like(W), np.zeros_like(U), np.zeros_like(b)
        carry = np.zeros_like(hs[0])  # the gradient reaching h_t from the later steps
        for t in range(len(x) - 1, -1, -1):
            dh = 2.0 * hs[t] + carry
            da = dh * (1.0 - hs[t] ** 2)
            prev = hs[t - 1] if t else np.zeros_like(hs[0])
            gW += x[t].T @ da
            gU += prev.T @ da
            gb += da.sum(axis=0)
            carry = da @ U.T
        return [loss, gW, gU, gb]

    return reference


def rnn_workload(cls: Any, backward: bool, steps: int = 100, batch: int = 32, n_in: int = 128, hidden: int = 128) -> Any:
    """A ``cls`` (:class:`workloads.Workload`): the Elman RNN's loss (and, ``backward``, its gradients): see the module's docstring."""

    def build_symlab() -> tuple[list[Any], list[Any]]:
        import symlab
        import symlab.tensor as st

        return _rnn_graph(st, symlab.scan, symlab.grad, backward)

    def build_pytensor() -> tuple[list[Any], list[Any]]:
        import pytensor
        import pytensor.tensor as pt

        return _rnn_graph(pt, pytensor.scan, pytensor.grad, backward)

    kind = "backward" if backward else "forward"
    return cls(
        f"rnn_{kind}" if (steps, batch, hidden) == (100, 32, 128) else f"rnn_{kind}_{steps}",
        "scan",
        f"Elman RNN {kind}: {steps} steps, batch {batch}, input {n_in}, hidden {hidden}, loss sum(h**2)"
        + (", grads of W, U, b" if backward else ""),
        lambda: _rnn_data(steps, batch, n_in, hidden),
        build_symlab,
        build_pytensor,
        _rnn_numpy(backward),
        rtol=1e-9,
        atol=1e-9,
        params={"steps": steps, "batch": batch, "n_in": n_in, "hidden": hidden},
    )


def cumsum_workload(cls: Any, steps: int = 10_000) -> Any:
    """A cumulative sum by a scan of ``steps`` steps (a scalar state)."""

    def build(m: Any, scan: Any) -> tuple[list[Any], list[Any]]:
        x = m.dvector("x")
        total, _ = scan(lambda x_t, acc: acc + x_t, sequences=x, outputs_info=m.constant(np.float64(0.0)))
        return [x], [total]

    def build_symlab() -> tuple[list[Any], list[Any]]:
        import symlab
        import symlab.tensor as st

        return build(st, symlab.scan)

    def build_pytensor() -> tuple[list[Any], list[Any]]:
        import pytensor
        import pytensor.tensor as pt

        return build(pt, pytensor.scan)

    def reference(x: np.ndarray) -> list[np.ndarray]:
        out = np.empty_like(x)
        acc = 0.0
        for t in range(len(x)):
            acc = acc + x[t]
            out[t] = acc
        return [out]

    return cls(
        f"cumsum_{steps}",
        "scan",
        f"cumulative sum, {steps:,} steps of a scalar state",
        lambda: [_rng(35).standard_normal(steps)],
        build_symlab,
        build_pytensor,
        reference,
        rtol=1e-12,
        atol=1e-12,
        params={"steps": steps},
    )


def power_iteration_workload(cls: Any, steps: int = 1000, n: int = 64) -> Any:
    """``steps`` steps of power iteration on an ``n`` x ``n`` matrix: the last vector."""

    def data() -> list[np.ndarray]:
        rng = _rng(36)
        a = rng.standard_normal((n, n))
        return [a @ a.T / n, rng.standard_normal(n)]

    def build(m: Any, scan: Any) -> tuple[list[Any], list[Any]]:
        A, v0 = m.dmatrix("A"), m.dvector("v0")

        def step(v: Any, A: Any) -> Any:
            w = m.dot(A, v)
            return w / m.sqrt(m.sum(w ** 2))

        vs, _ = scan(step, outputs_info=v0, non_sequences=A, n_steps=steps)
        return [A, v0], [vs[-1]]

    def build_symlab() -> tuple[list[Any], list[Any]]:
        import symlab
        import symlab.tensor as st

        return build(st, symlab.scan)

    def build_pytensor() -> tuple[list[Any], list[Any]]:
        import pytensor
        import pytensor.tensor as pt

        return build(pt, pytensor.scan)

    def reference(A: np.ndarray, v: np.ndarray) -> list[np.ndarray]:
        for _ in range(steps):
            w = A @ v
            v = w / np.sqrt(np.sum(w ** 2))
        return [v]

    return cls(
        f"power_iteration_{steps}",
        "scan",
        f"power iteration, {steps:,} steps of v = A v / ||A v||, A {n}x{n}",
        data,
        build_symlab,
        build_pytensor,
        reference,
        rtol=1e-9,
        atol=1e-12,
        params={"steps": steps, "n": n},
    )


def scan_workloads(workload_class: Any, small: bool = False) -> list[Any]:
    """The group's workloads (instances of ``workload_class``, :class:`workloads.Workload`) at the issue's sizes,
    or (``small``) at small ones for the smoke test."""
    cls = workload_class
    if small:
        return [rnn_workload(cls, False, 5, 3, 4, 6), rnn_workload(cls, True, 5, 3, 4, 6), cumsum_workload(cls, 50),
                power_iteration_workload(cls, 20, 5)]
    ws = [rnn_workload(cls, False), rnn_workload(cls, True), cumsum_workload(cls), power_iteration_workload(cls)]
    for w, small_w in zip(ws, scan_workloads(workload_class, small=True)):  # the same graphs on small arrays of the same types
        w.probe = small_w.data
    return ws


__all__ = ["cumsum_workload", "power_iteration_workload", "rnn_workload", "scan_workloads"]
