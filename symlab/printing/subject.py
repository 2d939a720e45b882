"""What a displayable object is: the one place that decides it for every picture and text.

:func:`subject_of` answers, for any object handed to :func:`~symlab.printing.debugprint`,
:func:`~symlab.printing.diagram` or a notebook display, with a :class:`Subject`:
what kind of object it is, which variables to draw, the graph whose stable
keys name them, and which nodes the object itself points out.

>>> import symlab.tensor as st
>>> from symlab.graph.fg import FunctionGraph
>>> from symlab.printing.subject import subject_of
>>> x, y = st.dvector("x"), st.dvector("y")
>>> z = x + y
>>> s = subject_of(z)
>>> s.kind, s.outputs == (z,), s.fgraph is None
('variable', True, True)
>>> fg = FunctionGraph([x, y], [z])
>>> s = subject_of(fg)
>>> s.kind, s.key(fg.outputs[0].owner)
('fgraph', 'a2')
>>> subject_of(3)
Traceback (most recent call last):
...
TypeError: expected a Variable, an Apply node, a list or tuple of Variables and Apply nodes, a FunctionGraph, a compiled Function, a RewriteTrace, a TraceCursor, an Op or a Type; received int

The tests are real ``isinstance`` checks. The classes of the layers below
that hold a graph (a compiled Function, a RewriteTrace, a TraceCursor) are
not imported (``import symlab`` loads neither the compiler nor the
rewriter): each registers its kind with
:func:`symlab.graph.display.register_graph_holder` when its module is
imported, and an object of theirs exists only once it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from symlab.graph.basic import Apply, Variable
from symlab.graph.display import graph_holder_kind
from symlab.graph.fg import FunctionGraph
from symlab.graph.op import Op
from symlab.graph.type import Type

#: The kinds of :class:`Subject`: those that hold a graph, then the lone Op and Type.
KINDS = ("variable", "apply", "list", "fgraph", "function", "trace", "cursor", "op", "type")
#: The kinds that hold a graph (all but the single-object pictures of an Op or a Type).
GRAPH_KINDS = KINDS[:-2]
_NAMES = {
    "variable": "a Variable",
    "apply": "an Apply node",
    "list": "a list or tuple of Variables and Apply nodes",
    "fgraph": "a FunctionGraph",
    "function": "a compiled Function",
    "trace": "a RewriteTrace",
    "cursor": "a TraceCursor",
    "op": "an Op",
    "type": "a Type",
}


@dataclass(frozen=True, eq=False)
class Subject:
    """What an object is, as a picture or a text sees it.

    ``kind`` is one of :data:`KINDS` and ``obj`` the object received.
    ``outputs`` are the variables to draw or print (empty for an Op or a
    Type) and ``inputs`` the graph inputs, drawn even when unused (only for
    a graph). ``fgraph`` is the graph the picture shows, or ``None`` for
    bare Variables and Apply nodes; ``key`` then gives the stable key of any
    of its nodes and variables (``None`` without a graph). ``highlight``
    lists the nodes the object itself points out (an Apply node: itself) and
    ``created`` the nodes a rewrite step just created (a trace's last
    accepted step, a cursor's current step). ``updates`` lists, for a compiled function, each update as
    ``(k, shared)``: the function stores ``outputs[k]`` (its graph's output ``k``, after the function's own
    outputs) into ``shared`` (the graph's input for that shared variable) after each call, explicit updates
    and default updates (a ``RandomStream``'s generators) alike.
    """

    kind: str
    obj: Any
    outputs: tuple[Variable, ...] = ()
    inputs: tuple[Variable, ...] = ()
    fgraph: FunctionGraph | None = None
    key: Callable[[Any], str] | None = None
    highlight: tuple[Any, ...] = ()
    created: tuple[Apply, ...] = ()
    updates: tuple[tuple[int, Variable], ...] = ()

    @property
    def is_graph(self) -> bool:
        """True unless the subject is a lone Op or Type."""
        return self.kind in GRAPH_KINDS


def accepted_text(kinds: Iterable[str] = KINDS) -> str:
    """The accepted kinds in words: ``"a Variable, an Op or a Type"``.

    >>> accepted_text(["variable", "op", "type"])
    'a Variable, an Op or a Type'
    """
    names = [_NAMES[k] for k in kinds]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def _flatten(items: list[Any] | tuple[Any, ...], caller: str) -> tuple[Variable, ...]:
    out: list[Variable] = []
    for k, item in enumerate(items):
        if isinstance(item, Variable):
            out.append(item)
        elif isinstance(item, Apply):
            out.extend(item.outputs)
        else:
            where = f"{caller}: element" if caller else "element"
            raise TypeError(f"{where} {k} is {type(item).__name__}, expected a Variable or an Apply node")
    return tuple(out)


def _of_graph(kind: str, obj: Any, fgraph: FunctionGraph, key: Callable[[Any], str], **more: Any) -> Subject:
    return Subject(kind, obj, tuple(fgraph.outputs), tuple(fgraph.inputs), fgraph, key, **more)


def _trace_created(trace: Any) -> tuple[Apply, ...]:
    """The nodes the last accepted step of ``trace`` created that are still in its final graph."""
    accepted = [s for s in trace.steps if s.accepted]
    if not accepted:
        return ()
    fgraph = trace.fgraph
    return tuple(n for n in accepted[-1].created if n in fgraph)


def _cursor_created(cursor: Any) -> tuple[Apply, ...]:
    """The cursor's copies of the nodes its current step created."""
    step = cursor.step
    if step is None or not step.accepted:
        return ()
    fgraph, mine = cursor.fgraph, []
    for node in step.created:
        try:
            copy = cursor.copy_of(node)
        except KeyError:
            continue
        if copy in fgraph:
            mine.append(copy)
    return tuple(mine)


def subject_of(obj: Any, caller: str = "", kinds: Iterable[str] = KINDS) -> Subject:
    """The :class:`Subject` of ``obj``; ``TypeError`` for anything not in ``kinds``.

    ``caller`` starts the error message (``"diagram"``: ``diagram expects
    a Variable, ...; received int``). A compiled Function is its optimized
    graph ``f.maker.fgraph``; a RewriteTrace its final graph, with the nodes
    of its last accepted step as ``created``; a TraceCursor the graph at its
    step, keyed by ``cursor.key``.

    >>> import symlab.tensor as st
    >>> x = st.dscalar("x")
    >>> subject_of((x * 2).owner).kind
    'apply'
    >>> subject_of(x.type, "debugprint", GRAPH_KINDS)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: debugprint expects a Variable, ... or a TraceCursor; received TensorType
    """
    kinds = tuple(kinds)
    subject = _classify(obj, caller)
    if subject is None or subject.kind not in kinds:
        start = f"{caller} expects" if caller else "expected"
        raise TypeError(f"{start} {accepted_text(kinds)}; received {type(obj).__name__}")
    return subject


def _classify(obj: Any, caller: str) -> Subject | None:
    if isinstance(obj, Variable):
        return Subject("variable", obj, (obj,))
    if isinstance(obj, Apply):
        return Subject("apply", obj, tuple(obj.outputs), highlight=(obj,))
    if isinstance(obj, list | tuple):
        return Subject("list", obj, _flatten(obj, caller))
    if isinstance(obj, FunctionGraph):
        return _of_graph("fgraph", obj, obj, obj.key)
    if isinstance(obj, Op):
        return Subject("op", obj)
    if isinstance(obj, Type):
        return Subject("type", obj)
    return _classify_holder(obj)


def _classify_holder(obj: Any) -> Subject | None:
    """The Subject of a compiled Function, a RewriteTrace or a TraceCursor, else ``None``.

    Their classes live in layers below this one that ``import symlab`` does not load (the compiler, the
    rewriter): each registers itself with :func:`symlab.graph.display.register_graph_holder`, and only
    the kind it registered is read here.
    """
    kind = graph_holder_kind(obj)
    if kind == "function":
        fgraph = obj.maker.fgraph
        return _of_graph("function", obj, fgraph, fgraph.key, updates=function_updates(obj))
    if kind == "trace":
        return _of_graph("trace", obj, obj.fgraph, obj.key, created=_trace_created(obj))
    if kind == "cursor":
        return _of_graph("cursor", obj, obj.fgraph, obj.key, created=_cursor_created(obj))
    return None


def function_updates(function: Any) -> tuple[tuple[int, Variable], ...]:
    """``(k, shared)`` for each update of a compiled ``function``: its graph's output ``k`` is stored into the graph's
    input ``shared`` after each call (``f.maker.updates``, explicit and default alike), in the maker's order.

    >>> import numpy as np, symlab
    >>> import symlab.tensor as st
    >>> w = symlab.shared(np.zeros(2), name="w")
    >>> f = symlab.function([], w.sum(), updates={w: w + 1.0}, mode="NUMPY")
    >>> [(k, str(shared)) for k, shared in function_updates(f)]
    [(1, 'w')]
    """
    maker = function.maker
    inputs = {id(getattr(v, "container", None)): v for v in maker.fgraph.inputs if hasattr(v, "container")}
    first = len(maker.outputs)
    found = []
    for j, (container, _type) in enumerate(maker.update_targets):
        shared = inputs.get(id(container))
        if shared is not None and first + j < len(maker.fgraph.outputs):
            found.append((first + j, shared))
    return tuple(found)


def kind_of(obj: Any) -> str | None:
    """The kind of ``obj`` (one of :data:`KINDS`), or ``None`` when it is none of them; never raises.

    >>> import symlab.tensor as st
    >>> kind_of(st.dscalar("x")), kind_of("text"), kind_of([1])
    ('variable', None, None)
    """
    try:
        subject = _classify(obj, "")
    except TypeError:  # a list holding something else
        return None
    return None if subject is None else subject.kind
