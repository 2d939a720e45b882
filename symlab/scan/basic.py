"""``scan``: a loop written as a Python function of one iteration (Theano's and PyTensor's ``scan``).

``fn`` is called once, on symbolic stand-ins for one iteration's values, in this order: one per tap of
each sequence, one per tap of each state of ``outputs_info``, then the non-sequences. It returns the
iteration's outputs, optionally followed by a dict of updates to shared variables and by an
:class:`~symlab.scan.utils.until` condition. What it returns becomes the body of one
:class:`~symlab.scan.op.Scan` node.

>>> import numpy as np
>>> import symlab
>>> import symlab.tensor as st
>>> A, k = st.dvector("A"), st.iscalar("k")
>>> result, updates = symlab.scan(lambda prior, A: prior * A, outputs_info=st.ones_like(A), non_sequences=A,
...                               n_steps=k)
>>> power = symlab.function([A, k], result[-1], updates=updates, mode="NUMPY")
>>> power(np.arange(5.0), 2).tolist()
[0.0, 1.0, 4.0, 9.0, 16.0]

Sequences are variables or ``dict(input=x, taps=[-1, 0])``; ``outputs_info`` entries are an initial
value (a state read back as ``h[t-1]``), ``dict(initial=h0, taps=[-2, -1])`` (``h0``'s first dimension
holds the two entries before iteration 0), or ``None`` (an output no iteration reads back). A random
generator given as an initial value is carried from one iteration to the next; the loop's output is then
its last state. Shared variables the body uses are read; those it returns updates for, and those it
made whose ``default_update`` is set (the generators of a ``RandomStream`` drawn inside the body), are
carried through the loop, and ``updates`` maps each to its value after the last iteration.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from symlab.graph.basic import Apply, Constant, MissingInputError, Variable
from symlab.graph.sharedvalue import SharedVariable, collect_new_shareds
from symlab.graph.traversal import clone_replace, graph_inputs
from symlab.scan.info import ScanInfo
from symlab.scan.op import Scan
from symlab.scan.utils import until
from symlab.tensor.type import TensorType


class OrderedUpdates(OrderedDict):
    """The updates a scan returns: shared variable -> its value after the loop (add your own pairs)."""


def scan(
    fn: Callable[..., Any],
    sequences: Any = None,
    outputs_info: Any = None,
    non_sequences: Any = None,
    n_steps: Any = None,
    truncate_gradient: int = -1,
    go_backwards: bool = False,
    mode: Any = None,
    name: str | None = None,
    strict: bool = False,
    return_list: bool = False,
    return_updates: bool = True,
) -> Any:
    """Loop ``fn`` over ``sequences`` and states: returns ``(outputs, updates)`` (see the module's docstring).

    ``n_steps`` (an int or an integer scalar) is the number of iterations; without it, the length of the
    shortest sequence (Theano's rule: sequences of different lengths are cut to the shortest). With it, every
    sequence must hold at least ``n_steps`` entries. ``go_backwards`` reads the sequences from their end.
    ``truncate_gradient`` (``-1``: no truncation) stops backpropagation through time after that many
    iterations. ``strict=True`` refuses a shared or free variable the body uses without it being among the
    ``non_sequences``. ``return_list=True`` returns a list even for one output; ``return_updates=False``
    (PyTensor 3) returns only the outputs, and is an error when the loop has updates.
    """
    where = "scan" if name is None else f"scan {name!r}"
    if name is not None and not isinstance(name, str):
        raise TypeError(f"scan: name must be a str or None, received {type(name).__name__} {name!r:.60}")
    if not callable(fn):
        raise TypeError(f"{where}: fn must be callable (the loop's body), received {type(fn).__name__} {fn!r:.60}")
    if not isinstance(truncate_gradient, int) or isinstance(truncate_gradient, bool) or truncate_gradient == 0 \
            or truncate_gradient < -1:
        raise ValueError(f"{where}: truncate_gradient must be -1 (no truncation) or a positive int, received "
                         f"{truncate_gradient!r:.60}")
    seqs = [_sequence(s, k, where) for k, s in enumerate(_as_list(sequences))]
    outs_info = [_output_info(o, k, where) for k, o in enumerate(_as_list(outputs_info))]
    non_seqs = [_non_sequence(v, k, where) for k, v in enumerate(_as_list(non_sequences))]
    steps = _n_steps(n_steps, where)

    # -- sequences: one shifted copy per tap, read at t ------------------------------------------------
    outer_seqs: list[Variable] = []
    inner_seqs: list[Variable] = []
    in_labels: list[str] = []
    for seq in seqs:
        x, taps = seq["input"], seq["taps"]
        low, high = min(min(taps), 0), max(max(taps), 0)
        for tap in taps:
            start, stop = tap - low, (tap - high) or None
            shifted = x if start == 0 and stop is None else x[start:stop]
            if go_backwards:
                shifted = shifted[::-1]
            outer_seqs.append(shifted)
            entry = x.type.clone(shape=x.type.shape[1:])() if isinstance(x.type, TensorType) else x.type()
            label = _tap_label(x.name or f"seq{len(inner_seqs)}", tap)
            entry.name = label
            inner_seqs.append(entry)
            in_labels.append(label)
    cut = steps is not None or len(outer_seqs) > 1  # one sequence alone sets the number of steps: no cut
    if steps is None:
        if not outer_seqs:
            raise ValueError(f"{where}: give n_steps or at least one sequence, so that the loop knows how many "
                             "iterations to run")
        import symlab.tensor as st

        steps = outer_seqs[0].shape[0]
        for s in outer_seqs[1:]:
            steps = st.minimum(steps, s.shape[0])
    if cut:
        outer_seqs = [s[:steps] for s in outer_seqs]

    # -- states -----------------------------------------------------------------------------------------
    import symlab.tensor as st

    inner_states: list[list[Variable]] = []  # per entry of outputs_info: its taps' stand-ins (empty: mapped)
    for k, info in enumerate(outs_info):
        if info is None:
            inner_states.append([])
            continue
        init, taps = info["initial"], info["taps"]
        stacked = taps != [-1] or info["stacked"]
        if isinstance(init.type, TensorType):
            entry_type = init.type.clone(shape=init.type.shape[1:]) if stacked else init.type
        else:
            entry_type = init.type
        base = init.name or f"out{k}"
        made = []
        for tap in taps:
            v = entry_type()
            v.name = _tap_label(base, tap)
            made.append(v)
        inner_states.append(made)

    # -- non-sequences: fn gets the variables themselves; the body reads stand-ins --------------------------
    args = [*inner_seqs, *(v for made in inner_states for v in made), *non_seqs]
    with collect_new_shareds() as made_here:
        returned = fn(*args)
    condition, outputs, updates = _split_return(returned, where)
    outputs = [_as_output(o, k, where) for k, o in enumerate(outputs)]
    if not outs_info:
        outs_info = [None] * len(outputs)
        inner_states = [[] for _ in outputs]
    if len(outputs) != len(outs_info):
        raise ValueError(f"{where}: the body returned {len(outputs)} outputs and outputs_info has {len(outs_info)} "
                         "entries; give one entry per output (None for an output no iteration reads back)")

    # updates: those returned, then the default updates of shared variables the body made
    update_pairs: list[tuple[SharedVariable, Variable]] = []
    for var, value in updates.items():
        if not isinstance(var, SharedVariable):
            raise TypeError(f"{where}: the body's updates must be keyed by shared variables, received {var!r:.60}")
        update_pairs.append((var, _update_value(var, value, where)))
    for var in made_here:
        if var.default_update is not None and all(var is not u for u, _ in update_pairs):
            update_pairs.append((var, var.default_update))
            var.default_update = None  # its update reads the body: the scan's update replaces it

    # -- the body's graph: carried states for the updated shared variables, stand-ins for the rest ----------
    traced = [k for k, info in enumerate(outs_info) if info is not None and _is_traced(info)]
    carried_info = [k for k, info in enumerate(outs_info) if info is not None and not _is_traced(info)]
    mapped = [k for k, info in enumerate(outs_info) if info is None]
    carried_shared = [var for var, _ in update_pairs]
    carried_inner = []
    for var in carried_shared:
        v = var.type()
        v.name = None if var.name is None else f"{var.name}[t-1]"
        carried_inner.append(v)
    body_outputs = [outputs[k] for k in traced] + [outputs[k] for k in mapped] \
        + [outputs[k] for k in carried_info] + [value for _, value in update_pairs]
    if condition is not None:
        body_outputs.append(condition)
    inner_non_seqs = []
    for v in non_seqs:
        stand_in = v.type()
        stand_in.name = v.name
        inner_non_seqs.append(stand_in)
    replace: dict[Variable, Variable] = dict(zip(carried_shared, carried_inner))
    replace.update((v, s) for v, s in zip(non_seqs, inner_non_seqs) if v not in replace)
    body_outputs = clone_replace(body_outputs, replace) if replace else body_outputs
    known = {*inner_seqs, *(v for made in inner_states for v in made), *carried_inner, *inner_non_seqs}
    extra_outer, extra_inner = [], []
    for leaf in graph_inputs(body_outputs):
        if leaf in known or isinstance(leaf, Constant) or leaf in extra_outer:
            continue
        if strict:
            kind = "shared variable" if isinstance(leaf, SharedVariable) else "variable"
            raise MissingInputError(f"{where}: the body reads the {kind} {leaf} ({leaf.type}), which is not among the "
                                    "non_sequences; strict=True needs every such variable there")
        if leaf.owner is None and not isinstance(leaf, SharedVariable) and leaf in made_here:
            raise MissingInputError(f"{where}: the body reads {leaf}, made inside it")
        stand_in = leaf.type()
        stand_in.name = leaf.name
        extra_outer.append(leaf)
        extra_inner.append(stand_in)
    if extra_outer:
        body_outputs = clone_replace(body_outputs, dict(zip(extra_outer, extra_inner)))

    # -- the op ---------------------------------------------------------------------------------------------
    state_taps = tuple(tuple(outs_info[k]["taps"]) for k in traced)
    info = ScanInfo(
        n_seqs=len(outer_seqs),
        state_taps=state_taps,
        n_mapped=len(mapped),
        n_untraced=len(carried_info) + len(carried_shared),
        n_non_seqs=len(non_seqs) + len(extra_outer),
        as_while=condition is not None,
        truncate_gradient=truncate_gradient,
    )
    inner_inputs = [*inner_seqs, *(v for k in traced for v in inner_states[k]),
                    *(inner_states[k][0] for k in carried_info), *carried_inner, *inner_non_seqs, *extra_inner]
    for k in traced:
        in_labels.extend(_tap_label(outs_info[k]["initial"].name or f"out{k}", t) for t in outs_info[k]["taps"])
    in_labels.extend(_tap_label(outs_info[k]["initial"].name or f"out{k}", -1) for k in carried_info)
    in_labels.extend(_tap_label(v.name or "shared", -1) for v in carried_shared)
    in_labels.extend(v.name or f"non_seq{i}" for i, v in enumerate([*non_seqs, *extra_outer]))
    out_labels = [_tap_label(outs_info[k]["initial"].name or f"out{k}", 0) for k in traced]
    out_labels += [f"out{k}[t]" for k in mapped]
    out_labels += [_tap_label(outs_info[k]["initial"].name or f"out{k}", 0) for k in carried_info]
    out_labels += [_tap_label(v.name or "shared", 0) for v in carried_shared]
    if condition is not None:
        out_labels.append("until")
    op = Scan(inner_inputs, body_outputs, info, name=name, input_labels=in_labels, output_labels=out_labels, mode=mode)
    windows = []
    for k in traced:
        init, taps = outs_info[k]["initial"], outs_info[k]["taps"]
        windows.append(st.expand_dims(init, 0) if taps == [-1] and not outs_info[k]["stacked"] else init)
    outer_inputs = [st.cast(steps, "int64"), *outer_seqs, *windows,
                    *(outs_info[k]["initial"] for k in carried_info), *carried_shared, *non_seqs, *extra_outer]
    node: Apply = op.make_node(*outer_inputs)
    results: list[Variable | None] = [None] * len(outs_info)
    for pos, k in enumerate(traced):
        window = -outs_info[k]["taps"][0]
        results[k] = node.outputs[pos][window:]
    for pos, k in enumerate(mapped):
        results[k] = node.outputs[info.n_states + pos]
    first_carried = info.n_states + info.n_mapped
    for pos, k in enumerate(carried_info):
        results[k] = node.outputs[first_carried + pos]
    new_updates = OrderedUpdates()
    for pos, var in enumerate(carried_shared):
        new_updates[var] = node.outputs[first_carried + len(carried_info) + pos]
    if name is not None:
        for k, r in enumerate(results):
            if r is not None and r.name is None:
                r.name = f"{name}[{k}]" if len(results) > 1 else name
    out: Any = list(results)
    if not return_list and len(out) == 1:
        out = out[0]
    if not return_updates:
        if new_updates:
            raise ValueError(f"{where}: return_updates=False, but the loop updates "
                             f"{[str(v) for v in new_updates]}; carry those values as states in outputs_info, or take "
                             "the updates")
        return out
    return out, new_updates


# -- reading the arguments ------------------------------------------------------------------------------------
def _as_list(x: Any) -> list[Any]:
    if x is None:
        return []
    if isinstance(x, list | tuple):
        return list(x)
    return [x]


def _tensor(x: Any, what: str, where: str) -> Variable:
    from symlab.tensor.conversion import as_tensor_variable

    if isinstance(x, Variable):
        return x
    try:
        return as_tensor_variable(x)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{where}: {what} must be a variable or an array, received {type(x).__name__} {x!r:.60} "
                        f"({err})") from None


def _sequence(s: Any, k: int, where: str) -> dict[str, Any]:
    if isinstance(s, dict):
        if "input" not in s:
            raise ValueError(f"{where}: sequence {k} is a dict without 'input'; write dict(input=x, taps=[...])")
        unknown = set(s) - {"input", "taps"}
        if unknown:
            raise ValueError(f"{where}: sequence {k} has unknown keys {sorted(unknown)}; accepted: input, taps")
        x = _tensor(s["input"], f"sequence {k}", where)
        taps = s.get("taps", [0])
        taps = [0] if taps is None else list(taps)
    else:
        x, taps = _tensor(s, f"sequence {k}", where), [0]
    if not isinstance(x.type, TensorType) or x.type.ndim < 1:
        raise TypeError(f"{where}: sequence {k} ({x}) must be a tensor of at least 1 dimension (iteration t reads "
                        f"entry t), received {x.type}")
    if not taps or any(not isinstance(t, int) or isinstance(t, bool) for t in taps):
        raise ValueError(f"{where}: the taps of sequence {k} ({x}) must be a non-empty list of ints, received {taps!r}")
    if len(set(taps)) != len(taps):
        raise ValueError(f"{where}: the taps of sequence {k} ({x}) repeat: {taps!r}")
    known = x.type.shape[0]
    if known is not None and max(taps, default=0) - min(taps, default=0) >= known:
        raise ValueError(f"{where}: the taps {taps} of sequence {k} ({x}) reach {max(taps) - min(taps) + 1} entries "
                         f"apart, past its {known} entries")
    return {"input": x, "taps": taps}


def _output_info(o: Any, k: int, where: str) -> dict[str, Any] | None:
    if o is None:
        return None
    if isinstance(o, dict):
        unknown = set(o) - {"initial", "taps", "return_steps"}
        if unknown:
            raise ValueError(f"{where}: outputs_info entry {k} has unknown keys {sorted(unknown)}; accepted: initial, taps")
        if o.get("initial") is None:
            return None  # Theano: a dict without an initial value is an output no iteration reads back
        init = _initial(o["initial"], k, where)
        taps = o.get("taps", [-1])
        taps = [-1] if taps is None else list(taps)
        if not taps or any(not isinstance(t, int) or isinstance(t, bool) or t >= 0 for t in taps):
            raise ValueError(f"{where}: the taps of output {k} must be negative ints (iteration t reads earlier "
                             f"values), received {taps!r}")
        taps = sorted(set(taps))
        stacked = taps != [-1]
        if taps != [-1]:
            if not isinstance(init.type, TensorType) or init.type.ndim < 1:
                raise TypeError(f"{where}: output {k} reads taps {taps}, so its initial value must stack the "
                                f"{-taps[0]} entries before iteration 0 along a first dimension, received {init.type}")
            known = init.type.shape[0]
            if known is not None and known < -taps[0]:
                raise ValueError(f"{where}: output {k} reads taps {taps}, so its initial value needs {-taps[0]} "
                                 f"entries along its first dimension, received {known}")
        return {"initial": init, "taps": taps, "stacked": stacked}
    return {"initial": _initial(o, k, where), "taps": [-1], "stacked": False}


def _initial(x: Any, k: int, where: str) -> Variable:
    if isinstance(x, Variable):
        return x
    return _tensor(x, f"the initial value of output {k}", where)


def _is_traced(info: dict[str, Any]) -> bool:
    """A state is stacked over iterations when it is a tensor (a generator is only carried)."""
    return isinstance(info["initial"].type, TensorType)


def _non_sequence(v: Any, k: int, where: str) -> Variable:
    if isinstance(v, Variable):
        return v
    return _tensor(v, f"non-sequence {k}", where)


def _n_steps(n_steps: Any, where: str) -> Any:
    import numpy as np

    from symlab.tensor.conversion import as_tensor_variable

    if n_steps is None:
        return None
    if isinstance(n_steps, int | np.integer) and not isinstance(n_steps, bool):
        if n_steps < 0:
            raise ValueError(f"{where}: n_steps must be >= 0, received {n_steps}")
        return as_tensor_variable(np.int64(n_steps))
    var = _tensor(n_steps, "n_steps", where)
    if not isinstance(var.type, TensorType) or var.type.ndim != 0 or not var.type.dtype.startswith(("int", "uint")):
        raise TypeError(f"{where}: n_steps must be an integer scalar, received {var.type}")
    if isinstance(var, Constant) and int(var.data) < 0:
        raise ValueError(f"{where}: n_steps must be >= 0, received {int(var.data)}")
    return var


def _tap_label(base: str, tap: int) -> str:
    return f"{base}[t]" if tap == 0 else f"{base}[t{tap:+d}]"


def _split_return(returned: Any, where: str) -> tuple[Variable | None, list[Any], dict[Any, Any]]:
    """The body's ``(condition, outputs, updates)`` from what it returned (Theano's accepted forms)."""
    def is_outputs(x: Any) -> bool:
        return isinstance(x, Variable) or isinstance(x, list | tuple) and all(not isinstance(e, dict | until)
                                                                              and not _is_pair(e) for e in x)

    def is_updates(x: Any) -> bool:
        return isinstance(x, dict) or isinstance(x, list | tuple) and len(x) > 0 and all(_is_pair(e) for e in x)

    def listed(x: Any) -> list[Any]:
        return list(x) if isinstance(x, list | tuple) else [x]

    if returned is None:
        return None, [], {}
    if isinstance(returned, until):
        return returned.condition, [], {}
    if isinstance(returned, dict):
        return None, [], dict(returned)
    if not isinstance(returned, list | tuple):
        return None, [returned], {}
    items = list(returned)
    if items and isinstance(items[-1], until):
        cond = items.pop().condition
    else:
        cond = None
    if items and (isinstance(items[-1], dict) or len(items) >= 2 and is_updates(items[-1]) and is_outputs(items[0])):
        ups = dict(items.pop())
    else:
        ups = {}
    if len(items) == 1 and isinstance(items[0], list | tuple) and (cond is not None or ups):
        items = listed(items[0])
    for k, item in enumerate(items):
        if isinstance(item, dict | until):
            raise ValueError(f"{where}: the body must return its outputs first, then its updates (a dict), then an "
                             f"until condition; item {k} is {item!r:.60}")
    return cond, items, ups


def _is_pair(x: Any) -> bool:
    return isinstance(x, list | tuple) and len(x) == 2 and isinstance(x[0], SharedVariable)


def _as_output(o: Any, k: int, where: str) -> Variable:
    if isinstance(o, Variable):
        return o
    try:
        return _tensor(o, f"output {k} of the body", where)
    except TypeError:
        raise TypeError(f"{where}: output {k} of the body must be a variable (or a number, made a constant), received "
                        f"{type(o).__name__} {o!r:.60}") from None


def _update_value(var: SharedVariable, value: Any, where: str) -> Variable:
    value = value if isinstance(value, Variable) else _tensor(value, f"the update of {var}", where)
    try:
        return var.type.filter_variable(value)
    except TypeError as err:
        raise TypeError(f"{where}: the update of {var} must be of type {var.type}, received {value.type} ({err})") from None


__all__ = ["OrderedUpdates", "scan"]

