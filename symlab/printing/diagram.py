"""``diagram``: a graph as a picture, in the colour code of the seeds.

``diagram(obj)`` returns a ``graphviz.Digraph`` (render it with
:func:`symlab.printing.render.to_svg`, or display it in a notebook). Two styles:

``structure``
    the object diagram of the Theano documentation (seed 000): each Apply
    node a blue box, Variables red boxes, Ops green circles, Types purple
    boxes, and one arrow per Python reference, labelled by the field that
    holds it (``owner``, ``inputs[0]``, ``outputs[0]``, ``op``, ``type``).
    An Op or Type used by several nodes is drawn once.
``compact``
    for real graphs: one box per Apply labelled with its op; intermediate
    variables are the edges, graph inputs, constants and outputs are small
    ellipses in their own colours; types and shapes are in the tooltips.
``dataflow``
    micrograd's picture, left to right: every variable a box (inputs green,
    constants grey, intermediates white, outputs blue), every Apply node a
    small ellipse naming its op between them. The boxes carry values
    (:class:`~symlab.notebook.values.ValuesView` writes each value and
    gradient under its variable's name).

In every style a random generator (a variable whose type ``is_generator_state``) is a gold cylinder of kind
``generator``, a random node's outputs are labelled ``next generator`` and ``draw``, and each update of a
compiled function (``f.maker.updates``, explicit and default) is a dashed gold ``update`` arrow from the value
back to the shared variable it is stored into after each call (``default update`` for a shared variable's
``default_update`` in a picture of uncompiled variables); the legend lists them when the picture has them.

A diagram is its :class:`~symlab.printing.model.GraphModel` written as DOT
(:func:`to_dot`). DOT node names are the model's stable keys (``a2`` for an
Apply node, ``v0`` for a variable, ``op0``, ``type0``, ``g0`` for a folded
group, ``out0`` for a compact output), and every node and edge carries its
kind and highlight classes in a ``class`` attribute, which Graphviz writes
into the SVG (``<g id="a2" class="node apply">``): a rendered picture maps
back to the objects through ``model.obj(key)``.

>>> import symlab.tensor as st
>>> from symlab.printing.diagram import diagram
>>> x, y = st.dmatrix("x"), st.dmatrix("y")
>>> z = x + y
>>> z.name = "z"
>>> g = diagram(z)
>>> for line in g.source.splitlines():
...     if "->" in line:
...         print(line.strip())
v3 -> a2 [label=owner class=owner id=v3_a2]
v3 -> type0 [label=type class=type id=v3_type0]
a2 -> op0 [label=op class=op id=a2_op0]
v0 -> type0 [label=type class=type id=v0_type0]
a2 -> v0 [label="inputs[0]" class=input id=a2_v0]
v1 -> type0 [label=type class=type id=v1_type0]
a2 -> v1 [label="inputs[1]" class=input id=a2_v1]
a2 -> v3 [label="outputs[0]" class=output id=a2_v3]
>>> print(g.body[0].strip())
v3 [label=z class=variable color=red fillcolor="#f8d7da" id=v3 shape=box style=filled tooltip="z : TensorType(float64, (?, ?))"]

A graph with more than ``max_nodes`` nodes is *folded*: identical repeated
subgraphs are drawn once (marked ``×k``), and the nodes farthest from both
the inputs and the outputs (the middle of deep chains) are collapsed into
grey summary nodes labelled ``… N nodes …``; the picture says how many
nodes it hides in a note at its bottom (``24 of 30 nodes folded into 1 group``).

Every user string (names, constant values, op texts) goes through
:func:`_esc`: ``<script>``, ``<lambda>``, ``a"b`` or ``C:\\new`` show
literally. Node names are keys, never taken from user names, and no
attribute holding a URL is ever written.

This module imports ``graphviz`` only when a diagram is built.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from typing import Any

from symlab.printing.model import DEFAULT_MAX_NODES, STYLES, DrawEdge, DrawNode, GraphModel, build_model

__all__ = ["CLASS_STYLES", "COMPACT_COLORS", "DATAFLOW_COLORS", "STRUCTURE_COLORS", "diagram", "node_count", "to_dot"]
__all__ += ["DEFAULT_MAX_NODES", "LEGENDS", "STYLES", "legend_label", "side_by_side"]
__all__ += ["GENERATOR_COLORS", "UPDATE_COLOR", "legend_entries"]

#: ``(border colour, fill colour)`` of each kind of object in the structure style (seed 000).
STRUCTURE_COLORS = {
    "apply": ("blue", "#cfe2ff"),
    "variable": ("red", "#f8d7da"),
    "op": ("darkgreen", "#d1e7dd"),
    "type": ("purple", "#e2d9f3"),
}
#: Fill colours of the compact style.
COMPACT_COLORS = {
    "apply": "#cfe2ff",
    "input": "#b7e4c7",
    "constant": "#e9ecef",
    "output": "#9ec5fe",
}
#: Fill colours of the dataflow style: the compact style's, and white intermediate values.
DATAFLOW_COLORS = {**COMPACT_COLORS, "variable": "#ffffff"}
#: ``(border colour, fill colour)`` of a random generator's state, in every style: a gold cylinder (state, not data).
GENERATOR_COLORS = ("darkgoldenrod", "#fff3bf")
#: The colour of update arrows (dashed, from a value back to the shared variable it is stored into).
UPDATE_COLOR = "#b8860b"
#: The fill of summary (folded) nodes and the border of highlighted ones.
SUMMARY_COLOR = "#f1f3f5"
HIGHLIGHT_COLOR = "darkorange"
#: The colour of the note saying what folding hid.
NOTE_COLOR = "#6c757d"
#: How each highlight class paints a node or an edge; when a node has several, the first listed wins.
CLASS_STYLES = {
    "selected": {"color": "#d63384", "penwidth": "3"},
    # inside the branch an ifelse does not take: greyed
    "skipped": {"color": "#ced4da", "fontcolor": "#adb5bd", "fillcolor": "#f8f9fa", "style": "dashed"},
    # where a NaN or an infinity is born (red), and the nodes it flows through (orange)
    "nan-origin": {"color": "#e03131", "fillcolor": "#ffc9c9", "penwidth": "3"},
    "nan": {"color": "#f76707", "fillcolor": "#ffe8cc", "penwidth": "2"},
    "created": {"color": "#2f9e44", "penwidth": "3"},
    "highlight": {"color": HIGHLIGHT_COLOR, "penwidth": "3"},
    "removed": {"color": "#dc3545", "penwidth": "2", "style": "dashed"},
    "client": {"color": "#0d6efd", "penwidth": "2"},
}
_SHAPES = {"apply": "box", "variable": "box", "type": "box", "op": "circle", "group": "box"}
#: Layout direction of each style (the structure style keeps Graphviz's default); dataflow reads left to
#: right, as micrograd's pictures do.
_RANKDIR = {"compact": "TB", "dataflow": "LR"}


# -- text ------------------------------------------------------------------------------------
def _esc(text: Any) -> str:
    """``text`` shown literally by Graphviz.

    Backslashes are doubled (what ``graphviz.escape`` does: no ``\\n``,
    ``\\l`` or ``\\N`` escapes) and ``&`` becomes ``&amp;``, because Graphviz
    decodes HTML entities such as ``&lt;`` even in plain labels. A newline
    in ``text`` stays a line break, written ``\\n``.
    """
    return str(text).replace("\\", "\\\\").replace("&", "&amp;").replace("\n", "\\n")


def _label(*lines: Any) -> Any:
    r"""A DOT label of several user-supplied lines: each escaped, joined by ``\n``, never HTML."""
    from graphviz import nohtml

    return nohtml("\\n".join(_esc(line) for line in lines))


def _tooltip(text: Any) -> Any:
    r"""A DOT tooltip of user-supplied text, shown literally (what the picture shows on hover).

    Graphviz reads a tooltip's escapes twice (``dot`` 2.43 and graphviz-pure alike): each pass turns
    ``\\`` into ``\``, and the second replaces ``\N``, ``\G`` and ``\L`` by the node's name, the graph's
    and the label. Backslashes are therefore doubled twice over (a name ``C:\N`` would show ``C:a2``
    otherwise); a newline is the ``\n`` escape, read as a line break after both passes.
    """
    from graphviz import nohtml

    return nohtml("\\n".join(line.replace("\\", "\\\\\\\\").replace("&", "&amp;")
                             for line in str(text).split("\n")))


# -- DOT -----------------------------------------------------------------------------------------
def _node_attrs(style: str, node: DrawNode) -> dict[str, Any]:
    """Shape and colours of ``node`` in ``style``, before its highlight classes."""
    if node.kind == "group":
        return {"shape": "box", "style": "filled,dashed", "fillcolor": SUMMARY_COLOR}
    if node.kind == "cut":  # where a part of a graph is cut: the value goes on to nodes not drawn
        return {"shape": "plaintext", "fontcolor": NOTE_COLOR}
    if node.kind == "generator":  # a random generator's state: a cylinder, whatever the style
        color, fill = GENERATOR_COLORS
        return {"shape": "cylinder", "style": "filled", "color": color, "fillcolor": fill}
    if style == "structure" and node.kind in STRUCTURE_COLORS:
        color, fill = STRUCTURE_COLORS[node.kind]
        return {"shape": _SHAPES[node.kind], "style": "filled", "color": color, "fillcolor": fill}
    if style == "dataflow":
        if node.kind == "apply":
            return {"shape": "ellipse", "style": "filled", "fillcolor": DATAFLOW_COLORS["apply"], "margin": "0.04"}
        return {"shape": "box", "style": "filled,rounded", "fillcolor": DATAFLOW_COLORS.get(node.kind, SUMMARY_COLOR)}
    shape = "box" if node.kind == "apply" else "ellipse"
    return {"shape": shape, "style": "filled", "fillcolor": COMPACT_COLORS.get(node.kind, SUMMARY_COLOR)}


def _paint(attrs: dict[str, Any], classes: set[str]) -> None:
    """Apply the style of the first of ``classes`` listed in :data:`CLASS_STYLES`."""
    for cls, look in CLASS_STYLES.items():
        if cls in classes:
            for name, value in look.items():
                attrs[name] = f"{attrs[name]},{value}" if name == "style" and attrs.get(name) else value
            return


def _classes(kind: str, classes: set[str], node: DrawNode | None = None) -> str:
    more = [] if node is None else ["openable"] * node.openable + ["open"] * node.opened
    return " ".join([kind, *more, *sorted(classes)])


#: How an open node's box and its sections' boxes are drawn (a skipped section: greyed).
OPEN_STYLE = {"style": "rounded", "color": "#4263eb", "penwidth": "1.5", "margin": "10"}
SECTION_STYLE = {"style": "rounded,dashed", "color": "#868e96", "fontcolor": "#495057", "fontsize": "10"}
SKIPPED_STYLE = {"style": "rounded,dashed,filled", "color": "#ced4da", "fillcolor": "#f8f9fa",
                 "fontcolor": "#adb5bd", "fontsize": "10"}


#: The legend of each style: ``(text, border colour, fill colour)`` of each kind of node.
LEGENDS = {
    "structure": [("Apply", *STRUCTURE_COLORS["apply"]), ("Variable", *STRUCTURE_COLORS["variable"]),
                  ("Op", *STRUCTURE_COLORS["op"]), ("Type", *STRUCTURE_COLORS["type"])],
    "compact": [("operation (Apply)", "black", COMPACT_COLORS["apply"]), ("input", "black", COMPACT_COLORS["input"]),
                ("constant", "black", COMPACT_COLORS["constant"]), ("output", "black", COMPACT_COLORS["output"])],
    "dataflow": [("operation (Apply)", "black", DATAFLOW_COLORS["apply"]), ("input", "black", DATAFLOW_COLORS["input"]),
                 ("constant", "black", DATAFLOW_COLORS["constant"]), ("value", "black", DATAFLOW_COLORS["variable"]),
                 ("output", "black", DATAFLOW_COLORS["output"])],
}


def _html(text: str) -> str:
    """``text`` inside a Graphviz HTML-like label: shown literally."""
    return html.escape(str(text), quote=True)


#: Legend entries added when a picture draws a random generator, and when it draws an update arrow.
GENERATOR_LEGEND = ("generator (state)", *GENERATOR_COLORS)
UPDATE_LEGEND = ("- - update → shared", UPDATE_COLOR, "#ffffff")
#: The colour of a loop's ``next iteration`` arrows (a state's new value back to its taps).
RECUR_COLOR = "#7048e8"
RECUR_LEGEND = ("- - next iteration", RECUR_COLOR, "#ffffff")


def legend_entries(model: GraphModel) -> list[tuple[str, str, str]]:
    """The legend of ``model``: its style's entries, then a generator's and an update arrow's where it draws them."""
    entries = list(LEGENDS[model.style])
    if any(node.kind == "generator" for node in model.nodes.values()):
        entries.append(GENERATOR_LEGEND)
    if any(edge.kind == "update" for edge in model.edges):
        entries.append(UPDATE_LEGEND)
    if any(edge.kind == "recur" for edge in model.edges):
        entries.append(RECUR_LEGEND)
    return entries


