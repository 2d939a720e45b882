"""One benchmark measurement in a fresh process: ``python benchmarks/worker.py <workload> <system> <phase>``.

``system`` is one of

``symlab``
    symlab's default, tiered compilation (``symlab.config.background_compile = True``, set here rather
    than taken from the environment): ``function(...)`` returns once the graph is rewritten, Numba
    compiles or loads the machine code on a worker thread, and the calls made before it is ready run
    on the NumPy backend ("the NumPy tier");
``symlab-numba``
    the plain Numba path (``background_compile = False``): ``function(...)`` returns with the machine
    code ready, and every call runs it;
``pytensor``
    PyTensor, which compiles its Numba code lazily, at the first call.

``phase`` is

``import``
    time ``import symlab`` (or ``import pytensor``) with nothing imported before it;
``cold`` / ``warm``
    build the workload's graph, compile it, call it twice, check the result against the hand-written
    NumPy version; ``warm`` then also times steady-state calls, in alternating blocks with the NumPy
    version in this same process (NumPy's own time depends on the allocator's state).

Cold or warm is the state of the compile cache, which the caller sets up through the environment
(``SYMLAB_CACHE_DIR``, ``NUMBA_CACHE_DIR``, ``PYTENSOR_FLAGS=base_compiledir=...``): the worker only
measures. It prints one line ``BENCH_JSON: {...}`` (libraries may print other lines).

Times, in seconds, every system:

``build``         building the graph (including ``grad``)
``compile``       the ``function(...)`` call
``probe_call``    the first call, on tiny inputs of the same types (PyTensor's Numba code, for one, is
                  compiled lazily at the first call: this is where it happens)
``returned``      ``compile`` + ``probe_call``: what the caller waits before its first real call
``ready``         from the ``function(...)`` call until the machine code is ready. ``symlab``: the
                  moment ``f.wait()`` returns on a thread that waits beside the calls below (the calls
                  go on meanwhile, as a user's would, and compete with Numba for the cores; the thread
                  may see the moment up to a GIL switch interval late). The other systems compile
                  before they return: ``ready`` is ``returned``
``first_call``    the first call on the workload's inputs; ``second_call`` the next one
``first_result``  from the start of this process (before ``import numpy``) to the first result,
                  excluding the generation of the input data and the first NumPy reference call (which
                  runs before compilation: it brings the process's memory to the same state for both).
                  ``symlab``: computed by whichever tier was serving then
``rewrite``       rewriting (symlab: ``f.profile``; PyTensor: its global compile statistics)
``steady``        ``warm`` only: ``{"compiled", "numpy", "ratio", "calls_per_block", "blocks", "tier"}``,
                  seconds per call of the compiled function and of the NumPy version (medians over the
                  blocks) and their ratio. symlab's steady calls run on an unprofiled second compile of
                  the graph (the profiled one times each node), after its ``wait()``: on the machine code.
                  symlab also records there ``threads`` (the steady function's setting, ``"auto"`` or a
                  count: ``SYMLAB_THREADS``), ``thread_counts`` (the threads its calls were using, read
                  after each block: ``{count: blocks}``) and ``threading`` (``threading_info()`` at the end)

symlab only (both systems; for ``symlab-numba`` the tiers are always ``"machine code"``):

``tier_probe``, ``tier_first_call``   the tier that served the probe call and the first real call
                  (``"numpy"``, ``"machine code"``, ``"numpy (Numba failed)"``), from ``f.profile.tier_calls``
``tier_calls``    calls per tier over the calls above (``f.profile.tier_calls``)
``calls_before_ready``  calls the NumPy tier served before the machine code was ready
``ready_seconds`` the runner's ``compile_info.ready_seconds``: from making the runner (after rewriting)
                  to machine code ready
``cache_hit``, ``cache_miss_reason``  whether the machine code came from the disk cache, and if not why
``compile_error`` why Numba failed (``repr`` of ``compile_info.error``), or None
``backend``, ``compile_info``, ``profile``  the linker, the runner's ``CompileInfo`` and ``f.profile``'s
                  scalar fields, read once the machine code is ready
``threads``, ``thread_count``, ``threading``  the function's thread setting (``f.threads``), the threads
                  a call made then uses (``f.thread_count``), and ``symlab.compile.threads.threading_info()``
                  (most threads, the ``"auto"`` count and the other processes' cores it saw, the OpenMP
                  wait policy, Numba's threading layer), read once the machine code is ready
"""

from __future__ import annotations

import time

_T0 = time.perf_counter()

