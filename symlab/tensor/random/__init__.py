"""Random variables: draws from NumPy's ``Generator`` held in the graph as state (PyTensor's ``pytensor.tensor.random``).

- :mod:`~symlab.tensor.random.type`: ``RandomGeneratorType``, the type of a generator;
- :mod:`~symlab.tensor.random.op`: ``RandomVariable``, the op ``(rng, size, *params) -> (next_rng, draw)``;
- :mod:`~symlab.tensor.random.basic`: the distributions (``normal``, ``uniform``, ...; ``__all__`` lists them all),
  with the discrete ones in :mod:`~symlab.tensor.random.discrete` and those with core dimensions in
  :mod:`~symlab.tensor.random.multivariate`; :mod:`~symlab.tensor.random.parameters` checks parameter values;
- :mod:`~symlab.tensor.random.variable`: ``rng()``, ``shared_rng()`` and the generator variables' methods;
- :mod:`~symlab.tensor.random.utils`: ``RandomStream``, whose draws advance their generators by default.

>>> import numpy as np
>>> import symlab
>>> import symlab.tensor as pt
>>> rng = pt.random.shared_rng(np.random.default_rng(123))
>>> next_rng, x = pt.random.uniform(rng=rng, return_next_rng=True)
>>> f = symlab.function([], x, updates={rng: next_rng}, mode="NUMPY")
>>> f(), f(), f()
(array(0.68235186), array(0.05382102), array(0.22035987))
"""

from symlab.tensor.random import basic
from symlab.tensor.random.basic import *  # noqa: F403
from symlab.tensor.random.op import RandomVariable
from symlab.tensor.random.type import RandomGeneratorType, random_generator_type
from symlab.tensor.random.utils import RandomStream
from symlab.tensor.random.variable import RandomGeneratorSharedVariable, RandomGeneratorVariable, rng, shared_rng

__all__ = [
    *basic.__all__,
    "RandomGeneratorSharedVariable",
    "RandomGeneratorType",
    "RandomGeneratorVariable",
    "RandomStream",
    "RandomVariable",
    "random_generator_type",
    "rng",
    "shared_rng",
]
