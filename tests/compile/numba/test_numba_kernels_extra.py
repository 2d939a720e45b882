"""Numba kernels of indexing, join/split, alloc/arange/eye, softmax and argmax/argmin/ReducedSize.

Each kernel is compiled on its own (its source in a small module, as the linker
writes it) and compared with the op's ``perform``: values, dtype and shape, the
exception type for invalid inputs, and that the inputs are left unchanged.
Kernels are compiled once per source (module-scope cache); the comparisons are
the suite's oracle (``tests/oracle.py``).
"""

from __future__ import annotations

import numpy as np
import pytest
from oracle import Comparison, Tolerance, as_results, assert_same_results, inputs_unchanged, perform

import symlab.tensor as st
from symlab.compile.numba.kernels import NoKernel, kernel_for
from symlab.graph.basic import Constant
from symlab.tensor.alloc import ARange, Eye
from symlab.tensor.joining import Join, Split
from symlab.tensor.reduction import Argmax, Argmin, ReducedSize
from symlab.tensor.special import LogSoftmax, Softmax
from symlab.tensor.subtensor import (
    AdvancedIncSubtensor,
    AdvancedSubtensor,
    IncSubtensor,
    IndexVar,
    Subtensor,
)

pytestmark = pytest.mark.numba

_COMPILED: dict[str, object] = {}


def compiled(node):
    """The kernel of ``node`` compiled with Numba (once per distinct source)."""
    kernel = kernel_for(node, "k")
    options = "".join(f", {key}={value!r}" for key, value in kernel.jit_options.items())
    module = (
        "import numpy as np, math, numba\n"
        "from symlab.compile.numba import ufunc_loops\n"
        + "".join(f"{name} = {value}\n" for name, value in kernel.globals.items())
        + f'@numba.njit(cache=False, nogil=True, error_model="numpy"{options})\n'
        + kernel.source
    )
    if module not in _COMPILED:
        namespace: dict = {}
        exec(compile(module, "<kernel>", "exec"), namespace)
        _COMPILED[module] = namespace["k"]
    return _COMPILED[module]


def sym(value):
    """A symbolic input of ``value``'s dtype and rank, with unknown sizes."""
    value = np.asarray(value)
    return st.tensor(value.dtype.name, shape=(None,) * value.ndim)


def input_values(node, values):
    """``values`` for the node's non-constant inputs, constants' data in between."""
    it = iter(values)
    return [v.data if isinstance(v, Constant) else next(it) for v in node.inputs]


def check(node, *values, compare: Comparison = "values"):
    """Run the kernel and ``perform`` on the same inputs; compare outputs as ``compare`` says, in the dtypes of
    the node's outputs (or the exception), the inputs left unchanged."""
    values = input_values(node, values)
    try:
        expected = perform(node, [np.array(v, copy=True) for v in values])
    except Exception as err:  # noqa: BLE001 - the kernel must raise the same kind of error
        with pytest.raises(type(err)):
            compiled(node)(*values)
        return None
    with inputs_unchanged(values):
        got = as_results(compiled(node)(*values))
    assert_same_results(got, expected, compare)
    for g, out in zip(got, node.outputs):
        assert np.asarray(g).dtype == np.dtype(out.type.dtype), (np.asarray(g).dtype, out.type.dtype)
    return got


X = np.arange(60.0).reshape(3, 4, 5)
LAYOUTS = {
    "C": lambda a: a,
    "strided": lambda a: np.ascontiguousarray(np.repeat(a, 2, axis=-1))[..., ::2],
    "reversed": lambda a: np.ascontiguousarray(a[::-1])[::-1],
}


