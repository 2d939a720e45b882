"""The Numba kernel of an ``OpFromGraph`` node: its inner graph's kernels, called from one function.

The kernel of a node is one function that calls the kernels of the inner nodes in the inner
graph's order, each written as a helper (a top-level ``_shared_ofg_<hash>`` function, so the
graph module compiles it once and every ``OpFromGraph`` that needs the same inner kernel shares
it). A helper's name and its globals' names are made from a hash of its source and globals, so
the source of the kernel depends only on the inner computation: equal ops have equal kernels, and
the disk cache finds them in a new process. Nested ``OpFromGraph`` nodes nest the same way.

The inner graph is the op's (compiling a function rewrites it first: the rule ``ofg_inner_graph``).
Inner constants are written into the source as globals (an array by its bytes); a constant over
:data:`MAX_EMBEDDED_CONSTANT` elements, or an inner op without a kernel, makes the whole node fall
back to its ``perform`` (the linker warns, saying why, and ``compile_info.fallback_ops`` names it).
An output that would share memory with an input or a constant is copied (the op has no ``view_map``).

>>> import symlab.tensor as st
>>> from symlab.compile.builders import OpFromGraph
>>> from symlab.compile.numba.kernels import kernel_for
>>> x, y = st.dvectors("x", "y")
>>> op = OpFromGraph([x, y], [st.exp(x) + y])
>>> kernel = kernel_for(op(x, y).owner, "k0")
>>> print(kernel.source.split("def k0")[-1])  # doctest: +ELLIPSIS
(a0, a1):
    v0 = _shared_ofg_...(a0)
    v1 = _shared_ofg_...(v0, a1)
    return v1
<BLANKLINE>
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import numpy as np

from symlab.compile.builders import OpFromGraph
from symlab.compile.linker_numpy import outputs_to_copy
from symlab.compile.numba.kernel_source import _split_shared
from symlab.compile.numba.kernels import Kernel, NoKernel, RunsOnNumpy, kernel_for, private_copies, register_kernel
from symlab.graph.basic import Apply, Constant, Variable
from symlab.tensor.type import TensorType

#: An inner constant with more elements than this is not written into the source (the node runs ``perform``).
MAX_EMBEDDED_CONSTANT = 100_000


def constant_source(data: Any) -> str:
    """Python source that rebuilds ``data`` exactly (an array from its bytes, a NumPy scalar from its bits).

    >>> import numpy as np
    >>> value = np.array([[0.1, 2.0]], dtype="float32")
    >>> np.array_equal(eval(constant_source(value)), value), eval(constant_source(value)).dtype
    (True, dtype('float32'))
    >>> eval(constant_source(np.array(3.0)))  # a 0-d array stays 0-d
    array(3.)
    """
    if isinstance(data, np.ndarray):
        if data.size > MAX_EMBEDDED_CONSTANT:
            raise NoKernel(f"an inner constant of {data.size} elements is too large to embed (> {MAX_EMBEDDED_CONSTANT})")
        if data.dtype.kind not in "biufc":
            raise NoKernel(f"an inner constant of dtype {data.dtype} cannot enter Numba code")
        arr = np.array(data, order="C")  # (ascontiguousarray would make a 0-d array 1-d)
        return (f"np.frombuffer(bytes.fromhex({arr.tobytes().hex()!r}), dtype={arr.dtype.str!r})"
                f".reshape({tuple(arr.shape)!r}).copy()")
    if isinstance(data, np.generic):
        return f"np.frombuffer(bytes.fromhex({data.tobytes().hex()!r}), dtype={data.dtype.str!r})[0]"
    if isinstance(data, bool | int | float) or data is None:
        return repr(data)
    raise NoKernel(f"an inner constant of type {type(data).__name__} cannot be written into Numba code")


def _helper(node: Apply) -> tuple[str, str, dict[str, str]]:
    """The kernel of an inner node as a helper: (its name, its source, its globals), named by a hash."""
    provisional = "_ofg_inner_kernel_"
    kernel = kernel_for(node, provisional)  # NoKernel goes up: the whole OpFromGraph node runs perform
    if private_copies(node):  # only a graph's runner makes the copy a kernel advances (a draw that is not inplace)
        raise RunsOnNumpy(f"{node.op} draws from a copy of its generator, which compiled code cannot make")
    ident = repr((kernel.source, sorted(kernel.globals.items())))
    name = "_shared_ofg_" + hashlib.sha256(ident.encode()).hexdigest()[:16]
    source = kernel.source.replace(provisional, name)
    globals_: dict[str, str] = {}
    for gname, value in kernel.globals.items():
        new = f"{name}_g{gname if gname.startswith('_') else '_' + gname}"
        source = re.sub(rf"\b{re.escape(gname)}\b", new, source)
        globals_[new] = value
    return name, source, globals_


def inner_calls(
    nodes: list[Apply],
    helper: Any,
    describe: Any,
    ref: Any,
    refs: dict[Variable, str],
    blocks: dict[str, str],
    globals_: dict[str, str],
) -> list[str]:
    """The source lines calling each inner node's kernel in turn, ``v0, v1 = helper(a0, a1)``.

    ``helper(node)`` gives the node's kernel as ``(name, source, globals)`` (:func:`_helper`); its shared
    blocks go into ``blocks`` and its globals into ``globals_``; ``ref(variable)`` names an argument, and
    each output's name is written into ``refs``. ``describe(node)`` says which inner node it is when its
    kernel is missing or runs on NumPy (the error then names it). An ``OpFromGraph``'s kernel and a scan's
    loop call their inner graphs this way.
    """
    lines: list[str] = []
    counter = 0
    for inner in nodes:
        try:
            hname, source, hglobals = helper(inner)
        except RunsOnNumpy as err:
            raise RunsOnNumpy(f"{describe(inner)} runs on NumPy ({err})") from None
        except NoKernel as err:
            raise NoKernel(f"{describe(inner)} has no Numba kernel ({err})") from None
        rest, shared = _split_shared(source)
        for bname, block in shared:
            blocks.setdefault(bname, block)
        if rest.strip():
            blocks.setdefault(hname + " rest", rest.strip("\n") + "\n")
        globals_.update(hglobals)
        args = ", ".join(ref(v) for v in inner.inputs)
        outs = []
        for out in inner.outputs:
            refs[out] = f"v{counter}"
            outs.append(refs[out])
            counter += 1
        lines.append(f"{', '.join(outs)} = {hname}({args})")
    return lines


@register_kernel(OpFromGraph)
def ofg_kernel(op: OpFromGraph, node: Apply, name: str) -> Kernel:
    """The kernel of a node of ``op`` (see the module's docstring)."""
    fg = op.fgraph
    refs: dict[Variable, str] = {v: f"a{k}" for k, v in enumerate(fg.inputs)}
    globals_: dict[str, str] = {}
    blocks: dict[str, str] = {}
    body: list[str] = []

    def ref(v: Variable) -> str:
        got = refs.get(v)
        if got is None:
            if not isinstance(v, Constant):
                raise NoKernel(f"the inner graph of {op} holds a free variable {v}")
            if v.data is None:
                return "None"
            got = f"_ofg_const{len(globals_)}"
            globals_[got] = constant_source(v.data)
            refs[v] = got
        return got

    body += inner_calls(fg.toposort(), _helper, lambda inner: f"inner op {inner.op} of {op}", ref, refs, blocks,
                        globals_)
    copied = set(outputs_to_copy(fg))
    results = []
    for k, out in enumerate(fg.outputs):
        r = ref(out)
        if k in copied and isinstance(out.type, TensorType):
            r = f"np.copy({r})" if out.type.ndim else f"np.asarray({r}).copy()"
        results.append(r)
    ret = results[0] if len(results) == 1 else "(" + ", ".join(results) + ("," if len(results) == 1 else "") + ")"
    args = ", ".join(f"a{k}" for k in range(len(fg.inputs)))
    main = f"def {name}({args}):\n" + "".join(f"    {line}\n" for line in body) + f"    return {ret}\n"
    return Kernel(name, "\n\n".join([*blocks.values(), main]), dict(sorted(globals_.items())))


__all__ = ["MAX_EMBEDDED_CONSTANT", "constant_source", "inner_calls", "ofg_kernel"]
