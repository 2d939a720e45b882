"""Run the examples of PyTensor's tutorial (read by ``tutorial_rst.py``) and compare what they print.

Examples of one page share one namespace and run in order, as the page's doctests do. A ``>>>``
statement runs as the interactive interpreter runs it (an expression's value is shown); a
``testcode`` block runs as a script. What an example prints is compared with what the page shows by
:func:`outputs_match`: whitespace-insensitive, ``...`` matches anything, numbers are compared as
numbers (``34.`` equals ``34.0``, ``0.73105858`` equals ``0.7310585786300049``), memory addresses and
the module path of a class are not compared.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import io
import math
import os
import re
import sys
import tempfile
import traceback
from dataclasses import dataclass, field

# -- comparing outputs --------------------------------------------------------------------------------

_NUMBER = r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?nan|[-+]?inf"
_TOKEN = re.compile(rf"(?P<ellipsis>\.\.\.)|(?P<address>0x[0-9a-fA-F]+)|(?P<number>{_NUMBER})|(?P<space>\s+)|(?P<other>.)", re.S)
_CLASS_PATH = re.compile(r"<class '(?:[\w]+\.)+(\w+)'>")


def _normalize(text: str) -> str:
    return _CLASS_PATH.sub(r"<class '\1'>", text).strip()


def _pattern(want: str) -> str:
    parts: list[str] = []
    for match in _TOKEN.finditer(want):
        kind = match.lastgroup
        if kind == "ellipsis":
            parts.append(r".*?")
        elif kind == "address":
            parts.append(r"0x[0-9a-fA-F]+")
        elif kind == "number":
            parts.append(rf"({_NUMBER})")
        elif kind == "space":
            parts.append(r"\s*")
        else:
            parts.append(re.escape(match.group()))
    return "".join(parts)


def _same_number(expected: str, received: str) -> bool:
    a, b = float(expected), float(received)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-8)


def outputs_match(want: str, got: str) -> bool:
    """True when ``got`` is what ``want`` shows, up to whitespace, ``...``, number formatting and addresses.

    >>> outputs_match("array([[0.5       , 0.73105858]])", "array([[0.5, 0.7310585786300049]])")
    True
    >>> outputs_match("array(34.)", "array(34.0)"), outputs_match("array(34.)", "array(35.)")
    (True, False)
    >>> outputs_match("Initial model:\\n...\\n0.0", "Initial model:\\n[1. 2.]\\n0.0")
    True
    """
    want, got = _normalize(want), _normalize(got)
    if not want:
        return not got
    spaceless = re.sub(r"\s+", "", want)
    if spaceless == re.sub(r"\s+", "", got):
        return True
    match = re.fullmatch(_pattern(want), got, re.S)
    if match is None:
        return False
    numbers = [m.group() for m in _TOKEN.finditer(want) if m.lastgroup == "number"]
    return all(_same_number(e, r) for e, r in zip(numbers, match.groups(), strict=True))


# -- running ------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What running one example gave: ``status`` is ``"runs"``, ``"error"`` or ``"mismatch"``."""

    example_id: str
    status: str
    detail: str = ""
    mismatches: list[tuple[int, str, str]] = field(default_factory=list)


_BLANK_OR_COMMENT = re.compile(r"(\s*(#.*)?\n?)*")


def _skipped(options: str) -> bool:
    return "+SKIP" in options


def _expected_exception(want: str) -> str | None:
    lines = want.strip().splitlines()
    if not lines or not lines[0].startswith("Traceback (most recent call last)"):
        return None
    for line in lines[1:]:
        if line and not line[0].isspace() and line.strip() != "...":
            return line.split(":", 1)[0].strip()
    return None


def _run(source: str, namespace: dict, interactive: bool, name: str) -> tuple[str, BaseException | None]:
    buffer = io.StringIO()
    error: BaseException | None = None
    with contextlib.redirect_stdout(buffer):
        try:
            code = compile(source, name, "single" if interactive else "exec")
            exec(code, namespace)
        except Exception as exc:  # noqa: BLE001 - an example's failure is a result
            error = exc
    return buffer.getvalue(), error


