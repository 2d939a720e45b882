"""``OpFromGraph``: a user's graph packaged as one op (PyTensor's ``pytensor.compile.builders``).

An ``OpFromGraph`` is built from a list of inputs and a list of outputs, like
``symlab.function``, and then applied like any op: each application is one node whose
meaning is the whole inner graph. The graph is copied (changing the user's variables later
does not change the op); a shared variable the outputs use becomes an implicit last input of
every node (or may be passed explicitly as an input); constants stay inside.

>>> import numpy as np
>>> import symlab
>>> import symlab.tensor as st
>>> x, y, z = st.dscalars("x", "y", "z")
>>> op = OpFromGraph([x, y, z], [x + y * z], name="axpy")
>>> e2 = op(x, y, z) + op(z, y, x)
>>> f = symlab.function([x, y, z], e2, mode="NUMPY")
>>> float(f(1.0, 2.0, 3.0))  # (1 + 2*3) + (3 + 2*1)
12.0
>>> str(op), op.inner_inputs, [str(n.op) for n in op.fgraph.toposort()]
('axpy{inline=False}', [x, y, z], ['Elemwise{mul,no_inplace}', 'Elemwise{add,no_inplace}'])

Two ops with the same inner computation (same ops, wiring, types and constants, same
``inline`` and overrides) are equal and hash equal, so merging removes a repeated node.
The gradient comes from the inner graph (packaged as another ``OpFromGraph``), or from
``lop_overrides`` (``pullback=``, PyTensor 3's name); ``R_op`` likewise from the inner
graph or ``rop_overrides`` (``pushforward=``):

>>> g = symlab.grad(op(x, y, z), y)
>>> float(g.eval({x: 1.0, y: 2.0, z: 3.0}))
3.0

Compiled, a node with ``inline=True`` is replaced by its inner graph (the rule
``inline_ofg_expansion``), and the other nodes get their inner graph rewritten with the
function's own rewrites (``ofg_inner_graph``): see :mod:`symlab.compile.builders_rewrites`.
The NumPy backend runs a node through :meth:`OpFromGraph.perform` (the inner graph on the
NumPy backend, prepared once per op); the Numba backend compiles the inner graph's kernels
into one function (:mod:`symlab.compile.numba.kernels_inner_graph`).
"""

from __future__ import annotations

import copy
import hashlib
import threading
from collections.abc import Sequence
from functools import cached_property
from typing import Any

import numpy as np

from symlab.compile import builders_gradient
from symlab.graph.basic import Apply, Constant, MissingInputError, Variable
from symlab.graph.fg import FunctionGraph
from symlab.graph.inner_graph import HasInnerGraph
from symlab.graph.op import Op
from symlab.graph.sharedvalue import SharedVariable
from symlab.graph.traversal import clone_get_equiv, clone_replace, graph_inputs

#: Keyword arguments PyTensor passes on to ``function`` for the inner graph: accepted and ignored (the inner
#: graph is compiled with the outer function's mode, as in PyTensor 3).
COMPILE_KWARGS = frozenset({"mode", "on_unused_input", "allow_input_downcast", "profile", "accept_inplace"})


