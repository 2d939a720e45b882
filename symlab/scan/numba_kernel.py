r"""The Numba kernel of a ``Scan`` node: the whole loop, body included, as one compiled function.

The kernel takes the node's inputs (``n_steps``, the sequences, the states' initial windows, the carried
values, the non-sequences) and returns its outputs. It checks the inputs as :meth:`Scan.check_inputs
<symlab.scan.op.Scan.check_inputs>` does, raising the same :class:`~symlab.scan.op.ScanError` with the
same message, before any iteration; then allocates every buffer once (a state's ``window + n_steps``
entries, or a ring of ``info.kept[j]``; a mapped output's ``n_steps`` entries, allocated at iteration 0 when
its entry's shape is known) and runs the loop with no Python in it: each iteration reads the entries it
needs (views of the buffers, a 0-d array for a scalar entry), calls the kernels of the body's nodes (each a
top-level helper named by a hash of its source, as in the ``OpFromGraph`` kernel, so equal loops have equal
source and the disk cache finds them in a new process), and writes the new entries. A while loop
(``as_while``) stops after the first iteration whose condition is true; its outputs are cut to the
iterations run. A state whose new value changes shape is the :class:`ScanError` of ``perform``.

The body is the op's (compiling rewrites it first: ``scan_inner_graph``). A body node whose op has no kernel
makes the whole node fall back to ``perform`` (the linker warns, naming the inner op). Random draws in the body
run natively (:mod:`~symlab.compile.numba.kernels_random`: NumPy's bits) when each carried generator goes
through one chain of draws: the kernel then advances a private copy of it, which the runner makes before the
call (:func:`scan_private_copies`); otherwise, or for a draw with no native kernel, the node runs on NumPy by
design (``RunsOnNumpy``: ``compile_info.numpy_ops`` names the reason). An error raised by a body kernel cannot
name its iteration from compiled code: the function re-runs the failing call on the NumPy tier, whose notes
name the body's node and the iteration (``Function._locate_on_numpy``).

>>> import symlab.tensor as st
>>> from symlab.scan import scan
>>> from symlab.compile.numba.kernels import kernel_for
>>> x = st.dvector("x")
>>> total, _ = scan(lambda v, acc: acc + v, sequences=x, outputs_info=st.constant(0.0))
>>> print(kernel_for(total.owner.inputs[0].owner, "k0").source.split("def k0")[-1])  # doctest: +ELLIPSIS
(n_in, q0, i0):
    n_steps = np.int64(n_in[()])
    if n_steps < 0:
    ...
    for t in range(n_steps):
        a0 = np.asarray(q0[t])
        a1 = np.asarray(b0[t])
        v0 = _shared_ofg_...(a1, a0)
        b0[t + 1] = v0[()]
    steps = n_steps
    return b0[0:1 + steps]
<BLANKLINE>
"""

from __future__ import annotations

from symlab.compile.linker_numpy import outputs_to_copy
from symlab.compile.numba.codegen import dtype_src
from symlab.compile.numba.kernel_source import _split_shared
from symlab.compile.numba.kernels import Kernel, NoKernel, RunsOnNumpy, register_kernel, register_private_copies
from symlab.compile.numba.kernels_inner_graph import _helper, constant_source, inner_calls
from symlab.graph.basic import Apply, Constant, Variable
from symlab.scan.op import Scan
from symlab.tensor.random.op import RandomVariable
from symlab.tensor.type import TensorType

#: The last ``keep`` of the ``total`` entries written into the ring ``buf`` (entry ``i`` at ``i % size``), in order.
RING_HELPER = '''def _shared_scan_ring_tail(buf, size, total, keep):
    out = np.empty((keep,) + buf.shape[1:], buf.dtype)
    for i in range(keep):
        out[i] = buf[(total - keep + i) % size]
    return out
'''

_ERROR_GLOBAL = "__import__('symlab.scan.op', fromlist=['ScanError']).ScanError"


