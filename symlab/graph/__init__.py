"""Graph objects and the algorithms that walk them.

``Variable``, ``Apply``, ``Constant``, ``Op`` and ``Type`` are the whole
vocabulary of a graph; :mod:`symlab.graph.traversal` walks, sorts, clones and
compares graphs made of them; a :class:`FunctionGraph` holds one graph with
its clients so that rewrites can change it.
"""

from symlab.graph.basic import (
    Apply,
    Constant,
    CycleError,
    GraphConstructionError,
    MissingInputError,
    Result,
    Variable,
)
from symlab.graph.changes import Feature, GraphChange
from symlab.graph.evaluate import evaluate
from symlab.graph.features import History, ReplaceValidate, Validator
from symlab.graph.fg import FunctionGraph, InconsistencyError
from symlab.graph.op import Op
from symlab.graph.replace import vectorize_graph
from symlab.graph.traversal import (
    ancestors,
    applys_between,
    applys_with_inner,
    clone,
    clone_get_equiv,
    clone_replace,
    equal_computations,
    graph_inputs,
    io_toposort,
    is_in_ancestors,
    orphans_between,
    vars_between,
)
from symlab.graph.type import Type

__all__ = [
    "Apply",
    "Constant",
    "CycleError",
    "Feature",
    "FunctionGraph",
    "GraphChange",
    "History",
    "InconsistencyError",
    "GraphConstructionError",
    "MissingInputError",
    "Result",
    "Op",
    "ReplaceValidate",
    "Type",
    "Validator",
    "Variable",
    "ancestors",
    "applys_between",
    "applys_with_inner",
    "clone",
    "clone_get_equiv",
    "clone_replace",
    "equal_computations",
    "evaluate",
    "graph_inputs",
    "io_toposort",
    "is_in_ancestors",
    "orphans_between",
    "vars_between",
    "vectorize_graph",
]