# =========================================================================================
# Subtensor (basic indexing, a view)
# =========================================================================================
I64 = IndexVar("int64")
I32, U8 = IndexVar("int32"), IndexVar("uint8")
# (idx_list, [index values for one call, ...]): cases sharing an idx_list share one compiled kernel
BASIC = [
    ([1], [[]]),
    ([(None, None, -1)], [[]]),
    ([(1, None, 2), -2], [[]]),
    ([(None, None, -2), (3, 0, -1), (-10, 10, None)], [[]]),
    ([1, -2, 3], [[]]),  # a 0-d result
    ([I64, (1, None, None)], [[np.array(-1)], [np.array(2)], [np.array(3)], [np.array(-4)]]),
    (
        [(I64, I64, I64)],
        [
            [np.array(-1), np.array(-10), np.array(-1)],
            [np.array(0), np.array(10), np.array(2)],
            [np.array(5), np.array(-5), np.array(-2)],
            [np.array(3), np.array(1), np.array(1)],
            [np.array(0), np.array(2), np.array(0)],  # zero step: ValueError
        ],
    ),
    ([I64, I64, I64], [[np.array(2), np.array(3), np.array(-1)], [np.array(0), np.array(-5), np.array(0)]]),
    ([(None, I64, None), I32, (U8, None, -1)], [[np.array(2), np.array(-1, "int32"), np.array(3, "uint8")]]),
]


@pytest.mark.parametrize("idx, calls", BASIC, ids=[str(i) for i in range(len(BASIC))])
def test_subtensor(idx, calls):
    x = st.dtensor3("x")
    node = Subtensor(idx)(x, *[sym(i) for i in calls[0]]).owner
    for index in calls:
        check(node, X, *index)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_subtensor_views(layout):
    x = st.dtensor3("x")
    node = Subtensor([(None, None, -1), I64])(x, st.lscalar()).owner
    check(node, LAYOUTS[layout](X), np.array(-2))
    got = compiled(node)(X, np.array(1))
    assert np.shares_memory(got, X)  # a view, as the op's view_map allows


@pytest.mark.parametrize("dtype", ["float32", "int32", "bool", "uint8"])
def test_subtensor_dtypes(dtype):
    x = st.tensor(dtype, shape=(None, None))
    value = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    check(Subtensor([(None, None, -1), 1])(x).owner, value)
    if dtype == "bool":
        check(Subtensor([1, 2])(x).owner, value)


def test_subtensor_empty_and_0d():
    x = st.dmatrix("x")
    check(Subtensor([(1, None, None)])(x).owner, np.zeros((0, 3)))
    check(Subtensor([(None, None, None), (2, 1, None)])(x).owner, np.ones((2, 3)))
    s = st.dscalar("s")
    check(Subtensor([])(s).owner, np.array(2.5))


# =========================================================================================
# AdvancedSubtensor
# =========================================================================================
IV = IndexVar("int64", 1)
IM = IndexVar("int64", 2)
B1 = IndexVar("bool", 1)
B2 = IndexVar("bool", 2)
ADVANCED = [
    ([IV], [[np.array([2, 0, -1, 0])], [np.array([], dtype="int64")], [np.array([3])], [np.array([-4])]]),
    ([IM], [[np.array([[0, 1], [2, -3]])]]),
    ([(None, None, -1), IV], [[np.array([3, 0, 0])]]),
    ([IV, IV], [[np.array([0, 2]), np.array([1, 3])], [np.array([0, 2, 1]), np.array([1, 3])]]),
    ([IV, IM], [[np.array([0, 2]), np.array([[1], [3], [0]])]]),
    ([IV, (None, None, 2), IV], [[np.array([0, 2]), np.array([1, 4])]]),  # apart: advanced dims first
    ([1, (None, None, None), IV], [[np.array([0, 2])]]),  # an int counts as an advanced index
    ([IV, None, (None, None, -2)], [[np.array([2, 1])]]),
    ([None, IV, Ellipsis, IV], [[np.array([2, 1]), np.array([0, 0])]]),
    ([Ellipsis, IV], [[np.array([1, 4])]]),
    ([I64, IV], [[np.array(-1), np.array([3, 0])], [np.array(3), np.array([0])]]),
    ([B1], [[np.array([True, False, True])], [np.array([True, False])]]),
    ([B2], [[np.arange(12).reshape(3, 4) % 3 == 0], [np.zeros((3, 4), bool)], [np.ones((4, 3), bool)]]),
    ([IV, B1], [[np.array([2]), np.array([True, False, True, False])]]),
]


