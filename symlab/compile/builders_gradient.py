"""The gradient (``L_op``) and pushforward (``R_op``) of an ``OpFromGraph``, default or overridden.

As in PyTensor, each is itself an ``OpFromGraph`` (its ``inline`` follows the forward op's), built
once and kept on the op: the ``L_op`` of a node is one node of the gradient op, on the node's
inputs, the outputs the gradient reads (an override's; the default recomputes what it needs
inside, so a graph that only needs the gradient does not keep the forward node) and the
gradients of its outputs: the gradient graph stays as compact as the forward one. Its inner graph is ``symlab.grad`` of the inner graph (the inner outputs
given the output gradients as ``known_grads``), or the overrides:

* an ``OpFromGraph`` taking ``inputs + outputs + output_grads`` (``L_op``) or ``inputs +
  eval_points`` (``R_op``), applied as it is;
* a callable ``(inputs, outputs, output_grads) -> [one per input]`` (``L_op``; ``inputs`` include the
  shared variables used implicitly, last, and their gradients may be left out) or
  ``(inputs, eval_points) -> [one per output]`` (``R_op``), called once on variables standing
  for those;
* a list with one entry per input (``L_op``; the shared variables used implicitly may be left out:
  they get the default) or output (``R_op``): ``None`` (the default for
  that one), a callable or ``OpFromGraph`` giving that one (an ``OpFromGraph`` is called on the
  flattened arguments), or a ``DisconnectedType``/``NullType`` variable.

An output gradient of ``DisconnectedType`` given to ``L_op`` is left out of the gradient op
(one gradient op per pattern of disconnected output gradients). ``DisconnectedType`` and
``NullType`` input gradients are returned as such, outside the gradient op.

>>> import symlab
>>> import symlab.tensor as st
>>> from symlab.compile.builders import OpFromGraph
>>> x = st.dvector("x")
>>> op = OpFromGraph([x], [st.exp(x).sum()], name="sumexp")
>>> g = symlab.grad(op(x), x)
>>> str(g.owner.op), g.eval({x: [0.0, 1.0]}).round(4).tolist()
('sumexp_LOp{inline=False}', [1.0, 2.7183])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from symlab.graph.basic import Variable
from symlab.graph.inner_graph import HasInnerGraph
from symlab.graph.null_type import DisconnectedType, NullType, disconnected
from symlab.graph.traversal import ancestors, clone_get_equiv


def _is_ofg(value: Any) -> bool:
    return isinstance(value, HasInnerGraph) and callable(value) and hasattr(value, "lop_overrides")


def _is_missing(v: Any) -> bool:
    return isinstance(v, Variable) and isinstance(v.type, DisconnectedType | NullType)


def check_overrides(overrides: Any, n: int | tuple[int, ...], what: str, where: str) -> None:
    """Refuse an override that is none of the accepted forms (named, with what was received); a list has one of
    the lengths ``n``."""
    if overrides is None or _is_ofg(overrides) or (callable(overrides) and not isinstance(overrides, list)):
        return
    if isinstance(overrides, list):
        sizes = (n,) if isinstance(n, int) else n
        if len(overrides) not in sizes:
            expected = " or ".join(str(k) for k in sorted(set(sizes)))
            raise ValueError(f"{where}: {what} as a list needs {expected} entries, received {len(overrides)}")
        for k, entry in enumerate(overrides):
            if entry is None or callable(entry) or _is_missing(entry):
                continue
            raise TypeError(
                f"{where}: {what}[{k}] must be None, a callable, an OpFromGraph or a DisconnectedType/NullType "
                f"variable, received {type(entry).__name__} {entry!r:.60}"
            )
        return
    raise TypeError(
        f"{where}: {what} must be None, an OpFromGraph, a callable or a list, received {type(overrides).__name__}"
    )


def override_key(overrides: Any) -> Any:
    """What the op's equality compares of an override: the op, the function object, each list entry."""
    if overrides is None or _is_ofg(overrides):
        return overrides
    if isinstance(overrides, list):
        return tuple(("missing", e.type) if _is_missing(e) else e for e in overrides)
    return overrides


