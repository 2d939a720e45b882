"""``scan_inner_graph``: the ordinary rewrites applied inside a loop's body (fusion included).

Compiling a function rewrites its graph; a :class:`~symlab.scan.op.Scan` node's body is a graph of its own,
which those rewrites do not enter. This rule (phase ``specialize``, tags ``fast_compile`` and ``fast_run``,
as ``ofg_inner_graph`` for ``OpFromGraph``) rewrites the body of every scan node with the query of the
rewrite that runs it (the function's mode), **without the ``inplace`` rules**: the body's inputs are entries
of the loop's buffers, the sequences and the non-sequences, which a later iteration (or the caller) still
reads, and the body's inner graph has no destroy handler protecting them. Each distinct op is rewritten once
per query (kept on the op); the node gets a copy of the op (``inner_rewritten=True``) whose ``inner_trace``
is the body's rewrite, so a stepper can step into it. The original op's body is never changed.

>>> import symlab
>>> import symlab.tensor as st
>>> from symlab.scan import Scan
>>> x = st.dvector("x")
>>> ys, _ = symlab.scan(lambda v, acc: st.exp(v) * 2.0 + acc, sequences=x, outputs_info=st.constant(0.0))
>>> f = symlab.function([x], ys, mode="NUMPY")
>>> "scan_inner_graph" in [s.rule for s in f.trace if s.accepted]
True
>>> node = next(n for n in f.maker.fgraph.toposort() if isinstance(n.op, Scan))
>>> node.op.inner_rewritten, node.op.inner_trace is not None
(True, True)
"""

from __future__ import annotations

from typing import Any

from symlab.compile.builders_rewrites import InnerGraphRewriter, rewritten_op
from symlab.rewriting.db import register
from symlab.scan.op import Scan


def rewritten_scan(op: Scan, include: tuple[str, ...], exclude: tuple[str, ...], db: Any = None) -> Scan:
    """A copy of ``op`` whose body is rewritten with the query (made once per op and query, kept on ``op``).

    >>> import symlab.tensor as st
    >>> from symlab.scan import scan
    >>> x = st.dvector("x")
    >>> ys, _ = scan(lambda v: st.exp(v) + 1.0, sequences=x)
    >>> op = ys.owner.op
    >>> new = rewritten_scan(op, ("fast_run",), ("inplace",))
    >>> new is rewritten_scan(op, ("fast_run",), ("inplace",)), new.inner_rewritten, op.inner_rewritten
    (True, True, False)
    """
    return rewritten_op(op, include, exclude, db)


scan_inner_graph = register(InnerGraphRewriter("scan_inner_graph", Scan, "loop body"), "specialize", "fast_compile",
                            name="scan_inner_graph")

__all__ = ["rewritten_scan", "scan_inner_graph"]
