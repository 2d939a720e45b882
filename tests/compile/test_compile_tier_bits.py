"""Same numbers from both tiers: the machine code gives the NumPy backend's bits.

Tiered compilation answers a function's first calls on the NumPy backend and
its later calls with Numba's machine code, so a result must not change when
the tier does. Checked here:

* every benchmark workload (``benchmarks/workloads.py``): ``mode="NUMBA"``
  and ``mode="NUMPY"`` give ``np.array_equal(..., equal_nan=True)`` results,
  the 2,000- and 10,000-node chains (which run on the register machine of
  :mod:`symlab.compile.numba.elemwise_vm`) included;
* op by op, every scalar op of :data:`symlab.scalar.basic.SCALAR_OPS` on
  random and special inputs (NaN, +-inf, +-0, huge, tiny, subnormal, integer
  extremes), in the generated loop kernels (float and integer dtypes) and
  on the register machine (float dtypes): the bits of the node's NumPy
  ``perform`` (signed zeros included), except for the ops listed, with their
  tolerances, in the table "Same numbers from both tiers" of
  :mod:`~symlab.compile.numba.elemwise_vm`: this file reads that table, so
  the documented tolerance is the tested one.
"""

from __future__ import annotations

import re
import warnings
from functools import cache
from typing import Any

import numpy as np
import pytest
from helpers import load_benchmark
from oracle import assert_same_results, bitwise_equal, perform

import symlab
import symlab.scalar as ss
import symlab.tensor as st
from symlab.compile.numba import elemwise_vm
from symlab.compile.numba.kernels import NoKernel, kernel_for
from symlab.compile.numba.linker import compile_node
from symlab.scalar.basic import SCALAR_OPS, scalar_op
from symlab.scalar.composite import Composite
from symlab.tensor.elemwise import Elemwise

pytestmark = pytest.mark.numba

workloads = load_benchmark("workloads")


@pytest.fixture(autouse=True)
def machine_code_now(monkeypatch):
    """Every NUMBA call runs the machine code (no NumPy tier while Numba compiles)."""
    monkeypatch.setattr(symlab.config, "background_compile", False)


# -- the benchmark workloads ------------------------------------------------------------------------------------------


def _tier_workloads() -> dict[str, Any]:
    """The workloads at the issue's sizes, except ``elemwise_1e7``: the graph of ``elemwise_1e6`` on 1e7 elements
    (480 MB of arrays in the NumPy tier) adds nothing that 1e6 elements, past the parallel threshold, do not."""
    ws = dict(workloads.WORKLOADS)
    del ws["elemwise_1e7"]
    return ws


TIER_WORKLOADS = _tier_workloads()


def test_every_benchmark_workload_is_checked():
    """A workload added to the benchmark shows up here (a graph this file does not know is not checked)."""
    assert set(workloads.WORKLOADS) - set(TIER_WORKLOADS) == {"elemwise_1e7"}
    assert {w.group for w in workloads.WORKLOADS.values()} == {w.group for w in TIER_WORKLOADS.values()}


@pytest.mark.parametrize("name", list(TIER_WORKLOADS))
def test_workload_gives_the_same_bits_in_both_tiers(name):
    w = TIER_WORKLOADS[name]
    data = w.data()
    inputs, outputs = w.build_symlab()
    compiled = symlab.function(inputs, outputs, mode="NUMBA")
    if w.group == "random":  # each function draws from a generator of its own, seeded alike (its calls advance it)
        inputs, outputs = w.build_symlab()
    reference = symlab.function(inputs, outputs, mode="NUMPY")
    assert_same_results(compiled(*data), reference(*data), "values", what=f"{name} against the NumPy tier")
    if w.group == "e":  # the chains are long fused Composites: they must run on the register machine
        assert compiled.maker.runner.compile_info.vm_nodes >= 1, f"{name} did not run on the register machine"


# -- op by op -----------------------------------------------------------------------------------------------------------

# Compiling costs about 0.1 s an op and dtype, so the cases that add least are ``slow`` (they run with the rest
# of the suite; ``-m "not slow"`` leaves them out): the generated kernels' unary functions that call NumPy's
# loops (``tests/compile/numba/test_numba_blocked.py`` checks their bits on every layout), the integer ops whose code is not
# integer-specific, and the integer dtypes other than int64.
FLOATS = ("float64", "float32")
INTEGERS = ("int64", "int16", "uint8", "uint64", "bool")
#: The ops int64 checks by default: NumPy's integer semantics (wrapping, division by 0 and -1, unsigned
#: results), and float functions of an integer (NumPy casts it first, then runs the float loop).
INTEGER_OPS = (
    "int_div", "mod", "pow", "neg", "abs", "sign", "reciprocal", "round", "maximum", "minimum", "clip",
    "true_div", "exp", "sigmoid", "softplus", "arctan2", "invert", "lt",
)


