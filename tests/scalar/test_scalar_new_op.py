"""The worked example of adding a scalar op: ``cbrt``, the cube root (PyTensor's ``pt.cbrt``).

Adding an op whose NumPy ufunc and Numba expression exist takes two edits:

1. ``symlab/scalar/basic.py``: its declaration, one statement that says every fact of the op,

       cbrt = ScalarOp("cbrt", 1, np.cbrt, None, "np.cbrt({0})", approximate=True)

   (name, number of inputs, NumPy implementation, infix symbol (none: it prints as a call), the Python
   expression Numba compiles, and ``approximate``: NumPy's result is a library's approximation, so the Numba
   kernels call NumPy's own loop to give its bits, and a large loop computing it runs in parallel). It is
   declared last, so every other op keeps its opcode in the register machine (whose cached code stays valid).
2. ``symlab/tensor/math.py``: its tensor name and its gradient rule, one statement,

       cbrt: Elemwise = _elemwise(_scalar.cbrt, lambda i, o, g: [g / (3.0 * o * o)])

   and ``"cbrt"`` in that module's ``__all__`` (so ``symlab.tensor.cbrt`` exists).

Everything else follows from the declaration, as this file checks: the NUMPY backend (the op's ``perform``
calls ``np.cbrt``), the Numba kernels (the NumPy loop table :mod:`symlab.compile.numba.ufunc_table` takes
every ``approximate`` op implemented by a ufunc, so the kernels call NumPy's own ``cbrt`` loop and give NumPy's
bits), fusion into a ``Composite``, the register machine (it runs every op the Numba backend has an expression
for), the gradient, and printing (by its name, as it has no infix symbol).
"""

from __future__ import annotations

import numpy as np
import pytest
from oracle import assert_same_results, compile_function

import symlab
import symlab.scalar as ss
import symlab.tensor as st
from symlab.compile.numba import elemwise_vm, ufunc_table
from symlab.compile.numba.kernels import kernel_for
from symlab.gradient import verify_grad
from symlab.printing import pprint
from symlab.scalar.basic import declared_ops, scalar_op
from symlab.scalar.composite import Composite
from symlab.tensor.elemwise import ELEMWISE_GRADS, Elemwise

#: Cubes, signed zeros, infinities, NaN, tiny and huge values, and random ones of both signs.
SPECIAL = [0.0, -0.0, 1.0, -1.0, 8.0, -27.0, 0.001, 1e-300, 5e-324, 1e300, -1e300, np.inf, -np.inf, np.nan]


def values(dtype: str, n: int = 3000) -> np.ndarray:
    rng = np.random.default_rng(31)
    with np.errstate(over="ignore"):  # 1e300 is inf in float32
        return np.concatenate([np.array(SPECIAL), rng.normal(scale=50.0, size=n), rng.uniform(-1, 1, size=n)]).astype(dtype)


@pytest.fixture
def machine_code_now(monkeypatch):
    """Every NUMBA call runs the machine code (no NumPy tier while Numba compiles)."""
    monkeypatch.setattr(symlab.config, "background_compile", False)


def test_the_declaration_is_the_op_and_the_tensor_name_is_its_elemwise():
    assert scalar_op("cbrt") is ss.cbrt and ss.cbrt in declared_ops()
    assert (ss.cbrt.nin, ss.cbrt.impl, ss.cbrt.symbol, ss.cbrt.expr) == (1, np.cbrt, None, "np.cbrt({0})")
    assert ss.cbrt.approximate and ss.cbrt.expensive
    assert isinstance(st.cbrt, Elemwise) and st.cbrt.scalar_op is ss.cbrt
    assert "cbrt" in ELEMWISE_GRADS
    # what follows from the declaration in the Numba backend
    assert ufunc_table.UFUNCS["cbrt"] is np.cbrt
    assert "cbrt" in elemwise_vm.supported_ops("float64") and "cbrt" in elemwise_vm.supported_ops("float32")


@pytest.mark.parametrize("dtype", ["float64", "float32", "int16"])
def test_numpy_mode_gives_np_cbrt(dtype):
    x = st.vector("x", dtype=dtype)
    v = values(dtype) if dtype != "int16" else np.arange(-300, 300, dtype=dtype)
    f = compile_function([x], st.cbrt(x), "NUMPY")
    with np.errstate(all="ignore"):
        assert_same_results(f(v), np.cbrt(v), "bits")


@pytest.mark.numba
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_numba_mode_gives_numpys_bits_alone_and_fused(dtype, machine_code_now):
    x = st.vector("x", dtype=dtype)
    alone, fused = st.cbrt(x), st.cbrt(x) * 2 + 1
    source = kernel_for(alone.owner, "k").source
    assert f"ufunc_loops.cbrt_{dtype}(" in source, source  # NumPy's own loop, called from the kernel
    numba_f = compile_function([x], [alone, fused], "NUMBA")
    numpy_f = compile_function([x], [alone, fused], "NUMPY")
    nodes = numba_f.maker.fgraph.toposort()
    composites = [n.op.scalar_op for n in nodes if isinstance(n.op, Elemwise) and isinstance(n.op.scalar_op, Composite)]
    assert any("cbrt" in str(c) for c in composites), f"cbrt(x) * 2 + 1 was not fused: {nodes}"
    v = values(dtype)
    with np.errstate(all="ignore"):
        for arg in (v, v[::-1], v[::3], v[:1], v[:0]):
            # NumPy's reference on a C-contiguous copy: on a negative stride NumPy's own loop may take another
            # path, with other bits (tests/compile/numba/test_numba_blocked.py), where the kernel does not
            got, contiguous = numba_f(arg), np.ascontiguousarray(arg)
            assert_same_results(got, numpy_f(contiguous), "bits", what=f"{dtype} strides {arg.strides}")
            want = np.cbrt(contiguous) * np.asarray(2, dtype) + np.asarray(1, dtype)
            assert_same_results(got[1], want, "bits", what=f"{dtype} strides {arg.strides}")


def test_gradient_against_finite_differences():
    rng = np.random.default_rng(3)
    point = np.array([0.3, -0.7, 2.0, -8.0, 27.0, 0.05])  # away from 0, where the derivative is infinite
    verify_grad(st.cbrt, [point], rng=rng)
    verify_grad(lambda x: st.cbrt(x * x + 1.0) * x, [point], rng=rng)


def test_the_gradient_is_the_formula():
    x = st.dvector("x")
    (g,) = symlab.grad(st.cbrt(x).sum(), [x])
    v = np.array([1.0, 8.0, -27.0, 0.125])
    np.testing.assert_allclose(g.eval({x: v}), 1.0 / (3.0 * np.cbrt(v) ** 2), rtol=1e-15)


def test_prints_with_its_name():
    x = st.dvector("x")
    assert pprint(st.cbrt(x)) == "cbrt(x)"
    assert pprint(st.cbrt(x) * 2.0) == "(cbrt(x) * 2.0)"
    assert str(st.cbrt) == "Elemwise{cbrt,no_inplace}"
    assert str(ss.cbrt(ss.float64("a")).owner.op) == "cbrt"
