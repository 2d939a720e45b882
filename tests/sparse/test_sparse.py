"""symlab.sparse: the type, the ops (values against scipy.sparse), gradients, every mode, bad input.

What PyTensor's tutorial page ``sparse.rst`` teaches, with our own values: the two formats and their
constructors, to and fro between dense and sparse, a matrix's parts (``csm_properties``) and
rebuilding one (``CSC``/``CSR``), structured operations, and products. Graphs holding sparse
variables run on the NumPy backend in every mode; the Numba backend says so in ``compile_info``.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import symlab
import symlab.tensor as st
from symlab import sparse
from symlab.compile.numba.linker import NUMPY_ONLY_TIER
from symlab.gradient import verify_grad
from symlab.sparse import SparseTensorType

#: (mode, background compile): the NumPy backend, the Numba backend, and the default tiered Numba.
MODES = [("NUMPY", False), ("NUMBA", False), ("NUMBA", True)]
MODE_IDS = ["numpy", "numba", "tiered"]


@pytest.fixture(params=MODES, ids=MODE_IDS)
def compile_fn(request):
    """``symlab.function`` in one mode; any warning while compiling or calling fails the test."""
    mode, background = request.param

    def compile_it(inputs, outputs, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with symlab.config.change_flags(background_compile=background):
                f = symlab.function(inputs, outputs, mode=mode, **kwargs)

        def call(*args):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                return f(*args)

        call.function = f
        return call

    return compile_it


def _matrix(rows, cols, density=0.4, seed=0, dtype="float64", format="csc"):
    """A random sparse matrix with some stored values and some zeros."""
    rng = np.random.default_rng(seed)
    dense = rng.normal(size=(rows, cols)) * (rng.random((rows, cols)) < density)
    dense[0, 0] = 1.25  # never empty
    return sp.csc_matrix(dense.astype(dtype)) if format == "csc" else sp.csr_matrix(dense.astype(dtype))


# -- the type ------------------------------------------------------------------------------------------
def test_type_props_repr_and_equality():
    t = SparseTensorType("csr", "float32", (3, None))
    assert (t.format, t.dtype, t.shape, t.ndim) == ("csr", "float32", (3, None), 2)
    assert repr(t) == str(t) == "SparseTensorType(csr, float32, (3, ?))"
    assert t == SparseTensorType("csr", "float32", (3, None)) and hash(t) == hash(SparseTensorType("csr", "float32", (3, None)))
    assert t != SparseTensorType("csc", "float32", (3, None))
    assert t.clone(format="csc") == SparseTensorType("csc", "float32", (3, None))
    assert SparseTensorType("csc", "int64").shape == (None, None)
    assert t.broadcastable == (False, False)


@pytest.mark.parametrize(
    "args, error, words",
    [
        (("coo", "float64"), ValueError, ["format", "'coo'", "csc", "csr"]),
        (("csc", "bool"), TypeError, ["'bool'", "float64"]),
        (("csc", "float16"), TypeError, ["'float16'"]),
        (("csc", "float64", (2, 3, 4)), ValueError, ["2 entries", "(2, 3, 4)"]),
    ],
)
def test_type_refuses_bad_arguments(args, error, words):
    with pytest.raises(error) as info:
        SparseTensorType(*args)
    assert all(w in str(info.value) for w in words)


def test_all_dtypes_is_pytensors_list():
    assert set(sparse.all_dtypes) == {
        "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float32", "float64", "complex64", "complex128",
    }


def test_filter_keeps_converts_and_refuses():
    t = SparseTensorType("csc", "float64")
    value = _matrix(3, 4)
    assert t.filter(value) is value
    converted = t.filter(value.tocsr())
    assert type(converted) is sp.csc_matrix and np.array_equal(converted.toarray(), value.toarray())
    assert t.filter(sp.csc_array(value)).__class__ is sp.csc_matrix
    ints = t.filter(sp.csc_matrix(np.array([[0, 3]], dtype="int32")))
    assert ints.dtype == np.float64 and ints.toarray().tolist() == [[0.0, 3.0]]
    with pytest.raises(TypeError, match=r"expects \(strict\) a scipy.sparse csc_matrix of dtype float64, received a scipy.sparse csr"):
        t.filter(value.tocsr(), strict=True)
    narrow = SparseTensorType("csr", "float32")
    with pytest.raises(TypeError, match="loss of precision"):
        narrow.filter(value)
    assert narrow.filter(value, allow_downcast=True).dtype == np.float32


def test_filter_refuses_a_dense_array_naming_expected_and_received():
    t = SparseTensorType("csr", "float64")
    with pytest.raises(TypeError) as info:
        t.filter(np.ones((2, 3)))
    text = str(info.value)
    assert "SparseTensorType(csr, float64, (?, ?)) expects a scipy.sparse matrix" in text
    assert "dense ndarray of shape (2, 3)" in text and "csr_from_dense" in text
    with pytest.raises(TypeError, match="symbolic Variable"):
        t.filter(sparse.csr_matrix("v"))
    with pytest.raises(TypeError, match=r"static shape \(2, \?\).*dimension 0 is 3"):
        SparseTensorType("csr", "float64", (2, None)).filter(_matrix(3, 3, format="csr"))


def test_values_eq_ignores_storage_and_values_eq_approx_has_tolerance():
    t = SparseTensorType("csc", "float64")
    a = _matrix(4, 3)
    b = sp.csc_matrix(a.toarray())
    b.has_sorted_indices = False
    with_stored_zero = a.copy()
    with_stored_zero.data = np.append(with_stored_zero.data[:-1], with_stored_zero.data[-1])
    assert t.values_eq(a, b) and t.values_eq(a, with_stored_zero)
    nudged = a.copy()
    nudged.data = nudged.data + 1e-12
    assert not t.values_eq(a, nudged) and t.values_eq_approx(a, nudged)
    moved = a.copy()
    moved.data = moved.data + 1e-3
    assert not t.values_eq_approx(a, moved)
    assert not t.values_eq(a, a[:3]) and not t.values_eq_approx(a, a.toarray())
    nan = sp.csc_matrix(np.array([[np.nan, 0.0]]))
    assert t.values_eq_approx(nan, nan.copy())


def test_is_super_and_convert_variable():
    wide, narrow = SparseTensorType("csc", "float64"), SparseTensorType("csc", "float64", (2, 5))
    assert wide.is_super(narrow) and not narrow.is_super(wide)
    assert not wide.is_super(SparseTensorType("csr", "float64"))
    assert not wide.is_super(SparseTensorType("csc", "float32"))
    assert not wide.is_super(st.dmatrix().type)
    dense = st.dmatrix("d")
    converted = wide.convert_variable(dense)
    assert converted.owner.op == sparse.csc_from_dense and converted.type == wide
    assert wide.convert_variable(st.fmatrix()) is None and wide.convert_variable(st.dvector()) is None


# -- variables ------------------------------------------------------------------------------------------
def test_constructors_and_variable_attributes():
    x = sparse.csc_matrix(name="x", dtype="float32")
    assert isinstance(x, sparse.SparseVariable) and x.type == SparseTensorType("csc", "float32")
    assert (x.format, x.dtype, x.ndim, x.name) == ("csc", "float32", 2, "x")
    assert sparse.csr_matrix().type == SparseTensorType("csr", symlab.config.floatX)
    assert x.T.type == SparseTensorType("csr", "float32") and x.transpose().owner.op == sparse.transpose
    tall = sparse.csr_matrix("t", shape=(5, None))
    assert tall.T.type.shape == (None, 5) and tall.toarray().type.shape == (5, None)
    assert x.toarray().owner.op == sparse.dense_from_sparse and x.todense().type == st.TensorType("float32", (None, None))
    made = symlab.graph.Variable(type=SparseTensorType("csr", "int8"))
    assert isinstance(made, sparse.SparseVariable)


def test_symbolic_shape_is_read_from_the_stored_shape():
    x = sparse.csr_matrix("x")
    value = _matrix(3, 7, format="csr")
    assert x.shape.eval({x: value}).tolist() == [3, 7]
    assert sparse.dense_from_sparse(x).shape.eval({x: value}).tolist() == [3, 7]
    f = symlab.function([x], sparse.structured_dot(x, st.ones((7, 2))).shape, mode="NUMPY")
    assert f(value).tolist() == [3, 2]


def test_constants_print_merge_and_fold():
    value = _matrix(2, 3)
    c = sparse.constant(value)
    assert str(c) == f"SparseConstant{{csc, shape=(2, 3), nnz={value.nnz}}}" and c.type.shape == (2, 3)
    assert c.data is not value and c.signature() == sparse.constant(value.copy()).signature()
    with pytest.raises(TypeError, match="expected a scipy.sparse csc or csr matrix, received a dense ndarray"):
        sparse.constant(value.toarray())
    w = st.dmatrix("w")
    # structured_add of a constant is folded to a sparse constant; the product of two equal constants merged
    out = sparse.structured_dot(sparse.structured_add(c, 1.0), w) + sparse.structured_dot(sparse.constant(value), w)
    f = symlab.function([w], out, mode="NUMPY")
    ops = [type(n.op).__name__ for n in f.maker.fgraph.toposort()]
    assert "CSM" not in ops and "CSMProperties" not in ops
    weights = np.arange(6.0).reshape(3, 2)
    shifted = value.copy()
    shifted.data += 1.0
    np.testing.assert_allclose(f(weights), shifted @ weights + value @ weights)


def test_import_symlab_does_not_load_the_sparse_package_and_the_attribute_loads_it():
    code = (
        "import sys, symlab; assert 'symlab.sparse' not in sys.modules; "
        "s = symlab.sparse; assert s.csc_matrix is sys.modules['symlab.sparse'].csc_matrix; print('ok')"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.stdout.strip() == "ok", run.stderr


# -- values against scipy.sparse, in every mode -----------------------------------------------------------
def test_to_and_fro(compile_fn):
    x = sparse.csc_matrix("x", dtype="float32")
    dense = sparse.dense_from_sparse(x)
    f = compile_fn([x], [dense, sparse.csc_from_dense(dense), sparse.csr_from_dense(dense)])
    value = _matrix(4, 3, dtype="float32")
    got_dense, got_csc, got_csr = f(value)
    assert got_dense.dtype == np.float32 and np.array_equal(got_dense, value.toarray())
    assert got_csc.format == "csc" and got_csr.format == "csr"
    assert (got_csc != value).nnz == 0 and (got_csr != value).nnz == 0


def test_csm_properties_and_rebuilding_in_the_other_format_transposes(compile_fn):
    x = sparse.csc_matrix("x", dtype="int64")
    data, indices, indptr, shape = sparse.csm_properties(x)
    f = compile_fn([x], [data, indices, indptr, shape, sparse.CSR(data, indices, indptr, shape[::-1])])
    value = sp.csc_matrix(np.array([[0, 7, 0, 2], [5, 0, 0, 0], [0, 0, 9, 0]], dtype="int64"))
    got_data, got_indices, got_indptr, got_shape, rebuilt = f(value)
    assert got_data.tolist() == value.data.tolist() and got_indices.tolist() == value.indices.tolist()
    assert got_indptr.tolist() == value.indptr.tolist() and got_shape.tolist() == [3, 4]
    assert got_indices.dtype == got_indptr.dtype == got_shape.dtype == np.int32
    assert rebuilt.format == "csr" and np.array_equal(rebuilt.toarray(), value.toarray().T)


def test_structured_operations_touch_the_stored_values_only(compile_fn):
    x = sparse.csr_matrix("x", dtype="float64")
    outputs = [
        sparse.structured_add(x, 2.0),
        sparse.structured_exp(x),
        sparse.structured_pow(x, 2),
        sparse.structured_sigmoid(x),
        sparse.structured_minimum(x, 0.5),
        sparse.structured_maximum(x, -0.5),
        -x,
    ]
    f = compile_fn([x], outputs)
    value = _matrix(3, 5, format="csr")
    pattern = value.toarray() != 0
    expected = [
        lambda d: d + 2.0, np.exp, lambda d: d**2, lambda d: 1 / (1 + np.exp(-d)),
        lambda d: np.minimum(d, 0.5), lambda d: np.maximum(d, -0.5), np.negative,
    ]
    for got, fn in zip(f(value), expected):
        assert got.format == "csr" and got.nnz == value.nnz
        want = np.where(pattern, fn(value.toarray()), 0.0)
        np.testing.assert_allclose(got.toarray(), want, rtol=1e-14)
    logs = compile_fn([x], sparse.structured_log(x))(abs(value))
    np.testing.assert_allclose(logs.data, np.log(abs(value).data))


def test_transpose_sums_and_products(compile_fn):
    x, y = sparse.csc_matrix("x"), sparse.csr_matrix("y")
    d = st.dmatrix("d")
    f = compile_fn(
        [x, y, d],
        [x.T, x + y, sparse.add(x, d), sparse.add(d, x), x * d, x * 3.0, sparse.subtract(x, y), sparse.subtract(x, d)],
    )
    xv, yv = _matrix(3, 4, seed=1), _matrix(3, 4, seed=2, format="csr")
    dv = np.random.default_rng(3).normal(size=(3, 4))
    t, ss, sd, ds, mul, scaled, diff, diff_dense = f(xv, yv, dv)
    assert t.format == "csr" and np.array_equal(t.toarray(), xv.toarray().T)
    assert ss.format == "csc" and np.allclose(ss.toarray(), (xv + yv).toarray())
    assert isinstance(sd, np.ndarray) and np.allclose(sd, xv.toarray() + dv) and np.allclose(ds, sd)
    assert mul.format == "csc" and mul.nnz == xv.nnz and np.allclose(mul.toarray(), xv.multiply(dv).toarray())
    assert np.allclose(scaled.toarray(), 3.0 * xv.toarray())
    assert np.allclose(diff.toarray(), (xv - yv).toarray()) and np.allclose(diff_dense, xv.toarray() - dv)


def test_dot_and_structured_dot_against_scipy(compile_fn):
    a = sparse.csr_matrix("a", dtype="float32")
    b, c = st.dmatrix("b"), st.dmatrix("c")
    f = compile_fn([a, b, c], [sparse.structured_dot(a, b), sparse.dot(a, b), sparse.dot(c, a), sparse.structured_dot(c, a), a.dot(b), a @ b])
    av = _matrix(3, 4, format="csr", dtype="float32")
    bv, cv = np.arange(8.0).reshape(4, 2), np.arange(6.0).reshape(2, 3) - 2
    outputs = f(av, bv, cv)
    for got, want in zip(outputs, [av @ bv, av @ bv, cv @ av, cv @ av, av @ bv, av @ bv]):
        assert got.dtype == np.float64 and isinstance(got, np.ndarray)
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_numba_mode_runs_the_numpy_backend_and_says_why(compile_fn):
    x = sparse.csc_matrix("x")
    w = st.dmatrix("w")
    f = compile_fn([x, w], st.tanh(sparse.structured_dot(x, w)).sum())
    value, weights = _matrix(3, 2), np.ones((2, 2))
    assert np.isclose(f(value, weights), np.tanh(value @ weights).sum())
    function = f.function
    if function.maker.mode.linker == "numba":
        info = function.compile_info
        assert info.numpy_only.startswith("the graph holds x (SparseTensorType(csc, float64, (?, ?)))")
        assert "scipy.sparse" in info.numpy_only and info.error is None and info.fallback_ops == []
        assert function.tier == NUMPY_ONLY_TIER and function.wait(0) is True
        assert "scipy.sparse matrices, which Numba's nopython mode cannot take" in repr(function)
    else:
        assert function.compile_info is None


def test_a_sparse_constant_alone_also_runs_on_the_numpy_backend():
    w = st.dmatrix("w")
    c = sparse.constant(_matrix(2, 3, format="csr"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = symlab.function([w], sparse.dot(c, w), mode="NUMBA")
        np.testing.assert_allclose(f(np.eye(3)), c.data.toarray())
    assert "SparseConstant" in f.compile_info.numpy_only


# -- gradients (through dense_from_sparse) -----------------------------------------------------------------
RNG = np.random.default_rng(42)


def _point(*shape):
    """A dense point with no zero: every entry is stored once made sparse (structured = regular grad)."""
    return RNG.uniform(0.5, 1.5, size=shape) * RNG.choice([-1.0, 1.0], size=shape)


def _rebuilt_as_csr(x):
    """The csc matrix ``x``'s parts read as a csr matrix (its transpose), made dense."""
    data, indices, indptr, shape = sparse.csm_properties(x)
    return sparse.dense_from_sparse(sparse.CSR(data, indices, indptr, shape[::-1]))