def _float_values(dtype: str, rng: np.random.Generator) -> np.ndarray:
    """Special values (NaN, infinities, signed zeros, extremes, subnormal, poles), then random ones of every scale."""
    f = np.finfo(dtype)
    special = [np.nan, np.inf, -np.inf, 0.0, -0.0, f.max, -f.max, f.tiny, -f.tiny, f.smallest_subnormal, 1.0, -1.0,
               0.5, -0.5, 2.0, -2.0, 3.0, -2.5, 1e-300, 1e300, 27.0, -170.75, 710.0, -745.0]
    n = 300
    magnitudes = np.exp(rng.uniform(np.log(f.tiny), np.log(f.max), n)) * rng.choice([-1.0, 1.0], n)
    with np.errstate(over="ignore"):
        return np.concatenate(
            [special, rng.standard_normal(n), rng.standard_normal(n) * 30, magnitudes, rng.integers(-8, 9, n)]
        ).astype(dtype)


def _integer_values(dtype: str, rng: np.random.Generator) -> np.ndarray:
    """The extremes, 0, 1, 2 and -1, -2 (or 3), then random values of the whole range and small ones."""
    if dtype == "bool":
        return rng.integers(0, 2, 600).astype(bool)
    i = np.iinfo(dtype)
    special = [0, 1, 2, i.max, i.min, i.max - 1, i.min + 1] + ([-1, -2] if i.min < 0 else [3])
    full = rng.integers(i.min, i.max, 600, dtype=dtype, endpoint=True)
    return np.concatenate([np.array(special, dtype=dtype), full, rng.integers(max(i.min, -9), 10, 600).astype(dtype)])


@cache
def _inputs(dtype: str) -> tuple[np.ndarray, ...]:
    """Inputs ``a``, ``b``, ``c`` of the ops, and ``e``: the exponent of an integer ``pow`` (0 to 63: NumPy refuses
    negative integer powers). ``a`` and ``b`` pair every special value with every other, then random ones."""
    rng = np.random.default_rng(7)
    values = _float_values(dtype, rng) if np.dtype(dtype).kind == "f" else _integer_values(dtype, rng)
    k = 30  # the special values (and a few more): 900 pairs
    head = values[:k]
    a = np.concatenate([np.repeat(head, k), values])
    b = np.concatenate([np.tile(head, k), rng.permutation(values)])
    c = rng.permutation(a)
    e = rng.integers(0, 64, a.size).astype(dtype) if np.dtype(dtype).kind in "iu" else b
    return a, b, c, e


def _arguments(name: str, nin: int, dtype: str, variables: list[Any]) -> list[Any]:
    """The variables op ``name`` reads: ``a, b, c``; an integer ``pow`` reads its exponent from ``e``."""
    if name == "pow" and np.dtype(dtype).kind in "iu":
        return [variables[0], variables[3]]
    return variables[:nin]


def _ops_with_kernels(dtype: str) -> list[str]:
    """The scalar ops that accept ``dtype`` inputs and have a generated kernel for them."""
    names = []
    for name, nin, *_ in SCALAR_OPS:
        tensors = [st.TensorType(dtype, (None,))(f"t{k}") for k in range(nin)]
        try:
            kernel_for(Elemwise(scalar_op(name))(*tensors).owner, "probe")
        except (NoKernel, TypeError):  # TypeError: NumPy refuses the dtype; NoKernel: a float16 result
            continue
        names.append(name)
    return names


def _op_groups(tier: str, dtype: str) -> dict[bool, list[str]]:
    """The ops checked on ``dtype`` by ``tier`` ("kernel": the generated loop kernels, "machine": the register
    machine), by whether they are ``slow``."""
    if tier == "machine":
        return {False: sorted(elemwise_vm.supported_ops(dtype)), True: []}
    from symlab.compile.numba.ufunc_table import AVAILABLE

    names = _ops_with_kernels(dtype)
    if dtype in FLOATS:
        slow = {n for n in names if (n, dtype) in AVAILABLE}
    elif dtype == "int64":
        slow = set(names) - set(INTEGER_OPS)
    else:
        slow = set(names)
    return {False: [n for n in names if n not in slow], True: [n for n in names if n in slow]}


