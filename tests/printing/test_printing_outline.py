"""symlab.printing.outline: debugprint's tree as rows keyed like the pictures (the views' text twin)."""

import re
import sys
from pathlib import Path

import pytest

import symlab
import symlab.tensor as st
from symlab.graph.fg import FunctionGraph
from symlab.printing import debugprint
from symlab.printing.debugprint import debug_lines
from symlab.printing.folding import toposort
from symlab.printing.model import build_model
from symlab.printing.outline import outline, outline_markdown, outline_pairs, outline_text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import real_size  # noqa: E402


def small_graph():
    """``(h * h + x)`` with ``h = exp(x)`` named: a shared, named node and a leaf met twice."""
    x = st.dvector("x")
    h = st.exp(x)
    h.name = "h"
    return FunctionGraph([x], [h * h + x])


def test_rows_of_a_small_graph_are_debugprints_tree_with_the_graphs_keys():
    fg = small_graph()
    assert outline(fg) == [
        {"key": "a5", "depth": 0, "text": "Elemwise{add,no_inplace} [a5]", "repeat": False, "also": ["v6"]},
        {"key": "a3", "depth": 1, "text": "Elemwise{mul,no_inplace} [a3]", "repeat": False, "also": ["v4"]},
        {"key": "a1", "depth": 2, "text": "h = Elemwise{exp,no_inplace} [a1]", "repeat": False, "also": ["v2"]},
        {"key": "v0", "depth": 3, "text": "x [v0]", "repeat": False, "also": []},
        {"key": "a1", "depth": 2, "text": "h = Elemwise{exp,no_inplace} [a1] …", "repeat": True, "also": ["v2"]},
        {"key": "v0", "depth": 1, "text": "x [v0]", "repeat": True, "also": []},
    ]
    # the same lines, in the same order and at the same depths, as debugprint writes
    lines = debugprint(fg, file="str").splitlines()
    rows = outline(fg)
    assert len(lines) == len(rows)
    for line, row in zip(lines, rows):
        assert (len(line) - len(line.lstrip(" |"))) // 2 == row["depth"]
        assert line.lstrip(" |").split(" [id ")[0] in row["text"]


def test_the_dataflow_style_keys_rows_by_variable_and_the_others_by_node():
    fg = small_graph()
    h = fg.outputs[0].owner.inputs[0].owner.inputs[0]
    by_node = outline(fg, "compact")
    by_var = outline(fg, "dataflow")
    assert [r["key"] for r in by_var] == ["v6", "v4", "v2", "v0", "v2", "v0"]
    assert [r["also"] for r in by_var][:3] == [["a5"], ["a3"], ["a1"]]
    assert outline(fg, "structure") == by_node
    assert by_var[2]["text"] == "h = Elemwise{exp,no_inplace} [v2]" and fg.key(h) == "v2"
    with pytest.raises(ValueError, match=r"outline: style must be one of .*received 'fancy'"):
        outline(fg, "fancy")
    with pytest.raises(TypeError, match="outline expects a Variable.*received int"):
        outline(3)
    with pytest.raises(TypeError, match="outline expects .*received Elemwise"):
        outline(h.owner.op)


def test_repeated_subtrees_are_written_once_and_referenced():
    x, y = st.dvector("x"), st.dvector("y")
    s = st.exp(x * y)
    out = (s + s) / (s * 2)
    rows = outline(out)
    exp_key = rows[2]["key"]
    first = [i for i, r in enumerate(rows) if r["key"] == exp_key and not r["repeat"]]
    again = [i for i, r in enumerate(rows) if r["key"] == exp_key and r["repeat"]]
    assert len(first) == 1 and len(again) == 2
    for i in again:  # a repeat has no rows under it: its inputs were written at its first row
        assert rows[i]["text"].endswith(" …")
        assert i + 1 == len(rows) or rows[i + 1]["depth"] <= rows[i]["depth"]
    # the first row of the node has its whole sub-tree under it: mul, then x and y
    i = first[0]
    assert [r["depth"] - rows[i]["depth"] for r in rows[i + 1 : i + 4]] == [1, 2, 2]
    # leaves met again are written again (they have nothing under them), marked as met before
    assert [r["repeat"] for r in rows if r["text"].startswith("x [")] == [False]


@pytest.mark.parametrize("style", ["compact", "dataflow", "structure"])
def test_keys_are_the_keys_of_the_models_pictures(style):
    inputs, outputs = real_size.mlp_gradient()
    subjects = [outputs, FunctionGraph(inputs, outputs), symlab.function(inputs, outputs, mode="NUMPY")]
    for obj in subjects:
        model = build_model(obj, style, max_nodes=10**9)
        for row, var in outline_pairs(obj, style):
            drawn = var if var.owner is None or style == "dataflow" else var.owner
            assert row["key"] == model.key_of(drawn)
            assert model.obj(row["key"]) is drawn
            assert row["key"] in model.nodes  # a node of the picture: the click on either selects the same
            other = var.owner if drawn is var else var
            assert row["also"] == ([] if var.owner is None else [model.key_of(other)])


