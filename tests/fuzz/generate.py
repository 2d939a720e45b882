"""The seeded generator of random expressions, and their Python code.

An :class:`Expr` is a node of a random expression: a code template over its arguments (see ``ops``),
with the dtype, static shape and concrete shape of its value. Expressions are DAGs (a motif like
``x * y / y`` uses ``y`` twice) whose leaves are the inputs of an :class:`~values.Env`.

The generator grows one expression at a time from the inputs: it draws an operation, lets it pick its
arguments among the nodes built so far, builds the symbolic graph from the template, and evaluates the
new node on both value sets with the reference path (``symlab.graph.evaluate``, each op's ``perform``).
A candidate symlab refuses, or whose reference raises (a shape mismatch, NumPy refusing an integer
power), is drawn again, and the refusals are counted: the generator never needs to know symlab's typing
rules, it asks symlab.

A :class:`Batch` is one environment and many expressions: compiled together as one function with many
outputs, one compile covers them all (each expression still counts as one graph tried).
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import symlab.tensor as st
from symlab.graph.evaluate import evaluate
from symlab.ifelse import ifelse

from .inner import IFELSE_RATE, PACKAGE_RATE, ifelse_over, package, packaged, substitute
from .loops import LOOP_RATE, loop_over, looped
from .ops import OPS, OpKind
from .randomness import RANDOM_OPS
from .values import Env, make_env

#: No generated value may have more elements than this (an outer product of an outer product...):
#: small values keep the reference, the finite differences and the shrinker fast.
MAX_SIZE = 64


@dataclass(eq=False)
class Expr:
    """A node of a random expression (identity semantics: a DAG may share nodes)."""

    op: str  # an OPS name, or "input"
    template: str  # code over the arguments ``{0}``, ``{1}``...; an input's name
    args: tuple[Expr, ...] = ()
    dtype: str = ""
    static: tuple[int | None, ...] = ()
    shape: tuple[int, ...] = ()

    @property
    def ndim(self) -> int:
        return len(self.static)

    def nodes(self) -> list[Expr]:
        """Every node of the DAG below (and including) this one, each once, arguments first."""
        order: list[Expr] = []
        seen: set[int] = set()
        stack: list[tuple[Expr, bool]] = [(self, False)]
        while stack:
            node, expanded = stack.pop()
            if id(node) in seen:
                continue
            if expanded:
                seen.add(id(node))
                order.append(node)
                continue
            stack.append((node, True))
            stack.extend((a, False) for a in reversed(node.args) if id(a) not in seen)
        return order

    def size(self) -> int:
        """How many operations (non-input nodes) the expression has: what the shrinker minimises."""
        return sum(1 for n in self.nodes() if n.op != "input")

    def input_names(self) -> set[str]:
        return {n.template for n in self.nodes() if n.op == "input"}

    def __repr__(self) -> str:
        return f"Expr({code_of([self])[-1]})"


@dataclass
class Batch:
    """An environment and the expressions over it; ``seed`` and ``index`` reproduce it."""

    env: Env
    exprs: list[Expr]
    seed: int
    index: int
    flavor: str = "differential"


#: A refusal that is a bug: the reference value's dtype or rank is not what the graph's type says.
ANOMALY = "reference value disagrees with the graph's type"


@dataclass
class GenStats:
    """What the generator built and refused (``"op: reason"``: the exception symlab or NumPy raised)."""

    built: Counter = field(default_factory=Counter)
    refused: Counter = field(default_factory=Counter)

    def anomalies(self) -> dict[str, int]:
        """The refusals that are bugs (see :data:`ANOMALY`), by operation."""
        return {k: n for k, n in self.refused.items() if k.endswith(ANOMALY)}


# -- building ----------------------------------------------------------------------------------------------
NAMESPACE: dict[str, Any] = {"st": st, "np": np, "ifelse": ifelse, "packaged": packaged, "looped": looped}


def apply_template(template: str, args: Sequence[Any]) -> Any:
    """Evaluate ``template`` with its arguments bound (``{k}`` is the k-th argument)."""
    names = {f"_{k}": a for k, a in enumerate(args)}
    return eval(template.format(*names), {**NAMESPACE, **names})  # noqa: S307 - templates of ops.py


def input_variables(env: Env) -> dict[str, Any]:
    """A fresh symbolic variable per input of ``env``."""
    return {s.name: st.tensor(s.dtype, shape=s.static, name=s.name) for s in env.inputs}


def build(exprs: Iterable[Expr], inputs: dict[str, Any], memo: dict[int, Any] | None = None) -> list[Any]:
    """The symbolic variables of ``exprs`` over the variables ``inputs`` (by name)."""
    memo = {} if memo is None else memo
    out = []
    for root in exprs:
        for node in root.nodes():
            if id(node) in memo:
                continue
            if node.op == "input":
                memo[id(node)] = inputs[node.template]
            else:
                memo[id(node)] = apply_template(node.template, [memo[id(a)] for a in node.args])
        out.append(memo[id(root)])
    return out


@contextmanager
def quiet() -> Iterator[None]:
    """NumPy's floating-point warnings (overflow, invalid...) silenced: on these values they are expected."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


