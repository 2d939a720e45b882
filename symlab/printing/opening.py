"""Inner graphs opened in place: a node with an inner graph drawn as a box holding its sections.

:func:`~symlab.printing.model.build_model` reads ``open_inner`` (the keys of the nodes to open) and draws,
for each, the sections :func:`symlab.graph.inner_graph.inner_sections` gives, inside the node's box:

- an *owned* section (a fused ``Composite``, an ``OpFromGraph``) is the op's own graph, drawn in the same
  style under the keys ``"<node key>/<inner key>"`` (the inner FunctionGraph's own keys: ``a5/v0``,
  nested ``a5/a2/a1``); its inputs are wired to the outer variables feeding them (``wire`` edges) and the
  node's outer arrows leave from its inner outputs;
- a *region* section (an ``ifelse`` branch) moves the outer nodes only that branch needs, under their own
  keys, into the box.

A section whose state is ``"skipped"`` (a branch not taken) is drawn greyed: its nodes carry the class
``skipped``.

>>> import symlab
>>> import symlab.tensor as st
>>> from symlab.printing.model import build_model
>>> x, y = st.dvector("x"), st.dvector("y")
>>> f = symlab.function([x, y], st.exp(x) * y)
>>> fused = f.maker.fgraph.toposort()[0]
>>> key = f.maker.fgraph.key(fused)
>>> model = build_model(f, "compact", open_inner=[key])
>>> [(s.key, s.members[:3]) for s in model.sections]
[('a6:body', ['a6/v0', 'a6/v1', 'a6/a2'])]
>>> sorted((e.tail, e.head) for e in model.edges if e.kind == "wire")
[('v0', 'a6/v0'), ('v1', 'a6/v1')]
>>> model.nodes[key].openable, model.nodes[key].opened
(True, True)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from symlab.graph.basic import Apply, Variable
from symlab.graph.fg import FunctionGraph
from symlab.graph.inner_graph import HasInnerGraph, InnerSection, has_inner_graph, inner_sections
from symlab.printing.drawing import SECTION_STATES, DrawSection, GraphModel
from symlab.printing.loop_pictures import decorate_loop, is_loop, loop_caption
from symlab.printing.subject import Subject

__all__ = ["Plan", "caption", "check_states", "inner_budget", "inner_fgraph", "inner_size", "mark_openable",
           "open_in_place", "open_keys", "plan_openings"]

#: The fewest drawn nodes an opened inner graph may use before it is itself folded.
MIN_INNER_NODES = 12

Plan = dict[str, tuple[Apply, list[InnerSection]]]


def open_keys(open_inner: Iterable[Any], keys: Callable[[Any], str], caller: str) -> tuple[set[str], list[Any]]:
    """The keys of ``open_inner`` (keys, or Apply nodes keyed by ``keys``), and the Apply nodes given.

    ``TypeError`` names an item that is neither.
    """
    if isinstance(open_inner, str | Apply):
        open_inner = [open_inner]
    found: set[str] = set()
    nodes: list[Any] = []
    for k, item in enumerate(open_inner):
        if isinstance(item, str):
            found.add(item)
        elif isinstance(item, Apply):
            nodes.append(item)
            try:
                found.add(keys(item))
            except KeyError:
                continue
        else:
            raise TypeError(f"{caller}: open_inner[{k}] must be a node key (str) or an Apply node, "
                            f"received {type(item).__name__}")
    return found, nodes


def check_states(states: Mapping[tuple[str, str], str] | None, caller: str) -> dict[tuple[str, str], str]:
    """``section_states`` checked: ``{(node key, section label): "taken" or "skipped"}``."""
    checked: dict[tuple[str, str], str] = {}
    for where, state in (states or {}).items():
        if not (isinstance(where, tuple) and len(where) == 2 and all(isinstance(w, str) for w in where)):
            raise TypeError(f"{caller}: section_states keys must be (node key, section label) pairs of str, "
                            f"received {where!r}")
        if state not in SECTION_STATES:
            raise ValueError(f"{caller}: section_states[{where!r}] must be one of {SECTION_STATES}, received {state!r}")
        checked[where] = state
    return checked


def plan_openings(order: list[Apply], keys: Callable[[Any], str], opened: set[str], fgraph: Any) -> Plan:
    """For each node of ``order`` whose key is in ``opened`` and that has an inner graph: it and its sections."""
    plans: Plan = {}
    if not opened:
        return plans
    for node in order:
        if not has_inner_graph(node.op):
            continue
        try:
            key = keys(node)
        except KeyError:
            continue
        if key in opened:
            sections = inner_sections(node, fgraph)
            if sections:
                plans[key] = (node, sections)
    return plans


def inner_size(section: InnerSection, style: str) -> int:
    """About how many nodes drawing an owned section whole takes in ``style``."""
    per_node = {"compact": 1, "dataflow": 2, "structure": 3}[style]
    return len(section.nodes) * per_node + len(section.inputs) + len(section.outputs)


def inner_budget(plans: Plan, style: str, budget: int) -> tuple[int, int]:
    """``(drawn nodes an inner graph may use, drawn nodes the open inner graphs take)`` out of ``budget``."""
    owned = [s for _, sections in plans.values() for s in sections if s.owned]
    if not owned:
        return budget, 0
    each = max(MIN_INNER_NODES, budget // (2 * len(owned)))
    return each, sum(min(each, inner_size(s, style)) for s in owned)


def mark_openable(model: GraphModel) -> None:
    """Say on each drawn Apply node whether its op has an inner graph."""
    for node in model.nodes.values():
        if node.kind == "apply" and isinstance(node.obj, Apply) and has_inner_graph(node.obj.op):
            node.openable = True


def inner_fgraph(op: Any, section: InnerSection) -> FunctionGraph | None:
    """The FunctionGraph an owned section's objects belong to (its keys name them), or ``None``."""
    candidates = [section.extra.get("fgraph"), op, getattr(op, "scalar_op", None)]
    for item in candidates:
        fg = item if isinstance(item, FunctionGraph) else item.fgraph if isinstance(item, HasInnerGraph) else None
        if fg is not None and all(v in fg for v in section.inputs):
            return fg
    return None


