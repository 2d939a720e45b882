"""Failing expressions made minimal, and printed as a test to paste.

:func:`shrink` takes the expressions of a failure, their environment and a predicate ``fails(exprs, env)``
(the same check that failed, run again on the candidate) and greedily keeps any smaller candidate that
still fails, until none does or the time budget is spent:

1. drop a whole expression (failures of a multi-output graph: replace sequences, round trips);
2. replace the root by one of its subexpressions;
3. replace a node by one of its arguments, or by an input of the environment, everywhere it occurs;
4. simplify the values of the failing value set: a whole input, then single elements, set to a plain
   number (1, or True), so what remains special is what matters.

A candidate that symlab refuses to build, or whose reference raises, is not a smaller failure: the
predicate says False for it (:func:`guarded`).

:func:`reproduction` prints the result as a self-contained pytest function.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .generate import Expr, code_of
from .values import Env, array_code

Predicate = Callable[[list[Expr], Env], bool]


@dataclass
class Shrunk:
    """The result of :func:`shrink`: the minimal expressions and environment, and what it cost."""

    exprs: list[Expr]
    env: Env
    tries: int
    seconds: float
    complete: bool  # False: stopped by the budget before reaching a fixed point


def guarded(fails: Predicate) -> Predicate:
    """``fails``, where any exception (a candidate symlab refuses to build, a reference that raises) is False."""

    def check(exprs: list[Expr], env: Env) -> bool:
        try:
            return bool(fails(exprs, env))
        except Exception:
            return False

    return check


def substitute(root: Expr, old: Expr, new: Expr) -> Expr:
    """``root`` with every use of ``old`` replaced by ``new`` (the nodes above are copied, the rest shared)."""
    done: dict[int, Expr] = {id(old): new}
    for node in root.nodes():
        if id(node) in done:
            continue
        args = tuple(done.get(id(a), a) for a in node.args)
        done[id(node)] = node if all(a is b for a, b in zip(args, node.args)) else replace(node, args=args)
    return done[id(root)]


def _candidates(root: Expr, leaves: list[Expr]) -> Iterator[Expr]:
    """Smaller versions of ``root``, the smallest first."""
    nodes = [n for n in root.nodes() if n.op != "input"]
    found: list[Expr] = [n for n in nodes if n is not root]  # a subexpression as the whole
    for node in nodes:
        for arg in dict.fromkeys(node.args):
            found.append(substitute(root, node, arg))  # the node skipped
        if node is not root:
            for leaf in leaves:
                found.append(substitute(root, node, leaf))  # the node replaced by an input
    found.sort(key=Expr.size)
    size = root.size()
    seen: set[str] = set()
    for cand in found:
        key = "\n".join(code_of([cand]))
        if cand.size() < size and key not in seen:
            seen.add(key)
            yield cand


def _plain(dtype: np.dtype) -> Any:
    return True if dtype == np.bool_ else 1


def _value_candidates(env: Env, config: str, names: set[str]) -> Iterator[Env]:
    """``env`` with one input of the value set ``config`` made plainer: whole arrays first, then elements."""
    values = env.values[config]

    def with_value(name: str, value: np.ndarray) -> Env:
        return Env(env.inputs, {**env.values, config: {**values, name: value}})

    for name in sorted(names):
        v = values[name]
        plain = np.full_like(v, _plain(v.dtype))
        if v.size and not np.array_equal(v, plain):
            yield with_value(name, plain)
    for name in sorted(names):
        v = values[name]
        for index in np.ndindex(v.shape):
            if v[index] != _plain(v.dtype):  # NaN, -0.0 and every other value but the plain one
                new = v.copy()
                new[index] = _plain(v.dtype)
                yield with_value(name, new)


def shrink(exprs: list[Expr], env: Env, fails: Predicate, config: str | None = None, budget: float = 60.0,
           max_tries: int = 500) -> Shrunk:
    """The smallest failing expressions and values found (see the module docstring) within ``budget`` seconds."""
    fails = guarded(fails)
    start = time.perf_counter()
    tries = 0
    leaves = [Expr("input", s.name, (), s.dtype, s.static, s.shape) for s in env.inputs]

    def out_of_budget() -> bool:
        return tries >= max_tries or time.perf_counter() - start > budget

    def attempt(cand_exprs: list[Expr], cand_env: Env) -> bool:
        nonlocal tries
        tries += 1
        return fails(cand_exprs, cand_env)

    improved = True
    while improved and not out_of_budget():
        improved = False
        if len(exprs) > 1:
            for k in range(len(exprs)):
                cand = exprs[:k] + exprs[k + 1:]
                if attempt(cand, env):
                    exprs, improved = cand, True
                    break
            if improved:
                continue
        for k, root in enumerate(exprs):
            for cand_root in _candidates(root, leaves):
                if out_of_budget():
                    break
                cand = exprs[:k] + [cand_root] + exprs[k + 1:]
                if attempt(cand, env):
                    exprs, improved = cand, True
                    break
            if improved or out_of_budget():
                break
    used = set().union(*(e.input_names() for e in exprs))
    env = env.restricted(used)
    if config is not None:
        improved = True
        while improved and not out_of_budget():
            improved = False
            for cand_env in _value_candidates(env, config, used):
                if out_of_budget():
                    break
                if attempt(exprs, cand_env):
                    env, improved = cand_env, True
                    break
    return Shrunk(exprs, env, tries, time.perf_counter() - start, complete=not out_of_budget())


# -- printing ------------------------------------------------------------------------------------------------
def _header(body: str) -> str:
    """The imports ``body`` uses, in isort's groups (a pasted test should pass the linter as it is)."""
    modes = [n for n in ("DebugMode", "Mode", "get_mode") if f"{n}(" in body]
    helpers = [n for n in ("check_edits_on", "check_round_trips_on") if f"{n}(" in body]
    groups = [
        ["import warnings"] if "warnings." in body else [],
        # tests/ is on sys.path in symlab's test suite: the fuzz helpers that found the failure
        ["import numpy as np", *([f"from fuzz.graphs import {', '.join(helpers)}"] if helpers else []),
         *(["from fuzz.inner import packaged"] if "packaged(" in body else []),
         *(["from fuzz.loops import looped"] if "looped(" in body else [])],
        [line for line, used in [
            ("import symlab", "symlab." in body),
            ("import symlab.tensor as st", True),
            (f"from symlab.compile.modes import {', '.join(modes)}", bool(modes)),
            ("from symlab.gradient import verify_grad", "verify_grad(" in body),
            ("from symlab.graph.evaluate import evaluate", "evaluate(" in body),
            ("from symlab.graph.fg import FunctionGraph", "FunctionGraph(" in body),
            ("from symlab.ifelse import ifelse", "ifelse(" in body),
        ] if used],
    ]
    return "\n\n".join("\n".join(g) for g in groups if g) + "\n"