def legend_label(style: str, notes: list[str], entries: list[tuple[str, str, str]] | None = None) -> str:
    """A graph label: the colours of ``style``'s nodes (or ``entries``), then ``notes`` (escaped), as an HTML-like
    table.

    Only this module's constant texts and the escaped notes go into it.
    """
    entries = LEGENDS[style] if entries is None else entries
    cells = "".join(f'<TD BORDER="1" COLOR="{color}" BGCOLOR="{fill}">{_html(text)}</TD>'
                    for text, color, fill in entries)
    rows = [f"<TR>{cells}</TR>"]
    rows += [f'<TR><TD COLSPAN="{len(entries)}"><FONT COLOR="{NOTE_COLOR}">{_html(n)}</FONT></TD></TR>'
             for n in notes]
    return f'<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="3" CELLPADDING="2">{"".join(rows)}</TABLE>>'


def to_dot(model: Any, legend: bool = False, fit: str | None = None, notes: Iterable[str] = (), *,
           open_inner: Iterable[Any] = (), section_states: Any = None, style: str = "compact") -> Any:
    """The DOT of ``model``, as a ``graphviz.Digraph`` (``.source`` is the text).

    ``model`` is a :class:`~symlab.printing.model.GraphModel`, or any object
    :func:`~symlab.printing.model.build_model` draws (in ``style``, with the
    inner graphs of ``open_inner`` open and ``section_states``). An open
    node is a ``subgraph cluster_<key>`` holding the node and one
    ``cluster_<key>:<label>`` per section (class ``section``, and
    ``skipped`` for a branch not taken, drawn greyed).

    Node names and ``id`` attributes are the model's keys; ``class`` is the
    kind then the highlight classes, for nodes and edges alike. A folded
    model's :attr:`~symlab.printing.model.GraphModel.note`, and ``notes``,
    are the graph's label; with ``legend=True`` the label is a small legend
    of the style's colours above them. ``fit`` (``"W,H"`` in inches) scales
    a larger drawing down to that size.

    >>> import symlab.tensor as st
    >>> from symlab.printing.model import build_model
    >>> x = st.dvector("x")
    >>> model = build_model(x * 2, style="compact")
    >>> model.add_class(["v0"], "selected")
    >>> print(to_dot(model).source.strip())  # doctest: +NORMALIZE_WHITESPACE
    digraph {
        graph [rankdir=TB]
        node [fontsize=11]
        edge [fontsize=9]
        a2 [label="DimShuffle{x}" class=apply fillcolor="#cfe2ff" id=a2 shape=box style=filled tooltip="DimShuffle{x}"]
        v1 [label=2 class=constant fillcolor="#e9ecef" id=v1 shape=ellipse style=filled tooltip="TensorConstant{2} : TensorType(int64, ())"]
        a4 [label="Elemwise{mul,no_inplace}" class=apply fillcolor="#cfe2ff" id=a4 shape=box style=filled tooltip="Elemwise{mul,no_inplace}"]
        v0 [label=x class="input selected" color="#d63384" fillcolor="#b7e4c7" id=v0 penwidth=3 shape=ellipse style=filled tooltip="x : TensorType(float64, (?,))"]
        out0 [label="output 0\\nfloat64 (?,)" class=output fillcolor="#9ec5fe" id=out0 shape=ellipse style=filled tooltip="Elemwise{mul,no_inplace}.0 : TensorType(float64, (?,))"]
        v1 -> a2 [class=input id=v1_a2 tooltip="TensorConstant{2} : TensorType(int64, ())"]
        v0 -> a4 [label=0 class=input id=v0_a4 tooltip="x : TensorType(float64, (?,))"]
        a2 -> a4 [label=1 class=input id=a2_a4 tooltip="DimShuffle{x}.0 : TensorType(int64, (1,))"]
        a4 -> out0 [class=output id=a4_out0 tooltip="Elemwise{mul,no_inplace}.0 : TensorType(float64, (?,))"]
    }
    """
    import graphviz

    if not isinstance(model, GraphModel):
        model = build_model(model, style, open_inner=open_inner, section_states=section_states, caller="to_dot")
    rankdir = _RANKDIR.get(model.style)
    graph_attr: dict[str, Any] = {"rankdir": rankdir} if rankdir else {}
    lines = [model.note] if model.note is not None else []
    lines += list(notes)
    if legend:
        graph_attr.update(label=legend_label(model.style, lines, legend_entries(model)), labelloc="b", fontsize="10")
    elif lines:
        graph_attr.update(label=_label("; ".join(lines)), labelloc="b", fontsize="10", fontcolor=NOTE_COLOR)
    if fit is not None:
        graph_attr["size"] = fit  # inches; a larger drawing is scaled down to fit
    dot = graphviz.Digraph(graph_attr=graph_attr, node_attr={"fontsize": "11"}, edge_attr={"fontsize": "9"})
    _write(dot, model, "")
    return dot