@pytest.mark.parametrize(
    "fn, shapes",
    [
        (lambda d: sparse.dense_from_sparse(sparse.csc_from_dense(d)) ** 2, [(3, 4)]),
        (lambda d: sparse.dense_from_sparse(sparse.structured_add(sparse.csr_from_dense(d), 1.5)) ** 2, [(3, 2)]),
        (lambda d: sparse.dense_from_sparse(sparse.structured_exp(sparse.csc_from_dense(d))), [(2, 3)]),
        (lambda d, w: sparse.structured_dot(sparse.csc_from_dense(d), w), [(3, 4), (4, 2)]),
        (lambda d, w: sparse.structured_dot(w, sparse.csr_from_dense(d)), [(4, 2), (3, 4)]),
        (lambda d, w: sparse.dot(sparse.csr_from_dense(d), w), [(2, 3), (3, 2)]),
        (lambda d, w: sparse.dot(w, sparse.csc_from_dense(d)), [(3, 2), (2, 3)]),
        (lambda d, e: sparse.dense_from_sparse(sparse.csc_from_dense(d) + sparse.csr_from_dense(e)), [(2, 3), (2, 3)]),
        (lambda d, e: sparse.add(sparse.csr_from_dense(d), e) * e, [(3, 2), (3, 2)]),
        (lambda d, e: sparse.dense_from_sparse(sparse.csc_from_dense(d) * e), [(2, 3), (2, 3)]),
        (lambda d: sparse.dense_from_sparse(sparse.csc_from_dense(d).T) @ d, [(3, 3)]),
        (lambda d: _rebuilt_as_csr(sparse.csc_from_dense(d)) * 2.0, [(2, 4)]),
    ],
    ids=["to-and-fro", "structured_add", "structured_exp", "structured_dot", "structured_dot-dense-first", "dot",
         "dot-dense-first", "add-sparse-sparse", "add-sparse-dense", "multiply", "transpose", "csm-parts"],
)
def test_gradients_match_finite_differences(fn, shapes):
    verify_grad(fn, [_point(*s) for s in shapes], rng=np.random.default_rng(0))


