"""The inner graphs a values view draws open: which nodes are open, their inner values, their branches' states.

An open node is named by its key: an outer node's (``a5``) or, inside an open node, ``a5/a2`` (the outer
key, then the key of its inner graph, :func:`~symlab.notebook.inner_values.resolve_inner`). An open node that
owns a graph (a ``Composite``, an ``OpFromGraph``) is run again on its input values
(:func:`~symlab.notebook.inner_values.inner_evaluation`), and its inner variables get the lines the outer ones
get: the value, and the gradient where the view shows gradients (an ``OpFromGraph``'s inner graph is
differentiated from the gradients of the node's outputs; a fused ``Composite`` has no gradient of its own).
A branch node (an ``ifelse``) shows which branch it took (``section_states``): the other one is greyed, and
its nodes, never computed, say so. Where a NaN or an inf is born inside a node, its inner node is named.

>>> import numpy as np
>>> import symlab
>>> import symlab.tensor as st
>>> from symlab.notebook.keys import KeyIndex
>>> from symlab.printing.folding import toposort
>>> from symlab.printing.subject import subject_of
>>> x = st.dvector("x")
>>> fg = symlab.function([x], st.log(x) * 2 + 1, mode="NUMPY").maker.fgraph
>>> (node,) = fg.toposort()
>>> values = {fg.inputs[0]: np.array([0.5, -1.0])}
>>> values[node.outputs[0]] = node.op.scalar_op.impl(values[fg.inputs[0]])
>>> opened = OpenInner(KeyIndex(subject_of(fg), *toposort(list(fg.outputs))))
>>> key = fg.key(node)
>>> opened.open(key) == [key]
True
>>> opened.evaluate(values, {})
>>> [(k.replace(key, "<node>"), lines) for k, lines in opened.lines().items()][:3]
[('<node>/v0', ['[0.5, -1.0]']), ('<node>/v2', ['[-0.6931, nan]']), ('<node>/v5', ['[-1.386, nan]'])]
>>> [k.replace(key, "<node>") for k in opened.nan_origins(node)], str(opened.resolve(key + "/a1")[1].op)
(['<node>/a1'], 'log')
"""

from __future__ import annotations

from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Constant, Variable
from symlab.notebook.inner_values import (
    Branch,
    Evaluation,
    SectionCache,
    branch_sections,
    evaluate_lazily,
    inner_evaluation,
    inner_graph_of,
    inner_keys,
    inner_op,
    resolve_inner,
)
from symlab.notebook.loop_values import LoopRun, is_loop_node
from symlab.notebook.value_text import has_nan_inf, value_lines

__all__ = ["NOT_COMPUTED", "OpenInner", "branch_lines"]

#: What a variable no run computed (a branch not taken) shows instead of a value.
NOT_COMPUTED = "not computed"


def branch_lines(branch: Branch) -> list[str]:
    """What a branch node says under its op: the branch it took, and its condition's value."""
    return [f"took {branch.taken}", f"condition {' '.join(value_lines(branch.condition))}"]


