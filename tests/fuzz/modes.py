"""The differential check of the compile modes: every mode against the unoptimized graph, on one batch.

For a batch of expressions and one value set (``config``), the reference is the graph's eval path
(:func:`symlab.graph.evaluate`: each op's ``perform``, no rewrite), and every mode compiles all the
expressions as one function with many outputs:

``UNOPTIMIZED``   ``Mode("numpy", include=())``: must give the eval path's bits
``NUMPY``         ``fast_run`` rewrites, NumPy backend
``FAST_COMPILE``  ``fast_compile`` rewrites, NumPy backend
``NUMBA``         ``fast_run`` rewrites, Numba backend (``background_compile`` off: the machine code at once)
``TIERED``        the default of ``symlab.config.background_compile = True``: called once right after
                  ``symlab.function`` returns, while Numba's compile is held back, so the NumPy tier serves it
                  (``numpy tier``), and once after ``f.wait_compiled()`` (``numba tier``)
``DEBUG``         ``fast_run`` rewrites run with DebugMode's checks (its per-node Numba check only when
                  ``debug_numba``: it compiles every node alone, the costliest check of all)
``RANDOM_UNSAFE`` NUMPY with the rules tagged ``random_unsafe`` (the lifts of random variables, the sidestep of
                  unused draws): they keep distributions, not numbers, so an output with a draw on the way is
                  compared in dtype and shape only (the ``random`` flavour's batches, ``randomness``)

Every call, the reference's included, starts from the same state of every shared generator of the batch (a copy
of its first state, :class:`~randomness.GeneratorStates`), and a call that advances one (these functions have no
updates) raises ``GeneratorAdvanced``, reported as a problem of its mode.

What each must give (see ``tests/oracle.py``): every mode the reference's values (``close``; NaN where NaN on the
``special`` values); the NumPy tier and DEBUG the bits of NUMPY (the same optimized graph, run by the same
``perform`` methods); NUMBA and the Numba tier the bits of NUMPY where Numba promises them
(:func:`numba_promise`: elementwise outputs without the scalar ops documented to differ by an ulp or two).

With the ``special`` values the rewrites whose documented contract assumes finite inputs or allows
changing values at overflows are turned off in every mode (:data:`VALUE_CHANGING_RULES`); with the
``moderate`` values every mode runs exactly as users get it.

When compiling or calling a batch raises, the batch is split in halves until the expressions that raise
are found, so one failure never hides the others.
"""

from __future__ import annotations

import re
import threading
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from oracle import UNOPTIMIZED, close, same_bits

import symlab
from symlab.compile.modes import DebugMode, Mode, get_mode
from symlab.graph.evaluate import evaluate

from .generate import Expr, build, input_variables, quiet
from .randomness import RANDOM_RULES, GeneratorStates, drawn
from .values import Env

#: Rules that change values on the ``special`` inputs, turned off for the ``special`` comparisons only.
#: Documented (``symlab/rewriting/rules/__init__.py``, ``canonicalize.py`` and ``algebra.py``): ``mul_div``
#: forgets 0/0, ``sub_self`` and ``collect_terms`` cancel terms assuming finite inputs, ``log_exp`` is "right
#: where exp overflows", and the ``stabilize`` phase changes values exactly where the original overflowed or
#: cancelled. Not documented, benign: ``sqrt_sqr`` and ``pow_of_sqr`` (``sqrt(x**2) -> |x|``) are right where
#: ``x**2`` overflows, as ``log_exp`` is (the specialize docs say these rules "keep values").
#: (``distribute_cancelling_divisions``, which cancelled divisions by zero, is ``unsafe`` and off by default:
#: ``test_default_rewrites_keep_the_nan_of_a_cancelled_division_by_zero``.)
VALUE_CHANGING_RULES = ("mul_div", "mul_div_swapped", "sub_self", "collect_terms", "log_exp", "stabilize",
                        "sqrt_sqr", "pow_of_sqr")

#: In this order: TIERED compiles the machine code in the background (cold, as a user's first call does),
#: NUMBA then loads the same machine code from the disk cache.
MODES = ("NUMPY", "FAST_COMPILE", "TIERED", "NUMBA", "DEBUG")

#: The reference every compiled mode is compared with: no rewrite at all, NumPy backend.


