"""Elementwise mathematics on tensors: each scalar op's ``Elemwise`` under its name, with its gradient rule.

Every scalar op declared in :mod:`symlab.scalar.basic` has one statement
here binding its ``Elemwise`` to the same name together with its gradient
rule, ``exp = _elemwise(scalar.exp, lambda i, o, g: [g * o])``: the rule takes
the inputs ``i``, the output ``o`` and the output's gradient ``g`` (tensors)
and returns each input's gradient, or ``None`` where there is none (the input
is disconnected or the op is not differentiable; :mod:`symlab.gradient` turns
it into the right symbolic answer). An op without a rule is not
differentiable. The rules are kept, by scalar op name, in
:data:`~symlab.tensor.elemwise.ELEMWISE_GRADS`, where ``Elemwise`` looks them up.

>>> import numpy as np
>>> import symlab.tensor as st
>>> x = st.dvector("x")
>>> st.exp(x).eval({x: np.zeros(2)})
array([1., 1.])
>>> st.cbrt(x).eval({x: np.array([8.0, -27.0])})
array([ 2., -3.])
"""

from __future__ import annotations

import math as _pymath
from collections.abc import Callable

from symlab import scalar as _scalar
from symlab.graph.basic import Variable
from symlab.scalar.basic import ScalarOp
from symlab.tensor.elemwise import ELEMWISE_GRADS, Elemwise

GradRule = Callable[[list[Variable], Variable, Variable], list[Variable | None]]

_LN2 = _pymath.log(2.0)
_LN10 = _pymath.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / _pymath.sqrt(_pymath.pi)


def _elemwise(scalar_op: ScalarOp, grad: GradRule | None = None) -> Elemwise:
    """The ``Elemwise`` of ``scalar_op``; ``grad`` (if given) becomes its gradient rule."""
    if grad is not None:
        ELEMWISE_GRADS[scalar_op.name] = grad
    return Elemwise(scalar_op)


