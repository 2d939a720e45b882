"""The ``fusion`` and ``inplace`` phases: :func:`~symlab.rewriting.fusion.fuse_elemwise` and
:func:`~symlab.rewriting.inplace.insert_inplace` as graph rewriters of the database.

Their graph rewriters (:class:`~symlab.rewriting.fusion.ElemwiseFusion`,
:class:`~symlab.rewriting.inplace.InplaceElemwise`,
:class:`~symlab.rewriting.inplace.InplaceDimShuffle`) make every attempt
through the rewrite context, so each is one step of the trace, accepted with
the changes it made, or refused with the reason (seed 003):

>>> import symlab.tensor as T
>>> from symlab.rewriting import rewrite_graph
>>> a = T.dvector("a")
>>> out, trace = rewrite_graph(a + a ** 10)
>>> [str(n.op) for n in trace.fgraph.toposort()]
['Elemwise{Composite{(i0 + (i0 ** 10))},no_inplace}']
>>> for s in trace.steps[-2:]:  # after constant folding
...     print(s.phase, s.rule, s.accepted, s.reason)
fusion elemwise_fusion True fused 2 Elemwise nodes into Elemwise{Composite{(i0 + (i0 ** 10))},no_inplace}
inplace inplace_elemwise False no input can hold the result: input 0 (a) is a protected graph input (not mutable)

A refused attempt is recorded once per graph, not again on each pass of
the phase's fixed point.
"""

from __future__ import annotations

from symlab.rewriting.db import register
from symlab.rewriting.fusion import ElemwiseFusion
from symlab.rewriting.inplace import InplaceDimShuffle, InplaceElemwise

elemwise_fusion = register(ElemwiseFusion(), "fusion")
inplace_elemwise = register(InplaceElemwise(), "inplace")
inplace_dimshuffle = register(InplaceDimShuffle(), "inplace")

__all__ = ["ElemwiseFusion", "InplaceDimShuffle", "InplaceElemwise", "elemwise_fusion", "inplace_dimshuffle",
           "inplace_elemwise"]
