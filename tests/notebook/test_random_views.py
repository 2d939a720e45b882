"""The views of random graphs: which functions advance a generator, a draw's sample and histogram, at real size.

The widgets are driven as the browser would (their Python twins, and the messages a click sends); the
pictures are parsed. No view advances a shared generator: every test checks its state afterwards.
"""

from __future__ import annotations

import gc
import re
import time
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hostile_names import HOSTILE

import symlab
import symlab.tensor as st
from symlab.notebook.graph_view import GraphView
from symlab.notebook.histogram import histogram
from symlab.notebook.inspector import ClientsInspector
from symlab.notebook.shared_use import shared_use
from symlab.notebook.values import ValuesView
from symlab.printing.diagram import to_dot
from symlab.printing.render import can_render, to_svg
from symlab.tensor.random.basic import normal, uniform
from symlab.tensor.random.op import RandomVariable
from symlab.tensor.random.utils import RandomStream

SVG = "{http://www.w3.org/2000/svg}"


def state(shared):
    return shared.get_value(borrow=True).bit_generator.state


class PoissonCounts(RandomVariable):
    """A distribution of one's own: NumPy's ``Generator.poisson`` as a random variable (integer draws)."""

    name = "poisson"
    signature = "()->()"
    dtype = "int64"


def drawn_from(rng, seed, mu=0.5):
    """``(next_rng, x)``: normal(mu, 1) of size 3 from the shared ``rng`` (seeded ``seed``)."""
    m = st.dscalar("mu")
    next_rng, x = normal(m, 1.0, size=(3,), rng=rng, return_next_rng=True)
    x.name = "x"
    return m, next_rng, x


# -- which functions advance which generator ------------------------------------------------------------------
def test_the_inspector_lists_the_functions_that_advance_a_generator_and_those_that_draw_the_same_numbers():
    rng = symlab.shared(np.random.default_rng(1), name="rng")
    mu, next_rng, x = drawn_from(rng, 1)
    advancing = symlab.function([mu], x, updates={rng: next_rng}, name="advancing", mode="NUMPY")
    repeating = symlab.function([mu], x, name="repeating", mode="NUMPY")
    stream = RandomStream(3)
    d = stream.normal(0, 1, size=(2,))
    functions = [symlab.function([], d, name="by default", mode="NUMPY"),
                 symlab.function([], d, no_default_updates=True, name="frozen", mode="NUMPY")]
    before = state(rng)
    inspector = ClientsInspector(repeating)
    inspector.select("rng")  # the function's own graph input: a clone sharing rng's storage
    use = inspector.shared_use
    assert [(f.name, how) for f, how in use.updated_by] == [("advancing", "explicit update")]
    assert [f.name for f in use.read_by] == ["repeating"]
    details = inspector.details
    assert details["advanced by (functions alive)"] == ["function 'advancing' (explicit update)"]
    assert details["read without advancing by"] == ["function 'repeating' (draws the same numbers each call)"]
    assert details["state"].startswith("PCG64 state #")
    assert "function 'advancing' (explicit update)" in inspector.markdown()
    # a RandomStream's generator: advanced by its default update, unless no_default_updates
    ((gen, _),) = stream.state_updates
    use = shared_use(gen)
    assert [(f.name, how) for f, how in use.updated_by] == [("by default", "default update")]
    assert [f.name for f in use.read_by] == ["frozen"] and use.read_by[0] is functions[1]
    # the teaching point, checked: the reader draws the same numbers each call, the updater new ones
    first = repeating(0.5)
    assert np.array_equal(repeating(0.5), first) and state(rng) == before
    assert not np.array_equal(advancing(0.5), advancing(0.5))
    # a function that is gone is not listed (the registry holds functions weakly)
    del advancing
    gc.collect()
    inspector.select("rng")
    assert inspector.shared_use.updated_by == () and inspector.details["advanced by (functions alive)"] == "none"
    assert [f.name for f in inspector.shared_use.read_by] == ["repeating"]
    inspector.close()


