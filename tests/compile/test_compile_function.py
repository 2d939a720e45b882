"""symlab.function: inputs, outputs, In/Out, givens, errors, seed 000, the user graph left alone."""

import numpy as np
import pytest

import symlab
import symlab.tensor as st
from symlab.compile import Function, Mode, UnusedInputError, get_mode
from symlab.graph.evaluate import MissingInputError
from symlab.printing import debugprint


def test_seed_000_clients_of_the_compiled_graph():
    v = st.vector()
    f = symlab.function([v], (v + 1).sum())
    text = debugprint(f, file="str")
    lines = text.splitlines()
    assert lines[0] == "Sum{acc_dtype=float64} [id A] ''   1"
    assert lines[1] == " |Elemwise{add,no_inplace} [id B] ''   0"
    assert lines[2] == "   |<TensorType(float64, (?,))> [id C]"
    assert lines[3].startswith("   |TensorConstant{(1,) of 1") and lines[3].endswith("[id D]")
    # Sorted list of all nodes in the compiled graph.
    topo = f.maker.fgraph.toposort()
    assert [str(n.op) for n in topo] == ["Elemwise{add,no_inplace}", "Sum{acc_dtype=float64}"]
    assert topo[0].outputs[0].clients == [(topo[-1], 0)]
    assert str(topo[0].outputs[0].clients) == "[(Sum{acc_dtype=float64}(Elemwise{add,no_inplace}.0), 0)]"
    assert topo[1].outputs[0].clients == [("output", 0)]
    assert topo[-1].outputs[0].clients == [("output", 0)]
    # An internal variable
    var = topo[0].outputs[0]
    client = var.clients[0]
    assert client == (topo[1], 0)
    assert type(client[0]) is symlab.graph.Apply
    assert client[0].inputs[client[1]] is var
    # An output of the graph
    var = topo[1].outputs[0]
    client = var.clients[0]
    assert client == ("output", 0)
    assert f.maker.fgraph.outputs[client[1]] is var
    assert float(f(np.array([1.0, 2.0]))) == 5.0


def test_seed_000_a_constant_among_the_inputs_raises():
    c = st.constant(2.0)
    x = st.dscalar("x")
    with pytest.raises(TypeError, match=r"input 1 \(TensorConstant\{2.0\}\) is a Constant"):
        symlab.function([x, c], x * c)


@pytest.mark.parametrize("mode", ["NUMPY", "FAST_COMPILE", "NUMBA", "DEBUG", "NanGuard"])
def test_the_user_graph_is_not_modified(mode):
    x, y = st.dmatrix("x"), st.dmatrix("y")
    out = (st.exp(x) * 2.0 + y * (st.constant(1.0) + 2.0)).sum(axis=0)
    before = debugprint(out, file="str")
    nodes_before = [(v, v.owner, list(v.owner.inputs) if v.owner else None) for v in symlab.graph.ancestors([out])]
    f = symlab.function([x, y], out, mode=mode)
    f(np.ones((2, 2)), np.ones((2, 2)))
    assert debugprint(out, file="str") == before
    assert [(v, v.owner, list(v.owner.inputs) if v.owner else None) for v in symlab.graph.ancestors([out])] == nodes_before
    assert all(v.fgraph is None for v in symlab.graph.ancestors([out]))
    assert f.maker.fgraph.outputs[0] is not out


def test_outputs_single_list_dict_and_none():
    a, b = st.dscalars("a", "b")
    assert float(symlab.function([a], a * 2)(3.0)) == 6.0
    assert [float(r) for r in symlab.function([a, b], [a + b, a - b])(3.0, 1.0)] == [4.0, 2.0]
    d = symlab.function([a, b], {"s": a + b, "p": a * b})(3.0, 2.0)
    assert list(d) == ["s", "p"] and float(d["p"]) == 6.0
    assert symlab.function([a], [], on_unused_input="ignore")(1.0) == []
    w = symlab.shared(0.0, "w")
    f = symlab.function([a], None, updates={w: w + a})
    assert f(2.0) == [] and float(w.get_value()) == 2.0


def test_inputs_by_keyword_and_defaults():
    x, y = st.dscalars("x", "y")
    f = symlab.function([x, symlab.In(y, value=10.0)], x - y)
    assert float(f(1.0)) == -9.0
    assert float(f(1.0, 2.0)) == -1.0
    assert float(f(y=1.0, x=5.0)) == 4.0
    assert [i.name for i in f.inputs] == ["x", "y"]
    g = symlab.function([symlab.In(x, name="first")], x + 1)
    assert float(g(first=1.0)) == 2.0
    with pytest.raises(TypeError, match=r"missing a value for input 0 \('x'\)"):
        f(y=1.0)
    with pytest.raises(TypeError, match="takes 2 inputs"):
        f(1.0, 2.0, 3.0)
    with pytest.raises(TypeError, match="no input is named 'z'"):
        f(1.0, z=2.0)
    with pytest.raises(TypeError, match="given twice"):
        f(1.0, x=2.0)
    with pytest.raises(TypeError, match=r"bad default value for input 1 \('y'\)"):
        symlab.function([x, symlab.In(y, value="abc")], x + y)


