"""Bad inputs at every public entry point: a clear error, and nothing changed.

Each row of the tables below gives one public entry point a wrong type, dtype, ndim, shape, name or value,
and says what the error must be: its class, and three fragments of its message, the input it names, what
was expected and what was received (the message is ``str(err)`` and the PEP 678 notes symlab adds, which
is what a traceback shows). Around every call, :func:`snapshot` records the world the call could have
damaged: the structure of the user's graphs (``dprint``), a FunctionGraph's clients, keys and version,
a shared variable's value, the compiled functions' graphs, the Numba disk cache's listing, the dicts given
to the format converters and the state of the views; it must be the same after the error.

Compiled functions are called in every mode (NUMPY, FAST_COMPILE, NUMBA, DEBUG); they are compiled once for
the module (compiling in NUMBA takes seconds) and hold an update of a shared variable, so a refused call
that applied its update anyway would show. The number of bad inputs tried is written at the end of the run.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import traitlets

import symlab
import symlab.tensor as st
from symlab import formats
from symlab.formats import DagCycleError, DagFormatError
from symlab.gradient import DisconnectedInputError
from symlab.graph.basic import CycleError, MissingInputError
from symlab.graph.fg import FunctionGraph

MODES = ("NUMPY", "FAST_COMPILE", "NUMBA", "DEBUG")


@dataclass(frozen=True)
class Bad:
    """One bad input: ``call(world)`` must raise ``error`` whose message contains the three fragments."""

    id: str
    call: Callable[[SimpleNamespace], Any]
    error: type[BaseException]
    names: str  # the input the message names
    expected: str  # what it says was expected
    received: str  # what it says was received


# -- the world the bad inputs are given to -------------------------------------------------------------------
def make_world() -> SimpleNamespace:
    w = SimpleNamespace()
    w.x, w.y = st.dmatrix("x"), st.dmatrix("y")
    w.v, w.s, w.n = st.dvector("v"), st.dscalar("s"), st.iscalar("n")
    w.t3 = st.dtensor3("t3")
    w.v3 = st.tensor("float64", shape=(3,), name="v3")
    w.m23 = st.tensor("float64", shape=(2, 3), name="m23")
    w.cost = (w.x * 2).sum() + w.v.sum()
    w.shared = symlab.shared(np.arange(3.0), name="w")
    w.strict = symlab.shared(np.zeros(2), name="strict", strict=True)
    # a graph of its own (FunctionGraph clones its inputs): what replace, add_output and the views work on
    fx, fv = st.dmatrix("fx"), st.dvector("fv")
    w.fg = FunctionGraph([fx, fv], [st.exp(fx).sum() + fv.sum()])
    # the same function in every mode: two outputs and an update of the shared variable
    w.f = {mode: symlab.function([w.x, w.y, w.n, w.v3], [(w.x + w.y) * w.n, w.v3.sum()],
                                 updates=[(w.shared, w.shared + 1.0)], mode=mode) for mode in MODES}
    assert w.f["NUMBA"].tier == "machine code"  # the Numba kernels answer the calls, not the NumPy tier
    for f in w.f.values():  # a first good call (a compiled function may finish loading on it), then undo its update
        f(np.ones((2, 2)), np.ones((2, 2)), 2, np.ones(3))
    w.shared.set_value(np.arange(3.0))
    from symlab.notebook import ClientsInspector, GraphView, RewriteStepper, ValuesView

    w.view = GraphView(w.fg)
    w.view.select(w.fg.inputs[0])
    a = st.dvector("a")
    w.stepper = RewriteStepper(a + a**10)
    w.stepper.step = 1
    w.inspector = ClientsInspector(w.fg)
    w.values = ValuesView(st.tanh(w.s * 2.0), {w.s: 1.0}, wrt=[w.s])
    # dicts given to the format converters (checked unchanged: converters never modify what they are given)
    w.dags = {
        "cycle": {("b",): {"fn": "f", "args": ("c",)}, ("c",): {"fn": "g", "args": ("b",)}},
        "entry": {("b",): "f"},
        "no args": {("b",): {"fn": "f"}},
        "key": {"b": {"fn": "f", "args": ("a",)}},
        "missing": {("b",): {"fn": "f", "args": ("z",)}},
        "ok": {("b",): {"fn": "f", "args": ("a",)}},
        "index": {"c": {"fn": formats.index, "args": ("x",)}},
        "unidag": {"b": "c"},
        "jobs": {"b": {"fn": "f", "args": ("a",)}},
    }
    d = st.dvector("d")
    w.dag, w.dag_inputs, w.dag_outputs = formats.fgraph_to_dag(FunctionGraph([d], [st.exp(d)]))
    return w


def cache_listing() -> list[tuple[str, int]]:
    """Every file of the Numba disk cache (the session's own, see tests/conftest.py) with its size."""
    from symlab.compile.numba.cache import cache_dir

    root = cache_dir()
    if not root.exists():
        return []
    return sorted((str(p.relative_to(root)), p.stat().st_size) for p in Path(root).rglob("*") if p.is_file())


def fgraph_state(fg: FunctionGraph) -> tuple[Any, ...]:
    """A FunctionGraph's structure by stable keys: its text, version, inputs, outputs and every clients list."""
    key = fg.key
    clients = {key(v): sorted((c if c == "output" else key(c), i) for c, i in uses) for v, uses in fg.clients.items()}
    return (symlab.dprint(fg, file="str"), fg.version, [key(v) for v in fg.inputs], [key(v) for v in fg.outputs],
            clients)


def snapshot(w: SimpleNamespace) -> dict[str, Any]:
    """Everything a bad input could have changed."""
    return {
        "graphs": symlab.dprint([w.cost, w.x + w.y], file="str"),
        "names": [v.name for v in (w.x, w.y, w.v, w.s, w.n, w.t3, w.v3, w.m23, w.shared)],
        "fgraph": fgraph_state(w.fg),
        "shared": (w.shared.get_value().tolist(), str(w.shared.get_value().dtype), w.strict.get_value().tolist()),
        "functions": {mode: symlab.dprint(f, file="str") for mode, f in w.f.items()},
        "cache": cache_listing(),
        "dags": copy.deepcopy(w.dags),
        "dag": (repr(w.dag), w.dag_inputs, w.dag_outputs),
        "views": (w.view.selected_key, w.view.drawn, w.view.style, w.stepper.step, w.stepper.drawn,
                  w.inspector.selected_key, w.inspector.drawn, w.values.drawn, w.values.text("s")),
    }


@pytest.fixture(scope="module")
def world(request):
    w = make_world()
    w.tried = 0
    yield w
    # the count, on the terminal (pytest captures what a fixture prints; the capture is lifted for this line)
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line(f"\ntests/whole/test_bad_inputs.py: {w.tried} bad inputs tried")


# -- the tables -------------------------------------------------------------------------------------------------
TENSOR_FLOAT = "expected a tensor Variable or a numeric value"
CONSTRUCTORS = [
    Bad("tensor-unknown-dtype", lambda w: st.tensor("float99", shape=(None,)), TypeError,
        "dtype", "supported dtypes are bool, int8", "'float99'"),
    Bad("tensor-object-dtype", lambda w: st.TensorType(object, (None,)), TypeError,
        "dtype", "supported dtypes are", "'object'"),
    Bad("tensor-shape-str", lambda w: st.tensor("float64", shape="ab"), TypeError,
        "shape entries", "non-negative ints or None", "received 'a' in 'ab'"),
    Bad("tensor-shape-negative", lambda w: st.tensor("float64", shape=(-2,)), TypeError,
        "shape entries", "non-negative ints or None", "received -2"),
    Bad("tensor-shape-float", lambda w: st.tensor("float64", shape=(2.5,)), TypeError,
        "shape entries", "non-negative ints or None", "received 2.5"),
    Bad("tensor-without-shape", lambda w: st.tensor("float64"), TypeError,
        "tensor", "give the static shape, e.g. shape=(None, 3)", "give the static shape"),
    Bad("matrix-shape-of-one-entry", lambda w: st.matrix("m", shape=(2,)), ValueError,
        "matrix: shape", "must have 2 entries", "received (2,)"),
    Bad("matrix-unknown-dtype", lambda w: st.matrix("m", dtype="foo"), TypeError,
        "dtype", "supported dtypes are", "'foo'"),
    Bad("dmatrix-name-int", lambda w: st.dmatrix(5), TypeError,
        "Variable(name=...)", "a str or None", "received int"),
    Bad("variable-name-set-to-int", lambda w: setattr(w.x, "name", 5), TypeError,
        "TensorVariable.name", "a str or None", "received int 5"),
    Bad("variable-name-set-to-list", lambda w: setattr(w.v, "name", ["v"]), TypeError,
        "TensorVariable.name", "a str or None", "received list ['v']"),
    Bad("as-tensor-str", lambda w: st.as_tensor_variable("abc"), TypeError,
        "as_tensor_variable", TENSOR_FLOAT, "received str 'abc'"),
    Bad("as-tensor-ragged-list", lambda w: st.as_tensor_variable([[1], [1, 2]]), TypeError,
        "as_tensor_variable", TENSOR_FLOAT, "received list [[1], [1, 2]]"),
    Bad("cast-unknown-dtype", lambda w: st.cast(w.x, "float99"), TypeError,
        "dtype", "supported dtypes are", "'float99'"),
    Bad("zeros-shape-str", lambda w: st.zeros("ab"), TypeError,
        "alloc: the shape", "a tuple of ints or an int vector", "received 'ab'"),
    Bad("alloc-size-str", lambda w: st.alloc(1.0, "a"), TypeError,
        "Alloc: input size 0", TENSOR_FLOAT, "received str 'a'"),
    Bad("eye-size-str", lambda w: st.eye("a"), TypeError,
        "input size 0", TENSOR_FLOAT, "received str 'a'"),
    Bad("arange-stop-str", lambda w: st.arange("a"), TypeError,
        "arange: input stop", TENSOR_FLOAT, "received str 'a'"),
    Bad("shared-of-object", lambda w: symlab.shared(object()), TypeError,
        "shared", "expected a numeric value", "object"),
    Bad("shared-of-str", lambda w: symlab.shared("abc"), TypeError,
        "shared", "expected a numeric value", "'abc'"),
    Bad("shared-of-variable", lambda w: symlab.shared(w.x), TypeError,
        "shared", "expected a value (an array or a number)", "the symbolic variable x"),
    Bad("shared-name-int", lambda w: symlab.shared(np.zeros(2), name=5), TypeError,
        "name", "a str or None", "received int"),
]

OPS = [
    Bad("dot-3d-and-str", lambda w: st.dot(w.t3, "abc"), TypeError,
        "dot: input b", TENSOR_FLOAT, "received str 'abc'"),
    Bad("dot-3d-inner-sizes", lambda w: st.dot(st.tensor("float64", shape=(4, 2, 3), name="t423"), w.m23), ValueError,
        "summed axis 2 of t423", "has size 3", "axis 0 of m23 (TensorType(float64, (2, 3))) has 2"),
    Bad("dot-inner-sizes", lambda w: st.dot(w.m23, w.m23), ValueError,
        "m23", "inner dimensions do not match", "has 3 columns"),
    Bad("add-str", lambda w: w.x + "abc", TypeError,
        "Elemwise{add,no_inplace}: input 1", TENSOR_FLOAT, "received str 'abc'"),
    Bad("mul-none", lambda w: w.x * None, TypeError,
        "Elemwise{mul,no_inplace}: input 1", TENSOR_FLOAT, "received NoneType None"),
    Bad("exp-of-object", lambda w: st.exp(object()), TypeError,
        "Elemwise{exp,no_inplace}: input 0", TENSOR_FLOAT, "received object <object object"),
    Bad("sum-axis-5", lambda w: st.sum(w.x, axis=5), ValueError,
        "sum: axis 5", "out of range for a tensor of 2 dimensions", "axis 5"),
    Bad("sum-axis-str", lambda w: st.sum(w.x, axis="a"), TypeError,
        "sum: axis", "must be an int", "received 'a'"),
    Bad("sum-of-str", lambda w: st.sum("abc"), TypeError,
        "sum: input x", TENSOR_FLOAT, "received str 'abc'"),
    Bad("sum-repeated-axis", lambda w: st.sum(w.x, axis=(0, 0)), ValueError,
        "sum: repeated axis", "repeated axis", "(0, 0)"),
    Bad("mean-axis-negative", lambda w: st.mean(w.x, axis=-3), ValueError,
        "mean: axis -3", "out of range for a tensor of 2 dimensions", "-3"),
    Bad("argmax-axis", lambda w: st.argmax(w.x, axis=2), ValueError,
        "argmax: axis 2", "out of range for a tensor of 2 dimensions", "axis 2"),
    Bad("softmax-axis", lambda w: st.softmax(w.v, axis=3), ValueError,
        "softmax: axis 3", "out of range for a tensor of 1 dimensions", "axis 3"),
    Bad("reshape-wrong-size", lambda w: st.reshape(w.m23, (4, 2)), ValueError,
        "m23", "6 elements", "to (4, 2)"),
    Bad("reshape-two-minus-ones", lambda w: st.reshape(w.x, (-1, -1)), ValueError,
        "for x", "sizes are >= 0, with at most one -1", "(-1, -1)"),
    Bad("reshape-to-str", lambda w: st.reshape(w.x, "ab"), TypeError,
        "reshape: the shape", "a tuple of ints or an int vector", "received 'ab'"),
    Bad("index-out-of-range", lambda w: w.v3[5], IndexError,
        "dimension 0 of v3", "of size 3", "index 5"),
    Bad("index-too-many", lambda w: w.v[0, 1], IndexError,
        "v (TensorType(float64, (?,)))", "but it has 1", "2 dimensions are indexed"),
    Bad("index-float", lambda w: w.v[1.5], TypeError,
        "cannot index v", "indices must be integers, slices", "float 1.5"),
    Bad("index-str", lambda w: w.v["a"], TypeError,
        "cannot index v", "indices must be integers, slices", "str 'a'"),
    Bad("concatenate-mismatched-ndim", lambda w: st.concatenate([w.x, w.v]), TypeError,
        "input 1 (v)", "the same number of dimensions", "has 1"),
    Bad("concatenate-axis", lambda w: st.concatenate([w.x, w.x], axis=3), ValueError,
        "concatenate: axis 3", "out of range for a tensor of 2 dimensions", "axis 3"),
    Bad("concatenate-str", lambda w: st.concatenate([w.x, "a"]), TypeError,
        "concatenate: input 1", TENSOR_FLOAT, "received str 'a'"),
    Bad("stack-mismatched-ndim", lambda w: st.stack([w.x, w.v]), ValueError,
        "tensor 1 (v)", "the same number of dimensions", "has 1"),
    Bad("split-axis", lambda w: st.split(w.v, [1, 2], axis=1), ValueError,
        "split: axis 1", "out of range for a tensor of 1 dimensions", "axis 1"),
    Bad("transpose-axes", lambda w: st.transpose(w.x, (0, 2)), ValueError,
        "transpose: axis 2", "out of range for a tensor of 2 dimensions", "axis 2"),
    Bad("dimshuffle-axis", lambda w: w.x.dimshuffle(0, 1, 2), ValueError,
        "DimShuffle: pattern entries", "'x' or axes 0..1", "received 2 in (0, 1, 2)"),
    Bad("dimshuffle-drop", lambda w: w.x.dimshuffle("x", 0), ValueError,
        "dimension 1 of x", "only dimensions of static size 1 can be dropped", "TensorType(float64, (?, ?))"),
    Bad("squeeze-unknown-size", lambda w: st.squeeze(w.x, axis=0), ValueError,
        "dimension 0 of x", "not 1", "its static size is unknown"),
    Bad("expand-dims-axis", lambda w: st.expand_dims(w.x, 5), ValueError,
        "expand_dims: axis 5", "out of range for a tensor of 3 dimensions", "axis 5"),
    Bad("matmul-0d", lambda w: st.matmul(w.s, w.x), ValueError,
        "the first input s", "needs at least 1 dimension", "is 0-d"),
    Bad("outer-matrix", lambda w: st.outer(w.x, w.x), TypeError,
        "the first input x", "must be a vector", "has 2 dimensions"),
    Bad("tensordot-axes", lambda w: st.tensordot(w.x, w.x, axes=5), ValueError,
        "x (TensorType(float64, (?, ?)))", "tensordot: cannot sum over", "5 axes"),
    Bad("specify-shape-length", lambda w: st.specify_shape(w.x, (1, 2, 3)), ValueError,
        "x has 2 dimensions", "SpecifyShape", "3 sizes were given"),
    Bad("flatten-ndim", lambda w: st.flatten(w.x, ndim=5), ValueError,
        "ndim", "between 1 and 2", "received 5"),
    Bad("eval-missing-input", lambda w: (w.x + 1).eval({}), MissingInputError,
        "input x", "needs a value", "which was not given"),
    Bad("eval-wrong-ndim", lambda w: (w.x + 1).eval({w.x: np.ones(3)}), TypeError,
        "input x", "expected TensorType(float64, (?, ?))", "shape (3,)"),
    Bad("eval-wrong-dtype", lambda w: (w.x + 1).eval({w.x: np.ones((2, 2), dtype=complex)}), TypeError,
        "input x", "expected TensorType(float64, (?, ?))", "dtype complex128"),
    Bad("eval-str", lambda w: (w.x + 1).eval({w.x: "abc"}), TypeError,
        "input x", "expected TensorType(float64, (?, ?))", "str 'abc'"),
]

GRADIENTS = [
    Bad("grad-wrt-not-in-graph", lambda w: symlab.grad(w.cost, w.s), DisconnectedInputError,
        "s (wrt input 0)", "disconnected_inputs='ignore'", "does not depend on s"),
    Bad("grad-cost-not-scalar", lambda w: symlab.grad(w.x * 2, w.x), TypeError,
        "grad: cost", "must be a scalar (0-d)", "TensorType(float64, (?, ?))"),
    Bad("grad-cost-str", lambda w: symlab.grad("abc", w.x), TypeError,
        "grad: cost", "must be a Variable", "received str"),
    Bad("grad-wrt-str", lambda w: symlab.grad(w.cost, [w.x, "y"]), TypeError,
        "wrt[1]", "must be a Variable", "received str"),
    Bad("grad-known-grads-str", lambda w: symlab.grad(None, w.x, known_grads={w.x: "a"}), TypeError,
        "known_grads[x]", TENSOR_FLOAT, "received str 'a'"),
    Bad("grad-known-grads-ndim", lambda w: symlab.grad(None, w.x, known_grads={w.x: np.ones(3)}), ValueError,
        "known gradient of x", "expected 2", "has 1 dimensions"),
    Bad("grad-disconnected-option", lambda w: symlab.grad(w.cost, w.x, disconnected_inputs="nope"), ValueError,
        "disconnected_inputs", "'raise', 'warn' or 'ignore'", "received 'nope'"),
    Bad("jacobian-of-a-list", lambda w: symlab.tensor.jacobian([1.0, 2.0], w.x), TypeError,
        "jacobian: expression", "a tensor variable", "received [1.0, 2.0]"),
]

FGRAPHS = [
    Bad("replace-type-mismatch", lambda w: w.fg.replace(w.fg.inputs[0], st.dvector("z")), TypeError,
        "cannot replace fx", "TensorType(float64, (?, ?))", "by z (TensorType(float64, (?,)))"),
    Bad("replace-dtype-mismatch", lambda w: w.fg.replace(w.fg.inputs[0], st.fmatrix("f32")), TypeError,
        "cannot replace fx", "TensorType(float64, (?, ?))", "by f32 (TensorType(float32, (?, ?)))"),
    Bad("replace-variable-not-in-graph", lambda w: w.fg.replace(st.dmatrix("q"), st.dmatrix("r")), ValueError,
        "replace: q", "a variable of this graph", "q is not"),
    Bad("replace-by-str", lambda w: w.fg.replace(w.fg.inputs[0], "abc"), TypeError,
        "replacement for fx", "must be a Variable", "received str"),
    Bad("replace-a-name", lambda w: w.fg.replace("fx", st.dmatrix("r")), TypeError,
        "replace: var", "a Variable of this graph", "received str 'fx'"),
    Bad("replace-a-list", lambda w: w.fg.replace([w.fg.inputs[0]], st.dmatrix("r")), TypeError,
        "replace: var", "a Variable of this graph", "received list [fx]"),
    Bad("replace-by-its-own-client", lambda w: w.fg.replace(w.fg.inputs[1], w.fg.inputs[1] * 2.0), CycleError,
        "the replacement of fv", "depends on fv itself", "Elemwise{mul,no_inplace}.0"),
    Bad("add-output-str", lambda w: w.fg.add_output("abc"), TypeError,
        "add_output: var", "must be a Variable", "received str"),
    Bad("add-output-foreign", lambda w: w.fg.add_output(st.dvector("elsewhere") * 2), MissingInputError,
        "needs elsewhere", "neither an input, a constant nor computed in the graph", "elsewhere"),
    Bad("remove-output-index", lambda w: w.fg.remove_output(5), IndexError,
        "remove_output: output_idx", "an int in [-1, 1)", "received 5"),
    Bad("fgraph-key-foreign", lambda w: w.fg.key(st.dmatrix("q")), KeyError,
        "FunctionGraph.key: q", "not in this graph", "(TensorVariable)"),
    Bad("fgraph-by-key-unknown", lambda w: w.fg.by_key("zz"), KeyError,
        "FunctionGraph.by_key", "no node or variable of this graph has the key", "'zz'"),
    Bad("fgraph-inputs-twice", lambda w: FunctionGraph([w.x, w.x], [w.x + 1]), ValueError,
        "FunctionGraph", "the same variable appears twice among the inputs", "twice"),
    Bad("fgraph-output-str", lambda w: FunctionGraph([w.x], ["a"]), TypeError,
        "outputs[0]", "must be a Variable", "received str"),
    Bad("fgraph-missing-input", lambda w: FunctionGraph([w.x], [w.x.sum() + w.v.sum()], clone=False),
        MissingInputError, "needs v", "neither an input, a constant nor computed", "TensorType(float64, (?,))"),
]

SHARED = [
    Bad("set-value-complex", lambda w: w.shared.set_value(np.zeros(3, dtype=complex)), TypeError,
        "shared variable w", "TensorType(float64, (?,))", "dtype complex128"),
    Bad("set-value-ndim", lambda w: w.shared.set_value(np.zeros((3, 3))), TypeError,
        "shared variable w", "expected 1 dimension", "received 2"),
    Bad("set-value-str", lambda w: w.shared.set_value("abc"), TypeError,
        "shared variable w", "expected a numeric value", "'abc'"),
    Bad("set-value-none", lambda w: w.shared.set_value(None), TypeError,
        "shared variable w", "expected a numeric value", "None"),
    Bad("set-value-strict-list", lambda w: w.strict.set_value([1.0, 2.0]), TypeError,
        "shared variable strict", "a NumPy array of dtype float64 (strict)", "received list"),
    Bad("set-value-strict-dtype", lambda w: w.strict.set_value(np.zeros(2, dtype="float32")), TypeError,
        "shared variable strict", "dtype float64 (strict)", "received dtype float32"),
]

FORMATS = [
    Bad("tuple-dag-not-a-dict", lambda w: formats.tuple_dag_to_dag([1, 2], ("a",), ("c",)), DagFormatError,
        "tuple-dag", "expected a dict", "received list"),
    Bad("tuple-dag-entry-not-a-dict", lambda w: formats.tuple_dag_to_dag(w.dags["entry"], ("a",), ("b",)),
        DagFormatError, "the entry of (b,)", "must be a dict {'fn': ..., 'args': (...)}", "received 'f'"),
    Bad("tuple-dag-entry-without-args", lambda w: formats.tuple_dag_to_dag(w.dags["no args"], ("a",), ("b",)),
        DagFormatError, "the entry of (b,)", "'args': (...)", "received {'fn': 'f'}"),
    Bad("tuple-dag-key-not-a-tuple", lambda w: formats.tuple_dag_to_dag(w.dags["key"], ("a",), ("b",)),
        DagFormatError, "the key b", "keyed by the tuple of its outputs", "is not a tuple"),
    Bad("tuple-dag-unknown-argument", lambda w: formats.tuple_dag_to_dag(w.dags["missing"], ("a",), ("b",)),
        DagFormatError, "the argument z of (b,)", "an input", "no entry computes it"),
    Bad("tuple-dag-cycle", lambda w: formats.tuple_dag_to_dag(w.dags["cycle"], ("a",), ("b",)), DagCycleError,
        "(b,), (c,)", "cycle", "(b,) needs (c,), which needs (b,)"),
    Bad("tuple-dag-unknown-output", lambda w: formats.tuple_dag_to_dag(w.dags["ok"], ("a",), ("q",)),
        DagFormatError, "the output q", "an input", "no entry computes it"),
    Bad("tuple-dag-inputs-str", lambda w: formats.tuple_dag_to_dag(w.dags["ok"], "a", ("b",)), DagFormatError,
        "inputs", "a tuple of variables", "received str"),
    Bad("index-dag-bad-args", lambda w: formats.index_dag_to_dag(w.dags["index"], ("a",), ("c",)), DagFormatError,
        "the index entry of c", "((outputs...), position)", "received ('x',)"),
    Bad("unidag-successors-str", lambda w: formats.unidag_to_dag(w.dags["unidag"], w.dags["jobs"], ("a",), ("b",)),
        DagFormatError, "the successors of b", "a tuple of jobs", "received str"),
    Bad("unidag-jobs-missing", lambda w: formats.unidag_to_dag({"b": ("c",)}, {}, ("a",), ("c",)), DagFormatError,
        "the jobs b, c", "in the job table", "have no entry"),
    Bad("dag-fn-not-an-op", lambda w: formats.dag_to_fgraph(
        {k: {**e, "fn": "notanop"} for k, e in w.dag.items()}, w.dag_inputs, w.dag_outputs),
        DagFormatError, "the 'fn' of", "a symlab Op", "'notanop' (str)"),
    Bad("dag-to-fgraph-input-str", lambda w: formats.tuple_dag_to_fgraph({}, ("a",), ("a",)), DagFormatError,
        "input 0 (a)", "a symlab Variable that is not a Constant", "(a)"),
    Bad("fgraph-to-dag-of-str", lambda w: formats.fgraph_to_dag("abc"), TypeError,
        "fgraph_to_dag", "a FunctionGraph or a compiled symlab function", "received str 'abc'"),
]

VIEWS = [
    Bad("view-select-unknown-name", lambda w: w.view.select("nope"), ValueError,
        "GraphView.select", "a key of its picture", "'nope'"),
    Bad("view-select-unknown-key", lambda w: w.view.select("a999"), ValueError,
        "GraphView.select", "an object of the graph", "'a999'"),
    Bad("view-select-foreign-variable", lambda w: w.view.select(st.dvector("z")), ValueError,
        "GraphView", "part of the graph this view shows", "z (TensorVariable)"),
    Bad("view-select-int", lambda w: w.view.select(5), ValueError,
        "GraphView", "part of the graph this view shows", "5 (int)"),
    Bad("view-style", lambda w: setattr(w.view, "style", "fancy"), ValueError,
        "GraphView.style", "'structure' or 'compact'", "received 'fancy'"),
    Bad("view-move", lambda w: w.view.move("sideways"), ValueError,
        "GraphView.move: direction", "one of ('up', 'down', 'left', 'right')", "received 'sideways'"),
    Bad("view-expand-unknown-group", lambda w: w.view.expand("g99"), ValueError,
        "GraphView.expand", "a folded group of the picture", "'g99'"),
    Bad("view-of-int", lambda w: symlab.view(5), TypeError,
        "GraphView", "a Variable, an Apply node", "received int"),
    Bad("view-max-nodes", lambda w: symlab.view(w.fg, max_nodes="a"), ValueError,
        "max_nodes", "a positive int", "received 'a'"),
    Bad("stepper-step-too-far", lambda w: setattr(w.stepper, "step", 99), traitlets.TraitError,
        "RewriteStepper.step", "in 0..3", "received 99"),
    Bad("stepper-step-negative", lambda w: setattr(w.stepper, "step", -1), traitlets.TraitError,
        "RewriteStepper.step", "in 0..3", "received -1"),
    Bad("stepper-step-str", lambda w: setattr(w.stepper, "step", "a"), traitlets.TraitError,
        "'step' trait", "expected an int", "the str 'a'"),
    Bad("stepper-find-int", lambda w: w.stepper.find(5), TypeError,
        "RewriteStepper.find: rule", "a rule's name (str)", "received int"),
    Bad("stepper-why-not-foreign", lambda w: w.stepper.why_not(st.dvector("q")), ValueError,
        "RewriteStepper.why_not: q", "a node of this rewrite", "q is not"),
    Bad("stepper-of-str", lambda w: symlab.notebook.RewriteStepper("abc"), TypeError,
        "RewriteStepper", "a compiled Function, a RewriteTrace", "received str"),
    Bad("inspector-select-unknown-name", lambda w: w.inspector.select("nope"), ValueError,
        "ClientsInspector.select", "no variable of this graph is named", "'nope'"),
    Bad("inspector-search-int", lambda w: w.inspector.search(5), TypeError,
        "ClientsInspector.search: text", "must be a str", "received int"),
    Bad("inspector-of-variable", lambda w: symlab.notebook.ClientsInspector(w.x), TypeError,
        "ClientsInspector", "a FunctionGraph or a compiled Function", "received TensorVariable"),
    Bad("values-set-str", lambda w: w.values.set("s", "abc"), TypeError,
        "input s", "expected TensorType(float64, ())", "received str 'abc'"),
    Bad("values-set-array", lambda w: w.values.set("s", np.ones(3)), TypeError,
        "input s", "expected TensorType(float64, ())", "shape (3,)"),
    Bad("values-set-complex", lambda w: w.values.set(w.s, 1j), TypeError,
        "input s", "expected TensorType(float64, ())", "received complex 1j"),
    Bad("values-set-unknown-input", lambda w: w.values.set("nope", 1.0), ValueError,
        "ValuesView.set", "its inputs are s", "no input named 'nope'"),
    Bad("values-select-unknown", lambda w: w.values.select("nope"), ValueError,
        "ValuesView.select", "no variable of this graph is named", "'nope'"),
    Bad("values-missing-input", lambda w: symlab.notebook.ValuesView(st.tanh(w.s), {}), ValueError,
        "s (TensorType(float64, ()))", "every input of the graph needs one", "received values for: none"),
    Bad("values-wrt-foreign", lambda w: symlab.notebook.ValuesView(st.tanh(w.s), {w.s: 1.0}, wrt=[w.x]), ValueError,
        "wrt x", "expected one of its inputs (s)", "is not a variable of this graph"),
]

# symlab.function: built in every mode (each mode is one bad input tried).
FUNCTION_BUILDS = [
    Bad("function-output-int", lambda w, m: symlab.function([w.x], 5, mode=m), TypeError,
        "function: outputs", "a Variable, a list or a dict of them", "received int"),
    Bad("function-input-name", lambda w, m: symlab.function(["x"], w.x + 1, mode=m), TypeError,
        "input 0", "a symbolic Variable or an In", "received str ('x')"),
    Bad("function-input-constant", lambda w, m: symlab.function([st.constant(1.0)], w.x + 1, mode=m), TypeError,
        "input 0 (TensorConstant{1.0})", "remove it from the inputs", "is a Constant"),
    Bad("function-missing-input", lambda w, m: symlab.function([w.x], w.x + w.y, mode=m), MissingInputError,
        "needs y", "among the inputs ['x']", "not among the inputs"),
    Bad("function-input-twice", lambda w, m: symlab.function([w.x, w.x], w.x + 1, mode=m), ValueError,
        "input 1 (x)", "the same variable as input 0", "input 1 (x)"),
    Bad("function-inputs-not-a-list", lambda w, m: symlab.function(w.x, w.x + 1, mode=m), TypeError,
        "function: inputs", "a list of variables", "received a single TensorVariable"),
    Bad("function-update-wrong-type", lambda w, m: symlab.function([w.x], w.cost, updates=[(w.shared, w.x)], mode=m),
        TypeError, "the new value of w", "TensorType(float64, (?,))", "x of type TensorType(float64, (?, ?))"),
    Bad("function-update-wrong-dtype",
        lambda w, m: symlab.function([w.v], w.cost, updates=[(w.shared, st.ivector("iv"))], mode=m),
        TypeError, "the new value of w", "TensorType(float64, (?,))", "iv of type TensorType(int32, (?,))"),
    Bad("function-update-not-shared", lambda w, m: symlab.function([w.v], w.v.sum(), updates=[(w.v, w.v + 1)],
                                                                     mode=m),
        TypeError, "update 0", "only shared variables can be updated", "received v (TensorVariable)"),
    Bad("function-updates-not-pairs", lambda w, m: symlab.function([w.x], w.cost, updates=[w.shared], mode=m),
        TypeError, "function: updates", "a dict or a list of (variable, value) pairs", "received list"),
    Bad("function-update-key-name", lambda w, m: symlab.function([w.x], w.cost, updates={"w": w.shared + 1},
                                                                  mode=m),
        TypeError, "update 0", "only shared variables can be updated", "received 'w' (str)"),
    Bad("function-givens-wrong-type", lambda w, m: symlab.function([w.v], w.x.sum(), givens={w.x: w.v}, mode=m),
        TypeError, "givens entry 0", "cannot replace x (TensorType(float64, (?, ?)))", "v cannot replace"),
    Bad("function-givens-str-value", lambda w, m: symlab.function([w.v], w.x.sum(), givens={w.x: "abc"}, mode=m),
        TypeError, "givens entry 0", TENSOR_FLOAT, "received str 'abc'"),
    Bad("function-givens-key-name", lambda w, m: symlab.function([w.x], w.x.sum(), givens={"x": w.x}, mode=m),
        TypeError, "givens entry 0: the key", "a non-constant Variable", "received 'x'"),
    Bad("function-unknown-mode", lambda w, m: symlab.function([w.x], w.x + 1, mode=m + "_NOPE"), ValueError,
        "mode", "the modes are ['NUMBA'", "_NOPE'"),
    Bad("function-unknown-keyword", lambda w, m: symlab.function([w.x], w.x + 1, mode=m, bogus=1), TypeError,
        "function()", "unexpected keyword argument", "'bogus'"),
]

# calling the compiled function f(x, y, n, v3) = [(x + y) * n, v3.sum()] with bad values, in every mode
X, V3 = np.ones((2, 2)), np.ones(3)
FUNCTION_CALLS = [
    Bad("call-too-few", lambda f: f(X), TypeError, "input 1 ('y')", "missing a value", "missing a value"),
    Bad("call-too-many", lambda f: f(X, X, 2, V3, 5), TypeError,
        "function", "takes 4 inputs (x, y, n, v3)", "received 5 values"),
    Bad("call-unknown-keyword", lambda f: f(X, X, 2, V3, bogus=1), TypeError,
        "'bogus'", "the named inputs are ['n', 'v3', 'x', 'y']", "no input is named 'bogus'"),
    Bad("call-given-twice", lambda f: f(X, X, 2, V3, x=X), TypeError,
        "input 0 ('x')", "by position and by name", "was given twice"),
    Bad("call-str", lambda f: f("abc", X, 2, V3), TypeError,
        "input 0 ('x')", "expected TensorType(float64, (?, ?))", "str ('abc')"),
    Bad("call-none", lambda f: f(X, None, 2, V3), TypeError,
        "input 1 ('y')", "expected TensorType(float64, (?, ?))", "NoneType (None)"),
    Bad("call-wrong-ndim", lambda f: f(np.ones(3), X, 2, V3), TypeError,
        "input 0 ('x')", "expected 2 dimensions", "ndim 1 and shape (3,)"),
    Bad("call-complex-for-float", lambda f: f(X.astype(complex), X, 2, V3), TypeError,
        "input 0 ('x')", "expected TensorType(float64, (?, ?))", "dtype complex128"),
    Bad("call-float-for-int", lambda f: f(X, X, 2.5, V3), TypeError,
        "input 2 ('n')", "expected TensorType(int32, ())", "cannot store 2.5 accurately"),
    Bad("call-int-overflow", lambda f: f(X, X, 2**40, V3), TypeError,
        "input 2 ('n')", "expected TensorType(int32, ())", "cannot store 1099511627776 accurately"),
    Bad("call-nan-for-int", lambda f: f(X, X, float("nan"), V3), TypeError,
        "input 2 ('n')", "expected TensorType(int32, ())", "cannot store nan accurately"),
    Bad("call-static-shape", lambda f: f(X, X, 2, np.ones(4)), TypeError,
        "input 3 ('v3')", "expected static shape (3,)", "shape (4,)"),
    Bad("call-ragged-list", lambda f: f([[1.0], [1.0, 2.0]], X, 2, V3), TypeError,
        "input 0 ('x')", "expected TensorType(float64, (?, ?))", "[[1.0], [1.0, 2.0]]"),
    Bad("call-object", lambda f: f(object(), X, 2, V3), TypeError,
        "input 0 ('x')", "expected a numeric value", "object"),
    # the sizes only meet while computing: the error says which node, and its notes the values of the call
    Bad("call-shapes-do-not-match", lambda f: f(X, np.ones((3, 3)), 2, V3), ValueError,
        "x", "do not match in dimension 0", "shape (3, 3)"),
]


def check(world: SimpleNamespace, bad: Bad, call: Callable[[], Any]) -> None:
    """``call`` raises ``bad.error`` saying the input, the expected and the received, and changes nothing."""
    before = snapshot(world)
    world.tried += 1
    with pytest.raises(bad.error) as info:
        call()
    message = str(info.value) + "\n" + "\n".join(getattr(info.value, "__notes__", ()))
    if isinstance(info.value, KeyError):  # str() of a KeyError is the repr of its argument
        message = str(info.value.args[0])
    assert bad.names in message, f"the message does not name the input ({bad.names!r}): {message}"
    assert bad.expected in message, f"the message does not say what was expected ({bad.expected!r}): {message}"
    assert bad.received in message, f"the message does not say what was received ({bad.received!r}): {message}"
    after = snapshot(world)
    for part, value in before.items():
        assert after[part] == value, f"the bad input changed {part}"


TABLE = CONSTRUCTORS + OPS + GRADIENTS + FGRAPHS + SHARED + FORMATS + VIEWS


@pytest.mark.parametrize("bad", TABLE, ids=[b.id for b in TABLE])
def test_a_bad_input_is_named_and_changes_nothing(world, bad):
    check(world, bad, lambda: bad.call(world))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bad", FUNCTION_BUILDS, ids=[b.id for b in FUNCTION_BUILDS])
def test_a_bad_function_definition_is_named_and_changes_nothing(world, bad, mode):
    check(world, bad, lambda: bad.call(world, mode))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bad", FUNCTION_CALLS, ids=[b.id for b in FUNCTION_CALLS])
def test_a_bad_call_is_named_and_changes_nothing(world, bad, mode):
    # the update of w is not applied by a refused call, nor by one that failed while computing
    check(world, bad, lambda: bad.call(world.f[mode]))


@pytest.mark.parametrize("mode", ["NUMPY"])
def test_a_function_name_that_is_not_a_str_is_refused(world, mode):
    bad = Bad("function-name-int", None, TypeError, "name", "a str or None", "received int")
    check(world, bad, lambda: symlab.function([world.x], world.x + 1, mode=mode, name=5))


def test_the_functions_still_work_after_every_bad_call(world):
    # the bad calls left no half-set input behind: a good call gives the right values and applies the update
    for f in world.f.values():
        before = world.shared.get_value()
        total, v3_sum = f(X, X, 3, V3)
        np.testing.assert_array_equal(total, np.full((2, 2), 6.0))
        assert float(v3_sum) == 3.0
        np.testing.assert_array_equal(world.shared.get_value(), before + 1.0)


def test_the_sweep_is_wide():
    # every entry point family is covered, each mode of symlab.function too
    families = [CONSTRUCTORS, OPS, GRADIENTS, FGRAPHS, SHARED, FORMATS, VIEWS, FUNCTION_BUILDS, FUNCTION_CALLS]
    assert all(len(family) >= 5 for family in families)
    total = len(TABLE) + len(MODES) * (len(FUNCTION_BUILDS) + len(FUNCTION_CALLS))
    assert total >= 200, total
    assert len({b.id for b in TABLE + FUNCTION_BUILDS + FUNCTION_CALLS}) == len(TABLE + FUNCTION_BUILDS + FUNCTION_CALLS)


def test_the_cache_directory_is_the_sessions_own():
    # the cache checked above is the test session's (tests/conftest.py), never the user's ~/.cache/symlab
    from symlab.compile.numba.cache import cache_dir

    assert str(cache_dir()) == os.environ["SYMLAB_CACHE_DIR"] and "symlab-test-cache-" in str(cache_dir())
