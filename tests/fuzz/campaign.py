"""A fuzzing run: how many graphs of each kind, the checks on them, the figures and the failures.

A :class:`Plan` says how much to try; :func:`run_modes`, :func:`run_gradients`, :func:`run_edits` and
:func:`run_round_trips` (and :func:`run_random`, :func:`run_loops`) try it, each adding to one :class:`Figures`; ``run.py`` (``make fuzz``) and
``tests/whole/test_fuzz_differential.py`` call them. Everything derives from ``plan.seed``: batch ``i`` of a
check is ``generate_batch(seed, i)``, so the origin printed with a failure (seed, batch, expression)
reproduces it alone.

Numba compiles cost about half a second per kernel, so the Numba modes (NUMBA, TIERED) see the first
``plan.numba_graphs`` expressions only (whole batches, each batch compiled once per value set: TIERED
compiles in the background, and NUMBA then loads the same machine code from the disk cache). DebugMode's
own per-node Numba check, which compiles every node alone, runs on the first ``plan.debug_numba_graphs``.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from . import graphs, modes
from .failures import Failure, edit_failure, gradient_failure, mode_failure, problem_kind, round_trip_failure
from .generate import Batch, GenStats, generate_batch

#: The seed of a run unless ``FUZZ_SEED`` says otherwise.
DEFAULT_SEED = 20260521

#: Offsets of the batch indices of each check, so that the checks draw different graphs from one seed.
GRADIENT_BATCHES, EDIT_BATCHES, ROUND_TRIP_BATCHES, RANDOM_BATCHES = 100_000, 200_000, 300_000, 400_000
LOOP_BATCHES, LOOP_GRADIENT_BATCHES = 500_000, 600_000

#: The modes the graphs with random variables are compared in (NUMBA and TIERED too on the first
#: ``plan.random_numba_graphs``).
RANDOM_MODES = ("NUMPY", "FAST_COMPILE", "DEBUG", "RANDOM_UNSAFE")

#: The modes the graphs with loops are compared in (NUMBA and TIERED too on the first ``plan.loop_numba_graphs``).
LOOP_MODES = ("NUMPY", "FAST_COMPILE", "DEBUG")


@dataclass
class Plan:
    """How much a run tries (each expression of a batch counts as one graph; Numba counts in whole batches)."""

    seed: int = DEFAULT_SEED
    graphs: int = 500
    batch_size: int = 25
    numba_graphs: int = 50
    debug_numba_graphs: int = 0
    gradients: int = 100
    edit_sequences: int = 40
    edits_per_sequence: int = 14
    output_edits: bool = True
    round_trip_graphs: int = 40
    #: Graphs with random variables (the ``random`` flavour), of which with Numba too.
    random_graphs: int = 50
    random_numba_graphs: int = 0
    #: Graphs of the ``loops`` flavour (most of them ``scan`` loops over a random body), of which with Numba too.
    loop_graphs: int = 0
    loop_numba_graphs: int = 0
    #: Gradients through loops of smooth random bodies (the ``smooth_loops`` flavour) against finite differences.
    loop_gradients: int = 0
    #: Seconds to shrink one failure, and all of a run's: later failures are printed as found.
    shrink_budget: float = 60.0
    shrink_total: float = 300.0


@dataclass
class Figures:
    """What a run tried and found."""

    seed: int
    #: Expressions compared, by (mode, value set).
    graphs: Counter = field(default_factory=Counter)
    numpy_tier_calls: int = 0
    tiered_functions: int = 0
    #: Results not compared because of a known bug, by bug (see ``modes.KNOWN_ERRORS``).
    known_bugs: Counter = field(default_factory=Counter)
    #: DEBUG's reports of documented differences, by rule (or kernel).
    documented: Counter = field(default_factory=Counter)
    gradients: int = 0
    compiled_gradients: int = 0
    edit_sequences: int = 0
    edit_steps: int = 0
    round_trips: int = 0
    round_trip_graphs: int = 0
    #: Graphs with random variables compared, by (mode, value set); the random rules applied, by rule.
    random_graphs: Counter = field(default_factory=Counter)
    random_rules: Counter = field(default_factory=Counter)
    #: Graphs of the ``loops`` flavour compared, by (mode, value set); gradients through loops checked.
    loop_graphs: Counter = field(default_factory=Counter)
    loop_gradients: int = 0
    generator: GenStats = field(default_factory=GenStats)
    failures: dict[tuple[str, str], Failure] = field(default_factory=dict)
    seconds: Counter = field(default_factory=Counter)

    def budget(self, plan: Plan) -> float:
        """Seconds the next shrink may take: the plan's per-failure budget, within what the run has left."""
        return max(0.0, min(plan.shrink_budget, plan.shrink_total - self.seconds["shrinking"]))

    def first(self, key: tuple[str, str]) -> bool:
        """Count a failure of ``key`` (check, kind); True for the first of its kind (the one to shrink)."""
        if key in self.failures:
            self.failures[key].count += 1
            return False
        return True

    def text(self) -> str:
        """The figures as a short report."""
        configs = ("special", "moderate")
        names = ["UNOPTIMIZED", "NUMPY", "FAST_COMPILE", "NUMBA", "TIERED numpy tier", "TIERED numba tier",
                 "TIERED numba tier (first call)", "DEBUG", "DEBUG + Numba check"]
        lines = [f"seed {self.seed}", "graphs tried per mode (special values / moderate values):"]
        for name in names:
            n = [self.graphs[(name, c)] for c in configs]
            if any(n):
                lines.append(f"  {name:<30} {n[0]:>6} / {n[1]:<6}")
        lines += [
            f"  (TIERED: {self.tiered_functions} functions, {self.numpy_tier_calls} of whose first calls the NumPy tier "
            "served while Numba's compile was held back; every second call ran the machine code)",
            *(f"  ({n} results not compared: known bug {bug}, see modes.KNOWN_ERRORS)"
              for bug, n in self.known_bugs.items()),
            *(f"  (DEBUG: {n} expressions stopped by {what}: a documented difference, or a known bug)"
              for what, n in self.documented.items()),
            f"gradients checked: {self.gradients} (verify_grad), {self.compiled_gradients} compiled gradients; "
            f"{self.loop_gradients} through loops",
            f"replace sequences: {self.edit_sequences} ({self.edit_steps} recorded steps, each replayed)",
            f"round trips: {self.round_trips} (of {self.round_trip_graphs} graphs)",
            "graphs with random variables per mode (special / moderate): " + ", ".join(
                f"{m} {self.random_graphs[(m, 'special')]} / {self.random_graphs[(m, 'moderate')]}"
                for m in sorted({m for m, _ in self.random_graphs})),
            "graphs with loops per mode (special / moderate): " + ", ".join(
                f"{m} {self.loop_graphs[(m, 'special')]} / {self.loop_graphs[(m, 'moderate')]}"
                for m in sorted({m for m, _ in self.loop_graphs})),
            "random rules applied (RANDOM_UNSAFE): " + ", ".join(f"{r} {n}" for r, n in sorted(self.random_rules.items())),
            f"generator: {sum(self.generator.built.values())} operations built, {sum(self.generator.refused.values())} "
            f"candidates refused by symlab or NumPy and drawn again, {sum(self.generator.anomalies().values())} "
            f"reference values of another dtype or rank than their graph's type"
            + (f" {self.generator.anomalies()}" if self.generator.anomalies() else ""),
            f"failures: {sum(f.count for f in self.failures.values())} ({len(self.failures)} distinct)",
            "seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in self.seconds.items()),
        ]
        return "\n".join(lines)


