"""Modes: which rewrites run, and which backend (linker) runs the result.

A :class:`Mode` is a rewrite query (``include``/``exclude`` words: rule
names, tags or phases of :mod:`symlab.rewriting.db`, or PyTensor's names of
the same rules, :mod:`symlab.rewriting.aliases`) and a linker name.
The predefined modes, by name:

``"NUMBA"`` (the default)
    ``fast_run`` rewrites, then the Numba backend
    (:class:`~symlab.compile.numba.linker.NumbaLinker`; Numba is imported on
    the first compile).
``"FAST_COMPILE"``
    the few ``fast_compile`` rewrites (merge, constant folding, cheap canonicalizations, the
    ``logistic`` stabilizations), NumPy backend.
``"NUMPY"``
    ``fast_run`` rewrites, NumPy backend.
``"DEBUG"``
    ``fast_run`` rewrites, run with every check of
    :mod:`symlab.compile.debugmode`.
``"NanGuard"``
    ``fast_run`` rewrites, stop at the first NaN or inf
    (:mod:`symlab.compile.nanguard`).

>>> get_mode("FAST_COMPILE")
Mode(name='FAST_COMPILE', linker='numpy', include=('fast_compile',), exclude=())
>>> get_mode("NUMPY").excluding("constant_folding").exclude
('constant_folding',)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from symlab.compile.debugmode import DebugLinker
from symlab.compile.linker_numpy import NumpyLinker
from symlab.compile.nanguard import NanGuardLinker
from symlab.compile.numba.linker import NumbaLinker
from symlab.rewriting.db import PHASES, QUERY_TAGS, default_db, query_words

#: Linker classes by name; a backend registers itself here with :func:`register_linker`.
LINKERS: dict[str, type] = {"numpy": NumpyLinker, "numba": NumbaLinker}


def register_linker(name: str, cls: type) -> None:
    """Make ``Mode(linker=name)`` build its runners with ``cls()``."""
    LINKERS[name] = cls


class Mode:
    """A rewrite query and a linker.

    ``include``/``exclude`` select the rewrites (see
    :meth:`symlab.rewriting.RewriteDatabase.query`); ``linker`` names the
    backend (``"numpy"``, ``"numba"``).
    """

    def __init__(
        self,
        linker: str = "numba",
        include: Iterable[str] = ("fast_run",),
        exclude: Iterable[str] = (),
        name: str | None = None,
    ) -> None:
        if not isinstance(linker, str):
            raise TypeError(f"Mode: linker must be a name (str), received {type(linker).__name__}")
        self.linker = linker
        self.include = _rewrite_words(include, "Mode include")
        self.exclude = _rewrite_words(exclude, "Mode exclude")
        self.name = name

    def _replace(self, **changes: Any) -> Mode:
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.__dict__.update(changes)
        return new

    def including(self, *words: str) -> Mode:
        """A copy that also runs the rewrites selected by ``words`` (rule names, tags, or PyTensor's names).

        >>> get_mode("FAST_COMPILE").including("local_log1p").include
        ('fast_compile', 'log1p', 'log1p_swapped')
        """
        words = _rewrite_words(words, "Mode.including")
        return self._replace(include=self.include + tuple(w for w in words if w not in self.include), name=None)

    def excluding(self, *words: str) -> Mode:
        """A copy that does not run the rewrites selected by ``words`` (rule names, tags, or PyTensor's names).

        A PyTensor name of a rule symlab has under another name stands for symlab's rule; a word that
        names nothing raises ``ValueError`` (with the closest known words):

        >>> get_mode("NUMPY").excluding("local_elemwise_fusion", "inplace").exclude
        ('elemwise_fusion', 'inplace')
        >>> get_mode("NUMPY").excluding("constant_foldng")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: Mode.excluding: ['constant_foldng'] name no rule or tag ...; closest: 'constant_folding'...
        """
        words = _rewrite_words(words, "Mode.excluding")
        return self._replace(exclude=self.exclude + tuple(w for w in words if w not in self.exclude), name=None)

    def make_linker(self) -> Any:
        """The linker object that builds this mode's runners."""
        cls = LINKERS.get(self.linker)
        if cls is None:
            raise ValueError(f"Mode: unknown linker {self.linker!r}; known linkers: {sorted(LINKERS)}")
        return cls()

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash((type(self), self.linker, self.include, self.exclude))

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(name={self.name!r}, linker={self.linker!r}, include={self.include!r}, "
            f"exclude={self.exclude!r})"
        )


def _rewrite_words(words: Any, what: str) -> tuple[str, ...]:
    """``words`` checked and with PyTensor's names replaced by symlab's (see :meth:`RewriteDatabase.resolve`).

    Phases and query tags alone (the predefined modes) are taken as they are, without loading the rules.
    """
    words = query_words(words, what)
    if all(w in PHASES or w in QUERY_TAGS for w in words):
        return words
    return default_db.resolve(words, what)


class DebugMode(Mode):
    """``fast_run`` rewrites, run by :class:`~symlab.compile.debugmode.DebugRunner` with its checks.

    Each check can be turned off: ``check_perform_twice``, ``check_infer_shape``,
    ``check_views``, ``check_rewrites``, ``check_numba`` (each node's Numba kernel
    against its ``perform``).
    """

    def __init__(
        self,
        include: Iterable[str] = ("fast_run",),
        exclude: Iterable[str] = (),
        name: str | None = None,
        check_perform_twice: bool = True,
        check_infer_shape: bool = True,
        check_views: bool = True,
        check_rewrites: bool = True,
        check_numba: bool = True,
    ) -> None:
        super().__init__("debug", include, exclude, name)
        self.checks = {
            "check_numba": check_numba,
            "check_perform_twice": check_perform_twice,
            "check_infer_shape": check_infer_shape,
            "check_views": check_views,
            "check_rewrites": check_rewrites,
        }

    def make_linker(self) -> DebugLinker:
        return DebugLinker(**self.checks)


class NanGuardMode(Mode):
    """``fast_run`` rewrites, run by :class:`~symlab.compile.nanguard.NanGuardRunner`."""

    def __init__(
        self,
        nan_is_error: bool = True,
        inf_is_error: bool = True,
        big_is_error: float | None = None,
        include: Iterable[str] = ("fast_run",),
        exclude: Iterable[str] = (),
        name: str | None = None,
    ) -> None:
        super().__init__("nanguard", include, exclude, name)
        self.settings = {"nan_is_error": nan_is_error, "inf_is_error": inf_is_error, "big_is_error": big_is_error}

    def make_linker(self) -> NanGuardLinker:
        return NanGuardLinker(**self.settings)


#: The predefined modes, by name.
PREDEFINED: dict[str, Mode] = {
    "NUMBA": Mode("numba", ("fast_run",), name="NUMBA"),
    "FAST_COMPILE": Mode("numpy", ("fast_compile",), name="FAST_COMPILE"),
    "NUMPY": Mode("numpy", ("fast_run",), name="NUMPY"),
    "DEBUG": DebugMode(name="DEBUG"),
    "NanGuard": NanGuardMode(name="NanGuard"),
}
_ALIASES = {"FAST_RUN": "NUMBA", "DebugMode": "DEBUG", "DEBUG_MODE": "DEBUG", "NanGuardMode": "NanGuard"}

#: The default of ``symlab.config.mode``, the mode used when ``symlab.function`` is given ``mode=None``.
DEFAULT_MODE = "NUMBA"


def get_mode(mode: str | Mode | None = None) -> Mode:
    """The :class:`Mode` for ``mode``: a Mode, a predefined name, or ``None`` (``symlab.config.mode``).

    >>> get_mode().name, get_mode("NUMBA").linker
    ('NUMBA', 'numba')
    >>> get_mode("FAST")
    Traceback (most recent call last):
    ...
    ValueError: unknown mode 'FAST'; the modes are ['NUMBA', 'FAST_COMPILE', 'NUMPY', 'DEBUG', 'NanGuard'] (or a Mode object)
    """
    if mode is None:
        from symlab.config import config

        mode = config.mode
    if isinstance(mode, Mode):
        return mode
    if isinstance(mode, str):
        key = _ALIASES.get(mode, mode)
        if key in PREDEFINED:
            return PREDEFINED[key]
        raise ValueError(f"unknown mode {mode!r}; the modes are {list(PREDEFINED)} (or a Mode object)")
    raise TypeError(f"mode must be a Mode, a mode name or None, received {type(mode).__name__}")


__all__ = [
    "DEFAULT_MODE",
    "LINKERS",
    "PREDEFINED",
    "DebugMode",
    "Mode",
    "NanGuardMode",
    "NumbaLinker",
    "get_mode",
    "register_linker",
]
