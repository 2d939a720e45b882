"""What PyTensor's tutorial teaches, tested on symlab with our own code, page by page.

The tutorial is ``doc/tutorial/*.rst`` of pymc-devs/pytensor (commit f857e6961). Each test below
exercises what one of its examples exercises, written here with our own names, values and structure;
expected values are computed with NumPy, not taken from the page. Each docstring names the page and
section. The examples themselves run, renamed and compared with what the page shows, in
``tools/pytensor_tutorial.py`` (which reads the snapshot at run time); the last tests here check that
tool's manifest of exclusions and adaptations without needing the snapshot.

Random variables (``prng.rst``) are tested in ``tests/tensor/random/test_random_prng_tutorial.py``.
``scan`` (``loop``, the scan-based jacobian/hessian of ``gradients``) is tested in every mode in
``tests/scan/test_scan_modes.py``. ``ifelse``
(``conditions``) is tested in ``tests/programs/test_ifelse_conditions.py``, ``OpFromGraph`` in
``tests/compile/test_builders.py``. Functions compile in the ``NUMPY`` mode unless the example is
about a mode.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import pickle
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as scipy_sparse

import symlab
import symlab.tensor as pt
from symlab import function, pp, shared
from symlab.compile.io import In, Out


@pytest.fixture(autouse=True)
def _numpy_mode():
    with symlab.config.change_flags(mode="NUMPY"):
        yield


def _printed(call, *args):
    """What ``call(*args)`` writes to stdout, and its result."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        result = call(*args)
    return buffer.getvalue(), result


def _logistic(values):
    return 1.0 / (1.0 + np.exp(-np.asarray(values, dtype=float)))


# -- adding.rst ---------------------------------------------------------------------------------------


def test_adding_two_scalars_gives_a_zero_dimensional_float64_array():
    """adding.rst, "Adding two Scalars": declare, add, compile, call."""
    left, right = pt.dscalar("left"), pt.dscalar("right")
    total = left + right
    add = function([left, right], total)
    result = add(1.5, -4.25)
    assert isinstance(result, np.ndarray) and result.shape == () and result.dtype == np.float64
    assert result == 1.5 - 4.25
    assert np.allclose(add(7.1, 0.2), 7.3)


def test_adding_a_variable_has_the_type_of_its_constructor():
    """adding.rst, "Step 1": a dscalar is a TensorVariable whose type *is* ``pt.dscalar``."""
    left = pt.dscalar("left")
    assert isinstance(left, symlab.tensor.TensorVariable)
    assert left.type == pt.dscalar and left.type is pt.dscalar
    assert left.type.dtype == "float64" and left.type.shape == ()
    assert str(left.type) == "TensorType(float64, ())"


def test_adding_pp_prints_the_sum_by_names():
    """adding.rst, "Step 2": ``pp`` shows the symbolic sum."""
    first, second = pt.dscalar("first"), pt.dscalar("second")
    assert pp(first + second) == "(first + second)"


def test_adding_eval_takes_a_dictionary_of_values():
    """adding.rst, "Step 3": ``eval`` instead of ``function``."""
    a, b = pt.dscalar("a"), pt.dscalar("b")
    assert np.allclose((a * 2 + b).eval({a: 3.5, b: -1.0}), 6.0)


@pytest.mark.parametrize("as_arrays", [False, True], ids=["lists", "ndarrays"])
def test_adding_two_matrices_from_lists_or_arrays(as_arrays):
    """adding.rst, "Adding two Matrices": nested lists and NumPy arrays are both accepted."""
    m1, m2 = pt.dmatrix("m1"), pt.dmatrix("m2")
    add = function([m1, m2], m1 + m2)
    left = [[5, -1, 2], [0, 3, 8]]
    right = [[1, 1, 1], [-2, 4, 0.5]]
    if as_arrays:
        left, right = np.array(left), np.array(right)
    got = add(left, right)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, np.add(left, right))


def test_adding_exercise_a_plus_a_to_the_tenth():
    """adding.rst, "Exercise": a vector plus its tenth power."""
    v = symlab.tensor.vector()
    power_sum = function([v], v + v**10)
    values = np.array([0.0, 1.0, 2.0, -1.5], dtype=symlab.config.floatX)
    np.testing.assert_allclose(power_sum(values), values + values**10)


def test_index_star_import_gives_the_main_names():
    """index.rst: ``from pytensor import *`` then ``import pytensor.tensor as pt``."""
    namespace: dict = {}
    exec("from symlab import *\nimport symlab.tensor as pt", namespace)
    for name in ("function", "shared", "grad", "pp", "In", "Out", "config", "tensor"):
        assert name in namespace, name
    assert namespace["pt"] is pt


# -- aliasing.rst -------------------------------------------------------------------------------------


def test_aliasing_shared_borrow_decides_whether_the_array_is_aliased():
    """aliasing.rst, "Borrowing when Creating Shared Variables"."""
    source = np.full(3, 4.0)
    copied_by_default = shared(source)
    copied = shared(source, borrow=False)
    aliased = shared(source, borrow=True)
    source *= 2
    np.testing.assert_array_equal(copied_by_default.get_value(), [4.0, 4.0, 4.0])
    np.testing.assert_array_equal(copied.get_value(), [4.0, 4.0, 4.0])
    np.testing.assert_array_equal(aliased.get_value(), [8.0, 8.0, 8.0])


def test_aliasing_get_value_borrow_and_internal_type():
    """aliasing.rst, "Borrowing when Accessing Value of Shared Variables"."""
    holder = shared(np.arange(4.0))
    copy_of_value = holder.get_value(borrow=False)
    copy_of_value[0] = 100.0
    assert holder.get_value()[0] == 0.0, "borrow=False must return a copy"
    internal = holder.get_value(borrow=True, return_internal_type=True)
    assert isinstance(internal, np.ndarray)
    np.testing.assert_array_equal(internal, np.arange(4.0))


