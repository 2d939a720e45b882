"""FunctionGraph <-> the DAG formats: exact round trips on a corpus and on random graphs, names, errors."""

import pytest
from formats_corpus import compiled_corpus, corpus, corpus_fgraphs, random_graphs
from hypothesis import given, settings

import symlab
import symlab.tensor as T
from symlab.formats import (
    DagCycleError,
    DagFormatError,
    dag_to_fgraph,
    dag_to_index_dag,
    dag_to_unidag,
    fgraph_to_dag,
    fgraph_to_tuple_dag,
    index,
    index_dag_to_dag,
    index_dag_to_tuple_dag,
    insert_single_indices,
    remove_singleton_indices,
    tuple_dag_to_fgraph,
    tuple_dag_to_index_dag,
    unidag_to_dag,
)
from symlab.graph import FunctionGraph
from symlab.printing import debugprint

CORPUS = sorted(corpus())


def text(fg, **kwargs):
    return debugprint(fg, file="str", print_type=True, **kwargs)


@pytest.mark.parametrize("name", CORPUS)
def test_round_trips_print_the_same_debugprint(name):
    fg = corpus_fgraphs()[name]
    before = text(fg)
    back = dag_to_fgraph(*fgraph_to_dag(fg))
    assert text(back) == before
    assert text(tuple_dag_to_fgraph(*fgraph_to_tuple_dag(fg))) == before
    back.check_integrity()
    assert text(fg) == before  # the user's graph is untouched
    assert not set(back.variables) & set(fg.variables)


@pytest.mark.parametrize("name", CORPUS)
def test_round_trips_of_compiled_graphs(name):
    f, _ = compiled_corpus()[name]
    fg = f.maker.fgraph
    assert text(dag_to_fgraph(*fgraph_to_dag(f))) == text(fg)  # fused Composites and inplace ops included


@pytest.mark.parametrize("name", CORPUS)
def test_every_converter_pair_round_trips_on_the_corpus(name):
    fg = corpus_fgraphs()[name]
    check_all_pairs(fg)


def check_all_pairs(fg):
    tdag = fgraph_to_tuple_dag(fg)
    idag = tuple_dag_to_index_dag(*tdag)
    assert index_dag_to_tuple_dag(*idag) == tdag
    assert insert_single_indices(remove_singleton_indices(idag[0])) == idag[0]
    dag = index_dag_to_dag(*idag)
    assert dag_to_index_dag(*dag) == idag
    assert unidag_to_dag(*dag_to_unidag(*dag)) == dag
    # the dag's variables belong to a copy of the graph that prints as the original (names made unique)
    copy = FunctionGraph(list(tdag[1]), list(tdag[2]))
    assert text(tuple_dag_to_fgraph(*tdag)) == text(copy)
    assert text(dag_to_fgraph(*dag)) == text(copy)
    return copy


def test_seed000_dag():
    x, y, z = T.dmatrices("x", "y", "z")
    e = x + y * z
    dag, inputs, outputs = fgraph_to_dag(FunctionGraph([x, y, z], [e]))
    assert [str(v) for v in inputs] == ["x", "y", "z"]
    (mul_out, mul_entry), (add_out, add_entry) = dag.items()
    assert mul_entry == {"fn": T.mul, "args": (inputs[1], inputs[2])}
    assert add_entry == {"fn": T.add, "args": (inputs[0], mul_out)}
    assert outputs == (add_out,)
    assert inputs[0] is not x  # a copy


def test_multi_output_nodes_keep_their_tuple_and_index_entries():
    s = T.dvector("s")
    first, second = T.split(s, [2, 3])
    dag, inputs, outputs = fgraph_to_dag(FunctionGraph([s], [second, first * 2.0]))
    tuples = [k for k in dag if isinstance(k, tuple)]
    assert len(tuples) == 1 and len(tuples[0]) == 2
    a, b = tuples[0]
    assert dag[a] == {"fn": index, "args": (tuples[0], 0)}
    assert dag[b] == {"fn": index, "args": (tuples[0], 1)}
    assert outputs[0] is b


