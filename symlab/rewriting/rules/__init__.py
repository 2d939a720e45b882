"""The standard rules, registered in :data:`symlab.rewriting.default_db` when imported (``import symlab.rewriting`` does).

=============  ==========================================================================
phase          rules (names usable in ``include``/``exclude``)
=============  ==========================================================================
canonicalize   merge, constant_folding, the algebra table of
               :mod:`~symlab.rewriting.rules.canonicalize` (``mul_div``, ``sub_self``,
               ``add_zero``, ``mul_one``, ``neg_neg``, ``exp_log``, ``log_exp``...),
               useless ``DimShuffle``/``SpecifyShape``/``Reshape`` and
               ``merge_dimshuffles``, shape lifting (:mod:`~symlab.rewriting.rules.shapes`:
               also ``lift_reduced_size``, ``lift_stack_of_elemwise``,
               ``lift_dimshuffle_of_reciprocal_sum``),
               ``collect_terms``, ``collect_factors``: sums and products made canonical
               (:mod:`~symlab.rewriting.rules.algebra`; ``cancel_factors`` and
               ``distribute_cancelling_divisions`` are tagged ``unsafe`` and off unless
               included), the fills gradients make
               (:mod:`~symlab.rewriting.rules.fill`: ``fill_useless``, ``fill_sink``,
               ``fill_static_shape``, ``useless_alloc``), ``random_constant_size`` (a
               random variable's ``size`` known from static shapes made a constant:
               the same numbers; :mod:`~symlab.rewriting.rules.random`, which also has,
               off unless included, ``random_drop_implied_size``; the lifts
               ``local_dimshuffle_rv_lift`` and ``local_subtensor_rv_lift`` (tag
               ``random_lift``) and ``sidestep_unused_rng_consumer``
               (:mod:`~symlab.rewriting.rules.random_lift`) are tagged
               ``random_unsafe``: they keep the distribution, not the numbers)
stabilize      ``log1p``, ``expm1``, ``log_sigmoid``, ``log_one_minus_sigmoid``,
               ``softmax_from_primitives``, ``softmax_shift``, ``logsumexp_stable``, and
               for extreme inputs ``log1p_exp`` (softplus), ``one_minus_sigmoid``,
               ``log1mexp``, ``one_minus_exp``, ``sigmoid_from_exp``,
               ``sigmoid_from_reciprocal``, ``log_softmax``
               (:mod:`~symlab.rewriting.rules.stabilize`); the logistic rules
               ``sigmoid_from_quotient``, ``sigmoid_distribute``, ``sigmoid_factor_sum``,
               ``log1p_neg_sigmoid``, ``one_minus_sigmoid_as_sum``, ``sigmoid_minus_one`` (tag ``logistic``,
               :mod:`~symlab.rewriting.rules.logistic`)
specialize     ``pow_two`` and ``mul_self`` (sqr), ``pow_half`` (sqrt), ``pow_one``, ``pow_minus_one``,
               ``pow_zero``, ``pow_pow``, ``pow_of_sqr``, ``sqrt_sqr`` (abs), ``pow_three``,
               ``pow_four``, ``softplus_expanded``, ``sigmoid_expanded``, ``abs_neg``,
               ``fill_to_alloc``
fusion         ``elemwise_fusion``
inplace        ``inplace_elemwise``, ``inplace_dimshuffle``, ``random_make_inplace``
               (:mod:`~symlab.rewriting.rules.random`)
=============  ==========================================================================

Every rule keeps the values of the graph it rewrites for finite inputs, except the seed's ``mul_div``
(``x * y / y -> x``, which forgets that ``0/0`` is NaN) and the rules tagged ``unsafe`` (off unless a
query includes them). Rules tagged ``random_unsafe`` (off unless included) keep the distribution of what a graph
draws, not the numbers. Rules that cancel terms (``sub_self``, ``collect_terms``) assume the inputs are
finite, as PyTensor's do: ``inf - inf`` is NaN before them and 0 after.

>>> import symlab.rewriting as R
>>> [p.name for p in R.default_db.query()]
['canonicalize', 'stabilize', 'specialize', 'fusion', 'inplace']
>>> R.default_db["mul_div"].rewriter.reason
'true_div(mul(x, y), y) -> x'
"""

from symlab.rewriting.constant_folding import constant_folding
from symlab.rewriting.db import default_db
from symlab.rewriting.merge import MergeOptimizer
from symlab.rewriting.rules import algebra, canonicalize, fill, fusion_inplace, shapes, specialize, stabilize
from symlab.rewriting.rules import logistic  # after stabilize: its table rows are tried first
from symlab.rewriting.rules import random, random_lift  # random variables: in place, constant sizes, lifts

# Merging and constant folding come after the rules above in the database's order (rules of one position
# are tried in the order they were registered).
default_db.register(MergeOptimizer(), "canonicalize", "fast_compile")
default_db.register(constant_folding, "canonicalize", "fast_compile")

__all__ = ["algebra", "canonicalize", "fill", "fusion_inplace", "logistic", "random", "random_lift", "shapes",
           "specialize", "stabilize"]
