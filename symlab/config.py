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

``mode`` (default ``"NUMBA"``, or ``SYMLAB_MODE`` from the environment): the mode
``symlab.function`` uses when it is given none, a name of
:data:`symlab.compile.modes.PREDEFINED` (``"NUMBA"``, ``"NUMPY"``,
``"FAST_COMPILE"``...) or a :class:`~symlab.compile.Mode`.

``optimizer_verbose`` (default False): ``symlab.function`` prints each replacement its rewrites make, one
``rewriting: rewrite <rule> replaces <old> of <node> with <new> of <node>`` line each, as PyTensor's flag does.

``threads`` (default ``"auto"``, or ``SYMLAB_THREADS`` from the environment): how many threads the
parallel work of a compiled function uses (Numba's parallel kernels, the register machine, BLAS):
``"auto"`` uses every core while the machine is otherwise idle and leaves the cores other processes
keep busy to them; a number fixes the count. ``symlab.function(..., threads=n)`` sets it for one
function. See :mod:`symlab.compile.threads`.

>>> symlab.config.threads
'auto'

``config.change_flags(name=value, ...)`` sets flags for a ``with`` block (or the
calls of a function it decorates) and restores them afterwards, as PyTensor's does:

>>> with symlab.config.change_flags(floatX="float32", mode="NUMPY"):
...     symlab.config.floatX, symlab.config.mode
('float32', 'NUMPY')
>>> symlab.config.floatX
'float64'
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

_FLOAT_DTYPES = ("float16", "float32", "float64")


class Config:
    """A small, validated settings object (one instance: ``symlab.config``)."""

    def __init__(self) -> None:
        self._floatX = "float64"
        self.floatX = os.environ.get("SYMLAB_FLOATX", "float64")
        self._background_compile = True
        self.background_compile = _env_flag("SYMLAB_BACKGROUND_COMPILE", default=True)
        self._mode: Any = "NUMBA"
        self.mode = os.environ.get("SYMLAB_MODE", "NUMBA")
        self._optimizer_verbose = False
        self._threads: int | str = "auto"
        self._threads = check_threads(os.environ.get("SYMLAB_THREADS", "auto"), "SYMLAB_THREADS")

    #: The settings :meth:`change_flags` can change.
    FLAGS = ("floatX", "background_compile", "mode", "optimizer_verbose", "threads")

    @property
    def mode(self) -> Any:
        """The default mode of ``symlab.function``: a mode name or a ``Mode`` object."""
        return self._mode

    @mode.setter
    def mode(self, value: Any) -> None:
        if not isinstance(value, str) and not hasattr(value, "make_linker"):
            raise TypeError(f"config.mode must be a mode name (str) or a Mode, received {value!r}")
        self._mode = value

    def change_flags(self, **flags: Any) -> _ChangeFlags:
        """Set ``flags`` inside a ``with`` block, or during each call of a decorated function.

        The previous values come back at the end, also when the block raises. An unknown
        flag or a bad value is refused before anything changes.

        >>> import symlab
        >>> @symlab.config.change_flags(floatX="float32")
        ... def vector_dtype():
        ...     return symlab.tensor.vector().dtype
        >>> vector_dtype(), symlab.tensor.vector().dtype
        ('float32', 'float64')
        >>> symlab.config.change_flags(optimizer="None")
        Traceback (most recent call last):
        ...
        AttributeError: config.change_flags: unknown flag 'optimizer'; the flags are ('floatX', 'background_compile', 'mode', 'optimizer_verbose', 'threads')
        """
        for name in flags:
            if name not in self.FLAGS:
                raise AttributeError(f"config.change_flags: unknown flag {name!r}; the flags are {self.FLAGS}")
        probe = Config.__new__(Config)
        probe.__dict__.update(self.__dict__)
        for name, value in flags.items():
            setattr(probe, name, value)
        return _ChangeFlags(self, flags)

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

    @property
    def optimizer_verbose(self) -> bool:
        """Whether ``symlab.function`` prints each replacement its rewrites make."""
        return self._optimizer_verbose

    @optimizer_verbose.setter
    def optimizer_verbose(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"config.optimizer_verbose must be True or False, received {value!r}")
        self._optimizer_verbose = value

    @property
    def threads(self) -> int | str:
        """Threads of a compiled function's parallel work: ``"auto"`` (follows the machine's load) or a number."""
        return self._threads

    @threads.setter
    def threads(self, value: int | str) -> None:
        self._threads = check_threads(value, "config.threads")

    def __repr__(self) -> str:
        return (
            f"Config(floatX={self.floatX!r}, background_compile={self.background_compile!r}, mode={self.mode!r}, "
            f"threads={self.threads!r})"
        )


class _ChangeFlags(contextlib.ContextDecorator):
    """What :meth:`Config.change_flags` returns: a context manager that is also a decorator."""

    def __init__(self, config: Config, flags: dict[str, Any]) -> None:
        self.config = config
        self.flags = flags
        self._saved: list[dict[str, Any]] = []

    def __enter__(self) -> Config:
        self._saved.append({name: getattr(self.config, name) for name in self.flags})
        for name, value in self.flags.items():
            setattr(self.config, name, value)
        return self.config

    def __exit__(self, *exc_info: Any) -> None:
        for name, value in self._saved.pop().items():
            setattr(self.config, name, value)


def max_threads() -> int:
    """The most threads a parallel call can use: ``NUMBA_NUM_THREADS`` if set, else the CPUs this process may use.

    This is how Numba counts its thread pool, found without importing Numba.

    >>> max_threads() >= 1
    True
    """
    value = os.environ.get("NUMBA_NUM_THREADS", "").strip()
    if value.isdigit() and int(value) > 0:
        return int(value)
    return cpus_allowed()


def cpus_allowed() -> int:
    """The CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


def check_threads(value: Any, where: str) -> int | str:
    """``value`` if it is a valid thread setting (``"auto"`` or an int from 1 to :func:`max_threads`), else an error.

    ``where`` names the setting in the message (``"config.threads"``, ``"symlab.function(threads=)"``).

    >>> check_threads("auto", "config.threads"), check_threads(1, "config.threads"), check_threads("1", "SYMLAB_THREADS")
    ('auto', 1, 1)
    >>> check_threads(0, "config.threads")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: config.threads must be 'auto' or a number of threads from 1 to ..., received 0
    """
    if isinstance(value, str) and value.strip().lower() == "auto":
        return "auto"
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    top = max_threads()
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
        raise ValueError(f"{where} must be 'auto' or a number of threads from 1 to {top}, received {value!r}")
    return value


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
