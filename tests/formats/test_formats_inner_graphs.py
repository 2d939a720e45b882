"""Graphs with inner-graph nodes through every format and on Dask: the ops keep their inner graphs, values agree."""

from __future__ import annotations

import pickle

import dask.threaded as threaded
import numpy as np
import pytest
from inner_graph_helpers import Packaged, inner_fingerprint

import symlab
import symlab.scalar as ss
import symlab.tensor as T
from symlab.compile.builders import OpFromGraph
from symlab.formats import (
    dag_to_fgraph,
    dag_to_index_dag,
    dag_to_unidag,
    dask_compute,
    fgraph_to_dag,
    fgraph_to_tuple_dag,
    index_dag_to_dag,
    index_dag_to_tuple_dag,
    to_dask,
    tuple_dag_to_fgraph,
    tuple_dag_to_index_dag,
    unidag_to_dag,
)
from symlab.formats.dask import PerformTask
from symlab.graph import FunctionGraph
from symlab.graph.evaluate import evaluate
from symlab.graph.traversal import owns_inner_graph
from symlab.ifelse import ifelse
from symlab.printing import debugprint
from symlab.scalar.composite import Composite
from symlab.tensor.elemwise import Elemwise


def _graphs():
    """``{name: (FunctionGraph, input values)}``: packaged ops (nested, applied twice, two outputs), a Composite."""
    v = T.dvector("v")
    inner = Packaged([v], [T.exp(v)], name="inner")
    u, w = T.dvectors("u", "w")
    outer = Packaged([u, w], [inner(u) * w, u - w], name="outer")
    x, y = T.dvectors("x", "y")
    product, difference = outer(x, y + 1.0)
    again, _ = outer(y, product)
    a, b = ss.float64("a"), ss.float64("b")
    fused = Elemwise(Composite([a, b], [ss.add(ss.exp(ss.neg(a)), b), ss.mul(a, b)]))
    first, second = fused(again, difference)
    values = [np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.25, -0.5])]
    a, b = T.dvectors("a", "b")
    axpy = OpFromGraph([a, b], [a + 2.0 * b], name="axpy")
    s = T.dvector("s")
    twice = OpFromGraph([s], [axpy(s, s) * 2.0], name="twice")
    chosen, other = ifelse(T.lt(x.sum(), y.sum()), [axpy(x, T.exp(y)), twice(x)], [T.log(y * y) * 3.0, x])
    return {
        "nested packaged ops, applied twice, two outputs": (FunctionGraph([x, y], [again, difference]), values),
        "packaged ops feeding a two-output composite": (FunctionGraph([x, y], [first + second, second]), values),
        "opfromgraph (nested) in a two-output ifelse": (FunctionGraph([x, y], [chosen + other, other]), values),
    }


NAMES = sorted(_graphs())


def _values(fg, values):
    return evaluate(fg.outputs, dict(zip(fg.inputs, values)))


def _check_same(fg, back, values):
    """``back`` applies the same op objects (so the same inner graphs) and computes the same values as ``fg``."""
    ops = [n.op for n in fg.toposort() if owns_inner_graph(n.op)]
    assert [n.op for n in back.toposort() if owns_inner_graph(n.op)] == ops
    assert all(a is b for a, b in zip(ops, [n.op for n in back.toposort() if owns_inner_graph(n.op)]))
    assert debugprint(back, file="str", print_type=True) == debugprint(fg, file="str", print_type=True)
    for got, want in zip(_values(back, values), _values(fg, values)):
        np.testing.assert_allclose(got, want, rtol=1e-14)


@pytest.mark.parametrize("name", NAMES)
def test_every_format_round_trips_a_graph_with_inner_graphs(name):
    fg, values = _graphs()[name]
    fingerprint = inner_fingerprint(fg.outputs)
    before = debugprint(fg, file="str", inner="inline")
    tdag = fgraph_to_tuple_dag(fg)
    idag = tuple_dag_to_index_dag(*tdag)
    dag = index_dag_to_dag(*idag)
    assert index_dag_to_tuple_dag(*idag) == tdag and dag_to_index_dag(*dag) == idag
    unidag = dag_to_unidag(*dag)
    assert unidag_to_dag(*unidag) == dag
    for back in (tuple_dag_to_fgraph(*tdag), dag_to_fgraph(*dag), dag_to_fgraph(*fgraph_to_dag(fg)),
                 tuple_dag_to_fgraph(*index_dag_to_tuple_dag(*idag)), dag_to_fgraph(*unidag_to_dag(*unidag))):
        back.check_integrity()
        _check_same(fg, back, values)
    assert inner_fingerprint(fg.outputs) == fingerprint
    assert debugprint(fg, file="str", inner="inline") == before


@pytest.mark.parametrize("name", NAMES)
def test_dask_runs_a_graph_with_inner_graphs(name):
    fg, values = _graphs()[name]
    want = _values(fg, values)
    for scheduler in (None, "sync"):
        got = dask_compute(fg, *values, scheduler=scheduler)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-14)
    dsk, input_keys, output_keys = to_dask(fg)
    tasks = [v[0] for v in dsk.values() if isinstance(v, tuple) and isinstance(v[0], PerformTask)]
    assert any(owns_inner_graph(t.node.op) for t in tasks)
    copy = pickle.loads(pickle.dumps(dsk))  # a task carries its op, and the op its inner graph
    copy.update(zip(input_keys, values))
    for g, w in zip(threaded.get(copy, list(output_keys)), want):
        np.testing.assert_allclose(g, w, rtol=1e-14)


@pytest.mark.parametrize("name", NAMES)
def test_compiled_functions_with_inner_graphs_round_trip_and_run_on_dask(name):
    fg, values = _graphs()[name]
    f = symlab.function(fg.inputs, fg.outputs, mode="NUMPY")
    want = f(*values)
    for g, w in zip(dask_compute(f, *values), want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    back = dag_to_fgraph(*fgraph_to_dag(f))
    assert debugprint(back, file="str") == debugprint(f.maker.fgraph, file="str")
    for g, w in zip(_values(back, values), want):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_dask_takes_each_branch_of_an_ifelse():
    """Under Dask an ifelse is eager (both branches are tasks it depends on) but gives the chosen values."""
    x, y = T.dvectors("x", "y")
    a = T.dvector("a")
    square = OpFromGraph([a], [a * a], name="square")
    z = ifelse(T.lt(x.sum(), y.sum()), square(x) + y, T.exp(x) - square(y))
    f = symlab.function([x, y], z, mode="NUMPY")
    small, large = np.array([0.5, -1.0]), np.array([2.0, 3.0])
    for first, second, want in ((small, large, small**2 + large), (large, small, np.exp(large) - small**2)):
        np.testing.assert_allclose(dask_compute(f, first, second), want, rtol=1e-14)
        np.testing.assert_allclose(f(first, second), want, rtol=1e-14)
        fg = FunctionGraph([x, y], [z])
        np.testing.assert_allclose(dask_compute(fg, first, second, scheduler="sync")[0], want, rtol=1e-14)
