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

This package must stay cheap to import: it does not import graphviz.
"""

from symlab.printing.debugprint import char_from_number, debugprint
from symlab.printing.pprint import pprint
from symlab.printing.diagram import diagram
from symlab.printing.pydotprint import pydotprint

__all__ = ["char_from_number", "debugprint"]
__all__ += ["diagram", "pprint", "pydotprint"]