def _describe(error: BaseException) -> str:
    lines = traceback.format_exception_only(type(error), error)
    return "".join(lines).strip().splitlines()[0][:300]


def run_example(example: dict, namespace: dict) -> Outcome:
    """Run one example in ``namespace`` (the page's), compare its output with the page's."""
    ident = example["id"]
    if example["kind"] == "doctest":
        outcome = Outcome(ident, "runs")
        for step in example["steps"]:
            if _skipped(step["options"]) or _BLANK_OR_COMMENT.fullmatch(step["source"]):
                continue
            got, error = _run(step["source"], namespace, True, f"<{ident} line {step['line']}>")
            expected_error = _expected_exception(step["want"])
            if error is not None:
                if expected_error is not None and type(error).__name__ == expected_error.rsplit(".", 1)[-1]:
                    continue
                return Outcome(ident, "error", f"line {step['line']}: {_describe(error)}")
            if expected_error is not None:
                outcome.mismatches.append((step["line"], step["want"], got + "(no exception raised)"))
            elif not outputs_match(step["want"], got):
                outcome.mismatches.append((step["line"], step["want"], got))
        if outcome.mismatches:
            outcome.status = "mismatch"
            outcome.detail = f"line {outcome.mismatches[0][0]}: output differs"
        return outcome
    got, error = _run(example["source"], namespace, False, f"<{ident}>")
    want = example.get("want")
    expected_error = _expected_exception(want) if want else None
    if error is not None:
        if expected_error is not None and type(error).__name__ == expected_error.rsplit(".", 1)[-1]:
            return Outcome(ident, "runs")
        return Outcome(ident, "error", _describe(error))
    if want is not None and example["kind"] == "testcode":
        if expected_error is not None:
            return Outcome(ident, "mismatch", "no exception raised", [(example["line"], want, got)])
        if not outputs_match(want, got):
            return Outcome(ident, "mismatch", "output differs", [(example["line"], want, got)])
    return Outcome(ident, "runs")


@contextlib.contextmanager
def tutorial_environment(mode: str = "NUMPY"):
    """Run in a scratch directory (the pages write files), with ``mode`` as the default mode."""
    import symlab

    previous_dir = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="symlab-tutorial-") as scratch:
        os.chdir(scratch)
        os.makedirs("pics", exist_ok=True)
        try:
            with symlab.config.change_flags(mode=mode):
                yield
        finally:
            os.chdir(previous_dir)


def adapt(example: dict, override: dict | None) -> dict:
    """``example`` with an adaptation of ``tutorial_manifest.py`` applied (a new dict; ``example`` is kept).

    ``override["source"]``: functions ``str -> str`` applied to the code of every statement (each must
    change at least one, or the manifest is stale); ``override["want"]``: ``{line: output}``, the output
    expected at the statement of that page line (any key for a ``testcode`` block) instead of the page's,
    either symlab's own text or a function of the output the page shows.
    """
    if not override:
        return example
    example = copy.deepcopy(example)
    steps = example["steps"] if "steps" in example else [example]
    for change in override.get("source", ()):
        changed = False
        for step in steps:
            new = change(step["source"])
            changed |= new != step["source"]
            step["source"] = new
        if not changed:
            raise ValueError(f"adaptation {change.__name__} of {example['id']} changes nothing in its code")
    for line, want in override.get("want", {}).items():
        if "steps" in example:
            matching = [step for step in example["steps"] if step["line"] == line]
            if not matching:
                raise ValueError(f"adaptation of {example['id']}: no statement at line {line}")
            target = matching[0]
        else:
            target = example
        target["want"] = want(target["want"] or "") if callable(want) else want
    return example


