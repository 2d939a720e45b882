"""Which compiled functions alive update a shared variable, and which only read it: for a generator, which advance it.

A shared generator gives new numbers only to a function that *updates* it (an explicit ``updates`` entry, or its
``default_update``, which a ``RandomStream`` sets): after each call the function stores the next generator back
into it. A function that reads it without updating it draws from the same state at every call: the same numbers,
each call. :func:`shared_use` answers, for a shared variable, with every function alive of either kind; the graph
view's and the clients inspector's panels show it for a selected shared variable (:func:`shared_use_rows`).

It only reads: the functions (held weakly by :func:`symlab.compile.function.live_functions`), their updates and
the generator's state; nothing is called, copied or advanced. A function is matched by the storage it shares with
the variable (its ``container``), so a function's own graph input (a clone) finds the same functions.

>>> import numpy as np, symlab
>>> from symlab.tensor.random.basic import normal
>>> rng = symlab.shared(np.random.default_rng(0), name="rng")
>>> next_rng, x = normal(0, 1, rng=rng, return_next_rng=True)
>>> same = symlab.function([], x, name="same", mode="NUMPY")
>>> fresh = symlab.function([], x, updates={rng: next_rng}, name="fresh", mode="NUMPY")
>>> use = shared_use(rng)
>>> [(function_text(f), how) for f, how in use.updated_by], [function_text(f) for f in use.read_by]
([("function 'fresh'", 'explicit update')], ["function 'same'"])
>>> print(use)
rng (a random generator): advanced by function 'fresh' (explicit update); read without advancing by function 'same' \
(draws the same numbers each call)
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from symlab.graph.basic import Variable
from symlab.notebook.details import Row
from symlab.notebook.value_text import generator_text
from symlab.printing.drawing import is_generator

__all__ = ["SharedUse", "function_text", "generator_text", "shared_use", "shared_use_rows", "state_legend"]

#: The words for a function that reads a generator without updating it.
SAME_NUMBERS = "draws the same numbers each call"


def _live_functions() -> list[Any]:
    """The compiled functions alive; none when the compiler was never imported (then none was ever made)."""
    module = sys.modules.get("symlab.compile.function")
    return module.live_functions() if module is not None else []


def function_text(function: Any) -> str:
    """A function in words: ``function 'train'``, or for an unnamed one its inputs and outputs.

    >>> import symlab, symlab.tensor as st
    >>> x = st.dscalar("x")
    >>> function_text(symlab.function([x], [x * 2, x + 1], mode="NUMPY"))
    'unnamed function of (x) -> 2 outputs'
    """
    if function.name is not None:
        return f"function {function.name!r}"
    names = ", ".join(str(i.name or i.variable) for i in function.maker.inputs)
    n = len(function.maker.outputs)
    return f"unnamed function of ({names}) -> {n} output{'s' * (n != 1)}"


@dataclass(frozen=True)
class SharedUse:
    """The compiled functions alive that use a shared variable: ``updated_by`` as ``(function, how)``, ``how``
    ``"default update"`` or ``"explicit update"``, and ``read_by``, those that read it without updating it;
    oldest first. ``generator`` says whether the variable holds a random generator (updating it advances it)."""

    variable: Variable
    generator: bool
    updated_by: tuple[tuple[Any, str], ...]
    read_by: tuple[Any, ...]

    def __str__(self) -> str:
        what = f"{self.variable} (a random generator)" if self.generator else str(self.variable)
        verb = "advanced by" if self.generator else "updated by"
        parts = [f"{verb} " + (", ".join(f"{function_text(f)} ({how})" for f, how in self.updated_by)
                               or "no function alive")]
        reads = [function_text(f) + (f" ({SAME_NUMBERS})" if self.generator else "") for f in self.read_by]
        parts.append(("read without advancing by " if self.generator else "read, not updated, by ")
                     + (", ".join(reads) or "no function alive"))
        return f"{what}: {'; '.join(parts)}"


def shared_use(var: Variable) -> SharedUse:
    """Which compiled functions alive update ``var`` (a shared variable, or a function graph's input for one), and
    which only read it. ``TypeError`` for a variable that holds no shared storage."""
    container = getattr(var, "container", None)
    if not isinstance(var, Variable) or container is None:
        raise TypeError(f"shared_use: expected a shared variable (symlab.shared(...)), received {type(var).__name__} "
                        f"{var!s:.60}")
    updated: list[tuple[Any, str]] = []
    read: list[Any] = []
    for function in _live_functions():
        maker = function.maker
        how = None
        for (target_container, _type), (shared, expression) in zip(maker.update_targets, maker.updates):
            if target_container is container:
                default = getattr(shared, "default_update", None)
                how = "default update" if expression is default else "explicit update"
                break
        if how is not None:
            updated.append((function, how))
        elif any(getattr(i, "container", None) is container for i in maker.fgraph.inputs):
            read.append(function)
    return SharedUse(var, is_generator(var), tuple(updated), tuple(read))


def shared_use_rows(var: Any) -> list[Row]:
    """The panel's rows for a selected shared variable: its state (a generator), who advances or updates it, who
    only reads it. Empty for anything else."""
    if not isinstance(var, Variable) or getattr(var, "container", None) is None or var.owner is not None:
        return []
    use = shared_use(var)
    rows = []
    if use.generator:
        rows.append(Row("state", generator_text(var.container.value)))
    verb = "advanced by" if use.generator else "updated by"
    rows.append(Row(f"{verb} (functions alive)", None, [(f"{function_text(f)} ({how})", None)
                                                        for f, how in use.updated_by], empty="none"))
    label = "read without advancing by" if use.generator else "read, not updated, by"
    tail = f" ({SAME_NUMBERS})" if use.generator else ""
    rows.append(Row(label, None, [(function_text(f) + tail, None) for f in use.read_by], empty="none"))
    return rows


def state_legend(model: Any) -> str:
    """What a view's legend adds for a picture that draws random generators or update arrows (``""``: neither)."""
    if model is None:
        return ""
    parts = []
    if any(node.kind == "generator" for node in model.nodes.values()):
        parts.append("gold cylinder: a random generator's state")
    if any(edge.kind == "update" for edge in model.edges):
        parts.append("dashed gold arrow: an update (the value stored into the shared variable after each call)")
    return "".join(f" · {part}" for part in parts)