def test_aliasing_set_value_with_an_in_place_function():
    """aliasing.rst, "Assigning": ``set_value(f(get_value(borrow=True)), borrow=True)``."""
    holder = shared(np.ones(3))

    def double_in_place(array):
        array *= 2
        return array

    holder.set_value(double_in_place(holder.get_value(borrow=True)), borrow=True)
    np.testing.assert_array_equal(holder.get_value(), [2.0, 2.0, 2.0])


def test_aliasing_borrowed_inputs_and_outputs_of_a_function():
    """aliasing.rst, "Borrowing when Constructing Function Objects": ``In(borrow=)``, ``Out(borrow=)``."""
    m = pt.matrix("m")
    triple = function([In(m, borrow=True)], Out(3 * m, borrow=True))
    value = np.arange(6, dtype=symlab.config.floatX).reshape(2, 3)
    np.testing.assert_allclose(triple(value), 3 * value)


# -- broadcasting.rst ---------------------------------------------------------------------------------


def test_broadcasting_a_column_against_a_matrix():
    """broadcasting.rst: a ``col`` (static shape (None, 1)) broadcasts along the columns."""
    grid, column = pt.matrix("grid"), pt.col("column")
    assert grid.type.shape == (None, None) and column.type.shape == (None, 1)
    add = function([grid, column], grid + column)
    g = np.arange(8, dtype=symlab.config.floatX).reshape(2, 4)
    c = np.array([[10.0], [-1.0]], dtype=symlab.config.floatX)
    np.testing.assert_allclose(add(g, c), g + c)


def test_broadcasting_is_not_decided_at_run_time():
    """broadcasting.rst: two ``matrix`` inputs do not broadcast a length-1 dimension at run time."""
    p, q = pt.matrix("p"), pt.matrix("q")
    add = function([p, q], p + q)
    with pytest.raises(ValueError, match=r"\(2, 4\).*\(2, 1\)"):
        add(np.zeros((2, 4)), np.zeros((2, 1)))
    assert add(np.ones((2, 4)), np.ones((2, 4))).shape == (2, 4)
    assert add(np.ones((5, 1)), np.ones((5, 1))).shape == (5, 1)


@pytest.mark.parametrize("how", ["static shape", "specify_shape", "expand_dims", "None index"])
def test_broadcasting_declared_by_the_user(how):
    """broadcasting.rst: a static shape, ``specify_shape``, ``expand_dims`` or ``[:, None]`` allow it."""
    grid = pt.matrix("grid")
    if how == "static shape":
        other = pt.matrix("other", shape=(None, 1))
        inputs, operand = [grid, other], other
    elif how == "specify_shape":
        other = pt.matrix("other")
        inputs, operand = [grid, other], pt.specify_shape(other, (None, 1))
    else:
        other = pt.vector("other")
        operand = pt.expand_dims(other, 1) if how == "expand_dims" else other[:, None]
        inputs = [grid, other]
    add = function(inputs, grid + operand)
    g = np.arange(6.0).reshape(3, 2).astype(symlab.config.floatX)
    o = np.array([1.0, -2.0, 0.5], dtype=symlab.config.floatX)
    o = o if other.ndim == 1 else o[:, None]
    np.testing.assert_allclose(add(g, o), g + o.reshape(3, 1))


def test_broadcasting_static_shapes_of_created_tensors():
    """broadcasting.rst: ``full``, ``constant`` and ``shared`` and the static shapes they get."""
    length = pt.scalar("length", dtype="int64")
    assert pt.full((length,), 1.5).type.shape == (None,)
    assert pt.full((1,), 1.5).type.shape == (1,)
    assert pt.constant(np.ones((2, 1))).type.shape == (2, 1)
    value = np.ones((4, 1))
    assert shared(value).type.shape == (None, None)
    assert shared(value, shape=(None, 1)).type.shape == (None, 1)


# -- conditions.rst (switch; ifelse: test_ifelse_conditions.py) ---------------------------------------------


@pytest.mark.parametrize("mode", ["NUMPY", symlab.compile.mode.Mode(linker="vm")], ids=["NUMPY", "vm"])
def test_conditions_switch_chooses_elementwise(mode):
    """conditions.rst, "IfElse vs Switch": ``switch(lt(a, b), mean(x), mean(y))``, both sides computed."""
    low, high = pt.scalars("low", "high")
    first, second = pt.matrices("first", "second")
    first_if_ordered = pt.switch(pt.lt(low, high), first.mean(), second.mean())
    choose = function([low, high, first, second], first_if_ordered, mode=mode)
    xs = np.arange(6, dtype=symlab.config.floatX).reshape(2, 3)
    ys = -np.ones((3, 2), dtype=symlab.config.floatX)
    np.testing.assert_allclose(choose(0.0, 1.0, xs, ys), xs.mean())
    np.testing.assert_allclose(choose(2.0, 1.0, xs, ys), ys.mean())
    rows = pt.vector("rows")
    elementwise = function([rows], pt.switch(rows > 0, rows, -2 * rows))
    r = np.array([-1.0, 2.0, 0.0, 3.5], dtype=symlab.config.floatX)
    np.testing.assert_allclose(elementwise(r), np.where(r > 0, r, -2 * r))


# -- debug_faq.rst ------------------------------------------------------------------------------------


def test_debug_faq_a_shape_error_names_the_node_and_the_shapes():
    """debug_faq.rst, "Interpreting Error Messages": vectors of different lengths."""
    u, v = pt.vector("u"), pt.vector("v")
    combined = function([u, v], (u + u) + v)
    with pytest.raises(ValueError) as caught:
        combined(np.ones(4), np.ones(2))
    message = str(caught.value)
    assert "Elemwise" in message and "(4,)" in message and "(2,)" in message


