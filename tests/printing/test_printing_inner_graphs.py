"""debugprint of ops with inner graphs: PyTensor's separate section, inline under the node, or none."""

from __future__ import annotations

import re

import numpy as np
import pytest
from inner_graph_helpers import Choose, Packaged, inner_fingerprint

import symlab
import symlab.scalar as ss
import symlab.tensor as st
from symlab.graph.fg import FunctionGraph
from symlab.printing import debugprint
from symlab.rewriting.fusion import fuse_elemwise
from symlab.scalar.composite import Composite
from symlab.tensor.elemwise import Elemwise


def _nested_graph():
    """``outer(x, y + 1) + outer(y, x)``, ``outer(u, w) = inner(u) * w``, ``inner(v) = exp(v)``."""
    v = st.dvector("v")
    inner = Packaged([v], [st.exp(v)], name="inner")
    u, w = st.dvectors("u", "w")
    outer = Packaged([u, w], [inner(u) * w], name="outer")
    x, y = st.dvectors("x", "y")
    return x, y, outer(x, y + 1) + outer(y, x)


def test_section_prints_each_op_once_with_the_ids_of_its_nodes_and_nested_graphs_after():
    _, _, z = _nested_graph()
    assert debugprint(z, file="str") == (
        "Elemwise{add,no_inplace} [id A] ''\n"
        " |outer [id B] ''\n"
        " | |x [id C]\n"
        " | |Elemwise{add,no_inplace} [id D] ''\n"
        " |   |y [id E]\n"
        " |   |DimShuffle{x} [id F] ''\n"
        " |     |TensorConstant{1} [id G]\n"
        " |outer [id H] ''\n"
        "   |y [id E]\n"
        "   |x [id C]\n"
        "\n"
        "Inner graphs:\n"
        "\n"
        "outer [id B, H]\n"
        " >Elemwise{mul,no_inplace} [id I] ''\n"
        " > |inner [id J] ''\n"
        " > | |u [id K]\n"
        " > |w [id L]\n"
        "\n"
        "inner [id J]\n"
        " >Elemwise{exp,no_inplace} [id M] ''\n"
        " > |v [id N]\n"
    )
    assert debugprint(z, file="str", inner="section") == debugprint(z, file="str", print_inner_graphs=True)


def test_inline_prints_each_inner_graph_under_its_node_wired_to_the_outer_inputs():
    _, _, z = _nested_graph()
    assert debugprint(z, file="str", inner="inline") == (
        "Elemwise{add,no_inplace} [id A] ''\n"
        " |outer [id B] ''\n"
        " | >Elemwise{mul,no_inplace} [id E] ''\n"
        " | > |inner [id F] ''\n"
        " | > | >Elemwise{exp,no_inplace} [id H] ''\n"
        " | > | > |v [id I] ← u [id G]\n"
        " | > | |u [id G] ← x [id C]\n"
        " | > |w [id J] ← Elemwise{add,no_inplace} [id D]\n"
        " | |x [id C]\n"
        " | |Elemwise{add,no_inplace} [id D] ''\n"  # reserved by the wiring, printed in full here
        " |   |y [id K]\n"
        " |   |DimShuffle{x} [id L] ''\n"
        " |     |TensorConstant{1} [id M]\n"
        " |outer [id N] ''\n"
        "   >Elemwise{mul,no_inplace} [id E] ''\n"  # the same inner graph: printed above, and this node's wiring
        "   >u [id G] ← y [id K]\n"
        "   >w [id J] ← x [id C]\n"
        "   |y [id K]\n"
        "   |x [id C]\n"
    )


def test_none_prints_the_outer_graph_only():
    _, _, z = _nested_graph()
    text = debugprint(z, file="str", inner="none")
    assert "Inner graphs" not in text and " >" not in text and "exp" not in text
    assert text == debugprint(z, file="str", print_inner_graphs=False)
    assert text == debugprint(z, file="str").split("\n\nInner graphs:")[0] + "\n"