@pytest.mark.parametrize("idx, calls", ADVANCED, ids=[str(i) for i in range(len(ADVANCED))])
def test_advanced_subtensor(idx, calls):
    x = st.dtensor3("x")
    node = AdvancedSubtensor(idx)(x, *[sym(i) for i in calls[0]]).owner
    for index in calls:
        check(node, X, *index)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_advanced_subtensor_views(layout):
    x = st.dtensor3("x")
    node = AdvancedSubtensor([IV, (None, None, -1)])(x, st.lvector()).owner
    check(node, LAYOUTS[layout](X), LAYOUTS[layout](np.array([2, -1, 0])))


def test_advanced_subtensor_errors_and_dtypes():
    x = st.dmatrix("x")
    check(AdvancedSubtensor([IV])(x, st.lvector()).owner, np.ones((2, 3)), np.array([2]))  # IndexError
    check(AdvancedSubtensor([IV])(x, st.lvector()).owner, np.ones((2, 3)), np.array([-3]))
    check(
        AdvancedSubtensor([IV, IV])(x, st.lvector(), st.lvector()).owner,
        np.ones((2, 3)),
        np.array([0, 1]),
        np.array([0, 1, 1]),
    )
    ix = st.tensor("int32", shape=(None,))
    iu = st.tensor("uint8", shape=(None,))
    for dtype in ["float32", "bool"]:
        xv = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
        node = AdvancedSubtensor([IndexVar("int32", 1), IndexVar("uint8", 1)])(
            st.tensor(dtype, shape=(None, None)), ix, iu
        )
        check(node.owner, xv, np.array([0, -1, 1], "int32"), np.array([3, 0, 1], "uint8"))
    constant = st.constant(np.array([1, 0, 1]))
    check(AdvancedSubtensor([IV])(x, constant).owner, np.arange(6.0).reshape(2, 3))


# =========================================================================================
# IncSubtensor / AdvancedIncSubtensor
# =========================================================================================
# (op class, idx_list, static shape of y, set_instead_of_inc, [(y, *index values) for one call, ...])
INC = [
    (IncSubtensor, [1], (None, None), False, [(np.ones((4, 5)),), (np.ones((4, 4)),)]),  # 2nd: ValueError
    (IncSubtensor, [1], (1, None), True, [(np.arange(5.0)[None],)]),  # y broadcasts
    (IncSubtensor, [1, 2, 3], (), True, [(np.array(7.0),)]),
    (
        IncSubtensor,
        [(None, None, -2), I64],
        (None, 1),
        False,
        [(np.ones((2, 1)), np.array(-1)), (np.ones((2, 1)), np.array(5))],
    ),
    (
        IncSubtensor,
        [(I64, None, I64)],
        (None,),
        True,
        [(np.arange(5.0), np.array(2), np.array(-1)), (np.zeros(0), np.array(0), np.array(1))],
    ),
    (
        AdvancedIncSubtensor,
        [IV],
        (None,),
        False,
        [(np.arange(5.0), np.array([0, 2, 0, -3])), (np.arange(5.0), np.array([0, 7]))],
    ),
    (AdvancedIncSubtensor, [IV], (None,), True, [(np.arange(5.0), np.array([0, 2, 0, -3]))]),
    (AdvancedIncSubtensor, [IV], (), False, [(np.array(2.0), np.array([1, 1, 1]))]),
    (AdvancedIncSubtensor, [IV, IV], (None,), False, [(np.arange(3.0), np.array([0, 0, 2]), np.array([1, 1, 3]))]),
    (
        AdvancedIncSubtensor,
        [IV, (None, None, None), IV],
        (None, 1),
        True,
        [(np.ones((2, 1)), np.array([0, 0]), np.array([1, 1]))],
    ),
    (AdvancedIncSubtensor, [B2], (None,), False, [(np.arange(3.0), np.arange(12).reshape(3, 4) % 5 == 0)]),
]