def _origin(seed: int, batch: int, expr: int | None = None) -> str:
    return f"seed {seed} batch {batch}" + ("" if expr is None else f" expr {expr}")


def run_modes(plan: Plan, figures: Figures, log: Callable[[str], None] = lambda _: None) -> None:
    """The differential check of the modes on ``plan.graphs`` expressions."""
    start = time.perf_counter()
    n_batches = math.ceil(plan.graphs / plan.batch_size)
    numba_batches = math.ceil(plan.numba_graphs / plan.batch_size)
    debug_numba_batches = math.ceil(plan.debug_numba_graphs / plan.batch_size)
    for i in range(n_batches):
        size = min(plan.batch_size, plan.graphs - i * plan.batch_size)
        batch = generate_batch(plan.seed, i, size, stats=figures.generator)
        names = modes.MODES if i < numba_batches else ("NUMPY", "FAST_COMPILE", "DEBUG")
        _compare_batch(plan, figures, batch, i, names, figures.graphs, i < debug_numba_batches, log)
        log(f"modes: batch {i + 1}/{n_batches} ({'with' if i < numba_batches else 'without'} Numba), "
            f"{time.perf_counter() - start:.1f} s")
    figures.seconds["modes"] += time.perf_counter() - start


def _compare_batch(plan: Plan, figures: Figures, batch: Batch, b: int, names: tuple[str, ...], tried: Counter,
                   debug_numba: bool, log: Callable[[str], None]) -> None:
    """Compare ``batch`` (batch ``b`` of its flavour) in the modes ``names`` on both value sets; shrink failures."""
    for config in ("special", "moderate"):
        report = modes.compare_modes(batch.exprs, batch.env, config, names, debug_numba=debug_numba)
        for name, n in report.tried.items():
            tried[(name, config)] += n
        if debug_numba:
            tried[("DEBUG + Numba check", config)] += report.tried["DEBUG"]
        figures.numpy_tier_calls += report.numpy_tier_calls
        figures.tiered_functions += report.tiered_functions
        figures.known_bugs.update(report.known_bugs)
        figures.documented.update(report.documented)
        figures.random_rules.update(report.random_rules)
        for p in report.problems:
            origin = _origin(plan.seed, b, p.expr)
            key = ("modes", p.kind.replace(f"/{config}:", ":"))  # one bug, seen on both value sets: one failure
            if not figures.first(key):
                continue
            log(f"modes: {p.kind} at {origin}: shrinking")
            started = time.perf_counter()
            figures.failures[key] = Failure("modes", p.kind, p.message, origin) if p.expr is None \
                else mode_failure(batch.exprs, p.expr, batch.env, config, p.kind, p.message, origin, debug_numba,
                                  figures.budget(plan))
            figures.seconds["shrinking"] += time.perf_counter() - started