def test_debug_faq_elementwise_product_of_mismatched_matrices_raises():
    """debug_faq.rst, "Dumping a Function to help debug": ``a * b`` of shapes (2, 3) and (4, 4)."""
    a, b = pt.dmatrix("a"), pt.dmatrix("b")
    product = function([a, b], [a * b])
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4, 4\)"):
        product(np.ones((2, 3)), np.ones((4, 4)))
    np.testing.assert_array_equal(product(np.full((2, 3), 2.0), np.full((2, 3), 3.0))[0], np.full((2, 3), 6.0))


def test_debug_faq_print_op_prints_its_message_and_the_value():
    """debug_faq.rst, "How do I print an intermediate value in a function?": ``printing.Print``."""
    vec = symlab.tensor.dvector("vec")
    shown = symlab.printing.Print("checkpoint")(vec)
    quiet = function([vec], vec * 4)
    loud = function([vec], shown * 4)
    printed, result = _printed(quiet, [1.0, -2.0])
    assert printed == "" and np.array_equal(result, [4.0, -8.0])
    printed, result = _printed(loud, [1.0, -2.0])
    assert np.array_equal(result, [4.0, -8.0])
    assert printed.startswith("checkpoint __str__ = ") and str(np.array([1.0, -2.0])) in printed


def test_debug_faq_monitor_mode_calls_pre_and_post_functions_per_node():
    """debug_faq.rst, "How do I Step through a Compiled Function?": ``MonitorMode(pre_func=, post_func=)``."""
    calls, inputs_after = [], []

    def before(fgraph, index, node, thunk):
        calls.append(("pre", index, [storage[0].copy() for storage in thunk.inputs]))

    def after(fgraph, index, node, thunk):
        calls.append(("post", index, [storage[0].copy() for storage in thunk.outputs]))
        inputs_after.append(sorted(float(storage[0]) for storage in thunk.inputs))

    s = symlab.tensor.dscalar("s")
    scaled = function([s], [7 * s], mode=symlab.compile.MonitorMode(pre_func=before, post_func=after))
    assert scaled(2.5)[0] == 17.5
    assert [(kind, index) for kind, index, _ in calls] == [("pre", 0), ("post", 0)]
    assert sorted(float(v) for v in calls[0][2]) == [2.5, 7.0]
    assert [float(v) for v in calls[1][2]] == [17.5]
    assert inputs_after == [[2.5, 7.0]], "the inputs are still there for post_func (debug_faq: allow_gc)"


def test_debug_faq_monitor_mode_finds_the_node_that_makes_a_nan():
    """debug_faq.rst, "How to Use pdb" / detect_nan: a ``post_func`` that notes nodes with NaN outputs,
    with fusion and in-place rewrites excluded so every node is seen."""
    culprits = []

    def note_nan(fgraph, index, node, thunk):
        if any(np.isnan(storage[0]).any() for storage in thunk.outputs):
            culprits.append(node)

    mode = symlab.compile.MonitorMode(post_func=note_nan).excluding("elemwise_fusion", "inplace")
    t = pt.dvector("t")
    entropy_term = function([t], [symlab.tensor.log(t) * t], mode=mode)
    assert culprits == [] and np.allclose(entropy_term(np.array([1.0, 2.0]))[0], [0.0, 2 * np.log(2)])
    entropy_term(np.array([0.0, 1.0]))
    assert [str(node.op) for node in culprits] == ["Elemwise{mul,no_inplace}"], culprits


def test_nan_tutorial_nan_guard_mode_names_the_node():
    """nan_tutorial.rst, "Run in NanGuardMode, DebugMode, or MonitorMode"."""
    p = pt.dvector("p")
    guarded = function([p], 1 / pt.log(p + 1), mode=symlab.compile.NanGuardMode(nan_is_error=True, inf_is_error=True))
    np.testing.assert_allclose(guarded(np.array([1.0, 3.0])), 1 / np.log([2.0, 4.0]))
    with pytest.raises(Exception, match="NanGuard.*log"):
        guarded(np.array([-2.0]))


# -- examples.rst -------------------------------------------------------------------------------------


def test_examples_logistic_function_two_ways():
    """examples.rst, "Logistic Function": ``1 / (1 + exp(-x))`` and ``(1 + tanh(x / 2)) / 2``."""
    m = pt.dmatrix("m")
    by_exp = function([m], 1 / (1 + pt.exp(-m)))
    by_tanh = function([m], (1 + pt.tanh(m / 2)) / 2)
    values = [[-3.0, 0.0], [0.5, 4.0]]
    np.testing.assert_allclose(by_exp(values), _logistic(values), rtol=1e-12)
    np.testing.assert_allclose(by_tanh(values), _logistic(values), rtol=1e-12)


def test_examples_several_outputs_at_once():
    """examples.rst, "Computing More than one Thing at the Same Time"."""
    p, q = pt.dmatrices("p", "q")
    gap = p - q
    several = function([p, q], [gap, abs(gap), gap**2])
    pv, qv = np.array([[2.0, 0.0], [1.0, -1.0]]), np.array([[1.0, 3.0], [1.0, 1.0]])
    got = several(pv, qv)
    assert isinstance(got, list) and len(got) == 3
    for value, expected in zip(got, [pv - qv, np.abs(pv - qv), (pv - qv) ** 2]):
        np.testing.assert_array_equal(value, expected)


