r"""Elemwise kernels that call NumPy's vectorised loops, one cache-sized block at a time.

An ``Elemwise`` whose scalar op computes an ``exp``, ``log1p``, ``sin``... on
a float dtype gets this kernel instead of the plain fused loop of
:mod:`~symlab.compile.numba.kernels_elemwise`. The output is computed in
blocks of :data:`BLOCK` elements. Within a block the scalar graph runs in
*stages*:

* an **inline stage** is one loop over the block computing as many scalar
  nodes as are ready, in registers, storing only values that a later stage
  reads into small scratch rows (``s_float64[k, i]``);
* a **loop stage** calls NumPy's own inner loop of one transcendental
  function (:mod:`~symlab.compile.numba.ufunc_loops`) on a whole block row.

So a fused chain still makes no full-size temporaries (the scratch rows are
a few kilobytes and stay in the CPU cache), each transcendental function
runs at NumPy's vectorised speed, and the result has the bits NumPy (and
symlab's NUMPY mode) computes on contiguous data, whatever the layout of the
inputs: the one block function always runs on unit-stride rows. When every
input has the full shape or is a single broadcast element, the *flat* path
passes the flattened arrays (``flat_input``: a view when Numba knows the
array is C-contiguous, a C-order copy otherwise) and a single element as a
number; for other broadcasting the *row* path walks the last dimension,
copying each block of the inputs into contiguous rows first and the results
out after. NumPy itself may differ in
the last bit on a negative-stride input, where its loop takes another path.

Scheduling is greedy: each inline stage takes every scalar node whose inputs
are ready, then every ready transcendental node gets its loop stage. On
``exp(-x**2)*sin(y) + log1p(x*x)*0.5`` that gives two passes over a block and
three loop calls. A scratch row is reused once its value has been read for
the last time. On the flat path from :data:`PARALLEL_MIN_SIZE` elements on,
chunks of :data:`CHUNK` elements run on all cores (``numba.prange``) for the
kernels the plain loops would run in parallel (one output, at least three
operations): ``parallel=True`` costs Numba about 0.4 s of compile.

>>> import symlab.tensor as st
>>> from symlab.compile.numba.kernels import kernel_for
>>> x = st.dvector("x")
>>> print(kernel_for(st.exp(x).owner, "k").source)
def k_block(lo, m, v0, o0):
    p0 = o0[lo:lo + m]
    w0 = v0[lo:lo + m]
    ufunc_loops.exp_float64(w0, p0)
<BLANKLINE>
def k(a0):
    n0 = a0.shape[0]
    out0 = np.empty((n0,), np.float64)
    f0 = flat_input(a0)
    g0 = out0
    size = g0.size
    for lo in range(0, size, 1024):
        k_block(lo, min(1024, size - lo), f0, g0)
    return out0
<BLANKLINE>
"""

from __future__ import annotations

from dataclasses import dataclass, field

from symlab.compile.numba.codegen import (
    PARALLEL_MIN_SIZE,
    check_dtype,
    input_kinds,
    literal,
    returned,
    sizes_and_outputs,
    worth_parallel,
)
from symlab.compile.numba.kernels import Kernel, NoKernel
from symlab.compile.numba.scalar_rules import scalar_expression, with_helpers
from symlab.compile.numba.ufunc_table import AVAILABLE
from symlab.graph.basic import Apply, Constant
from symlab.scalar.basic import ScalarOp
from symlab.scalar.composite import Composite
from symlab.scalar.type import np_type_source
from symlab.tensor.elemwise import Elemwise

#: Elements per block: scratch rows of 8 KB for float64.
BLOCK = 1024
#: Elements per parallel work item.
CHUNK = 16 * BLOCK

Ref = tuple  # ("in", k) | ("const", Constant) | ("t", j)


@dataclass
class _Node:
    """One scalar node of the kernel: ``output = op(*inputs)``."""

    op: ScalarOp
    inputs: list[Ref]
    output: Ref
    in_dtypes: list[str]
    dtype: str
    loop: bool


@dataclass
class _Stage:
    """An inline stage (several nodes, one loop over the block) or a loop stage (one node)."""

    inline: bool
    nodes: list[_Node] = field(default_factory=list)


def _is_loop(sop: ScalarOp, in_dtypes: list[str], dtype: str) -> bool:
    """Whether NumPy has a loop computing ``sop`` from ``in_dtypes`` to ``dtype`` (one dtype in and out)."""
    return type(sop) is ScalarOp and in_dtypes == [dtype] and (sop.name, dtype) in AVAILABLE  # not a Cast


