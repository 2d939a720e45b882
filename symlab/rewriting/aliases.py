"""PyTensor's and Theano's names of rewrites that symlab has under another name.

A PyTensor program selects rewrites by its own names
(``mode.excluding("local_elemwise_fusion", "inplace")``, the flag
``optimizer_excluding=local_shape_to_shape_i``). Each such name is an alias of
the symlab rules that do the same work; ``include``/``exclude`` replace it by
them (a rule registered under the alias's own name wins over the alias):

>>> expand_aliases(("local_elemwise_fusion", "inplace"), registered=set())
('elemwise_fusion', 'inplace')
>>> PYTENSOR_NAMES["local_pow_specialize"]
('pow_zero', 'pow_one', 'pow_two', 'pow_half', 'pow_minus_one')

Names that are the same in both libraries (``fusion``, ``inplace``,
``canonicalize``, ``stabilize``, ``specialize``, ``merge``,
``constant_folding``, ``elemwise_fusion``, ``inplace_elemwise``,
``log1p_neg_sigmoid``, ``fast_run``, ``fast_compile``, ``unsafe``) need no alias.
A PyTensor rewrite symlab has no equivalent of (``local_remove_all_assert``,
``local_dimshuffle_lift``...) has no alias: naming it is an error, not a silent no-op.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

#: PyTensor's (or Theano's) name -> the symlab rules (or tags) doing the same rewrite.
PYTENSOR_NAMES: dict[str, tuple[str, ...]] = {
    # fusion and inplace
    "local_elemwise_fusion": ("elemwise_fusion",),
    "inplace_elemwise_opt": ("inplace_elemwise",),
    "inplace_elemwise_optimizer": ("inplace_elemwise",),
    # constant folding
    "topo_constant_folding": ("constant_folding",),
    # the algebraic canonizers: like factors / terms collected, x*y/y and x - x cancelled
    # (symlab's cancel_factors, which also cancels x/x, is unsafe and off unless named)
    "local_mul_canonizer": ("collect_factors", "mul_div", "mul_div_swapped"),
    "local_add_canonizer": ("collect_terms", "sub_self"),
    # exp and log
    "local_exp_log": ("log_exp",),
    "local_exp_log_nan_switch": ("exp_log",),
    "local_log1p": ("log1p", "log1p_swapped"),
    "local_expm1": ("expm1",),
    "local_log1p_plusminus_exp": ("log1p_exp",),
    "local_log_sum_exp": ("logsumexp_stable",),
    "local_logsoftmax": ("log_softmax",),
    # powers and squares
    "local_pow_specialize": ("pow_zero", "pow_one", "pow_two", "pow_half", "pow_minus_one"),
    "local_pow_to_nested_squaring": ("pow_three", "pow_four"),
    "local_mul_to_sqr": ("mul_self",),
    "local_sqrt_sqr": ("sqrt_sqr",),
    # the logistic function
    "local_exp_over_1_plus_exp": ("sigmoid_from_exp", "sigmoid_from_exp_swapped"),
    "local_reciprocal_1_plus_exp": ("sigmoid_from_reciprocal", "sigmoid_from_reciprocal_swapped"),
    "local_1msigmoid": ("one_minus_sigmoid", "one_minus_sigmoid_as_sum", "one_minus_sigmoid_as_sum_swapped"),
    "logsigm_to_softplus": ("log_sigmoid",),
    "log1msigm_to_softplus": ("log_one_minus_sigmoid",),
    # fill (second) and alloc
    "local_second_sink": ("fill_sink",),
    "local_fill_sink": ("fill_sink",),
    "local_second_to_alloc": ("fill_to_alloc",),
    "local_fill_to_alloc": ("fill_to_alloc",),
    "local_useless_fill": ("fill_useless",),
    "local_useless_alloc": ("useless_alloc",),
    # shapes: a shape computed from the inputs' shapes, without running the computation
    "local_shape_to_shape_i": ("lift_shape", "lift_shape_i"),
    "local_useless_reshape": ("useless_reshape",),
    "local_useless_specify_shape": ("useless_specify_shape",),
}


def expand_aliases(words: Iterable[str], registered: Collection[str]) -> tuple[str, ...]:
    """``words`` with each alias replaced by symlab's names, in order, without repeats.

    A word in ``registered`` (a rule registered under that very name) is kept as it is.
    """
    out: dict[str, None] = {}
    for word in words:
        for name in (word,) if word in registered else PYTENSOR_NAMES.get(word, (word,)):
            out[name] = None
    return tuple(out)


__all__ = ["PYTENSOR_NAMES", "expand_aliases"]
