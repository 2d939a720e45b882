"""``ScalarType``: the type of one number, what ``Elemwise`` maps over tensors.

>>> from symlab.scalar import ScalarType
>>> float64 = ScalarType("float64")
>>> float64
ScalarType(float64)
>>> float64.filter(3)
np.float64(3.0)
>>> upcast("int32", "float32")
'float64'
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from symlab.graph.type import Type

bool_dtypes = ("bool",)
int_dtypes = ("int8", "int16", "int32", "int64")
uint_dtypes = ("uint8", "uint16", "uint32", "uint64")
float_dtypes = ("float16", "float32", "float64")
complex_dtypes = ("complex64", "complex128")
integer_dtypes = int_dtypes + uint_dtypes
discrete_dtypes = bool_dtypes + integer_dtypes
continuous_dtypes = float_dtypes + complex_dtypes
all_dtypes = discrete_dtypes + continuous_dtypes


def check_dtype(dtype: Any) -> str:
    """The canonical name of ``dtype``, or ``TypeError`` if symlab does not support it."""
    try:
        name = np.dtype(dtype).name
    except TypeError:
        raise TypeError(f"Unknown dtype {dtype!r}; supported dtypes are {', '.join(all_dtypes)}") from None
    if name not in all_dtypes:
        raise TypeError(f"Unsupported dtype {name!r}; supported dtypes are {', '.join(all_dtypes)}")
    return name


def np_type_source(dtype: str) -> str:
    """The source text of NumPy's scalar type of ``dtype``, as generated code writes it (``np.bool_`` for bool).

    >>> np_type_source("float32"), np_type_source("bool")
    ('np.float32', 'np.bool_')
    """
    return "np.bool_" if dtype == "bool" else f"np.{dtype}"


def upcast(*dtypes: Any) -> str:
    """The dtype NumPy 2 gives to an operation on arrays of these dtypes."""
    return np.result_type(*[np.dtype(d) for d in dtypes]).name


def filter_value(
    data: Any, dtype: str, strict: bool, allow_downcast: bool | None, what: str
) -> np.ndarray:
    """Convert ``data`` to a NumPy array of ``dtype`` under the filter rules.

    ``strict``: only an ndarray (or NumPy scalar) of exactly ``dtype``.
    ``allow_downcast``: any conversion. Otherwise: a lossless conversion
    only (a Python float is accepted into the ``floatX`` dtype, as in
    PyTensor). ``what`` names the Type in error messages.
    """
    from symlab.config import config

    if strict:
        if not isinstance(data, np.ndarray | np.generic):
            raise TypeError(f"{what} expected a NumPy array of dtype {dtype} (strict), received {type(data).__name__}")
        if data.dtype.name != dtype:
            raise TypeError(f"{what} expected dtype {dtype} (strict), received dtype {data.dtype}")
        return np.asarray(data)
    if isinstance(data, np.ndarray | np.generic) and data.dtype.name == dtype:
        return np.asarray(data)
    if hasattr(data, "owner") and hasattr(data, "type"):
        raise TypeError(
            f"{what} expected a numeric value, received the symbolic Variable {data}: "
            "symbolic variables cannot be used as values"
        )
    try:
        source = np.asarray(data)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{what} expected an array-like value, received {type(data).__name__}: {err}") from None
    if source.dtype == object or source.dtype.kind in "USVMm":
        raise TypeError(f"{what} expected a numeric value, received {type(data).__name__} {data!r:.60}")
    if allow_downcast:
        return source.astype(dtype)
    if isinstance(data, np.ndarray | np.generic):
        if np.can_cast(source.dtype, dtype, casting="safe"):
            return source.astype(dtype)
        raise TypeError(
            f"{what} cannot store a value of dtype {source.dtype} without risking loss of "
            f"precision; cast it to {dtype} or pass allow_downcast=True "
            "(allow_input_downcast=True when calling symlab.function)"
        )
    if allow_downcast is None and isinstance(data, float) and dtype == config.floatX:
        return source.astype(dtype)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        # a complex value tried for a real type: refused below, so no ComplexWarning about what would be lost
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        converted = source.astype(dtype)
    if source.shape == converted.shape and _same_values(source, converted):
        return converted
    text = str(data)
    if len(text) > 80:
        text = text[:75] + "(...)"
    raise TypeError(
        f"{what} cannot store {text} accurately (of dtype {source.dtype}): it would become "
        f"{converted!s:.80}; convert it to {dtype} or pass allow_downcast=True"
    )


def _same_values(a: np.ndarray, b: np.ndarray) -> bool:
    with np.errstate(all="ignore"):
        if a.dtype.kind in "fc" or b.dtype.kind in "fc":
            return bool(np.array_equal(a, b.astype(a.dtype) if b.dtype.kind not in "fc" else b, equal_nan=True))
        return bool(np.array_equal(a, b))


def default_tolerances(dtype: Any) -> tuple[float, float]:
    """``(rtol, atol)`` for comparing values of ``dtype``: looser for lower precision."""
    kind = np.dtype(dtype)
    if kind.kind not in "fc":
        return 0.0, 0.0
    precision = kind.itemsize // (2 if kind.kind == "c" else 1)
    return {2: (1e-2, 1e-3), 4: (1e-4, 1e-5)}.get(precision, (1e-7, 1e-9))


def arrays_close(a: np.ndarray, b: np.ndarray, rtol: float | None = None, atol: float | None = None) -> bool:
    """True if ``a`` and ``b`` have equal shapes and nearly equal values.

    NaN matches NaN, and infinities match infinities of the same sign.
    Tolerances default to those of the less precise dtype.
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind not in "fc" and b.dtype.kind not in "fc":
        return bool(np.array_equal(a, b))
    rtol_a, atol_a = default_tolerances(a.dtype if a.dtype.kind in "fc" else b.dtype)
    rtol_b, atol_b = default_tolerances(b.dtype if b.dtype.kind in "fc" else a.dtype)
    rtol = max(rtol_a, rtol_b) if rtol is None else rtol
    atol = max(atol_a, atol_b) if atol is None else atol
    with np.errstate(all="ignore"):
        return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))


class ScalarType(Type):
    """The type of a single number of a given ``dtype``."""

    __props__ = ("dtype",)

    def __init__(self, dtype: str) -> None:
        self.dtype = check_dtype(dtype)

    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        value = filter_value(data, self.dtype, strict, allow_downcast, repr(self))
        if value.ndim != 0:
            raise TypeError(f"{self!r} expected a single number, received an array of shape {value.shape}")
        return value[()]

    def values_eq(self, a: Any, b: Any) -> bool:
        return bool(np.array_equal(a, b, equal_nan=False))

    def values_eq_approx(self, a: Any, b: Any) -> bool:
        return arrays_close(np.asarray(a), np.asarray(b))

    def get_size(self, shape_info: Any) -> int:
        return np.dtype(self.dtype).itemsize

    def get_shape_info(self, obj: Any) -> Any:
        return ()

    @property
    def ndim(self) -> int:
        return 0

    def __repr__(self) -> str:
        return f"ScalarType({self.dtype})"


def get_scalar_type(dtype: str) -> ScalarType:
    """The (cached) ScalarType of ``dtype``."""
    cached = _scalar_types.get(dtype) if isinstance(dtype, str) else None  # a name seen before: checked then
    if cached is not None:
        return cached
    dtype = check_dtype(dtype)
    cached = _scalar_types.get(dtype)
    if cached is None:
        cached = _scalar_types[dtype] = ScalarType(dtype)
    return cached


_scalar_types: dict[str, ScalarType] = {}