def _scalar_nodes(op: ScalarOp, node: Apply) -> tuple[list[_Node], list[Ref], dict[Ref, str]]:
    """The scalar nodes of ``op``, its output refs, and the dtype of every ref."""
    dtypes: dict[Ref, str] = {("in", k): v.type.dtype for k, v in enumerate(node.inputs)}
    if not isinstance(op, Composite):
        in_dtypes = [v.type.dtype for v in node.inputs]
        dtype = node.outputs[0].type.dtype
        refs = [("in", k) for k in range(len(node.inputs))]
        dtypes[("t", 0)] = dtype
        return [_Node(op, refs, ("t", 0), in_dtypes, dtype, _is_loop(op, in_dtypes, dtype))], [("t", 0)], dtypes
    names: dict = {v: ("in", k) for k, v in enumerate(op.inputs)}

    def ref(v) -> Ref:  # type: ignore[no-untyped-def]
        if isinstance(v, Constant):
            r = ("const", v)
            dtypes[r] = v.type.dtype
            return r
        return names[v]

    nodes = []
    for j, inner in enumerate(op.nodes):
        out = inner.outputs[0]
        refs = [ref(v) for v in inner.inputs]
        in_dtypes = [v.type.dtype for v in inner.inputs]
        names[out] = ("t", j)
        dtypes[("t", j)] = out.type.dtype
        nodes.append(_Node(inner.op, refs, ("t", j), in_dtypes, out.type.dtype, _is_loop(inner.op, in_dtypes, out.type.dtype)))
    return nodes, [ref(o) for o in op.outputs], dtypes


def uses_loops(node: Apply) -> bool:
    """Whether ``node`` (an ``Elemwise``) gets a blocked kernel: it computes a function NumPy has a loop for."""
    op = node.op
    if not isinstance(op, Elemwise):
        return False
    if not isinstance(op.scalar_op, Composite):
        return _is_loop(op.scalar_op, [v.type.dtype for v in node.inputs], node.outputs[0].type.dtype)
    return any(_is_loop(n.op, [v.type.dtype for v in n.inputs], n.outputs[0].type.dtype) for n in op.scalar_op.nodes)


def _schedule(nodes: list[_Node]) -> list[_Stage]:
    """Stages: all ready inline nodes, then each ready loop node, until every node is placed."""
    ready: set[Ref] = set()
    for n in nodes:
        ready.update(r for r in n.inputs if r[0] != "t")
    remaining = list(nodes)
    stages: list[_Stage] = []
    while remaining:
        stage = _Stage(inline=True)
        progress = True
        while progress:
            progress = False
            for n in list(remaining):
                if not n.loop and all(r in ready for r in n.inputs):
                    stage.nodes.append(n)
                    ready.add(n.output)
                    remaining.remove(n)
                    progress = True
        if stage.nodes:
            stages.append(stage)
        loops = [n for n in remaining if n.loop and all(r in ready for r in n.inputs)]
        for n in loops:
            stages.append(_Stage(inline=False, nodes=[n]))
            ready.add(n.output)
            remaining.remove(n)
    return stages