def test_examples_default_values_and_names_of_inputs():
    """examples.rst, "Setting a Default Value for an Argument": ``In(value=, name=)``, keyword calls."""
    base, offset, factor = pt.dscalars("base", "offset", "factor")
    with_offset = function([base, In(offset, value=5)], base + offset)
    assert with_offset(10) == 15 and with_offset(10, -1) == 9
    scaled = function([base, In(offset, value=5), In(factor, value=3, name="scale")], (base + offset) * factor)
    assert scaled(1) == (1 + 5) * 3
    assert scaled(1, 2) == (1 + 2) * 3
    assert scaled(1, 2, 10) == (1 + 2) * 10
    assert scaled(1, scale=0.5) == (1 + 5) * 0.5
    assert scaled(1, scale=2, offset=0) == (1 + 0) * 2


def test_examples_shared_variable_with_updates_and_set_value():
    """examples.rst, "Using Shared Variables": an accumulator and a decrementor share one state."""
    count = shared(0)
    step = pt.iscalar("step")
    add_step = function([step], count, updates=[(count, count + step)])
    assert int(count.get_value()) == 0
    expected = 0
    for increment in (4, 250, -3):
        assert int(add_step(increment)) == expected, "the output is the value before the update"
        expected += increment
        assert int(count.get_value()) == expected
    count.set_value(-10)
    assert int(add_step(6)) == -10 and int(count.get_value()) == -4
    subtract_step = function([step], count, updates=[(count, count - step)])
    assert int(subtract_step(4)) == -4 and int(count.get_value()) == -8


def test_examples_givens_replace_a_shared_variable():
    """examples.rst, "Using Shared Variables": ``givens`` use another value in place of the state."""
    count = shared(5)
    step = pt.iscalar("step")
    stand_in = pt.scalar(dtype=count.dtype)
    formula = function([step, stand_in], count * 3 + step, givens=[(count, stand_in)])
    assert int(formula(2, 10)) == 10 * 3 + 2
    assert int(count.get_value()) == 5


def test_examples_copying_functions_swap_and_delete_updates():
    """examples.rst, "Copying functions": ``copy(swap=)`` and ``copy(delete_updates=True)``."""
    total = shared(0)
    amount = pt.iscalar("amount")
    accumulate = function([amount], total, updates=[(total, total + amount)])
    accumulate(7)
    other_total = shared(0)
    accumulate_other = accumulate.copy(swap={total: other_total})
    assert int(accumulate_other(50)) == 0
    assert int(other_total.get_value()) == 50 and int(total.get_value()) == 7
    peek = accumulate.copy(delete_updates=True)
    assert int(peek(1000)) == 7 and int(total.get_value()) == 7


def _numpy_logistic_regression(data, targets, weights, bias, rate, steps, decay=0.01):
    """Gradient descent on mean cross-entropy + decay * |w|^2, the textbook way (stable sigmoid)."""
    weights, bias = weights.copy(), float(bias)
    for _ in range(steps):
        prob = _logistic(data @ weights + bias)
        residual = (prob - targets) / len(targets)
        grad_w = data.T @ residual + 2 * decay * weights
        grad_b = residual.sum()
        weights, bias = weights - rate * grad_w, bias - rate * grad_b
    return weights, bias


