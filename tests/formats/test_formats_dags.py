"""The four DAG formats of seed 001 on abstract graphs (strings for variables): examples, round trips, errors."""

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from symlab.formats import (
    DagCycleError,
    DagFormatError,
    dag_to_index_dag,
    dag_to_tuple_dag,
    dag_to_unidag,
    index,
    index_dag_to_dag,
    index_dag_to_tuple_dag,
    insert_single_indices,
    remove_singleton_indices,
    tuple_dag_to_dag,
    tuple_dag_to_index_dag,
    unidag_to_dag,
)
from symlab.formats.dags import check

# -- the seed's examples ----------------------------------------------------------------------------


def test_index_is_a_keyword_singleton():
    assert repr(index) == "index"
    assert type(index)() is index
    assert pickle.loads(pickle.dumps(index)) is index
    assert index(("c", "d"), 1) == "d"


def test_seed_blown_out_example():
    tdag = {("c", "d"): {"fn": "op", "args": ("a", "b")}}
    idag, inputs, outputs = tuple_dag_to_index_dag(tdag, ("a", "b"), ("c", "d"))
    assert idag == {
        "c": {"fn": index, "args": (("c", "d"), 0)},
        "d": {"fn": index, "args": (("c", "d"), 1)},
        ("c", "d"): {"fn": "op", "args": ("a", "b")},
    }
    assert (inputs, outputs) == (("a", "b"), ("c", "d"))
    assert index_dag_to_tuple_dag(idag, inputs, outputs) == (tdag, inputs, outputs)
    # nothing single-output to simplify: the dag is the index-dag
    assert index_dag_to_dag(idag, inputs, outputs)[0] == idag


def test_seed_dag_example_single_outputs_simplified():
    # {out-variable: {'fn': operation, 'args': (inputs)}}
    dag = {"b": {"fn": "f", "args": ("a",)}, "c": {"fn": "g", "args": ("a", "b")}}
    idag, _, _ = dag_to_index_dag(dag, ("a",), ("c",))
    assert idag == {
        ("b",): {"fn": "f", "args": ("a",)},
        "b": {"fn": index, "args": (("b",), 0)},
        ("c",): {"fn": "g", "args": ("a", "b")},
        "c": {"fn": index, "args": (("c",), 0)},
    }
    assert index_dag_to_dag(idag, ("a",), ("c",))[0] == dag


def test_seed_unidag_example():
    # {a: (b, c), b: (c,)}: a precedes b and c, b precedes c
    dag = {
        "a": {"fn": "f", "args": ("i",)},
        "b": {"fn": "g", "args": ("a",)},
        "c": {"fn": "h", "args": ("a", "b")},
    }
    unidag, jobs, inputs, outputs = dag_to_unidag(dag, ("i",), ("c",))
    assert unidag == {"a": ("b", "c"), "b": ("c",), "c": ()}
    assert jobs == dag
    assert unidag_to_dag(unidag, jobs, inputs, outputs) == (dag, ("i",), ("c",))


# the example of the dicdag project's tests: one multi-output operation among single ones
TUPLE_DAG = {
    ("a",): {"fn": 1, "args": ("b", "c")},
    ("b", "d"): {"fn": 2, "args": ("e",)},
    ("f",): {"fn": 3, "args": ("d", "a")},
}
INDEX_DAG = {
    ("a",): {"fn": 1, "args": ("b", "c")},
    "a": {"fn": index, "args": (("a",), 0)},
    "b": {"fn": index, "args": (("b", "d"), 0)},
    "d": {"fn": index, "args": (("b", "d"), 1)},
    ("b", "d"): {"fn": 2, "args": ("e",)},
    ("f",): {"fn": 3, "args": ("d", "a")},
    "f": {"fn": index, "args": (("f",), 0)},
}
DAG = {
    "a": {"fn": 1, "args": ("b", "c")},
    "b": {"fn": index, "args": (("b", "d"), 0)},
    "d": {"fn": index, "args": (("b", "d"), 1)},
    ("b", "d"): {"fn": 2, "args": ("e",)},
    "f": {"fn": 3, "args": ("d", "a")},
}
IO = (("c", "e"), ("f",))


