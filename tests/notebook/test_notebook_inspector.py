"""ClientsInspector through its Python model (no browser): clients, live redraws, what changed, lifetime, safety."""

import gc
import weakref

import numpy as np
import pytest
from IPython.core.interactiveshell import InteractiveShell

import symlab
import symlab.tensor as st
from symlab.graph.changes import Feature
from symlab.graph.fg import FunctionGraph
from symlab.notebook.inspector import ClientsInspector
from symlab.printing import debugprint
from symlab.rewriting.db import rewrite_fgraph

HOSTILE = '<img src=x onerror="window.pwned=1">'


def seed_graph():
    x, y = st.dvector("x"), st.dvector("y")
    return FunctionGraph([x, y], [st.exp(x) * y + x])


def node_with(fg, op_name):
    return next(n for n in fg.apply_nodes if op_name in str(n.op))


def click(view, key):
    view._on_browser_message(view, {"type": "select", "key": key}, [])


@pytest.fixture
def shell():
    """A real IPython shell: cells run through it fire post_run_cell as in a kernel."""
    InteractiveShell.clear_instance()
    ip = InteractiveShell.instance()
    yield ip
    InteractiveShell.clear_instance()


def our_hooks(ip):
    return [cb for cb in ip.events.callbacks["post_run_cell"] if getattr(cb, "__name__", "") == "after_cell"]


# -- clients ---------------------------------------------------------------------------------------------------
def test_a_selected_variable_lists_its_clients_lit_and_clickable_as_seed_000_writes_them():
    fg = seed_graph()
    inspector = ClientsInspector(fg)
    x = fg.inputs[0]
    inspector.select("x")  # by name, as the search box does
    assert inspector.selected is x and inspector.clients == fg.clients[x] and len(inspector.clients) == 2
    for node, i in inspector.clients:
        assert node.inputs[i] is x  # what a client means
    lit = {k for k, classes in inspector.marks.items() if "client" in classes}
    assert lit >= {fg.key(node) for node, _ in fg.clients[x]}
    # walk on: click a client in the panel, then that node's own clients are shown
    row = next(r for r in inspector.panel["rows"] if r["label"] == "clients")
    mul = node_with(fg, "mul")
    click(inspector, next(item["key"] for item in row["items"] if "exp" in item["text"]))
    exp_node = node_with(fg, "exp")
    assert inspector.selected is exp_node and inspector.clients == [(mul, 0)]
    # the output's client is ('output', 0)
    inspector.select(fg.outputs[0])
    assert inspector.clients == [("output", 0)] and inspector.details["clients"] == ["('output', 0)"]
    assert inspector.summary().endswith("with 1 client, following the graph (version 0)")


def test_unused_variables_are_marked_and_said_to_be_unused():
    x, y = st.dvector("x"), st.dvector("y")
    fg = FunctionGraph([x, y], [st.exp(x)])
    inspector = fg.inspect(select="y")
    y_in = fg.inputs[1]
    assert inspector.unused == [y_in] and inspector.clients == []
    assert "unused" in inspector.marks[fg.key(y_in)] and "unused" not in inspector.marks.get(fg.key(fg.inputs[0]), [])
    assert inspector.details["clients"] == "[] (unused)"
    assert "(unused: no clients)" in repr(inspector) and "unused (no clients): `y`" in inspector.markdown()


# -- live: changes from other cells ----------------------------------------------------------------------------
def test_after_a_replace_the_clients_the_picture_and_what_changed_follow():
    fg = seed_graph()
    x = fg.inputs[0]
    inspector = ClientsInspector(fg, select=x)
    exp_node = node_with(fg, "exp")
    drawn = inspector.drawn
    fg.replace(exp_node.outputs[0], st.sin(x), reason="exp to sin")
    # a read redraws first: the clients are the graph's as it is now
    assert inspector.clients == fg.clients[x] and inspector.drawn == drawn + 1
    sin_node = node_with(fg, "sin")
    changes = inspector.changes
    assert changes.versions == (0, 1) and changes.reasons == (("exp to sin", 1),) and changes.count == 1
    assert changes.new_clients == ((x, (sin_node, 0)),)
    assert changes.lost_clients == ((x, (exp_node, 0)),)
    assert changes.nodes_added == (sin_node,) and changes.nodes_left == (exp_node,)
    assert inspector.selected is x  # the selection stays: its variable is still there
    assert "new" in inspector.marks[fg.key(sin_node)]
    panel = inspector.changes_panel
    assert panel["title"] == "since the last picture: version 0 -> 1: 1 change (exp to sin)"
    assert [r["kind"] for r in panel["rows"]] == ["new", "lost", "added", "left"]
    assert panel["rows"][0]["key"] == fg.key(sin_node) and "key" not in panel["rows"][3]  # a node that left: no link
    assert any("sin" in str(n.obj.op) for n in inspector.model.nodes.values() if n.kind == "apply")
    assert not inspector.refresh() and inspector.drawn == drawn + 1  # nothing new: no redraw


