r"""The source of the rule that computes an apply node's gradient, as the grad stepper shows it on demand.

Seed 003: each op says how to turn the gradients of its outputs into gradients of its inputs. Where it says
so depends on the op. An elementwise op's rule is one line of :mod:`symlab.tensor.math`, kept by scalar op name
in :data:`~symlab.tensor.elemwise.ELEMWISE_GRADS` (``Elemwise.L_op`` calls it, then sums a gradient over the
axes its input was broadcast along); any other op's rule is the ``L_op``, ``grad`` or ``pullback`` method its
class defines (the first class of its MRO that defines one; an op that defines none shows ``Op.grad``, which says
so). :func:`gradient_rule_source` gives that source, headed with ``# <qualified name> (file:line)``, the file
relative to the directory holding symlab (the rewrite stepper's :func:`~symlab.notebook.rule_source.shown_path`).
A method that only hands its work to other functions is followed by them: those of its module as the rewrite
stepper's rule cards follow them (:func:`~symlab.notebook.rule_source.rule_source_at`), and those of another symlab
module (``Scan.L_op`` hands its work to ``symlab.scan.gradient.scan_lop``).

>>> import re
>>> import symlab.tensor as st
>>> def no_lines(text):  # the line numbers move as the files change
...     print(re.sub(r"\.py:\d+", ".py:…", text))
>>> x = st.dvector("x")
>>> no_lines(gradient_rule_source(st.tanh(x).owner))
# symlab.tensor.math: ELEMWISE_GRADS['tanh'] (symlab/tensor/math.py:…)
tanh: Elemwise = _elemwise(_scalar.tanh, lambda i, o, g: [g * (1.0 - o * o)])
# Elemwise.L_op (symlab/tensor/elemwise.py:…) calls the rule with i = the inputs, o = the output, g = the output's gradient; it sums an input's gradient over the axes that input was broadcast along
>>> source = gradient_rule_source(x.sum().owner)
>>> no_lines(source.splitlines()[0])
# symlab.tensor.reduction.Sum.L_op (symlab/tensor/reduction.py:…)
>>> source.splitlines()[1].strip()
'def L_op(self, inputs, outputs, output_grads):  # noqa: N802'
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import linecache
import sys
import textwrap
from typing import Any

from symlab.graph.basic import Apply
from symlab.graph.op import Op
from symlab.notebook.rule_source import rule_source_at, shown_location, shown_path
from symlab.rewriting.trace import SourceLocation
from symlab.tensor.elemwise import ELEMWISE_GRADS, Elemwise

__all__ = ["RULE_METHODS", "gradient_rule_method", "gradient_rule_source"]

#: The methods a class may define to give its op's gradient, in the order one is preferred when it defines several.
RULE_METHODS = ("L_op", "grad", "pullback")


def gradient_rule_method(op: Any) -> tuple[type, str]:
    """The class of ``op``'s MRO that defines its gradient rule, and the method's name (``L_op``, ``grad``...).

    >>> import symlab.tensor as st
    >>> x = st.dvector("x")
    >>> cls, name = gradient_rule_method(x.sum().owner.op)
    >>> cls.__name__, name
    ('Sum', 'L_op')
    """
    for cls in type(op).__mro__:
        for name in RULE_METHODS:
            if name in vars(cls):
                return cls, name
    raise TypeError(f"gradient_rule_method: {op} ({type(op).__name__}) defines none of {', '.join(RULE_METHODS)}")


def gradient_rule_source(node: Apply) -> str:
    """The Python source of the rule that computes ``node``'s gradient, headed ``# <qualified name> (file:line)``.

    >>> import symlab.tensor as st
    >>> x = st.dvector("x")
    >>> print(gradient_rule_source(st.floor(x).owner).splitlines()[0])  # doctest: +ELLIPSIS
    # floor has no gradient rule: symlab.tensor.elemwise.Elemwise.L_op (symlab/tensor/elemwise.py:...) says its gradient is undefined
    >>> gradient_rule_source(x)
    Traceback (most recent call last):
    TypeError: gradient_rule_source: expected an Apply node (variable.owner), received TensorVariable x
    """
    if not isinstance(node, Apply):
        shown = f"{type(node).__name__} {node}" if node is not None else "None"
        raise TypeError(f"gradient_rule_source: expected an Apply node (variable.owner), received {shown}")
    op = node.op
    if isinstance(op, Elemwise):
        return _elementwise_rule_source(op)
    cls, name = gradient_rule_method(op)
    if cls is Op:  # the op defines no rule: Op.grad says so when grad calls it
        text = _method_source(Op.grad, f"{Op.__module__}.Op.grad")
        return f"# {type(op).__name__} defines no gradient rule (none of {', '.join(RULE_METHODS)}):\n{text}"
    return _method_source(getattr(cls, name), f"{cls.__module__}.{cls.__qualname__}.{name}")


def _elementwise_rule_source(op: Elemwise) -> str:
    """The line of :mod:`symlab.tensor.math` giving the scalar op's rule, and how ``Elemwise.L_op`` applies it."""
    scalar_op = op.scalar_op
    key = "cast" if type(scalar_op).__name__ == "Cast" else getattr(scalar_op, "name", None)
    rule = ELEMWISE_GRADS.get(key) if isinstance(key, str) else None
    applier = Elemwise.L_op
    applier_at = shown_location(SourceLocation(inspect.getsourcefile(applier) or "<unknown>",
                                               applier.__code__.co_firstlineno))
    if rule is None or getattr(scalar_op, "nout", 1) != 1 or hasattr(scalar_op, "fgraph"):
        # no rule (floor, a comparison), or a fused Composite: Elemwise.L_op says why there is no gradient
        head = (f"# {key or scalar_op} has no gradient rule: {Elemwise.__module__}.Elemwise.L_op ({applier_at}) "
                "says its gradient is undefined")
        body = _method_source(applier, f"{Elemwise.__module__}.Elemwise.L_op").split("\n", 1)[1]
        return f"{head}\n{body}"
    code = rule.__code__
    file = code.co_filename
    location = SourceLocation(file, code.co_firstlineno)
    module = getattr(inspect.getmodule(rule), "__name__", None) or "<unknown module>"
    head = f"# {module}: ELEMWISE_GRADS[{key!r}] ({shown_location(location)})"
    text = _statement_at(file, code.co_firstlineno)
    if text is None:
        text = f"(the source of the rule of {key} is not available: {shown_location(location)})"
    tail = (f"# Elemwise.L_op ({applier_at}) calls the rule with i = the inputs, o = the output, g = the output's "
            "gradient; it sums an input's gradient over the axes that input was broadcast along")
    return f"{head}\n{text}\n{tail}"


