"""The views at real size (issue 30): folding by meaning to a budget, expand/collapse, search, keys, focus, speed.

Every graph here is one of ``tests/real_size.py``'s: the MLP gradient a learner builds first (93 nodes
unoptimized, 44 compiled) and a 1,000-node layered graph. Pictures are checked in the SVG Graphviz drew
(nodes by their ``id`` and ``class``), not only in the traits.
"""

import re
import time
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import real_size

import symlab
import symlab.tensor as st
from symlab.graph.fg import FunctionGraph
from symlab.notebook.folds import VIEW_MAX_NODES
from symlab.notebook.graph_view import GraphView
from symlab.notebook.inspector import ClientsInspector
from symlab.notebook.values import ValuesView
from symlab.printing.folding import toposort
from symlab.printing.grouping import is_backward
from symlab.printing.model import build_part
from symlab.printing.render import can_render

needs_dot = pytest.mark.skipif(not can_render(), reason="Graphviz dot is not installed")
SVG = "{http://www.w3.org/2000/svg}"


def drawn(svg):
    """``{id: (kind, text)}`` of the nodes Graphviz drew (``<g id=... class="node <kind> ...">``)."""
    root = ET.fromstring(svg)
    nodes = {}
    for g in root.iter(f"{SVG}g"):
        classes = (g.get("class") or "").split()
        if classes[:1] == ["node"]:
            text = " ".join(t.text or "" for t in g.iter(f"{SVG}text"))
            nodes[g.get("id")] = (classes[1], text)
    return nodes


def dashed_edges(svg):
    """The ids of the drawn edges whose line is dashed."""
    root = ET.fromstring(svg)
    found = set()
    for g in root.iter(f"{SVG}g"):
        if (g.get("class") or "").split()[:1] == ["edge"]:
            if any(p.get("stroke-dasharray") for p in g.iter(f"{SVG}path")):
                found.add(g.get("id"))
    return found


@pytest.fixture(scope="module")
def mlp():
    return real_size.mlp_gradient()


@pytest.fixture(scope="module")
def layered():
    return real_size.layered_graph(1000)


def group_key(view, title_start):
    return next(g["key"] for g in view.groups if g["title"].startswith(title_start))


# -- the gradient's mark ------------------------------------------------------------------------------
def test_grad_tags_the_nodes_it_makes_and_only_those(mlp):
    (X, Y, W1, b1, W2, b2), (loss, gW1, gW2) = mlp
    forward = toposort([loss])[0]
    everything = toposort([loss, gW1, gW2])[0]
    assert not any(is_backward(n) for n in forward)
    backward = [n for n in everything if n not in set(forward)]
    assert len(backward) == 61 and all(is_backward(n) for n in backward)
    # a second gradient of the same cost tags its own new nodes, and leaves the forward graph alone
    g_b1 = symlab.grad(loss, b1)
    assert is_backward(g_b1.owner) and not any(is_backward(n) for n in toposort([loss])[0])
    # a gradient the caller gives (known_grads) is not the call's own
    given = st.exp(X).sum()
    g_known = symlab.grad(None, W1, known_grads={loss: given}, disconnected_inputs="ignore")
    assert is_backward(g_known.owner) and not is_backward(given.owner)


# -- folding by meaning --------------------------------------------------------------------------------
@needs_dot
def test_the_mlp_gradient_folds_into_forward_and_backward_within_the_budget(mlp):
    inputs, outputs = mlp
    view = GraphView(outputs)
    nodes = drawn(view.svg)
    assert len(nodes) <= VIEW_MAX_NODES == view.max_nodes == 40
    titles = {g["title"]: g for g in view.groups}
    assert "forward: 32 nodes" in titles and "backward: 61 nodes" in titles
    # every group drawn says what it is and holds at least two nodes: never "... 1 nodes ..."
    groups = {k: text for k, (kind, text) in nodes.items() if kind == "group"}
    assert groups and all(re.fullmatch(r".+: (\d+) nodes", t) and int(t.rsplit(": ", 1)[1].split()[0]) >= 2
                          for t in groups.values())
    assert all(g["count"] >= 2 for g in view.groups)
    assert any(t.startswith(("probs = ", "hidden = ", "logits = ", "l2 = ")) for t in groups.values())
    # every Apply node is drawn once or inside exactly one drawn group
    counted = sum(1 for kind, _ in nodes.values() if kind == "apply") + sum(
        view.model.nodes[k].count for k in groups)
    assert counted == 93
    # the backward group holds exactly the nodes grad made
    back = view._folds.group(group_key(view, "backward"))
    assert all(is_backward(n) for n in back.members) and len(back.members) == 61


