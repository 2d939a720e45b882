"""How a FunctionGraph holds its features and calls them: attached strongly or weakly, asked by callback name.

A feature (:class:`~symlab.graph.changes.Feature`) is attached with
``fgraph.attach_feature(feature)``, or ``weak=True`` to be held by a weak
reference: when nothing else refers to it, it is detached (without
``on_detach``) and none of its callbacks is called again. The graph calls
only the callbacks a feature overrides, and looks each name up once until
the features change. What features add to the graph (its destroy handler,
``checkpoint``/``revert`` with a :class:`~symlab.graph.features.History`)
is asked for here too:

>>> import symlab.tensor as st
>>> from symlab.graph.fg import FunctionGraph
>>> from symlab.graph.features import History
>>> x = st.dvector("x")
>>> fg = FunctionGraph([x], [st.exp(x)])
>>> history = History()
>>> fg.attach_feature(history, weak=True)
>>> fg.get_feature(History) is history
True
>>> del history
>>> fg.features
[]

:class:`FeatureHost` is the part of ``FunctionGraph`` that does this.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from typing import Any

from symlab.graph.basic import Apply, Variable
from symlab.graph.changes import CALLBACKS, Feature
from symlab.graph.features import History

__all__ = ["FeatureHost"]


class FeatureHost:
    """The features of a FunctionGraph: attaching, detaching, finding them and calling their callbacks (a part of the graph).

    The graph sets ``_features`` (a list), ``_callbacks`` (a dict) and ``_order`` (its cached toposort,
    reset when the features change: a feature may add orderings) in its ``__init__``.
    """

    _features: list[_Attached]
    _callbacks: dict[str, tuple[Callable[..., Any], ...]]
    _order: list[Apply] | None

    def attach_feature(self, feature: Any, weak: bool = False) -> None:
        """Attach ``feature`` (see :class:`~symlab.graph.changes.Feature`); its ``on_attach`` may refuse.

        With ``weak=True`` the graph holds the feature by a weak reference:
        when nothing else refers to it, it is detached (without
        ``on_detach``) and no callback of it is ever called again.
        """
        if any(entry.get() is feature for entry in self._features):
            return
        attach = _callback(feature, "on_attach")
        if attach is not None:
            attach(self)
        self._features.append(_Attached(feature, weak, self))
        self._callbacks = {}
        self._order = None  # the feature may add orderings

    def remove_feature(self, feature: Any) -> None:
        """Detach ``feature`` and call its ``on_detach(fgraph)``."""
        for k, entry in enumerate(self._features):
            if entry.get() is feature:
                del self._features[k]
                break
        else:
            raise ValueError(f"remove_feature: {feature!r} is not attached to this graph")
        self._callbacks = {}
        self._order = None
        detach = _callback(feature, "on_detach")
        if detach is not None:
            detach(self)

    def _drop_dead_feature(self, entry: _Attached) -> None:
        if entry in self._features:
            self._features.remove(entry)
            self._callbacks = {}
            self._order = None

    @property
    def features(self) -> list[Any]:
        """The attached features (those held weakly that are still alive), in order of attachment."""
        return [f for f in (entry.get() for entry in self._features) if f is not None]

    def get_feature(self, cls: type) -> Any:
        """The first attached feature that is an instance of ``cls``, or ``None``."""
        for feature in self.features:
            if isinstance(feature, cls):
                return feature
        return None

    def _callbacks_for(self, name: str) -> tuple[Callable[..., Any], ...]:
        found = self._callbacks.get(name)
        if found is None:
            found = self._callbacks[name] = tuple(
                c for c in (entry.callback(name) for entry in self._features) if c is not None
            )
        return found

    def execute_callbacks(self, name: str, *args: Any) -> None:
        """Call ``feature.<name>(self, *args)`` on every feature that defines it."""
        for callback in self._callbacks_for(name):
            callback(self, *args)

    # -- what features add --------------------------------------------------------------------------
    @property
    def destroy_handler(self) -> Any:
        """The attached :class:`~symlab.graph.destroyhandler.DestroyHandler`, or ``None``."""
        # Imported here, not at the top: ``import symlab`` does not load the destroy handler (a module below
        # this one; the compiler loads it).
        from symlab.graph.destroyhandler import DestroyHandler

        return self.get_feature(DestroyHandler)

    def destroyers(self, var: Variable) -> list[Apply]:
        """The nodes that overwrite ``var``'s memory (none without a destroy handler)."""
        handler = self.destroy_handler
        return [] if handler is None else handler.destroyers(var)

    def has_destroyers(self, variables: Iterable[Variable]) -> bool:
        """True if a node overwrites the memory of one of ``variables``."""
        handler = self.destroy_handler
        return False if handler is None else handler.has_destroyers(variables)

    def checkpoint(self) -> int:
        """A mark of the changes so far, for :meth:`revert` (needs a :class:`~symlab.graph.features.History`)."""
        return self._history("checkpoint").checkpoint(self)

    def revert(self, checkpoint: int) -> None:
        """Undo every change committed since ``checkpoint`` (needs a ``History`` feature)."""
        self._history("revert").revert(self, checkpoint)

    def _history(self, what: str) -> Any:
        history = self.get_feature(History)
        if history is None:
            raise AttributeError(
                f"FunctionGraph.{what}() needs a History feature: fgraph.attach_feature(History()) first "
                "(a change that only has to be undone when it fails needs none: use `with fgraph.change():`)"
            )
        return history


class _Attached:
    """A feature as the graph holds it: strongly, or by a weak reference that detaches it when it dies."""

    __slots__ = ("_feature", "_ref", "__weakref__")

    def __init__(self, feature: Any, weak: bool, fgraph: FeatureHost) -> None:
        if weak:
            graph_ref, entry_ref = weakref.ref(fgraph), weakref.ref(self)

            def died(_: Any) -> None:
                graph, entry = graph_ref(), entry_ref()
                if graph is not None and entry is not None:
                    graph._drop_dead_feature(entry)

            self._feature = None
            self._ref = weakref.ref(feature, died)
        else:
            self._feature = feature
            self._ref = None

    def get(self) -> Any:
        return self._feature if self._ref is None else self._ref()

    def callback(self, name: str) -> Callable[..., Any] | None:
        feature = self.get()
        if feature is None or _callback(feature, name) is None:
            return None
        if self._ref is None:
            return getattr(feature, name)
        method = weakref.WeakMethod(getattr(feature, name))

        def call(*args: Any) -> Any:
            bound = method()
            return None if bound is None else bound(*args)

        return call


def _callback(feature: Any, name: str) -> Callable[..., Any] | None:
    """``feature.<name>`` if the feature defines it (a :class:`Feature`'s own no-op does not count)."""
    method = getattr(feature, name, None)
    if method is None or not callable(method):
        return None
    if name in CALLBACKS and isinstance(feature, Feature) and getattr(type(feature), name, None) is getattr(Feature, name):
        return None
    return method