def _write_node(dot: Any, model: GraphModel, node: DrawNode, prefix: str) -> None:
    attrs = _node_attrs(model.style, node)
    if node.openable and not node.opened:
        attrs["peripheries"] = "2"  # a box with a graph inside: a double border
    _paint(attrs, node.classes)
    if node.tooltip is not None:
        attrs["tooltip"] = _tooltip(node.tooltip)
    attrs["id"] = prefix + node.key
    attrs["class"] = _classes(node.kind, node.classes, node)
    dot.node(prefix + node.key, _label(*node.label), **attrs)


def _write(dot: Any, model: GraphModel, prefix: str) -> None:
    """Add ``model``'s nodes and edges to ``dot`` (a graph or a cluster), their keys after ``prefix``.

    Open nodes are clusters holding the node and a cluster per section, nested as the model says.
    """
    inside: dict[str | None, list[DrawNode]] = {}
    for node in model.nodes.values():
        inside.setdefault(model.container.get(node.key), []).append(node)
    sections = {s.key: s for s in model.sections}

    def place(target: Any, nodes: list[DrawNode]) -> None:
        for node in nodes:
            if node.key not in model.opened:
                _write_node(target, model, node, prefix)
                continue
            name = f"cluster_{prefix}{node.key}"
            with target.subgraph(name=name) as box:
                skipped = "skipped" in node.classes
                box.attr(label="", id=name, **{"class": "inner" + " skipped" * skipped}, **OPEN_STYLE)
                _write_node(box, model, node, prefix)
                for skey in model.opened[node.key]:
                    section = sections[skey]
                    sname = f"cluster_{prefix}{skey}"
                    with box.subgraph(name=sname) as part:
                        look = SKIPPED_STYLE if section.state == "skipped" else SECTION_STYLE
                        state = {"skipped": " · not taken", "taken": " · taken"}.get(section.state or "", "")
                        part.attr(label=_label(section.caption + state), id=sname, labelloc="t",
                                  **{"class": " ".join(["section", *([section.state] if section.state else [])])},
                                  **look)
                        place(part, inside.get(skey, []))

    place(dot, inside.get(None, []))
    for edge in model.edges:
        attrs = _edge_attrs(edge)
        attrs["id"] = prefix + attrs["id"]
        dot.edge(prefix + edge.tail, prefix + edge.head, **attrs)


