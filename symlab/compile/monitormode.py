"""MonitorMode: call your functions before and after every node of a compiled function runs.

``MonitorMode(pre_func=, post_func=)`` runs the optimized graph node by node on the
NumPy backend (each op's ``perform``: there is no per-node hook inside a fused
Numba kernel), and calls ``pre_func(fgraph, i, node, fn)`` before node ``i`` runs
and ``post_func(fgraph, i, node, fn)`` after, as PyTensor's does. ``fn.inputs``
and ``fn.outputs`` are the node's storage cells: one-element lists whose item is
the value (``fn.outputs[0][0]`` is the first output's value after the node ran).

>>> import symlab
>>> import symlab.tensor as st
>>> def show(fgraph, i, node, fn):
...     print(i, node.op, [cell[0] for cell in fn.inputs], "->", [cell[0] for cell in fn.outputs])
>>> x = st.dscalar("x")
>>> f = symlab.function([x], 5.0 * x, mode=MonitorMode(post_func=show))
>>> float(f(3.0))
0 Elemwise{mul,no_inplace} [array(5.), array(3.)] -> [array(15.)]
15.0
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from symlab.compile.linker_numpy import NumpyLinker, NumpyRunner
from symlab.compile.modes import Mode
from symlab.graph.fg import FunctionGraph

#: ``pre_func``/``post_func``: called with (fgraph, node index, node, the node's cells).
NodeHook = Callable[[FunctionGraph, int, Any, Any], Any]

_OPTIMIZERS = {"default": ("fast_run",), "fast_run": ("fast_run",), "fast_compile": ("fast_compile",), None: (),
               "None": ()}


class NodeCells:
    """What a hook receives as ``fn``: the storage cells of one node's inputs and outputs."""

    __slots__ = ("inputs", "outputs")

    def __init__(self, inputs: list[list[Any]], outputs: list[list[Any]]) -> None:
        self.inputs = inputs
        self.outputs = outputs

    def __repr__(self) -> str:
        return f"NodeCells(inputs={self.inputs!r}, outputs={self.outputs!r})"


class MonitorRunner(NumpyRunner):
    """A NumPy-backend runner that calls ``pre_func`` before and ``post_func`` after each node."""

    pre_func: NodeHook | None = None
    post_func: NodeHook | None = None

    def execute(self) -> None:
        stats = self.profile.nodes if self.profile is not None else None
        for k, (perform, node, ins, outs) in self.scheduled():
            cells = NodeCells(ins, outs)
            if self.pre_func is not None:
                self.pre_func(self.fgraph, k, node, cells)
            self.run_node(k, perform, node, [c[0] for c in ins], outs, stats)
            if self.post_func is not None:
                self.post_func(self.fgraph, k, node, cells)


class MonitorLinker(NumpyLinker):
    """Builds :class:`MonitorRunner` objects with the mode's hooks."""

    name = "monitor"

    def __init__(self, pre_func: NodeHook | None = None, post_func: NodeHook | None = None) -> None:
        self.pre_func = pre_func
        self.post_func = post_func

    def make_runner(
        self, fgraph: FunctionGraph, borrow_outputs: Sequence[bool] | None = None, trace: Any = None
    ) -> MonitorRunner:
        runner = MonitorRunner(fgraph, borrow_outputs)
        runner.pre_func = self.pre_func
        runner.post_func = self.post_func
        return runner


class MonitorMode(Mode):
    """A mode that calls ``pre_func``/``post_func`` around every node (see the module's docstring).

    ``optimizer``: ``"default"`` (or ``"fast_run"``) for the ``fast_run`` rewrites,
    ``"fast_compile"``, or ``None`` for none; ``including``/``excluding`` refine it as for any
    mode. ``linker`` is accepted for PyTensor's signature; only the NumPy backend can call a
    hook between nodes, so any other value is refused.
    """

    def __init__(
        self,
        pre_func: NodeHook | None = None,
        post_func: NodeHook | None = None,
        optimizer: str | None = "default",
        linker: str | None = None,
        include: Iterable[str] | None = None,
        exclude: Iterable[str] = (),
        name: str | None = None,
    ) -> None:
        for label, hook in (("pre_func", pre_func), ("post_func", post_func)):
            if hook is not None and not callable(hook):
                raise TypeError(f"MonitorMode: {label} must be callable or None, received {hook!r}")
        if linker not in (None, "numpy", "py", "monitor"):
            raise ValueError(
                f"MonitorMode: linker {linker!r} cannot call a function between nodes; use None (the NumPy backend)"
            )
        if include is None:
            if optimizer not in _OPTIMIZERS:
                raise ValueError(
                    f"MonitorMode: optimizer must be one of {list(_OPTIMIZERS)}, received {optimizer!r}"
                )
            include = _OPTIMIZERS[optimizer]
        super().__init__("monitor", include, exclude, name)
        self.pre_func = pre_func
        self.post_func = post_func

    def make_linker(self) -> MonitorLinker:
        return MonitorLinker(self.pre_func, self.post_func)

    def __hash__(self) -> int:
        return hash((type(self), self.include, self.exclude, id(self.pre_func), id(self.post_func)))


__all__ = ["MonitorLinker", "MonitorMode", "MonitorRunner", "NodeCells"]
