"""One node compiled alone: its kernel as a callable (DebugMode's check, ``symlab.formats.to_dask``'s tasks).

:func:`compile_node` generates a module for the node alone
(:func:`~symlab.compile.numba.graph_source.generate_module`) and loads it through the disk cache
(:func:`~symlab.compile.numba.loading.load_compiled`); a very large fused node runs on the register
machine, as in a graph. Compiled functions are kept per (op, input types).

>>> import numpy as np
>>> import symlab.tensor as st
>>> x = st.dvector("x")
>>> run = compile_node(st.exp(x).owner)
>>> np.allclose(run(np.zeros(2))[0], 1.0)
True
"""

from __future__ import annotations

from typing import Any

from symlab.compile.numba.graph_source import generate_module
from symlab.compile.numba.kernels import kernel_for
from symlab.compile.numba.loading import load_compiled, numba_signature
from symlab.compile.numba.runner import private_copy
from symlab.graph.basic import Apply, Constant

_standalone: dict[Any, Any] = {}


def compile_node(node: Apply) -> Any:
    """A callable running ``node``'s kernel alone: ``fn(*input_values) -> list of outputs``.

    Raises :class:`~symlab.compile.numba.kernels.NoKernel` when the op has none. Compiled functions are
    kept per (op, input types) and go through the disk cache.
    """
    key = (node.op, tuple(v.type for v in node.inputs), tuple(isinstance(v, Constant) and v.data is None for v in node.inputs))
    got = _standalone.get(key)
    if got is not None:
        return got
    from symlab.compile.numba.elemwise_vm import load_vm, vm_callable, vm_program

    program = vm_program(node)
    if program is not None:  # a very large fused node runs on the register machine, as in a graph
        machine = vm_callable(node, program, load_vm(program.dtype, program.ops))
        _standalone[key] = machine
        return machine
    kernel_for(node, "_probe_")  # raises NoKernel
    inputs = [v.type() if not (isinstance(v, Constant) and v.data is None) else v for v in node.inputs]
    clone = Apply(node.op, inputs, [o.type() for o in node.outputs])
    args = [v for v in inputs if not isinstance(v, Constant)]
    gen = generate_module([clone], args, clone.outputs)
    types = [v.type for v in gen.slots]
    step = gen.steps[0]
    sig = numba_signature([None] * len(step.args), [types[s] for s in step.args])
    functions, _info = load_compiled(gen, {step.name: sig})
    fn = functions[step.name]
    # A kernel that advances a copy of an input (a draw that is not inplace): the copy is made here, per call.
    copy_of = dict(gen.private_copies)
    position = {s: k for k, s in enumerate(gen.input_slots)}
    copied = [position[copy_of[s]] for s in step.args[len(gen.input_slots):] if s in copy_of]

    def run(*values: Any) -> list[Any]:
        given = [v for v, var in zip(values, node.inputs) if not (isinstance(var, Constant) and var.data is None)]
        return list(fn(*given, *(private_copy(given[k]) for k in copied)))

    _standalone[key] = run
    return run


__all__ = ["compile_node"]