@dataclass
class Problem:
    """One disagreement: ``expr`` is the index of the expression in the batch (None: the whole batch)."""

    expr: int | None
    kind: str
    message: str


@dataclass
class ModeReport:
    """What one batch gave: the problems, and how many expressions each mode compared."""

    problems: list[Problem] = field(default_factory=list)
    tried: Counter = field(default_factory=Counter)
    #: Tiered functions compiled, and those whose first call the NumPy tier served (Numba's compile held back).
    tiered_functions: int = 0
    numpy_tier_calls: int = 0
    #: Results not compared because of a known bug, by bug (an expression kept out of the Numba modes, or an error).
    known_bugs: Counter = field(default_factory=Counter)
    #: DEBUG errors that report a documented difference (:func:`documented_bad_rewrite`), by rule or kernel.
    documented: Counter = field(default_factory=Counter)
    #: Applications of the rules of random variables in the RANDOM_UNSAFE compiles, by rule.
    random_rules: Counter = field(default_factory=Counter)


@contextmanager
def background_compile(flag: bool) -> Iterator[None]:
    """``symlab.config.background_compile`` set to ``flag`` for a while (every compile here says which)."""
    old = symlab.config.background_compile
    symlab.config.background_compile = flag
    try:
        yield
    finally:
        symlab.config.background_compile = old


def make_mode(name: str, config: str, debug_numba: bool = False) -> Mode:
    """The Mode object of ``name`` (TIERED compiles NUMBA's) for a value set ``config``."""
    if name == "DEBUG":
        mode: Mode = DebugMode(check_numba=debug_numba)
    elif name == "UNOPTIMIZED":
        return UNOPTIMIZED
    elif name == "RANDOM_UNSAFE":
        mode = get_mode("NUMPY").including("random_unsafe")
    else:
        mode = get_mode("NUMBA" if name == "TIERED" else name)
    return mode.excluding(*VALUE_CHANGING_RULES) if config == "special" else mode


def lowest_precision(var: Any) -> str | None:
    """The narrowest float dtype computed on the way to ``var`` (``float32`` in ``cast(x32 ** 3, "float64")``)."""
    dtypes = {v.dtype for node in _ancestor_nodes(var) for v in [*node.inputs, *node.outputs]
              if str(getattr(v, "dtype", "")).startswith("float")}
    return min(dtypes, key=lambda d: np.dtype(d).itemsize, default=None)


#: Exceptions of a known bug: (name, the mode that raises it or "*", exception class name, text in the message).
#: Each names the test of ``tests/whole/test_fuzz_differential.py`` that reproduces it. None today: the last two
#: (DebugMode's infer_shape of a Reshape to another variable's shape, the stabilized logsumexp of an empty
#: input) are fixed, and their tests pass.
KNOWN_ERRORS: list[tuple[str, str, str, str]] = []


def known_error(name: str, err: Exception) -> str | None:
    """The known bug ``err`` (raised by mode ``name``) is, if any."""
    for bug, mode, cls, text in KNOWN_ERRORS:
        if mode in (name, "*") and type(err).__name__ == cls and text in str(err):
            return bug
    return None


def documented_bad_rewrite(err: Exception) -> str | None:
    """What a DebugMode error reports, if it is a documented difference (see above), else None.

    On the ``moderate`` values every rule runs; DEBUG compares each output with the unoptimized graph's,
    NaN where NaN, and names the rule that changed it: ``sub_self`` turning an intermediate NaN into 0 is
    that rule's documented contract (it assumes finite values), not a bug. And DEBUG's per-node Numba check
    compares a kernel with ``perform`` NaN where NaN too, where SciPy's special functions are documented to
    differ in kind at their poles and edges (:data:`EDGE_SCALAR_OPS`).
    """
    from symlab.compile.debugmode import BadRewrite, BadThunkOutput

    if isinstance(err, BadThunkOutput) and "its Numba kernel and perform disagree" in str(err):
        node = str(err).split("): its Numba kernel")[0]  # "DebugMode: node 0 (Elemwise{gammaln,no_inplace}(g)"
        edge = [op for op in sorted(EDGE_SCALAR_OPS) if re.search(rf"[{{(,\s]{op}[,(]", node)]
        return f"the {edge[0]} kernel at a pole or edge" if edge else None
    if not isinstance(err, BadRewrite):
        return None
    match = re.search(r"\[(\w+)\] rule '(\w+)'", str(err))
    if match and (match.group(1) in VALUE_CHANGING_RULES or match.group(2) in VALUE_CHANGING_RULES):
        return match.group(2)
    return None


