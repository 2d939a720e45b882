"""Operations with inner graphs for the generator: ``ifelse`` and ``OpFromGraph``, as code templates.

They decorate an expression once the generator has built it, drawing from a random stream of their own, so
the expressions of a seed are the same with and without them (what the campaign found before is still found):

* ``ifelse`` (:func:`ifelse_over`): the expression becomes a branch, the other branch an expression built on
  the way of the same dtype and rank, the condition a scalar of the values (``st.sum(a) < st.sum(b)``,
  ``st.mean(a) > 0``); sometimes two outputs (``ifelse(c, [t, e], [e, t])[k]``).
* ``packaged`` (:func:`package`): a subexpression, written as a lambda over its inputs, packaged as an
  ``OpFromGraph`` and applied: in place of the subexpression (the same value), or to other expressions of
  the same types, or twice (to the same arguments, which merging removes, or to others). A subexpression
  that already holds a packaged op, or a body that applies one of its own, gives a nested one.

The templates are plain code over ``st``, ``ifelse`` and :func:`packaged`, so a failure's reproduction
pastes as it is (``from fuzz.inner import packaged``; ``tests/`` is on ``sys.path`` in the suite).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from symlab.compile.builders import OpFromGraph

from .ops import _recent, is_numeric

#: How often an expression becomes a branch of an ifelse, and how often a subexpression is packaged (a second
#: packaging, maybe of the first, follows at the same rate).
IFELSE_RATE, PACKAGE_RATE = 0.12, 0.15

#: The longest body (characters of code) a packaged op gets: shared subexpressions are written out in a
#: lambda, so a small DAG can have a long body.
MAX_BODY = 600


def packaged(body: Callable[..., Any], args: Sequence[Any], again: Sequence[Any] | None = None,
             name: str | None = None) -> Any:
    """``body`` as an ``OpFromGraph`` over fresh inputs typed like ``args``, applied to ``args``.

    With ``again``, the same op is applied a second time, to ``again``, and the two results are added.
    """
    inputs = [a.type() for a in args]
    op = OpFromGraph(inputs, [body(*inputs)], name=name)
    out = op(*args)
    return out if again is None else out + op(*again)


def _body_code(expr: Any, params: dict[int, str]) -> str | None:
    """The code of ``expr`` as one expression over ``params`` (``{id(leaf): name}``), or None if too long."""
    text: dict[int, str] = {}
    stack: list[tuple[Any, bool]] = [(expr, False)]
    while stack:
        node, ready = stack.pop()
        if id(node) in text:
            continue
        if id(node) in params:
            text[id(node)] = params[id(node)]
            continue
        if not ready:
            stack.append((node, True))
            stack.extend((a, False) for a in node.args if id(a) not in text)
            continue
        code = node.template.format(*[text[id(a)] for a in node.args])
        if len(code) > MAX_BODY:
            return None
        text[id(node)] = code
    return text[id(expr)]


def _leaves(expr: Any) -> list[Any]:
    """The input leaves of ``expr``, in the order the DAG first meets them."""
    return [n for n in expr.nodes() if n.op == "input"]


def _same_type(a: Any, b: Any) -> bool:
    return a.dtype == b.dtype and a.static == b.static and a.shape == b.shape


def package(rng: np.random.Generator, root: Any, pool: Sequence[Any]) -> tuple[list[Any], str, Any, bool] | None:
    """A subexpression of ``root`` packaged as an ``OpFromGraph``: ``(args, template, body, same_value)``.

    ``body`` is the subexpression; ``same_value`` says the node computes exactly ``body`` (applied once, to
    the inputs it was built on), so it can stand in for it in ``root``. Otherwise (other arguments of the
    same types from ``pool``, or applied twice) it is a new expression on top of them.
    """
    inner = [n for n in root.nodes() if n.op != "input" and n.size() <= 6]
    if not inner:
        return None
    nested = [n for n in inner if any(m.op == "packaged" for m in n.nodes())]
    choices = nested if nested and rng.random() < 0.5 else inner
    body = choices[int(rng.integers(len(choices)))]
    leaves = _leaves(body)
    params = {id(leaf): f"_q{k}" for k, leaf in enumerate(leaves)}
    code = _body_code(body, params)
    if code is None:
        return None
    names = ", ".join(params[id(leaf)] for leaf in leaves)
    if "packaged(" not in code and rng.random() < 0.25:  # nested: the body applies an op of its own
        code = f"packaged(lambda {names}: {code}, [{names}])"
    lam = f"lambda {names}: " + code.replace("{", "{{").replace("}", "}}")
    args = list(leaves)
    n = len(args)
    first = ", ".join(f"{{{k}}}" for k in range(n))
    if rng.random() < 0.3:  # other expressions of the same types as the inputs it was built on
        args = [_recent(rng, pool, lambda e, leaf=leaf: _same_type(e, leaf)) or leaf for leaf in leaves]
    if body is root and rng.random() < 0.4:  # applied twice: to the same arguments (merged), or to others
        again = [_recent(rng, pool, lambda e, a=a: _same_type(e, a)) or a for a in args]
        second = ", ".join(f"{{{n + k}}}" for k in range(n))
        return [*args, *again], f"packaged({lam}, [{first}], again=[{second}])", body, False
    return args, f"packaged({lam}, [{first}])", body, args == leaves


def ifelse_over(rng: np.random.Generator, root: Any, pool: Sequence[Any]) -> tuple[list[Any], str] | None:
    """``ifelse(condition, root, other)`` (or the branches swapped, or two outputs): the condition a scalar of
    the values built so far, ``other`` an expression of ``pool`` of the same dtype and rank (of the same shape,
    mostly: else the ifelse joins the static types, and the output's shape depends on the values)."""
    a = _recent(rng, pool, is_numeric)
    if a is None:
        return None
    if rng.random() < 0.5:
        cond, cond_args = "st.lt(st.sum({0}), st.sum({1}))", [a, _recent(rng, pool, is_numeric)]
    else:
        cond, cond_args = "st.gt(st.mean({0}), 0)", [a]
    same_shape = rng.random() < 0.8
    other = _recent(rng, pool, lambda e: e is not root and e.dtype == root.dtype and e.ndim == root.ndim
                    and (not same_shape or e.shape == root.shape))
    if other is None:
        return None
    branches = [root, other] if rng.random() < 0.6 else [other, root]
    k = len(cond_args)
    if rng.random() < 0.25:  # two outputs
        return [*cond_args, *branches], f"ifelse({cond}, [{{{k}}}, {{{k + 1}}}], [{{{k + 1}}}, {{{k}}}])[{int(rng.integers(2))}]"
    return [*cond_args, *branches], f"ifelse({cond}, {{{k}}}, {{{k + 1}}})"


def substitute(root: Any, old: Any, new: Any) -> Any:
    """``root`` with the node ``old`` replaced by ``new`` (which computes the same value): its ancestors copied."""
    copies = {id(old): new}
    for node in root.nodes():  # arguments first
        if id(node) not in copies and any(id(a) in copies for a in node.args):
            copies[id(node)] = replace(node, args=tuple(copies.get(id(a), a) for a in node.args))
    return copies.get(id(root), root)