def test_the_compiled_mlp_keeps_its_forward_and_backward_parts_after_rewrites():
    f = real_size.mlp_function(mode="NUMPY")  # the same graph as the default mode's, without compiling kernels
    view = GraphView(f, max_nodes=10)
    fg = f.maker.fgraph
    forward = view._folds.group(group_key(view, "forward"))
    backward = view._folds.group(group_key(view, "backward"))
    assert len(forward.members) + len(backward.members) == len(fg.apply_nodes) == 44
    # forward: exactly what the loss needs; backward: what only the gradients need
    loss_needs = set(toposort([fg.outputs[0]])[0])
    assert set(forward.members) == loss_needs and not loss_needs & set(backward.members)


def test_the_static_pictures_count_folding_never_makes_a_group_of_one_node(mlp, layered):
    from symlab.printing.model import build_model

    for outputs in (mlp[1], layered[1]):
        for budget in (10, 20, 40, 60, 90):
            model = build_model(outputs, "compact", max_nodes=budget)
            groups = [n for n in model.nodes.values() if n.kind == "group"]
            assert all(n.count >= 2 and n.label != ["… 1 nodes …"] for n in groups)
            shown = sum(1 for n in model.nodes.values() if n.kind == "apply")
            assert shown + model.hidden == model.total  # every node drawn, merged or in a group


@needs_dot
def test_a_small_budget_folds_the_mlp_into_its_two_parts_and_a_large_one_draws_it_whole(mlp):
    _, outputs = mlp
    small = GraphView(outputs, max_nodes=12)
    nodes = drawn(small.svg)
    assert {t for k, t in nodes.values() if k == "group"} == {"forward: 32 nodes", "backward: 61 nodes"}
    whole = GraphView(outputs, max_nodes=500)
    assert not any(k == "group" for k, _ in drawn(whole.svg).values()) and whole.groups[0]["expanded"]


@needs_dot
def test_expanding_draws_the_members_in_place_keeps_the_selection_and_collapse_restores(mlp):
    (X, Y, W1, b1, W2, b2), outputs = mlp
    view = GraphView(outputs, max_nodes=12)
    before = drawn(view.svg)
    view.select(W1)
    w1_key = view.selected_key
    back = group_key(view, "backward")
    view._on_browser_message(view, {"type": "expand", "key": back}, [])
    after = drawn(view.svg)
    assert back not in after and view.selected_key == w1_key and view.selected is W1
    assert view.marks[w1_key] == ["selected"]
    # what the expand showed is the group's 61 members: nodes and sub-groups, each drawn, all of them
    assert view.reveal and all(k in after for k in view.reveal)
    assert sum(view.model.nodes[k].count for k in view.reveal) == 61
    assert len(view.reveal) <= VIEW_MAX_NODES and "expanded backward: 61 nodes" in view.notice
    assert {g["key"]: g["expanded"] for g in view.groups}[back] is True
    # a panel action folds back the group the reader expanded (not a small group opened because it fit)
    member = next(k for k in after if view.model.nodes[k].kind == "apply" and view.model.obj(k) in
                  view._folds.group(back).members)
    view._on_browser_message(view, {"type": "select", "key": member}, [])
    (action,) = view.panel["actions"]
    assert action == {"text": "fold back backward: 61 nodes", "key": back, "kind": "collapse"}
    view._on_browser_message(view, {"type": "collapse", "key": member}, [])
    assert back in drawn(view.svg) and member not in drawn(view.svg)
    assert view.marks[back] == ["selected"] and view.selected_key == member  # lit through its group
    assert view.reveal == [back]
    view.select(W1)
    assert drawn(view.svg).keys() == before.keys() and view.selected_key == w1_key
    with pytest.raises(ValueError, match=r"GraphView.expand: 'g999' is not a folded group of the picture; the groups "
                       r"of this graph are g0, g"):
        view.expand("g999")
    with pytest.raises(ValueError, match="neither an expanded group nor drawn inside one"):
        view.collapse(w1_key)  # an input is drawn at the top level


@needs_dot
def test_expanding_a_large_group_shows_sub_groups_never_more_than_a_budget(layered):
    _, outputs = layered
    view = GraphView(outputs)
    assert len(drawn(view.svg)) <= VIEW_MAX_NODES
    biggest = max((g for g in view.groups if not g["expanded"]), key=lambda g: g["count"])
    assert biggest["count"] > 100
    view.expand(biggest["key"])
    shown = view.reveal
    assert sum(view.model.nodes[k].count for k in shown) == biggest["count"]  # all of it, not 80 of 325
    assert any(view.model.nodes[k].kind == "group" for k in shown) and len(shown) <= VIEW_MAX_NODES
    assert len(drawn(view.svg)) <= 2 * VIEW_MAX_NODES


