"""Hostile names: strings that would run, break out of their context, or change meaning in some output format.

One list for the tests of every output (text, DOT, SVG, HTML, Markdown, the widgets' data and the browser).
The payloads that would run set ``window.__pwned`` (the browser test checks it stays unset). Each name is
unique, so a test can find each one in an output. ``hostile_graph`` gives every kind of variable one.
"""

from __future__ import annotations

from types import SimpleNamespace

#: The marker every executable payload sets.
PWNED = "window.__pwned"

HOSTILE = [
    "<script>window.__pwned=1</script>",  # HTML script
    '<img src=x onerror="window.__pwned=2">',  # an event handler
    "javascript:window.__pwned=3",  # a URL scheme, if it ever became an href
    '<a href="javascript:window.__pwned=4">link</a>',
    "</script><script>window.__pwned=5</script>",  # ends a <script> that embeds data (JSON in a page)
    "]]></svg><svg onload=window.__pwned=6>",  # ends an SVG (or a CDATA section)
    """quotes "double" and 'single'""",  # attribute and DOT string delimiters
    "back\\slash \\N \\G \\L \\l \\n \\",  # Graphviz escapes (\N is the node's name), a trailing backslash
    "line one\nline two",  # a newline in a name
    "<<B>html label</B>>",  # a Graphviz HTML-like label
    "x&amp;y &lt;z&gt; &#60;",  # entities, which Graphviz and HTML decode
    'pipe | `tick` ``two`` <img src=x onerror="window.__pwned=8">',  # table cells; backtick runs end code spans
    "[click](javascript:window.__pwned=7) **bold** <b>b</b>",  # Markdown link and emphasis, inline HTML
    "{{7*7}} ${7*7} %s {0}",  # template and format placeholders
]


def hostile_graph():
    """A graph whose inputs, intermediates, output and shared variable carry every hostile name, one each.

    ``out = tanh((i0 * i1 + i2) - i3 / i4) * shared + i5 * i6``: the inputs are double scalars (a ValuesView
    gives each a slider), each step is a named intermediate. A compiled function of it, and a rewrite rule,
    take hostile names too (the names of HOSTILE again: they need not be unique among themselves).
    """
    import numpy as np

    import symlab
    import symlab.tensor as st

    names = iter(HOSTILE)
    inputs = [st.dscalar(next(names)) for _ in range(7)]
    shared = symlab.shared(np.float64(0.5), name=next(names))
    i0, i1, i2, i3, i4, i5, i6 = inputs
    a = i0 * i1
    b = a + i2
    c = b - i3 / i4
    d = st.tanh(c)
    e = d * shared
    out = e + i5 * i6
    for var in (a, b, c, d, e, out):
        var.name = next(names)
    assert next(names, None) is None  # every hostile name is a variable's
    return SimpleNamespace(inputs=inputs, shared=shared, intermediates=[a, b, c, d, e], out=out,
                           function_name=HOSTILE[11], rule_name=HOSTILE[0])


def names_in_graph(g) -> list[str]:
    """The names of the graph's variables: inputs, shared variable, intermediates, output (all of HOSTILE)."""
    return [v.name for v in [*g.inputs, g.shared, *g.intermediates, g.out]]


def hostile_rule_trace(g):
    """A rewrite of the graph by one rule with a hostile name (``tanh(x) -> sin(x)``): its trace, one step."""
    import symlab.tensor as st
    from symlab.graph.fg import FunctionGraph
    from symlab.rewriting import EquilibriumGraphRewriter, node_rewriter

    @node_rewriter([st.tanh], name=g.rule_name)
    def tanh_to_sin(fgraph, node):
        """tanh(x) -> sin(x), <b>for the pictures</b>"""
        return [st.sin(node.inputs[0])]

    return EquilibriumGraphRewriter([tanh_to_sin]).rewrite(FunctionGraph([*g.inputs, g.shared], [g.out]))


def notebook_cells(tests_dir: str) -> list[str]:
    """A notebook showing the hostile graph through every output: its display, its text, each widget, and each
    widget's Markdown fallback (rendered by the notebook's own Markdown renderer)."""
    return [
        "import sys\n"
        f"sys.path.insert(0, {tests_dir!r})\n"
        "import symlab\n"
        "from IPython.display import Markdown, display\n"
        "from symlab.graph.fg import FunctionGraph\n"
        "from symlab.notebook import ClientsInspector, GraphView, RewriteStepper, ValuesView\n"
        "from hostile_names import HOSTILE, hostile_graph, hostile_rule_trace\n"
        "g = hostile_graph()\n"
        "fg = FunctionGraph([*g.inputs, g.shared], [g.out])\n"
        "f = symlab.function(g.inputs, g.out, name=g.function_name, mode='NUMPY')\n"
        "values = dict(zip(g.inputs, [1.0, 2.0, 3.0, 4.0, 0.0, 5.0, 6.0]))",
        "g.out",
        "symlab.dprint(g.out)\nf",
        # every box drawn (a budget of 40 folds part of this structure picture): the names are what is read
        "view = GraphView(fg, style='structure', max_nodes=80)\nview",
        "stepper = RewriteStepper(hostile_rule_trace(g))\nstepper",
        "inspector = ClientsInspector(fg)\ninspector",
        "values_view = ValuesView(g.out, values, wrt=g.inputs)\nvalues_view",
        "for widget in (view, stepper, inspector, values_view):\n    display(Markdown(widget.markdown()))",
    ]
