r"""Numba kernels of ``Elemwise``: one generated loop over the inputs, for any scalar op or ``Composite``.

The loop computes every output element from the input elements with the
scalar op's expression inlined (a ``Composite`` becomes one assignment per
inner node, each cast to its inner dtype, as :meth:`Composite.impl` does), so
a fused chain makes no temporaries. Inputs have the output's rank; a
dimension of an input broadcasts where its static size is 1 (the node's
types say so), and the run-time sizes of the other inputs must agree, or a
``ValueError`` names the op and the dimension, like ``Elemwise.perform``.

When every input is either of the full shape or a broadcast single element,
and the arrays are C-contiguous at run time, a flat loop runs (the fast
path: ``np.ravel`` is a view of an array Numba knows is C-contiguous, a copy
of one it does not); otherwise one nested loop per dimension. Vectors have
no fast path (their loop is flat already, and the checks cost a tenth of a
microsecond a call), except for the parallel loop below. An
``inplace_pattern`` output is written into its input's buffer, by the nested
loops (a flat view of an array whose layout Numba does not know is not
available in nopython mode).

Scalar ops without an expression template (``sigmoid``, ``softplus``,
``psi``) call small helper functions given in the source (a numerically
stable sigmoid, ``max(x, 0) + log1p(exp(-|x|))``...).

Before its kernel is generated, the node's scalar computation is written the
way NumPy computes it (:func:`numpy_equivalent`), so that the kernel gives
the NumPy backend's bits: an input of another dtype than a float result is
cast to the result's dtype first (NumPy runs the loop of the result's dtype
on cast inputs: ``exp`` of an ``int16`` is ``float32``'s ``exp``, where
Numba would compute a ``float64`` and round it), and the sigmoid becomes
NumPy's formula, whose ``exp`` the blocked kernels compute by NumPy's loop.
The ops whose bits still differ are listed in "Same numbers from both
tiers" in :mod:`~symlab.compile.numba.elemwise_vm`.

Large fused loops that do real work per element (a transcendental function,
or several operations) also get a parallel flat loop (``numba.prange``,
``parallel=True``) used from :data:`PARALLEL_MIN_SIZE` elements on: measured on
two cores, the fused ``exp(-x**2)*sin(y) + log1p(x*x)*0.5`` on 1e6 elements
takes 0.59x NumPy's time in parallel against 1.3x serial. Plain arithmetic
is memory-bound and stays serial, and so do kernels with several outputs:
``parallel=True`` costs compile time (a few tenths of a second for a
one-output loop, tens of seconds for a loop with many outputs), which only
pays where the loop does.

>>> import symlab.tensor as st
>>> x, y = st.dmatrices("x", "y")
>>> print(kernel_for((x + y).owner, "k").source)  # doctest: +ELLIPSIS
def k(a0, a1):
    n0 = a0.shape[0]
    if a1.shape[0] != n0:
        raise ValueError('Elemwise{add,no_inplace}: input shapes do not match in dimension 0; ...')
    n1 = a0.shape[1]
    if a1.shape[1] != n1:
        raise ValueError('Elemwise{add,no_inplace}: input shapes do not match in dimension 1; ...')
    out0 = np.empty((n0, n1,), np.float64)
    if a0.flags.c_contiguous and a1.flags.c_contiguous:
        f0 = np.ravel(a0)
        f1 = np.ravel(a1)
        g0 = out0.reshape(out0.size)
        for i in range(g0.size):
            x0 = f0[i]
            x1 = f1[i]
            g0[i] = np.float64((x0 + x1))
    else:
        for j0 in range(n0):
            for j1 in range(n1):
                x0 = a0[j0, j1]
                x1 = a1[j0, j1]
                out0[j0, j1] = np.float64((x0 + x1))
    return out0
<BLANKLINE>
"""

from __future__ import annotations

import math

import numpy as np

