"""Theano's ``tensor.nnet`` namespace: activations, cross-entropies and ``conv2d``.

Reachable as ``symlab.tensor.nnet`` (``T.nnet`` after ``import symlab.tensor as T``), loaded on first use:

>>> import numpy as np
>>> import symlab.tensor as T
>>> x = T.dmatrix("x")
>>> T.nnet.softmax(x).eval({x: np.zeros((1, 4))})
array([[0.25, 0.25, 0.25, 0.25]])
>>> sorted(T.nnet.__all__)[:4]
['binary_crossentropy', 'categorical_crossentropy', 'conv2d', 'hard_sigmoid']

See :mod:`~symlab.tensor.nnet.basic` for the functions and :mod:`~symlab.tensor.nnet.conv` for ``conv2d``.
"""

from symlab.tensor.nnet.basic import (
    binary_crossentropy,
    categorical_crossentropy,
    hard_sigmoid,
    relu,
    sigmoid,
    sigmoid_binary_crossentropy,
    softmax,
    softplus,
    ultra_fast_sigmoid,
)
from symlab.tensor.nnet.conv import conv2d

__all__ = [
    "binary_crossentropy",
    "categorical_crossentropy",
    "conv2d",
    "hard_sigmoid",
    "relu",
    "sigmoid",
    "sigmoid_binary_crossentropy",
    "softmax",
    "softplus",
    "ultra_fast_sigmoid",
]
