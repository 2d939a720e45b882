"""Finding the rewrite that made a value wrong: the trace replayed, each step judged against the graph before it.

When DebugMode finds a compiled output that differs from the unoptimized graph's, :func:`find_bad_rewrite`
replays the rewrite trace step by step and blames the first step whose values are wrong. A step is right
where it keeps the values (at the tolerance of the least precise float dtype computed on the way to them,
:func:`lowest_precision`), or where it gives the values of the graph before it computed in extended
precision (:func:`run_wide`, :data:`WIDE`) to within that graph's own rounding error (estimated from runs
with random rounding errors, :class:`WideValues`; judged by :func:`unfair_elements`); a ``stabilize``
step may also make finite what the graph before it computes as inf or NaN.

>>> import numpy as np
>>> import symlab.tensor as st
>>> from symlab.graph.fg import FunctionGraph
>>> x = st.dvector("x")
>>> fg = FunctionGraph([x], [st.exp(x) * 2.0], clone=False)
>>> run_all(fg, [np.zeros(2)])[fg.outputs[0]]
array([2., 2.])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from symlab.compile.debug_errors import BadRewrite, show_value
from symlab.compile.lazy_plan import nodes_to_run
from symlab.compile.linker_numpy import copy_value
from symlab.graph.basic import Apply, Constant, Variable
from symlab.graph.fg import FunctionGraph
from symlab.graph.traversal import ancestors


def lowest_precision(outputs: Sequence[Variable]) -> str | None:
    """The least precise float dtype of the variables ``outputs`` are computed from (themselves included).

    >>> import symlab.tensor as st
    >>> e = st.fvector("e")
    >>> lowest_precision([st.cast(e ** 3, "float64")])
    'float32'
    """
    dtypes = {str(v.type.dtype) for v in ancestors(list(outputs)) if str(getattr(v.type, "dtype", "")).startswith("float")}
    return min(dtypes, key=lambda d: np.dtype(d).itemsize, default=None)


def tolerances(outputs: Sequence[Variable]) -> tuple[float | None, float | None]:
    """``(rtol, atol)`` of the least precise float dtype computed on the way to ``outputs`` (None: the type's)."""
    from symlab.scalar.type import default_tolerances

    precision = lowest_precision(outputs)
    return default_tolerances(precision) if precision is not None else (None, None)


def run_all(fgraph: FunctionGraph, input_values: Sequence[Any]) -> dict[Variable, Any]:
    """Values of every variable of ``fgraph`` (inputs are copied first), nodes in ``toposort()`` order."""
    values: dict[Variable, Any] = {v: copy_value(x) for v, x in zip(fgraph.inputs, input_values)}
    for node in nodes_to_run(fgraph.toposort(), fgraph.outputs, lambda v: v.data if isinstance(v, Constant) else values[v]):
        args = [inp.data if isinstance(inp, Constant) else values.get(inp) for inp in node.inputs]  # None: skipped
        cells: list[list[Any]] = [[None] for _ in node.outputs]
        node.op.perform(node, args, cells)
        for out, cell in zip(node.outputs, cells):
            values[out] = cell[0]
    for out in fgraph.outputs:
        if isinstance(out, Constant):
            values[out] = out.data
    return values


#: The extended precision a graph is evaluated in to judge a rewrite: ``np.longdouble`` where it is wider than
#: ``float64`` (x86: 64 significant bits and 15 exponent bits), else ``float64`` (a float64 graph then gains nothing).
WIDE = np.longdouble if np.finfo(np.longdouble).eps < np.finfo(np.float64).eps else np.float64

#: How many runs estimate the rounding error of the graph as written (see :class:`WideValues`).
ROUNDING_SAMPLES = 3

#: A rewritten value is accepted within this many times the estimated rounding error of the original.
ROUNDING_FACTOR = 4.0


def widen(value: Any) -> Any:
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
            return [widen(np.asarray(args[0]))] if np.asarray(args[0]).dtype.kind == "f" else \
                [np.asarray(args[0]).astype(scalar.dtype)]
        try:
            with np.errstate(all="ignore"):
                result = scalar.impl(*args)
            results = result if len(node.outputs) > 1 else (result,)
            return [widen(np.asarray(r)) if _is_float(out) else np.asarray(r, dtype=out.type.dtype)
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
    return [widen(c[0]) for c in cells]


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
    values: dict[Variable, Any] = {v: widen(copy_value(x)) for v, x in zip(fgraph.inputs, input_values)}
    for node in nodes_to_run(fgraph.toposort(), fgraph.outputs, lambda v: v.data if isinstance(v, Constant) else values[v]):
        args = [widen(np.asarray(inp.data)) if isinstance(inp, Constant) and np.asarray(inp.data).dtype.kind == "f"
                else inp.data if isinstance(inp, Constant) else values.get(inp) for inp in node.inputs]
        for out, value in zip(node.outputs, _perform_wide(node, args)):
            if rng is not None and _is_float(out) and isinstance(value, (np.ndarray, np.generic)) \
                    and value.dtype.kind == "f":
                half_eps = WIDE(np.finfo(out.type.dtype).eps) / 2
                value = np.asarray(value * (1 + half_eps * rng.uniform(-1.0, 1.0, np.shape(value))), dtype=WIDE)
            values[out] = value
    for out in fgraph.outputs:
        if isinstance(out, Constant):
            values[out] = widen(np.asarray(out.data))
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


def protect_like(graph: FunctionGraph, like: FunctionGraph, mutable: set[Variable]) -> None:
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
    protect_like(before, fgraph, mutable)
    values_before = run_all(before, inputs)
    for step in trace.accepted:
        after, memo_after = trace.replay(step.index)
        protect_like(after, fgraph, mutable)
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
            rtol, atol = tolerances([o, n])
            if o.type.values_eq_approx(vo, vn, rtol, atol):
                continue
            exact, spread = (widen(np.asarray(o.data)), 0.0) if isinstance(o, Constant) else wide.of(o)
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
                        if not old.type.values_eq_approx(vo, vn, *tolerances([o, n])):
                            details.append(f"  {old} -> {new}: value before {show_value(vo)}, after {show_value(vn)}")
                return BadRewrite(head + where + "\n" + "\n".join(details + problems))
            head = f"DebugMode: {rule} replaced variables by others of different values"
            return BadRewrite(head + where + "\n" + "\n".join(problems))
        before, memo_before, values_before = after, memo_after, values_after
    return None


__all__ = [
    "ROUNDING_FACTOR",
    "ROUNDING_SAMPLES",
    "WIDE",
    "WideValues",
    "find_bad_rewrite",
    "lowest_precision",
    "protect_like",
    "run_all",
    "run_wide",
    "tolerances",
    "unfair_elements",
    "widen",
]
