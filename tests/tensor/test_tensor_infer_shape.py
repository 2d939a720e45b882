"""Shapes computed only from ops' ``infer_shape`` (``symbolic_shape``), never from the values, match the real shapes."""

import numpy as np
import pytest

import symlab.tensor as T
from symlab.tensor.shape_inference import symbolic_shape

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
    inferred = symbolic_shape(out)
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


def test_symbolic_shape_does_not_read_the_result():
    from symlab.graph import ancestors

    out = T.exp(x) @ T.log(x.T)
    for size in symbolic_shape(out):
        assert out not in set(ancestors([size]))  # only x's shape is read
        assert not any(getattr(v.owner, "op", None) == T.exp for v in ancestors([size]))
