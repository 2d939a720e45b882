"""Inner graphs in :func:`~symlab.printing.debugprint`'s text: a separate section, inline, or not at all.

An op with a graph of its own (a fused ``Composite``, an ``OpFromGraph``)
prints as one line in the outer graph; its inner graph is printed

* ``"section"`` (PyTensor's layout, the default): after the outer graph,
  under ``Inner graphs:``, each op once, headed by the op and the ids of
  the nodes that apply it, its lines after ``" >"``; inner graphs met in
  an inner graph follow, however deep;
* ``"inline"``: right under its node, indented after ``" >"``, each inner
  input followed by ``←`` and the outer variable it receives (ids are given
  to those before the walk prints them, so they print in full below); an
  inner graph printed above (another node of the same op) shows its output
  lines again and this node's wiring, one ``input ← outer`` line each;
* ``"none"``: not at all.

An ``ifelse`` keeps its branches in the outer graph, so it prints as an
ordinary node; inline, the lines of a branch end with ``(then)`` or
``(else)``, the label of the section the node belongs to, and its
condition's line with ``(condition)``.

>>> import symlab.scalar as ss
>>> import symlab.tensor as st
>>> from symlab.printing import debugprint
>>> from symlab.scalar.composite import Composite
>>> from symlab.tensor.elemwise import Elemwise
>>> a = ss.float64("a")
>>> x = st.dvector("x")
>>> y = Elemwise(Composite([a], [ss.exp(ss.neg(a))]))(x * 2)
>>> debugprint(y, inner="inline")
Elemwise{Composite{exp((-i0))},no_inplace} [id A] ''
 >exp [id C] ''
 > |neg [id D] ''
 >   |i0 [id E] ← Elemwise{mul,no_inplace} [id B]
 |Elemwise{mul,no_inplace} [id B] ''
   |x [id F]
   |DimShuffle{x} [id G] ''
     |TensorConstant{2} [id H]
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import chain
from typing import Any

from symlab.graph.basic import Apply, Variable
from symlab.graph.inner_graph import InnerSection, has_inner_graph, inner_sections
from symlab.graph.traversal import owns_inner_graph
from symlab.printing.loop_pictures import is_loop, loop_caption

#: The values of debugprint's ``inner``.
INNER_MODES = ("section", "inline", "none")

#: ``lines(roots, margin)``: debugprint's lines of the graph of ``roots``, each prefix starting with ``margin``.
Lines = Callable[[list[Variable], str], Iterator[Any]]


def inner_mode(inner: str | None, print_inner_graphs: bool | str = "auto") -> str:
    """The mode asked for by debugprint's ``inner`` and PyTensor's ``print_inner_graphs`` (``False``: none).

    >>> inner_mode(None), inner_mode("inline"), inner_mode(None, print_inner_graphs=False)
    ('section', 'inline', 'none')
    """
    if print_inner_graphs not in (True, False, "auto"):
        raise ValueError(f"debugprint: print_inner_graphs must be True, False or 'auto', received {print_inner_graphs!r}")
    if inner is None:
        return "none" if print_inner_graphs is False else "section"
    if inner not in INNER_MODES:
        raise ValueError(f"debugprint: inner must be one of {INNER_MODES}, received {inner!r}")
    if print_inner_graphs is False and inner != "none":
        raise ValueError(f"debugprint: print_inner_graphs=False asks for no inner graph, but inner={inner!r}")
    return inner


def owned_sections(node: Apply) -> list[InnerSection]:
    """The sections of ``node`` whose graphs its op owns (none for an ordinary op or an ``ifelse``)."""
    if not owns_inner_graph(node.op):
        return []
    return [s for s in inner_sections(node) if s.owned]


def write_with_section(write: Callable[[str], Any], variables: list[Variable], lines: Lines, id_text: Any,
                       sections: bool = True) -> None:
    """Write the graph of ``variables``, then (``sections``) the ``Inner graphs:`` section."""
    found: list[Apply] = []  # nodes with an inner graph, in the order met (inner graphs add theirs)
    seen: set[int] = set()

    def emit(roots: list[Variable], margin: str, marks: dict[tuple[int, int], str] | None = None) -> None:
        for line in lines(roots, margin):
            mark = (marks or {}).get((line.level, id(line.var)), "") or (marks or {}).get((-1, id(line.var)), "")
            write(line.prefix + line.text + mark + "\n")
            node = line.var.owner
            if sections and line.expanded and id(node) not in seen and owns_inner_graph(node.op):
                seen.add(id(node))
                found.append(node)

    emit(variables, "")
    printed: list[Any] = []  # one entry per op printed: equal ops have the same inner graph
    k = 0
    while k < len(found):
        node = found[k]
        k += 1
        if any(node.op == op for op in printed):
            continue
        printed.append(node.op)
        if len(printed) == 1:
            write("\nInner graphs:\n")
        tokens = [text[4:-1] for text in (id_text.reserve(n) for n in found if n.op == node.op) if text]
        owned = owned_sections(node)
        title = "".join(f" ({loop_caption(s, getattr(node.op, 'user_name', None))})" for s in owned if is_loop(s))
        write("\n" + str(node.op) + (f" [id {', '.join(tokens)}]" if tokens else "") + title + "\n")
        for section in owned:
            if len(owned) > 1:
                write(f" >{section.label}:\n")
            emit(list(section.outputs), " >", loop_marks(section))


def loop_marks(section: InnerSection) -> dict[tuple[int, int], str]:
    """What a loop body's lines end with: ``→ h[t]`` after an output's line (level 0), and the tap label after an
    inner input's line (any level) when its name is not the label already. Empty for a section that is no loop."""
    if not is_loop(section):
        return {}
    marks: dict[tuple[int, int], str] = {}
    for var, label in zip(section.inputs, section.extra.get("input_labels") or []):
        if var.name != label:
            marks[(-1, id(var))] = f" ({label})"
    for var, label in zip(section.outputs, section.extra.get("output_labels") or []):
        marks[(0, id(var))] = marks.get((0, id(var)), "") + f" → {label}"
    return marks