class KeyedInnerGraphOp:
    """Identity, name and pickling of an op with an inner graph, from its canonical form ``_key``.

    A subclass defines ``_key`` (a ``cached_property``: equal keys, equal computations; names do not count),
    ``user_name``, ``_reset_caches()`` (which drops ``_key`` and ``_hash``) and lists in :attr:`DERIVED` what
    its caches hold, which pickling leaves out. ``OpFromGraph`` and ``Scan`` are two.
    """

    #: The attributes made from the others (caches, locks, the compiled inner graph): not pickled.
    DERIVED: tuple[str, ...] = ("_runner", "_runner_lock", "_key", "_hash", "_rewritten_ops")
    _key: tuple[Any, ...]
    user_name: str | None

    def _reset_caches(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define _reset_caches()")

    @cached_property
    def _hash(self) -> int:
        return hash((type(self), self._key))

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return type(self) is type(other) and self._hash == other._hash and self._key == other._key  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return self._hash

    @property
    def name(self) -> str:
        return str(self)

    @name.setter
    def name(self, value: str) -> None:
        self.user_name = value

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for derived in self.DERIVED:
            state.pop(derived, None)
        state["inner_trace"] = None  # the rewrite's trace holds the rules themselves
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._reset_caches()


class OpFromGraph(KeyedInnerGraphOp, HasInnerGraph, Op):
    """An op whose meaning is the graph from ``inputs`` to ``outputs`` (see the module's docstring).

    ``inline=True`` asks compilation to replace each node by its inner graph. ``lop_overrides``
    (alias ``pullback``) replaces the gradient: an ``OpFromGraph`` taking ``inputs + outputs +
    output_grads``; a callable ``(inputs, outputs, output_grads) -> [one gradient per input]``;
    or a list with one entry per input: ``None`` (the inner graph's gradient), a callable or
    ``OpFromGraph`` giving that input's gradient, or a ``DisconnectedType``/``NullType``
    variable. ``rop_overrides`` (alias ``pushforward``) has the same forms for ``R_op``, with
    ``(inputs, eval_points)`` and one entry per output. ``connection_pattern`` (one list of
    booleans per input, one boolean per output) overrides the computed one. ``strict=True``
    refuses shared variables used implicitly (pass them as inputs). ``name`` shows in ``str(op)``
    literally. ``**kwargs`` accepts PyTensor's compile arguments (``mode``, ``on_unused_input``...)
    and ignores them: the inner graph is compiled with the outer function's mode.

    >>> import symlab.tensor as st
    >>> x = st.dvector("x")
    >>> OpFromGraph([x], [x + st.dvector("w")])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    symlab.graph.basic.MissingInputError: OpFromGraph: output 0 needs w (TensorType(float64, (?,))), which is neither among the inputs ['x'] nor a shared variable nor a constant; add it to the inputs
    """

    DERIVED = (*KeyedInnerGraphOp.DERIVED, "_lop_cache", "_rop_cache", "_computed_pattern")
    #: True for the copies the rewrite ``ofg_inner_graph`` made (their inner graph is rewritten already).
    inner_rewritten: bool = False

    def __init__(
        self,
        inputs: list[Variable],
        outputs: list[Variable],
        *,
        inline: bool = False,
        lop_overrides: Any = None,
        rop_overrides: Any = None,
        connection_pattern: list[list[bool]] | None = None,
        strict: bool = False,
        name: str | None = None,
        pullback: Any = None,
        pushforward: Any = None,
        **kwargs: Any,
    ) -> None:
        where = "OpFromGraph" if name is None else f"OpFromGraph {name!r}"
        if name is not None and not isinstance(name, str):
            raise TypeError(f"OpFromGraph: name must be a str or None, received {type(name).__name__} {name!r:.60}")
        if "updates" in kwargs or "givens" in kwargs:
            raise NotImplementedError(f"{where}: updates and givens are not supported")
        unknown = sorted(set(kwargs) - COMPILE_KWARGS)
        if unknown:
            raise TypeError(f"{where}: unexpected keyword arguments {unknown}; accepted: {sorted(COMPILE_KWARGS)}")
        if not isinstance(inputs, list) or not isinstance(outputs, list):
            raise TypeError(
                f"{where}: inputs and outputs must be lists of Variables, received "
                f"{type(inputs).__name__} and {type(outputs).__name__}"
            )
        for what, group in (("input", inputs), ("output", outputs)):
            for k, v in enumerate(group):
                if not isinstance(v, Variable):
                    raise TypeError(f"{where}: {what} {k} must be a Variable, received {type(v).__name__} {v!r:.60}")
        if not outputs:
            raise ValueError(f"{where}: at least one output is needed")
        repeated = [v for k, v in enumerate(inputs) if any(v is w for w in inputs[:k])]
        if repeated:
            raise ValueError(
                f"{where}: {[str(v) for v in repeated]} appear more than once among the inputs; use distinct "
                "variables (var.copy() or a new variable of the same type) for distinct inputs"
            )
        for flag, value in (("inline", inline), ("strict", strict)):
            if not isinstance(value, bool | np.bool_):
                raise TypeError(f"{where}: {flag} must be True or False, received {value!r:.60}")
        if pullback is not None and lop_overrides is not None:
            raise ValueError(f"{where}: give lop_overrides or pullback (the same thing), not both")
        if pushforward is not None and rop_overrides is not None:
            raise ValueError(f"{where}: give rop_overrides or pushforward (the same thing), not both")
        lop_overrides = pullback if pullback is not None else lop_overrides
        rop_overrides = pushforward if pushforward is not None else rop_overrides
        self.shared_inputs: list[SharedVariable] = _implicit_shared(inputs, outputs, strict, where)
        builders_gradient.check_overrides(lop_overrides, (len(inputs), len(inputs) + len(self.shared_inputs)),
                                          "lop_overrides", where)
        if connection_pattern is not None:
            connection_pattern = _checked_pattern(connection_pattern, len(inputs) + len(self.shared_inputs),
                                                  len(outputs), where)
        builders_gradient.check_overrides(rop_overrides, len(outputs), "rop_overrides", where)
        self.is_inline = bool(inline)
        self.lop_overrides = lop_overrides
        self.rop_overrides = rop_overrides
        self.kwargs = dict(kwargs)
        self.strict = bool(strict)
        self.user_name = name
        self._given_pattern = connection_pattern
        self._fgraph = _inner_fgraph([*inputs, *self.shared_inputs], outputs)
        self._reset_caches()

    def _reset_caches(self) -> None:
        self.input_types = [v.type for v in self._fgraph.inputs]
        self.output_types = [v.type for v in self._fgraph.outputs]
        self._lop_cache: dict[tuple[bool, ...], Any] = {}
        self._rop_cache: Any = None
        self._runner: Any = None
        self._runner_lock = threading.Lock()
        self._computed_pattern: list[list[bool]] | None = None
        self.__dict__.pop("_key", None)
        self.__dict__.pop("_hash", None)
        #: The rewrite of the inner graph compilation made (``ofg_inner_graph``), or None.
        self.inner_trace: Any = getattr(self, "inner_trace", None)

    # -- the inner graph (HasInnerGraph) ---------------------------------------------------
    @property
    def fgraph(self) -> FunctionGraph:  # type: ignore[override]
        """The inner graph (the op's own: read it, do not change it; :meth:`clone` gives a copy)."""
        return self._fgraph

    @property
    def n_explicit_inputs(self) -> int:
        """How many inputs a call gives (the shared variables used implicitly follow them)."""
        return len(self._fgraph.inputs) - len(self.shared_inputs)

    def clone(self) -> OpFromGraph:
        """An equal op over a fresh copy of the inner graph."""
        return self.clone_with_inner_graph(self._fgraph.clone())

    def clone_with_inner_graph(self, fgraph: FunctionGraph) -> OpFromGraph:
        """A copy of this op whose inner graph is ``fgraph`` (same inputs' and outputs' types)."""
        if [v.type for v in fgraph.inputs] != self.input_types or [v.type for v in fgraph.outputs] != self.output_types:
            raise TypeError(f"{self}.clone_with_inner_graph: the new inner graph must have the same input and output types")
        new = copy.copy(self)
        new._fgraph = fgraph
        new._reset_caches()
        return new

    # -- identity ----------------------------------------------------------------------------
    @cached_property
    def _key(self) -> tuple[Any, ...]:
        """The canonical form of the op: equal keys, equal computations (names do not count)."""
        return (
            _graph_key(self._fgraph),
            self.is_inline,
            len(self.shared_inputs),
            builders_gradient.override_key(self.lop_overrides),
            builders_gradient.override_key(self.rop_overrides),
            None if self._given_pattern is None else tuple(map(tuple, self._given_pattern)),
        )

    def __str__(self) -> str:
        return f"{'OpFromGraph' if self.user_name is None else self.user_name}{{inline={self.is_inline}}}"

    # -- building nodes ------------------------------------------------------------------------
    def make_node(self, *inputs: Any) -> Apply:
        """A node on ``inputs`` (the explicit ones; the shared variables used implicitly are added)."""
        n_explicit, n_all = self.n_explicit_inputs, len(self.input_types)
        if len(inputs) == n_explicit:
            inputs = (*inputs, *self.shared_inputs)
        elif len(inputs) != n_all:
            names = [str(v) for v in self._fgraph.inputs[:n_explicit]]
            raise ValueError(f"{self}: expected {n_explicit} input(s) {names}, received {len(inputs)}")
        checked = []
        for k, (value, expected) in enumerate(zip(inputs, self.input_types)):
            try:
                checked.append(expected.filter_variable(value))
            except TypeError as err:
                received = value.type if isinstance(value, Variable) else f"{type(value).__name__} {value!r:.60}"
                raise TypeError(
                    f"{self}: input {k} ({self._fgraph.inputs[k]}) must be of type {expected}, received {received} ({err})"
                ) from None
        return Apply(self, checked, [t() for t in self.output_types])

    # -- computing ---------------------------------------------------------------------------------
    def _numpy_runner(self) -> Any:
        if self._runner is None:
            from symlab.compile.linker_numpy import NumpyLinker

            self._runner = NumpyLinker().make_runner(self._fgraph)
        return self._runner

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        """Run the inner graph on the NumPy backend (prepared on the first call, kept on the op).

        An output that would share memory with an input or a constant is a copy: a node of this op
        declares no ``view_map``.
        """
        with self._runner_lock:  # the runner's cells are the op's: one call at a time
            values = self._numpy_runner()(list(inputs))
        for cell, value in zip(output_storage, values):
            cell[0] = value

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: Sequence[Sequence[Variable]]) -> list:
        """The inner graph's shape inference, with the outer shapes for the inner inputs' shapes."""
        from symlab.tensor.shape_inference import symbolic_shape
        from symlab.tensor.type import TensorType

        inner_in = self._fgraph.inputs
        memo = {v: tuple(s) for v, s in zip(inner_in, input_shapes) if isinstance(v.type, TensorType)}
        shapes = [symbolic_shape(o, stop_at=inner_in, memo=memo) if isinstance(o.type, TensorType) else ()
                  for o in self._fgraph.outputs]
        flat = [s for shape in shapes for s in shape]
        if not flat:
            return shapes
        flat = clone_replace(flat, dict(zip(inner_in, node.inputs)))
        out, k = [], 0
        for shape in shapes:
            out.append(tuple(flat[k : k + len(shape)]))
            k += len(shape)
        return out

    def connection_pattern(self, node: Apply | None = None) -> list[list[bool]]:
        """``pattern[i][j]``: whether output ``j`` depends on input ``i`` (the given one, if any)."""
        pattern = self._given_pattern
        if pattern is None:
            if self._computed_pattern is None:
                self._computed_pattern = io_connection_pattern(self._fgraph)
            pattern = self._computed_pattern
        return [list(row) for row in pattern]

    # -- differentiating ----------------------------------------------------------------------------
    def L_op(self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Variable]:  # noqa: N802
        """Input gradients from the inner graph's gradient or ``lop_overrides`` (see the class docstring)."""
        return builders_gradient.lop(self, OpFromGraph, list(inputs), list(outputs), list(output_grads))

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Variable | None]) -> list[Variable]:  # noqa: N802
        """Output directions from the inner graph's pushforward or ``rop_overrides``."""
        return builders_gradient.rop(self, OpFromGraph, list(inputs), list(eval_points))

    def do_constant_folding(self, fgraph: Any, node: Apply) -> bool:
        return True


