"""Inner graphs in a rewrite stepper: which nodes its panes draw open, and the rewrite of a node's inner graph.

A stepper's panes draw a node with an inner graph open when its key is listed (``stepper.expand(key)``); the
key of a node inside an open one is ``outer/inner`` (``a5/a2``), as in every view. :func:`inner_rewrite` is
what ``stepper.step_into(node)`` steps through: the rewrite of the node's inner graph (an ``OpFromGraph``'s,
a ``Scan``'s body, a fused ``Composite``'s) by the same rules the outer rewrite ran (its query: the mode's, or
``rewrite_graph``'s ``include``/``exclude``), without the ``inplace`` rules (an inner graph's inputs are the
node's outer values, never overwritten), on a copy: the op is never changed. A node whose op a compiled
function already rewrote inside (``ofg_inner_graph``, ``scan_inner_graph``) carries that rewrite
(``op.inner_trace``): it is the one stepped through, so the inner stepper ends on the inner graph the function
runs.

>>> import symlab.tensor as st
>>> from symlab.rewriting import rewrite_graph
>>> x = st.dvector("x")
>>> _, trace = rewrite_graph(st.exp(x) * 2 + x)
>>> fused = trace.fgraph.toposort()[0]
>>> inner = inner_rewrite(trace, fused)
>>> [str(n.op) for n in inner.graph_at(0).toposort()] == [str(n.op) for n in fused.op.scalar_op.fgraph.toposort()]
True
>>> inner_node(trace, trace.key(fused)) is fused, inner_node(trace, "a999")
(True, None)
"""

from __future__ import annotations

from typing import Any

from symlab.graph.basic import Apply
from symlab.graph.fg import FunctionGraph
from symlab.notebook.inner_values import inner_op, resolve_inner
from symlab.rewriting.trace import RewriteTrace

__all__ = ["INNER_EXCLUDE", "inner_node", "inner_query", "inner_rewrite"]

#: The rules an inner graph is never rewritten with (its inputs are the outer values).
INNER_EXCLUDE = ("inplace",)


def inner_node(trace: RewriteTrace, key: str) -> Apply | None:
    """The node ``key`` names in ``trace`` (an outer key, or ``outer/inner`` inside an inner graph), or ``None``."""

    def outer(k: str) -> Any:
        try:
            return trace.by_key(k)
        except KeyError:
            return None

    found = resolve_inner(key, outer)
    return found[1] if found is not None and isinstance(found[1], Apply) else None


def inner_query(trace: RewriteTrace) -> tuple[tuple[str, ...], tuple[str, ...], Any, float]:
    """``(include, exclude, db, max_use_ratio)`` an inner graph is rewritten with: the outer rewrite's query."""
    recipe = trace.recipe
    mode = trace.mode
    if recipe is not None:
        include, exclude, db, ratio = tuple(recipe.include), tuple(recipe.exclude), recipe.db, recipe.max_use_ratio
    elif mode is not None:
        include, exclude, db, ratio = tuple(mode.include), tuple(mode.exclude), None, 10.0
    else:
        include, exclude, db, ratio = ("fast_run",), (), None, 10.0
    return include, tuple(dict.fromkeys((*exclude, *INNER_EXCLUDE))), db, ratio


def inner_rewrite(trace: RewriteTrace, node: Apply) -> RewriteTrace:
    """The rewrite of ``node``'s inner graph with ``trace``'s query, on a copy (see the module documentation)."""
    owner = inner_op(node.op)
    if owner is None:
        raise ValueError(f"RewriteStepper.step_into: {node.op} has no inner graph of its own to step into "
                         "(expected an OpFromGraph, a Scan or a fused Composite; an ifelse's branches are steps of "
                         "the outer graph)")
    done = getattr(owner, "inner_trace", None)
    if isinstance(done, RewriteTrace):
        return done
    from symlab.rewriting import rewrite_fgraph

    include, exclude, db, ratio = inner_query(trace)
    copy = owner.clone()  # the op is never changed: its copy's graph, copied again, is rewritten
    fgraph = FunctionGraph(list(copy.inner_inputs), list(copy.inner_outputs), clone=True)
    made = rewrite_fgraph(fgraph, include, exclude, db=db, max_use_ratio=ratio)
    assert made is not None
    made.mode = None  # its exclude line is rewrite_graph's: the inner graph is not a function of its own
    return made
