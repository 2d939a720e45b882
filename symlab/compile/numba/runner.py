"""The tiered runner of a Numba-compiled graph: the NumPy tier answers while Numba compiles in the background.

:class:`NumbaRunner` generates the graph's module (:mod:`~symlab.compile.numba.graph_source`), then
compiles or loads it (:func:`~symlab.compile.numba.loading.load_compiled`), now or on a worker thread;
until the machine code is ready, calls run the same graph on the NumPy backend. Which tier serves a
call is :attr:`NumbaRunner.tier` (:data:`NUMPY_TIER`, :data:`MACHINE_CODE_TIER`, or a NumPy tier after
a failure, a fork or the exit). The compiles under way are tracked by
:mod:`~symlab.compile.numba.background`.

>>> import numpy as np
>>> import symlab.tensor as st
>>> from symlab.graph.fg import FunctionGraph
>>> x = st.dvector("x")
>>> runner = NumbaRunner(FunctionGraph([x], [x * 2.0]), background=False)  # the inputs: filtered arrays
>>> runner.tier, runner.ready, runner([np.array([1.0, 2.0])])[0].tolist()
('machine code', True, [2.0, 4.0])
"""

from __future__ import annotations

import copy
import logging
import threading
import warnings
from collections.abc import Sequence
from dataclasses import fields
from time import perf_counter
from typing import Any

import numpy as np

from symlab.compile.linker_numpy import NumpyRunner, annotate_node_error, copy_value, outputs_to_copy
from symlab.compile.numba import background as background_compiles
from symlab.compile.numba.graph_source import GeneratedModule, generate_module
from symlab.compile.numba.loading import CompileInfo, load_compiled, numba_signature
from symlab.graph.fg import FunctionGraph
from symlab.ifelse.op import truth

log = logging.getLogger("symlab.cache")

#: The tiers a call can run on (``runner.tier``, ``f.tier``, ``f.profile.tier_calls``).
NUMPY_TIER = "numpy"
MACHINE_CODE_TIER = "machine code"
FALLBACK_TIER = "numpy (Numba failed)"
FORKED_TIER = "numpy (forked while compiling)"
EXITING_TIER = "numpy (compile abandoned at exit)"


#: The ``CompileInfo`` fields the runner fills from the generated module, before Numba compiles anything.
_KNOWN_BEFORE_COMPILING = (
    "fallback_ops", "numpy_ops", "background", "calls_before_ready", "lazy_plan", "parallel_kernels", "blas_kernels",
)


class ForkedWhileCompiling(RuntimeError):
    """The ``compile_info.error`` of a function in a child forked while its machine code was compiling."""


class CompileAbandoned(RuntimeError):
    """The ``compile_info.error`` of a function whose background compile was abandoned at interpreter exit."""