def _below(prefix: str, items: Iterable[Any]) -> list[Any]:
    """The string keys under ``prefix`` without it, and every object that is not a key."""
    out: list[Any] = []
    for item in items:
        if isinstance(item, str):
            if item.startswith(prefix):
                out.append(item[len(prefix):])
        else:
            out.append(item)
    return out


def caption(section: InnerSection, op: Any = None) -> str:
    """A section's title: its label, for a branch the condition that takes it (``then (a < b is True)``), for a
    loop's body what loop it is (``scan 'rnn', n_steps = 100``; ``op`` is the loop's op, for its name)."""
    if is_loop(section):
        return loop_caption(section, getattr(op, "user_name", None))
    if section.condition is None or section.taken_when is None:
        return section.label
    from symlab.printing.pprint import pprint

    text = pprint(section.condition, max_chars=60)
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    if len(text) > 40:
        text = section.condition.name or text[:39] + "…"
    return f"{section.label} ({text} is {section.taken_when})"


def _position(variables: list[Variable], var: Variable | None, k: int) -> int | None:
    """Where ``var`` is in ``variables``: at ``k`` when it is there (a variable given twice), else its first place."""
    if var is None:
        return None
    if k < len(variables) and variables[k] is var:
        return k
    return next((i for i, v in enumerate(variables) if v is var), None)


def _drawn(model: GraphModel, var: Variable) -> list[str]:
    """The keys of the nodes of ``model`` drawing ``var`` (its box or its copies)."""
    try:
        key = model.key_of(var)
    except KeyError:
        return []
    return [k for k in model.drawn_keys(key) if k in model.nodes]


