"""Finding nodes and variables of a graph by what a reader types: a name, an op, a type or a key.

The graph view's search box and the clients inspector's share this mechanism. A :class:`NodeSearch` reads
what each object of a :class:`~symlab.notebook.keys.KeyIndex` is searched by once (its key, its name, its op
or its type in words), on the first search; matches come in the order: the exact key, exact names, then
the graph's order (inputs first). :meth:`NodeSearch.match_rows` writes them as the browser lists them.

>>> import symlab.tensor as st
>>> from symlab.notebook.keys import KeyIndex
>>> from symlab.printing.folding import toposort
>>> from symlab.printing.subject import subject_of
>>> x = st.dvector("x")
>>> y = st.exp(x) * 2
>>> order, leaves = toposort([y])
>>> search = NodeSearch(KeyIndex(subject_of(y), order, leaves))
>>> [str(obj.op) for obj in search.find("exp", names_only=False)]
['Elemwise{exp,no_inplace}']
>>> search.match_rows(search.find("x", names_only=True), None)
[{'key': 'v0', 'text': 'x (input)', 'kind': 'input'}]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from symlab.graph.basic import Apply, Variable
from symlab.notebook.details import kind_of
from symlab.notebook.keys import KeyIndex

__all__ = ["MAX_MATCHES", "NodeSearch"]

#: The most search matches listed.
MAX_MATCHES = 50


class NodeSearch:
    """The search over the nodes and variables of ``keys`` (a graph's :class:`KeyIndex`), and of ``more()``:
    more ``(key, object)`` pairs (the inner graphs a view has open, keyed ``a5/v0``)."""

    def __init__(self, keys: KeyIndex, more: Callable[[], Iterable[tuple[str, Any]]] | None = None) -> None:
        self.keys = keys
        self.more = more
        self._rows: list[tuple[str, str, str, Any]] | None = None
        self._more_keys: dict[int, str] = {}

    def key(self, obj: Any) -> str | None:
        """The key a match is listed under: its key in the graph, else inside an open inner graph."""
        self._texts()
        return self.keys.key(obj) or self._more_keys.get(id(obj))

    def _texts(self) -> list[tuple[str, str, str, Any]]:
        """``(key, name, searched text, object)`` of each object, lower case, read once."""
        if self._rows is None:
            seen: set[int] = set()
            rows = []
            more = list(self.more()) if self.more is not None else []
            for key, obj in more:
                self._more_keys.setdefault(id(obj), key)
            for key, obj in [*self.keys.items(), *more]:
                if id(obj) not in seen and not key.startswith("out"):
                    seen.add(id(obj))
                    name = obj.name if isinstance(obj, Variable) and obj.name is not None else ""
                    rows.append((key.lower(), name.lower(), _search_text(obj).lower(), obj))
            self._rows = rows
        return self._rows

    def find(self, words: str, names_only: bool) -> list[Any]:
        """The nodes and variables matching ``words`` (any case): by key, name, and (unless ``names_only``) op or type."""
        words = words.lower()
        if not words:
            return []
        texts = self._texts()
        exact = [obj for key, _, _, obj in texts if key == words]
        named = [obj for key, name, _, obj in texts if name == words and key != words]
        found = [obj for key, name, text, obj in texts
                 if key != words and name != words and words in (name if names_only else text)]
        return exact + named + found

    def match_rows(self, found: list[Any], fgraph: Any) -> list[dict[str, Any]]:
        """The first :data:`MAX_MATCHES` of ``found`` as the browser lists them: ``[{"key", "text", "kind"}]``."""
        return [{"key": self.key(obj), "text": _match_text(obj, fgraph), "kind": kind_of(obj, fgraph)}
                for obj in found[:MAX_MATCHES]]


def _search_text(obj: Any) -> str:
    """What a search reads of a node or a variable: its name, its op, its type."""
    if isinstance(obj, Apply):
        return str(obj.op)
    return " ".join(filter(None, [obj.name, str(obj.type)]))


def _match_text(obj: Any, fgraph: Any) -> str:
    """A search match as the list shows it."""
    text = f"{obj.op}" if isinstance(obj, Apply) else str(obj)
    text = text if len(text) <= 80 else text[:79] + "…"
    return f"{text} ({kind_of(obj, fgraph)})"