def test_examples_logistic_regression_a_few_steps_equals_numpy():
    """examples.rst, "A Real Example: Logistic Regression": shared weights, cross-entropy with decay,
    ``grad``, a training function with updates and a prediction function, a few steps on small data."""
    rng = np.random.default_rng(29)
    rows, features, steps, rate = 30, 6, 4, 0.1
    data = rng.standard_normal((rows, features))
    targets = rng.integers(0, 2, size=rows).astype(float)
    start_w = rng.standard_normal(features)
    inputs, labels = pt.dmatrix("inputs"), pt.dvector("labels")
    w, b = shared(start_w.copy(), name="w"), shared(0.0, name="b")
    prob = 1 / (1 + pt.exp(-pt.dot(inputs, w) - b))
    decision = prob > 0.5
    loss = -labels * pt.log(prob) - (1 - labels) * pt.log(1 - prob)
    objective = loss.mean() + 0.01 * (w**2).sum()
    grad_w, grad_b = pt.grad(objective, [w, b])
    train = function([inputs, labels], [decision, loss], updates=[(w, w - rate * grad_w), (b, b - rate * grad_b)])
    predict = function([inputs], decision)
    for _ in range(steps):
        _, per_row_loss = train(data, targets)
    want_w, want_b = _numpy_logistic_regression(data, targets, start_w, 0.0, rate, steps)
    np.testing.assert_allclose(w.get_value(), want_w, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(b.get_value(), want_b, rtol=1e-12, atol=1e-14)
    before_last = _numpy_logistic_regression(data, targets, start_w, 0.0, rate, steps - 1)
    p_last = _logistic(data @ before_last[0] + before_last[1])
    np.testing.assert_allclose(per_row_loss, -targets * np.log(p_last) - (1 - targets) * np.log1p(-p_last), rtol=1e-10)
    np.testing.assert_array_equal(predict(data), _logistic(data @ want_w + want_b) > 0.5)


# -- gradients.rst ------------------------------------------------------------------------------------


def test_gradients_of_a_square_before_and_after_rewriting():
    """gradients.rst, "Computing Gradients": ``grad(x ** 2, x)``, ``pp`` before and after compiling."""
    v = pt.dscalar("v")
    slope = pt.grad(v**2, v)
    unrewritten = pp(slope)
    assert "v" in unrewritten and "**" in unrewritten
    slope_fn = function([v], slope)
    assert slope_fn(-3.0) == -6.0 and np.allclose(slope_fn(12.5), 25.0)
    assert pp(slope_fn.maker.fgraph.outputs[0]) == "(2.0 * v)"


def test_gradients_of_the_logistic_function():
    """gradients.rst, "Computing Gradients": the derivative of the summed logistic, s * (1 - s)."""
    m = pt.dmatrix("m")
    slope = function([m], pt.grad(pt.sum(1 / (1 + pt.exp(-m))), m))
    values = np.array([[-2.5, 0.0], [1.0, 3.0]])
    s = _logistic(values)
    np.testing.assert_allclose(slope(values), s * (1 - s), rtol=1e-12)


def test_gradients_jacobian_by_pullback_and_vectorize_graph():
    """gradients.rst, "Computing the Jacobian": a pullback row, vectorized over the rows of an identity."""
    from symlab.gradient import pullback
    from symlab.graph import vectorize_graph

    v = pt.dvector("v")
    cube = v**3
    cotangent = pt.dvector("cotangent")
    jacobian = vectorize_graph(pullback(cube, v, cotangent), replace={cotangent: pt.eye(v.size)})
    values = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(function([v], jacobian)(values), np.diag(3 * values**2))


def test_gradients_jacobian_and_hessian_of_a_static_length_vector():
    """gradients.rst, "Computing the Jacobian" / "Computing the Hessian": ``pt.jacobian``, ``pt.hessian``
    (symlab builds them without ``scan`` when the length is static)."""
    v = pt.vector("v", shape=(3,), dtype="float64")
    values = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(function([v], pt.jacobian(pt.exp(v), v))(values), np.diag(np.exp(values)))
    np.testing.assert_allclose(function([v], pt.hessian(pt.sum(v**3), v))(values), np.diag(6 * values))


@pytest.mark.parametrize("how", ["pushforward", "pushforward_op", "Rop"])
def test_gradients_jacobian_times_a_vector(how):
    """gradients.rst, "Jacobian times a Vector" (R-operator): the pushforward of ``x @ M`` along ``D``."""
    mat, direction, row = pt.dmatrix("mat"), pt.dmatrix("direction"), pt.dvector("row")
    image = pt.dot(row, mat)
    if how == "pushforward":
        product = symlab.gradient.pushforward(image, mat, direction)
    elif how == "pushforward_op":
        product = symlab.gradient.pushforward(image, mat, direction, use_op_pushforward=True)
    else:
        product = symlab.gradient.Rop(image, mat, direction)
    m = np.arange(6.0).reshape(3, 2)
    d = np.array([[1.0, -1.0], [0.5, 2.0], [3.0, 0.0]])
    r = np.array([1.0, 2.0, -1.0])
    np.testing.assert_allclose(function([mat, direction, row], product)(m, d, r), r @ d)


@pytest.mark.parametrize("how", ["pullback", "Lop"])
def test_gradients_vector_times_the_jacobian(how):
    """gradients.rst, "Vector times the Jacobian" (L-operator): the pullback of ``x @ M`` of a cotangent."""
    mat, cotangent, row = pt.dmatrix("mat"), pt.dvector("cotangent"), pt.dvector("row")
    image = pt.dot(row, mat)
    pull = symlab.gradient.pullback if how == "pullback" else symlab.gradient.Lop
    product = pull(image, mat, cotangent)
    c, r = np.array([3.0, -1.0]), np.array([0.0, 2.0, 5.0])
    np.testing.assert_allclose(function([cotangent, row], product)(c, r), np.outer(r, c))


@pytest.mark.parametrize("how", ["grad of grad", "pushforward of grad", "hessian_vector_product"])
def test_gradients_hessian_times_a_vector(how):
    """gradients.rst, "Hessian times a Vector": three ways to H v of ``sum(x ** 3)``."""
    x, v = pt.dvector("x"), pt.dvector("v")
    cost = pt.sum(x**3)
    slope = pt.grad(cost, x)
    if how == "grad of grad":
        product = pt.grad((slope * v).sum(), x)
    elif how == "pushforward of grad":
        product = symlab.gradient.pushforward(slope, x, v)
    else:
        product = symlab.gradient.hessian_vector_product(cost, wrt=x, p=v)
    xv, vv = np.array([1.0, -2.0, 3.0]), np.array([2.0, 0.5, -1.0])
    np.testing.assert_allclose(function([x, v], product)(xv, vv), 6 * xv * vv)


# -- loading_and_saving.rst ---------------------------------------------------------------------------


def test_loading_and_saving_pickles_graphs_and_shared_variables(tmp_path):
    """loading_and_saving.rst, "The Basics of Pickling": symlab objects through a pickle file."""
    weights = shared(np.array([1.0, 2.0]), name="weights")
    x = pt.dvector("x")
    graph = pt.exp(x) * weights
    with open(tmp_path / "objects.pkl", "wb") as stream:
        for item in (weights, graph):
            pickle.dump(item, stream, protocol=pickle.HIGHEST_PROTOCOL)
    with open(tmp_path / "objects.pkl", "rb") as stream:
        loaded_weights, loaded_graph = pickle.load(stream), pickle.load(stream)
    np.testing.assert_array_equal(loaded_weights.get_value(), [1.0, 2.0])
    loaded_x = next(v for v in symlab.graph.graph_inputs([loaded_graph]) if v.name == "x")
    np.testing.assert_allclose(loaded_graph.eval({loaded_x: np.zeros(2)}), [1.0, 2.0])


class _TinyModel:
    """A model that saves its parameters' values, not its symbolic objects or its data."""

    def __init__(self, weights, bias, data):
        self.kernel, self.offset = shared(weights, name="kernel"), shared(bias, name="offset")
        self.data = data

    def __getstate__(self):
        return (self.kernel.get_value(), self.offset.get_value())

    def __setstate__(self, state):
        self.kernel, self.offset = shared(state[0], name="kernel"), shared(state[1], name="offset")
        self.data = None


def test_loading_and_saving_long_term_by_values_of_shared_variables():
    """loading_and_saving.rst, "Long-Term Serialization": ``__getstate__``/``__setstate__`` of values."""
    model = _TinyModel(np.array([[1.0, -1.0]]), np.array([0.5]), data=np.ones((100, 2)))
    restored = pickle.loads(pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL))
    assert restored.data is None
    np.testing.assert_array_equal(restored.kernel.get_value(), [[1.0, -1.0]])
    inputs = pt.dmatrix("inputs")
    out = function([inputs], pt.dot(inputs, restored.kernel.T) + restored.offset)
    np.testing.assert_allclose(out(np.array([[2.0, 1.0]])), [[1.5]])


