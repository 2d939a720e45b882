"""A failure of a check: shrunk to a minimal graph and printed as a pytest function to paste.

One function per check: it builds the predicate "this candidate still fails in the same way" from the
check itself, runs :func:`shrink.shrink`, and writes the reproduction: the input variables, the expressions
(``out0``...), the values and the claim that failed, in plain symlab code (the edit sequences and round
trips call the fuzz helpers that made them, ``tests/fuzz`` being importable from ``tests/``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from oracle import FUZZ_TOLERANCE

from symlab.graph.evaluate import evaluate

from . import graphs, modes
from .generate import Expr, build, code_of, input_variables, quiet
from .shrink import Shrunk, graph_code, guarded, reproduction, shrink, test_name
from .values import Env, array_code


@dataclass
class Failure:
    """A property that did not hold: where (``origin``: seed, batch, expression), what, and its reproduction."""

    check: str
    kind: str
    message: str
    origin: str
    reproduction: str = ""
    shrunk: str = ""  # what shrinking achieved
    count: int = 1  # occurrences of the same kind in the run (only the first is shrunk)

    def __str__(self) -> str:
        lines = [f"[{self.check}] {self.kind} ({self.count}x; first at {self.origin})", f"  {self.message}"]
        if self.shrunk:
            lines.append(f"  {self.shrunk}")
        if self.reproduction:
            lines += ["  minimal reproduction:", *("    " + line for line in self.reproduction.splitlines())]
        return "\n".join(lines)


def verified(code: str, name: str) -> str:
    """Run the printed test ``name`` of ``code`` on its own, and say whether it fails as it should."""
    namespace: dict[str, object] = {"__name__": "fuzz_reproduction"}
    try:
        exec(compile(code, f"<reproduction {name}>", "exec"), namespace)  # noqa: S102 - code printed by us
        with quiet():
            namespace[name]()  # type: ignore[operator]
    except Exception as err:
        return f"the printed test fails on its own ({type(err).__name__})"
    return "the printed test does NOT fail on its own: rerun the campaign with the seed to see the failure"


def _summary(before: int, result: Shrunk) -> str:
    after = sum(e.size() for e in result.exprs)
    state = "" if result.complete else " (stopped by the shrink budget)"
    return f"shrunk from {before} to {after} operations in {result.tries} tries, {result.seconds:.1f} s{state}"


# -- modes ---------------------------------------------------------------------------------------------------
def _mode_code(name: str, config: str, debug_numba: bool) -> str:
    if name == "UNOPTIMIZED":
        return 'Mode("numpy", include=())'
    base = f"DebugMode(check_numba={debug_numba})" if name == "DEBUG" else \
        f'get_mode("{"NUMBA" if name.startswith("TIERED") else name}")'
    if config == "special":
        base += f".excluding(*{modes.VALUE_CHANGING_RULES!r})"
    return base


def _compile_lines(name: str, config: str, debug_numba: bool, errors: bool) -> list[str]:
    """Compile ``outputs`` in mode ``name`` and call the function: ``got``, a list of arrays."""
    tiered = name.startswith("TIERED")
    lines = [f"mode = {_mode_code(name, config, debug_numba)}",
             "old = symlab.config.background_compile",
             f"symlab.config.background_compile = {tiered}",
             "try:"]
    body = ["function = symlab.function(inputs, outputs, mode=mode, on_unused_input=\"ignore\")",
            "got = [np.asarray(v) for v in function(*values)]"]
    if name.startswith("TIERED numba tier") or (tiered and errors):
        body += ["assert function.wait_compiled(600)",
                 "got = [np.asarray(v) for v in function(*values)]  # now on the Numba tier"]
    if errors:  # Numba falling back to the NumPy backend is a warning: make it an error
        lines += ["    with warnings.catch_warnings():", "        warnings.simplefilter(\"error\", UserWarning)"]
        lines += [f"        {line}" for line in body]
    else:
        lines += [f"    {line}" for line in body]
    lines += ["finally:", "    symlab.config.background_compile = old"]
    return lines


def _bits_lines(ref: str) -> list[str]:
    return [f"for g, r in zip(got, {ref}):",
            "    assert g.dtype == r.dtype and g.shape == r.shape",
            "    same = (g == r) | (np.isnan(g) & np.isnan(r)) if g.dtype.kind == \"f\" else g == r",
            "    assert np.all(same) and np.array_equal(np.signbit(g), np.signbit(r)), (g, r)"]


def mode_claim(kind: str, config: str, debug_numba: bool, expected: list[np.ndarray],
               precisions: list[str | None]) -> list[str]:
    """The lines that compile in the failing mode and state, for each output, the claim that failed."""
    name = kind.split("/")[0]
    what = kind.split(": ", 1)[1]
    lines = _compile_lines(name, config, debug_numba, errors=what == "raises NumbaFallback")
    if what.startswith("raises"):
        return lines
    if what == "differs in bits from NUMPY":
        return [f"numpy_mode = {_mode_code('NUMPY', config, False)}",
                "old = symlab.config.background_compile",
                "symlab.config.background_compile = False",
                "try:",
                "    reference = symlab.function(inputs, outputs, mode=numpy_mode, on_unused_input=\"ignore\")(*values)",
                "finally:",
                "    symlab.config.background_compile = old",
                *lines, *_bits_lines("reference")]
    lines.append("expected = [np.asarray(v) for v in evaluate(outputs, dict(zip(inputs, values)))]  # the unoptimized graph")
    if what == "differs in bits from the eval path":
        return lines + _bits_lines("expected")
    tolerances = []
    for e, precision in zip(expected, precisions):
        rtol, atol = max(FUZZ_TOLERANCE.get(e.dtype.name, (0.0, 0.0)), FUZZ_TOLERANCE.get(precision or "", (0.0, 0.0)))
        tolerances.append((rtol, atol * float(np.max(np.abs(e[np.isfinite(e)]), initial=1.0)) if e.dtype.kind == "f" else 0.0))
    lines += [f"tolerances = {tolerances!r}  # (rtol, atol) of each output: its precision, atol scaled by its magnitude",
              "for g, e, (rtol, atol) in zip(got, expected, tolerances):",
              "    assert g.dtype == e.dtype and g.shape == e.shape"]
    if config == "special":
        return lines + ["    np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, equal_nan=True)"]
    return lines + ["    keep = np.isfinite(e)  # the default rewrites may change only what the reference lost to overflow",
                    "    np.testing.assert_allclose(g[keep], e[keep], rtol=rtol, atol=atol)"]


def mode_failure(batch: list[Expr], k: int, env: Env, config: str, kind: str, message: str, origin: str,
                 debug_numba: bool, budget: float) -> Failure:
    """Shrink a failure of ``modes.compare_modes`` (expression ``k`` of ``batch``) and write its reproduction.

    The expression alone is shrunk when it fails alone; else the failure needs its neighbours in the
    batch (fusion, merging and the inplace choices depend on them), and the whole batch is shrunk.
    """
    name = kind.split("/")[0]
    needed = ["TIERED" if name.startswith("TIERED") else name]
    if "from NUMPY" in kind and "NUMPY" not in needed:
        needed.append("NUMPY")
    needed = [m for m in needed if m != "UNOPTIMIZED"]

    def fails(exprs: list[Expr], env: Env) -> bool:
        report = modes.compare_modes(exprs, env, config, needed, debug_numba)
        return any(p.kind == kind for p in report.problems)

    start = [batch[k]] if guarded(fails)([batch[k]], env) else list(batch)
    result = shrink(start, env, fails, config=config, budget=budget)
    inputs = input_variables(result.env)
    outs = build(result.exprs, inputs)
    with quiet():
        expected = [np.asarray(v) for v in evaluate(outs, {inputs[s.name]: result.env.values[config][s.name]
                                                          for s in result.env.inputs})]
    doc = f"{kind} (found by tests/fuzz: {origin})"
    code = reproduction(test_name(origin), doc, graph_code(result.exprs, result.env, config),
                        mode_claim(kind, config, debug_numba, expected, [modes.lowest_precision(o) for o in outs]))
    failure = Failure("modes", kind, message, origin, code, _summary(sum(e.size() for e in start), result))
    if len(start) > 1:
        failure.shrunk += f"; it fails only with other expressions of its batch ({len(result.exprs)} kept)"
    failure.shrunk += "; " + verified(code, test_name(origin))
    return failure


# -- gradients -------------------------------------------------------------------------------------------------
def gradient_failure(expr: Expr, env: Env, seed: int, message: str, origin: str, budget: float) -> Failure:
    """Shrink a failure of ``graphs.check_gradient`` and write its reproduction."""
    verify = message.startswith("verify_grad")

    def fails(exprs: list[Expr], env: Env) -> bool:
        problems = graphs.check_gradient(exprs[0], env, seed)
        return any(p.startswith("verify_grad") == verify for p in problems)

    result = shrink([expr], env, fails, budget=budget)
    (small,), small_env = result.exprs, result.env
    names = sorted(small.input_names())
    body = [f"def fn({', '.join(names)}):", *("    " + line for line in code_of([small])), "    return out0", ""]
    body.append("point = [")
    body += [f"    {array_code(small_env.values['special'][n])},  # {n}" for n in names]
    body.append("]")
    if verify:
        body.append(f"verify_grad(fn, point, n_tests=1, rng=np.random.default_rng({seed}))")
    else:
        specs = {s.name: s for s in small_env.inputs}
        body += [f"inputs = [{', '.join(specs[n].constructor_code() for n in names)}]",
                 "out0 = fn(*inputs)",
                 "shape = np.shape(evaluate([out0], dict(zip(inputs, point)))[0])",
                 f"projection = np.random.default_rng({seed}).random(shape) + 0.5",
                 "cost = (out0 * projection.astype(out0.dtype)).sum()",
                 "grads = symlab.grad(cost, inputs, disconnected_inputs=\"ignore\")",
                 "expected = evaluate(grads, dict(zip(inputs, point)))",
                 "for mode in (\"NUMPY\", \"FAST_COMPILE\"):",
                 "    got = symlab.function(inputs, grads, mode=mode, on_unused_input=\"ignore\")(*point)",
                 "    for g, e in zip(got, expected):",
                 "        np.testing.assert_allclose(g, e, rtol=1e-7, atol=1e-10 * max(1.0, float(np.max(np.abs(e), initial=0))))"]
    doc = f"gradient: {message[:120]} (found by tests/fuzz: {origin})"
    code = reproduction(test_name(origin), doc, [], body)
    return Failure("gradients", "verify_grad" if verify else "compiled gradient", message, origin, code,
                   _summary(expr.size(), result) + "; " + verified(code, test_name(origin)))


# -- graphs: edit sequences and round trips -----------------------------------------------------------------------
def _graph_failure(check: str, exprs: list[Expr], env: Env, config: str, kind: str, message: str, origin: str,
                   budget: float, run, call: str) -> Failure:
    """Shrink the graph of a failing edit sequence or round trip (``run(exprs, env)`` gives the problems)."""

    def fails(exprs: list[Expr], env: Env) -> bool:
        return any(problem_kind(p) == kind for p in run(exprs, env))

    result = shrink(exprs, env, fails, budget=budget)
    body = ["fg = FunctionGraph(inputs, outputs)", f"problems, _ = {call}", "assert not problems, problems"]
    code = reproduction(test_name(origin), f"{check}: {message[:120]} (found by tests/fuzz: {origin})",
                        graph_code(result.exprs, result.env, config), body)
    return Failure(check, kind, message, origin, code,
                   _summary(sum(e.size() for e in exprs), result) + "; " + verified(code, test_name(origin)))


def edit_failure(exprs: list[Expr], env: Env, seed: int, n_edits: int, output_edits: bool, message: str,
                 origin: str, budget: float) -> Failure:
    kind = problem_kind(message)

    def run(exprs: list[Expr], env: Env) -> list[str]:
        return graphs.check_edits(exprs, env, seed, n_edits, output_edits)[0]

    return _graph_failure("edit sequences", exprs, env, "moderate", kind, message, origin, budget, run,
                          f"check_edits_on(fg, values, seed={seed}, n_edits={n_edits}, output_edits={output_edits})")


def round_trip_failure(exprs: list[Expr], env: Env, message: str, origin: str, budget: float) -> Failure:
    kind = problem_kind(message)
    return _graph_failure("round trips", exprs, env, "special", kind, message, origin, budget,
                          lambda exprs, env: graphs.check_round_trips(exprs, env)[0],
                          "check_round_trips_on(fg, values)")


def problem_kind(message: str) -> str:
    """What a graph problem is, without where it happened: the edit, step numbers and lists left out.

    >>> problem_kind("edit 5 (rule pow_three): the replay of the last step (3) differs from the live graph")
    'the replay of the last step (N) differs from the live graph'
    """
    text = re.sub(r"^(edit|step) \d+ \([^)]*\): ", "", message)
    text = re.sub(r"\[[^\]]*\]", "[...]", text)
    return re.sub(r"\d+", "N", text).split(":")[0]
