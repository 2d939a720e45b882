"""The rewrites of ``OpFromGraph`` nodes, registered in the rewrite database (and so in every trace).

``inline_ofg_expansion`` (canonicalize; ``fast_compile`` and ``fast_run``)
    replaces a node of an op made with ``inline=True`` by its inner graph, copied onto the node's
    inputs (PyTensor's rule of the same name): the other rewrites, fusion included, then see
    through it.
``inline_small_ofg`` (canonicalize; ``fast_run``)
    does the same, without being asked, for an op whose inner graph is at most
    :data:`AUTO_INLINE_MAX_NODES` elementwise nodes: such a node costs a call of its own and
    keeps fusion from crossing it, while its inner graph is as small as the node itself. A larger
    graph is left packaged: that is what an ``OpFromGraph`` is for (a graph used many times is
    rewritten and compiled once). Exclude the rule to keep every node packaged.
``ofg_inner_graph`` (specialize, after the inlining; ``fast_compile`` and ``fast_run``)
    rewrites the inner graph of every other node with the query of the rewrite that runs it (the
    function's mode), without the ``inplace`` rules (the inner inputs are the outer values, which
    must not be overwritten), once per distinct op and query; the node gets a copy of the op with
    the rewritten graph, whose ``inner_trace`` is the inner rewrite (a stepper can step into it).

>>> import symlab
>>> import symlab.tensor as st
>>> from symlab.compile.builders import OpFromGraph
>>> x, y = st.dvectors("x", "y")
>>> op = OpFromGraph([x, y], [st.exp(x) * y + st.log(x)], inline=True)
>>> f = symlab.function([x, y], op(x, y) * 2.0, mode="NUMPY")
>>> [s.rule for s in f.trace if s.accepted][0], any(isinstance(n.op, OpFromGraph) for n in f.maker.fgraph.toposort())
('inline_ofg_expansion', False)
"""

from __future__ import annotations

from typing import Any

from symlab.compile.builders import OpFromGraph, inline_outputs
from symlab.graph.basic import Apply
from symlab.graph.fg import FunctionGraph
from symlab.rewriting.basic import GraphRewriter, node_rewriter
from symlab.rewriting.context import RewriteContext
from symlab.rewriting.db import register, rewrite_fgraph
from symlab.tensor.elemwise import DimShuffle, Elemwise

#: ``inline_small_ofg`` inlines an op of at most this many inner nodes, all elementwise.
AUTO_INLINE_MAX_NODES = 4


@node_rewriter([OpFromGraph])
def inline_ofg_expansion(fgraph: FunctionGraph, node: Apply) -> list[Any] | None:
    """An OpFromGraph asked to be inlined (inline=True) is replaced by its inner graph"""
    if not node.op.is_inline:
        return None
    return inline_outputs(node.op, node.inputs)


def is_small_elementwise(op: OpFromGraph) -> bool:
    """Whether ``inline_small_ofg`` inlines ``op`` (see :data:`AUTO_INLINE_MAX_NODES`)."""
    nodes = op.fgraph.toposort()
    return 0 < len(nodes) <= AUTO_INLINE_MAX_NODES and all(isinstance(n.op, Elemwise | DimShuffle) for n in nodes)


@node_rewriter([OpFromGraph])
def inline_small_ofg(fgraph: FunctionGraph, node: Apply) -> list[Any] | None:
    """A small elementwise OpFromGraph is inlined, so that fusion can cross it"""
    if node.op.is_inline or not is_small_elementwise(node.op):
        return None
    return inline_outputs(node.op, node.inputs)


class InnerGraphRewriter(GraphRewriter):
    """Rewrite the inner graph of each node of ``op_class`` with the running query (see the module).

    ``ofg_inner_graph`` is the one of ``OpFromGraph``; a scan's body is rewritten by another
    (``scan_inner_graph``, :mod:`symlab.scan.inner_rewrite`). ``what`` names the inner graph in the reason.
    """

    def __init__(self, name: str = "ofg_inner_graph", op_class: type = OpFromGraph, what: str = "inner graph") -> None:
        super().__init__(name)
        self.op_class = op_class
        self.what = what

    def apply(self, fgraph: FunctionGraph, ctx: RewriteContext) -> bool:
        nodes = [n for n in fgraph.toposort() if isinstance(n.op, self.op_class) and not n.op.inner_rewritten]
        if not nodes:
            return False
        recipe = getattr(ctx.trace, "recipe", None)
        include = tuple(recipe.include) if recipe is not None else ("fast_run",)
        exclude = (*(recipe.exclude if recipe is not None else ()), "inplace")
        db = recipe.db if recipe is not None else None
        changed = False
        for node in nodes:
            new_op = rewritten_op(node.op, include, exclude, db)
            reason = f"{self.what} rewritten with include={list(include)} exclude={list(exclude)}"
            changed = ctx.replace(self, new_op.make_node(*node.inputs).outputs, node=node, reason=reason) or changed
        return changed


def rewritten_op(op: Any, include: tuple[str, ...], exclude: tuple[str, ...], db: Any = None) -> Any:
    """A copy of ``op`` whose inner graph is rewritten with the query (kept on ``op``, made once per query).

    ``op`` is an ``OpFromGraph`` or another op with ``fgraph``, ``clone_with_inner_graph`` and
    ``inner_rewritten`` (a ``Scan``)."""
    key = (include, exclude, id(db))
    cache = op.__dict__.setdefault("_rewritten_ops", {})
    got = cache.get(key)
    if got is None:
        inner = op.fgraph.clone()
        trace = rewrite_fgraph(inner, include, exclude, db=db)
        got = op.clone_with_inner_graph(inner)
        got.inner_rewritten = True
        got.inner_trace = trace
        got.__dict__["_rewritten_ops"] = {}
        cache[key] = got
    return got


register(inline_ofg_expansion, "canonicalize", "fast_compile", name="inline_ofg_expansion")
register(inline_small_ofg, "canonicalize", name="inline_small_ofg")
register(InnerGraphRewriter(), "specialize", "fast_compile", name="ofg_inner_graph")

__all__ = [
    "AUTO_INLINE_MAX_NODES",
    "InnerGraphRewriter",
    "inline_ofg_expansion",
    "inline_small_ofg",
    "is_small_elementwise",
    "rewritten_op",
]
