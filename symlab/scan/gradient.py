"""Backpropagation through time: the gradient of a ``Scan`` is another ``Scan`` running backwards.

The backward loop visits the forward iterations ``t = n-1, n-2, ...`` (``truncate_gradient=k``: only the
last ``k`` of them, as in PyTensor). Its **sequences** are, reversed, the forward sequences, the value
every tap of every state read (slices of the forward buffers, which hold each iteration's state after
the initial window) and the gradients given for the outputs (per iteration: a state's buffer entry, a
mapped output's entry). Its **states** are:

* per forward state with taps reaching ``window`` entries back, an accumulator of shape
  ``(window, ...)``: entry ``i`` holds what the iterations after ``t`` sent to the buffer entry
  ``t + 1 + i`` (the last one is iteration ``t``'s own output). A step adds the output's given gradient to
  the last entry, differentiates the body, shifts the accumulator by one and adds what each tap sent;
* per non-sequence, the sum of its gradient over the iterations so far.

Its **mapped outputs** are the gradient of each sequence's entry, one per iteration (reversed back and
placed into a zero gradient of the whole sequence). The accumulators' last values give the gradient of
the initial windows and of the non-sequences. ``n_steps`` and integer inputs have no gradient; a carried
(untraced) value, which the loop keeps only at its end, gets a ``NullType`` gradient where the answer
needs it (carry it as a state in ``outputs_info`` instead).

A while loop (``until``) is supported: the number of iterations it ran is the length of one of its
outputs, read at run time, and sequences' gradients past it are zeros. A loop whose buffers a rewrite
cut (``kept``) cannot be differentiated (its iterations' values are gone); differentiate before compiling.

>>> import numpy as np
>>> import symlab
>>> import symlab.tensor as st
>>> x, h0 = st.dvector("x"), st.dscalar("h0")
>>> h, _ = symlab.scan(lambda x_t, h: 0.5 * h + x_t, sequences=x, outputs_info=h0, name="leaky")
>>> gx, gh0 = symlab.grad(h[-1], [x, h0])
>>> str(gx.owner.inputs[1].owner.inputs[0].owner.op)
'Scan{grad_of_leaky}'
>>> [v.tolist() for v in symlab.function([x, h0], [gx, gh0], mode="NUMPY")([1.0, 2.0, 3.0], 1.0)]
[[0.25, 0.5, 1.0], 0.125]
"""

from __future__ import annotations

from typing import Any

from symlab.compile.builders import io_connection_pattern
from symlab.graph.basic import Constant, Variable
from symlab.graph.null_type import DisconnectedType, NullType, disconnected
from symlab.graph.traversal import clone_get_equiv, clone_replace, graph_inputs
from symlab.scan.info import ScanInfo
from symlab.tensor.type import TensorType


def _is_float(var: Variable) -> bool:
    return isinstance(var.type, TensorType) and var.type.dtype.startswith(("float", "complex"))


def _is_zero(g: Variable) -> bool:
    """Whether ``g`` is a gradient known to be zero (``grad`` gives one to an output nobody reads)."""
    from symlab.tensor.basic import static_number
    from symlab.tensor.elemwise import Elemwise

    if isinstance(g, Constant):
        return static_number(g) == 0
    node = g.owner
    if node is not None and isinstance(node.op, Elemwise) and getattr(node.op.scalar_op, "name", None) == "second":
        return static_number(node.inputs[1]) == 0
    return False


def _live(g: Variable) -> bool:
    return not isinstance(g.type, DisconnectedType | NullType) and not _is_zero(g)


def _null(why: str) -> Variable:
    return NullType(why)()


def _n_steps_run(op: Any, inputs: list[Variable], outputs: list[Variable]) -> Variable | None:
    """How many iterations the loop ran: ``n_steps``, or for a while loop the length of an output."""
    import symlab.tensor as st

    info = op.info
    if not info.as_while:
        return st.cast(inputs[0], "int64")
    if info.n_states:
        return outputs[0].shape[0] - info.window(0)
    if info.n_mapped:
        return outputs[info.n_states].shape[0]
    return None


