"""Each scalar op's facts are in one place: its declaration, and at most one Numba rule that adds to it.

The scalar layer declares every op once (:mod:`symlab.scalar.basic`); the Numba backend derives its tables
from the declarations (which NumPy ufunc loop computes an op, which ops the register machine runs, which loops
run in parallel) and keeps what it adds for an op in one entry of
:data:`symlab.compile.numba.scalar_rules.RULES`. So no backend table may name an op the scalar layer does not
declare, and the backend gives an expression for every declared op, or says why it cannot.
"""

from __future__ import annotations

import numpy as np
import pytest

import symlab.scalar.basic as basic
from symlab.compile.numba import codegen, elemwise_vm, ufunc_table
from symlab.compile.numba.kernels import NoKernel
from symlab.compile.numba.scalar_rules import RULES, helper_sources, scalar_expression
from symlab.scalar.basic import ScalarOp, declared_ops, scalar_op

DECLARED = {op.name: op for op in declared_ops()}
#: The dtypes an op is tried on, in order: the first its NumPy implementation accepts is the one checked.
DTYPES = ("float64", "int64", "bool")


def test_every_declared_op_is_bound_to_its_own_name_once():
    for name, op in DECLARED.items():
        assert type(op) is ScalarOp, name
        assert getattr(basic, name) is op and scalar_op(name) is op, name
    assert [row[0] for row in basic.SCALAR_OPS] == list(DECLARED)[: len(basic.SCALAR_OPS)]
    with pytest.raises(ValueError, match="'exp' is already declared"):
        ScalarOp("exp", 1, np.exp)


def test_no_backend_table_names_an_op_the_scalar_layer_does_not_declare():
    for op in RULES:
        assert scalar_op(op.name) is op, f"RULES has an entry for {op}, which is not a declared op"
    for table in (ufunc_table.UFUNCS, ufunc_table.BINARY_UFUNCS):
        for name, ufunc in table.items():
            assert DECLARED[name].impl is ufunc and DECLARED[name].approximate, name
    for name, _ in (*ufunc_table.AVAILABLE, *ufunc_table.BINARY_AVAILABLE):
        assert name in DECLARED, name
    assert set(elemwise_vm.OPCODE_NAMES[1:]) <= set(DECLARED)


def test_the_ufunc_loops_are_those_the_declarations_ask_for():
    """An ``approximate`` op implemented by a NumPy ufunc gets NumPy's loop; nothing else does."""
    asked = {op.name for op in declared_ops() if op.approximate and isinstance(op.impl, np.ufunc)}
    assert asked == set(ufunc_table.UFUNCS) | set(ufunc_table.BINARY_UFUNCS)
    for name in asked:
        assert (name, "float64") in {**ufunc_table.AVAILABLE, **ufunc_table.BINARY_AVAILABLE}, name


def _accepted_dtype(op: ScalarOp) -> str | None:
    for dtype in DTYPES:
        try:
            op.output_dtype(*[dtype] * op.nin)
        except TypeError:
            continue
        return dtype
    return None


@pytest.mark.parametrize("name", list(DECLARED))
def test_the_numba_backend_has_an_expression_for_every_declared_op(name):
    op = DECLARED[name]
    dtype = _accepted_dtype(op)
    assert dtype is not None, f"{name} accepts none of {DTYPES}"
    out_dtype = op.output_dtype(*[dtype] * op.nin)
    helpers: set[str] = set()
    try:
        codegen.check_dtype(out_dtype, name)
    except NoKernel as why:  # a result Numba cannot hold (float16): the backend says so, naming the op
        assert name in str(why)
        return
    expression = scalar_expression(op, [f"a{k}" for k in range(op.nin)], [dtype] * op.nin, out_dtype, helpers)
    assert all(f"a{k}" in expression for k in range(op.nin) if name != "second" or k == 1), expression
    for source in helper_sources(helpers):
        assert source.startswith(f"def _shared_{name}("), source


def test_an_op_without_an_expression_or_a_rule_is_refused_with_its_name():
    orphan = ScalarOp("orphan", 1, np.negative, declare=False)
    with pytest.raises(NoKernel, match="scalar op orphan has no Numba expression"):
        scalar_expression(orphan, ["a"], ["float64"], "float64", set())