class _Plan:
    """Where every value lives during a block, and the code of the block function."""

    def __init__(
        self,
        nodes: list[_Node],
        outputs: list[Ref],
        dtypes: dict[Ref, str],
        out_dtypes: list[str],
        broadcast: list[bool],
        inplace: bool,
    ) -> None:
        self.out_dtypes = out_dtypes
        self.n_in = len(broadcast)
        self.broadcast = broadcast
        self.outputs = outputs
        self.helpers: set[str] = set()
        self._views: set[str] = set()  # the views block_source makes (``w0`` of input 0, ``p0`` of output 0)
        self.stages = _schedule(nodes)
        producer: dict[Ref, int] = {}
        for s, stage in enumerate(self.stages):
            for n in stage.nodes:
                producer[n.output] = s
        # A loop reading a constant or a broadcast single element reads a copy made in scratch by a first
        # inline stage. (Rows are always contiguous: NumPy's loops are given unit strides, as NumPy's own
        # iterator mostly gives them; on a negative stride a loop may take another path, with other bits.)
        self.materialized: list[Ref] = []
        for stage in self.stages:
            if not stage.inline:
                r = stage.nodes[0].inputs[0]
                if r[0] != "t" and r not in self.materialized and (r[0] == "const" or broadcast[r[1]]):
                    self.materialized.append(r)
        if self.materialized:
            if not self.stages or not self.stages[0].inline:
                self.stages.insert(0, _Stage(inline=True))
                producer = {k: v + 1 for k, v in producer.items()}
            for r in self.materialized:
                producer[r] = 0
        # Outputs: written where produced, unless the kernel works in place (then everything is written in
        # a final stage, after every read of the destroyed inputs) or the output is not computed here.
        self.direct: dict[Ref, int] = {}  # ref -> output index written directly by its producer
        self.final: list[tuple[int, Ref]] = []
        for k, r in enumerate(outputs):
            if not inplace and r[0] == "t" and r not in self.direct:
                self.direct[r] = k
            else:
                self.final.append((k, r))
        if self.final:
            self.stages.append(_Stage(inline=True))
        end = len(self.stages) - 1
        last_use: dict[Ref, int] = {}
        for s, stage in enumerate(self.stages):
            for n in stage.nodes:
                for r in n.inputs:
                    last_use[r] = s
        for _, r in self.final:
            last_use[r] = end
        # Scratch rows: a value read outside the stage that made it, or the output of a loop, gets one
        # (unless it is written straight into an output row); freed after its last read.
        self.scratch: dict[Ref, tuple[str, int]] = {}
        self.rows: dict[str, int] = {}
        free: dict[str, list[int]] = {}
        dying: dict[int, list[Ref]] = {}
        for r, u in last_use.items():
            dying.setdefault(u, []).append(r)
        for s, stage in enumerate(self.stages):
            for r in dying.get(s, ()):
                if r in self.scratch and producer[r] < s:
                    dtype, row = self.scratch[r]
                    free.setdefault(dtype, []).append(row)
            made = [n.output for n in stage.nodes] + (self.materialized if s == 0 else [])
            for r in made:
                needs = (not stage.inline or last_use.get(r, s) > s) and r not in self.direct
                if needs:
                    dtype = dtypes[r]
                    rows = free.setdefault(dtype, [])
                    if rows:
                        row = rows.pop()
                    else:
                        row = self.rows.get(dtype, 0)
                        self.rows[dtype] = row + 1
                    self.scratch[r] = (dtype, row)

    # -- code --------------------------------------------------------------------------------
    def scratch_names(self) -> list[str]:
        return [f"s_{d}" for d in sorted(self.rows)]

    def block_source(self, name: str) -> str:
        """``def name(lo, m, v0.., o0.., s_<dtype>..)``: compute outputs ``lo:lo+m`` of the rows."""
        args = ["lo", "m", *[f"v{k}" for k in range(self.n_in)], *[f"o{k}" for k in range(len(self.outputs))]]
        args += self.scratch_names()
        self._views.clear()
        body: list[str] = []
        for s, stage in enumerate(self.stages):
            if stage.inline:
                body += self._inline(s, stage)
            else:
                body.append("    " + self._loop(stage.nodes[0]))
        # The block's part of each array it reads or writes, as a view indexed from 0: Numba then knows the
        # index is never negative, and the loops run about twice as fast as on ``v0[lo + i]``.
        views = [f"    {w} = {'v' if w[0] == 'w' else 'o'}{w[1:]}[lo:lo + m]" for w in sorted(self._views)]
        return "\n".join([f"def {name}({', '.join(args)}):", *views, *(body or ["    pass"])]) + "\n"

    def _view(self, kind: str, k: int) -> str:
        """The name of the block's view of input (``kind`` "w") or output ("p") ``k``."""
        self._views.add(f"{kind}{k}")
        return f"{kind}{k}"

    def _slice(self, r: Ref) -> str:
        if r in self.scratch:
            dtype, row = self.scratch[r]
            return f"s_{dtype}[{row}, :m]"
        if r in self.direct:
            return self._view("p", self.direct[r])
        if r[0] == "in" and not self.broadcast[r[1]]:
            return self._view("w", r[1])
        raise NoKernel(f"blocked kernel: no row for {r}")  # pragma: no cover - the plan puts every loop operand in a row

    def _loop(self, n: _Node) -> str:
        return f"ufunc_loops.{n.op.name}_{n.dtype}({self._slice(n.inputs[0])}, {self._slice(n.output)})"

    def _inline(self, s: int, stage: _Stage) -> list[str]:
        local: dict[Ref, str] = {}
        loads: list[str] = []

        def read(r: Ref) -> str:
            if r in local:
                return local[r]
            if r[0] == "const":
                return literal(r[1])
            if r[0] == "in":
                k = r[1]
                name = f"x{k}"
                loads.append(f"{name} = v{k}" if self.broadcast[k] else f"{name} = {self._view('w', k)}[i]")
            elif r in self.scratch:
                dtype, row = self.scratch[r]
                name = f"t{r[1]}"
                loads.append(f"{name} = s_{dtype}[{row}, i]")
            else:
                name = f"t{r[1]}"
                loads.append(f"{name} = {self._view('p', self.direct[r])}[i]")
            local[r] = name
            return name

        body: list[str] = []
        stores: list[str] = []
        for n in stage.nodes:
            expr = scalar_expression(n.op, [read(r) for r in n.inputs], n.in_dtypes, n.dtype, self.helpers)
            name = f"t{n.output[1]}"
            body.append(f"{name} = {expr}")
            local[n.output] = name
            if n.output in self.direct:
                stores.append(f"{self._view('p', self.direct[n.output])}[i] = {name}")
            if n.output in self.scratch:
                dtype, row = self.scratch[n.output]
                stores.append(f"s_{dtype}[{row}, i] = {name}")
        if s == 0:
            for r in self.materialized:
                dtype, row = self.scratch[r]
                stores.append(f"s_{dtype}[{row}, i] = {np_type_source(dtype)}({read(r)})")
        if s == len(self.stages) - 1:
            for k, r in self.final:
                stores.append(f"{self._view('p', k)}[i] = {np_type_source(self.out_dtypes[k])}({read(r)})")
        if not body and not stores:
            return []
        return ["    for i in range(m):"] + [f"        {line}" for line in loads + body + stores]


