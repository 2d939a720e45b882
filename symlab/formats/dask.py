"""Run a symlab graph on Dask: one task per Apply node.

:func:`to_dask` turns a FunctionGraph, or a compiled function's optimized
graph, into a Dask task graph in Dask's standard form ``{key: (callable,
*args)}`` with string keys; :func:`dask_compute` fills in the input values
and runs it with any Dask scheduler (the threaded one by default, or a
``dask.distributed`` Client). Dask is an optional dependency
(``pip install symlab[dask]``); it is imported only when a graph runs.

>>> import numpy as np
>>> import symlab
>>> import symlab.tensor as st
>>> x, y = st.dvectors("x", "y")
>>> f = symlab.function([x, y], (x * y).sum(), mode="FAST_COMPILE")
>>> graph = to_dask(f)
>>> graph.input_keys, graph.output_keys
(('x', 'y'), ('sum-1',))
>>> graph.dsk["sum-1"][1:]
('elemwise-0',)
>>> float(dask_compute(f, [1.0, 2.0], [3.0, 4.0]))
11.0

Each task calls the node's compiled kernel when the function's linker offers
one, through the method ``linker.node_callable(node)``: it returns a callable
that takes the node's input values positionally and returns a tuple (or list)
with one value per output, or ``None`` when the linker has no kernel for that
node. Otherwise the task runs ``node.op.perform``. Inputs that a node
overwrites (its op's ``destroy_map``) are copied first, so tasks that run in
parallel never see each other's writes.

Ops with an inner graph are one task each: an ``OpFromGraph`` or a fused
``Composite`` runs its whole inner graph in its task (the op, and its inner
graph, travel with the task). An ``ifelse`` is **eager** on Dask: its
branches are ordinary outer nodes, so Dask computes both before the ifelse
task picks the values of the chosen one. The values are right, but the
branch not taken is computed too (and an error in it is raised); for the
lazy evaluation compile the graph with :func:`symlab.function`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from symlab.compile.linker_numpy import copy_value, outputs_to_copy
from symlab.formats.dags import index
from symlab.formats.fgraph import as_fgraph
from symlab.graph.basic import Apply, Variable


class DaskGraph(NamedTuple):
    """A Dask task graph, and the keys of the graph's inputs (not in ``dsk``) and outputs."""

    dsk: dict[str, Any]
    input_keys: tuple[str, ...]
    output_keys: tuple[str, ...]


def _destroyed_inputs(node: Apply) -> tuple[int, ...]:
    destroy_map = getattr(node.op, "destroy_map", None) or {}
    return tuple(sorted({i for ins in destroy_map.values() for i in ins}))


class PerformTask:
    """A task that runs ``op.perform`` on a detached copy of one node (small, picklable).

    Returns the output value, or the tuple of them for a node with several.
    """

    __slots__ = ("node", "destroyed")

    def __init__(self, node: Apply) -> None:
        # A copy of the node without its graph: pickling the task sends only this node.
        self.node = Apply(node.op, [i.clone() for i in node.inputs], [o.clone() for o in node.outputs])
        self.destroyed = _destroyed_inputs(node)

    def __call__(self, *args: Any) -> Any:
        values = list(args)
        for i in self.destroyed:
            values[i] = copy_value(values[i])
        storage: list[list[Any]] = [[None] for _ in self.node.outputs]
        self.node.op.perform(self.node, values, storage)
        return storage[0][0] if len(storage) == 1 else tuple(c[0] for c in storage)

    def __getstate__(self) -> tuple[Apply, tuple[int, ...]]:
        return self.node, self.destroyed

    def __setstate__(self, state: tuple[Apply, tuple[int, ...]]) -> None:
        self.node, self.destroyed = state

    def __repr__(self) -> str:
        return f"perform({self.node.op})"


