"""``scan_push_out_seq``: elementwise work on a loop's sequences is done once, on the whole sequence, before it.

An ``Elemwise`` node of the body whose inputs are sequence entries (``x[t]``), non-sequences and constants
computes, at iteration ``t``, entry ``t`` of the same ``Elemwise`` applied to the whole sequence (the
non-sequences and constants broadcast along the iterations). The rule (canonicalize, tag ``scan``, as
PyTensor's rule of the name) computes it so, before the loop, on the first ``n_steps`` entries of each
sequence, and gives the result to the loop as a new sequence: one vectorised operation instead of
``n_steps`` small ones. Applied again, a chain of such nodes leaves the loop node by node; the sequences the
body no longer reads are then dropped by ``scan_remove_unused``.

>>> import symlab
>>> import symlab.tensor as st
>>> from symlab.rewriting import rewrite_graph
>>> from symlab.scan import Scan
>>> x = st.dvector("x")
>>> ys, _ = symlab.scan(lambda v, acc: acc + st.exp(v), sequences=x, outputs_info=st.constant(0.0))
>>> out, trace = rewrite_graph(ys, include=("scan_push_out_seq",))
>>> node = next(n for n in trace.fgraph.toposort() if isinstance(n.op, Scan))
>>> [s.reason for s in trace if s.accepted], node.op.inner_sections(node)[0].extra["input_labels"]
(['Scan{scan_fn}: computed on the whole sequences before the loop: exp(x[t])'], ['x[t]', 'exp(x[t])', 'out0[t-1]'])
>>> symlab.function([x], ys, mode="NUMPY")([0.0, 0.0, 0.0]).tolist()
[1.0, 2.0, 3.0]
"""

from __future__ import annotations

from symlab.graph.basic import Apply, Constant, Variable
from symlab.graph.fg import FunctionGraph
from symlab.rewriting.basic import GraphRewriter
from symlab.rewriting.context import RewriteContext
from symlab.rewriting.db import register
from symlab.scan.op import Scan
from symlab.scan.rewriting import describe_inner, input_labels, rebuild
from symlab.tensor.elemwise import Elemwise


def pushable_seq_nodes(op: Scan) -> list[Apply]:
    """The body's ``Elemwise`` nodes computed from sequence entries (one at least), non-sequences and constants."""
    info, fg = op.info, op.fgraph
    s = info.inner_slices()
    seqs, non_seqs = set(fg.inputs[s["seqs"]]), set(fg.inputs[s["non_seqs"]])
    found = []
    for n in fg.toposort():
        if not isinstance(n.op, Elemwise) or n.op.destroy_map or len(n.outputs) != 1:
            continue
        if all(isinstance(i, Constant) or i in seqs or i in non_seqs for i in n.inputs) and any(i in seqs for i in n.inputs):
            found.append(n)
    return found


class PushOutSeq(GraphRewriter):
    """Elementwise work on a loop's sequence entries is done once on the whole sequences, before the loop"""

    def __init__(self) -> None:
        super().__init__("scan_push_out_seq")

    def apply(self, fgraph: FunctionGraph, ctx: RewriteContext) -> bool:
        changed = False
        for node in [n for n in fgraph.toposort() if isinstance(n.op, Scan)]:
            if node in fgraph.apply_nodes:
                changed = self._push(fgraph, node, ctx) or changed
        return changed

    def _push(self, fgraph: FunctionGraph, node: Apply, ctx: RewriteContext) -> bool:
        import symlab.tensor as st

        op, info = node.op, node.op.info
        nodes = pushable_seq_nodes(op)
        if not nodes:
            return False
        fg = op.fgraph
        s, o = info.inner_slices(), info.outer_slices()
        n_steps = node.inputs[0]
        whole: dict[Variable, Variable] = {}
        for inner, outer in zip(fg.inputs[s["seqs"]], node.inputs[o["seqs"]]):
            whole[inner] = outer[:n_steps]
        for inner, outer in zip(fg.inputs[s["non_seqs"]], node.inputs[o["non_seqs"]]):
            whole[inner] = st.expand_dims(outer, 0)  # the same value at every iteration: broadcast
        labels = dict(zip(fg.inputs, input_labels(op)))
        extra = []
        replace: dict[Variable, Variable] = {}
        for n in nodes:
            args = [whole[i] if i in whole else st.expand_dims(i, 0) for i in n.inputs]
            outer = n.op(*args)
            if outer.type.dtype != n.outputs[0].type.dtype:
                # a 0-d constant does not upcast in the body (2 / x of float32 x is float32); a stacked one would:
                # the node stays in the loop
                continue
            fresh = n.outputs[0].type(n.outputs[0].name)
            replace[n.outputs[0]] = fresh
            extra.append((fresh, outer, describe_inner(n.outputs[0], labels)))
        if not extra:
            return False
        new_node, new_outputs = rebuild(
            node, seqs=range(info.n_seqs), states=range(info.n_states), mapped=range(info.n_mapped),
            untraced=range(info.n_untraced), non_seqs=range(info.n_non_seqs), extra_seqs=extra,
            inner_replace=replace)
        pairs = {node.outputs[k]: v for k, v in new_outputs.items()}
        reason = f"{op}: computed on the whole sequences before the loop: {', '.join(e[2] for e in extra)}"
        return ctx.replace(self, pairs, node=node, reason=reason)


scan_push_out_seq = register(PushOutSeq(), "canonicalize", "scan", "scan_pushout", name="scan_push_out_seq")

__all__ = ["PushOutSeq", "pushable_seq_nodes", "scan_push_out_seq"]