def test_a_tensor_shared_variable_lists_the_training_step_that_updates_it_and_reading_advances_nothing():
    w = symlab.shared(np.ones(3), name="w")
    x = st.dvector("x")
    cost = ((w * x) ** 2).sum()
    (g,) = symlab.grad(cost, [w])
    step = symlab.function([x], cost, updates=[(w, w - 0.1 * g)], mode="NUMPY")
    predict = symlab.function([x], (w * x).sum(), mode="NUMPY")
    view = GraphView(step)
    w_in = next(v for v in step.maker.fgraph.inputs if getattr(v, "container", None) is w.container)
    view.select(w_in)
    assert view.details["updated by (functions alive)"] == ["unnamed function of (x) -> 1 output (explicit update)"]
    assert view.details["read, not updated, by"] == ["unnamed function of (x) -> 1 output"]
    assert predict in shared_use(w).read_by and np.array_equal(w.get_value(), np.ones(3))
    ups = [e for e in view.model.edges if e.kind == "update"]
    assert [(e.tail, e.head) for e in ups] == [("out1", view.key_of(w_in))]
    assert "dashed gold arrow: an update" in view.legend and "gold cylinder" not in view.legend
    with pytest.raises(TypeError, match="expected a shared variable"):
        shared_use(x)


def test_a_graph_view_of_a_random_function_draws_its_generator_and_update_and_selects_the_random_node():
    rng = symlab.shared(np.random.default_rng(2), name="rng")
    mu, next_rng, x = drawn_from(rng, 2)
    f = symlab.function([mu], x, updates={rng: next_rng}, name="train", mode="NUMPY")
    before = state(rng)
    view = GraphView(f)
    fg = f.maker.fgraph
    node = next(n for n in fg.apply_nodes if type(n.op).__name__ == "NormalRV")
    view._on_select({"key": fg.key(node)})  # what a click on the random node sends
    assert view.details["kind"] == "apply node" and view.details["op"].startswith("normal_rv")
    assert view.marks[fg.key(node)] == ["selected"]
    rng_key = fg.key(node.inputs[0])
    assert view.model.nodes[rng_key].kind == "generator" and "input" in view.marks[rng_key]
    assert ("out1", rng_key) in {(e.tail, e.head) for e in view.model.edges if e.kind == "update"}
    if can_render():
        root = ET.fromstring(view.svg)
        ids = {g.get("id"): (g.get("class") or "") for g in root.iter(f"{SVG}g")}
        assert ids[f"out1_{rng_key}"] == "edge update" and ids[rng_key] == "node generator"
    assert "dashed gold arrow" in view.markdown() and "gold cylinder" in view.legend
    assert view.text.splitlines()[-1].endswith(f"[{fg.key(node)}] … (update of rng)")  # the text twin says it too
    assert re.fullmatch(r"GraphView of a compiled Function: \d+ nodes?, compact style, selected apply node "
                        r"normal_rv.*", repr(view))
    assert state(rng) == before
    view.close()


# -- the values view: a sample and a histogram ------------------------------------------------------------------------
def test_the_values_view_shows_a_sample_and_a_histogram_of_many_draws_without_advancing_the_generator():
    rng = symlab.shared(np.random.default_rng(9), name="rng")
    mu, next_rng, x = drawn_from(rng, 9)
    y = st.exp(x)
    y.name = "y"
    before = state(rng)
    view = ValuesView(y, {mu: 0.5})
    reference = np.random.default_rng(9)
    sample = reference.normal(0.5, 1.0, size=3)
    assert np.array_equal(view.value(x), sample)  # one sample: NumPy's numbers for that state
    assert view.text(x.owner.inputs[0])[0].startswith("PCG64 state #")  # never a memory address
    assert "0x" not in view.text() and "0x" not in repr(view)
    view.select(x)
    assert view.panel["actions"][0] == {"text": "histogram of 1000 draws", "key": view.key_of(x), "kind": "histogram"}
    rows = {r["label"]: r for r in view.panel["rows"]}
    assert rows["random draw"]["text"].startswith("normal(") and rows["drawn from"]["items"][0]["text"] == "rng"
    view._on_histogram({"type": "histogram", "key": view.key_of(x)})  # what the action's button sends
    found = view._histogram
    assert found.draws == 1000 and found.per_draw == 3 and int(found.counts.sum()) == 3000
    assert abs(found.mean - 0.5) < 5 * 1.0 / np.sqrt(3000) and abs(found.std - 1.0) < 0.1
    # the draws after the view's sample, in order: NumPy's next 1000 draws of the same state
    assert np.array_equal(found.counts, np.histogram(np.random.default_rng(9).normal(0.5, 1.0, size=(1000, 3)),
                                                     bins=found.edges)[0])
    panel = view.histogram_panel
    assert panel["key"] == view.key_of(x) and panel["title"] == found.heading()
    svg = ET.fromstring(panel["svg"])
    bars = [r for r in svg.iter(f"{SVG}rect") if r.get("class") == "sl-bar"]
    assert len(bars) == len(found.counts) and sum(int(r.find(f"{SVG}title").text.rsplit(": ", 1)[1])
                                                   for r in bars) == 3000
    assert "```text\nx: 1000 draws of normal (3 elements each, pooled)" in view.markdown()
    assert np.array_equal(view.value(x), sample) and state(rng) == before  # the view and the generator unchanged
    one = view.histogram(x, draws=400, element=1)
    assert int(one.counts.sum()) == 400 and one.per_draw == 1
    view.close()