def run_random(plan: Plan, figures: Figures, log: Callable[[str], None] = lambda _: None) -> None:
    """The differential check of the modes on ``plan.random_graphs`` expressions with random variables.

    Batch ``i`` is ``generate_batch(plan.seed, RANDOM_BATCHES + i, ..., "random")``: its draws' seeds come from
    the plan's seed. Each evaluation starts from the same generator states (see ``modes``).
    """
    start = time.perf_counter()
    n_batches = math.ceil(plan.random_graphs / plan.batch_size)
    numba_batches = math.ceil(plan.random_numba_graphs / plan.batch_size)
    for i in range(n_batches):
        b = RANDOM_BATCHES + i
        size = min(plan.batch_size, plan.random_graphs - i * plan.batch_size)
        batch = generate_batch(plan.seed, b, size, "random", stats=figures.generator)
        names = (*RANDOM_MODES, "TIERED", "NUMBA") if i < numba_batches else RANDOM_MODES
        _compare_batch(plan, figures, batch, b, names, figures.random_graphs, False, log)
        log(f"random variables: batch {i + 1}/{n_batches}, {time.perf_counter() - start:.1f} s")
    figures.seconds["random variables"] += time.perf_counter() - start


def run_loops(plan: Plan, figures: Figures, log: Callable[[str], None] = lambda _: None) -> None:
    """The differential check of the modes on ``plan.loop_graphs`` expressions of the ``loops`` flavour.

    Batch ``i`` is ``generate_batch(plan.seed, LOOP_BATCHES + i, ..., "loops")``: most of its expressions are
    ``scan`` loops whose bodies are random expressions over sequences, a state and non-sequences (``loops``).
    """
    start = time.perf_counter()
    n_batches = math.ceil(plan.loop_graphs / plan.batch_size)
    numba_batches = math.ceil(plan.loop_numba_graphs / plan.batch_size)
    for i in range(n_batches):
        b = LOOP_BATCHES + i
        size = min(plan.batch_size, plan.loop_graphs - i * plan.batch_size)
        batch = generate_batch(plan.seed, b, size, "loops", stats=figures.generator)
        names = (*LOOP_MODES, "TIERED", "NUMBA") if i < numba_batches else LOOP_MODES
        _compare_batch(plan, figures, batch, b, names, figures.loop_graphs, False, log)
        log(f"loops: batch {i + 1}/{n_batches}, {time.perf_counter() - start:.1f} s")
    figures.seconds["loops"] += time.perf_counter() - start


def run_loop_gradients(plan: Plan, figures: Figures, log: Callable[[str], None] = lambda _: None) -> None:
    """``verify_grad`` and the compiled gradient through ``plan.loop_gradients`` loops of smooth random bodies
    (batch ``i`` is ``generate_batch(plan.seed, LOOP_GRADIENT_BATCHES + i, ..., "smooth_loops")``)."""
    start = time.perf_counter()
    _check_gradients(plan, figures, LOOP_GRADIENT_BATCHES, plan.loop_gradients, "smooth_loops", "loop gradients", log)
    figures.seconds["loop gradients"] += time.perf_counter() - start