def test_structured_gradients_stay_on_the_pattern(compile_fn):
    """The gradient of a structured op with respect to a sparse input has that input's pattern."""
    x = sparse.csc_matrix("x")
    w = st.dmatrix("w")
    cost = (sparse.structured_dot(x, w) ** 2).sum() + sparse.dense_from_sparse(x).sum()
    gx, gw = symlab.grad(cost, [x, w])
    assert gx.type == x.type
    f = compile_fn([x, w], [gx, gw])
    xv, wv = _matrix(4, 3), np.arange(6.0).reshape(3, 2) / 4
    got_x, got_w = f(xv, wv)
    product = xv @ wv
    full = 2 * product @ wv.T + 1.0
    pattern = xv.toarray() != 0
    assert got_x.format == "csc" and got_x.nnz == xv.nnz
    np.testing.assert_allclose(got_x.toarray(), np.where(pattern, full, 0.0))
    np.testing.assert_allclose(got_w, xv.T @ (2 * product))


# -- printing --------------------------------------------------------------------------------------------
def test_printing_a_graph_with_sparse_variables():
    x = sparse.csc_matrix("x", dtype="float32")
    out = sparse.dense_from_sparse(sparse.structured_add(x, 2)) + sparse.dense_from_sparse(sparse.constant(_matrix(3, 3, density=1.0, dtype="float32")))
    text = symlab.dprint(out, file="str", print_type=True)
    assert "CSM{csc} [id" in text and "<SparseTensorType(csc, float32, (?, ?))>" in text
    assert "SparseConstant{csc, shape=(3, 3), nnz=9}" in text
    assert "SparseConstant{csc, shape=(3, 3), nnz=9}" in symlab.pp(out)
    from symlab.printing import pydotprint

    dot_source = pydotprint(out, format="dot", return_image=True)
    assert "SparseTensorType(csc, float32, (?, ?))" in str(dot_source)
    bundle = out._repr_mimebundle_()
    assert "SparseTensorType(csc, float32" in bundle["text/vnd.graphviz"]
    f = symlab.function([x], out, mode="NUMPY")
    assert "DenseFromSparse{structured=True}" in symlab.dprint(f, file="str")