def run_split(run: Callable[[list[int]], list[Any]], idx: list[int], groups: dict[int, tuple[int, ...]]) -> dict[int, Any]:
    """``run(idx)`` as ``{k: result}``; when it raises, halves until each exception belongs to one ``k``.

    ``groups[k]`` is set to the expressions compiled together with ``k``: only results of the same group
    come from the same optimized graph (rewrites and fusion depend on the neighbours), so only they are
    compared bit for bit.
    """
    try:
        got = run(idx)
    except Exception as err:
        if len(idx) == 1:
            groups[idx[0]] = tuple(idx)
            return {idx[0]: err}
        half = len(idx) // 2
        return {**run_split(run, idx[:half], groups), **run_split(run, idx[half:], groups)}
    groups.update(dict.fromkeys(idx, tuple(idx)))
    return dict(zip(idx, got))


@contextmanager
def held_machine_code() -> Iterator[threading.Event]:
    """Numba's compile waits for the event it yields: a tiered function's first call is the NumPy tier's.

    The worker thread compiles through ``symlab.compile.numba.runner.load_compiled`` (as
    ``tests/compile/test_compile_background.py`` holds it); the hold is released on leaving, whatever happens.
    """
    from symlab.compile.numba import runner

    release = threading.Event()
    load = runner.load_compiled

    def held(*args: Any, **kwargs: Any) -> Any:
        release.wait(600)
        return load(*args, **kwargs)

    runner.load_compiled = held
    try:
        yield release
    finally:
        release.set()
        runner.load_compiled = load


class NumbaFallback(RuntimeError):
    """Numba could not compile a graph, and the function runs the NumPy backend instead (with a warning)."""


def check_no_fallback(f: Any) -> None:
    """Raise :class:`NumbaFallback` if ``f`` (a NUMBA or tiered function) runs the NumPy backend instead."""
    runner = f.maker.runner
    if getattr(runner, "numpy_fallback", None) is not None:
        error = getattr(runner.compile_info, "error", None)
        raise NumbaFallback(f"Numba could not compile the graph: {type(error).__name__ if error else ''} "
                            f"{str(error)[:300] if error else ''}")


def wait_compiled(f: Any) -> bool:
    """Wait for the machine code of a tiered function (``f.wait_compiled``; ``f.wait`` in newer symlab)."""
    wait = getattr(f, "wait_compiled", None) or f.wait
    return bool(wait(600))


#: The bits each result must share with NUMPY's: "all" outputs, or only where Numba promises them.
BITS_OF_NUMPY = {"TIERED numpy tier": "all", "DEBUG": "all", "NUMBA": "numba", "TIERED numba tier": "numba",
                 "TIERED numba tier (first call)": "numba"}
NUMBA_RESULTS = ("NUMBA", "TIERED numba tier", "TIERED numba tier (first call)")

#: Scalar ops whose compiled kernels are documented to differ from NumPy's bits by a few ulps
#: (``symlab/compile/numba/elemwise_vm.py``, "Same numbers from both tiers").
INEXACT_SCALAR_OPS = frozenset({"pow", "arctan2", "sigmoid", "erf", "erfc", "gamma", "gammaln", "psi"})
#: Of which SciPy's special functions also differ *in kind* at poles and at the edges of their range
#: (``psi(0)``: -inf against NaN; ``gammaln(5e-324)``: inf against 744.44; underflow to 0 against subnormals).
EDGE_SCALAR_OPS = frozenset({"erf", "erfc", "gamma", "gammaln", "psi"})


