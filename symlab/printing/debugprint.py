"""``debugprint``: a graph as an indented text tree (Theano's old format).

Every line is one Variable of the graph:

* a computed variable prints its node's op, an id and its name
  (``''`` when it has none): ``Elemwise{add,no_inplace} [id B] ''``;
* a leaf (a graph input or a constant) prints itself and an id:
  ``x [id C]`` or ``TensorConstant{1} [id D]``.

The inputs of a node follow it, one level deeper, each level adding ``" |"``.
A node met a second time (a shared subgraph) prints its line again, with the
same id, but not its inputs: the id tells where it was printed in full.

>>> import symlab.tensor as st
>>> from symlab.printing import debugprint
>>> x = st.dvector("x")
>>> y = x * 2
>>> debugprint(y + y)
Elemwise{add,no_inplace} [id A] ''
 |Elemwise{mul,no_inplace} [id B] ''
 | |x [id C]
 | |DimShuffle{x} [id D] ''
 |   |TensorConstant{2} [id E]
 |Elemwise{mul,no_inplace} [id B] ''

The walk uses an explicit stack, not recursion, so a graph of any depth
prints at the default recursion limit. :func:`debug_lines` yields the same
lines as :class:`DebugLine` objects, in parts (the views' text twin,
:func:`symlab.printing.outline.outline`, is written from them).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from io import StringIO
from typing import IO, Any

from symlab.graph.basic import Apply, Variable
from symlab.graph.display import register_text_printer
from symlab.printing.inner_graphs_text import inner_mode as _inner_mode
from symlab.printing.inner_graphs_text import write_inline, write_with_section
from symlab.printing.subject import GRAPH_KINDS, subject_of

_IDS = ("CHAR", "id", "int", "")


def char_from_number(number: int) -> str:
    """The letters id of ``number``: 0 -> ``A``, 25 -> ``Z``, 26 -> ``BA``.

    It is ``number`` written in base 26 with the digits ``A``-``Z``, as in
    Theano (so ``A`` plays the role of the digit zero):

    >>> [char_from_number(n) for n in (0, 1, 25, 26, 27, 26 * 26)]
    ['A', 'B', 'Z', 'BA', 'BB', 'BAA']
    """
    if number < 0:
        raise ValueError(f"char_from_number expects a non-negative int, received {number}")
    if number == 0:
        return "A"
    digits = []
    while number:
        number, remainder = divmod(number, 26)
        digits.append(chr(ord("A") + remainder))
    return "".join(reversed(digits))


def debugprint(
    obj: Any,
    file: IO[str] | str | None = None,
    depth: int = -1,
    print_type: bool = False,
    ids: str = "CHAR",
    stop_on_name: bool = False,
    print_shape: bool = False,
    print_destroy_map: bool = False,
    print_view_map: bool = False,
    inner: str | None = None,
    print_inner_graphs: bool | str = "auto",
) -> Any:
    """Print the graph(s) of ``obj`` as an indented tree.

    Parameters
    ----------
    obj
        a Variable, an Apply node (its outputs are printed) or a list of them;
        a FunctionGraph (its outputs); a compiled function (the outputs of
        its optimized graph ``f.maker.fgraph``, each node followed by its
        position in the execution order, as in seed 000); a RewriteTrace
        (its final graph) or a TraceCursor (the graph at its step).
    file
        ``None``: print to ``sys.stdout`` and return None (PyTensor returns the
        stream, which a notebook would display after the graph); ``"str"``: return the
        text as a string (each line ends with ``"\\n"``); a file object: write
        to it and return it (as PyTensor does).
    depth
        how many levels to print (``-1``: all; ``1``: only the top line).
    print_type
        add each variable's type after its id: ``<TensorType(float64, (?,))>``.
    ids
        ``"CHAR"`` (A, B, ..., Z, BA, ...), ``"int"`` (0, 1, ...), ``"id"``
        (Python ``id()`` of the node or leaf) or ``""`` (no ids).
    stop_on_name
        do not print the inputs of a computed variable that has a name.
    print_shape
        add each variable's static shape: ``shape=(2, ?)``.
    print_destroy_map, print_view_map
        add the op's ``destroy_map`` / ``view_map`` when it has one: which
        inputs an output overwrites, or is a view of.
    inner
        where the inner graphs of ops that have one (a fused ``Composite``,
        an ``OpFromGraph``, nested ones too) are printed: ``"section"``
        (PyTensor's layout: after the outer graph, under ``Inner graphs:``,
        each op once with the ids of its nodes, its lines after ``" >"``),
        ``"inline"`` (right under the node, indented after ``" >"``, each
        inner input followed by ``← `` and the outer variable it receives;
        the lines of an ``ifelse`` branch end with ``(then)`` or ``(else)``,
        its condition's with ``(condition)``)
        or ``"none"``. An ``ifelse``'s branches are outer nodes: it prints as
        an ordinary node.
    print_inner_graphs
        PyTensor's switch: ``False`` is ``inner="none"``; ``True`` and
        ``"auto"`` leave ``inner`` (default ``"section"``).

    >>> import symlab.tensor as st
    >>> v = st.dvector("v")
    >>> s = (v * v).sum()
    >>> _ = debugprint(s, print_type=True)
    Sum{acc_dtype=float64} [id A] <TensorType(float64, ())> ''
     |Elemwise{mul,no_inplace} [id B] <TensorType(float64, (?,))> ''
       |v [id C] <TensorType(float64, (?,))>
       |v [id C] <TensorType(float64, (?,))>
    >>> debugprint(s, file="str", depth=1, ids="")
    "Sum{acc_dtype=float64} ''\\n"
    """
    if ids not in _IDS:
        raise ValueError(f"debugprint: ids must be one of {_IDS}, received {ids!r}")
    if not isinstance(depth, int) or isinstance(depth, bool):
        raise TypeError(f"debugprint: depth must be an int, received {type(depth).__name__}")
    mode = _inner_mode(inner, print_inner_graphs)
    subject = subject_of(obj, "debugprint", GRAPH_KINDS)
    topo: dict[Apply, int] = {}  # a compiled function's nodes print their position in its execution order
    if subject.kind == "function":
        topo = {node: k for k, node in enumerate(subject.fgraph.toposort())}
    variables = list(subject.outputs)

    if file == "str":
        out: IO[str] = StringIO()
    elif file is None:
        out = sys.stdout
    elif isinstance(file, str):
        raise ValueError(f"debugprint: file must be None, 'str' or a file object, received {file!r}")
    else:
        out = file

    id_text = _Ids(ids)

    def lines(roots: list[Variable], margin: str) -> Iterator[DebugLine]:
        return debug_lines(roots, id_text, margin=margin, depth=depth, print_type=print_type,
                           stop_on_name=stop_on_name, print_shape=print_shape, print_destroy_map=print_destroy_map,
                           print_view_map=print_view_map, topo=topo)

    if mode == "inline":
        write_inline(out.write, variables, lines, id_text)
    else:
        write_with_section(out.write, variables, lines, id_text, sections=mode == "section")

    if file == "str":
        return out.getvalue()  # type: ignore[union-attr]
    flush = getattr(out, "flush", None)
    if flush is not None:
        flush()
    # Printing to the screen returns nothing, so a notebook cell shows only the graph.
    return None if file is None else out


@dataclass(frozen=True)
class DebugLine:
    """One line of :func:`debugprint`, in parts: what :func:`debug_lines` yields.

    ``var`` is the variable the line prints and ``level`` its depth (0 for
    the variables asked for). ``prefix`` is the text before it (the margin
    and the ``" |"`` segments), ``label`` the node's op (``op.index`` for one
    output of several) or the leaf's own text, ``id`` its ``[id X]`` (or
    ``""``), ``type_text`` its type and shape (or ``""``), ``name`` a computed
    variable's name (``None`` when it has none, and for leaves, whose label
    is their name), ``maps`` the destroy/view maps asked for, ``position``
    a compiled function's execution position (or ``""``). ``repeat``: its
    node (or leaf) was printed above; ``expanded``: the walk goes on into
    the node's inputs (a node met for the first time, not stopped by
    ``stop_on_name``). ``children_prefix`` is the text before the lines
    of the node's inputs, without their ``" |"`` (an inner graph printed
    inline under the node starts from it). :attr:`text` is the line as
    debugprint writes it.
    """

    var: Variable
    level: int
    prefix: str
    label: str
    id: str
    type_text: str
    name: str | None
    maps: str
    position: str
    repeat: bool
    expanded: bool
    children_prefix: str = ""

    @property
    def text(self) -> str:
        """The line after its prefix, as :func:`debugprint` writes it (without the line break)."""
        if self.var.owner is None:
            return " ".join(p for p in (self.label, self.id, self.type_text) if p)
        parts = [self.label, self.id, self.type_text, f"'{self.name if self.name is not None else ''}'{self.maps}"]
        return " ".join(p for p in parts if p) + self.position


class _Ids:
    """The ids of :func:`debugprint` (``ids`` is one of its modes): called with a node or a leaf, it answers
    ``("[id X]" or "", whether it was met before)``, giving ids in the order objects are met.
    :meth:`reserve` gives an object its id without meeting it (a wiring names an outer variable
    before the walk prints it)."""

    def __init__(self, ids: str) -> None:
        self.ids = ids
        self.done: dict[int, str] = {}  # id(node or leaf) -> its id text
        self.met: set[int] = set()  # the objects printed so far
        self.keep: list[Any] = []  # keeps the keyed objects alive, so their id()s stay unique

    def reserve(self, key_obj: Any) -> str:
        """The id text of ``key_obj``, given now if it has none, without counting it as met."""
        key = id(key_obj)
        if key in self.done:
            return self.done[key]
        if self.ids == "CHAR":
            text = f"[id {char_from_number(len(self.done))}]"
        elif self.ids == "int":
            text = f"[id {len(self.done)}]"
        elif self.ids == "id":
            text = f"[id {key}]"
        else:
            text = ""
        self.done[key] = text
        self.keep.append(key_obj)
        return text

    def __call__(self, key_obj: Any) -> tuple[str, bool]:
        text = self.reserve(key_obj)
        already = id(key_obj) in self.met
        self.met.add(id(key_obj))
        return text, already


def debug_lines(
    variables: list[Variable],
    id_text: Callable[[Any], tuple[str, bool]],
    *,
    margin: str = "",
    depth: int = -1,
    print_type: bool = False,
    stop_on_name: bool = False,
    print_shape: bool = False,
    print_destroy_map: bool = False,
    print_view_map: bool = False,
    topo: Mapping[Apply, int] | None = None,
) -> Iterator[DebugLine]:
    """The lines of :func:`debugprint`'s tree of ``variables``, as :class:`DebugLine` objects, top first.

    ``id_text`` is called with each node and leaf met and answers ``(its id
    text, whether it was met before)``: a node met before is a ``repeat``,
    its inputs are not walked again. ``margin`` starts every prefix; the
    other options are :func:`debugprint`'s; ``topo`` maps a node to its
    position in a compiled function's execution order. Other texts of a graph
    (:func:`symlab.printing.outline.outline`) are written from these lines.

    >>> import symlab.tensor as st
    >>> x = st.dvector("x")
    >>> y = st.exp(x)
    >>> seen = set()
    >>> def ids(obj):
    ...     met = id(obj) in seen
    ...     seen.add(id(obj))
    ...     return "", met
    >>> [(line.level, line.label, line.repeat) for line in debug_lines([y * y], ids)]
    [(0, 'Elemwise{mul,no_inplace}', False), (1, 'Elemwise{exp,no_inplace}', False), (2, 'x', False), \
(1, 'Elemwise{exp,no_inplace}', True)]
    """
    # Depth-first walk with an explicit stack, so deep graphs need no recursion.
    # An entry is (variable, level, segment, depth left). The text before a line
    # at level L >= 1 is the segments of its ancestors' levels 1..L-1 plus " |";
    # its own segment (" |", or "  " for a node's last input) continues the
    # lines of its inputs. Only the segments of the current path are kept
    # (``path``), so memory stays linear in the depth of the graph.
    topo = topo or {}
    stack: list[tuple[Variable, int, str, int]] = [(v, 0, "", depth) for v in reversed(variables)]
    path: list[str] = []
    while stack:
        var, level, segment, left = stack.pop()
        if left == 0:
            continue
        del path[max(level - 1, 0) :]
        prefix = margin + ("".join(path) + " |" if level else "")
        if level:
            path.append(segment)
        children_prefix = margin + "".join(path)
        type_text = f"<{var.type}>" if print_type else ""
        if print_shape:
            shape = getattr(var.type, "shape", None)
            if shape is not None:
                shown = ", ".join("?" if d is None else str(d) for d in shape)
                type_text += (" " if type_text else "") + f"shape=({shown}{',' if len(shape) == 1 else ''})"
        node = var.owner
        if node is None:
            id_str, already = id_text(var)
            yield DebugLine(var, level, prefix, str(var), id_str, type_text, None, "", "", already, False)
            continue
        label = str(node.op) if len(node.outputs) == 1 else f"{node.op}.{var.index}"
        id_str, already = id_text(node)
        maps = ""
        if print_destroy_map and node.op.destroy_map:
            maps += f" -> destroy_map={dict(node.op.destroy_map)}"
        if print_view_map and node.op.view_map:
            maps += f" -> view_map={dict(node.op.view_map)}"
        position = f"   {topo[node]}" if node in topo else ""
        expanded = not already and not (stop_on_name and var.name is not None)
        yield DebugLine(var, level, prefix, label, id_str, type_text, var.name, maps, position, already, expanded,
                        children_prefix)
        if expanded:
            last = len(node.inputs) - 1
            for i in range(last, -1, -1):
                stack.append((node.inputs[i], level + 1, " |" if i < last else "  ", left - 1))


# ``x.dprint()``, ``fgraph.dprint()`` and ``f.dprint()`` print through the display registry of the graph layer.
register_text_printer(debugprint)