# -- bad input ----------------------------------------------------------------------------------------------
def test_a_dense_value_for_a_sparse_input_is_refused_by_the_function(compile_fn):
    x = sparse.csr_matrix("x")
    f = compile_fn([x], sparse.dense_from_sparse(x))
    with pytest.raises(TypeError) as info:
        f(np.eye(2))
    text = str(info.value)
    assert "input 0 ('x')" in text and "expected SparseTensorType(csr, float64, (?, ?))" in text
    assert "dense ndarray of shape (2, 2)" in text


def test_a_dense_variable_where_a_sparse_one_is_expected():
    d = st.dmatrix("d")
    for build in (sparse.dense_from_sparse, sparse.csm_properties, sparse.transpose):
        with pytest.raises(TypeError, match=r"expected a sparse matrix \(csc or csr\), received d of type TensorType\(float64, \(\?, \?\)\)"):
            build(d)
    with pytest.raises(TypeError, match="structured_add: input 0: expected a sparse matrix"):
        sparse.structured_add(d, 1.0)
    with pytest.raises(TypeError, match="at least one input must be sparse"):
        sparse.add(d, d)
    with pytest.raises(TypeError, match="exactly one input must be sparse"):
        sparse.structured_dot(d, d)
    with pytest.raises(TypeError, match="structured_add: input 1 must be a scalar"):
        sparse.structured_add(sparse.csc_matrix(), st.dvector("v"))
    with pytest.raises(TypeError, match="SparseFromDense.*expected a dense tensor, received a scipy.sparse"):
        sparse.csc_from_dense(_matrix(2, 2))
    with pytest.raises(TypeError, match="3 dimensions|2 dimensions"):
        sparse.csc_from_dense(st.dtensor3())


