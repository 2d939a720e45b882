"""DebugMode: run a compiled function while checking everything that can be checked.

At every call (``mode="DEBUG"``), for every node of the optimized graph, in
execution order:

* each output must be a valid value of its variable's type;
* only the inputs declared in the op's ``destroy_map`` may change (each input
  is compared with a copy taken before the node ran);
* an output may share memory only with the inputs its ``view_map`` or
  ``destroy_map`` declares;
* ``perform`` is run a second time, on fresh copies of the inputs, and must
  give the same values (``Type.values_eq_approx``);
* ``infer_shape`` must give the shapes ``perform`` produced;
* the node's Numba kernel, compiled alone
  (:func:`symlab.compile.numba.linker.compile_node`), run on fresh copies of
  the inputs, must give ``perform``'s values (``values_eq_approx``); an op
  without a kernel is skipped.

Then the protected inputs must be unchanged, and every output must match the
unoptimized graph's value (``values_eq_approx``). When it does not, the rewrite
trace is replayed step by step to find the first rewrite that changed the
value, and the error names that rewrite (its rule), the node it was applied
to and both values. The first problem found raises a :class:`DebugModeError`
subclass naming the node (and the rewrite that created the node, if any).

>>> import numpy as np
>>> import symlab
>>> import symlab.tensor as st
>>> x = st.dvector("x")
>>> f = symlab.function([x], (st.exp(x) * 2.0).sum(), mode="DEBUG")
>>> float(f([0.0, 0.0]))
4.0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from symlab.compile.linker_numpy import NumpyLinker, NumpyRunner, copy_value
from symlab.graph.basic import Apply, Constant, Variable
from symlab.graph.fg import FunctionGraph


class DebugModeError(Exception):
    """A check of DebugMode failed."""


class BadThunkOutput(DebugModeError):
    """Two runs of a node, or the compiled and the reference graphs, disagree."""


class BadDestroyMap(DebugModeError):
    """A node changed an input its ``destroy_map`` does not declare (or a protected input changed)."""


class BadViewMap(DebugModeError):
    """An output shares memory with an input its ``view_map`` does not declare."""


class BadOutputType(DebugModeError):
    """A node produced a value its output's type refuses."""


class BadInferShape(DebugModeError):
    """``infer_shape`` disagrees with the shapes ``perform`` produced."""


class BadRewrite(DebugModeError):
    """A rewrite changed the value the graph computes."""


#: PyTensor's (and Theano's) name for :class:`BadRewrite`: rewrites were "optimizations" there.
BadOptimization = BadRewrite


def show_value(value: Any, limit: int = 12) -> str:
    """A short text of a value: its dtype and shape, and its elements if few.

    >>> show_value(np.array([1.0, 2.5]))
    'array([1. , 2.5]) (float64, shape (2,))'
    """
    arr = np.asarray(value)
    if arr.size <= limit:
        body = repr(arr).replace("\n", "")
        body = " ".join(body.split())
    else:
        body = np.array2string(arr.ravel()[:limit], separator=", ") + "..."
    return f"{body} ({arr.dtype}, shape {arr.shape})"


