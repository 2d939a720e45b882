"""RewriteStepper through its Python model (no browser): steps, panes and their marks, rule card, safety."""

import xml.etree.ElementTree as ET

import pytest

import symlab
import symlab.tensor as st
from symlab.notebook.stepper import RewriteStepper
from symlab.printing.render import can_render
from symlab.rewriting import node_rewriter, rewrite_graph

needs_dot = pytest.mark.skipif(not can_render(), reason="Graphviz dot is not installed")
SVG_G = "{http://www.w3.org/2000/svg}g"


def ops(fg):
    return [str(n.op) for n in fg.toposort()]


def nodes_with(svg, cls):
    """The ids of the SVG nodes that carry the class ``cls``."""
    return {g.get("id") for g in ET.fromstring(svg).iter(SVG_G)
            if "node" in (g.get("class") or "").split() and cls in (g.get("class") or "").split()}


def test_stepping_forward_and_back_equals_graph_at():
    x, y = st.dvector("x"), st.dvector("y")
    _, trace = rewrite_graph(st.exp(st.log(x * 1.0)) + x * y / y)
    stepper = RewriteStepper(trace)
    assert stepper.step == 0 and stepper.current is None and stepper.total == len(trace) > 3
    for k in list(range(1, len(trace) + 1)) + list(range(len(trace) - 1, -1, -1)):
        stepper.step = k
        assert ops(stepper.graph) == ops(trace.graph_at(k))
        assert stepper.current is (trace.step(k) if k else None)
    stepper.step = 0
    stepper.prev()
    assert stepper.step == 0
    stepper.step = stepper.total
    stepper.next()
    assert stepper.step == stepper.total
    with pytest.raises(Exception, match=r"step must be in 0\.\.\d+"):
        stepper.step = stepper.total + 1


@needs_dot
def test_panes_mark_what_each_step_removed_and_created_under_stable_keys():
    a = st.dvector("a")
    f = symlab.function([a], a + a**10)
    stepper = RewriteStepper(f)
    trace = f.trace
    for k in range(1, len(trace) + 1):
        stepper.step = k
        step = trace.step(k)
        assert nodes_with(stepper.before_svg, "removed") == {trace.key(n) for n in step.removed}
        assert nodes_with(stepper.after_svg, "created") == {trace.key(n) for n in step.created}
        if not step.accepted:
            assert "refused" in stepper.after_title and stepper.card["status"] == "refused"
    # untouched nodes keep their keys from one pane to the next: the input a is v0 in both
    stepper.step = 2
    before = {g.get("id") for g in ET.fromstring(stepper.before_svg).iter(SVG_G)}
    after = {g.get("id") for g in ET.fromstring(stepper.after_svg).iter(SVG_G)}
    assert trace.key(trace.fgraph.inputs[0]) in before & after


def test_the_rule_card_says_who_where_why_and_how_to_exclude_it():
    a = st.dvector("a")
    f = symlab.function([a], a + a**10)
    stepper = RewriteStepper(f)
    k = stepper.find(rule="elemwise_fusion")
    stepper.step = k
    card = stepper.card
    assert card["rule"] == "elemwise_fusion" and card["phase"] == "fusion" and card["status"] == "applied"
    assert card["location"].endswith(".py:" + card["location"].rsplit(":", 1)[1]) and "fusion.py" in card["location"]
    assert card["reason"].startswith("fused 2 Elemwise nodes") and card["created"] == 1
    assert card["replacements"] == [f"{old} -> {new}" for old, new in f.trace.step(k).replacements]
    assert card["exclude"].endswith('.excluding("elemwise_fusion"))') and "symlab.function" in card["exclude"]
    assert "def apply" in stepper.rule_source() or "def " in stepper.rule_source()
    stepper._on_browser_message(stepper, {"type": "source"}, [])
    assert stepper.card["source"] == stepper.rule_source()
    refused = stepper.find(rule="inplace_elemwise")
    stepper.step = refused
    assert stepper.card["status"] == "refused" and "protected graph input" in stepper.card["reason"]


def test_navigation_messages_find_and_one_answer_per_move():
    a = st.dvector("a")
    stepper = RewriteStepper(a + a**10)
    drawn = stepper.drawn
    for message, expected in [({"type": "move", "direction": "last"}, stepper.total),
                              ({"type": "move", "direction": "prev"}, stepper.total - 1),
                              ({"type": "move", "direction": "first"}, 0),
                              ({"type": "move", "direction": "next"}, 1),
                              ({"type": "goto", "step": 2}, 2),
                              ({"type": "goto", "step": 999}, 2)]:
        stepper._on_browser_message(stepper, message, [])
        assert stepper.step == expected
    assert stepper.drawn == drawn + 5  # the refused goto draws nothing
    assert stepper.find(rule="constant_folding", start=0) == 1 and stepper.find(rule="no_such_rule") is None
    with pytest.raises(TypeError, match="rule's name"):
        stepper.find(rule=3)
    stepper.compare = True
    assert stepper.before_title.startswith("unoptimized") and stepper.after_title.startswith("optimized")


