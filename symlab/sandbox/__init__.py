"""``sandbox``: Theano's module path of its MRG random streams, kept for the classic programs.

``from symlab.sandbox.rng_mrg import MRG_RandomStreams`` is what ``from theano.sandbox.rng_mrg import
MRG_RandomStreams`` becomes with only the renaming (see :mod:`symlab.sandbox.rng_mrg`).
"""