from symlab.compile.numba.kernels import Kernel, NoKernel, kernel_for, register_kernel
from symlab.graph.basic import Apply, Constant, Variable
from symlab.scalar.basic import Cast, ScalarOp, as_scalar, scalar_op
from symlab.scalar.composite import Composite
from symlab.scalar.type import get_scalar_type
from symlab.tensor.elemwise import Elemwise

#: Number of elements from which an expensive fused loop runs in parallel.
PARALLEL_MIN_SIZE = 200_000
#: Scalar ops that make a loop worth running in parallel.
EXPENSIVE = {
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "sigmoid", "softplus", "sin", "cos", "tan",
    "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh", "erf", "erfc", "gamma", "gammaln", "psi", "pow",
}

#: Helper functions in source form (top-level names beginning ``_shared_`` are written once per module).
HELPERS = {
    "sigmoid": '''def _shared_sigmoid(x):
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)
''',
    "softplus": '''def _shared_softplus(x):
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))
''',
    "psi": '''def _shared_psi(x):
    if x != x or x == -math.inf:
        return math.nan
    if x == 0.0:
        return -math.copysign(math.inf, x)  # SciPy's psi: -inf at 0.0, inf at -0.0
    result = 0.0
    if x < 0.0:
        p = np.floor(x)  # (math.floor gives an int64, wrong beyond 2**63)
        if p == x:
            return math.nan  # a pole
        # the reflection's cotangent from the fractional part, exact (pi * x would lose it for a large |x|)
        frac = x - p
        if frac > 0.5:
            frac = x - (p + 1.0)  # from x again: 1 - frac would round off a tiny x
        if frac != 0.5:
            result -= math.pi / math.tan(math.pi * frac)
        x = 1.0 - x
    while x < 10.0:  # the asymptotic series below is then accurate to about 1e-17
        result -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    t = f * (1.0 / 240 + f * (-1.0 / 132 + f * (691.0 / 32760 + f * (-1.0 / 12))))
    t = f * (-1.0 / 12 + f * (1.0 / 120 + f * (-1.0 / 252 + t)))
    return result + math.log(x) - 0.5 / x + t
''',
}

#: Expression templates that differ from ``ScalarOp.expr`` in Numba (NaN propagation, bool semantics). Of two
#: equal values NumPy's ``maximum``, ``minimum`` (and ``clip``) return the second (``maximum(0.0, -0.0)`` is
#: -0.0), Numba's the first: hence the swapped arguments.
OVERRIDES = {
    "maximum": "np.maximum({1}, {0})",
    "minimum": "np.minimum({1}, {0})",
    "clip": "np.minimum({2}, np.maximum({1}, {0}))",
    "round": "np.rint({0})",
    "sigmoid": "_shared_sigmoid({0})",
    "softplus": "_shared_softplus({0})",
    "psi": "_shared_psi({0})",
}

#: Expression templates of integer dtypes where Numba's meaning of ``OVERRIDES`` or ``ScalarOp.expr`` is not
#: NumPy's: ``np.sign`` of an unsigned number wraps its -1; ``1 / x`` of an unsigned 0 is inf, which NumPy's C
#: cast makes 0; ``np.rint`` goes through float64 (and loses int64's low bits), where NumPy returns the integer;
#: Numba's ``x // -1`` of the smallest int64 is 0, NumPy's wraps to the smallest int64 (as ``-x`` does).
UNSIGNED_OVERRIDES = {"sign": "({0} > 0)", "reciprocal": "({0} == 1)"}
SIGNED_OVERRIDES = {"int_div": "(-{0} if {1} == -1 else {0} // {1})"}
INTEGER_OVERRIDES = {"round": "{0}"}
#: The same for floats: Numba's ``np.sign(-0.0)`` is -0.0, NumPy's 0.0. ``clip`` is NumPy's result for scalar
#: bounds (``x`` unchanged where ``lo <= x <= hi``, so ``clip(-0.0, 0.0, 3.0)`` is -0.0; a NaN bound gives NaN),
#: which ``clip``'s ``perform`` gives for any bounds (``_clip`` in :mod:`symlab.scalar.basic`).
FLOAT_OVERRIDES = {
    "sign": "(np.sign({0}) + 0.0)",
    "clip": "({1} if {1} != {1} else {2} if {2} != {2} else {2} if ({1} if {0} < {1} else {0}) > {2} "
    "else ({1} if {0} < {1} else {0}))",
}