def test_a_custom_rule_with_a_hostile_name_and_hostile_variables_render_literally():
    @node_rewriter([st.exp], name="<script>alert(1)</script>")
    def exp_to_sin(fgraph, node):
        """exp(x) -> sin(x) <b>bold</b>"""
        return [st.sin(node.inputs[0])]

    from symlab.graph.fg import FunctionGraph
    from symlab.rewriting import EquilibriumGraphRewriter

    x = st.dvector('<img src=x onerror="window.pwned=1">')
    fg = FunctionGraph([x], [st.exp(x)])
    trace = EquilibriumGraphRewriter([exp_to_sin]).rewrite(fg)
    stepper = RewriteStepper(trace)
    stepper.step = 1
    assert stepper.card["rule"] == "<script>alert(1)</script>"
    assert "`<script>alert(1)</script>`" in stepper.markdown()
    if can_render():
        for svg in (stepper.before_svg, stepper.after_svg):
            for element in ET.fromstring(svg).iter():
                assert not element.tag.endswith("script")
                assert not any(n.lower().startswith("on") or "href" in n.lower() for n in element.attrib)


def test_repr_markdown_and_errors():
    a = st.dvector("a")
    stepper = RewriteStepper(a + a**10)
    assert repr(stepper) == (
        "RewriteStepper: step 0/3; constant_folding x1, elemwise_fusion x1, inplace_elemwise x1 (refused)"
    )
    md = stepper._repr_mimebundle_()[0]["text/markdown"]
    assert md.splitlines()[2] == "| step | phase | rule | status | reason |" and "| 3 | `inplace` |" in md
    assert isinstance(symlab.view(rewrite_graph(a * 2)[1]), RewriteStepper)
    with pytest.raises(TypeError, match="received int"):
        RewriteStepper(3)
    with pytest.raises(ValueError, match="style must be"):
        RewriteStepper(a * 2, style="fancy")


def test_stepping_never_touches_the_rewritten_graph():
    a = st.dvector("a")
    f = symlab.function([a], a + a**10 + st.exp(st.log(a)))
    fg = f.maker.fgraph
    text, version = symlab.dprint(fg, file="str"), fg.version
    stepper = RewriteStepper(f)
    for k in range(stepper.total + 1):
        stepper.step = k
    stepper.step = 0
    copy = stepper.graph
    copy.replace(copy.outputs[0], copy.inputs[0])  # a copy: nothing else moves
    assert ops(stepper.graph) != ops(copy)
    assert symlab.dprint(fg, file="str") == text and fg.version == version


def test_large_graphs_are_drawn_around_each_change_and_whole_on_request():
    x = st.dvector("x")
    h = x
    for _ in range(200):
        h = st.neg(st.neg(h * 1.0)) + 0.0
    from symlab.graph.fg import FunctionGraph
    from symlab.rewriting import rewrite_fgraph

    fg = FunctionGraph([x], [h])
    trace = rewrite_fgraph(fg, exclude=("fusion", "inplace"))
    stepper = RewriteStepper(trace)
    k = next(s.index for s in trace if s.accepted and len(s.removed) >= 2)
    stepper.step = k
    if can_render():
        step = trace.step(k)
        assert nodes_with(stepper.before_svg, "removed") == {trace.key(n) for n in step.removed}
        assert nodes_with(stepper.after_svg, "created") == {trace.key(n) for n in step.created}
        shown = {g.get("id") for g in ET.fromstring(stepper.after_svg).iter(SVG_G) if "apply" in (g.get("class") or "")}
        assert len(shown) <= 60 and "nodes hidden" in stepper.after_svg and "nodes hidden" in stepper.before_svg
        stepper.full = True
        assert "nodes hidden" not in stepper.after_svg or "folded" in stepper.after_svg


def test_why_not_and_check_on_seed_003_examples():
    a = st.dvector("a")
    stepper = RewriteStepper(a + a**10)  # made from outputs: attempts are recorded
    trace = stepper.trace
    add = next(n for n in trace._start_nodes if str(n.op) == "Elemwise{add,no_inplace}")
    rows = stepper.why_not(add)
    outcomes = {(r["rule"], r["outcome"]) for r in rows}
    assert ("add_zero", "no match") in outcomes  # tried, pattern did not match
    fused = trace.fgraph.outputs[0].owner
    assert {(r["rule"], r["outcome"]) for r in stepper.why_not(fused)} >= {("inplace_elemwise", "refused")}
    refused = next(r for r in stepper.why_not(fused) if r["outcome"] == "refused")
    assert "protected graph input" in refused["reason"] and refused["steps"] == [3]
    assert stepper.why_not(trace.key(fused)) == stepper.why_not(fused)  # by key too
    with pytest.raises(ValueError, match="not a node of this rewrite"):
        stepper.why_not(st.exp(a).owner)
    # x * y / y: why not says mul_div applied on the division
    x, y = st.dvector("x"), st.dvector("y")
    xy = RewriteStepper(x * y / y)
    div = next(n for n in xy.trace._start_nodes if "true_div" in str(n.op))
    assert ("mul_div", "applied") in {(r["rule"], r["outcome"]) for r in xy.why_not(div)}
    # a trace made without attempts says how to get them
    f = symlab.function([a], a * 2.0)
    assert RewriteStepper(f).why_not(f.maker.fgraph.outputs[0].owner)[-1]["outcome"] == "unknown"
    # the browser's click on a node answers in the card
    xy._on_browser_message(xy, {"type": "why", "key": xy.trace.key(div)}, [])
    assert xy.card["why"]["rows"] == xy.why_not(div)