# arithmetic
add: Elemwise = _elemwise(_scalar.add, lambda i, o, g: [g, g])
sub: Elemwise = _elemwise(_scalar.sub, lambda i, o, g: [g, -g])
mul: Elemwise = _elemwise(_scalar.mul, lambda i, o, g: [g * i[1], g * i[0]])
true_div: Elemwise = _elemwise(_scalar.true_div, lambda i, o, g: [g / i[1], -g * o / i[1]])
int_div: Elemwise = _elemwise(_scalar.int_div)
mod: Elemwise = _elemwise(_scalar.mod, lambda i, o, g: [g, -g * floor(true_div(i[0], i[1]))])
pow: Elemwise = _elemwise(_scalar.pow, lambda i, o, g: [g * i[1] * pow(i[0], i[1] - 1), g * o * log(i[0])])  # noqa: A001
neg: Elemwise = _elemwise(_scalar.neg, lambda i, o, g: [-g])
abs: Elemwise = _elemwise(_scalar.abs, lambda i, o, g: [g * sign(i[0])])  # noqa: A001
sign: Elemwise = _elemwise(_scalar.sign)
reciprocal: Elemwise = _elemwise(_scalar.reciprocal, lambda i, o, g: [-g * o * o])
sqr: Elemwise = _elemwise(_scalar.sqr, lambda i, o, g: [g * 2.0 * i[0]])
maximum: Elemwise = _elemwise(_scalar.maximum, lambda i, o, g: [g * ge(i[0], i[1]), g * lt(i[0], i[1])])
minimum: Elemwise = _elemwise(_scalar.minimum, lambda i, o, g: [g * le(i[0], i[1]), g * gt(i[0], i[1])])
clip: Elemwise = _elemwise(
    _scalar.clip, lambda i, o, g: [g * and_(ge(i[0], i[1]), le(i[0], i[2])), g * lt(i[0], i[1]), g * gt(i[0], i[2])]
)
switch: Elemwise = _elemwise(_scalar.switch, lambda i, o, g: [None, switch(i[0], g, 0.0), switch(i[0], 0.0, g)])
second: Elemwise = _elemwise(_scalar.second, lambda i, o, g: [None, g])
identity: Elemwise = _elemwise(_scalar.identity, lambda i, o, g: [g])
# comparison and logic (not differentiable)
lt: Elemwise = _elemwise(_scalar.lt)
gt: Elemwise = _elemwise(_scalar.gt)
le: Elemwise = _elemwise(_scalar.le)
ge: Elemwise = _elemwise(_scalar.ge)
eq: Elemwise = _elemwise(_scalar.eq)
neq: Elemwise = _elemwise(_scalar.neq)
and_: Elemwise = _elemwise(_scalar.and_)
or_: Elemwise = _elemwise(_scalar.or_)
xor: Elemwise = _elemwise(_scalar.xor)
invert: Elemwise = _elemwise(_scalar.invert)
isnan: Elemwise = _elemwise(_scalar.isnan)
isinf: Elemwise = _elemwise(_scalar.isinf)
# exponentials, logarithms and roots
exp: Elemwise = _elemwise(_scalar.exp, lambda i, o, g: [g * o])
exp2: Elemwise = _elemwise(_scalar.exp2, lambda i, o, g: [g * o * _LN2])
expm1: Elemwise = _elemwise(_scalar.expm1, lambda i, o, g: [g * (o + 1.0)])
log: Elemwise = _elemwise(_scalar.log, lambda i, o, g: [g / i[0]])
log2: Elemwise = _elemwise(_scalar.log2, lambda i, o, g: [g / (i[0] * _LN2)])
log10: Elemwise = _elemwise(_scalar.log10, lambda i, o, g: [g / (i[0] * _LN10)])
log1p: Elemwise = _elemwise(_scalar.log1p, lambda i, o, g: [g / (i[0] + 1.0)])
sqrt: Elemwise = _elemwise(_scalar.sqrt, lambda i, o, g: [g * 0.5 / o])
cbrt: Elemwise = _elemwise(_scalar.cbrt, lambda i, o, g: [g / (3.0 * o * o)])
sigmoid: Elemwise = _elemwise(_scalar.sigmoid, lambda i, o, g: [g * o * (1.0 - o)])
softplus: Elemwise = _elemwise(_scalar.softplus, lambda i, o, g: [g * sigmoid(i[0])])
# trigonometry
sin: Elemwise = _elemwise(_scalar.sin, lambda i, o, g: [g * cos(i[0])])
cos: Elemwise = _elemwise(_scalar.cos, lambda i, o, g: [-g * sin(i[0])])
tan: Elemwise = _elemwise(_scalar.tan, lambda i, o, g: [g * (o * o + 1.0)])
arcsin: Elemwise = _elemwise(_scalar.arcsin, lambda i, o, g: [g / sqrt(1.0 - i[0] * i[0])])
arccos: Elemwise = _elemwise(_scalar.arccos, lambda i, o, g: [-g / sqrt(1.0 - i[0] * i[0])])
arctan: Elemwise = _elemwise(_scalar.arctan, lambda i, o, g: [g / (i[0] * i[0] + 1.0)])
arctan2: Elemwise = _elemwise(
    _scalar.arctan2,
    lambda i, o, g: [g * i[1] / (i[0] * i[0] + i[1] * i[1]), -g * i[0] / (i[0] * i[0] + i[1] * i[1])],
)
sinh: Elemwise = _elemwise(_scalar.sinh, lambda i, o, g: [g * cosh(i[0])])
cosh: Elemwise = _elemwise(_scalar.cosh, lambda i, o, g: [g * sinh(i[0])])
tanh: Elemwise = _elemwise(_scalar.tanh, lambda i, o, g: [g * (1.0 - o * o)])
# special functions
erf: Elemwise = _elemwise(_scalar.erf, lambda i, o, g: [g * _TWO_OVER_SQRT_PI * exp(-i[0] * i[0])])
erfc: Elemwise = _elemwise(_scalar.erfc, lambda i, o, g: [-g * _TWO_OVER_SQRT_PI * exp(-i[0] * i[0])])
gamma: Elemwise = _elemwise(_scalar.gamma, lambda i, o, g: [g * o * psi(i[0])])
gammaln: Elemwise = _elemwise(_scalar.gammaln, lambda i, o, g: [g * psi(i[0])])
psi: Elemwise = _elemwise(_scalar.psi)
# rounding (not differentiable)
floor: Elemwise = _elemwise(_scalar.floor)
ceil: Elemwise = _elemwise(_scalar.ceil)
round: Elemwise = _elemwise(_scalar.round)  # noqa: A001

#: The gradient of a ``Cast`` (any dtype): the output's gradient, cast back by ``Elemwise``.
ELEMWISE_GRADS["cast"] = lambda i, o, g: [g]

#: NumPy's names for the same operations.
divide = true_div
floor_divide = int_div
power = pow
negative = neg
where = switch

__all__ = [
    "abs",
    "add",
    "and_",
    "arccos",
    "arcsin",
    "arctan",
    "arctan2",
    "cbrt",
    "ceil",
    "clip",
    "cos",
    "cosh",
    "divide",
    "eq",
    "erf",
    "erfc",
    "exp",
    "exp2",
    "expm1",
    "floor",
    "floor_divide",
    "gamma",
    "gammaln",
    "ge",
    "gt",
    "identity",
    "int_div",
    "invert",
    "isinf",
    "isnan",
    "le",
    "log",
    "log10",
    "log1p",
    "log2",
    "lt",
    "maximum",
    "minimum",
    "mod",
    "mul",
    "neg",
    "negative",
    "neq",
    "or_",
    "pow",
    "power",
    "psi",
    "reciprocal",
    "round",
    "second",
    "sigmoid",
    "sign",
    "sin",
    "sinh",
    "softplus",
    "sqr",
    "sqrt",
    "sub",
    "switch",
    "tan",
    "tanh",
    "true_div",
    "where",
    "xor",
]