def test_composite_section_is_unchanged_and_inline_shows_its_wiring():
    a = st.vector("a")
    fg = FunctionGraph([a], [a + a**10])
    fuse_elemwise(fg)
    assert debugprint(fg, file="str", inner="inline") == (
        "Elemwise{Composite{(i0 + (i0 ** 10))},no_inplace} [id A] ''\n"
        " >add [id C] ''\n"
        " > |i0 [id D] ← a [id B]\n"
        " > |pow [id E] ''\n"
        " >   |i0 [id D] ← a [id B]\n"
        " >   |Constant{10} [id F]\n"
        " |a [id B]\n"
    )


def test_two_nodes_of_equal_composites_share_one_entry():
    b = ss.float64("b")
    x, y = st.dvectors("x", "y")

    def fused(v):
        return Elemwise(Composite([b], [ss.exp(ss.neg(b))]))(v)

    text = debugprint(fused(x) * fused(y), file="str")
    assert text.count("\nElemwise{Composite{exp((-i0))},no_inplace} [id B, D]\n") == 1
    assert text.count(" >exp") == 1


def test_compiled_function_prints_inline_with_positions():
    x, y = st.dvectors("x", "y")
    f = symlab.function([x, y], st.exp(-(x * x)) * y, mode="NUMPY")
    text = debugprint(f, file="str", inner="inline")
    first = text.splitlines()[0]
    assert first.startswith("Elemwise{Composite{") and first.endswith("''   0")
    assert re.search(r"^ >[ |]*\|i0 \[id \w+\] ← x \[id B\]$", text, re.M)
    assert re.search(r"^ >[ |]*\|i1 \[id \w+\] ← y \[id C\]$", text, re.M)
    assert "Inner graphs" not in text
    assert f.dprint(file="str", inner="inline") == text
    assert symlab.dprint(f, file="str", inner="inline") == text


def test_ifelse_like_op_prints_as_an_ordinary_node_and_inline_marks_its_branches():
    x, y = st.dvectors("x", "y")
    c = st.dscalar("c")
    z = Choose()(c > 0, st.exp(x) * 2, st.log(y) + x)
    section = debugprint(z, file="str")
    assert "Inner graphs" not in section and "(then)" not in section
    inline = debugprint(z, file="str", inner="inline")
    marks = {line.split(" [id")[0].strip(" |"): line.rsplit(" ", 1)[-1] for line in inline.splitlines()}
    assert marks["Elemwise{mul,no_inplace}"] == "(then)" and marks["Elemwise{exp,no_inplace}"] == "(then)"
    assert marks["Elemwise{add,no_inplace}"] == "(else)" and marks["Elemwise{log,no_inplace}"] == "(else)"
    assert marks["Elemwise{gt,no_inplace}"] == "(condition)"  # it belongs to neither branch
    assert marks["x"] == "C]" or marks["x"].endswith("]")  # a leaf shared by both: unmarked
    assert inline.replace(" (then)", "").replace(" (else)", "").replace(" (condition)", "") == section


def test_bad_inner_options_are_named_errors():
    x = st.dvector("x")
    with pytest.raises(ValueError, match=r"inner must be one of \('section', 'inline', 'none'\), received 'below'"):
        debugprint(x, inner="below")
    with pytest.raises(ValueError, match="print_inner_graphs=False asks for no inner graph, but inner='inline'"):
        debugprint(x, inner="inline", print_inner_graphs=False)
    with pytest.raises(ValueError, match="print_inner_graphs must be True, False or 'auto', received 'yes'"):
        debugprint(x, print_inner_graphs="yes")