# -- search --------------------------------------------------------------------------------------------
@needs_dot
def test_search_selects_the_first_match_and_expands_what_hides_it(mlp):
    (X, Y, W1, b1, W2, b2), outputs = mlp
    view = GraphView(outputs, max_nodes=12)
    found = view.search("W1")
    assert found[0] is W1 and view.selected is W1 and view.selected_key in drawn(view.svg)
    assert view.matches[0] == {"key": view.key_of(W1), "text": "W1 (input)", "kind": "input"}
    hidden = next(n for n in view._order if n.outputs[0].name == "hidden")
    assert view.key_of(hidden) not in drawn(view.svg)  # inside the folded forward part
    found = view.search("HIDDEN")
    assert found[0] in (hidden, hidden.outputs[0]) and view.selected is found[0]
    nodes = drawn(view.svg)
    assert view.key_of(hidden) in nodes and nodes[view.key_of(hidden)][0] == "apply"
    assert view.reveal and f'id="{view.reveal[0]}"' in view.svg  # its node, or an arrow carrying it
    # by op, by type, by key (an exact key first)
    found = view.search("tanh")
    assert found and all("tanh" in str(n.op) for n in found) and all("tanh" in m["text"] for m in view.matches)
    key = view.key_of(W2)
    assert view.search(key)[0] is W2 and view.matches[0]["key"] == key
    assert len(view.search("float64")) > 50 and len(view.matches) == 50
    assert view.search("") == [] and view.matches == []
    assert view.search("no such thing") == [] and "nothing matches" in view.notice
    with pytest.raises(TypeError, match="text must be a str"):
        view.search(3)


def test_the_browser_search_message_lists_and_picks(mlp):
    (X, Y, W1, b1, W2, b2), outputs = mlp
    view = GraphView(outputs)
    view._on_browser_message(view, {"type": "search", "text": "b2", "pick": False}, [])
    assert [m["key"] for m in view.matches] == [view.key_of(b2)] and view.selected is None
    view._on_browser_message(view, {"type": "search", "text": "b2", "pick": True}, [])
    assert view.selected is b2
    view._on_browser_message(view, {"type": "select", "key": view.matches[0]["key"]}, [])  # a click on a match
    assert view.selected is b2


@needs_dot
def test_search_in_the_1000_node_graph_opens_the_nested_groups_hiding_a_name(layered):
    _, outputs = layered
    view = GraphView(outputs)
    found = view.search("mix42")
    target = found[0]
    assert target.name == "mix42" and view.selected is target
    owner_key = view.key_of(target.owner)
    assert owner_key in drawn(view.svg)
    assert all(g["expanded"] for g in view.groups if target.owner in view._folds.group(g["key"]).members)


def test_the_inspector_keeps_its_search_by_name_on_the_shared_mechanism():
    f = real_size.mlp_function(mode="NUMPY")
    inspector = ClientsInspector(f)
    found = inspector.search("w")
    assert [v.name for v in found] == ["W1", "W2"] and inspector.selected is None
    assert [m["kind"] for m in inspector.matches] == ["input", "input"]
    inspector._on_browser_message(inspector, {"type": "search", "text": "b1", "pick": True}, [])
    assert inspector.selected.name == "b1"
    inspector.close()


# -- keys, focus ---------------------------------------------------------------------------------------
@needs_dot
def test_keys_stay_valid_across_expand_collapse_and_focus(mlp):
    _, outputs = mlp
    view = GraphView(outputs, max_nodes=12)
    every = {key: obj for key, obj in view._keys.items()}
    back = group_key(view, "backward")
    view.expand(back)
    keys_open = {k: view.model.obj(k) for k, n in view.model.nodes.items() if n.kind == "apply"}
    assert keys_open and all(every[k] is obj for k, obj in keys_open.items())
    view.collapse(back)
    view.expand(back)
    assert {k: view.model.obj(k) for k, n in view.model.nodes.items() if n.kind == "apply"} == keys_open
    node_key = next(iter(keys_open))
    view.select(node_key)
    view.focus = True
    focused = {k: view.model.obj(k) for k, n in view.model.nodes.items() if n.kind == "apply"}
    assert node_key in focused and all(every[k] is obj for k, obj in focused.items())
    view.focus = False
    assert view.resolve(node_key).obj is every[node_key] and view.selected_key == node_key