def _fresh_inner(op: Any) -> tuple[list[Variable], list[Variable]]:
    """A copy of the op's inner graph: (inputs, outputs), not held by any FunctionGraph."""
    fg = op.fgraph
    equiv = clone_get_equiv(fg.inputs, fg.outputs, copy_inputs=True, copy_orphans=False)
    return [equiv[v] for v in fg.inputs], [equiv[v] for v in fg.outputs]


def _call_override(fn: Callable[..., Any], args: tuple[list[Variable], ...], n: int | tuple[int, ...], what: str,
                   op: Any) -> list[Any]:
    """``fn`` called on ``args`` (flattened for an ``OpFromGraph``); its list of results, of a length in ``n``."""
    if _is_ofg(fn):
        got = fn(*[v for group in args for v in group], return_list=True)
    else:
        got = fn(*args)
    if isinstance(got, Variable):
        got = [got]
    sizes = (n,) if isinstance(n, int) else n
    if not isinstance(got, list | tuple) or len(got) not in sizes:
        expected = " or ".join(str(k) for k in sorted(set(sizes)))
        raise ValueError(f"{op}: {what} must return a list of {expected} variables, received {got!r:.100}")
    return list(got)


def _combine(defaults: list[Variable], entries: list[Any], args: tuple[list[Variable], ...], what: str, op: Any) -> list[Any]:
    it = iter(defaults)
    out = []
    for k, entry in enumerate(entries):
        if entry is None:
            out.append(next(it))
        elif _is_missing(entry):
            out.append(entry)
        else:
            out.append(_call_override(entry, args, 1, f"{what}[{k}]", op)[0])
    return out


# -- L_op -------------------------------------------------------------------------------------------
def _default_grads(inner_in: list[Variable], inner_out: list[Variable], grads: list[Variable], wrt: list[Variable]) -> list[Any]:
    from symlab.gradient import grad

    known: dict[Variable, Variable] = {}
    for o, g in zip(inner_out, grads):
        if not isinstance(g.type, DisconnectedType):
            known[o] = g if o not in known else known[o] + g
    if not known or not wrt:
        return [disconnected() for _ in wrt]
    return grad(None, wrt, known_grads=known, disconnected_inputs="ignore", null_gradients="return")


def _build_lop(op: Any, cls: type, pattern: tuple[bool, ...]) -> tuple[Any, list[Any]]:
    inner_in, inner_out = _fresh_inner(op)
    outs = [t(o.name) for t, o in zip(op.output_types, op.fgraph.outputs)]
    grads = [disconnected() if d else t() for t, d in zip(op.output_types, pattern)]
    args = (inner_in, outs, grads)
    overrides = op.lop_overrides
    n_explicit = op.n_explicit_inputs
    if overrides is None:
        input_grads = _default_grads(inner_in, inner_out, grads, inner_in)
    elif isinstance(overrides, list):  # the shared variables used implicitly get their default gradients
        entries = [*overrides, *[None] * (len(inner_in) - len(overrides))]
        wrt = [v for v, e in zip(inner_in, entries) if e is None]
        input_grads = _combine(_default_grads(inner_in, inner_out, grads, wrt), entries, args, "lop_overrides", op)
    else:
        input_grads = _call_override(overrides, args, (len(inner_in), n_explicit), "lop_overrides", op)
        if len(input_grads) < len(inner_in):  # for the explicit inputs only: the shared ones get the default
            input_grads += _default_grads(inner_in, inner_out, grads, inner_in[n_explicit:])
    for k, g in enumerate(input_grads):
        if not isinstance(g, Variable):
            raise TypeError(f"{op}: the gradient of input {k} must be a Variable, received {type(g).__name__}")
    connected = [g for g in input_grads if not _is_missing(g)]
    used = {id(v) for v in ancestors(connected)}
    out_mask = [id(o) in used for o in outs]  # the node's outputs the gradient reads (none, by default)
    lop_op = None
    if connected:
        name = None if op.user_name is None else f"{op.user_name}_LOp"
        lop_op = cls([*inner_in, *(o for o, m in zip(outs, out_mask) if m), *(g for g in grads if not _is_missing(g))],
                     connected, inline=op.is_inline, name=name)
    return lop_op, input_grads, out_mask


