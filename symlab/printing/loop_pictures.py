"""A loop opened in a picture: its body's inputs and outputs named by their taps, and the recurrence drawn.

A scan node opens (:mod:`symlab.printing.opening`) to one owned section, its body, whose ``extra`` says it is a
loop (``loop="scan"``) and names each inner input and output (``x[t]``, ``h[t-1]``, ``h[t]``). Here, in the
picture of that body:

- each inner input is labelled with its tap (``x[t]``, ``h[t-1]``, ``x[t+1]``; a non-sequence keeps its name);
- each inner output with what it is (``h[t]``; a mapped output ``y[t]``; ``until`` for a while loop's condition);
- each state's new value has a dashed ``next iteration`` arrow (kind ``recur``) back to the inputs reading
  its taps: the value of ``h[t]`` is read as ``h[t-1]`` by the next iteration;
- the section's title says it is a loop, and how many steps when that is a constant
  (``scan 'rnn', n_steps = 100``; ``while loop 'search', at most n_steps = 50``).

Labels are the user's names, literal: escaping is the DOT writer's (:mod:`symlab.printing.diagram`).

>>> import symlab
>>> import symlab.tensor as st
>>> from symlab.printing.model import build_model
>>> x = st.dvector("x")
>>> total, _ = symlab.scan(lambda x_t, acc: acc + x_t, sequences=x, outputs_info=st.constant(0.0), n_steps=4,
...                        name="cumsum")
>>> node = total.owner.inputs[0].owner
>>> model = build_model(total, "dataflow", open_inner=[node])
>>> model.sections[0].caption
"scan 'cumsum', n_steps = 4"
>>> sorted((model.nodes[e.tail].label[0], model.nodes[e.head].label[0], e.label) for e in model.edges
...        if e.kind == "recur")
[('out0[t]', 'out0[t-1]', 'next iteration')]
"""

from __future__ import annotations

from typing import Any

from symlab.graph.inner_graph import InnerSection

__all__ = ["RECUR_LABEL", "decorate_loop", "is_loop", "loop_caption", "loop_steps"]

#: The label of the arrow from a state's new value back to the inputs reading its taps.
RECUR_LABEL = "next iteration"


def is_loop(section: InnerSection) -> bool:
    """Whether ``section`` is the body of a loop (a scan's: ``extra["loop"]``)."""
    return bool(section.extra.get("loop"))


def loop_steps(section: InnerSection) -> int | None:
    """The loop's number of steps when it is a constant (``None``: it depends on the inputs)."""
    n_steps = section.extra.get("n_steps")
    if n_steps is None:
        return None
    from symlab.tensor.basic import get_scalar_constant_value

    try:
        return int(get_scalar_constant_value(n_steps))
    except (ValueError, TypeError, AttributeError):
        return None


def loop_caption(section: InnerSection, name: str | None) -> str:
    """The title of a loop's body: ``scan 'rnn', n_steps = 100``, ``while loop 'rnn', at most n_steps = 100``.

    ``name`` is the loop's name (literal), ``None`` for an unnamed one.
    """
    info = section.extra.get("info")
    as_while = bool(getattr(info, "as_while", False))
    kind = "while loop" if as_while else section.extra.get("loop", "loop")
    head = f"{kind} {name!r}" if name is not None else f"{kind} (unnamed)"
    steps = loop_steps(section)
    if steps is None:
        return head + (", at most n_steps" if as_while else ", n_steps from its inputs")
    return head + (f", at most n_steps = {steps}" if as_while else f", n_steps = {steps}")


def _tap_groups(section: InnerSection) -> list[tuple[int, list[int]]]:
    """For each traced state: (its inner output's position, the positions of the inner inputs reading its taps)."""
    info = section.extra.get("info")
    if info is None:
        return []
    first = info.inner_slices()["states"].start
    groups = []
    for j, taps in enumerate(info.state_taps):
        groups.append((j, list(range(first, first + len(taps)))))
        first += len(taps)
    return groups


def decorate_loop(inner: Any, section: InnerSection) -> None:
    """Label the inputs and outputs of the loop body drawn in ``inner`` (a GraphModel, keys not yet prefixed)
    with their taps, and draw each state's ``next iteration`` arrows."""
    in_labels = section.extra.get("input_labels") or []
    out_labels = section.extra.get("output_labels") or []
    compact = inner.style == "compact"

    def drawn(var: Any, k: int, output: bool) -> list[str]:
        if output and compact:
            key = f"out{k}"
            return [key] if key in inner.nodes else []
        try:
            key = inner.key_of(var)
        except KeyError:
            return []
        return [d for d in inner.drawn_keys(key) if d in inner.nodes]

    ins = [drawn(v, k, False) for k, v in enumerate(section.inputs)]
    outs = [drawn(v, k, True) for k, v in enumerate(section.outputs)]
    for keys, label in zip(ins, in_labels):
        for key in keys:
            node = inner.nodes[key]
            if node.kind in ("input", "variable", "generator") and node.label:
                node.label = [label, *node.label[1:]]
    for keys, label in zip(outs, out_labels):
        for key in keys:
            node = inner.nodes[key]
            if compact:
                node.label = [label]
            elif node.kind in ("output", "variable") and node.label:
                node.label = [label, *node.label[1:]]
    for j, readers in _tap_groups(section):
        if not outs[j]:
            continue
        tail = outs[j][0]
        for position in readers:
            for head in ins[position][:1]:
                inner._edge(tail, head, "recur", RECUR_LABEL,
                            tooltip=f"{out_labels[j] if j < len(out_labels) else 'the new value'} is read as "
                                    f"{in_labels[position] if position < len(in_labels) else 'a tap'} "
                                    "by the next iteration")
