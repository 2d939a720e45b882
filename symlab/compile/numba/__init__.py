"""The Numba backend: each node becomes generated source, the graph one compiled function.

Importing this package does not import Numba; compiling does. It does load
SciPy's BLAS table, cheaply (see :mod:`~symlab.compile.numba.blas_table`),
so that Numba's own setup need not import ``scipy.linalg``.
"""

from symlab.compile.numba.blas_table import preload as _preload_blas_table

_preload_blas_table()