_UNSUPPORTED_KINDS = "cVOSUmM"


def _np_type(dtype: str) -> str:
    return "np.bool_" if dtype == "bool" else f"np.{dtype}"


def _check_dtype(dtype: str, what: str) -> None:
    if np.dtype(dtype).kind in _UNSUPPORTED_KINDS or dtype == "float16":
        raise NoKernel(f"{what}: dtype {dtype} is not supported by the Numba kernels")


def scalar_expression(op: ScalarOp, args: list[str], in_dtypes: list[str], out_dtype: str, helpers: set[str]) -> str:
    """A Numba expression of ``op`` on the argument expressions, cast to ``out_dtype``."""
    if isinstance(op, Cast):
        if out_dtype == "bool":
            return f"({args[0]} != 0)"
        return f"{_np_type(out_dtype)}({args[0]})"
    name = op.name
    kind = np.dtype(in_dtypes[0]).kind if in_dtypes else "f"
    if name == "invert" and in_dtypes[0] == "bool":
        body = f"(not {args[0]})"
    elif kind == "u" and name in UNSIGNED_OVERRIDES:
        body = UNSIGNED_OVERRIDES[name].format(*args)
    elif kind == "i" and name in SIGNED_OVERRIDES and np.dtype(out_dtype).kind == "i":
        body = SIGNED_OVERRIDES[name].format(*args)
    elif kind in "iub" and name in INTEGER_OVERRIDES:
        body = INTEGER_OVERRIDES[name].format(*args)
    elif kind == "f" and name in FLOAT_OVERRIDES:
        body = FLOAT_OVERRIDES[name].format(*args)
    elif name in OVERRIDES:
        body = OVERRIDES[name].format(*args)
        if name in HELPERS:
            helpers.add(name)
    elif op.expr is not None and type(op) is ScalarOp:
        body = op.expr.format(*args)
    else:
        raise NoKernel(f"scalar op {op} has no Numba expression")
    if out_dtype == "bool":
        return f"np.bool_({body})"
    return f"{_np_type(out_dtype)}({body})"


def _literal(c: Constant) -> str:
    value = np.asarray(c.data).item()
    dtype = c.type.dtype
    if isinstance(value, float) and not math.isfinite(value):
        text = "math.nan" if math.isnan(value) else ("math.inf" if value > 0 else "-math.inf")
    else:
        text = repr(value)
    return f"{_np_type(dtype)}({text})"


def scalar_body(op: ScalarOp, inputs: list[str], in_dtypes: list[str], out_dtypes: list[str], helpers: set[str]) -> tuple[list[str], list[str]]:
    """(statements, output expressions) computing ``op`` of the named scalar inputs."""
    if not isinstance(op, Composite):
        return [], [scalar_expression(op, inputs, in_dtypes, out_dtypes[0], helpers)]
    names: dict[Variable, str] = dict(zip(op.inputs, inputs))
    lines = []

    def ref(v: Variable) -> str:
        return _literal(v) if isinstance(v, Constant) else names[v]

    for k, node in enumerate(op.nodes):
        out = node.outputs[0]
        _check_dtype(out.type.dtype, str(op))
        expr = scalar_expression(node.op, [ref(v) for v in node.inputs], [v.type.dtype for v in node.inputs], out.type.dtype, helpers)
        names[out] = f"t{k}"
        lines.append(f"t{k} = {expr}")
    results = []
    for out in op.outputs:
        if out.owner is None:
            results.append(f"{_np_type(out.type.dtype)}({ref(out)})")
        else:
            results.append(names[out])
    return lines, results


