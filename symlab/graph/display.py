"""How graph objects reach a screen: one display hook, installed by the view layer.

The core knows no screen. Variable, Apply, Op, Type, FunctionGraph,
RewriteTrace and compiled Functions inherit :class:`Displayable`, whose
IPython methods (``_repr_mimebundle_``, ``_repr_pretty_``) call the hook
installed with :func:`set_display_hook`. The view layer
(:mod:`symlab.notebook`) installs its own when it is imported, which
``import symlab`` does; registration flows upward, the core never imports
the views. Interactive views are opened the same way: the view layer
registers each under a name (:func:`register_view`), and the core's
``fgraph.inspect()`` asks :func:`open_view` for it. Without a hook an object
displays as its ``str``:

>>> from symlab.graph.display import display_hook, set_display_hook
>>> import symlab.tensor as st
>>> x = st.dvector("x")
>>> previous = display_hook()
>>> set_display_hook(lambda obj, include, exclude: {"text/plain": f"<{obj}>"})
>>> x._repr_mimebundle_()
{'text/plain': '<x>'}
>>> set_display_hook(previous)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: ``hook(obj, include, exclude) -> {mime type: data}``.
DisplayHook = Callable[[Any, Any, Any], dict[str, Any]]

_hook: DisplayHook | None = None


def set_display_hook(hook: DisplayHook | None) -> None:
    """Install ``hook`` as what every graph object's rich display calls (``None``: text only)."""
    global _hook
    if hook is not None and not callable(hook):
        raise TypeError(f"set_display_hook expects a callable or None, received {type(hook).__name__}")
    _hook = hook


def display_hook() -> DisplayHook | None:
    """The installed display hook, or ``None``."""
    return _hook


#: Interactive views by name: ``opener(obj, **options) -> widget``, registered by the view layer.
_views: dict[str, Callable[..., Any]] = {}


def register_view(name: str, opener: Callable[..., Any]) -> None:
    """Make ``open_view(name, obj, **options)`` return ``opener(obj, **options)``."""
    if not callable(opener):
        raise TypeError(f"register_view: opener must be callable, received {type(opener).__name__}")
    _views[name] = opener


def open_view(name: str, obj: Any, **options: Any) -> Any:
    """The interactive view ``name`` of ``obj`` (see :func:`register_view`)."""
    opener = _views.get(name)
    if opener is None:
        raise RuntimeError(f"no view named {name!r} is registered: import symlab.notebook (import symlab does) "
                           f"to install the views; registered: {sorted(_views)}")
    return opener(obj, **options)


def _text(obj: Any) -> str:
    try:
        return str(obj)
    except Exception as err:  # a display must not fail
        return f"<{type(obj).__name__} object (its text failed: {type(err).__name__}: {err})>"


class Displayable:
    """The IPython display methods of graph objects, answered by the installed display hook."""

    __slots__ = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # IPython's pretty printer takes the first class of the MRO that defines ``_repr_pretty_`` or
        # ``__repr__``: a subclass with its own ``__repr__`` needs the method in its own namespace.
        if "__repr__" in cls.__dict__ and "_repr_pretty_" not in cls.__dict__:
            cls._repr_pretty_ = Displayable._repr_pretty_

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        hook = _hook
        if hook is None:
            return {"text/plain": _text(self)}
        return hook(self, include, exclude)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        hook = _hook
        if hook is None:
            printer.text(_text(self))
            return
        printer.text(hook(self, ["text/plain"], None).get("text/plain", ""))
