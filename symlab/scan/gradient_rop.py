"""The forward derivative (``R_op``) of a ``Scan``: one loop carrying each tangent beside its value.

As in PyTensor, the pushforward of a loop is a new loop over the same iterations whose body is the old
body followed by its pushforward (each op's ``R_op``): the tangents of the sequences are extra
sequences, the tangents of the states extra states with the same taps (starting from the tangents of
the initial windows), the tangents of the mapped outputs extra mapped outputs, of the carried values
extra carried values, of the non-sequences extra non-sequences. A missing tangent is zero. The tangent
of each of the node's outputs is the matching output of the new node (``None`` for one that is not a
floating-point tensor: a random generator, an integer).

>>> import numpy as np
>>> import symlab
>>> import symlab.tensor as st
>>> from symlab.gradient import pushforward
>>> x, v = st.dvector("x"), st.dvector("v")
>>> total, _ = symlab.scan(lambda x_t, acc: acc + x_t ** 2, sequences=x, outputs_info=st.constant(0.0))
>>> jv = pushforward(total, x, v, use_op_pushforward=True)
>>> jv.eval({x: np.array([1.0, 2.0]), v: np.array([1.0, 1.0])}).tolist()
[2.0, 6.0]
"""

from __future__ import annotations

from typing import Any

from symlab.graph.basic import Variable
from symlab.graph.traversal import clone_get_equiv
from symlab.scan.info import ScanInfo
from symlab.tensor.type import TensorType


def _is_float(var: Variable) -> bool:
    return isinstance(var.type, TensorType) and var.type.dtype.startswith(("float", "complex"))