def numpy_equivalent(op: ScalarOp, in_dtypes: list[str]) -> ScalarOp:
    """``op`` on inputs of ``in_dtypes`` written as NumPy computes it (``op`` itself when nothing changes).

    * a float result of inputs of another dtype: the inputs are cast to the result's dtype first, as NumPy
      casts them to run the result's loop (not ``switch``'s condition nor ``second``'s ignored first input;
      comparisons and logic have bool results);
    * ``sigmoid(x)`` on a float result with NumPy's ``exp`` loop: ``where(x >= 0, 1 / (1 + e), e / (1 + e))``
      of ``e = exp(-|x|)`` in the result's dtype (``_sigmoid`` in :mod:`symlab.scalar.basic`), so that a
      blocked kernel computes the ``exp`` by NumPy's loop.

    >>> import symlab.scalar as ss
    >>> i = ss.int16("i")
    >>> numpy_equivalent(Composite([i], [ss.exp(i)]), ["int16"])
    Composite{exp(Cast{float32}(i0))}
    """
    if isinstance(op, Composite):
        inputs, outputs, nodes = op.inputs, op.outputs, op.nodes
    else:
        inputs = [get_scalar_type(d)(f"i{k}") for k, d in enumerate(in_dtypes)]
        outputs = [op(*inputs)]
        nodes = [outputs[0].owner]
    if not any(_casts(node) or _is_numpy_sigmoid(node) for node in nodes):
        return op
    new: dict[Variable, Variable] = {v: get_scalar_type(v.type.dtype)(f"i{k}") for k, v in enumerate(inputs)}
    for node in nodes:
        args = [v if isinstance(v, Constant) else new[v] for v in node.inputs]
        dtype = node.outputs[0].type.dtype
        for k in _casts(node):
            args[k] = Cast(dtype)(args[k])
        result = _numpy_sigmoid(args[0], dtype) if _is_numpy_sigmoid(node) else node.op(*args)
        if result.type.dtype != dtype:  # cast inputs cannot change a result's dtype; refuse if they did
            raise NoKernel(f"{op}: {node.op} of inputs cast to {dtype} gives {result.type.dtype}")
        new[node.outputs[0]] = result
    return Composite([new[v] for v in inputs], [v if isinstance(v, Constant) else new[v] for v in outputs])


def _casts(node: Apply) -> list[int]:
    """The inputs of scalar ``node`` that NumPy casts to its float result's dtype (see :func:`numpy_equivalent`)."""
    dtype = node.outputs[0].type.dtype
    if isinstance(node.op, Cast) or np.dtype(dtype).kind != "f":
        return []
    first = 1 if node.op.name in ("switch", "second") else 0
    return [k for k in range(first, len(node.inputs)) if node.inputs[k].type.dtype != dtype]


def _is_numpy_sigmoid(node: Apply) -> bool:
    """Whether scalar ``node`` is a sigmoid that :func:`numpy_equivalent` writes as NumPy's formula."""
    from symlab.compile.numba.ufunc_table import AVAILABLE

    op = node.op
    return type(op) is ScalarOp and op.name == "sigmoid" and ("exp", node.outputs[0].type.dtype) in AVAILABLE


def _numpy_sigmoid(x: Variable, dtype: str) -> Variable:
    """NumPy's sigmoid of ``x`` (of ``dtype``): ``where(x >= 0, 1 / (1 + e), e / (1 + e))``, ``e = exp(-|x|)``."""
    zero, one = (as_scalar(np.asarray(c, dtype=dtype)[()]) for c in (0, 1))
    op = scalar_op
    e = op("exp")(op("neg")(op("abs")(x)))
    denominator = op("add")(one, e)
    return op("switch")(op("ge")(x, zero), op("true_div")(one, denominator), op("true_div")(e, denominator))