def blocked_kernel(op: Elemwise, node: Apply, name: str) -> Kernel:
    """The blocked kernel of an ``Elemwise`` node (see the module's docstring)."""
    ins, outs = node.inputs, node.outputs
    for v in [*ins, *outs]:
        check_dtype(v.type.dtype, str(op))
    nd = outs[0].type.ndim
    n_in, n_out = len(ins), len(outs)
    destroyed = dict(op.inplace_pattern)

    # The block function reads rows of contiguous values: on the flat path (every input of the full shape
    # or a single broadcast element), the flattened arrays, a single element as a number; on the row path
    # (inputs broadcast along some dimensions only), rows the kernel copies each block of input into first.
    kinds = input_kinds(node)
    fast = "partial" not in kinds  # also true of every 0-d node
    broadcast = [k == "scalar" for k in kinds] if fast else [False] * n_in
    nodes, out_refs, dtypes = _scalar_nodes(op.scalar_op, node)
    plan = _Plan(nodes, out_refs, dtypes, [o.type.dtype for o in outs], broadcast, bool(destroyed))
    sources = [plan.block_source(f"{name}_block")]
    allocs = [f"s_{d} = np.empty(({plan.rows[d]}, {BLOCK}), {np_type_source(d)})" for d in sorted(plan.rows)]

    a = [f"a{i}" for i in range(n_in)]
    lines = [f"def {name}({', '.join(a)}):"]
    prologue, sizes = sizes_and_outputs(op, node)
    lines += prologue
    flat_args = ", ".join([*[f"f{k}" for k in range(n_in)], *[f"g{k}" for k in range(n_out)], *plan.scratch_names()])
    parallel = nd > 0 and fast and worth_parallel(op)  # parallel=True costs a few tenths of a second of compile

    def span(indent: str, start: str, stop: str, args: str) -> list[str]:
        return [
            f"{indent}for lo in range({start}, {stop}, {BLOCK}):",
            f"{indent}    {name}_block(lo, min({BLOCK}, {stop} - lo), {args})",
        ]

    def flat() -> list[str]:
        # ``flat_input`` is a view of an array Numba knows is C-contiguous and a C-order copy of any other,
        # so this path serves every layout. An output written in place goes into its input's flat array,
        # which is copied back into the input at the end if it was a copy.
        zeros = ", ".join("0" for _ in range(nd)) or "()"
        body = [f"    f{k} = a{k}[{zeros}]" if broadcast[k] else f"    f{k} = flat_input(a{k})" for k in range(n_in)]
        for k in range(n_out):
            flat_out = f"out{k}" if nd == 1 else f"out{k}.reshape(out{k}.size)"  # a fresh output is C-contiguous
            if k in destroyed and broadcast[destroyed[k]]:
                # the input it overwrites holds one element (0-d, or every dimension of size 1), which ``f``
                # holds as a number: computed into one element, stored back after the loop
                body.append(f"    g{k} = np.empty(1, {np_type_source(outs[k].type.dtype)})")
            else:
                body.append(f"    g{k} = f{destroyed[k]}" if k in destroyed else f"    g{k} = {flat_out}")
        body.append("    size = g0.size")
        if parallel:
            body.append(f"    if size >= {PARALLEL_MIN_SIZE}:")
            body.append(f"        for c in numba.prange((size + {CHUNK - 1}) // {CHUNK}):")
            body += [f"            {s}" for s in allocs]
            body += span("            ", f"c * {CHUNK}", f"min(size, (c + 1) * {CHUNK})", flat_args)
            body.append("    else:")
            body += [f"        {s}" for s in allocs]
            body += span("        ", "0", "size", flat_args)
        else:
            body += [f"    {s}" for s in allocs]
            body += span("    ", "0", "size", flat_args)
        for k in destroyed:
            if broadcast[destroyed[k]]:
                body.append(f"    out{k}[{zeros}] = g{k}[0]")
        for k in destroyed if nd > 0 else ():  # a 0-d input is always its own flat view
            body += [f"    if g{k}.ctypes.data != out{k}.ctypes.data:", "        q = 0"]
            for d in range(nd):
                body.append("    " * (d + 2) + f"for j{d} in range(out{k}.shape[{d}]):")
            index = ", ".join(f"j{d}" for d in range(nd))
            body.append("    " * (nd + 2) + f"out{k}[{index}] = g{k}[q]")
            body.append("    " * (nd + 2) + "q += 1")
        return body

    if fast:
        lines += flat()
        lines.append(f"    return {returned(n_out)}")
        options = {"parallel": True} if parallel else {}
        return Kernel(name, with_helpers(sources + ["\n".join(lines)], plan.helpers), jit_options=options)
    # The row path, for inputs broadcast along some dimensions only: the last dimension in blocks; each
    # block of every input is copied into a contiguous row (a broadcast dimension read at index 0),
    # computed, and copied out.
    slots: dict[str, int] = {}
    in_rows, out_rows = [], []
    for v in [*ins, *outs]:
        dtype = v.type.dtype
        slot = slots.get(dtype, 0)
        slots[dtype] = slot + 1
        (in_rows if len(in_rows) < n_in else out_rows).append(f"r_{dtype}[{slot}]")
    outs_args = [f"out{k}" for k in range(n_out)]
    rows = [f"def {name}_rows({', '.join([*a, *outs_args])}):"]
    rows.append("    start = np.intp(0)  # a literal 0 would make Numba compile the block function a second time")
    rows += [f"    r_{d} = np.empty(({count}, {BLOCK}), {np_type_source(d)})" for d, count in sorted(slots.items())]
    rows += [f"    {s}" for s in allocs]
    for d in range(nd - 1):
        rows.append("    " * (d + 1) + f"for j{d} in range(out0.shape[{d}]):")
    indent = "    " * nd
    rows.append(f"{indent}for lo in range(0, out0.shape[{nd - 1}], {BLOCK}):")
    rows.append(f"{indent}    m = min({BLOCK}, out0.shape[{nd - 1}] - lo)")
    rows.append(f"{indent}    for i in range(m):")
    for k, v in enumerate(ins):
        idx = ", ".join("0" if v.type.shape[d] == 1 else f"j{d}" for d in range(nd - 1))
        last = "0" if v.type.shape[-1] == 1 else "lo + i"
        rows.append(f"{indent}        {in_rows[k][:-1]}, i] = a{k}[{idx + ', ' if idx else ''}{last}]")
    rows.append(f"{indent}    {name}_block(start, m, {', '.join([*in_rows, *out_rows, *plan.scratch_names()])})")
    rows.append(f"{indent}    for i in range(m):")
    outer = ", ".join(f"j{d}" for d in range(nd - 1))
    for k in range(n_out):
        rows.append(f"{indent}        out{k}[{outer + ', ' if outer else ''}lo + i] = {out_rows[k][:-1]}, i]")
    sources.append("\n".join(rows) + "\n")
    lines.append(f"    {name}_rows({', '.join([*a, *outs_args])})")
    lines.append(f"    return {returned(n_out)}")
    return Kernel(name, with_helpers(sources + ["\n".join(lines)], plan.helpers))


__all__ = ["BLOCK", "CHUNK", "blocked_kernel", "uses_loops"]