class _Opener:
    """Opens the planned nodes of one model (see :func:`open_in_place`)."""

    def __init__(self, model: GraphModel, build: Callable[..., GraphModel], each: int,
                 opened: set[str], nodes: list[Any], states: dict[tuple[str, str], str],
                 lines: Mapping[Any, Iterable[str]] | None, classes: Mapping[str, Iterable[Any]] | None,
                 caller: str) -> None:
        self.model, self.build, self.each = model, build, each
        self.opened, self.nodes, self.states = opened, nodes, states
        self.lines, self.classes, self.caller = lines or {}, classes or {}, caller

    def open(self, key: str, node: Apply, sections: list[InnerSection]) -> None:
        model = self.model
        header = model.nodes[key]
        header.opened = True
        ins: dict[int, list[str]] = {}  # position of an outer input -> the inner inputs it feeds
        outs: dict[int, str] = {}  # position of an outer output -> the inner key it leaves from
        keys: list[str] = []
        at = len(model.sections)  # this node's sections come before those nested in them (outermost first)
        for k, section in enumerate(sections):
            skey = f"{key}:{section.label}"
            if section.owned:
                members = self._owned(key, node, section, ins, outs)
            else:
                members = self._region(section)
            state = self.states.get((key, section.label))
            model.sections.insert(at + k, DrawSection(skey, key, section.label, members, state,
                                                      caption(section, node.op)))
            keys.append(skey)
        model.opened[key] = keys
        self._rewire(key, node, ins, outs)

    def _owned(self, key: str, node: Apply, section: InnerSection, ins: dict[int, list[str]],
               outs: dict[int, str]) -> list[str]:
        """Draw an owned section's graph under ``key/``; note where its inputs and outputs are drawn."""
        prefix = f"{key}/"
        fg = inner_fgraph(node.op, section)
        subject = Subject("list", section, tuple(section.outputs), tuple(section.inputs), fg,
                          fg.key if fg is not None else None)
        lines = {k: v for k, v in self.lines.items() if not isinstance(k, str)}
        lines.update((k[len(prefix):], v) for k, v in self.lines.items() if isinstance(k, str) and k.startswith(prefix))
        classes = {cls: _below(prefix, [objs] if isinstance(objs, str | Apply | Variable) else objs)
                   for cls, objs in self.classes.items()}
        states = {(o[len(prefix):], label): s for (o, label), s in self.states.items() if o.startswith(prefix)}
        inner = self.build(subject, self.model.style, max_nodes=self.each, classes=classes, lines=lines or None,
                           open_inner=[*_below(prefix, self.opened), *self.nodes], section_states=states,
                           caller=self.caller)
        # where the wiring lands, before the inner keys are prefixed
        for k, (outer, inner_var) in enumerate(zip(section.outer_inputs, section.inputs)):
            i = _position(node.inputs, outer, k)
            if i is not None:
                ins.setdefault(i, []).extend(prefix + drawn_key for drawn_key in _drawn(inner, inner_var))
        for k, (outer, inner_var) in enumerate(zip(section.outer_outputs, section.outputs)):
            j = _position(node.outputs, outer, k)
            if j is not None and j not in outs:
                drawn = [f"out{k}"] if self.model.style == "compact" else _drawn(inner, inner_var)
                if drawn and drawn[0] in inner.nodes:
                    outs[j] = prefix + drawn[0]
        if is_loop(section):
            decorate_loop(inner, section)
        return _merge(self.model, inner, prefix)

    def _region(self, section: InnerSection) -> list[str]:
        """The keys of the outer nodes of a branch region (and, but in the compact style, their values)."""
        model, members = self.model, []
        for node in section.nodes:
            key = model._where.get(node)
            if key is None or key not in model.nodes or model.nodes[key].obj is not node:
                continue
            members.append(key)
            if model.style != "compact":
                for out in node.outputs:
                    k = model._where.get(out)
                    if k is not None and k in model.nodes and model.nodes[k].obj is out and k not in members:
                        members.append(k)
        return members

    def _rewire(self, key: str, node: Apply, ins: dict[int, list[str]], outs: dict[int, str]) -> None:
        """The node's arrows go to its inner inputs and leave from its inner outputs."""
        model = self.model
        if model.style == "structure":  # the node keeps its references; wires show where values go
            for i, targets in ins.items():
                for tail in _drawn(model, node.inputs[i])[:1]:
                    for head in targets:
                        model._edge(tail, head, "wire", index=i)
            for j, tail in outs.items():
                for head in _drawn(model, node.outputs[j])[:1]:
                    model._edge(tail, head, "wire", index=j)
            return
        kept, wires = [], []
        for edge in model.edges:
            if edge.head == key and edge.kind == "input" and edge.index in ins and ins[edge.index]:
                wires.extend((edge, head) for head in ins[edge.index])
                continue
            if edge.tail == key and edge.kind in ("input", "output"):
                var = model._objects.get(edge.var) if edge.var is not None else model.nodes[edge.head].obj
                j = next((j for j, out in enumerate(node.outputs) if out is var), None)
                if j is not None and j in outs:
                    edge.tail = outs[j]
            kept.append(edge)
        model.edges = kept
        for edge, head in wires:
            model._edge(edge.tail, head, "wire", edge.label, index=edge.index, var=edge.var, tooltip=edge.tooltip)
            model.edges[-1].classes |= edge.classes


