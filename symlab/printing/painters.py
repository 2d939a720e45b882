"""How each style lays a graph out as the nodes and edges of a :class:`~symlab.printing.drawing.GraphModel`.

:class:`StructurePainter` draws seed 000's object diagram (Apply, Variable,
Op and Type boxes, one arrow per Python reference); :class:`CompactPainter`
one box per Apply node, with the intermediate variables as edges;
:class:`DataflowPainter` a box per variable and a small op node per Apply
(micrograd's picture, where values go). Each draws what a
:class:`~symlab.printing.folding.Fold` leaves visible, the groups it hides,
and gives every graph object the key the model's key function says.
:func:`~symlab.printing.model.build_model` is the way to use them:

>>> import symlab.tensor as st
>>> from symlab.printing.model import build_model
>>> x = st.dscalar("x")
>>> [n.label for n in build_model(x + 1, style="compact").nodes.values()]
[['Elemwise{add,no_inplace}'], ['x'], ['1'], ['output 0', 'float64 ()']]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from symlab.graph.basic import Apply, Constant, Variable
from symlab.graph.sharedvalue import SharedVariable
from symlab.printing.drawing import DrawNode, GraphModel, ident, is_generator
from symlab.printing.folding import Fold
from symlab.printing.pprint import leaf_text

__all__ = ["FANOUT_LIMIT", "CompactPainter", "DataflowPainter", "Painter", "StructurePainter", "op_lines", "output_role"]

#: An input or constant used by more drawn nodes than this is drawn once per use.
FANOUT_LIMIT = 5


# -- text ------------------------------------------------------------------------------------
def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _var_text(var: Variable) -> str:
    return leaf_text(var) if var.owner is None else str(var)


def type_text(t: Any) -> str:
    """A type at a glance: ``float64 (?, 3)`` for a tensor type, its repr otherwise."""
    dtype, shape = getattr(t, "dtype", None), getattr(t, "shape", None)
    if dtype is None or shape is None:
        return repr(t)
    dims = ", ".join("?" if d is None else str(d) for d in shape)
    return f"{dtype} ({dims}{',' if len(shape) == 1 else ''})"


def output_role(var: Variable) -> str | None:
    """What an output of a node that returns a generator is: ``"next generator"`` (the state after the draw) or
    ``"draw"`` (the numbers drawn); ``None`` for every other variable.

    >>> import numpy as np, symlab
    >>> from symlab.tensor.random.basic import normal
    >>> rng = symlab.shared(np.random.default_rng(0), name="rng")
    >>> x = normal(0, 1, rng=rng)
    >>> [output_role(out) for out in x.owner.outputs], output_role(rng)
    (['next generator', 'draw'], None)
    """
    node = var.owner
    if node is None or not any(is_generator(out) for out in node.outputs):
        return None
    return "next generator" if is_generator(var) else "draw"


def _unnamed_input(var: Variable) -> list[str]:
    """The label of an input without a name: a shared variable (a stream's generator) says it is one."""
    kind = "unnamed shared variable" if isinstance(var, SharedVariable) else "unnamed input"
    return [kind, type_text(var.type)]


def _var_lines(var: Variable) -> list[str]:
    """The label of a variable box: its name or what computes it; an unnamed input says so, with its type.

    A random draw's outputs say which they are (``next generator`` or ``draw``) under it."""
    if var.name is None and var.owner is None and not isinstance(var, Constant):
        return _unnamed_input(var)
    role = output_role(var)
    return [_short(_var_text(var))] + ([role] if role else [])


def op_lines(op: Any) -> list[str]:
    """The lines of an op's circle, as the dataflow style draws it (and the grad stepper's gradient pane): an
    elementwise op's scalar op (``mul``), else the op's name, then its props wrapped at commas (a circle grows with
    its width).

    >>> import symlab.tensor as st
    >>> x = st.dmatrix("x")
    >>> op_lines((x * x).owner.op), op_lines(x.sum(axis=1).owner.op)
    (['mul'], ['Sum', '{axis=[1],', 'acc_dtype=float64}'])
    """
    scalar_op = getattr(op, "scalar_op", None)
    if scalar_op is not None and type(op).__name__ == "Elemwise":
        return [str(scalar_op)] + (["inplace"] if getattr(op, "inplace_pattern", ()) else [])
    text = str(op)
    head, brace, rest = text.partition("{")
    if not (brace and head):
        return [text]
    lines, line = [head], ""
    for part in (brace + rest).split(","):
        piece = part if not line else "," + part
        if line and len(line) + len(piece) > 16:
            lines.append(line + ",")
            line = part
        else:
            line += piece
    return lines + [line]


def _var_tooltip(var: Variable) -> str:
    return f"{_short(str(var), 200)} : {var.type!r}"


# -- painters ----------------------------------------------------------------------------------
class Painter:
    """What both styles share: the model, the fold, the keys, and the classes of marked objects."""

    def __init__(self, model: GraphModel, fold: Fold, keys: Callable[[Any], str], marks: dict[int, set[str]]) -> None:
        self.model, self.fold, self.keys, self.marks = model, fold, keys, marks
        self.counts: dict[str, int] = {}
        # Inputs and constants that more than FANOUT_LIMIT drawn nodes use are drawn once per use.
        uses: dict[Variable, int] = {}
        for node in fold.visible:
            for inp in node.inputs:
                if inp.owner is None:
                    uses[inp] = uses.get(inp, 0) + 1
        self.spread = {var for var, n in uses.items() if n > FANOUT_LIMIT}

    def copy_key(self, var: Variable) -> str:
        """A new key for one more drawing of the spread variable ``var``: ``<its key>u<n>``."""
        base = self.keys(var)
        return f"{base}u{len(self.model.copies.get(base, ()))}"

    def classes(self, obj: Any) -> set[str]:
        return set(self.marks.get(id(obj), ()))

    def has(self, obj: Any) -> bool:
        return obj in self.model._where

    def group(self, k: int) -> str:
        key = self.fold.keys[k] if self.fold.keys else f"g{k}"
        if key not in self.model.nodes:
            members = self.fold.groups[k]
            count = sum(self.fold.copies.get(n, 1) for n in members)
            by_op: dict[str, int] = {}
            for n in members:
                by_op[str(n.op)] = by_op.get(str(n.op), 0) + 1
            top = sorted(by_op.items(), key=lambda kv: -kv[1])
            tip = [f"{_short(op)} × {n}" for op, n in top[:10]]
            if len(top) > 10:
                tip.append(f"… and {len(top) - 10} other ops")
            label = [self.fold.titles[k]] if self.fold.titles else [f"… {count} nodes …"]
            node = DrawNode(key, "group", label, list(members), "\n".join(tip), count=count)
            self.model._add(node, *members)
        return key

    def canonical_var(self, var: Variable) -> Variable:
        owner = var.owner
        return var if owner is None else self.fold.canonical(owner).outputs[var.index]

    def owner_key(self, node: Apply) -> str:
        """The key of what draws ``node``: its box (its representative's) or its group."""
        node = self.fold.canonical(node)
        k = self.fold.group_of.get(node)
        return self.group(k) if k is not None else self.apply(node)

    def apply(self, node: Apply) -> str:  # pragma: no cover - defined by each style
        raise NotImplementedError


def _structure_kind(var: Variable) -> str:
    return "generator" if is_generator(var) else "variable"


class StructurePainter(Painter):
    """The object diagram of seed 000: Apply, Variable, Op and Type boxes, one arrow per reference."""

    def op(self, op: Any) -> str:
        """The circle of ``op``, drawn once for every node using an equal op; keys ``op0``, ``op1``..."""
        where = self.model._where.get(ident(op))
        if where is None:
            key = self.next_key("op")
            where = self.model._add(DrawNode(key, "op", op_lines(op), op, _short(str(op), 200)), op).key
        return where

    def type(self, t: Any) -> str:
        """The box of type ``t``, drawn once for every variable of an equal type; keys ``type0``..."""
        where = self.model._where.get(ident(t))
        if where is None:
            where = self.model._add(DrawNode(self.next_key("type"), "type", [repr(t)], t), t).key
        return where

    def next_key(self, prefix: str) -> str:
        n = self.counts.get(prefix, 0)
        self.counts[prefix] = n + 1
        return f"{prefix}{n}"

    def var(self, var: Variable) -> str:
        """Draw ``var`` (its representative) with its type and owner arrows; return its key."""
        var = self.canonical_var(var)
        if var in self.spread:
            first = self.keys(var) not in self.model.copies
            node = DrawNode(self.copy_key(var), _structure_kind(var), _var_lines(var), var, _var_tooltip(var),
                            self.classes(var))
            key = self.model._add_copy(node, self.keys(var), var).key
            if first:  # one arrow to the type is enough
                self.model._edge(key, self.type(var.type), "type", "type")
            return key
        if self.has(var):
            return self.model._where[var]
        key = self.keys(var)
        label = _var_lines(var)
        self.model._add(DrawNode(key, _structure_kind(var), label, var, _var_tooltip(var), self.classes(var)), var)
        if var.owner is not None:
            self.model._edge(key, self.owner_key(var.owner), "owner", "owner")
        self.model._edge(key, self.type(var.type), "type", "type")
        return key

    def apply(self, node: Apply) -> str:
        """The box of ``node`` (its arrows are drawn by :meth:`expand`)."""
        if self.has(node):
            return self.model._where[node]
        n = self.fold.copies.get(node, 1)
        label = ["Apply"] + ([f"×{n}"] if n > 1 else [])
        tip = _short(str(node), 200)
        return self.model._add(DrawNode(self.keys(node), "apply", label, node, tip, self.classes(node), n), node).key

    def expand(self, node: Apply) -> None:
        key = self.apply(node)
        self.model._edge(key, self.op(node.op), "op", "op")
        for i, inp in enumerate(node.inputs):
            self.model._edge(key, self.var(inp), "input", f"inputs[{i}]", index=i)
        for j, out in enumerate(node.outputs):
            self.model._edge(key, self.var(out), "output", f"outputs[{j}]", index=j)

    def draw(self, outputs: Iterable[Variable], inputs: Iterable[Variable]) -> None:
        for out in outputs:
            self.var(out)
        for node in reversed(self.fold.visible):
            self.expand(node)
        for k, inp in self.fold.group_inputs(self.has):
            self.model._edge(self.group(k), self.var(inp), "fold", "inputs")
        for inp in inputs:
            if inp not in self.spread:
                self.var(inp)


class CompactPainter(Painter):
    """One box per Apply; intermediate variables are the edges; inputs, constants, outputs small ellipses."""

    def __init__(self, *args: Any, simple: bool) -> None:
        super().__init__(*args)
        self.simple = simple

    def var_label(self, var: Variable, output: int | None = None) -> list[str]:
        if var.name is not None:
            main = var.name
        elif isinstance(var, Constant):
            main = _var_text(var)
        elif output is not None:  # an unnamed result: say which, and what it holds
            return [f"output {output}", type_text(var.type)]
        elif var.owner is None:
            return _unnamed_input(var)
        else:
            main = repr(var.type)
        lines = [_short(main)]
        if not self.simple and main != repr(var.type):
            lines.append(repr(var.type))
        return lines

    def leaf(self, var: Variable) -> str:
        kind = "constant" if isinstance(var, Constant) else "generator" if is_generator(var) else "input"
        if var in self.spread:
            node = DrawNode(self.copy_key(var), kind, self.var_label(var), var, _var_tooltip(var), self.classes(var))
            return self.model._add_copy(node, self.keys(var), var).key
        if self.has(var):
            return self.model._where[var]
        node = DrawNode(self.keys(var), kind, self.var_label(var), var, _var_tooltip(var), self.classes(var))
        return self.model._add(node, var).key

    def source(self, var: Variable) -> str:
        """The key of what produces ``var``: its leaf ellipse, its node's box or a group."""
        return self.leaf(var) if var.owner is None else self.owner_key(var.owner)

    def apply(self, node: Apply) -> str:
        if self.has(node):
            return self.model._where[node]
        n = self.fold.copies.get(node, 1)
        label = [_short(str(node.op))] + ([f"×{n}"] if n > 1 else [])
        tip = _short(str(node.op), 200)
        return self.model._add(DrawNode(self.keys(node), "apply", label, node, tip, self.classes(node), n), node).key

    def edge_text(self, var: Variable, i: int, nin: int) -> str:
        parts = [str(i)] if nin > 1 else []
        role = output_role(var)
        if role is not None:  # a random draw's outputs: which is the next generator, which the numbers
            parts.append(role)
        elif var.owner is not None and len(var.owner.outputs) > 1:
            parts.append(f"out {var.index}")
        if var.name is not None and var.owner is not None:
            parts.append(_short(var.name, 30))
        return " ".join(parts)

    def carried(self, var: Variable) -> dict[str, Any]:
        """The ``var``, ``tooltip`` and ``classes`` of an edge carrying ``var``."""
        if var.owner is None:
            return {"tooltip": _var_tooltip(var)}
        key = self.keys(var)
        self.model._carry(key, var)
        return {"var": key, "tooltip": _var_tooltip(var), "classes": self.classes(var)}

    def draw(self, outputs: Iterable[Variable], inputs: Iterable[Variable]) -> None:
        for inp in inputs:
            if inp not in self.spread:  # drawn at each use
                self.leaf(inp)
        for node in self.fold.visible:
            key = self.apply(node)
            for i, inp in enumerate(node.inputs):
                text = self.edge_text(inp, i, len(node.inputs))
                self.model._edge(self.source(inp), key, "input", text, index=i, **self.carried(inp))
        for k, inp in self.fold.group_inputs(self.has):
            self.model._edge(self.source(inp), self.group(k), "fold")
        for k, out in enumerate(outputs):
            kind = "generator" if is_generator(out) else "output"
            node = DrawNode(f"out{k}", kind, self.var_label(out, output=k), out, _var_tooltip(out), self.classes(out))
            self.model._add(node)
            self.model._edge(self.source(out), node.key, "output", output_role(out) or "", index=k, **self.carried(out))


class DataflowPainter(Painter):
    """A box per variable, a small op node per Apply between its input and output boxes (micrograd's picture).

    Every variable is a node, so a value or a gradient can be written on each (``build_model(lines=...)``).
    Kinds: ``input``, ``constant``, ``variable`` (intermediate), ``output`` (a computed graph output), ``apply``.
    """

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.outputs: dict[Variable, int] = {}

    def kind(self, var: Variable) -> str:
        if is_generator(var):
            return "generator"
        if var.owner is None:
            return "constant" if isinstance(var, Constant) else "input"
        return "output" if var in self.outputs else "variable"

    def var_label(self, var: Variable) -> list[str]:
        if var.name is not None:
            return [_short(var.name)]
        if isinstance(var, Constant):
            return [_short(_var_text(var))]
        if var.owner is None:
            return _unnamed_input(var)
        k = self.outputs.get(var)
        role = output_role(var)
        return ([f"output {k}"] if k is not None else []) + ([role] if role == "next generator" else [type_text(var.type)])

    def var(self, var: Variable) -> str:
        """The box of ``var`` (a new one for each use of a spread input)."""
        if var in self.spread:
            node = DrawNode(self.copy_key(var), self.kind(var), self.var_label(var), var, _var_tooltip(var),
                            self.classes(var))
            return self.model._add_copy(node, self.keys(var), var).key
        if self.has(var):
            return self.model._where[var]
        node = DrawNode(self.keys(var), self.kind(var), self.var_label(var), var, _var_tooltip(var), self.classes(var))
        return self.model._add(node, var).key

    def source(self, var: Variable) -> str:
        """What an arrow carrying ``var`` starts from: its box, or the group hiding its owner."""
        k = self.fold.group_of.get(var.owner) if var.owner is not None else None
        return self.group(k) if k is not None else self.var(var)

    def apply(self, node: Apply) -> str:
        if self.has(node):
            return self.model._where[node]
        tip = _short(str(node.op), 200)
        return self.model._add(DrawNode(self.keys(node), "apply", op_lines(node.op), node, tip, self.classes(node)),
                               node).key

    def draw(self, outputs: Iterable[Variable], inputs: Iterable[Variable]) -> None:
        outputs = list(outputs)
        for k, out in reversed(list(enumerate(outputs))):
            self.outputs[out] = k  # an output listed twice is "output <first index>"
        for inp in inputs:
            if inp not in self.spread:
                self.var(inp)
        for node in self.fold.visible:
            tails = [self.source(inp) for inp in node.inputs]  # the boxes before the op: the reading order
            key = self.apply(node)
            for i, tail in enumerate(tails):
                self.model._edge(tail, key, "input", str(i) if len(tails) > 1 else "", index=i)
            for j, out in enumerate(node.outputs):
                text = output_role(out) or (f"out {j}" if len(node.outputs) > 1 else "")
                self.model._edge(key, self.var(out), "output", text, index=j)
        for k, inp in self.fold.group_inputs(self.has):
            self.model._edge(self.source(inp), self.group(k), "fold")
        for out in outputs:
            k = self.fold.group_of.get(out.owner) if out.owner is not None else None
            if k is not None:  # computed inside a group: its box hangs from the group
                self.model._edge(self.group(k), self.var(out), "fold")
            elif not self.has(out):
                self.var(out)
