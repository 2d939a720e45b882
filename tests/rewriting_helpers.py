"""Helpers of the rewriting tests: demonstration rules and a checking feature."""

from oracle import REWRITES, assert_same_results

import symlab.tensor as T
from symlab.graph.evaluate import evaluate
from symlab.graph.traversal import equal_computations
from symlab.rewriting import PatternNodeRewriter, node_rewriter

# Demonstration rules (the standard tables live in symlab.rewriting.rules).
mul_div = PatternNodeRewriter((T.true_div, (T.mul, "x", "y"), "y"), "x", name="demo_mul_div")
mul_one = PatternNodeRewriter((T.mul, "x", 1), "x", name="demo_mul_one")
log_exp = PatternNodeRewriter((T.log, (T.exp, "x")), "x", name="demo_log_exp")


@node_rewriter([T.neg])
def demo_double_neg(fgraph, node):
    """-(-x) -> x"""
    (inner,) = node.inputs
    if inner.owner is not None and inner.owner.op == T.neg:
        return [inner.owner.inputs[0]]
    return None


class StepChecker:
    """Feature: check the graph's integrity after every step and keep a copy of it."""

    def __init__(self):
        self.snapshots = {}

    def on_rewrite_step(self, fgraph, step):
        fgraph.check_integrity()
        self.snapshots[step.index] = fgraph.clone()


def op_strings(fg):
    return [str(n.op) for n in fg.toposort()]


def same_graph(a, b):
    return op_strings(a) == op_strings(b) and equal_computations(a.outputs, b.outputs, a.inputs, b.inputs)


def values(fg, inputs):
    """The outputs of ``fg`` for the given input values (a list, in the order of fg.inputs)."""
    return evaluate(fg.outputs, dict(zip(fg.inputs, inputs)))


def assert_same_values(fg_a, fg_b, inputs):
    """``fg_a`` and ``fg_b`` compute the same outputs from ``inputs`` (to :data:`oracle.REWRITES`)."""
    assert_same_results(values(fg_a, inputs), values(fg_b, inputs), REWRITES)