def test_mismatched_shapes_are_named(compile_fn):
    a, b = sparse.csc_matrix("a"), sparse.csr_matrix("b")
    d = st.dmatrix("d")
    f = compile_fn([a, d], sparse.structured_dot(a, d))
    with pytest.raises(ValueError, match=r"shapes \(3, 4\) and \(5, 2\) are not aligned"):
        f(_matrix(3, 4), np.ones((5, 2)))
    g = compile_fn([d, a], sparse.dot(d, a))
    with pytest.raises(ValueError, match=r"SparseDot: shapes \(2, 5\) and \(3, 4\) are not aligned"):
        g(np.ones((2, 5)), _matrix(3, 4))
    h = compile_fn([a, b], a + b)
    with pytest.raises(ValueError, match=r"AddSS: the inputs must have the same shape, received a scipy.sparse csc .* \(3, 4\).* \(4, 3\)"):
        h(_matrix(3, 4), _matrix(4, 3, format="csr"))


def test_bad_parts_for_csm_are_named():
    data, indices, indptr, shape = st.dvector("data"), st.ivector("indices"), st.ivector("indptr"), st.ivector("shape")
    f = symlab.function([data, indices, indptr, shape], sparse.CSC(data, indices, indptr, shape), mode="NUMPY")
    good = f([1.0, 2.0], [0, 1], [0, 1, 2], [2, 2])
    assert good.toarray().tolist() == [[1.0, 0.0], [0.0, 2.0]]
    with pytest.raises(ValueError, match="data and indices must have the same length.*2 values and 1 indices"):
        f([1.0, 2.0], [0], [0, 1, 2], [2, 2])
    with pytest.raises(ValueError, match=r"indptr must have one entry more than the number of columns \(3\), received 3"):
        f([1.0, 2.0], [0, 1], [0, 1, 2], [2, 3])
    with pytest.raises(TypeError, match="data must be a vector"):
        sparse.CSR(st.dmatrix(), indices, indptr, shape)
    with pytest.raises(TypeError, match="indices.*expected integers that fit int32"):
        sparse.CSR(data, [0.5], indptr, shape)
    with pytest.raises(ValueError, match="format must be one of"):
        sparse.CSM("bsr")


