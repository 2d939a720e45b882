"""Property-based differential testing of symlab: random graphs, every backend, shrinking.

The pieces, each a small module:

``values``    input environments (typed inputs, concrete shapes) and their two value sets
``ops``       the catalog of graph operations the generator draws from
``inner``     inner graphs on top: expressions made branches of an ``ifelse``, subexpressions packaged as
              ``OpFromGraph`` ops (applied twice, nested), from a random stream of their own
``loops``     ``scan`` loops on top (the ``loops`` flavour): a subexpression made a loop's body, its inputs read
              as sequences, a state or non-sequences, from a random stream of their own
``generate``  the seeded generator of random expressions (``Expr`` DAGs) and their Python code
``modes``     the modes against the unoptimized graph (and NUMBA's bits against NUMPY's), known bugs kept out
``graphs``    gradients against finite differences, edit sequences and their trace, format round trips
``shrink``    a failing graph made minimal, printed as a test to paste
``failures``  each check's failures shrunk, with their reproductions (checked to fail on their own)
``campaign``  a run: the plan (how many graphs of each kind), the figures, the failures
``run``       the runner of ``make fuzz``, which prints the figures

How two results are compared (bits, tolerance, NaN where NaN) is the suite's one oracle, ``tests/oracle.py``,
which the unit tests share.

Nothing here depends on Hypothesis: everything is driven by NumPy generators seeded from one integer
(``FUZZ_SEED``), so a run is reproduced exactly by its seed.
"""
