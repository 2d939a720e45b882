"""Loading a generated module's compiled functions: through the disk cache, compiled by Numba on a miss.

:func:`load_compiled` imports the kernel modules and the graph module of a
:class:`~symlab.compile.numba.graph_source.GeneratedModule` through the disk cache
(:mod:`symlab.compile.numba.cache`) and compiles each function for its argument types
(:func:`numba_signature`): a graph seen before loads its machine code, a changed one compiles what is
new. What happened is a :class:`CompileInfo` (``cache_hit``, ``miss_reason``, seconds, kernels compiled
and loaded), the ``compile_info`` of the runner.

>>> info = CompileInfo(cache_hit=True)
>>> info.cache_hit, info.miss_reason, info.kernels_compiled
(True, None, 0)
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any

import numpy as np

from symlab.compile.numba.graph_source import GeneratedModule

log = logging.getLogger("symlab.cache")


def numba_signature(values: Sequence[Any], types: Sequence[Any]) -> tuple[Any, ...]:
    """Numba argument types: C-contiguous arrays of the given tensor types, ``typeof`` of given values, and
    Numba's ``NumPyRandomGeneratorType`` for a random generator's type (``is_generator_state``): one Numba type
    for every ``numpy.random.Generator``, whatever its bit generator, so the signature (and the disk cache's
    entry) of a graph drawing random numbers does not depend on the generator's state."""
    import numba

    out = []
    for value, t in zip(values, types):
        if value is not None:
            out.append(numba.typeof(value))
        elif getattr(t, "is_generator_state", False):
            out.append(_generator_type())
        else:
            out.append(numba.types.Array(numba.from_dtype(np.dtype(t.dtype)), t.ndim, "C"))
    return tuple(out)


def _generator_type() -> Any:
    """Numba's type of a ``numpy.random.Generator`` argument (what ``numba.typeof`` gives every one)."""
    import numba

    return numba.typeof(_TYPICAL_GENERATOR)


#: A generator whose Numba type is that of every generator (its state is never used).
_TYPICAL_GENERATOR = np.random.default_rng(0)


@dataclass
class CompileInfo:
    """What compiling one graph's module did (``runner.compile_info``)."""

    cache_key: str = ""
    cache_hit: bool | None = None
    miss_reason: str | None = None
    numba_compile_seconds: float = 0.0
    cache_load_seconds: float = 0.0
    module_path: str = ""
    #: The ops whose nodes run their Python ``perform`` for want of a Numba kernel (the linker warned).
    fallback_ops: list[str] = field(default_factory=list)
    #: The ops whose nodes run on NumPy by design (Python steps between compiled segments, not warned about),
    #: each with the reason: a random variable whose draws Numba cannot give bit for bit (see
    #: :mod:`~symlab.compile.numba.kernels_random`).
    numpy_ops: dict[str, str] = field(default_factory=dict)
    #: Nodes run by the register machine (:mod:`symlab.compile.numba.elemwise_vm`).
    vm_nodes: int = 0
    #: Kernels with a parallel loop (``numba.prange``): they run on the function's threads when large enough.
    parallel_kernels: int = 0
    #: Kernels that call BLAS (products): OpenBLAS runs them on the function's threads.
    blas_kernels: int = 0
    #: Kernel modules compiled, and loaded from the cache, while the graph functions were compiled (a kernel
    #: another graph compiled before is loaded: only the graph function and new kernels are compiled).
    kernels_compiled: int = 0
    kernels_loaded: int = 0
    #: Compiled on a worker thread while the NumPy backend ran the calls (``config.background_compile``).
    background: bool = False
    #: Seconds from making the runner to machine code ready to run (None until then).
    ready_seconds: float | None = None
    #: Calls the NumPy backend computed because the machine code was not ready yet (background only).
    calls_before_ready: int = 0
    #: Why Numba could not compile the graph (the exception, with its traceback), or None: the NumPy tier
    #: then serves every call. Kept here so that it is never lost, even if its warning is filtered out.
    error: BaseException | None = None
    #: The lazy plan of the graph's ifelse branches (which regions are guarded, which eager and why), or "".
    lazy_plan: str = ""
    #: Why the whole graph runs on the NumPy backend by design (a value Numba cannot take, such as a
    #: scipy.sparse matrix: see :func:`~symlab.compile.numba.linker.numpy_only_reason`), or None. No machine code is made for it.
    numpy_only: str | None = None


