"""How long a view lives in a kernel: a cell run again closes the views its last run made or showed.

A widget lives in the kernel until it is closed: ipywidgets keeps every open widget in its registry,
the comm manager keeps its comm, and IPython's output history (``Out``, ``_``, ``_3``) keeps the value a
cell displayed. Nothing closes a view when the cell that drew it is run again and its output replaced,
so each re-run of ``symlab.view(...)`` used to leave the old view (and its ``Layout``) alive, pictures
and graph included: about 1.3 MB a run for a 400-node view (measured over 50 runs).

This module follows, for each view, the cells that *hold* it: the cell whose run created it and every
cell whose output displays it. JupyterLab and Notebook 7 send the id of the cell being run
(``cellId`` in the execute request's metadata; IPython passes it to its ``pre_run_cell`` event as
``info.cell_id``) and the ids of the cells deleted since the last run (``deletedCells``). When a cell is
run again or deleted, it stops holding the views of its previous run; after the run, a view that no cell
holds any more and that no name of the user's namespace refers to is closed (``widget.close()``), and
the closed widget is dropped from IPython's output history. A view the new run displays again, a view
still shown by another cell's output, a view kept in a variable (``old = view``) and a view inside an open
container widget (``HBox([view, ...])``) stay open.
Where no cell id is sent (a terminal, a kernel client that does not send it), nothing is closed:
``view.close()`` is the way, as for any widget.

>>> cells = CellViews()                                    # what IPython's events do, without a kernel
>>> class View:
...     closed = False
...     def close(self): self.closed = True
>>> cells.cell_started("cell-1"); first = View(); cells.hold(first); cells.cell_finished()
>>> cells.cell_started("cell-1"); second = View(); cells.hold(second); cells.cell_finished()
>>> first.closed, second.closed, cells.count()
(True, False, 1)
"""

from __future__ import annotations

import re
import sys
import weakref
from typing import Any

__all__ = ["CellViews", "cell_views", "forget_output", "hold"]

#: Names IPython binds to past outputs (``_``, ``__``, ``___``, ``_12``): not the user's own references.
_HISTORY_NAME = re.compile(r"_+|_\d+")


def _ipython_shell() -> Any:
    """The running IPython shell, if IPython is loaded and running (never imported here)."""
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None else None


def _running_cell_id(shell: Any) -> str | None:
    """The id of the cell the shell is running now, if the front end sent one (IPython keeps the running
    cell's ``ExecutionInfo`` on its display hook; ipykernel also has the execute request's ``cellId``)."""
    info = getattr(getattr(getattr(shell, "displayhook", None), "exec_result", None), "info", None)
    cell_id = getattr(info, "cell_id", None)
    if cell_id is None:
        kernel = getattr(shell, "kernel", None)
        try:
            parent = kernel.get_parent("shell") if kernel is not None else None
        except Exception:  # an older ipykernel, or not a kernel at all
            parent = None
        cell_id = ((parent or {}).get("metadata") or {}).get("cellId")
    return cell_id if isinstance(cell_id, str) and cell_id else None


class CellViews:
    """The views each cell's last run made or displayed, and the cells that hold each view.

    ``cell_started(cell_id, deleted)`` and ``cell_finished()`` bracket a run (IPython's ``pre_run_cell`` and
    ``post_run_cell`` events call them); ``hold(view)`` notes that the running cell made or displays
    ``view``. Views are held weakly: the table never keeps one alive.
    """

    def __init__(self, shell: Any = None) -> None:
        self.shell = shell
        #: The cell running now (``None`` between runs, or when the front end sent no id).
        self.current: str | None = None
        self._runs: dict[str, weakref.WeakSet[Any]] = {}
        self._holders: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
        #: Views held by no cell but still named in the user's namespace: checked again after every run.
        self._orphans: weakref.WeakSet[Any] = weakref.WeakSet()
        self._released: list[Any] = []

    # -- a cell's run ---------------------------------------------------------------------------------
    def cell_started(self, cell_id: str | None, deleted: Any = ()) -> None:
        """A run of ``cell_id`` begins: the cells in ``deleted`` and this cell's previous run let go of their views."""
        self.current = cell_id if isinstance(cell_id, str) and cell_id else None
        for gone in deleted or ():
            if isinstance(gone, str):
                self._released.extend(self._let_go(gone, self._runs.pop(gone, ())))
        if self.current is not None:
            self._released.extend(self._runs.pop(self.current, ()))
            self._runs[self.current] = weakref.WeakSet()

    def cell_finished(self) -> None:
        """The run ends: close every view no cell holds and no name refers to."""
        cell, released, self._released = self.current, self._released, []
        self.current = None
        now = self._runs.get(cell, ()) if cell is not None else ()
        for view in released:
            if view not in now:
                self._holders.get(view, set()).discard(cell)
            if not self._holders.get(view):
                self._orphans.add(view)
        named = self._named_values() | _children_of_open_widgets()
        for view in list(self._orphans):
            if self._holders.get(view):  # displayed again by some cell
                self._orphans.discard(view)
            elif id(view) not in named:
                self._orphans.discard(view)
                self._holders.pop(view, None)
                try:
                    view.close()
                except Exception as err:  # a view that fails to close must not break the user's cell
                    print(f"symlab: closing a view of a re-run cell failed: {err!r}", file=sys.stderr)

    def hold(self, view: Any) -> None:
        """The running cell made or displays ``view`` (nothing happens between runs or without a cell id)."""
        if self.current is None:
            return
        self._runs.setdefault(self.current, weakref.WeakSet()).add(view)
        self._holders.setdefault(view, set()).add(self.current)
        self._orphans.discard(view)

    def forget(self, view: Any) -> None:
        """``view`` was closed: no cell holds it any more."""
        self._holders.pop(view, None)
        self._orphans.discard(view)
        for run in self._runs.values():
            run.discard(view)

    def count(self) -> int:
        """How many views some cell (or some name) still holds."""
        return len(self._holders)

    # -- helpers ----------------------------------------------------------------------------------------
    def _let_go(self, cell: str, views: Any) -> list[Any]:
        views = list(views)
        for view in views:
            self._holders.get(view, set()).discard(cell)
        return views

    def _named_values(self) -> set[int]:
        namespace = getattr(self.shell, "user_ns", None) or {}
        return {id(value) for name, value in list(namespace.items()) if not _HISTORY_NAME.fullmatch(name)}


