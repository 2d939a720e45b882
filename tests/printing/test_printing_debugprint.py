"""Tests of symlab.printing.debugprint (symlab.dprint)."""

import io
import sys

import pytest

import symlab
import symlab.tensor as st
from symlab.printing import char_from_number, debugprint


def test_seed_000_sum_of_add_unoptimized():
    # Seed 000 prints the *compiled* graph of (v + 1).sum(); before any rewrite
    # the constant 1 is broadcast to a vector by a DimShuffle{x} (seed 003).
    v = st.vector()
    text = debugprint((v + 1).sum(), file="str")
    assert text == (
        "Sum{acc_dtype=float64} [id A] ''\n"
        " |Elemwise{add,no_inplace} [id B] ''\n"
        "   |<TensorType(float64, (?,))> [id C]\n"
        "   |DimShuffle{x} [id D] ''\n"
        "     |TensorConstant{1} [id E]\n"
    )


def test_dprint_alias_and_methods_print_to_stdout(capsys):
    x = st.dmatrix("x")
    y = st.dmatrix("y")
    z = x + y * 2
    assert symlab.dprint is debugprint
    expected = (
        "Elemwise{add,no_inplace} [id A] ''\n"
        " |x [id B]\n"
        " |Elemwise{mul,no_inplace} [id C] ''\n"
        "   |y [id D]\n"
        "   |DimShuffle{x,x} [id E] ''\n"
        "     |TensorConstant{2} [id F]\n"
    )
    assert symlab.dprint(z) is None  # printed, nothing to display twice in a notebook
    assert capsys.readouterr().out == expected
    z.dprint()
    assert capsys.readouterr().out == expected
    z.owner.dprint()
    assert capsys.readouterr().out == expected
    assert z.dprint(file="str") == expected


def test_shared_subgraph_printed_once_then_referred_to_by_id():
    x = st.dvector("x")
    y = st.dvector("y")
    s = x * y
    out = (s + s) / s
    text = debugprint(out, file="str")
    assert text == (
        "Elemwise{true_div,no_inplace} [id A] ''\n"
        " |Elemwise{add,no_inplace} [id B] ''\n"
        " | |Elemwise{mul,no_inplace} [id C] ''\n"
        " | | |x [id D]\n"
        " | | |y [id E]\n"
        " | |Elemwise{mul,no_inplace} [id C] ''\n"
        " |Elemwise{mul,no_inplace} [id C] ''\n"
    )
    assert text.count("|x [id D]") == 1


def test_list_of_outputs_shares_ids():
    x = st.dscalar("x")
    a = x + 1
    b = a * 3
    b.name = "b"
    text = debugprint([a, b], file="str")
    assert text == (
        "Elemwise{add,no_inplace} [id A] ''\n"
        " |x [id B]\n"
        " |TensorConstant{1} [id C]\n"
        "Elemwise{mul,no_inplace} [id D] 'b'\n"
        " |Elemwise{add,no_inplace} [id A] ''\n"
        " |TensorConstant{3} [id E]\n"
    )


def test_print_type():
    v = st.dvector("v")
    text = debugprint(v.sum(), file="str", print_type=True)
    assert text == (
        "Sum{acc_dtype=float64} [id A] <TensorType(float64, ())> ''\n"
        " |v [id B] <TensorType(float64, (?,))>\n"
    )


def test_ids_variants_depth_and_stop_on_name():
    x = st.dscalar("x")
    y = x * 2
    y.name = "y"
    z = y + x
    assert debugprint(z, file="str", ids="") == (
        "Elemwise{add,no_inplace} ''\n"
        " |Elemwise{mul,no_inplace} 'y'\n"
        " | |x\n"
        " | |TensorConstant{2}\n"
        " |x\n"
    )
    assert debugprint(z, file="str", ids="int").splitlines()[-1] == " |x [id 2]"
    id_lines = debugprint(z, file="str", ids="id").splitlines()
    assert id_lines[-1] == f" |x [id {id(x)}]"
    assert id_lines[0] == f"Elemwise{{add,no_inplace}} [id {id(z.owner)}] ''"
    assert debugprint(z, file="str", depth=1) == "Elemwise{add,no_inplace} [id A] ''\n"
    assert debugprint(z, file="str", depth=2).count("\n") == 3
    assert debugprint(z, file="str", stop_on_name=True) == (
        "Elemwise{add,no_inplace} [id A] ''\n"
        " |Elemwise{mul,no_inplace} [id B] 'y'\n"
        " |x [id C]\n"
    )
    with pytest.raises(ValueError, match="ids must be one of"):
        debugprint(z, ids="HEX")
    with pytest.raises(TypeError, match="expects a Variable"):
        debugprint(3)