class KernelTask:
    """A task that calls a linker's compiled kernel for one node (see the module docstring)."""

    __slots__ = ("kernel", "n_outputs", "destroyed", "label")

    def __init__(self, kernel: Callable[..., Sequence[Any]], node: Apply) -> None:
        self.kernel = kernel
        self.n_outputs = len(node.outputs)
        self.destroyed = _destroyed_inputs(node)
        self.label = str(node.op)

    def __call__(self, *args: Any) -> Any:
        values = list(args)
        for i in self.destroyed:
            values[i] = copy_value(values[i])
        results = self.kernel(*values)
        if not isinstance(results, tuple | list) or len(results) != self.n_outputs:
            raise TypeError(
                f"the kernel of {self.label} must return a tuple of {self.n_outputs} output values, "
                f"received {type(results).__name__}"
            )
        return results[0] if self.n_outputs == 1 else tuple(results)

    def __getstate__(self) -> tuple[Any, ...]:
        return self.kernel, self.n_outputs, self.destroyed, self.label

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.kernel, self.n_outputs, self.destroyed, self.label = state

    def __repr__(self) -> str:
        return f"kernel({self.label})"


def node_task(node: Apply, linker: Any = None) -> Callable[..., Any]:
    """The callable of ``node``'s task: the linker's kernel if it offers one, else ``op.perform``."""
    get_kernel = getattr(linker, "node_callable", None)
    kernel = get_kernel(node) if get_kernel is not None else None
    return PerformTask(node) if kernel is None else KernelTask(kernel, node)


class _Keys:
    """Unique string keys: a wanted key gets ``-2``, ``-3``... when it is taken, then ``-<token>``."""

    def __init__(self, token: str | None) -> None:
        self.taken: set[str] = set()
        self.suffix = "" if token is None else f"-{token}"

    def __call__(self, wanted: str) -> str:
        key, n = wanted, 1
        while key in self.taken:
            n += 1
            key = f"{wanted}-{n}"
        self.taken.add(key)
        return key + self.suffix


def to_dask(fgraph_or_function: Any, linker: Any = None, token: str | None = None) -> DaskGraph:
    """The Dask task graph of a FunctionGraph or a compiled function (its ``f.maker.fgraph``).

    Keys are strings: a variable's name where it has one, else
    ``"<op class>-<position in toposort>"`` (``"input-<k>"`` for an
    unnamed input, ``"constant-<k>"`` for a constant, whose value is stored
    in the graph). A node with several outputs is one task returning a tuple,
    and each output a task ``(index, node_key, i)``, as in an index-dag.
    ``linker`` defaults to the compiled function's linker (none for a bare
    FunctionGraph: every task runs ``perform``). A ``token`` is appended to
    every key (``"x-<token>"``): a distributed scheduler expects a key to name
    one computation, so give each graph you submit to it its own token
    (:func:`dask_compute` does).

    >>> import symlab.tensor as st
    >>> from symlab.graph import FunctionGraph
    >>> x = st.dvector("x")
    >>> a, b = st.split(x, [1, 2])
    >>> dsk, ins, outs = to_dask(FunctionGraph([x], [b, a]))
    >>> {k: v[0] if isinstance(v, tuple) else "data" for k, v in dsk.items()}
    {'constant-0': 'data', 'constant-1': 'data', 'split-0': perform(Split{n_splits=2,axis=0}), 'split-0.0': index, 'split-0.1': index}
    >>> dsk["split-0.1"], outs
    ((index, 'split-0', 1), ('split-0.1', 'split-0.0'))
    """
    fg = as_fgraph(fgraph_or_function, "to_dask")
    if linker is None:
        linker = getattr(getattr(fgraph_or_function, "maker", None), "linker", None)
    keys = _Keys(token)
    key_of: dict[Variable, str] = {}
    dsk: dict[str, Any] = {}
    n_constants = 0

    def leaf_key(var: Variable) -> str:
        nonlocal n_constants
        got = key_of.get(var)
        if got is None:  # a constant
            got = key_of[var] = keys(var.name or f"constant-{n_constants}")
            n_constants += 1
            dsk[got] = var.data
        return got

    input_keys = tuple(keys(v.name or f"input-{k}") for k, v in enumerate(fg.inputs))
    key_of.update(zip(fg.inputs, input_keys))
    for j, node in enumerate(fg.toposort()):
        args = [leaf_key(v) for v in node.inputs]
        base = f"{type(node.op).__name__.lower()}-{j}"
        task = (node_task(node, linker), *args)
        if len(node.outputs) == 1:
            out = node.outputs[0]
            key_of[out] = keys(out.name or base)
            dsk[key_of[out]] = task
        else:
            node_key = keys(base)
            dsk[node_key] = task
            for i, out in enumerate(node.outputs):
                key_of[out] = keys(out.name or f"{base}.{i}")
                dsk[key_of[out]] = (index, node_key, i)
    output_keys = tuple(leaf_key(o) for o in fg.outputs)
    return DaskGraph(dsk, input_keys, output_keys)


