"""Elementwise mathematics on tensors, and the gradient rule of each operation.

Every scalar op of :mod:`symlab.scalar` has an ``Elemwise`` of the same name
here (``add``, ``exp``, ``switch``...). Each gradient rule is one line of
:data:`~symlab.tensor.elemwise.ELEMWISE_GRADS`, readable at a glance.

>>> import numpy as np
>>> import symlab.tensor as st
>>> x = st.dvector("x")
>>> st.exp(x).eval({x: np.zeros(2)})
array([1., 1.])
"""

from __future__ import annotations

import math as _pymath

from symlab import scalar as _scalar
from symlab.scalar.basic import SCALAR_OPS
from symlab.tensor.elemwise import ELEMWISE_GRADS, Elemwise

# One Elemwise op per scalar op, under the scalar op's name; each is bound to its name below, written out
# (tests/tensor/test_tensor_math_names.py checks that every scalar op has its name here).
_elemwise: dict[str, Elemwise] = {name: Elemwise(_scalar.scalar_op(name)) for name, *_ in SCALAR_OPS}

add: Elemwise = _elemwise["add"]
sub: Elemwise = _elemwise["sub"]
mul: Elemwise = _elemwise["mul"]
true_div: Elemwise = _elemwise["true_div"]
int_div: Elemwise = _elemwise["int_div"]
pow: Elemwise = _elemwise["pow"]  # noqa: A001
neg: Elemwise = _elemwise["neg"]
exp: Elemwise = _elemwise["exp"]
log: Elemwise = _elemwise["log"]
sqrt: Elemwise = _elemwise["sqrt"]
sigmoid: Elemwise = _elemwise["sigmoid"]
switch: Elemwise = _elemwise["switch"]
second: Elemwise = _elemwise["second"]

#: NumPy's names for the same operations.
divide = true_div
floor_divide = int_div
power = pow
negative = neg
where = switch
lt, gt, le, ge = _elemwise["lt"], _elemwise["gt"], _elemwise["le"], _elemwise["ge"]
eq, neq = _elemwise["eq"], _elemwise["neq"]
and_, or_, xor, invert = _elemwise["and_"], _elemwise["or_"], _elemwise["xor"], _elemwise["invert"]
abs = _elemwise["abs"]  # noqa: A001
round = _elemwise["round"]  # noqa: A001
maximum, minimum, clip = _elemwise["maximum"], _elemwise["minimum"], _elemwise["clip"]
identity = _elemwise["identity"]
sign, floor, ceil = _elemwise["sign"], _elemwise["floor"], _elemwise["ceil"]
sin, cos, tanh, cosh, sinh = _elemwise["sin"], _elemwise["cos"], _elemwise["tanh"], _elemwise["cosh"], _elemwise["sinh"]
log1p, expm1, sqr, reciprocal = _elemwise["log1p"], _elemwise["expm1"], _elemwise["sqr"], _elemwise["reciprocal"]
erf, erfc, gammaln, psi = _elemwise["erf"], _elemwise["erfc"], _elemwise["gammaln"], _elemwise["psi"]
mod: Elemwise = _elemwise["mod"]
isnan, isinf = _elemwise["isnan"], _elemwise["isinf"]
exp2, log2, log10 = _elemwise["exp2"], _elemwise["log2"], _elemwise["log10"]
softplus: Elemwise = _elemwise["softplus"]
tan, arcsin, arccos = _elemwise["tan"], _elemwise["arcsin"], _elemwise["arccos"]
arctan, arctan2 = _elemwise["arctan"], _elemwise["arctan2"]
gamma: Elemwise = _elemwise["gamma"]


# ---------------------------------------------------------------------------------------
# Gradient rules: name -> (inputs, output, output gradient) -> input gradients.
# ``None`` means "no gradient here": the input is disconnected or the op is not
# differentiable; symlab.gradient turns it into the right symbolic answer.
_LN2 = _pymath.log(2.0)
_LN10 = _pymath.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / _pymath.sqrt(_pymath.pi)

ELEMWISE_GRADS.update(
    {
        "add": lambda i, o, g: [g, g],
        "sub": lambda i, o, g: [g, -g],
        "mul": lambda i, o, g: [g * i[1], g * i[0]],
        "true_div": lambda i, o, g: [g / i[1], -g * o / i[1]],
        "mod": lambda i, o, g: [g, -g * floor(true_div(i[0], i[1]))],
        "pow": lambda i, o, g: [g * i[1] * pow(i[0], i[1] - 1), g * o * log(i[0])],
        "neg": lambda i, o, g: [-g],
        "abs": lambda i, o, g: [g * sign(i[0])],
        "reciprocal": lambda i, o, g: [-g * o * o],
        "sqr": lambda i, o, g: [g * 2.0 * i[0]],
        "maximum": lambda i, o, g: [g * ge(i[0], i[1]), g * lt(i[0], i[1])],
        "minimum": lambda i, o, g: [g * le(i[0], i[1]), g * gt(i[0], i[1])],
        "clip": lambda i, o, g: [g * and_(ge(i[0], i[1]), le(i[0], i[2])), g * lt(i[0], i[1]), g * gt(i[0], i[2])],
        "switch": lambda i, o, g: [None, switch(i[0], g, 0.0), switch(i[0], 0.0, g)],
        "second": lambda i, o, g: [None, g],
        "identity": lambda i, o, g: [g],
        "exp": lambda i, o, g: [g * o],
        "exp2": lambda i, o, g: [g * o * _LN2],
        "expm1": lambda i, o, g: [g * (o + 1.0)],
        "log": lambda i, o, g: [g / i[0]],
        "log2": lambda i, o, g: [g / (i[0] * _LN2)],
        "log10": lambda i, o, g: [g / (i[0] * _LN10)],
        "log1p": lambda i, o, g: [g / (i[0] + 1.0)],
        "sqrt": lambda i, o, g: [g * 0.5 / o],
        "sigmoid": lambda i, o, g: [g * o * (1.0 - o)],
        "softplus": lambda i, o, g: [g * sigmoid(i[0])],
        "sin": lambda i, o, g: [g * cos(i[0])],
        "cos": lambda i, o, g: [-g * sin(i[0])],
        "tan": lambda i, o, g: [g * (o * o + 1.0)],
        "arcsin": lambda i, o, g: [g / sqrt(1.0 - i[0] * i[0])],
        "arccos": lambda i, o, g: [-g / sqrt(1.0 - i[0] * i[0])],
        "arctan": lambda i, o, g: [g / (i[0] * i[0] + 1.0)],
        "arctan2": lambda i, o, g: [
            g * i[1] / (i[0] * i[0] + i[1] * i[1]),
            -g * i[0] / (i[0] * i[0] + i[1] * i[1]),
        ],
        "sinh": lambda i, o, g: [g * cosh(i[0])],
        "cosh": lambda i, o, g: [g * sinh(i[0])],
        "tanh": lambda i, o, g: [g * (1.0 - o * o)],
        "erf": lambda i, o, g: [g * _TWO_OVER_SQRT_PI * exp(-i[0] * i[0])],
        "erfc": lambda i, o, g: [-g * _TWO_OVER_SQRT_PI * exp(-i[0] * i[0])],
        "gamma": lambda i, o, g: [g * o * psi(i[0])],
        "gammaln": lambda i, o, g: [g * psi(i[0])],
        "cast": lambda i, o, g: [g],
    }
)

__all__ = [
    *_elemwise,
    "divide",
    "floor_divide",
    "negative",
    "power",
    "where",
]
