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
graph as it was), and tell the attached *features* what happened
(:mod:`symlab.graph.changes`): each edit as it happens, and each committed
change once, when it is complete. ``fgraph.version`` counts the committed
changes, so a view can tell cheaply whether what it drew is stale.

Membership is the graph's to say: ``node in fgraph``, ``fgraph.clients[var]``.
Nothing is written on the nodes and variables themselves, so any number of
graphs (a compiled function's, a replay of its rewrite, a copy a view draws)
can hold objects of the same origin without disturbing one another.

Every node and variable gets a *key* when it enters the graph, ``a<n>`` for
an Apply node and ``v<n>`` for a variable, that it keeps for as long as it
is in the graph, whatever else changes (views follow nodes by their keys):

>>> fg.key(fg.inputs[0]), fg.key(out.owner), fg.by_key("v0") is fg.inputs[0]
('v0', 'a6', True)

The class is written in three modules, one job each: this one holds the
graph (contents, keys, importing, edits, pruning, checks);
:mod:`symlab.graph.change_journal` makes edits into changes that commit or
roll back (:class:`~symlab.graph.change_journal.ChangeJournal`);
:mod:`symlab.graph.feature_host` attaches features and calls them
(:class:`~symlab.graph.feature_host.FeatureHost`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from symlab.graph.basic import Apply, Constant, CycleError, MissingInputError, Variable
from symlab.graph.change_journal import ChangeJournal
from symlab.graph.changes import (
    InconsistencyError,
    InputChanged,
    NodeImported,
    NodePruned,
    OutputAdded,
    OutputRemoved,
    VariableImported,
    VariablePruned,
)
from symlab.graph.display import Displayable, open_view, print_text
from symlab.graph.feature_host import FeatureHost
from symlab.graph.holders import add_live_graph, live_graphs
from symlab.graph.traversal import clone_get_equiv, io_toposort

__all__ = ["FunctionGraph", "InconsistencyError"]

Client = tuple[Any, int]  # (Apply, input index) or ("output", output index)


class FunctionGraph(FeatureHost, ChangeJournal, Displayable):
    """The graph from ``inputs`` to ``outputs``, with clients, change notifications and stable keys.

    With ``clone=True`` (the default) the graph is copied first, so the
    caller's variables are never modified; with ``clone=False`` the graph
    takes the caller's objects, which then must not be changed through any
    other graph. ``features`` are attached in order.
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
        #: The graph's nodes and variables, each with the serial number of its key (insertion-ordered).
        self._nodes: dict[Apply, int] = {}
        self._variables: dict[Variable, int] = {}
        self._next_serial = 0
        self._by_key: dict[str, Any] | None = None
        #: A topological level of each node: larger than the level of every node it depends on (inputs and
        #: constants are at level 0). It lets the cycle check of a replacement stop at nodes too low to
        #: depend on the replaced variable, which keeps rewriting long chains linear instead of quadratic.
        self._level: dict[Apply, int] = {}
        self._features: list[Any] = []  # as FeatureHost holds them
        self._callbacks: dict[str, tuple[Callable[..., Any], ...]] = {}
        self._order: list[Apply] | None = None
        #: The edits of the change in progress (``None``: no change is open).
        self._journal: list[Any] | None = None
        #: While a change is rolled back: the serials of the objects it brings back.
        self._restore: dict[Any, int] | None = None
        #: How many changes have committed.
        self.version = 0
        for inp in inputs:
            self._add_input(inp)
        for node in io_toposort(inputs, outputs):
            self._import_node(node, True, "init")
        for k, out in enumerate(self.outputs):
            self._import_var(out, reason="init")
            self.clients[out].append(("output", k))
        if not clone:
            self._refuse_shared_objects()
        add_live_graph(self)  # var.clients and node.fgraph ask the graphs alive (symlab.graph.holders)
        for feature in features:
            self.attach_feature(feature)

    def _refuse_shared_objects(self) -> None:
        """Refuse to take (``clone=False``) nodes or inputs that another live graph holds.

        Two graphs editing the same Apply nodes would corrupt each other's
        clients. Constants never change, so graphs may share them.
        """
        others = [g for g in live_graphs() if g is not self]
        if not others:
            return
        for obj in [*self.inputs, *self._nodes]:
            for other in others:
                if obj in other:
                    raise ValueError(
                        f"FunctionGraph(clone=False): {obj} already belongs to another FunctionGraph ({other}); "
                        "clone the graph first (clone=True, the default)"
                    )

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
            for extra in self._callbacks_for("orderings"):
                for node, before in extra(self).items():
                    if node in self._nodes:  # a feature may still name pruned nodes
                        orderings.setdefault(node, []).extend(b for b in before if b in self._nodes)
            self._order = io_toposort(self.inputs, self.outputs, orderings or None)
        return list(self._order)

    # -- keys ---------------------------------------------------------------------------------
    def key(self, obj: Apply | Variable) -> str:
        """The stable key of a node (``a<n>``) or variable (``v<n>``) of this graph.

        A key is given when the object enters the graph and is kept for as
        long as it stays, whatever else changes; it is never given to
        another object of this graph.
        """
        serial = self._nodes.get(obj) if isinstance(obj, Apply) else self._variables.get(obj)
        if serial is None:
            raise KeyError(f"FunctionGraph.key: {obj} ({type(obj).__name__}) is not in this graph")
        return f"{'a' if isinstance(obj, Apply) else 'v'}{serial}"

    def by_key(self, key: str) -> Apply | Variable:
        """The node or variable of this graph whose key is ``key`` (``KeyError`` if none is)."""
        index = self._by_key
        if index is None:
            index = {f"a{s}": n for n, s in self._nodes.items()}
            index.update((f"v{s}", v) for v, s in self._variables.items())
            self._by_key = index
        try:
            return index[key]
        except KeyError:
            raise KeyError(f"FunctionGraph.by_key: no node or variable of this graph has the key {key!r}") from None

    def _serial(self, obj: Any) -> int:
        restore = self._restore
        if restore is not None and obj in restore:
            return restore[obj]
        serial = self._next_serial
        self._next_serial = serial + 1
        return serial

    # -- building -------------------------------------------------------------------------
    def _add_input(self, var: Variable) -> None:
        self.inputs.append(var)
        self._add_root(var)

    def _add_root(self, var: Variable) -> None:
        serial = self._variables[var] = self._serial(var)
        self.clients.setdefault(var, [])
        self._by_key = None
        if self._journal is not None:
            self._journal.append(VariableImported(var, serial))

    def _import_var(self, var: Variable, reason: str | None) -> None:
        if var in self._variables:
            return
        if var.owner is None and not isinstance(var, Constant):
            raise MissingInputError(
                f"FunctionGraph: the graph needs {var} ({var.type}), which is neither an input nor a constant"
            )
        if var.owner is not None and var.owner not in self._nodes:
            self._import_node(var.owner, True, reason)
            return
        self._add_root(var)

    def import_node(self, node: Apply, check: bool = True, reason: str | None = None) -> None:
        """Add ``node`` and every node it needs that the graph does not have yet (one change)."""
        self._atomic(reason, self._import_node, node, check, reason)

    def _import_node(self, node: Apply, check: bool, reason: str | None) -> None:
        on_import = self._callbacks_for("on_import")
        for n in self._missing_nodes(node):
            for inp in n.inputs:
                if inp not in self._variables:
                    if inp.owner is None and not isinstance(inp, Constant) and check:
                        raise MissingInputError(
                            f"FunctionGraph: {n} needs {inp} ({inp.type}), which is neither an input, "
                            "a constant nor computed in the graph"
                        )
                    self._add_root(inp)
            serial = self._nodes[n] = self._serial(n)
            self._level[n] = 1 + max((self._var_level(inp) for inp in n.inputs), default=0)
            if serial + len(n.outputs) >= self._next_serial:
                self._next_serial = serial + 1 + len(n.outputs)
            for j, out in enumerate(n.outputs):
                self._variables[out] = serial + 1 + j  # the outputs' keys follow their node's
                self.clients.setdefault(out, [])
            for i, inp in enumerate(n.inputs):
                self.clients[inp].append((n, i))
            self._order = None
            self._by_key = None
            if self._journal is not None:
                self._journal.append(NodeImported(n, tuple(n.inputs), serial))
            for callback in on_import:
                callback(self, n, reason)

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

    def change_node_input(self, node: Any, i: int, new_var: Variable, reason: str | None = None) -> None:
        """Make input ``i`` of ``node`` (or output ``i`` when ``node == 'output'``) be ``new_var``.

        ``new_var`` must fit the old variable's type (it may be narrowed by
        ``filter_variable``) and must not depend on ``node``.
        """
        if node != "output" and node not in self._nodes:
            raise ValueError(f"change_node_input: {node} is not a node of this graph")
        old = self.outputs[i] if node == "output" else node.inputs[i]
        if old is new_var:
            return
        new_var = _checked_replacement(old, new_var, f"{'output' if node == 'output' else node}[{i}]")
        if node != "output" and self._depends_on(new_var, node.outputs):
            raise CycleError(f"{new_var} depends on {node}, so it cannot become one of its inputs: cycle")
        self._atomic(reason, self._change_input, node, i, old, new_var, reason)

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
        if self._journal is not None:
            self._journal.append(InputChanged(node, i, old, new_var))
        for callback in self._callbacks_for("on_change_input"):
            callback(self, node, i, old, new_var, reason)
        self._prune_if_unused(old, reason)

    def replace(self, var: Variable, new_var: Variable, reason: str | None = None, verbose: bool = False) -> None:
        """Make every client of ``var`` use ``new_var`` instead; prune what becomes unused. One change.

        A ``new_var`` whose type cannot stand in for ``var``'s, or that depends
        on ``var``, is refused and the graph is left exactly as it was.
        """
        if not isinstance(var, Variable):  # a name or a list would fail the lookup below, saying less
            raise TypeError(f"replace: var must be a Variable of this graph, received {type(var).__name__} {var!r:.60}")
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
        self._atomic(reason, self._move_clients, var, new_var, reason)

    def _move_clients(self, var: Variable, new_var: Variable, reason: str | None) -> None:
        for node, i in list(self.clients[var]):
            self._change_input(node, i, var, new_var, reason)

    def add_output(self, var: Variable, reason: str | None = None) -> None:
        """Make ``var`` the graph's last output, importing the nodes that compute it (one change).

        ``var`` must be computable from the graph's inputs and constants; if
        it is not, the graph is left as it was.
        """
        if not isinstance(var, Variable):
            raise TypeError(f"add_output: var must be a Variable, received {type(var).__name__}")
        self._atomic(reason, self._insert_output, len(self.outputs), var, reason)

    def remove_output(self, output_idx: int, reason: str | None = None) -> None:
        """Remove output ``output_idx``; later outputs move down by one; prune what nothing uses (one change)."""
        n = len(self.outputs)
        if not isinstance(output_idx, int) or isinstance(output_idx, bool) or not -n <= output_idx < n:
            raise IndexError(f"remove_output: output_idx must be an int in [{-n}, {n}), received {output_idx!r}")
        self._atomic(reason, self._remove_output, output_idx % n, reason)

    def _insert_output(self, index: int, var: Variable, reason: str | None) -> None:
        self._import_var(var, reason)
        for j in range(len(self.outputs) - 1, index - 1, -1):  # the outputs from index on move up by one
            self._renumber_output(self.outputs[j], j, j + 1)
        self.outputs.insert(index, var)
        self.clients[var].append(("output", index))
        self._order = None
        if self._journal is not None:
            self._journal.append(OutputAdded(index, var))

    def _remove_output(self, index: int, reason: str | None) -> None:
        var = self.outputs.pop(index)
        self.clients[var].remove(("output", index))
        for j in range(index + 1, len(self.outputs) + 1):  # the outputs after it moved down by one
            self._renumber_output(self.outputs[j - 1], j, j - 1)
        self._order = None
        if self._journal is not None:
            self._journal.append(OutputRemoved(index, var))
        self._prune_if_unused(var, reason)

    def _renumber_output(self, var: Variable, old: int, new: int) -> None:
        uses = self.clients[var]
        uses[uses.index(("output", old))] = ("output", new)

    def replace_all(self, pairs: Iterable[tuple[Variable, Variable]], reason: str | None = None) -> None:
        """:meth:`replace` each ``(var, new_var)`` pair in order, as one change (all or nothing)."""
        self._atomic(reason, self._replace_pairs, pairs, reason, False)

    def replace_validate(self, var: Variable, new_var: Variable, reason: str | None = None) -> None:
        """:meth:`replace`, then :meth:`validate`; if either raises, the graph is left as it was."""
        self.replace_all_validate([(var, new_var)], reason)

    def replace_all_validate(self, pairs: Iterable[tuple[Variable, Variable]], reason: str | None = None) -> None:
        """Replace each pair, then validate, as one change; if anything raises, nothing is changed."""
        self._atomic(reason, self._replace_pairs, pairs, reason, True)

    def _replace_pairs(self, pairs: Iterable[tuple[Variable, Variable]], reason: str | None, validate: bool) -> None:
        for var, new_var in pairs:
            self.replace(var, new_var, reason=reason)
        if validate:
            self.validate()

    def validate(self) -> None:
        """Ask every feature's ``validate(fgraph)``; ``InconsistencyError`` if one refuses the graph."""
        for callback in self._callbacks_for("validate"):
            callback(self)

    def consistent(self) -> bool:
        """True if :meth:`validate` passes."""
        try:
            self.validate()
        except InconsistencyError:
            return False
        return True

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
        on_prune = None
        while stack:
            v = stack.pop()
            node = v.owner
            if self.clients.get(v) or (node is None and v in self.inputs):  # only roots are inputs
                continue
            if node is None or node not in self._nodes:
                if node is None:
                    self._forget(v)
                continue
            if any(self.clients.get(o) for o in node.outputs):
                continue
            serial = self._nodes.pop(node)
            del self._level[node]
            for o in node.outputs:
                self._forget(o)
            self._order = None
            if self._journal is not None:
                self._journal.append(NodePruned(node, serial))
            if on_prune is None:
                on_prune = self._callbacks_for("on_prune")
            for callback in on_prune:
                callback(self, node, reason)
            for i, inp in enumerate(node.inputs):
                self.clients[inp].remove((node, i))
                stack.append(inp)

    def _forget(self, var: Variable) -> None:
        serial = self._variables.pop(var, None)
        self.clients.pop(var, None)
        self._by_key = None
        if serial is not None and var.owner is None and self._journal is not None:
            self._journal.append(VariablePruned(var, serial))

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
        serials = [*self._nodes.values(), *self._variables.values()]
        assert len(set(serials)) == len(serials), "two objects of the graph share a key"
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
        """Print the graph as text (see :func:`symlab.printing.debugprint`, registered with the display registry)."""
        return print_text(self, **kwargs)

    def inspect(self, **options: Any) -> Any:
        """A live :class:`~symlab.notebook.inspector.ClientsInspector` of this graph: its clients, on a picture.

        It redraws after each cell that changes the graph and says what changed. ``options``: ``select``
        (a variable or its name), ``style``, ``max_nodes``.
        """
        return open_view("clients", self, **options)

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