def test_printing_never_changes_an_inner_graph():
    x, y, z = _nested_graph()
    before = inner_fingerprint([z])
    for mode in ("section", "inline", "none"):
        debugprint(z, file="str", inner=mode, print_type=True, print_shape=True)
    symlab.printing.pprint(z)
    assert inner_fingerprint([z]) == before
    value = {x: np.array([0.5, 1.0]), y: np.array([2.0, -1.0])}
    expected = np.exp(value[x]) * (value[y] + 1) + np.exp(value[y]) * value[x]
    np.testing.assert_allclose(z.eval(value), expected)


def test_a_deep_nest_prints_inline_without_recursion():
    u = st.dvector("u")
    op = Packaged([u], [u + 1.0], name="level0")
    for k in range(1, 1200):
        u = st.dvector("u")
        op = Packaged([u], [op(u)], name=f"level{k}")
    x = st.dvector("x")
    lines = debugprint(op(x), file="str", inner="inline").splitlines()
    assert lines[0] == "level1199 [id A] ''"
    deepest = max(lines, key=lambda line: line.count(">"))
    assert deepest.count(">") == 1200 and deepest.endswith(">Elemwise{add,no_inplace} [id DOI] ''")
    wired = [line for line in lines if "|u [id" in line]
    assert len(wired) == 1200 and all("← u [id" in line for line in wired[:-1]) and "← x [id" in wired[-1]
    section = debugprint(op(x), file="str")
    assert section.count("\nlevel") == 1200  # each level once in the section


def test_hostile_names_in_inner_graphs_stay_literal():
    evil = ["<script>alert(1)</script>", "quote ' and \" ", "line\nbreak", "{braces} {0}", "arrow ← [id Z]"]
    u = st.dvector(evil[0])
    body = st.exp(u)
    body.name = evil[1]
    op = Packaged([u], [body * 2.0], name=evil[3])
    x = st.dvector(evil[2])
    y = op(x)
    y.name = evil[4]
    for mode in ("section", "inline"):
        text = debugprint(y, file="str", inner=mode)
        for name in evil:
            assert name in text, (mode, name)
    inline = debugprint(y, file="str", inner="inline")
    assert f"{evil[0]} [id " in inline and f"← {evil[2]} [id " in inline


# -- OpFromGraph and ifelse ---------------------------------------------------------------------
def _ofg_and_ifelse():
    from symlab.compile.builders import OpFromGraph
    from symlab.ifelse import ifelse

    a, b = st.dscalars("a", "b")
    axpy = OpFromGraph([a, b], [a + 2 * b], name="axpy")
    x, y = st.dscalars("x", "y")
    return x, y, axpy, ifelse(st.lt(x, y), axpy(x, st.exp(y)), st.log(y) * 3)


def test_opfromgraph_and_ifelse_in_the_section_layout():
    _, _, _, z = _ofg_and_ifelse()
    assert debugprint(z, file="str") == (
        "if{} [id A] ''\n"  # the ifelse: an ordinary node, its branches are its inputs
        " |Elemwise{lt,no_inplace} [id B] ''\n"
        " | |x [id C]\n"
        " | |y [id D]\n"
        " |axpy{inline=False} [id E] ''\n"
        " | |x [id C]\n"
        " | |Elemwise{exp,no_inplace} [id F] ''\n"
        " |   |y [id D]\n"
        " |Elemwise{mul,no_inplace} [id G] ''\n"
        "   |Elemwise{log,no_inplace} [id H] ''\n"
        "   | |y [id D]\n"
        "   |TensorConstant{3} [id I]\n"
        "\n"
        "Inner graphs:\n"
        "\n"
        "axpy{inline=False} [id E]\n"
        " >Elemwise{add,no_inplace} [id J] ''\n"
        " > |a [id K]\n"
        " > |Elemwise{mul,no_inplace} [id L] ''\n"
        " >   |TensorConstant{2} [id M]\n"
        " >   |b [id N]\n"
    )