@pytest.mark.parametrize("cls, idx, y_type, set_instead_of_inc, calls", INC, ids=[str(i) for i in range(len(INC))])
def test_inc_subtensor(cls, idx, y_type, set_instead_of_inc, calls):
    x = st.dtensor3("x")
    y = st.tensor("float64", shape=y_type)
    node = cls(idx, set_instead_of_inc=set_instead_of_inc)(x, y, *[sym(i) for i in calls[0][1:]]).owner
    for y_value, *index in calls:
        check(node, X, y_value, *index)


def test_inc_subtensor_ignore_duplicates_and_views():
    x, y, i = st.dtensor3("x"), st.dvector("y"), st.lvector("i")
    node = AdvancedIncSubtensor([IV], ignore_duplicates=True)(x, y, i).owner
    check(node, X, np.arange(5.0), np.array([0, 2, 0, -3]))
    node = AdvancedIncSubtensor([IV])(x, y, i).owner
    check(node, LAYOUTS["strided"](X), LAYOUTS["reversed"](np.arange(5.0)), np.array([0, 2, 0])[::-1])


@pytest.mark.parametrize("dtype", ["float32", "int32", "bool"])
def test_inc_subtensor_dtypes(dtype):
    x = st.tensor(dtype, shape=(None,))
    y = st.tensor(dtype, shape=(None,))
    xv = np.array([0, 1, 0, 1], dtype)
    yv = np.array([1, 1, 0], dtype)
    check(AdvancedIncSubtensor([IV])(x, y, st.lvector()).owner, xv, yv, np.array([0, 0, 3]))
    if dtype == "bool":
        check(AdvancedIncSubtensor([IV], True)(x, y, st.lvector()).owner, xv, yv, np.array([0, 0, 3]))
        check(IncSubtensor([(None, None, -1)])(x, y).owner, xv, np.resize(yv, 4))


# =========================================================================================
# Join / Split
# =========================================================================================
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_join(axis):
    shapes = [list(X.shape) for _ in range(3)]
    for k, n in enumerate([2, 0, 3]):
        shapes[k][axis] = n
    a, b, c = (np.arange(np.prod(s), dtype="float64").reshape(s) for s in shapes)
    node = Join(axis)(st.dtensor3(), st.dtensor3(), st.dtensor3()).owner
    check(node, a, LAYOUTS["strided"](b), LAYOUTS["reversed"](c))
    check(node, a, b, np.ones((1, 1, 1)))  # sizes differ: ValueError


def test_join_dtypes():
    node = Join(0)(st.ivector(), st.tensor("bool", shape=(None,)), st.fvector()).owner
    assert node.outputs[0].dtype == "float64"
    check(node, np.array([1, -2], "int32"), np.array([True, False]), np.array([0.5], "float32"))
    node = Join(1)(st.lmatrix(), st.lmatrix()).owner
    check(node, np.arange(6).reshape(3, 2), np.arange(3).reshape(3, 1)[::-1])


@pytest.mark.parametrize("axis", [0, 1])
def test_split(axis):
    x = st.dmatrix("x")
    node = Split(3, axis)(x, st.lscalar(), st.lscalar(), st.iscalar())[0].owner
    value = np.arange(30.0).reshape(5, 6)
    sizes = (np.array(2), np.array(0), np.array(3 + axis, "int32"))
    got = check(node, value, *sizes)
    assert all(np.shares_memory(g, value) for g in got if g.size)  # views, as the op's view_map says
    check(node, value[::-1, ::-1], *sizes)
    check(node, value, np.array(2), np.array(-1), np.array(4 + axis, "int32"))  # ValueError
    check(node, value, np.array(1), np.array(1), np.array(1, "int32"))  # ValueError
    one = Split(1, axis)(x, st.lscalar()).owner
    check(one, value, np.array(value.shape[axis]))


