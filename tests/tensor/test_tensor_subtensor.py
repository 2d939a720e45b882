"""Indexing: Subtensor, AdvancedSubtensor, (Advanced)IncSubtensor, getitem."""

import itertools

import numpy as np
import pytest
from oracle import check_graph_shape

import symlab.tensor as st
from symlab.gradient import verify_grad
from symlab.tensor.elemwise import DimShuffle
from symlab.tensor.subtensor import (
    AdvancedIncSubtensor,
    AdvancedSubtensor,
    IncSubtensor,
    IndexVar,
    Subtensor,
    inc_subtensor,
    set_subtensor,
)

s_ = np.s_
X3 = np.arange(60.0).reshape(3, 4, 5)


# -- basic indexing: a table of index expressions ---------------------------------------------
BASIC = [
    s_[0],
    s_[-1],
    s_[2, 3],
    s_[1, 2, 3],
    s_[-3, -4, -5],
    s_[1:],
    s_[:2],
    s_[:-1],
    s_[-2:],
    s_[::2],
    s_[::-1],
    s_[::-2],
    s_[2:0:-1],
    s_[-1:-4:-1],
    s_[5:],
    s_[10:20],
    s_[-10:2],
    s_[2:1],
    s_[3:0:-2, ::-3],
    s_[:, 1],
    s_[:, :, -1],
    s_[:, 1:3, ::2],
    s_[..., 2],
    s_[1, ...],
    s_[1, ..., 2],
    s_[...],
    s_[()],
    s_[None],
    s_[:, None],
    s_[None, 1, None, ::-1],
    s_[..., None],
    s_[1, None, 2, None],
    s_[1:2, 0:0],
    s_[0, 0, 0:1],
]


@pytest.mark.parametrize("index", BASIC, ids=repr)
@pytest.mark.parametrize("static", [False, True])
def test_basic_values_and_static_shape(index, static):
    x = st.tensor("float64", shape=X3.shape if static else (None, None, None), name="x")
    out = x[index]
    expected = X3[index]
    value = out.eval({x: X3})
    np.testing.assert_array_equal(value, expected)
    assert value.dtype == expected.dtype
    assert out.ndim == expected.ndim
    node = out.owner if not isinstance(out.owner.op, DimShuffle) else out.owner.inputs[0].owner
    assert isinstance(node.op, Subtensor)
    if static:
        assert out.type.shape == expected.shape
    else:
        assert all(s is None or s == e for s, e in zip(out.type.shape, expected.shape))
    check_graph_shape(out, {x: X3})


def test_basic_output_is_a_view():
    x = st.dmatrix("x")
    out = x[1:, ::-1]
    assert out.owner.op.view_map == {0: [0]}
    value = np.arange(6.0).reshape(2, 3)
    storage = [[None]]
    out.owner.op.perform(out.owner, [value], storage)
    assert np.shares_memory(storage[0][0], value)


def test_zero_d_results_are_arrays():
    x = st.dmatrix("x")
    out = x[1, 2]
    assert out.type.shape == ()
    value = out.eval({x: np.arange(6.0).reshape(2, 3)})
    assert isinstance(value, np.ndarray) and value.shape == () and value == 5.0
    s = st.dscalar("s")
    assert s[()].eval({s: 3.0}) == 3.0


def test_unknown_dimension_makes_slice_length_unknown():
    x = st.tensor("float64", shape=(None, 6), name="x")
    assert x[1:3].type.shape == (None, 6)
    assert x[:, 1:3].type.shape == (None, 2)
    assert x[:, ::-4].type.shape == (None, 2)
    assert x[:, 10:].type.shape == (None, 0)
    assert x[:].type.shape == (None, 6)
    assert x[:, None].type.shape == (None, 1, 6)


def test_trailing_full_slices_are_dropped_from_idx_list():
    x = st.dtensor3("x")
    assert x[1].owner.op == x[1, :].owner.op == x[1, ...].owner.op
    assert hash(x[1].owner.op) == hash(x[1, :, :].owner.op)
    assert x[...].owner.op == Subtensor([])


