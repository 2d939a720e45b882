"""FunctionGraph <-> tuple-dag and dag: symlab graphs in the dictionary formats of seed 001.

The variables of the dicts are symlab Variables of a *copy* of the graph (the
user's graph is never touched); the operations are its Ops. Variable names
that clash are made unique in the copy (``x``, ``x_1``, ...), so the dict
reads without ambiguity. Converting back builds a new FunctionGraph that
prints the same ``debugprint``:

>>> import symlab
>>> import symlab.tensor as st
>>> from symlab.graph import FunctionGraph
>>> x, y, z = st.dvectors("x", "y", "z")
>>> fg = FunctionGraph([x, y, z], [x + y * z])
>>> dag, inputs, outputs = fgraph_to_dag(fg)
>>> for var, entry in dag.items():
...     print(var, entry)
Elemwise{mul,no_inplace}.0 {'fn': Elemwise{mul,no_inplace}, 'args': (y, z)}
Elemwise{add,no_inplace}.0 {'fn': Elemwise{add,no_inplace}, 'args': (x, Elemwise{mul,no_inplace}.0)}
>>> inputs
(x, y, z)
>>> symlab.dprint(dag_to_fgraph(dag, inputs, outputs))
Elemwise{add,no_inplace} [id A] ''
 |x [id B]
 |Elemwise{mul,no_inplace} [id C] ''
   |y [id D]
   |z [id E]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from symlab.formats.dags import (
    Complete,
    DagFormatError,
    check,
    complete_io,
    dag_to_index_dag,
    index_dag_to_dag,
    index_dag_to_tuple_dag,
    show,
    tuple_dag_to_index_dag,
)
from symlab.graph.basic import Apply, Constant, Variable
from symlab.graph.fg import FunctionGraph
from symlab.graph.op import Op
from symlab.graph.traversal import clone_get_equiv, io_toposort


def as_fgraph(obj: Any, caller: str = "as_fgraph") -> FunctionGraph:
    """``obj`` if it is a FunctionGraph; the optimized graph ``f.maker.fgraph`` of a compiled function."""
    if isinstance(obj, FunctionGraph):
        return obj
    fgraph = getattr(getattr(obj, "maker", None), "fgraph", None)
    if isinstance(fgraph, FunctionGraph):
        return fgraph
    raise TypeError(f"{caller}: expected a FunctionGraph or a compiled symlab function as the graph, received "
                    f"{type(obj).__name__} {obj!r:.60}")


def make_names_unique(variables: list[Variable]) -> None:
    """Rename the variables whose name an earlier one already has: ``x``, ``x_1``, ``x_2``...

    Unnamed variables stay unnamed. Only use it on variables you own (a copy).

    >>> import symlab.tensor as st
    >>> a, b, c = st.dscalar("x"), st.dscalar("x"), st.dscalar("x_1")
    >>> make_names_unique([a, b, c])
    >>> [a.name, b.name, c.name]
    ['x', 'x_2', 'x_1']
    """
    taken = {v.name for v in variables if v.name is not None}
    seen: set[str] = set()
    for v in variables:
        name = v.name
        if name is None:
            continue
        if name in seen:
            n = 1
            while f"{name}_{n}" in taken:
                n += 1
            name = v.name = f"{name}_{n}"
            taken.add(name)
        seen.add(name)


def fgraph_to_tuple_dag(fgraph: Any) -> Complete:
    """``(tuple_dag, inputs, outputs)`` of a FunctionGraph (or a compiled function's optimized graph).

    One entry per Apply node, keyed by the tuple of its outputs, in
    topological order. The variables belong to a copy of the graph.

    >>> import symlab.tensor as st
    >>> from symlab.graph import FunctionGraph
    >>> x = st.dvector("x")
    >>> first, second = st.split(x, [1, 2])
    >>> tdag, inputs, outputs = fgraph_to_tuple_dag(FunctionGraph([x], [first, x]))
    >>> [(key, entry["fn"]) for key, entry in tdag.items()]
    [((Split{n_splits=2,axis=0}.0, Split{n_splits=2,axis=0}.1), Split{n_splits=2,axis=0})]
    >>> outputs
    (Split{n_splits=2,axis=0}.0, x)
    """
    fg = as_fgraph(fgraph, "fgraph_to_tuple_dag")
    equiv = clone_get_equiv(fg.inputs, fg.outputs, copy_inputs=True, copy_orphans=True)
    inputs = tuple(equiv[i] for i in fg.inputs)
    outputs = tuple(equiv[o] for o in fg.outputs)
    nodes = io_toposort(inputs, outputs)
    variables: dict[Variable, None] = dict.fromkeys(inputs)
    for node in nodes:
        variables.update(dict.fromkeys(node.inputs))
        variables.update(dict.fromkeys(node.outputs))
    variables.update(dict.fromkeys(outputs))
    make_names_unique(list(variables))
    tdag = {tuple(node.outputs): {"fn": node.op, "args": tuple(node.inputs)} for node in nodes}
    return tdag, inputs, outputs


def tuple_dag_to_fgraph(tdag: Mapping[Any, Any], inputs: Any = None, outputs: Any = None) -> FunctionGraph:
    """A new FunctionGraph computing ``outputs`` from ``inputs`` as the tuple-dag says.

    Without ``inputs`` or ``outputs`` (seed 001's ``tuple_dag_to_fgraph(tdag)``), they are derived from the
    dict (:func:`~symlab.formats.dags.derive_io`: in the order the dict first names them).

    Inputs must be symlab Variables and every ``fn`` an Op. Keys made of
    Variables give the new outputs their types and names (the graph is
    copied exactly); other keys (strings, say) are names for the outputs
    that ``fn.make_node(*args)`` builds. Nothing given is modified.

    >>> import symlab.tensor as st
    >>> x, y = st.dvectors("x", "y")
    >>> fg = tuple_dag_to_fgraph({("s",): {"fn": st.add, "args": (x, y)}}, (x, y), ("s",))
    >>> fg.outputs
    [s]
    >>> fg.inputs[0] is x
    False
    """
    inputs, outputs, _ = complete_io(tdag, inputs, outputs, "tuple-dag")
    order = check(tdag, inputs, outputs, "tuple-dag")
    for k, v in enumerate(inputs):
        if not isinstance(v, Variable) or isinstance(v, Constant):
            raise DagFormatError(f"tuple-dag: input {k} ({show(v)}) must be a symlab Variable that is not a Constant")
    for key in order:
        fn = tdag[key]["fn"]
        if not isinstance(fn, Op):
            raise DagFormatError(f"tuple-dag: the 'fn' of {show(key)} is {fn!r:.60} ({type(fn).__name__}), which is not a symlab Op")
    memo: dict[Any, Variable] = {v: v.clone() for v in inputs}

    def value(a: Any) -> Variable:
        got = memo.get(a)
        if got is None:  # a constant: copied, so the new graph shares nothing with the dag
            got = memo[a] = a.clone()
        return got

    for key in order:
        entry = tdag[key]
        op, args = entry["fn"], [value(a) for a in entry["args"]]
        if all(isinstance(k, Variable) for k in key):
            node = Apply(op, args, [k.clone() for k in key])
        else:
            try:
                node = op.make_node(*args)
            except Exception as err:
                err.add_note(f"symlab.formats: while building the entry {show(key)} of the tuple-dag")
                raise
            if len(node.outputs) != len(key):
                raise DagFormatError(f"tuple-dag: {op} computes {len(node.outputs)} outputs, but its key {show(key)} has {len(key)}")
            for k, out in zip(key, node.outputs):
                out.name = k.name if isinstance(k, Variable) else str(k)
        for k, out in zip(key, node.outputs):
            memo[k] = out
    return FunctionGraph([memo[v] for v in inputs], [value(o) for o in outputs], clone=False)


def fgraph_to_dag(fgraph: Any) -> Complete:
    """``(dag, inputs, outputs)``: :func:`fgraph_to_tuple_dag`, then the index entries, then the singletons simplified."""
    return index_dag_to_dag(*tuple_dag_to_index_dag(*fgraph_to_tuple_dag(as_fgraph(fgraph, "fgraph_to_dag"))))


def dag_to_fgraph(dag: Mapping[Any, Any], inputs: Any = None, outputs: Any = None) -> FunctionGraph:
    """The inverse of :func:`fgraph_to_dag`: a new FunctionGraph (``inputs``/``outputs`` derived if not given)."""
    inputs, outputs, _ = complete_io(dag, inputs, outputs, "dag")
    return tuple_dag_to_fgraph(*index_dag_to_tuple_dag(*dag_to_index_dag(dag, inputs, outputs)))


__all__ = [
    "as_fgraph",
    "dag_to_fgraph",
    "fgraph_to_dag",
    "fgraph_to_tuple_dag",
    "make_names_unique",
    "tuple_dag_to_fgraph",
]
