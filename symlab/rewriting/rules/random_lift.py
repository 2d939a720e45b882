"""The lifts of random variables (PyTensor's ``local_dimshuffle_rv_lift`` and ``local_subtensor_rv_lift``) and the
sidestep of unused draws (``sidestep_unused_rng_consumer``): all off unless included (see the table of
:mod:`~symlab.rewriting.rules.random`).

**The lifts** (PyTensor's ``local_dimshuffle_rv_lift`` and ``local_subtensor_rv_lift``, off unless included, as in
PyTensor, whose default pipeline does not run them either) move a ``DimShuffle`` or an index from the draw to its
parameters and ``size``: ``normal(mu, sigma, size=(2, 3)).T`` becomes a draw of shape ``(3, 2)`` from ``mu.T`` and
``sigma.T``, and ``normal(mu, sigma)[1:]`` a draw of fewer numbers. The distribution of every element is kept, but
not the values: the generator hands its numbers out in the order of the new draw (a transposed draw puts the k-th
number in another element), an indexed draw draws fewer numbers, and the generator ends in another state. Hence the
tag ``random_unsafe``. A ``DimShuffle`` that only adds size-1 axes keeps the values (its step says so). They never
duplicate a draw: a draw something else also reads (besides ``Shape``) is not lifted, since the two would then
disagree. They keep the generator chain: the new draw reads the same generator, and its next generator replaces the
old one wherever that was used (another draw, an update). Neither lifts an index or ``DimShuffle`` that touches a
distribution's support dimensions (a ``multivariate_normal``'s vector), nor an integer-array index (it may repeat an
element, which two independent draws cannot be: one of constant, distinct entries is lifted), nor a boolean mask
over a dimension some parameter broadcasts along.

>>> import numpy as np
>>> import symlab
>>> import symlab.tensor as pt
>>> from symlab.rewriting import rewrite_graph
>>> rng = pt.random.shared_rng(np.random.default_rng(123), name="rng")
>>> draw = pt.random.normal(pt.dvector("mu"), 1.0, size=(2, 3), rng=rng)
>>> out, trace = rewrite_graph(draw.T, include=("canonicalize", "random_lift"))
>>> out.owner.op, out.type.shape, trace.step(1).rule
(normal_rv{"(),()->()"}, (3, 2), 'local_dimshuffle_rv_lift')
>>> _, trace = rewrite_graph([draw.T, draw], include=("canonicalize", "random_lift"))
>>> print(trace.step(1).reason)
the draw normal_rv{"(),()->()"}.1 is also read by an output of the graph: a lifted draw would disagree with it

``sidestep_unused_rng_consumer`` (off unless included; PyTensor runs it by default) removes a draw whose numbers
nothing reads, handing its input generator on where its next generator was used: the draws after it change (they
get the numbers it would have taken), and so does the generator's state after an update. Exclude
``random_unsafe`` to keep PyTensor's value streams exactly; include it to let a graph skip draws it does not need:

>>> next_rng, unused = rng.normal(name="unused")
>>> final_rng, y = next_rng.normal(name="y")
>>> kept = symlab.function([], y, mode="NUMPY")
>>> skipped = symlab.function([], y, mode=symlab.compile.mode.get_mode("NUMPY").including("random_unsafe"))
>>> bool(kept() == np.random.default_rng(123).normal(size=2)[1]), bool(skipped() == np.random.default_rng(123).normal())
(True, True)
>>> [s.reason for s in skipped.trace.steps if s.rule == "sidestep_unused_rng_consumer"]
['nothing reads the draw unused: its generator rng is handed on unadvanced (the later draws change)']
"""

from __future__ import annotations

from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Constant, Variable
from symlab.graph.fg import FunctionGraph
from symlab.graph.traversal import ancestors
from symlab.rewriting.db import register
from symlab.rewriting.rules.random import (
    NodeResult,
    RandomNodeRule,
    Refusal,
    other_readers,
    redrawn,
    size_text,
    size_vector,
    used,
)
from symlab.tensor.conversion import constant
from symlab.tensor.elemwise import DimShuffle
from symlab.tensor.joining import vector_entry
from symlab.tensor.random.op import RandomVariable
from symlab.tensor.shape_inference import symbolic_shape
from symlab.tensor.shape_of import NoneTypeT
from symlab.tensor.subtensor import AdvancedSubtensor, Subtensor, getitem
from symlab.tensor.subtensor_index import substitute


