"""The standard rules, registered in :data:`symlab.rewriting.default_db` when imported.

=============  ==========================================================================
phase          rules (names usable in ``include``/``exclude``)
=============  ==========================================================================
canonicalize   merge, constant_folding, the algebra table of
               :mod:`~symlab.rewriting.rules.canonicalize` (``mul_div``, ``sub_self``,
               ``add_zero``, ``mul_one``, ``neg_neg``, ``exp_log``, ``log_exp``...),
               useless ``DimShuffle``/``SpecifyShape``/``Reshape`` and
               ``merge_dimshuffles``, shape lifting (:mod:`~symlab.rewriting.rules.shapes`)
stabilize      ``log1p``, ``expm1``, ``log_sigmoid``, ``softmax_from_primitives``,
               ``softmax_shift``, ``logsumexp_stable``
               (:mod:`~symlab.rewriting.rules.stabilize`)
specialize     ``pow_two`` (sqr), ``pow_half`` (sqrt), ``pow_one``, ``pow_minus_one``
fusion         ``elemwise_fusion``
inplace        ``inplace_elemwise``, ``inplace_dimshuffle``
=============  ==========================================================================

>>> import symlab.rewriting as R
>>> [p.name for p in R.default_db.query()]
['canonicalize', 'stabilize', 'specialize', 'fusion', 'inplace']
>>> R.default_db["mul_div"].rewriter.reason
'true_div(mul(x, y), y) -> x'
"""

from symlab.rewriting.rules import canonicalize, fusion_inplace, shapes, specialize, stabilize

__all__ = ["canonicalize", "fusion_inplace", "shapes", "specialize", "stabilize"]