# =========================================================================================
# Alloc / ARange / Eye
# =========================================================================================
def test_alloc():
    s = st.lscalar()
    scalar = st.dscalar()
    check(st.alloc(scalar, s, 3).owner, np.array(1.5), np.array(2))
    check(st.alloc(scalar, s, 3).owner, np.array(1.5), np.array(0))
    check(st.alloc(scalar, s, 3).owner, np.array(1.5), np.array(-1))  # ValueError
    check(st.alloc(scalar).owner, np.array(1.5))
    row = st.tensor("int32", shape=(1, None))
    node = st.alloc(row, 2, s, 3).owner
    check(node, np.array([[1, 2, 3]], "int32"), np.array(4))
    check(node, np.array([[1, 2, 3]], "int32")[:, ::-1], np.array(1))
    check(node, np.array([[1, 2]], "int32"), np.array(4))  # does not broadcast: ValueError
    check(st.alloc(st.tensor("bool", shape=(None,)), s, 2).owner, np.array([True, False]), np.array(3))


ARANGES = [
    ("int64", (0, 5, 1)),
    ("int64", (5, -3, -2)),
    ("int64", (5, 0, 1)),
    ("int32", (2, 9, 3)),
    ("float64", (1.0, 2.0, 0.1)),
    ("float64", (0.0, -1.0, -0.3)),
    ("float32", (0.5, 3.7, 0.3)),
    ("int64", (0.5, 3.7, 0.5)),
    ("float64", (1, 7, 2)),
    ("int64", (0, 5, 0)),
]


@pytest.mark.parametrize("dtype, args", ARANGES, ids=[str(i) for i in range(len(ARANGES))])
def test_arange(dtype, args):
    kind = "int64" if all(isinstance(a, int) for a in args) else "float64"
    inputs = [st.scalar(dtype=kind) for _ in args]
    node = ARange(dtype)(*inputs).owner
    check(node, *(np.array(a, kind) for a in args))


def test_eye():
    node = Eye("float64")(st.lscalar(), st.lscalar(), st.lscalar()).owner
    for n, m, k in [(3, 3, 0), (2, 4, 1), (4, 2, -1), (3, 3, 5), (3, 3, -5), (0, 3, 0), (-1, 2, 0)]:
        check(node, np.array(n), np.array(m), np.array(k))
    node = Eye("int32")(st.lscalar(), st.lscalar(), st.iscalar()).owner
    check(node, np.array(3), np.array(2), np.array(0, "int32"))


# =========================================================================================
# Softmax / LogSoftmax
# =========================================================================================
#: Kernels against ``perform`` (or NUMBA against NUMPY) where they may round differently: float64, NaN where NaN.
ROUNDING = Tolerance(float64=(1e-12, 1e-300))
SOFTMAX_VALUES = np.array(
    [
        [1.0, 2.0, 3.0, 4.0],
        [1000.0, 1000.0, -1000.0, 999.0],
        [-np.inf, -np.inf, -np.inf, -np.inf],
        [-np.inf, 0.0, 1.0, -np.inf],
        [np.inf, 0.0, 1.0, 2.0],
        [np.nan, 0.0, 1.0, 2.0],
    ]
)


@pytest.mark.parametrize("cls, axis", [(Softmax, None), (Softmax, 1), (LogSoftmax, None), (LogSoftmax, 0)])
def test_softmax(cls, axis):
    node = cls(axis)(st.dmatrix()).owner
    check(node, SOFTMAX_VALUES, compare=ROUNDING)
    check(node, SOFTMAX_VALUES[:, ::-2], compare=ROUNDING)
    check(node, SOFTMAX_VALUES[:3, :3], compare=ROUNDING)
    check(node, np.zeros((0, 3)))
    if axis is not None:  # large enough for the parallel loop over slices
        big = np.random.default_rng(0).standard_normal((400, 300)) * 50
        big[7] = -np.inf
        check(node, big, compare=Tolerance(float64=(1e-12, 1e-14)))