def io_connection_pattern(fgraph: FunctionGraph) -> list[list[bool]]:
    """``pattern[i][j]``: whether output ``j`` of ``fgraph`` depends on its input ``i``, through the inner
    nodes' own connection patterns (an output of a nested ``OpFromGraph`` depends only on the inputs it uses)."""
    deps: dict[Variable, frozenset[int]] = {v: frozenset((k,)) for k, v in enumerate(fgraph.inputs)}
    for node in fgraph.toposort():
        ins = [deps.get(v, frozenset()) for v in node.inputs]
        pattern = node.op.connection_pattern(node) if hasattr(node.op, "connection_pattern") else None
        for j, out in enumerate(node.outputs):
            rows = ins if pattern is None else [d for d, row in zip(ins, pattern) if row[j]]
            deps[out] = frozenset().union(*rows)
    reach = [deps.get(o, frozenset()) for o in fgraph.outputs]
    return [[k in r for r in reach] for k in range(len(fgraph.inputs))]


def _implicit_shared(inputs: list[Variable], outputs: list[Variable], strict: bool, where: str) -> list[SharedVariable]:
    """The shared variables ``outputs`` use that are not inputs; a missing variable is an error naming it."""
    given = {id(v) for v in inputs}
    shared: list[SharedVariable] = []
    for k, out in enumerate(outputs):
        for leaf in graph_inputs([out], blockers=inputs):
            if id(leaf) in given or isinstance(leaf, Constant) or any(leaf is s for s in shared):
                continue
            if isinstance(leaf, SharedVariable) and not strict:
                shared.append(leaf)
                continue
            kind = "is a shared variable used implicitly (strict=True refuses that)" if isinstance(leaf, SharedVariable) \
                else "is neither among the inputs " + str([str(v) for v in inputs]) + " nor a shared variable nor a constant"
            raise MissingInputError(f"{where}: output {k} needs {leaf} ({leaf.type}), which {kind}; add it to the inputs")
    return shared