def test_op_strings():
    x = st.dtensor3("x")
    i = st.lscalar("i")
    j = st.iscalar("j")
    assert str(x[1].owner.op) == "Subtensor{1}"
    assert str(x[1:3, ::-1, i].owner.op) == "Subtensor{1:3, ::-1, int64}"
    assert str(x[i:j:2].owner.op) == "Subtensor{int64:int32:2}"
    assert str(x[:, [0, 1]].owner.op) == "AdvancedSubtensor{:, int64[:]}"
    assert str(x[x > 0].owner.op) == "AdvancedSubtensor{bool[:, :, :]}"
    assert str(set_subtensor(x[i], 0.0).owner.op) == "SetSubtensor{int64}"
    assert str(inc_subtensor(x[1:], 0.0).owner.op) == "IncSubtensor{1:}"
    assert str(set_subtensor(x[[0]], 0.0).owner.op) == "AdvancedSetSubtensor{int64[:]}"
    assert str(inc_subtensor(x[[0]], 0.0).owner.op) == "AdvancedIncSubtensor{int64[:]}"


def test_op_props_equality():
    assert Subtensor([slice(1, 3), 0]) == Subtensor([(1, 3, None), 0])
    assert Subtensor([slice(1, 3)]) != Subtensor([slice(1, 4)])
    assert IncSubtensor([0], True) != IncSubtensor([0], False)
    assert hash(Subtensor([IndexVar("int64")])) == hash(Subtensor([IndexVar("int64")]))
    assert AdvancedSubtensor([IndexVar("int64", 1)]) == AdvancedSubtensor([IndexVar("int64", 1)])


# -- symbolic indices --------------------------------------------------------------------------
SYMBOLIC_SLICES = [
    (1, 3, None),
    (-2, None, None),
    (None, -1, 2),
    (None, None, -1),
    (3, 0, -1),
    (-1, -5, -2),
    (10, None, -2),
    (-10, 10, 3),
    (2, 2, None),
    (None, None, 2),
]


@pytest.mark.parametrize("bounds", SYMBOLIC_SLICES, ids=repr)
def test_symbolic_slices(bounds):
    x = st.dvector("x")
    a, b, c = st.lscalars("a", "b", "c")
    syms = [a, b, c]
    value = np.arange(5.0)
    fields = [None if v is None else s for v, s in zip(bounds, syms)]
    givens = {x: value, **{s: v for s, v in zip(syms, bounds) if v is not None}}
    out = x[slice(*fields)]
    np.testing.assert_array_equal(out.eval(givens), value[slice(*bounds)])
    assert out.type.shape == (None,)
    check_graph_shape(out, givens)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_slice_lengths_against_numpy(n):
    value = np.arange(float(n))
    a, b, c = st.lscalars("a", "b", "c")
    static = st.tensor("float64", shape=(n,), name="s")
    dynamic = st.dvector("d")
    bounds = [None, -3, -1, 0, 2, 7]
    for start, stop, step in itertools.product(bounds, bounds, [None, -2, -1, 1, 3]):
        expected = value[start:stop:step]
        assert static[start:stop:step].type.shape == expected.shape
        fields = [None if f is None else s for f, s in zip((start, stop, step), (a, b, c))]
        givens = {dynamic: value, a: start, b: stop, c: step}
        givens = {k: v for k, v in givens.items() if v is not None}
        out = dynamic[slice(*fields)]
        np.testing.assert_array_equal(out.eval(givens), expected)
        check_graph_shape(out, givens)


def test_symbolic_slices_on_a_static_dimension():
    x = st.tensor("float64", shape=(7,), name="x")
    i = st.lscalar("i")
    value = np.arange(7.0)
    for v in [-9, -3, 0, 2, 6, 9]:
        for out, expected in [(x[i:], value[v:]), (x[:i:-1], value[:v:-1])]:
            assert out.type.shape == (None,)
            np.testing.assert_array_equal(out.eval({x: value, i: v}), expected)
            check_graph_shape(out, {x: value, i: v})


def test_symbolic_step_of_either_sign():
    x = st.dvector("x")
    k = st.lscalar("k")
    value = np.arange(6.0)
    for step in [-4, -1, 1, 2, 7]:
        out = x[1::k]
        np.testing.assert_array_equal(out.eval({x: value, k: step}), value[1::step])
        check_graph_shape(out, {x: value, k: step})