def numba_promise(fgraph: Any, k: int) -> str:
    """What Numba promises for output ``k`` of an optimized graph: ``"bits"``, ``"close"`` or ``"finite"``.

    ``"bits"``: only elementwise nodes and dimshuffles, none of the documented inexact scalar ops, and no
    unary function of an integer input (NumPy casts the integer and runs the float loop; the kernels differ
    by an ulp). ``"finite"``: a special function of SciPy is on the way, whose kernel may differ in kind
    where the reference is not finite: compared where the reference is finite only. Else ``"close"``.
    """
    from symlab.tensor.elemwise import DimShuffle, Elemwise

    promise = "bits"
    for node in _ancestor_nodes(fgraph.outputs[k]):
        if isinstance(node.op, DimShuffle):
            continue
        if not isinstance(node.op, Elemwise):
            promise = "close" if promise == "bits" else promise
            continue
        scalar_op = node.op.scalar_op
        inner = [(n.op, [v.type.dtype for v in n.inputs], n.outputs[0].type.dtype) for n in scalar_op.nodes] \
            if hasattr(scalar_op, "nodes") else [(scalar_op, [v.dtype for v in node.inputs], node.outputs[0].dtype)]
        for op, in_dtypes, out_dtype in inner:
            name = str(op)
            if name in EDGE_SCALAR_OPS:
                return "finite"
            integer_in = len(in_dtypes) == 1 and in_dtypes[0].startswith(("int", "uint")) and out_dtype.startswith("float")
            if name in INEXACT_SCALAR_OPS or integer_in:
                promise = "close"
    return promise


def _ancestor_nodes(var: Any) -> list[Any]:
    """The nodes ``var`` depends on, and those of the inner graphs of its ops (an ``OpFromGraph``'s, nested ones
    too; a fused ``Composite`` is read by :func:`numba_promise` itself, from its scalar nodes)."""
    from symlab.graph.traversal import applys_with_inner

    return [node for path, node in applys_with_inner([var]) if not any(hasattr(p.op, "scalar_op") for p in path)]