@pytest.mark.parametrize("cls", [Softmax, LogSoftmax])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape", [(9,), (3, 129), (2, 3, 1000), (4, 10000), (400, 300)])
def test_softmax_along_the_last_axis_has_numpys_bits(cls, dtype, shape):
    """Along the last axis the kernel calls NumPy's exp, pairwise add (and log) loops on each row: on a C-contiguous
    input it gives perform's bits exactly (rows longer than the pairwise blocks, special values, the
    parallel loop from 100,000 elements); on other layouts, where NumPy itself sums in another order, it
    agrees to rounding."""
    rng = np.random.default_rng(1)
    value = (rng.standard_normal(shape) * 20).astype(dtype)
    if value.ndim > 1:
        value[0, ..., :] = -np.inf
        value[-1, ..., 1] = np.inf
        value[1, ..., 2] = np.nan
    node = cls(value.ndim - 1)(sym(value)).owner
    assert "exp_" + dtype in kernel_for(node, "k").source
    check(node, value)  # exactly
    if value.ndim > 1:
        tol = Tolerance(float64=(1e-13, 1e-13), float32=(1e-5, 1e-5))
        check(node, np.asfortranarray(value), compare=tol)
        check(node, value[..., ::-1], compare=tol)


@pytest.mark.parametrize("cls", [Softmax, LogSoftmax])
def test_softmax_float32_3d_and_0d(cls):
    rng = np.random.default_rng(0)
    value = (rng.standard_normal((3, 4, 5)) * 30).astype("float32")
    check(cls(1)(st.ftensor3()).owner, value, compare=Tolerance(float32=(2e-6, 1e-5)))
    check(cls(None)(st.dscalar()).owner, np.array(3.0))
    check(cls(None)(st.dscalar()).owner, np.array(-np.inf))


# =========================================================================================
# Argmax / Argmin / ReducedSize
# =========================================================================================
ARG_VALUES = np.array([[1.0, 5.0, 5.0, -2.0], [7.0, 2.0, 7.0, -3.0], [np.nan, 1.0, np.nan, -9.0]])


@pytest.mark.parametrize("cls", [Argmax, Argmin])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_arg_reduce(cls, axis):
    node = cls(axis)(st.dmatrix()).owner
    check(node, ARG_VALUES)
    check(node, ARG_VALUES[:2])
    check(node, ARG_VALUES[::-1, ::2])
    check(node, np.zeros((0, 3)))  # ValueError unless the searched axis is not empty
    check(node, np.zeros((3, 0)))


@pytest.mark.parametrize("dtype", ["int32", "bool", "float32"])
def test_arg_reduce_dtypes(dtype):
    value = (np.array([[3, 1, 3], [0, 2, 2]]) % (2 if dtype == "bool" else 5)).astype(dtype)
    for cls in (Argmax, Argmin):
        check(cls(None if dtype != "float32" else 0)(st.tensor(dtype, shape=(None, None))).owner, value)


def test_arg_reduce_0d():
    check(Argmax(None)(st.dscalar()).owner, np.array(2.0))
    check(Argmin(None)(st.dscalar()).owner, np.array(np.nan))


def test_reduced_size():
    x = st.dtensor3()
    for axis in [(), (1,), (0, 2), (0, 1, 2)]:
        check(ReducedSize(axis)(x).owner, X)
        check(ReducedSize(axis)(x).owner, np.zeros((2, 0, 3)))


def test_no_kernel_cases():
    with pytest.raises(NoKernel):
        kernel_for(ARange("bool")(st.lscalar(), st.lscalar(), st.lscalar()).owner, "k")
    with pytest.raises(NoKernel):
        kernel_for(Argmax(None)(st.tensor("complex128", shape=(None,))).owner, "k")
    with pytest.raises(NoKernel):
        kernel_for(Subtensor([1])(st.tensor("float16", shape=(None,))).owner, "k")