# -- generating --------------------------------------------------------------------------------------------
def _choose(rng: np.random.Generator, ops: Sequence[OpKind], weights: np.ndarray) -> OpKind:
    return ops[int(rng.choice(len(ops), p=weights))]


class Generator:
    """Draws expressions over one environment, evaluating each new node on both value sets."""

    def __init__(self, rng: np.random.Generator, env: Env, smooth: bool = False, stats: GenStats | None = None,
                 inner_rng: np.random.Generator | None = None, extra_ops: Sequence[OpKind] = (),
                 loop_rng: np.random.Generator | None = None):
        self.rng = rng
        #: The stream of the inner-graph decorations (``inner``): None, none.
        self.inner_rng = inner_rng
        #: The stream of the loops (``loops``, the ``loops`` flavour only): None, none.
        self.loop_rng = loop_rng
        self.env = env
        self.smooth = smooth
        self.stats = stats if stats is not None else GenStats()
        self.ops = [op for op in [*OPS.values(), *extra_ops] if (op.smooth_weight if smooth else op.weight) > 0]
        w = np.array([op.smooth_weight if smooth else op.weight for op in self.ops])
        self.weights = w / w.sum()
        self.leaves = []
        self.values: dict[int, dict[str, Any]] = {}
        self.vars: dict[int, Any] = {}
        inputs = input_variables(env)
        for s in env.inputs:
            leaf = Expr("input", s.name, (), s.dtype, s.static, s.shape)
            self.leaves.append(leaf)
            self.values[id(leaf)] = {k: vs[s.name] for k, vs in env.values.items()}
            self.vars[id(leaf)] = inputs[s.name]

    def _try(self, op: OpKind, pool: list[Expr]) -> Expr | None:
        picked = op.pick(self.rng, pool)
        if picked is None:
            return None
        return self._make(op.name, *picked)

    def _make(self, name: str, args: Sequence[Expr], template: str) -> Expr | None:
        """The node ``template`` of ``args``, evaluated on both value sets (None, counted, if it is refused)."""
        try:
            var = apply_template(template, [self.vars[id(a)] for a in args])
            values = {}
            with quiet():
                for k in self.env.values:
                    given = {self.vars[id(a)]: self.values[id(a)][k] for a in args}
                    values[k] = np.asarray(evaluate([var], given)[0])
        except Exception as err:  # symlab or NumPy refused this candidate: draw again
            self.stats.refused[f"{name}: {type(err).__name__}"] += 1
            return None
        shapes = {v.shape for v in values.values()}
        shape = next(iter(shapes))
        if any(v.dtype != np.dtype(var.dtype) or v.ndim != var.ndim for v in values.values()):
            # perform computed another dtype or rank than the graph's type says: a bug, counted and reported
            self.stats.refused[f"{name}: {ANOMALY}"] += 1
            return None
        if len(shapes) != 1 or max(v.size for v in values.values()) > MAX_SIZE:  # data-dependent, or too big
            self.stats.refused[f"{name}: shape"] += 1
            return None
        node = Expr(name, template, tuple(args), var.dtype, tuple(var.type.shape), shape)
        self.values[id(node)] = values
        self.vars[id(node)] = var
        self.stats.built[name] += 1
        return node

    def expression(self, n_ops: int) -> Expr:
        """One expression of about ``n_ops`` operations (at least one)."""
        pool = list(self.leaves)
        built: list[Expr] = []
        attempts = 0
        while (len(built) < n_ops or not built) and attempts < 40 * n_ops + 40:
            attempts += 1
            node = self._try(_choose(self.rng, self.ops, self.weights), pool)
            if node is not None:
                pool.append(node)
                built.append(node)
        if not built:  # pragma: no cover - every environment has a float matrix, and st.exp always applies
            raise RuntimeError("the generator could not build any expression")
        root = self.decorate(built[-1], pool)
        return self.loop(root, [*pool, root])

    def decorate(self, root: Expr, pool: list[Expr]) -> Expr:
        """``root``, maybe made a branch of an ifelse and with subexpressions packaged as ops (``inner``).

        The draws come from :attr:`inner_rng`, so the expressions are the same with or without them.
        """
        rng = self.inner_rng
        if rng is None or (self.smooth and rng.random() < 0.5):
            return root
        if rng.random() < IFELSE_RATE:
            picked = ifelse_over(rng, root, pool)
            node = self._make("ifelse", *picked) if picked is not None else None
            if node is not None:
                root = node
                pool = [*pool, node]
        for _ in range(2):
            if rng.random() >= PACKAGE_RATE:
                break
            picked = package(rng, root, [e for e in pool if id(e) in self.vars])
            node = self._make("packaged", *picked[:2]) if picked is not None else None
            if node is None:
                break
            body, same_value = picked[2], picked[3]
            if same_value and (node.dtype, node.static, node.shape) == (body.dtype, body.static, body.shape):
                root = substitute(root, body, node)
            else:
                root = node
        return root


    def loop(self, root: Expr, pool: list[Expr]) -> Expr:
        """``root``, maybe made a loop over a subexpression of it (``loops``), drawn from :attr:`loop_rng`."""
        rng = self.loop_rng
        if rng is None or rng.random() >= LOOP_RATE:
            return root
        picked = loop_over(rng, root, [e for e in pool if id(e) in self.vars])
        node = self._make("looped", *picked) if picked is not None else None
        return root if node is None else node


