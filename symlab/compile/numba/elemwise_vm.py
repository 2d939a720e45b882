r"""A register machine for very large fused elemwise nodes: compiled once, then reused by every graph.

A fused ``Composite`` normally becomes one generated loop (see
:mod:`symlab.compile.numba.kernels_elemwise`), which is the fastest code for
small and medium fusions. But Numba's compile time grows with the number of
statements (about 10 ms each), so the thousands of scalar operations of a
long chain would take minutes to compile. Above :data:`VM_MIN_OPS` scalar
operations a ``Composite`` runs on this machine instead:

* the machine (``vm_run``) is one Numba function, generated from the scalar
  op table, that interprets a *program*: an ``int64`` array with one row
  ``(opcode, out, a, b, c)`` per scalar operation, where ``out``, ``a``,
  ``b``, ``c`` are register numbers. It is compiled once per float dtype and
  kept in the disk cache like any graph, so a new graph of any size costs no
  Numba compile at all, only the translation of its ``Composite`` into a
  program (linear in its size);
* a register holds a *block* of elements (up to 1,024), so each instruction
  is a tight loop over a block that stays in the processor's cache, and the
  cost of decoding an instruction is spread over the whole block, as in
  numexpr;
* a call with enough work (elements times instructions) splits its blocks
  among threads: the machine releases the GIL, so this needs no
  ``parallel=True`` compile (which would triple the machine's compile time);
* a function NumPy has a vectorised loop for (``exp``, ``tanh``, ``pow``...,
  :mod:`~symlab.compile.numba.ufunc_loops`) is one call of that loop on the
  block, as in the blocked kernels
  (:mod:`~symlab.compile.numba.kernels_blocked`); the sigmoid calls NumPy's
  ``exp`` loop the same way; every other operation is the expression of the
  generated loop kernels
  (:func:`~symlab.compile.numba.scalar_rules.scalar_expression`), cast
  to the same dtype. See "Same numbers from both tiers" below. The machine
  has every declared scalar op that has such an expression and maps the
  dtype to itself: a new op needs nothing here.

Only a ``Composite`` whose inputs, outputs and inner variables all have one
float dtype (``float32`` or ``float64``) and whose operations are all in the
machine runs here; anything else keeps the generated loop.

>>> import symlab.scalar as ss
>>> x, y = ss.float64("x"), ss.float64("y")
>>> from symlab.scalar.composite import Composite
>>> program = translate(Composite([x, y], [ss.add(ss.mul(ss.exp(x), y), 1.5)]), "float64")
>>> [OPCODE_NAMES[row[0]] for row in program.code]
['exp', 'mul', 'add']
>>> program.n_registers, program.constants.tolist()
(4, [1.5])

Same numbers from both tiers
----------------------------

Tiered compilation runs a function's first calls on the NumPy backend (each
op's ``perform``; a fused ``Composite`` evaluates its inner nodes in order,
on whole arrays, by the ops' NumPy implementations) and later calls on the
machine code, so both must give the same bits. The machine does, for every
op it has except SciPy's special functions (below):

* NumPy computes ``exp``, ``log1p``, ``sin``, ``tanh``... (float64 and
  float32) with its own vectorised code (SIMD, SVML on AVX-512), which
  differs from the C library's in the last bit for some inputs (``tanh``:
  about one value in five on float64). The machine calls NumPy's loops,
  never the C library's functions, for all of them, for ``pow`` and
  ``arctan2`` (with the exponent's stride 0 where NumPy's iterator has it:
  a constant, or a value computed from inputs broadcast from one element,
  since NumPy's ``power`` squares an exponent 2 given so instead of calling
  ``pow``), and for the ``exp`` of the sigmoid;
* arithmetic, comparisons, rounding, ``sqrt``, ``softplus`` (NumPy's
  ``logaddexp`` calls the C library too) and the rest are correctly rounded
  or computed by the same C functions in both tiers.

The generated loop kernels (:mod:`~symlab.compile.numba.kernels_elemwise`,
:mod:`~symlab.compile.numba.kernels_blocked`) give NumPy's bits for every
declared scalar op (:func:`~symlab.scalar.basic.declared_ops`) on every dtype (integer ones
included: an integer input of a float function is cast first, as NumPy
casts it) except the ones below. Two are binary functions they compute
inline, element by element, with the C library: NumPy's loop called on one
element at a time gives NumPy's bits (its loops compute each element from
its value alone) but was measured at 40-90 ns an element, 3 to 5 times the C
library's; a blocked stage for binary loops in
:mod:`~symlab.compile.numba.kernels_blocked` would give them at NumPy's
speed, as the machine does.

Where the tiers differ (measured, and tested with these numbers, by
``tests/compile/test_compile_tier_bits.py`` on random and special inputs). Ulps are
of ``max(|y|, 1)``, ``|got - want| / (eps * max(|want|, 1))``: of the
result, or of 1 for results below 1 (``gammaln`` and ``psi`` have zeros,
``erfc`` a tiny tail, where a relative error means nothing); both results
finite and of normal size:

============  =======  =======  =================================================================
op            float64  float32  tiers, and why
============  =======  =======  =================================================================
``pow``       1        1        generated kernels: the C library's ``pow``, NumPy's SVML loop
``arctan2``   1        2        generated kernels: the C library's ``atan2``, NumPy's SVML loop
``erf``       2        1        both: SciPy's cephes/xsf against the C library's ``erf``
``erfc``      2        1        both: as ``erf`` (SciPy's relative error grows as x**2: 500 ulps of
                                the result at x = 26)
``gamma``     6        4        both: as ``erf`` (``tgamma``)
``gammaln``   4        3        both: as ``erf`` (``lgamma``)
``psi``       64       1        both: SciPy's against symlab's series; float64: 8 for x > 0, 64 for
                                x < 0 at least 0.1 from a pole, unbounded nearer: SciPy's reflection
                                loses digits there (psi(-0.999999999): SciPy -999999925.5, exact
                                -1000000027.9)
============  =======  =======  =================================================================

Beyond the domain they also differ in kind: SciPy's ``erfc`` and ``gamma``
underflow to 0 where the C library gives subnormal numbers (``erfc(27.0)``,
``gamma(-170.75)``), SciPy's ``gammaln`` is ``inf`` at subnormal inputs (the
C library: 744.44 at 5e-324) and ``-inf`` at ``-inf`` (``inf``), and
``pow`` and ``arctan2`` may differ by an ulp of a subnormal result. Giving
SciPy's bits would need SciPy's compiled functions called from the machine
code, registered before any cached code is loaded, in every process that
runs such a kernel.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from time import perf_counter
from typing import Any

import numpy as np

from symlab.compile.numba.scalar_rules import helper_sources, scalar_expression
from symlab.compile.numba.ufunc_table import AVAILABLE, BINARY_AVAILABLE
from symlab.compile.threads import current_threads
from symlab.graph.basic import Apply, Constant, Variable
from symlab.scalar.basic import Cast, ScalarOp, declared_ops, scalar_op
from symlab.scalar.composite import Composite
from symlab.tensor.elemwise import Elemwise, check_runtime_broadcast

#: A ``Composite`` with at least this many scalar operations runs on the machine.
VM_MIN_OPS = 200
#: The dtypes the machine is generated for.
VM_DTYPES = ("float64", "float32")
#: Element operations (elements times instructions) from which a call runs on all of Numba's threads.
PARALLEL_MIN_WORK = 300_000
#: Most elements a register holds, and the most bytes all registers together should take.
MAX_BLOCK = 1024
REGISTER_BYTES = 1 << 18

#: Opcode -> scalar op name, in declaration order (an op declared last takes the next opcode, and the others keep
#: theirs); ``copy`` (opcode 0) moves a register (a cast to the same dtype).
OPCODE_NAMES: list[str] = ["copy"] + [op.name for op in declared_ops()]
OPCODES: dict[str, int] = {name: k for k, name in enumerate(OPCODE_NAMES)}


def _supported(name: str, dtype: str) -> bool:
    """True if the scalar op ``name`` maps ``dtype`` inputs to ``dtype`` and has a Numba expression."""
    op = scalar_op(name)
    try:
        if op.output_dtype(*[dtype] * op.nin) != dtype:
            return False
        scalar_expression(op, ["a"] * op.nin, [dtype] * op.nin, dtype, set())
    except Exception:
        return False
    return True


_SUPPORTED: dict[str, frozenset[str]] = {}


def supported_ops(dtype: str) -> frozenset[str]:
    """The scalar op names the machine runs on ``dtype``."""
    got = _SUPPORTED.get(dtype)
    if got is None:
        got = _SUPPORTED[dtype] = frozenset(n for n in OPCODE_NAMES[1:] if _supported(n, dtype))
    return got


# -- the machine's source ------------------------------------------------------------------------------------------------
def vm_source(dtype: str, ops: frozenset[str] | None = None) -> str:
    """The source of the module holding ``vm_run`` for ``dtype`` and the scalar ops ``ops`` (default: all).

    Deterministic, as it is the cache key. Each op adds a branch (and about a tenth of a second of
    compile time), so a machine holds the ops its programs use: the few distinct ops of a graph make
    one quick compile, cached for every later graph that uses the same ops.
    """
    unknown = set(ops or ()) - supported_ops(dtype)
    if unknown:
        raise ValueError(f"vm_source: the machine has no operations {sorted(unknown)} on {dtype}")
    names = sorted(supported_ops(dtype) if ops is None else ops, key=OPCODES.__getitem__)
    helpers: set[str] = set()
    branches = [f"            elif op == {OPCODES[name]}:  # {name}\n" + _branch_body(name, dtype, helpers) for name in names]
    decorator = '@numba.njit(cache=True, nogil=True, fastmath=False, error_model="numpy")\n'
    helper_source = "".join(decorator + source + "\n" for source in helper_sources(helpers))
    header = f"# Generated by symlab.compile.numba.elemwise_vm: the register machine for {dtype}.\n"
    machine = _MACHINE.replace("DTYPE", dtype).replace("            # BRANCHES\n", "".join(branches))
    # ufunc_loops registers the symbols of NumPy's loops the machine code calls (before any cached code loads)
    imports = "import math\n\nimport numba\nimport numpy as np\n\nfrom symlab.compile.numba import ufunc_loops\n\n\n"
    return header + imports + helper_source + machine


#: The body of the sigmoid's branch: NumPy's ``exp`` loop on ``-|a|`` in the scratch row ``S``, then NumPy's
#: ``where(a >= 0, 1 / (1 + e), e / (1 + e))`` in the dtype (``_sigmoid`` in :mod:`symlab.scalar.basic`).
_SIGMOID = """\
                ra = R[code[i, 2]]
                for j in range(m):
                    S[j] = -abs(ra[j])
                ufunc_loops.exp_DTYPE(S[:m], S[:m])
                one = np.DTYPE(1)
                for j in range(m):
                    e = S[j]
                    ro[j] = one / (one + e) if ra[j] >= 0 else e / (one + e)