@needs_dot
def test_focus_draws_its_cut_edges_as_cut_not_as_graph_outputs(mlp):
    _, (loss, gW1, gW2) = mlp
    view = GraphView([loss, gW1, gW2])
    tanh = next(n for n in view._order if n.outputs[0].name == "hidden")
    view.select(tanh)
    view.focus = True
    nodes = drawn(view.svg)
    outs = {k for k, (kind, _) in nodes.items() if kind == "output"}
    cuts = {k: text for k, (kind, text) in nodes.items() if kind == "cut"}
    assert not outs  # the neighbourhood of tanh computes none of the graph's outputs
    assert cuts and all(re.fullmatch(r"to \d+ more clients?", t) for t in cuts.values())
    dashed = dashed_edges(view.svg)
    assert all(any(e.endswith("_" + k) for e in dashed) for k in cuts)
    # a part that does compute an output draws it under the graph's own key and number
    view.focus = False
    view.select(gW2.owner)
    view.focus = True
    nodes = drawn(view.svg)
    assert nodes["out2"][0] == "output" and "output 2" in nodes["out2"][1]


def test_build_part_numbers_outputs_as_the_graph_does_and_cuts_the_rest():
    x = st.dvector("x")
    a = st.exp(x)
    b, c = st.sin(a), st.cos(a)
    fg = FunctionGraph([x], [b, c])
    exp_node, cos_node = fg.outputs[0].owner.inputs[0].owner, fg.outputs[1].owner
    model = build_part([exp_node, cos_node], "compact", fg.key, fg, fg.outputs)
    kinds = {k: (n.kind, n.label) for k, n in model.nodes.items() if n.kind in ("output", "cut")}
    assert kinds == {"out1": ("output", ["output 1", "float64 (?,)"]), f"cut{fg.key(exp_node.outputs[0])}":
                     ("cut", ["to 1 more client"])}
    assert {e.kind for e in model.edges if e.head.startswith("cut")} == {"cut"}
    assert model.obj("out1") is fg.outputs[1]


# -- the values view -----------------------------------------------------------------------------------
def mlp_values(mlp):
    (X, Y, W1, b1, W2, b2), outputs = mlp
    rng = np.random.default_rng(0)
    return outputs, {X: rng.normal(size=(4, 3)), Y: np.eye(2)[[0, 1, 1, 0]], W1: rng.normal(size=(3, 5)),
                     b1: np.zeros(5), W2: rng.normal(size=(5, 2)), b2: np.zeros(2)}


@needs_dot
def test_the_values_view_of_the_mlp_folds_to_the_budget_and_expands_with_its_values(mlp):
    outputs, values = mlp_values(mlp)
    view = ValuesView(outputs, values)
    nodes = drawn(view.svg)
    assert len(nodes) <= VIEW_MAX_NODES
    width, height = (float(v) for v in re.search(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"', view.svg).groups())
    assert height < 2000 and width < 4000  # not a thin strip 8,000 pt long
    back = group_key(view, "backward")
    assert nodes[back] == ("group", "backward: 61 nodes")
    view.select(back)
    assert view.panel["actions"] == [{"text": "expand backward: 61 nodes", "key": back, "kind": "expand"}]
    view._on_browser_message(view, {"type": "expand", "key": back}, [])
    after = drawn(view.svg)
    assert back not in after and view.reveal and all(k in after for k in view.reveal)
    assert view.selected_key == back  # the selection stays (on the open group)
    gW1 = outputs[1]
    box = view.key_of(gW1)
    assert box in after and "shape (3, 5) float64" in after[box][1]
    view._on_browser_message(view, {"type": "collapse", "key": back}, [])
    assert drawn(view.svg).keys() == nodes.keys()


# -- speed ---------------------------------------------------------------------------------------------
def best_of(n, fn):
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


@needs_dot
def test_first_display_and_a_click_are_quick_at_real_size(mlp, layered):
    # kernel side of the targets (first display 0.5 s / 1.5 s in the browser, a click 50 ms): generous bounds
    # here, as two cores run the whole suite; the benchmark reports the real figures
    for outputs, first in ((mlp[1], 0.5), (layered[1], 1.5)):
        assert best_of(2, lambda outputs=outputs: GraphView(outputs)) < first
        view = GraphView(outputs)
        keys = [k for k, n in view.model.nodes.items() if n.kind in ("apply", "group", "input")][:10]
        click_time = max(best_of(3, lambda k=k, v=view: v._on_browser_message(v, {"type": "select", "key": k}, []))
                         for k in keys)
        assert click_time < 0.05 and view.selected_key == keys[-1]
