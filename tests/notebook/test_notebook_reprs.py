"""Tests of the rich displays (_repr_mimebundle_, _repr_pretty_) of graph objects."""

import importlib
import shutil
import sys
import xml.etree.ElementTree as ET

import pytest

import symlab.tensor as st
from symlab.graph.fg import FunctionGraph
from symlab.notebook import reprs

render = importlib.import_module("symlab.printing.render")
PLAIN, DOT, SVG, PNG = "text/plain", "text/vnd.graphviz", "image/svg+xml", "image/png"
CAN_RENDER = render.can_render()


def seed():
    x, y = st.dmatrix("x"), st.dmatrix("y")
    z = x + y
    return x, y, z


def all_objects():
    x, y, z = seed()
    fg = FunctionGraph([x, y], [z * 2])
    from symlab.rewriting import rewrite_graph

    v = st.dvector("v")
    _, trace = rewrite_graph([v * (st.constant(2.0) + 3.0)], include=("fast_compile",))
    return {"variable": z, "apply": z.owner, "op": z.owner.op, "type": z.type, "fgraph": fg, "trace": trace}


def pretty_text(obj):
    from IPython.lib.pretty import pretty

    return pretty(obj)


@pytest.mark.parametrize("kind", ["variable", "apply", "op", "type", "fgraph", "trace"])
def test_every_object_has_a_bundle(kind):
    obj = all_objects()[kind]
    bundle = obj._repr_mimebundle_()
    assert bundle[PLAIN] == pretty_text(obj)
    assert bundle[DOT].startswith("digraph {")
    if CAN_RENDER:
        ET.fromstring(bundle[SVG])  # well-formed SVG
    assert obj._repr_mimebundle_() == bundle or not CAN_RENDER or SVG in bundle
    assert obj._repr_mimebundle_(include=[DOT])[DOT] == bundle[DOT]  # stable


def test_texts():
    objs = all_objects()
    assert objs["variable"]._repr_mimebundle_(include=[PLAIN]) == {PLAIN: "Elemwise{add,no_inplace}.0"}
    assert objs["apply"]._repr_mimebundle_(include=[PLAIN])[PLAIN] == "Elemwise{add,no_inplace}(x, y)"
    assert objs["op"]._repr_mimebundle_(include=[PLAIN])[PLAIN] == "Elemwise{add,no_inplace}"
    assert objs["type"]._repr_mimebundle_(include=[PLAIN])[PLAIN] == "TensorType(float64, (?, ?))"
    fg_text = objs["fgraph"]._repr_mimebundle_(include=[PLAIN])[PLAIN]
    assert fg_text.splitlines()[0].startswith("Elemwise{mul,no_inplace} [id A]")
    assert " |Elemwise{add,no_inplace} [id B]" in fg_text
    assert objs["trace"]._repr_mimebundle_(include=[PLAIN])[PLAIN] == str(objs["trace"])
    # the terminal forms of the core objects are unchanged
    x, y, z = seed()
    assert pretty_text(z) == str(z) == repr(z)
    assert pretty_text(z.type) == repr(z.type)
    assert repr(objs["fgraph"]) == "FunctionGraph(Elemwise{mul,no_inplace}.0)"


def test_small_nodes_use_the_structure_style_and_graphs_the_compact_one():
    x, y, z = seed()
    assert reprs.diagram_style(z) == "structure"
    assert "label=owner" in z._repr_mimebundle_(include=[DOT])[DOT]
    big = z
    for _ in range(5):
        big = big * 2
    assert reprs.diagram_style(big) == "compact"
    assert "label=owner" not in big._repr_mimebundle_(include=[DOT])[DOT]
    assert reprs.diagram_style(FunctionGraph([x, y], [z])) == "compact"


def test_include_and_exclude():
    _, _, z = seed()
    assert set(z._repr_mimebundle_(include=[PLAIN, DOT])) == {PLAIN, DOT}
    assert set(z._repr_mimebundle_(exclude=[SVG, DOT, PNG])) == {PLAIN}
    assert set(z._repr_mimebundle_(exclude=[SVG, DOT])) == ({PLAIN, PNG} if CAN_RENDER else {PLAIN})
    assert z._repr_mimebundle_(include=[]) == {}


@pytest.mark.skipif(not CAN_RENDER, reason="Graphviz is not installed")
def test_the_picture_is_also_a_png_for_untrusted_notebooks_and_github():
    import base64
    import struct

    _, _, z = seed()
    bundle = z._repr_mimebundle_()
    data = base64.b64decode(bundle[PNG])
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    # the same picture as the SVG: Graphviz's size in pt at 96 dpi
    svg_width = float(bundle[SVG].split('width="', 1)[1].split("pt", 1)[0])
    assert abs(width - svg_width * 96 / 72) <= 2 and height > 0


def test_ipython_display_formatter_uses_the_bundle():
    from IPython.core.formatters import DisplayFormatter

    _, _, z = seed()
    data, _ = DisplayFormatter().format(z)
    assert data[PLAIN] == "Elemwise{add,no_inplace}.0"
    assert DOT in data
    assert (SVG in data) == CAN_RENDER