import gc  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

if __name__ == "__main__" and __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

#: The systems a worker measures (see the module's docstring).
SYSTEMS = ("symlab", "symlab-numba", "pytensor")


def module_of(system: str) -> str:
    """The package a system imports (``symlab-numba`` is symlab with a setting)."""
    return "pytensor" if system == "pytensor" else "symlab"


def time_import(system: str) -> dict[str, Any]:
    """Seconds to import the system's package, and whether that imported Numba."""
    before = set(sys.modules)
    t = time.perf_counter()
    __import__(module_of(system))
    seconds = time.perf_counter() - t
    loaded = set(sys.modules) - before
    return {"import": seconds, "numba_imported": "numba" in loaded, "modules_loaded": len(loaded)}


#: Seconds of calls of the compiled function before its blocks are calibrated and timed. symlab's ``"auto"``
#: threads read the machine's load over 0.2 s windows (``symlab.compile.threads``), so the first calls of a
#: process on a busy machine still use every core; a block calibrated on one of those would hold a single call.
WARMUP_SECONDS = 0.3


def alternate(
    compiled: Callable[[], Any],
    reference: Callable[[], Any],
    blocks: int,
    block_seconds: float,
    sample: Callable[[], Any] | None = None,
) -> dict:
    """Median seconds per call of ``compiled`` and ``reference``, timed in alternating blocks of ``k`` calls.

    ``sample``, if given, is called after each block of ``compiled`` (outside the timing); its answers are
    counted under ``"samples"`` (symlab: the thread count its calls were using).
    """
    warm_until = time.perf_counter() + WARMUP_SECONDS
    while time.perf_counter() < warm_until:  # steady state first: caches, BLAS threads, symlab's core watch
        compiled()
    k = 1
    while True:  # calibrate k on the compiled function: one block lasts at least block_seconds
        t = time.perf_counter()
        for _ in range(k):
            compiled()
        if time.perf_counter() - t >= block_seconds or k >= 1 << 20:
            break
        k *= 2
    times: dict[str, list[float]] = {"compiled": [], "numpy": []}
    samples: dict[str, int] = {}
    for b in range(blocks):
        order = [("compiled", compiled), ("numpy", reference)]
        if b % 2:
            order.reverse()
        for key, fn in order:
            gc.collect()
            t = time.perf_counter()
            for _ in range(k):
                fn()
            times[key].append((time.perf_counter() - t) / k)
            if key == "compiled" and sample is not None:
                seen = str(sample())
                samples[seen] = samples.get(seen, 0) + 1
    c, n = statistics.median(times["compiled"]), statistics.median(times["numpy"])
    out = {"compiled": c, "numpy": n, "ratio": c / n, "calls_per_block": k, "blocks": blocks}
    if sample is not None:
        out["samples"] = samples
    return out


# -- symlab -----------------------------------------------------------------------------------------------------------------


def compile_symlab(inputs: list, outputs: list, mode: str, profile: bool) -> tuple[Any, dict]:
    """``symlab.function(...)`` and the seconds it took; the rest is read by :func:`describe_symlab` later,
    once the machine code is ready (with tiered compilation, little is known when ``function`` returns)."""
    import symlab

    t = time.perf_counter()
    f = symlab.function(inputs, outputs, mode=mode, profile=profile)
    return f, {"compile": time.perf_counter() - t}