# -- modes.rst ----------------------------------------------------------------------------------------


def test_modes_logistic_regression_in_float32_uses_config_float_x():
    """modes.rst, "Exercise": the logistic regression with ``floatX=float32``, inputs cast before storing."""
    with symlab.config.change_flags(floatX="float32"):
        rng = np.random.default_rng(7)
        data = rng.standard_normal((12, 4)).astype(symlab.config.floatX)
        targets = rng.integers(0, 2, size=12).astype(symlab.config.floatX)
        inputs, labels = pt.matrix("inputs"), pt.vector("labels")
        w = shared(rng.standard_normal(4).astype(symlab.config.floatX), name="w")
        b = shared(np.zeros((), dtype=symlab.config.floatX), name="bias")
        prob = 1 / (1 + pt.exp(-pt.dot(inputs, w) - b))
        cost = (-labels * pt.log(prob) - (1 - labels) * pt.log(1 - prob)).mean() + 0.01 * (w**2).sum()
        grad_w, grad_b = pt.grad(cost, [w, b])
        train = function([inputs, labels], cost, updates=[(w, w - 0.01 * grad_w), (b, b - 0.01 * grad_b)], name="train")
        costs = [float(train(data, targets)) for _ in range(3)]
    assert inputs.dtype == "float32" and w.get_value().dtype == np.float32
    assert costs[2] < costs[0] and np.isfinite(costs).all()
    assert train.name == "train" and len(train.maker.fgraph.toposort()) > 0


def test_modes_debug_mode_runs_and_checks():
    """modes.rst, "Using DebugMode": ``mode='DebugMode'``."""
    x = pt.dvector("x")
    tenfold = function([x], 10 * x, mode="DebugMode")
    for value in ([5.0], [0.0], [-7.0, 1.0]):
        np.testing.assert_array_equal(tenfold(value), 10 * np.array(value))


def test_modes_default_mode_and_a_mode_object():
    """modes.rst, "Default Modes" / "Linkers": the configured mode, and a ``Mode`` built by hand."""
    assert symlab.compile.get_default_mode().name == "NUMPY"
    with symlab.config.change_flags(mode="FAST_COMPILE"):
        assert symlab.compile.get_default_mode().name == "FAST_COMPILE"
    x = pt.dvector("x")
    by_hand = function([x], pt.sqrt(x), mode=symlab.compile.mode.Mode(linker="vm"))
    np.testing.assert_allclose(by_hand([4.0, 9.0]), [2.0, 3.0])


# -- printing_drawing.rst -----------------------------------------------------------------------------


def _prediction_graph():
    x, w, b = pt.matrix("x"), shared(np.zeros(3, dtype=symlab.config.floatX), name="w"), shared(0.0, name="b")
    return x, 1 / (1 + pt.exp(-pt.dot(x, w) - b)) > 0.5


def test_printing_pprint_and_debugprint_of_the_graph():
    """printing_drawing.rst, "Pretty Printing" and "Debug Print" of the logistic prediction."""
    x, decision = _prediction_graph()
    pretty = symlab.printing.pprint(decision)
    for piece in ("exp", "dot(x, w)", "b", "> 0.5"):
        assert piece in pretty, (piece, pretty)
    text = symlab.printing.debugprint(decision, file="str")
    lines = text.splitlines()
    assert lines[0].startswith("Elemwise{gt") and "[id A]" in lines[0]
    for op in ("true_div", "exp", "neg", "dot", "DimShuffle"):
        assert op in text, op
    assert re.search(r"\|x \[id \w+\]", text) and re.search(r"\|w \[id \w+\]", text)


def test_printing_debugprint_of_the_compiled_prediction_shows_a_sigmoid():
    """printing_drawing.rst, "Debug Print" of the compiled function: the logistic became a sigmoid."""
    x, decision = _prediction_graph()
    predict = function([x], decision, name="predict")
    text = symlab.printing.debugprint(predict, file="str")
    assert "sigmoid" in text and "dot" in text
    assert "exp" not in text.split("Inner graphs")[0]
    rows = np.array([[1.0, 2.0, 3.0]], dtype=symlab.config.floatX)
    np.testing.assert_array_equal(predict(rows), [False])


def test_printing_pydotprint_writes_a_picture_of_the_graph(tmp_path):
    """printing_drawing.rst, "Picture Printing of Graphs": ``pydotprint(..., outfile=)`` of a graph and
    of a compiled function."""
    pytest.importorskip("graphviz")
    x, decision = _prediction_graph()
    for obj, name in ((decision, "prediction.png"), (function([x], decision), "predict.png")):
        target = tmp_path / name
        draw = functools.partial(symlab.printing.pydotprint, obj, outfile=str(target), var_with_name_simple=True)
        printed, _ = _printed(draw)
        assert str(target) in printed
        assert target.read_bytes().startswith(b"\x89PNG")


# -- profiling.rst ------------------------------------------------------------------------------------


def test_profiling_one_profile_shared_by_two_functions():
    """profiling.rst: one ``ProfileStats`` passed as ``profile=`` to several functions sums their profiles."""
    together = symlab.compile.ProfileStats()
    v = pt.dvector("v")
    double = function([v], 2 * v, profile=together, name="double")
    square = function([v], v**2, profile=together, name="square")
    double(np.ones(3))
    square(np.ones(3))
    square(np.ones(3))
    assert together.calls == 3
    calls_by_op = {op: calls for op, (calls, _) in together.by_op().items()}
    assert sum(calls_by_op.values()) == 3 and len(calls_by_op) == 2, calls_by_op
    text = together.summary()
    assert "double" in text and "square" in text