class OpenInner:
    """The open nodes of a values view over the graph keyed by ``keys`` (a :class:`~symlab.notebook.keys.KeyIndex`)."""

    def __init__(self, keys: Any, sections: SectionCache | None = None) -> None:
        self._keys = keys
        self.sections = sections or SectionCache()
        #: The keys of the open nodes, outermost first.
        self.keys: list[str] = []
        #: Each open node's inner run (nodes that own a graph and were computed).
        self.runs: dict[str, Evaluation] = {}
        #: Each open node's inner gradients, ``{inner variable: value}``.
        self.grads: dict[str, dict[Variable, Any]] = {}
        self._branches: dict[Apply, Branch] = {}
        self._grad_graphs: dict[str, Any] = {}
        #: Each open loop's run (:class:`~symlab.notebook.loop_values.LoopRun`), and the iteration it shows.
        self.loops: dict[str, LoopRun] = {}
        self.iterations: dict[str, int] = {}

    # -- naming ---------------------------------------------------------------------------------------
    def resolve(self, key: str) -> tuple[list[Apply], Any] | None:
        """The chain of nodes opened on the way to the object of the inner key ``key``, and the object."""
        return resolve_inner(key, self._keys.obj)

    def node(self, key: str) -> Apply | None:
        """The Apply node an open key (or any key) names, outer or inner; ``None`` if none."""
        if "/" not in key:
            obj = self._keys.obj(key)
            return obj if isinstance(obj, Apply) else None
        found = self.resolve(key)
        return found[1] if found is not None and isinstance(found[1], Apply) else None

    def key_of(self, node: Apply) -> str | None:
        """The key of ``node``: an outer node's, or an inner node's in an open node (``None`` if not drawn)."""
        key = self._keys.key(node)
        if key is not None:
            return key
        for prefix in self.keys:
            outer = self.node(prefix)
            if outer is not None:
                key = inner_keys(prefix, outer).get(node)
                if key is not None:
                    return key
        return None

    @staticmethod
    def openable(node: Apply | None, sections: SectionCache) -> bool:
        return node is not None and bool(sections(node))

    # -- opening ----------------------------------------------------------------------------------------
    def open(self, key: str) -> list[str]:
        """Open the node ``key`` and the nodes it is inside; the keys opened now (none: it was open)."""
        parts = key.split("/")
        opened = []
        for k in range(1, len(parts) + 1):
            prefix = "/".join(parts[:k])
            node = self.node(prefix)
            if node is None or not self.sections(node):
                if k == len(parts):
                    raise ValueError(f"expand: {key!r} is not the key of a node with an inner graph")
                continue
            if prefix not in self.keys:
                self.keys.append(prefix)
                opened.append(prefix)
        for prefix in list(opened):  # the branch nodes inside open too: the branch not taken greyed
            node = self.node(prefix)
            fgraph = inner_graph_of(node) if node is not None else None
            for inner in fgraph.toposort() if fgraph is not None else ():
                key = f"{prefix}/{fgraph.key(inner)}"
                if key not in self.keys and branch_sections(inner, SectionCache(fgraph)):
                    self.keys.append(key)
                    opened.append(key)
        return opened

    def close(self, key: str) -> str | None:
        """Close the innermost open node that is ``key`` or holds it, and those inside it; its key, or ``None``."""
        holders = [k for k in self.keys if key == k or key.startswith(k + "/")]
        if not holders:
            return None
        closed = max(holders, key=len)
        self.keys = [k for k in self.keys if not (k == closed or k.startswith(closed + "/"))]
        self.runs = {k: v for k, v in self.runs.items() if k in self.keys}
        self.loops = {k: v for k, v in self.loops.items() if k in self.keys}
        self.iterations = {k: v for k, v in self.iterations.items() if k in self.keys}
        return closed

    # -- values -----------------------------------------------------------------------------------------------
    def evaluate(self, values: dict[Variable, Any], grads: dict[Variable, Any],
                 branches: dict[Apply, Branch] | None = None) -> None:
        """Run every open node's inner graph on its input values (outer values, or its parent's inner ones)."""
        self._branches = dict(branches or {})
        self.runs, self.grads = {}, {}
        for key in sorted(self.keys, key=lambda k: k.count("/")):
            node = self.node(key)
            if node is None or inner_op(node.op) is None:
                continue
            known = values if "/" not in key else self.runs.get(key.rsplit("/", 1)[0], Evaluation([], {})).values
            if not all(v in known or isinstance(v, Constant) for v in node.inputs):
                continue  # the node itself was not computed (a branch not taken)
            inputs = [known[v] if v in known else v.data for v in node.inputs]
            if is_loop_node(node):  # one iteration's values; a loop's body has no per-iteration gradient here
                self.runs[key] = self._loop_iteration(key, node, inputs)
                continue
            run = inner_evaluation(node, inputs)
            self.runs[key] = run
            outer_grads = grads if "/" not in key else self.grads.get(key.rsplit("/", 1)[0], {})
            given = {o: outer_grads[o] for o in node.outputs if o in outer_grads}
            if given:
                self.grads[key] = self._inner_grads(key, node, run, given)

    def loop_run(self, key: str, node: Apply, inputs: list[Any]) -> LoopRun:
        """The run of the loop ``node`` (keyed ``key``) on ``inputs``: the one kept while its inputs are the same."""
        run = self.loops.get(key)
        if run is None or run.node is not node or not _same_values(run.inputs, inputs):
            run = self.loops[key] = LoopRun(node, inputs)
        return run

    def _loop_iteration(self, key: str, node: Apply, inputs: list[Any]) -> Evaluation:
        """The inner values of the iteration the open loop ``key`` shows (where a NaN is born, else the last)."""
        run = self.loop_run(key, node, inputs)
        if not run.steps:
            self.iterations.pop(key, None)
            return Evaluation([], {})
        t = self.iterations.get(key)
        if t is None or t >= run.steps:
            t = run.nan_at if run.nan_at is not None else run.steps - 1
        self.iterations[key] = t
        return Evaluation([o for o in run.section.outputs if o is not None], run.values_at(t))

    def _inner_grads(self, key: str, node: Apply, run: Evaluation, given: dict[Variable, Any]) -> dict[Variable, Any]:
        """The gradient of the cost with respect to each inner variable, from the gradients of ``node``'s outputs."""
        owner = inner_op(node.op)
        if owner is None or owner is not node.op:
            return {}  # a fused Composite: fusion runs after differentiation, its scalar graph has no gradient
        graphs = self._grad_graphs.get(key)
        if graphs is None:
            graphs = self._grad_graphs[key] = _inner_grad_graphs(owner)
        if graphs is None:
            return {}
        seeds, wanted = graphs
        feed = {}
        for seed, out, inner_out in zip(seeds, node.outputs, owner.inner_outputs):
            # an output on no path to the cost has a zero gradient
            feed[seed] = given[out] if out in given else np.zeros_like(run.values[inner_out], dtype=seed.type.dtype)
        try:
            done = evaluate_lazily(list(wanted.values()), feed, known=run.values)
        except Exception:  # an inner gradient that cannot be computed is left out, never shown wrong
            return {}
        return {var: done.values[g] for var, g in wanted.items() if var in run.values and g in done.values}

    # -- what the picture gets ----------------------------------------------------------------------------
    def lines(self) -> dict[str, list[str]]:
        """``{inner key: lines}`` of every inner variable of the open nodes (its value, or why it has none)."""
        found: dict[str, list[str]] = {}
        for key in self.keys:
            node = self.node(key)
            if node is None or inner_op(node.op) is None:
                continue
            run = self.runs.get(key)
            grads = self.grads.get(key, {})
            loop = self.loops.get(key)
            if loop is not None:
                t = self.iterations.get(key)
                found[key] = [f"t = {t} of 0 … {loop.steps - 1}" if t is not None else "0 iterations ran"]
            for obj, inner_key in inner_keys(key, node).items():
                if isinstance(obj, Apply):
                    branch = run.branches.get(obj) if run is not None else None
                    if branch is not None:
                        found[inner_key] = branch_lines(branch)
                    continue
                if isinstance(obj, Constant):
                    continue
                if run is None or obj not in run.values:
                    found[inner_key] = [NOT_COMPUTED]
                    continue
                lines = value_lines(run.values[obj])
                if obj in grads:
                    grad = value_lines(grads[obj])
                    lines += [f"grad {grad[0]}", *grad[1:]]
                found[inner_key] = lines
        return found

    def section_states(self) -> dict[tuple[str, str], str]:
        """``{(node key, section label): "taken" | "skipped"}`` of every branch node run, outer or inner."""
        states: dict[tuple[str, str], str] = {}

        def put(key: str | None, branch: Branch) -> None:
            if key is None:
                return
            for label in branch.taken.split(","):
                states[(key, label)] = "taken"
            for label in branch.skipped:
                states[(key, label)] = "skipped"

        for node, branch in self._branches.items():
            put(self._keys.key(node), branch)
        for prefix, run in self.runs.items():
            node = self.node(prefix)
            keys = inner_keys(prefix, node) if node is not None else {}
            for inner, branch in run.branches.items():
                put(keys.get(inner), branch)
        return states

    def inner_values(self, key: str) -> dict[Variable, Any]:
        """The inner values of the open node ``key`` (empty: not open, or not computed)."""
        run = self.runs.get(key)
        return dict(run.values) if run is not None else {}

    def value_of(self, key: str) -> tuple[bool, Any]:
        """``(computed, value)`` of the inner variable keyed ``key``."""
        holder = key.rsplit("/", 1)[0]
        found = self.resolve(key)
        run = self.runs.get(holder)
        if found is None or run is None or found[1] not in run.values:
            return False, None
        return True, run.values[found[1]]

    def grad_of(self, key: str) -> Any:
        """The gradient shown on the inner variable keyed ``key``, or ``None``."""
        found = self.resolve(key)
        return self.grads.get(key.rsplit("/", 1)[0], {}).get(found[1]) if found is not None else None

    # -- NaN --------------------------------------------------------------------------------------------------
    def nan_origins(self, node: Apply, values: dict[Variable, Any] | None = None, prefix: str | None = None) -> list[str]:
        """The inner keys of the inner nodes of ``node`` where a NaN or inf is born (nested: the innermost).

        ``values`` are the values the node's inputs had (the open run's when ``None``).
        """
        key = prefix or self.key_of(node)
        if key is None or inner_op(node.op) is None:
            return []
        run = self.runs.get(key)
        if is_loop_node(node):  # the iteration where it is born, whichever iteration is shown
            loop = self.nan_loop(node, values, key)
            if loop is None or loop.nan_at is None:
                return []
            run = Evaluation([], loop.values_at(loop.nan_at))
        elif run is None:
            if values is None or not all(v in values or isinstance(v, Constant) for v in node.inputs):
                return []
            run = inner_evaluation(node, [values[v] if v in values else v.data for v in node.inputs])
        bad = {v for v, val in run.values.items() if any(has_nan_inf(val))}
        fgraph = inner_graph_of(node)
        found: list[str] = []
        for inner in fgraph.toposort():
            if any(o in bad for o in inner.outputs) and not any(i in bad for i in inner.inputs):
                here = f"{key}/{fgraph.key(inner)}"
                deeper = self.nan_origins(inner, run.values, here) if inner_op(inner.op) is not None else []
                found.extend(deeper or [here])
        return found


    def nan_loop(self, node: Apply, values: dict[Variable, Any] | None, key: str) -> LoopRun | None:
        """The run of the loop ``node`` to search for NaN: the open one, else one on the values given."""
        if key in self.loops and (values is None or key in self.runs):
            return self.loops[key]
        if values is None or not all(v in values or isinstance(v, Constant) for v in node.inputs):
            return self.loops.get(key)
        return self.loop_run(key, node, [values[v] if v in values else v.data for v in node.inputs])