def test_name(origin: str) -> str:
    """A test function name from a failure's origin (``seed 1 batch 3 expr 2`` -> ``test_fuzz_seed1_batch3_expr2``)."""
    return "test_fuzz_" + "_".join("".join(ch for ch in part if ch.isalnum()) for part in origin.split(" ") if part)[:80]


def graph_code(exprs: list[Expr], env: Env, config: str) -> list[str]:
    """Lines making the inputs, the expressions (``out0``...), ``inputs`` and ``values``."""
    lines = [f"{s.name} = {s.constructor_code()}" for s in env.inputs]
    lines += code_of(exprs)
    lines.append(f"inputs = [{', '.join(s.name for s in env.inputs)}]")
    lines.append(f"outputs = [{', '.join(f'out{k}' for k in range(len(exprs)))}]")
    lines.append("values = [")
    lines += [f"    {array_code(env.values[config][s.name])},  # {s.name}" for s in env.inputs]
    lines.append("]")
    return lines


def reproduction(name: str, doc: str, setup: list[str], body: list[str]) -> str:
    """A pytest function ``name`` with docstring ``doc``: ``setup`` lines (the graph), then ``body`` (the claim)."""
    lines = [f"def {name}():", f'    """{doc}"""']
    lines += [f"    {line}" if line else "" for line in setup + body]
    text = "\n".join(lines) + "\n"
    return _header(text) + "\n\n" + text