# -- the lifts ---------------------------------------------------------------------------------------------------------
def _lift_source(fgraph: FunctionGraph, node: Apply) -> Apply | Refusal | None:
    """The random node whose draw ``node`` reads, if it may be lifted through (or why not)."""
    rv = node.inputs[0]
    rv_node = rv.owner
    if rv_node is None or not isinstance(rv_node.op, RandomVariable) or rv is not rv_node.outputs[1]:
        return None
    others = other_readers(fgraph, rv, node)
    if others:
        return Refusal(f"the draw {rv} is also read by {others[0]}: a lifted draw would disagree with it")
    return rv_node


class LocalDimShuffleRVLift(RandomNodeRule):
    """DimShuffle(draw(params, size)) -> draw(DimShuffle(params), DimShuffled size): the same distribution"""

    name = "local_dimshuffle_rv_lift"
    tracks = (DimShuffle,)

    def rewrite_node(self, fgraph: FunctionGraph, node: Apply) -> NodeResult:
        rv_node = _lift_source(fgraph, node)
        if not isinstance(rv_node, Apply):
            return rv_node
        ds = node.op
        op = rv_node.op
        _, size, *params = rv_node.inputs
        ndim = rv_node.outputs[1].type.ndim
        batch = ndim - op.ndim_supp
        if ds.drop:
            return Refusal(f"{ds} drops dimensions {list(ds.drop)} of the draw: not lifted (as PyTensor)")
        support = set(range(batch, ndim))
        order = ds.new_order
        moved = {d for k, d in enumerate(ds.shuffle) if d != k} | {k - op.ndim_supp for k in ds.augment}
        if op.ndim_supp and (moved & support or tuple(order[len(order) - op.ndim_supp:]) != tuple(range(batch, ndim))):
            return Refusal(f"{ds} moves the support dimensions of {op}: not lifted")
        batch_order = tuple(o for o in order if o not in support)
        if isinstance(size.type, NoneTypeT):
            new_size = size
        else:
            new_size = size_vector([constant(1, dtype="int64") if o == "x" else vector_entry(size, o)
                                    for o in batch_order])
        new_params = []
        for p, core in zip(params, op.ndims_params, strict=True):
            pattern = batch_order + tuple(range(batch, batch + core))
            new_params.append(p if pattern == tuple(range(p.type.ndim)) else DimShuffle(p.type.ndim, pattern)(p))
        _, pairs = redrawn(fgraph, rv_node, new_size, new_params, old_view=node.outputs[0])
        kept = [o for o in batch_order if o != "x"]
        values = ("the same numbers (only size-1 axes added)" if kept == sorted(kept)
                  else "the same distribution, other numbers (the generator fills the new order)")
        return pairs, f"{ds} of the draw lifted to its parameters and size {size_text(new_size)}: {values}"


def _consumed(entry: Any) -> int:
    """How many dimensions of the draw an index entry uses up (a boolean mask: its rank)."""
    return entry.type.ndim if isinstance(entry, Variable) and entry.type.dtype == "bool" else 1


def _full_slice(entry: Any) -> bool:
    return isinstance(entry, tuple) and all(f is None for f in entry)


def _repeats(entry: Variable, size: int | None) -> str | None:
    """Why an integer-array index may pick an element twice (None: its values are known and distinct)."""
    if not isinstance(entry, Constant):
        return "an integer-array index known only when running may repeat an element"
    values = np.asarray(entry.data).ravel().astype("int64")
    if np.any(values < 0):
        if size is None:
            return "an integer-array index with negative entries, on a dimension of unknown size, may repeat an element"
        values = np.where(values < 0, values + size, values)
    if np.unique(values).size != values.size:
        return f"the integer-array index {values.tolist()} repeats an element"
    return None


def _param_entry(entry: Any, dims: range, param: Variable, draw: Variable) -> Any:
    """One index entry applied to a parameter: on a size-1 dimension the draw broadcasts, the entry keeps that 1
    (a slice), drops it (an int: 0) or repeats it (an integer array: zeros); a mask there is refused by the caller."""
    degenerate = all(param.type.shape[d] == 1 and draw.type.shape[d] != 1 for d in dims)
    if isinstance(entry, tuple):
        return slice(None) if degenerate else slice(*entry)
    if isinstance(entry, Variable) and entry.type.ndim > 0:
        return constant(np.zeros(np.shape(entry.data), dtype="int64")) if degenerate else entry
    return 0 if degenerate else entry