# =========================================================================================
# End to end: symlab.function in NUMBA mode against NUMPY mode
# =========================================================================================
@pytest.fixture(scope="module")
def functions(tmp_path_factory):
    """One graph that uses every op of this file, compiled once in each mode (NUMBA in a fresh cache)."""
    import os

    import symlab

    x, i, j, n = st.dmatrix("x"), st.lvector("i"), st.lscalar("j"), st.lscalar("n")
    outputs = [
        x[j, ::-1],
        x[i],
        x[x > 0.5],
        st.set_subtensor(x[i], 0.0),
        st.inc_subtensor(x[i, j], 1.0),
        st.inc_subtensor(x[:, j], st.arange(x.shape[0], dtype="float64")),
        st.concatenate([x, x[::-1] * 2.0], axis=1),
        *st.split(x, [j, x.shape[0] - j], axis=0),
        st.zeros((n, x.shape[1])) + x[0],
        st.arange(j, n, 2),
        st.eye(n, k=j),
        st.softmax(x, axis=1),
        st.log_softmax(x, axis=0),
        st.argmax(x, axis=1),
        st.argmin(x),
        x.mean(axis=1),
    ]
    old = os.environ.get("SYMLAB_CACHE_DIR")
    os.environ["SYMLAB_CACHE_DIR"] = str(tmp_path_factory.mktemp("symlab_cache"))
    try:
        fast = symlab.function([x, i, j, n], outputs, mode="NUMBA")
    finally:
        if old is None:
            del os.environ["SYMLAB_CACHE_DIR"]
        else:
            os.environ["SYMLAB_CACHE_DIR"] = old
    return fast, symlab.function([x, i, j, n], outputs, mode="NUMPY")


def test_function_uses_the_kernels(functions):
    fast, _ = functions
    runner = fast._runner
    assert type(runner).__name__ == "NumbaRunner"
    assert runner.compile_info.fallback_ops == []
    ops = {type(node.op) for node in runner.fgraph.toposort()}
    mine = {Subtensor, AdvancedSubtensor, IncSubtensor, AdvancedIncSubtensor, Join, Split, ARange, Eye, Softmax}
    assert mine <= ops, mine - ops
    assert {LogSoftmax, Argmax, Argmin} <= ops


@pytest.mark.parametrize("layout", ["C"])
def test_function_numba_vs_numpy(functions, layout):
    fast, slow = functions
    rng = np.random.default_rng(1)
    x = LAYOUTS[layout](rng.random((4, 6)))
    for i, j, n in [(np.array([3, 0, 3, -1]), 1, 3), (np.array([], dtype="int64"), 0, 0)]:
        got = fast(x, i, j, n)
        expected = slow(x, i, j, n)
        assert_same_results(got, expected, ROUNDING)
    with pytest.raises(IndexError):
        fast(x, np.array([4]), 0, 1)


def test_every_op_class_of_symlab_tensor_has_a_numba_kernel():
    """The issue's rule: one Numba implementation per op of symlab.tensor (bases of other ops excepted)."""
    import importlib
    import pkgutil

    import symlab.tensor
    from symlab.compile.numba import kernels
    from symlab.graph.op import Op

    for info in pkgutil.iter_modules(symlab.tensor.__path__):
        importlib.import_module(f"symlab.tensor.{info.name}")
    kernels._load_standard_kernels()

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    ops = {c for c in subclasses(Op) if c.__module__.startswith("symlab.tensor.")}
    leaves = {c for c in ops if not any(o is not c and issubclass(o, c) for o in ops)}
    assert len(leaves) >= 25  # Elemwise, DimShuffle, reductions, products, shapes, indexing, joins, softmax...
    missing = sorted(c.__qualname__ for c in leaves if not any(base in kernels._REGISTRY for base in c.__mro__))
    assert missing == []
