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
    stepper._panes.wait()  # the background thread drew the next steps on its own replay, not on the graph
    assert stepper._panes._cursor is not None and stepper._panes._cursor.fgraph is not fg
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
    # a trace made without attempts learns them on the first question (the start graph rewritten again)
    f = symlab.function([a], a * 2.0, mode="NUMPY")
    assert f.trace.attempts is None
    rows = RewriteStepper(f).why_not(f.maker.fgraph.outputs[0].owner)
    assert rows and all(r["outcome"] != "unknown" for r in rows) and f.trace.attempts is not None
    # a trace no recipe made (a rewriter run by hand) says why the unmatched rules are not known
    from symlab.graph.fg import FunctionGraph
    from symlab.rewriting import EquilibriumGraphRewriter

    @node_rewriter([st.exp])
    def exp_to_sin(fgraph, node):
        """exp(x) -> sin(x)"""
        return [st.sin(node.inputs[0])]

    fg = FunctionGraph([a], [st.exp(a)])
    hand = RewriteStepper(EquilibriumGraphRewriter([exp_to_sin]).rewrite(fg))
    last = hand.why_not(hand.trace.step(1).node)[-1]
    assert last["outcome"] == "unknown" and "not made by rewrite_fgraph" in last["reason"]
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
    import re

    from symlab.notebook.stepper_export import read_page_data

    a = st.dvector('<img src=x onerror="window.pwned=1">')
    stepper = RewriteStepper(a + a**10)
    stepper.step = 2
    page = stepper.export_html(tmp_path / "steps.html").read_text()
    assert stepper.step == 2  # exporting leaves the stepper where it was
    payload = page.split('id="symlab-steps">', 1)[1].split("</script>", 1)[0]
    assert "<" not in payload and ">" not in payload  # nothing in the data can end its script element
    data = read_page_data(page)
    assert len(data["states"]) == stepper.total + 1 and data["total"] == stepper.total
    assert [s["card"].get("rule") for s in data["states"][1:]] == [s.rule for s in stepper.trace.steps]
    assert all("def " in data["sources"][s["card"]["location"]] for s in data["states"][1:])
    assert "DecompressionStream" in page  # the page unpacks its data, and says so where a browser cannot
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


# -- issue 30: the stepper at real size (the MLP gradient compiled: 83 steps) --------------------------------------
@pytest.fixture(scope="module")
def mlp():
    """The compiled MLP gradient (NumPy backend: the same 83 rewrite steps, no kernel compile) and its stepper."""
    import real_size

    f = real_size.mlp_function(mode="NUMPY")
    return f, RewriteStepper(f)


def _keys_with_sign(rows, sign):
    return {row["key"] for row in rows if row["sign"] == sign and row["key"].startswith("a")}


def test_every_mlp_step_is_a_text_diff_whose_lines_are_the_nodes_it_removed_and_created(mlp):
    f, stepper = mlp
    trace = f.trace
    assert stepper.total == len(trace) == 83
    for k in range(1, stepper.total + 1):
        stepper.step = k
        step, rows = trace.step(k), stepper.diff
        removed, created = {trace.key(n) for n in step.removed}, {trace.key(n) for n in step.created}
        minus, plus = _keys_with_sign(rows, "-"), _keys_with_sign(rows, "+")
        if not step.accepted:
            assert rows and not minus and not plus  # a refused step changes no line
            continue
        assert rows and (minus or plus or any(r["sign"] != " " for r in rows)), k
        assert minus - plus == removed and plus - minus == created, k  # the rest changed an input: both signs
        assert stepper.diff_text().splitlines() == [f"{r['sign']} {r['text']}" for r in rows]
        for row in rows:
            assert row["text"].startswith(row["key"] + " = ")
    stepper.step = 0
    assert stepper.diff == [] and stepper.diff_text() == ""


@needs_dot
def test_mlp_steps_reveal_their_changed_nodes_which_are_drawn_and_marked(mlp):
    f, stepper = mlp
    trace = f.trace
    for k in range(1, stepper.total + 1):
        stepper.step = k
        step = trace.step(k)
        drawn_before = {g.get("id") for g in ET.fromstring(stepper.before_svg).iter(SVG_G)}
        drawn_after = {g.get("id") for g in ET.fromstring(stepper.after_svg).iter(SVG_G)}
        assert stepper.reveal_before and set(stepper.reveal_before) <= drawn_before, k
        assert stepper.reveal_after and set(stepper.reveal_after) <= drawn_after, k
        if step.removed:
            assert set(stepper.reveal_before) == {trace.key(n) for n in step.removed}
            assert nodes_with(stepper.before_svg, "removed") == set(stepper.reveal_before)
        if step.created:
            assert set(stepper.reveal_after) == {trace.key(n) for n in step.created}
            assert nodes_with(stepper.after_svg, "created") == set(stepper.reveal_after)
        if not step.accepted:  # the node it was tried on: not created, not removed
            assert stepper.reveal_before == stepper.reveal_after == [trace.key(step.node)]
        # a pane marks only what its own step did: never the previous step's creations in "before"
        assert nodes_with(stepper.before_svg, "created") == set()
        assert nodes_with(stepper.after_svg, "removed") == set()
        if not step.accepted:
            assert nodes_with(stepper.after_svg, "created") == set()


