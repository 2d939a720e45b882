"""The Numba backend: each node becomes generated source, the graph one compiled function.

Importing this package does not import Numba; compiling does. It does load
SciPy's BLAS table, cheaply (see :mod:`~symlab.compile.numba.blas_table`),
so that Numba's own setup need not import ``scipy.linalg``. It registers the
loader of symlab's kernel families (:mod:`~symlab.compile.numba.standard_kernels`),
which the first kernel asked for runs. And it asks OpenMP's idle threads to sleep rather than spin
(``OMP_WAIT_POLICY=PASSIVE``, unless the environment says otherwise), before Numba's first parallel
call loads the OpenMP runtime: see :mod:`~symlab.compile.threads`.
"""

from symlab.compile.threads import prefer_passive_waiting as _prefer_passive_waiting
from symlab.compile.numba import standard_kernels as _standard_kernels  # registers the kernel families' loader
from symlab.compile.numba.blas_table import preload as _preload_blas_table

_preload_blas_table()
_prefer_passive_waiting()  # before Numba's first parallel call loads the OpenMP runtime (see symlab.compile.threads)
