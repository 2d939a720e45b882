"""Helpers shared by the tests (tests/ is on sys.path when pytest runs them)."""

import numpy as np

import symlab.tensor as st


def check_infer_shape(out, inputs_values):
    """Assert that ``out.owner.op.infer_shape`` gives the real shape of ``out``."""
    node = out.owner
    shapes = [
        tuple(st.constant(d, dtype="int64") for d in np.shape(i.eval(inputs_values) if i not in inputs_values else inputs_values[i]))
        for i in node.inputs
    ]
    inferred = node.op.infer_shape(None, node, shapes)[out.index]
    real = out.eval(inputs_values).shape
    assert tuple(int(s.eval(inputs_values)) for s in inferred) == real
    assert all(s.type.dtype == "int64" and s.ndim == 0 for s in inferred)