@needs_dot
def test_painted_marks_are_what_graphviz_draws_for_the_marked_model_also_when_drawn_ahead(mlp):
    """A state is laid out once; its marks are painted on the SVG. The result is Graphviz's own, byte for byte,
    for panes drawn on the spot and for panes the background thread drew ahead."""
    from symlab.notebook.step_pictures import build_layout
    from symlab.printing.diagram import to_dot
    from symlab.printing.render import to_svg

    f, _ = mlp
    stepper = RewriteStepper(f)
    for k in (1, 2, 3, 30, 31, 60, 82, 83):
        stepper.step = k
        stepper._panes.wait()  # the next steps were drawn in the background meanwhile
        frame = stepper._frame(k, False)
        for (spec, marks), shown in ((frame["before"], stepper.before_svg), (frame["after"], stepper.after_svg)):
            layout = build_layout(f.trace.cursor(), spec, "compact", stepper._max_nodes)
            for key, cls in marks.items():
                layout.model.nodes[key].classes.add(cls)
            assert shown == to_svg(to_dot(layout.model, notes=layout.notes).source), (k, spec)
    assert stepper._panes.hits > 0  # steps found their panes drawn


def test_why_not_answers_at_step_0_and_through_symlab_view_of_the_trace(mlp):
    f, _ = mlp
    view = symlab.view(f.trace)
    assert isinstance(view, RewriteStepper) and view.step == 0
    start = next(n for n in f.trace._start_nodes if str(n.op).startswith("Elemwise{true_div"))
    view._on_browser_message(view, {"type": "why", "key": f.trace.key(start)}, [])
    card = view.card
    assert card["step"] == 0 and card["counts"]  # the summary card, with the answer in it
    rows = card["why"]["rows"]
    outcomes = {r["outcome"] for r in rows}
    assert "unknown" not in outcomes and "no match" in outcomes and len(rows) > 3
    applied = [r for r in rows if r["outcome"] == "applied"]
    assert applied and all(f.trace.step(s).node is start for r in applied for s in r["steps"])
    # a graph output's node (compact pictures draw outputs as out<k>; the diff names them so) answers for it
    view._on_browser_message(view, {"type": "why", "key": "out0"}, [])
    first = f.trace.cursor()  # step 0
    assert view.card["why"]["key"] == first.key(first.fgraph.outputs[0].owner) and view.card["why"]["rows"]
    assert view.card["why"]["node"] == str(f.trace.by_key(view.card["why"]["key"]))
    # the replayed attempts sit under the trace's own nodes, created ones included
    fused = next(s for s in f.trace if s.rule == "elemwise_fusion" and s.accepted).created[0]
    assert {r["rule"] for r in view.why_not(fused)} >= {"inplace_elemwise"}


def test_a_function_graph_entry_point_rewrites_a_copy_and_answers_why_not():
    from symlab.graph.fg import FunctionGraph

    x = st.dvector("x")
    fg = FunctionGraph([x], [st.exp(st.log(x)) * 1.0])
    text = symlab.dprint(fg, file="str")
    stepper = RewriteStepper(fg)
    assert stepper.total > 0 and symlab.dprint(fg, file="str") == text  # the caller's graph is untouched
    node = next(iter(stepper.trace._start_nodes))
    assert stepper.why_not(node) and "unknown" not in {r["outcome"] for r in stepper.why_not(node)}


