"""One benchmark measurement in a fresh process: ``python benchmarks/worker.py <workload> <system> <phase>``.

``system`` is ``symlab``, ``symlab-background`` (symlab with ``config.background_compile``: calls run
on the NumPy backend until the machine code is ready) or ``pytensor``; ``phase`` is

``import``
    time ``import symlab`` (or ``import pytensor``) with nothing imported before it;
``cold`` / ``warm``
    build the workload's graph, compile it, call it twice, check the result against the hand-written
    NumPy version; ``warm`` then also times steady-state calls, in alternating blocks with the NumPy
    version in this same process (NumPy's own time depends on the allocator's state).

Cold or warm is the state of the compile cache, which the caller sets up through the environment
(``SYMLAB_CACHE_DIR``, ``NUMBA_CACHE_DIR``, ``PYTENSOR_FLAGS=base_compiledir=...``): the worker only
measures. It prints one line ``BENCH_JSON: {...}`` (libraries may print other lines).

Times, in seconds:

``build``         building the graph (including ``grad``)
``compile``       the ``function(...)`` call
``probe_call``    the first call, on tiny inputs of the same types (PyTensor's Numba code, for one, is
                  compiled lazily at the first call: this is where it happens)
``compile_total`` ``compile`` + ``probe_call``: what the tables call the compile time
``first_call``    the first call on the workload's inputs; ``second_call`` the next one
``first_result``  from the start of this process (before ``import numpy``) to the first result,
                  excluding the generation of the input data and the first NumPy reference call (which
                  runs before compilation: it brings the process's memory to the same state for both)
``rewrite``       rewriting (symlab: ``f.profile``; PyTensor: its global compile statistics)

With ``symlab-background``, ``compile_total`` is the time from the ``function(...)`` call until the
machine code is ready (``f.wait_compiled()``, after the calls above), so that it stays the time
Numba takes; ``returned`` is ``compile`` + ``probe_call``, what the caller waited; ``first_result``
is what the user waits for the first result, computed by the NumPy backend if the machine code was
not ready. Its steady state is the same machine code as ``symlab``'s and is not timed again.
"""

from __future__ import annotations

import time

_T0 = time.perf_counter()

import gc  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

if __name__ == "__main__" and __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def module_of(system: str) -> str:
    """The package a system imports (``symlab-background`` is symlab with a setting)."""
    return "pytensor" if system == "pytensor" else "symlab"


def time_import(system: str) -> dict[str, Any]:
    before = set(sys.modules)
    t = time.perf_counter()
    __import__(module_of(system))
    seconds = time.perf_counter() - t
    loaded = set(sys.modules) - before
    return {"import": seconds, "numba_imported": "numba" in loaded, "modules_loaded": len(loaded)}


def alternate(compiled: Callable[[], Any], reference: Callable[[], Any], blocks: int, block_seconds: float) -> dict:
    """Median seconds per call of ``compiled`` and ``reference``, timed in alternating blocks of ``k`` calls."""
    k = 1
    while True:  # calibrate k on the compiled function: one block lasts at least block_seconds
        t = time.perf_counter()
        for _ in range(k):
            compiled()
        if time.perf_counter() - t >= block_seconds or k >= 1 << 20:
            break
        k *= 2
    times: dict[str, list[float]] = {"compiled": [], "numpy": []}
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
    c, n = statistics.median(times["compiled"]), statistics.median(times["numpy"])
    return {"compiled": c, "numpy": n, "ratio": c / n, "calls_per_block": k, "blocks": blocks}


def compile_symlab(inputs: list, outputs: list, mode: str, profile: bool) -> tuple[Any, dict]:
    import symlab

    t = time.perf_counter()
    f = symlab.function(inputs, outputs, mode=mode, profile=profile)
    info: dict[str, Any] = {"compile": time.perf_counter() - t}
    linker = f.maker.linker
    fallback = bool(getattr(linker, "falls_back_to_numpy", False))
    name = getattr(linker, "name", type(linker).__name__)
    info["backend"] = f"{name} (NumPy stand-in)" if fallback else name
    info["linker_class"] = f"{type(linker).__module__}.{type(linker).__qualname__}"
    runner = f.maker.runner
    if getattr(runner, "numpy_fallback", None) is not None:  # Numba could not compile this graph
        fallback = True
        info["backend"] = f"{name} -> NumPy fallback"
    info["numba_stand_in"] = fallback
    compile_info = getattr(runner, "compile_info", None)
    if compile_info is not None:  # cache hit or miss and why, ops without a Numba kernel
        info["compile_info"] = {k: v for k, v in vars(compile_info).items() if not k.startswith("_")}
    if f.profile is not None:
        p = f.profile
        info["rewrite"] = p.rewrite_seconds
        # Every scalar field of the profile (the Numba backend may add cache hit/miss fields).
        info["profile"] = {k: v for k, v in vars(p).items() if isinstance(v, int | float | str | bool) or v is None}
    return f, info


def compile_pytensor(inputs: list, outputs: list, mode: str) -> tuple[Any, dict]:
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


def measure(workload_name: str, system: str, phase: str, blocks: int, block_seconds: float, mode: str) -> dict:
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
    background = system == "symlab-background"
    if background:
        import symlab

        symlab.config.background_compile = True

    build = w.build_symlab if module_of(system) == "symlab" else w.build_pytensor
    t = time.perf_counter()
    inputs, outputs = build()
    out["build"] = time.perf_counter() - t
    out["nodes"] = count_nodes(outputs)

    compile_started = time.perf_counter()
    if module_of(system) == "symlab":
        f, info = compile_symlab(inputs, outputs, mode, profile=True)
    else:
        f, info = compile_pytensor(inputs, outputs, mode)
    out.update(info)

    probe = w.probe() if w.probe is not None else data
    t = time.perf_counter()
    f(*probe)
    out["probe_call"] = time.perf_counter() - t
    out["compile_total"] = out["returned"] = out["compile"] + out["probe_call"]
    t = time.perf_counter()
    result = f(*data)
    done = time.perf_counter()
    out["first_call"] = done - t
    out["first_result"] = done - _T0 - data_seconds - reference_seconds
    t = time.perf_counter()
    f(*data)
    out["second_call"] = time.perf_counter() - t

    out["check"] = compare(list(result) if isinstance(result, list | tuple) else [result], expected, w.rtol, w.atol)

    if background:
        f.wait_compiled()
        out["compile_total"] = time.perf_counter() - compile_started  # until the machine code is ready
        out["calls_before_ready"] = f.profile.calls_before_ready
        out["background_seconds"] = f.profile.background_seconds
        out["cache_hit"] = f.profile.cache_hit
        after = f(*data)  # the machine code's result is checked too
        check = compare(list(after) if isinstance(after, list | tuple) else [after], expected, w.rtol, w.atol)
        if not check["ok"]:
            out["check"] = check

    if phase == "warm" and not background:
        if system == "symlab":  # the profiled function times each node: time calls on an unprofiled one
            f, _ = compile_symlab(inputs, outputs, mode, profile=False)
            check = compare(list(f(*data)), expected, w.rtol, w.atol)
            if not check["ok"]:
                out["check"] = check
        reference = w.numpy
        out["steady"] = alternate(lambda: f(*data), lambda: reference(*data), blocks, block_seconds)
    out["numpy_version"] = np.__version__
    return out


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description="one benchmark measurement in a fresh process")
    parser.add_argument("workload")
    parser.add_argument("system", choices=["symlab", "symlab-background", "pytensor"])
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
    print("BENCH_JSON: " + json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
