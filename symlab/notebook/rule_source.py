"""A rule's source as the stepper's card shows it: read from where the rule is written, with the paths made portable.

:func:`rule_source_at` reads the block (decorators, signature, body) at a rule's
:class:`~symlab.rewriting.trace.SourceLocation`; when the rule only hands its work to functions of its module
(fusion, inplace), those follow it. :func:`shown_path` writes a file relative to the directory holding
symlab, else by its name alone: a page made on one machine carries none of its paths.

>>> import symlab.rewriting.fusion as fusion
>>> from symlab.rewriting.trace import SourceLocation
>>> shown_location(SourceLocation(fusion.__file__, 1))
'symlab/rewriting/fusion.py:1'
>>> rule_source_at(SourceLocation("<unknown>", 3), "my_rule")
'(the source of my_rule is not available: <unknown>:3)'
"""

from __future__ import annotations

import ast
import functools
import inspect
import linecache
import sys
import textwrap
import tokenize
from pathlib import Path
from typing import Any

from symlab.rewriting.trace import SourceLocation

__all__ = ["SOURCE_MAX_LINES", "rule_source_at", "shown_location", "shown_path"]

#: Lines of a rule's source shown (the rule, and the function it hands its work to).
SOURCE_MAX_LINES = 160
#: The directory holding the symlab package: what shown paths are relative to.
_ROOT = Path(__file__).resolve().parent.parent.parent


@functools.lru_cache(maxsize=512)
def shown_path(file: str) -> str:
    """``file`` as the stepper shows it: relative to the directory holding symlab, else its name alone.

    A page made on one machine must not carry that machine's paths (home directories, checkouts):

    >>> import symlab.rewriting.fusion as fusion
    >>> shown_path(fusion.__file__)
    'symlab/rewriting/fusion.py'
    >>> shown_path("/home/someone/project/my_rules.py"), shown_path("<unknown>")
    ('my_rules.py', '<unknown>')
    """
    if file.startswith("<"):
        return file
    path = Path(file)
    try:
        return path.resolve().relative_to(_ROOT).as_posix()
    except (ValueError, OSError):
        return path.name


def shown_location(location: SourceLocation) -> str:
    """``file:line`` of ``location``, its file as :func:`shown_path` shows it."""
    return f"{shown_path(location.file)}:{location.line}"


def _block_at(lines: list[str], line: int) -> list[str]:
    """The block (decorators, signature and body) that starts at ``line`` (from 1) of ``lines``."""
    try:
        return list(inspect.getblock(lines[line - 1:]))
    except (IndentationError, SyntaxError, tokenize.TokenError):
        return lines[line - 1:line + 20]


def _module_of(file: str) -> Any:
    for module in list(sys.modules.values()):
        if getattr(module, "__file__", None) == file:
            return module
    return None


def _hands_to(block: list[str], file: str, seen: set[str]) -> list[Any]:
    """The functions of ``file``'s module a thin function (``block``) hands its work to: those whose result it uses."""
    try:
        tree = ast.parse(textwrap.dedent("".join(block)))
    except SyntaxError:
        return []
    func = tree.body[0] if tree.body else None
    if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
        return []
    body = func.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        body = body[1:]  # the docstring
    if len(body) > 5:  # it does its own work
        return []
    module = _module_of(file)
    if module is None:
        return []
    found = []
    for statement in body:
        if isinstance(statement, ast.Expr):  # a call whose result is dropped: a preparation, not the work
            continue
        for node in ast.walk(statement):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id not in seen:
                target = getattr(module, node.func.id, None)
                code = getattr(target, "__code__", None)
                if inspect.isfunction(target) and code is not None and code.co_filename == file:
                    seen.add(node.func.id)
                    found.append(target)
    return found


def rule_source_at(location: SourceLocation, rule: str) -> str:
    """The source at ``location`` (a rule's), followed by the functions it hands its work to, if it only delegates."""
    file, line = location.file, location.line
    lines = linecache.getlines(file)
    if not 1 <= line <= len(lines):
        return f"(the source of {rule} is not available: {shown_location(location)})"
    block = _block_at(lines, line)
    parts = ["".join(block).rstrip()]
    seen: set[str] = set()
    todo = [(block, 0)]
    while todo and sum(p.count("\n") + 1 for p in parts) < SOURCE_MAX_LINES:
        current, depth = todo.pop(0)
        if depth >= 2:
            continue
        for fn in _hands_to(current, file, seen):
            start = fn.__code__.co_firstlineno
            inner = _block_at(lines, start)
            where = shown_location(SourceLocation(file, start))
            parts.append(f"# {rule} hands its work to {fn.__name__} ({where}):\n" + "".join(inner).rstrip())
            todo.append((inner, depth + 1))
    text = "\n\n".join(parts)
    kept = text.splitlines()
    if len(kept) > SOURCE_MAX_LINES:
        text = "\n".join(kept[:SOURCE_MAX_LINES]) + f"\n# … {len(kept) - SOURCE_MAX_LINES} more lines"
    return text
