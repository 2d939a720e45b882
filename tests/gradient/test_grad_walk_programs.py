"""GradWalk on real programs: the walk is grad's, its steps are the nodes between wrt and cost, its numbers are right.

For each program (micrograd's MLPs, the MLP loss of ``tests/real_size.py``, notebook 14's logistic regression and
the Deep Learning Tutorials' softmax regression, an RNN written with ``symlab.scan``, a layer packaged as an
``OpFromGraph``) and for random smooth costs of the repository's fuzzer, :func:`check_walk` asserts:

* ``walk.results`` is the graph ``symlab.grad`` returns (``equal_computations``);
* the steps visit exactly the apply nodes between the wrt and the cost (found here from the graph itself), each
  after every client of its outputs (reversed topological order);
* the steps' ``new_nodes`` partition the gradient graph the walk built: each node once, in the step whose
  contributions it computes, inputs before the nodes that read them, none of them a forward node;
* with numbers (:class:`~symlab.notebook.grad_numbers.GradNumbers`), the final total gradient of each wrt and of
  intermediate variables equals central finite differences of the cost.
"""

import numpy as np
import pytest
import real_size
from fuzz.generate import build, generate_batch, input_variables

import symlab
import symlab.tensor as st
from symlab.gradient.walk import GradWalk, walk_of
from symlab.graph.null_type import NullType
from symlab.graph.traversal import ancestors, equal_computations, io_toposort
from symlab.notebook.grad_numbers import GradNumbers


def _between(cost, wrt):
    """The apply nodes with an output that depends on some wrt and that the cost depends on."""
    upstream = set(ancestors([cost]))
    depends = set(wrt)
    nodes = io_toposort([], [cost])
    for node in nodes:
        if any(i in depends for i in node.inputs):
            depends.update(node.outputs)
    return {n for n in nodes if any(o in depends and o in upstream for o in n.outputs)}


def _owners(variables, stop=()):
    return {v.owner for v in ancestors(list(variables), blockers=list(stop)) if v.owner is not None}


def same_results(walk_results, grad_results):
    """The walk's results are grad's: the same graphs (an undefined gradient: the same NullType, saying the same)."""
    walk_results, grad_results = list(walk_results), list(grad_results)
    assert len(walk_results) == len(grad_results)
    for mine, theirs in zip(walk_results, grad_results):
        if isinstance(theirs.type, NullType):
            assert mine.type == theirs.type and mine.owner is None
        else:
            assert equal_computations([mine], [theirs])


def check_steps(walk, cost, wrt):
    """The steps are the nodes between wrt and cost in reversed topological order; their new nodes a partition."""
    nodes = [step.node for step in walk.steps]
    assert len(nodes) == len(set(nodes))
    assert set(nodes) == _between(cost, wrt)
    assert nodes == walk.order
    position = {node: k for k, node in enumerate(nodes)}
    for k, node in enumerate(nodes):
        assert all(position[i.owner] > k for i in node.inputs if i.owner in position), node
    assert [step.number for step in walk.steps] == list(range(1, len(nodes) + 1))
    built = walk.gradient_nodes
    assert len(built) == len(set(built))
    assert not set(built) & walk.forward_nodes
    given = _owners(walk.seeds.values())  # the graphs of known gradients are the caller's
    totals = [c.after for step in walk.steps for c in step.contributions if c.after is not None]
    assert set(built) == _owners(totals, stop=walk.seeds.values()) - walk.forward_nodes - given
    seen = set(walk.forward_nodes) | given
    for step in walk.steps:
        mine = [c.after for c in step.contributions if c.after is not None]
        assert set(step.new_nodes) <= _owners(mine), step
        for node in step.new_nodes:  # inputs first: each reads only nodes built before it
            assert all(i.owner is None or i.owner in seen for i in node.inputs), node
            seen.add(node)
    fine = [w for w, problem in zip(walk.wrt, walk.problems) if not problem and w in walk.totals]
    assert _owners([walk.totals[w] for w in fine]) <= set(built) | walk.forward_nodes | given


