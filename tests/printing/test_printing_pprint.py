"""Tests of symlab.printing.pprint (symlab.pprint)."""

import pytest

import symlab
import symlab.tensor as st
from symlab.graph.fg import FunctionGraph
from symlab.printing import pprint


@pytest.fixture
def xyz():
    return st.dmatrix("x"), st.dmatrix("y"), st.dmatrix("z")


def test_exported_names():
    assert symlab.pprint is pprint
    assert symlab.printing.pprint is pprint


def test_infix_is_fully_parenthesized(xyz):
    x, y, z = xyz
    assert pprint(x + y * z) == "(x + (y * z))"
    assert pprint((x + y) * z) == "((x + y) * z)"
    assert pprint(x - y / z) == "(x - (y / z))"
    assert pprint(x ** y) == "(x ** y)"
    assert pprint(-x) == "(-x)"
    assert pprint(x < y) == "(x < y)"


def test_function_form_for_ops_without_symbol(xyz):
    x, y, _ = xyz
    assert pprint(st.exp(x)) == "exp(x)"
    assert pprint(st.log(st.exp(x) + y)) == "log((exp(x) + y))"
    assert pprint(st.dot(x, y)) == "dot(x, y)"


def test_reductions_show_their_axes(xyz):
    x, _, _ = xyz
    assert pprint(x.sum()) == "sum(x)"
    assert pprint(x.sum(axis=0)) == "sum(x, axis=0)"
    t = st.TensorType("float64", (None, None, None))("t")
    assert pprint(t.max(axis=(0, 2))) == "max(t, axis=(0, 2))"


def test_broadcast_constants_print_as_the_constant(xyz):
    x, _, _ = xyz
    assert pprint(x * 2) == "(x * 2)"
    assert pprint(x + 1.5) == "(x + 1.5)"
    v = st.dvector("v")
    assert pprint(v + st.constant([1.0, 2.0])) == "(v + [1. 2.])"


def test_transpose_and_unnamed_leaves(xyz):
    x, _, _ = xyz
    assert pprint(x.T) == "x.T"
    anon = st.dvector()
    assert pprint(anon + 1) == "(<TensorType(float64, (?,))> + 1)"
    named_const = st.constant(3.0, name="three")
    assert pprint(st.dscalar("s") * named_const) == "(s * three)"


def test_lists_apply_and_fgraph(xyz):
    x, y, _ = xyz
    assert pprint([x + y, x * y]) == "(x + y)\n(x * y)"
    assert pprint((x + y).owner) == "(x + y)"
    fg = FunctionGraph([x, y], [x + y], clone=False)
    assert pprint(fg) == "(x + y)"
    with pytest.raises(TypeError):
        pprint(3)
    with pytest.raises(TypeError):
        pprint([x, 3])


def test_deep_graph_needs_no_recursion():
    x = st.dscalar("x")
    y = x
    for _ in range(5000):
        y = y + 1
    text = pprint(y, max_chars=10**6)
    assert text.startswith("(" * 5000 + "x + 1)")
    assert text.count("+ 1)") == 5000


def test_shared_subgraph_text_stays_bounded():
    x = st.dscalar("x")
    y = x
    for _ in range(200):  # 2**200 leaves if printed in full
        y = y + y
    text = pprint(y, max_chars=500)
    assert "…" in text
    assert len(text) <= 3 * 500
