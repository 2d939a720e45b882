"""``scan_save_mem``: a loop keeps only the last entries of a buffer that its readers need (``info.kept``).

A state's buffer holds its initial window then one entry per iteration; a mapped output one entry per
iteration. When every reader of such a buffer reads only its last entries, the loop keeps a ring of that
many (at least the state's window, which the next iteration reads): memory of the tail instead of
``n_steps`` entries. The readers this rule understands (constant indices, on the first dimension):

- ``buf[i]`` with ``i < 0`` (needs ``-i`` entries) and ``buf[a:]``, ``buf[a:b]`` with ``a < 0`` and
  ``b`` ``None`` or negative (needs ``-a``): on the shorter buffer they read the same entries, as it
  is a tail of the buffer at least that long;
- ``buf[s:]`` with ``s >= 0`` (what ``scan`` returns: the buffer without its initial window) whose own
  readers are all of the first kind: that view becomes the same tail of the shorter buffer,
  ``kept_buf[max(0, len(kept_buf) - (len(buf) - s)):]``, so ``ys[-1]``, ``ys[-2:]`` read what they read.

Any other reader (``ys[0]``, ``ys`` itself, a function output, a gradient) needs the whole buffer: the
buffer is left whole. While loops are left alone (their length is known once they ran).

>>> import symlab
>>> import symlab.tensor as st
>>> from symlab.rewriting import rewrite_graph
>>> from symlab.scan import Scan
>>> x = st.dvector("x")
>>> ys, _ = symlab.scan(lambda v, acc: acc * v, sequences=x, outputs_info=st.constant(1.0))
>>> out, trace = rewrite_graph(ys[-2:], include=("scan_save_mem",))
>>> [s.rule for s in trace if s.accepted], next(n for n in trace.fgraph.toposort() if isinstance(n.op, Scan)).op.info.kept
(['scan_save_mem'], (2,))
>>> symlab.function([x], ys[-2:], mode="NUMPY")([2.0, 3.0, 4.0]).tolist()
[6.0, 24.0]
"""

from __future__ import annotations

from typing import Any

from symlab.graph.basic import Apply, Constant, Variable
from symlab.graph.fg import FunctionGraph
from symlab.rewriting.basic import GraphRewriter
from symlab.rewriting.context import RewriteContext
from symlab.rewriting.db import register
from symlab.scan.op import Scan
from symlab.scan.rewriting import LATE_PHASE
from symlab.tensor.subtensor import Subtensor


def tail_need(client: Any, position: int) -> int | None:
    """How many last entries the reader ``client`` (reading its input ``position``) needs, or None (not a tail)."""
    if client == "output" or type(client.op) is not Subtensor or position != 0 or not client.op.idx_list:
        return None
    first = client.op.idx_list[0]
    if isinstance(first, int) and not isinstance(first, bool):
        return -first if first < 0 else None
    if isinstance(first, tuple):
        start, stop, step = first
        if step not in (None, 1) or not isinstance(start, int) or start >= 0:
            return None
        if stop is None or (isinstance(stop, int) and stop < 0):
            return -start
    return None


def view_start(client: Any, position: int) -> int | None:
    """``s`` when ``client`` is ``buf[s:]`` with a constant ``s >= 0`` (and no other index), else None."""
    if client == "output" or type(client.op) is not Subtensor or position != 0 or len(client.op.idx_list) != 1:
        return None
    first = client.op.idx_list[0]
    if isinstance(first, tuple) and isinstance(first[0], int) and first[0] >= 0 and first[1] is None \
            and first[2] in (None, 1):
        return first[0]
    return None


def buffer_need(fgraph: FunctionGraph, out: Variable) -> tuple[int, list[tuple[Variable, int]]] | None:
    """How many last entries of the buffer ``out`` its readers need, and its views ``(view, s)``; None: all."""
    need = 0
    views: list[tuple[Variable, int]] = []
    for client, position in fgraph.clients.get(out, ()):
        k = tail_need(client, position)
        if k is not None:
            need = max(need, k)
            continue
        s = view_start(client, position)
        if s is None:
            return None
        view = client.outputs[0]
        readers = list(fgraph.clients.get(view, ()))
        if not readers:
            return None
        for reader, pos in readers:
            k = tail_need(reader, pos)
            if k is None:
                return None
            need = max(need, k)
        views.append((view, s))
    return need, views


class ScanSaveMem(GraphRewriter):
    """A loop keeps only the last entries of a buffer that its readers need"""

    def __init__(self) -> None:
        super().__init__("scan_save_mem")

    def apply(self, fgraph: FunctionGraph, ctx: RewriteContext) -> bool:
        changed = False
        for node in [n for n in fgraph.toposort() if isinstance(n.op, Scan) and not n.op.info.as_while]:
            changed = self._save(fgraph, node, ctx) or changed
        return changed

    def _save(self, fgraph: FunctionGraph, node: Apply, ctx: RewriteContext) -> bool:
        import symlab.tensor as st

        op, info = node.op, node.op.info
        n_steps = node.inputs[0]
        kept = list(info.kept)
        views: dict[int, list[tuple[Variable, int]]] = {}
        said = []
        for j in range(info.n_states + info.n_mapped):
            out = node.outputs[j]
            if not fgraph.clients.get(out):
                continue
            found = buffer_need(fgraph, out)
            if found is None:
                continue
            need, its_views = found
            window = info.window(j) if j < info.n_states else 0
            keep = max(need, window, 1)
            if kept[j] is not None and keep >= kept[j]:
                continue
            if isinstance(n_steps, Constant) and keep >= window + int(n_steps.data):
                continue  # the whole buffer is no longer
            kept[j] = keep
            views[j] = its_views
            said.append(f"{op._out_label(j)}: {keep} of its entries")
        if not views:
            return False
        new_node = op.clone_with_inner_graph(op.fgraph, info=info.replace(kept=tuple(kept))).make_node(*node.inputs)
        pairs: list[tuple[Variable, Variable]] = []
        n = st.cast(n_steps, "int64")
        for j, its_views in views.items():
            short = new_node.outputs[j]
            window = info.window(j) if j < info.n_states else 0
            for view, s in its_views:  # the same tail of the shorter buffer
                start = st.maximum(0, short.shape[0] - (n + (window - s)))
                pairs.append((view, short[start:]))
            if any(tail_need(c, p) is not None for c, p in fgraph.clients.get(node.outputs[j], ())):
                pairs.append((node.outputs[j], short))  # its direct readers (its views are replaced above)
        for k, (old, new) in enumerate(zip(node.outputs, new_node.outputs)):
            if k not in views and fgraph.clients.get(old):
                pairs.append((old, new))
        reason = f"{op} keeps the last entries its readers need: {'; '.join(said)}"
        return ctx.replace(self, pairs, node=node, reason=reason)


scan_save_mem = register(ScanSaveMem(), LATE_PHASE, "scan", name="scan_save_mem")

__all__ = ["ScanSaveMem", "buffer_need", "scan_save_mem", "tail_need", "view_start"]