def numpy_equivalent_node(op: Elemwise, node: Apply) -> tuple[Elemwise, Apply]:
    """``(op, node)`` with the scalar op replaced by :func:`numpy_equivalent` (a copy of the node, same types)."""
    scalar = numpy_equivalent(op.scalar_op, [v.type.dtype for v in node.inputs])
    if scalar is op.scalar_op:
        return op, node
    new_op = Elemwise(scalar, dict(op.inplace_pattern))
    return new_op, Apply(new_op, [v.type() for v in node.inputs], [o.type() for o in node.outputs])


def _ops_of(op: ScalarOp) -> list[ScalarOp]:
    return [n.op for n in op.nodes] if isinstance(op, Composite) else [op]


def input_kinds(node: Apply) -> list[str]:
    """How each input of an ``Elemwise`` node covers the output, from the static shapes.

    ``"scalar"``: a single element, broadcast everywhere; ``"full"``: the
    output's shape (size 1 only where the output's static size is 1);
    ``"partial"``: broadcast along some dimensions only.
    """
    out_static = node.outputs[0].type.shape
    kinds = []
    for v in node.inputs:
        if all(s == 1 for s in v.type.shape):
            kinds.append("scalar")
        elif all(s != 1 or out_static[d] == 1 for d, s in enumerate(v.type.shape)):
            kinds.append("full")
        else:
            kinds.append("partial")
    return kinds


def sizes_and_outputs(op: Elemwise, node: Apply) -> tuple[list[str], list[str]]:
    """Kernel lines setting the sizes ``n0, n1...`` and the outputs ``out0...``, and the size of each dimension.

    A dimension's size comes from the first input not statically 1 there,
    and every other such input must agree at run time, or a ``ValueError``
    names the op and the dimension (as ``Elemwise.perform``). An
    ``inplace_pattern`` output is its input; the others are new arrays.
    """
    ins, outs = node.inputs, node.outputs
    nd = outs[0].type.ndim
    lines: list[str] = []
    sizes = []
    for d in range(nd):
        full = [i for i in range(len(ins)) if ins[i].type.shape[d] != 1]
        if not full:
            sizes.append("1")
            lines.append(f"    n{d} = 1")
            continue
        lines.append(f"    n{d} = a{full[0]}.shape[{d}]")
        for i in full[1:]:
            lines.append(f"    if a{i}.shape[{d}] != n{d}:")
            message = (
                f"{op}: input shapes do not match in dimension {d}; a size-1 dimension broadcasts only when its "
                "static shape is 1 (use specify_shape or a broadcastable type)"
            )
            lines.append(f"        raise ValueError({message!r})")
        sizes.append(f"n{d}")
    shape = "()" if nd == 0 else "(" + ", ".join(sizes) + ",)"
    destroyed = dict(op.inplace_pattern)
    for k, o in enumerate(outs):
        lines.append(f"    out{k} = a{destroyed[k]}" if k in destroyed else f"    out{k} = np.empty({shape}, {_np_type(o.type.dtype)})")
    return lines, sizes


