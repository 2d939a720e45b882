"""Checking a rewrite step: the graph before and after it, evaluated on the same random inputs, compared.

DebugMode's idea, made visible: a step that changes the results is a bug in its rule (or a rule that, like
``x * y / y -> x`` where ``y`` is 0, trades NaNs for numbers). The inputs get values of their types (floats
from a normal law, integers from 0 to 4, each unknown dimension of size 3).

>>> import symlab.tensor as st
>>> from symlab.rewriting import rewrite_graph
>>> a = st.dvector("a")
>>> _, trace = rewrite_graph([a + a ** 10])
>>> check_step(trace, 1)["text"]
'step 1: largest difference 0 over 9 values (3 random inputs)'
"""

from __future__ import annotations

from typing import Any

from symlab.rewriting.trace import RewriteTrace

__all__ = ["check_step"]


def check_step(trace: RewriteTrace, k: int, trials: int = 3, seed: int = 0) -> dict[str, Any]:
    """Evaluate the graph before and after step ``k`` on ``trials`` random inputs; the largest difference.

    The result counts the values compared, those NaN on both sides (nothing to compare there: a graph NaN
    everywhere says "every value compared was NaN") and those NaN on one side only.
    """
    import numpy as np

    from symlab.graph.evaluate import evaluate

    if k == 0:
        return {"step": 0, "text": "step 0 is the starting graph: nothing to compare"}
    before = trace.graph_at(k - 1)
    after = trace.graph_at(k)
    rng = np.random.default_rng(seed)
    worst, nan_mismatch, both_nan, compared = 0.0, 0, 0, 0
    for _ in range(trials):
        values = [_random_value(v.type, rng) for v in before.inputs]
        got_before = evaluate(before.outputs, {v: np.array(x, copy=True) for v, x in zip(before.inputs, values)})
        got_after = evaluate(after.outputs, {v: np.array(x, copy=True) for v, x in zip(after.inputs, values)})
        for b, a in zip(got_before, got_after):
            kind = complex if np.iscomplexobj(b) or np.iscomplexobj(a) else float
            b, a = np.broadcast_arrays(np.asarray(b, dtype=kind), np.asarray(a, dtype=kind))
            compared += int(b.size)
            nan_b, nan_a = np.isnan(b), np.isnan(a)
            nan_mismatch += int(np.sum(nan_b != nan_a))
            both_nan += int(np.sum(nan_b & nan_a))
            both = ~(nan_b | nan_a)
            if both.any():
                with np.errstate(invalid="ignore"):
                    diff = np.abs(b[both] - a[both])
                diff = diff[np.isfinite(diff)]
                worst = max(worst, float(diff.max()) if diff.size else 0.0)
    numbers = compared - both_nan - nan_mismatch
    text = f"step {k}: largest difference {worst:.3g} over {compared} values ({trials} random inputs)"
    if compared and both_nan == compared:
        text = (f"step {k}: every value compared was NaN on both sides ({compared} values, {trials} random "
                "inputs): nothing to compare, the difference says nothing")
    elif both_nan:
        text += f"; {both_nan} of them NaN on both sides (left out), {numbers} compared as numbers"
    if nan_mismatch:
        text += f"; {nan_mismatch} values are NaN on one side only"
    return {"step": k, "max_difference": worst, "nan_mismatch": nan_mismatch, "both_nan": both_nan,
            "compared": compared, "trials": trials, "text": text}


def _random_value(t: Any, rng: Any) -> Any:
    """A random value of type ``t`` (a tensor type): unknown dimensions of size 3."""
    import numpy as np

    shape = tuple(3 if d is None else d for d in getattr(t, "shape", ()))
    dtype = np.dtype(getattr(t, "dtype", "float64"))
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        return rng.integers(0, 5, shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    raise TypeError(f"RewriteStepper.check: no random values for inputs of type {t!r}")