def test_symbolic_integer_index():
    x = st.dmatrix("x")
    i = st.iscalar("i")
    out = x[i]
    assert out.owner.inputs == [x, i]
    assert out.type.shape == (None,)
    value = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(out.eval({x: value, i: -1}), value[-1])
    with pytest.raises(IndexError):
        out.eval({x: value, i: 2})


def test_constant_scalar_indices_become_static():
    x = st.dvector("x")
    out = x[st.constant(2)]
    assert isinstance(out.owner.op, Subtensor) and out.owner.op.idx_list == (2,)
    assert out.owner.inputs == [x]
    out = x[np.int32(1) : np.int64(3)]
    assert out.owner.op.idx_list == ((1, 3, None),)


# -- advanced indexing -------------------------------------------------------------------------
ADVANCED = [
    s_[[0, 2]],
    s_[[2, 0, 2, -1]],
    s_[[[0, 1], [2, 0]]],
    s_[[]],
    s_[:, [3, 0]],
    s_[:, :, [1, 1, 4]],
    s_[[0, 2], [1, 3]],
    s_[[0, 2], :, [1, 3]],
    s_[[[0], [2]], [1, 3]],
    s_[1, [1, 3]],
    s_[[1, 2], 1],
    s_[[1, 2], :, 1],
    s_[:, 1, [1, 3]],
    s_[1:, [0, 0], ::-2],
    s_[..., [4, 0]],
    s_[None, [0, 1]],
    s_[[0, 1], None],
    s_[[0, 1], None, [1, 2]],
    s_[np.array([True, False, True])],
    s_[:, np.array([True, False, False, True])],
    s_[X3 > 30],
    s_[:, 1, ..., [0, 1]],  # an empty ... still separates advanced indices: their dims go first
    s_[1, ..., [0, 1], :],
    s_[[0, 1], ..., 1],
    s_[np.ones((3, 4), dtype=bool), 1:3],
]


@pytest.mark.parametrize("index", ADVANCED, ids=lambda i: repr(i)[:60])
@pytest.mark.parametrize("static", [False, True])
def test_advanced_values_and_static_shape(index, static):
    x = st.tensor("float64", shape=X3.shape if static else (None, None, None), name="x")
    out = x[index]
    assert isinstance(out.owner.op, AdvancedSubtensor)
    assert out.owner.op.view_map == {}
    expected = X3[index]
    value = out.eval({x: X3})
    np.testing.assert_array_equal(value, expected)
    assert value.dtype == expected.dtype
    assert out.ndim == expected.ndim
    assert all(s is None or s == e for s, e in zip(out.type.shape, expected.shape))
    if static:
        assert out.type.shape == expected.shape  # constant indices: every size is known
    check_graph_shape(out, {x: X3})


def test_advanced_symbolic_index_arrays():
    x = st.dmatrix("x")
    i = st.lvector("i")
    j = st.imatrix("j")
    k = st.lscalar("k")
    value = np.arange(12.0).reshape(3, 4)
    iv, jv = np.array([2, 0, 2]), np.array([[1, 2, 0], [0, 0, 1]], dtype="int32")
    cases = [
        (x[i], value[iv]),
        (x[:, i], value[:, iv]),
        (x[j], value[jv]),
        (x[i, j], value[iv, jv]),
        (x[j, ::-1], value[jv, ::-1]),
        (x[k, i], value[-1, iv]),
        (x[i, k], value[iv, -1]),
        (x[i, 1:k], value[iv, 1:-1]),
    ]
    givens = {x: value, i: iv, j: jv, k: -1}
    for out, expected in cases:
        np.testing.assert_array_equal(out.eval(givens), expected)
        check_graph_shape(out, givens)


def test_advanced_index_copies():
    x = st.dvector("x")
    out = x[[0, 1]]
    value = np.arange(3.0)
    storage = [[None]]
    out.owner.op.perform(out.owner, [value, *[c.data for c in out.owner.inputs[1:]]], storage)
    assert not np.shares_memory(storage[0][0], value)


