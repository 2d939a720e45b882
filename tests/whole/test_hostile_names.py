"""Hostile names through every output: nothing runs, everything shows literally.

Every variable of one graph (inputs, intermediates, output, a shared variable), a compiled function and a
rewrite rule carry the names of ``hostile_names.HOSTILE``: ``<script>``, event handlers, ``javascript:``
URLs, quotes, backslashes and Graphviz escapes, newlines, Graphviz HTML-like labels, entities, Markdown
(``|``, backtick runs, links). Each output is checked the way its format allows:

* text (debugprint, pprint, reprs, error messages): the name as an exact substring;
* DOT: Graphviz parses it (``dot -Tsvg`` succeeds), no quoted string holds a raw newline, each label is
  the name escaped as documented (``\\`` doubled, ``&`` as ``&amp;``, ``"`` as ``\\"``, a newline as ``\\n``)
  and no name reaches an HTML-like label unescaped;
* SVG: well-formed XML, no script, foreignObject or event-handler attribute, no ``href``; each node's text
  is the name, each tooltip starts with it (``name : type``);
* HTML (an exported stepper page, a notebook exported by nbconvert): no user data in an executable
  script, an event handler or a URL attribute, the names in the text;
* Markdown fallbacks: rendered as nbconvert renders them, no element but the layout's (no link, no raw
  HTML), each name inside a code span (``|`` written ``\\|`` in table cells, as GFM reads it);
* widgets: the data Python sends (every trait) holds the names as they are, never HTML-escaped (the browser
  sets text with ``textContent``), and its pictures pass the SVG checks.

The browser half (``tests/browser/test_hostile_names.py``) renders the widgets in JupyterLab and checks that
the payloads never run. The number of checks is written at the end of the run.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import xml.etree.ElementTree as ET
from collections import defaultdict
from html.parser import HTMLParser
from types import SimpleNamespace
from typing import Any

import pytest
from hostile_names import HOSTILE, hostile_graph, hostile_rule_trace, names_in_graph, notebook_cells

import symlab
import symlab.tensor as st
from symlab.graph.fg import FunctionGraph
from symlab.printing.render import find_renderer, render

pytestmark = pytest.mark.skipif(find_renderer() is None, reason="no Graphviz program to render the pictures")

SVG_NS, XLINK_NS = "{http://www.w3.org/2000/svg}", "{http://www.w3.org/1999/xlink}"
#: Elements that can run code or load content in an SVG.
ACTIVE_ELEMENTS = {"script", "foreignObject", "iframe", "object", "embed", "use", "image", "animate", "set"}
#: What the Markdown fallbacks may render to: the layout symlab writes, and its PNG pictures.
MARKDOWN_TAGS = {"p", "strong", "em", "code", "pre", "table", "thead", "tbody", "tr", "th", "td", "ul", "li",
                 "img"}  # pre: the views' outlines, in fenced code blocks


# -- the world: one hostile graph, its function, its views -----------------------------------------------------
@pytest.fixture(scope="module")
def checks(request):
    """``checks[output]`` = the hostile names checked in that output; the totals are written at the end."""
    found: dict[str, set[str]] = defaultdict(set)
    yield found
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    pairs = sum(len(names) for names in found.values())
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line(f"\ntests/whole/test_hostile_names.py: {len(HOSTILE)} hostile strings, {len(found)} "
                                f"outputs, {pairs} (string, output) checks")


@pytest.fixture(scope="module")
def g():
    g = hostile_graph()
    g.names = names_in_graph(g)
    g.fg = FunctionGraph([*g.inputs, g.shared], [g.out])
    g.f = symlab.function(g.inputs, g.out, name=g.function_name, mode="NUMPY")
    # every input a value; i3 / i4 with i4 = 0 is an infinity, born in an unnamed node: the NaN note names it
    g.values = dict(zip(g.inputs, [1.0, 2.0, 3.0, 4.0, 0.0, 5.0, 6.0]))
    return g


def literal(checks: dict[str, set[str]], output: str, text: str, names: list[str]) -> None:
    """Each name is an exact substring of ``text``."""
    for name in names:
        assert name in text, f"{output}: {name!r} is not shown literally"
        checks[output].add(name)


# -- SVG --------------------------------------------------------------------------------------------------------
def svg_texts(svg: str) -> tuple[list[str], list[str]]:
    """Check the SVG is inert; return the text of each node and edge (lines joined by newlines) and the tooltips."""
    root = ET.fromstring(svg)  # well-formed XML, or this raises
    texts, tooltips = [], []
    for element in root.iter():
        tag = element.tag.replace(SVG_NS, "")
        assert tag not in ACTIVE_ELEMENTS, f"an active <{tag}> element in the SVG"
        for attribute in element.attrib:
            local = attribute.split("}")[-1].lower()
            assert not local.startswith("on"), f"an event handler {attribute} in the SVG"
            assert local != "href" and local != "src", f"a URL attribute {attribute} in the SVG"
        if tag == "g" and {"node", "edge"} & set((element.get("class") or "").split()):
            texts.append("\n".join(t.text or "" for t in element.iter(SVG_NS + "text")))
        if tag == "a" and element.get(XLINK_NS + "title") is not None:
            tooltips.append(element.get(XLINK_NS + "title"))
    assert "<script" not in svg.lower(), "a <script> tag in the SVG's source (even in a comment, it is a risk)"
    return texts, tooltips


def check_svg(checks: dict[str, set[str]], output: str, svg: str, labels: list[str], tips: list[str]) -> None:
    """``labels``: names drawn as a node's text (its first lines); ``tips``: names whose tooltip is ``name : type``."""
    assert svg, f"{output}: no picture"
    texts, tooltips = svg_texts(svg)
    for name in labels:
        assert any(t == name or t.startswith(name + "\n") for t in texts), f"{output}: no node shows {name!r}"
        checks[output].add(name)
    for name in tips:
        assert any(t.startswith(name + " : ") for t in tooltips), f"{output}: no tooltip shows {name!r}"
        checks[output + " (tooltips)"].add(name)


