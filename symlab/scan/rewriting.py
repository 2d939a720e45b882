"""The structural rewrites of ``Scan`` nodes, registered in the rewrite database on ``import symlab.scan``.

PyTensor's scan rewrites that matter for a loop's cost, each a named rule recorded in the trace (tag
``scan``; all in ``fast_run``, none in ``fast_compile``, as in PyTensor):

``scan_remove_unused`` (canonicalize)
    drops what a loop computes or receives for nothing: a state whose buffer nothing reads and whose
    taps no other output needs, a mapped output nobody reads, a carried value nobody reads, a
    sequence or non-sequence the body does not read, and a sequence or non-sequence given twice (one
    inner input reads both). PyTensor's ``scan_remove_unused`` / ``scan_merge_duplicate_inputs``.
``scan_push_out_non_seq`` (canonicalize)
    computation of the body that depends only on non-sequences and constants is the same at every
    iteration: it is computed once, before the loop, and passed in as a new non-sequence.
``scan_push_out_seq`` (canonicalize, :mod:`symlab.scan.rewriting_push_seq`)
    an elementwise node of sequence entries, non-sequences and constants is computed once on the whole
    sequences, before the loop, and read as a new sequence.
``scan_merge`` (stabilize: after canonicalize, before specialize, as PyTensor's ``scan_eqopt2``)
    two loops over the same ``n_steps`` (neither a while loop, the same ``truncate_gradient``), neither
    needing the other's outputs, become one loop (sequences and non-sequences they share are read once).
``scan_save_mem`` (stabilize, :mod:`symlab.scan.rewriting_memory`)
    a buffer whose every reader reads only its last entries is kept as a ring of that many entries
    (``info.kept``), its readers re-indexed onto the shorter buffer.

>>> import symlab
>>> import symlab.tensor as st
>>> from symlab.scan import Scan
>>> x, w = st.dvector("x"), st.dscalar("w")
>>> ys, _ = symlab.scan(lambda v, acc, w: acc + v * st.exp(w), sequences=x, outputs_info=st.constant(0.0),
...                     non_sequences=w)
>>> f = symlab.function([x, w], ys[-1], mode="NUMPY")
>>> sorted({s.rule for s in f.trace if s.accepted and s.rule.startswith("scan_") and s.rule != "scan_inner_graph"})
['scan_push_out_non_seq', 'scan_push_out_seq', 'scan_remove_unused', 'scan_save_mem']
>>> node = next(n for n in f.maker.fgraph.toposort() if isinstance(n.op, Scan))
>>> [any("exp" in str(n.op) for n in g.toposort()) for g in (node.op.fgraph, f.maker.fgraph)], node.op.info.kept
([False, True], (1,))
>>> float(f([1.0, 2.0, 3.0], 0.0))
6.0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Constant, Variable
from symlab.graph.fg import FunctionGraph
from symlab.graph.traversal import ancestors, clone_replace
from symlab.rewriting.basic import GraphRewriter
from symlab.rewriting.context import RewriteContext
from symlab.rewriting.db import register
from symlab.scan.info import ScanInfo
from symlab.scan.op import Scan

#: The phase of ``scan_merge`` and ``scan_save_mem``: after canonicalize, before specialize (PyTensor runs them
#: at 1.6, between its stabilize at 1.5 and specialize at 2; a phase of their own would add a phase to every
#: query, so they run within stabilize).
LATE_PHASE = "stabilize"


# ------------------------------------------------------------------------------------------------
# Reading a node's layout
# ------------------------------------------------------------------------------------------------
def input_labels(op: Scan) -> list[str]:
    """The labels of the body's inputs (``x[t]``, ``h[t-1]``, a non-sequence's name)."""
    return [op._in_label(k) for k in range(len(op.fgraph.inputs))]


def output_labels(op: Scan) -> list[str]:
    """The labels of the body's outputs."""
    return [op._out_label(k) for k in range(len(op.fgraph.outputs))]


def tap_positions(info: ScanInfo, state: int) -> list[int]:
    """The positions among the inner inputs of the taps of state ``state``."""
    start = info.inner_slices()["states"].start + sum(len(t) for t in info.state_taps[:state])
    return list(range(start, start + len(info.state_taps[state])))


def same_n_steps(a: Variable, b: Variable) -> bool:
    """Whether two ``n_steps`` inputs are the same (the same variable, or equal constants)."""
    if a is b:
        return True
    return isinstance(a, Constant) and isinstance(b, Constant) and int(a.data) == int(b.data)