def test_check_compares_before_and_after_on_random_inputs():
    x, y = st.dvector("x"), st.dvector("y")
    stepper = RewriteStepper(x * y / y)
    stepper.step = stepper.find(rule="mul_div", start=0)
    result = stepper.check()
    assert result["max_difference"] < 1e-12 and result["nan_mismatch"] == 0 and result["trials"] == 3
    stepper._on_browser_message(stepper, {"type": "check"}, [])
    assert stepper.card["check"] == result["text"]
    # a wrong rule of one's own, sqrt(x) -> x, gives numbers where the graph gives NaN (x < 0): check shows it
    from symlab.rewriting import PatternNodeRewriter, default_db, register

    name = "test_stepper_wrong_sqrt"
    register(PatternNodeRewriter((st.sqrt, "x"), "x"), "canonicalize", name=name)
    try:
        z = st.dvector("z")
        wrong = RewriteStepper(st.sqrt(z) * 2.0)
        wrong.step = wrong.find(rule=name, start=0)
        result = wrong.check()
        assert result["nan_mismatch"] > 0 and "NaN" in result["text"]
    finally:
        default_db.remove(name)
    assert RewriteStepper(z * 2.0).check()["step"] == 0


def test_export_html_is_one_self_contained_page_of_every_step(tmp_path):
    import json
    import re

    a = st.dvector('<img src=x onerror="window.pwned=1">')
    stepper = RewriteStepper(a + a**10)
    stepper.step = 2
    page = stepper.export_html(tmp_path / "steps.html").read_text()
    assert stepper.step == 2  # exporting leaves the stepper where it was
    payload = page.split('id="symlab-steps">', 1)[1].split("</script>", 1)[0]
    assert "<" not in payload and ">" not in payload  # nothing in the data can end its script element
    data = json.loads(payload)
    assert len(data["states"]) == stepper.total + 1 and data["total"] == stepper.total
    assert [s["card"].get("rule") for s in data["states"][1:]] == [s.rule for s in stepper.trace.steps]
    assert all("def " in s["card"]["source"] for s in data["states"][1:])
    urls = set(re.findall(r"https?://[^\s\"'\\\\)]+", page))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}  # namespaces, never fetched
    assert page.count("</script") == 2 and "renderStepper({ model" in page  # the data and the script
    assert '<img src=x onerror="window.pwned=1">' not in page  # only escaped, inside the data and the pictures


def test_the_step_list_says_which_steps_moved_no_node():
    a = st.dvector("a")
    stepper = RewriteStepper(a + a**10)
    assert stepper.steps == [[1, "canonicalize", "constant_folding", True, False],
                             [2, "fusion", "elemwise_fusion", True, False],
                             [3, "inplace", "inplace_elemwise", False, False]]
    # a step that only moves an edge (exp reads the input y instead of x): no node comes or goes
    from symlab.graph.fg import FunctionGraph
    from symlab.rewriting import EquilibriumGraphRewriter

    x, y = st.dvector("x"), st.dvector("y")

    @node_rewriter([st.exp])
    def read_y(fgraph, node):
        """exp(x) -> exp(y)"""
        if node.inputs[0] is fgraph.inputs[0]:
            return {fgraph.inputs[0]: fgraph.inputs[1]}
        return None

    fg = FunctionGraph([x, y], [st.exp(x), y * 2.0], clone=False)
    trace = EquilibriumGraphRewriter([read_y]).rewrite(fg)
    (row,) = RewriteStepper(trace).steps
    assert row == [1, "equilibrium", "read_y", True, True]
    assert not trace.step(1).removed and not trace.step(1).created and trace.step(1).events


@pytest.mark.skipif(not can_render(), reason="Graphviz dot is not installed")
def test_the_markdown_fallback_carries_the_panes_shown_as_png():
    a = st.dvector("a")
    stepper = RewriteStepper(rewrite_graph(a + a**10)[1])
    markdown = stepper._repr_mimebundle_()[0]["text/markdown"]
    assert "![after picture](data:image/png;base64," in markdown and "![before picture]" not in markdown  # step 0
    stepper.next()
    markdown = stepper._repr_mimebundle_()[0]["text/markdown"]
    assert markdown.index("![before picture](data:image/png;base64,") < markdown.index("![after picture]")
    stepper.step = 0
    assert "![before picture]" not in stepper._repr_mimebundle_()[0]["text/markdown"]
