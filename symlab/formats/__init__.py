"""Graphs as plain dictionaries (seed 001), and graphs run on Dask.

:mod:`~symlab.formats.dags` defines the four formats (dag, tuple-dag,
index-dag, unidag) and the converters between them;
:mod:`~symlab.formats.fgraph` converts FunctionGraphs to and from them;
:mod:`~symlab.formats.dask` runs a graph on Dask (an optional dependency,
imported only when a graph runs).

>>> import symlab
>>> import symlab.tensor as st
>>> from symlab.graph import FunctionGraph
>>> v = st.dvector("v")
>>> fg = FunctionGraph([v], [(v + 1).sum()])
>>> dag, inputs, outputs = symlab.formats.fgraph_to_dag(fg)
>>> [str(entry["fn"]) for entry in dag.values()]
['DimShuffle{x}', 'Elemwise{add,no_inplace}', 'Sum{acc_dtype=float64}']
>>> back = symlab.formats.dag_to_fgraph(dag, inputs, outputs)
>>> symlab.dprint(back)
Sum{acc_dtype=float64} [id A] ''
 |Elemwise{add,no_inplace} [id B] ''
   |v [id C]
   |DimShuffle{x} [id D] ''
     |TensorConstant{1} [id E]
>>> symlab.dprint(back, file="str") == symlab.dprint(fg, file="str")
True
"""

from symlab.formats.dags import (
    DagCycleError,
    DagFormatError,
    dag_to_index_dag,
    dag_to_tuple_dag,
    dag_to_unidag,
    derive_io,
    index,
    index_dag_to_dag,
    index_dag_to_tuple_dag,
    insert_single_indices,
    remove_singleton_indices,
    tuple_dag_to_dag,
    tuple_dag_to_index_dag,
    unidag_to_dag,
)
from symlab.formats.fgraph import dag_to_fgraph, fgraph_to_dag, fgraph_to_tuple_dag, tuple_dag_to_fgraph
from symlab.formats.dask import DaskGraph, dask_compute, to_dask

__all__ = [
    "DagCycleError",
    "DagFormatError",
    "DaskGraph",
    "dag_to_fgraph",
    "dag_to_index_dag",
    "dag_to_tuple_dag",
    "dag_to_unidag",
    "derive_io",
    "dask_compute",
    "fgraph_to_dag",
    "fgraph_to_tuple_dag",
    "index",
    "index_dag_to_dag",
    "index_dag_to_tuple_dag",
    "insert_single_indices",
    "remove_singleton_indices",
    "to_dask",
    "tuple_dag_to_dag",
    "tuple_dag_to_fgraph",
    "tuple_dag_to_index_dag",
    "unidag_to_dag",
]
