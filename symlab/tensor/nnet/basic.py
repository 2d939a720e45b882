"""Theano's ``tensor.nnet`` functions, with Theano's meanings, built from symlab's operations.

``sigmoid`` and ``softplus`` are the elementwise ops of :mod:`symlab.tensor.math`; ``softmax`` is Theano's
(a vector gives a ``1 x n`` row, a matrix is normalised row by row; :func:`symlab.tensor.softmax` keeps
PyTensor's ``axis`` form); the cross-entropies are written as Theano wrote them, and the stabilize rules
of :mod:`symlab.rewriting.rules.logistic` make them finite where a probability saturates:

>>> import numpy as np
>>> import symlab.tensor as T
>>> x = T.dvector("x")
>>> T.nnet.softmax(x).eval({x: np.array([0.0, 0.0])})
array([[0.5, 0.5]])
>>> T.nnet.relu(x, alpha=0.1).eval({x: np.array([-2.0, 3.0])})
array([-0.2,  3. ])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from symlab.graph.basic import Variable
from symlab.tensor import math as M
from symlab.tensor.alloc import arange
from symlab.tensor.basic import as_tensor_variable, cast
from symlab.tensor.elemwise import DimShuffle
from symlab.tensor.reduction import sum as tsum
from symlab.tensor.special import Softmax

sigmoid = M.sigmoid
softplus = M.softplus

#: The pieces of Theano's ``ultra_fast_sigmoid``: a rational then linear approximation of ``tanh(x / 2)``.
_UFS_KNEE, _UFS_END = 1.7, 3.0
_UFS_AT_KNEE, _UFS_SLOPE, _UFS_TOP = 0.935409070603099, 0.0458812946797165, 0.99505475368673


def _tensor(x: Any, fname: str, what: str) -> Variable:
    """``x`` as a tensor variable, or a TypeError naming the function, the argument and what it received."""
    try:
        return as_tensor_variable(x)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{fname}: {what} must be a tensor or an array-like of numbers, received {x!r}: {err}") from None


def _real(x: Any, fname: str, what: str) -> Variable:
    """``x`` as a real tensor; integers and booleans become float64 (as Theano's upcast to a float)."""
    v = _tensor(x, fname, what)
    kind = np.dtype(v.dtype).kind
    if kind in "biu":
        return cast(v, "float64")
    if kind != "f":
        raise TypeError(f"{fname}: {what} must have a real dtype, received {v} ({v.type})")
    return v


def softmax(c: Any) -> Variable:
    """Theano's softmax: each row of the matrix ``c`` normalised to sum 1; a vector gives a ``1 x n`` matrix.

    >>> import numpy as np
    >>> import symlab.tensor as T
    >>> m = T.dmatrix("m")
    >>> T.nnet.softmax(m).eval({m: np.log([[1.0, 3.0], [2.0, 2.0]])})
    array([[0.25, 0.75],
           [0.5 , 0.5 ]])
    >>> T.nnet.softmax(T.dtensor3("t"))
    Traceback (most recent call last):
    ...
    ValueError: nnet.softmax: c must be a vector or a matrix (Theano's softmax is row-wise), received t (TensorType(float64, (?, ?, ?))) with 3 dimensions; use symlab.tensor.softmax(c, axis=...) for other ranks
    """
    x = _real(c, "nnet.softmax", "c")
    if x.ndim not in (1, 2):
        raise ValueError(
            f"nnet.softmax: c must be a vector or a matrix (Theano's softmax is row-wise), received {x} ({x.type}) "
            f"with {x.ndim} dimensions; use symlab.tensor.softmax(c, axis=...) for other ranks"
        )
    if x.ndim == 1:
        x = DimShuffle(1, ("x", 0))(x)
    return Softmax(1)(x)


def relu(x: Any, alpha: Any = 0) -> Variable:
    """Theano's rectifier: ``x`` where ``x > 0``, ``alpha * x`` elsewhere (``alpha`` a number or a tensor).

    Computed as Theano did, ``0.5 * (x + |x|)`` and, for a leak, ``(1 + alpha)/2 * x + (1 - alpha)/2 * |x|``:
    the gradient at exactly 0 is the mean of the two slopes (1/2 for ``alpha = 0``).

    >>> import numpy as np
    >>> import symlab.tensor as T
    >>> x = T.dvector("x")
    >>> T.nnet.relu(x).eval({x: np.array([-1.0, 0.0, 2.0])})
    array([0., 0., 2.])
    """
    v = _real(x, "nnet.relu", "x")
    if isinstance(alpha, int | float | np.number) and not isinstance(alpha, bool) and alpha == 0:
        return 0.5 * (v + M.abs(v))
    a = _tensor(alpha, "nnet.relu", "alpha")
    if np.dtype(a.dtype).kind not in "biuf":
        raise TypeError(f"nnet.relu: alpha must be a real number or tensor, received {alpha!r} ({a.type})")
    return 0.5 * (1 + a) * v + 0.5 * (1 - a) * M.abs(v)


def hard_sigmoid(x: Any) -> Variable:
    """Theano's piecewise linear sigmoid: ``clip(0.2 * x + 0.5, 0, 1)``.

    >>> import numpy as np
    >>> import symlab.tensor as T
    >>> x = T.dvector("x")
    >>> T.nnet.hard_sigmoid(x).eval({x: np.array([-5.0, 0.0, 1.0, 5.0])})
    array([0. , 0.5, 0.7, 1. ])
    """
    v = _real(x, "nnet.hard_sigmoid", "x")
    return M.clip(0.2 * v + 0.5, 0, 1)


def ultra_fast_sigmoid(x: Any) -> Variable:
    """Theano's fast approximation of the sigmoid, ``(1 + t(x / 2)) / 2`` with a piecewise ``t`` close to ``tanh``.

    For ``a = |x| / 2``: ``t = 1.5 a / (1 + a)`` below 1.7, a line from 0.9354 at 1.7 to 3, then 0.99505 (the
    sign of ``x`` restored). It is within 0.028 of ``sigmoid``; its gradient is the exact one of the pieces.

    >>> import numpy as np
    >>> import symlab.tensor as T
    >>> x = T.dvector("x")
    >>> np.round(T.nnet.ultra_fast_sigmoid(x).eval({x: np.array([-10.0, 0.0, 1.0])}), 6)
    array([0.002473, 0.5     , 0.75    ])
    """
    v = _real(x, "nnet.ultra_fast_sigmoid", "x")
    a = M.abs(0.5 * v)
    near = 1.5 * a / (1 + a)
    middle = _UFS_AT_KNEE + _UFS_SLOPE * (a - _UFS_KNEE)
    t = M.switch(M.lt(a, _UFS_KNEE), near, M.switch(M.lt(a, _UFS_END), middle, _UFS_TOP))
    return M.switch(M.ge(v, 0), 0.5 + 0.5 * t, 0.5 - 0.5 * t)


def binary_crossentropy(output: Any, target: Any) -> Variable:
    """Theano's ``-(target * log(output) + (1 - target) * log(1 - output))``, elementwise.

    With ``output = sigmoid(z)`` (or ``1 / (1 + exp(-z))``) the stabilize rules rewrite it to softplus
    forms, finite for every finite ``z``.

    >>> import numpy as np
    >>> import symlab.tensor as T
    >>> p, t = T.dvectors("p", "t")
    >>> np.round(T.nnet.binary_crossentropy(p, t).eval({p: np.array([0.5, 0.9]), t: np.array([1.0, 0.0])}), 6)
    array([0.693147, 2.302585])
    """
    p = _real(output, "nnet.binary_crossentropy", "output")
    t = _tensor(target, "nnet.binary_crossentropy", "target")
    if np.dtype(t.dtype).kind not in "biuf":
        raise TypeError(f"nnet.binary_crossentropy: target must be real, received {target!r} ({t.type})")
    return -(t * M.log(p) + (1.0 - t) * M.log(1.0 - p))


def sigmoid_binary_crossentropy(output: Any, target: Any) -> Variable:
    """``binary_crossentropy(sigmoid(output), target)`` written stably: ``t*softplus(-o) + (1-t)*softplus(o)``.

    ``output`` is the logit (any real); the gradient with respect to it is ``sigmoid(output) - target``.

    >>> import numpy as np
    >>> import symlab.tensor as T
    >>> o, t = T.dvectors("o", "t")
    >>> T.nnet.sigmoid_binary_crossentropy(o, t).eval({o: np.array([1000.0, -1000.0]), t: np.array([0.0, 0.0])})
    array([1000.,    0.])
    """
    o = _real(output, "nnet.sigmoid_binary_crossentropy", "output")
    t = _tensor(target, "nnet.sigmoid_binary_crossentropy", "target")
    if np.dtype(t.dtype).kind not in "biuf":
        raise TypeError(f"nnet.sigmoid_binary_crossentropy: target must be real, received {target!r} ({t.type})")
    return t * M.softplus(-o) + (1.0 - t) * M.softplus(o)


def categorical_crossentropy(coding_dist: Any, true_dist: Any) -> Variable:
    """Theano's cross-entropy of each row of ``coding_dist`` against ``true_dist``.

    ``true_dist`` of ``coding_dist``'s rank is a distribution (one-hot or not): the result is
    ``-sum(true_dist * log(coding_dist), axis=-1)``. An integer vector is a label per row of the matrix
    ``coding_dist``: the result is ``-log(coding_dist[i, true_dist[i]])``.

    >>> import numpy as np
    >>> import symlab.tensor as T
    >>> p, onehot, labels = T.dmatrix("p"), T.dmatrix("onehot"), T.ivector("labels")
    >>> probs = np.array([[0.5, 0.5], [0.1, 0.9]])
    >>> np.round(T.nnet.categorical_crossentropy(p, labels).eval({p: probs, labels: np.array([0, 1], "int32")}), 6)
    array([0.693147, 0.105361])
    >>> np.round(T.nnet.categorical_crossentropy(p, onehot).eval({p: probs, onehot: np.eye(2)}), 6)
    array([0.693147, 0.105361])
    """
    fname = "nnet.categorical_crossentropy"
    p = _real(coding_dist, fname, "coding_dist")
    t = _tensor(true_dist, fname, "true_dist")
    if p.ndim == 0:
        raise ValueError(f"{fname}: coding_dist must have at least one dimension, received {p} ({p.type})")
    if t.ndim == p.ndim:
        if np.dtype(t.dtype).kind not in "biuf":
            raise TypeError(f"{fname}: true_dist must be real, received {t} ({t.type})")
        return -tsum(t * M.log(p), axis=p.ndim - 1)
    if t.ndim == p.ndim - 1:
        if p.ndim != 2 or np.dtype(t.dtype).kind not in "iu":
            raise TypeError(
                f"{fname}: labels need a matrix coding_dist and an integer vector true_dist, received coding_dist "
                f"{p} ({p.type}) and true_dist {t} ({t.type})"
            )
        return -M.log(p[arange(p.shape[0]), t])
    raise TypeError(
        f"{fname}: true_dist must have coding_dist's rank ({p.ndim}, a distribution) or one less ({p.ndim - 1}, "
        f"labels), received coding_dist {p} ({p.type}) and true_dist {t} ({t.type})"
    )


__all__ = [
    "binary_crossentropy",
    "categorical_crossentropy",
    "hard_sigmoid",
    "relu",
    "sigmoid",
    "sigmoid_binary_crossentropy",
    "softmax",
    "softplus",
    "ultra_fast_sigmoid",
]
