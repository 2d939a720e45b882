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

Each scalar op's expression is its declared one, or the Numba backend's rule
for it (:mod:`~symlab.compile.numba.scalar_rules`): ``sigmoid``, ``softplus``
and ``psi`` call small helper functions given in the source (a numerically
stable sigmoid, ``max(x, 0) + log1p(exp(-|x|))``...).

Before its kernel is generated, the node's scalar computation is written the
way NumPy computes it (:func:`numpy_equivalent`), so that the kernel gives
the NumPy backend's bits: an input of another dtype than a float result is
cast to the result's dtype first (NumPy runs the loop of the result's dtype
on cast inputs: ``exp`` of an ``int16`` is ``float32``'s ``exp``, where
Numba would compute a ``float64`` and round it), and an op with a NumPy form
(the sigmoid) becomes NumPy's formula, whose ``exp`` the blocked kernels
compute by NumPy's loop. The ops whose bits still differ are listed in
"Same numbers from both tiers" in :mod:`~symlab.compile.numba.elemwise_vm`.

Large fused loops that do real work per element (an op declared
``expensive``, among several operations) also get a parallel flat loop
(``numba.prange``, ``parallel=True``) used from
:data:`~symlab.compile.numba.codegen.PARALLEL_MIN_SIZE` elements on: measured
on two cores, the fused ``exp(-x**2)*sin(y) + log1p(x*x)*0.5`` on 1e6 elements
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

from collections.abc import Callable

import numpy as np

from symlab.compile.numba.codegen import (
    PARALLEL_MIN_SIZE,
    check_dtype,
    input_kinds,
    literal,
    returned,
    sizes_and_outputs,
    worth_parallel,
)
from symlab.compile.numba.kernels import Kernel, NoKernel, kernel_for, register_kernel
from symlab.compile.numba.kernels_blocked import blocked_kernel, uses_loops
from symlab.compile.numba.scalar_rules import numpy_form, scalar_expression, with_helpers
from symlab.graph.basic import Apply, Constant, Variable
from symlab.scalar.basic import Cast, ScalarOp
from symlab.scalar.composite import Composite
from symlab.scalar.type import get_scalar_type, np_type_source
from symlab.tensor.elemwise import Elemwise


def scalar_body(op: ScalarOp, inputs: list[str], in_dtypes: list[str], out_dtypes: list[str], helpers: set[str]) -> tuple[list[str], list[str]]:
    """(statements, output expressions) computing ``op`` of the named scalar inputs."""
    if not isinstance(op, Composite):
        return [], [scalar_expression(op, inputs, in_dtypes, out_dtypes[0], helpers)]
    names: dict[Variable, str] = dict(zip(op.inputs, inputs))
    lines = []

    def ref(v: Variable) -> str:
        return literal(v) if isinstance(v, Constant) else names[v]

    for k, node in enumerate(op.nodes):
        out = node.outputs[0]
        check_dtype(out.type.dtype, str(op))
        expr = scalar_expression(node.op, [ref(v) for v in node.inputs], [v.type.dtype for v in node.inputs], out.type.dtype, helpers)
        names[out] = f"t{k}"
        lines.append(f"t{k} = {expr}")
    results = []
    for out in op.outputs:
        if out.owner is None:
            results.append(f"{np_type_source(out.type.dtype)}({ref(out)})")
        else:
            results.append(names[out])
    return lines, results


def numpy_equivalent(op: ScalarOp, in_dtypes: list[str]) -> ScalarOp:
    """``op`` on inputs of ``in_dtypes`` written as NumPy computes it (``op`` itself when nothing changes).

    * a float result of inputs of another dtype: the inputs are cast to the result's dtype first, as NumPy
      casts them to run the result's loop (not ``switch``'s condition nor ``second``'s ignored first input;
      comparisons and logic have bool results);
    * an op with a NumPy form on a float result (:func:`~symlab.compile.numba.scalar_rules.numpy_form`: the
      sigmoid, ``where(x >= 0, 1 / (1 + e), e / (1 + e))`` of ``e = exp(-|x|)`` in the result's dtype, as
      ``_sigmoid`` in :mod:`symlab.scalar.basic`) is written so, and a blocked kernel computes its ``exp`` by
      NumPy's loop.

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
    if not any(_casts(node) or _numpy_form(node) for node in nodes):
        return op
    new: dict[Variable, Variable] = {v: get_scalar_type(v.type.dtype)(f"i{k}") for k, v in enumerate(inputs)}
    for node in nodes:
        args = [v if isinstance(v, Constant) else new[v] for v in node.inputs]
        dtype = node.outputs[0].type.dtype
        for k in _casts(node):
            args[k] = Cast(dtype)(args[k])
        form = _numpy_form(node)
        result = form(args[0], dtype) if form is not None else node.op(*args)
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


def _numpy_form(node: Apply) -> Callable[[Variable, str], Variable] | None:
    """The NumPy form :func:`numpy_equivalent` writes scalar ``node`` in, or None."""
    return numpy_form(node.op, node.outputs[0].type.dtype)


def numpy_equivalent_node(op: Elemwise, node: Apply) -> tuple[Elemwise, Apply]:
    """``(op, node)`` with the scalar op replaced by :func:`numpy_equivalent` (a copy of the node, same types)."""
    scalar = numpy_equivalent(op.scalar_op, [v.type.dtype for v in node.inputs])
    if scalar is op.scalar_op:
        return op, node
    new_op = Elemwise(scalar, dict(op.inplace_pattern))
    return new_op, Apply(new_op, [v.type() for v in node.inputs], [o.type() for o in node.outputs])


@register_kernel(Elemwise)
def elemwise_kernel(op: Elemwise, node: Apply, name: str) -> Kernel:
    """The loop kernel of an ``Elemwise`` node (see the module's docstring).

    A node that computes a transcendental function NumPy has a vectorised
    loop for gets the blocked kernel of :mod:`~symlab.compile.numba.kernels_blocked`.
    """
    op, node = numpy_equivalent_node(op, node)
    if uses_loops(node):
        return blocked_kernel(op, node, name)
    ins, outs = node.inputs, node.outputs
    for v in [*ins, *outs]:
        check_dtype(v.type.dtype, str(op))
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
        lines.append(f"    return {returned(len(outs))}")
        return Kernel(name, with_helpers(lines, helpers))

    # -- fast path: every input full-shape or a single broadcast element, all contiguous. A vector needs
    # none (its loop is already flat), unless it gets the parallel loop
    kinds = input_kinds(node)
    fast = "partial" not in kinds and not destroyed and (nd > 1 or worth_parallel(op))
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
        parallel = worth_parallel(op)
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
    lines.append(f"    return {returned(len(outs))}")
    return Kernel(name, with_helpers(lines, helpers), jit_options={"parallel": True} if parallel else {})


__all__ = [
    "elemwise_kernel",
    "kernel_for",
    "numpy_equivalent",
    "numpy_equivalent_node",
    "scalar_body",
]