_NEEDS = [
    ("scan", re.compile(r"\bscan\b")),
    ("random", re.compile(r"\b(pt|tensor|symlab)\.random\b|RandomStream|shared_rng")),
    ("ifelse", re.compile(r"\bifelse\b")),
    ("OpFromGraph", re.compile(r"OpFromGraph")),
    ("sparse", re.compile(r"\bsparse\b")),
    ("GPU/JAX/other backend", re.compile(r"\bJAX\b|\bjax\b|cuda|gpuarray|\bgpu\b")),
]


def needs(example: dict) -> str | None:
    """The feature outside this issue that an example names, if any (scan, random, ifelse...)."""
    text = example["source"] if "source" in example else "\n".join(step["source"] for step in example["steps"])
    for reason, pattern in _NEEDS:
        if pattern.search(text):
            return reason
    return None


def _text(example: dict) -> str:
    return example["source"] if "source" in example else "\n".join(step["source"] for step in example["steps"])


def uses_library(example: dict) -> bool:
    """Whether an example's code names symlab (renamed from pytensor) or its usual alias ``pt``."""
    return bool(re.search(r"\bsymlab\b|\bpt\.|\bpt\b\s*,|\bfunction\(|\bshared\(|\bpp\(|\bIn\(", _text(example)))


def _names(example: dict) -> tuple[set[str], set[str]]:
    """The names an example binds and the names it reads (empty when it is not valid Python)."""
    bound: set[str] = set()
    read: set[str] = set()
    sources = [example["source"]] if "source" in example else [step["source"] for step in example["steps"]]
    for source in sources:
        try:
            statements = ast.parse(source).body
        except SyntaxError:
            continue
        for statement in statements:
            stored: set[str] = set()
            for node in ast.walk(statement):
                if isinstance(node, ast.Name):
                    if isinstance(node.ctx, ast.Store):
                        stored.add(node.id)
                    elif node.id not in bound:
                        read.add(node.id)
                elif isinstance(node, (ast.Import, ast.ImportFrom)):
                    stored.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
                elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                    stored.add(node.name)
            bound |= stored
    return bound, read


class _LibraryProbe:
    """A profile hook that notes whether a call entered symlab, then removes itself."""

    def __init__(self) -> None:
        self.hit = False

    def __call__(self, frame, event, arg):  # noqa: ANN001 - sys.setprofile's signature
        code = frame.f_code
        if event == "call" and "/symlab/" in code.co_filename and code.co_name not in ("__getattr__", "__dir__"):
            self.hit = True
            sys.setprofile(None)


@dataclass
class Classified:
    """One example's outcome with the counting facts: whether it uses symlab, and why it fails."""

    example: dict
    outcome: Outcome
    uses_library: bool
    status: str


def classify_page(examples: list[dict], mode: str = "NUMPY", overrides: dict | None = None) -> list[Classified]:
    """Run one page, and classify each example: ``runs``, ``fails-needs-<feature>`` or ``fails-other``.

    An example fails *because of* a feature (scan, random, ...) when it names the feature or reads a
    name that an earlier example, failing because of it, should have bound.
    """
    namespace: dict = {"__name__": "__tutorial__"}
    failed_names: dict[str, tuple[str | None, bool]] = {}
    results = []
    with tutorial_environment(mode):
        for example in examples:
            example = adapt(example, (overrides or {}).get(example["id"]))
            probe = _LibraryProbe()
            sys.setprofile(probe)
            try:
                outcome = run_example(example, namespace)
            finally:
                sys.setprofile(None)
            bound, read = _names(example)
            inherited = [failed_names[name] for name in read if name in failed_names]
            library = uses_library(example) or probe.hit or any(lib for _, lib in inherited)
            if outcome.status == "runs":
                status = "runs"
                for name in bound:
                    failed_names.pop(name, None)
            else:
                reason = needs(example) or next((r for r, _ in inherited if r), None)
                status = f"fails-needs-{reason}" if reason else "fails-other"
                for name in bound:
                    if name not in namespace:
                        failed_names[name] = (reason, library)
            results.append(Classified(example, outcome, library, status))
    return results