# -- DOT --------------------------------------------------------------------------------------------------------
QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)


def dot_label(name: str) -> str:
    """A name as a DOT label writes it (symlab.printing.diagram._esc, then DOT's quoting of ``"``)."""
    return name.replace("\\", "\\\\").replace("&", "&amp;").replace("\n", "\\n").replace('"', '\\"')


def check_dot(checks: dict[str, set[str]], output: str, source: str, names: list[str],
              html_names: tuple[str, ...] = ()) -> str:
    """The DOT is valid for Graphviz and escapes every name; its SVG is returned (rendered by ``dot``)."""
    quoted = QUOTED.findall(source)
    assert not any("\n" in q for q in quoted), "a raw newline inside a DOT string"
    outside = QUOTED.sub('""', source)  # what is not a quoted string: keys, keywords, the HTML-like legend
    for name in names:
        assert f"{dot_label(name)}" in "".join(quoted), f"{output}: {name!r} is not escaped as a DOT label"
        if "<" in name or "&" in name:
            assert name not in outside, f"{output}: {name!r} reached an HTML-like label unescaped"
        checks[output].add(name)
    for name in html_names:  # names written into the HTML-like legend (a rule's name in a trace's notes)
        assert html.escape(name) in outside and name not in outside
        checks[output + " (HTML-like label)"].add(name)
    program = find_renderer()
    done = subprocess.run([program, "-Tsvg"], input=source.encode(), capture_output=True, timeout=60)
    assert done.returncode == 0 and b"syntax error" not in done.stderr, done.stderr.decode()
    return done.stdout.decode()


