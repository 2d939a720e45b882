"""The distributions: one ``RandomVariable`` per NumPy ``Generator`` method, with PyTensor's names and signatures.

Each is an op instance called with the distribution's parameters and ``size``, ``rng``, ``dtype``; the draw has
the numbers NumPy's ``Generator`` gives for the same state:

>>> import numpy as np
>>> import symlab
>>> from symlab.tensor.random.basic import normal, uniform
>>> rng = symlab.shared(np.random.default_rng(42), name="rng")
>>> next_rng, u = uniform(0.0, 1.0, size=(2, 2), rng=rng, return_next_rng=True)
>>> bool(np.all(u.eval() == np.random.default_rng(42).uniform(0.0, 1.0, (2, 2))))
True
>>> normal(0.0, -1.0, rng=rng)
Traceback (most recent call last):
...
ValueError: normal: scale must be >= 0, received -1.0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from symlab.graph.basic import Constant, Variable
from symlab.tensor.random.op import RandomVariable


def known_values(p: Variable) -> np.ndarray | None:
    """The value of a parameter known before running the graph (a constant), else None."""
    return np.asarray(p.data) if isinstance(p, Constant) else None


def refuse_below(op: RandomVariable, params: Sequence[Variable], index: int, what: str, low: float,
                 strict: bool = False) -> None:
    """Refuse a constant parameter ``index`` (called ``what``) below ``low`` (or equal to it, ``strict``)."""
    data = known_values(params[index])
    if data is None or data.size == 0:
        return
    bad = data <= low if strict else data < low
    if np.any(bad):
        shown = data if data.ndim == 0 else data[bad].flat[0]
        raise ValueError(f"{op.name}: {what} must be {'>' if strict else '>='} {low:g}, received {shown}")


class NormalRV(RandomVariable):
    """``normal(loc=0.0, scale=1.0, size=None)``: Gaussian draws (NumPy's ``Generator.normal``)."""

    name = "normal"
    signature = "(),()->()"
    dtype = "floatX"

    def __call__(self, loc: Any = 0.0, scale: Any = 1.0, **kwargs: Any) -> Any:
        return super().__call__(loc, scale, **kwargs)

    def check_parameters(self, params: Sequence[Variable]) -> None:
        refuse_below(self, params, 1, "scale", 0.0)


class UniformRV(RandomVariable):
    """``uniform(low=0.0, high=1.0, size=None)``: draws uniform on ``[low, high)`` (NumPy's ``Generator.uniform``)."""

    name = "uniform"
    signature = "(),()->()"
    dtype = "floatX"

    def __call__(self, low: Any = 0.0, high: Any = 1.0, **kwargs: Any) -> Any:
        return super().__call__(low, high, **kwargs)


normal = NormalRV()
uniform = UniformRV()

__all__ = ["NormalRV", "UniformRV", "normal", "uniform"]
