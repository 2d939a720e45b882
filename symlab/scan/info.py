"""``ScanInfo``: how a scan's inputs and outputs are laid out (what each one is in the loop).

A scan node's **outer inputs**, in order:

1. ``n_steps`` (an int64 scalar: how many iterations, the most for a while loop);
2. the **sequences** (``n_seqs``): iteration ``t`` reads entry ``t`` of each (``scan`` makes one
   sequence per tap of a user's sequence, already shifted, so ``x[t+1]`` is entry ``t`` of ``x[1:]``);
3. the initial windows of the **states** (``state_taps``): state ``j`` with taps ``(-2, -1)`` starts
   from an array whose first dimension holds the 2 entries before iteration 0;
4. the initial values of the **untraced states** (``n_untraced``): carried from one iteration to the
   next, only the last value is an output (a shared variable's update, a random generator);
5. the **non-sequences** (``n_non_seqs``): the same value at every iteration.

The **inner inputs** follow the same order, one per sequence, one per tap of each state, one per
untraced state, one per non-sequence. The **inner outputs** are the next value of each state, then each
**mapped** output (``n_mapped``: an output no iteration reads back, PyTensor's *nit-sot*), then the next
value of each untraced state, then, for a while loop (``as_while``), the condition.

The node's **outputs** are, per state, its whole buffer (the initial window followed by one entry per
iteration), per mapped output one entry per iteration, and per untraced state its last value.
``kept[k]`` (one per state, then one per mapped output), when not ``None``, keeps only the last
``kept[k]`` entries of that buffer: a rewrite sets it when callers read no more (a loop whose result is
its last state keeps one entry instead of ``n_steps``).

>>> info = ScanInfo(n_seqs=1, state_taps=((-1,),), n_mapped=0, n_untraced=0, n_non_seqs=1)
>>> info.n_inner_inputs, info.n_outer_inputs, info.n_outputs
(3, 4, 1)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(frozen=True)
class ScanInfo:
    """The layout of a scan's inputs and outputs (see the module's docstring)."""

    n_seqs: int
    state_taps: tuple[tuple[int, ...], ...]
    n_mapped: int
    n_untraced: int
    n_non_seqs: int
    as_while: bool = False
    #: Backpropagation through time goes back this many iterations (-1: all of them).
    truncate_gradient: int = -1
    #: Per state, then per mapped output: how many trailing entries of its buffer the output keeps (None: all).
    kept: tuple[int | None, ...] = field(default=())

    def __post_init__(self) -> None:
        for name in ("n_seqs", "n_mapped", "n_untraced", "n_non_seqs"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"ScanInfo: {name} must be an int >= 0, received {value!r}")
        for j, taps in enumerate(self.state_taps):
            if not taps or any(not isinstance(t, int) or t >= 0 for t in taps) or list(taps) != sorted(set(taps)):
                raise ValueError(f"ScanInfo: the taps of state {j} must be distinct negative ints in increasing "
                                 f"order, received {taps!r}")
        if not isinstance(self.truncate_gradient, int):
            raise ValueError(f"ScanInfo: truncate_gradient must be an int, received {self.truncate_gradient!r}")
        if not self.kept:
            object.__setattr__(self, "kept", (None,) * (self.n_states + self.n_mapped))
        if len(self.kept) != self.n_states + self.n_mapped:
            raise ValueError(f"ScanInfo: kept needs one entry per state and mapped output "
                             f"({self.n_states + self.n_mapped}), received {self.kept!r}")
        for j, k in enumerate(self.kept):
            low = self.window(j) if j < self.n_states else 1
            if k is not None and (not isinstance(k, int) or k < low):
                raise ValueError(f"ScanInfo: kept[{j}] must be None or an int >= {low}, received {k!r}")

    # -- counts --------------------------------------------------------------------------------
    @property
    def n_states(self) -> int:
        """How many traced states (PyTensor's mit-sot and sit-sot)."""
        return len(self.state_taps)

    def window(self, state: int) -> int:
        """How many entries before iteration 0 state ``state`` reads (its initial window's length)."""
        return -self.state_taps[state][0]

    @property
    def n_state_taps(self) -> int:
        return sum(len(taps) for taps in self.state_taps)

    @property
    def n_inner_inputs(self) -> int:
        return self.n_seqs + self.n_state_taps + self.n_untraced + self.n_non_seqs

    @property
    def n_inner_outputs(self) -> int:
        return self.n_states + self.n_mapped + self.n_untraced + int(self.as_while)

    @property
    def n_outer_inputs(self) -> int:
        return 1 + self.n_seqs + self.n_states + self.n_untraced + self.n_non_seqs

    @property
    def n_outputs(self) -> int:
        return self.n_states + self.n_mapped + self.n_untraced

    # -- where each group starts -----------------------------------------------------------------
    def outer_slices(self) -> dict[str, slice]:
        """The positions of each group among a node's inputs (``n_steps`` is input 0)."""
        s = 1
        out = {}
        for name, n in (("seqs", self.n_seqs), ("states", self.n_states), ("untraced", self.n_untraced),
                        ("non_seqs", self.n_non_seqs)):
            out[name] = slice(s, s + n)
            s += n
        return out

    def inner_slices(self) -> dict[str, slice]:
        """The positions of each group among the inner inputs (``states``: every tap of every state)."""
        s = 0
        out = {}
        for name, n in (("seqs", self.n_seqs), ("states", self.n_state_taps), ("untraced", self.n_untraced),
                        ("non_seqs", self.n_non_seqs)):
            out[name] = slice(s, s + n)
            s += n
        return out

    def output_slices(self) -> dict[str, slice]:
        """The positions of each group among a node's outputs (and the inner outputs; the condition is last)."""
        a, b = self.n_states, self.n_states + self.n_mapped
        return {"states": slice(0, a), "mapped": slice(a, b), "untraced": slice(b, b + self.n_untraced)}

    def replace(self, **changes: Any) -> ScanInfo:
        """A copy with ``changes`` (``dataclasses.replace``)."""
        return replace(self, **changes)


__all__ = ["ScanInfo"]