# -- HTML and Markdown ------------------------------------------------------------------------------------------
class Page(HTMLParser):
    """Every element with its attributes, the text of each script (by type), and the text outside scripts."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[str, str]] = []
        self.code: list[str] = []
        self.text: list[str] = []
        self._script: list[Any] | None = None
        self._code: list[str] | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))
        if tag == "script":
            self._script = [dict(attrs).get("type") or "text/javascript", ""]
        elif tag == "code":
            self._code = []

    def handle_endtag(self, tag):
        if tag == "script" and self._script is not None:
            self.scripts.append(tuple(self._script))
            self._script = None
        elif tag == "code" and self._code is not None:
            self.code.append("".join(self._code))
            self._code = None

    def handle_data(self, data):
        if self._script is not None:
            self._script[1] += data
            return
        self.text.append(data)
        if self._code is not None:
            self._code.append(data)


EXECUTABLE_SCRIPTS = {"text/javascript", "module", "application/javascript"}
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "xlink:href", "data", "srcdoc"}


def check_inert_html(page: Page) -> None:
    """No user data can run: none in an executable script, an event handler, or a URL attribute."""
    for kind, text in page.scripts:
        if kind in EXECUTABLE_SCRIPTS:
            assert "__pwned" not in text, f"user data inside an executable <script type={kind}>"
    for tag, attributes in page.elements:
        for name, value in attributes.items():
            value = value or ""
            assert not (name.startswith("on") and "__pwned" in value), f"user data in <{tag} {name}>"
            if name in URL_ATTRIBUTES:
                assert not value.strip().lower().startswith("javascript:"), f"a javascript: URL in <{tag} {name}>"
        assert tag not in ("iframe", "object", "embed", "foreignobject")


def markdown_forms(name: str) -> set[str]:
    """How a name's text shows in a rendered code span: its lines joined by spaces; in a table cell, nbconvert's
    renderer (mistune) also keeps the ``\\|`` that GFM (GitHub, JupyterLab) reads as ``|``."""
    spaced = " ".join(name.splitlines())
    return {spaced, spaced.replace("\\|", "\\\u2060|").replace("|", "\\|")}


def check_markdown(checks: dict[str, set[str]], output: str, markdown: str, names: list[str]) -> None:
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    page = Page(markdown2html_mistune(markdown))  # what an exported notebook shows; raw HTML would pass through
    check_inert_html(page)
    tags = {tag for tag, _ in page.elements}
    assert tags <= MARKDOWN_TAGS, f"{output}: the Markdown made elements {tags - MARKDOWN_TAGS} (user HTML or links)"
    for tag, attributes in page.elements:
        if tag == "img":
            assert (attributes.get("src") or "").startswith("data:image/png;base64,")
    code = "\n".join(page.code)
    for name in names:
        assert any(form in code for form in markdown_forms(name)), f"{output}: {name!r} is not in a code span"
        checks[output].add(name)


def table_cells(row: str) -> list[str]:
    """A Markdown table row's cells as GFM renderers split it: a | preceded by an odd number of backslashes
    is escaped (it stays in its cell), any other | ends the cell (JupyterLab's marked counts them so)."""
    cells, cell, backslashes = [], "", 0
    for char in row.strip().strip("|"):
        if char == "|" and backslashes % 2 == 0:
            cells.append(cell)
            cell = ""
        else:
            cell += char
        backslashes = backslashes + 1 if char == "\\" else 0
    return [*cells, cell]


# -- widgets ------------------------------------------------------------------------------------------------------
SVG_TRAITS = ("svg", "before_svg", "after_svg")


def widget_text(widget: Any) -> str:
    """Every string the widget sends to the browser, but its script, its styles and its pictures."""
    from symlab.notebook.widget import static_file, views_script

    state = widget.get_state()
    assert state["_esm"] == views_script() and state["_css"] == static_file("views.css")  # no user data
    return "\n".join(s for key, value in state.items() if key not in ("_esm", "_css", *SVG_TRAITS)
                     for s in strings(value))


def strings(value: Any):
    """Every string in a JSON-like value, but its pictures (checked as SVG)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            if k not in SVG_TRAITS:
                yield from strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from strings(v)


def check_widget_text(checks: dict[str, set[str]], output: str, texts: list[str], names: list[str]) -> None:
    """The names reach the browser as they are (it sets them as text): never HTML-escaped."""
    text = "\n".join(texts)
    for name in names:
        assert name in text, f"{output}: {name!r} is not sent as it is"
        if html.escape(name) != name:
            assert html.escape(name) not in text, f"{output}: {name!r} is sent HTML-escaped: it would show escaped"
        checks[output].add(name)


# -- text -------------------------------------------------------------------------------------------------------------
def test_debugprint_and_pprint_show_every_name_as_it_is(g, checks):
    literal(checks, "debugprint of the graph", symlab.dprint(g.out, file="str"), g.names)
    literal(checks, "debugprint of the FunctionGraph", symlab.dprint(g.fg, file="str"), g.names)
    # the compiled graph fused the intermediates away: its inputs (the shared variable too) keep their names
    literal(checks, "debugprint of the function", symlab.dprint(g.f, file="str"), [*g.names[:7], g.shared.name])
    literal(checks, "pprint", symlab.pprint(g.out), [*g.names[:7], g.shared.name])
    # str and repr of variables, nodes and the function
    literal(checks, "str of variables", "\n".join(str(v) for v in [*g.inputs, g.shared, *g.intermediates, g.out]),
            g.names)
    # a node prints its inputs by name: every variable but the output is some node's input
    literal(checks, "str of Apply nodes", "\n".join(str(n) for n in g.fg.toposort()),
            [name for name in g.names if name != g.out.name])
    literal(checks, "repr of the function", repr(g.f), [g.function_name, *g.names[:7]])


def test_the_text_plain_display_is_the_text_form(g, checks):
    from symlab.notebook.reprs import mimebundle

    literal(checks, "text/plain of a variable", mimebundle(g.out, include=["text/plain"])["text/plain"], [g.out.name])
    literal(checks, "text/plain of a FunctionGraph", mimebundle(g.fg, include=["text/plain"])["text/plain"], g.names)


def test_error_messages_quote_names_as_python_does(g, checks):
    # a bad call names the function by its repr (quotes and backslashes escaped as Python writes them)
    with pytest.raises(TypeError) as info:
        g.f("abc", *[0.0] * 6)
    literal(checks, "error message of a call", str(info.value), [repr(g.function_name), g.names[0]])


# -- DOT and SVG -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("style", ["structure", "compact", "dataflow"])
def test_diagrams_escape_every_name_and_draw_it_literally(g, checks, style):
    from symlab.printing.diagram import diagram

    source = diagram(g.fg, style=style, max_nodes=1000).source
    # every variable is a labelled box in the structure and dataflow styles; the compact one draws the
    # intermediates as edges, whose tooltips name them
    labelled = g.names if style != "compact" else [*g.names[:7], g.shared.name, g.out.name]
    svg = check_dot(checks, f"DOT ({style})", source, labelled)
    check_svg(checks, f"SVG ({style})", svg, labelled, g.names)


def test_the_display_bundle_of_every_object(g, checks):
    from symlab.notebook.reprs import DOT, PNG, SVG, mimebundle

    for what, obj in [("variable", g.out), ("FunctionGraph", g.fg), ("function", g.f)]:
        bundle = mimebundle(obj)
        names = [*g.names[:7], g.shared.name] if what == "function" else [*g.names[:7], g.shared.name, g.out.name]
        check_dot(checks, f"display DOT of a {what}", bundle[DOT], names)
        check_svg(checks, f"display SVG of a {what}", bundle[SVG], names, names)
        assert bundle[PNG].startswith("iVBORw0KGgo")  # a PNG (what an untrusted notebook shows)


def test_a_trace_display_writes_a_hostile_rule_name_into_its_legend_escaped(g, checks):
    from symlab.notebook.reprs import DOT, SVG, mimebundle

    trace = hostile_rule_trace(g)
    bundle = mimebundle(trace)
    svg = check_dot(checks, "display DOT of a trace", bundle[DOT], [g.names[0]], html_names=(g.rule_name,))
    texts, _ = svg_texts(svg)
    assert svg_texts(bundle[SVG])[0] == texts
    # the legend (an HTML-like label, not a node) says the rule's name as text
    assert g.rule_name in "".join(t.text or "" for t in ET.fromstring(svg).iter(SVG_NS + "text"))
    checks["display SVG of a trace (legend)"].add(g.rule_name)


def test_pydotprint_writes_the_same_escaped_dot_and_svg(g, checks):
    from symlab.printing import pydotprint

    source = pydotprint(g.fg, format="dot", return_image=True, style="compact", max_nodes=1000).decode()
    names = [*g.names[:7], g.shared.name, g.out.name]
    check_dot(checks, "pydotprint DOT", source, names)
    svg = pydotprint(g.fg, format="svg", return_image=True, style="compact", max_nodes=1000).decode()
    check_svg(checks, "pydotprint SVG", svg, names, g.names)


def test_graphviz_reads_a_name_full_of_escapes_back_exactly():
    # the escapes Graphviz interprets, alone in a label and a tooltip: each must come back as it was written
    from symlab.printing.diagram import diagram

    tricky = ["\\N", "\\G", "\\L", "\\E", "\\T", "\\H", "\\l", "\\r", "\\n", "\\\\", "end\\", "a\nb", "&lt;", '"']
    out = st.dscalar(tricky[0])
    for name in tricky[1:]:
        out = out + st.dscalar(name)
    texts, tooltips = svg_texts(render(diagram(out, style="structure"), "svg").decode())
    for name in tricky:
        assert name in texts
        assert f"{name} : TensorType(float64, ())" in tooltips


# -- widgets ---------------------------------------------------------------------------------------------------------
def test_the_graph_view_sends_every_name_as_it_is(g, checks):
    from symlab.notebook import GraphView

    view = GraphView(g.fg, style="structure")
    texts = []
    for var in view.fgraph.variables:  # click every variable: the panel names it, and its owner's inputs
        if var.name is None:
            continue
        view.select(var)
        assert view.details["name"] == var.name and view.panel["title"].endswith(var.name)
        texts.append(widget_text(view))
        check_markdown(checks, "GraphView Markdown fallback", view.markdown(), [var.name])
    check_widget_text(checks, "GraphView data", texts, g.names)
    check_svg(checks, "GraphView SVG (structure)", view.svg, g.names, g.names)
    view.style = "compact"
    check_svg(checks, "GraphView SVG (compact)", view.svg, [*g.names[:7], g.shared.name, g.out.name], g.names)
    # the display bundle's Markdown: the words, then the picture as a PNG data image (nothing else)
    view.select(view.fgraph.outputs[0])
    check_markdown(checks, "GraphView display Markdown", view._repr_mimebundle_()[0]["text/markdown"], [g.out.name])


def test_the_graph_view_of_the_function_and_its_clicks_from_the_browser(g, checks):
    from symlab.notebook import GraphView

    view = GraphView(g.f)
    texts = []
    for key in list(view.model.nodes):  # what a click sends
        view._on_browser_message(view, {"type": "select", "key": key}, [])
        texts.append(widget_text(view))
    names = [*g.names[:7], g.shared.name]
    check_widget_text(checks, "GraphView data (function)", texts, names)
    check_svg(checks, "GraphView SVG (function)", view.svg, names, names)


def test_the_rewrite_stepper_sends_every_name_as_it_is(g, checks):
    from symlab.notebook import RewriteStepper

    stepper = RewriteStepper(hostile_rule_trace(g))
    assert stepper.steps and all(row[2] == g.rule_name for row in stepper.steps)  # the step list: the rule's name
    texts = [widget_text(stepper)]
    check_svg(checks, "RewriteStepper SVG (step 0)", stepper.after_svg, [*g.names[:7], g.shared.name, g.out.name],
              g.names)
    stepper.step = 1
    step = stepper.current
    assert stepper.card["rule"] == g.rule_name and stepper.card["node"] == str(step.node)
    assert stepper.card["replacements"] == [f"{old} -> {new}" for old, new in step.replacements]
    texts.append(widget_text(stepper))
    for node in stepper.trace.fgraph.apply_nodes:  # "why not" of each node, as a click in a pane asks it
        stepper._on_browser_message(stepper, {"type": "why", "key": stepper.trace.key(node)}, [])
        texts.append(widget_text(stepper))
    check_svg(checks, "RewriteStepper SVG (before)", stepper.before_svg, [*g.names[:7], g.shared.name, g.out.name],
              g.names)
    check_widget_text(checks, "RewriteStepper data", texts, [g.rule_name, g.names[10]])  # the rule; tanh's input
    check_markdown(checks, "RewriteStepper Markdown fallback", stepper.markdown(), [g.rule_name])
    # the compiled function's own rewrite, stepped to the end
    compiled = RewriteStepper(g.f)
    texts = []
    for k in range(compiled.total + 1):
        compiled.step = k
        texts.append(widget_text(compiled))
    check_widget_text(checks, "RewriteStepper data (function)", texts, g.names[:7])


def test_an_exported_stepper_page_carries_names_only_as_inert_data(g, checks, tmp_path):
    from symlab.notebook import RewriteStepper
    from symlab.notebook.offline_page import page_script
    from symlab.notebook.step_pictures import paint_svg
    from symlab.notebook.stepper_export import read_page_data

    stepper = RewriteStepper(hostile_rule_trace(g))
    text = stepper.export_html(tmp_path / "steps.html").read_text()
    page = Page(text)
    check_inert_html(page)
    assert [kind for kind, _ in page.scripts] == ["application/json", "module"]
    data, code = page.scripts[0][1], page.scripts[1][1]
    assert code.strip() == page_script("offline.js").strip()  # no user data
    assert "<" not in data and ">" not in data  # nothing can end the data's element early
    assert set(json.loads(data)) == {"encoding", "data"}  # compressed: the names are in it only as base64
    states = read_page_data(text)  # unpacked as the page's script does
    assert [row[2] for row in states["steps"]] == [g.rule_name] * len(states["steps"])
    pictures = states.pop("svgs")  # the distinct pictures, checked as SVG below
    check_widget_text(checks, "exported stepper page data", list(strings(states)), [g.rule_name])
    states["svgs"] = pictures
    assert len(states["states"]) == 2 and all(state["after"][0] >= 0 for state in states["states"])
    for k, state in enumerate(states["states"]):  # step 1 replaced tanh's output: its name left the picture
        tips = [name for name in g.names if k == 0 or name != g.intermediates[3].name]
        svg = paint_svg(states["svgs"][state["after"][0]], state["after"][1])
        check_svg(checks, "exported stepper page SVG", svg, [*g.names[:7], g.out.name], tips)
    title = html.unescape(re.search(r"<title>(.*?)</title>", text, re.DOTALL).group(1))
    assert title == f"symlab rewrite: {stepper.summary()}"  # escaped in the page, the summary once read
    literal(checks, "exported stepper page title", title, [g.rule_name])


def test_the_clients_inspector_sends_every_name_as_it_is(g, checks):
    from symlab.notebook import ClientsInspector

    fg = FunctionGraph([*g.inputs, g.shared], [g.out])
    inspector = ClientsInspector(fg)
    texts = []
    for name in g.names:  # select by name (the search box's Enter does the same)
        inspector.search(name)
        inspector.select(name)
        assert inspector.selected.name == name
        texts.append(widget_text(inspector))
        check_markdown(checks, "ClientsInspector Markdown fallback", inspector.markdown(), [name])
    # another cell changes the graph: the changes panel lists the names
    tanh_node = next(n for n in fg.apply_nodes if "tanh" in str(n.op))
    fg.replace(tanh_node.outputs[0], st.sin(tanh_node.inputs[0]), reason=g.rule_name)
    inspector.refresh()
    texts.append(widget_text(inspector))
    assert g.rule_name in inspector.changes_panel["title"]
    check_widget_text(checks, "ClientsInspector data", texts, [*g.names, g.rule_name])
    check_svg(checks, "ClientsInspector SVG", inspector.svg, [*g.names[:7], g.shared.name, g.out.name],
              [n for n in g.names if n != g.intermediates[3].name])  # tanh's output left the graph
    check_markdown(checks, "ClientsInspector Markdown fallback (changes)", inspector.markdown(), [g.rule_name])
    inspector.close()


def test_the_values_view_sends_every_name_as_it_is(g, checks):
    from symlab.notebook import ValuesView

    view = ValuesView(g.out, g.values, wrt=g.inputs)
    assert [c["name"] for c in view.controls] == g.names[:7]  # the sliders' labels
    assert g.names[3] in view.nan_note and g.names[4] in view.nan_note  # inf born at i3 / i4: named by its inputs
    texts = []
    for var in [*g.inputs, g.shared, *g.intermediates, g.out]:
        view.select(var)
        assert view.panel["title"].endswith(var.name)
        texts.append(widget_text(view))
    check_widget_text(checks, "ValuesView data", texts, g.names)
    check_svg(checks, "ValuesView SVG", view.svg, g.names, [])
    check_markdown(checks, "ValuesView Markdown fallback", view.markdown(), g.names)
    check_markdown(checks, "ValuesView display Markdown", view._repr_mimebundle_()[0]["text/markdown"], g.names)
    # a value typed in a number box (what the browser sends) re-evaluates; the names stay literal
    view._on_browser_message(view, {"type": "value", "key": view.controls[4]["key"], "value": "2"}, [])
    assert not view.nan_note and "Error" not in view.notice
    check_svg(checks, "ValuesView SVG (after a value)", view.svg, g.names, [])


def test_a_widget_markdown_table_keeps_one_cell_per_name(g):
    # a name with a | (and a backslash before it) must not end its table cell: the rows keep their columns
    from symlab.notebook import ValuesView

    x = st.dscalar("a\\|b | c")
    view = ValuesView(x * 2.0, {x: 1.0})
    rows = [line for line in view.markdown().splitlines() if line.startswith("| ")]
    assert len({len(table_cells(row)) for row in rows}) == 1, rows



# -- a notebook exported to HTML ---------------------------------------------------------------------------------------
def test_an_executed_notebook_exported_to_html_runs_no_user_data(g, checks, tmp_path):
    import os
    from pathlib import Path

    import nbformat
    from nbclient import NotebookClient
    from nbconvert import HTMLExporter

    cells = notebook_cells(str(Path(__file__).resolve().parents[1]))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    assert os.environ["SYMLAB_BACKGROUND_COMPILE"] == "0"  # the kernel inherits it (conftest.py): no thread
    NotebookClient(nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for c in nb.cells for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    text, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    page = Page(text)
    check_inert_html(page)
    for tag, attributes in page.elements:  # names travel as text and data, never inside an attribute
        assert not any("__pwned" in (value or "") for value in attributes.values()), (tag, attributes)
    shown = "".join(page.text)
    literal(checks, "exported notebook HTML (debugprint output)", shown, g.names)
    for name in g.names:  # the widgets' Markdown fallbacks, rendered: each name in a code span
        assert any(form in "\n".join(page.code) for form in markdown_forms(name)), name
        checks["exported notebook HTML (Markdown fallbacks)"].add(name)
    # the widgets' data is embedded in a JSON script that no name can end
    state = [body for kind, body in page.scripts if kind == "application/vnd.jupyter.widget-state+json"]
    assert state and "</script" not in state[0].lower()
    models = json.loads(state[0])["state"].values()
    texts = [text for model in models for key, value in model["state"].items()
             if key not in ("_esm", "_css", *SVG_TRAITS) for text in strings(value)]
    # the sliders' labels (the inputs' names) and the step list (the rule's name), as they are
    check_widget_text(checks, "exported notebook HTML (widget state)", texts, [*g.names[:7], g.rule_name])


# -- inner graphs: an OpFromGraph and an ifelse, their inner variables named -------------------------------------------
@pytest.fixture(scope="module")
def inner():
    """``ifelse(c > 0, op(a, b), b)`` named ``HOSTILE[4]``; the OpFromGraph ``op`` is named ``HOSTILE[0]``, its inner
    input, intermediate and output carry ``HOSTILE[6]``, ``HOSTILE[8]`` and ``HOSTILE[13]``; its outer inputs and
    output ``HOSTILE[1]``, ``HOSTILE[2]``, ``HOSTILE[3]``."""
    from symlab.compile.builders import OpFromGraph
    from symlab.ifelse import ifelse

    u, w = st.dscalar(HOSTILE[6]), st.dscalar(HOSTILE[9])
    middle = st.exp(u) * w
    middle.name = HOSTILE[8]
    result = middle + 1.0
    result.name = HOSTILE[13]
    op = OpFromGraph([u, w], [result], name=HOSTILE[0])
    a, b, c = st.dscalar(HOSTILE[1]), st.dscalar(HOSTILE[2]), st.dscalar(HOSTILE[10])
    applied = op(a, b)
    applied.name = HOSTILE[3]
    out = ifelse(c > 0, applied, b, name=HOSTILE[4])
    out.name = HOSTILE[12]
    fg = FunctionGraph([a, b, c], [out])
    return SimpleNamespace(op=op, out=out, fg=fg, outer=[HOSTILE[k] for k in (1, 2, 3, 10, 12)],
                           inner=[HOSTILE[k] for k in (6, 9, 8, 13)], ops=[HOSTILE[0], HOSTILE[4]])


def test_inner_graph_names_are_literal_in_debugprint_and_pprint(inner, checks):
    names = inner.outer + inner.inner + inner.ops
    literal(checks, "debugprint, inner graphs in a section", symlab.dprint(inner.out, file="str"), names)
    literal(checks, "debugprint, inner graphs inline", symlab.dprint(inner.out, file="str", inner="inline"), names)
    text = symlab.dprint(inner.out, file="str", inner="inline")
    assert f"{HOSTILE[6]} [id " in text and f"← {HOSTILE[1]} [id " in text  # the wiring names both, as they are
    literal(checks, "pprint of an ifelse and an OpFromGraph", symlab.pprint(inner.out),
            [HOSTILE[0], HOSTILE[1], HOSTILE[2], HOSTILE[10]])


@pytest.mark.parametrize("style", ["structure", "dataflow"])
def test_opened_inner_graphs_escape_every_name_in_dot_and_svg(inner, checks, style):
    from symlab.printing.diagram import diagram

    nodes = {str(n.op): n for n in inner.fg.toposort()}
    opened = [nodes[f"{HOSTILE[0]}{{inline=False}}"], nodes[f"if{{{HOSTILE[4]}}}"]]
    source = diagram(inner.fg, style=style, max_nodes=1000, open_inner=opened).source
    svg = check_dot(checks, f"DOT of opened inner graphs ({style})", source, inner.outer + inner.inner + inner.ops)
    check_svg(checks, f"SVG of opened inner graphs ({style})", svg, inner.outer + inner.inner, [])
    texts, _ = svg_texts(svg)
    for name in inner.ops:  # an op's box shows its name, as it is, in its label
        assert any(name in t for t in texts), name
        checks[f"SVG of opened inner graphs ({style}, ops)"].add(name)


def test_the_display_and_the_graph_view_of_inner_graphs_keep_names_as_they_are(inner, checks):
    from symlab.notebook import GraphView
    from symlab.notebook.reprs import DOT, PLAIN, SVG, mimebundle

    bundle = mimebundle(inner.out)
    literal(checks, "text/plain of an ifelse of an OpFromGraph", bundle[PLAIN], [inner.outer[-1]])
    check_dot(checks, "display DOT of inner-graph ops", bundle[DOT], [*inner.outer[:3], HOSTILE[10], *inner.ops])
    check_svg(checks, "display SVG of inner-graph ops", bundle[SVG], [*inner.outer[:2], HOSTILE[10]], [])
    view = GraphView(inner.fg, style="structure")
    for node in list(view.fgraph.toposort()):
        if str(node.op).startswith((HOSTILE[0], "if{")):
            view.expand(node)
    check_widget_text(checks, "GraphView data, inner graphs open", [widget_text(view)], inner.outer + inner.ops)
    check_svg(checks, "GraphView SVG, inner graphs open", view.svg, inner.outer + inner.inner, [])
