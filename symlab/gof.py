"""``gof``: Theano's old name for the graph package ("graph optimization framework"), kept for the seeds.

Seeds 000 and 003 build nodes with ``gof.Apply(op, inputs, outputs)``. In symlab (as in PyTensor) these
objects live in :mod:`symlab.graph`; this module gives the same classes under the old path, so code
written for the seeds runs as written:

>>> from symlab import gof
>>> import symlab.tensor as T
>>> x = gof.Variable(type=T.dscalar, name="x")
>>> node = gof.Apply(op=T.add, inputs=[x, T.constant(1.0)], outputs=[gof.Variable(type=T.dscalar)])
>>> node.outputs[0].owner is node, gof.Apply is __import__("symlab").graph.Apply
(True, True)
"""

from symlab.graph import (
    Apply,
    Constant,
    FunctionGraph,
    InconsistencyError,
    Op,
    Result,
    Type,
    Variable,
    ancestors,
    graph_inputs,
    io_toposort,
)

__all__ = ["Apply", "Constant", "FunctionGraph", "InconsistencyError", "Op", "Result", "Type", "Variable",
           "ancestors", "graph_inputs", "io_toposort"]