def _method_source(method: Any, qualified: str) -> str:
    """``# qualified (file:line)`` and the method's source (followed by the functions it hands its work to)."""
    function = inspect.unwrap(method)
    code = getattr(function, "__code__", None)
    if code is None:
        return f"# {qualified}\n(the source of {qualified} is not available: it is not Python code)"
    location = SourceLocation(code.co_filename, code.co_firstlineno)
    parts = [f"# {qualified} ({shown_location(location)})\n{rule_source_at(location, qualified)}"]
    for helper in _hands_elsewhere(function):
        at = SourceLocation(helper.__code__.co_filename, helper.__code__.co_firstlineno)
        name = f"{helper.__module__}.{helper.__qualname__}"
        parts.append(f"# {qualified} hands its work to {name} ({shown_location(at)}):\n{rule_source_at(at, name)}")
    return "\n\n".join(parts)


def _hands_elsewhere(function: Any) -> list[Any]:
    """The symlab functions of other modules a thin method (at most 5 statements) hands its work to.

    ``rule_source_at`` follows the functions of the method's own module; a gradient rule often calls one of another
    module (``Scan.L_op`` imports ``scan_lop`` where it runs, ``OpFromGraph.L_op`` calls ``builders_gradient.lop``).
    A module the method imports where it runs is imported here if it is not yet (only symlab's own modules).
    """
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return []
    func = tree.body[0] if tree.body else None
    if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
        return []
    body = func.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    if len(body) > 5:  # it does its own work
        return []
    names: dict[str, Any] = dict(getattr(function, "__globals__", {}))
    for statement in body:  # imports made where the rule runs
        if isinstance(statement, ast.ImportFrom) and (statement.module or "").startswith("symlab."):
            module = sys.modules.get(statement.module) or importlib.import_module(statement.module)
            for alias in statement.names:
                names[alias.asname or alias.name] = getattr(module, alias.name, None)
    found: list[Any] = []
    for statement in body:
        if not isinstance(statement, ast.Return | ast.Assign):
            continue
        for node in ast.walk(statement):
            if not isinstance(node, ast.Call):
                continue
            target = None
            if isinstance(node.func, ast.Name):
                target = names.get(node.func.id)
            elif isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
                owner = names.get(node.func.value.id)
                target = getattr(owner, node.func.attr, None) if inspect.ismodule(owner) else None
            code = getattr(target, "__code__", None)
            if (inspect.isfunction(target) and code is not None and code.co_filename != function.__code__.co_filename
                    and shown_path(code.co_filename).startswith("symlab/") and target not in found):
                found.append(target)
    return found


@functools.lru_cache(maxsize=64)
def _statements(file: str) -> tuple[tuple[int, int], ...]:
    """The (first, last) lines of each top-level statement of ``file`` (empty when it cannot be read)."""
    try:
        tree = ast.parse("".join(linecache.getlines(file)))
    except (SyntaxError, ValueError):
        return ()
    return tuple((s.lineno, s.end_lineno or s.lineno) for s in tree.body)


def _statement_at(file: str, line: int) -> str | None:
    """The whole top-level statement of ``file`` that holds ``line`` (a rule written over several lines)."""
    lines = linecache.getlines(file)
    if not 1 <= line <= len(lines):
        return None
    for first, last in _statements(file):
        if first <= line <= last:
            return "".join(lines[first - 1:last]).rstrip()
    return lines[line - 1].rstrip()