def test_an_input_that_is_also_an_output():
    x = T.dvector("x")
    dag, inputs, outputs = fgraph_to_dag(FunctionGraph([x], [x, x * 2.0]))
    assert outputs[0] is inputs[0]
    back = dag_to_fgraph(dag, inputs, outputs)
    assert back.outputs[0] is back.inputs[0]


def test_clashing_names_are_made_unique_in_the_copy_only():
    x1, x2 = T.dvector("x"), T.dvector("x")
    s = (x1 + x2).sum()
    s.name = "x"
    fg = FunctionGraph([x1, x2], [s])
    tdag, inputs, outputs = fgraph_to_tuple_dag(fg)
    assert [v.name for v in inputs] == ["x", "x_1"]
    assert outputs[0].name == "x_2"
    assert [v.name for v in fg.inputs] == ["x", "x"] and x2.name == "x" and s.name == "x"
    back = tuple_dag_to_fgraph(tdag, inputs, outputs)
    assert [v.name for v in back.inputs] == ["x", "x_1"]
    # the same graph, up to the names
    expected = text(fg).replace("x [id D]", "x_1 [id D]").replace("'x'", "'x_2'")
    assert text(back) == expected


def test_hand_written_dag_with_string_keys():
    x, y = T.dvectors("x", "y")
    dag = {"s": {"fn": T.add, "args": (x, y)}, "p": {"fn": T.mul, "args": ("s", x)}}
    fg = dag_to_fgraph(dag, (x, y), ("p",))
    assert fg.outputs[0].name == "p"
    assert fg.inputs[0] is not x and x.fgraph is None
    f = symlab.function(fg.inputs, fg.outputs[0], mode="FAST_COMPILE")
    assert f([1.0], [2.0]).tolist() == [3.0]


# -- errors ---------------------------------------------------------------------------------------------------


def test_fn_that_is_not_an_op():
    x = T.dvector("x")
    with pytest.raises(DagFormatError, match=r"the 'fn' of \(y,\) is 'add' \(str\), which is not a symlab Op"):
        tuple_dag_to_fgraph({("y",): {"fn": "add", "args": (x, x)}}, (x,), ("y",))


def test_errors_leave_no_partial_result():
    x = T.dvector("x")
    y = T.exp(x)
    dag, inputs, outputs = fgraph_to_dag(FunctionGraph([x], [y]))
    (key,) = dag
    bad = dict(dag)
    bad["z"] = {"fn": T.exp, "args": ("w",)}
    with pytest.raises(DagFormatError, match="the argument w of z is not an input"):
        dag_to_fgraph(bad, inputs, outputs)
    cyclic = {key: {"fn": T.mul, "args": (key, inputs[0])}}
    with pytest.raises(DagCycleError, match="cycle through"):
        dag_to_fgraph(cyclic, inputs, outputs)
    # nothing was built from the dag's variables: they belong to no graph and feed no node
    assert inputs[0].fgraph is None and key.fgraph is None
    with pytest.raises(DagFormatError, match="must be a symlab Variable"):
        tuple_dag_to_fgraph({}, ("a",), ("a",))
    with pytest.raises(TypeError, match="expected a FunctionGraph"):
        fgraph_to_dag([y])


def test_make_node_errors_name_the_entry():
    x = T.dvector("x")
    m = T.dmatrix("m")
    with pytest.raises(Exception) as info:
        dag_to_fgraph({"d": {"fn": T.Split(2, 0), "args": (x, m)}}, (x, m), ("d",))
    assert any("while building the entry (d,)" in note for note in getattr(info.value, "__notes__", []))


# -- property tests: random symlab graphs ------------------------------------------------------------------------


@settings(max_examples=50, deadline=None)
@given(random_graphs())
def test_every_converter_pair_round_trips_on_random_graphs(graph):
    inputs, outputs, _ = graph
    fg = FunctionGraph(inputs, outputs)
    copy = check_all_pairs(fg)
    names = [v.name for v in copy.variables if v.name is not None]
    assert len(names) == len(set(names))
    if len({v.name for v in inputs}) == len(inputs):
        assert text(copy) == text(fg)