def test_opfromgraph_and_ifelse_inline():
    _, _, _, z = _ofg_and_ifelse()
    assert debugprint(z, file="str", inner="inline") == (
        "if{} [id A] ''\n"
        " |Elemwise{lt,no_inplace} [id B] '' (condition)\n"
        " | |x [id C]\n"
        " | |y [id D]\n"
        " |axpy{inline=False} [id E] '' (then)\n"
        " | >Elemwise{add,no_inplace} [id G] ''\n"
        " | > |a [id H] ← x [id C]\n"
        " | > |Elemwise{mul,no_inplace} [id I] ''\n"
        " | >   |TensorConstant{2} [id J]\n"
        " | >   |b [id K] ← Elemwise{exp,no_inplace} [id F]\n"
        " | |x [id C]\n"
        " | |Elemwise{exp,no_inplace} [id F] '' (then)\n"
        " |   |y [id D]\n"
        " |Elemwise{mul,no_inplace} [id L] '' (else)\n"
        "   |Elemwise{log,no_inplace} [id M] '' (else)\n"
        "   | |y [id D]\n"
        "   |TensorConstant{3} [id N]\n"
    )


def test_nested_opfromgraph_sections_and_compiled_ifelse_branches():
    from symlab.compile.builders import OpFromGraph

    x, y, axpy, z = _ofg_and_ifelse()
    u = st.dscalar("u")
    twice = OpFromGraph([u], [axpy(u, u) * 2], name="twice")
    text = debugprint(twice(x) + z, file="str")
    section = text.split("\nInner graphs:\n")[1]
    headers = [line for line in section.splitlines() if line and not line.startswith(" >")]
    # axpy is applied in the outer graph (G) and in twice's inner graph (M): one entry, after twice's
    assert headers == ["twice{inline=False} [id B]", "axpy{inline=False} [id G, M]"]
    f = symlab.function([x, y], z, mode="NUMPY")
    inline = debugprint(f, file="str", inner="inline")
    branch_lines = [line for line in inline.splitlines() if line.endswith(("(then)", "(else)"))]
    assert [line.rsplit(" ", 1)[1] for line in branch_lines] == ["(then)", "(else)"]
    assert all(line.startswith(" |Elemwise{Composite{") for line in branch_lines)
    assert np.isclose(f(1.0, 2.0), 1.0 + 2 * np.exp(2.0)) and np.isclose(f(2.0, 1.0), 0.0)


def test_pprint_of_ifelse_and_opfromgraph():
    from symlab.compile.builders import OpFromGraph
    from symlab.ifelse import ifelse

    x, y, axpy, z = _ofg_and_ifelse()
    assert symlab.printing.pprint(z) == "ifelse((x < y), axpy(x, exp(y)), (log(y) * 3))"
    a = st.dscalar("a")
    anonymous = OpFromGraph([a], [a * a])
    first, second = ifelse(x > 0, [anonymous(x), y], [y, x])
    assert symlab.printing.pprint([first, second]) == (
        "ifelse((x > 0), (OpFromGraph(x), y), (y, x)).0\nifelse((x > 0), (OpFromGraph(x), y), (y, x)).1"
    )


def test_hostile_names_in_an_opfromgraph_stay_literal_in_every_text():
    from symlab.compile.builders import OpFromGraph
    from symlab.ifelse import ifelse

    evil = "<script>alert(1)</script>"
    a = st.dscalar(evil)
    inner = st.exp(a)
    inner.name = "quote ' \" {0} line\nbreak"
    op = OpFromGraph([a], [inner * 2], name=evil)
    x = st.dscalar("x")
    z = ifelse(x > 0, op(x), x, name=evil)
    for mode in ("section", "inline"):
        text = debugprint(z, file="str", inner=mode)
        assert f"{evil}{{inline=False}} [id" in text and f"{evil} [id" in text and inner.name in text
        assert f"if{{{evil}}} [id A]" in text
    assert symlab.printing.pprint(z) == f"ifelse((x > 0), {evil}(x), x)"