class NumbaRunner(NumpyRunner):
    """Runs a graph compiled by :class:`~symlab.compile.numba.linker.NumbaLinker` (same interface as :class:`NumpyRunner`).

    With ``background=True`` the runner is made without waiting for Numba:
    the kernel source is generated (an op without a kernel is warned about
    now), then a worker thread imports Numba and compiles the module or loads
    it from the disk cache, while the calls made meanwhile run the same
    optimized graph on the NumPy backend (each op's ``perform``, the
    reference every kernel is tested against: values agree to rounding, and
    elementwise kernels give NumPy's bits). The first call after the machine
    code is ready switches to it for good. ``ready`` tells whether it is,
    :meth:`wait` waits for it, and ``compile_info`` says how long it took
    (``ready_seconds``) and how many calls ran before (``calls_before_ready``).
    If Numba cannot compile the graph, the warning comes at the next call, the
    NumPy backend stays, and the exception is kept in ``compile_info.error``.
    :attr:`tier` says which tier serves the calls now; with a profile, each
    call is counted under its tier (``profile.tier_calls``).

    Safe to call from several threads during the switch (a call runs wholly
    on one tier). The worker is a daemon thread: a process that has its
    answers exits at once, abandoning the compiles under way (see
    :func:`~symlab.compile.numba.background._at_exit`; :func:`~symlab.compile.numba.background.wait_all` waits for them instead). A cache
    entry is never left half written: every file is written atomically and
    signed last, so even a killed process leaves none a later process would
    load. A ``fork`` waits (at most :data:`~symlab.compile.numba.background.FORK_WAIT_SECONDS`) for the
    compiles under way, so that the child never inherits a lock Numba holds
    or a compile that no thread will finish; a child forked while one still
    runs keeps that function on the NumPy tier.
    """

    def __init__(
        self, fgraph: FunctionGraph, borrow_outputs: Sequence[bool] | None = None, background: bool = False
    ) -> None:
        started = perf_counter()
        self.fgraph = fgraph
        self.nodes = fgraph.toposort()
        self.copied_outputs = outputs_to_copy(fgraph, borrow_outputs)
        self.compile_info = CompileInfo(background=background)
        self.numpy_fallback: NumpyRunner | None = None
        self._fn = None
        gen = generate_module(self.nodes, fgraph.inputs, fgraph.outputs)
        self.generated = gen
        self.compile_info.fallback_ops = sorted({str(n.op) for n in gen.fallback_nodes})
        self.compile_info.numpy_ops = {str(n.op): why for n, why in gen.numpy_nodes.items()}
        self.compile_info.parallel_kernels, self.compile_info.blas_kernels = _parallel_work(gen)
        if gen.plan is not None and (gen.plan.guards or gen.plan.eager):
            self.compile_info.lazy_plan = gen.plan.describe() + "".join(
                f"\n  {g.branch} of {g.choice.op}: holds a Python step; guarded by the runner between compiled steps"
                for g in gen.stepwise
            )
        self._ready = threading.Event()
        #: Set after the callbacks of :meth:`when_ready` ran: what :meth:`wait` waits for, so that a caller
        #: who waited sees their effects (the function's direct call path, its profile's compile figures).
        self._settled = threading.Event()
        self._lock = threading.Lock()  # orders when_ready against the end of compiling
        self._when_ready: list[Any] = []
        self._failure: str | None = None
        #: True once the exit abandoned this compile (the NumPy tier serves; the worker's results are ignored).
        self._abandoned = False
        #: The NumPy backend that runs calls until the machine code is ready (background compilation only).
        self._interim: NumpyRunner | None = None
        if not background:
            self._compile(gen, borrow_outputs, started)
            if self._failure is not None:
                warnings.warn(self._failure, stacklevel=3)
                self._failure = None
            return
        self._interim = NumpyRunner(fgraph, borrow_outputs)
        if not background_compiles.register(self):  # made by an exit hook or a finalizer: no compile would finish
            self.abandon_at_exit()
            return
        thread = threading.Thread(
            target=self._compile, args=(gen, borrow_outputs, started), name="symlab-numba-compile", daemon=True
        )
        try:
            thread.start()
        except BaseException:
            background_compiles.unregister(self)
            if background_compiles.is_exiting():  # a thread cannot start while the interpreter finalizes
                self.abandon_at_exit()
                return
            raise

    def _compile(self, gen: GeneratedModule, borrow_outputs: Sequence[bool] | None, started: float) -> None:
        """Compile (or load) the module and make the runner ready; a failure leaves the NumPy backend."""
        if self.compile_info.background and not background_compiles.may_start_numba():
            return  # the interpreter is exiting: the exit hook made this runner ready, on the NumPy tier
        try:
            known = self._slot_types(gen)
            arg_types = {  # the first use of Numba: on the worker thread when compiling in the background
                step.name: numba_signature([gen.constant_slots.get(s) for s in step.args], [known[s] for s in step.args])
                for step in gen.steps
                if step.kind == "segment"
            }
            if arg_types:
                functions, info = load_compiled(gen, arg_types)
                for f in fields(CompileInfo):  # in place: calls made meanwhile count in self.compile_info
                    if f.name not in _KNOWN_BEFORE_COMPILING:
                        setattr(self.compile_info, f.name, getattr(info, f.name))
                for step in gen.steps:
                    if step.kind == "segment":
                        step.function = functions[step.name]
            self._load_machines(gen)
            self._prepare_run(gen)
            self._interim = None  # calls go to the machine code from now on
        except Exception as err:
            # The warning is given by the caller's thread: now, or at the first call after a background compile.
            with self._lock:
                if not self._abandoned:  # an abandoned compile's error (the cache closed under it) is not the graph's
                    self._fail(err, borrow_outputs)
        if self._abandoned:
            return
        self.compile_info.ready_seconds = perf_counter() - started
        self._finish_compiling()

    def _fail(self, err: BaseException, borrow_outputs: Sequence[bool] | None = None) -> None:
        """Numba failed: keep the exception, warn at the next call, let the NumPy backend serve every call."""
        self.compile_info.error = err
        self._failure = (
            f"symlab: Numba could not compile this graph ({type(err).__name__}: {str(err)[:500]}); "
            "running the NumPy backend instead (the exception: f.compile_info.error)"
        )
        self.numpy_fallback = self._interim or NumpyRunner(self.fgraph, borrow_outputs)

    def _finish_compiling(self) -> None:
        """Compiling is over: mark the runner ready and run the callbacks waiting for it."""
        with self._lock:
            self._ready.set()
            callbacks, self._when_ready = self._when_ready, []
        background_compiles.unregister(self)
        try:
            for callback in callbacks:
                try:
                    callback()
                except Exception as err:  # a callback's error must not end the worker unseen
                    log.warning("symlab: a callback run when the machine code became ready failed: %r", err)
        finally:
            self._settled.set()

    def abandon_in_child(self) -> None:
        """In a child forked while this runner compiled: no thread will finish it; the NumPy tier serves."""
        self._lock = threading.Lock()  # the parent's may have been held at the fork
        if self._ready.is_set():
            return
        self._fail(ForkedWhileCompiling("this process was forked while Numba compiled this graph on a worker thread"))
        self.compile_info.ready_seconds = None
        self._failure = None  # not a failure of the graph: the child keeps the NumPy tier without a warning
        self._interim = None
        self._ready = threading.Event()
        self._settled = threading.Event()
        self._finish_compiling()

    def abandon_at_exit(self) -> None:
        """The interpreter exits while this runner compiles: it is ready now, on the NumPy tier, without a warning.

        A compile whose machine code is in place (only the last step was left) is kept.
        """
        with self._lock:
            if self._ready.is_set() or self._interim is None:
                return
            self._abandoned = True
            self._fail(CompileAbandoned("the interpreter exited while Numba compiled this graph on a worker thread"))
            self._failure = None  # not a failure of the graph
            self._interim = None
        self._finish_compiling()

    @property
    def tier(self) -> str:
        """Which tier serves a call made now: :data:`NUMPY_TIER` (the machine code is not ready yet),
        :data:`MACHINE_CODE_TIER`, :data:`FALLBACK_TIER` (Numba failed; the NumPy backend serves),
        :data:`FORKED_TIER` or :data:`EXITING_TIER`."""
        if self.numpy_fallback is not None:
            error = self.compile_info.error
            if isinstance(error, ForkedWhileCompiling):
                return FORKED_TIER
            return EXITING_TIER if isinstance(error, CompileAbandoned) else FALLBACK_TIER
        if self._interim is not None and not self._ready.is_set():
            return NUMPY_TIER
        return MACHINE_CODE_TIER

    @property
    def ready(self) -> bool:
        """Whether compiling is over: calls run the machine code (or, if Numba failed, the NumPy backend)."""
        return self._ready.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until compiling is over and its :meth:`when_ready` callbacks ran (at most ``timeout``
        seconds); return whether they did."""
        return self._settled.wait(timeout)

    def when_ready(self, callback: Any) -> None:
        """Call ``callback()`` once compiling is over: now if it is, else on the compiling thread."""
        with self._lock:
            if not self._ready.is_set():
                self._when_ready.append(callback)
                return
        callback()

    def _load_machines(self, gen: GeneratedModule) -> None:
        """Give each ``vm`` step its callable: the register machine its program needs, from the cache."""
        from symlab.compile.numba.elemwise_vm import load_vm, vm_callable

        info = self.compile_info
        for step in gen.steps:
            if step.kind != "vm":
                continue
            program = step.program
            load = load_vm(program.dtype, program.ops)
            step.function = vm_callable(step.nodes[0], program, load)
            info.vm_nodes += 1
            if load.compiled:
                info.numba_compile_seconds += load.seconds
                info.cache_hit = False
                info.miss_reason = info.miss_reason or f"register machine for {program.dtype}: {load.miss_reason}"
            else:
                info.cache_load_seconds += load.seconds
                if info.cache_hit is None:
                    info.cache_hit = True

    _profile: Any = None

    @property
    def profile(self) -> Any:
        """The :class:`~symlab.compile.profiling.ProfileStats` the calls record into, or None; given one, the
        runner tells it which ops run on NumPy by design (``compile_info.numpy_ops``)."""
        return self._profile

    @profile.setter
    def profile(self, stats: Any) -> None:
        self._profile = stats
        if stats is not None and self.compile_info.numpy_ops:
            stats.numpy_ops = dict(self.compile_info.numpy_ops)

    @staticmethod
    def _slot_types(gen: GeneratedModule) -> list[Any]:
        return [v.type for v in gen.slots]

    def _prepare_run(self, gen: GeneratedModule) -> None:
        n = len(gen.slots)
        self._n_slots = n
        self._constants = list(gen.constant_slots.items())
        self._input_slots = gen.input_slots
        self._output_slots = gen.output_slots
        self._steps = gen.steps
        self._node_index = {node: k for k, node in enumerate(self.nodes)}
        self._counter_slot = gen.counter_slot
        self._guard_of = gen.plan.guard_of if gen.plan is not None else {}
        self._copies = gen.private_copies
        self._single_copies: list[tuple[int, int | None, Any]] = []
        if gen.single:
            step = gen.steps[0]
            self._fn = step.function
            n_in = len(gen.input_slots)
            copy_of = dict(gen.private_copies)
            position = {s: k for k, s in enumerate(gen.input_slots)}
            extra = []
            for j, s in enumerate(step.args[n_in:]):
                if s in copy_of:  # filled at each call: (argument, input position or None, constant)
                    self._single_copies.append((j, position.get(copy_of[s]), gen.constant_slots.get(copy_of[s])))
                    extra.append(None)
                else:
                    extra.append(gen.constant_slots[s])
            self._extra_args = tuple(extra)
        else:
            self._fn = None

    def direct_callable(self) -> Any:
        """The compiled graph function, when calling it alone is the whole call: ``fn(*inputs) -> tuple``.

        None when the graph has Python steps, copied outputs, private copies (a draw from a copy of its
        generator) or runs the NumPy fallback, and while the machine code is not ready.
        """
        if self._interim is not None or self.numpy_fallback is not None or self._fn is None or self.copied_outputs:
            return None
        if self._single_copies:
            return None
        fn, extra = self._fn, self._extra_args
        if not extra:
            return fn
        return lambda *values: fn(*values, *extra)

    # -- calls ---------------------------------------------------------------------------
    def __call__(self, input_values: Sequence[Any]) -> list[Any]:
        interim = self._interim
        profile = self.profile
        if interim is not None:
            if not self._ready.is_set():  # the machine code is not ready: the NumPy backend computes this call
                self.compile_info.calls_before_ready += 1
                if profile is not None:
                    profile.count_tier(NUMPY_TIER)
                interim.profile = profile
                return interim(input_values)
            self._interim = None
            failure, self._failure = self._failure, None  # None: the code became ready since `interim` was read
            if failure is not None:  # Numba failed: numpy_fallback below runs this call and the next
                warnings.warn(failure, stacklevel=3)
        if self.numpy_fallback is not None:
            if profile is not None:
                profile.count_tier(self.tier)  # Numba failed, or this process was forked while it compiled
            self.numpy_fallback.profile = profile
            return self.numpy_fallback(input_values)
        fn = self._fn
        if fn is not None and profile is None:
            extra = self._extra_args
            if self._single_copies:  # private copies of generators, made now: the compiled code advances them
                extra = list(extra)
                for j, k, constant in self._single_copies:
                    extra[j] = private_copy(input_values[k] if k is not None else constant)
            outputs = list(fn(*input_values, *extra))
        else:
            if profile is not None:
                profile.count_tier(MACHINE_CODE_TIER)
            outputs = self._run_steps(input_values)
        for k in self.copied_outputs:
            outputs[k] = copy_value(outputs[k])
        return outputs

    def _run_steps(self, input_values: Sequence[Any]) -> list[Any]:
        env: list[Any] = [None] * self._n_slots
        for s, value in zip(self._input_slots, input_values):
            env[s] = value
        for s, value in self._constants:
            env[s] = value
        for s, source in self._copies:  # a copy for a kernel that advances it (a draw that is not inplace)
            env[s] = private_copy(env[source])
        counts = None
        if self._counter_slot is not None:  # this call's own counts of the guarded regions it ran
            counts = env[self._counter_slot] = np.zeros_like(env[self._counter_slot])
        stats = self.profile.nodes if self.profile is not None else None
        for step in self._steps:
            if step.guards:  # a step of an ifelse's region that holds a Python step
                if not all(truth(env[s]) == taken_when for s, taken_when, _g in step.guards):
                    if stats is not None:
                        for node in step.nodes:
                            stats[self._node_index[node]].skipped += 1
                    continue
                if counts is not None:
                    for _s, _taken_when, g in step.guards:
                        counts[g] = 1
            args = [env[s] for s in step.args]
            started = perf_counter()
            if step.function is not None:  # a compiled segment or a node on the register machine
                results = step.function(*args)
            else:
                node = step.nodes[0]
                cells: list[list[Any]] = [[None] for _ in node.outputs]
                try:
                    node.op.perform(node, args, cells)
                except Exception as err:
                    annotate_node_error(err, self._node_index[node], len(self.nodes), node, args)
                    raise
                results = [c[0] for c in cells]
            if stats is not None:
                self._record(stats, step.nodes, perf_counter() - started, counts)
            for s, value in zip(step.results, results):
                env[s] = value
        return [env[s] for s in self._output_slots]

    def _record(self, stats: Any, nodes: list[Any], seconds: float, counts: Any) -> None:
        """Count a step's nodes in the profile: those behind a guard ran as often as the guard's region did."""
        ran = []
        for node in nodes:
            guard = self._guard_of.get(node)
            s = stats[self._node_index[node]]
            if guard is not None and counts is not None and not counts[guard.index]:
                s.skipped += 1
            else:
                ran.append(s)
        for s in ran:
            s.seconds += seconds / len(ran)
            s.calls += 1


def _parallel_work(gen: GeneratedModule) -> tuple[int, int]:
    """(kernels with a parallel loop, kernels that call BLAS) among the kernels ``gen``'s module runs."""
    sources = [k.source for k in gen.kernels]
    parallel = sum("numba.prange(" in source for source in sources)
    blas = sum("blas_dot(" in source for source in sources)
    return parallel, blas


def private_copy(value: Any) -> Any:
    """An independent copy of a value a kernel advances in place (a ``numpy.random.Generator``: its deep copy,
    the same bit generator state advancing separately, as ``symlab.tensor.random.type.copy_generator`` makes)."""
    return copy.deepcopy(value)


__all__ = [
    "EXITING_TIER",
    "FALLBACK_TIER",
    "FORKED_TIER",
    "MACHINE_CODE_TIER",
    "NUMPY_TIER",
    "CompileAbandoned",
    "ForkedWhileCompiling",
    "NumbaRunner",
]
