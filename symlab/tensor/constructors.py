"""Ready-made tensor types and the functions that make variables of them.

Prefixed names are ``TensorType`` instances, called to make a variable; the
prefix is the dtype: ``b`` int8, ``w`` int16, ``i`` int32, ``l`` int64,
``f`` float32, ``d`` float64, ``c`` complex64, ``z`` complex128.
Unprefixed names are functions that use ``symlab.config.floatX``.

>>> import symlab.tensor as st
>>> st.dmatrix
TensorType(float64, (?, ?))
>>> st.irow("r").type
TensorType(int32, (1, ?))
>>> [v.name for v in st.dvectors("x", "y")]
['x', 'y']
>>> st.tensor("float32", shape=(2, None), name="t").type
TensorType(float32, (2, ?))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from symlab.config import config
from symlab.tensor.type import TensorType
from symlab.tensor.variable import TensorVariable

PREFIXES = {
    "b": "int8",
    "w": "int16",
    "i": "int32",
    "l": "int64",
    "f": "float32",
    "d": "float64",
    "c": "complex64",
    "z": "complex128",
}

#: Static shapes of the named ranks.
KINDS: dict[str, tuple[int | None, ...]] = {
    "scalar": (),
    "vector": (None,),
    "row": (1, None),
    "col": (None, 1),
    "matrix": (None, None),
    "tensor3": (None, None, None),
    "tensor4": (None, None, None, None),
}
PLURALS = {
    "scalar": "scalars",
    "vector": "vectors",
    "row": "rows",
    "col": "cols",
    "matrix": "matrices",
    "tensor3": "tensor3s",
    "tensor4": "tensor4s",
}


def tensor(
    dtype: Any = None,
    shape: Sequence[int | None] | None = None,
    name: str | None = None,
    broadcastable: Sequence[bool] | None = None,
) -> TensorVariable:
    """A new tensor variable: ``tensor("float32", shape=(2, None), name="x")``."""
    if shape is None and broadcastable is None:
        raise TypeError("tensor: give the static shape, e.g. shape=(None, 3) (None is an unknown size)")
    return TensorType(config.floatX if dtype is None else dtype, shape, broadcastable)(name)


def _make_kind(kind: str, static: tuple[int | None, ...]):
    def constructor(name: str | None = None, dtype: Any = None, shape: Sequence[int | None] | None = None):
        if shape is not None and len(tuple(shape)) != len(static):
            raise ValueError(f"{kind}: shape must have {len(static)} entries, received {shape!r}")
        return TensorType(config.floatX if dtype is None else dtype, static if shape is None else shape)(name)

    constructor.__name__ = kind
    constructor.__doc__ = f"A {kind} variable of ``dtype`` (default ``config.floatX``)."
    return constructor


def _make_plural(plural: str, make: Any):
    def constructor(*names: str, dtype: Any = None):
        if len(names) == 1 and isinstance(names[0], int):
            return [make(None, dtype) for _ in range(names[0])]
        return [make(n, dtype) for n in names]

    constructor.__name__ = plural
    constructor.__doc__ = f"Several {plural}: ``{plural}('a', 'b')`` or ``{plural}(3)``."
    return constructor


def _make_prefixed_plural(plural: str, type_: TensorType):
    def constructor(*names: str):
        if len(names) == 1 and isinstance(names[0], int):
            return [type_() for _ in range(names[0])]
        return [type_(n) for n in names]

    constructor.__name__ = plural
    constructor.__doc__ = f"Several variables of type {type_!r}."
    return constructor


_namespace: dict[str, Any] = {}
for _kind, _static in KINDS.items():
    _namespace[_kind] = _make_kind(_kind, _static)
    _namespace[PLURALS[_kind]] = _make_plural(PLURALS[_kind], _namespace[_kind])
    for _prefix, _dtype in PREFIXES.items():
        _type = TensorType(_dtype, _static)
        _namespace[_prefix + _kind] = _type
        _namespace[_prefix + PLURALS[_kind]] = _make_prefixed_plural(_prefix + PLURALS[_kind], _type)

globals().update(_namespace)

__all__ = ["PREFIXES", "tensor", *_namespace]