def lop(op: Any, cls: type, inputs: list[Variable], outputs: list[Variable], output_grads: list[Variable]) -> list[Variable]:
    """``op.L_op``: one node of the gradient op (built once per disconnection pattern)."""
    overrides = op.lop_overrides
    if _is_ofg(overrides):
        return overrides(*inputs, *outputs, *output_grads, return_list=True)
    pattern = tuple(isinstance(g.type, DisconnectedType) for g in output_grads)
    if pattern not in op._lop_cache:
        op._lop_cache[pattern] = _build_lop(op, cls, pattern)
    lop_op, templates, out_mask = op._lop_cache[pattern]
    connected_grads = [g for g in output_grads if not isinstance(g.type, DisconnectedType)]
    used_outputs = [o for o, m in zip(outputs, out_mask) if m]
    results = iter(lop_op(*inputs, *used_outputs, *connected_grads, return_list=True) if lop_op is not None else ())
    return [(disconnected() if isinstance(t.type, DisconnectedType) else t) if _is_missing(t) else next(results)
            for t in templates]


# -- R_op -------------------------------------------------------------------------------------------
def _default_pushforward(inner_in: list[Variable], points: list[Variable], fs: list[Variable]) -> list[Any]:
    from symlab.gradient import pushforward

    if not fs:
        return []
    got = pushforward(fs, inner_in, points, disconnected_outputs="ignore", return_disconnected="none",
                      use_op_pushforward=True)
    return [disconnected() if g is None else g for g in got]


def _build_rop(op: Any, cls: type) -> tuple[Any, list[Any]]:
    inner_in, inner_out = _fresh_inner(op)
    points = [t() for t in op.input_types]
    args = (inner_in, points)
    overrides = op.rop_overrides
    if overrides is None:
        directions = _default_pushforward(inner_in, points, inner_out)
    elif isinstance(overrides, list):
        fs = [o for o, e in zip(inner_out, overrides) if e is None]
        directions = _combine(_default_pushforward(inner_in, points, fs), overrides, args, "rop_overrides", op)
    else:
        directions = _call_override(overrides, args, len(inner_out), "rop_overrides", op)
    connected = [d for d in directions if not _is_missing(d)]
    rop_op = None
    if connected:
        name = None if op.user_name is None else f"{op.user_name}_rop"
        rop_op = cls([*inner_in, *points], connected, inline=op.is_inline, name=name)
    return rop_op, directions


def rop(op: Any, cls: type, inputs: list[Variable], eval_points: list[Variable | None]) -> list[Variable | None]:
    """``op.R_op``: one node of the pushforward op; a missing eval point is a zero direction."""
    from symlab.gradient.reverse_mode import zeros_like_gradient

    points = [zeros_like_gradient(i) if p is None else p for i, p in zip(inputs, eval_points)]
    overrides = op.rop_overrides
    if _is_ofg(overrides):
        return overrides(*inputs, *points, return_list=True)
    if op._rop_cache is None:
        op._rop_cache = _build_rop(op, cls)
    rop_op, templates = op._rop_cache
    results = iter(rop_op(*inputs, *points, return_list=True) if rop_op is not None else ())
    return [None if isinstance(t.type, DisconnectedType) else t if _is_missing(t) else next(results) for t in templates]


__all__ = ["check_overrides", "lop", "override_key", "rop"]