def _get(scheduler: Any) -> Callable[..., Any]:
    if scheduler is None or scheduler in ("threads", "threading", "threaded"):
        import dask.threaded

        return dask.threaded.get
    if scheduler in ("sync", "synchronous", "single-threaded"):
        import dask.local

        return dask.local.get_sync
    if isinstance(scheduler, str):
        raise ValueError(
            f"dask_compute: unknown scheduler {scheduler!r}; use 'threads', 'sync', a get function or a distributed Client"
        )
    get = getattr(scheduler, "get", None)  # a dask.distributed Client
    if callable(get):
        return get
    if callable(scheduler):
        return scheduler
    raise TypeError(f"dask_compute: scheduler must be a name, a get function or a Client, received {type(scheduler).__name__}")


def dask_compute(f: Any, *inputs: Any, scheduler: Any = None) -> Any:
    """Compute a compiled function (or a FunctionGraph) on Dask: the same values as ``f(*inputs)``.

    ``scheduler``: ``None`` or ``"threads"`` (``dask.threaded.get``),
    ``"sync"``, a get function ``get(dsk, keys)``, or a ``dask.distributed``
    Client. Input values are checked by the inputs' types as a call would
    (shared variables take their current values); a compiled function
    returns a single value, list or dict as it would. A function with
    updates is refused: this computes, it does not change shared variables.
    """
    fg = as_fgraph(f, "dask_compute")
    maker = getattr(f, "maker", None)
    if maker is not None and maker.updates:
        raise ValueError(
            f"dask_compute: {f} has updates of {', '.join(str(s) for s, _ in maker.updates)}, which dask_compute "
            "does not apply; compile the function without updates"
        )
    values = _input_values(f, fg, inputs)
    get = _get(scheduler)
    graph = to_dask(f, token=uuid.uuid4().hex)
    dsk = dict(graph.dsk)
    dsk.update(zip(graph.input_keys, values))
    results = list(get(dsk, list(graph.output_keys)))
    for k in outputs_to_copy(fg, [o.borrow for o in maker.outputs] if maker is not None else None):
        results[k] = copy_value(results[k])
    kind = getattr(maker, "output_kind", "list")
    if kind == "single":
        return results[0]
    if kind == "dict":
        return dict(zip(maker.output_keys, results))
    return results


def _input_values(f: Any, fg: Any, inputs: tuple[Any, ...]) -> list[Any]:
    maker = getattr(f, "maker", None)
    explicit = maker.inputs if maker is not None else [None] * len(fg.inputs)
    if len(inputs) != len(explicit):
        raise TypeError(f"dask_compute: {f} takes {len(explicit)} input values, received {len(inputs)}")
    values = []
    for k, (var, inp, value) in enumerate(zip(fg.inputs, explicit, inputs)):
        try:
            if inp is None:
                values.append(var.type.filter(value))
            else:
                values.append(var.type.filter(value, strict=inp.strict, allow_downcast=maker._downcast(inp)))
        except (TypeError, ValueError) as err:
            raise TypeError(f"dask_compute: bad value for input {k} ({var}): expected {var.type}: {err}") from None
    for var in fg.inputs[len(explicit) :]:  # shared variables
        values.append(var.container.value)
    return values


__all__ = ["DaskGraph", "KernelTask", "PerformTask", "dask_compute", "node_task", "to_dask"]
