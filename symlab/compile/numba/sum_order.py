"""The adding functions of the float ``Sum`` kernels, compiled once per process (a runtime module).

:mod:`~symlab.compile.numba.kernels_reduction_order` holds their source (plain Python, the order of
``np.sum``); this module compiles it with Numba for float32 and float64, and every generated ``Sum``
kernel calls ``sum_in_order_float32`` / ``sum_in_order_float64``. Their argument types do not depend
on the kernel (1-d arrays and int64 vectors), so Numba compiles each once per process and links it into
every graph that calls it, instead of compiling a copy in every generated module (about 1.3 s each).
Like every runtime module, its text is part of the disk cache's key (``cache.RUNTIME_MODULES``).

>>> import numpy as np
>>> x = np.arange(24.0).reshape(2, 3, 4)
>>> out = np.zeros(3)
>>> sum_in_order_float64(x.reshape(-1), np.array([12, 4, 1]), np.array(x.shape), np.array(x.strides),
...                      np.array([1, 0, 1]), out)
>>> bool(np.array_equal(out, x.sum(axis=(0, 2))))
True
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from symlab.compile.numba import ufunc_loops
from symlab.compile.numba.kernels_reduction_order import shared_source


def _compiled(dtype: str) -> Any:
    """The adding function for ``dtype``, with its plan, as Numba dispatchers (compiled at first call)."""
    namespace: dict[str, Any] = {"np": np, "math": math, "ufunc_loops": ufunc_loops}
    exec(compile(shared_source(dtype), f"<symlab.compile.numba.sum_order {dtype}>", "exec"), namespace)
    # The adding function finds the plan among its globals: a dispatcher, so that Numba can call it.
    namespace["_shared_sum_plan"] = numba.njit(nogil=True, error_model="numpy")(namespace["_shared_sum_plan"])
    return numba.njit(nogil=True, error_model="numpy")(namespace[f"_shared_sum_in_order_{dtype}"])


sum_in_order_float32 = _compiled("float32")
sum_in_order_float64 = _compiled("float64")

__all__ = ["sum_in_order_float32", "sum_in_order_float64"]