def _checked_pattern(pattern: Any, n_in: int, n_out: int, where: str) -> list[list[bool]]:
    rows = list(pattern) if isinstance(pattern, list | tuple) else None
    if rows is None or len(rows) != n_in or any(not isinstance(r, list | tuple) or len(r) != n_out for r in rows):
        raise ValueError(
            f"{where}: connection_pattern must be {n_in} lists (one per input) of {n_out} booleans (one per "
            f"output), received {pattern!r:.100}"
        )
    return [[bool(b) for b in row] for row in rows]


def _inner_fgraph(inputs: list[Variable], outputs: list[Variable]) -> FunctionGraph:
    """A private copy of the graph, on fresh inputs of the same types and names (a constant input included)."""
    fresh = [v.type(v.name) for v in inputs]
    memo: dict[Any, Any] = dict(zip(inputs, fresh))
    equiv = clone_get_equiv(inputs, outputs, copy_inputs=False, copy_orphans=False, memo=memo)
    return FunctionGraph(fresh, [equiv[o] for o in outputs], clone=False)


def _graph_key(fgraph: FunctionGraph) -> tuple[Any, ...]:
    """A canonical form of ``fgraph``: input types, each node (op, wired inputs, output types), outputs."""
    ref: dict[Variable, tuple[Any, ...]] = {v: ("in", k) for k, v in enumerate(fgraph.inputs)}

    def of(v: Variable) -> tuple[Any, ...]:
        got = ref.get(v)
        if got is None:
            if isinstance(v, Constant):
                got = ("const", v.type, _data_key(v.data))
            else:  # a free variable cannot be in an OpFromGraph's graph
                raise MissingInputError(f"OpFromGraph: the inner graph holds a free variable {v}")
            ref[v] = got
        return got

    nodes = []
    for k, node in enumerate(fgraph.toposort()):
        nodes.append((node.op, tuple(of(i) for i in node.inputs), tuple(o.type for o in node.outputs)))
        for j, o in enumerate(node.outputs):
            ref[o] = ("node", k, j)
    return (tuple(v.type for v in fgraph.inputs), tuple(nodes), tuple(of(o) for o in fgraph.outputs))


def _data_key(data: Any) -> Any:
    if isinstance(data, np.ndarray | np.generic):
        arr = np.array(data, order="C")  # (ascontiguousarray would make a 0-d array 1-d)
        return (arr.dtype.str, arr.shape, hashlib.sha256(arr.tobytes()).hexdigest())
    try:
        hash(data)
        return (type(data).__name__, data)
    except TypeError:
        return (type(data).__name__, repr(data))


def inline_outputs(op: OpFromGraph, inputs: Sequence[Variable]) -> list[Variable]:
    """``op``'s inner graph copied onto ``inputs``: the outputs a node of ``op`` on them is equal to."""
    return clone_replace(list(op.fgraph.outputs), dict(zip(op.fgraph.inputs, inputs)))


__all__ = ["COMPILE_KWARGS", "KeyedInnerGraphOp", "OpFromGraph", "inline_outputs", "io_connection_pattern"]
