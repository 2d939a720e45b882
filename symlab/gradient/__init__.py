"""Automatic differentiation: ``grad`` and friends.

- :mod:`~symlab.gradient.reverse_mode`: ``grad`` (reverse mode, through each op's ``L_op``), and
  ``Lop``, ``Rop``, ``jacobian``, ``hessian`` built on it;
- :mod:`~symlab.gradient.products`: PyTensor 3's ``pullback``, ``pushforward``, ``hessian_vector_product``;
- :mod:`~symlab.gradient.verify`: ``verify_grad``, a gradient checked against finite differences;
- :mod:`~symlab.gradient.walk`: ``GradWalk``, grad's walk recorded step by step (what the grad stepper plays).

>>> import numpy as np
>>> import symlab
>>> import symlab.tensor as st
>>> x = st.dvector("x")
>>> cost = (x ** 2).sum()
>>> g = symlab.grad(cost, x)
>>> g.eval({x: np.array([1.0, 2.0])})
array([2., 4.])
"""

from symlab import tensor as _tensor
from symlab.gradient.products import hessian_vector_product, pullback, pushforward
from symlab.gradient.reverse_mode import (
    DisconnectedInputError,
    Lop,
    NullTypeGradError,
    Rop,
    grad,
    hessian,
    jacobian,
)
from symlab.gradient.verify import GradientError, verify_grad
from symlab.gradient.walk import GradObserver, GradStep, GradWalk

# Theano and PyTensor offer these as ``tensor.grad``... too (seed 003 writes ``T.grad``): the tensor package, a
# layer below, names them; this layer gives it the functions.
_tensor.register_gradient_functions(
    {"grad": grad, "jacobian": jacobian, "hessian": hessian, "Lop": Lop, "Rop": Rop, "verify_grad": verify_grad}
)

__all__ = [
    "DisconnectedInputError",
    "GradObserver",
    "GradStep",
    "GradWalk",
    "GradientError",
    "Lop",
    "NullTypeGradError",
    "Rop",
    "grad",
    "hessian",
    "hessian_vector_product",
    "jacobian",
    "pullback",
    "pushforward",
    "verify_grad",
]