def _shape_str(expr: str, ndim: int, start: int = 0) -> str:
    """Numba source of the string ``repr(expr[start:])`` (a shape tuple, written as Python writes it)."""
    dims = [f"str({expr}[{d}])" for d in range(start, ndim)]
    if not dims:
        return "'()'"
    if len(dims) == 1:
        return f"'(' + {dims[0]} + ',)'"
    return "'(' + " + " + ', ' + ".join(dims) + " + ')'"


def _entry_read(array: str, index: str, entry_ndim: int) -> str:
    """Source reading entry ``index`` of ``array``: a view, or for a scalar entry a 0-d array (the body's kernels
    take a scalar as a 0-d array; a 0-d view by ``reshape`` needs a contiguous array, which a reversed sequence
    is not)."""
    return f"np.asarray({array}[{index}])" if entry_ndim == 0 else f"{array}[{index}]"


def _position(t: str, window: int, size: str, ring: bool) -> str:
    """Source of the buffer position of entry ``t + window`` (wrapped around a ring)."""
    offset = f"{t} + {window}" if window else t
    return f"({offset}) % {size}" if ring else offset


@register_kernel(Scan)
def scan_kernel(op: Scan, node: Apply, name: str) -> Kernel:
    """The kernel of a node of ``op`` (see the module's docstring)."""
    info, fg = op.info, op.fgraph
    where = op.where
    in_place = _draws_in_place(op, node)
    seq_args = [f"q{k}" for k in range(info.n_seqs)]
    init_args = [f"i{j}" for j in range(info.n_states)]
    carried_args = [f"c{k}" for k in range(info.n_untraced)]
    non_seq_args = [f"p{k}" for k in range(info.n_non_seqs)]
    args = ["n_in", *seq_args, *init_args, *carried_args, *non_seq_args]
    globals_: dict[str, str] = {"_scan_error": _ERROR_GLOBAL}
    blocks: dict[str, str] = {}
    for bname, block in _split_shared(RING_HELPER)[1]:
        blocks[bname] = block

    def q(text: str) -> str:
        return repr(text)

    head = ["n_steps = np.int64(n_in[()])",
            "if n_steps < 0:",
            f"    raise _scan_error({q(where + ': n_steps must be >= 0, received ')} + str(n_steps))"]
    for k, arg in enumerate(seq_args):
        label = op._in_label(k)
        head += [f"if {arg}.shape[0] < n_steps:",
                 f"    raise _scan_error({q(f'{where}: sequence {k} ({label}) has ')} + str({arg}.shape[0]) + "
                 f"{q(' entries, fewer than the ')} + str(n_steps) + "
                 f"{q(' iterations asked for (n_steps); give a longer sequence or fewer steps')})"]
    for j, arg in enumerate(init_args):
        w = info.window(j)
        head += [f"if {arg}.shape[0] < {w}:",
                 f"    raise _scan_error({q(f'{where}: state {j} ({op._out_label(j)}) reads taps {list(info.state_taps[j])}, so its initial value needs {w} entries along its first dimension, received ')} + str({arg}.shape[0]))"]
    # -- buffers ------------------------------------------------------------------------------------------
    for j, arg in enumerate(init_args):
        w, out_type = info.window(j), fg.outputs[j].type
        kept = info.kept[j]
        head.append(f"z{j} = {w} + n_steps" if kept is None else f"z{j} = min({kept}, {w} + n_steps)")
        shape = ", ".join([f"z{j}"] + [f"{arg}.shape[{d}]" for d in range(1, out_type.ndim + 1)])
        head += [f"b{j} = np.empty(({shape},), {dtype_src(out_type.dtype)})",
                 f"for i in range({w}):",
                 f"    b{j}[i % z{j}] = {arg}[{arg}.shape[0] - {w} + i]"]
    for k in range(info.n_mapped):
        out_type = fg.outputs[info.n_states + k].type
        kept = info.kept[info.n_states + k]
        head.append(f"y{k} = n_steps" if kept is None else f"y{k} = min({kept}, n_steps)")
        empty = ", ".join(["0"] + [str(0 if d is None else d) for d in out_type.shape])
        head.append(f"m{k} = np.empty(({empty},), {dtype_src(out_type.dtype)})")
    # -- the body -----------------------------------------------------------------------------------------
    refs: dict[Variable, str] = {}
    s = info.inner_slices()
    loop: list[str] = []
    for k, var in enumerate(fg.inputs[s["seqs"]]):
        refs[var] = f"a{k}"
        loop.append(f"a{k} = {_entry_read(seq_args[k], 't', var.type.ndim)}")
    pos = s["states"].start
    for j, taps in enumerate(info.state_taps):
        for tap in taps:
            var = fg.inputs[pos]
            refs[var] = f"a{pos}"
            index = _position("t", info.window(j) + tap, f"z{j}", info.kept[j] is not None)
            loop.append(f"a{pos} = {_entry_read(f'b{j}', index, var.type.ndim)}")
            pos += 1
    for k, var in enumerate(fg.inputs[s["untraced"]]):
        refs[var] = carried_args[k]
    for k, var in enumerate(fg.inputs[s["non_seqs"]]):
        refs[var] = non_seq_args[k]

    def ref(v: Variable) -> str:
        got = refs.get(v)
        if got is None:
            if not isinstance(v, Constant):
                raise NoKernel(f"the body of {where} holds a free variable {v}")
            if v.data is None:  # a draw's size when it has none
                return "None"
            got = refs[v] = f"_scan_const{len(globals_)}"
            globals_[got] = constant_source(v.data)
        return got

    loop += inner_calls(fg.toposort(), lambda inner: _helper(_inplace_draw(inner) if inner in in_place else inner),
                        lambda inner: f"{where}: its body's op {inner.op}", ref, refs, blocks, globals_)
    # -- storing the new entries ---------------------------------------------------------------------------
    for j in range(info.n_states):
        value, ndim = ref(fg.outputs[j]), fg.outputs[j].type.ndim
        at = _position("t", info.window(j), f"z{j}", info.kept[j] is not None)
        if ndim:
            expected = "(" + "".join(f"b{j}.shape[{d}], " for d in range(1, ndim + 1)) + ")"
            loop += [f"if {value}.shape != {expected}:",
                     f"    raise _scan_error({q(f'{where}: at iteration ')} + str(t) + "
                     f"{q(', the body' + chr(39) + f's new value of state {j} ({op._out_label(j)}) has shape ')} + "
                     f"{_shape_str(value + '.shape', ndim)} + {q(', its initial value has shape ')} + "
                     f"{_shape_str(f'b{j}.shape', ndim + 1, 1)} + "
                     f"{q('; a state keeps its shape from one iteration to the next')})",
                     f"b{j}[{at}] = {value}"]
        else:
            loop.append(f"b{j}[{at}] = {value}[()]")
    for k in range(info.n_mapped):
        out = fg.outputs[info.n_states + k]
        value, ndim = ref(out), out.type.ndim
        index = info.n_states + k
        loop.append("if t == 0:")
        shape = ", ".join([f"y{k}"] + [f"{value}.shape[{d}]" for d in range(ndim)])
        loop.append(f"    m{k} = np.empty(({shape},), {dtype_src(out.type.dtype)})")
        if ndim:
            loop += [f"elif {value}.shape != m{k}.shape[1:]:",
                     f"    raise _scan_error({q(f'{where}: at iteration ')} + str(t) + "
                     f"{q(f', output {index} ({op._out_label(index)}) has shape ')} + {_shape_str(value + '.shape', ndim)} + "
                     f"{q(', at iteration 0 it had ')} + {_shape_str(f'm{k}.shape', ndim + 1, 1)} + "
                     f"{q('; every iteration' + chr(39) + 's entry must have the same shape to be stacked')})"]
        at = _position("t", 0, f"y{k}", info.kept[info.n_states + k] is not None)
        loop.append(f"m{k}[{at}] = {value}" + ("" if ndim else "[()]"))
    copied = set(outputs_to_copy(fg))
    first_carried = info.n_states + info.n_mapped
    for k in range(info.n_untraced):
        out = fg.outputs[first_carried + k]
        value = ref(out)
        aliased = first_carried + k in copied and isinstance(out.type, TensorType)  # a generator is the loop's own
        loop.append(f"{carried_args[k]} = {value}.copy()" if aliased else f"{carried_args[k]} = {value}")
    tail = ["steps = n_steps"]
    if info.as_while:
        loop += [f"if {ref(fg.outputs[-1])}[()] != 0:", "    steps = t + 1", "    break"]
        head.append("steps = n_steps")
        tail = []
    # -- the outputs -----------------------------------------------------------------------------------------
    results = []
    for j in range(info.n_states):
        w, kept = info.window(j), info.kept[j]
        if kept is None:
            results.append(f"b{j}[0:{w} + steps]")
        else:
            results.append(f"_shared_scan_ring_tail(b{j}, z{j}, {w} + steps, min({kept}, {w} + steps))")
    for k in range(info.n_mapped):
        kept = info.kept[info.n_states + k]
        if kept is None:
            results.append(f"m{k}[0:steps]")
        else:
            results.append(f"_shared_scan_ring_tail(m{k}, y{k}, steps, min({kept}, steps))")
    carried_types = [v.type for v in fg.inputs[s["untraced"]]]
    results += [f"{c}.copy()" if isinstance(t, TensorType) else c for c, t in zip(carried_args, carried_types)]
    ret = results[0] if len(results) == 1 else "(" + ", ".join(results) + ")"
    lines = [*head, "for t in range(n_steps):", *(f"    {line}" for line in loop), *tail, f"return {ret}"]
    main = f"def {name}({', '.join(args)}):\n" + "".join(f"    {line}\n" for line in lines)
    return Kernel(name, "\n\n".join([*blocks.values(), main]), dict(sorted(globals_.items())))