def load_compiled(gen: GeneratedModule, arg_types: dict[str, tuple[Any, ...]]) -> tuple[dict[str, Any], CompileInfo]:
    """Import ``gen``'s module through the cache and compile its functions for ``arg_types``.

    A failure while loading an entry (a corrupted file Numba chokes on) wipes
    the entry's compiled files and compiles again, once.
    """
    from symlab.compile.numba import cache

    info = CompileInfo()
    for attempt in range(2):
        separate = [k for k in gen.kernels if not k.inline]
        kernel_entries = [cache.prepare_entry(k.source, main="kernel") for k in separate]
        # the index of the first compiled function shows the entry was compiled (``graph_fn``, or ``seg0``...
        # when ops without kernels or register-machine steps cut the graph into segments)
        entry = cache.prepare_entry(gen.source, main=next(iter(arg_types)))
        info.cache_key, info.module_path = entry.key, str(entry.module_path)
        reason = entry.miss_reason
        try:
            kernel_functions = [
                cache.import_entry(ke, fresh=attempt > 0, name=k.module_name).kernel
                for k, ke in zip(separate, kernel_entries)
            ]
            kernel_misses = [sum(fn.stats.cache_misses.values()) for fn in kernel_functions]
            kernel_hits = [sum(fn.stats.cache_hits.values()) for fn in kernel_functions]
            module = cache.import_entry(entry, fresh=attempt > 0)
            functions: dict[str, Any] = {}
            hits = misses = 0
            started = perf_counter()
            for name, sig in arg_types.items():
                fn = cache.load_without_refresh(getattr(module, name))
                before_h, before_m = sum(fn.stats.cache_hits.values()), sum(fn.stats.cache_misses.values())
                if sig not in [tuple(s.args) for s in fn.nopython_signatures]:
                    fn.compile(sig)
                hits += sum(fn.stats.cache_hits.values()) - before_h
                misses += sum(fn.stats.cache_misses.values()) - before_m
                functions[name] = fn
            seconds = perf_counter() - started
        except Exception as err:
            if attempt == 0 and (entry.has_index() or any(ke.has_index() for ke in kernel_entries)):
                log.debug("symlab cache: entry %s failed to load (%s: %s); rebuilding", entry.key, type(err).__name__, err)
                entry.wipe_compiled()
                for ke in kernel_entries:
                    ke.wipe_compiled()
                info.miss_reason = f"{cache.CORRUPTED}: Numba failed to load it ({type(err).__name__})"
                continue
            raise
        info.kernels_compiled = sum(
            sum(fn.stats.cache_misses.values()) > m for fn, m in zip(kernel_functions, kernel_misses)
        )
        info.kernels_loaded = sum(
            sum(fn.stats.cache_hits.values()) > h for fn, h in zip(kernel_functions, kernel_hits)
        )
        if misses:
            info.numba_compile_seconds += seconds
            info.cache_hit = False
            info.miss_reason = info.miss_reason or reason or cache.STALE
        else:
            info.cache_load_seconds += seconds
            info.cache_hit = True
            info.miss_reason = None
        log.debug(
            "symlab cache: %s %s (%s) in %.3fs: %s",
            "hit" if info.cache_hit else "miss",
            entry.key,
            info.miss_reason or "machine code loaded",
            seconds,
            entry.module_path,
        )
        return functions, info
    raise AssertionError("unreachable")  # pragma: no cover


__all__ = ["CompileInfo", "load_compiled", "numba_signature"]