def scan_lop(op: Any, inputs: list[Variable], outputs: list[Variable], output_grads: list[Variable]) -> list[Variable]:
    """The gradients of the outer inputs of a scan node, given its outputs' (see the module's docstring)."""
    import symlab.tensor as st
    from symlab.gradient import grad

    info, fg = op.info, op.fgraph
    if any(k is not None for k in info.kept):
        raise NotImplementedError(f"{op.where}: this loop keeps only the last entries of its buffers (kept={info.kept}, "
                                  "set by a rewrite), so the values of its iterations are gone; take the gradient "
                                  "before compiling")
    o_sl, i_sl, out_sl = info.outer_slices(), info.inner_slices(), info.output_slices()
    pattern = op.connection_pattern()
    inner = io_connection_pattern(fg)  # inner[i][o]
    live = [_live(g) for g in output_grads]
    result: list[Variable] = [disconnected() for _ in inputs]

    # inputs connected to a carried value whose gradient is asked for: undefined (its iterations are not kept)
    untraced_why = (f"{op.where}: the gradient goes through a value the loop carries without keeping its iterations "
                    "(a shared variable's update or a random generator); carry it as a state in outputs_info")
    for c in range(out_sl["untraced"].start, out_sl["untraced"].stop):
        if live[c]:
            for i in range(1, len(inputs)):
                if pattern[i][c]:
                    result[i] = _null(untraced_why)
    for c in range(o_sl["untraced"].start, o_sl["untraced"].stop):
        if isinstance(inputs[c].type, TensorType) and any(pattern[c][o] and live[o] for o in range(out_sl["mapped"].stop)):
            result[c] = _null(untraced_why)

    n = _n_steps_run(op, inputs, outputs)
    if n is None or not any(live[: out_sl["mapped"].stop]):
        return result

    tap_rows = _tap_rows(info)
    live_mapped = [m for m in range(info.n_mapped) if live[info.n_states + m] and _is_float(outputs[info.n_states + m])]
    states = _reached_states(info, inner, tap_rows, [live[j] and _is_float(outputs[j]) for j in range(info.n_states)],
                             [_is_float(outputs[j]) for j in range(info.n_states)], live_mapped)
    sinks = [*states, *(info.n_states + m for m in live_mapped)]
    if not sinks:
        return result

    # the body, copied: its inputs become the backward loop's inputs (values of the forward iteration)
    equiv = clone_get_equiv(fg.inputs, fg.outputs, copy_inputs=True, copy_orphans=False)
    f_in = [equiv[v] for v in fg.inputs]
    f_out = [equiv[v] for v in fg.outputs]
    truncated = info.truncate_gradient != -1
    steps = st.minimum(n, info.truncate_gradient) if truncated else n
    start = n - steps  # the first forward iteration backpropagation reaches

    def reverse(x: Variable, lo: Any, hi: Any) -> Variable:
        return x[lo:hi][::-1]

    seq_pairs: list[tuple[Variable, Variable, str]] = []  # (inner, outer, label)
    for q in range(info.n_seqs):
        seq_pairs.append((f_in[i_sl["seqs"].start + q], reverse(inputs[o_sl["seqs"].start + q], 0, n), _label(op, q)))
    for j in states:
        w = info.window(j)
        for r, tap in zip(tap_rows[j], info.state_taps[j]):
            seq_pairs.append((f_in[r], reverse(outputs[j], w + tap, w + tap + n), _label(op, r)))
    known: dict[Variable, Variable] = {}
    accumulators: list[tuple[int, Variable, Variable]] = []  # (state, inner accumulator, outer initial window)
    for j in states:
        w = info.window(j)
        buf_type = outputs[j].type
        acc = TensorType(buf_type.dtype, (w, *buf_type.shape[1:]))(f"grad {_out_label(op, j)} window")
        g_out = acc[w - 1]
        if live[j]:
            g = output_grads[j]
            d = g.type.clone(shape=g.type.shape[1:])(f"grad {_out_label(op, j)}")
            seq_pairs.append((d, reverse(g, w, w + n), d.name))
            g_out = g_out + d
        known[f_out[j]] = known[f_out[j]] + g_out if f_out[j] in known else g_out
        zeros = st.zeros([1, w, *(outputs[j].shape[a] for a in range(1, buf_type.ndim))], dtype=buf_type.dtype)
        accumulators.append((j, acc, zeros))
    for m in live_mapped:
        g = output_grads[info.n_states + m]
        d = g.type.clone(shape=g.type.shape[1:])(f"grad {_out_label(op, info.n_states + m)}")
        seq_pairs.append((d, reverse(g, 0, n), d.name))
        o = f_out[info.n_states + m]
        known[o] = known[o] + d if o in known else d

    # what to differentiate with respect to: the connected float sequences, taps and non-sequences
    def connected(r: int) -> bool:
        return any(inner[r][o] for o in sinks)

    wrt_seqs = [q for q in range(info.n_seqs) if _is_float(f_in[i_sl["seqs"].start + q]) and connected(i_sl["seqs"].start + q)]
    wrt_non_seqs = [p for p in range(info.n_non_seqs)
                    if _is_float(f_in[i_sl["non_seqs"].start + p]) and connected(i_sl["non_seqs"].start + p)]
    wrt = [f_in[i_sl["seqs"].start + q] for q in wrt_seqs] + [f_in[r] for j in states for r in tap_rows[j]] \
        + [f_in[i_sl["non_seqs"].start + p] for p in wrt_non_seqs]
    grads = grad(None, wrt, known_grads=known, disconnected_inputs="ignore", null_gradients="return")
    by_var = dict(zip(wrt, grads))
    for j in states:
        for r in tap_rows[j]:
            if isinstance(by_var[f_in[r]].type, NullType):  # the recurrence has no gradient: nothing upstream has one
                for i in range(1, len(inputs)):
                    if any(pattern[i][o] for o in sinks):
                        result[i] = by_var[f_in[r]]
                return result

    # the backward body's outputs
    new_states: list[Variable] = []
    for j, acc, _ in accumulators:
        w, taps = info.window(j), info.state_taps[j]
        sent = {tap: by_var[f_in[r]] for r, tap in zip(tap_rows[j], taps)}
        entries = []
        for i in range(w):
            parts = ([acc[i - 1]] if i >= 1 else []) + ([sent[i - w]] if i - w in sent else [])
            entries.append(parts[0] + parts[1] if len(parts) == 2 else parts[0] if parts else st.zeros_like(acc[0]))
        new_states.append(st.cast(st.stack(entries), acc.type.dtype))
    ns_acc: list[tuple[int, Variable, Variable]] = []  # (non-seq, inner sum, outer initial window)
    for p in wrt_non_seqs:
        v = f_in[i_sl["non_seqs"].start + p]
        g = by_var[v]
        if isinstance(g.type, NullType):
            result[o_sl["non_seqs"].start + p] = g
            continue
        total = v.type(f"grad {_label(op, i_sl['non_seqs'].start + p)} sum")
        new_states.append(st.cast(total + g, v.type.dtype))
        ns_acc.append((p, total, st.expand_dims(st.zeros_like(inputs[o_sl["non_seqs"].start + p]), 0)))
    mapped: list[tuple[int, Variable]] = []
    for q in wrt_seqs:
        g = by_var[f_in[i_sl["seqs"].start + q]]
        if isinstance(g.type, NullType):
            result[o_sl["seqs"].start + q] = g
            continue
        mapped.append((q, st.cast(g, f_in[i_sl["seqs"].start + q].type.dtype)))
    body_out = [*new_states, *(g for _, g in mapped)]
    # what the backward body would recompute of the forward iteration's outputs, it reads from the forward
    # node's outputs instead (a state's buffer entry, a mapped output's entry): tanh's gradient reads tanh's value
    stored: dict[Variable, Variable] = {}
    for k in range(info.n_states + info.n_mapped):
        o = f_out[k]
        if o.owner is None or o in stored or not isinstance(o.type, TensorType):
            continue
        stored[o] = o.type(f"{_out_label(op, k)} stored")
        lo = info.window(k) if k < info.n_states else 0
        seq_pairs.append((stored[o], reverse(outputs[k], lo, lo + n), stored[o].name))
    body_out = clone_replace(body_out, stored)
    leaves = set(graph_inputs(body_out))
    carried_read = [v for v in f_in[i_sl["untraced"]] if v in leaves]
    if carried_read:
        label = _label(op, f_in.index(carried_read[0]))
        why = (f"{op.where}: the gradient needs, at every iteration, values computed from {label}, which the loop "
               "carries without keeping its iterations (a random generator or a shared variable's update); return "
               "those values (the random draw) as an extra output of the loop, so that the gradient reads them")
        return [r if i == 0 or not any(pattern[i][o] for o in sinks) else _null(why) for i, r in enumerate(result)]

    # the backward loop: sequences and non-sequences it reads, its accumulators
    seq_pairs = [(v, outer, label) for v, outer, label in seq_pairs if v in leaves]
    non_seq_pairs = [(v, inputs[o_sl["non_seqs"].start + p], _label(op, i_sl["non_seqs"].start + p))
                     for p, v in enumerate(f_in[i_sl["non_seqs"]]) if v in leaves]
    state_inner = [acc for _, acc, _ in accumulators] + [t for _, t, _ in ns_acc]
    state_outer = [z for _, _, z in accumulators] + [z for _, _, z in ns_acc]
    bwd_info = ScanInfo(n_seqs=len(seq_pairs), state_taps=((-1,),) * len(state_inner), n_mapped=len(mapped),
                        n_untraced=0, n_non_seqs=len(non_seq_pairs), truncate_gradient=info.truncate_gradient)
    in_labels = [label for _, _, label in seq_pairs] + [f"{v.name}[t+1]" for v in state_inner] \
        + [label for _, _, label in non_seq_pairs]
    out_labels = [f"{v.name}[t]" for v in state_inner] + [f"grad {_label(op, i_sl['seqs'].start + q)}" for q, _ in mapped]
    bwd = type(op)([v for v, _, _ in seq_pairs] + state_inner + [v for v, _, _ in non_seq_pairs], body_out, bwd_info,
               name=None if op.user_name is None else f"grad_of_{op.user_name}", input_labels=in_labels,
               output_labels=out_labels, mode=op.mode)
    node = bwd.make_node(steps, *(outer for _, outer, _ in seq_pairs), *state_outer, *(outer for _, outer, _ in non_seq_pairs))

    _place_gradients(op, inputs, outputs, output_grads, node, result, [j for j, _, _ in accumulators],
                     [p for p, _, _ in ns_acc], [q for q, _ in mapped], n, start, truncated)
    return result


