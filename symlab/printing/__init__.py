"""Ways to look at a graph: text first.

:func:`debugprint` (also ``symlab.dprint``) prints a graph as an indented
tree, one line per Apply node or leaf Variable, in the format of Theano's
``theano.printing.debugprint``:

>>> import symlab
>>> import symlab.tensor as st
>>> x = st.dmatrix("x")
>>> _ = symlab.dprint(x * 2)
Elemwise{mul,no_inplace} [id A] ''
 |x [id B]
 |DimShuffle{x,x} [id C] ''
   |TensorConstant{2} [id D]

Pictures go through one model: :func:`subject_of` says what an object is,
:func:`build_model` what its picture draws under stable keys (a
:class:`GraphModel`), and :func:`diagram` / :func:`to_dot` write it as DOT.

This package must stay cheap to import: it does not import graphviz.
"""

from symlab.printing.debugprint import char_from_number, debugprint
from symlab.printing.pprint import pprint
from symlab.printing.print_op import Print
from symlab.printing.subject import Subject, subject_of
from symlab.printing.model import DrawEdge, DrawNode, GraphModel, build_model
from symlab.printing.diagram import diagram, to_dot
from symlab.printing.pydotprint import pydotprint

#: Theano's and PyTensor's short name of :func:`pprint`.
pp = pprint

__all__ = ["char_from_number", "debugprint"]
__all__ += ["Print", "diagram", "pp", "pprint", "pydotprint", "to_dot"]
__all__ += ["DrawEdge", "DrawNode", "GraphModel", "Subject", "build_model", "subject_of"]