def side_by_side(panels: list[tuple[str, str, GraphModel]], notes: Iterable[str] = (), fit: str | None = None) -> Any:
    """One DOT of several models side by side: ``(prefix, title, model)`` each, in a titled cluster.

    Each node's name and id is its key after the panel's ``prefix`` (``u_a2``), so an SVG still maps back.
    The graph's label is the legend of the first model's style, then ``notes``.
    """
    import graphviz

    style = panels[0][2].style if panels else "compact"
    graph_attr: dict[str, Any] = {"rankdir": "TB", "label": legend_label(style, list(notes)), "labelloc": "b",
                                  "fontsize": "10"}
    if fit is not None:
        graph_attr["size"] = fit
    dot = graphviz.Digraph(graph_attr=graph_attr, node_attr={"fontsize": "11"}, edge_attr={"fontsize": "9"})
    for prefix, title, model in panels:
        with dot.subgraph(name=f"cluster_{prefix.rstrip('_')}") as cluster:
            label = title + (f" ({model.note})" if model.note else "")
            cluster.attr(label=_label(label), labelloc="t", style="rounded", color="#adb5bd", fontsize="12")
            _write(cluster, model, prefix)
    return dot


def _edge_attrs(edge: DrawEdge) -> dict[str, Any]:
    attrs: dict[str, Any] = {"style": "dashed"} if edge.kind == "cut" else {}
    if edge.kind == "update":  # back to a shared variable: dashed, and not pulling the layout upside down
        attrs.update(style="dashed", color=UPDATE_COLOR, fontcolor=UPDATE_COLOR, constraint="false")
    if edge.kind == "recur":  # a loop's state back to its taps: dashed, not pulling the layout upside down
        attrs.update(style="dashed", color=RECUR_COLOR, fontcolor=RECUR_COLOR, constraint="false")
    if edge.label:
        attrs["label"] = _label(edge.label)
    _paint(attrs, edge.classes)
    if edge.tooltip is not None:
        attrs["tooltip"] = _tooltip(edge.tooltip)
    attrs["id"] = edge.key
    attrs["class"] = _classes(edge.kind, edge.classes)
    return attrs


