"""``Composite``: a scalar op whose computation is a small graph of scalar ops.

Elemwise fusion turns a connected region of ``Elemwise`` nodes into one
``Elemwise`` over a ``Composite``: one loop over the data instead of one per
operation. The inner graph is built from :class:`~symlab.scalar.ScalarType`
variables and scalar ops:

>>> import numpy as np
>>> import symlab.scalar as ss
>>> from symlab.graph.basic import Constant
>>> x = ss.float64("x")
>>> ten = Constant(ss.int64, 10)
>>> c = Composite([x], [ss.add(x, ss.pow(x, ten))])
>>> c
Composite{(i0 + (i0 ** 10))}
>>> c.impl(np.array([0.0, 1.0, 2.0]))
array([   0.,    2., 1026.])

Two composites of the same computation are equal (and hash the same), so
``MergeOptimizer`` merges their nodes:

>>> y = ss.float64("y")
>>> c == Composite([y], [ss.add(y, ss.pow(y, ten))])
True

:meth:`Composite.python_source` gives the computation as the source of a
plain Python function, one assignment per inner node, for code generators:

>>> source, namespace = c.python_source("f")
>>> print(source)
def f(i0):
    t0 = np.float64((i0 ** np.int64(10)))
    t1 = np.float64((i0 + t0))
    return t1
>>> exec(source, namespace)
>>> float(namespace["f"](np.float64(2.0)))
1026.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cached_property
from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Constant, Variable
from symlab.graph.fg import FunctionGraph
from symlab.graph.inner_graph import HasInnerGraph
from symlab.graph.traversal import io_toposort
from symlab.scalar.basic import Cast, ScalarOp, as_scalar
from symlab.scalar.type import ScalarType, np_type_source

#: Longest text of one inner variable in a Composite's name (longer ones become ``...``).
NAME_PART_LIMIT = 400
#: Longest name of a Composite; the inner graph printed by ``debugprint`` shows the rest.
NAME_LIMIT = 240


class Composite(HasInnerGraph, ScalarOp):
    """The scalar computation from ``inputs`` to ``outputs`` (ScalarType variables).

    The graph is copied: later changes to the given variables do not affect
    the op. A nested ``Composite`` is inlined. ``key`` is a canonical text of
    the inner graph (input dtypes, each node's op and output dtype, the
    outputs); equal keys mean equal computations, so ``key`` is the op's only
    prop. ``impl`` evaluates the inner graph on whole arrays, casting every
    intermediate to its inner dtype exactly as the unfused ``Elemwise`` nodes
    do, and gives every output the broadcast shape of all inputs.

    ``expr`` is ``None``: code generators use :meth:`python_source`. The
    composite is ``approximate`` or ``expensive`` when an inner op is.
    """

    __props__ = ("key",)

    def __init__(self, inputs: Sequence[Variable], outputs: Sequence[Variable]) -> None:
        inputs, outputs = list(inputs), list(outputs)
        for k, v in enumerate([*inputs, *outputs]):
            if not isinstance(v, Variable) or not isinstance(v.type, ScalarType):
                where = f"input {k}" if k < len(inputs) else f"output {k - len(inputs)}"
                raise TypeError(f"Composite: {where} must be a Variable of a ScalarType, received {v!r}")
        for k, v in enumerate(inputs):
            if v.owner is not None or isinstance(v, Constant):
                raise ValueError(f"Composite: input {k} ({v}) must be a root variable, not computed nor a constant")
        if len(set(inputs)) != len(inputs):
            raise ValueError("Composite: the same variable appears twice among the inputs")
        if not outputs:
            raise ValueError("Composite: at least one output is needed")
        self.inputs, self.outputs, self.nodes = _flatten_copy(inputs, outputs)
        self.nin = len(self.inputs)
        self.nout = len(self.outputs)
        self.symbol = None
        self.expr = None
        self.commutative = False
        self.associative = False
        self.approximate = any(node.op.approximate for node in self.nodes)
        self.expensive = any(node.op.expensive for node in self.nodes)
        self.key = _canonical_key(self.inputs, self.outputs, self.nodes)
        self._name = _infix_name(self.inputs, self.outputs, self.nodes)

    # -- identity --------------------------------------------------------------------------
    @property
    def name(self) -> str:  # type: ignore[override]
        return self._name

    def __str__(self) -> str:
        return self._name

    # -- the inner graph (HasInnerGraph) ---------------------------------------------------
    @cached_property
    def fgraph(self) -> FunctionGraph:  # type: ignore[override]
        """The inner graph of scalar ops, from ``inputs`` (``i0``...) to ``outputs`` (not a copy: read it only)."""
        return FunctionGraph(self.inputs, self.outputs, clone=False)

    @property
    def inner_inputs(self) -> list[Variable]:
        return list(self.inputs)

    @property
    def inner_outputs(self) -> list[Variable]:
        return list(self.outputs)

    def clone(self) -> Composite:
        """An equal Composite over a fresh copy of the inner graph."""
        return Composite(self.inputs, self.outputs)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for derived in ("fgraph", "_last_uses"):  # rebuilt on demand
            state.pop(derived, None)
        return state

    # -- dtypes ----------------------------------------------------------------------------
    def output_dtypes(self, *args: Any) -> tuple[str, ...]:
        """The dtype of each output; ``args`` (dtypes, or weak Python numbers) must fit the inputs.

        >>> import symlab.scalar as ss
        >>> x = ss.float32("x")
        >>> Composite([x], [ss.exp(x), ss.lt(x, x)]).output_dtypes("float32")
        ('float32', 'bool')
        """
        if len(args) != self.nin:
            raise TypeError(f"{self} takes {self.nin} inputs, received {len(args)}")
        for k, (arg, inp) in enumerate(zip(args, self.inputs)):
            if isinstance(arg, str) and np.dtype(arg).name != inp.type.dtype:
                raise TypeError(f"{self}: input {k} must have dtype {inp.type.dtype}, received {arg}")
        return tuple(o.type.dtype for o in self.outputs)

    def output_dtype(self, *args: Any) -> str:
        """The dtype of the only output (see :meth:`output_dtypes` for several outputs)."""
        dtypes = self.output_dtypes(*args)
        if len(dtypes) != 1:
            raise TypeError(f"{self} has {len(dtypes)} outputs: ask output_dtypes() for their dtypes")
        return dtypes[0]

    # -- graph -----------------------------------------------------------------------------
    def make_node(self, *inputs: Any) -> Apply:
        if len(inputs) != self.nin:
            raise TypeError(f"{self} takes {self.nin} inputs, received {len(inputs)}")
        variables = [as_scalar(i) for i in inputs]
        for k, (v, inner) in enumerate(zip(variables, self.inputs)):
            if v.type != inner.type:
                raise TypeError(f"{self}: input {k} must be of type {inner.type}, received {v} of type {v.type}")
        return Apply(self, variables, [o.type() for o in self.outputs])

    # -- computing -------------------------------------------------------------------------
    @cached_property
    def _last_uses(self) -> list[list[Variable]]:
        """For each inner node, the intermediate values it is the last to read (never inputs or outputs)."""
        keep = set(self.inputs) | set(self.outputs)
        last: dict[Variable, int] = {}
        for k, node in enumerate(self.nodes):
            for v in node.inputs:
                if not isinstance(v, Constant) and v not in keep:
                    last[v] = k
        out: list[list[Variable]] = [[] for _ in self.nodes]
        for v, k in last.items():
            out[k].append(v)
        return out

    def impl(self, *arrays: Any) -> Any:  # type: ignore[override]
        """The outputs for input values (arrays broadcast together, or numbers).

        One output is returned as it is, several as a tuple.
        """
        if len(arrays) != self.nin:
            raise TypeError(f"{self} takes {self.nin} inputs, received {len(arrays)}")
        values: dict[Variable, Any] = {}
        for inp, a in zip(self.inputs, arrays):
            values[inp] = np.asarray(a, dtype=inp.type.dtype)
        with np.errstate(all="ignore"):
            for node, done in zip(self.nodes, self._last_uses):
                args = [v.data if isinstance(v, Constant) else values[v] for v in node.inputs]
                result = node.op.impl(*args)
                values[node.outputs[0]] = np.asarray(result, dtype=node.outputs[0].type.dtype)
                for v in done:  # freed after its last read: on large arrays, a few temporaries at a time, not all
                    del values[v]
        shape = np.broadcast_shapes(*(values[i].shape for i in self.inputs))
        results = []
        for out in self.outputs:
            value = np.asarray(out.data) if isinstance(out, Constant) else values[out]
            value = np.asarray(value, dtype=out.type.dtype)
            if value.shape != shape:
                value = np.broadcast_to(value, shape).copy()
            elif out in self.inputs or any(out is o for o in results):
                value = value.copy()  # an output never shares memory with an input or another output
            results.append(value)
        return results[0] if self.nout == 1 else tuple(results)

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        results = self.impl(*inputs)
        if self.nout == 1:
            results = (results,)
        for cell, out, value in zip(output_storage, node.outputs, results):
            cell[0] = np.asarray(value, dtype=out.type.dtype)[()]

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        raise NotImplementedError(
            f"{self}: the gradient of a fused Composite is not implemented; fusion runs after "
            "differentiation, so take the gradient of the unfused graph"
        )

    # -- code generation -------------------------------------------------------------------
    def python_source(self, name: str = "composite") -> tuple[str, dict[str, Any]]:
        """``(source, namespace)``: ``def name(i0, ...)`` computing the outputs from numbers.

        One assignment per inner node, each cast to its inner dtype with the
        NumPy scalar type (``np.float32(...)``), so the values are those of
        :meth:`impl`. Inner ops without an ``expr`` template call their
        ``impl``, given in ``namespace`` as ``impl_0``, ``impl_1``...; constants
        that have no exact literal are given there as ``c0``, ``c1``...
        ``exec(source, namespace)`` defines the function; one output is
        returned as it is, several as a tuple.
        """
        if not name.isidentifier():
            raise ValueError(f"python_source: {name!r} is not a Python identifier")
        namespace: dict[str, Any] = {"np": np, "math": math}
        names: dict[Variable, str] = {inp: f"i{k}" for k, inp in enumerate(self.inputs)}
        lines = [f"def {name}({', '.join(names[i] for i in self.inputs)}):"]

        def text(v: Variable) -> str:
            if isinstance(v, Constant):
                literal = _constant_literal(v)
                if literal is None:
                    literal = f"c{sum(1 for k in namespace if k.startswith('c'))}"
                    namespace[literal] = np.asarray(v.data, dtype=v.type.dtype)[()]
                return literal
            return names[v]

        impls = 0
        for k, node in enumerate(self.nodes):
            op = node.op
            args = [text(v) for v in node.inputs]
            if op.expr is None or isinstance(op, Cast):
                fn = f"impl_{impls}"
                impls += 1
                namespace[fn] = op.impl
                expression = f"{fn}({', '.join(args)})"
            else:
                expression = op.expr.format(*args)
            out = node.outputs[0]
            names[out] = f"t{k}"
            lines.append(f"    t{k} = {np_type_source(out.type.dtype)}({expression})")
        results = []
        for out in self.outputs:
            if out.owner is None:  # an input or a constant, cast to the output's dtype
                results.append(f"{np_type_source(out.type.dtype)}({text(out)})")
            else:
                results.append(names[out])
        lines.append(f"    return {results[0]}" if self.nout == 1 else f"    return ({', '.join(results)},)")
        return "\n".join(lines), namespace


def _constant_literal(c: Constant) -> str | None:
    """``np.float64(2.0)`` for a constant, or None when there is no exact short literal."""
    value = np.asarray(c.data).item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, complex):
        return None
    return f"{np_type_source(c.type.dtype)}({value!r})"


def _flatten_copy(
    inputs: list[Variable], outputs: list[Variable]
) -> tuple[list[Variable], list[Variable], list[Apply]]:
    """A copy of the graph with fresh inputs named ``i0``..., nested composites inlined.

    Returns ``(inputs, outputs, nodes in topological order)``; every node has
    one output. Raises ``ValueError`` if the outputs need a variable that is
    neither an input nor a constant, ``TypeError`` for an op that is not scalar.
    """
    memo: dict[Variable, Variable] = {}
    new_inputs = []
    for k, inp in enumerate(inputs):
        memo[inp] = inp.type(f"i{k}")
        new_inputs.append(memo[inp])
    nodes: list[Apply] = []
    for node in io_toposort(inputs, outputs):
        if not isinstance(node.op, ScalarOp):
            raise TypeError(f"Composite: inner node {node} has op {node.op}, which is not a scalar op")
        args = []
        for v in node.inputs:
            if v not in memo:
                if not isinstance(v, Constant):
                    raise ValueError(f"Composite: the outputs need {v}, which is neither an input nor a constant")
                memo[v] = v
            args.append(memo[v])
        if isinstance(node.op, Composite):
            inner = dict(zip(node.op.inputs, args))
            for sub in node.op.nodes:
                new = Apply(sub.op, [inner.get(v, v) for v in sub.inputs], [sub.outputs[0].type()])
                nodes.append(new)
                inner[sub.outputs[0]] = new.outputs[0]
            for out, sub_out in zip(node.outputs, node.op.outputs):
                memo[out] = inner.get(sub_out, sub_out)
            continue
        if len(node.outputs) != 1:
            raise TypeError(f"Composite: inner node {node} has {len(node.outputs)} outputs; scalar ops have one")
        new = Apply(node.op, args, [node.outputs[0].type()])
        nodes.append(new)
        memo[node.outputs[0]] = new.outputs[0]
    new_outputs = []
    for out in outputs:
        if out not in memo:
            if not isinstance(out, Constant):
                raise ValueError(f"Composite: output {out} is neither computed from the inputs nor a constant")
            memo[out] = out
        new_outputs.append(memo[out])
    return new_inputs, new_outputs, nodes


def _op_key(op: ScalarOp) -> str:
    if type(op) is ScalarOp or isinstance(op, Cast):
        return str(op)
    return f"{type(op).__qualname__}{op._props()!r}"


def _constant_key(c: Constant) -> str:
    data = np.asarray(c.data)
    return f"{data.dtype.name}({data.item()!r})"


def _canonical_key(inputs: list[Variable], outputs: list[Variable], nodes: list[Apply]) -> str:
    names: dict[Variable, str] = {inp: f"i{k}" for k, inp in enumerate(inputs)}

    def ref(v: Variable) -> str:
        return _constant_key(v) if isinstance(v, Constant) else names[v]

    parts = [",".join(f"i{k}:{inp.type.dtype}" for k, inp in enumerate(inputs))]
    for k, node in enumerate(nodes):
        out = node.outputs[0]
        names[out] = f"t{k}"
        parts.append(f"t{k}:{out.type.dtype}={_op_key(node.op)}({','.join(ref(v) for v in node.inputs)})")
    parts.append("->" + ",".join(f"{ref(o)}:{o.type.dtype}" for o in outputs))
    return ";".join(parts)


def _infix_name(inputs: list[Variable], outputs: list[Variable], nodes: list[Apply]) -> str:
    texts: dict[Variable, str] = {inp: f"i{k}" for k, inp in enumerate(inputs)}

    def ref(v: Variable) -> str:
        return str(np.asarray(v.data)[()]) if isinstance(v, Constant) else texts[v]

    for node in nodes:
        op, args = node.op, [ref(v) for v in node.inputs]
        if op.symbol is not None and len(args) == 2:
            text = f"({args[0]} {op.symbol} {args[1]})"
        elif op.symbol is not None and len(args) == 1:
            text = f"({op.symbol}{args[0]})"
        else:
            text = f"{op}({', '.join(args)})"
        texts[node.outputs[0]] = text if len(text) <= NAME_PART_LIMIT else "..."
    body = ", ".join(ref(o) for o in outputs)
    if len(body) > NAME_LIMIT:
        body = body[: NAME_LIMIT - 3] + "..."
    return f"Composite{{{body}}}"


def composite_of(outputs: Sequence[Variable]) -> Composite:
    """The Composite computing ``outputs`` from the root variables they depend on (in order met).

    >>> import symlab.scalar as ss
    >>> a, b = ss.float64("a"), ss.float64("b")
    >>> composite_of([ss.mul(ss.exp(a), b)])
    Composite{(exp(i0) * i1)}
    """
    from symlab.graph.traversal import graph_inputs

    roots = [v for v in graph_inputs(list(outputs)) if not isinstance(v, Constant)]
    return Composite(roots, outputs)


__all__ = ["Composite", "composite_of"]
