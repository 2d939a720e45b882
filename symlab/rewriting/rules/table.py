"""Rule tables: rows of ``(name, pattern, replacement[, constraint])`` made into registered rules.

Each row becomes a :class:`TableRule` (a
:class:`~symlab.rewriting.patterns.PatternNodeRewriter` that also refuses a
replacement whose type does not fit the replaced output) registered in
:data:`~symlab.rewriting.default_db` under the row's name. The rule's
``location`` is the row's line, so the trace points at the table entry:

>>> import symlab.tensor as T
>>> from symlab.rewriting import RewriteDatabase
>>> db = RewriteDatabase()
>>> ROWS = [("demo_add_zero", (T.add, "x", 0), "x")]
>>> register_table(ROWS, "canonicalize", db=db)
['demo_add_zero']
>>> rule = db["demo_add_zero"].rewriter
>>> rule.reason
'add(x, 0) -> x'

``fits(new, old)`` is the type check: a rule like ``x * 1 -> x`` must not
apply when ``x`` broadcasts (``x`` of shape ``(1, n)`` times ones of shape
``(m, n)`` is not ``x``), nor when the dtypes differ:

>>> row, col = T.tensor("float64", shape=(1, None)), T.dmatrix()
>>> fits(row, (row * col)), fits(col, col * 1.0), fits(T.ivector(), T.ivector() * 1.0)
(False, True, False)
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from symlab.graph.basic import Apply, Variable
from symlab.graph.fg import FunctionGraph
from symlab.rewriting.db import RewriteDatabase, default_db
from symlab.rewriting.patterns import PatternNodeRewriter
from symlab.rewriting.steps import SourceLocation
from symlab.tensor.type import TensorType

#: A row: (name, pattern, replacement) or (name, pattern, replacement, constraint(fgraph, node, bindings)).
Row = tuple[Any, ...]


def fits(new: Variable, old: Variable) -> bool:
    """True if ``new`` can stand for ``old``: same dtype and rank, and it broadcasts no more than ``old``.

    Static sizes ``new`` leaves unknown are fine (the engine narrows them
    with ``SpecifyShape``); a size 1 where ``old`` is not 1 is not.
    """
    a, b = new.type, old.type
    if not (isinstance(a, TensorType) and isinstance(b, TensorType)):
        return a == b
    if a.dtype != b.dtype or a.ndim != b.ndim:
        return False
    return all(n is None or o is None and n != 1 or n == o for n, o in zip(a.shape, b.shape))


class TableRule(PatternNodeRewriter):
    """A pattern rule that applies only when its replacement :func:`fits` the replaced output.

    Inner nodes of the pattern may have other clients (``log(sigmoid(x))``
    is stabilised even when ``sigmoid(x)`` is used elsewhere): the rows'
    replacements are single cheap nodes or one of the pattern's variables.
    """

    def __init__(self, *args: Any, allow_multiple_clients: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, allow_multiple_clients=allow_multiple_clients, **kwargs)

    def transform(self, fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
        result = super().transform(fgraph, node)
        if not result or not fits(result[0], node.outputs[0]):
            return None
        return result


def register_table(
    rows: Sequence[Row],
    *tags: str,
    cheap: Iterable[str] = (),
    db: RewriteDatabase | None = None,
) -> list[str]:
    """Register one :class:`TableRule` per row with ``tags``; rows named in ``cheap`` also get ``fast_compile``."""
    db = default_db if db is None else db
    cheap = set(cheap)
    caller = sys._getframe(1)
    lines = _row_lines(caller.f_code.co_filename)
    names = []
    for row in rows:
        name, pattern, replacement, *rest = row
        constraint: Callable[..., bool] | None = rest[0] if rest else None
        rule = TableRule(pattern, replacement, name=name, constraint=constraint)
        rule._location = SourceLocation(caller.f_code.co_filename, lines.get(name, caller.f_lineno))
        extra = ("fast_compile",) if name in cheap else ()
        db.register(rule, *tags, *extra, name=name)
        names.append(name)
    unknown = cheap - set(names)
    if unknown:
        raise ValueError(f"register_table: cheap names {sorted(unknown)} are not rows of the table")
    return names


_ROW_START = re.compile(r"^\s*\(\s*\"(\w+)\"\s*,")


def _row_lines(filename: str) -> dict[str, int]:
    """The line of each row ``("name", ...`` in a source file (first occurrence)."""
    lines: dict[str, int] = {}
    try:
        with open(filename, encoding="utf-8") as f:
            for k, text in enumerate(f, start=1):
                m = _ROW_START.match(text)
                if m:
                    lines.setdefault(m.group(1), k)
    except OSError:
        pass
    return lines


__all__ = ["Row", "TableRule", "fits", "register_table"]
