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

One ``ProfileStats`` given to several functions (``profile=p``) combines
their profiles, as in PyTensor: each function's calls and node times are kept
under its own nodes (:attr:`ProfileStats.functions` holds one profile per
function), and ``p`` holds their sums, per-op totals over all of them, and a
summary that lists every function:

>>> both = symlab.compile.ProfileStats()
>>> g = symlab.function([x], 2 * x, mode="NUMPY", profile=both, name="double")
>>> h = symlab.function([x], x**2, mode="NUMPY", profile=both, name="square")
>>> _ = g([1.0]); _ = h([1.0]); _ = h([2.0])
>>> [(q.name, q.calls) for q in both.functions], both.calls
([('double', 1), ('square', 2)], 3)
>>> sorted((op, calls) for op, (calls, _) in both.by_op().items())
[('Elemwise{mul,no_inplace}', 1), ('Elemwise{sqr,no_inplace}', 2)]
>>> print(both.summary())  # doctest: +ELLIPSIS
Profile of 2 functions: double, square (combined)
    <function>  <calls>  <call seconds>  <compile seconds>  mode
    double            1 ...
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
    """Calls and total seconds of one node (``index`` is its toposort position in function ``function``)."""

    index: int
    node: Apply
    calls: int = 0
    seconds: float = 0.0
    #: The name of the function the node belongs to (its profile's name).
    function: str = ""
    #: Calls that did not run this node: it is in a branch of an ``ifelse`` the condition did not take.
    skipped: int = 0


@dataclass
class _Links:
    """A profile's place among combined profiles (one object, so that ``vars(profile)`` holds only numbers)."""

    #: The profiles of the functions given this one (empty until a function is compiled with it).
    parts: list[ProfileStats] = field(default_factory=list)
    #: A function's own profile: the combined profile it adds its numbers to (None on a combined one).
    combined: ProfileStats | None = None
    #: The name this profile had before any function was given it.
    label: str | None = None


