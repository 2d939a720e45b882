"""The ``inplace`` rewrites: let ``Elemwise`` nodes write their result into an input's buffer.

:func:`insert_inplace` visits the ``Elemwise`` nodes in topological order
and, for each, tries the inputs that could hold the result (same type as the
output, not a constant, not a protected graph input, not already
overwritten). Each try replaces the node by ``Elemwise(scalar_op, {0: i})``
through ``fgraph.replace_all_validate``; the :class:`DestroyHandler` refuses
it when the input's value is still needed (the graph is then put back) and
the next input is tried. Every attempt is reported, with its reason, to
``trace_callback(rule, node, new_node_or_None, accepted, reason)``.
``DimShuffle`` views are renamed ``InplaceDimShuffle`` (a view either way).

>>> import symlab.tensor as st
>>> from symlab.graph.fg import FunctionGraph
>>> x = st.dvector("x")
>>> fg = FunctionGraph([x], [st.exp(x) * 2.0 + 1.0])
>>> log = []
>>> changed = insert_inplace(fg, trace_callback=lambda *step: log.append(step))
>>> [str(n.op) for n in fg.toposort()]
['Elemwise{exp,no_inplace}', 'InplaceDimShuffle{x}', 'Elemwise{mul,inplace}', 'InplaceDimShuffle{x}', 'Elemwise{add,inplace}']
>>> for rule, node, new_node, accepted, reason in log[:3]:
...     print(rule, accepted, reason)
inplace_elemwise False no input can hold the result: input 0 (x) is a protected graph input (not mutable)
inplace_elemwise True overwrite input 0 (Elemwise{exp,no_inplace}.0)
inplace_elemwise True overwrite input 0 (Elemwise{mul,inplace}.0)
"""

from __future__ import annotations

from collections.abc import Callable

from symlab.graph.basic import Apply, Constant
from symlab.graph.destroyhandler import DestroyHandler
from symlab.graph.features import ReplaceValidate
from symlab.graph.fg import FunctionGraph, InconsistencyError
from symlab.tensor.elemwise import DimShuffle, Elemwise

#: ``trace_callback(rule_name, node, new_node_or_None, accepted, reason)``.
TraceCallback = Callable[[str, Apply, "Apply | None", bool, str], None]

RULE_ELEMWISE = "inplace_elemwise"
RULE_DIMSHUFFLE = "inplace_dimshuffle"


def ensure_destroy_handler(fgraph: FunctionGraph) -> DestroyHandler:
    """Attach ``ReplaceValidate`` and a ``DestroyHandler`` (all inputs protected) unless present."""
    if not hasattr(fgraph, "replace_all_validate"):
        fgraph.attach_feature(ReplaceValidate())
    handler = getattr(fgraph, "destroy_handler", None)
    if handler is None:
        handler = DestroyHandler()
        fgraph.attach_feature(handler)
    return handler


def inplace_candidates(fgraph: FunctionGraph, node: Apply, output: int = 0) -> tuple[list[int], list[str]]:
    """The inputs of an ``Elemwise`` node that could hold output ``output``, and why the others cannot.

    This is a quick filter: the destroy handler still decides, when the
    replacement is validated, whether the input's value is needed elsewhere.
    Inputs the node already overwrites are skipped.
    """
    handler = ensure_destroy_handler(fgraph)
    out = node.outputs[output]
    taken = {i for _, i in getattr(node.op, "inplace_pattern", ())}
    candidates: list[int] = []
    excluded: list[str] = []
    for i, inp in enumerate(node.inputs):
        where = f"input {i} ({inp})"
        if i in taken:
            excluded.append(f"{where} already holds another output")
        elif inp.type != out.type:
            excluded.append(f"{where} has type {inp.type}, not the output's {out.type}")
        elif isinstance(inp, Constant):
            excluded.append(f"{where} is a constant")
        elif (protected := handler.is_protected(inp)) is not None:
            excluded.append(f"{where} is {protected}")
        elif destroyers := handler.destroyers(inp):
            excluded.append(f"{where} is already overwritten by {destroyers[0]}")
        else:
            candidates.append(i)
    return candidates, excluded