@needs_dot
def test_export_of_the_mlp_is_small_holds_no_path_and_decodes_to_every_step(mlp, tmp_path):
    import os
    import time
    from pathlib import Path

    from symlab.notebook.offline_page import bare_svg
    from symlab.notebook.step_pictures import paint_svg
    from symlab.notebook.stepper_export import read_page_data

    f, _ = mlp
    stepper = RewriteStepper(f)
    started = time.perf_counter()
    path = stepper.export_html(tmp_path / "mlp.html")
    seconds = time.perf_counter() - started
    size = path.stat().st_size
    print(f"export of {stepper.total} steps: {seconds:.2f} s, {size / 1e6:.2f} MB")  # measured, not asserted
    assert size < 2_000_000
    page = path.read_text()
    for machine in {"/work", str(Path.home()), os.getcwd(), str(Path(symlab.__file__).resolve().parent)}:
        assert machine not in page, machine
    data = read_page_data(page)
    assert len(data["states"]) == stepper.total + 1
    assert len(data["svgs"]) < 2 * stepper.total + 2 and len(set(data["svgs"])) == len(data["svgs"])
    for svg in data["svgs"]:
        ET.fromstring(svg)  # each distinct picture parses
    for k, state in enumerate(data["states"]):
        stepper.step = k
        for pane, shown in (("before", stepper.before_svg), ("after", stepper.after_svg)):
            index, marks = state[pane]
            assert (paint_svg(data["svgs"][index], marks) if index >= 0 else "") == bare_svg(shown), (k, pane)
        assert state["diff"] == stepper.diff and state["reveal_after"] == stepper.reveal_after
        assert state["card"] == {key: v for key, v in stepper.card.items()}
        assert not state["card"].get("location", "symlab/").startswith("/")
    assert all(location.startswith("symlab/rewriting/") for location in data["sources"])


def test_the_exclude_line_of_a_compiled_function_runs_and_leaves_the_rule_out():
    a = st.dvector("a")
    f = symlab.function([a], a + a**10, mode="NUMPY")
    for stepper in (RewriteStepper(f), symlab.view(f.trace)):
        stepper.step = stepper.find(rule="elemwise_fusion", start=0)
        line = stepper.card["exclude"]
        assert line == 'symlab.function(inputs, outputs, mode=symlab.get_mode("NUMPY").excluding("elemwise_fusion"))'
        g = eval(line, {"symlab": symlab, "inputs": [a], "outputs": [a + a**10]})
        assert "elemwise_fusion" not in [s.rule for s in g.trace] and g.maker.mode.exclude == ("elemwise_fusion",)
    own = symlab.function([a], a + a**10, mode=symlab.get_mode("NUMPY").excluding("inplace"))  # a mode of one's own
    stepper = RewriteStepper(own)
    stepper.step = stepper.find(rule="elemwise_fusion", start=0)
    g = eval(stepper.card["exclude"], {"symlab": symlab, "inputs": [a], "outputs": [a + a**10]})
    assert [s.rule for s in g.trace] == ["constant_folding"] and g.maker.mode.exclude == ("inplace", "elemwise_fusion")
    assert g.maker.mode.linker == own.maker.mode.linker
    traced = RewriteStepper(rewrite_graph(a + a**10, exclude=("inplace",))[1])
    traced.step = 1
    line = traced.card["exclude"]
    assert line == 'rewrite_graph(outputs, exclude=("inplace", "constant_folding"))'
    _, again = eval(line, {"rewrite_graph": rewrite_graph, "outputs": [a + a**10]})
    assert "constant_folding" not in [s.rule for s in again]


def test_fusion_and_inplace_sources_show_the_function_that_does_the_work():
    a = st.dvector("a")
    stepper = RewriteStepper(symlab.function([a], (a + a**10) * 2.0, mode="NUMPY"))
    stepper.step = stepper.find(rule="elemwise_fusion", start=0)
    source = stepper.rule_source()
    assert "def apply" in source and "def fuse_elemwise" in source and "_grow_region" in source
    assert stepper.card["location"].startswith("symlab/rewriting/fusion.py:")
    stepper.step = stepper.find(rule="inplace_elemwise", start=0)
    source = stepper.rule_source()
    assert "def insert_inplace_elemwise" in source and "def try_inplace_elemwise" in source
    assert "/work" not in source and "hands its work to" in source


def test_check_says_when_every_value_compared_was_nan():
    x = st.dvector("x")
    stepper = RewriteStepper(st.sqrt(-(x * x) - 1.0) * 1.0)  # NaN for every x, before and after each step
    k = next(s.index for s in stepper.trace if s.accepted)
    stepper.step = k
    result = stepper.check()
    assert result["both_nan"] == result["compared"] == 9  # 3 trials of a length-3 vector
    assert "every value compared was NaN" in result["text"] and "9 values" in result["text"]
    assert result["nan_mismatch"] == 0
    # a graph with numbers says how many it compared
    y = st.dvector("y")
    fine = RewriteStepper(st.exp(y) * 1.0)
    fine.step = 1
    assert "over 9 values" in fine.check()["text"] and "NaN" not in fine.check()["text"]


def test_the_markdown_fallback_carries_the_step_as_a_diff():
    a = st.dvector("a")
    stepper = RewriteStepper(a + a**10)
    stepper.step = 2
    markdown = stepper.markdown()
    assert "```\n" + stepper.diff_text() + "\n```" in markdown and "as a text diff" in markdown
    stepper.step = 0
    assert "```" not in stepper.markdown()
