"""Values inside inner graphs, computed as lazily as the graph runs: what the values view writes in an open node.

Two kinds of node open (:mod:`symlab.graph.inner_graph`). A node whose op *owns* a graph (a fused
``Composite``, an ``OpFromGraph``) is run again, here, on its input values: :func:`inner_values` gives the
value of every variable of its inner graph. A branch node (an ``ifelse``) owns nothing: its ``then`` and
``else`` sections are regions of the outer graph, and only the chosen one runs. :func:`evaluate_lazily`
evaluates a graph as the lazy linker does: a branch node asks for its condition first, then for the
outputs of the branch it takes, so the nodes only the other branch needs are never computed (they get no
value at all, and :class:`Evaluation` says which branch each branch node took).

>>> import numpy as np
>>> import symlab
>>> import symlab.tensor as st
>>> x = st.dvector("x")
>>> f = symlab.function([x], st.exp(-x) * 2 + x, mode="NUMPY")
>>> (node,) = f.maker.fgraph.toposort()
>>> found = inner_values(node, [np.array([0.0, 1.0])])
>>> inner = inner_graph_of(node)
>>> [(str(n.op), found[n.outputs[0]]) for n in inner.toposort()]  # doctest: +NORMALIZE_WHITESPACE
[('neg', array([-0., -1.])), ('exp', array([1.        , 0.36787944])),
 ('mul', array([2.        , 0.73575888])), ('add', array([2.        , 1.73575888]))]
>>> run = evaluate_lazily([x * 2], {x: np.array([1.0, 2.0])})
>>> run.values[run.targets[0]], run.branches
(array([2., 4.]), {})
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Constant, MissingInputError, Variable
from symlab.graph.inner_graph import HasInnerGraph, InnerSection, has_inner_graph, inner_sections

__all__ = ["Branch", "Evaluation", "SectionCache", "branch_sections", "evaluate_lazily", "inner_graph_of",
           "inner_evaluation", "inner_op", "inner_values", "owned_sections"]


def inner_op(op: Any) -> HasInnerGraph | None:
    """The op that owns the graph ``op`` opens to (``op`` itself, an ``Elemwise``'s ``Composite``), or ``None``."""
    if isinstance(op, HasInnerGraph):
        return op
    scalar = getattr(op, "scalar_op", None)
    return scalar if isinstance(scalar, HasInnerGraph) else None


def inner_graph_of(node: Apply) -> Any:
    """The FunctionGraph inside ``node`` (its keys are the inner keys of the pictures), or ``None``."""
    owner = inner_op(node.op)
    return owner.fgraph if owner is not None else None


class SectionCache:
    """The sections of each node, asked once (a branch region is a walk of the graph; the graph is read only)."""

    def __init__(self, fgraph: Any = None) -> None:
        self.fgraph = fgraph
        self._found: dict[Apply, list[InnerSection]] = {}

    def __call__(self, node: Apply) -> list[InnerSection]:
        found = self._found.get(node)
        if found is None:
            found = self._found[node] = inner_sections(node, self.fgraph) if has_inner_graph(node.op) else []
        return found


def branch_sections(node: Apply, sections: Any = None) -> list[InnerSection]:
    """The branches of ``node``: its sections that are regions of the outer graph chosen by a condition."""
    found = (sections or inner_sections)(node)
    return [s for s in found if not s.owned and s.condition is not None]


def owned_sections(node: Apply, sections: Any = None) -> list[InnerSection]:
    """The sections of ``node`` that are a graph of its op's own (a ``Composite``'s, an ``OpFromGraph``'s)."""
    return [s for s in (sections or inner_sections)(node) if s.owned]


@dataclass(frozen=True)
class Branch:
    """What a branch node did: its condition's value, the section it took and those it skipped (labels)."""

    condition: Any
    taken: str
    skipped: tuple[str, ...]


@dataclass
class Evaluation:
    """The values a lazy run computed (``values``; a variable it did not compute has none) and the choice of
    every branch node it ran (``branches``)."""

    targets: list[Variable]
    values: dict[Variable, Any]
    branches: dict[Apply, Branch] = field(default_factory=dict)


def _truth(value: Any) -> bool:
    array = np.asarray(value)
    if array.size != 1:
        raise ValueError(f"the condition of a branch must hold one value, received an array of shape {array.shape}")
    return bool(array.reshape(())[()])


def evaluate_lazily(targets: Sequence[Variable], given: Mapping[Variable, Any], sections: Any = None,
                    known: Mapping[Variable, Any] | None = None) -> Evaluation:
    """The values of ``targets`` from ``given`` (``{input: value}``), computing only what is needed.

    A branch node computes its condition, then only the branch it takes (its other branch's region is
    never run), and passes that branch's outputs on. ``known`` holds values computed before (reused, not
    copied into the result's own); ``sections`` is a :class:`SectionCache` to share between runs.
    """
    sections = sections or SectionCache()
    values: dict[Variable, Any] = dict(given)
    earlier = known or {}
    branches: dict[Apply, Branch] = {}

    def have(var: Variable) -> bool:
        if var in values:
            return True
        if var in earlier:
            values[var] = earlier[var]
            return True
        if isinstance(var, Constant):
            values[var] = var.data
            return True
        get_value = getattr(var, "get_value", None)  # a shared variable holds its own value
        if var.owner is None and get_value is not None:
            values[var] = get_value(borrow=True)
            return True
        return False

    done: set[Apply] = set()
    stack: list[Apply] = []
    for target in targets:
        if not have(target):
            if target.owner is None:
                raise MissingInputError(f"the graph needs a value for input {target} ({target.type}), which was not given")
            stack.append(target.owner)
    with np.errstate(all="ignore"):  # NaN and inf are shown, not warned about
        while stack:
            node = stack[-1]
            if node in done:
                stack.pop()
                continue
            branches_of = branch_sections(node, sections)
            if branches_of:
                condition = branches_of[0].condition
                needed = [condition]
                if have(condition):
                    truth = _truth(values[condition])
                    needed += [o for s in branches_of if s.taken_when == truth for o in s.outputs if o is not None]
            else:
                needed = list(node.inputs)
            missing = [v for v in needed if not have(v)]
            if missing:
                for var in missing:
                    if var.owner is None:
                        raise MissingInputError(
                            f"the graph needs a value for input {var} ({var.type}), which was not given")
                    stack.append(var.owner)
                continue
            if branches_of:
                branches[node] = _take(node, branches_of, values)
            else:
                storage: list[list[Any]] = [[None] for _ in node.outputs]
                node.op.perform(node, [values[v] for v in node.inputs], storage)
                for out, cell in zip(node.outputs, storage):
                    values[out] = cell[0]
            done.add(node)
            stack.pop()
    return Evaluation(list(targets), values, branches)


def _take(node: Apply, branches_of: list[InnerSection], values: dict[Variable, Any]) -> Branch:
    """Pass the taken branch's outputs on as ``node``'s outputs; what was chosen."""
    condition = values[branches_of[0].condition]
    truth = _truth(condition)
    taken = [s for s in branches_of if s.taken_when == truth]
    for section in taken:
        for inner, outer in zip(section.outputs, section.outer_outputs):
            if outer is not None and inner is not None:
                values[outer] = values[inner]
    return Branch(condition, ",".join(s.label for s in taken),
                  tuple(s.label for s in branches_of if s.taken_when != truth))


def inner_values(node: Apply, input_values: Sequence[Any] | Mapping[Variable, Any]) -> dict[Variable, Any]:
    """The value of every variable of the graph ``node``'s op owns, run on ``node``'s input values.

    ``input_values`` are the values of ``node.inputs``, by position or as ``{outer input: value}``. A
    ``Composite``'s scalar ops run elementwise on the arrays (as the fused loop computes them); branch nodes
    inside run lazily (:func:`evaluate_lazily`): the variables of a branch not taken have no value.
    A node with no graph of its own gives ``{}``.
    """
    return inner_evaluation(node, input_values).values


def inner_evaluation(node: Apply, input_values: Sequence[Any] | Mapping[Variable, Any]) -> Evaluation:
    """:func:`inner_values` with the choice of every branch node inside (an :class:`Evaluation`)."""
    if isinstance(input_values, Mapping):
        by_outer = dict(input_values)
    else:
        given = list(input_values)
        if len(given) != len(node.inputs):
            raise ValueError(f"inner_values: {node.op} has {len(node.inputs)} inputs, received {len(given)} values")
        by_outer = dict(zip(node.inputs, given))
    result = Evaluation([], {})
    cache = SectionCache(inner_graph_of(node))
    for section in owned_sections(node):
        feed = {}
        for outer, inner in zip(section.outer_inputs, section.inputs):
            if outer is None:
                continue
            if outer not in by_outer:
                raise ValueError(f"inner_values: no value for input {outer} of {node.op}")
            feed[inner] = by_outer[outer]
        targets = [o for o in section.outputs if o is not None]
        run = evaluate_lazily(targets, feed, cache)
        result.targets += targets
        result.values.update(run.values)
        result.branches.update(run.branches)
    return result


def resolve_inner(key: str, outer: Any) -> tuple[list[Apply], Any] | None:
    """What the inner key ``key`` (``a5/a2/v1``: outer key, then one key per inner graph) names.

    ``outer(k)`` gives the object of the outer graph whose key is ``k`` (or ``None``). The answer is the
    chain of nodes opened on the way (``[a5's node, a2's node]``) and the object, or ``None`` when some
    part names nothing (a node without a graph of its own, a key no inner graph has).
    """
    first, *rest = key.split("/")
    obj = outer(first)
    chain: list[Apply] = []
    for part in rest:
        if not isinstance(obj, Apply):
            return None
        fgraph = inner_graph_of(obj)
        if fgraph is None:
            return None
        chain.append(obj)
        try:
            obj = fgraph.by_key(part)
        except KeyError:
            return None
    return (chain, obj) if obj is not None else None


def inner_keys(prefix: str, node: Apply) -> dict[Any, str]:
    """``{object: key}`` of every node and variable of ``node``'s own graph, each key ``prefix/inner key``."""
    fgraph = inner_graph_of(node)
    if fgraph is None:
        return {}
    found: dict[Any, str] = {}
    for inner in fgraph.toposort():
        found[inner] = f"{prefix}/{fgraph.key(inner)}"
        for var in (*inner.inputs, *inner.outputs):
            if var in fgraph:
                found.setdefault(var, f"{prefix}/{fgraph.key(var)}")
    for var in fgraph.inputs:
        found.setdefault(var, f"{prefix}/{fgraph.key(var)}")
    return found
