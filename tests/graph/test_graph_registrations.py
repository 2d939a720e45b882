"""What the graph layer reaches through registration: the text printer, the evaluator, the Type class, the
graph holders of the layers above, the live graphs and the converter of vectorize_graph's values.

The graph package imports none of the modules built on it: each of those registers what the graph objects
call (``x.dprint()``, ``x.eval()``, ...). These tests check that the calls go through the registration,
print and compute what they did, and say clearly what is missing when nothing is registered.
"""

import io
from contextlib import redirect_stdout

import numpy as np
import pytest

import symlab
import symlab.tensor as st
from symlab.graph import basic, display
from symlab.graph.fg import FunctionGraph
from symlab.graph.holders import graphs_holding, live_graphs
from symlab.graph.replace import vectorize_graph
from symlab.printing import debugprint
from symlab.rewriting import rewrite_graph


def _printed(call):
    out = io.StringIO()
    with redirect_stdout(out):
        call()
    return out.getvalue()


def test_dprint_of_a_variable_a_node_a_graph_and_a_function_prints_what_debugprint_prints():
    x = st.dvector("x")
    y = st.exp(x) * 2
    fg = FunctionGraph([x], [y])
    f = symlab.function([x], y, mode="FAST_COMPILE")
    assert display.text_printer() is debugprint
    for obj in (y, y.owner, fg, f):
        assert _printed(obj.dprint) == _printed(lambda obj=obj: debugprint(obj))
    assert _printed(y.dprint).splitlines()[0] == "Elemwise{mul,no_inplace} [id A] ''"


def test_dprint_options_reach_the_printer():
    x = st.dscalar("x")
    text = (x + 1).dprint(file="str", ids="")
    assert text == debugprint(x + 1, file="str", ids="")


def test_dprint_without_a_registered_printer_says_what_to_import():
    x = st.dscalar("x")
    printer = display.text_printer()
    display.register_text_printer(None)
    try:
        for obj in (x, (x + 1).owner, FunctionGraph([x], [x + 1])):
            with pytest.raises(RuntimeError, match="no text printer is registered: import symlab.printing"):
                obj.dprint()
    finally:
        display.register_text_printer(printer)
    assert _printed((x + 1).dprint).startswith("Elemwise{add,no_inplace}")


def test_register_text_printer_refuses_what_cannot_be_called():
    with pytest.raises(TypeError, match="expects a callable or None, received int"):
        display.register_text_printer(3)


def test_eval_goes_through_the_registered_evaluator():
    x = st.dscalar("x")
    calls = []
    evaluator = basic._evaluator

    def spy(outputs, values):
        calls.append((list(outputs), dict(values)))
        return evaluator(outputs, values)

    basic.register_evaluator(spy)
    try:
        assert float((x * 2 + 1).eval({x: 3.0})) == 7.0
    finally:
        basic.register_evaluator(evaluator)
    assert len(calls) == 1 and calls[0][1] == {x: 3.0}


def test_eval_without_an_evaluator_says_what_to_import():
    x = st.dscalar("x")
    evaluator = basic._evaluator
    basic._evaluator = None
    try:
        with pytest.raises(RuntimeError, match="no evaluator is registered: import symlab.graph.evaluate"):
            x.eval({x: 1.0})
    finally:
        basic.register_evaluator(evaluator)
    with pytest.raises(TypeError, match="expects a callable, received int"):
        basic.register_evaluator(1)


def test_variables_accept_exactly_the_registered_type_class():
    from symlab.graph.type import Type

    assert basic._type_class is Type
    with pytest.raises(TypeError, match="expects a symlab Type instance, received 'float64'"):
        basic.Variable(type="float64")
    with pytest.raises(TypeError, match="expects a symlab Type instance"):
        basic.Variable(type=st.TensorType)  # the class, not an instance
    with pytest.raises(TypeError, match="expects a class, received str"):
        basic.register_type_class("Type")


def test_the_holders_of_a_graph_register_their_kind():
    x = st.dscalar("x")
    _, trace = rewrite_graph(x * 1)
    f = symlab.function([x], x + 1, mode="FAST_COMPILE")
    assert display.graph_holder_kind(f) == "function"
    assert display.graph_holder_kind(trace) == "trace"
    assert display.graph_holder_kind(trace.cursor()) == "cursor"
    assert display.graph_holder_kind(x) is None and display.graph_holder_kind(object()) is None

    class Traced(type(trace)):  # a subclass is drawn as its base is
        pass

    assert display.graph_holder_kind(Traced.__new__(Traced)) == "trace"
    with pytest.raises(TypeError, match="expects a class, received str"):
        display.register_graph_holder("Function", "function")


def test_clients_and_fgraph_ask_the_live_graphs():
    x = st.dvector("x")
    y = x + 1
    assert graphs_holding(y) == [] and y.fgraph is None
    fg = FunctionGraph([x], [y], clone=False)
    assert fg in live_graphs() and graphs_holding(y) == [fg]
    assert y.fgraph is fg and y.owner.fgraph is fg and y.clients == [("output", 0)]
    del fg
    import gc

    gc.collect()
    assert graphs_holding(y) == []


def test_vectorize_graph_turns_an_array_replacement_into_a_constant_with_the_registered_converter():
    x = st.dvector("x")
    batched = vectorize_graph(x * 2, {x: np.arange(6.0).reshape(2, 3)})
    assert isinstance(batched.owner.inputs[0], st.TensorConstant)
    np.testing.assert_array_equal(batched.eval(), np.arange(6.0).reshape(2, 3) * 2)
