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
  (:func:`symlab.compile.numba.linker.compile_node`), run on fresh copies of
  the inputs, must give ``perform``'s values (``values_eq_approx``); an op
  without a kernel is skipped.

Then the protected inputs must be unchanged, and every output must match the
unoptimized graph's value (``values_eq_approx``, at the tolerance of the least
precise float dtype computed on the way to the output in either graph: a
``float32`` computation cast to ``float64`` is compared at ``float32``'s). When it does not, the rewrite
trace is replayed step by step, each step judged against the graph just before it
(:func:`find_bad_rewrite`), and the error names the first wrong rewrite (its rule), the node it was applied
to and both values. A rewrite may change values where the graph before it computes them inaccurately: a
value equal to that graph's computed in extended precision (:func:`run_wide`, ``np.longdouble``), within
the error its own rounding makes there (estimated from runs with random rounding errors), is right; and a
``stabilize`` rewrite may make finite what that graph computes as inf or NaN (``log(1 - sigmoid(x))`` is
``log(0)`` from x = 37 on). Where the graph before it is accurate, a changed value is still a wrong rewrite.
If no rewrite is wrong, the compiled values must be the last rewritten graph's. The first problem found
raises a :class:`DebugModeError` subclass naming the node (and the rewrite that created the node, if any).

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
from symlab.graph.basic import Apply, Constant, MissingInputError, Variable
from symlab.graph.fg import FunctionGraph
from symlab.graph.traversal import ancestors


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


def _is_sparse(value: Any) -> bool:
    """A scipy.sparse matrix (:mod:`symlab.sparse`'s values), recognised without importing scipy."""
    return value.__class__.__module__.startswith("scipy.sparse")


def same_values(a: Any, b: Any) -> bool:
    """Exactly equal values (NaN equals NaN), same shape and dtype (and same format, for sparse matrices)."""
    sparse_a, sparse_b = _is_sparse(a), _is_sparse(b)
    if sparse_a or sparse_b:
        return sparse_a and sparse_b and a.format == b.format and same_values(a.toarray(), b.toarray())
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


def lowest_precision(outputs: Sequence[Variable]) -> str | None:
    """The least precise float dtype of the variables ``outputs`` are computed from (themselves included).

    >>> import symlab.tensor as st
    >>> e = st.fvector("e")
    >>> lowest_precision([st.cast(e ** 3, "float64")])
    'float32'
    """
    dtypes = {str(v.type.dtype) for v in ancestors(list(outputs)) if str(getattr(v.type, "dtype", "")).startswith("float")}
    return min(dtypes, key=lambda d: np.dtype(d).itemsize, default=None)


def _tolerances(outputs: Sequence[Variable]) -> tuple[float | None, float | None]:
    """``(rtol, atol)`` of the least precise float dtype computed on the way to ``outputs`` (None: the type's)."""
    from symlab.scalar.type import default_tolerances

    precision = lowest_precision(outputs)
    return default_tolerances(precision) if precision is not None else (None, None)


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


# -- the graph as written, evaluated accurately ------------------------------------------------------------------

#: The extended precision a graph is evaluated in to judge a rewrite: ``np.longdouble`` where it is wider than
#: ``float64`` (x86: 64 significant bits and 15 exponent bits), else ``float64`` (a float64 graph then gains nothing).
WIDE = np.longdouble if np.finfo(np.longdouble).eps < np.finfo(np.float64).eps else np.float64

#: How many runs estimate the rounding error of the graph as written (see :func:`rounding_spread`).
ROUNDING_SAMPLES = 3

#: A rewritten value is accepted within this many times the estimated rounding error of the original.
ROUNDING_FACTOR = 4.0


def _widen(value: Any) -> Any:
    """A real floating array (or NumPy scalar) in :data:`WIDE`; any other value as it is."""
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind == "f":
        return np.asarray(value, dtype=WIDE)
    return value


def _is_float(var: Variable) -> bool:
    return str(getattr(var.type, "dtype", "")).startswith("float")