def test_every_converter_on_the_mixed_example():
    assert tuple_dag_to_index_dag(TUPLE_DAG, *IO)[0] == INDEX_DAG
    assert index_dag_to_tuple_dag(INDEX_DAG, *IO)[0] == TUPLE_DAG
    assert remove_singleton_indices(INDEX_DAG) == DAG
    assert insert_single_indices(DAG) == INDEX_DAG
    assert index_dag_to_dag(INDEX_DAG, *IO)[0] == DAG
    assert dag_to_index_dag(DAG, *IO)[0] == INDEX_DAG
    assert tuple_dag_to_dag(TUPLE_DAG, *IO)[0] == DAG
    assert dag_to_tuple_dag(DAG, *IO)[0] == TUPLE_DAG
    unidag, jobs, *io = dag_to_unidag(DAG, *IO)
    assert unidag == {"a": ("f",), "b": ("a",), "d": ("f",), ("b", "d"): ("b", "d"), "f": ()}
    assert unidag_to_dag(unidag, jobs, *io)[0] == DAG


def test_converters_do_not_modify_their_arguments():
    before = repr(DAG)
    dag_to_index_dag(DAG, *IO)
    dag_to_unidag(DAG, *IO)
    insert_single_indices(DAG)
    assert repr(DAG) == before


def test_constants_outputs_and_inputs_as_outputs():
    dag = {"b": {"fn": "f", "args": ("a",)}}
    assert dag_to_tuple_dag(dag, ("a",), ("b", "a", "b"))[0] == {("b",): {"fn": "f", "args": ("a",)}}


# -- errors --------------------------------------------------------------------------------------------


def test_cycle_names_its_variables():
    dag = {"b": {"fn": "f", "args": ("a", "d")}, "c": {"fn": "g", "args": ("b",)}, "d": {"fn": "h", "args": ("c",)}}
    with pytest.raises(DagCycleError, match=r"cycle through b, d, c: b needs d, which needs c, which needs b"):
        dag_to_index_dag(dag, ("a",), ("d",))
    with pytest.raises(DagCycleError, match=r"cycle through \(x,\)"):
        tuple_dag_to_index_dag({("x",): {"fn": "f", "args": ("x",)}}, (), ("x",))


def test_undefined_argument():
    with pytest.raises(DagFormatError, match="the argument z of c is not an input and no entry computes it"):
        dag_to_unidag({"c": {"fn": "f", "args": ("a", "z")}}, ("a",), ("c",))
    with pytest.raises(DagFormatError, match="the output q is not an input"):
        dag_to_index_dag({"c": {"fn": "f", "args": ("a",)}}, ("a",), ("q",))


def test_index_entries_that_disagree():
    bad_position = dict(INDEX_DAG, b={"fn": index, "args": (("b", "d"), 1)})
    with pytest.raises(DagFormatError, match=r"index entries of \(b, d\) disagree: b reads position 1, but position 1 of \(b, d\) is d"):
        index_dag_to_tuple_dag(bad_position, *IO)
    missing = {k: v for k, v in INDEX_DAG.items() if k != "d"}
    with pytest.raises(DagFormatError, match=r"index entries of \(b, d\) disagree with it: none reads d"):
        index_dag_to_dag(missing, *IO)
    no_tuple = dict(DAG, g={"fn": index, "args": (("g", "h"), 0)})
    with pytest.raises(DagFormatError, match=r"reads \(g, h\), which is not a key"):
        dag_to_index_dag(no_tuple, *IO)
    out_of_range = dict(DAG, b={"fn": index, "args": (("b", "d"), 5)})
    with pytest.raises(DagFormatError, match=r"\(b, d\) has no position 5"):
        dag_to_unidag(out_of_range, *IO)