def test_symbolic_boolean_mask():
    x = st.dmatrix("x")
    value = np.array([[1.0, -2.0], [-3.0, 4.0]])
    out = x[x > 0]
    assert out.type.shape == (None,)
    np.testing.assert_array_equal(out.eval({x: value}), [1.0, 4.0])
    check_graph_shape(out, {x: value})
    row_mask = st.bvector("m").astype("bool")
    out = x[row_mask]
    np.testing.assert_array_equal(out.eval({"m": np.array([0, 1], dtype="int8"), x: value}), value[[1]])


def test_index_list_holding_symbolic_scalars():
    x = st.dvector("x")
    i, j = st.lscalars("i", "j")
    out = x[[i, j, i]]
    np.testing.assert_array_equal(out.eval({x: np.arange(4.0), i: 3, j: 0}), [3.0, 0.0, 3.0])


# -- errors --------------------------------------------------------------------------------------
def test_too_many_indices():
    x = st.dmatrix("x")
    with pytest.raises(IndexError, match=r"too many indices for x \(TensorType\(float64, \(\?, \?\)\)\): 3"):
        x[1, 2, 3]
    with pytest.raises(IndexError, match="too many indices"):
        x[:, :, None, [0]]
    with pytest.raises(IndexError, match="too many indices"):
        st.dvector("v")[np.ones((2, 2), dtype=bool)]
    with pytest.raises(IndexError, match=r"Subtensor\{0, 0\}: too many indices"):
        Subtensor([0, 0])(st.dvector("v"))


def test_float_indices_are_refused():
    x = st.dvector("x")
    with pytest.raises(TypeError, match="float 1.0: a float64 index is not an integer"):
        x[1.0]
    with pytest.raises(TypeError, match=r"with y \(TensorType\(float64, \(\)\)\): a float64 index is not an integer"):
        x[st.dscalar("y")]
    with pytest.raises(TypeError, match="not an integer"):
        x[[0.0, 1.0]]
    with pytest.raises(TypeError, match="not an integer"):
        x[st.dvector("f")]
    with pytest.raises(TypeError, match="not an integer"):
        x[0.5:]
    with pytest.raises(TypeError, match="not an integer"):
        x[: st.fscalar("f")]


def test_other_bad_indices():
    x = st.dvector("x")
    with pytest.raises(TypeError, match="boolean scalar"):
        x[True]
    with pytest.raises(TypeError, match="not an array of numbers|not an integer"):
        x["a"]
    with pytest.raises(IndexError, match="only one ellipsis"):
        st.dmatrix("m")[..., 0, ...]
    with pytest.raises(TypeError, match="slice bound must be a scalar"):
        x[st.lvector("v") :]
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        x[::0]


def test_static_out_of_range_index():
    x = st.tensor("float64", shape=(3, None), name="x")
    with pytest.raises(IndexError, match=r"index 3 is out of range for dimension 0 of x .* of size 3"):
        x[3]
    with pytest.raises(IndexError, match="index -4 is out of range"):
        x[-4]
    with pytest.raises(IndexError, match="index 5 is out of range for dimension 0"):
        x[[0, 5]]
    assert x[-3, 100].type.shape == ()  # dimension 1 has no static size: checked at run time
    with pytest.raises(IndexError):
        x[:, 100].eval({x: np.zeros((3, 2))})


def test_static_index_shape_mismatch():
    x = st.tensor("float64", shape=(3, 4), name="x")
    with pytest.raises(IndexError, match="cannot be broadcast together"):
        x[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError, match=r"boolean index .* does not match dimension 0 of x"):
        x[np.array([True, False])]


def test_index_inputs_are_checked():
    x = st.dvector("x")
    op = Subtensor([IndexVar("int64")])
    with pytest.raises(TypeError, match=r"expected 1 index inputs"):
        op(x)
    with pytest.raises(TypeError, match=r"index input 0 must be a int64 scalar, received i \(TensorType\(int32"):
        op(x, st.iscalar("i"))
    with pytest.raises(TypeError, match="needs AdvancedSubtensor"):
        Subtensor([IndexVar("int64", 1)])
    with pytest.raises(TypeError, match="new axes"):
        Subtensor([None])