"""


def _branch_body(name: str, dtype: str, helpers: set[str]) -> str:
    """The code of op ``name``'s branch of ``vm_run``: the block's ``m`` elements of ``ro`` from the operands.

    A function NumPy has a loop for is one call of that loop on the block (NumPy's bits, and faster than the
    C library's function element by element); a binary loop reads its second operand with stride 0 where the
    instruction's fifth column says NumPy would (see :meth:`Program.code_for`).
    """
    indent = " " * 16
    if (name, dtype) in AVAILABLE:
        return f"{indent}ufunc_loops.{name}_{dtype}(R[code[i, 2]][:m], ro[:m])\n"
    if (name, dtype) in BINARY_AVAILABLE:
        return f"{indent}ufunc_loops.{name}_{dtype}(R[code[i, 2]][:m], R[code[i, 3]][:m], ro[:m], code[i, 4])\n"
    if name == "sigmoid" and ("exp", dtype) in AVAILABLE:
        return _SIGMOID.replace("DTYPE", dtype)
    op = scalar_op(name)
    regs = ["ra[j]", "rb[j]", "rc[j]"][: op.nin]
    expr = scalar_expression(op, regs, [dtype] * op.nin, dtype, helpers)
    fetch = "".join(f"{indent}{r} = R[code[i, {2 + k}]]\n" for k, r in enumerate(["ra", "rb", "rc"][: op.nin]))
    return f"{fetch}{indent}for j in range(m):\n{indent}    ro[j] = {expr}\n"


#: The machine: ``vm_run`` runs the program on the blocks ``first .. stop-1`` (with its own registers) and
#: releases the GIL, so threads can run disjoint ranges of blocks at once; ``DTYPE`` and the branches of the
#: ops are filled in by :func:`vm_source`.
_MACHINE = """\
@numba.njit(cache=True, nogil=True, fastmath=False, error_model="numpy")
def vm_run(code, constants, constant_registers, input_registers, output_registers, n_registers, block, X, Y,
           first, stop):
    n = Y.shape[1]
    R = np.empty((n_registers, block), np.DTYPE)
    S = np.empty(block, np.DTYPE)  # scratch of the ops that take several steps (the sigmoid)
    for k in range(constant_registers.size):
        rk = R[constant_registers[k]]
        c = constants[k]
        for j in range(block):
            rk[j] = c
    for b in range(first, stop):
        start = b * block
        m = min(block, n - start)
        for k in range(input_registers.size):
            rk = R[input_registers[k]]
            xk = X[k]
            for j in range(m):
                rk[j] = xk[start + j]
        for i in range(code.shape[0]):
            op = code[i, 0]
            ro = R[code[i, 1]]
            if op == 0:  # copy
                ra = R[code[i, 2]]
                for j in range(m):
                    ro[j] = ra[j]
            # BRANCHES
        for k in range(output_registers.size):
            rk = R[output_registers[k]]
            yk = Y[k]
            for j in range(m):
                yk[start + j] = rk[j]
"""


@dataclass
class VMLoad:
    """What loading the machine for one dtype did (``seconds``; ``compiled``: False when it came from the cache)."""

    function: Any  # vm_run
    compiled: bool
    seconds: float
    miss_reason: str | None


_machines: dict[tuple[str, frozenset[str]], VMLoad] = {}


def load_vm(dtype: str, ops: frozenset[str]) -> VMLoad:
    """The compiled ``vm_run`` for ``dtype`` and ``ops``, through the disk cache (once per process)."""
    got = _machines.get((dtype, ops))
    if got is not None:
        return VMLoad(got.function, False, 0.0, None)
    import numba

    from symlab.compile.numba import cache

    source = vm_source(dtype, ops)
    nb_dtype = numba.from_dtype(np.dtype(dtype))
    i64 = numba.types.Array(numba.int64, 1, "C")
    sig = (
        numba.types.Array(numba.int64, 2, "C"),
        numba.types.Array(nb_dtype, 1, "C"),
        i64,
        i64,
        i64,
        numba.int64,
        numba.int64,
        numba.types.Array(nb_dtype, 2, "C"),
        numba.types.Array(nb_dtype, 2, "C"),
        numba.int64,
        numba.int64,
    )
    for attempt in range(2):
        entry = cache.prepare_entry(source, main="vm_run")
        started = perf_counter()
        try:
            module = cache.import_entry(entry, fresh=attempt > 0)
            fn = cache.load_without_refresh(module.vm_run)
            misses = sum(fn.stats.cache_misses.values())
            fn.compile(sig)
        except Exception:
            if attempt == 0 and entry.has_index():
                entry.wipe_compiled()  # a corrupted entry: compile again, once
                continue
            raise
        compiled = sum(fn.stats.cache_misses.values()) > misses
        load = VMLoad(fn, compiled, perf_counter() - started, (entry.miss_reason or cache.STALE) if compiled else None)
        _machines[dtype, ops] = load
        return load
    raise AssertionError("unreachable")  # pragma: no cover


# -- programs ---------------------------------------------------------------------------------------------------------------
@dataclass
class Program:
    """A ``Composite`` translated for the machine (see :func:`translate`)."""

    dtype: str
    code: np.ndarray  # int64 (n_instructions, 5): opcode, out, a, b, c
    constants: np.ndarray
    constant_registers: np.ndarray
    input_registers: np.ndarray
    output_registers: np.ndarray
    n_registers: int
    #: The scalar op names the program uses (the machine it needs has these branches).
    ops: frozenset[str]
    #: ``(instruction, inputs)`` of each binary NumPy loop (``pow``, ``arctan2``): the inputs its second operand
    #: is computed from (none: a constant). See :meth:`code_for`.
    second_operands: tuple[tuple[int, frozenset[int]], ...] = ()
    #: :meth:`code_for`'s codes, by the inputs' pattern.
    _codes: dict[tuple[bool, ...], np.ndarray] = field(default_factory=dict, repr=False, compare=False)

    def code_for(self, uniform: tuple[bool, ...]) -> np.ndarray:
        """The code for inputs of which ``uniform[k]`` says whether input ``k`` is broadcast from one element.

        NumPy's iterator gives such an operand, and any value computed from such operands and constants
        alone, stride 0, and NumPy's ``power`` loop computes an exponent 2, 0.5 or -1 given so as ``x*x``,
        ``sqrt(x)``, ``1/x`` (other bits than its ``pow``). The fifth column of a binary loop's row is 1 where
        its second operand is such a value, and the machine then passes that operand with stride 0 too.
        """
        if not self.second_operands:
            return self.code
        got = self._codes.get(uniform)
        if got is None:
            got = self.code.copy()
            for row, inputs in self.second_operands:
                got[row, 4] = all(uniform[k] for k in inputs)
            self._codes[uniform] = got
        return got

    @property
    def block(self) -> int:
        """Elements per register: the largest power of two up to :data:`MAX_BLOCK` that fits the budget."""
        per = REGISTER_BYTES // (self.n_registers * np.dtype(self.dtype).itemsize)
        block = 16
        while block * 2 <= min(per, MAX_BLOCK):
            block *= 2
        return block


class NotForVM(Exception):
    """The ``Composite`` cannot run on the machine (the message says why)."""


def translate(composite: Composite, dtype: str) -> Program:
    """The program computing ``composite`` on the machine for ``dtype``; :class:`NotForVM` if it cannot.

    Inputs take registers ``0 .. nin-1``, then each distinct constant one; a
    temporary's register is reused once its last reader has run (an
    instruction may write the register it reads: each element is read
    before it is written).
    """
    names = supported_ops(dtype)
    for v in [*composite.inputs, *composite.outputs]:
        if v.type.dtype != dtype:
            raise NotForVM(f"{v} has dtype {v.type.dtype}, not {dtype}")
    register: dict[Variable, int] = {v: k for k, v in enumerate(composite.inputs)}
    constants: dict[Any, int] = {}
    n_fixed = len(composite.inputs)

    def constant_register(c: Constant) -> int:
        nonlocal n_fixed
        value = np.asarray(c.data, dtype=dtype).item()
        key = (value, np.signbit(value)) if value == value else ("nan",)  # 0.0 and -0.0 differ; NaN == NaN
        got = constants.get(key)
        if got is None:
            got = constants[key] = n_fixed
            n_fixed += 1
        register[c] = got
        return got

    nodes = composite.nodes
    for node in nodes:
        op = node.op
        out = node.outputs[0]
        if out.type.dtype != dtype or any(v.type.dtype != dtype for v in node.inputs):
            raise NotForVM(f"{op} in {composite} is not on {dtype} alone")
        if isinstance(op, Cast):
            continue  # a cast from dtype to dtype: a copy
        if not isinstance(op, ScalarOp) or type(op) is not ScalarOp or op.name not in names:
            raise NotForVM(f"the machine has no operation {op}")
        for v in node.inputs:
            if isinstance(v, Constant) and v not in register:
                constant_register(v)
    for out in composite.outputs:
        if isinstance(out, Constant) and out not in register:
            constant_register(out)

    last_use: dict[Variable, int] = {}
    for k, node in enumerate(nodes):
        for v in node.inputs:
            last_use[v] = k
    second_operands = _second_operands(composite, dtype)
    keep = set(composite.outputs)
    free: list[int] = []
    n_registers = n_fixed
    code = np.zeros((len(nodes), 5), dtype=np.int64)
    binary_loops = {row for row, _ in second_operands}
    for k, node in enumerate(nodes):
        args = [register[v] for v in node.inputs]
        dying = [  # registers whose last reader is this node are free again
            register[v] for v in dict.fromkeys(node.inputs) if last_use.get(v) == k and v not in keep and v.owner is not None
        ]
        # A binary NumPy loop may read its second operand with stride 0, at its first element, for the whole block:
        # writing into that register would change the operand under the loop, so it is freed after the target.
        late = [args[1]] if k in binary_loops and args[1] in dying else []
        free += [r for r in dying if r not in late]
        if free:
            target = free.pop()
        else:
            target = n_registers
            n_registers += 1
        free += late
        register[node.outputs[0]] = target
        opcode = OPCODES["copy"] if isinstance(node.op, Cast) else OPCODES[node.op.name]
        code[k, 0], code[k, 1] = opcode, target
        code[k, 2 : 2 + len(args)] = args
    by_register = sorted((r, key) for key, r in constants.items())
    values = [float("nan") if key == ("nan",) else key[0] for _, key in by_register]
    return Program(
        dtype,
        code,
        np.array(values, dtype=dtype),
        np.array([r for r, _ in by_register], dtype=np.int64),
        np.arange(len(composite.inputs), dtype=np.int64),
        np.array([register[o] for o in composite.outputs], dtype=np.int64),
        max(n_registers, 1),
        frozenset(OPCODE_NAMES[c] for c in code[:, 0] if c != 0),
        second_operands,
    )


def _second_operands(composite: Composite, dtype: str) -> tuple[tuple[int, frozenset[int]], ...]:
    """``(node index, inputs its second operand is computed from)`` of each node of a binary NumPy loop."""
    loops = [k for k, node in enumerate(composite.nodes) if (node.op.name, dtype) in BINARY_AVAILABLE]
    if not loops:
        return ()
    sources: dict[Variable, frozenset[int]] = {v: frozenset([k]) for k, v in enumerate(composite.inputs)}
    none: frozenset[int] = frozenset()
    for node in composite.nodes:
        sources[node.outputs[0]] = none.union(*(sources.get(v, none) for v in node.inputs))
    return tuple((k, sources.get(composite.nodes[k].inputs[1], none)) for k in loops)


def vm_program(node: Apply) -> Program | None:
    """The machine's program for ``node``, or None when the node keeps its generated loop kernel."""
    op = node.op
    if not isinstance(op, Elemwise) or not isinstance(op.scalar_op, Composite):
        return None
    composite = op.scalar_op
    if len(composite.nodes) < VM_MIN_OPS:
        return None
    dtype = node.outputs[0].type.dtype
    if dtype not in VM_DTYPES or any(v.type.dtype != dtype for v in [*node.inputs, *node.outputs]):
        return None
    cached = getattr(composite, "_vm_program", None)
    if cached is not None and cached.dtype == dtype:
        return cached
    try:
        program = translate(composite, dtype)
    except NotForVM:
        return None
    composite._vm_program = program
    return program


