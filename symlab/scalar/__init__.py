"""Scalar types and operations: the element-level language that ``Elemwise`` maps.

>>> import symlab.scalar as ss
>>> x = ss.float64("x")
>>> ss.add(x, 1).type
ScalarType(float64)
"""

from symlab.scalar.basic import *  # noqa: F403
from symlab.scalar.basic import SCALAR_OPS, Cast, ScalarOp, as_scalar, declared_ops, scalar_op
from symlab.scalar.type import ScalarType, get_scalar_type, upcast
from symlab.scalar.composite import Composite

float16 = get_scalar_type("float16")
float32 = get_scalar_type("float32")
float64 = get_scalar_type("float64")
complex64 = get_scalar_type("complex64")
complex128 = get_scalar_type("complex128")
int8 = get_scalar_type("int8")
int16 = get_scalar_type("int16")
int32 = get_scalar_type("int32")
int64 = get_scalar_type("int64")
uint8 = get_scalar_type("uint8")
bool_ = get_scalar_type("bool")

__all__ = [
    "SCALAR_OPS",
    "Cast",
    "Composite",
    "ScalarOp",
    "ScalarType",
    "as_scalar",
    "declared_ops",
    "get_scalar_type",
    "scalar_op",
    "upcast",
]
