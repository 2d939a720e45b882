"""The Numba linker: the optimized graph becomes generated modules, compiled by Numba, run in tiers.

:class:`NumbaLinker` (the linker named ``"numba"``) makes a runner for a graph; the work is in modules of
their own, in the order a graph goes through them:

* :mod:`~symlab.compile.numba.kernel_source`: each distinct kernel as a module of its own, named by a hash
  of its source (identical kernels are written once, and shared by every graph that needs one);
* :mod:`~symlab.compile.numba.graph_source`: the graph module: segments of nodes with kernels, each a
  compiled function (``graph_fn`` when there is one), and the steps between them;
* :mod:`~symlab.compile.numba.loading`: importing the modules through the disk cache
  (:mod:`symlab.compile.numba.cache`) and compiling what is new (:func:`~symlab.compile.numba.loading.load_compiled`);
* :mod:`~symlab.compile.numba.runner`: :class:`NumbaRunner`, whose calls run on the NumPy tier while
  Numba compiles on a worker thread, then on the machine code;
* :mod:`~symlab.compile.numba.background`: the compiles under way, at fork and exit (:func:`wait_all`);
* :mod:`~symlab.compile.numba.standalone`: one node compiled alone (:func:`compile_node`).

A graph holding a value Numba cannot take (a scipy.sparse matrix) runs on the NumPy backend by design
(:class:`NumpyOnlyRunner`, :func:`numpy_only_reason`). If Numba cannot compile a module at all, the
function runs the NumPy backend with a warning: results never silently change. A node whose op has no
kernel runs its ``perform`` between compiled segments (a warning names the op, once per op class and
process); a random variable whose draws Numba cannot give bit for bit runs there by design, unwarned
(``compile_info.numpy_ops`` and the profile say why: :mod:`~symlab.compile.numba.kernels_random`); a fused elemwise node of very many scalar operations runs on the register machine of
:mod:`symlab.compile.numba.elemwise_vm`, compiled once and cached.

The numbers of a compile (``cache_hit``, ``miss_reason``, ``numba_compile_seconds``,
``cache_load_seconds``) are in the runner's ``compile_info`` and, with ``profile=True``, in ``f.profile``.
With a profile, each compiled segment is timed as a whole and its time is shared equally among its nodes.

>>> import symlab.tensor as st
>>> from symlab.graph.fg import FunctionGraph
>>> x = st.dvector("x")
>>> runner = NumbaLinker().make_runner(FunctionGraph([x], [x + 1.0]))
>>> type(runner).__name__, "graph_fn" in runner.generated.source
('NumbaRunner', True)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from symlab.compile.linker_numpy import NumpyLinker, NumpyRunner
from symlab.compile.numba.background import wait_all
from symlab.compile.numba.graph_source import GeneratedModule, generate_module
from symlab.compile.numba.kernel_source import warn_no_kernel
from symlab.compile.numba.kernels import NoKernel
from symlab.compile.numba.loading import CompileInfo
from symlab.compile.numba.runner import CompileAbandoned, NumbaRunner
from symlab.compile.numba.standalone import compile_node
from symlab.graph.basic import Apply
from symlab.graph.fg import FunctionGraph

#: The tier of a graph that runs on the NumPy backend by design (``compile_info.numpy_only`` says why).
NUMPY_ONLY_TIER = "numpy (no machine code for this graph)"


def numpy_only_reason(fgraph: FunctionGraph) -> str | None:
    """Why Numba cannot run ``fgraph`` at all, or None: a variable whose Type says its values cannot enter
    Numba's nopython mode (the Type's ``numba_unsupported`` attribute, e.g. ``SparseTensorType``'s)."""
    nodes = fgraph.toposort()
    for var in (*fgraph.inputs, *(v for node in nodes for v in (*node.inputs, *node.outputs)), *fgraph.outputs):
        why = getattr(var.type, "numba_unsupported", None)
        if why:
            return f"the graph holds {var} ({var.type}): {why}"
    return None


class NumpyOnlyRunner(NumpyRunner):
    """The runner the Numba linker makes for a graph Numba cannot run (see :func:`numpy_only_reason`): the
    NumPy backend, ready at once, with a :class:`CompileInfo` whose ``numpy_only`` says why (no warning:
    nothing failed, and no op lacks a kernel by mistake)."""

    tier = NUMPY_ONLY_TIER
    ready = True

    def __init__(self, fgraph: FunctionGraph, borrow_outputs: Sequence[bool] | None, reason: str) -> None:
        super().__init__(fgraph, borrow_outputs)
        self.compile_info = CompileInfo(numpy_only=reason)

    def wait(self, timeout: float | None = None) -> bool:
        return True


class NumbaLinker(NumpyLinker):
    """The linker named ``"numba"``: builds :class:`NumbaRunner` objects (a :class:`NumpyOnlyRunner` for a
    graph holding values Numba cannot take)."""

    name = "numba"
    #: False: this linker runs compiled Numba code (a graph Numba cannot compile runs the NumPy backend).
    falls_back_to_numpy = False

    def make_runner(
        self, fgraph: FunctionGraph, borrow_outputs: Sequence[bool] | None = None, trace: Any = None
    ) -> NumbaRunner:
        from symlab.config import config

        reason = numpy_only_reason(fgraph)
        if reason is not None:
            return NumpyOnlyRunner(fgraph, borrow_outputs, reason)
        return NumbaRunner(fgraph, borrow_outputs, background=config.background_compile)

    def node_callable(self, node: Apply) -> Any:
        """``node``'s compiled kernel alone (``fn(*inputs) -> list of outputs``), or None without one.

        This is how ``symlab.formats.to_dask`` runs each task with compiled code.
        """
        try:
            return compile_node(node)
        except NoKernel:
            return None


__all__ = [
    "CompileAbandoned",
    "CompileInfo",
    "GeneratedModule",
    "NumbaLinker",
    "NumbaRunner",
    "NumpyOnlyRunner",
    "compile_node",
    "generate_module",
    "numpy_only_reason",
    "wait_all",
    "warn_no_kernel",
]
