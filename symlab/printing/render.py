"""Rendering DOT source to SVG or PNG with whichever Graphviz program is installed.

symlab looks for, in order:

1. the program named by the environment variable ``SYMLAB_GRAPHVIZ`` (a path);
2. Graphviz's ``dot`` on ``PATH`` (``apt-get install graphviz``, ``brew install graphviz``...);
3. ``graphviz-pure`` (the ``graphviz-pure`` wheel, a dependency of symlab), on ``PATH`` or in
   the directory of the running Python (a virtual environment's ``bin``, even when it is not
   activated).

Both read DOT on standard input and accept ``-T<format>``. With neither,
:func:`to_svg` raises :class:`GraphvizNotFound`, saying how to install one;
importing symlab never needs them.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ENV_VAR = "SYMLAB_GRAPHVIZ"
FORMATS = ("svg", "png", "plain", "json", "xdot")
INSTALL_HINT = (
    "Rendering a diagram needs the Graphviz `dot` program or the `graphviz-pure` wheel. "
    "Install one: `pip install graphviz-pure` (no system package needed), or Graphviz itself "
    "(`apt-get install graphviz`, `brew install graphviz`, `conda install graphviz`). "
    "The DOT source is still available as `diagram(...).source`."
)


class GraphvizNotFound(RuntimeError):
    """Neither ``dot`` nor ``graphviz-pure`` could be found."""


class RenderError(RuntimeError):
    """The Graphviz program failed on a diagram."""


def _python_bin_dir() -> Path:
    """The directory of the running interpreter (a venv's ``bin``, where pip puts ``graphviz-pure``)."""
    return Path(sys.executable).parent


def find_renderer() -> str | None:
    """The path of the Graphviz program to run, or ``None`` when there is none.

    >>> import symlab.printing.render as render
    >>> path = render.find_renderer()
    >>> isinstance(path, str) or path is None
    True
    """
    explicit = os.environ.get(ENV_VAR)
    if explicit:
        return explicit
    found = shutil.which("dot")
    if found:
        return found
    found = shutil.which("graphviz-pure")
    if found:
        return found
    for name in ("graphviz-pure", "graphviz-pure.exe"):
        candidate = _python_bin_dir() / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def can_render() -> bool:
    """True if :func:`to_svg` has a program to run."""
    return find_renderer() is not None


def _source_of(graph: Any) -> str:
    source = getattr(graph, "source", graph)
    if not isinstance(source, str):
        raise TypeError(f"expected a graphviz Digraph or DOT source text, received {type(graph).__name__}")
    return source


def render(graph: Any, format: str = "svg", timeout: float = 120.0) -> bytes:
    """The bytes of ``graph`` (a Digraph or DOT text) rendered to ``format``."""
    if format not in FORMATS:
        raise ValueError(f"render: format must be one of {FORMATS}, received {format!r}")
    program = find_renderer()
    if program is None:
        raise GraphvizNotFound(INSTALL_HINT)
    try:
        done = subprocess.run(
            [program, f"-T{format}"],
            input=_source_of(graph).encode("utf-8"),
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError as err:
        raise GraphvizNotFound(f"{program} could not be run ({err}). {INSTALL_HINT}") from None
    except subprocess.TimeoutExpired:
        raise RenderError(f"{program} took more than {timeout} s; fold the graph (diagram(..., max_nodes=...))") from None
    if done.returncode != 0 or not done.stdout:
        message = done.stderr.decode("utf-8", "replace").strip()
        raise RenderError(f"{program} -T{format} failed (exit status {done.returncode}): {message}")
    return done.stdout


def to_svg(graph: Any, timeout: float = 120.0) -> str:
    """The SVG text of ``graph`` (a Digraph or DOT text).

    Raises :class:`GraphvizNotFound` when neither ``dot`` nor ``graphviz-pure`` is installed.
    """
    return render(graph, "svg", timeout).decode("utf-8")


def to_png_base64(graph: Any, timeout: float = 120.0) -> str:
    """The PNG of ``graph`` as base64 text: what a notebook's ``image/png`` output and a Markdown data image hold.

    (JupyterLab shows PNG, not SVG, in a notebook opened untrusted; so does GitHub.)
    """
    return base64.b64encode(render(graph, "png", timeout)).decode("ascii")