def scan_rop(op: Any, inputs: list[Variable], eval_points: list[Variable | None]) -> list[Variable | None]:
    """The tangent of each output of a scan node, given the tangents of its inputs (``None``: zero)."""
    import symlab.tensor as st
    from symlab.gradient.products import pushforward

    info, fg = op.info, op.fgraph
    if all(p is None for p in eval_points[1:]):
        return [None] * info.n_outputs
    o_sl, i_sl, out_sl = info.outer_slices(), info.inner_slices(), info.output_slices()
    equiv = clone_get_equiv(fg.inputs, fg.outputs, copy_inputs=True, copy_orphans=False)
    f_in = [equiv[v] for v in fg.inputs]
    f_out = [equiv[v] for v in fg.outputs]
    labels = op.input_labels or [f"in{k}" for k in range(len(f_in))]
    out_labels = op.output_labels or [f"out{k}" for k in range(len(f_out))]

    # one tangent stand-in per floating inner input; its outer value is the eval point (or zeros)
    tangent_in: dict[Variable, Variable] = {}
    for k, v in enumerate(f_in):
        if _is_float(v):
            tangent_in[v] = v.type(f"d {labels[k]}")

    def outer_tangent(pos: int) -> Variable:
        p = eval_points[pos]
        return st.zeros_like(inputs[pos]) if p is None else p

    moving = [v for v in f_in if v in tangent_in]
    float_outs = [o for k, o in enumerate(f_out[: info.n_outputs]) if _is_float(o)]
    tangents = pushforward(float_outs, moving, [tangent_in[v] for v in moving], disconnected_outputs="ignore",
                           return_disconnected="zero", use_op_pushforward=True) if float_outs and moving else []
    tangent_of = {id(o): st.cast(t, o.type.dtype) for o, t in zip(float_outs, tangents)}

    def group(sl: slice) -> list[int]:
        return list(range(sl.start, sl.stop))

    # the new layout: each group followed by its tangents
    seqs = group(i_sl["seqs"])
    d_seqs = [k for k in seqs if f_in[k] in tangent_in]
    states = list(range(info.n_states))
    d_states = [j for j in states if _is_float(f_out[j])]
    tap_rows, r = [], i_sl["states"].start
    for taps in info.state_taps:
        tap_rows.append(list(range(r, r + len(taps))))
        r += len(taps)
    mapped = group(out_sl["mapped"])
    d_mapped = [m for m in mapped if _is_float(f_out[m])]
    carried = list(range(info.n_untraced))
    d_carried = [c for c in carried if f_in[i_sl["untraced"].start + c] in tangent_in]
    non_seqs = group(i_sl["non_seqs"])
    d_non_seqs = [k for k in non_seqs if f_in[k] in tangent_in]

    inner_in = [*(f_in[k] for k in seqs), *(tangent_in[f_in[k]] for k in d_seqs),
                *(f_in[r] for j in states for r in tap_rows[j]), *(tangent_in[f_in[r]] for j in d_states for r in tap_rows[j]),
                *f_in[i_sl["untraced"]], *(tangent_in[f_in[i_sl["untraced"].start + c]] for c in d_carried),
                *(f_in[k] for k in non_seqs), *(tangent_in[f_in[k]] for k in d_non_seqs)]
    untraced_out = group(out_sl["untraced"])
    inner_out = [*(f_out[j] for j in states), *(tangent_of[id(f_out[j])] for j in d_states),
                 *(f_out[m] for m in mapped), *(tangent_of[id(f_out[m])] for m in d_mapped),
                 *(f_out[u] for u in untraced_out), *(tangent_of[id(f_out[out_sl["untraced"].start + c])] for c in d_carried),
                 *f_out[info.n_outputs:]]
    in_labels = [*(labels[k] for k in seqs), *(f"d {labels[k]}" for k in d_seqs),
                 *(labels[r] for j in states for r in tap_rows[j]), *(f"d {labels[r]}" for j in d_states for r in tap_rows[j]),
                 *labels[i_sl["untraced"]], *(f"d {labels[i_sl['untraced'].start + c]}" for c in d_carried),
                 *(labels[k] for k in non_seqs), *(f"d {labels[k]}" for k in d_non_seqs)]
    new_out_labels = [*(out_labels[j] for j in states), *(f"d {out_labels[j]}" for j in d_states),
                      *(out_labels[m] for m in mapped), *(f"d {out_labels[m]}" for m in d_mapped),
                      *(out_labels[u] for u in untraced_out),
                      *(f"d {out_labels[out_sl['untraced'].start + c]}" for c in d_carried), *out_labels[info.n_outputs:]]
    kept = info.kept
    new_info = ScanInfo(
        n_seqs=len(seqs) + len(d_seqs),
        state_taps=tuple(info.state_taps) + tuple(info.state_taps[j] for j in d_states),
        n_mapped=len(mapped) + len(d_mapped),
        n_untraced=len(carried) + len(d_carried),
        n_non_seqs=len(non_seqs) + len(d_non_seqs),
        as_while=info.as_while,
        truncate_gradient=info.truncate_gradient,
        kept=(*kept[: info.n_states], *(kept[j] for j in d_states), *kept[info.n_states:],
              *(kept[m] for m in d_mapped)),
    )
    new_op = type(op)(inner_in, inner_out, new_info, name=None if op.user_name is None else f"rop_of_{op.user_name}",
                  input_labels=in_labels, output_labels=new_out_labels, mode=op.mode)
    outer = [inputs[0], *inputs[o_sl["seqs"]], *(outer_tangent(o_sl["seqs"].start + k) for k in d_seqs),
             *inputs[o_sl["states"]], *(outer_tangent(o_sl["states"].start + j) for j in d_states),
             *inputs[o_sl["untraced"]], *(outer_tangent(o_sl["untraced"].start + c) for c in d_carried),
             *inputs[o_sl["non_seqs"]], *(outer_tangent(o_sl["non_seqs"].start + k - i_sl["non_seqs"].start)
                                          for k in d_non_seqs)]
    node = new_op.make_node(*outer)
    outs = node.outputs
    result: list[Variable | None] = [None] * info.n_outputs
    for pos, j in enumerate(d_states):
        result[j] = outs[info.n_states + pos]
    base = info.n_states + len(d_states) + info.n_mapped
    for pos, m in enumerate(d_mapped):
        result[m] = outs[base + pos]
    base = info.n_states + len(d_states) + info.n_mapped + len(d_mapped) + info.n_untraced
    for pos, c in enumerate(d_carried):
        result[out_sl["untraced"].start + c] = outs[base + pos]
    return result


__all__ = ["scan_rop"]