def test_histograms_of_integer_draws_count_each_value_and_bad_requests_are_named():
    rng = symlab.shared(np.random.default_rng(4), name="rng")
    lam = st.dscalar("lam")
    counts = PoissonCounts()(lam, size=(), rng=rng)
    counts.name = "counts"
    before = state(rng)
    found = histogram(counts, {lam: 3.0}, draws=20000)
    assert int(found.counts.sum()) == 20000 and np.all(np.diff(found.edges) == 1.0)  # a bin per value
    se = np.sqrt(3.0 / 20000)
    assert abs(found.mean - 3.0) < 5 * se and abs(found.std**2 - 3.0) < 0.15
    expected = np.bincount(np.random.default_rng(4).poisson(3.0, size=20000))
    low = int(found.edges[0] + 0.5)
    assert np.array_equal(found.counts, expected[low:low + len(found.counts)])
    assert state(rng) == before
    with pytest.raises(ValueError, match=r"histogram: lam is not a random draw \(a graph input\)"):
        histogram(lam, {lam: 1.0})
    with pytest.raises(ValueError, match="histogram: draws must be an int from 1 to"):
        histogram(counts, {lam: 1.0}, draws=0)
    with pytest.raises(ValueError, match="is not a random draw \\(a generator, not a draw\\)"):
        histogram(counts.owner.outputs[0], {lam: 1.0})
    text = found.text(width=10)
    assert text.splitlines()[0].startswith("counts: 20000 draws of poisson, mean ")


def test_hostile_names_stay_literal_in_the_histogram_and_the_function_lists():
    rng = symlab.shared(np.random.default_rng(0), name=HOSTILE[1])
    next_rng, x = uniform(0.0, 1.0, size=(2,), rng=rng, return_next_rng=True)
    x.name = HOSTILE[11]
    f = symlab.function([], x, updates={rng: next_rng}, name=HOSTILE[0], mode="NUMPY")
    found = histogram(x, draws=50)
    assert found.title == HOSTILE[11] and found.text().startswith(HOSTILE[11] + ": 50 draws")
    heading = [t for t in ET.fromstring(found.svg()).iter(f"{SVG}text")][0].text
    assert heading == found.heading()  # parsed back word for word: the SVG escapes it
    fence = found.markdown().split("\n", 1)[0]
    assert fence == "```text" and "```" not in found.text()
    use = shared_use(rng)
    assert str(use).startswith(HOSTILE[1]) and repr(HOSTILE[0]) in str(use)
    del f


# -- at real size ----------------------------------------------------------------------------------------------------
def dropout_mlp(batch=32, features=20, hidden=50, classes=3, seed=0):
    """A two-layer MLP's compiled training step with a dropout mask from a RandomStream (its default update) and an
    SGD update of every parameter: ``(step, stream, params)``."""
    init = np.random.default_rng(seed)
    X, Y = st.dmatrix("X"), st.dmatrix("Y")
    W1 = symlab.shared(init.normal(0, 0.1, (features, hidden)), name="W1")
    b1 = symlab.shared(np.zeros(hidden), name="b1")
    W2 = symlab.shared(init.normal(0, 0.1, (hidden, classes)), name="W2")
    b2 = symlab.shared(np.zeros(classes), name="b2")
    stream = RandomStream(seed)
    hidden_out = st.tanh(st.dot(X, W1) + b1)
    hidden_out.name = "hidden"
    mask = st.cast(stream.uniform(0.0, 1.0, size=(batch, hidden)) < 0.5, "float64")
    mask.name = "mask"
    dropped = hidden_out * mask * 2.0
    logits = st.dot(dropped, W2) + b2
    shifted = logits - logits.max(axis=1, keepdims=True)
    probs = st.exp(shifted) / st.exp(shifted).sum(axis=1, keepdims=True)
    loss = -(Y * st.log(probs)).sum(axis=1).mean()
    loss.name = "loss"
    params = [W1, b1, W2, b2]
    grads = symlab.grad(loss, params)
    step = symlab.function([X, Y], loss, updates=[(p, p - 0.1 * g) for p, g in zip(params, grads)],
                           name="train", mode="NUMPY")
    return step, stream, params


