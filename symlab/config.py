"""Global settings of symlab.

>>> import symlab
>>> symlab.config.floatX
'float64'

``floatX`` is the dtype that unprefixed constructors (``matrix``, ``vector``...)
use. Set it from the environment with ``SYMLAB_FLOATX=float32`` or at run time::

    symlab.config.floatX = "float32"

``background_compile`` (default True): tiered compilation. With the Numba
backend, ``symlab.function`` returns as soon as the graph is rewritten; Numba
compiles (or loads from its disk cache) on a worker thread, and the calls made
before the machine code is ready run the same optimized graph on the NumPy
backend, with the same results (see
:class:`~symlab.compile.numba.linker.NumbaRunner`). ``f.wait()`` blocks until
the machine code is ready; ``f.tier`` and ``repr(f)`` say which tier serves the
calls. Turn it off, so that ``symlab.function`` returns with the machine code
ready, with ``SYMLAB_BACKGROUND_COMPILE=0`` in the environment or at run time::

    symlab.config.background_compile = False

>>> type(symlab.config.background_compile)  # True unless turned off (symlab's test suite turns it off)
<class 'bool'>
"""

from __future__ import annotations

import os

_FLOAT_DTYPES = ("float16", "float32", "float64")


class Config:
    """A small, validated settings object (one instance: ``symlab.config``)."""

    def __init__(self) -> None:
        self._floatX = "float64"
        self.floatX = os.environ.get("SYMLAB_FLOATX", "float64")
        self._background_compile = True
        self.background_compile = _env_flag("SYMLAB_BACKGROUND_COMPILE", default=True)

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

    @property
    def background_compile(self) -> bool:
        return self._background_compile

    @background_compile.setter
    def background_compile(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"config.background_compile must be True or False, received {value!r}")
        self._background_compile = value

    def __repr__(self) -> str:
        return f"Config(floatX={self.floatX!r}, background_compile={self.background_compile!r})"


def _env_flag(name: str, default: bool = False) -> bool:
    """The boolean environment variable ``name``: ``0``, ``false``, ``no`` or ``off`` is False; unset: ``default``."""
    value = os.environ.get(name, "").strip().lower()
    if value == "":
        return default
    if value in ("0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    raise ValueError(f"{name} must be 1 or 0 (true/false, yes/no, on/off), received {os.environ[name]!r}")


config = Config()