def write_inline(write: Callable[[str], Any], variables: list[Variable], lines: Lines, id_text: Any) -> None:
    """Write the graph of ``variables`` with each inner graph right under its node (explicit stack, no recursion)."""
    branch_of: dict[int, str] = {}  # id(outer node of an ifelse branch) -> the branch's label
    conditions: set[int] = set()  # id(the condition of an ifelse)
    stack: list[tuple[Iterator[Any], dict[int, Variable], dict[tuple[int, int], str]]] = [
        (iter(lines(variables, "")), {}, {})]
    while stack:
        entries, wiring, marks = stack[-1]
        line = next(entries, None)
        if line is None:
            stack.pop()
            continue
        if isinstance(line, str):  # a section's label
            write(line + "\n")
            continue
        text = line.prefix + line.text + (marks.get((line.level, id(line.var)), "") or marks.get((-1, id(line.var)), ""))
        outer = wiring.get(id(line.var))
        if outer is not None:
            text += " ← " + outer_text(outer, id_text)
        node = line.var.owner
        if node is not None and id(node) in branch_of:
            text += f" ({branch_of[id(node)]})"
        elif id(line.var) in conditions:
            text += " (condition)"
        write(text + "\n")
        if not line.expanded or not has_inner_graph(node.op):
            continue
        sections = inner_sections(node)
        for section in sections:
            if not section.owned:
                for region_node in section.nodes:
                    branch_of.setdefault(id(region_node), section.label)
                if section.condition is not None:
                    conditions.add(id(section.condition))
        owned = [s for s in sections if s.owned]
        margin = line.children_prefix + " >"
        for section in owned:  # the outer variables get their ids now, in wiring order
            for outer, _ in section.wiring():
                id_text.reserve(outer.owner if outer.owner is not None else outer)
        for section in reversed(owned):  # pushed last first: the first section prints first
            wired = {id(inner): outer for outer, inner in section.wiring()}
            head = [f"{margin}{section.label}:"] if len(owned) > 1 else []
            if is_loop(section):
                head.append(f"{margin}{loop_caption(section, getattr(node.op, 'user_name', None))}:")
            body: Iterator[Any] = lines(list(section.outputs), margin)
            if all(id(o.owner if o.owner is not None else o) in id_text.met for o in section.outputs):
                # Printed in full above (another node of the op): its outputs' lines, and this node's wiring.
                body = chain(body, [f"{margin}{inner}{_id_part(id_text.reserve(inner))} ← {outer_text(outer, id_text)}"
                                    for outer, inner in section.wiring()])
            stack.append((chain(head, body), wired, loop_marks(section)))


def _id_part(id_str: str) -> str:
    return f" {id_str}" if id_str else ""


def outer_text(var: Variable, id_text: Any) -> str:
    """How a wiring names the outer variable ``var``: as its line would (op or leaf text), with its id."""
    node = var.owner
    if node is None:
        label = str(var)
    else:
        label = str(node.op) if len(node.outputs) == 1 else f"{node.op}.{var.index}"
        if var.name is not None:
            label += f" '{var.name}'"
    id_str = id_text.reserve(node if node is not None else var)
    return f"{label} {id_str}" if id_str else label