# -- set_subtensor / inc_subtensor ---------------------------------------------------------------
WRITES = [
    (s_[1], 7.0),
    (s_[1:, ::-2], 7.0),
    (s_[-1, 2], np.array([1.0, 2.0, 3.0, 4.0, 5.0])),
    (s_[:, 1:3, 0], np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])),
    (s_[..., 0], np.arange(4.0)),
    (s_[2:0], 1.0),
    (s_[[0, 2]], 3.0),
    (s_[[0, 0, 2]], np.arange(5.0)),
    (s_[:, [1, 1, 3, 1]], np.arange(4.0 * 5).reshape(4, 5)),
    (s_[[0, 1], :, [4, 4]], np.array([1.0, 2.0, 3.0, 4.0])),
    (s_[X3 > 40], 0.5),
    (s_[1, [0, 0]], 1.0),
]


def numpy_inc(x, index, y, set_):
    out = x.copy()
    if set_:
        out[index] = y
    else:
        np.add.at(out, index, y)
    return out


@pytest.mark.parametrize(("index", "y"), WRITES, ids=lambda v: repr(v)[:40])
@pytest.mark.parametrize("set_", [False, True])
def test_set_and_inc_values(index, y, set_):
    x = st.dtensor3("x")
    yv = st.tensor("float64", shape=(None,) * np.ndim(y), name="y")
    fn = set_subtensor if set_ else inc_subtensor
    out = fn(x[index], yv) if np.ndim(y) else fn(x[index], y)
    assert out.type == x.type
    givens = {x: X3, yv: y} if np.ndim(y) else {x: X3}
    value = out.eval(givens)
    np.testing.assert_array_equal(value, numpy_inc(X3, index, y, set_))
    check_graph_shape(out, givens)