def _place_gradients(op: Any, inputs: list[Variable], outputs: list[Variable], output_grads: list[Variable], node: Any,
                     result: list[Variable], states: list[int], non_seqs: list[int], seqs: list[int], n: Variable,
                     start: Variable, truncated: bool) -> None:
    """Fill ``result`` from the backward node's outputs: each state's accumulator, then each non-sequence's sum
    (one buffer each: the last entry is the answer), then each sequence's per-iteration gradients."""
    import symlab.tensor as st

    info = op.info
    o_sl = info.outer_slices()
    for pos, j in enumerate(states):
        w = info.window(j)
        window_grad = node.outputs[pos][-1]  # the gradient sent to buffer entries [start, start + w)
        if truncated:  # only the part of it that falls in the initial window [0, w)
            pad = st.minimum(start, w)
            shape = [pad, *(outputs[j].shape[a] for a in range(1, outputs[j].ndim))]
            window_grad = st.concatenate([st.zeros(shape, dtype=window_grad.dtype), window_grad[: w - pad]])
        if _live(output_grads[j]):
            window_grad = window_grad + output_grads[j][:w]
        init = inputs[o_sl["states"].start + j]
        if init.type.shape[0] != w:  # the loop reads the last w entries of a longer initial value
            window_grad = st.set_subtensor(st.zeros_like(init)[init.shape[0] - w :], window_grad)
        result[o_sl["states"].start + j] = window_grad
    for pos, p in enumerate(non_seqs):
        result[o_sl["non_seqs"].start + p] = node.outputs[len(states) + pos][-1]
    for pos, q in enumerate(seqs):
        seq = inputs[o_sl["seqs"].start + q]
        per_step = node.outputs[len(states) + len(non_seqs) + pos][::-1]
        result[o_sl["seqs"].start + q] = st.set_subtensor(st.zeros_like(seq)[start:n], per_step)