def rebuild(
    node: Apply,
    *,
    seqs: Sequence[int],
    states: Sequence[int],
    mapped: Sequence[int],
    untraced: Sequence[int],
    non_seqs: Sequence[int],
    extra_seqs: Sequence[tuple[Variable, Variable, str]] = (),
    extra_non_seqs: Sequence[tuple[Variable, Variable, str]] = (),
    inner_replace: dict[Variable, Variable] | None = None,
) -> tuple[Apply, dict[int, Variable]]:
    """A scan node keeping the listed parts of ``node``'s loop (indices within each group), and more inputs.

    ``extra_seqs`` and ``extra_non_seqs`` are ``(inner input, outer value, label)`` appended to the
    sequences and to the non-sequences;
    ``inner_replace`` replaces variables of the body (by other inner inputs, or by the new ones). Returns
    the new node and, for each kept output of ``node`` (by its index), the new node's output.
    """
    op, info = node.op, node.op.info
    fg = op.fgraph
    s, o = info.inner_slices(), info.outer_slices()
    in_labels, out_labels = input_labels(op), output_labels(op)
    in_idx = [s["seqs"].start + k for k in seqs]
    n_first = len(in_idx)  # the extra sequences come after these
    for j in states:
        in_idx += tap_positions(info, j)
    in_idx += [s["untraced"].start + k for k in untraced]
    in_idx += [s["non_seqs"].start + k for k in non_seqs]
    out_idx = [*states, *(info.n_states + k for k in mapped), *(info.n_states + info.n_mapped + k for k in untraced)]
    if info.as_while:
        out_idx.append(len(fg.outputs) - 1)
    inner_outputs = [fg.outputs[k] for k in out_idx]
    if inner_replace:
        inner_outputs = list(clone_replace(inner_outputs, inner_replace))
    inner_inputs = [fg.inputs[k] for k in in_idx[:n_first]] + [v for v, _, _ in extra_seqs]
    inner_inputs += [fg.inputs[k] for k in in_idx[n_first:]] + [v for v, _, _ in extra_non_seqs]
    new_info = info.replace(
        n_seqs=len(seqs) + len(extra_seqs),
        state_taps=tuple(info.state_taps[j] for j in states),
        n_mapped=len(mapped),
        n_untraced=len(untraced),
        n_non_seqs=len(non_seqs) + len(extra_non_seqs),
        kept=tuple([info.kept[j] for j in states] + [info.kept[info.n_states + k] for k in mapped]),
    )
    new_op = Scan(inner_inputs, inner_outputs, new_info, name=op.user_name, mode=op.mode,
                  input_labels=[in_labels[k] for k in in_idx[:n_first]] + [label for _, _, label in extra_seqs]
                  + [in_labels[k] for k in in_idx[n_first:]] + [label for _, _, label in extra_non_seqs],
                  output_labels=[out_labels[k] for k in out_idx])
    outer = [node.inputs[0]]
    outer += [node.inputs[o["seqs"].start + k] for k in seqs]
    outer += [v for _, v, _ in extra_seqs]
    outer += [node.inputs[o["states"].start + j] for j in states]
    outer += [node.inputs[o["untraced"].start + k] for k in untraced]
    outer += [node.inputs[o["non_seqs"].start + k] for k in non_seqs]
    outer += [v for _, v, _ in extra_non_seqs]
    new_node = new_op.make_node(*outer)
    old_out = [*states, *(info.n_states + k for k in mapped), *(info.n_states + info.n_mapped + k for k in untraced)]
    return new_node, dict(zip(old_out, new_node.outputs))


def _clients(fgraph: FunctionGraph, var: Variable) -> list[Any]:
    return list(fgraph.clients.get(var, ()))


# ------------------------------------------------------------------------------------------------
# scan_remove_unused
# ------------------------------------------------------------------------------------------------
def _needed_states(node: Apply, fgraph: FunctionGraph) -> tuple[list[int], list[int], list[int]]:
    """The states, mapped outputs and carried values of ``node`` that something needs."""
    op, info = node.op, node.op.info
    fg = op.fgraph
    outs = info.output_slices()
    used = {k for k, out in enumerate(node.outputs) if _clients(fgraph, out)}
    mapped = [k for k in range(info.n_mapped) if outs["mapped"].start + k in used]
    # an unused state (or carried value) is still needed when another needed output reads its taps
    feeds: dict[int, list[int]] = {j: tap_positions(info, j) for j in range(info.n_states)}
    for k in range(info.n_untraced):
        feeds[outs["untraced"].start + k] = [info.inner_slices()["untraced"].start + k]
    needed = {k for k in used if k < info.n_outputs} | {outs["mapped"].start + k for k in mapped}
    if info.as_while:
        needed.add(len(fg.outputs) - 1)
    changed = True
    while changed:
        changed = False
        read = set(ancestors([fg.outputs[k] for k in needed]))
        for k, taps in feeds.items():
            if k not in needed and any(fg.inputs[t] in read for t in taps):
                needed.add(k)
                changed = True
    states = [j for j in range(info.n_states) if j in needed]
    untraced = [k for k in range(info.n_untraced) if outs["untraced"].start + k in needed]
    return states, mapped, untraced


