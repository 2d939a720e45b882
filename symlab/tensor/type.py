"""``TensorType``: the type of NumPy arrays of one dtype, rank and (partial) shape.

>>> from symlab.tensor.type import TensorType
>>> v1 = TensorType("float64", (2, None))()
>>> v1.type
TensorType(float64, (2, ?))
>>> v2 = TensorType("float64", (2, 1))()
>>> v1.type.in_same_class(v2.type), v1.type.is_super(v2.type)
(False, True)
>>> v1.type.filter_variable(v2) is v2
True
>>> v3 = v2.type.filter_variable(v1)
>>> v3, v3.type
(SpecifyShape.0, TensorType(float64, (2, 1)))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from symlab.config import config
from symlab.graph.basic import Constant, Variable
from symlab.graph.type import Type
from symlab.scalar.type import arrays_close, check_dtype, filter_value, get_scalar_type

StaticShape = tuple[int | None, ...]


def normalize_shape(shape: Sequence[Any], what: str = "shape") -> StaticShape:
    """Check a static shape: a sequence of non-negative ints or ``None``."""
    if isinstance(shape, int | np.integer):
        shape = (shape,)
    try:
        entries = tuple(shape)
    except TypeError:
        raise TypeError(f"{what} must be a tuple of ints or None, received {shape!r}") from None
    out = []
    for s in entries:
        if s is None:
            out.append(None)
        elif isinstance(s, bool | np.bool_):
            raise TypeError(
                f"{what} entries are sizes (int or None), received the bool {s!r}; "
                "use broadcastable=... for a pattern of True/False"
            )
        elif isinstance(s, int | np.integer) and s >= 0:
            out.append(int(s))
        else:
            raise TypeError(f"{what} entries must be non-negative ints or None, received {s!r} in {shape!r}")
    return tuple(out)


class TensorType(Type):
    """Arrays of one ``dtype`` and rank, with a static size (or ``None``) per dimension.

    ``TensorType(dtype, shape)`` and the older
    ``TensorType(dtype, broadcastable=(True, False))`` both work: a
    broadcastable dimension is a dimension of static size 1.
    """

    __props__ = ("dtype", "shape")
    # This is the lowest module of the tensor package: the classes of its variables and constants and the two
    # functions its conversions call are defined above it, and registered with register_tensor_type_parts.
    variable_type: type[Variable]
    constant_type: type[Constant]
    _as_tensor_variable: Callable[..., Variable]
    _specify_shape: Callable[[Variable, tuple[int | None, ...]], Variable]

    def __init__(
        self,
        dtype: Any,
        shape: Sequence[int | None] | None = None,
        broadcastable: Sequence[bool] | None = None,
    ) -> None:
        if dtype == "floatX":
            dtype = config.floatX
        self.dtype = check_dtype(dtype)
        if shape is not None and broadcastable is not None:
            raise TypeError("TensorType: give shape or broadcastable, not both")
        if broadcastable is not None:
            if isinstance(broadcastable, bool) or not all(isinstance(b, bool | np.bool_) for b in broadcastable):
                raise TypeError(f"TensorType: broadcastable must be a tuple of bools, received {broadcastable!r}")
            shape = tuple(1 if b else None for b in broadcastable)
        self.shape: StaticShape = normalize_shape(() if shape is None else shape)
        self._np_dtype = np.dtype(self.dtype)
        self._static_sizes = tuple((d, s) for d, s in enumerate(self.shape) if s is not None)

    # -- derived attributes ---------------------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def broadcastable(self) -> tuple[bool, ...]:
        """``True`` for each dimension of static size 1."""
        return tuple(s == 1 for s in self.shape)

    @property
    def numpy_dtype(self) -> np.dtype:
        return self._np_dtype

    @property
    def scalar_type(self):
        """The ScalarType of the elements."""
        return get_scalar_type(self.dtype)

    def clone(self, dtype: Any = None, shape: Sequence[int | None] | None = None, **kwargs: Any) -> TensorType:
        if "broadcastable" in kwargs:
            bc = kwargs.pop("broadcastable")
            shape = tuple(1 if b else None for b in bc)
        if kwargs:
            raise TypeError(f"TensorType.clone: unknown arguments {sorted(kwargs)}")
        return TensorType(self.dtype if dtype is None else dtype, self.shape if shape is None else shape)

    # -- values -------------------------------------------------------------------
    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> np.ndarray:
        """``data`` as an ndarray of this type, or ``TypeError`` saying what differs.

        >>> TensorType("float64", (None,)).filter([1, 2])
        array([1., 2.])
        >>> TensorType("int32", (None,)).filter([1.5])
        Traceback (most recent call last):
        ...
        TypeError: TensorType(int32, (?,)) cannot store [1.5] accurately (of dtype float64): it would become [1]; convert it to int32 or pass allow_downcast=True
        """
        if type(data) is np.ndarray and data.dtype is self._np_dtype and data.ndim == len(self.shape):
            # The common case of a call: already an array of this dtype (checked cheaply).
            shape = data.shape
            for d, size in self._static_sizes:
                if shape[d] != size:
                    break
            else:
                return data
        value = filter_value(data, self.dtype, strict, allow_downcast, repr(self))
        if value.ndim != self.ndim:
            raise TypeError(
                f"{self!r} expected {self.ndim} dimension{'s' if self.ndim != 1 else ''}, "
                f"received {value.ndim} (an array of shape {value.shape})"
            )
        for dim, (want, got) in enumerate(zip(self.shape, value.shape)):
            if want is not None and want != got:
                raise TypeError(
                    f"{self!r} expected static shape {_shape_str(self.shape)}, received an array of "
                    f"shape {value.shape} (dimension {dim} is {got}, not {want})"
                )
        return value

    def values_eq(self, a: Any, b: Any) -> bool:
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b))

    def values_eq_approx(self, a: Any, b: Any, rtol: float | None = None, atol: float | None = None) -> bool:
        """Nearly equal arrays: NaN equals NaN, inf equals inf, tolerance by dtype."""
        return arrays_close(a, b, rtol, atol)

    def may_share_memory(self, a: Any, b: Any) -> bool:
        if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
            return bool(np.may_share_memory(a, b))
        return a is b

    def get_shape_info(self, obj: np.ndarray) -> tuple[int, ...]:
        return obj.shape

    def get_size(self, shape_info: tuple[int, ...]) -> int:
        return int(np.prod(shape_info, dtype=np.int64)) * self.numpy_dtype.itemsize

    def make_constant(self, value: Any, name: str | None = None, weak: bool = False) -> Constant:
        """A constant of this type holding ``value`` (``weak``: it stands for a Python number)."""
        return self.constant_type(self, value, name, weak=weak)

    def value_zeros(self, shape: tuple[int, ...]) -> np.ndarray:
        return np.zeros(shape, dtype=self.dtype)

    # -- relations between types -------------------------------------------------
    def in_same_class(self, otype: Type) -> bool:
        """Same dtype and the same broadcastable (size-1) dimensions."""
        return (
            isinstance(otype, TensorType)
            and otype.dtype == self.dtype
            and otype.broadcastable == self.broadcastable
        )

    def is_super(self, otype: Type) -> bool:
        """True if every array of ``otype`` is also an array of ``self``."""
        return (
            isinstance(otype, TensorType)
            and otype.dtype == self.dtype
            and otype.ndim == self.ndim
            and all(s is None or s == o for s, o in zip(self.shape, otype.shape))
        )

    def convert_variable(self, var: Variable) -> Variable | None:
        """``var`` if it fits; ``specify_shape(var, ...)`` if it can be narrowed; else None."""
        if self.is_super(var.type):
            return var
        other = var.type
        if (
            isinstance(other, TensorType)
            and other.dtype == self.dtype
            and other.ndim == self.ndim
            and all(s is None or o is None or s == o for s, o in zip(self.shape, other.shape))
        ):
            merged = tuple(s if s is not None else o for s, o in zip(self.shape, other.shape))
            return self._specify_shape(var, merged)
        return None

    def filter_variable(self, other: Any, allow_convert: bool = True) -> Variable:
        """``other`` as a Variable that fits this type (a constant for a value).

        A variable of a wider type is narrowed with ``SpecifyShape``; one that
        can never fit (another dtype, rank, or a different static size) raises
        ``TypeError`` naming both types.
        """
        if not isinstance(other, Variable):
            other = self._as_tensor_variable(other, dtype=self.dtype, ndim=self.ndim)
        return super().filter_variable(other, allow_convert)

    # -- printing ------------------------------------------------------------------
    def __repr__(self) -> str:
        return f"TensorType({self.dtype}, {_shape_str(self.shape)})"


def register_tensor_type_parts(
    *,
    variable_type: type[Variable] | None = None,
    constant_type: type[Constant] | None = None,
    as_tensor_variable: Callable[..., Variable] | None = None,
    specify_shape: Callable[[Variable, tuple[int | None, ...]], Variable] | None = None,
) -> None:
    """Give :class:`TensorType` what the modules above it define; each calls this when it is imported.

    - ``variable_type``, ``constant_type``: the classes of its variables and constants,
      ``TensorVariable`` and ``TensorConstant`` (:mod:`symlab.tensor.variable`, the top of the package:
      their operators call every op);
    - ``as_tensor_variable`` (:mod:`symlab.tensor.conversion`): how :meth:`TensorType.filter_variable`
      turns a value into a variable;
    - ``specify_shape`` (:mod:`symlab.tensor.shape_of`): how :meth:`TensorType.convert_variable` narrows a
      variable to a static shape.

    Importing :mod:`symlab.tensor` (which ``import symlab`` does) imports them all.
    """
    if variable_type is not None:
        TensorType.variable_type = variable_type
    if constant_type is not None:
        TensorType.constant_type = constant_type
    if as_tensor_variable is not None:
        TensorType._as_tensor_variable = staticmethod(as_tensor_variable)
    if specify_shape is not None:
        TensorType._specify_shape = staticmethod(specify_shape)


def _shape_str(shape: StaticShape) -> str:
    parts = ["?" if s is None else str(s) for s in shape]
    if len(parts) == 1:
        return f"({parts[0]},)"
    return f"({', '.join(parts)})"


#: Theano's oldest name of :class:`TensorType`: seed 004's ``Tensor(dtype='float64', broadcastable=(False,
#: False))``. The same class; ``broadcastable`` still works, as it does for ``TensorType``.
Tensor = TensorType