def _json_safe(value: Any) -> Any:
    """``value`` if JSON can hold it, else its ``repr`` (``compile_info.error`` is an exception)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    return repr(value)


def describe_symlab(f: Any) -> dict[str, Any]:
    """The backend that ran, the runner's ``CompileInfo`` and the profile's scalars (call after ``f.wait()``)."""
    info: dict[str, Any] = {}
    linker = f.maker.linker
    fallback = bool(getattr(linker, "falls_back_to_numpy", False))
    name = getattr(linker, "name", type(linker).__name__)
    info["backend"] = f"{name} (NumPy stand-in)" if fallback else name
    info["linker_class"] = f"{type(linker).__module__}.{type(linker).__qualname__}"
    if getattr(f.maker.runner, "numpy_fallback", None) is not None:  # Numba could not compile this graph
        fallback = True
        info["backend"] = f"{name} -> NumPy fallback"
    info["numba_stand_in"] = fallback
    compile_info = f.compile_info
    if compile_info is not None:  # cache hit or miss and why, ops without a Numba kernel, the tiers' numbers
        fields = {k: v for k, v in vars(compile_info).items() if not k.startswith("_")}
        info["compile_info"] = _json_safe(fields)
        info["ready_seconds"] = compile_info.ready_seconds
        info["calls_before_ready"] = compile_info.calls_before_ready
        info["cache_hit"] = compile_info.cache_hit
        info["cache_miss_reason"] = compile_info.miss_reason
        info["compile_error"] = None if compile_info.error is None else repr(compile_info.error)
    info.update(describe_threads(f))
    if f.profile is not None:
        p = f.profile
        info["rewrite"] = p.rewrite_seconds
        info["tier_calls"] = dict(p.tier_calls)
        # Every scalar field of the profile (the Numba backend adds cache hit/miss and background fields).
        info["profile"] = {k: v for k, v in vars(p).items() if isinstance(v, int | float | str | bool) or v is None}
    return info


def describe_threads(f: Any) -> dict[str, Any]:
    """The function's thread setting (``threads``: ``"auto"`` or a count), the threads a call made now uses
    (``thread_count``), and the process's ``threading_info()`` (the most threads, what ``"auto"`` gives now
    and the other processes' cores it saw, the OpenMP wait policy, Numba's threading layer)."""
    from symlab.compile.threads import threading_info

    return {"threads": f.threads, "thread_count": f.thread_count, "threading": _json_safe(threading_info())}


class ReadyWatch:
    """The moment a tiered function's machine code is ready, seen by a thread blocked in ``f.wait()``.

    A thread, so that the main thread calls the function meanwhile as a user would (its calls on the
    NumPy tier compete with Numba for the cores, and a long call must not hide when the code was ready).
    """

    def __init__(self, f: Any) -> None:
        self.at: float | None = None
        self._f = f
        self._thread = threading.Thread(target=self._wait, name="bench-ready-watch", daemon=True)
        self._thread.start()

    def _wait(self) -> None:
        self._f.wait()
        self.at = time.perf_counter()

    def join(self) -> float:
        """The ``perf_counter`` time at which ``f.wait()`` returned (after waiting for it)."""
        self._thread.join()
        assert self.at is not None
        return self.at


def call_counting_tier(f: Any, args: list) -> tuple[Any, str | None]:
    """``f(*args)`` and the tier that served it (from the profile's per-tier counts; None without them)."""
    counts = dict(f.profile.tier_calls) if f.profile is not None else {}
    result = f(*args)
    if f.profile is None:
        return result, None
    served = [t for t, n in f.profile.tier_calls.items() if n > counts.get(t, 0)]
    return result, served[0] if len(served) == 1 else None


def steady_symlab(w: Any, inputs: list, outputs: list, mode: str, data: list, expected: list) -> tuple[Any, dict]:
    """An unprofiled compile of the graph (the profiled one times each node) on its machine code, checked.

    With tiered compilation this compile is tiered too: wait for its machine code before timing.
    """
    from workloads import compare

    g, _ = compile_symlab(inputs, outputs, mode, profile=False)
    g.wait()
    out = {"tier": g.tier, "check": compare(_as_list(g(*data)), expected, w.rtol, w.atol)}
    return g, out


def _as_list(result: Any) -> list:
    return list(result) if isinstance(result, list | tuple) else [result]


# -- PyTensor ---------------------------------------------------------------------------------------------------------------


def compile_pytensor(inputs: list, outputs: list, mode: str) -> tuple[Any, dict]:
    """``pytensor.function(...)``, the seconds it took, its rewriting and linking time, its backend."""
    import pytensor
    from pytensor.compile.debug import profiling as stats

    rewrite0, link0 = stats.total_graph_rewrite_time, stats.total_time_linker
    t = time.perf_counter()
    f = pytensor.function(inputs, outputs, mode=mode)
    info: dict[str, Any] = {"compile": time.perf_counter() - t}
    info["rewrite"] = stats.total_graph_rewrite_time - rewrite0
    info["profile"] = {"linker": stats.total_time_linker - link0}
    linker = f.maker.linker
    info["backend"] = f"pytensor {mode}"
    info["linker_class"] = f"{type(linker).__module__}.{type(linker).__qualname__}"
    info["pytensor_version"] = pytensor.__version__
    return f, info


# -- one measurement --------------------------------------------------------------------------------------------------------


def measure(workload_name: str, system: str, phase: str, blocks: int, block_seconds: float, mode: str) -> dict:
    """Build, compile, call and check one workload on one system (see the module's docstring for the fields)."""
    import numpy as np
    from workloads import WORKLOADS, compare, count_nodes

    w = WORKLOADS[workload_name]
    t = time.perf_counter()
    data = w.data()
    data_seconds = time.perf_counter() - t
    # The NumPy reference runs first: its result is the check's, and the process's memory is then in the
    # same state for both (a fresh process's first pass over large arrays is slow, compiled code or not).
    t = time.perf_counter()
    expected = w.numpy(*data)
    reference_seconds = time.perf_counter() - t
    out: dict[str, Any] = {"data": data_seconds, "numpy_first_call": reference_seconds}
    imported = time_import(system)
    out["import_after_numpy"] = imported["import"]
    out["numba_imported"] = imported["numba_imported"]
    is_symlab = module_of(system) == "symlab"
    tiered = system == "symlab"
    if is_symlab:
        import symlab

        # Explicit, whatever SYMLAB_BACKGROUND_COMPILE says (symlab's test suite, for one, sets it to 0).
        symlab.config.background_compile = tiered
        out["background_compile"] = tiered

    build = w.build_symlab if is_symlab else w.build_pytensor
    t = time.perf_counter()
    inputs, outputs = build()
    out["build"] = time.perf_counter() - t
    out["nodes"] = count_nodes(outputs)

    compile_started = time.perf_counter()
    if is_symlab:
        f, info = compile_symlab(inputs, outputs, mode, profile=True)
    else:
        f, info = compile_pytensor(inputs, outputs, mode)
    out.update(info)
    watch = ReadyWatch(f) if tiered else None  # started outside the timed sections

    probe = w.probe() if w.probe is not None else data
    t = time.perf_counter()
    _, out["tier_probe"] = call_counting_tier(f, probe) if is_symlab else (f(*probe), None)
    out["probe_call"] = time.perf_counter() - t
    out["returned"] = out["compile"] + out["probe_call"]
    t = time.perf_counter()
    result, out["tier_first_call"] = call_counting_tier(f, data) if is_symlab else (f(*data), None)
    done = time.perf_counter()
    out["first_call"] = done - t
    out["first_result"] = done - _T0 - data_seconds - reference_seconds
    t = time.perf_counter()
    f(*data)
    out["second_call"] = time.perf_counter() - t
    out["check"] = compare(_as_list(result), expected, w.rtol, w.atol)

    out["ready"] = out["returned"]  # compiled before function() returned (PyTensor: at the probe call)
    if watch is not None:
        out["ready"] = watch.join() - compile_started
        f.wait()
        check = compare(_as_list(f(*data)), expected, w.rtol, w.atol)  # the machine code's result too
        if not check["ok"]:
            out["check"] = check
    if is_symlab:
        out.update(describe_symlab(f))

    if phase == "warm":
        if is_symlab:
            f, steady_info = steady_symlab(w, inputs, outputs, mode, data, expected)
            if not steady_info["check"]["ok"]:
                out["check"] = steady_info["check"]
        reference = w.numpy
        sample = (lambda: f.thread_count) if is_symlab else None
        out["steady"] = alternate(lambda: f(*data), lambda: reference(*data), blocks, block_seconds, sample)
        if is_symlab:
            out["steady"]["tier"] = steady_info["tier"]
            # The threads the steady calls used: the setting, the count after each block ({count: blocks}),
            # and what the process saw at the end (``"auto"`` gives up a thread per core others keep busy).
            out["steady"]["threads"] = f.threads
            out["steady"]["thread_counts"] = out["steady"].pop("samples")
            out["steady"]["threading"] = describe_threads(f)["threading"]
    out["numpy_version"] = np.__version__
    return out


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description="one benchmark measurement in a fresh process")
    parser.add_argument("workload")
    parser.add_argument("system", choices=SYSTEMS)
    parser.add_argument("phase", choices=["import", "cold", "warm"])
    parser.add_argument("--blocks", type=int, default=7, help="alternating blocks of steady-state calls")
    parser.add_argument("--block-seconds", type=float, default=0.05, help="minimum length of one block")
    parser.add_argument("--mode", default="NUMBA", help="compilation mode (both systems know NUMBA)")
    args = parser.parse_args(argv)
    record: dict[str, Any] = {"workload": args.workload, "system": args.system, "phase": args.phase}
    if args.phase == "import":
        record.update(time_import(args.system))
    else:
        record.update(measure(args.workload, args.system, args.phase, args.blocks, args.block_seconds, args.mode))
    record["status"] = "ok"
    print("BENCH_JSON: " + json.dumps(_json_safe(record)), flush=True)


if __name__ == "__main__":
    main()
