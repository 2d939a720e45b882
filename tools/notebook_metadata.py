"""Make the notebooks' metadata what JupyterLab would write, so that they open unmodified.

JupyterLab and Notebook 7 write the kernel's ``kernelspec`` (its display name) and ``language_info`` into
a notebook's metadata when its kernel starts; a notebook whose stored values differ opens marked
modified. This sets both to what the ``python3`` kernel of this environment reports (ipykernel's
``Python 3 (ipykernel)``).

It also drops the widget state that nbclient stores (``metadata.widgets``): with the project's
``saveState`` setting (jupyter/README.md) JupyterLab marks a notebook modified as it restores each stored
widget model, and a committed notebook opens untrusted, where widgets are not shown anyway (their
Markdown and PNG fallback is). A notebook saved from JupyterLab after a run gets its state back.
``--keep-widget-state`` keeps it. Everything else (cells, outputs) stays byte for byte as it was: a
notebook is read and written with nbformat, whose output a committed notebook already is.

    .venv/bin/python tools/notebook_metadata.py notebooks/*.ipynb          # fix them
    .venv/bin/python tools/notebook_metadata.py --check notebooks/*.ipynb  # exit 1 if one differs
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

KERNEL_NAME = "python3"


def kernel_metadata(kernel_name: str = KERNEL_NAME) -> dict[str, Any]:
    """The ``kernelspec`` and ``language_info`` the installed kernel ``kernel_name`` gives a notebook."""
    from ipykernel.ipkernel import IPythonKernel
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec(kernel_name)
    return {
        "kernelspec": {"display_name": spec.display_name, "language": spec.language, "name": kernel_name},
        "language_info": dict(IPythonKernel.language_info),
    }


def fix(path: Path, wanted: dict[str, Any], check: bool = False, keep_widget_state: bool = False) -> bool:
    """Set ``path``'s kernel metadata to ``wanted`` and drop its widget state (only report it with ``check``);
    True if the notebook differed."""
    import nbformat

    nb = nbformat.read(path, as_version=nbformat.NO_CONVERT)
    drop = [] if keep_widget_state else [key for key in ("widgets",) if key in nb.metadata]
    if all(nb.metadata.get(key) == value for key, value in wanted.items()) and not drop:
        return False
    if not check:
        for key, value in wanted.items():
            nb.metadata[key] = value
        for key in drop:
            del nb.metadata[key]
        path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a notebook differs")
    parser.add_argument("--keep-widget-state", action="store_true", help="keep the widget state nbclient stored")
    args = parser.parse_args(argv)
    wanted = kernel_metadata()
    changed = [path for path in args.notebooks
               if fix(path, wanted, check=args.check, keep_widget_state=args.keep_widget_state)]
    verb = "differs from" if args.check else "now matches"
    for path in changed:
        print(f"{path}: metadata {verb} what JupyterLab writes (kernel {wanted['kernelspec']['display_name']!r}, "
              f"{'widget state kept' if args.keep_widget_state else 'no widget state'})")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
