"""A view lives as long as a cell holds it: re-running, deleting or replacing a cell leaks no widget.

The cells run in a real IPython shell (no kernel: ipywidgets uses its dummy comm), given cell ids as
JupyterLab sends them (``cellId``, which ipykernel passes to ``run_cell`` as ``cell_id``). The counts are
ipywidgets' registry of open widgets and the views still alive after ``gc.collect()``.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("anywidget")
pytest.importorskip("IPython")

import ipywidgets  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402

from symlab.notebook import lifetime  # noqa: E402
from symlab.notebook.widget import ViewWidget  # noqa: E402

SETUP = ("import symlab, symlab.tensor as st\n"
         "from symlab.graph.fg import FunctionGraph\n"
         "x, y = st.dvector('x'), st.dvector('y')\n"
         "fg = FunctionGraph([x, y], [st.exp(x) * y + x])\n")


def open_widgets() -> int:
    return len(ipywidgets.widgets.widget._instances)


def views_alive() -> int:
    gc.collect()
    return sum(isinstance(o, ViewWidget) for o in gc.get_objects())


@pytest.fixture
def shell() -> Iterator[Any]:
    """A fresh IPython shell (what a kernel runs cells in), with the output history on."""
    InteractiveShell.clear_instance()
    ip = InteractiveShell.instance(cache_size=1000)
    before = open_widgets()
    try:
        run(ip, SETUP, None)
        yield ip
    finally:
        for widget in list(ipywidgets.widgets.widget._instances.values()):
            if isinstance(widget, ViewWidget):
                widget.close()
        InteractiveShell.clear_instance()
        gc.collect()
        assert open_widgets() <= before


def run(ip: Any, code: str, cell_id: str | None, deleted: tuple[str, ...] = ()) -> Any:
    """Run ``code`` as a notebook cell with id ``cell_id`` (``deleted``: cells deleted since the last run)."""
    meta = {"cellId": cell_id, "deletedCells": list(deleted)} if cell_id else None
    result = ip.run_cell(code, store_history=True, cell_id=cell_id, cell_meta=meta)
    result.raise_error()
    return result.result


def test_fifty_re_runs_of_a_view_cell_leave_one_view(shell):
    first = run(shell, "symlab.view(fg)", "cell-1")
    assert isinstance(first, ViewWidget) and first.comm is not None
    count, alive = open_widgets(), views_alive()
    gone = weakref.ref(first)
    del first
    for _ in range(50):
        last = run(shell, "symlab.view(fg)", "cell-1")
    # the widgets and the views alive stay where the first run left them: one view (and its Layout) open
    assert open_widgets() == count and views_alive() == alive
    assert gone() is None  # the first view was closed and collected: nothing (Out, _, the comm) keeps it
    assert last.comm is not None  # the view on the page is open
    assert [v for v in shell.user_ns["Out"].values() if isinstance(v, ViewWidget)] == [last]


def test_a_view_shown_by_another_cell_stays_open_until_no_cell_shows_it(shell):
    view = run(shell, "v = symlab.view(fg); v", "make")
    run(shell, "v", "show")  # a second cell displays the same view
    run(shell, "v = symlab.view(fg); v", "make")  # the first cell is run again: a new view there
    assert view.comm is not None  # still on the page, in the second cell's output
    run(shell, "1 + 1", "show")  # the second cell now shows something else
    assert view.comm is None


def test_a_view_kept_by_a_name_stays_open(shell):
    view = run(shell, "v = symlab.view(fg); v", "make")
    run(shell, "kept = v", "keep")
    run(shell, "v = symlab.view(fg); v", "make")
    assert view.comm is not None  # `kept` refers to it
    run(shell, "kept = None", "keep")
    assert view.comm is None  # no name and no cell holds it any more: closed after that run


def test_a_view_inside_an_open_box_stays_open(shell):
    view = run(shell, "v = symlab.view(fg); v", "make")
    run(shell, "import ipywidgets\nbox = ipywidgets.HBox([v]); box", "box")
    run(shell, "v = symlab.view(fg); v", "make")
    assert view.comm is not None  # shown inside the box of another cell
    run(shell, "box.close(); box.layout.close(); box = None", "box")
    assert view.comm is None


def test_a_deleted_cell_closes_its_views(shell):
    view = run(shell, "symlab.view(fg)", "doomed")
    run(shell, "1", "other", deleted=("doomed",))
    assert view.comm is None
    assert all(v is not view for v in shell.user_ns["Out"].values())


def test_views_of_different_cells_and_a_re_run_without_a_display(shell):
    a = run(shell, "symlab.view(fg)", "a")
    b = run(shell, "symlab.view(fg)", "b")
    run(shell, "print('no view now')", "b")
    assert a.comm is not None and b.comm is None


def test_without_cell_ids_nothing_is_closed(shell):
    """A terminal or a client that sends no cell id: views are closed by ``view.close()`` only."""
    first = run(shell, "symlab.view(fg)", None)
    run(shell, "symlab.view(fg)", None)
    assert first.comm is not None
    first.close()
    assert first.comm is None and all(v is not first for v in shell.user_ns["Out"].values())


def test_closing_a_view_drops_it_from_the_output_history(shell):
    view = run(shell, "symlab.view(fg)", "c")
    n = shell.execution_count - 1
    assert shell.user_ns["Out"][n] is view and shell.user_ns["_"] is view
    ref = weakref.ref(view)
    view.close()
    del view
    gc.collect()
    assert n not in shell.user_ns["Out"] and f"_{n}" not in shell.user_ns and shell.user_ns["_"] == ""
    assert ref() is None


def test_an_inspector_waiting_to_redraw_is_closed_cleanly_when_its_cell_is_run_again(shell, capsys):
    """The inspector's after-the-cell redraw hook goes with it; IPython reports no error in a callback."""
    code = ("i = fg.inspect(); i.select('x')\n"
            "fg.replace(i.clients[0][0].outputs[0], st.sin(fg.inputs[0]), reason='by hand')\n"
            "i")
    first = run(shell, code, "insp")
    assert first.live and first._hook is None  # it redrew after the cell
    second = run(shell, "i = fg.inspect(); i", "insp")
    assert not first.live and first.comm is None and second.live
    assert "Error in callback" not in capsys.readouterr().err
    second.close()


def test_the_table_holds_views_weakly():
    table = lifetime.CellViews()

    class View:
        closed = 0

        def close(self) -> None:
            self.closed += 1

    table.cell_started("c")
    view = View()
    table.hold(view)
    table.cell_finished()
    assert table.count() == 1
    ref = weakref.ref(view)
    del view
    gc.collect()
    assert ref() is None and table.count() == 0