def run_gradients(plan: Plan, figures: Figures, log: Callable[[str], None] = lambda _: None) -> None:
    """``verify_grad`` and the compiled gradient of ``plan.gradients`` smooth expressions."""
    start = time.perf_counter()
    _check_gradients(plan, figures, GRADIENT_BATCHES, plan.gradients, "smooth", "gradients", log)
    figures.seconds["gradients"] += time.perf_counter() - start


def _check_gradients(plan: Plan, figures: Figures, first_batch: int, count: int, flavor: str, check: str,
                     log: Callable[[str], None]) -> None:
    """``count`` expressions of ``flavor`` through ``graphs.check_gradient``; failures keyed by ``check``."""
    start = time.perf_counter()
    per_batch = 10
    for i in range(math.ceil(count / per_batch)):
        b = first_batch + i
        batch = generate_batch(plan.seed, b, min(per_batch, count - i * per_batch), flavor,
                               stats=figures.generator, max_ops=5)
        for k, expr in enumerate(batch.exprs):
            problems = graphs.check_gradient(expr, batch.env, seed=k)
            if check == "gradients":
                figures.gradients += 1
                figures.compiled_gradients += 2
            else:
                figures.loop_gradients += 1
            for message in problems:
                key = (check, "verify_grad" if message.startswith("verify_grad") else "compiled gradient")
                if figures.first(key):
                    origin = _origin(plan.seed, b, k)
                    log(f"{check}: {message[:100]} at {origin}: shrinking")
                    started = time.perf_counter()
                    figures.failures[key] = gradient_failure(expr, batch.env, k, message, origin, figures.budget(plan))
                    figures.seconds["shrinking"] += time.perf_counter() - started
    log(f"{check}: {count}, {time.perf_counter() - start:.1f} s")


def run_edits(plan: Plan, figures: Figures, log: Callable[[str], None] = lambda _: None) -> None:
    """``plan.edit_sequences`` random sequences of edits, each step checked and replayed."""
    start = time.perf_counter()
    for j in range(plan.edit_sequences):
        b = EDIT_BATCHES + j
        batch = generate_batch(plan.seed, b, 6, stats=figures.generator)
        problems, steps = graphs.check_edits(batch.exprs, batch.env, b, plan.edits_per_sequence, plan.output_edits)
        figures.edit_sequences += 1
        figures.edit_steps += steps
        for message in problems:
            key = ("edit sequences", problem_kind(message))
            if figures.first(key):
                log(f"edit sequences: {message[:100]} at {_origin(plan.seed, b)}: shrinking")
                started = time.perf_counter()
                figures.failures[key] = edit_failure(batch.exprs, batch.env, b, plan.edits_per_sequence,
                                                     plan.output_edits, message, _origin(plan.seed, b), figures.budget(plan))
                figures.seconds["shrinking"] += time.perf_counter() - started
    log(f"edit sequences: {figures.edit_sequences}, {time.perf_counter() - start:.1f} s")
    figures.seconds["edit sequences"] += time.perf_counter() - start


def run_round_trips(plan: Plan, figures: Figures, log: Callable[[str], None] = lambda _: None) -> None:
    """``plan.round_trip_graphs`` graphs (and their optimized graphs) through every DAG format."""
    start = time.perf_counter()
    for j in range(plan.round_trip_graphs):
        b = ROUND_TRIP_BATCHES + j
        batch = generate_batch(plan.seed, b, 6, stats=figures.generator)
        problems, count = graphs.check_round_trips(batch.exprs, batch.env)
        figures.round_trips += count
        figures.round_trip_graphs += 1
        for message in problems:
            key = ("round trips", problem_kind(message))
            if figures.first(key):
                log(f"round trips: {message[:100]} at {_origin(plan.seed, b)}: shrinking")
                started = time.perf_counter()
                figures.failures[key] = round_trip_failure(batch.exprs, batch.env, message, _origin(plan.seed, b),
                                                           figures.budget(plan))
                figures.seconds["shrinking"] += time.perf_counter() - started
    log(f"round trips: {figures.round_trips}, {time.perf_counter() - start:.1f} s")
    figures.seconds["round trips"] += time.perf_counter() - start
