"""Profiling of compiled functions (``symlab.function(..., profile=True)``).

Compile time is split into building the graph (cloning, givens, the
FunctionGraph), rewriting, code generation (making the runner), Numba
compilation and cache loading (zero with the NumPy backend: the fields exist
for the Numba backend) and the rest; call time into filtering the inputs,
running each node, committing the updates and the rest. Each ``*_seconds``
part is measured, ``other`` is what remains, so the parts add up to the
measured total:

>>> import symlab
>>> import symlab.tensor as st
>>> x = st.dvector("x")
>>> f = symlab.function([x], st.exp(x).sum(), mode="NUMPY", profile=True)
>>> _ = f([1.0, 2.0]); _ = f([3.0])
>>> p = f.profile
>>> p.calls, [s.calls for s in p.nodes]
(2, [2, 2])
>>> abs(sum(p.compile_parts().values()) - p.compile_seconds) < 1e-9
True
>>> abs(sum(p.call_parts().values()) - p.call_seconds) < 1e-9
True
>>> print(p.summary())  # doctest: +ELLIPSIS
Function profile: ...
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from symlab.graph.basic import Apply

#: Orders the counting of calls by tier between threads.
_COUNTING = threading.Lock()


@dataclass
class NodeStats:
    """Calls and total seconds of one node (``index`` is its toposort position)."""

    index: int
    node: Apply
    calls: int = 0
    seconds: float = 0.0


@dataclass
class ProfileStats:
    """Compile and call times of one compiled function (see the module's docstring)."""

    name: str = "<function>"
    mode: str = ""
    linker: str = ""
    # -- compile -------------------------------------------------------------
    compile_seconds: float = 0.0
    graph_seconds: float = 0.0
    rewrite_seconds: float = 0.0
    codegen_seconds: float = 0.0
    numba_compile_seconds: float = 0.0
    cache_load_seconds: float = 0.0
    #: Numba backend: True if the machine code came from the disk cache, False if compiled, None otherwise.
    cache_hit: bool | None = None
    #: Numba backend: why the disk cache could not give the machine code (None on a hit).
    cache_miss_reason: str | None = None
    #: Background compilation (``config.background_compile``): seconds from making the runner until the
    #: machine code was ready, on a worker thread (not part of :attr:`compile_seconds`); None otherwise.
    background_seconds: float | None = None
    #: Background compilation: calls the NumPy backend ran before the machine code was ready.
    calls_before_ready: int = 0
    #: Calls by the tier that served them (``"numpy"``, ``"machine code"``...; the Numba backend only).
    tier_calls: dict[str, int] = field(default_factory=dict)
    # -- calls -----------------------------------------------------------------
    calls: int = 0
    call_seconds: float = 0.0
    input_seconds: float = 0.0
    update_seconds: float = 0.0
    nodes: list[NodeStats] = field(default_factory=list)

    def set_nodes(self, nodes: list[Apply]) -> None:
        self.nodes = [NodeStats(k, n) for k, n in enumerate(nodes)]

    def count_tier(self, tier: str) -> None:
        """Count one call served by ``tier`` (exactly, whatever threads call)."""
        with _COUNTING:
            self.tier_calls[tier] = self.tier_calls.get(tier, 0) + 1

    def record_background_compile(self, info: Any) -> None:
        """Take the numbers of a compile that ran on a worker thread (a ``CompileInfo``), once it is over."""
        self.background_seconds = info.ready_seconds
        self.calls_before_ready = info.calls_before_ready
        self.cache_hit = info.cache_hit
        self.cache_miss_reason = info.miss_reason

    # -- parts -------------------------------------------------------------------
    def compile_parts(self) -> dict[str, float]:
        """Compile time by part; the values add up to :attr:`compile_seconds`."""
        parts = {
            "graph": self.graph_seconds,
            "rewriting": self.rewrite_seconds,
            "code generation": self.codegen_seconds,
            "numba compilation": self.numba_compile_seconds,
            "cache loading": self.cache_load_seconds,
        }
        parts["other"] = self.compile_seconds - sum(parts.values())
        return parts

    @property
    def node_seconds(self) -> float:
        """Total time spent inside the nodes' computations, all calls."""
        return sum(s.seconds for s in self.nodes)

    def call_parts(self) -> dict[str, float]:
        """Call time by part; the values add up to :attr:`call_seconds`."""
        parts = {"inputs": self.input_seconds, "nodes": self.node_seconds, "updates": self.update_seconds}
        parts["other"] = self.call_seconds - sum(parts.values())
        return parts

    def by_op(self) -> dict[str, tuple[int, float]]:
        """``{op: (calls, seconds)}`` summed over the nodes of each op, slowest first."""
        out: dict[str, list[float]] = {}
        for s in self.nodes:
            acc = out.setdefault(str(s.node.op), [0, 0.0])
            acc[0] += s.calls
            acc[1] += s.seconds
        return {k: (int(v[0]), v[1]) for k, v in sorted(out.items(), key=lambda kv: -kv[1][1])}

    # -- text ----------------------------------------------------------------------
    def summary(self, n_nodes: int = 20) -> str:
        """The profile as text: compile parts, call parts, then the slowest nodes."""
        lines = [f"Function profile: {self.name} (mode {self.mode}, linker {self.linker})"]
        lines.append(f"  compile time {self.compile_seconds:.6f}s")
        lines.extend(_parts(self.compile_parts(), self.compile_seconds))
        if self.background_seconds is not None:
            ran = f"{self.calls_before_ready} call{'s' if self.calls_before_ready != 1 else ''}"
            lines.append(
                f"    compiled in the background: machine code ready after {self.background_seconds:.6f}s "
                f"({ran} ran on the NumPy backend before)"
            )
        if self.cache_hit is not None:
            lines.append("    disk cache: hit" if self.cache_hit else f"    disk cache: miss ({self.cache_miss_reason})")
        lines.append(f"  {self.calls} call{'s' if self.calls != 1 else ''}, {self.call_seconds:.6f}s in total")
        if self.tier_calls:
            lines.append("    by tier: " + ", ".join(f"{tier} {n}" for tier, n in self.tier_calls.items()))
        lines.extend(_parts(self.call_parts(), self.call_seconds))
        if self.nodes:
            lines.append("  nodes (slowest first):")
            lines.append("    <% calls>  <seconds>  <calls>  <index>  node")
            total = self.call_seconds or 1.0
            ranked = sorted(self.nodes, key=lambda s: -s.seconds)[:n_nodes]
            for s in ranked:
                lines.append(
                    f"    {100 * s.seconds / total:>8.1f}%  {s.seconds:>9.6f}  {s.calls:>7}  {s.index:>7}  {s.node}"
                )
            if len(self.nodes) > n_nodes:
                lines.append(f"    ... {len(self.nodes) - n_nodes} more nodes")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.summary())


def _parts(parts: dict[str, float], total: float) -> list[str]:
    total = total or 1.0
    return [f"    {name:<18} {seconds:.6f}s ({100 * seconds / total:5.1f}%)" for name, seconds in parts.items()]


__all__ = ["NodeStats", "ProfileStats"]