def diagram(
    obj: Any,
    style: str = "structure",
    highlight: Iterable[Any] = (),
    max_nodes: int = DEFAULT_MAX_NODES,
    var_with_name_simple: bool = True,
    *,
    open_inner: Iterable[Any] = (),
    section_states: Any = None,
) -> Any:
    """A ``graphviz.Digraph`` of ``obj``: ``to_dot(build_model(obj, ...))``.

    ``obj`` is a Variable, a list of them, an Apply node, a FunctionGraph, a
    compiled Function, a RewriteTrace (its final graph, with the nodes its
    last accepted step created highlighted), a TraceCursor (the graph at its
    step), an Op or a Type. ``highlight`` lists Apply nodes and Variables
    (or their keys) to paint. Graphs of more than ``max_nodes`` drawn nodes
    are folded. ``var_with_name_simple=False`` adds the type under the name
    of each variable of the compact style. ``open_inner`` lists the keys (or
    Apply nodes) of nodes whose inner graphs are drawn open, in place
    (``section_states`` greys a branch not taken; see
    :func:`~symlab.printing.model.build_model`).
    """
    model = build_model(
        obj, style, max_nodes, highlight, var_with_name_simple=var_with_name_simple, caller="diagram",
        open_inner=open_inner, section_states=section_states,
    )
    return to_dot(model)


_NODE_LINE = re.compile(r"\s*[a-z]+\d+ \[")


def node_count(digraph: Any) -> int:
    """How many nodes a Digraph made by :func:`diagram` draws."""
    return sum(1 for line in digraph.body if _NODE_LINE.match(line))