@dataclass
class ProfileStats:
    """Compile and call times of one compiled function, or of several combined (see the module's docstring).

    A function compiled with ``profile=p`` records into a profile of its own (one of :attr:`functions`);
    ``p`` adds up the profiles of all the functions given it. Given to one function, ``p``'s numbers are
    that function's.
    """

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
    #: Calls by the number of threads their parallel work ran on (functions with parallel work only).
    thread_calls: dict[int, int] = field(default_factory=dict)
    #: Numba backend: the ops whose nodes run on NumPy by design, between the compiled segments, and why (a
    #: random variable whose draws Numba cannot give bit for bit; ``compile_info.numpy_ops``).
    numpy_ops: dict[str, str] = field(default_factory=dict)
    # -- calls -----------------------------------------------------------------
    calls: int = 0
    call_seconds: float = 0.0
    input_seconds: float = 0.0
    update_seconds: float = 0.0
    nodes: list[NodeStats] = field(default_factory=list)
    #: How this profile combines with others (see :class:`_Links`).
    _links: _Links = field(default_factory=_Links, init=False, repr=False, compare=False)

    def set_nodes(self, nodes: list[Apply]) -> None:
        self.nodes = [NodeStats(k, n, function=self.name) for k, n in enumerate(nodes)]

    @property
    def functions(self) -> list[ProfileStats]:
        """One profile per function compiled with this one, in compile order (``[self]`` on a function's own)."""
        if self._links.combined is not None:
            return [self]
        return list(self._links.parts)

    def add_function(self, name: str | None, mode: str, linker: str) -> ProfileStats:
        """A new, empty profile for a function being compiled with this one; its numbers add up here.

        The compiler fills the new profile's compile times and nodes, then calls :meth:`function_ready`.
        """
        if self._links.combined is not None:
            raise ValueError(
                f"profile: the ProfileStats of function {self.name!r} (one of a combined profile's functions) "
                "cannot be given to another function; give it the combined ProfileStats instead"
            )
        if self._links.label is None:
            self._links.label = self.name
        own = ProfileStats(name=name or self._links.label, mode=mode, linker=linker)
        own._links.combined = self
        return own

    def function_ready(self, own: ProfileStats) -> None:
        """Add ``own`` (from :meth:`add_function`, now compiled) to the functions combined here."""
        if own._links.combined is not self:
            raise ValueError(f"profile: {own.name!r} was not made by this ProfileStats' add_function")
        with _COUNTING:
            self._links.parts.append(own)
            self.nodes = [s for part in self._links.parts for s in part.nodes]
            self._combine_compile()

    def _combine_compile(self) -> None:
        """Set the combined compile numbers from the functions' (their calls are added as they happen)."""
        parts = self._links.parts
        if len(parts) == 1:
            self.name, self.mode, self.linker = parts[0].name, parts[0].mode, parts[0].linker
        else:
            names = ", ".join(p.name for p in parts)
            self.name = self._links.label if self._links.label not in (None, "<function>") else names
            self.mode = ", ".join(dict.fromkeys(p.mode for p in parts))
            self.linker = ", ".join(dict.fromkeys(p.linker for p in parts))
        for attribute in (
            "compile_seconds", "graph_seconds", "rewrite_seconds", "codegen_seconds", "numba_compile_seconds",
            "cache_load_seconds",
        ):
            setattr(self, attribute, sum(getattr(p, attribute) for p in parts))
        known = [p for p in parts if p.cache_hit is not None]
        self.cache_hit = all(p.cache_hit for p in known) if known else None
        if len(parts) == 1:
            self.cache_miss_reason = parts[0].cache_miss_reason
        else:
            misses = [f"{p.name}: {p.cache_miss_reason}" for p in known if not p.cache_hit]
            self.cache_miss_reason = "; ".join(misses) if misses else None
        background = [p.background_seconds for p in parts if p.background_seconds is not None]
        self.background_seconds = sum(background) if background else None
        self.calls_before_ready = sum(p.calls_before_ready for p in parts)
        self.numpy_ops = {op: why for p in parts for op, why in p.numpy_ops.items()}

    def count_tier(self, tier: str) -> None:
        """Count one call served by ``tier`` (exactly, whatever threads call)."""
        with _COUNTING:
            self.tier_calls[tier] = self.tier_calls.get(tier, 0) + 1
            if self._links.combined is not None:
                tiers = self._links.combined.tier_calls
                tiers[tier] = tiers.get(tier, 0) + 1

    def count_threads(self, threads: int) -> None:
        """Count one call whose parallel work ran on ``threads`` threads."""
        with _COUNTING:
            for stats in (self, self._links.combined) if self._links.combined is not None else (self,):
                stats.thread_calls[threads] = stats.thread_calls.get(threads, 0) + 1

    def record_call(self, input_seconds: float, update_seconds: float, call_seconds: float) -> None:
        """Count one call and its times (a function's own profile adds them to the combined one too)."""
        with _COUNTING:
            for stats in (self, self._links.combined) if self._links.combined is not None else (self,):
                stats.calls += 1
                stats.input_seconds += input_seconds
                stats.update_seconds += update_seconds
                stats.call_seconds += call_seconds

    def record_background_compile(self, info: Any) -> None:
        """Take the numbers of a compile that ran on a worker thread (a ``CompileInfo``), once it is over."""
        self.background_seconds = info.ready_seconds
        self.calls_before_ready = info.calls_before_ready
        self.cache_hit = info.cache_hit
        self.cache_miss_reason = info.miss_reason
        if self._links.combined is not None:
            with _COUNTING:
                self._links.combined._combine_compile()

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

    @property
    def skipped_runs(self) -> int:
        """Node runs the calls did not do: nodes of ``ifelse`` branches not taken (see :class:`NodeStats`)."""
        return sum(s.skipped for s in self.nodes)

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
        """The profile as text: compile parts, call parts, then the slowest nodes.

        A profile combining several functions first lists them (calls, call and compile times), and adds
        the time of each op summed over all their nodes.
        """
        functions = self._links.parts
        combined = len(functions) > 1
        if combined:
            lines = [f"Profile of {len(functions)} functions: {', '.join(p.name for p in functions)} (combined)"]
            width = max(len("<function>"), *(len(p.name) for p in functions))
            lines.append(f"    {'<function>':<{width}}  <calls>  <call seconds>  <compile seconds>  mode")
            for p in functions:
                lines.append(
                    f"    {p.name:<{width}}  {p.calls:>7}  {p.call_seconds:>14.6f}  {p.compile_seconds:>17.6f}  "
                    f"{p.mode} (linker {p.linker})"
                )
        else:
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
        if self.thread_calls:
            lines.append(
                "    by threads: "
                + ", ".join(f"{n} thread{'s' * (n != 1)} {calls}" for n, calls in sorted(self.thread_calls.items()))
            )
        if self.numpy_ops:
            lines.append("    on NumPy by design (Python steps between the compiled segments):")
            lines.extend(f"      {op}: {why}" for op, why in self.numpy_ops.items())
        lines.extend(_parts(self.call_parts(), self.call_seconds))
        total = self.call_seconds or 1.0
        if combined and self.nodes:
            lines.append("  ops, all functions (slowest first):")
            lines.append("    <% calls>  <seconds>  <calls>  op")
            for op, (calls, seconds) in self.by_op().items():
                lines.append(f"    {100 * seconds / total:>8.1f}%  {seconds:>9.6f}  {calls:>7}  {op}")
        lazy = [s for s in self.nodes if s.skipped]
        if lazy:
            runs = sum(s.skipped for s in lazy)
            lines.append(
                f"  lazy ifelse: {len(lazy)} node{'s' if len(lazy) != 1 else ''} skipped in some calls "
                f"({runs} node run{'s' if runs != 1 else ''} not done: branches not taken)"
            )
        if self.nodes:
            lines.append("  nodes (slowest first):")
            lines.append("    <% calls>  <seconds>  <calls>  <index>  node" + ("  (function)" if combined else ""))
            ranked = sorted(self.nodes, key=lambda s: -s.seconds)[:n_nodes]
            for s in ranked:
                where = f"  ({s.function})" if combined else ""
                skipped = f"  [skipped {s.skipped}]" if s.skipped else ""
                lines.append(
                    f"    {100 * s.seconds / total:>8.1f}%  {s.seconds:>9.6f}  {s.calls:>7}  {s.index:>7}  {s.node}"
                    f"{where}{skipped}"
                )
            if len(self.nodes) > n_nodes:
                lines.append(f"    ... {len(self.nodes) - n_nodes} more nodes")
            hidden = [s for s in lazy if s not in ranked]
            if hidden:
                lines.append("  skipped nodes not listed above (<calls>  <skipped>  <index>  node):")
                for s in hidden:
                    lines.append(f"    {s.calls:>7}  {s.skipped:>9}  {s.index:>7}  {s.node}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.summary())


def _parts(parts: dict[str, float], total: float) -> list[str]:
    total = total or 1.0
    return [f"    {name:<18} {seconds:.6f}s ({100 * seconds / total:5.1f}%)" for name, seconds in parts.items()]


__all__ = ["NodeStats", "ProfileStats"]