# -- shared sparse matrices ----------------------------------------------------------------------------------
def test_shared_sparse_matrix_is_read_and_updated(compile_fn):
    value = _matrix(3, 3, format="csr")
    weights = sparse.shared(value, name="weights")
    assert isinstance(weights, sparse.SparseVariable) and weights.type == SparseTensorType("csr", "float64")
    assert weights.get_value() is not value and (weights.get_value() != value).nnz == 0
    x = st.dmatrix("x")
    step = compile_fn([x], sparse.dot(weights, x), updates={weights: sparse.structured_add(weights, 0.5)})
    np.testing.assert_allclose(step(np.eye(3)), value.toarray())
    shifted = value.copy()
    shifted.data += 0.5
    assert np.allclose(weights.get_value().toarray(), shifted.toarray())
    assert sparse.shared(value, format="csc").type.format == "csc"
    with pytest.raises(TypeError, match="sparse.shared: expected a scipy.sparse matrix, received a dense ndarray"):
        sparse.shared(value.toarray())
    with pytest.raises(TypeError, match="shared variable weights: cannot set .*expects a scipy.sparse matrix"):
        weights.set_value(np.eye(3))


def test_symlab_shared_of_a_scipy_matrix_is_a_shared_sparse_variable():
    """PyTensor's ``shared(scipy_matrix)`` gives a sparse shared variable; symlab's plain ``shared`` does too."""
    import symlab

    value = sp.csr_matrix(np.array([[0.0, 2.0], [1.0, 0.0]]))
    weights = symlab.shared(value, name="weights")
    assert weights.type == sparse.SparseTensorType("csr", "float64")
    assert (weights.get_value() != value).nnz == 0 and weights.get_value() is not value
    with pytest.raises(TypeError, match="shape= is for dense arrays"):
        symlab.shared(value, shape=(2, 2))


