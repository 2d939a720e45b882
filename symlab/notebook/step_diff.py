"""A rewrite step as a text diff: the lines of the nodes around its change, before and after, ``-``/``+``.

Each Apply node is one line, written with the stable keys of the trace: ``a12 = Elemwise{mul,no_inplace}(a7, X)``
(an input is its node's key, or ``a7.1`` for a node's second output; a graph input its name, else its key;
a constant its value and its key), followed by the names of what it computes; each graph output fed from there is a line
``out0 = a12``. The lines are those of the nodes the step removed and created and of their neighbours, in
the order the graph computes them (the oldest node first among those ready, so that the nodes a step did
not touch keep their order); a line only in the graph before the step is ``-``, only after it ``+``, in
both ``" "``. A node whose input the step changed keeps its key and shows as a ``-`` and a ``+`` line.

>>> import symlab.tensor as st
>>> from symlab.rewriting import rewrite_graph
>>> x = st.dvector("x")
>>> _, trace = rewrite_graph(x * 1.0, include=("canonicalize",))
>>> for row in step_diff(trace.cursor(), 2):
...     print(row["sign"], row["text"])
- a4 = Elemwise{mul,no_inplace}(x, [1.] [v6])
- out0 = a4
+ out0 = x
"""

from __future__ import annotations

import difflib
import heapq
from typing import Any

from symlab.graph.basic import Constant
from symlab.graph.changes import InputChanged
from symlab.notebook.step_pictures import neighbourhood

__all__ = ["diff_text", "step_diff"]

#: How far from the changed nodes the diff's context reaches, and how many nodes it shows at most.
DIFF_RADIUS = 1
DIFF_MAX_NODES = 24
#: Longest text of a constant written in a line.
CONSTANT_WIDTH = 24


def _ref(cursor: Any, var: Any) -> str:
    owner = var.owner
    if owner is not None:
        key = cursor.key(owner)
        return key if len(owner.outputs) == 1 else f"{key}.{var.index}"
    if isinstance(var, Constant):
        text = " ".join(str(var.data).split())
        text = text if len(text) <= CONSTANT_WIDTH else text[:CONSTANT_WIDTH - 1] + "…"
        return f"{text} [{cursor.key(var)}]"  # the key: merging equal constants is a change too
    return var.name or cursor.key(var)


def _node_line(cursor: Any, node: Any) -> str:
    text = f"{cursor.key(node)} = {node.op}({', '.join(_ref(cursor, v) for v in node.inputs)})"
    names = [o.name for o in node.outputs if o.name]
    return text + (f"  # {', '.join(names)}" if names else "")


def _lines(cursor: Any, keys: set[str], outputs: set[int]) -> list[tuple[str, str]]:
    """``(key, text)`` of the nodes of ``keys`` in the cursor's graph, in computing order, and the outputs they feed."""
    fg = cursor.fgraph
    nodes = [n for n in (_copy(cursor, k) for k in keys) if n is not None and n in fg._nodes]
    inside = set(nodes)
    # Kahn's order, the lowest key first among the nodes ready: the same nodes come in the same order before
    # and after a step, whatever it rewired elsewhere
    waiting = {n: sum(1 for v in n.inputs if v.owner in inside) for n in nodes}
    users: dict[Any, list[Any]] = {}
    for n in nodes:
        for v in n.inputs:
            if v.owner in inside:
                users.setdefault(v.owner, []).append(n)
    ready = [(_serial(cursor, n), id(n), n) for n, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    order: list[Any] = []
    while ready:
        _, _, node = heapq.heappop(ready)
        order.append(node)
        for user in users.get(node, ()):
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, (_serial(cursor, user), id(user), user))
    rows = [(cursor.key(n), _node_line(cursor, n)) for n in order]
    for k, out in enumerate(fg.outputs):
        if k in outputs or out.owner in inside:
            rows.append((f"out{k}", f"out{k} = {_ref(cursor, out)}"))
    return rows


def _fed_outputs(cursor: Any, keys: set[str]) -> set[int]:
    """The graph outputs computed by the nodes of ``keys`` in the cursor's graph."""
    return {k for k, out in enumerate(cursor.fgraph.outputs) if out.owner is not None and cursor.key(out.owner) in keys}


def _copy(cursor: Any, key: str) -> Any:
    try:
        return cursor.object(key)
    except KeyError:
        return None


def step_diff(cursor: Any, k: int) -> list[dict[str, str]]:
    """The diff of step ``k`` (from 1) of ``cursor``'s trace: rows ``{"sign", "text", "key"}``; moves ``cursor`` to ``k``."""
    trace = cursor.trace
    step = trace.step(k)
    changed = [trace.key(n) for n in (*step.removed, *step.created)]
    if step.node is not None:
        try:
            changed.append(trace.key(step.node))
        except KeyError:
            pass
    changed.extend(trace.key(e.node) for e in step.events if type(e) is InputChanged and e.node != "output")
    cursor.seek(k - 1)
    before_region = neighbourhood(cursor.fgraph, [n for n in map(lambda x: _copy(cursor, x), changed) if n is not None],
                                  DIFF_RADIUS, DIFF_MAX_NODES)
    keys = {cursor.key(n) for n in before_region}
    cursor.forward()
    after_region = neighbourhood(cursor.fgraph, [n for n in map(lambda x: _copy(cursor, x), changed) if n is not None],
                                 DIFF_RADIUS, DIFF_MAX_NODES)
    keys |= {cursor.key(n) for n in after_region}
    outputs = _fed_outputs(cursor, keys)
    outputs |= {e.index for e in step.events if type(e) is InputChanged and e.node == "output"}
    cursor.backward()
    outputs |= _fed_outputs(cursor, keys)
    before = _lines(cursor, keys, outputs)
    cursor.forward()
    after = _lines(cursor, keys, outputs)
    rows: list[dict[str, str]] = []
    matcher = difflib.SequenceMatcher(a=[key for key, _ in before], b=[key for key, _ in after], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            rows.extend({"sign": "-", "text": t, "key": key} for key, t in before[i1:i2])
            rows.extend({"sign": "+", "text": t, "key": key} for key, t in after[j1:j2])
            continue
        for (key, old), (_, new) in zip(before[i1:i2], after[j1:j2]):  # the same node: its line, or how it changed
            if old == new:
                rows.append({"sign": " ", "text": old, "key": key})
            else:
                rows += [{"sign": "-", "text": old, "key": key}, {"sign": "+", "text": new, "key": key}]
    # a node the order moved but the step did not change is context, once (where it stands after the step)
    gone = {(r["key"], r["text"]) for r in rows if r["sign"] == "-"}
    came = {(r["key"], r["text"]) for r in rows if r["sign"] == "+"}
    moved = gone & came
    if moved:
        rows = [r if (r["key"], r["text"]) not in moved else {**r, "sign": " "}
                for r in rows if not (r["sign"] == "-" and (r["key"], r["text"]) in moved)]
    return rows


def _serial(cursor: Any, obj: Any) -> int:
    return int(cursor.key(obj)[1:])


def diff_text(rows: list[dict[str, str]]) -> str:
    """The rows of :func:`step_diff` as text, one ``sign text`` line each."""
    return "\n".join(f"{row['sign']} {row['text']}" for row in rows)