def _perform_wide(node: Apply, args: list[Any]) -> list[Any]:
    """The node's outputs from wide inputs, kept wide where the op allows it.

    An elementwise op calls its scalar implementation (NumPy's ufuncs compute in ``longdouble``) and a cast
    between floats is skipped; another op runs ``perform`` on the wide inputs (a view, a sum or a product of
    ``longdouble`` arrays stays wide unless ``perform`` casts its result). An op that refuses wide inputs
    runs on its inputs cast back to their types: that node computes at its own precision.
    """
    from symlab.scalar.basic import Cast
    from symlab.scalar.composite import Composite

    scalar = getattr(node.op, "scalar_op", None)
    if scalar is not None and not isinstance(scalar, Composite):
        if isinstance(scalar, Cast) and scalar.dtype.startswith("float") and len(args) == 1:
            return [_widen(np.asarray(args[0]))] if np.asarray(args[0]).dtype.kind == "f" else \
                [np.asarray(args[0]).astype(scalar.dtype)]
        try:
            with np.errstate(all="ignore"):
                result = scalar.impl(*args)
            results = result if len(node.outputs) > 1 else (result,)
            return [_widen(np.asarray(r)) if _is_float(out) else np.asarray(r, dtype=out.type.dtype)
                    for out, r in zip(node.outputs, results)]
        except Exception:  # noqa: BLE001 - a scalar implementation without a longdouble loop: perform below
            pass
    cells: list[list[Any]] = [[None] for _ in node.outputs]
    try:
        with np.errstate(all="ignore"):
            node.op.perform(node, list(args), cells)
    except Exception:  # noqa: BLE001 - the op refuses wide inputs: it computes at its own precision
        narrow = [np.asarray(a, dtype=inp.type.dtype) if isinstance(a, (np.ndarray, np.generic)) and a.dtype == WIDE
                  and _is_float(inp) else a for inp, a in zip(node.inputs, args)]
        with np.errstate(all="ignore"):
            node.op.perform(node, narrow, cells)
    return [_widen(c[0]) for c in cells]


def run_wide(fgraph: FunctionGraph, input_values: Sequence[Any], rng: np.random.Generator | None = None
             ) -> dict[Variable, Any]:
    """Values of every variable of ``fgraph`` computed in :data:`WIDE` precision where the ops allow it.

    With ``rng``, every floating result is multiplied by ``1 + u * eps / 2``, ``u`` uniform in [-1, 1] and
    ``eps`` that of the variable's own dtype: one sample of the rounding errors the graph makes at its own
    precision (Monte Carlo arithmetic). The graph's values are not changed by the run (inputs are copied).

    >>> import symlab.tensor as st
    >>> from symlab.graph.fg import FunctionGraph
    >>> x = st.dvector("x")
    >>> fg = FunctionGraph([x], [st.log(1.0 - st.sigmoid(x))], clone=False)
    >>> with np.errstate(divide="ignore"):
    ...     float(run_all(fg, [np.array([40.0])])[fg.outputs[0]][0])  # 1 - sigmoid(40) is 0 in float64
    -inf
    >>> bool(abs(run_wide(fg, [np.array([40.0])])[fg.outputs[0]][0] + 40.0) < 0.1) or WIDE is np.float64
    True
    """
    values: dict[Variable, Any] = {v: _widen(copy_value(x)) for v, x in zip(fgraph.inputs, input_values)}
    for node in fgraph.toposort():
        args = [_widen(np.asarray(inp.data)) if isinstance(inp, Constant) and np.asarray(inp.data).dtype.kind == "f"
                else inp.data if isinstance(inp, Constant) else values[inp] for inp in node.inputs]
        for out, value in zip(node.outputs, _perform_wide(node, args)):
            if rng is not None and _is_float(out) and isinstance(value, (np.ndarray, np.generic)) \
                    and value.dtype.kind == "f":
                half_eps = WIDE(np.finfo(out.type.dtype).eps) / 2
                value = np.asarray(value * (1 + half_eps * rng.uniform(-1.0, 1.0, np.shape(value))), dtype=WIDE)
            values[out] = value
    for out in fgraph.outputs:
        if isinstance(out, Constant):
            values[out] = _widen(np.asarray(out.data))
    return values


class WideValues:
    """A graph's values in extended precision and the spread of its rounding samples, computed on demand."""

    def __init__(self, fgraph: FunctionGraph, inputs: Sequence[Any]) -> None:
        self.fgraph = fgraph
        self.inputs = inputs
        self._runs: list[dict[Variable, Any]] | None = None

    def runs(self) -> list[dict[Variable, Any]]:
        if self._runs is None:
            rng = np.random.default_rng(0)
            self._runs = [run_wide(self.fgraph, self.inputs)] + [
                run_wide(self.fgraph, self.inputs, rng) for _ in range(ROUNDING_SAMPLES)]
        return self._runs

    def of(self, var: Variable) -> tuple[Any, Any]:
        """``(value, spread)``: ``var``'s accurate value and how far rounding at its own precision moves it."""
        exact, *samples = (run[var] for run in self.runs())
        with np.errstate(all="ignore"):
            spread = np.max([np.abs(np.asarray(s, dtype=WIDE) - exact) for s in samples], axis=0)
        return exact, spread