def slim(node: Apply, fgraph: FunctionGraph | None) -> tuple[Apply, dict[int, Variable], list[str]] | None:
    """``node`` without what it computes or receives for nothing (see ``scan_remove_unused``), or None.

    With ``fgraph`` (the graph ``node`` is in), its outputs nobody reads are dropped; without it, only the
    inputs: unread ones and those given twice. Returns the new node, its outputs by the old outputs' indices,
    and what was dropped (said for the trace).
    """
    op, info = node.op, node.op.info
    fg = op.fgraph
    if fgraph is not None:
        states, mapped, untraced = _needed_states(node, fgraph)
    else:
        states, mapped, untraced = list(range(info.n_states)), list(range(info.n_mapped)), list(range(info.n_untraced))
    s, o = info.inner_slices(), info.outer_slices()
    kept_outputs = [fg.outputs[k] for k in (*states, *(info.n_states + k for k in mapped),
                                            *(info.n_states + info.n_mapped + k for k in untraced))]
    if info.as_while:
        kept_outputs.append(fg.outputs[-1])
    read = set(ancestors(kept_outputs))
    replace: dict[Variable, Variable] = {}
    dropped: list[str] = []

    def inputs_of(group: str, n: int) -> list[int]:
        first: dict[Variable, int] = {}
        keep = []
        for k in range(n):
            inner, outer = fg.inputs[s[group].start + k], node.inputs[o[group].start + k]
            label = op._in_label(s[group].start + k)
            if inner not in read:
                dropped.append(f"{label} (not read)")
            elif outer in first:  # the same outer value twice: one inner input reads it
                replace[inner] = fg.inputs[s[group].start + first[outer]]
                dropped.append(f"{label} (the same value as {op._in_label(s[group].start + first[outer])})")
            else:
                first[outer] = k
                keep.append(k)
        return keep

    seqs = inputs_of("seqs", info.n_seqs)
    non_seqs = inputs_of("non_seqs", info.n_non_seqs)
    for j in range(info.n_states):
        if j not in states:
            dropped.append(f"state {op._out_label(j)} (its buffer and taps unread)")
    for k in range(info.n_mapped):
        if k not in mapped:
            dropped.append(f"output {op._out_label(info.n_states + k)} (unread)")
    for k in range(info.n_untraced):
        if k not in untraced:
            dropped.append(f"carried value {op._out_label(info.n_states + info.n_mapped + k)} (unread)")
    if not dropped or not (states or mapped or untraced):
        return None  # nothing to drop, or nothing of the loop is read: it leaves with its last client
    new_node, new_outputs = rebuild(node, seqs=seqs, states=states, mapped=mapped, untraced=untraced,
                                    non_seqs=non_seqs, inner_replace=replace)
    return new_node, new_outputs, dropped


class RemoveUnused(GraphRewriter):
    """A loop drops its unread outputs and states, the inputs its body does not read, and inputs given twice"""

    def __init__(self) -> None:
        super().__init__("scan_remove_unused")

    def apply(self, fgraph: FunctionGraph, ctx: RewriteContext) -> bool:
        changed = False
        for node in [n for n in fgraph.toposort() if isinstance(n.op, Scan)]:
            found = slim(node, fgraph)
            if found is None:
                continue
            new_node, new_outputs, dropped = found
            pairs = [(node.outputs[k], v) for k, v in new_outputs.items() if _clients(fgraph, node.outputs[k])]
            reason = f"{node.op} drops {', '.join(dropped)}"
            changed = ctx.replace(self, pairs, node=node, reason=reason) or changed
        return changed


scan_remove_unused = RemoveUnused()