def test_bad_inputs_are_refused_with_position_name_type_and_value():
    x, y = st.dmatrix("x"), st.dvector("y")
    f = symlab.function([x, y], x + y)
    with pytest.raises(TypeError) as info:
        f(np.ones((2, 2)), np.ones((2, 2)))
    message = str(info.value)
    assert "input 1 ('y')" in message
    assert "TensorType(float64, (?,))" in message
    assert "dtype float64, ndim 2 and shape (2, 2)" in message
    i = st.ivector("i")
    g = symlab.function([i], i * 2)
    with pytest.raises(TypeError) as info:
        g(np.array([1.5, 2.0]))
    assert "input 0 ('i')" in str(info.value) and "TensorType(int32, (?,))" in str(info.value)
    assert "dtype float64" in str(info.value)
    with pytest.raises(TypeError, match=r"input 0 \('i'\).*received a str"):
        g("abc")
    # a lossless conversion is accepted; a lossy one only with allow_input_downcast
    np.testing.assert_array_equal(g(np.array([1, 2], dtype="int8")), [2, 4])
    h = symlab.function([i], i * 2, allow_input_downcast=True)
    np.testing.assert_array_equal(h(np.array([1.0, 2.0])), [2, 4])
    s = symlab.function([symlab.In(y, strict=True)], y * 2)
    with pytest.raises(TypeError, match=r"input 0 \('y'\).*strict"):
        s([1.0, 2.0])


def test_static_shapes_are_checked():
    x = st.TensorType("float64", (2, None))("x")
    f = symlab.function([x], x.sum())
    assert float(f(np.ones((2, 3)))) == 6.0
    with pytest.raises(TypeError, match=r"input 0 \('x'\).*shape \(3, 3\)"):
        f(np.ones((3, 3)))


def test_compile_errors_name_the_culprit():
    x, y = st.dscalars("x", "y")
    with pytest.raises(MissingInputError, match=r"output 0 needs y"):
        symlab.function([x], x + y)
    with pytest.raises(UnusedInputError, match=r"input 1 \(y\)"):
        symlab.function([x, y], x * 2)
    with pytest.warns(UserWarning, match="input 1"):
        symlab.function([x, y], x * 2, on_unused_input="warn")
    assert float(symlab.function([x, y], x * 2, on_unused_input="ignore")(1.0, 5.0)) == 2.0
    with pytest.raises(TypeError, match="computed by"):
        symlab.function([x + 1], x)
    with pytest.raises(ValueError, match="same variable as input 0"):
        symlab.function([x, x], x)
    w = symlab.shared(1.0, "w")
    with pytest.raises(TypeError, match="shared variable"):
        symlab.function([w], w * 2)
    with pytest.raises(TypeError, match="only shared variables can be updated"):
        symlab.function([x], x, updates={y: x})
    with pytest.raises(TypeError, match="update 0"):
        symlab.function([x], x, updates={w: st.dvector("z")})
    with pytest.raises(TypeError, match="must be a symbolic Variable"):
        symlab.function([x], [x, 3])
    with pytest.raises(ValueError, match="unknown mode"):
        symlab.function([x], x, mode="FAST")


def test_givens_replace_before_compiling():
    x, y, z = st.dscalars("x", "y", "z")
    out = x * y
    f = symlab.function([x, z], out, givens={y: z + 1.0})
    assert float(f(2.0, 3.0)) == 8.0
    assert y.owner is None and out.owner.inputs[1] is y  # user graph untouched
    w = symlab.shared(5.0, "w")
    g = symlab.function([x], x * w, givens=[(w, x)])
    assert float(g(3.0)) == 9.0
    with pytest.raises(TypeError, match="givens entry 0"):
        symlab.function([x], x * y, givens={y: st.dvector("v")})


def test_out_borrow_and_alias_copies():
    x = st.dvector("x")
    value = np.arange(3.0)
    f = symlab.function([x], x)
    assert not np.shares_memory(f(value), value)
    g = symlab.function([x], symlab.Out(x, borrow=True))
    assert g(value) is value or np.shares_memory(g(value), value)
    h = symlab.function([x], [x * 2.0, x * 2.0])
    a, b = h(value)
    assert not np.shares_memory(a, b)
    c = symlab.function([x], st.constant(np.ones(2)) + 0 * x[:2], mode="FAST_COMPILE")(value)
    c[0] = 7.0  # writable