def test_inc_subtensor_accumulates_repeated_indices():
    v = st.dvector("v")
    i = st.lvector("i")
    out = inc_subtensor(v[i], [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(out.eval({v: np.zeros(3), i: [1, 1, 1]}), [0.0, 6.0, 0.0])
    once = inc_subtensor(v[i], [1.0, 2.0, 3.0], ignore_duplicates=True)
    assert once.owner.op.ignore_duplicates
    np.testing.assert_array_equal(once.eval({v: np.zeros(3), i: [0, 2, 1]}), [1.0, 3.0, 2.0])


def test_writes_do_not_modify_the_input():
    v = st.dvector("v")
    value = np.zeros(3)
    set_subtensor(v[1:], 1.0).eval({v: value})
    inc_subtensor(v[[0, 0]], 1.0).eval({v: value})
    np.testing.assert_array_equal(value, np.zeros(3))


def test_set_with_symbolic_indices():
    x = st.dmatrix("x")
    i, j = st.lscalars("i", "j")
    y = st.dvector("y")
    out = set_subtensor(x[i, j:], y)
    assert out.owner.inputs[2:] == [i, j]
    value = np.zeros((2, 4))
    expected = value.copy()
    expected[-1, 1:] = [1.0, 2.0, 3.0]
    np.testing.assert_array_equal(out.eval({x: value, i: -1, j: 1, y: [1.0, 2.0, 3.0]}), expected)


def test_set_subtensor_through_new_axes():
    x = st.dmatrix("x")
    value = np.zeros((2, 3))
    out = set_subtensor(x[:, None, 1], st.dcol("c"))
    expected = value.copy()
    expected[:, 1] = [5.0, 6.0]
    np.testing.assert_array_equal(out.eval({x: value, "c": [[5.0], [6.0]]}), expected)
    out = inc_subtensor(x[None, 0], st.dmatrix("m"))
    np.testing.assert_array_equal(out.eval({x: value, "m": [[1.0, 2.0, 3.0]]})[0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="SpecifyShape"):
        out.eval({x: value, "m": np.ones((2, 3))})


def test_y_dtype_handling():
    x = st.ivector("x")
    out = set_subtensor(x[0], 7)
    assert out.dtype == "int32"
    np.testing.assert_array_equal(out.eval({x: [1, 2]}), [7, 2])
    out = inc_subtensor(x[:1], st.bvector("b"))  # int8 into int32: a lossless cast
    np.testing.assert_array_equal(out.eval({x: [1, 2], "b": [3]}), [4, 2])
    with pytest.raises(
        TypeError, match=r"set_subtensor: cannot write y \(TensorType\(float64, \(\)\)\) into .* without losing"
    ):
        set_subtensor(x[0], st.dscalar("y"))
    with pytest.raises(TypeError, match="must have the dtype of x"):
        IncSubtensor([0])(x, st.dscalar("y"))


def test_write_errors():
    x = st.tensor("float64", shape=(3, 4), name="x")
    with pytest.raises(TypeError, match=r"inc_subtensor: x must be an indexed tensor such as v\[idx\]; x is an input"):
        inc_subtensor(x, 1.0)
    with pytest.raises(TypeError, match=r"x\+1 is the output of Elemwise\{add"):
        set_subtensor(_named(x + 1, "x+1"), 1.0)
    with pytest.raises(ValueError, match="has more dimensions than x"):
        set_subtensor(x[0], st.dmatrix("m"))
    with pytest.raises(ValueError, match=r"cannot broadcast to the indexed part of x, of static shape \(2,\)"):
        set_subtensor(x[0, 1:3], np.ones(3))
    out = set_subtensor(st.dvector("v")[1:], st.dvector("y"))
    with pytest.raises(
        ValueError, match=r"y has shape \(1,\), which does not fit the indexed part of x, of shape \(2,\)"
    ):
        out.eval({"v": np.zeros(3), "y": np.ones(1)})


def _named(v, name):
    v.name = name
    return v


# -- gradients -----------------------------------------------------------------------------------

RNG = np.random.default_rng(0)
A = RNG.normal(size=(3, 4))


@pytest.mark.parametrize(
    "index",
    [s_[1], s_[1:, ::-2], s_[-1, 2], s_[None, :, 1], s_[[0, 2, 0]], s_[:, [3, 3, 1]], s_[[0, 1], [2, 2]], s_[A > 0]],
    ids=repr,
)
def test_getitem_gradient(index):
    verify_grad(lambda x: x[index], [A], rng=np.random.default_rng(0))


def test_getitem_gradient_values():
    from symlab.gradient import grad

    x = st.dvector("x")
    i = st.lscalar("i")
    g = grad(x[i] * 2.0 + x[[0, 0]].sum(), x)
    np.testing.assert_array_equal(g.eval({x: np.zeros(3), i: 2}), [2.0, 0.0, 2.0])


@pytest.mark.parametrize("set_", [False, True])
@pytest.mark.parametrize(
    ("index", "y_shape"),
    [
        (s_[1], (4,)),
        (s_[1:, ::-2], (2, 2)),
        (s_[1:, ::-2], (2,)),
        (s_[:, 2], ()),
        (s_[[0, 2]], (2, 4)),
        (s_[[0, 2]], (1, 4)),
        (s_[:, [1, 3]], (3, 2)),
        (s_[[0, 2], [1, 3]], (2,)),
    ],
    ids=repr,
)
def test_write_gradient(index, y_shape, set_):
    y0 = RNG.normal(size=y_shape)
    fn = set_subtensor if set_ else inc_subtensor
    verify_grad(lambda x, y: fn(x[index], y) * 1.0, [A, y0], rng=np.random.default_rng(0))


def test_inc_gradient_with_repeated_indices():
    verify_grad(lambda x, y: inc_subtensor(x[[0, 0, 2]], y), [A, RNG.normal(size=(3, 4))], rng=np.random.default_rng(0))


def test_ops_built_directly():
    x = st.dmatrix("x")
    k = st.lscalar("k")
    out = AdvancedIncSubtensor([IndexVar("int64"), IndexVar("int64", 1)], set_instead_of_inc=True)(
        x, st.constant(1.0), k, st.constant([0, 1])
    )
    np.testing.assert_array_equal(out.eval({x: np.zeros((2, 2)), k: 1}), [[0.0, 0.0], [1.0, 1.0]])


# -- the gradient of a write to repeated positions: only the write that lands counts ------------------------
@pytest.mark.parametrize("label,fn,shapes", [
    ("set, repeated", lambda x, y: st.set_subtensor(x[[1, 1, 0]], y), [(3,), (3,)]),
    ("set, -1 and n-1", lambda x, y: st.set_subtensor(x[[2, -1]], y), [(3,), (2,)]),
    ("set, one value broadcast", lambda x, y: st.set_subtensor(x[[1, 1]], y), [(3,), ()]),
    ("set, a column twice", lambda x, y: st.set_subtensor(x[:, [2, 0, 2]], y), [(2, 3), (3,)]),
    ("set, pairs of arrays", lambda x, y: st.set_subtensor(x[[1, 0, 1], [2, 0, 2]], y), [(2, 3), (3,)]),
    ("increment ignoring duplicates", lambda x, y: st.inc_subtensor(x[[1, 1, 0]], y, ignore_duplicates=True),
     [(3,), (3,)]),
    ("increment accumulating", lambda x, y: st.inc_subtensor(x[[1, 1, 0]], y), [(3,), (3,)]),
])
def test_grad_of_a_write_to_repeated_positions_matches_finite_differences(label, fn, shapes):
    rng = np.random.default_rng(3)
    verify_grad(fn, [rng.uniform(0.5, 1.0, size=s) for s in shapes], rng=rng)


def test_grad_of_set_subtensor_goes_to_the_last_write_of_a_position():
    x, y = st.dvector("x"), st.dvector("y")
    out = st.set_subtensor(x[[1, 1, 0, 1]], y)
    gx, gy = st.grad((out * np.array([10.0, 20.0, 30.0])).sum(), [x, y])
    values = {x: np.zeros(3), y: np.array([1.0, 2.0, 3.0, 4.0])}
    np.testing.assert_array_equal(out.eval(values), [3.0, 4.0, 0.0])  # NumPy: the last write lands
    np.testing.assert_array_equal(gy.eval(values), [0.0, 0.0, 10.0, 20.0])
    np.testing.assert_array_equal(gx.eval(values), [0.0, 0.0, 30.0])
    # accumulating: every write reaches the output, every one gets the gradient
    gy_inc = st.grad((st.inc_subtensor(x[[1, 1, 0, 1]], y) * np.array([10.0, 20.0, 30.0])).sum(), y)
    np.testing.assert_array_equal(gy_inc.eval(values), [20.0, 20.0, 10.0, 20.0])


def test_grad_of_set_subtensor_with_a_constant_unique_index_needs_no_mask():
    x, y = st.dvector("x"), st.dvector("y")
    unique = st.grad(st.set_subtensor(x[[2, 0]], y).sum(), y)
    repeated = st.grad(st.set_subtensor(x[[2, 2]], y).sum(), y)
    symbolic = st.grad(st.set_subtensor(x[st.lvector("i")], y).sum(), y)

    def writes(v):
        from symlab.graph.traversal import ancestors

        return sum(isinstance(n.owner.op, AdvancedIncSubtensor) for n in ancestors([v]) if n.owner is not None)

    assert writes(unique) == 1  # the forward set only: no positions to find
    assert writes(repeated) == 2 and writes(symbolic) == 2  # plus the write of the positions' numbers


@pytest.mark.numba
def test_grad_of_set_subtensor_with_repeated_positions_in_every_mode():
    import warnings

    import symlab

    x, y, i = st.dmatrix("x"), st.dvector("y"), st.lvector("i")
    cost = (st.set_subtensor(x[:, i], y) ** 2).sum()
    gy = st.grad(cost, y)
    values = (np.ones((2, 3)), np.array([1.0, 2.0, 3.0]), np.array([2, 0, 2]))
    expected = np.array([0.0, 2 * 2 * 2.0, 2 * 2 * 3.0])  # column 2 holds y[2], column 0 y[1], in both rows
    for mode in ("NUMPY", "NUMBA"):
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)
            got = symlab.function([x, y, i], gy, mode=mode)(*values)
        np.testing.assert_array_equal(got, expected, err_msg=mode)
