"""Random variables in the generated graphs: the draws, their generators' states, and the rules that change numbers.

The ``random`` flavour of :func:`~generate.generate_batch` adds :data:`RANDOM_OPS` to the catalog: draws of every
distribution of ``symlab.tensor.random`` (parameters given by the expressions built so far, or constants), sizes
given as constants, as the shape of an expression (which ``random_constant_size`` folds) or larger than the
parameters, views of draws (what the lifts look for) and chains of draws whose first is unused (what
``sidestep_unused_rng_consumer`` removes). Each draw has a generator of its own, written in its code as
``st.random.shared_rng(seed=S)`` with ``S`` drawn from the batch's stream: the code of a failure is its reproduction.

Every evaluation must see the same state: :class:`GeneratorStates` resets each shared generator of a batch to a
copy of its first state before every call, and says when a call advanced one (a function without updates must
not). The rules tagged ``random_unsafe`` keep distributions, not numbers: the ``RANDOM_UNSAFE`` mode (``NUMPY``
with them included) is compared with the reference only where no draw is on the way, and elsewhere in dtype and
shape (:func:`drawn`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from symlab.graph.traversal import applys_with_inner, graph_inputs
from symlab.tensor.random.op import RandomVariable
from symlab.tensor.random.type import RandomGeneratorType, copy_generator, generator_state

from .ops import OpKind, _recent, is_float

#: The rules of symlab/rewriting/rules/random*.py whose applications a run counts.
RANDOM_RULES = ("random_constant_size", "local_dimshuffle_rv_lift", "local_subtensor_rv_lift",
                "sidestep_unused_rng_consumer")


class GeneratorAdvanced(RuntimeError):
    """A compiled function without updates changed the state of a shared generator."""


class GeneratorStates:
    """The shared generators of a graph and their first states: reset before each call, checked after."""

    def __init__(self, outputs: Sequence[Any]) -> None:
        self.shared = [v for v in graph_inputs(list(outputs))
                       if isinstance(v.type, RandomGeneratorType) and hasattr(v, "get_value")]
        self.first = [copy_generator(v.get_value(borrow=True)) for v in self.shared]

    def reset(self) -> None:
        """Every shared generator back to (a copy of) its first state."""
        for v, g in zip(self.shared, self.first):
            v.set_value(copy_generator(g), borrow=True)

    def check(self, what: str) -> None:
        """Raise :class:`GeneratorAdvanced` if a generator is not in its first state any more."""
        for v, g in zip(self.shared, self.first):
            if generator_state(v.get_value(borrow=True)) != generator_state(g):
                raise GeneratorAdvanced(f"{what} advanced the shared generator {v} (no update asked for it)")


def drawn(var: Any) -> bool:
    """Whether a random variable is on the way to ``var`` (in an inner graph too)."""
    return any(isinstance(node.op, RandomVariable) for _, node in applys_with_inner([var]))


# -- the catalog ----------------------------------------------------------------------------------------------------
def _rng(rng: np.random.Generator) -> str:
    return f"rng=st.random.shared_rng(seed={int(rng.integers(2 ** 31))})"


def _size(rng: np.random.Generator, pool: Sequence[Any]) -> str:
    """A size: a scalar draw, or the concrete shape of an expression of the pool (so the draw combines with it)."""
    shaped = [e for e in pool if 1 <= e.ndim <= 3]
    if not shaped or rng.random() < 0.2:
        return "()"
    return repr(tuple(_recent(rng, shaped, lambda e: True).shape))


#: Draws with constant parameters (``SIZE`` and ``RNG`` are filled in).
CONSTANT_DRAWS = [
    "st.random.poisson(3.5, size=SIZE, RNG)",
    "st.random.exponential(2.0, size=SIZE, RNG)",
    "st.random.binomial(10, 0.3, size=SIZE, RNG)",
    "st.random.gamma(2.0, scale=1.5, size=SIZE, RNG)",
    "st.random.beta(2.0, 3.0, size=SIZE, RNG)",
    "st.random.integers(-5, 5, size=SIZE, RNG)",
    "st.random.bernoulli(0.3, size=SIZE, RNG)",
    "st.random.standard_normal(size=SIZE, RNG)",
    "st.random.categorical(np.array([0.2, 0.5, 0.3]), size=SIZE, RNG)",
    "st.random.laplace(0.0, 1.0, size=SIZE, RNG)",
    "st.random.logistic(1.0, 2.0, size=SIZE, RNG)",
    "st.random.gumbel(0.0, 1.0, size=SIZE, RNG)",
    "st.random.t(3.0, size=SIZE, RNG)",
    "st.random.lognormal(0.0, 0.5, size=SIZE, RNG)",
    "st.random.geometric(0.3, size=SIZE, RNG)",
    "st.random.negative_binomial(5, 0.5, size=SIZE, RNG)",
    "st.random.halfnormal(0.0, 1.0, size=SIZE, RNG)",
    "st.random.chisquare(3.0, size=SIZE, RNG)",
    "st.random.vonmises(0.0, 1.0, size=SIZE, RNG)",
    "st.random.triangular(0.0, 0.5, 1.0, size=SIZE, RNG)",
    "st.random.uniform(-1.0, 1.0, size=SIZE, RNG, dtype='float32')",
]

#: Draws with a support dimension (the lifts must leave it alone): the batch size is SIZE.
VECTOR_DRAWS = [
    "st.random.multivariate_normal(np.zeros(3), np.eye(3), size=SIZE, RNG)",
    "st.random.dirichlet(np.ones(3), size=SIZE, RNG)",
    "st.random.multinomial(5, np.array([0.2, 0.3, 0.5]), size=SIZE, RNG)",
]


def constant_draw_pick(rng, pool):
    """A draw of one of :data:`CONSTANT_DRAWS` (or, rarely, :data:`VECTOR_DRAWS`) shaped like an expression."""
    size = _size(rng, pool)
    if rng.random() < 0.15:
        template = VECTOR_DRAWS[int(rng.integers(len(VECTOR_DRAWS)))]
        size = "(2,)" if size == "()" else size
    else:
        template = CONSTANT_DRAWS[int(rng.integers(len(CONSTANT_DRAWS)))]
    return [], template.replace("SIZE", size).replace("RNG", _rng(rng))


def parameter_draw_pick(rng, pool):
    """A draw whose location is an expression: its size none, its shape (a static ``Shape`` to fold), or larger."""
    choice = rng.random()
    static = 0.35 <= choice < 0.6  # the size is the parameter's shape, known statically: random_constant_size folds it
    x = _recent(rng, pool, lambda e: is_float(e) and e.ndim <= 2 and (not static or None not in e.static))
    if x is None:
        return None
    if choice < 0.35:
        size = ""
    elif static:
        size = ", size={0}.shape"
    else:
        size = f", size={(2, *x.shape)!r}"
    template = ["st.random.normal({0}, 2.0SIZE, RNG)", "st.random.uniform({0}, {0} + 3.0SIZE, RNG)",
                "st.random.laplace({0}, 0.5SIZE, RNG)", "st.random.normal(0.0, st.abs({0}) + 0.5SIZE, RNG)",
                "st.random.gumbel({0}, 1.5SIZE, RNG)"][int(rng.integers(5))]
    return [x], template.replace("SIZE", size).replace("RNG", _rng(rng))


def draw_view_pick(rng, pool):
    """A view of a new draw: transposed, indexed, given new axes (the lifts' patterns), or a vector draw's batch."""
    x = _recent(rng, pool, lambda e: is_float(e) and 1 <= e.ndim <= 2 and min(e.shape) > 0)
    if x is None:
        return None
    draw = ["st.random.normal({0}, 1.0, size=SHAPE, RNG)", "st.random.uniform({0}, {0} + 1.0, size=SHAPE, RNG)"][
        int(rng.integers(2))].replace("SHAPE", repr((3, *x.shape))).replace("RNG", _rng(rng))
    views = [".dimshuffle(" + ", ".join(str(d) for d in reversed(range(x.ndim + 1))) + ")",
             "[1:]", "[-1]", "[::2, 0]", ".dimshuffle('x', " + ", ".join(str(d) for d in range(x.ndim + 1)) + ")",
             "[0, ::-1]"]
    return [x], draw + views[int(rng.integers(len(views)))]


def chained_draw_pick(rng, pool):
    """A draw from the next generator of an unused draw (what sidestepping removes), or the next of a used one."""
    size = _size(rng, pool)
    first = f"st.random.uniform(size=(3,), {_rng(rng)}, return_next_rng=True)[0]"
    return [], f"st.random.normal(0.0, 1.0, size={size}, rng={first})"


#: The random operations, added to the catalog in the ``random`` flavour.
RANDOM_OPS = [
    OpKind("draw", constant_draw_pick, 3.0),
    OpKind("draw_of_expression", parameter_draw_pick, 3.0),
    OpKind("draw_view", draw_view_pick, 4.0),
    OpKind("chained_draw", chained_draw_pick, 1.0),
]

__all__ = ["RANDOM_OPS", "RANDOM_RULES", "GeneratorAdvanced", "GeneratorStates", "drawn"]
