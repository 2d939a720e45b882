"""symlab's import graph, read from the source: its circles, and imports that point up the layers.

Every ``import`` statement of every module counts, those inside functions too (a lazy import is still a
dependency a reader must know of); so does, in a module that imports by name (``importlib.import_module``,
``find_spec``, ``sys.modules``), a string that names a module of the package: the same dependency, only
harder to see. Imports under ``if TYPE_CHECKING:`` do not count: they never run, and only name the types
of annotations (a lower module may name a higher one's class in a type hint). A module's layer is its top-level package (``graph``, ``tensor``, ...);
the layers, lowest first, are :data:`LAYERS`. A module may import its own layer and the layers below it,
never one above; and no module may reach itself again by following imports (a circle), within a layer
or across layers. The display registry (``symlab.graph.display``) is the one way up: an upper layer
registers a function there, and the lower layer calls whatever was registered.

Run it from the repository's root::

    python tools/import_graph.py           # circles and upward imports; exit status 1 if any
    python tools/import_graph.py --edges   # also every edge of each circle (L: inside a function, S: a string)

``tests/whole/test_architecture.py`` asserts that there are none.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

#: The layers, lowest first; a module may import its own layer and those before it. Modules outside a
#: subpackage (``symlab.config``) are named by their module name.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("config", "version"),
    ("graph",),
    ("scalar",),
    ("tensor",),
    ("sparse",),
    ("gradient", "rewriting"),
    ("ifelse",),  # symlab.ifelse (PyTensor's path): tensor ops, their gradients and rewrites
    ("compile",),
    ("scan",),  # symlab.scan (PyTensor's path): the loop op, its gradient, kernel and rewrites (registered upward)
    ("printing", "formats"),
    ("notebook",),
    ("gof", "sandbox", "symlab"),  # the facades: Theano's old module names (gof, sandbox.rng_mrg), and the package's root
)


def layer_of(module: str) -> int:
    """The rank of ``module``'s layer in :data:`LAYERS` (``symlab`` itself is the top)."""
    parts = module.split(".")
    name = parts[1] if len(parts) > 1 else "symlab"
    for rank, names in enumerate(LAYERS):
        if name in names:
            return rank
    raise KeyError(f"module {module!r} is in no layer of LAYERS; add its package there")


@dataclass
class ImportGraph:
    """The modules of a package and the imports between them (``lazy``: those inside a function)."""

    modules: dict[str, Path]
    edges: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    lazy: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    by_name: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def circles(self) -> list[list[str]]:
        """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on_stack: set[str] = set()
        found: list[list[str]] = []
        counter = 0
        for start in sorted(self.modules):
            if start in index:
                continue
            work = [(start, iter(sorted(self.edges[start])))]
            index[start] = low[start] = counter
            counter += 1
            stack.append(start)
            on_stack.add(start)
            while work:
                node, children = work[-1]
                child = next(children, None)
                if child is not None:
                    if child not in index:
                        index[child] = low[child] = counter
                        counter += 1
                        stack.append(child)
                        on_stack.add(child)
                        work.append((child, iter(sorted(self.edges[child]))))
                    elif child in on_stack:
                        low[node] = min(low[node], index[child])
                    continue
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
        return sorted(found, key=lambda c: (-len(c), c))

    def upward(self) -> list[tuple[str, str]]:
        """The imports from a module to a module of a higher layer, as (importer, imported)."""
        return sorted((a, b) for a, targets in self.edges.items() for b in targets if layer_of(b) > layer_of(a))


def read_imports(root: Path) -> ImportGraph:
    """The import graph of the package whose directory is ``root`` (e.g. ``Path("symlab")``)."""
    package = root.name
    modules: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    graph = ImportGraph(modules)
    for module, path in modules.items():
        _read_module(graph, module, path, package)
    return graph


def _owner(modules: dict[str, Path], name: str) -> str | None:
    """The module ``name`` is (or is in: ``symlab.tensor.basic.as_tensor`` is in ``symlab.tensor.basic``)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _targets(statement: ast.stmt, here: str, modules: dict[str, Path]) -> list[str]:
    """The modules an import statement of a module in package ``here`` names."""
    if isinstance(statement, ast.Import):
        return [alias.name for alias in statement.names]
    if isinstance(statement, ast.ImportFrom):
        if statement.level:
            base = here.split(".")[: len(here.split(".")) - statement.level + 1]
            source = ".".join(base + ([statement.module] if statement.module else []))
        else:
            source = statement.module or ""
        return [f"{source}.{a.name}" if f"{source}.{a.name}" in modules else source for a in statement.names]
    return []


def _is_type_checking_block(node: ast.AST) -> bool:
    """``if TYPE_CHECKING:``: imports a type checker reads for annotations, which never run."""
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _read_module(graph: ImportGraph, module: str, path: Path, package: str) -> None:
    """Add the imports of ``module`` (its source at ``path``) to ``graph``."""
    modules = graph.modules
    here = module if path.name == "__init__.py" else module.rpartition(".")[0]
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source, filename=str(path))
    imports_by_name = any(word in source for word in ("import_module", "find_spec", "sys.modules"))
    pending: list[tuple[ast.AST, bool]] = [(tree, False)]
    while pending:
        node, inside_function = pending.pop()
        for child in ast.iter_child_nodes(node):
            if _is_type_checking_block(child):
                pending.extend((c, inside_function) for c in child.orelse)  # annotations only: never run
                continue
            nested = inside_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            for target in _targets(child, here, modules) if isinstance(child, ast.stmt) else ():
                if target == package or target.startswith(package + "."):
                    imported = _owner(modules, target)
                    if imported and imported != module:
                        graph.edges[module].add(imported)
                        if inside_function:
                            graph.lazy[module].add(imported)
            if imports_by_name and isinstance(child, ast.Constant) and child.value in modules:
                if not (module + ".").startswith(child.value + "."):  # not itself or a package it is in
                    graph.edges[module].add(child.value)
                    graph.by_name[module].add(child.value)
            pending.append((child, nested))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default="symlab", help="the package's directory (default: symlab)")
    parser.add_argument("--edges", action="store_true", help="print every edge inside each circle")
    args = parser.parse_args(argv)
    graph = read_imports(Path(args.root))
    circles = graph.circles()
    upward = graph.upward()
    print(f"{len(graph.modules)} modules, {sum(map(len, graph.edges.values()))} imports between them")
    print(f"{len(circles)} circles" + (":" if circles else ""))
    for circle in circles:
        print(f"  {len(circle)} modules: {', '.join(circle)}")
        if args.edges:
            members = set(circle)
            for module in circle:
                inside = sorted(graph.edges[module] & members)
                shown = [("S:" if t in graph.by_name[module] else "L:" if t in graph.lazy[module] else "") + t
                         for t in inside]
                print(f"    {module} -> {', '.join(shown)}")
    print(f"{len(upward)} imports up the layers" + (":" if upward else ""))
    for importer, imported in upward:
        lazy = (" (named by a string)" if imported in graph.by_name[importer]
                else " (inside a function)" if imported in graph.lazy[importer] else "")
        print(f"  {importer} -> {imported}{lazy}")
    return 1 if circles or upward else 0


if __name__ == "__main__":
    sys.exit(main())