def test_the_selection_is_kept_while_its_variable_is_there_and_the_view_says_when_it_left():
    fg = seed_graph()
    inspector = ClientsInspector(fg)
    exp_out = node_with(fg, "exp").outputs[0]
    inspector.select(exp_out)
    fg.replace(exp_out, st.cos(fg.inputs[0]))
    inspector.refresh()
    assert inspector.selected is None and inspector.clients is None
    assert "the selected variable Elemwise{exp,no_inplace}.0 left it" in inspector.notice


def test_after_a_rewrite_the_inspector_shows_the_rewritten_graph_and_the_rules_as_reasons():
    x = st.dvector("x")
    fg = FunctionGraph([x], [(x * 1.0 + 0.0) * st.exp(x)])
    inspector = ClientsInspector(fg, select="x")
    rewrite_fgraph(fg)
    assert inspector.clients == fg.clients[fg.inputs[0]]
    changes = inspector.changes
    assert changes.count == fg.version >= 2 and all(isinstance(reason, str) for reason, _ in changes.reasons)
    assert {n for n in changes.nodes_added} == {n for n in fg.apply_nodes if n in changes.nodes_added}
    assert set(changes.nodes_added) <= fg.apply_nodes and not set(changes.nodes_left) & fg.apply_nodes
    f = symlab.function([x], (x * 1.0 + 0.0) * st.exp(x), mode="NUMPY")
    values = np.array([0.5, -1.0])
    np.testing.assert_allclose(inspector.fgraph.outputs[0].eval({fg.inputs[0]: values}), f(values))


def test_remove_output_from_another_cell_renumbers_the_output_clients():
    x = st.dvector("x")
    fg = FunctionGraph([x], [st.exp(x), st.sin(x), x * 2.0])
    inspector = fg.inspect()
    sin_out, double = fg.outputs[1], fg.outputs[2]
    fg.remove_output(0, reason="not needed")
    changes = inspector.changes
    assert (sin_out, ("output", 0)) in changes.new_clients and (sin_out, ("output", 1)) in changes.lost_clients
    assert (double, ("output", 1)) in changes.new_clients
    assert [str(n.op) for n in changes.nodes_left] == ["Elemwise{exp,no_inplace}"]
    inspector.select(sin_out)
    assert inspector.clients == [("output", 0)]


def test_a_refused_change_shows_nothing():
    fg = seed_graph()
    inspector = ClientsInspector(fg, select="x")
    drawn, changes, svg = inspector.drawn, inspector.changes, inspector.svg
    x = fg.inputs[0]
    with pytest.raises(TypeError):
        fg.replace(x, st.dmatrix("m"))  # the wrong type: refused, the graph as it was
    with pytest.raises(RuntimeError):
        with fg.change("half"):
            fg.replace(node_with(fg, "exp").outputs[0], st.sin(x))
            raise RuntimeError("refused half-way")
    assert not inspector.refresh() and inspector.drawn == drawn and inspector.svg == svg
    assert inspector.changes is changes and not changes
    assert inspector.changes_panel == {"title": "", "rows": []}