def try_inplace_elemwise(
    fgraph: FunctionGraph, node: Apply, trace_callback: TraceCallback | None = None
) -> Apply | None:
    """Replace one ``Elemwise`` node by an inplace version if the destroy handler allows it.

    Each output not yet inplace gets the first input that can hold it.
    Returns the final new node, or ``None`` (the graph unchanged) when no
    output could be made inplace. Other nodes are left alone and not reported.
    """
    if not isinstance(node.op, Elemwise) or node not in fgraph:
        return None
    current = node
    for o in range(len(node.outputs)):
        op = current.op
        if o in dict(op.inplace_pattern):
            continue
        candidates, excluded = inplace_candidates(fgraph, current, o)
        if not candidates:
            what = "the result" if len(node.outputs) == 1 else f"output {o}"
            _report(trace_callback, RULE_ELEMWISE, current, None, False, f"no input can hold {what}: " + "; ".join(excluded))
            continue
        for i in candidates:
            pattern = {**dict(op.inplace_pattern), o: i}
            new_node = Apply(Elemwise(op.scalar_op, pattern), list(current.inputs), [out.type() for out in current.outputs])
            for old_out, new_out in zip(current.outputs, new_node.outputs):
                new_out.name = old_out.name
            new_node.tag.update(current.tag)
            pairs = [(old_out, new_out) for old_out, new_out in zip(current.outputs, new_node.outputs) if old_out in fgraph]
            try:
                fgraph.replace_all_validate(pairs, reason=RULE_ELEMWISE)
            except InconsistencyError as err:
                _report(trace_callback, RULE_ELEMWISE, current, new_node, False, f"input {i}: destroy handler: {err}")
                continue
            where = "" if len(node.outputs) == 1 else f"output {o} "
            _report(trace_callback, RULE_ELEMWISE, current, new_node, True, f"{where}overwrite input {i} ({current.inputs[i]})")
            current = new_node
            break
    return None if current is node else current


def insert_inplace_elemwise(
    fgraph: FunctionGraph, trace_callback: TraceCallback | None = None
) -> list[tuple[Apply, Apply]]:
    """Make every ``Elemwise`` node inplace where allowed; return the ``(old_node, new_node)`` pairs."""
    ensure_destroy_handler(fgraph)
    changed: list[tuple[Apply, Apply]] = []
    for node in fgraph.toposort():
        new_node = try_inplace_elemwise(fgraph, node, trace_callback)
        if new_node is not None:
            changed.append((node, new_node))
    return changed


def insert_inplace_dimshuffle(
    fgraph: FunctionGraph, trace_callback: TraceCallback | None = None
) -> list[tuple[Apply, Apply]]:
    """Rename every ``DimShuffle`` view ``InplaceDimShuffle`` (same computation, same view)."""
    ensure_destroy_handler(fgraph)
    changed: list[tuple[Apply, Apply]] = []
    for node in fgraph.toposort():
        op = node.op
        if not isinstance(op, DimShuffle) or op.inplace or node not in fgraph:
            continue
        new_node = Apply(DimShuffle(op.input_ndim, op.new_order, inplace=True), list(node.inputs), [node.outputs[0].type()])
        new_node.outputs[0].name = node.outputs[0].name
        try:
            fgraph.replace_all_validate([(node.outputs[0], new_node.outputs[0])], reason=RULE_DIMSHUFFLE)
        except InconsistencyError as err:  # pragma: no cover - a rename keeps the same views
            _report(trace_callback, RULE_DIMSHUFFLE, node, new_node, False, f"destroy handler: {err}")
            continue
        _report(trace_callback, RULE_DIMSHUFFLE, node, new_node, True, "a DimShuffle is always a view")
        changed.append((node, new_node))
    return changed


def insert_inplace(
    fgraph: FunctionGraph, trace_callback: TraceCallback | None = None, dimshuffle: bool = True
) -> list[tuple[Apply, Apply]]:
    """Run the inplace rewrites (``Elemwise``, then ``DimShuffle`` naming); return ``(old, new)`` node pairs.

    Attaches ``ReplaceValidate`` and a ``DestroyHandler`` (protecting every
    input) if the graph has none.
    """
    changed = insert_inplace_elemwise(fgraph, trace_callback)
    if dimshuffle:
        changed += insert_inplace_dimshuffle(fgraph, trace_callback)
    return changed


def _report(
    callback: TraceCallback | None, rule: str, node: Apply, new_node: Apply | None, accepted: bool, reason: str
) -> None:
    if callback is not None:
        callback(rule, node, new_node, accepted, reason)