# ------------------------------------------------------------------------------------------------
# scan_push_out_non_seq
# ------------------------------------------------------------------------------------------------
def _invariant_nodes(op: Scan) -> list[Apply]:
    """The body's nodes computed from non-sequences and constants only (at least one non-sequence)."""
    info, fg = op.info, op.fgraph
    invariant: set[Variable] = set(fg.inputs[info.inner_slices()["non_seqs"]])
    found = []
    for n in fg.toposort():
        if n.op.destroy_map or not n.inputs:
            continue
        if all(isinstance(i, Constant) or i in invariant for i in n.inputs) and not all(
                isinstance(i, Constant) for i in n.inputs):
            found.append(n)
            invariant.update(n.outputs)
    return found


def _short(op: Any) -> str:
    scalar = getattr(op, "scalar_op", None)
    return str(scalar) if scalar is not None and not getattr(op, "has_inner_graph", False) else str(op).split("{")[0]


def describe_inner(var: Variable, labels: dict[Variable, str], depth: int = 3) -> str:
    """``sum(exp(w))``: an inner variable written out from the body's inputs (their labels), ``depth`` levels."""
    if var in labels:
        return labels[var]
    if isinstance(var, Constant):
        data = var.data
        return str(data) if isinstance(data, int | float | np.generic) or getattr(data, "ndim", None) == 0 else "constant"
    if var.owner is None:
        return str(var)
    if depth == 0:
        return "…"
    args = ", ".join(describe_inner(i, labels, depth - 1) for i in var.owner.inputs)
    return f"{_short(var.owner.op)}({args})"


class PushOutNonSeq(GraphRewriter):
    """Computation of a loop's body that depends only on non-sequences is done once, before the loop"""

    def __init__(self) -> None:
        super().__init__("scan_push_out_non_seq")

    def apply(self, fgraph: FunctionGraph, ctx: RewriteContext) -> bool:
        changed = False
        for node in [n for n in fgraph.toposort() if isinstance(n.op, Scan)]:
            if node not in fgraph.apply_nodes:  # replaced by an earlier change of this pass
                continue
            changed = self._push(fgraph, node, ctx) or changed
        return changed

    def _push(self, fgraph: FunctionGraph, node: Apply, ctx: RewriteContext) -> bool:
        op, info = node.op, node.op.info
        fg = op.fgraph
        nodes = _invariant_nodes(op)
        if not nodes:
            return False
        inside = set(nodes)
        frontier: list[Variable] = []
        for n in nodes:
            for out in n.outputs:
                for client, _ in fg.clients.get(out, ()):
                    if client == "output" or client not in inside:
                        frontier.append(out)
                        break
        s, o = info.inner_slices(), info.outer_slices()
        to_outer = dict(zip(fg.inputs[s["non_seqs"]], node.inputs[o["non_seqs"]]))
        outer_values = clone_replace(frontier, to_outer)
        labels = dict(zip(fg.inputs, input_labels(op)))
        extra = []
        replace: dict[Variable, Variable] = {}
        for var, outer in zip(frontier, outer_values):
            label = describe_inner(var, labels)
            fresh = var.type(var.name)
            replace[var] = fresh
            extra.append((fresh, outer, label))
        new_node, new_outputs = rebuild(
            node, seqs=range(info.n_seqs), states=range(info.n_states), mapped=range(info.n_mapped),
            untraced=range(info.n_untraced), non_seqs=range(info.n_non_seqs), extra_non_seqs=extra,
            inner_replace=replace)
        pairs = {node.outputs[k]: v for k, v in new_outputs.items()}
        reason = (f"{op}: computed once before the loop, passed in as non-sequences: "
                  f"{', '.join(label for _, _, label in extra)}")
        return ctx.replace(self, pairs, node=node, reason=reason)


scan_push_out_non_seq = PushOutNonSeq()


# ------------------------------------------------------------------------------------------------
# scan_merge
# ------------------------------------------------------------------------------------------------
def _depends(node: Apply, on: Apply) -> bool:
    outs = set(on.outputs)
    return any(v in outs for v in ancestors(node.inputs))


def mergeable(a: Apply, b: Apply) -> bool:
    """Whether the scan nodes ``a`` and ``b`` can run as one loop (see ``scan_merge``)."""
    ia, ib = a.op.info, b.op.info
    return (same_n_steps(a.inputs[0], b.inputs[0]) and not ia.as_while and not ib.as_while
            and ia.truncate_gradient == ib.truncate_gradient and not _depends(a, b) and not _depends(b, a))