def test_one_redraw_per_cell_however_many_changes_it_makes(shell):
    fg = seed_graph()
    inspector = ClientsInspector(fg, select="x")
    shell.user_ns.update(fg=fg, st=st)
    drawn = inspector.drawn
    shell.run_cell("x = fg.inputs[0]\n"
                   "e = [n for n in fg.apply_nodes if 'exp' in str(n.op)][0].outputs[0]\n"
                   "fg.replace(e, st.sin(x), reason='one')\n"
                   "s = [n for n in fg.apply_nodes if 'sin' in str(n.op)][0].outputs[0]\n"
                   "fg.replace(s, st.cos(x), reason='two')\n"
                   "c = [n for n in fg.apply_nodes if 'cos' in str(n.op)][0].outputs[0]\n"
                   "fg.replace(c, st.tanh(x), reason='three')\n")
    # redrawn once, after the cell, without being read
    assert inspector.drawn == drawn + 1 and inspector._changes.count == 3
    assert [r for r, _ in inspector._changes.reasons] == ["one", "three", "two"]
    assert not our_hooks(shell)  # the one-shot hook removed itself
    shell.run_cell("1 + 1")  # a cell that changes nothing: no redraw
    assert inspector.drawn == drawn + 1
    shell.run_cell("from symlab.rewriting.db import rewrite_fgraph\n_ = rewrite_fgraph(fg)")
    assert inspector.drawn == drawn + 2


def test_it_never_draws_while_a_change_is_open():
    fg = seed_graph()
    inspector = ClientsInspector(fg)
    seen = []

    class Impatient(Feature):
        def on_change_input(self, fgraph, node, i, old, new, reason):
            seen.append((fgraph.changing, inspector.refresh()))

    fg.attach_feature(Impatient())
    drawn = inspector.drawn
    fg.replace(node_with(fg, "exp").outputs[0], st.sin(fg.inputs[0]))
    assert seen and all(changing and not redrawn for changing, redrawn in seen)
    assert inspector.drawn == drawn  # the watcher notes the change; nothing is drawn until it is read
    assert inspector.refresh() and inspector.drawn == drawn + 1


# -- lifetime ---------------------------------------------------------------------------------------------------
def test_close_detaches_and_stops_following(shell):
    fg = seed_graph()
    inspector = ClientsInspector(fg, select="x")
    assert len(fg.features) == 1
    fg.replace(node_with(fg, "exp").outputs[0], st.sin(fg.inputs[0]))  # a pending redraw: the hook is set
    assert len(our_hooks(shell)) == 1
    inspector.close()
    assert fg.features == [] and not our_hooks(shell) and not inspector.live
    drawn = inspector.drawn
    fg.replace(node_with(fg, "sin").outputs[0], st.cos(fg.inputs[0]))
    shell.run_cell("1")
    assert not inspector.refresh() and inspector.drawn == drawn
    assert repr(inspector).endswith(", closed")
    ref = weakref.ref(inspector)
    del inspector
    gc.collect()
    assert ref() is None  # nothing (graph, shell) keeps a closed inspector alive


def test_the_graph_holds_the_inspector_weakly(shell):
    import comm
    from ipywidgets.widgets import widget as ipywidget

    fg = seed_graph()
    inspector = ClientsInspector(fg)
    fg.replace(node_with(fg, "exp").outputs[0], st.sin(fg.inputs[0]))
    assert len(our_hooks(shell)) == 1
    ref = weakref.ref(inspector)
    # The widget registry and the comm manager keep a widget until it is closed; without them (as when a
    # kernel lets a widget go) only the graph and the shell could keep it, and they hold it weakly.
    ipywidget._instances.pop(inspector.model_id)
    comm.get_comm_manager().unregister_comm(inspector.comm)
    inspector.comm._closed = True  # what the front end closing the comm leaves
    del inspector
    gc.collect()
    assert ref() is None and fg.features == []  # the weakly held feature went with it
    shell.run_cell("2")  # the pending hook finds no inspector, and removes itself
    assert not our_hooks(shell)
    fg.replace(node_with(fg, "sin").outputs[0], st.cos(fg.inputs[0]))  # no callback left to call
    assert fg.features == [] and not our_hooks(shell)