@cache
def _results(tier: str, dtype: str, slow: bool) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], tuple[np.ndarray, ...]]:
    """``({op: (compiled, perform)}, inputs)``: one node computing every op of the group on ``dtype``, as one
    output each, by ``tier`` (see :func:`_op_groups`)."""
    names = _op_groups(tier, dtype)[slow]
    variables = [ss.get_scalar_type(dtype)(v) for v in "abce"]
    outputs = [scalar_op(n)(*_arguments(n, scalar_op(n).nin, dtype, variables)) for n in names]
    composite = Composite(variables, outputs)
    node = Elemwise(composite)(*[st.TensorType(dtype, (None,))(v) for v in "abce"])[0].owner
    values = _inputs(dtype)
    if tier == "machine":
        program = elemwise_vm.translate(composite, dtype)
        run = elemwise_vm.vm_callable(node, program, elemwise_vm.load_vm(dtype, program.ops))
    else:
        assert elemwise_vm.vm_program(node) is None, "the op-by-op node must get a generated kernel"
        run = compile_node(node)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        got = run(*values)
        want = perform(node, values)
    return {n: (g, w) for n, g, w in zip(names, got, want)}, values


def _documented_tolerances() -> dict[tuple[str, str], tuple[float, str]]:
    """``{(op, dtype): (tolerance, tiers)}`` from the table of ``elemwise_vm``'s docstring (tiers: "kernel" or
    "both")."""
    table = elemwise_vm.__doc__.split("Same numbers from both tiers\n---")[1]
    found = {}
    for line in table.splitlines():
        m = re.match(r"``(\w+)``\s+(\d+)\s+(\d+)\s+(generated kernels|both)", line)
        if m:
            tiers = "kernel" if m.group(4) == "generated kernels" else "both"
            found[(m.group(1), "float64")] = (float(m.group(2)), tiers)
            found[(m.group(1), "float32")] = (float(m.group(3)), tiers)
    return found


TOLERANCES = _documented_tolerances()


def test_the_documented_table_is_read():
    ops = {op for op, _ in TOLERANCES}
    assert {"pow", "arctan2", "erf", "erfc", "gamma", "gammaln", "psi"} == ops, f"ops read from the docs: {ops}"


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """``|got - want|`` in ulps of ``max(|want|, 1)`` (``eps * max(|want|, 1)``), as the docs' table measures."""
    eps = np.finfo(want.dtype).eps
    wide_got, wide_want = got.astype(np.float64), want.astype(np.float64)
    with np.errstate(all="ignore"):  # inf - inf: NaN, outside the checked domain anyway
        return np.abs(wide_got - wide_want) / (eps * np.maximum(np.abs(wide_want), 1.0))


def _checked_domain(name: str, dtype: str, got: np.ndarray, want: np.ndarray, args: list[np.ndarray]) -> np.ndarray:
    """Where the documented tolerance holds: both results finite and of normal size; for ``psi`` on float64, not
    within 0.1 of a pole (near one SciPy's reflection loses digits, see the docs)."""
    tiny = np.finfo(dtype).tiny
    domain = np.isfinite(got) & np.isfinite(want) & (np.abs(got) >= tiny) & (np.abs(want) >= tiny)
    if name == "psi" and dtype == "float64":
        x = args[0].astype(np.float64)
        with np.errstate(invalid="ignore"):  # inf - inf at the infinite inputs
            domain &= (x > 0) | (np.abs(x - np.round(x)) >= 0.1)
    return domain


def _allowed_kinds(name: str, got: np.ndarray, want: np.ndarray, args: list[np.ndarray]) -> np.ndarray:
    """The documented disagreements in kind outside the domain: an underflow (0 or a subnormal number against a
    subnormal one, ``erfc``, ``gamma``, ``pow``, ``arctan2``) and ``gammaln`` of a subnormal or infinite input
    (SciPy: ``inf``, or ``-inf`` for ``-inf``)."""
    tiny = np.finfo(got.dtype).tiny
    finite = np.isfinite(got) & np.isfinite(want)
    allowed = finite & ((np.abs(got) < tiny) | (np.abs(want) < tiny))
    if name == "gammaln":
        x = args[0]
        allowed |= (np.abs(x) < tiny) | np.isinf(x)
    return allowed


CASES = [("kernel", d) for d in (*FLOATS, *INTEGERS)] + [("machine", d) for d in FLOATS]


def _op_cases() -> list[Any]:
    """``(tier, dtype, op, slow)`` for every op of every case."""
    cases = []
    for tier, dtype in CASES:
        for slow, names in _op_groups(tier, dtype).items():
            marks = [pytest.mark.slow] if slow else []
            cases += [pytest.param(tier, dtype, n, slow, marks=marks, id=f"{tier}-{dtype}-{n}") for n in names]
    return cases


