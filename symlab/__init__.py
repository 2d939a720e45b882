"""symlab: build, rewrite, differentiate, compile and *see* symbolic tensor graphs.

>>> import symlab
>>> import symlab.tensor as st
>>> x = st.dvector("x")
>>> y = (x ** 2).sum()
>>> float(y.eval({x: [1.0, 2.0]}))
5.0
"""

from symlab import graph, scalar, tensor
from symlab.config import config

__version__ = "0.1.0"

__all__ = ["config", "graph", "scalar", "tensor", "__version__"]