def compare_modes(exprs: Sequence[Expr], env: Env, config: str, modes: Sequence[str] = MODES,
                  debug_numba: bool = False) -> ModeReport:
    """Compile ``exprs`` in every mode of ``modes`` and compare them (see the module docstring)."""
    report = ModeReport()
    inputs = input_variables(env)
    in_list = [inputs[s.name] for s in env.inputs]
    outs = build(exprs, inputs)
    values = [env.values[config][s.name] for s in env.inputs]
    pristine = [v.copy() for v in values]
    everything = list(range(len(exprs)))
    generators = GeneratorStates(outs)

    def compiled(name: str) -> Callable[[list[int]], list[Any]]:
        mode = make_mode(name, config, debug_numba)

        def run(idx: list[int]) -> list[Any]:
            with background_compile(False), warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # a fallback is checked below, not warned about
                f = symlab.function(in_list, [outs[k] for k in idx], mode=mode, on_unused_input="ignore")
                generators.reset()
                got = [np.asarray(v) for v in f(*values)]
            generators.check(f"a {name} function")
            check_no_fallback(f)
            if name == "RANDOM_UNSAFE":
                report.random_rules.update(s.rule for s in f.trace.steps if s.accepted and s.rule in RANDOM_RULES)
            return got

        return run

    def tiered(idx: list[int]) -> list[Any]:
        with background_compile(True), warnings.catch_warnings(), held_machine_code() as release:
            warnings.simplefilter("ignore", UserWarning)
            f = symlab.function(in_list, [outs[k] for k in idx], mode=make_mode("TIERED", config),
                                on_unused_input="ignore")
            generators.reset()
            first = [np.asarray(v) for v in f(*values)]
            generators.check("a TIERED function's NumPy tier")
            on_numpy_tier = f.maker.runner.compile_info.calls_before_ready == 1
            release.set()
            if not wait_compiled(f):
                raise TimeoutError("TIERED: the machine code was not ready after 600 s")
            generators.reset()
            second = [np.asarray(v) for v in f(*values)]
            generators.check("a TIERED function's Numba tier")
        check_no_fallback(f)
        report.tiered_functions += 1
        report.numpy_tier_calls += on_numpy_tier
        return [(a, b, on_numpy_tier) for a, b in zip(first, second)]

    results: dict[str, dict[int, Any]] = {}
    groups: dict[str, dict[int, tuple[int, ...]]] = {}
    promises: dict[int, str] = {}
    numba_idx = everything
    if any(m in modes for m in ("NUMBA", "TIERED")):  # from the optimized graph, the same in NUMPY and NUMBA
        try:
            with quiet(), background_compile(False):
                optimized = symlab.function(in_list, list(outs), mode=make_mode("NUMPY", config),
                                            on_unused_input="ignore").maker.fgraph
            promises = {k: numba_promise(optimized, k) for k in everything}
        except Exception:  # NUMPY raises on its own: reported below; Numba gets the loosest promise
            promises = dict.fromkeys(everything, "finite")
    numpy_of_group: dict[tuple[int, ...], dict[int, Any]] = {}

    def numpy_bits(k: int, group: tuple[int, ...]) -> Any:
        """NUMPY's result of ``k`` compiled with the same group of expressions (compiled once per group)."""
        if groups.get("NUMPY", {}).get(k) == group:
            return results["NUMPY"][k]
        if group not in numpy_of_group:
            try:
                with quiet():
                    numpy_of_group[group] = dict(zip(group, compiled("NUMPY")(list(group))))
            except Exception:  # NUMPY raised for this group: the comparison with the reference says why
                numpy_of_group[group] = {}
        return numpy_of_group[group].get(k)

    with quiet():
        generators.reset()
        reference = evaluate(outs, dict(zip(in_list, values)))
        generators.check("the eval path")
        for name in ["UNOPTIMIZED", *modes]:
            idx = numba_idx if name in ("NUMBA", "TIERED") else everything
            if not idx:
                continue
            if name == "TIERED":
                found: dict[int, tuple[int, ...]] = {}
                triples = run_split(tiered, idx, found)
                for k, v in triples.items():  # the first call is the NumPy tier's, unless compiling was immediate
                    first = "TIERED numpy tier" if isinstance(v, Exception) or v[2] else "TIERED numba tier (first call)"
                    results.setdefault(first, {})[k] = v if isinstance(v, Exception) else v[0]
                    results.setdefault("TIERED numba tier", {})[k] = v if isinstance(v, Exception) else v[1]
                for label in ("TIERED numpy tier", "TIERED numba tier (first call)", "TIERED numba tier"):
                    groups[label] = found
            else:
                groups[name] = {}
                results[name] = run_split(compiled(name), idx, groups[name])

    precisions = {k: lowest_precision(outs[k]) for k in everything}
    for k in everything:
        ref = reference[k]
        for name, got_by_expr in results.items():
            if k not in got_by_expr:
                continue  # kept out of the Numba modes by a known bug
            got = got_by_expr[k]
            report.tried[name] += 1
            if isinstance(got, Exception):
                if documented_bad_rewrite(got):
                    report.documented[documented_bad_rewrite(got)] += 1
                    continue
                if known_error(name, got):
                    report.known_bugs[known_error(name, got)] += 1
                    continue
                report.problems.append(Problem(k, f"{name}/{config}: raises {type(got).__name__}", str(got)[:400]))
                continue
            if name == "UNOPTIMIZED":
                problem = same_bits(got, ref)
                kind = "differs in bits from the eval path"
            elif name == "RANDOM_UNSAFE" and drawn(outs[k]):  # other numbers of the same distribution
                got, ref = np.asarray(got), np.asarray(ref)
                problem = None if (got.dtype, got.shape) == (ref.dtype, ref.shape) else \
                    f"dtype and shape {got.dtype} {got.shape}, expected {ref.dtype} {ref.shape}"
                kind = "differs in dtype or shape from the unoptimized graph"
            else:
                strict = config == "special" and not (name in NUMBA_RESULTS and promises.get(k) == "finite")
                problem = close(got, ref, strict=strict, precision=precisions[k])
                kind = "differs from the unoptimized graph"
            if problem:
                report.problems.append(Problem(k, f"{name}/{config}: {kind}", problem))
                continue
            scope = BITS_OF_NUMPY.get(name)
            if scope and (scope == "all" or promises.get(k) == "bits"):
                numpy_got = numpy_bits(k, groups[name][k])
                problem = same_bits(got, numpy_got) if isinstance(numpy_got, np.ndarray) else None
                if problem:
                    report.problems.append(Problem(k, f"{name}/{config}: differs in bits from NUMPY", problem))
    for spec, before, after in zip(env.inputs, pristine, values):
        if same_bits(after, before):
            report.problems.append(Problem(None, f"input {spec.name} modified", "a compiled function wrote into its input"))
    return report
