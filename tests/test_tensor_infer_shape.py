"""Shapes computed only from ops' ``infer_shape``, never from the values, match the real shapes."""

import numpy as np
import pytest

import symlab.tensor as T
from symlab.graph import Constant, io_toposort
from symlab.graph.basic import Variable


def symbolic_shape(out: Variable, inputs: list[Variable]) -> tuple:
    """``out``'s shape built from graph inputs' shapes and each node's infer_shape."""
    shapes = {v: tuple(T.shape_i(v, d) for d in range(v.ndim)) for v in inputs}
    for node in io_toposort(inputs, [out]):
        in_shapes = []
        for i in node.inputs:
            if i not in shapes:
                assert isinstance(i, Constant), f"unexpected leaf {i}"
                shapes[i] = tuple(T.constant(s, dtype="int64") for s in np.shape(i.data))
            in_shapes.append(shapes[i])
        for o, s in zip(node.outputs, node.op.infer_shape(None, node, in_shapes)):
            shapes[o] = tuple(s)
    return shapes[out]


x = T.dmatrix("x")
v = T.dvector("v")
i = T.lscalar("i")
VALUES = {x: np.arange(12.0).reshape(3, 4), v: np.arange(4.0), i: np.int64(1)}
EXPRESSIONS = {
    "elemwise broadcast": x * v + 1.0,
    "dimshuffle": x.dimshuffle(1, "x", 0),
    "sum axis": x.sum(axis=0, keepdims=True),
    "mean": T.mean(x, axis=1),
    "argmax": T.argmax(x, axis=0),
    "dot": T.dot(x, v),
    "matmul": x.T @ x,
    "outer": T.outer(v, v),
    "softmax": T.softmax(x, axis=1),
    "logsumexp": T.logsumexp(x, axis=0),
    "reshape": x.reshape((2, -1)),
    "flatten": x.flatten(),
    "slice": x[1:, ::2],
    "symbolic index": x[i],
    "advanced index": x[[0, 2, 2]],
    "set_subtensor": T.set_subtensor(x[:, 1], v[:3]),
    "concatenate": T.concatenate([x, x], axis=1),
    "stack": T.stack([v, v, v]),
    "alloc": T.alloc(v, 5, 4),
    "arange": T.arange(i, 7),
    "specify_shape": T.specify_shape(x, (3, None)),
    "grad graph": T.exp(x).sum(axis=1),
}


@pytest.mark.parametrize("name", sorted(EXPRESSIONS))
def test_infer_shape_matches_real_shape(name):
    out = EXPRESSIONS[name]
    inputs = [x, v, i]
    inferred = symbolic_shape(out, inputs)
    assert len(inferred) == out.ndim
    real = np.shape(out.eval({k: val for k, val in VALUES.items() if k in _leaves(out)}))
    got = tuple(int(s.eval({k: val for k, val in VALUES.items() if k in _leaves(s)})) for s in inferred)
    assert got == real
    # Static sizes, where the type has them, agree with the real ones too.
    for static, size in zip(out.type.shape, real):
        assert static is None or static == size


def _leaves(var):
    from symlab.graph import graph_inputs

    return set(graph_inputs([var]))