def _same_values(old: list[Any], new: list[Any]) -> bool:
    """Whether two lists of input values are the same (the same objects, or equal arrays)."""
    if len(old) != len(new):
        return False
    for a, b in zip(old, new):
        if a is b:
            continue
        try:
            if not (isinstance(a, np.ndarray | np.generic | int | float) and np.array_equal(a, b, equal_nan=True)):
                return False
        except TypeError:
            return False
    return True


def _inner_grad_graphs(owner: Any) -> tuple[list[Variable], dict[Variable, Variable]] | None:
    """For an op's inner graph: a seed variable per inner output and the gradient graph of each inner variable."""
    from symlab.gradient import grad
    from symlab.graph.null_type import NullType

    outputs = list(owner.inner_outputs)
    if not all(hasattr(o.type, "dtype") and str(o.type.dtype).startswith(("float", "complex")) for o in outputs):
        return None
    seeds = [o.type() for o in outputs]
    fgraph = owner.fgraph
    path = [v for v in (*fgraph.inputs, *(o for n in fgraph.toposort() for o in n.outputs))
            if str(getattr(v.type, "dtype", "")).startswith(("float", "complex"))]
    try:
        found = grad(None, path, known_grads=dict(zip(outputs, seeds)), disconnected_inputs="ignore",
                     null_gradients="return")
    except Exception:
        return None
    wanted = {v: g for v, g in zip(path, found) if not isinstance(g.type, NullType)}
    return seeds, wanted