def check_walk(cost, wrt, values, intermediates=(), rtol=1e-5, atol=1e-7, **options):
    """The walk's properties on ``cost`` (see the module's docstring); the walk and its numbers."""
    walk = GradWalk(cost, wrt, **options)
    same_results(walk.results, symlab.grad(cost, wrt, **options))
    check_steps(walk, cost, wrt)
    # the numbers: each total gradient is the cost's finite differences
    numbers = GradNumbers(walk, values)
    last = len(walk.steps)
    for w, g in zip(walk.wrt, walk.results):
        if str(getattr(w, "dtype", "")).startswith("float"):
            np.testing.assert_allclose(numbers.value(g), numbers.finite_difference(w), rtol=rtol, atol=atol,
                                       err_msg=f"d cost / d {w}")
    for var in intermediates:
        total = numbers.total(var, last)
        if total is None:  # no gradient reaches it (it only feeds a condition, a cast to int...): the cost is flat in it
            assert var not in walk.totals
            total = np.zeros(np.shape(numbers.value(var)))
        else:
            assert numbers.value(walk.totals[var]) is total
        np.testing.assert_allclose(total, numbers.finite_difference(var), rtol=rtol, atol=atol,
                                   err_msg=f"d cost / d {var}")
    return walk, numbers


def _named(var, name):
    var.name = name
    return var


# -- micrograd ----------------------------------------------------------------------------------------------------
def test_micrograds_lecture_mlp_with_a_squared_error_loss():
    # micrograd's README / lecture: n = MLP(3, [4, 4, 1]) of tanh neurons on four points, loss = sum((yout - ygt)**2)
    xs = np.array([[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]])
    ys = np.array([1.0, -1.0, -1.0, 1.0])
    X, Y = st.dmatrix("X"), st.dvector("ys")
    W1, W2, W3 = st.dmatrix("W1"), st.dmatrix("W2"), st.dmatrix("W3")
    b1, b2, b3 = st.dvector("b1"), st.dvector("b2"), st.dvector("b3")
    h1 = _named(st.tanh(st.dot(X, W1) + b1), "h1")
    h2 = _named(st.tanh(st.dot(h1, W2) + b2), "h2")
    ypred = _named(st.tanh(st.dot(h2, W3) + b3)[:, 0], "ypred")
    loss = ((ypred - Y) ** 2).sum()
    rng = np.random.default_rng(1337)
    values = {X: xs, Y: ys, W1: rng.uniform(-1, 1, (3, 4)), W2: rng.uniform(-1, 1, (4, 4)),
              W3: rng.uniform(-1, 1, (4, 1)), b1: rng.uniform(-1, 1, 4), b2: rng.uniform(-1, 1, 4),
              b3: rng.uniform(-1, 1, 1)}
    walk, numbers = check_walk(loss, [W1, b1, W2, b2, W3, b3], values, intermediates=[h1, h2, ypred])
    # the loss's gradient in ypred is micrograd's 2 * (yout - ygt)
    np.testing.assert_allclose(numbers.total(ypred, len(walk.steps)), 2 * (numbers.value(ypred) - ys), rtol=1e-12)
    # h1 feeds one dot: its total arrives in one piece; W1's gradient is a Dot's
    assert not any(c.summed for step in walk.steps for c in step.contributions if c.variable is h1)


def test_micrograds_demo_mlp_with_a_hinge_loss_and_l2():
    # micrograd's demo.ipynb: MLP(2, [16, 16, 1]) of ReLU neurons, max-margin loss, alpha * sum(p * p); smaller here
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(6, 2))
    ys = np.array([1.0, -1.0, 1.0, -1.0, -1.0, 1.0])
    X, Y = st.dmatrix("X"), st.dvector("y")
    W1, W2, W3 = st.dmatrix("W1"), st.dmatrix("W2"), st.dmatrix("W3")
    b1, b2, b3 = st.dvector("b1"), st.dvector("b2"), st.dvector("b3")
    h1 = st.maximum(st.dot(X, W1) + b1, 0.0)
    h2 = st.maximum(st.dot(h1, W2) + b2, 0.0)
    scores = _named((st.dot(h2, W3) + b3)[:, 0], "scores")
    data_loss = st.maximum(1.0 - Y * scores, 0.0).mean()
    reg_loss = 1e-4 * sum((p * p).sum() for p in (W1, b1, W2, b2, W3, b3))
    total_loss = data_loss + reg_loss
    values = {X: xs, Y: ys, W1: rng.normal(size=(2, 5)), W2: rng.normal(size=(5, 5)) * 0.5,
              W3: rng.normal(size=(5, 1)), b1: rng.normal(size=5) * 0.1, b2: rng.normal(size=5) * 0.1,
              b3: np.zeros(1)}
    walk, numbers = check_walk(total_loss, [W1, b1, W2, b2, W3, b3], values, intermediates=[scores, h2])
    # every parameter has two clients (its layer and the L2 term): each gradient is a sum
    summed = {c.variable for step in walk.steps for c in step.sums}
    assert {W1, b1, W2, b2, W3, b3} <= summed


# -- the MLP loss of tests/real_size.py, notebook 14's models ------------------------------------------------------
def test_the_real_size_mlp_loss():
    (X, Y, W1, b1, W2, b2), (loss, _, _) = real_size.mlp_gradient()
    graph = {v.name: v for v in ancestors([loss]) if v.name}
    rng = np.random.default_rng(5)
    values = {X: rng.normal(size=(5, 3)), Y: np.eye(3)[[0, 2, 1, 1, 0]], W1: rng.normal(size=(3, 4)) * 0.5,
              b1: rng.normal(size=4) * 0.1, W2: rng.normal(size=(4, 3)) * 0.5, b2: rng.normal(size=3) * 0.1}
    walk, _ = check_walk(loss, [W1, b1, W2, b2], values,
                         intermediates=[graph["hidden"], graph["logits"], graph["probs"], graph["l2"]])
    # the weights reach the loss through their layer and through the L2 term: the chain rule sums at W1 and W2
    assert {W1, W2} <= {c.variable for step in walk.steps for c in step.sums}


def test_notebook_14s_logistic_regression_with_shared_weights():
    rng = np.random.default_rng(2882)
    N, feats = 6, 4
    x, y = st.dmatrix("x"), st.dvector("y")
    w = symlab.shared(rng.standard_normal(feats), name="w")
    b = symlab.shared(0.0, name="b")
    p_1 = _named(1 / (1 + st.exp(-st.dot(x, w) - b)), "p_1")
    xent = _named(-y * st.log(p_1) - (1 - y) * st.log(1 - p_1), "xent")
    cost = xent.mean() + 0.01 * (w ** 2).sum()
    data = {x: rng.standard_normal((N, feats)), y: rng.integers(size=N, low=0, high=2).astype("float64")}
    before = w.get_value().copy()
    walk, numbers = check_walk(cost, [w, b], data, intermediates=[p_1, xent])
    np.testing.assert_array_equal(w.get_value(), before)  # a read: the shared weights as they were
    # the NumPy gradient of notebook 14: X.T @ (p - y) / N + 0.02 w
    p = 1 / (1 + np.exp(-(data[x] @ before)))
    np.testing.assert_allclose(numbers.value(walk.results[0]), data[x].T @ (p - data[y]) / N + 0.02 * before,
                               rtol=1e-10)


def test_logistic_sgds_softmax_negative_log_likelihood_with_integer_labels():
    # the Deep Learning Tutorials' logistic_sgd.py: p_y_given_x = softmax(x W + b); -mean(log(p)[arange(n), y])
    x, y = st.dmatrix("x"), st.lvector("y")
    W, b = st.dmatrix("W"), st.dvector("b")
    p_y_given_x = _named(st.softmax(st.dot(x, W) + b, axis=-1), "p_y_given_x")
    nll = -st.mean(st.log(p_y_given_x)[st.arange(y.shape[0]), y])
    rng = np.random.default_rng(7)
    values = {x: rng.normal(size=(5, 3)), y: [0, 2, 1, 3, 2], W: rng.normal(size=(3, 4)) * 0.3, b: np.zeros(4)}
    walk, numbers = check_walk(nll, [W, b], values, intermediates=[p_y_given_x])
    # the integer labels get no gradient: a step says so
    assert any(c.variable is y or "integer" in c.reason for step in walk.steps for c in step.contributions if c.reason)
    assert "Softmax" in [step.label for step in walk.steps]
    p = numbers.value(p_y_given_x)
    onehot = np.eye(4)[values[y]]
    np.testing.assert_allclose(numbers.value(walk.results[0]), values[x].T @ (p - onehot) / 5, rtol=1e-10)


# -- loops and packaged graphs --------------------------------------------------------------------------------------
def test_an_rnn_written_with_scan():
    x = st.dmatrix("x")  # (time, features)
    W, U = st.dmatrix("W"), st.dmatrix("U")
    b, h0 = st.dvector("b"), st.dvector("h0")
    h, _ = symlab.scan(lambda x_t, h_prev, W, U, b: st.tanh(st.dot(x_t, W) + st.dot(h_prev, U) + b),
                       sequences=x, outputs_info=h0, non_sequences=[W, U, b])
    h.name = "h"
    cost = (h ** 2).sum() + h[-1].sum()
    rng = np.random.default_rng(11)
    values = {x: rng.normal(size=(4, 2)), W: rng.normal(size=(2, 3)) * 0.5, U: rng.normal(size=(3, 3)) * 0.5,
              b: rng.normal(size=3) * 0.1, h0: rng.normal(size=3) * 0.1}
    walk, _ = check_walk(cost, [W, U, b, h0, x], values, intermediates=[h])
    assert "Scan" in [step.label for step in walk.steps]


def test_a_layer_packaged_as_an_op_from_graph():
    xi, wi, bi = st.dmatrix("xi"), st.dmatrix("wi"), st.dvector("bi")
    layer = symlab.OpFromGraph([xi, wi, bi], [st.tanh(st.dot(xi, wi) + bi)], name="layer")
    X, W, b, V = st.dmatrix("X"), st.dmatrix("W"), st.dvector("b"), st.dmatrix("V")
    hidden = _named(layer(X, W, b), "hidden")
    cost = (st.dot(hidden, V) ** 2).mean() + (hidden * X[:, 0].dimshuffle(0, "x")).sum()
    rng = np.random.default_rng(3)
    values = {X: rng.normal(size=(4, 3)), W: rng.normal(size=(3, 3)) * 0.5, b: rng.normal(size=3) * 0.1,
              V: rng.normal(size=(3, 2))}
    walk, _ = check_walk(cost, [W, b, X, V], values, intermediates=[hidden])
    assert "layer" in [str(step.node.op) for step in walk.steps] or "OpFromGraph" in [s.label for s in walk.steps]
    # X reaches the cost through the layer and through the product: its gradient is a sum
    assert X in {c.variable for step in walk.steps for c in step.sums}


# -- random smooth costs of the repository's fuzzer ------------------------------------------------------------
@pytest.mark.parametrize("batch", range(10))
def test_random_smooth_costs(batch):
    """10 batches of 10 random smooth expressions (the fuzzer's gradient campaign's generator, seeded), projected
    on a random tensor to a scalar cost: the walk is grad's and its totals are finite differences."""
    generated = generate_batch(35, 9000 + batch, 10, "smooth", max_ops=5)
    for k, expr in enumerate(generated.exprs):
        names = sorted(expr.input_names())
        env = generated.env.restricted(set(names))
        inputs = input_variables(env)
        variables = [inputs[n] for n in names]
        out = build([expr], inputs)[0]
        point = {inputs[n]: env.values["special"][n] for n in names}
        with np.errstate(all="ignore"):
            shape = np.shape(out.eval(point))
        projection = np.random.default_rng(k).random(shape) + 0.5
        cost = (out * projection.astype(out.dtype)).sum()
        loose = out.dtype == "float32" or any(v.dtype == "float32" for v in variables)
        between = _between(cost, variables)  # intermediates that depend on some input (off the path, none needed)
        middle = [o for node in io_toposort(variables, [out]) if node in between for o in node.outputs
                  if str(getattr(o, "dtype", "")).startswith("float")][:3]
        with np.errstate(all="ignore"):
            check_walk(cost, variables, point, intermediates=middle, disconnected_inputs="ignore",
                       rtol=2e-2 if loose else 1e-4, atol=2e-2 if loose else 1e-5)


@pytest.mark.parametrize("batch", range(5))
def test_random_costs_of_every_kind(batch):
    """5 batches of 20 random expressions of the fuzzer's differential flavour (every dtype, integer and boolean
    inputs, empty arrays, ``floor`` and comparisons, ``ifelse`` branches, ``OpFromGraph`` packages), watched to the end
    (``walk_of``): the walk is grad's; with moderate values every gradient evaluates, shaped like its input."""
    generated = generate_batch(35, 9100 + batch, 20, "differential", max_ops=5)
    for expr in generated.exprs:
        names = sorted(expr.input_names())
        inputs = input_variables(generated.env.restricted(set(names)))
        variables = [inputs[n] for n in names]
        out = build([expr], inputs)[0]
        cost = out.sum() if out.ndim else out
        if not str(cost.dtype).startswith("float"):
            cost = st.cast(cost, "float64")
        walk = walk_of(cost, variables)
        same_results(walk.results, symlab.grad(cost, variables, null_gradients="return", disconnected_inputs="ignore"))
        check_steps(walk, cost, variables)
        with np.errstate(all="ignore"):
            numbers = GradNumbers(walk, {inputs[n]: generated.env.values["moderate"][n] for n in names})
        for w, g, problem in zip(variables, walk.results, walk.problems):
            value = numbers.value(g)
            if isinstance(g.type, NullType):
                assert value is None and problem and numbers.undefined_reason(g) in problem
            else:
                assert np.shape(value) == np.shape(numbers.value(w)), (expr, w)
