"""The house rules of symlab's source, read from the source (README, "Layout").

- No import circle, and no import up the layers (``graph`` < ``scalar`` < ``tensor`` < ``sparse`` <
  ``gradient``, ``rewriting`` < ``compile`` < ``printing``, ``formats`` < ``notebook``), even inside a
  function: ``tools/import_graph.py`` reads every import statement (and, in a module that imports by
  name, every string naming a module). The display registry is the one way up.
- Public names are written out: no module of the package creates names through ``globals()``.
- ``import symlab`` loads neither Numba, IPython, graphviz nor a widget library.
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import import_graph  # noqa: E402

GRAPH = import_graph.read_imports(ROOT / "symlab")


def test_every_module_has_a_layer():
    for module in GRAPH.modules:
        import_graph.layer_of(module)  # raises KeyError naming a module outside LAYERS


def test_no_import_circle():
    circles = GRAPH.circles()
    shown = "\n".join(" <-> ".join(c) for c in circles)
    assert not circles, f"import circles (python tools/import_graph.py --edges shows their edges):\n{shown}"


def test_no_import_up_the_layers():
    upward = GRAPH.upward()
    shown = "\n".join(f"{a} -> {b}" for a, b in upward)
    assert not upward, f"imports from a lower layer to a higher one:\n{shown}"


def test_the_tool_finds_a_circle_and_an_upward_import(tmp_path):
    """The checks above can fail: a small package with one circle and one import up the layers."""
    package = tmp_path / "symlab"
    (package / "graph").mkdir(parents=True)
    (package / "tensor").mkdir()
    for init in (package, package / "graph", package / "tensor"):
        (init / "__init__.py").write_text("")
    (package / "graph" / "a.py").write_text("def f():\n    from symlab.tensor import b\n")  # lazy, upward
    (package / "tensor" / "b.py").write_text("import symlab.tensor.c\n")
    (package / "tensor" / "c.py").write_text("import importlib\nM = 'symlab.tensor.b'\nimportlib.import_module(M)\n")
    (package / "graph" / "hints.py").write_text(  # a type hint naming a higher layer's class: never run
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from symlab.tensor.b import B\n")
    graph = import_graph.read_imports(package)
    assert graph.edges["symlab.graph.hints"] == set()
    assert graph.circles() == [["symlab.tensor.b", "symlab.tensor.c"]]
    assert graph.upward() == [("symlab.graph.a", "symlab.tensor.b")]
    assert graph.lazy["symlab.graph.a"] == {"symlab.tensor.b"}
    assert graph.by_name["symlab.tensor.c"] == {"symlab.tensor.b"}


def _globals_writes(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or getattr(node.func, "id", None) != "globals":
            continue
        lines.append(node.lineno)
    return lines


# Package __init__ modules that load a subpackage on first use (PEP 562 ``__getattr__``) cache the loaded
# attribute in globals(): the name itself is written out in the module's table of lazy names.
LAZY_LOADERS = {"symlab/__init__.py", "symlab/tensor/__init__.py", "symlab/notebook/__init__.py"}


@pytest.mark.parametrize("path", sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "symlab").rglob("*.py")))
def test_names_are_written_out(path):
    if path in LAZY_LOADERS:
        return
    assert not _globals_writes(ROOT / path), f"{path} creates names through globals() at lines {_globals_writes(ROOT / path)}"


def test_import_symlab_stays_light():
    heavy = ("numba", "IPython", "graphviz", "anywidget", "ipywidgets", "scipy.sparse")
    code = f"import sys, symlab; print([m for m in {heavy!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout
