"""What a grad stepper says of each step, in words: its card, its row of the step table, its Markdown.

A card is a dict of plain strings (the browser shows each with ``textContent``): the node visited, the
gradient arriving at each of its outputs, what its op's rule computes (the new gradient expressions,
pretty-printed), what each input receives and its total so far (the chain rule's sum, said as such), the
nodes the step built, and why a step built nothing. With values (a
:class:`~symlab.notebook.grad_numbers.GradNumbers`) every gradient also carries its number.

>>> import symlab.tensor as st
>>> from symlab.gradient.walk import walk_of
>>> a, b = st.dscalars("a", "b")
>>> walk = walk_of(st.log(a * b + st.exp(a)), [a, b])
>>> card = step_card(walk, 4)
>>> card["title"], [(c["input"], c["summed"]) for c in card["contributions"]]
('step 4 of 4: mul', [('a', True), ('b', False)])
>>> step_row(walk, 0)
[0, 'start', '1.0', "the cost's gradient is 1", 0, '']
"""

from __future__ import annotations

from typing import Any

from symlab.graph.basic import Constant
from symlab.graph.null_type import NullType

__all__ = ["TEXT_MAX", "expression", "markdown_table", "step_card", "step_row"]

#: Characters of a gradient expression shown in a card before it is cut (``…``).
TEXT_MAX = 240


#: How an elementwise op of two inputs is written between them.
_INFIX = {"add": "+", "sub": "-", "mul": "*", "true_div": "/", "pow": "**"}
#: How many ops deep an expression is written before the rest is ``…``.
DEPTH = 6


