r"""Helpers that write kernel source, shared by the kernel families (``kernels_*.py``).

Each kernel family generates the Python source of its Numba kernels in its
own module; what several of them write the same way is here: the dtypes
Numba handles and their source, literals, messages, indexes, and the
prologue and parallel policy of the two ``Elemwise`` families (the plain
loops of :mod:`~symlab.compile.numba.kernels_elemwise` and the blocked ones of
:mod:`~symlab.compile.numba.kernels_blocked`). The source of a NumPy scalar
type is :func:`symlab.scalar.type.np_type_source` (``Composite`` writes it too).

>>> from symlab.graph.basic import Constant
>>> from symlab.scalar import float64
>>> dtype_src("float32"), literal(Constant(float64, float("-inf"))), returned(2)
('np.float32', 'np.float64(-math.inf)', '(out0, out1)')
>>> index_tuple(["i"]), index_tuple([]), message("dot", "inner dimensions do not match")
('i,', '()', "'dot: inner dimensions do not match'")
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from symlab.compile.numba.kernels import NoKernel
from symlab.graph.basic import Apply, Constant
from symlab.scalar.basic import Cast
from symlab.scalar.composite import Composite
from symlab.scalar.type import all_dtypes, np_type_source

#: The dtypes the Numba kernels handle (every symlab dtype but float16, which Numba lacks).
NUMBA_DTYPES: tuple[str, ...] = tuple(d for d in all_dtypes if d != "float16")
#: Number of elements from which an expensive fused loop runs in parallel (both ``Elemwise`` families).
PARALLEL_MIN_SIZE = 200_000


# -- dtypes ---------------------------------------------------------------------------------------------------------------
def dtype_src(dtype: str) -> str:
    """The source of the NumPy scalar type of ``dtype`` (:class:`NoKernel` for one Numba lacks).

    >>> dtype_src("float32"), dtype_src("bool")
    ('np.float32', 'np.bool_')
    """
    name = np.dtype(dtype).name
    if name not in NUMBA_DTYPES:
        raise NoKernel(f"no Numba kernel for dtype {name}")
    return np_type_source(name)


def check_dtypes(node: Apply) -> None:
    """Raise :class:`NoKernel` if an input or output of ``node`` has a dtype Numba cannot handle."""
    for v in (*node.inputs, *node.outputs):
        dtype = getattr(v.type, "dtype", None)
        if dtype is None:
            raise NoKernel(f"{node.op}: non-tensor variable {v}")
        dtype_src(dtype)


def check_dtype(dtype: str, what: str) -> None:
    """Raise :class:`NoKernel` naming ``what`` unless ``dtype`` is a bool, an integer, float32 or float64 one.

    >>> check_dtype("complex128", "exp")
    Traceback (most recent call last):
    ...
    symlab.compile.numba.kernels.NoKernel: exp: dtype complex128 is not supported by the Numba kernels
    """
    if np.dtype(dtype).kind not in "biuf" or dtype == "float16":
        raise NoKernel(f"{what}: dtype {dtype} is not supported by the Numba kernels")


# -- expressions and statements ---------------------------------------------------------------------------------------------
def literal(c: Constant) -> str:
    """The source of constant ``c`` as a NumPy scalar of its dtype (``math.inf``, ``math.nan`` for those)."""
    value = np.asarray(c.data).item()
    if isinstance(value, float) and not math.isfinite(value):
        text = "math.nan" if math.isnan(value) else ("math.inf" if value > 0 else "-math.inf")
    else:
        text = repr(value)
    return f"{np_type_source(c.type.dtype)}({text})"


def int_src(name: str) -> str:
    """Source reading the integer scalar input ``name`` (a 0-d array or a number) as an int64."""
    return f"np.int64(np.asarray({name}).item())"


def message(op: Any, text: str) -> str:
    """A Python string literal for an error message that names ``op``."""
    return repr(f"{op}: {text}")


def index_tuple(exprs: list[str]) -> str:
    """``a, b`` for an index of several entries, ``()`` for none (0-d arrays)."""
    if not exprs:
        return "()"
    return ", ".join(exprs) + ("," if len(exprs) == 1 else "")


def indent(lines: list[str], depth: int) -> list[str]:
    """``lines`` indented by ``depth`` levels of four spaces."""
    return ["    " * depth + line for line in lines]


def returned(n: int) -> str:
    """What a kernel with ``n`` outputs ``out0, out1...`` returns: ``out0``, or a tuple of them."""
    return "out0" if n == 1 else "(" + ", ".join(f"out{k}" for k in range(n)) + ")"


# -- the two Elemwise families ----------------------------------------------------------------------------------------------
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


def sizes_and_outputs(op: Any, node: Apply) -> tuple[list[str], list[str]]:
    """Kernel lines setting the sizes ``n0, n1...`` and the outputs ``out0...`` of an ``Elemwise`` node ``op``,
    and the size of each dimension.

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
            text = (
                f"{op}: input shapes do not match in dimension {d}; a size-1 dimension broadcasts only when its "
                "static shape is 1 (use specify_shape or a broadcastable type)"
            )
            lines.append(f"        raise ValueError({text!r})")
        sizes.append(f"n{d}")
    shape = "()" if nd == 0 else "(" + ", ".join(sizes) + ",)"
    destroyed = dict(op.inplace_pattern)
    for k, o in enumerate(outs):
        if k in destroyed:
            lines.append(f"    out{k} = a{destroyed[k]}")
        else:
            lines.append(f"    out{k} = np.empty({shape}, {np_type_source(o.type.dtype)})")
    return lines, sizes


def worth_parallel(op: Any) -> bool:
    """Whether the loop of ``Elemwise`` ``op`` pays for ``parallel=True``: one output, at least three scalar
    operations, one of them ``expensive`` (its declaration says so)."""
    scalar_op = op.scalar_op
    if scalar_op.nout != 1:  # a multi-output parfor compiles slowly (tens of seconds)
        return False
    ops = [n.op for n in scalar_op.nodes] if isinstance(scalar_op, Composite) else [scalar_op]
    return any(o.expensive for o in ops if not isinstance(o, Cast)) and len(ops) >= 3


__all__ = [
    "NUMBA_DTYPES",
    "PARALLEL_MIN_SIZE",
    "check_dtype",
    "check_dtypes",
    "dtype_src",
    "index_tuple",
    "indent",
    "input_kinds",
    "int_src",
    "literal",
    "message",
    "returned",
    "sizes_and_outputs",
    "worth_parallel",
]