#: The streams of each flavour: (expressions, inner-graph decorations). ``random`` adds the draws of
#: :data:`~randomness.RANDOM_OPS` to the catalog (the other flavours' expressions stay what they were);
#: ``loops`` makes most expressions loops (:data:`LOOP_STREAM`), ``smooth_loops`` most smooth ones (for gradients).
FLAVOR_STREAMS = {"differential": (0, 2), "smooth": (1, 3), "random": (4, 5), "loops": (6, 7), "smooth_loops": (9, 10)}
#: The stream of the ``loops`` flavour's loops.
LOOP_STREAM = 8


def generate_batch(seed: int, index: int, n_exprs: int, flavor: str = "differential",
                   stats: GenStats | None = None, max_ops: int = 7) -> Batch:
    """Batch ``index`` of the run seeded ``seed``: a fresh environment and ``n_exprs`` expressions."""
    if flavor not in FLAVOR_STREAMS:
        raise ValueError(f"generate_batch: flavor must be one of {sorted(FLAVOR_STREAMS)}, received {flavor!r}")
    stream, inner_stream = FLAVOR_STREAMS[flavor]
    rng = np.random.default_rng([seed, index, stream])
    smooth = flavor in ("smooth", "smooth_loops")
    env = make_env(rng, "smooth" if smooth else "differential")
    inner_rng = np.random.default_rng([seed, index, inner_stream])
    loop_rng = np.random.default_rng([seed, index, LOOP_STREAM]) if flavor in ("loops", "smooth_loops") else None
    gen = Generator(rng, env, smooth=smooth, stats=stats, inner_rng=inner_rng,
                    extra_ops=RANDOM_OPS if flavor == "random" else (), loop_rng=loop_rng)
    exprs = [gen.expression(int(rng.integers(1, max_ops + 1))) for _ in range(n_exprs)]
    return Batch(env, exprs, seed, index, flavor)


# -- code --------------------------------------------------------------------------------------------------
def code_of(exprs: Sequence[Expr], names: Sequence[str] | None = None) -> list[str]:
    """Python lines computing ``exprs`` from the input variables (named as the inputs).

    A node used more than once gets a temporary (``t0 = ...``); the k-th expression is assigned to
    ``names[k]`` (default ``out0``, ``out1``...).
    """
    names = list(names) if names is not None else [f"out{k}" for k in range(len(exprs))]
    uses: Counter = Counter()
    order: list[Expr] = []
    seen: set[int] = set()
    for root in exprs:
        for node in root.nodes():
            if id(node) not in seen:
                seen.add(id(node))
                order.append(node)
                uses.update(id(a) for a in node.args)
    text: dict[int, str] = {}
    lines: list[str] = []
    temps = 0
    roots = {id(e) for e in exprs}
    for node in order:
        if node.op == "input":
            text[id(node)] = node.template
            continue
        code = node.template.format(*[text[id(a)] for a in node.args])
        if uses[id(node)] > 1 and id(node) not in roots:
            name = f"t{temps}"
            temps += 1
            lines.append(f"{name} = {code}")
            code = name
        text[id(node)] = code
    for name, root in zip(names, exprs):
        lines.append(f"{name} = {text[id(root)]}")
    return lines