def test_without_a_renderer_the_display_is_text(monkeypatch, tmp_path):
    monkeypatch.delenv(render.ENV_VAR, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(render, "_python_bin_dir", lambda: tmp_path)
    for obj in all_objects().values():
        bundle = obj._repr_mimebundle_()
        assert SVG not in bundle
        assert set(bundle) == {PLAIN, DOT}


def test_without_the_graphviz_package_the_display_is_text(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)
    for obj in all_objects().values():
        assert set(obj._repr_mimebundle_()) == {PLAIN}


def test_a_display_never_raises(monkeypatch):
    objs = all_objects()

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(importlib.import_module("symlab.printing.debugprint"), "debugprint", broken)
    monkeypatch.setattr(importlib.import_module("symlab.printing.model"), "build_model", broken)
    bundle = objs["fgraph"]._repr_mimebundle_()
    assert set(bundle) == {PLAIN}
    assert "boom" in bundle[PLAIN]


def test_renderer_failure_leaves_svg_out(monkeypatch, tmp_path):
    fake = tmp_path / "dot"
    fake.write_text("#!/bin/sh\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setenv(render.ENV_VAR, str(fake))
    _, _, z = seed()
    assert set(z._repr_mimebundle_()) == {PLAIN, DOT}


def test_a_duck_typed_function_is_not_a_function():
    x, y, z = seed()
    fg = FunctionGraph([x, y], [z])

    class Maker:
        fgraph = fg

    class Function:  # has a maker.fgraph, but is no symlab.compile.function.Function
        maker = Maker()

        def _repr_mimebundle_(self, include=None, exclude=None):
            return reprs.mimebundle(self, include, exclude)

    bundle = Function()._repr_mimebundle_(include=[PLAIN, DOT])
    assert set(bundle) == {PLAIN} and bundle[PLAIN].startswith("<")


def test_long_texts_and_big_graphs_are_capped():
    x = st.dvector("x")
    y = x
    for _ in range(3000):
        y = st.exp(y)
    fg = FunctionGraph([x], [y], clone=False)
    bundle = fg._repr_mimebundle_(include=[PLAIN, DOT])
    lines = bundle[PLAIN].splitlines()
    assert len(lines) == reprs.TEXT_MAX_LINES + 1 and "more lines" in lines[-1]
    assert bundle[DOT].count("[label=") < 3 * reprs.DIAGRAM_MAX_NODES


def test_terminal_ipython_gets_text_only(monkeypatch):
    import IPython

    class TerminalInteractiveShell:
        pass

    monkeypatch.setattr(IPython, "get_ipython", lambda: TerminalInteractiveShell())
    _, _, z = seed()
    assert set(z._repr_mimebundle_()) == {PLAIN}
    assert DOT in z._repr_mimebundle_(include=[PLAIN, DOT])


@pytest.mark.skipif(shutil.which("dot") is None and not CAN_RENDER, reason="no renderer")
def test_hostile_names_in_the_bundle():
    x = st.dscalar("<script>alert(1)</script>")
    y = x + st.dscalar('a"b&amp;')
    bundle = y._repr_mimebundle_()
    texts = [t.text for t in ET.fromstring(bundle[SVG]).iter("{http://www.w3.org/2000/svg}text")]
    assert "<script>alert(1)</script>" in texts and 'a"b&amp;' in texts
    assert "<script>" not in bundle[SVG] and "href" not in bundle[SVG]


def test_real_compiled_function():
    import symlab
    from symlab.printing import pprint

    v = st.vector("v")
    f = symlab.function([v], (v + 1).sum())
    bundle = reprs.mimebundle(f, include=[PLAIN, DOT])
    assert bundle[PLAIN].splitlines()[0].startswith("Sum{acc_dtype=float64} [id A]")
    assert bundle[DOT].startswith("digraph")
    assert bundle[DOT] == reprs.mimebundle(f.maker.fgraph, include=[DOT])[DOT]  # its optimized graph, same keys
    assert pprint(f) == "sum((v + [1]))"  # the compiled graph broadcasts the constant itself


def test_a_trace_displays_unoptimized_and_optimized_side_by_side_with_its_counts():
    import symlab

    a = st.vector("a")
    f = symlab.function([a], a + a**10)
    trace = f.trace
    bundle = trace._repr_mimebundle_()
    dot = bundle[DOT]
    assert "cluster_u" in dot and "cluster_o" in dot and "unoptimized (step 0)" in dot
    assert "constant_folding: 1 applied" in dot and "inplace_elemwise: 0 applied, 1 refused" in dot
    assert "symlab.view(trace)" in dot
    assert bundle[PLAIN].startswith("RewriteTrace: 2 applied, 1 refused")
    if CAN_RENDER:
        root = ET.fromstring(bundle[SVG])
        ids = {g.get("id") for g in root.iter("{http://www.w3.org/2000/svg}g")
               if "apply" in (g.get("class") or "").split()}
        final = {"o_" + trace.key(n) for n in trace.fgraph.apply_nodes}
        start = {"u_" + trace.key(n) for n in trace._start_nodes}
        assert ids == final | start