# -- search, errors, displays ------------------------------------------------------------------------------------
def test_search_finds_variables_by_name_and_enter_selects_the_first():
    a, b, ab = st.dscalar("alpha"), st.dscalar("beta"), st.dscalar("alphabet")
    fg = FunctionGraph([a, b, ab], [a * b + ab])
    inspector = ClientsInspector(fg)
    assert inspector.search("ALPHA") == [fg.inputs[0], fg.inputs[2]]
    assert [m["text"] for m in inspector.matches] == ["alpha (input)", "alphabet (input)"]
    inspector._on_browser_message(inspector, {"type": "search", "text": "bet", "pick": True}, [])
    assert inspector.selected is fg.inputs[1]  # beta, first in key order
    inspector.search("nothing like it")
    assert inspector.matches == [] and "no variable named like 'nothing like it'" in inspector.notice


def test_bad_input_gets_a_clear_error_and_changes_nothing():
    x = st.dvector("x")
    with pytest.raises(TypeError, match="ClientsInspector.*FunctionGraph.*Variable"):
        ClientsInspector(x * 2)
    x1, x2 = st.dvector("twin"), st.dvector("twin")
    fg = FunctionGraph([x1, x2], [x1 + x2])
    before = debugprint(fg, file="str")
    inspector = ClientsInspector(fg)
    with pytest.raises(ValueError, match=r"2 variables are named 'twin' \(keys v0, v1\)"):
        inspector.select("twin")
    with pytest.raises(ValueError, match="no variable of this graph is named 'nope'"):
        inspector.select("nope")
    with pytest.raises(TypeError, match="text must be a str, received int"):
        inspector.search(3)
    inspector.select("v1")  # a key still works
    assert inspector.selected is fg.inputs[1]
    assert debugprint(fg, file="str") == before and fg.version == 0  # reading never changes the graph


def test_a_compiled_function_is_inspected_through_its_optimized_graph():
    x = st.dvector("x")
    f = symlab.function([x], st.exp(x) * 2.0 + x, mode="NUMPY")
    inspector = f.inspect(select="x")
    assert inspector.fgraph is f.maker.fgraph and inspector.clients == f.maker.fgraph.clients[inspector.selected]
    assert repr(inspector).startswith("ClientsInspector of a compiled Function: 1 node, selected input x")
    np.testing.assert_allclose(f(np.array([0.0, 1.0])), np.exp([0.0, 1.0]) * 2 + [0.0, 1.0])


def test_hostile_names_are_text_everywhere():
    x = st.dvector(HOSTILE)
    fg = FunctionGraph([x], [st.exp(x)])
    inspector = ClientsInspector(fg, select=HOSTILE)
    fg.replace(fg.outputs[0], st.sin(fg.inputs[0]))
    inspector.refresh()
    texts = [r["text"] for r in inspector.changes_panel["rows"]]
    assert any(HOSTILE in t for t in texts)  # literal: the browser sets it with textContent
    markdown = inspector.markdown()
    assert HOSTILE in markdown
    outside_code = markdown.split("`")[::2]  # the text outside code spans (inside them HTML is text)
    assert not any("<" in part for part in outside_code)
    assert HOSTILE not in inspector.svg  # escaped in the picture
    assert "&lt;img src=x onerror=&quot;window.pwned=1&quot;&gt;" in inspector.svg


def test_repr_and_markdown_are_deterministic():
    texts = []
    for _ in range(2):
        fg = seed_graph()
        inspector = ClientsInspector(fg, select="x")
        fg.replace(node_with(fg, "exp").outputs[0], st.sin(fg.inputs[0]), reason="demo")
        inspector.refresh()
        texts.append((repr(inspector), inspector.markdown()))
        inspector.close()
    assert texts[0] == texts[1]
    assert texts[0][0] == ("ClientsInspector of a FunctionGraph: 3 nodes, selected input x with 2 clients, "
                           "following the graph (version 1)")
    assert "- new: `x: new client (Elemwise{sin,no_inplace}(x), 0)`" in texts[0][1]


def test_a_click_sends_a_key_and_select_takes_a_name_first():
    first, second = st.dvector("v1"), st.dvector("b")  # a name that is also the key of another variable
    fg = FunctionGraph([first, second], [first * second])
    inspector = ClientsInspector(fg)
    assert fg.key(fg.inputs[1]) == "v1"
    click(inspector, "v1")  # the browser sends keys
    assert inspector.selected is fg.inputs[1]
    inspector.select("v1")  # Python's select reads a name first
    assert inspector.selected is fg.inputs[0]