def merge_nodes(a: Apply, b: Apply) -> tuple[Apply, list[Variable]]:
    """One scan node running the loops of ``a`` and ``b`` together; and its outputs for ``a``'s then ``b``'s."""
    ops = [a.op, b.op]
    infos = [op.info for op in ops]
    fgs = [op.fgraph for op in ops]
    labels_in = [input_labels(op) for op in ops]
    labels_out = [output_labels(op) for op in ops]
    inner_in: list[Variable] = []
    inner_out: list[Variable] = []
    in_labels: list[str] = []
    out_labels: list[str] = []
    outer: list[Variable] = [a.inputs[0]]
    for group in ("seqs", "states", "untraced", "non_seqs"):
        for node, info, fg, labels in zip((a, b), infos, fgs, labels_in):
            s, o = info.inner_slices(), info.outer_slices()
            inner_in += fg.inputs[s[group]]
            in_labels += labels[s[group]]
            outer += node.inputs[o[group]]
    for group in ("states", "mapped", "untraced"):
        for info, fg, labels in zip(infos, fgs, labels_out):
            sl = info.output_slices()[group]
            inner_out += fg.outputs[sl]
            out_labels += labels[sl]
    ia, ib = infos
    info = ScanInfo(
        n_seqs=ia.n_seqs + ib.n_seqs, state_taps=ia.state_taps + ib.state_taps, n_mapped=ia.n_mapped + ib.n_mapped,
        n_untraced=ia.n_untraced + ib.n_untraced, n_non_seqs=ia.n_non_seqs + ib.n_non_seqs,
        truncate_gradient=ia.truncate_gradient,
        kept=ia.kept[: ia.n_states] + ib.kept[: ib.n_states] + ia.kept[ia.n_states :] + ib.kept[ib.n_states :],
    )
    names = [op.user_name for op in ops]
    name = None if names == [None, None] else "&".join("scan_fn" if n is None else n for n in names)
    merged = Scan(inner_in, inner_out, info, name=name, mode=ops[0].mode, input_labels=in_labels,
                  output_labels=out_labels).make_node(*outer)
    # the merged outputs, back in the order of a's outputs then b's
    position: dict[tuple[int, str, int], Variable] = {}
    it = iter(merged.outputs)
    for group in ("states", "mapped", "untraced"):
        for which, inf in enumerate(infos):
            sl = inf.output_slices()[group]
            for k in range(sl.stop - sl.start):
                position[(which, group, k)] = next(it)
    result = []
    for which, inf in enumerate(infos):
        for group in ("states", "mapped", "untraced"):
            sl = inf.output_slices()[group]
            result += [position[(which, group, k)] for k in range(sl.stop - sl.start)]
    return merged, result


class ScanMerge(GraphRewriter):
    """Two loops over the same n_steps, neither needing the other, become one loop"""

    def __init__(self) -> None:
        super().__init__("scan_merge")

    def apply(self, fgraph: FunctionGraph, ctx: RewriteContext) -> bool:
        nodes = [n for n in fgraph.toposort() if isinstance(n.op, Scan)]
        for k, first in enumerate(nodes):
            for other in nodes[k + 1 :]:
                if not mergeable(first, other):
                    continue
                merged, outputs = merge_nodes(first, other)
                slimmer = slim(merged, None)  # the sequences and non-sequences they share, read once
                if slimmer is not None:  # slimmer[1] is by position among the merged node's outputs
                    position = {out: k for k, out in enumerate(merged.outputs)}
                    outputs = [slimmer[1][position[out]] for out in outputs]
                    merged = slimmer[0]
                pairs = [(old, new) for old, new in zip([*first.outputs, *other.outputs], outputs)
                         if _clients(fgraph, old)]
                reason = f"{first.op} and {other.op} run {first.inputs[0]} iterations each: one loop {merged.op}"
                if ctx.replace(self, pairs, node=other, reason=reason):
                    return True
        return False


scan_merge = ScanMerge()

register(scan_remove_unused, "canonicalize", "scan", name="scan_remove_unused")
register(scan_push_out_non_seq, "canonicalize", "scan", "scan_pushout", name="scan_push_out_non_seq")
register(scan_merge, LATE_PHASE, "scan", name="scan_merge")

__all__ = [
    "LATE_PHASE",
    "PushOutNonSeq",
    "RemoveUnused",
    "ScanMerge",
    "describe_inner",
    "input_labels",
    "merge_nodes",
    "mergeable",
    "output_labels",
    "rebuild",
    "same_n_steps",
    "scan_merge",
    "scan_push_out_non_seq",
    "scan_remove_unused",
    "slim",
    "tap_positions",
]