_tables: weakref.WeakKeyDictionary[Any, CellViews] = weakref.WeakKeyDictionary()


def cell_views(shell: Any = None) -> CellViews | None:
    """The table of ``shell`` (the running IPython shell by default), its events hooked up; ``None`` outside IPython."""
    shell = shell if shell is not None else _ipython_shell()
    if shell is None or not hasattr(shell, "events"):
        return None
    table = _tables.get(shell)
    if table is None:
        table = _tables[shell] = CellViews(shell)

        def pre_run_cell(info: Any) -> None:
            table.cell_started(getattr(info, "cell_id", None), (getattr(info, "cell_meta", None) or {}).get("deletedCells"))

        def post_run_cell(result: Any) -> None:
            table.cell_finished()

        shell.events.register("pre_run_cell", pre_run_cell)
        shell.events.register("post_run_cell", post_run_cell)
        # the first view is made inside a run whose pre_run_cell event has already fired
        table.cell_started(_running_cell_id(shell))
    return table


def hold(view: Any) -> None:
    """Note that the running cell made or displays ``view`` (see the module documentation)."""
    table = cell_views()
    if table is not None:
        table.hold(view)


def forget_output(view: Any, model_id: str | None = None) -> None:
    """Drop a closed ``view`` from the running shell's table and output history (``Out[n]``, ``_n``, ``_``, ``__``,
    ``___``, the last result, and the display bundles IPython logs, found by the widget's ``model_id``).

    A closed widget is a husk that still holds its pictures and its graph; the history is the last thing
    that kept a re-run cell's view alive. IPython also logs every result's display bundle (for
    ``%notebook``): a view's bundle carries its pictures as PNG, hundreds of KB for a large graph.
    """
    shell = _ipython_shell()
    if shell is None:
        return
    table = _tables.get(shell)
    if table is not None:
        table.forget(view)
    logged = getattr(getattr(shell, "history_manager", None), "outputs", None)
    if model_id and isinstance(logged, dict):
        for n, outputs in list(logged.items()):
            kept = [out for out in outputs if _model_id_of(getattr(out, "bundle", None)) != model_id]
            if len(kept) < len(outputs):
                if kept:
                    outputs[:] = kept
                else:  # IPython reads the last entry of a count's list: no empty lists
                    del logged[n]
    namespace = getattr(shell, "user_ns", None)
    if not isinstance(namespace, dict):
        return
    outputs = namespace.get("_oh")
    if isinstance(outputs, dict):
        for n in [n for n, value in outputs.items() if value is view]:
            del outputs[n]
    hook = getattr(shell, "displayhook", None)
    for name in ("_", "__", "___"):  # the display hook keeps its own `_`, `__`, `___` and pushes them again
        if getattr(hook, name, None) is view:
            setattr(hook, name, "")
    last = getattr(shell, "last_execution_result", None)
    if getattr(last, "result", None) is view:
        last.result = None
    # IPython binds `_`, `__`, `___` and `_<n>` in the user's namespace and in its hidden copy of it
    for names in (namespace, getattr(shell, "user_ns_hidden", None)):
        if not isinstance(names, dict):
            continue
        for name in [name for name, value in names.items() if value is view and _HISTORY_NAME.fullmatch(name)]:
            if name.strip("_"):
                del names[name]
            else:
                names[name] = ""


def _children_of_open_widgets() -> set[int]:
    """The ids of the widgets that an open container widget (``HBox([view, ...])``) holds as children."""
    registry = getattr(sys.modules.get("ipywidgets.widgets.widget"), "_instances", None) or {}
    return {id(child) for widget in list(registry.values()) for child in (getattr(widget, "children", None) or ())}


def _model_id_of(bundle: Any) -> str | None:
    """The widget model id a display bundle shows, if it shows a widget."""
    view = bundle.get("application/vnd.jupyter.widget-view+json") if isinstance(bundle, dict) else None
    return view.get("model_id") if isinstance(view, dict) else None