def _merge(model: GraphModel, inner: GraphModel, prefix: str) -> list[str]:
    """Move the nodes, edges and sections of ``inner`` into ``model`` under ``prefix``; their keys."""
    members = []
    for key, node in inner.nodes.items():
        node.key = prefix + key
        model.nodes[node.key] = node
        members.append(node.key)
    for key, obj in inner._objects.items():
        model._objects.setdefault(prefix + key, obj)
    for ident_, key in inner._where.items():
        model._where.setdefault(ident_, prefix + key)
    for base, copies in inner.copies.items():
        model.copies[prefix + base] = [prefix + c for c in copies]
    for edge in inner.edges:
        edge.key, edge.tail, edge.head = prefix + edge.key, prefix + edge.tail, prefix + edge.head
        edge.var = prefix + edge.var if edge.var is not None else None
        model.edges.append(edge)
    for section in inner.sections:
        section.key, section.owner = prefix + section.key, prefix + section.owner
        section.members = [prefix + m for m in section.members]
        model.sections.append(section)
    for key, sections in inner.opened.items():
        model.opened[prefix + key] = [prefix + s for s in sections]
    model.total += inner.total
    model.folded += inner.folded
    model.merged += inner.merged
    return members


def _place(model: GraphModel) -> None:
    """Each key inside a section: the innermost section holding it (the smallest; the later one on a tie)."""
    model.container = {}
    ranked = sorted(enumerate(model.sections), key=lambda item: (len(item[1].members), -item[0]))
    for _, section in ranked:
        for key in section.members:
            if key != section.owner:
                model.container.setdefault(key, section.key)


def _grey(model: GraphModel) -> None:
    """The nodes of skipped sections, and the arrows between them, carry the class ``skipped``."""
    greyed: set[str] = set()
    for section in model.sections:
        if section.state == "skipped":
            greyed.update(section.members)
    for key in greyed:
        model.nodes[key].classes.add("skipped")
    for edge in model.edges:
        if edge.tail in greyed and edge.head in greyed:
            edge.classes.add("skipped")


def open_in_place(model: GraphModel, plans: Plan, build: Callable[..., GraphModel], each: int,
                  opened: set[str], nodes: list[Any], states: dict[tuple[str, str], str],
                  lines: Mapping[Any, Iterable[str]] | None = None,
                  classes: Mapping[str, Iterable[Any]] | None = None, caller: str = "build_model") -> None:
    """Open the planned nodes drawn in ``model`` (a node folded into a group stays closed).

    ``build`` is :func:`~symlab.printing.model.build_model` (it draws each owned section, nested nodes
    opened in turn), ``each`` the drawn nodes one inner graph may use before it is folded, ``opened`` and
    ``nodes`` the keys and Apply nodes asked open, ``states`` the sections' states.
    """
    opener = _Opener(model, build, each, opened, nodes, states, lines, classes, caller)
    for key, (node, sections) in plans.items():
        drawn = model.nodes.get(key)
        if drawn is None or drawn.kind != "apply" or drawn.obj is not node:
            continue
        opener.open(key, node, sections)
    if model.sections:
        _place(model)
        _grey(model)