def test_profiling_profile_true_gives_the_function_a_profile():
    """profiling.rst, option 2: ``profile=True`` and ``f.profile.summary()``; and the summary of a
    ``ProfileStats`` no function used yet."""
    assert symlab.compile.ProfileStats().summary().startswith("Function profile:")
    v = pt.dvector("v")
    shifted = function([v], pt.exp(v) + 1, profile=True, name="shifted")
    shifted(np.zeros(2))
    printed, summary = _printed(shifted.profile.summary)
    assert "shifted" in (summary or "") + printed


# -- shape_info.rst -----------------------------------------------------------------------------------


def test_shape_info_the_shape_of_an_expression_is_computed_without_it():
    """shape_info.rst, "Shape and Shape_i": the shape of ``x ** 2`` comes from ``x``'s shape alone."""
    m = symlab.tensor.matrix("m")
    shape_of_square = function([m], (m**2).shape)
    computed = " ".join(str(node.op) for node in shape_of_square.maker.fgraph.toposort())
    assert "pow" not in computed and "sqr" not in computed and "Shape_i" in computed
    np.testing.assert_array_equal(shape_of_square(np.ones((3, 5), dtype=symlab.config.floatX)), [3, 5])
    assert "Shape_i" in symlab.dprint(shape_of_square, file="str")


def test_shape_info_specify_shape_makes_the_shape_a_constant():
    """shape_info.rst, "Specifying Exact Shape": the compiled shape is a constant."""
    m = symlab.tensor.matrix()
    fixed = symlab.tensor.specify_shape(m, (3, 2))
    shape_fn = function([m], (fixed**2).shape)
    assert shape_fn.maker.fgraph.toposort() == []
    np.testing.assert_array_equal(shape_fn(np.ones((3, 2), dtype=symlab.config.floatX)), [3, 2])


def test_shape_info_shape_of_a_join_does_not_check_the_inputs():
    """shape_info.rst, "Shape Inference Problem": the inferred shape of ``join`` skips the check that
    computing the join itself makes."""
    top, bottom = symlab.tensor.matrix("top"), symlab.tensor.matrix("bottom")
    stacked = symlab.tensor.join(0, top, bottom)
    tv, bv = np.ones((2, 5), dtype=symlab.config.floatX), np.ones((4, 3), dtype=symlab.config.floatX)
    np.testing.assert_array_equal(function([top, bottom], stacked.shape)(tv, bv), [6, 5])
    compute = function([top, bottom], stacked)
    assert "Join" in symlab.printing.debugprint(compute, file="str")
    with pytest.raises(ValueError):
        compute(tv, bv)
    np.testing.assert_array_equal(compute(tv, np.zeros((1, 5), dtype=tv.dtype)), np.vstack([tv, np.zeros((1, 5))]))


def test_shape_info_a_tensor_with_a_static_shape():
    """shape_info.rst, "Specifying Exact Shape": ``tensor(dtype, shape=...)``."""
    block = symlab.tensor.tensor("float64", shape=(2, 3, 4))
    assert block.type.shape == (2, 3, 4) and block.ndim == 3
    assert function([block], block.sum(axis=(1, 2)))(np.ones((2, 3, 4))).tolist() == [12.0, 12.0]


# -- sparse.rst -----------------------------------------------------------------------------------------


def test_sparse_to_and_fro_keeps_the_values():
    """sparse.rst, "To and Fro": sparse -> dense -> sparse, with a csr matrix and integers."""
    from symlab import sparse

    m = sparse.csr_matrix(name="m", dtype="int32")
    back = sparse.csr_from_dense(sparse.dense_from_sparse(m))
    value = scipy_sparse.csr_matrix(np.array([[0, 4, 0, 0], [0, 0, 0, -6]], dtype="int32"))
    dense, again = function([m], [sparse.dense_from_sparse(m), back])(value)
    assert dense.dtype == np.int32 and dense.tolist() == value.toarray().tolist()
    assert again.format == "csr" and (again != value).nnz == 0 and "int32" in sparse.all_dtypes


def test_sparse_properties_read_as_the_other_format_give_the_transpose():
    """sparse.rst, "Properties and Construction": csr parts rebuilt as csc are the transpose."""
    from symlab import sparse

    m = sparse.csr_matrix(name="m", dtype="float64")
    data, indices, indptr, shape = sparse.csm_properties(m)
    rebuilt = function([m], sparse.CSC(data, indices, indptr, shape[::-1]))
    value = scipy_sparse.csr_matrix(np.array([[0.0, 2.5], [-1.0, 0.0], [0.0, 7.0]]))
    got = rebuilt(value)
    assert got.format == "csc" and np.array_equal(got.toarray(), value.toarray().T)


def test_sparse_structured_add_leaves_the_zeros_alone():
    """sparse.rst, "Structured Operation": only the stored values change."""
    from symlab import sparse

    m = sparse.csc_matrix(name="m", dtype="float32")
    value = scipy_sparse.csc_matrix(np.array([[1.5, 0.0], [0.0, 0.0], [0.0, -4.0]], dtype="float32"))
    got = function([m], sparse.structured_add(m, -0.5))(value)
    assert got.dtype == np.float32 and got.toarray().tolist() == [[1.0, 0.0], [0.0, 0.0], [0.0, -4.5]]


# -- symbolic_graphs.rst (moved to "graph structures") ------------------------------------------------


def test_symbolic_graphs_variables_apply_nodes_and_ops():
    """symbolic_graphs.rst (now "graph structures"): a result's owner is an Apply of an Op on inputs."""
    p, q = pt.dmatrices("p", "q")
    product = p * q
    node = product.owner
    assert node.outputs == [product] and node.inputs == [p, q]
    assert "mul" in str(node.op) and p.owner is None


