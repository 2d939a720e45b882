"""Seed 001's converters take the dict alone: inputs and outputs derived, the dict returned, implicit sinks."""

import numpy as np
import pytest

import symlab.tensor as st
from symlab.formats import (
    DagFormatError,
    dag_to_fgraph,
    dag_to_index_dag,
    dag_to_tuple_dag,
    dag_to_unidag,
    derive_io,
    fgraph_to_dag,
    index_dag_to_dag,
    index_dag_to_tuple_dag,
    tuple_dag_to_dag,
    tuple_dag_to_fgraph,
    tuple_dag_to_index_dag,
    unidag_to_dag,
)
from symlab.formats.dags import index
from symlab.graph import FunctionGraph

TDAG = {("c", "d"): {"fn": "op", "args": ("a", "b")}, ("e",): {"fn": "f", "args": ("c", "a")}}


def test_every_dict_converter_takes_the_dict_alone_and_returns_the_dict_alone():
    assert derive_io(TDAG, "tuple-dag") == (("a", "b"), ("d", "e"))
    idag = tuple_dag_to_index_dag(TDAG)  # seed 001's call
    assert idag == tuple_dag_to_index_dag(TDAG, ("a", "b"), ("d", "e"))[0]
    assert idag["c"] == {"fn": index, "args": (("c", "d"), 0)}
    assert index_dag_to_tuple_dag(idag) == TDAG
    dag = index_dag_to_dag(idag)
    assert dag["e"] == {"fn": "f", "args": ("c", "a")} and ("e",) not in dag
    assert dag == tuple_dag_to_dag(TDAG) and dag_to_tuple_dag(dag) == TDAG
    assert dag_to_index_dag(dag) == idag
    unidag = dag_to_unidag(dag)
    assert unidag == {("c", "d"): ("c", "d"), "c": ("e",), "d": (), "e": ()}
    assert unidag_to_dag(unidag, dag) == dag
    # given inputs and outputs, the complete triple comes back, as before
    assert tuple_dag_to_index_dag(TDAG, ("b", "a"), ("e",)) == (idag, ("b", "a"), ("e",))


def test_the_seeds_unidag_with_its_sink_left_implicit():
    jobs = {"a": {"fn": "f", "args": ("x",)}, "b": {"fn": "g", "args": ("a",)}, "c": {"fn": "h", "args": ("a", "b")}}
    dag = unidag_to_dag({"a": ("b", "c"), "b": ("c",)}, jobs)  # seed 001: {a: (b, c), b: (c,)}
    assert dag == jobs
    assert dag_to_unidag(dag) == {"a": ("b", "c"), "b": ("c",), "c": ()}


def test_unidag_errors_name_the_fix():
    with pytest.raises(DagFormatError, match=r"pass the job table too.*unidag_to_dag\(unidag, dag\)"):
        unidag_to_dag({"a": ("b",)})
    jobs = {"a": {"fn": "f", "args": ("x",)}, "b": {"fn": "g", "args": ("a",)}, "z": {"fn": "k", "args": ("x",)}}
    with pytest.raises(DagFormatError, match="the job table's z appear nowhere in the unidag"):
        unidag_to_dag({"a": ("b",)}, jobs)
    with pytest.raises(DagFormatError, match="the jobs q have no entry in the job table"):
        unidag_to_dag({"a": ("b", "q")}, {k: jobs[k] for k in "ab"})
    with pytest.raises(DagFormatError, match=r"the job a precedes \(\) in the unidag, but the job table makes it precede \(b\)"):
        unidag_to_dag({"a": (), "b": ()}, {k: jobs[k] for k in "ab"})


def test_fgraph_round_trip_with_the_dag_alone():
    x, y = st.dvectors("x", "y")
    fg = FunctionGraph([x, y], [st.exp(x) * y])
    dag, inputs, outputs = fgraph_to_dag(fg)
    back = dag_to_fgraph(dag)  # inputs and outputs derived
    assert [v.name for v in back.inputs] == [v.name for v in inputs]
    values = [np.array([0.5, 1.0]), np.array([2.0, 3.0])]
    expected = np.exp(values[0]) * values[1]
    np.testing.assert_allclose(back.outputs[0].eval(dict(zip(back.inputs, values))), expected)
    tdag = {("s",): {"fn": st.add, "args": (x, y)}}
    assert [v.name for v in tuple_dag_to_fgraph(tdag).outputs] == ["s"]