def unfair_elements(before: Any, after: Any, accurate: Any, spread: Any, rtol: float | None, atol: float | None,
                    stabilize: bool) -> np.ndarray | None:
    """Where ``after`` (a rewritten graph's value) is wrong against ``before`` (the graph as written), or None.

    An element is right when it equals ``before`` at the tolerance, or ``accurate`` (``before``'s graph in
    extended precision) within the tolerance plus :data:`ROUNDING_FACTOR` times ``spread`` (how much that
    graph's own rounding moves it: where the original loses digits, a value with more digits is right).
    For a ``stabilize`` rewrite an element is also right where ``after`` is finite and the graph as written is
    not (an overflow, ``log(0)``, ``inf / inf``), or is finite only by luck (its rounding samples are not). None:
    not real floating arrays of one shape, compared exactly as they are.

    >>> unfair_elements(np.array([0.0, 1.0]), np.array([-1e-20, 2.0]), np.array([-1e-20, 1.0]), np.zeros(2),
    ...                 1e-7, 1e-9, stabilize=True)
    array([False,  True])
    """
    b, a = np.asarray(before), np.asarray(after)
    if a.dtype.kind != "f" or b.dtype.kind != "f" or a.shape != b.shape or np.shape(accurate) != a.shape:
        return None
    from symlab.scalar.type import default_tolerances

    default_rtol, default_atol = default_tolerances(a.dtype if a.dtype.itemsize <= b.dtype.itemsize else b.dtype)
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    exact, spread = np.asarray(accurate, dtype=WIDE), np.asarray(spread, dtype=WIDE)
    with np.errstate(all="ignore"):
        ok = np.isclose(b, a, rtol=rtol, atol=atol, equal_nan=True)
        trusted = np.isfinite(exact) & np.isfinite(spread)
        ok |= trusted & (np.abs(a - exact) <= atol + rtol * np.abs(exact) + ROUNDING_FACTOR * spread)
        if stabilize:
            ok |= np.isfinite(a) & (~np.isfinite(b) | ~trusted)
    return ~ok


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
        _protect_like(start, self.fgraph, self.mutable)
        reference = run_all(start, inputs)
        ref_outputs = [reference[o] for o in start.outputs]
        differing = []
        for k, (out, ref, got) in enumerate(zip(self.fgraph.outputs, ref_outputs, outputs)):
            if k not in self._output_tolerances:  # the graphs do not change: once per output
                self._output_tolerances[k] = _tolerances([out, start.outputs[k]])
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
        _protect_like(final, self.fgraph, self.mutable)
        rewritten = run_all(final, inputs)
        for k in differing:
            out, got, want = self.fgraph.outputs[k], outputs[k], rewritten[final.outputs[k]]
            if out.type.values_eq_approx(want, got, *_tolerances([out, final.outputs[k]])):
                continue
            raise BadThunkOutput(
                f"DebugMode: output {k} ({out}) of the compiled function differs from the unoptimized graph's, "
                f"though every rewritten graph computes it right when run in plain order: the compiled run "
                f"(node order, inplace writes) is wrong. Output computed by {out.owner}. Reference: "
                f"{show_value(ref_outputs[k])}; rewritten graph: {show_value(want)}; compiled: {show_value(got)}"
            )


def _protect_like(graph: FunctionGraph, like: FunctionGraph, mutable: set[Variable]) -> None:
    """Give ``graph`` a destroy handler with the same mutable input positions as ``like``."""
    from symlab.graph.destroyhandler import DestroyHandler

    if getattr(graph, "destroy_handler", None) is None:
        positions = [i for i, v in enumerate(like.inputs) if v in mutable]
        graph.attach_feature(DestroyHandler(mutable_inputs=positions))


def _number(value: Any) -> str:
    return f"{float(value):.17g}" if np.asarray(value).dtype.kind == "f" else repr(value)


def _elements(mask: np.ndarray, *arrays: Any, limit: int = 3) -> str:
    """The first ``limit`` positions of ``mask`` with each array's value there."""
    where = list(zip(*np.nonzero(np.atleast_1d(mask))))[:limit] if np.ndim(mask) else [()]
    parts = []
    for index in where:
        values = ", ".join(_number(np.asarray(a)[index]) for a in arrays)
        parts.append(f"{tuple(int(i) for i in index)}: {values}")
    return "; ".join(parts)