@pytest.mark.parametrize(("tier", "dtype", "name", "slow"), _op_cases())
def test_op_gives_numpys_bits(tier, dtype, name, slow):
    """The compiled op against the node's ``perform``: the same bits, or the documented tolerance."""
    results, values = _results(tier, dtype, slow)
    got, want = results[name]
    args = _arguments(name, scalar_op(name).nin, dtype, list(values))
    assert got.dtype == want.dtype, f"{name} on {dtype} ({tier}): expected dtype {want.dtype}, received {got.dtype}"
    same = bitwise_equal(got, want)  # NaN for NaN, and the same sign of zero
    result_dtype = want.dtype.name
    documented = TOLERANCES.get((name, result_dtype))
    if documented is None or (documented[1] == "kernel" and tier == "machine"):
        bad = np.nonzero(~same)[0]
        assert bad.size == 0, (
            f"{name} on {dtype} ({tier}): {bad.size} of {got.size} results differ from NumPy's; first at input "
            f"{tuple(a[bad[0]] for a in args)}: expected {want[bad[0]]!r}, received {got[bad[0]]!r}"
        )
        return
    tolerance = documented[0]
    domain = _checked_domain(name, result_dtype, got, want, args)
    ulps = np.where(domain & ~same, _ulps(got, want), 0.0)
    worst = int(np.argmax(ulps))
    assert ulps[worst] <= tolerance, (
        f"{name} on {dtype} ({tier}): documented tolerance {tolerance:g} ulps, received {ulps[worst]:.3g} at input "
        f"{tuple(a[worst] for a in args)}: expected {want[worst]!r}, received {got[worst]!r}"
    )
    outside = ~same & ~domain & ~_allowed_kinds(name, got, want, args)
    if name == "psi" and result_dtype == "float64":  # near a pole: only NaN must match NaN
        outside &= np.isnan(got) != np.isnan(want)
    bad = np.nonzero(outside)[0]
    assert bad.size == 0, (
        f"{name} on {dtype} ({tier}): {bad.size} undocumented disagreements; first at input "
        f"{tuple(a[bad[0]] for a in args)}: expected {want[bad[0]]!r}, received {got[bad[0]]!r}"
    )


def test_pow_exponent_broadcast_from_one_value_gets_numpys_shortcuts(monkeypatch):
    """NumPy squares an exponent 2 (and roots 0.5, inverts -1) given with stride 0 instead of calling ``pow``: the
    machine passes stride 0 where NumPy's iterator does (a constant, a 0-d or broadcast input) and nowhere else."""
    monkeypatch.setattr(elemwise_vm, "VM_MIN_OPS", 1)
    x, y = st.dvectors("x", "y")
    p = st.dscalar("p")
    rng = np.random.default_rng(3)
    xv = np.abs(rng.standard_normal(3000)) * 10
    for exponent in (p, y * 1.0):  # broadcast from one value; or a full vector
        out = st.exp(x) ** exponent * 3.0
        f = symlab.function([x, p, y], out, mode="NUMBA", on_unused_input="ignore")
        ref = symlab.function([x, p, y], out, mode="NUMPY", on_unused_input="ignore")
        assert f.maker.runner.compile_info.vm_nodes == 1
        for value in (2.0, 0.5, -1.0, 3.0):
            args = [xv, np.array(value), np.full(xv.size, value)]
            assert np.array_equal(f(*args), ref(*args)), f"exponent {exponent} = {value}"
            one = [xv[:1], np.array(value), np.full(1, value)]  # one element: no broadcasting, no stride 0
            assert np.array_equal(f(*one), ref(*one)), f"exponent {exponent} = {value} on one element"
    # an exponent computed in the node from a broadcast input: the loop must not write into its register
    a, b = ss.float64("a"), ss.float64("b")
    composite = Composite([a, b], [ss.mul(ss.pow(ss.exp(a), ss.add(ss.mul(b, 0.5), 0.75)), 3.0)])
    node = Elemwise(composite)(st.TensorType("float64", (None,))("x"), st.TensorType("float64", (1,))("row")).owner
    program = elemwise_vm.translate(composite, "float64")
    run = elemwise_vm.vm_callable(node, program, elemwise_vm.load_vm("float64", program.ops))
    for value in (2.0, 2.5, -3.5):
        row = np.array([(value - 0.75) / 0.5])
        assert np.array_equal(run(xv, row)[0], perform(node, [xv, row])[0]), f"exponent computed in the node = {value}"
    s = st.dscalar("s")  # 0-d: NumPy gives every operand stride 0
    f = symlab.function([s, p], st.exp(s) ** p * 3.0, mode="NUMBA")
    ref = symlab.function([s, p], st.exp(s) ** p * 3.0, mode="NUMPY")
    assert f.maker.runner.compile_info.vm_nodes == 1
    for v in xv[:200]:
        assert f(np.array(v), np.array(2.0)) == ref(np.array(v), np.array(2.0)), f"0-d exp({v}) ** 2"
