"""The checks on graphs themselves: gradients, random edit sequences with their trace, format round trips.

:func:`check_gradient`
    ``symlab.gradient.verify_grad`` (central finite differences) on a random smooth expression, projected
    on a random tensor to a scalar cost; then the symbolic gradient compiled in NUMPY and FAST_COMPILE
    (every rewrite on gradient graphs: fills, ``distribute_cancelling_divisions``...) against its
    evaluation by the eval path.
:func:`check_edits`
    a random sequence of ``fgraph.replace`` / ``replace_all`` / ``change_node_input`` /
    ``add_output`` / ``remove_output`` calls, refused edits (cycles, wrong types) and single rewrite rules
    of the standard database, made through one :class:`~symlab.rewriting.RewriteContext` that records a
    :class:`~symlab.rewriting.RewriteTrace`. After every edit: ``check_integrity``; values (the same bits
    after edits that keep them, the same values within tolerance after rules); the replay of the trace's
    last step equal to the live graph; a refused edit leaves the graph as it was and is the trace's last
    step. At the end: every step replayed (``graph_at``) equal to the snapshot taken when it was recorded,
    and a :class:`~symlab.rewriting.TraceCursor` moved at random over the steps equal to them too, with the
    keys the live graph's nodes had then (except nodes that left the graph and came back: see
    ``_Snapshots.reentered_keys``).
:func:`check_round_trips`
    the graph through every format of :mod:`symlab.formats` and back: the same printed graph and the same
    bits; the optimized graph of a compiled function through them too (same printed graph).

Each returns a list of problem texts (empty: the property holds).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from oracle import close, same_bits

import symlab
import symlab.formats as F
from symlab.gradient import GradientError, verify_grad
from symlab.graph.evaluate import evaluate
from symlab.graph.fg import FunctionGraph
from symlab.graph.traversal import equal_computations
from symlab.rewriting import EquilibriumGraphRewriter, GraphRewriter, RewriteContext, RewriteTrace, default_db

from .generate import Expr, build, input_variables, quiet
from .values import Env


# -- gradients -------------------------------------------------------------------------------------------------
def check_gradient(expr: Expr, env: Env, seed: int, modes: Sequence[str] = ("NUMPY", "FAST_COMPILE")) -> list[str]:
    """``verify_grad`` on ``expr``, then its gradient compiled in ``modes`` against the eval path."""
    names = sorted(expr.input_names())
    point = [env.values["special"][n] for n in names]

    def fn(*variables: Any) -> Any:
        return build([expr], dict(zip(names, variables)))[0]

    problems = []
    try:
        with quiet():
            verify_grad(fn, point, n_tests=1, rng=np.random.default_rng(seed))
    except GradientError as err:
        problems.append(f"verify_grad: {err}")
    inputs = input_variables(env.restricted(set(names)))
    variables = [inputs[n] for n in names]
    out = build([expr], inputs)[0]
    with quiet():
        shape = np.shape(evaluate([out], dict(zip(variables, point)))[0])
    projection = np.random.default_rng(seed).random(shape) + 0.5
    cost = (out * projection.astype(out.dtype)).sum()
    grads = symlab.grad(cost, variables, disconnected_inputs="ignore")
    with quiet():
        expected = evaluate(grads, dict(zip(variables, point)))
        for mode in modes:
            try:
                got = symlab.function(variables, grads, mode=mode, on_unused_input="ignore")(*point)
            except Exception as err:
                problems.append(f"gradient compiled in {mode}: raises {type(err).__name__}: {err}"[:400])
                continue
            for name, g, e in zip(names, got, expected):
                problem = close(g, e, strict=True)
                if problem:
                    problems.append(f"gradient wrt {name} compiled in {mode} differs from its evaluation: {problem}")
    return problems


# -- graph comparison ------------------------------------------------------------------------------------------
def op_strings(fg: FunctionGraph) -> list[str]:
    return [str(n.op) for n in fg.toposort()]


def same_graph(a: FunctionGraph, b: FunctionGraph) -> bool:
    """The same operations in the same order, computing the same thing from corresponding inputs."""
    return op_strings(a) == op_strings(b) and equal_computations(a.outputs, b.outputs, a.inputs, b.inputs)


def keyed_ops(fg: FunctionGraph, key: Callable[[Any], str]) -> set[tuple[str, str]]:
    """``{(key, op)}`` of the nodes of ``fg``: what a view following nodes by key would see."""
    return {(key(n), str(n.op)) for n in fg.apply_nodes}


def values_of(fg: FunctionGraph, values: Sequence[np.ndarray]) -> list[np.ndarray]:
    with quiet():
        return [np.asarray(v) for v in evaluate(fg.outputs, dict(zip(fg.inputs, values)))]


# -- edit sequences ---------------------------------------------------------------------------------------------
class _Snapshots:
    """Feature: the graph checked and copied after every recorded step, with its keys."""

    def __init__(self) -> None:
        self.graphs: dict[int, FunctionGraph] = {}
        self.keys: dict[int, set[tuple[str, str]]] = {}
        self.problems: list[str] = []
        #: Every key each node object had in the live graph.
        self.keys_of: dict[Any, set[str]] = {}

    def record(self, index: int, fgraph: FunctionGraph) -> None:
        self.graphs[index] = fgraph.clone(check_integrity=False)
        self.keys[index] = keyed_ops(fgraph, fgraph.key)
        for node in fgraph.apply_nodes:
            self.keys_of.setdefault(node, set()).add(fgraph.key(node))

    def on_rewrite_step(self, fgraph: FunctionGraph, step: Any) -> None:
        try:
            fgraph.check_integrity()
        except AssertionError as err:
            self.problems.append(f"step {step.index} ({step.rule}): check_integrity: {err}")
        self.record(step.index, fgraph)

    def reentered_keys(self) -> set[str]:
        """The keys of nodes that left the graph and came back (with a new key): a trace has one key per object.

        The live graph gives a node a new key each time it enters; the trace (and a cursor) one key per node
        object, the last: at the steps before a node came back, the cursor shows it under its new key. A
        replacement built on a node that the same change prunes (``replace_all``) makes such a node.
        """
        return {k for keys in self.keys_of.values() if len(keys) > 1 for k in keys}


RULES = [e.name for e in default_db if e.phase not in ("inplace",) and "optional" not in e.tags]


class _Edit(GraphRewriter):
    """One random edit of the graph (run through the context, so that the trace records it)."""

    def __init__(self, rng: np.random.Generator, values: Sequence[np.ndarray], output_edits: bool) -> None:
        super().__init__("fuzz_edit")
        self.rng = rng
        self.values = values
        self.kinds = ["replace", "replace", "ctx_replace", "other", "cycle", "wrong_type", "rule", "rule", "rule",
                      "change_input", "replace_all"] + (["add_output", "remove_output"] if output_edits else [])
        self.kind = ""
        self.keeps_values = True
        self.expect_refusal = False

    def _pick(self, items: Sequence[Any]) -> Any:
        return items[int(self.rng.integers(len(items)))]

    def apply(self, fgraph: FunctionGraph, ctx: RewriteContext) -> bool:
        computed = [v for n in fgraph.toposort() for v in n.outputs if v in fgraph.clients]
        self.kind = kind = self._pick(self.kinds)
        self.keeps_values, self.expect_refusal = True, False
        if not computed:
            self.kind = "nothing"
            return False
        var = self._pick(computed)
        twin = _twin(var)
        if kind == "replace":
            fgraph.replace(var, twin, reason="fuzz: an equivalent twin")
        elif kind == "ctx_replace":
            return ctx.replace(self, [(var, twin)], reason="fuzz: an equivalent twin, through the context")
        elif kind == "other":
            candidates = [*fgraph.inputs, *computed]
            with quiet():  # the runtime shapes must agree too: a size-1 dimension broadcasts only if static
                shapes = [np.shape(v) for v in evaluate(candidates, dict(zip(fgraph.inputs, self.values)))]
            shape = shapes[candidates.index(var)]
            # Floats only: an integer may be a size or an index further down, where another value breaks the graph.
            same_type = [u for u, s in zip(candidates, shapes) if u.type == var.type and s == shape and u is not var
                         and var.dtype.startswith("float") and var not in _ancestors(u)]
            if not same_type:
                self.kind = "nothing"
                return False
            self.keeps_values = False
            fgraph.replace(var, self._pick(same_type), reason="fuzz: another variable of the same type")
        elif kind == "cycle":
            self.expect_refusal = True
            return ctx.replace(self, [(var, symlab.tensor.identity(var))], reason="fuzz: a cycle, to refuse")
        elif kind == "wrong_type":
            self.expect_refusal = True
            other = "float32" if var.dtype != "float32" else "float64"
            return ctx.replace(self, [(var, symlab.tensor.cast(twin, other))], reason="fuzz: wrong dtype")
        elif kind == "rule":
            self.keeps_values = False  # within tolerance: rules reassociate
            name = self._pick(RULES)
            self.kind = f"rule {name}"
            return ctx.run(EquilibriumGraphRewriter([default_db[name].rewriter], name=name))
        elif kind == "add_output":
            fgraph.add_output(var, reason="fuzz: one more output")
        elif kind == "remove_output":
            if len(fgraph.outputs) < 2:
                self.kind = "nothing"
                return False
            fgraph.remove_output(int(self.rng.integers(len(fgraph.outputs))), reason="fuzz")
        elif kind == "change_input":
            users = [(n, i) for n in fgraph.toposort() for i, v in enumerate(n.inputs) if v.owner is not None]
            if not users:
                self.kind = "nothing"
                return False
            node, i = self._pick(users)
            v = node.inputs[i]
            fgraph.change_node_input(node, i, _twin(v), reason="fuzz")
        elif kind == "replace_all":
            other = self._pick(computed)
            if other is var:
                self.kind = "nothing"
                return False
            pairs = [(var, twin), (other, _twin(other))]
            if other in _ancestors(var):  # the second pair's old variable would be gone: replace it first
                pairs.reverse()
            fgraph.replace_all(pairs, reason="fuzz: two twins at once")
        return True


def _twin(v: Any) -> Any:
    """The same computation as ``v`` by a new node (``Apply.clone``: the same op, inputs and output types).

    Not ``op.make_node(*inputs)``: it does not always give the node's own output type back (see the
    report of tests/fuzz: a weak Python number broadcast by a DimShuffle is no longer weak).
    """
    return v.owner.clone().outputs[v.index]


def _ancestors(v: Any) -> set[Any]:
    out, stack = set(), [v]
    while stack:
        u = stack.pop()
        if u in out:
            continue
        out.add(u)
        if u.owner is not None:
            stack.extend(u.owner.inputs)
    return out


def graph_of(exprs: Sequence[Expr], env: Env, config: str) -> tuple[FunctionGraph, list[np.ndarray]]:
    """The FunctionGraph computing ``exprs`` from the inputs of ``env``, and the values of set ``config``."""
    inputs = input_variables(env)
    fg = FunctionGraph([inputs[s.name] for s in env.inputs], build(exprs, inputs))
    return fg, [env.values[config][s.name] for s in env.inputs]


def check_edits(exprs: Sequence[Expr], env: Env, seed: int, n_edits: int = 14,
                output_edits: bool = False) -> tuple[list[str], int]:
    """A random sequence of ``n_edits`` edits on the graph of ``exprs`` (see the module docstring).

    ``output_edits``: also ``add_output`` and ``remove_output`` (the campaigns' default). Returns the problems and the number of steps the trace recorded.
    """
    fg, values = graph_of(exprs, env, "moderate")
    return check_edits_on(fg, values, seed, n_edits, output_edits)


def check_edits_on(fg: FunctionGraph, values: Sequence[np.ndarray], seed: int, n_edits: int = 14,
                   output_edits: bool = False) -> tuple[list[str], int]:
    """:func:`check_edits` on a FunctionGraph of yours (``values``: one array per input); it is edited."""
    rng = np.random.default_rng(seed)
    snapshots = _Snapshots()
    fg.attach_feature(snapshots)
    trace = RewriteTrace(fg)
    problems: list[str] = []
    expected = values_of(fg, values)
    snapshots.record(0, fg)
    edit = _Edit(rng, values, output_edits)
    with RewriteContext(fg, trace, "fuzz") as ctx:
        for n in range(n_edits):
            before_version, before_steps = fg.version, len(trace)
            before = fg.clone(check_integrity=False)
            try:
                ctx.run(edit)
            except Exception as err:  # an edit the graph must accept raised
                problems.append(f"edit {n} ({edit.kind}): raises {type(err).__name__}: {err}"[:400])
                break
            where = f"edit {n} ({edit.kind})"
            try:
                fg.check_integrity()
            except AssertionError as err:
                problems.append(f"{where}: check_integrity: {err}")
                break
            if edit.expect_refusal and (fg.version != before_version or not same_graph(fg, before)):
                problems.append(f"{where}: a refused edit changed the graph")
            if edit.expect_refusal and (len(trace) != before_steps + 1 or trace.steps[-1].accepted):
                problems.append(f"{where}: the refusal is not the trace's last step")
            try:
                got = values_of(fg, values)
            except Exception as err:
                problems.append(f"{where}: the edited graph cannot be evaluated: {type(err).__name__}: {err}"[:400])
                break
            if edit.kind in ("add_output", "remove_output"):
                diffs = []  # the outputs themselves changed
            elif edit.kind.startswith("rule"):
                diffs = [close(g, e, strict=False) for g, e in zip(got, expected)]
            elif edit.keeps_values:
                diffs = [same_bits(g, e) for g, e in zip(got, expected)]
            else:
                diffs = []
            diffs = [d for d in diffs if d]
            if diffs:
                problems.append(f"{where}: output values changed: {diffs[0]}")
            expected = got
            if len(trace):
                try:
                    replayed, _ = trace.replay(len(trace))
                except Exception as err:
                    problems.append(f"{where}: replaying the trace to its last step raises {type(err).__name__}: {err}"[:400])
                    break
                if not same_graph(replayed, fg.clone(check_integrity=False)):
                    problems.append(f"{where}: the replay of the last step ({len(trace)}) differs from the live graph")
    problems += snapshots.problems
    if problems:
        return problems, len(trace)  # the replays below would only repeat what went wrong
    for step in trace:  # a refused step leaves the graph as it was
        if step.index not in snapshots.graphs and not step.accepted:
            snapshots.graphs[step.index] = snapshots.graphs[step.index - 1]
            snapshots.keys[step.index] = snapshots.keys[step.index - 1]
        if step.index not in snapshots.graphs:
            problems.append(f"step {step.index} ({step.rule}): no on_rewrite_step call for this accepted step")
        elif not same_graph(trace.graph_at(step.index), snapshots.graphs[step.index]):
            problems.append(f"step {step.index} ({step.rule}): graph_at differs from the graph recorded at that step")
    cursor = trace.cursor()
    walk: list[int] = []
    for k in np.random.default_rng([seed, 1]).integers(0, len(trace) + 1, size=min(8, len(trace) + 1)):
        k = int(k)
        walk.append(k)
        cursor.seek(k)
        if k not in snapshots.graphs:
            continue  # reported above
        if not same_graph(cursor.fgraph, snapshots.graphs[k]):
            problems.append(f"cursor moved to steps {walk}: its graph differs from the graph recorded at that step")
        ignored = snapshots.reentered_keys()
        keys = {(key, op) for key, op in keyed_ops(cursor.fgraph, cursor.key) if key not in ignored}
        live = {(key, op) for key, op in snapshots.keys[k] if key not in ignored}
        if keys != live:
            problems.append(f"cursor moved to steps {walk}: its nodes' keys at step {k} "
                            f"differ from the live graph's then: only the cursor has {sorted(keys - live)}, "
                            f"only the live graph had {sorted(live - keys)}")
    return problems, len(trace)


# -- format round trips -------------------------------------------------------------------------------------
def _through_formats(fg: FunctionGraph) -> dict[str, FunctionGraph]:
    """``fg`` through each format (and chains of them) and back to a FunctionGraph."""
    out: dict[str, FunctionGraph] = {}
    tdag, ins, outs = F.fgraph_to_tuple_dag(fg)
    out["tuple-dag"] = F.tuple_dag_to_fgraph(tdag, ins, outs)
    dag, dins, douts = F.fgraph_to_dag(fg)
    out["dag"] = F.dag_to_fgraph(dag, dins, douts)
    idag = F.tuple_dag_to_index_dag(tdag, ins, outs)
    out["index-dag"] = F.tuple_dag_to_fgraph(*F.index_dag_to_tuple_dag(*idag))
    out["dag -> index-dag -> dag"] = F.dag_to_fgraph(*F.index_dag_to_dag(*F.dag_to_index_dag(dag, dins, douts)))
    unidag, jobs, uins, uouts = F.dag_to_unidag(dag, dins, douts)
    out["unidag"] = F.dag_to_fgraph(*F.unidag_to_dag(unidag, jobs, uins, uouts))
    out["tuple-dag -> dag -> tuple-dag"] = F.tuple_dag_to_fgraph(*F.dag_to_tuple_dag(*F.tuple_dag_to_dag(tdag, ins, outs)))
    return out


def check_round_trips(exprs: Sequence[Expr], env: Env, optimized: bool = True) -> tuple[list[str], int]:
    """The graph of ``exprs`` (and its NUMPY-optimized graph) through every format; problems and round trips."""
    fg, values = graph_of(exprs, env, "special")
    return check_round_trips_on(fg, values, optimized)


def check_round_trips_on(fg: FunctionGraph, values: Sequence[np.ndarray], optimized: bool = True) -> tuple[list[str], int]:
    """:func:`check_round_trips` on a FunctionGraph of yours (``values``: one array per input)."""
    text = symlab.dprint(fg, file="str")
    expected = values_of(fg, values)
    problems: list[str] = []
    count = 0
    for name, back in _through_formats(fg).items():
        count += 1
        back.check_integrity()
        if symlab.dprint(back, file="str") != text or not same_graph(back, fg):
            problems.append(f"{name}: the round trip prints another graph")
            continue
        for k, (g, e) in enumerate(zip(values_of(back, values), expected)):
            problem = same_bits(g, e)
            if problem:
                problems.append(f"{name}: output {k} after the round trip: {problem}")
    if optimized:
        f = symlab.function(fg.inputs, fg.outputs, mode="NUMPY", on_unused_input="ignore")
        opt = f.maker.fgraph
        opt_text = symlab.dprint(opt, file="str")
        for name, back in _through_formats(opt).items():
            count += 1
            if symlab.dprint(back, file="str") != opt_text:
                problems.append(f"{name}: the round trip of the optimized graph prints another graph")
    return problems, count