def find_bad_rewrite(
    trace: Any,
    inputs: Sequence[Any],
    mutable: set[Variable],
    fgraph: FunctionGraph,
    output: int | Sequence[int] | None = None,
    reference: Any = None,
) -> BadRewrite | None:
    """The error naming the first accepted step of ``trace`` that computes a wrong value, or None.

    Each step is judged against the graph just before it, by :func:`unfair_elements`: a step is right where
    it keeps the values (at the tolerance of the least precise float dtype computed on the way to them, see
    :func:`lowest_precision`), or gives the values of the graph before it computed in extended precision
    (:func:`run_wide`) to within that graph's own rounding error; a ``stabilize`` step may also make finite
    what that graph computes as inf or NaN. With ``output`` (a position or several, and ``reference``, the
    unoptimized values of the outputs, shown in the message), the values of those outputs are judged;
    without, the values of the variables each step replaces.
    """
    positions = None if output is None else [output] if isinstance(output, int) else list(output)
    if positions is not None and reference is not None and isinstance(output, int):
        reference = {output: reference}
    elif positions is not None and reference is not None:
        reference = dict(enumerate(reference)) if not isinstance(reference, dict) else reference
    before, memo_before = trace.replay(0)
    _protect_like(before, fgraph, mutable)
    values_before = run_all(before, inputs)
    for step in trace.accepted:
        after, memo_after = trace.replay(step.index)
        _protect_like(after, fgraph, mutable)
        values_after = run_all(after, inputs)
        wide = WideValues(before, inputs)
        stabilize = step.phase == "stabilize"
        compared = []  # (output position or None, label, old variable in before, new variable in after)
        if positions is not None:
            compared = [(k, f"output {k}", before.outputs[k], after.outputs[k]) for k in positions]
        else:
            for old, new in step.replacements:
                o, n = memo_before.get(old, old), memo_after.get(new, new)
                if o in values_before and n in values_after:
                    compared.append((None, f"{old} -> {new}", o, n))
        problems, wrong_outputs = [], []
        for k, label, o, n in compared:
            vo, vn = values_before[o], values_after[n]
            rtol, atol = _tolerances([o, n])
            if o.type.values_eq_approx(vo, vn, rtol, atol):
                continue
            exact, spread = (_widen(np.asarray(o.data)), 0.0) if isinstance(o, Constant) else wide.of(o)
            bad = unfair_elements(vo, vn, exact, spread, rtol, atol, stabilize)
            if bad is not None and not bad.any():
                continue
            text = f"  {label}: " + ("" if k is not None else f"value before {show_value(vo)}, after {show_value(vn)}")
            if bad is not None:
                text += (f"{'' if k is not None else '; '}wrong at {int(bad.sum())} of {bad.size} elements, where "
                         f"the graph before the rewrite is accurate (position: before, after, before in extended "
                         f"precision): {_elements(bad, vo, vn, exact)}")
            problems.append(text)
            wrong_outputs.append(k)
        if problems:
            where = f"\n  applied to node {step.node}" if step.node is not None else ""
            rule = f"rewrite step {step.index} [{step.phase}] rule {step.rule!r} ({step.location})"
            if positions is not None:
                k = wrong_outputs[0]
                value = values_after[after.outputs[k]]
                shown = show_value(reference[k]) if reference is not None and k in reference else "?"
                head = (f"DebugMode: {rule} changed the value of output {k}: unoptimized {shown}, after the rewrite "
                        f"{show_value(value)}")
                details = []
                for old, new in step.replacements:  # the replaced variables, for the reader
                    o, n = memo_before.get(old, old), memo_after.get(new, new)
                    if o in values_before and n in values_after:
                        vo, vn = values_before[o], values_after[n]
                        if not old.type.values_eq_approx(vo, vn, *_tolerances([o, n])):
                            details.append(f"  {old} -> {new}: value before {show_value(vo)}, after {show_value(vn)}")
                return BadRewrite(head + where + "\n" + "\n".join(details + problems))
            head = f"DebugMode: {rule} replaced variables by others of different values"
            return BadRewrite(head + where + "\n" + "\n".join(problems))
        before, memo_before, values_before = after, memo_after, values_after
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
    "ROUNDING_FACTOR",
    "ROUNDING_SAMPLES",
    "WIDE",
    "WideValues",
    "find_bad_rewrite",
    "lowest_precision",
    "run_all",
    "run_wide",
    "same_values",
    "show_value",
    "unfair_elements",
]
