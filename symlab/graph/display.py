"""How graph objects reach a screen: the registry the upper layers fill (display hook, views, text printer, graph holders).

The core knows no screen. Variable, Apply, Op, Type, FunctionGraph,
RewriteTrace and compiled Functions inherit :class:`Displayable`, whose
IPython methods (``_repr_mimebundle_``, ``_repr_pretty_``) call the hook
installed with :func:`set_display_hook`. The view layer
(:mod:`symlab.notebook`) installs its own when it is imported, which
``import symlab`` does; registration flows upward, the core never imports
the views. Interactive views are opened the same way: the view layer
registers each under a name (:func:`register_view`), and the core's
``fgraph.inspect()`` asks :func:`open_view` for it. The text printer of
``x.dprint()`` is registered by :mod:`symlab.printing` when it is imported
(:func:`register_text_printer`; ``import symlab`` imports it) and called
through :func:`print_text`. The classes of the layers above that hold a
graph (a compiled Function, a RewriteTrace, a TraceCursor) say so with
:func:`register_graph_holder`, so that the printers recognise them without
importing the compiler or the rewriter. Without a hook an object displays
as its ``str``:

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


#: ``printer(obj, **options)``: what ``x.dprint()`` calls; :func:`symlab.printing.debugprint`, registered by
#: :mod:`symlab.printing.debugprint` when it is imported.
TextPrinter = Callable[..., Any]

_text_printer: TextPrinter | None = None


def register_text_printer(printer: TextPrinter | None) -> None:
    """Make ``dprint()`` of every graph object call ``printer(obj, **options)`` (``None``: none)."""
    global _text_printer
    if printer is not None and not callable(printer):
        raise TypeError(f"register_text_printer expects a callable or None, received {type(printer).__name__}")
    _text_printer = printer


def text_printer() -> TextPrinter | None:
    """The registered text printer, or ``None``."""
    return _text_printer


def print_text(obj: Any, **options: Any) -> Any:
    """Print ``obj``'s graph as text with the registered printer (``symlab.printing.debugprint``).

    >>> import symlab.tensor as st
    >>> x = st.dscalar("x")
    >>> _ = print_text(x * 2)
    Elemwise{mul,no_inplace} [id A] ''
     |x [id B]
     |TensorConstant{2} [id C]
    """
    printer = _text_printer
    if printer is None:
        raise RuntimeError("no text printer is registered: import symlab.printing (import symlab does) to print "
                           "graphs with dprint()")
    return printer(obj, **options)


#: The classes that hold a graph, by the kind of picture they are (``"function"``, ``"trace"``, ``"cursor"``).
_graph_holders: dict[type, str] = {}


def register_graph_holder(cls: type, kind: str) -> None:
    """Say that instances of ``cls`` hold a graph drawn as ``kind`` (see :mod:`symlab.printing.subject`).

    ``symlab.compile.function`` registers ``Function`` as ``"function"``, ``symlab.rewriting``
    ``RewriteTrace`` as ``"trace"`` and ``TraceCursor`` as ``"cursor"``, each when it is imported.
    """
    if not isinstance(cls, type):
        raise TypeError(f"register_graph_holder expects a class, received {type(cls).__name__}")
    _graph_holders[cls] = kind


def graph_holder_kind(obj: Any) -> str | None:
    """The kind ``obj``'s class (or a base class of it) was registered as, or ``None``.

    >>> import symlab.tensor as st
    >>> from symlab.rewriting import rewrite_graph
    >>> x = st.dscalar("x")
    >>> _, trace = rewrite_graph(x + 0)
    >>> graph_holder_kind(trace), graph_holder_kind(trace.cursor()), graph_holder_kind(x)
    ('trace', 'cursor', None)
    """
    if not _graph_holders:
        return None
    for cls in type(obj).__mro__:
        kind = _graph_holders.get(cls)
        if kind is not None:
            return kind
    return None


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
