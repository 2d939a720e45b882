"""The base of every rewriter: a stable ``name`` (what ``include``/``exclude`` accept) and where it is written.

Node rewriters, graph rewriters and the rules of the database all derive from
:class:`Rewriter`; :data:`UNTRACKED` stands for changes made directly on a
graph while no rewriter was running:

>>> rule = Rewriter("my_rule")
>>> rule.name, str(rule), UNTRACKED.name
('my_rule', 'my_rule', 'untracked')
"""

from __future__ import annotations

import inspect

from symlab.rewriting.steps import UNKNOWN_LOCATION, SourceLocation

#: Modules whose methods are not a rule's own source (its location is where a subclass defines them).
_BASE_MODULES = frozenset({__name__, "symlab.rewriting.basic"})


class Rewriter:
    """What every rewriter has: a stable ``name`` and the ``location`` of its source."""

    name: str = ""

    def __init__(self, name: str | None = None) -> None:
        if name is not None:
            self.name = name
        elif not self.name:
            self.name = type(self).__name__

    @property
    def location(self) -> SourceLocation:
        """The file and line that define this rule (cached)."""
        loc = self.__dict__.get("_location")
        if loc is None:
            loc = self._find_location()
            self._location = loc
        return loc

    def _find_location(self) -> SourceLocation:
        cls = type(self)
        for attr in ("transform", "apply"):
            fn = getattr(cls, attr, None)
            code = getattr(fn, "__code__", None)
            if code is not None and fn.__module__ not in _BASE_MODULES:
                return SourceLocation(code.co_filename, code.co_firstlineno)
        try:
            return SourceLocation(inspect.getsourcefile(cls) or "<unknown>", inspect.getsourcelines(cls)[1])
        except (OSError, TypeError):
            return UNKNOWN_LOCATION

    def describe(self) -> str:
        """One line saying what the rule does (the reason of its accepted steps)."""
        doc = self.__dict__.get("__doc__")
        if doc is None and type(self).__module__ not in _BASE_MODULES:
            doc = type(self).__doc__
        if doc and doc.strip():
            return doc.strip().splitlines()[0]
        return self.name

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class _Untracked(Rewriter):
    """Changes made directly on the graph while no rewriter was running."""

    name = "untracked"


UNTRACKED = _Untracked()
