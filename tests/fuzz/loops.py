"""Loops for the generator: subexpressions made the bodies of ``symlab.scan`` loops, as code templates.

A body is a subexpression of an expression (the whole expression, mostly), written as a lambda over its
input leaves as ``inner.package`` writes an ``OpFromGraph``'s. Each leaf plays a part in the loop:

* the **state**: a leaf of the body's own type (dtype and static shape) is read back as ``h[t-1]``, the
  body's value being its next value; its initial value is the leaf's argument;
* a **sequence**: the loop iterates over ``st.stack([arg, other, arg])`` (``other`` an expression of the
  same type, or the argument again), the body reading entry ``t``; sometimes from the end (``go_backwards``);
* a **non-sequence**: the same value at every iteration.

Without a sequence the loop runs a drawn ``n_steps`` (1 to 3 iterations; 0 too for a state). The expression is every
iteration's value (the state's, or the body's when there is no state), or the last one (``[-1]``, with at
least one iteration). The values of a loop are the body's applied step by step, so every mode must give
those of the unoptimized graph (the NumPy loop of ``Scan.perform``). The templates are plain code over
``st`` and :func:`looped`, so a failure's reproduction pastes as it is (``from fuzz.loops import looped``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from symlab.scan import scan

from .inner import _body_code, _leaves, _same_type
from .ops import _recent

#: How often an expression of the ``loops`` flavour becomes a loop (the others are compared as they are).
LOOP_RATE = 0.8

#: The most operations a body has (the whole expression when it is that small).
MAX_BODY_OPS = 8


def looped(body: Callable[..., Any], sequences: Sequence[Any] = (), state: Any = None,
           non_sequences: Sequence[Any] = (), n_steps: int | None = None, backwards: bool = False,
           last: bool = False) -> Any:
    """``symlab.scan(body, ...)``: ``body`` gets the sequences' entries, the state (if any), the non-sequences.

    Returns every iteration's value (the state's, or the body's without a state), or the last with ``last``.
    """
    outputs, updates = scan(body, sequences=list(sequences), outputs_info=None if state is None else [state],
                            non_sequences=list(non_sequences), n_steps=n_steps, go_backwards=backwards)
    if updates:  # pragma: no cover - the generator's bodies hold no shared variable
        raise AssertionError(f"looped: a body of the generator returned updates {dict(updates)}")
    return outputs[-1] if last else outputs


def loop_over(rng: np.random.Generator, root: Any, pool: Sequence[Any]) -> tuple[list[Any], str] | None:
    """A loop whose body is a subexpression of ``root``: ``(args, template)`` for the generator, or None."""
    small = [n for n in root.nodes() if n.op != "input" and n.size() <= MAX_BODY_OPS]
    if not small:
        return None
    body = root if root in small and rng.random() < 0.7 else small[int(rng.integers(len(small)))]
    leaves = _leaves(body)
    state_choices = [leaf for leaf in leaves if _same_type(leaf, body)]
    state = state_choices[int(rng.integers(len(state_choices)))] if state_choices and rng.random() < 0.7 else None
    others = [leaf for leaf in leaves if leaf is not state]
    seqs = [leaf for leaf in others if rng.random() < 0.5]
    non_seqs = [leaf for leaf in others if all(leaf is not s for s in seqs)]
    params = {id(leaf): f"_q{k}" for k, leaf in enumerate([*seqs, *([state] if state is not None else []), *non_seqs])}
    code = _body_code(body, params)
    if code is None:
        return None
    names = ", ".join(params[id(leaf)] for leaf in [*seqs, *([state] if state is not None else []), *non_seqs])
    lam = f"lambda {names}: " + code.replace("{", "{{").replace("}", "}}")
    args: list[Any] = []
    parts = []
    if seqs:
        stacked = []
        for leaf in seqs:
            other = _recent(rng, pool, lambda e, leaf=leaf: _same_type(e, leaf) and e is not leaf) or leaf
            k = len(args)
            args.extend([leaf, other])
            stacked.append(f"st.stack([{{{k}}}, {{{k + 1}}}, {{{k}}}])")
        parts.append(f"sequences=[{', '.join(stacked)}]")
    if state is not None:
        parts.append(f"state={{{len(args)}}}")
        args.append(state)
    if non_seqs:
        parts.append(f"non_sequences=[{', '.join(f'{{{len(args) + k}}}' for k in range(len(non_seqs)))}]")
        args.extend(non_seqs)
    last = rng.random() < 0.4
    if not seqs:
        # a loop of no iteration has no last value (an IndexError); its whole output is empty
        parts.append(f"n_steps={int(rng.integers(1 if last else 0, 4))}")
    elif rng.random() < 0.3:
        parts.append("backwards=True")
    if last:
        parts.append("last=True")
    return args, f"looped({lam}, {', '.join(parts)})"