# -- the tool that runs the examples themselves -------------------------------------------------------

TOOLS = Path(__file__).resolve().parents[2] / "tools"


@pytest.fixture(scope="module")
def tutorial_tool():
    """``tools/pytensor_tutorial.py`` imported as a module (its siblings too); no snapshot is read."""
    spec = importlib.util.spec_from_file_location("pytensor_tutorial", TOOLS / "pytensor_tutorial.py")
    module = importlib.util.module_from_spec(spec)
    saved_path = list(sys.path)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = saved_path
    return module


def test_tool_manifest_is_consistent(tutorial_tool):
    """Exclusions name examples as ``page:number`` with a known reason; adapted examples are not excluded;
    the counts by reason are the ones reported on the issue."""
    manifest = sys.modules["tutorial_manifest"]
    reasons = {manifest.JAX, manifest.FRAGMENT}
    for ident, reason in manifest.EXCLUDED.items():
        assert re.fullmatch(r"[a-z_]+:[1-9]\d*", ident), ident
        assert reason in reasons or reason.startswith((manifest.PAGE_ERROR, manifest.FRAGMENT)), (ident, reason)
    assert not manifest.adapted_ids() & set(manifest.EXCLUDED)
    counts: dict[str, int] = {}
    for reason in manifest.EXCLUDED.values():
        counts[reason] = counts.get(reason, 0) + 1
    # since issue 34 (scan) every example of loop.rst and gradients.rst runs, and every one of prng.rst but those
    # needing JAX and prng:35 (an error of the page)
    assert len(manifest.EXCLUDED) == 17
    assert counts[manifest.JAX] == 5 and counts[manifest.FRAGMENT] == 7
    assert not [ident for ident in manifest.EXCLUDED if ident.startswith(("loop:", "gradients:"))]
    for ident, wants in manifest.SYMLAB_OUTPUT.items():
        assert wants and all(isinstance(line, int) and line > 0 for line in wants), ident
        assert all("pytensor" not in str(want).lower() for want in wants.values()), ident
    changes = manifest.overrides()
    assert set(changes) == manifest.adapted_ids()


def test_tool_source_changes_are_small_transformations(tutorial_tool):
    """The code changes are functions of ours that change what they target and nothing else."""
    manifest = sys.modules["tutorial_manifest"]
    assert manifest.fewer_training_steps("n = 3\ntraining_steps = 5000\n") == "n = 3\ntraining_steps = 20\n"
    assert manifest.fewer_training_steps("steps = 5000") == "steps = 5000"
    assert manifest.shape_as_one_tuple("g.standard_normal(rows, cols)") == "g.standard_normal((rows, cols))"
    assert manifest.shape_as_one_tuple("g.standard_normal(cols)") == "g.standard_normal(cols)"
    rewritten = manifest.device_check_takes_its_else_branch("first line\nsecond\n...\n")
    assert rewritten == "ERROR, ...\n...\nsecond\n...\n"
    runner = sys.modules["tutorial_runner"]
    example = {"id": "page:1", "kind": "testcode", "line": 3, "source": "training_steps = 9\n", "want": "x\n"}
    adapted = runner.adapt(example, {"source": [manifest.fewer_training_steps], "want": {0: lambda shown: shown * 2}})
    assert adapted["source"] == "training_steps = 20\n" and adapted["want"] == "x\nx\n"
    assert example["source"] == "training_steps = 9\n"
    with pytest.raises(ValueError, match="changes nothing"):
        runner.adapt({**example, "source": "pass\n"}, {"source": [manifest.fewer_training_steps]})


def test_tool_reads_an_rst_page_of_our_own(tutorial_tool):
    """The page reader finds ``>>>`` blocks with their output and testcode/testoutput pairs."""
    rst = sys.modules["tutorial_rst"]
    page = "\n".join([
        "Title", "=====", "", ">>> import pytensor", ">>> 1 + 1", "2", "",
        ".. testcode::", "", "   print('hi')", "", ".. testoutput::", "", "   hi", "",
        ".. code-block:: bash", "", "   ls", "",
    ])
    examples = rst.parse_rst(page, "mine")
    assert [(e["id"], e["kind"]) for e in examples] == [("mine:1", "doctest"), ("mine:2", "testcode")]
    assert [(s["source"], s["want"]) for s in examples[0]["steps"]] == [("import pytensor", ""), ("1 + 1", "2\n")]
    assert examples[1]["source"] == "print('hi')\n" and examples[1]["want"] == "hi\n"
    assert rst.rename("import pytensor.tensor as pt") == "import symlab.tensor as pt"


def test_tool_says_clearly_when_the_snapshot_is_missing(tutorial_tool, tmp_path, capsys):
    assert tutorial_tool.main([str(tmp_path / "absent")]) == 2
    assert "no snapshot of pymc-devs/pytensor" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("want", "got", "same"),
    [
        ("array([[0.5       , 0.25]])", "array([[0.5, 0.25000000001]])", True),
        ("array(12.)", "array(12.0)", True),
        ("array(12.)", "array(13.)", False),
        ("[    0.     3.  99.]", "[   0.    3. 99.]", True),
        ("begin ... end", "begin middle part end", True),
        ("<class 'symlab.a.B'>", "<class 'symlab.c.B'>", True),
        ("<thing at 0x1f>", "<thing at 0xab12>", True),
        ("True", "False", False),
        ("", "text", False),
        ("nan", "nan", True),
    ],
)
def test_tool_outputs_match_is_tolerant_only_of_format(tutorial_tool, want, got, same):
    assert sys.modules["tutorial_runner"].outputs_match(want, got) is same
