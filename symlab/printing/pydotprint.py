"""``pydotprint``: write a graph's picture to a file, as Theano's ``theano.printing.pydotprint`` (seed 003).

>>> import os, tempfile
>>> import symlab.tensor as st
>>> from symlab.printing import pydotprint
>>> a = st.vector("a")
>>> b = a + a ** 10
>>> path = os.path.join(tempfile.mkdtemp(), "pics", "symbolic_graph_unopt.dot")
>>> pydotprint(b, outfile=path, format="dot", var_with_name_simple=True)  # doctest: +ELLIPSIS
The output file is available at .../pics/symbolic_graph_unopt.dot
>>> open(path).read().startswith("digraph")
True
"""

from __future__ import annotations

import os
from typing import Any

from symlab.printing.diagram import DEFAULT_MAX_NODES, diagram

FORMATS = ("png", "svg", "dot")


def pydotprint(
    obj: Any,
    outfile: str | os.PathLike | None = None,
    format: str = "png",
    var_with_name_simple: bool = False,
    style: str = "compact",
    highlight: Any = (),
    max_nodes: int = DEFAULT_MAX_NODES,
    print_output_file: bool = True,
    return_image: bool = False,
    open_inner: Any = (),
) -> Any:
    """Draw ``obj`` (a Variable, a list of them, a FunctionGraph, a compiled Function...) into ``outfile``.

    ``format`` is ``"png"``, ``"svg"`` or ``"dot"`` (the DOT source, no
    Graphviz program needed). ``outfile`` defaults to
    ``symlab.pydotprint.<format>`` in the current directory; missing
    directories are created. ``var_with_name_simple=True`` labels named
    variables by their name only (otherwise name and type).
    ``return_image=True`` returns the bytes instead of writing a file.
    ``open_inner`` lists the keys (or Apply nodes) of nodes whose inner
    graphs (a fused ``Composite``, an ``OpFromGraph``, an ``ifelse``'s
    branches) are drawn open, in place.
    """
    if format not in FORMATS:
        raise ValueError(f"pydotprint: format must be one of {FORMATS}, received {format!r}")
    graph = diagram(obj, style=style, highlight=highlight, max_nodes=max_nodes,
                    var_with_name_simple=var_with_name_simple, open_inner=open_inner)
    if format == "dot":
        data = graph.source.encode("utf-8")
    else:
        from symlab.printing.render import render

        data = render(graph, format)
    if return_image:
        return data
    if outfile is None:
        outfile = os.path.join(os.getcwd(), f"symlab.pydotprint.{format}")
    outfile = os.fspath(outfile)
    folder = os.path.dirname(outfile)
    if folder:
        os.makedirs(folder, exist_ok=True)
    with open(outfile, "wb") as fh:
        fh.write(data)
    if print_output_file:
        print(f"The output file is available at {outfile}")
    return None
