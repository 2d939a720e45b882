"""The outline of a graph: :func:`debugprint`'s tree as rows keyed like the pictures (a view's text twin).

:func:`outline` walks a graph as :func:`~symlab.printing.debugprint` does
(the outputs at the top, each node's inputs one level deeper, a node met a
second time written once more but not its inputs) and answers one row per
line: ``{"key", "depth", "text", "repeat", "also"}``. ``key`` is the key
under which the pictures of the same object draw the row's object
(:func:`~symlab.printing.model.build_model`'s keys: ``a<n>`` for an Apply
node, ``v<n>`` for a variable), so a view can select, mark and link rows
and picture nodes alike. ``repeat`` says the row's node was written above
(its inputs are not repeated: find its first row by its key), ``also``
lists the other keys the row stands for. A named variable is shown by its
name; the key closes every row.

>>> import symlab.tensor as st
>>> from symlab.graph.fg import FunctionGraph
>>> x = st.dvector("x")
>>> h = st.exp(x)
>>> h.name = "h"
>>> fg = FunctionGraph([x], [h * h + x])
>>> print(outline_text(outline(fg)))
  Elemwise{add,no_inplace} [a5]
    Elemwise{mul,no_inplace} [a3]
      h = Elemwise{exp,no_inplace} [a1]
        x [v0]
      h = Elemwise{exp,no_inplace} [a1] …
    x [v0]
>>> [(row["key"], row["depth"], row["repeat"], row["also"]) for row in outline(fg)][:3]
[('a5', 0, False, ['v6']), ('a3', 1, False, ['v4']), ('a1', 2, False, ['v2'])]

In a ``compact`` or ``structure`` picture an Apply node is the box, so a
computed variable's row has its node's key (``also``: the variable's); in
the ``dataflow`` picture every variable is a box, so the row has the
variable's key (``also``: its node's). :func:`outline_text` writes rows
as plain text, the selected rows marked ``>`` and the rows a view marks
(``{key: [classes]}``, e.g. a selection's inputs and clients) marked ``*``
with their classes:

>>> rows = outline(fg)
>>> print(outline_text(rows, selected="a3", marks={"a3": ["selected"], "a1": ["input"], "a5": ["client"]}))
* Elemwise{add,no_inplace} [a5]  (client)
>   Elemwise{mul,no_inplace} [a3]
*     h = Elemwise{exp,no_inplace} [a1]  (input)
        x [v0]
*     h = Elemwise{exp,no_inplace} [a1] …  (input)
    x [v0]

Nothing here draws: widgets show the rows (``GraphView.outline``), this
module only writes them. The walk uses an explicit stack (no recursion),
so a graph of any depth is outlined at the default recursion limit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypedDict

from symlab.graph.basic import Variable
from symlab.printing.debugprint import debug_lines
from symlab.printing.folding import toposort
from symlab.printing.model import STYLES, _Keys
from symlab.printing.subject import GRAPH_KINDS, Subject, subject_of

__all__ = ["OutlineRow", "open_outline", "outline", "outline_markdown", "outline_pairs", "outline_text", "tree_marks"]

#: Written after a row whose node was written above (its inputs are not written again).
REPEAT_MARK = " …"


class OutlineRow(TypedDict):
    """One row of an :func:`outline`: the object's ``key``, its ``depth`` in the tree, its ``text``, whether
    it is a ``repeat`` of a node written above, and the other keys it stands for (``also``)."""

    key: str
    depth: int
    text: str
    repeat: bool
    also: list[str]


def outline(obj: Any, style: str = "compact", *, key: Callable[[Any], str] | None = None,
            caller: str = "outline", open_inner: Iterable[str] = ()) -> list[OutlineRow]:
    """The rows of ``obj``'s tree (any object :func:`debugprint` prints), keyed as its ``style`` of picture.

    ``style`` is a :func:`~symlab.printing.model.build_model` style:
    ``"compact"`` and ``"structure"`` key a computed variable's row by its
    Apply node, ``"dataflow"`` by the variable. ``key`` gives the key of a
    node or variable (default: the graph's own keys, or for bare variables
    the numbering :func:`~symlab.printing.model.build_model` gives them).
    Inputs of a graph that no output uses close the outline, at depth 0.
    ``caller`` names the function in error messages. ``open_inner`` lists
    the keys of nodes with an inner graph written open: under the node's
    row, one row per section (keyed ``<node key>:<label>``), and under an
    owned section its graph's rows, keyed as the pictures key them
    (``a8/a2``); a nested node opens when its key is listed too.

    >>> import symlab
    >>> import symlab.tensor as st
    >>> x = st.dvector("x")
    >>> f = symlab.function([x], st.exp(x) * 2)
    >>> print(outline_text(outline(f, open_inner=["a9"])))
      Elemwise{Composite{(exp(i0) * 2)},no_inplace} [a9]
        body:
          mul [a9/a4]
            exp [a9/a1]
              i0 [a9/v0]
            Constant{2} [a9/v3]
        x [v0]

    >>> a, b = st.dscalar("a"), st.dscalar("b")
    >>> s = a * b
    >>> [(r["key"], r["depth"], r["text"]) for r in outline(s + s, style="dataflow")]
    [('v5', 0, 'Elemwise{add,no_inplace} [v5]'), ('v3', 1, 'Elemwise{mul,no_inplace} [v3]'), \
('v0', 2, 'a [v0]'), ('v1', 2, 'b [v1]'), ('v3', 1, 'Elemwise{mul,no_inplace} [v3] …')]
    >>> outline(st.dscalar().type)
    Traceback (most recent call last):
    ...
    TypeError: outline expects a Variable, ... or a TraceCursor; received TensorType
    """
    return [row for row, _ in outline_pairs(obj, style, key=key, caller=caller, open_inner=open_inner)]


def outline_pairs(obj: Any, style: str = "compact", *, key: Callable[[Any], str] | None = None,
                  caller: str = "outline", open_inner: Iterable[str] = ()) -> list[tuple[OutlineRow, Variable]]:
    """The rows of :func:`outline`, each with the variable it writes (for a view that adds to a row: a value).

    >>> import symlab.tensor as st
    >>> x = st.dscalar("x")
    >>> [(row["text"], var is x) for row, var in outline_pairs(st.exp(x), "dataflow")]
    [('Elemwise{exp,no_inplace} [v2]', False), ('x [v0]', True)]
    """
    if style not in STYLES:
        raise ValueError(f"{caller}: style must be one of {STYLES}, received {style!r}")
    subject = obj if isinstance(obj, Subject) else subject_of(obj, caller, GRAPH_KINDS)
    if not subject.is_graph:
        raise TypeError(f"{caller}: expected a graph, received the {subject.kind} {subject.obj!r}")
    outputs = list(subject.outputs)
    if key is None:
        key = _Keys(subject, *toposort(outputs))
    by_variable = style == "dataflow"
    seen: set[int] = set()
    keep: list[Any] = []  # the objects met, alive while the walk runs, so their id()s stay unique

    def met(obj: Any) -> tuple[str, bool]:
        before = id(obj) in seen
        if not before:
            seen.add(id(obj))
            keep.append(obj)
        return "", before

    pairs: list[tuple[OutlineRow, Variable]] = []
    updates = {k: shared for k, shared in subject.updates}  # a compiled function's update roots say so
    root = -1
    for line in debug_lines(outputs, met):
        var, node = line.var, line.var.owner
        root += line.level == 0
        if node is None:
            row_key, also, text = key(var), [], line.label
        else:
            var_key, node_key = key(var), key(node)
            row_key, also = (var_key, [node_key]) if by_variable else (node_key, [var_key])
            text = line.label if line.name is None else f"{line.name} = {line.label}"
        text = f"{_one_line(text)} [{row_key}]" + (REPEAT_MARK if line.repeat and node is not None else "")
        if line.level == 0 and root in updates:
            text += f" (update of {_one_line(str(updates[root]))})"
        pairs.append(({"key": row_key, "depth": line.level, "text": text, "repeat": line.repeat, "also": also}, var))
    for var in subject.inputs:  # inputs nothing uses: the pictures draw them too
        if id(var) not in seen:
            seen.add(id(var))
            pairs.append(({"key": key(var), "depth": 0, "text": f"{_one_line(str(var))} [{key(var)}]",
                           "repeat": False, "also": []}, var))
    opened = {open_inner} if isinstance(open_inner, str) else set(open_inner)
    return _open_rows(pairs, key, style, opened, subject.fgraph, caller) if opened else pairs


def open_outline(pairs: list[tuple[OutlineRow, Variable]], key: Callable[[Any], str], style: str,
                 open_inner: Iterable[str], fgraph: Any = None,
                 caller: str = "outline") -> list[tuple[OutlineRow, Variable]]:
    """The rows of :func:`outline_pairs` (without ``open_inner``) with the nodes ``open_inner`` written open, as
    ``outline_pairs(..., open_inner=...)`` writes them; ``pairs`` is left as it was (a view keeps them while its
    graph does not change). ``key`` is the one ``pairs`` were keyed with, ``fgraph`` the graph (or ``None``).

    >>> import symlab
    >>> import symlab.tensor as st
    >>> x = st.dvector("x")
    >>> f = symlab.function([x], st.exp(x) * 2)
    >>> fg = f.maker.fgraph
    >>> pairs = outline_pairs(f)
    >>> [r["key"] for r, _ in open_outline(pairs, fg.key, "compact", ["a9"], fg)] == [
    ...     r["key"] for r in outline(f, open_inner=["a9"])]
    True
    >>> len(pairs)
    2
    """
    # copies: the depths change where a branch moves under its section
    copies: list[tuple[OutlineRow, Variable]] = [(OutlineRow(**row), var) for row, var in pairs]
    opened = {open_inner} if isinstance(open_inner, str) else set(open_inner)
    return _open_rows(copies, key, style, opened, fgraph, caller) if opened else copies


def _open_rows(pairs: list[tuple[OutlineRow, Variable]], key: Callable[[Any], str], style: str,
               opened: set[str], fgraph: Any, caller: str) -> list[tuple[OutlineRow, Variable]]:
    """``pairs`` with the sections of the open nodes written under their rows (not under a repeat).

    An owned section's rows are its own graph's, after the section's row; a branch region's section row
    takes the subtrees of the node's inputs that branch computes, one level deeper.
    """
    from symlab.graph.inner_graph import inner_sections
    from symlab.printing.opening import caption

    out: list[tuple[OutlineRow, Variable]] = []
    i = 0
    while i < len(pairs):
        row, var = pairs[i]
        out.append((row, var))
        i += 1
        node = var.owner
        if node is None or row["repeat"] or key(node) not in opened:
            continue
        depth = int(row["depth"])
        end = i
        while end < len(pairs) and int(pairs[end][0]["depth"]) > depth:
            end += 1
        children, i = pairs[i:end], end
        subtrees: list[list[tuple[OutlineRow, Variable]]] = []
        for child in children:
            if int(child[0]["depth"]) == depth + 1 or not subtrees:
                subtrees.append([])
            subtrees[-1].append(child)
        sections = inner_sections(node, fgraph)
        branch_of: dict[int, int] = {}  # input position -> the region section computing it
        if len(subtrees) == len(node.inputs):
            for s, section in enumerate(sections):
                if not section.owned:
                    branch_of.update((k, s) for k, inp in enumerate(node.inputs)
                                     if any(inp is o for o in section.outputs))
        for section in sections:
            if section.owned:
                out += _owned_rows(node, section, key(node), depth + 1, style, opened, caller, var)
        for k, subtree in enumerate(subtrees):
            if k not in branch_of:
                out += _open_rows(subtree, key, style, opened, fgraph, caller)
        for s, section in enumerate(sections):
            if section.owned:
                continue
            text = f"{_one_line(caption(section))}:" + ("" if s in branch_of.values() else " (computed elsewhere)")
            out.append(({"key": f"{key(node)}:{section.label}", "depth": depth + 1, "text": text, "repeat": False,
                         "also": []}, var))
            for k, subtree in enumerate(subtrees):
                if branch_of.get(k) == s:
                    for sub_row, sub_var in _open_rows(subtree, key, style, opened, fgraph, caller):
                        sub_row["depth"] = int(sub_row["depth"]) + 1
                        out.append((sub_row, sub_var))
    return out


def _owned_rows(node: Any, section: Any, node_key: str, depth: int, style: str, opened: set[str], caller: str,
                var: Variable) -> list[tuple[OutlineRow, Variable]]:
    """The row of an owned section and, under it, the rows of its graph keyed ``<node key>/<inner key>``."""
    from symlab.printing.opening import caption, inner_fgraph

    rows: list[tuple[OutlineRow, Variable]] = [({"key": f"{node_key}:{section.label}", "depth": depth,
                                                 "text": f"{_one_line(caption(section, node.op))}:", "repeat": False,
                                                 "also": []}, var)]
    fg = inner_fgraph(node.op, section)
    inner = Subject("list", section, tuple(section.outputs), tuple(section.inputs), fg, fg.key if fg is not None else None)
    own = fg.key if fg is not None else _Keys(inner, *toposort(list(section.outputs)))

    def prefixed(obj: Any) -> str:
        return f"{node_key}/{own(obj)}"

    for inner_row, inner_var in outline_pairs(inner, style, key=prefixed, caller=caller, open_inner=opened):
        inner_row["depth"] = int(inner_row["depth"]) + depth + 1
        rows.append((inner_row, inner_var))
    return rows


def outline_text(rows: Iterable[Mapping[str, Any]], selected: str = "",
                 marks: Mapping[str, Iterable[str]] | None = None, indent: str = "  ") -> str:
    """``rows`` (an :func:`outline`) as plain text: one line each, indented by depth, with a two-letter gutter.

    The rows of the ``selected`` key (or marked ``selected`` in ``marks``)
    start with ``>``; the rows ``marks`` gives other classes (``{key:
    [classes]}``, a view's ``marks`` trait) start with ``*`` and end with
    their classes in brackets, and so do the selection's neighbours in the
    tree (:func:`tree_marks`), which the marks of a folded picture may not
    name. A row counts under its ``key`` and under each key of its ``also``.

    >>> rows = [{"key": "a1", "depth": 0, "text": "exp [a1]", "repeat": False, "also": ["v2"]},
    ...         {"key": "v0", "depth": 1, "text": "x [v0]", "repeat": False, "also": []}]
    >>> print(outline_text(rows, selected="v2", marks={"v0": ["nan"]}))
    > exp [a1]
    *   x [v0]  (nan, input)
    """
    rows = list(rows)
    marks = marks or {}
    classes = [list(dict.fromkeys(c for k in (row["key"], *row.get("also", ())) for c in marks.get(k, ())))
               for row in rows]
    for index, cls in tree_marks(rows, selected, marks).items():
        if cls not in classes[index]:
            classes[index].append(cls)
    lines = []
    for row, names in zip(rows, classes):
        chosen = "selected" in names
        others = [c for c in names if c != "selected"]
        gutter = ">" if chosen else "*" if others else " "
        note = f"  ({', '.join(others)})" if others and not chosen else ""
        lines.append(f"{gutter} {indent * int(row['depth'])}{row['text']}{note}")
    return "\n".join(lines)


def tree_marks(rows: list[Mapping[str, Any]], selected: str = "",
               marks: Mapping[str, Iterable[str]] | None = None) -> dict[int, str]:
    """The rows the selection lights, read from the tree alone: ``{row index: "selected" | "input" | "client"}``.

    The selected rows are those of the ``selected`` key (their ``key`` or an
    ``also``) and those ``marks`` marks ``selected``. The rows right under a
    selected row are its ``input`` s, the row right above each selected row
    its ``client``: every node is written in full once, so every (reader,
    input) pair of the graph is one parent and child of the tree. These are
    the picture's marks of the selection, by the objects' own keys, also when
    the picture has folded the objects into groups.

    >>> rows = [{"key": "a5", "depth": 0}, {"key": "a3", "depth": 1}, {"key": "v0", "depth": 2},
    ...         {"key": "a3", "depth": 1, "repeat": True}]
    >>> tree_marks(rows, "a3")
    {0: 'client', 1: 'selected', 2: 'input', 3: 'selected'}
    """
    marks = marks or {}
    chosen = {i for i, row in enumerate(rows)
              if (selected and selected in (row["key"], *row.get("also", ())))
              or any("selected" in marks.get(k, ()) for k in (row["key"], *row.get("also", ())))}
    found: dict[int, str] = dict.fromkeys(chosen, "selected")
    above: list[int] = []  # the row at each depth on the path to the current row
    for i, row in enumerate(rows):
        depth = int(row["depth"])
        del above[depth:]
        parent = above[-1] if above else None
        if parent is not None and i in chosen and parent not in chosen:
            found[parent] = "client"
        if parent is not None and parent in chosen and i not in chosen:
            found.setdefault(i, "input")
        above.append(i)
    return dict(sorted(found.items()))


def _one_line(text: str) -> str:
    """``text`` on one line (a name holding line breaks must not break a row in two)."""
    return " ".join(text.splitlines()) if "\n" in text or "\r" in text else text


def outline_markdown(rows: list[Mapping[str, Any]], selected: str = "",
                     marks: Mapping[str, Iterable[str]] | None = None, limit: int = 40) -> str:
    """The first ``limit`` lines of :func:`outline_text` as a Markdown code block, then how many were left out.

    The fence is longer than any run of backticks in the text, so no name can end the block: every name in it
    is shown literally, as text.

    >>> rows = [{"key": f"v{k}", "depth": k, "text": f"x{k} ```", "repeat": False, "also": []} for k in range(3)]
    >>> print(outline_markdown(rows, limit=2))
    ````
      x0 ```
        x1 ```
    ````
    ... 1 more line
    """
    text = outline_text(rows[:limit], selected, marks)
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    block = f"{fence}\n{text}\n{fence}"
    left = len(rows) - limit
    return block + (f"\n... {left} more line{'s' if left != 1 else ''}" if left > 0 else "")