def test_named_variables_are_shown_by_name_and_every_row_is_one_line():
    inputs, outputs = real_size.mlp_gradient()
    texts = [r["text"] for r in outline(outputs)]
    for name in ("loss", "hidden", "logits", "probs", "l2"):
        assert any(t.startswith(f"{name} = ") for t in texts), name
    assert any(t.startswith("W1 [") for t in texts)
    odd = st.dvector("line one\nline two")
    rows = outline(st.exp(odd))
    assert rows[1]["text"] == "line one line two [v0]" and "\n" not in outline_text(rows).split("\n", 1)[1]


def test_inputs_that_no_output_uses_close_the_outline():
    x, unused = st.dvector("x"), st.dvector("unused")
    fg = FunctionGraph([x, unused], [st.exp(x)])
    rows = outline(fg)
    assert rows[-1] == {"key": fg.key(fg.inputs[1]), "depth": 0, "text": "unused [v1]", "repeat": False, "also": []}
    assert len(rows) == 3


def test_the_1000_node_graph_gives_one_row_per_visit_with_repeats_marked():
    inputs, outputs = real_size.layered_graph(1000)
    order, leaves = toposort(outputs)
    assert len(order) >= 1000
    rows = outline(outputs)  # its speed is measured in benchmarks/bench_views.py, not asserted here
    # every output, and every input of every node written in full, is one row (a visit)
    assert len(rows) == len(outputs) + sum(len(n.inputs) for n in order)
    keys = build_model(outputs, "compact", max_nodes=10**9)
    node_keys = {keys.key_of(n) for n in order}
    firsts = [r["key"] for r in rows if not r["repeat"] and r["key"] in node_keys]
    assert sorted(firsts) == sorted(node_keys)  # each node written in full exactly once
    repeats = [r for r in rows if r["repeat"] and r["key"] in node_keys]
    assert repeats and all(r["text"].endswith(" …") for r in repeats)
    assert len(firsts) + len(repeats) + sum(1 for r in rows if r["key"] not in node_keys) == len(rows)


def test_a_deep_chain_is_outlined_without_recursion():
    x = st.dscalar("x")
    y = x
    for _ in range(3000):
        y = st.sin(y)
    rows = outline(y)
    assert len(rows) == 3001 and rows[-1]["depth"] == 3000 and rows[-1]["text"] == "x [v0]"


def test_outline_text_marks_the_selection_and_the_marked_rows():
    fg = small_graph()
    rows = outline(fg)
    text = outline_text(rows, selected="a3", marks={"a3": ["selected"], "a1": ["input"], "a5": ["client"]})
    assert text.splitlines() == [
        "* Elemwise{add,no_inplace} [a5]  (client)",
        ">   Elemwise{mul,no_inplace} [a3]",
        "*     h = Elemwise{exp,no_inplace} [a1]  (input)",
        "        x [v0]",
        "*     h = Elemwise{exp,no_inplace} [a1] …  (input)",
        "    x [v0]",
    ]
    # a row is selected under its "also" key too (a compact picture's edge carries the variable v4)
    assert outline_text(rows, selected="v4").splitlines()[1].startswith(">")
    assert outline_text(rows) == "\n".join("  " + "  " * r["depth"] + r["text"] for r in rows)


def test_outline_markdown_is_a_capped_code_block_no_name_can_leave():
    x = st.dvector("x")
    y = x
    for _ in range(50):
        y = st.exp(y)
    y.name = "tick ``` <b>y</b>"  # the top row: in the lines shown
    rows = outline(y)
    md = outline_markdown(rows, limit=40)
    fence, body, rest = re.fullmatch(r"(`{4,})\n(.*)\n\1\n(.*)", md, flags=re.S).groups()
    assert len(fence) == 4  # longer than the name's run of three
    assert len(body.splitlines()) == 40 and rest == "... 11 more lines"
    assert body.startswith("  tick ``` <b>y</b> = Elemwise{exp,no_inplace}")
    assert outline_markdown(rows[:3]).count("\n") == 4  # fence, 3 lines, fence: nothing left out


def test_debug_lines_rebuild_debugprint_byte_for_byte():
    inputs, outputs = real_size.mlp_gradient()
    from symlab.printing.debugprint import _Ids

    for options in ({}, {"print_type": True, "print_shape": True}, {"stop_on_name": True}, {"depth": 3}):
        text = "".join(line.prefix + line.text + "\n" for line in debug_lines(outputs, _Ids("CHAR"), **options))
        assert text == debugprint(outputs, file="str", **options)