def test_protected_and_mutable_inputs():
    x = st.dvector("x")
    value = np.ones(3)
    f = symlab.function([x], st.exp(x) * 2.0 + x, mode="NUMPY")
    f(value)
    np.testing.assert_array_equal(value, np.ones(3))
    g = symlab.function([symlab.In(x, mutable=True)], (x * 2.0 + 1.0) * 3.0, mode="NUMPY")
    mutable_value = np.ones(3)
    result = g(mutable_value)
    np.testing.assert_array_equal(result, [9.0, 9.0, 9.0])
    assert any(s.rule == "inplace_elemwise" and s.accepted for s in g.trace)
    np.testing.assert_array_equal(mutable_value, [9.0, 9.0, 9.0])  # a mutable input may be overwritten
    assert not np.shares_memory(result, mutable_value)
    np.testing.assert_array_equal(g(np.ones(3)), [9.0, 9.0, 9.0])


def test_node_errors_name_the_node():
    x, y = st.dvectors("x", "y")
    f = symlab.function([x, y], (x + y) * 2.0, mode="NUMPY")
    with pytest.raises(ValueError) as info:
        f(np.ones(2), np.ones(3))
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "raised by node 0" in notes and "input 1 (y" in notes and "shape (3,)" in notes


def test_modes_and_function_object():
    x = st.dvector("x")
    out = (st.exp(x) * 2.0).sum()
    for name in ["NUMBA", "FAST_COMPILE", "NUMPY", "DEBUG", "NanGuard"]:
        f = symlab.function([x], out, mode=name)
        assert isinstance(f, Function) and f.maker.mode is get_mode(name)
        assert float(f([0.0])) == 2.0
    assert get_mode().name == "NUMBA" and get_mode("NUMBA").linker == "numba"
    fast = symlab.function([x], out, mode="FAST_COMPILE")
    full = symlab.function([x], out, mode="NUMPY")
    assert not {s.rule for s in fast.trace} & {"elemwise_fusion", "inplace_elemwise"}
    assert len(full.trace) >= len(fast.trace)
    custom = symlab.compile.Mode(linker="numpy", include=("fast_run",)).excluding("elemwise_fusion")
    assert "elemwise_fusion" not in {s.rule for s in symlab.function([x], out, mode=custom).trace}
    assert isinstance(custom, Mode) and custom.exclude == ("elemwise_fusion",)
    assert "mode=NUMPY" in repr(full)
    assert full.dprint(file="str").startswith("Sum{acc_dtype=float64} [id A] ''   1")
    with pytest.raises(ValueError, match="unknown linker"):
        symlab.function([x], out, mode=Mode(linker="nope"))


def test_import_symlab_is_lazy_about_compilation():
    import subprocess
    import sys

    code = (
        "import sys, symlab; assert 'symlab.compile' not in sys.modules and 'symlab.formats' not in sys.modules; "
        "from symlab import function, shared; assert 'symlab.compile' in sys.modules; "
        "assert symlab.function is function and 'formats' in dir(symlab)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_plain_call_path_converts_checks_and_reports_like_the_full_path():
    """Calls without keywords, shared variables, updates or a profile take a generated shortcut."""
    x, y = st.dvectors("x", "y")
    col = st.TensorType("float64", (2, 1))("col")
    single = symlab.function([x, y], x + y)
    several = symlab.function([x, col], [x * 2.0, col + 1.0])
    named = symlab.function([x, y], {"sum": x + y, "diff": x - y})
    assert single._plain_call is not None and several._plain_call is not None
    np.testing.assert_array_equal(single(np.arange(3.0), [1, 2, 3]), [1.0, 3.0, 5.0])  # a list is converted
    got = several(np.ones(2), np.zeros((2, 1)))
    assert isinstance(got, list) and got[1].shape == (2, 1)
    assert set(named(np.ones(2), np.ones(2))) == {"sum", "diff"}
    with pytest.raises(TypeError, match=r"bad value for input 1 \('col'\)"):
        several(np.ones(2), np.zeros((3, 1)))  # the static shape (2, 1) is checked
    with pytest.raises(TypeError, match="bad value for input 0"):
        single(np.ones(2, dtype="int64").astype(object), np.ones(2))
    with pytest.raises(TypeError, match=r"missing a value for input 1 \('y'\)"):
        single(np.ones(2))
    with pytest.raises(TypeError, match="takes 2 inputs"):
        single(np.ones(2), np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="do not match"):  # raised while computing: not hidden, not repeated
        single(np.ones(2), np.ones(3))
    np.testing.assert_array_equal(single(x=np.ones(2), y=np.ones(2)), [2.0, 2.0])  # keywords: the full path


def test_an_error_raised_while_computing_says_what_the_call_gave():
    x, y = st.dvectors("x", "y")
    for mode in ("NUMBA", "NUMPY"):
        f = symlab.function([x, y], (x + y) * 2.0, mode=mode)
        with pytest.raises(ValueError, match="do not match in dimension 0") as info:
            f(np.ones(3), np.ones(4))
        notes = "\n".join(info.value.__notes__)
        assert "shape (3,)" in notes and "shape (4,)" in notes and notes.count("shape (4,)") == 1
