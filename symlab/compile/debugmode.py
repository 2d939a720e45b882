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
* ``infer_shape`` must give the shapes ``perform`` produced (a shape it gives in terms of other variables
  of the graph, such as a ``Reshape`` to another variable's shape, is computed from the node's inputs and,
  where they do not suffice, from the call's inputs);
* the node's Numba kernel, compiled alone
  (:func:`symlab.compile.numba.standalone.compile_node`), run on fresh copies of
  the inputs, must give ``perform``'s values (``values_eq_approx``); an op
  without a kernel is skipped.

Then the protected inputs must be unchanged, and every output must match the
unoptimized graph's value (``values_eq_approx``, at the tolerance of the least
precise float dtype computed on the way to the output in either graph: a
``float32`` computation cast to ``float64`` is compared at ``float32``'s). When it does not, the rewrite
trace is replayed step by step, each step judged against the graph just before it
(:func:`~symlab.compile.bad_rewrite.find_bad_rewrite`), and the error names the first wrong rewrite (its rule), the node it was applied
to and both values. A rewrite may change values where the graph before it computes them inaccurately: a
value equal to that graph's computed in extended precision (:func:`~symlab.compile.bad_rewrite.run_wide`, ``np.longdouble``), within
the error its own rounding makes there (estimated from runs with random rounding errors), is right; and a
``stabilize`` rewrite may make finite what that graph computes as inf or NaN (``log(1 - sigmoid(x))`` is
``log(0)`` from x = 37 on). Where the graph before it is accurate, a changed value is still a wrong rewrite.
If no rewrite is wrong, the compiled values must be the last rewritten graph's. The first problem found
raises a :class:`~symlab.compile.debug_errors.DebugModeError` subclass naming the node (and the rewrite that created the node, if any).

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

from symlab.compile.bad_rewrite import find_bad_rewrite, protect_like, run_all, tolerances
from symlab.compile.debug_errors import (
    BadDestroyMap,
    BadInferShape,
    BadOptimization,
    BadOutputType,
    BadRewrite,
    BadThunkOutput,
    BadViewMap,
    DebugModeError,
    show_value,
)
from symlab.compile.linker_numpy import NumpyLinker, NumpyRunner, copy_value
from symlab.graph.basic import Apply, Constant, MissingInputError, Variable
from symlab.graph.fg import FunctionGraph


def _is_sparse(value: Any) -> bool:
    """A scipy.sparse matrix (:mod:`symlab.sparse`'s values), recognised without importing scipy."""
    return value.__class__.__module__.startswith("scipy.sparse")


def same_values(a: Any, b: Any) -> bool:
    """Exactly equal values (NaN equals NaN), same shape and dtype (and same format, for sparse matrices)."""
    sparse_a, sparse_b = _is_sparse(a), _is_sparse(b)
    if sparse_a or sparse_b:
        return sparse_a and sparse_b and a.format == b.format and same_values(a.toarray(), b.toarray())
    if isinstance(a, np.random.Generator) or isinstance(b, np.random.Generator):  # equal states, not the same object
        return type(a) is type(b) and a.bit_generator.state == b.bit_generator.state
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
        self._call_inputs: list[Any] = []  # copies of the current call's inputs (for infer_shape's check)
        self._output_tolerances: dict[int, tuple[float | None, float | None]] = {}
        if trace is not None:
            for step in trace.accepted:
                for n in step.created:
                    self.created_by[n] = step

    # -- a call -------------------------------------------------------------------------
    def __call__(self, input_values: Sequence[Any]) -> list[Any]:
        before = [copy_value(v) for v in input_values]
        self._call_inputs = before
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
        for k, (perform, node, ins, outs) in self.scheduled():
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
                from symlab.graph.sharedvalue import describe_value

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
        from symlab.compile.numba.standalone import compile_node

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
            if isinstance(expected, np.random.Generator):  # a random variable's next generator: compare states
                same = isinstance(value, np.random.Generator) and out.type.values_eq_approx(expected, value)
            else:
                value = np.asarray(value)
                same = value.dtype == np.asarray(expected).dtype and out.type.values_eq_approx(expected, value)
            if not same:
                raise BadThunkOutput(
                    f"DebugMode: {self._where(k, node)}: its Numba kernel and perform disagree on output {j}: "
                    f"perform {show_value(expected)}, Numba {show_value(value)}"
                )

    def _check_shapes(self, k: int, node: Apply, originals: list[Any], results: list[Any]) -> None:
        from symlab.tensor.basic import constant

        if not all(hasattr(out.type, "ndim") for out in node.outputs):
            return
        if any(a is None and hasattr(i.type, "ndim") for i, a in zip(node.inputs, originals)):
            return  # an ifelse's branch the lazy run skipped: its shape is unknown, and not needed
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
                computed = iter(self._evaluate_dims(symbolic, given)) if symbolic else iter(())
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

    def _evaluate_dims(self, dims: list[Variable], given: dict[Variable, Any]) -> list[Any]:
        """The values of the symbolic ``dims`` from the node's inputs; where those do not suffice (a ``Reshape``
        to ``(a.shape[1], a.shape[0])`` gives dims in terms of ``a``, not of its own inputs), also from the
        call's inputs, copied (the graph of the dims may hold inplace ops)."""
        from symlab.graph.evaluate import evaluate

        try:
            return evaluate(dims, {v: copy_value(x) for v, x in given.items()})
        except MissingInputError:
            everything = {v: copy_value(x) for v, x in zip(self.fgraph.inputs, self._call_inputs)}
            everything.update({v: copy_value(x) for v, x in given.items()})
            return evaluate(dims, everything)

    # -- against the unoptimized graph ----------------------------------------------------
    def _check_against_reference(self, inputs: list[Any], outputs: list[Any]) -> None:
        trace = self.trace
        start = trace.start
        protect_like(start, self.fgraph, self.mutable)
        reference = run_all(start, inputs)
        ref_outputs = [reference[o] for o in start.outputs]
        differing = []
        for k, (out, ref, got) in enumerate(zip(self.fgraph.outputs, ref_outputs, outputs)):
            if k not in self._output_tolerances:  # the graphs do not change: once per output
                self._output_tolerances[k] = tolerances([out, start.outputs[k]])
            rtol, atol = self._output_tolerances[k]
            if not out.type.values_eq_approx(ref, got, rtol, atol):
                differing.append(k)
        if not differing:
            return
        # Replay the rewrites, each judged against the graph before it (a stabilization where that graph loses
        # digits is right): the first wrong one is blamed; if none is, the last graph must give the compiled values.
        blamed = find_bad_rewrite(trace, inputs, self.mutable, self.fgraph, output=differing, reference=ref_outputs)
        if blamed is not None:
            raise blamed
        final = trace.replay(len(trace.steps))[0]
        protect_like(final, self.fgraph, self.mutable)
        rewritten = run_all(final, inputs)
        for k in differing:
            out, got, want = self.fgraph.outputs[k], outputs[k], rewritten[final.outputs[k]]
            if out.type.values_eq_approx(want, got, *tolerances([out, final.outputs[k]])):
                continue
            raise BadThunkOutput(
                f"DebugMode: output {k} ({out}) of the compiled function differs from the unoptimized graph's, "
                f"though every rewritten graph computes it right when run in plain order: the compiled run "
                f"(node order, inplace writes) is wrong. Output computed by {out.owner}. Reference: "
                f"{show_value(ref_outputs[k])}; rewritten graph: {show_value(want)}; compiled: {show_value(got)}"
            )


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
    "same_values",
    "show_value",
]