def expression(var: Any, limit: int = TEXT_MAX, forward: Any = frozenset(), depth: int = DEPTH) -> str:
    """``var`` written on one line, ``depth`` ops deep (cut at ``limit`` characters); ``"none"`` for None.

    A named variable is its name; a value of the forward graph (an apply node of ``forward``) that has no name
    is written as its op with ``…`` for its inputs (its own graph is the forward picture's).

    >>> import symlab.tensor as st
    >>> x = st.dscalar("x")
    >>> y = st.tanh(x * 2)
    >>> expression((1.0 - y * y) * 3), expression((1.0 - y * y) * 3, forward={y.owner}), expression(None)
    ('((1.0 - (tanh((x * 2)) * tanh((x * 2)))) * 3)', '((1.0 - (tanh(…) * tanh(…))) * 3)', 'none')
    """
    if var is None:
        return "none"
    if isinstance(var.type, NullType):
        return "undefined"
    from symlab.gradient.walk import op_label

    budget = [limit + 1]

    def write(v: Any, level: int, top: bool) -> str:
        if budget[0] <= 0:
            return "…"
        if isinstance(v, Constant):
            data = v.data
            text = str(data) if getattr(data, "ndim", 1) == 0 else f"constant{tuple(getattr(data, 'shape', ()))}"
        elif v.name:
            text = str(v.name)
        elif v.owner is None:
            text = str(v)
        else:
            node = v.owner
            label = op_label(node)
            if level <= 0 or (node in forward and not top):
                text = f"{label}(…)"
            else:
                args = [write(i, level - 1, False) for i in node.inputs]
                if label in _INFIX and len(args) == 2:
                    text = f"({args[0]} {_INFIX[label]} {args[1]})"
                else:
                    text = f"{label}({', '.join(args)})"
                if len(node.outputs) > 1:
                    text += f"[{node.outputs.index(v)}]"
        budget[0] -= len(text)
        return text

    text = " ".join(write(var, depth, True).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _value(numbers: Any, var: Any) -> str:
    if numbers is None or var is None or isinstance(var.type, NullType):
        return ""
    return str(numbers.text(numbers.value(var)))


def _seed_text(walk: Any, numbers: Any) -> str:
    seeds = list(walk.seeds.values())
    if not seeds:
        return "none"
    if numbers is not None:
        return ", ".join(_value(numbers, s) for s in seeds)
    return ", ".join(expression(s, 40) for s in seeds)


def step_card(walk: Any, k: int, numbers: Any = None) -> dict[str, Any]:
    """The card of step ``k`` of ``walk`` (0: the start), with ``numbers``' values when given."""
    total = len(walk.steps)
    forward = walk.forward_nodes

    def written(var: Any, limit: int = TEXT_MAX) -> str:  # the forward values are the left picture's
        return expression(var, limit, forward)

    if k == 0:
        seeds = [{"output": str(var), "gradient": written(g), "value": _value(numbers, g)}
                 for var, g in walk.seeds.items()]
        return {"step": 0, "title": f"start (step 0 of {total})", "kind": "start",
                "summary": "the cost's gradient is 1: grad starts from it and walks back to the inputs, "
                           f"visiting {total} apply node{'s' * (total != 1)}",
                "node": "", "why": "", "arriving": seeds, "rule": "", "contributions": [], "new": [], "sums": [],
                "problems": [], "last": total == 0}
    step = walk.steps[k - 1]
    arriving_values = numbers.arriving(step) if numbers is not None else [None] * len(step.arriving)
    arriving = []
    for out, grad, value in zip(step.node.outputs, step.arriving, arriving_values):
        arriving.append({"output": str(out), "gradient": written(grad),
                         "value": "" if value is None else str(numbers.text(value))})
    contributions = []
    for c in step.contributions:
        received = ""
        if numbers is not None and c.gradient is not None and not c.undefined and not c.reason:
            received = str(numbers.text(numbers.received(c)))
        why = c.reason or (str(c.gradient.type.why) if c.undefined else "")  # type: ignore[union-attr]
        contributions.append({
            "index": c.index, "input": str(c.variable), "gradient": written(c.gradient) if not c.reason else "none",
            "value": received, "total": written(c.after) if c.after is not None and not c.reason else "",
            "total_value": _value(numbers, c.after) if not c.reason else "",
            "summed": c.summed, "undefined": c.undefined, "reason": why,
        })
    if step.kind == "rule":
        rule = (f"{step.label}'s gradient rule turns the gradient of its output"
                f"{'s' * (len(step.node.outputs) != 1)} into one gradient per input (the chain rule's factor)")
    elif step.kind == "undefined":
        rule = "its rule is not called: the gradient arriving cannot be computed, and passes on undefined"
    else:
        rule = "its rule is not called: no gradient reaches its outputs"
    problems = []
    if k == total:
        problems = [{"wrt": str(w), "problem": p} for w, p in zip(walk.wrt, walk.problems) if p]
    return {
        "step": k, "title": f"step {k} of {total}: {step.label}", "kind": step.kind, "summary": str(step),
        "node": f"{step.node.op}({', '.join(str(i) for i in step.node.inputs)})", "why": step.why,
        "arriving": arriving, "rule": rule, "contributions": contributions,
        "new": [written(n.outputs[0], 80) for n in step.new_nodes],
        "sums": list(dict.fromkeys(str(c.variable) for c in step.sums)), "problems": problems, "last": k == total,
    }


def step_row(walk: Any, k: int, numbers: Any = None) -> list[Any]:
    """Step ``k``'s row of the step table: ``[k, node, arriving gradient, rule result, new nodes, sums]``."""
    if k == 0:
        return [0, "start", _seed_text(walk, numbers), "the cost's gradient is 1", 0, ""]
    step = walk.steps[k - 1]
    if numbers is not None:
        values = numbers.arriving(step)
        arriving = ", ".join("none" if v is None else str(numbers.text(v)) for v in values)
    else:
        arriving = ", ".join("none" if g is None else expression(g, 40, walk.forward_nodes) for g in step.arriving)
    if step.kind == "rule":
        given = sum(1 for c in step.contributions if c.gradient is not None and not c.reason and not c.undefined)
        result = f"{given} gradient{'s' * (given != 1)}"
        undefined = [str(c.variable) for c in step.contributions if c.undefined]
        refused = [str(c.variable) for c in step.contributions if c.reason]
        if undefined:
            result += f"; undefined for {', '.join(undefined)}"
        if refused:
            result += f"; none for {', '.join(refused)}"
    elif step.kind == "undefined":
        result = "undefined gradient passes on"
    else:
        result = "no gradient"
    sums = ", ".join(dict.fromkeys(str(c.variable) for c in step.sums))
    return [k, f"{step.label}", arriving, result, len(step.new_nodes), sums]


def markdown_table(rows: list[list[Any]], current: int, limit: int = 200) -> list[str]:
    """The step table as Markdown lines (every user string in a code span); the current row in bold."""
    from symlab.notebook.widget import code_span

    lines = ["| k | node | arriving gradient | rule result | new nodes | sums |", "|---|---|---|---|---|---|"]
    for k, node, arriving, result, new, sums in rows[:limit]:
        mark = "**" if k == current else ""
        lines.append(f"| {mark}{k}{mark} | {code_span(node)} | {code_span(arriving)} | {code_span(result)} | {new} "
                     f"| {code_span(sums) if sums else ''} |")
    if len(rows) > limit:
        lines.append(f"| … | {len(rows) - limit} more steps | | | | |")
    return lines


def card_markdown(card: dict[str, Any]) -> list[str]:
    """The current step's card as Markdown lines (user strings in code spans)."""
    from symlab.notebook.widget import code_span

    def span(text: Any) -> str:
        return code_span(text, table=False)

    lines = [f"**{card['title']}**", ""]
    if card.get("summary"):
        lines.append(span(card["summary"]))
    if card.get("node"):
        lines.append(f"- node: {span(card['node'])}")
    for a in card.get("arriving", []):
        value = f" = {span(a['value'])}" if a.get("value") else ""
        lines.append(f"- gradient arriving at {span(a['output'])}: {span(a['gradient'])}{value}")
    for c in card.get("contributions", []):
        if c["reason"]:
            lines.append(f"- input {span(c['input'])} gets none: {span(c['reason'])}")
            continue
        value = f" = {span(c['value'])}" if c.get("value") else ""
        summed = " (added to the gradient already there: the chain rule's sum)" if c["summed"] else ""
        total = f" = {span(c['total_value'])}" if c.get("total_value") else ""
        lines.append(f"- input {span(c['input'])} receives {span(c['gradient'])}{value}; its total "
                     f"{span(c['total'])}{total}{summed}")
    if card.get("why"):
        lines.append(f"- why: {span(card['why'])}")
    for p in card.get("problems", []):
        lines.append(f"- grad would say, for {span(p['wrt'])}: {span(p['problem'])}")
    return lines
