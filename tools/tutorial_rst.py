"""Read the code examples of PyTensor's tutorial (``doc/tutorial/*.rst``) from a git snapshot, at run time.

Nothing of the tutorial is stored in this repository: :func:`read_pages` reads the pages from the
snapshot each time, and :func:`rename` turns ``pytensor`` into ``symlab``, the only change made to an
example's text.

An *example* is what Sphinx's doctest extension runs as one unit, plus the illustrative code blocks:

- a ``>>>`` block: consecutive ``>>>``/``...`` lines with the output the page shows, up to a blank line;
- a ``.. testcode::`` block, with the ``.. testoutput::`` block that follows it (when there is one);
- a ``.. testsetup::`` block (kept, run in its place, not counted: it is the page's hidden set-up);
- a ``.. code-block:: python`` (or ``.. code:: python``) block, which Sphinx does not run.

Examples are numbered in page order: ``"<page>:<number>"`` (the ids of ``tutorial_manifest.py``).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

SOURCE_REPOSITORY = "pymc-devs/pytensor"
SOURCE_COMMIT = "f857e69611b9e36be2443f8e1905f5aa484aa455"
DEFAULT_SNAPSHOT = "/work/.mirror/pymc-devs+pytensor/repo"


class SnapshotMissing(RuntimeError):
    """The snapshot of PyTensor's repository (or its commit) is not where it was looked for."""


def rename(text: str) -> str:
    """PyTensor's names become symlab's: the only change made to an example.

    >>> rename("import pytensor.tensor as pt  # PyTensor")
    'import symlab.tensor as pt  # symlab'
    """
    return text.replace("pytensor", "symlab").replace("PyTensor", "symlab")


_DIRECTIVE = re.compile(r"^(\s*)\.\. (testcode|testoutput|testsetup|code-block|code|doctest)::\s*(\S*)\s*$")
_FLAG = re.compile(r"#\s*doctest:\s*(.*)$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _directive_body(lines: list[str], start: int, base: int) -> tuple[list[str], dict[str, str], int]:
    """The options and the dedented body of the directive opened at line ``start - 1``."""
    options: dict[str, str] = {}
    i = start
    while i < len(lines) and lines[i].strip().startswith(":") and _indent(lines[i]) > base:
        key, _, value = lines[i].strip()[1:].partition(":")
        options[key.strip()] = value.strip()
        i += 1
    body: list[str] = []
    while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > base):
        body.append(lines[i])
        i += 1
    while body and not body[-1].strip():
        body.pop()
    while body and not body[0].strip():
        body.pop(0)
    width = min((_indent(line) for line in body if line.strip()), default=0)
    return [line[width:] for line in body], options, i


def _doctest_steps(block: list[str], first_line: int) -> list[dict]:
    """The ``>>>`` statements of one block, each with the output shown below it."""
    steps: list[dict] = []
    i = 0
    while i < len(block):
        line = block[i]
        stripped = line.lstrip()
        if not stripped.startswith(">>>"):
            i += 1
            continue
        width = _indent(line)
        source = [stripped[4:] if len(stripped) > 3 else ""]
        lineno = first_line + i
        i += 1
        while i < len(block) and block[i].lstrip().startswith("...") and _indent(block[i]) == width and (
            block[i].lstrip() == "..." or block[i].lstrip().startswith("... ")
        ):
            source.append(block[i].lstrip()[4:])
            i += 1
        want: list[str] = []
        while i < len(block) and block[i].strip() and not block[i].lstrip().startswith(">>>"):
            want.append(block[i][width:] if _indent(block[i]) >= width else block[i].lstrip())
            i += 1
        code = "\n".join(source)
        flags = _FLAG.search(source[0]) if source else None
        steps.append(
            {
                "line": lineno,
                "source": code,
                "want": "\n".join(want) + ("\n" if want else ""),
                "options": flags.group(1).strip() if flags else "",
            }
        )
    return steps


def parse_rst(text: str, page: str) -> list[dict]:
    """The examples of one page of the tutorial, in order (see the module's docstring)."""
    lines = text.splitlines()
    examples: list[dict] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        match = _DIRECTIVE.match(line)
        if match:
            base, kind, argument = len(match.group(1)), match.group(2), match.group(3)
            body, options, end = _directive_body(lines, i + 1, base)
            if kind in ("code-block", "code") and argument != "python":
                i = end
                continue
            if kind == "testoutput":
                if examples and examples[-1]["kind"] == "testcode" and examples[-1]["want"] is None:
                    examples[-1]["want"] = "\n".join(body) + "\n"
                    examples[-1]["options"] = options.get("options", "")
                    examples[-1]["hide_output"] = "hide" in options
                i = end
                continue
            kind_name = {"code": "code-block"}.get(kind, kind)
            if kind == "doctest":
                kind_name = "doctest"
                steps = _doctest_steps(body, i + 2)
                examples.append({"kind": "doctest", "line": i + 1, "group": argument or "default", "steps": steps})
                i = end
                continue
            examples.append(
                {
                    "kind": kind_name,
                    "line": i + 1,
                    "group": argument or "default",
                    "source": "\n".join(body) + "\n",
                    "want": None,
                    "options": "",
                    "hide_output": False,
                }
            )
            i = end
            continue
        if line.lstrip().startswith(">>>"):
            start = i
            while i < len(lines) and lines[i].strip():
                i += 1
            examples.append(
                {"kind": "doctest", "line": start + 1, "group": "default", "steps": _doctest_steps(lines[start:i], start + 1)}
            )
            continue
        i += 1
    for number, example in enumerate(examples, 1):
        example["id"] = f"{page}:{number}"
    return examples


def _renamed(example: dict) -> dict:
    out = dict(example)
    if "steps" in out:
        out["steps"] = [
            {**step, "source": rename(step["source"]), "want": rename(step["want"])} for step in out["steps"]
        ]
    else:
        out["source"] = rename(out["source"])
        if out["want"] is not None:
            out["want"] = rename(out["want"])
    return out


def _git(snapshot: str, *args: str) -> str:
    result = subprocess.run(["git", "-C", snapshot, *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise SnapshotMissing(
            f"cannot read PyTensor's tutorial from the snapshot {snapshot!r} "
            f"(git {' '.join(args[:2])}: {result.stderr.strip() or 'failed'}); expected a git copy of "
            f"{SOURCE_REPOSITORY} holding commit {SOURCE_COMMIT[:9]}; pass its path as the first argument"
        )
    return result.stdout


def read_pages(snapshot: str = DEFAULT_SNAPSHOT, commit: str = SOURCE_COMMIT) -> dict[str, list[dict]]:
    """The renamed examples of every page of ``doc/tutorial`` that has some, by page name, in page order.

    Raises :class:`SnapshotMissing` (saying what was expected) when ``snapshot`` is not a git copy of
    PyTensor's repository holding ``commit``.
    """
    if not Path(snapshot).exists():
        raise SnapshotMissing(
            f"no snapshot of {SOURCE_REPOSITORY} at {snapshot!r}: expected a git copy of the repository "
            f"holding commit {SOURCE_COMMIT[:9]}; pass its path as the first argument"
        )
    listing = _git(snapshot, "ls-tree", "--name-only", commit, "doc/tutorial/").split()
    pages: dict[str, list[dict]] = {}
    for path in sorted(p for p in listing if p.endswith(".rst")):
        page = Path(path).stem
        examples = [_renamed(example) for example in parse_rst(_git(snapshot, "show", f"{commit}:{path}"), page)]
        if examples:
            pages[page] = examples
    return pages