def _carried_generators(op: Scan) -> list[int]:
    """The positions, among the carried values, of those that are not tensors (random generators)."""
    carried = op.fgraph.inputs[op.info.inner_slices()["untraced"]]
    return [k for k, var in enumerate(carried) if not isinstance(var.type, TensorType)]


def _draws_in_place(op: Scan, node: Apply) -> set[Apply]:
    """The body's draws that may advance their generator in place; ``RunsOnNumpy`` if a carried value forbids it.

    On NumPy, a draw that is not inplace copies its generator, and the body returns the copy it advanced. In
    compiled code the kernel advances, in place, a private copy of the carried generator that the runner makes
    before the call (:func:`scan_private_copies`). Both give the same numbers when each iteration's generator
    goes through one chain of draws, from the carried input to the carried output, each state read by one draw
    only: the old state is never read again. Anything else runs on NumPy, saying why.
    """
    info, fg = op.info, op.fgraph
    inner = fg.inputs[info.inner_slices()["untraced"]]
    first_out = info.n_states + info.n_mapped
    first_in = info.outer_slices()["untraced"].start
    draws: set[Apply] = set()
    for k in _carried_generators(op):
        var, outer = inner[k], node.inputs[first_in + k]
        if outer.owner is not None:
            raise RunsOnNumpy(f"{op.where}: its carried generator {outer} is computed by {outer.owner.op}; the compiled "
                              "loop advances a copy of a graph input or a constant only")
        v = var
        while True:
            users = fg.clients.get(v, [])
            if users == [("output", first_out + k)]:
                break
            client = users[0][0] if len(users) == 1 else None
            if not (isinstance(client, Apply) and isinstance(client.op, RandomVariable) and users[0][1] == 0):
                raise RunsOnNumpy(f"{op.where}: its body uses the carried generator {var} otherwise than in one chain "
                                  "of draws ending in its next value; only NumPy can copy a generator at each iteration")
            draws.add(client)
            v = client.outputs[0]
    return draws


def _inplace_draw(node: Apply) -> Apply:
    """``node`` (a draw) made inplace: its kernel advances the generator it is given (see :func:`_draws_in_place`)."""
    return node.op.clone_with(inplace=True).make_node(*node.inputs)


@register_private_copies(Scan)
def scan_private_copies(node: Apply) -> tuple[int, ...]:
    """The node's carried generators: its kernel advances a private copy of each, made before the call."""
    first = node.op.info.outer_slices()["untraced"].start
    return tuple(first + k for k in _carried_generators(node.op))


__all__ = ["scan_kernel", "scan_private_copies"]
