"""Rewriting: rules that change a graph, the engine that applies them, and its trace.

>>> import symlab.tensor as T
>>> import symlab.rewriting as R
>>> x = T.dvector("x")
>>> out, trace = R.rewrite_graph((T.constant(2.0) + 3.0) * x, include=("fast_compile",))
>>> out.owner.inputs[0]
TensorConstant{(1,) of 5.0}
>>> [s.rule for s in trace], len(trace.graph_at(0).apply_nodes)
(['constant_folding', 'constant_folding'], 3)

Modules: :mod:`~symlab.rewriting.basic` (node and graph rewriters, walkers,
equilibrium), :mod:`~symlab.rewriting.patterns` (rules as tuple patterns),
:mod:`~symlab.rewriting.merge`, :mod:`~symlab.rewriting.constant_folding`,
:mod:`~symlab.rewriting.context` (how changes are made and recorded),
:mod:`~symlab.rewriting.trace` (steps and replay), :mod:`~symlab.rewriting.cursor` (walking a trace), :mod:`~symlab.rewriting.db`
(the database of rules, ``register`` and ``rewrite_graph``).
"""

from symlab.rewriting.trace import (
    Attempt,
    ReplayError,
    RewriteStep,
    RewriteTrace,
    RuleStats,
    SourceLocation,
    StepDiff,
    TraceNote,
    TraceSummary,
)
from symlab.rewriting.cursor import TraceCursor
from symlab.rewriting.rewriter import Rewriter
from symlab.rewriting.context import RewriteContext, RewriteError
from symlab.rewriting.basic import (
    Dispatch,
    EquilibriumGraphRewriter,
    FunctionNodeRewriter,
    GraphRewriter,
    NodeRewriter,
    SequentialGraphRewriter,
    WalkingGraphRewriter,
    in2out,
    node_rewriter,
    out2in,
    walk,
)
from symlab.rewriting.patterns import ConstPattern, PatternError, PatternNodeRewriter, const
from symlab.rewriting.merge import MergeOptimizer
from symlab.rewriting.constant_folding import constant_folding
from symlab.rewriting.db import (
    PHASES,
    Phase,
    RewriteDatabase,
    RewriteEntry,
    default_db,
    register,
    rewrite_fgraph,
    rewrite_graph,
)
from symlab.rewriting import rules  # registers the standard rules in default_db

__all__ = [
    "PHASES",
    "Attempt",
    "ConstPattern",
    "Dispatch",
    "EquilibriumGraphRewriter",
    "FunctionNodeRewriter",
    "GraphRewriter",
    "MergeOptimizer",
    "NodeRewriter",
    "PatternError",
    "PatternNodeRewriter",
    "Phase",
    "ReplayError",
    "RewriteContext",
    "RewriteDatabase",
    "RewriteEntry",
    "RewriteError",
    "RewriteStep",
    "RewriteTrace",
    "Rewriter",
    "RuleStats",
    "SequentialGraphRewriter",
    "SourceLocation",
    "StepDiff",
    "TraceCursor",
    "TraceNote",
    "TraceSummary",
    "WalkingGraphRewriter",
    "const",
    "constant_folding",
    "default_db",
    "in2out",
    "node_rewriter",
    "out2in",
    "register",
    "rewrite_fgraph",
    "rewrite_graph",
    "rules",
    "walk",
]
