"""What the stepper says about a step: its rule card, its row in the list of steps, the line that leaves its rule out.

The card of step ``k`` names the rule (the name ``include``/``exclude`` accept), its phase, whether it was
applied or refused and why, where the rule is written, how long it took, what it replaced, and the line
that would exclude it, in the terms the trace was made in (a compile mode, or ``rewrite_graph``). Step 0's
card counts what each rule did.

>>> import symlab.tensor as st
>>> from symlab.rewriting import rewrite_graph
>>> a = st.dvector("a")
>>> _, trace = rewrite_graph([a + a ** 10], record_attempts=True)
>>> card = step_card(trace, 2)
>>> card["rule"], card["status"], card["location"].split(":")[0]
('elemwise_fusion', 'applied', 'symlab/rewriting/fusion.py')
>>> print(card["exclude"])
rewrite_graph(outputs, exclude=("elemwise_fusion",))
>>> step_row(trace.step(3))
[3, 'inplace', 'inplace_elemwise', False, False]
"""

from __future__ import annotations

import json
from typing import Any

from symlab.notebook.rule_source import shown_location
from symlab.rewriting.trace import RewriteStep, RewriteTrace

__all__ = ["exclude_line", "step_card", "step_row"]


def exclude_line(trace: RewriteTrace, rule: str) -> str:
    """The line that leaves ``rule`` out, in the terms the trace was made in (a compile mode, or ``rewrite_graph``).

    >>> import symlab, symlab.tensor as st
    >>> a = st.dvector("a")
    >>> print(exclude_line(symlab.function([a], a * 2.0, mode="NUMPY").trace, "mul_one"))
    symlab.function(inputs, outputs, mode=symlab.get_mode("NUMPY").excluding("mul_one"))
    """
    quoted = json.dumps(rule)
    mode = trace.mode
    if mode is not None:
        from symlab.compile.modes import PREDEFINED, get_mode

        name = getattr(mode, "name", None)
        if name is not None and name in PREDEFINED and get_mode(name) is mode:
            chosen = "symlab.get_mode()" if get_mode() is mode else f"symlab.get_mode({json.dumps(name)})"
        else:  # a mode of one's own: the same linker and rules
            chosen = (f"symlab.compile.mode.Mode(linker={json.dumps(mode.linker)}, include={_words(mode.include)}, "
                      f"exclude={_words(mode.exclude)})")
        return f"symlab.function(inputs, outputs, mode={chosen}.excluding({quoted}))"
    recipe = trace.recipe
    excluded = (*recipe.exclude, rule) if recipe is not None else (rule,)
    include = ""
    if recipe is not None and tuple(recipe.include) != ("fast_run",):
        include = f"include={_words(recipe.include)}, "
    return f"rewrite_graph(outputs, {include}exclude={_words(excluded)})"


def _words(words: Any) -> str:
    """A tuple of strings as Python source, double-quoted: ``("a",)``, ``("a", "b")``."""
    items = [json.dumps(w) for w in words]
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"  # () when there are none


def step_card(trace: RewriteTrace, k: int) -> dict[str, Any]:
    """The rule card of step ``k`` of ``trace`` (step 0: the counts of every rule that applied or was refused)."""
    step = trace.step(k) if k else None
    if step is None:
        summary = trace.summary()
        return {"step": 0, "title": "step 0: the unoptimized graph",
                "counts": [[s.rule, s.applied, s.refused, f"{s.seconds * 1e3:.2f} ms"] for s in summary
                           if s.applied or s.refused]}
    return {
        "step": step.index,
        "title": f"step {step.index} of {len(trace)}",
        "rule": step.rule,
        "phase": step.phase,
        "status": "applied" if step.accepted else "refused",
        "reason": step.reason,
        "location": shown_location(step.location),
        "seconds": f"{step.seconds * 1e3:.3f} ms",
        "node": str(step.node) if step.node is not None else "",
        "replacements": [f"{old} -> {new}" for old, new in step.replacements],
        "removed": len(step.removed),
        "created": len(step.created),
        "exclude": exclude_line(trace, step.rule),
    }


def step_row(step: RewriteStep) -> list[Any]:
    """A row of the step list: index, phase, rule, accepted, and whether it moved no node (nothing came or went)."""
    quiet = step.accepted and not step.removed and not step.created
    return [step.index, step.phase, step.rule, step.accepted, quiet]