def vm_callable(node: Apply, program: Program, machine: VMLoad) -> Any:
    """``run(*input_values) -> list of outputs``: ``node`` computed by the compiled ``machine``.

    A call with at least :data:`PARALLEL_MIN_WORK` element operations (elements times instructions) splits
    its blocks among threads (the machine releases the GIL), in blocks small enough that each thread gets
    one or more; the numbers are the same as in one thread.
    """
    dtype = np.dtype(program.dtype)
    n_in, n_out = len(node.inputs), len(node.outputs)
    block = program.block
    n_instructions = max(len(program.code), 1)
    rest = (
        program.constants,
        program.constant_registers,
        program.input_registers,
        program.output_registers,
        program.n_registers,
    )
    fixed = (program.code, *rest)
    vm = machine.function

    def run(*values: Any) -> list[np.ndarray]:
        values = [np.asarray(v) for v in values]
        check_runtime_broadcast(node, values)  # the same refusal, and message, as Elemwise.perform
        shape = np.broadcast_shapes(*(v.shape for v in values))
        size = int(np.prod(shape))
        if program.second_operands:  # which inputs NumPy would read with stride 0 (0-d, or broadcast)
            code = program.code_for(tuple(v.ndim == 0 or (v.size == 1 and size > 1) for v in values))
            args = (code, *rest)
        else:
            args = fixed
        X = np.empty((n_in, size), dtype=dtype)
        for k, value in enumerate(values):
            X[k].reshape(shape)[...] = value  # broadcasts, and reads any layout
        Y = np.empty((n_out, size), dtype=dtype)
        threads = _thread_count()
        if threads > 1 and size * n_instructions >= PARALLEL_MIN_WORK and size >= 64:
            step = min(block, max(16, -(-size // threads)))
            n_blocks = -(-size // step)
            bounds = [n_blocks * t // threads for t in range(threads + 1)]
            pool = _pool(threads)
            futures = [
                pool.submit(vm, *args, step, X, Y, bounds[t], bounds[t + 1]) for t in range(1, threads)
            ]
            vm(*args, step, X, Y, bounds[0], bounds[1])  # this thread runs the first share
            for future in futures:
                future.result()
        else:
            vm(*args, block, X, Y, 0, -(-size // block))
        return [Y[k].reshape(shape) for k in range(n_out)]

    return run


_executor: Any = None


def _thread_count() -> int:
    """Threads a large call uses: the calling function's count (``symlab.config.threads``, ``function(threads=)``)."""
    return current_threads()


def _pool(threads: int) -> Any:
    global _executor
    if _executor is None or _executor._max_workers < threads - 1:
        from concurrent.futures import ThreadPoolExecutor

        _executor = ThreadPoolExecutor(max_workers=max(threads - 1, 1), thread_name_prefix="symlab-vm")
    return _executor


__all__ = [
    "MAX_BLOCK",
    "OPCODES",
    "OPCODE_NAMES",
    "VM_DTYPES",
    "VM_MIN_OPS",
    "NotForVM",
    "Program",
    "VMLoad",
    "load_vm",
    "supported_ops",
    "translate",
    "vm_callable",
    "vm_program",
    "vm_source",
]
