"""symlab: build, rewrite, differentiate, compile and *see* symbolic tensor graphs.

>>> import symlab
>>> import symlab.tensor as st
>>> x = st.dvector("x")
>>> y = (x ** 2).sum()
>>> float(y.eval({x: [1.0, 2.0]}))
5.0
>>> _ = symlab.dprint(y)
Sum{acc_dtype=float64} [id A] ''
 |Elemwise{pow,no_inplace} [id B] ''
   |x [id C]
   |DimShuffle{x} [id D] ''
     |TensorConstant{2} [id E]
"""

from symlab import compile, graph, printing, scalar, tensor
from symlab import formats
from symlab.compile import In, Out, function, get_mode, shared
from symlab.config import config
from symlab.gradient import grad

dprint = printing.debugprint
pprint = printing.pprint

__version__ = "0.1.0"

__all__ = ["config", "dprint", "pprint", "grad", "graph", "printing", "scalar", "tensor", "__version__"]
__all__ += ["In", "Out", "compile", "formats", "function", "get_mode", "shared"]
