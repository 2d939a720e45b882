"""Normalised exponentials: ``softmax``, ``log_softmax`` and ``logsumexp``.

All three subtract the maximum before exponentiating, so large inputs do
not overflow:

>>> import numpy as np
>>> import symlab.tensor as st
>>> x = st.dvector("x")
>>> st.softmax(x).eval({x: np.array([1000.0, 1000.0])})
array([0.5, 0.5])
>>> round(float(st.logsumexp(x).eval({x: np.array([1000.0, 1000.0])})) - 1000.0, 6)
0.693147
"""

from __future__ import annotations

from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Variable
from symlab.graph.op import Op
from symlab.tensor.basic import cast, normalize_axes
from symlab.tensor.conversion import as_tensor_variable, normalize_axis
from symlab.tensor.elemwise import DimShuffle
from symlab.tensor.math import exp, isinf, log, switch
from symlab.tensor.reduction import max as tmax
from symlab.tensor.reduction import sum as tsum


def _float_tensor(x: Any, opname: str) -> Variable:
    """``x`` as a real floating tensor (booleans and integers become float64)."""
    x = as_tensor_variable(x)
    kind = np.dtype(x.dtype).kind
    if kind in "biu":
        return cast(x, "float64")
    if kind != "f":
        raise TypeError(f"{opname}: unsupported dtype {x.dtype} of {x} ({x.type}); expected a real number dtype")
    return x


def _stable_max(x: np.ndarray, axis: int | None) -> np.ndarray:
    """The maximum along ``axis`` (kept), with infinite maxima replaced by 0."""
    m = np.max(x, axis=axis, keepdims=True)
    return np.where(np.isfinite(m), m, 0).astype(x.dtype)


class _SoftmaxBase(Op):
    """Shared checks of ``Softmax`` and ``LogSoftmax``: one float input along ``axis``."""

    __props__ = ("axis",)

    def __init__(self, axis: int | None) -> None:
        self.axis = None if axis is None else int(axis)

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        if np.dtype(x.dtype).kind != "f":
            raise TypeError(f"{self}: expects a floating tensor, received {x} ({x.type})")
        if self.axis is not None and not 0 <= self.axis < x.ndim:
            raise ValueError(f"{self}: axis {self.axis} is out of range for {x} ({x.type})")
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        if x.size == 0:
            output_storage[0][0] = x.copy()
            return
        with np.errstate(all="ignore"):
            shifted = x - _stable_max(x, self.axis)
            output_storage[0][0] = np.asarray(self.normalise(shifted), dtype=x.dtype)

    def normalise(self, shifted: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[0])]

    def _sum(self, v: Variable) -> Variable:
        return tsum(v, axis=self.axis, keepdims=True)


class Softmax(_SoftmaxBase):
    """``exp(x) / sum(exp(x), axis)``, computed after subtracting the maximum.

    >>> import symlab.tensor as st
    >>> st.softmax(st.dmatrix("x"), axis=1).owner.op
    Softmax{axis=1}
    """

    def normalise(self, shifted: np.ndarray) -> np.ndarray:
        e = np.exp(shifted)
        return e / np.sum(e, axis=self.axis, keepdims=True)

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        (sm,) = outputs
        (g,) = output_grads
        return [(g - self._sum(g * sm)) * sm]


class LogSoftmax(_SoftmaxBase):
    """``x - logsumexp(x, axis)``, computed after subtracting the maximum."""

    def normalise(self, shifted: np.ndarray) -> np.ndarray:
        return shifted - np.log(np.sum(np.exp(shifted), axis=self.axis, keepdims=True))

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        (out,) = outputs
        (g,) = output_grads
        return [g - exp(out) * self._sum(g)]


def _softmax_axis(x: Variable, axis: int | None, opname: str) -> int | None:
    return None if axis is None else normalize_axis(axis, x.ndim, opname)


def softmax(x: Any, axis: int | None = -1) -> Variable:
    """Softmax along ``axis`` (all axes together when ``None``); integers give float64.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x = st.dmatrix("x")
    >>> st.softmax(x, axis=0).eval({x: np.zeros((2, 2))})
    array([[0.5, 0.5],
           [0.5, 0.5]])
    """
    x = _float_tensor(x, "softmax")
    return Softmax(_softmax_axis(x, axis, "softmax"))(x)


def log_softmax(x: Any, axis: int | None = -1) -> Variable:
    """Logarithm of the softmax along ``axis``, without computing the softmax itself.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x = st.dvector("x")
    >>> st.log_softmax(x).eval({x: np.array([0.0, 0.0])}) == np.log([0.5, 0.5])
    array([ True,  True])
    """
    x = _float_tensor(x, "log_softmax")
    return LogSoftmax(_softmax_axis(x, axis, "log_softmax"))(x)


def logsumexp(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """``log(sum(exp(x), axis))``, stable for large inputs and for rows of ``-inf``.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x = st.dmatrix("x")
    >>> st.logsumexp(x, axis=1).eval({x: np.array([[0.0, 0.0], [-np.inf, -np.inf]])})
    array([0.69314718,       -inf])
    """
    x = _float_tensor(x, "logsumexp")
    axes = normalize_axes(axis, x.ndim, "logsumexp")
    if not axes:
        return x
    m = tmax(x, axes, initial=-np.inf)  # an empty slice: -inf, not an error (its logsumexp is -inf)
    m = switch(isinf(m), 0.0, m)  # an all -inf (or +inf) slice must not give inf - inf
    kept = [d for d in range(x.ndim) if d not in axes]
    position = {d: k for k, d in enumerate(kept)}
    expand = DimShuffle(len(kept), tuple("x" if d in axes else position[d] for d in range(x.ndim)))
    out = log(tsum(exp(x - expand(m)), axes)) + m  # the maximum on the reduced shape: one broadcast
    return expand(out) if keepdims else out


__all__ = ["LogSoftmax", "Softmax", "log_softmax", "logsumexp", "softmax"]
