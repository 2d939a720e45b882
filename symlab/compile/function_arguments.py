"""Reading ``symlab.function``'s arguments: inputs, outputs, updates and givens, each checked.

Every argument a user passes is checked here, before a graph is built, and a wrong one raises an error
that names the function (``where``), the argument's position and what was expected:
:func:`read_inputs`, :func:`read_outputs`, :func:`read_updates`, :func:`read_givens`; and
:func:`refuse_inplace` refuses a user graph that overwrites its inputs unless told to accept it.
:class:`~symlab.compile.function.FunctionMaker` uses them.

>>> import symlab
>>> import symlab.tensor as st
>>> x = st.dvector("x")
>>> symlab.function([x], x * 2, updates={x: x + 1})
Traceback (most recent call last):
...
TypeError: function: update 0: only shared variables can be updated, received x (TensorVariable)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from symlab.compile.io import In, Out
from symlab.graph.basic import Constant, Variable
from symlab.graph.sharedvalue import SharedVariable, describe_value
from symlab.graph.traversal import applys_between, graph_inputs


def pairs(value: Any, what: str) -> list[tuple[Any, Any]]:
    """``value`` (None, a dict, or a list of pairs) as a list of pairs; ``what`` names it in an error."""
    if value is None:
        return []
    if isinstance(value, Mapping):
        return list(value.items())
    try:
        found = [tuple(p) for p in value]
    except TypeError:
        raise TypeError(f"{what} must be a dict or a list of (variable, value) pairs, received {type(value).__name__}") from None
    for k, p in enumerate(found):
        if len(p) != 2:
            raise TypeError(f"{what}: entry {k} is not a (variable, value) pair: {p!r:.80}")
    return found


def refuse_inplace(targets: list[Variable], where: str) -> None:
    """Refuse a user graph holding an op that overwrites its input (unless ``accept_inplace=True``)."""
    for node in applys_between(graph_inputs(targets), targets):
        if getattr(node.op, "destroy_map", None):
            raise TypeError(
                f"{where}: the graph contains the inplace operation {node} (it overwrites input "
                f"{sorted(i for ins in node.op.destroy_map.values() for i in ins)}); pass accept_inplace=True "
                "to compile it (the inputs it overwrites must then be marked In(..., mutable=True))"
            )


def read_inputs(inputs: Any, where: str, allow_input_downcast: bool | None = None) -> list[In]:
    """The inputs of ``function`` as :class:`~symlab.compile.io.In` objects, checked (default values filtered).

    >>> import symlab.tensor as st
    >>> x = st.dvector("x")
    >>> [i.variable is x for i in read_inputs([x], "function")]
    [True]
    >>> read_inputs([x, x], "function")
    Traceback (most recent call last):
    ...
    ValueError: function: input 1 (x) is the same variable as input 0
    """
    if isinstance(inputs, Variable | In):
        raise TypeError(f"{where}: inputs must be a list of variables, received a single {type(inputs).__name__}; write [{inputs}]")
    out: list[In] = []
    seen: dict[Variable, int] = {}
    for k, item in enumerate(inputs):
        inp = item if isinstance(item, In) else None
        if inp is None:
            if not isinstance(item, Variable):
                raise TypeError(
                    f"{where}: input {k} must be a symbolic Variable or an In, received "
                    f"{type(item).__name__} ({item!r:.60})"
                )
            inp = In(item)
        var = inp.variable
        if isinstance(var, Constant):
            raise TypeError(
                f"{where}: input {k} ({var}) is a Constant: a constant has a fixed value and cannot be an "
                "input; remove it from the inputs"
            )
        if isinstance(var, SharedVariable):
            raise TypeError(
                f"{where}: input {k} ({var}) is a shared variable: its value is an implicit input of every "
                "function using it; to give it another value, replace it with givens={shared: variable}"
            )
        if var.owner is not None:
            raise TypeError(
                f"{where}: input {k} ({var}) is computed by {var.owner}; inputs must be root variables "
                "(to feed an intermediate value, replace it with givens)"
            )
        if var in seen:
            raise ValueError(f"{where}: input {k} ({var}) is the same variable as input {seen[var]}")
        seen[var] = k
        if inp.has_value:
            try:
                inp.filtered_value = var.type.filter(inp.value, strict=inp.strict, allow_downcast=input_downcast(inp, allow_input_downcast))
            except (TypeError, ValueError) as err:
                raise TypeError(
                    f"{where}: bad default value for input {k} ('{inp.name}'): expected {var.type}, received "
                    f"{describe_value(inp.value)}: {err}"
                ) from None
        out.append(inp)
    return out


def input_downcast(inp: In, allow_input_downcast: bool | None) -> bool | None:
    """Whether ``inp`` may be downcast: its own ``allow_downcast``, else the function's."""
    return inp.allow_downcast if inp.allow_downcast is not None else allow_input_downcast