def _tap_rows(info: ScanInfo) -> list[list[int]]:
    """Per state, the positions of its taps among the inner inputs."""
    rows, k = [], info.inner_slices()["states"].start
    for taps in info.state_taps:
        rows.append(list(range(k, k + len(taps))))
        k += len(taps)
    return rows


def _reached_states(info: ScanInfo, inner: list[list[bool]], tap_rows: list[list[int]], given: list[bool],
                    differentiable: list[bool], live_mapped: list[int]) -> list[int]:
    """The states backpropagation goes through: those given a gradient, and those whose taps reach one of them
    (or a mapped output given a gradient) through the body, closed over the recurrence."""
    reached = {j for j in range(info.n_states) if given[j]}
    changed = True
    while changed:
        changed = False
        sinks = [*reached, *(info.n_states + m for m in live_mapped)]
        for j in range(info.n_states):
            if j not in reached and differentiable[j] and any(inner[r][o] for r in tap_rows[j] for o in sinks):
                reached.add(j)
                changed = True
    return sorted(reached)


def _label(op: Any, inner_position: int) -> str:
    labels = op.input_labels
    return labels[inner_position] if labels is not None and inner_position < len(labels) else f"in{inner_position}"


def _out_label(op: Any, position: int) -> str:
    labels = op.output_labels
    return labels[position] if labels is not None and position < len(labels) else f"out{position}"


def scan_rop(op: Any, inputs: list[Variable], eval_points: list[Variable | None]) -> list[Variable | None]:
    """The forward derivative of a scan node: a scan carrying each tangent beside its value."""
    from symlab.scan.gradient_rop import scan_rop as rop

    return rop(op, inputs, eval_points)


__all__ = ["scan_lop", "scan_rop"]