@register_kernel(Elemwise)
def elemwise_kernel(op: Elemwise, node: Apply, name: str) -> Kernel:
    """The loop kernel of an ``Elemwise`` node (see the module's docstring).

    A node that computes a transcendental function NumPy has a vectorised
    loop for gets the blocked kernel of :mod:`~symlab.compile.numba.kernels_blocked`.
    """
    from symlab.compile.numba.kernels_blocked import blocked_kernel, uses_loops

    op, node = numpy_equivalent_node(op, node)
    if uses_loops(node):
        return blocked_kernel(op, node, name)
    ins, outs = node.inputs, node.outputs
    for v in [*ins, *outs]:
        _check_dtype(v.type.dtype, str(op))
    nd = outs[0].type.ndim
    n_in = len(ins)
    helpers: set[str] = set()
    a = [f"a{i}" for i in range(n_in)]
    x = [f"x{i}" for i in range(n_in)]
    stmts, results = scalar_body(op.scalar_op, x, [v.type.dtype for v in ins], [o.type.dtype for o in outs], helpers)
    destroyed = dict(op.inplace_pattern)

    lines = [f"def {name}({', '.join(a)}):"]
    prologue, sizes = sizes_and_outputs(op, node)
    lines += prologue

    def compute(indent: str, read: list[str], write: list[str]) -> list[str]:
        body = [f"{indent}{xi} = {r}" for xi, r in zip(x, read)]
        body += [f"{indent}{s}" for s in stmts]
        body += [f"{indent}{w} = {r}" for w, r in zip(write, results)]
        return body

    if nd == 0:
        lines += compute("    ", [f"{ai}[()]" for ai in a], [f"out{k}[()]" for k in range(len(outs))])
        lines.append(f"    return {_returned(len(outs))}")
        return Kernel(name, _with_helpers(lines, helpers))

    # -- fast path: every input full-shape or a single broadcast element, all contiguous. A vector needs
    # none (its loop is already flat), unless it gets the parallel loop
    kinds = input_kinds(node)
    fast = "partial" not in kinds and not destroyed and (nd > 1 or _worth_parallel(op))
    index = ", ".join(f"j{d}" for d in range(nd))
    general_reads = []
    for i, v in enumerate(ins):
        idx = ", ".join("0" if v.type.shape[d] == 1 else f"j{d}" for d in range(nd))
        general_reads.append(f"a{i}[{idx}]")
    general = []
    for d in range(nd):
        general.append("    " * (d + 1) + f"for j{d} in range(n{d}):")
    general += compute("    " * (nd + 1), general_reads, [f"out{k}[{index}]" for k in range(len(outs))])

    if fast:
        checks = [f"a{i}.flags.c_contiguous" for i in range(n_in) if kinds[i] == "full"]
        lines.append(f"    if {' and '.join(checks) if checks else 'True'}:")
        reads = []
        for i in range(n_in):
            if kinds[i] == "scalar":
                lines.append(f"        s{i} = a{i}[{', '.join('0' for _ in range(nd))}]")
                reads.append(f"s{i}")
            else:
                lines.append(f"        f{i} = np.ravel(a{i})")
                reads.append(f"f{i}[i]")
        for k in range(len(outs)):
            lines.append(f"        g{k} = out{k}.reshape(out{k}.size)")
        writes = [f"g{k}[i]" for k in range(len(outs))]
        parallel = _worth_parallel(op)
        if parallel:
            lines.append(f"        if g0.size >= {PARALLEL_MIN_SIZE}:")
            lines.append("            for i in numba.prange(g0.size):")
            lines += compute("                ", reads, writes)
            lines.append("        else:")
            lines.append("            for i in range(g0.size):")
            lines += compute("                ", reads, writes)
        else:
            lines.append("        for i in range(g0.size):")
            lines += compute("            ", reads, writes)
        lines.append("    else:")
        lines += ["    " + g for g in general]
    else:
        parallel = False
        lines += general
    lines.append(f"    return {_returned(len(outs))}")
    return Kernel(name, _with_helpers(lines, helpers), jit_options={"parallel": True} if parallel else {})


def _worth_parallel(op: Elemwise) -> bool:
    if op.scalar_op.nout != 1:  # a multi-output parfor compiles slowly (tens of seconds)
        return False
    ops = _ops_of(op.scalar_op)
    return any(o.name in EXPENSIVE for o in ops if not isinstance(o, Cast)) and len(ops) >= 3


def _returned(n: int) -> str:
    return "out0" if n == 1 else "(" + ", ".join(f"out{k}" for k in range(n)) + ")"


def _with_helpers(lines: list[str], helpers: set[str]) -> str:
    return "".join(HELPERS[h] + "\n" for h in sorted(helpers)) + "\n".join(lines) + "\n"


__all__ = [
    "EXPENSIVE",
    "PARALLEL_MIN_SIZE",
    "elemwise_kernel",
    "input_kinds",
    "kernel_for",
    "numpy_equivalent",
    "numpy_equivalent_node",
    "scalar_body",
    "scalar_expression",
    "sizes_and_outputs",
]