def read_outputs(outputs: Any, where: str) -> tuple[str, list[str] | None, list[Out]]:
    """``(kind, keys, outputs)``: how ``function`` returns (``"single"``, ``"list"`` or ``"dict"`` with ``keys``)
    and its outputs as :class:`~symlab.compile.io.Out` objects.

    >>> import symlab.tensor as st
    >>> x = st.dvector("x")
    >>> kind, keys, outs = read_outputs({"y": x * 2}, "function")
    >>> kind, keys, len(outs)
    ('dict', ['y'], 1)
    """
    def one(item: Any, label: str) -> Out:
        if isinstance(item, Out):
            return item
        if isinstance(item, Variable):
            return Out(item)
        raise TypeError(
            f"{where}: {label} must be a symbolic Variable or an Out, received {type(item).__name__} ({item!r:.60})"
        )

    if outputs is None:
        return "list", None, []
    if isinstance(outputs, Variable | Out):
        return "single", None, [one(outputs, "the output")]
    if isinstance(outputs, Mapping):
        keys = list(outputs)
        for key in keys:
            if not isinstance(key, str):
                raise TypeError(f"{where}: output dict keys must be strings, received {key!r}")
        return "dict", keys, [one(outputs[key], f"output {key!r}") for key in keys]
    if isinstance(outputs, list | tuple):
        return "list", None, [one(item, f"output {k}") for k, item in enumerate(outputs)]
    raise TypeError(
        f"{where}: outputs must be a Variable, a list or a dict of them, received {type(outputs).__name__}"
    )


def read_updates(updates: Any, where: str) -> list[tuple[SharedVariable, Variable]]:
    """The ``updates`` of ``function`` as (shared variable, new value) pairs, each new value of the variable's type."""
    out: list[tuple[SharedVariable, Variable]] = []
    seen: set[Variable] = set()
    for k, (target, expr) in enumerate(pairs(updates, f"{where}: updates")):
        if not isinstance(target, SharedVariable):
            raise TypeError(
                f"{where}: update {k}: only shared variables can be updated, received {target!r:.60} "
                f"({type(target).__name__})"
            )
        if target in seen:
            raise ValueError(f"{where}: update {k}: {target} is updated twice")
        seen.add(target)
        try:
            expr = target.type.filter_variable(expr)
        except (TypeError, ValueError) as err:
            got = getattr(expr, "type", None)
            raise TypeError(
                f"{where}: update {k}: the new value of {target} ({target.type}) is "
                f"{expr!s:.60}{f' of type {got}' if got is not None else ''}, which cannot be stored in it: {err}"
            ) from None
        out.append((target, expr))
    return out


def default_updates(
    targets: list[Variable],
    updates: list[tuple[SharedVariable, Variable]],
    no_default_updates: Any,
    where: str,
) -> list[tuple[SharedVariable, Variable]]:
    """The ``default_update`` pairs of the shared variables ``targets`` use (and their updates use, in turn).

    A variable updated in ``updates`` keeps that update; ``no_default_updates`` is ``True`` (no default update),
    ``False``, or a list of the shared variables whose default update is left out.

    >>> import symlab
    >>> import symlab.tensor as st
    >>> n = symlab.shared(0, name="n")
    >>> n.default_update = n + 1
    >>> [(str(s), str(e)) for s, e in default_updates([n * 2], [], False, "function")]
    [('n', 'Elemwise{add,no_inplace}.0')]
    >>> default_updates([n * 2], [], [n], "function")
    []
    """
    if no_default_updates is True or isinstance(no_default_updates, np.bool_) and no_default_updates:
        return []
    if no_default_updates is False or no_default_updates is None:
        excluded: set[Variable] = set()
    else:
        try:
            listed = list(no_default_updates)
        except TypeError:
            raise TypeError(
                f"{where}: no_default_updates must be True, False or a list of shared variables, received "
                f"{no_default_updates!r:.60}"
            ) from None
        excluded = set(listed)
        for k, item in enumerate(listed):
            if not isinstance(item, SharedVariable):
                raise TypeError(f"{where}: no_default_updates entry {k} must be a shared variable, received {item!r:.60}")
    updated = {target for target, _ in updates}
    seen: set[Variable] = set()
    found: list[tuple[SharedVariable, Variable]] = []
    pending = list(targets)
    while pending:
        new: list[Variable] = []
        for leaf in graph_inputs(pending):
            if not isinstance(leaf, SharedVariable) or leaf in seen:
                continue
            seen.add(leaf)
            expr = leaf.default_update
            if expr is None or leaf in updated or leaf in excluded:
                continue
            try:
                expr = leaf.type.filter_variable(expr)
            except (TypeError, ValueError) as err:
                raise TypeError(
                    f"{where}: the default_update of {leaf} ({leaf.type}) is {expr!s:.60}, which cannot be stored in "
                    f"it: {err}"
                ) from None
            found.append((leaf, expr))
            updated.add(leaf)
            new.append(expr)
        pending = new
    return found


def read_givens(givens: Any, where: str) -> list[tuple[Variable, Variable]]:
    """The ``givens`` of ``function`` as (variable, replacement) pairs, each replacement of the variable's type."""
    out = []
    for k, (old, new) in enumerate(pairs(givens, f"{where}: givens")):
        if not isinstance(old, Variable) or isinstance(old, Constant):
            raise TypeError(f"{where}: givens entry {k}: the key must be a non-constant Variable, received {old!r:.60}")
        try:
            new = old.type.filter_variable(new)
        except (TypeError, ValueError) as err:
            raise TypeError(f"{where}: givens entry {k}: {new!s:.60} cannot replace {old} ({old.type}): {err}") from None
        out.append((old, new))
    return out


__all__ = [
    "default_updates",
    "input_downcast",
    "pairs",
    "read_givens",
    "read_inputs",
    "read_outputs",
    "read_updates",
    "refuse_inplace",
]
