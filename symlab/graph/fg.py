"""``FunctionGraph``: a graph with explicit inputs and outputs that rewrites can change.

A FunctionGraph owns (a copy of) the graph between its inputs and outputs and
keeps, for every variable, the list of its *clients*: the places that use it
(seed 000). Each entry is ``(apply_node, i)`` with ``apply_node.inputs[i] is
var``, or ``("output", i)`` with ``fgraph.outputs[i] is var``:

>>> import symlab.tensor as st
>>> from symlab.graph.fg import FunctionGraph
>>> v = st.vector()
>>> fg = FunctionGraph([v], [(v + 1).sum()])
>>> out = fg.outputs[0]
>>> out.clients
[('output', 0)]
>>> add_out = out.owner.inputs[0]
>>> add_out.clients
[(Sum{acc_dtype=float64}(Elemwise{add,no_inplace}.0), 0)]
>>> fg.clients[add_out] == add_out.clients
True

Every change goes through :meth:`FunctionGraph.replace` or
:meth:`FunctionGraph.change_node_input`, which keep the clients exact, refuse
replacements of an incompatible type or that would make a cycle (leaving the
graph as it was), and tell the attached *features* what happened.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from symlab.graph.basic import Apply, Constant, CycleError, Variable
from symlab.graph.display import Displayable
from symlab.graph.traversal import clone_get_equiv, io_toposort

Client = tuple[Any, int]  # (Apply, input index) or ("output", output index)

#: The ``fgraph`` of a constant used by several graphs at once.
SHARED = "shared by several FunctionGraphs"


class InconsistencyError(Exception):
    """A feature found the graph invalid (raised by ``validate``)."""


class MissingInputError(ValueError):
    """The outputs depend on a variable that is neither an input nor a constant."""


class FunctionGraph(Displayable):
    """The graph from ``inputs`` to ``outputs``, with clients and change notifications.

    With ``clone=True`` (the default) the graph is copied first, so the
    caller's variables are never modified. ``features`` are attached in order.
    """

    def __init__(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        clone: bool = True,
        features: Iterable[Any] = (),
    ) -> None:
        inputs, outputs = list(inputs), list(outputs)
        for k, v in enumerate([*inputs, *outputs]):
            if not isinstance(v, Variable):
                where = f"inputs[{k}]" if k < len(inputs) else f"outputs[{k - len(inputs)}]"
                raise TypeError(f"FunctionGraph: {where} must be a Variable, received {type(v).__name__}")
        if clone:
            equiv = clone_get_equiv(inputs, outputs, copy_inputs=True, copy_orphans=True)
            inputs = [equiv[i] for i in inputs]
            outputs = [equiv[o] for o in outputs]
        for k, inp in enumerate(inputs):
            if isinstance(inp, Constant):
                raise TypeError(f"FunctionGraph: input {k} ({inp}) is a Constant; constants are not inputs")
            if inp.owner is not None:
                raise ValueError(
                    f"FunctionGraph: input {k} ({inp}) is computed by {inp.owner}; inputs must be root variables"
                )
        if len(set(inputs)) != len(inputs):
            raise ValueError("FunctionGraph: the same variable appears twice among the inputs")
        self.inputs: list[Variable] = []
        self.outputs: list[Variable] = list(outputs)
        self.clients: dict[Variable, list[Client]] = {}
        self._nodes: dict[Apply, None] = {}  # insertion-ordered set
        #: A topological level of each node: larger than the level of every node it depends on (inputs and
        #: constants are at level 0). It lets the cycle check of a replacement stop at nodes too low to
        #: depend on the replaced variable, which keeps rewriting long chains linear instead of quadratic.
        self._level: dict[Apply, int] = {}
        self._variables: dict[Variable, None] = {}
        self._features: list[Any] = []
        self._order: list[Apply] | None = None
        for inp in inputs:
            self._add_input(inp)
        for node in io_toposort(inputs, outputs):
            self.import_node(node, reason="init")
        for k, out in enumerate(self.outputs):
            self._import_var(out, reason="init")
            self.clients[out].append(("output", k))
        for feature in features:
            self.attach_feature(feature)

    # -- contents ------------------------------------------------------------------------
    @property
    def apply_nodes(self) -> set[Apply]:
        return set(self._nodes)

    @property
    def variables(self) -> set[Variable]:
        return set(self._variables)

    def __contains__(self, item: object) -> bool:
        return item in self._nodes or item in self._variables

    def toposort(self) -> list[Apply]:
        """The nodes in an order where each comes after those it depends on.

        Deterministic, and cached until the graph changes. Features that
        define ``orderings(fgraph)`` (like the destroy handler) add
        dependencies.
        """
        if self._order is None:
            orderings: dict[Apply, list[Apply]] = {}
            for feature in self._features:
                extra = getattr(feature, "orderings", None)
                if extra is not None:
                    for node, before in extra(self).items():
                        if node in self._nodes:  # a feature may still name pruned nodes
                            orderings.setdefault(node, []).extend(b for b in before if b in self._nodes)
            self._order = io_toposort(self.inputs, self.outputs, orderings or None)
        return list(self._order)

    # -- building -------------------------------------------------------------------------
    def _add_input(self, var: Variable) -> None:
        self._claim(var)
        self.inputs.append(var)
        self._variables[var] = None
        self.clients.setdefault(var, [])

    def _claim(self, var: Variable) -> None:
        owner = var.fgraph
        if owner is None:
            var.fgraph = self
        elif owner is not self:
            if isinstance(var, Constant):
                var.fgraph = SHARED  # constants are immutable: graphs may share them
            else:
                raise ValueError(f"{var} already belongs to another FunctionGraph; clone the graph first")

    def _import_var(self, var: Variable, reason: str | None) -> None:
        if var in self._variables:
            return
        if var.owner is None and not isinstance(var, Constant):
            raise MissingInputError(
                f"FunctionGraph: the graph needs {var} ({var.type}), which is neither an input nor a constant"
            )
        if var.owner is not None and var.owner not in self._nodes:
            self.import_node(var.owner, reason=reason)
            return
        self._claim(var)
        self._variables[var] = None
        self.clients.setdefault(var, [])

    def import_node(self, node: Apply, check: bool = True, reason: str | None = None) -> None:
        """Add ``node`` and every node it needs that the graph does not have yet."""
        for n in self._missing_nodes(node):
            for inp in n.inputs:
                if inp not in self._variables:
                    if inp.owner is None and not isinstance(inp, Constant) and check:
                        raise MissingInputError(
                            f"FunctionGraph: {n} needs {inp} ({inp.type}), which is neither an input, "
                            "a constant nor computed in the graph"
                        )
                    self._claim(inp)
                    self._variables[inp] = None
                    self.clients.setdefault(inp, [])
            self._nodes[n] = None
            self._level[n] = 1 + max((self._var_level(inp) for inp in n.inputs), default=0)
            n.fgraph = self
            for out in n.outputs:
                self._claim(out)
                self._variables[out] = None
                self.clients.setdefault(out, [])
            for i, inp in enumerate(n.inputs):
                self.clients[inp].append((n, i))
            self._order = None
            self.execute_callbacks("on_import", n, reason)

    def _missing_nodes(self, node: Apply) -> list[Apply]:
        """``node`` and its ancestors that are not in the graph yet, each after those it needs."""
        order: list[Apply] = []
        done: set[Apply] = set()
        stack: list[tuple[Apply, bool]] = [(node, False)]
        while stack:
            n, expanded = stack.pop()
            if n in done or n in self._nodes:
                continue
            if expanded:
                done.add(n)
                order.append(n)
                continue
            stack.append((n, True))
            for inp in reversed(n.inputs):
                owner = inp.owner
                if owner is not None and inp not in self._variables and owner not in self._nodes and owner not in done:
                    stack.append((owner, False))
        return order

    # -- changing ----------------------------------------------------------------------------
    def change_node_input(self, node: Any, i: int, new_var: Variable, reason: str | None = None) -> None:
        """Make input ``i`` of ``node`` (or output ``i`` when ``node == 'output'``) be ``new_var``.

        ``new_var`` must fit the old variable's type (it may be narrowed by
        ``filter_variable``) and must not depend on ``node``.
        """
        old = self.outputs[i] if node == "output" else node.inputs[i]
        if old is new_var:
            return
        new_var = _checked_replacement(old, new_var, f"{'output' if node == 'output' else node}[{i}]")
        if node != "output" and self._depends_on(new_var, node.outputs):
            raise CycleError(f"{new_var} depends on {node}, so it cannot become one of its inputs: cycle")
        self._change_input(node, i, old, new_var, reason)

    def _change_input(self, node: Any, i: int, old: Variable, new_var: Variable, reason: str | None) -> None:
        self._import_var(new_var, reason)
        if node == "output":
            self.outputs[i] = new_var
        else:
            node.inputs[i] = new_var
            self._raise_levels(node, self._var_level(new_var))
        self.clients[old].remove((node, i))
        self.clients[new_var].append((node, i))
        self._order = None
        self.execute_callbacks("on_change_input", node, i, old, new_var, reason)
        self._prune_if_unused(old, reason)

    def replace(self, var: Variable, new_var: Variable, reason: str | None = None, verbose: bool = False) -> None:
        """Make every client of ``var`` use ``new_var`` instead; prune what becomes unused.

        A ``new_var`` whose type cannot stand in for ``var``'s, or that depends
        on ``var``, is refused and the graph is left exactly as it was.
        """
        if var not in self._variables:
            raise ValueError(f"replace: {var} is not a variable of this graph")
        if var is new_var:
            return
        new_var = _checked_replacement(var, new_var, str(var))
        # Every client depends on var, so checking var covers them all.
        if self._depends_on(new_var, [var]):
            raise CycleError(f"replace: the replacement of {var} ({new_var}) depends on {var} itself: cycle")
        if verbose:
            print(f"rewriting: {reason}: {var} -> {new_var}")
        for node, i in list(self.clients[var]):
            self._change_input(node, i, var, new_var, reason)

    def replace_all(self, pairs: Iterable[tuple[Variable, Variable]], reason: str | None = None) -> None:
        """:meth:`replace` each ``(var, new_var)`` pair in order."""
        for var, new_var in pairs:
            self.replace(var, new_var, reason=reason)

    def _var_level(self, var: Variable) -> int:
        owner = var.owner
        return 0 if owner is None else self._level.get(owner, 0)

    def _raise_levels(self, node: Apply, input_level: int) -> None:
        """Keep every level above its inputs' after ``node`` gained an input at ``input_level``."""
        if self._level[node] > input_level:
            return
        self._level[node] = input_level + 1
        stack = [node]
        while stack:
            n = stack.pop()
            level = self._level[n]
            for out in n.outputs:
                for client, _ in self.clients.get(out, ()):
                    if client != "output" and self._level[client] <= level:
                        self._level[client] = level + 1
                        stack.append(client)

    def _depends_on(self, var: Variable, targets: Sequence[Variable]) -> bool:
        """True if ``var`` is one of ``targets`` or computed from one of them.

        The walk does not go below the graph's variables whose level is at most the lowest target's: those
        cannot depend on any target.
        """
        wanted = set(targets)
        floor = min(self._var_level(t) for t in wanted)
        seen: set[int] = set()
        stack = [var]
        while stack:
            v = stack.pop()
            if v in wanted:
                return True
            owner = v.owner
            if owner is None or id(owner) in seen:
                continue
            seen.add(id(owner))
            if owner in self._level and self._level[owner] <= floor:
                continue
            stack.extend(owner.inputs)
        return False

    def _prune_if_unused(self, var: Variable, reason: str | None) -> None:
        """Remove ``var``'s owner (and its now unused ancestors) if nothing uses its outputs."""
        stack = [var]
        while stack:
            v = stack.pop()
            node = v.owner
            if self.clients.get(v) or (node is None and v in self.inputs):  # only roots are inputs
                continue
            if node is None or node not in self._nodes:
                if isinstance(v, Constant) or node is None:
                    self._forget(v)
                continue
            if any(self.clients.get(o) for o in node.outputs):
                continue
            del self._nodes[node]
            del self._level[node]
            for o in node.outputs:
                self._forget(o)
            self._order = None
            self.execute_callbacks("on_prune", node, reason)
            for i, inp in enumerate(node.inputs):
                self.clients[inp].remove((node, i))
                stack.append(inp)
            node.fgraph = None

    def _forget(self, var: Variable) -> None:
        self._variables.pop(var, None)
        self.clients.pop(var, None)
        if getattr(var, "fgraph", None) is self:
            var.fgraph = None

    # -- features -----------------------------------------------------------------------------
    def attach_feature(self, feature: Any) -> None:
        """Attach ``feature``; its ``on_attach(fgraph)`` may refuse by raising."""
        if feature in self._features:
            return
        attach = getattr(feature, "on_attach", None)
        if attach is not None:
            attach(self)
        self._features.append(feature)
        if hasattr(feature, "orderings"):
            self._order = None  # the feature adds orderings

    def remove_feature(self, feature: Any) -> None:
        self._features.remove(feature)
        if hasattr(feature, "orderings"):
            self._order = None
        detach = getattr(feature, "on_detach", None)
        if detach is not None:
            detach(self)

    @property
    def features(self) -> list[Any]:
        return list(self._features)

    def execute_callbacks(self, name: str, *args: Any) -> None:
        """Call ``feature.<name>(self, *args)`` on every feature that has it."""
        for feature in self._features:
            callback = getattr(feature, name, None)
            if callback is not None:
                callback(self, *args)

    # -- checking and copying ---------------------------------------------------------------------
    def check_integrity(self) -> None:
        """Raise ``AssertionError`` if the clients or the node set are inconsistent."""
        expected_nodes = set(io_toposort(self.inputs, self.outputs))
        assert expected_nodes == set(self._nodes), "apply_nodes differ from the nodes between inputs and outputs"
        expected: dict[Variable, list[Client]] = {v: [] for v in self.inputs}
        for node in self._nodes:
            for out in node.outputs:
                expected.setdefault(out, [])
            for i, inp in enumerate(node.inputs):
                expected.setdefault(inp, []).append((node, i))
        for k, out in enumerate(self.outputs):
            expected.setdefault(out, []).append(("output", k))
        assert set(expected) == set(self._variables), "variables differ from those the nodes use"
        assert set(self._level) == set(self._nodes), "levels are kept for exactly the graph's nodes"
        for node in self._nodes:
            below = max((self._var_level(inp) for inp in node.inputs), default=0)
            assert self._level[node] > below, f"the level of {node} is not above its inputs' levels"
        for var, clients in expected.items():
            got = self.clients.get(var)
            assert got is not None and sorted(map(_client_key, got)) == sorted(map(_client_key, clients)), (
                f"clients of {var} are {got}, expected {clients}"
            )
            for node, i in got:
                assert (self.outputs[i] if node == "output" else node.inputs[i]) is var

    def clone_get_equiv(self, check_integrity: bool = True) -> tuple[FunctionGraph, dict[Any, Any]]:
        """A copy of this graph (without features) and the ``{old: new}`` map."""
        equiv = clone_get_equiv(self.inputs, self.outputs, copy_inputs=True, copy_orphans=True)
        fg = FunctionGraph([equiv[i] for i in self.inputs], [equiv[o] for o in self.outputs], clone=False)
        if check_integrity:
            fg.check_integrity()
        return fg, equiv

    def clone(self, check_integrity: bool = True) -> FunctionGraph:
        return self.clone_get_equiv(check_integrity)[0]

    def dprint(self, **kwargs: Any) -> Any:
        """Print the graph as text (see :func:`symlab.printing.debugprint`)."""
        from symlab.printing import debugprint

        return debugprint(self, **kwargs)

    def __str__(self) -> str:
        return f"FunctionGraph({', '.join(str(o) for o in self.outputs)})"

    def __repr__(self) -> str:
        return str(self)


def _client_key(client: Client) -> tuple[int, int]:
    node, i = client
    return (0 if node == "output" else id(node), i)


def _checked_replacement(old: Variable, new: Variable, where: str) -> Variable:
    if not isinstance(new, Variable):
        raise TypeError(f"replacement for {where} must be a Variable, received {type(new).__name__}")
    try:
        return old.type.filter_variable(new, allow_convert=True)
    except TypeError as err:
        raise TypeError(
            f"cannot replace {old} ({old.type}) by {new} ({new.type}) at {where}: the new type cannot stand "
            f"in for the old one ({err})"
        ) from None
