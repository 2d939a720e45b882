"""Global settings of symlab.

>>> import symlab
>>> symlab.config.floatX
'float64'

``floatX`` is the dtype that unprefixed constructors (``matrix``, ``vector``...)
use. Set it from the environment with ``SYMLAB_FLOATX=float32`` or at run time::

    symlab.config.floatX = "float32"
"""

from __future__ import annotations

import os

_FLOAT_DTYPES = ("float16", "float32", "float64")


class Config:
    """A small, validated settings object (one instance: ``symlab.config``)."""

    def __init__(self) -> None:
        self._floatX = "float64"
        self.floatX = os.environ.get("SYMLAB_FLOATX", "float64")

    @property
    def floatX(self) -> str:  # noqa: N802 - the name every Theano user knows
        return self._floatX

    @floatX.setter
    def floatX(self, value: str) -> None:  # noqa: N802
        if value not in _FLOAT_DTYPES:
            raise ValueError(
                f"config.floatX must be one of {_FLOAT_DTYPES}, received {value!r}"
            )
        self._floatX = value

    def __repr__(self) -> str:
        return f"Config(floatX={self.floatX!r})"


config = Config()