def test_wrong_kind_of_key_and_double_definitions():
    with pytest.raises(DagFormatError, match="is not a tuple; every operation of a tuple-dag"):
        tuple_dag_to_index_dag(DAG, *IO)
    with pytest.raises(DagFormatError, match=r"single-output tuple; a dag keys it by a"):
        dag_to_index_dag(INDEX_DAG, *IO)
    with pytest.raises(DagFormatError, match="a tuple-dag has none"):
        tuple_dag_to_index_dag(INDEX_DAG, *IO)
    with pytest.raises(DagFormatError, match=r"b is computed twice, by \(b, d\) and by \(b,\)"):
        tuple_dag_to_index_dag(TUPLE_DAG | {("b",): {"fn": 4, "args": ()}}, *IO)
    with pytest.raises(DagFormatError, match="c is an input, but the entry c computes it"):
        dag_to_unidag({"c": {"fn": "f", "args": ()}}, ("c",), ("c",))
    with pytest.raises(DagFormatError, match="must be a dict"):
        dag_to_unidag({"c": ("f", "a")}, ("a",), ("c",))
    with pytest.raises(DagFormatError, match="inputs list a more than once"):
        dag_to_unidag({"c": {"fn": "f", "args": ("a",)}}, ("a", "a"), ("c",))


def test_unidag_that_disagrees_with_its_job_table():
    unidag, jobs, ins, outs = dag_to_unidag(DAG, *IO)
    with pytest.raises(DagFormatError, match=r"the job b precedes \(\) in the unidag, but the job table makes it precede \(a\)"):
        unidag_to_dag(dict(unidag, b=()), jobs, ins, outs)
    with pytest.raises(DagFormatError, match="the jobs z have no entry in the job table"):
        unidag_to_dag(dict(unidag, z=()), jobs, ins, outs)
    with pytest.raises(DagCycleError, match="unidag: there is a cycle"):
        unidag_to_dag(dict(unidag, f=("a",)), jobs, ins, outs)


def test_remove_singleton_indices_needs_the_index_entry():
    with pytest.raises(DagFormatError, match=r"the single output a of \(a,\) needs the entry"):
        remove_singleton_indices({("a",): {"fn": 1, "args": ()}})


def test_check_refuses_an_unknown_format():
    with pytest.raises(ValueError, match="fmt must be"):
        check({}, (), (), "graph")


# -- property tests: random abstract tuple-dags -----------------------------------------------------


@hst.composite
def random_tuple_dags(draw):
    """A random tuple-dag over variables v0, v1, ... with operations of 1 to 3 outputs."""
    n_inputs = draw(hst.integers(0, 3))
    inputs = tuple(f"v{k}" for k in range(n_inputs))
    available = list(inputs)
    tdag = {}
    counter = n_inputs
    for op in range(draw(hst.integers(0, 6))):
        n_out = draw(hst.integers(1, 3))
        outs = tuple(f"v{counter + k}" for k in range(n_out))
        counter += n_out
        args = tuple(draw(hst.lists(hst.sampled_from(available), max_size=3))) if available else ()
        tdag[outs] = {"fn": f"op{op}", "args": args}
        available.extend(outs)
    outputs = tuple(draw(hst.lists(hst.sampled_from(available), min_size=1, max_size=3))) if available else ()
    return tdag, inputs, outputs


@settings(max_examples=50, deadline=None)
@given(random_tuple_dags())
def test_every_converter_pair_round_trips_on_random_dags(complete):
    tdag, inputs, outputs = complete
    idag = tuple_dag_to_index_dag(tdag, inputs, outputs)
    assert index_dag_to_tuple_dag(*idag) == complete
    assert insert_single_indices(remove_singleton_indices(idag[0])) == idag[0]
    dag = index_dag_to_dag(*idag)
    assert dag_to_index_dag(*dag) == idag
    assert remove_singleton_indices(insert_single_indices(dag[0])) == dag[0]
    assert unidag_to_dag(*dag_to_unidag(*dag)) == dag
    assert dag_to_tuple_dag(*tuple_dag_to_dag(*complete)) == complete
