"""``TensorVariable`` and ``TensorConstant``: the variables users write graphs with.

Their operators and methods call the ops, so this module sits above every op module of the package
(the ops' gradients may call these methods: ``g.sum(axis)``); ``TensorType``, at the bottom, learns
these classes from here. Python operators build graph nodes:

>>> import symlab.tensor as st
>>> x = st.dmatrix("x")
>>> y = x * 2.0
>>> y.owner.op.name
'Elemwise{mul,no_inplace}'
>>> y.owner.inputs[1]
DimShuffle{x,x}.0
>>> (x.T @ x).sum(axis=0).type
TensorType(float64, (?,))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from symlab.graph.basic import Constant, Variable
from symlab.tensor import math, reduction
from symlab.tensor.alloc import zeros_like
from symlab.tensor.basic import cast, dimshuffle, squeeze, transpose
from symlab.tensor.products import dot, matmul
from symlab.tensor.shape import flatten, reshape
from symlab.tensor.shape_of import shape
from symlab.tensor.subtensor import getitem
from symlab.tensor.transfer import transfer
from symlab.tensor.type import register_tensor_type_parts

#: The scalar ops whose results refuse ``bool()`` (see ``__bool__``).
_COMPARISONS = frozenset({"lt", "le", "gt", "ge", "eq", "neq"})


class _TensorOperators:
    """Operators and methods shared by tensor variables and constants."""

    type: Any
    # ``np.ones(2) + x`` must call ``x.__radd__``, not make an object array.
    __array_ufunc__ = None

    # -- static information -------------------------------------------------
    @property
    def ndim(self) -> int:
        return self.type.ndim

    @property
    def dtype(self) -> str:
        return self.type.dtype

    @property
    def broadcastable(self) -> tuple[bool, ...]:
        return self.type.broadcastable

    @property
    def shape(self):
        """The symbolic shape: a vector of int64 (``x.shape[0]`` is a scalar)."""
        return shape(self)

    @property
    def size(self):
        return reduction.prod(self.shape)

    @property
    def T(self):  # noqa: N802 - NumPy's name
        return transpose(self)

    def __bool__(self) -> bool:
        """True, as in Theano (``if not W:`` tests that ``W`` was given), except for a comparison.

        The result of ``<``, ``<=``, ``>``, ``>=``, ``eq`` or ``neq`` raises: its truth is known
        only once computed, and ``a < b < c`` (Python's ``(a < b) and (b < c)``) would silently
        drop a comparison.
        """
        owner = self.owner
        scalar_op = getattr(owner.op, "scalar_op", None) if owner is not None else None
        if getattr(scalar_op, "name", None) in _COMPARISONS:
            raise TypeError(
                f"The truth value of the comparison {self} is unknown until it is computed; "
                "use symlab.tensor.switch, or compare values after evaluation (a < b < c is not supported)"
            )
        return True

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError(f"len() of a 0-d tensor ({self})")
        n = self.type.shape[0]
        if n is None:
            raise TypeError(f"len() of {self}: its first dimension has no static size; use x.shape[0]")
        return n

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    # -- arithmetic ------------------------------------------------------------
    # A variable of another kind whose class sets ``defers_tensor_operators`` (sparse matrices: sparse + dense
    # is sparse's add) gets the operator: ``x + s`` returns NotImplemented, so Python calls ``s.__radd__(x)``.
    def __add__(self, other):
        if getattr(other, "defers_tensor_operators", False):
            return NotImplemented
        return math.add(self, other)

    def __radd__(self, other):
        return math.add(other, self)

    def __sub__(self, other):
        return math.sub(self, other)

    def __rsub__(self, other):
        return math.sub(other, self)

    def __mul__(self, other):
        if getattr(other, "defers_tensor_operators", False):
            return NotImplemented
        return math.mul(self, other)

    def __rmul__(self, other):
        return math.mul(other, self)

    def __truediv__(self, other):
        return math.true_div(self, other)

    def __rtruediv__(self, other):
        return math.true_div(other, self)

    def __floordiv__(self, other):
        return math.int_div(self, other)

    def __rfloordiv__(self, other):
        return math.int_div(other, self)

    def __mod__(self, other):
        return math.mod(self, other)

    def __rmod__(self, other):
        return math.mod(other, self)

    def __pow__(self, other):
        return math.pow(self, other)

    def __rpow__(self, other):
        return math.pow(other, self)

    def __neg__(self):
        return math.neg(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return math.abs(self)

    def __matmul__(self, other):
        if getattr(other, "defers_tensor_operators", False):
            return NotImplemented
        return matmul(self, other)

    def __rmatmul__(self, other):
        return matmul(other, self)

    # -- comparison and logic (``==`` stays identity: variables are dict keys) --
    def __lt__(self, other):
        return math.lt(self, other)

    def __le__(self, other):
        return math.le(self, other)

    def __gt__(self, other):
        return math.gt(self, other)

    def __ge__(self, other):
        return math.ge(self, other)

    def __and__(self, other):
        return math.and_(self, other)

    def __rand__(self, other):
        return math.and_(other, self)

    def __or__(self, other):
        return math.or_(self, other)

    def __ror__(self, other):
        return math.or_(other, self)

    def __xor__(self, other):
        return math.xor(self, other)

    def __rxor__(self, other):
        return math.xor(other, self)

    def __invert__(self):
        return math.invert(self)

    __hash__ = Variable.__hash__

    # -- indexing and shape ----------------------------------------------------------
    def __getitem__(self, index):
        return getitem(self, index)

    def reshape(self, *shape, ndim: int | None = None):
        if len(shape) == 1 and not isinstance(shape[0], int | np.integer):
            shape = shape[0]
        return reshape(self, shape, ndim=ndim)

    def flatten(self, ndim: int = 1):
        return flatten(self, ndim)

    def dimshuffle(self, *pattern):
        if len(pattern) == 1 and isinstance(pattern[0], list | tuple):
            pattern = tuple(pattern[0])
        return dimshuffle(self, pattern)

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], list | tuple):
            axes = tuple(axes[0])
        return transpose(self, axes or None)

    def squeeze(self, axis=None):
        return squeeze(self, axis)

    def astype(self, dtype):
        return cast(self, dtype)

    def copy(self, name: str | None = None):
        out = math.identity(self)
        out.name = name
        return out

    # -- reductions and friends -----------------------------------------------------------
    def sum(self, axis=None, keepdims: bool = False, dtype=None):
        return reduction.sum(self, axis=axis, keepdims=keepdims, dtype=dtype)

    def prod(self, axis=None, keepdims: bool = False, dtype=None):
        return reduction.prod(self, axis=axis, keepdims=keepdims, dtype=dtype)

    def mean(self, axis=None, keepdims: bool = False):
        return reduction.mean(self, axis=axis, keepdims=keepdims)

    def var(self, axis=None, keepdims: bool = False, ddof: int = 0):
        return reduction.var(self, axis=axis, keepdims=keepdims, ddof=ddof)

    def std(self, axis=None, keepdims: bool = False, ddof: int = 0):
        return reduction.std(self, axis=axis, keepdims=keepdims, ddof=ddof)

    def max(self, axis=None, keepdims: bool = False):
        return reduction.max(self, axis=axis, keepdims=keepdims)

    def min(self, axis=None, keepdims: bool = False):
        return reduction.min(self, axis=axis, keepdims=keepdims)

    def all(self, axis=None, keepdims: bool = False):
        return reduction.all(self, axis=axis, keepdims=keepdims)

    def any(self, axis=None, keepdims: bool = False):
        return reduction.any(self, axis=axis, keepdims=keepdims)

    def argmax(self, axis=None, keepdims: bool = False):
        return reduction.argmax(self, axis=axis, keepdims=keepdims)

    def argmin(self, axis=None, keepdims: bool = False):
        return reduction.argmin(self, axis=axis, keepdims=keepdims)

    def dot(self, other):
        return dot(self, other)

    def clip(self, a_min, a_max):
        return math.clip(self, a_min, a_max)

    def round(self):
        return math.round(self)

    def exp(self):
        return math.exp(self)

    def log(self):
        return math.log(self)

    def zeros_like(self, dtype: Any = None):
        """Zeros of this variable's shape and (by default) dtype, as PyTensor's ``x.zeros_like()``."""
        return zeros_like(self, dtype)

    def transfer(self, target: Any) -> Any:
        """This variable moved to ``target`` (seed 002): itself for ``"cpu"``; see :mod:`symlab.tensor.transfer`."""
        return transfer(self, target)


class TensorVariable(_TensorOperators, Variable):
    """A Variable whose values are NumPy arrays (its type is a ``TensorType``)."""


class TensorConstant(_TensorOperators, Constant):
    """A constant array.

    ``weak`` marks a constant made from a Python number: in dtype promotion it
    counts as a Python scalar (NumPy 2 rules), so ``fvector + 1.0`` stays
    float32 while the constant keeps its own dtype.
    """

    def __init__(self, type: Any, data: Any, name: str | None = None, weak: bool = False) -> None:
        super().__init__(type, data, name)
        self.weak = weak

    def __str__(self) -> str:
        if self.name is not None:
            return self.name
        return f"TensorConstant{{{constant_text(self.data)}}}"

    def clone(self, name: str | None = None) -> TensorConstant:
        cp = TensorConstant(self.type, self.data, self.name if name is None else name, weak=self.weak)
        cp.tag.update(self.tag)
        return cp

    def signature(self) -> tuple[Any, ...]:
        """What makes two constants interchangeable: type, weakness and bytes."""
        data = self.data
        return (self.type, self.weak, data.shape, data.tobytes())


def constant_text(data: np.ndarray) -> str:
    """How a constant's value prints: ``2.0``, ``(1,) of 1.0``, ``[1 2 3]``."""
    if data.ndim == 0:
        return str(data[()])
    if data.size > 0 and bool(np.all(data == data.flat[0])):
        return f"{data.shape} of {data.flat[0]}"
    if data.size <= 8:
        return np.array2string(data, separator=" ", max_line_width=10_000).replace("\n", "")
    return f"{data.shape} array of {data.dtype}"


# TensorType (the lowest module of the package) makes its variables and constants of these classes.
register_tensor_type_parts(variable_type=TensorVariable, constant_type=TensorConstant)