def same_values(a: Any, b: Any) -> bool:
    """Exactly equal values (NaN equals NaN), same shape and dtype."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind in "fc":
        return bool(np.array_equal(a, b, equal_nan=True))
    return bool(np.array_equal(a, b))


def _destroyed(node: Apply) -> set[int]:
    return {i for ins in (getattr(node.op, "destroy_map", None) or {}).values() for i in ins}


def _declared_views(node: Apply, j: int) -> set[int]:
    op = node.op
    return {*(getattr(op, "view_map", None) or {}).get(j, ()), *(getattr(op, "destroy_map", None) or {}).get(j, ())}


def run_all(fgraph: FunctionGraph, input_values: Sequence[Any]) -> dict[Variable, Any]:
    """Values of every variable of ``fgraph`` (inputs are copied first), nodes in ``toposort()`` order."""
    values: dict[Variable, Any] = {v: copy_value(x) for v, x in zip(fgraph.inputs, input_values)}
    for node in fgraph.toposort():
        args = [inp.data if isinstance(inp, Constant) else values[inp] for inp in node.inputs]
        cells: list[list[Any]] = [[None] for _ in node.outputs]
        node.op.perform(node, args, cells)
        for out, cell in zip(node.outputs, cells):
            values[out] = cell[0]
    for out in fgraph.outputs:
        if isinstance(out, Constant):
            values[out] = out.data
    return values


class DebugRunner(NumpyRunner):
    """Runs the graph with the checks of DebugMode (see the module's docstring)."""

    def __init__(
        self,
        fgraph: FunctionGraph,
        borrow_outputs: Sequence[bool] | None = None,
        trace: Any = None,
        check_perform_twice: bool = True,
        check_infer_shape: bool = True,
        check_views: bool = True,
        check_rewrites: bool = True,
        check_numba: bool = True,
    ) -> None:
        super().__init__(fgraph, borrow_outputs)
        self.check_numba = check_numba
        self.trace = trace
        self.check_perform_twice = check_perform_twice
        self.check_infer_shape = check_infer_shape
        self.check_views = check_views
        self.check_rewrites = check_rewrites
        handler = getattr(fgraph, "destroy_handler", None)
        self.mutable = set(handler.mutable_inputs) if handler is not None else set()
        self.created_by: dict[Apply, Any] = {}
        if trace is not None:
            for step in trace.accepted:
                for n in step.created:
                    self.created_by[n] = step

    # -- a call -------------------------------------------------------------------------
    def __call__(self, input_values: Sequence[Any]) -> list[Any]:
        before = [copy_value(v) for v in input_values]
        outputs = super().__call__(input_values)
        for k, (var, old, now) in enumerate(zip(self.fgraph.inputs, before, input_values)):
            if var not in self.mutable and not same_values(old, now):
                raise BadDestroyMap(
                    f"DebugMode: protected input {k} ({var}) was modified during the call: it was "
                    f"{show_value(old)}, it is now {show_value(now)}"
                )
        if self.check_rewrites and self.trace is not None:
            self._check_against_reference(before, outputs)
        return outputs

    # -- per node -----------------------------------------------------------------------
    def execute(self) -> None:
        stats = self.profile.nodes if self.profile is not None else None
        for k, (perform, node, ins, outs) in enumerate(self.thunks):
            args = [c[0] for c in ins]
            originals = [copy_value(a) for a in args]
            self.run_node(k, perform, node, args, outs, stats)  # timed alone, without the checks
            results = [c[0] for c in outs]
            self._check_types(k, node, results)
            self._check_destroy(k, node, originals, args)
            if self.check_views:
                self._check_views(k, node, args, results)
            if self.check_perform_twice:
                self._check_twice(k, node, originals, results)
            if self.check_infer_shape:
                self._check_shapes(k, node, originals, results)
            if self.check_numba:
                self._check_numba(k, node, originals, results)

    def _where(self, k: int, node: Apply) -> str:
        text = f"node {k} ({node})"
        step = self.created_by.get(node)
        if step is not None:
            text += f", created by rewrite step {step.index} [{step.phase}] {step.rule} ({step.location})"
        return text

    def _check_types(self, k: int, node: Apply, results: list[Any]) -> None:
        for j, (out, value) in enumerate(zip(node.outputs, results)):
            try:
                out.type.filter(value, strict=True)
            except (TypeError, ValueError) as err:
                from symlab.compile.shared import describe_value

                raise BadOutputType(
                    f"DebugMode: {self._where(k, node)}: output {j} should be a {out.type}, perform produced "
                    f"{describe_value(value)}: {err}"
                ) from None

    def _check_destroy(self, k: int, node: Apply, originals: list[Any], args: list[Any]) -> None:
        destroyed = _destroyed(node)
        for i, (old, now) in enumerate(zip(originals, args)):
            if i not in destroyed and not same_values(old, now):
                raise BadDestroyMap(
                    f"DebugMode: {self._where(k, node)} modified its input {i} ({node.inputs[i]}), which its "
                    f"destroy_map {dict(getattr(node.op, 'destroy_map', {}) or {})} does not declare: undeclared "
                    f"inplace write. Before: {show_value(old)}; after: {show_value(now)}"
                )

    def _check_views(self, k: int, node: Apply, args: list[Any], results: list[Any]) -> None:
        for j, value in enumerate(results):
            allowed = _declared_views(node, j)
            for i, (inp, arg) in enumerate(zip(node.inputs, args)):
                if i in allowed or not isinstance(value, np.ndarray) or not isinstance(arg, np.ndarray):
                    continue
                if value.size and np.may_share_memory(value, arg):
                    raise BadViewMap(
                        f"DebugMode: {self._where(k, node)}: output {j} shares memory with input {i} ({inp}), "
                        f"which its view_map {dict(getattr(node.op, 'view_map', {}) or {})} does not declare"
                    )

    def _check_twice(self, k: int, node: Apply, originals: list[Any], results: list[Any]) -> None:
        fresh = [copy_value(a) for a in originals]
        cells: list[list[Any]] = [[None] for _ in node.outputs]
        node.op.perform(node, fresh, cells)
        for j, (out, first, cell) in enumerate(zip(node.outputs, results, cells)):
            if not out.type.values_eq_approx(first, cell[0]):
                raise BadThunkOutput(
                    f"DebugMode: {self._where(k, node)}: two runs of perform on the same inputs disagree on "
                    f"output {j}: first {show_value(first)}, second {show_value(cell[0])}"
                )

    def _check_numba(self, k: int, node: Apply, originals: list[Any], results: list[Any]) -> None:
        from symlab.compile.numba.kernels import NoKernel
        from symlab.compile.numba.linker import compile_node

        try:
            run = compile_node(node)
        except NoKernel:
            return
        except Exception as err:
            raise BadThunkOutput(
                f"DebugMode: {self._where(k, node)}: its Numba kernel does not compile: {type(err).__name__}: {err}"
            ) from err
        fresh = [copy_value(a) for a in originals]
        try:
            got = run(*fresh)
        except Exception as err:
            raise BadThunkOutput(
                f"DebugMode: {self._where(k, node)}: its Numba kernel raised {type(err).__name__}: {err} where "
                f"perform gave {', '.join(show_value(r) for r in results)}"
            ) from err
        for j, (out, expected, value) in enumerate(zip(node.outputs, results, got)):
            value = np.asarray(value)
            if value.dtype != np.asarray(expected).dtype or not out.type.values_eq_approx(expected, value):
                raise BadThunkOutput(
                    f"DebugMode: {self._where(k, node)}: its Numba kernel and perform disagree on output {j}: "
                    f"perform {show_value(expected)}, Numba {show_value(value)}"
                )

    def _check_shapes(self, k: int, node: Apply, originals: list[Any], results: list[Any]) -> None:
        from symlab.graph.evaluate import evaluate
        from symlab.tensor.basic import constant

        if not all(hasattr(out.type, "ndim") for out in node.outputs):
            return
        shapes = [tuple(constant(d, dtype="int64") for d in np.shape(a)) for a in originals]
        try:
            inferred = node.op.infer_shape(self.fgraph, node, shapes)
        except NotImplementedError:
            return
        given = {inp: val for inp, val in zip(node.inputs, originals) if not isinstance(inp, Constant)}
        for j, (out, value) in enumerate(zip(node.outputs, results)):
            dims = list(inferred[j])
            symbolic = [d for d in dims if isinstance(d, Variable)]
            try:
                computed = iter(evaluate(symbolic, given)) if symbolic else iter(())
                got = tuple(int(next(computed)) if isinstance(d, Variable) else int(d) for d in dims)
            except Exception as err:
                raise BadInferShape(
                    f"DebugMode: {self._where(k, node)}: the shape infer_shape gives for output {j} cannot be "
                    f"computed: {type(err).__name__}: {err}"
                ) from err
            if got != np.shape(value):
                raise BadInferShape(
                    f"DebugMode: {self._where(k, node)}: infer_shape says output {j} ({out}) has shape {got}, "
                    f"perform produced shape {np.shape(value)}"
                )

    # -- against the unoptimized graph ----------------------------------------------------
    def _check_against_reference(self, inputs: list[Any], outputs: list[Any]) -> None:
        trace = self.trace
        start = trace.start
        _protect_like(start, self.fgraph, self.mutable)
        reference = run_all(start, inputs)
        ref_outputs = [reference[o] for o in start.outputs]
        for k, (out, ref, got) in enumerate(zip(self.fgraph.outputs, ref_outputs, outputs)):
            if out.type.values_eq_approx(ref, got):
                continue
            blamed = find_bad_rewrite(trace, inputs, self.mutable, self.fgraph, output=k, reference=ref)
            if blamed is not None:
                raise blamed
            raise BadThunkOutput(
                f"DebugMode: output {k} ({out}) of the compiled function differs from the unoptimized graph's, "
                f"though every rewritten graph computes it right when run in plain order: the compiled run "
                f"(node order, inplace writes) is wrong. Output computed by {out.owner}. Reference: "
                f"{show_value(ref)}; compiled: {show_value(got)}"
            )


def _protect_like(graph: FunctionGraph, like: FunctionGraph, mutable: set[Variable]) -> None:
    """Give ``graph`` a destroy handler with the same mutable input positions as ``like``."""
    from symlab.graph.destroyhandler import DestroyHandler

    if getattr(graph, "destroy_handler", None) is None:
        positions = [i for i, v in enumerate(like.inputs) if v in mutable]
        graph.attach_feature(DestroyHandler(mutable_inputs=positions))


def find_bad_rewrite(
    trace: Any,
    inputs: Sequence[Any],
    mutable: set[Variable],
    fgraph: FunctionGraph,
    output: int | None = None,
    reference: Any = None,
) -> BadRewrite | None:
    """The error naming the first accepted step of ``trace`` that changes the graph's values, or None.

    With ``output`` (and its ``reference`` value), a step is blamed when the
    output's value changes; without, when a replacement's new value differs
    from the value of the variable it replaced.
    """
    for step in trace.accepted:
        before, memo_before = trace.replay(step.index - 1)
        after, memo_after = trace.replay(step.index)
        _protect_like(before, fgraph, mutable)
        _protect_like(after, fgraph, mutable)
        values_before = run_all(before, inputs)
        values_after = run_all(after, inputs)
        changed = []
        for old, new in step.replacements:
            o, n = memo_before.get(old, old), memo_after.get(new, new)
            if o in values_before and n in values_after:
                vo, vn = values_before[o], values_after[n]
                if not old.type.values_eq_approx(vo, vn):
                    changed.append(f"  {old} -> {new}: value before {show_value(vo)}, after {show_value(vn)}")
        if output is not None:
            value = values_after[after.outputs[output]]
            if fgraph.outputs[output].type.values_eq_approx(reference, value):
                continue
            head = (
                f"DebugMode: rewrite step {step.index} [{step.phase}] rule {step.rule!r} ({step.location}) changed "
                f"the value of output {output}: unoptimized {show_value(reference)}, after the rewrite "
                f"{show_value(value)}"
            )
        elif changed:
            head = (
                f"DebugMode: rewrite step {step.index} [{step.phase}] rule {step.rule!r} ({step.location}) "
                f"replaced variables by others of different values"
            )
        else:
            continue
        where = f"\n  applied to node {step.node}" if step.node is not None else ""
        detail = "\n" + "\n".join(changed) if changed else ""
        return BadRewrite(head + where + detail)
    return None


class DebugLinker(NumpyLinker):
    """Builds :class:`DebugRunner` objects with the mode's checks."""

    name = "debug"

    def __init__(self, **checks: bool) -> None:
        self.checks = checks

    def make_runner(
        self, fgraph: FunctionGraph, borrow_outputs: Sequence[bool] | None = None, trace: Any = None
    ) -> DebugRunner:
        return DebugRunner(fgraph, borrow_outputs, trace=trace, **self.checks)


__all__ = [
    "BadOptimization",
    "BadDestroyMap",
    "BadInferShape",
    "BadOutputType",
    "BadRewrite",
    "BadThunkOutput",
    "BadViewMap",
    "DebugLinker",
    "DebugModeError",
    "DebugRunner",
    "find_bad_rewrite",
    "run_all",
    "same_values",
    "show_value",
]