def test_file_object_is_written_and_returned():
    buf = io.StringIO()
    x = st.dscalar("x")
    assert debugprint(x, file=buf) is buf
    assert buf.getvalue() == "x [id A]\n"


def test_char_from_number():
    assert [char_from_number(n) for n in (0, 1, 25, 26, 27, 51, 52, 26 * 26)] == [
        "A", "B", "Z", "BA", "BB", "BZ", "CA", "BAA",
    ]


def test_ids_past_z_go_to_ba():
    x = st.dscalar("x")
    y = x
    for _ in range(13):  # 13 adds: 13 nodes + x + 13 constants = 27 ids
        y = y + 1
    lines = debugprint(y, file="str").splitlines()
    assert lines[-1].endswith("[id BA]")


class _LineCounter:
    """A file-like sink that keeps only the line count and the last line."""

    def __init__(self):
        self.lines = 0
        self.first = None
        self.last = None
        self.x_line = None

    def write(self, text):
        self.lines += text.count("\n")
        if self.first is None:
            self.first = text
        self.last = text
        if "x [id" in text:
            self.x_line = text


def test_deep_chain_is_iterative():
    # The text of a chain is quadratic in its length (each level indents by 2),
    # so stream it to a sink instead of building a string.
    limit = sys.getrecursionlimit()
    x = st.dvector("x")
    y = x
    n = 5 * limit  # past the recursion limit: a recursive printer would overflow
    for _ in range(n):
        y = y + 1
    sink = _LineCounter()
    assert debugprint(y, file=sink) is sink
    assert sys.getrecursionlimit() == limit
    # per level: the add node, its DimShuffle{x} and TensorConstant{1}; then x
    assert sink.lines == 3 * n + 1
    assert sink.first == "Elemwise{add,no_inplace} [id A] ''\n"
    assert sink.x_line == " |" * n + "x [id " + char_from_number(n) + "]\n"
    # the last line is the constant under the top node's DimShuffle, with the last id
    assert sink.last == "   |TensorConstant{1} [id " + char_from_number(3 * n) + "]\n"


def test_deep_chain_depth_limit_prints_top_only():
    x = st.dscalar("x")
    y = x
    for _ in range(5_000):
        y = y + 1
    text = debugprint(y, file="str", depth=3)
    assert text == (
        "Elemwise{add,no_inplace} [id A] ''\n"
        " |Elemwise{add,no_inplace} [id B] ''\n"
        " | |Elemwise{add,no_inplace} [id C] ''\n"
        " | |TensorConstant{1} [id D]\n"
        " |TensorConstant{1} [id E]\n"
    )


def test_print_shape_destroy_and_view_maps():
    import symlab

    x = st.tensor("float64", shape=(2, None), name="x")
    text = debugprint(x.T * 2.0, file="str", print_shape=True, print_view_map=True)
    assert "Elemwise{mul,no_inplace} [id A] shape=(?, 2) ''\n" in text
    assert "DimShuffle{1,0} [id B] shape=(?, 2) '' -> view_map={0: [0]}" in text
    assert "x [id C] shape=(2, ?)" in text
    v = st.dvector("v")
    f = symlab.function([symlab.In(v, mutable=True)], st.exp(v) + 1.0, mode="NUMPY")
    destroyers = [n for n in f.maker.fgraph.toposort() if n.op.destroy_map]
    text = debugprint(f, file="str", print_destroy_map=True)
    assert destroyers and "destroy_map={0: [0]}" in text
    assert f.maker.fgraph.dprint(file="str").startswith("Elemwise{")