class LocalSubtensorRVLift(RandomNodeRule):
    """draw(params, size)[idx] -> draw(params[idx], size of the result): fewer numbers, the same distribution"""

    name = "local_subtensor_rv_lift"
    tracks = (Subtensor, AdvancedSubtensor)

    def rewrite_node(self, fgraph: FunctionGraph, node: Apply) -> NodeResult:
        rv_node = _lift_source(fgraph, node)
        if not isinstance(rv_node, Apply):
            return rv_node
        index_op = node.op
        op = rv_node.op
        _, size, *params = rv_node.inputs
        draw = rv_node.outputs[1]
        batch = draw.type.ndim - op.ndim_supp
        entries = substitute(index_op.idx_list, node.inputs[1:])
        if any(e is None for e in entries):
            return Refusal(f"{index_op} of the draw adds an axis: not lifted")
        spans, d = [], 0
        for e in entries:
            spans.append(range(d, d + _consumed(e)))
            d += _consumed(e)
        while entries and spans[-1].stop > batch:  # the support dimensions may only be taken whole
            if not _full_slice(entries[-1]):
                return Refusal(f"{index_op} indexes the support dimensions of {op}: not lifted")
            entries, spans = entries[:-1], spans[:-1]
        for e, dims in zip(entries, spans):
            if not isinstance(e, Variable) or e.type.ndim == 0:
                continue
            if e.type.dtype != "bool":
                why = _repeats(e, draw.type.shape[dims.start])
                if why is not None:
                    return Refusal(f"{index_op} of the draw: {why} (two copies of one number cannot be two draws); "
                                   "not lifted")
            elif any(p.type.shape[k] == 1 and draw.type.shape[k] != 1 for p in params for k in dims):
                return Refusal(f"{index_op} of the draw: the boolean mask covers a dimension a parameter broadcasts "
                               "along (PyTensor lifts it through nonzero, symlab does not); not lifted")
        indexed = node.outputs[0]
        if isinstance(size.type, NoneTypeT):
            new_size = size
        else:
            shape = symbolic_shape(indexed)
            if {indexed, draw} & set(ancestors(list(shape))):
                return Refusal(f"the shape of {indexed} is known only by computing the draw: not lifted")
            new_size = size_vector(list(shape[: indexed.type.ndim - op.ndim_supp]))
        new_params = []
        for p in params:
            index = [_param_entry(e, dims, p, draw) for e, dims in zip(entries, spans)]
            new_params.append(getitem(p, tuple(index)) if index else p)
        _, pairs = redrawn(fgraph, rv_node, new_size, new_params, old_view=indexed)
        return pairs, (f"{index_op} of the draw lifted to its parameters and size {size_text(new_size)}: fewer "
                       "numbers drawn, the same distribution, other numbers")


class SidestepUnusedRNGConsumer(RandomNodeRule):
    """A draw nothing reads is removed: its generator is handed on unadvanced (the later draws change)"""

    name = "sidestep_unused_rng_consumer"

    def rewrite_node(self, fgraph: FunctionGraph, node: Apply) -> NodeResult:
        rng = node.inputs[0]
        next_rng, draw = node.outputs
        if used(fgraph, draw) or not used(fgraph, next_rng):
            return None
        if len(fgraph.clients.get(rng, ())) > 1:
            return Refusal(f"the generator {rng} is also read by another node (a duplicate draw, until merged): "
                           "not sidestepped, as PyTensor")
        return [(next_rng, rng)], (f"nothing reads the draw {draw}: its generator {rng} is handed on unadvanced "
                                   "(the later draws change)")


local_dimshuffle_rv_lift = register(LocalDimShuffleRVLift(), "canonicalize", "random", "random_lift",
                                    "random_unsafe", "optional")
local_subtensor_rv_lift = register(LocalSubtensorRVLift(), "canonicalize", "random", "random_lift",
                                   "random_unsafe", "optional")
sidestep_unused_rng_consumer = register(SidestepUnusedRNGConsumer(), "canonicalize", "random", "random_unsafe",
                                        "optional")

__all__ = [
    "LocalDimShuffleRVLift",
    "LocalSubtensorRVLift",
    "SidestepUnusedRNGConsumer",
    "local_dimshuffle_rv_lift",
    "local_subtensor_rv_lift",
    "sidestep_unused_rng_consumer",
]
