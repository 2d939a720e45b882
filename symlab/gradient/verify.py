"""Checking a gradient against finite differences: ``verify_grad``.

>>> import numpy as np
>>> import symlab.tensor as st
>>> verify_grad(lambda x: st.exp(x) * x, [np.array([0.5, -1.0])], rng=np.random.default_rng(0))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from symlab.gradient.reverse_mode import grad
from symlab.graph.basic import Variable
from symlab.graph.evaluate import evaluate
from symlab.graph.traversal import ancestors
from symlab.tensor.basic import constant
from symlab.tensor.type import TensorType


class GradientError(AssertionError):
    """``verify_grad`` found symbolic and numeric gradients that disagree."""


def _is_float(var: Variable) -> bool:
    return isinstance(var.type, TensorType) and var.type.dtype.startswith("float")


def _graph_variables(output: Variable) -> list[Variable]:
    return list(ancestors([output]))


# -- checking gradients numerically --------------------------------------------------------------
def verify_grad(
    fn: Callable[..., Variable],
    pt: Sequence[Any],
    n_tests: int = 2,
    rng: np.random.Generator | None = None,
    eps: float | None = None,
    abs_tol: float | None = None,
    rel_tol: float | None = None,
) -> None:
    """Check ``grad`` of ``fn`` at the point ``pt`` against central finite differences.

    ``fn`` maps symbolic tensors (one per array of ``pt``) to a symbolic
    tensor; its output is projected on a random tensor to get a scalar.
    Raises :class:`GradientError` naming the input and the worst element.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> verify_grad(lambda x: st.exp(x) * x, [np.array([0.5, -1.0])], rng=np.random.default_rng(0))
    """
    rng = np.random.default_rng() if rng is None else rng
    points = [np.array(p, dtype=p.dtype if isinstance(p, np.ndarray) else "float64", copy=True) for p in pt]
    inputs = [TensorType(p.dtype, tuple(1 if s == 1 else None for s in p.shape))(f"input{k}") for k, p in enumerate(points)]
    output = fn(*inputs)
    out_value = np.asarray(evaluate([output], dict(zip(inputs, points)))[0])
    # Any float32 (or smaller) value on the way makes finite differences coarser.
    float_sizes = [np.dtype(v.type.dtype).itemsize for v in _graph_variables(output) if _is_float(v)]
    low_precision = min(float_sizes, default=8) < 8
    eps = eps if eps is not None else (1e-3 if low_precision else 1e-6)
    abs_tol = abs_tol if abs_tol is not None else (3e-2 if low_precision else 1e-4)
    rel_tol = rel_tol if rel_tol is not None else (3e-2 if low_precision else 1e-4)

    for _ in range(n_tests):
        projection = rng.random(out_value.shape) + 0.5
        cost = (output * constant(projection.astype(out_value.dtype if out_value.dtype.kind == "f" else "float64"))).sum()
        symbolic = grad(cost, inputs, disconnected_inputs="ignore")
        analytic = evaluate(symbolic, dict(zip(inputs, points)))

        def cost_at(values: list[np.ndarray], cost: Variable = cost) -> float:
            return float(evaluate([cost], dict(zip(inputs, values)))[0])

        for k, point in enumerate(points):
            numeric = np.zeros(point.shape, dtype="float64")
            for idx in np.ndindex(point.shape):
                shifted = [p.copy() for p in points]
                shifted[k][idx] = point[idx] + eps
                plus = cost_at(shifted)
                shifted[k][idx] = point[idx] - eps
                minus = cost_at(shifted)
                numeric[idx] = (plus - minus) / (2 * eps)
            got = np.asarray(analytic[k], dtype="float64")
            if got.shape != numeric.shape:
                raise GradientError(f"verify_grad: gradient of input {k} has shape {got.shape}, expected {numeric.shape}")
            abs_err = np.abs(got - numeric)
            rel_err = abs_err / np.maximum(np.abs(got) + np.abs(numeric), 1e-8)
            bad = (abs_err > abs_tol) & (rel_err > rel_tol)
            if bad.any():
                worst = np.unravel_index(np.argmax(np.where(bad, abs_err, -1)), bad.shape) if bad.ndim else ()
                raise GradientError(
                    f"verify_grad: gradient of input {k} disagrees with finite differences at index "
                    f"{tuple(int(i) for i in worst)}: symbolic {got[worst]!r}, numeric {numeric[worst]!r} "
                    f"(abs error {abs_err[worst]:.3g} > {abs_tol}, rel error {rel_err[worst]:.3g} > {rel_tol})"
                )