def test_a_dropout_mlp_training_step_views_at_real_size_with_every_update_arrow(capsys):
    started = time.perf_counter()
    step, stream, params = dropout_mlp()
    compiled = time.perf_counter()
    ((gen, _),) = stream.state_updates
    before = state(gen)
    view = GraphView(step)
    viewed = time.perf_counter()
    fg = step.maker.fgraph
    ups = {(e.tail, view.model.obj(e.head).container) for e in view.model.edges if e.kind == "update"}
    containers = {p.container for p in params} | {gen.container}
    assert {c for _, c in ups} == containers and len(ups) == 5  # 4 SGD updates and the mask's generator
    assert all(view.model.nodes[t].kind in ("output", "generator") for t, _ in ups)
    generator_keys = [k for k, n in view.model.nodes.items() if n.kind == "generator"]
    assert len(generator_keys) == 2  # the stream's generator and its update (the next generator)
    source = to_dot(view.model, legend=True).source
    drawn = time.perf_counter()
    svg = to_svg(source) if can_render() else ""
    rendered = time.perf_counter()
    if svg:
        root = ET.fromstring(svg)
        update_ids = [g.get("id") for g in root.iter(f"{SVG}g") if (g.get("class") or "") == "edge update"]
        assert len(update_ids) == 5
    inspector = ClientsInspector(step)
    gen_in = next(v for v in fg.inputs if getattr(v, "container", None) is gen.container)
    inspector.select(gen_in)
    assert [(f.name, how) for f, how in inspector.shared_use.updated_by] == [("train", "default update")]
    inspected = time.perf_counter()
    assert state(gen) == before
    with capsys.disabled():
        print(f"\n[real size] dropout MLP step: {len(fg.apply_nodes)} nodes; compile {compiled - started:.2f} s, "
              f"GraphView {viewed - compiled:.3f} s, DOT {drawn - viewed:.3f} s, SVG {rendered - drawn:.3f} s, "
              f"inspector + select {inspected - rendered:.3f} s")
    view.close()
    inspector.close()


def _decode_png(png: bytes) -> np.ndarray:
    """The RGB pixels of a PNG written by symlab.notebook.bar_png (8-bit RGB, filter 0 on every row)."""
    import struct
    import zlib

    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos:pos + 4])
        kind, data = png[pos + 4:pos + 8], png[pos + 8:pos + 8 + length]
        assert struct.unpack(">I", png[pos + 8 + length:pos + 12 + length])[0] == zlib.crc32(kind + data)
        chunks.setdefault(kind, b"")
        chunks[kind] += data
        pos += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (depth, colour) == (8, 2)
    rows = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), dtype=np.uint8).reshape(height, 1 + 3 * width)
    assert not rows[:, 0].any()
    return rows[:, 1:].reshape(height, width, 3)


def test_the_histogram_display_stores_a_png_whose_bars_follow_the_counts_for_untrusted_notebooks():
    import base64

    rng = symlab.shared(np.random.default_rng(5), name="rng")
    x = normal(0.0, 1.0, size=4, rng=rng)
    h = histogram(x, draws=500, bins=12)
    bundle = h._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "image/svg+xml", "image/png"}  # no Markdown: it would outrank the SVG
    pixels = _decode_png(base64.b64decode(bundle["image/png"]))
    assert pixels.shape == (110, 360, 3)
    blue = np.all(pixels == (0x4C, 0x6E, 0xF5), axis=2)
    plot_w, plot_h = 360 - 16, 110 - 16
    tallest = int(h.counts.max())
    for k, count in enumerate(h.counts):  # each bar's middle column is as tall as its count says
        column = 8 + round((k + 0.5) * plot_w / len(h.counts))
        assert int(blue[:, column].sum()) == round(plot_h * int(count) / tallest)