def test_debug_mode_checks_a_graph_of_sparse_values():
    """DEBUG mode compares sparse values (its destroy and rewrite checks) by format, shape, dtype and entries."""
    x = sparse.csc_matrix(name="x", dtype="float64")
    y = sparse.structured_add(x, 2.0)
    f = symlab.function([x], [y, sparse.dense_from_sparse(y) * 2.0], mode="DEBUG")
    a = sp.csc_matrix(np.array([[0.0, 0.0, -1.0], [0.0, -2.0, 1.0], [3.0, 0.0, 0.0]]))
    added, doubled = f(a)
    expected = np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 3.0], [5.0, 0.0, 0.0]])
    assert added.format == "csc"
    np.testing.assert_array_equal(added.toarray(), expected)
    np.testing.assert_array_equal(doubled, 2.0 * expected)


def test_dense_operators_with_a_sparse_matrix_on_the_right_use_the_sparse_ops():
    """``dense + sparse``, ``dense * sparse`` and ``dense @ sparse`` work as with the sparse matrix on the left."""
    x = st.dmatrix("x")
    s = sparse.csr_matrix(name="s", dtype="float64")
    dense = np.array([[1.0, 2.0], [3.0, 4.0]])
    value = sp.csr_matrix(np.array([[0.0, 5.0], [6.0, 0.0]]))
    added, product, matmul = symlab.function([x, s], [x + s, x * s, x @ s], mode="NUMPY")(dense, value)
    as_array = [r.toarray() if sp.issparse(r) else np.asarray(r) for r in (added, product, matmul)]
    np.testing.assert_array_equal(as_array[0], dense + value.toarray())
    np.testing.assert_array_equal(as_array[1], dense * value.toarray())
    np.testing.assert_array_equal(as_array[2], dense @ value.toarray())


# -- the ops the variable class and the type reach (symlab.sparse.registry) --------------------------------
def test_the_variable_operators_and_the_type_call_the_registered_ops():
    from symlab.sparse.registry import sparse_ops

    ops = sparse_ops()
    assert (ops.transpose, ops.dense_from_sparse, ops.add, ops.dot) == (
        sparse.transpose, sparse.dense_from_sparse, sparse.add, sparse.dot)
    x = sparse.csc_matrix("x")
    assert isinstance((x + x).owner.op, sparse.AddSS) and isinstance(x.T.owner.op, sparse.Transpose)
    converted = x.type.convert_variable(st.dmatrix("d"))
    assert converted.owner.op == sparse.SparseFromDense("csc")


def test_without_registered_ops_the_operators_say_what_to_import():
    from symlab.sparse import registry

    saved = registry._registered
    registry._registered = None
    try:
        with pytest.raises(RuntimeError, match="the sparse ops are not registered: import symlab.sparse"):
            sparse.csc_matrix("x").toarray()
    finally:
        registry.register_sparse_ops(saved)
    with pytest.raises(TypeError, match="expects a SparseOps, received dict"):
        registry.register_sparse_ops({})
