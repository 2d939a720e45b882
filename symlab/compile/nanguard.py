"""NanGuard: stop at the first node that produces NaN or inf (``mode="NanGuard"``).

After each node runs, its floating-point outputs are checked; the error names
the node, its toposort position, the bad output and every input with what it
holds, so the cause is one look away:

>>> import numpy as np
>>> import symlab
>>> import symlab.tensor as st
>>> x = st.dvector("x")
>>> f = symlab.function([x], st.log(x).sum() * 2.0, mode="NanGuard")
>>> f([-1.0, 1.0])
Traceback (most recent call last):
...
symlab.compile.nanguard.NanGuardError: NanGuard: node 0 (Elemwise{log,no_inplace}(x)) produced NaN in output 0 (Elemwise{log,no_inplace}.0: dtype float64, shape (2,), 1 NaN)
  input 0 (x): dtype float64, shape (2,), finite, min -1, max 1
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from symlab.compile.linker_numpy import NumpyLinker, NumpyRunner
from symlab.graph.fg import FunctionGraph


class NanGuardError(FloatingPointError):
    """A node produced NaN, inf (or, if asked, a very large value)."""


def _problems(value: Any, nan: bool, inf: bool, big: float | None) -> list[str]:
    arr = np.asarray(value)
    if arr.dtype.kind not in "fc" or arr.size == 0:
        return []
    out = []
    if nan:
        n = int(np.isnan(arr).sum())
        if n:
            out.append(f"{n} NaN")
    if inf:
        n = int(np.isinf(arr).sum())
        if n:
            out.append(f"{n} inf")
    if big is not None:
        with np.errstate(invalid="ignore"):
            n = int((np.abs(arr[np.isfinite(arr)]) > big).sum())
        if n:
            out.append(f"{n} values larger than {big:g} in absolute value")
    return out


def describe_contents(value: Any) -> str:
    """dtype, shape and a short account of the values (NaN/inf counts, finite range).

    >>> describe_contents(np.array([1.0, np.nan, 3.0]))
    'dtype float64, shape (3,), 1 NaN, min 1, max 3 (finite values)'
    """
    arr = np.asarray(value)
    head = f"dtype {arr.dtype}, shape {arr.shape}"
    if arr.dtype.kind not in "fciub" or arr.size == 0:
        return head
    parts = [head]
    finite = arr
    if arr.dtype.kind in "fc":
        n_nan, n_inf = int(np.isnan(arr).sum()), int(np.isinf(arr).sum())
        if n_nan:
            parts.append(f"{n_nan} NaN")
        if n_inf:
            parts.append(f"{n_inf} inf")
        if not n_nan and not n_inf:
            parts.append("finite")
        finite = arr[np.isfinite(arr)]
    if finite.size:
        suffix = " (finite values)" if finite.size != arr.size else ""
        parts.append(f"min {finite.min():.6g}, max {finite.max():.6g}{suffix}")
    return ", ".join(parts)


class NanGuardRunner(NumpyRunner):
    """Runs like :class:`NumpyRunner` and checks every node's outputs."""

    nan_is_error = True
    inf_is_error = True
    big_is_error: float | None = None

    def execute(self) -> None:
        stats = self.profile.nodes if self.profile is not None else None
        for k, (perform, node, ins, outs) in self.scheduled():
            args = [c[0] for c in ins]
            self.run_node(k, perform, node, args, outs, stats)
            for j, cell in enumerate(outs):
                found = _problems(cell[0], self.nan_is_error, self.inf_is_error, self.big_is_error)
                if found:
                    out = node.outputs[j]
                    lines = [
                        f"NanGuard: node {k} ({node}) produced {' and '.join(p.split(' ', 1)[1] for p in found)} "
                        f"in output {j} ({out}: dtype {np.asarray(cell[0]).dtype}, shape {np.shape(cell[0])}, "
                        f"{', '.join(found)})"
                    ]
                    for i, (var, value) in enumerate(zip(node.inputs, args)):
                        lines.append(f"  input {i} ({var}): {describe_contents(value)}")
                    raise NanGuardError("\n".join(lines))


class NanGuardLinker(NumpyLinker):
    """Builds :class:`NanGuardRunner` objects with the mode's settings."""

    name = "nanguard"

    def __init__(self, nan_is_error: bool = True, inf_is_error: bool = True, big_is_error: float | None = None) -> None:
        self.nan_is_error = nan_is_error
        self.inf_is_error = inf_is_error
        self.big_is_error = big_is_error

    def make_runner(
        self, fgraph: FunctionGraph, borrow_outputs: Sequence[bool] | None = None, trace: Any = None
    ) -> NanGuardRunner:
        runner = NanGuardRunner(fgraph, borrow_outputs)
        runner.nan_is_error = self.nan_is_error
        runner.inf_is_error = self.inf_is_error
        runner.big_is_error = self.big_is_error
        return runner


__all__ = ["NanGuardError", "NanGuardLinker", "NanGuardRunner", "describe_contents"]
