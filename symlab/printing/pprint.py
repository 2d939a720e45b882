"""``pprint``: a graph as one line of mathematics.

Elementwise operations with an infix symbol print infix and fully
parenthesized, others in function form; reductions show their axes; a
constant broadcast by a ``DimShuffle`` prints as the constant itself:

>>> import symlab.tensor as st
>>> from symlab.printing import pprint
>>> x, y, z = st.dmatrix("x"), st.dmatrix("y"), st.dmatrix("z")
>>> pprint(x + y * z)
'(x + (y * z))'
>>> pprint(st.exp(x * 2).sum(axis=0))
'sum(exp((x * 2)), axis=0)'
>>> pprint(-x)
'(-x)'

An ``ifelse`` prints as a call, an ``OpFromGraph`` by its name:

>>> from symlab.compile.builders import OpFromGraph
>>> from symlab.ifelse import ifelse
>>> a, b = st.dscalars("a", "b")
>>> axpy = OpFromGraph([a, b], [a + 2 * b], name="axpy")
>>> pprint(ifelse(st.lt(a, b), axpy(a, b), st.exp(a)))
'ifelse((a < b), axpy(a, b), exp(a))'

The walk uses an explicit stack, so a graph of any depth prints. The text of
a shared subgraph is repeated at each use; a subexpression longer than
``max_chars`` is shown as ``…`` in its parent, so sharing cannot make the
text grow without bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from symlab.graph.basic import Apply, Constant, Variable

ELLIPSIS = "…"


def pprint(obj: Variable | Sequence[Variable] | Apply, max_chars: int = 10_000) -> str:
    """The infix text of ``obj`` (a Variable; a list of them gives one line each).

    >>> import symlab.tensor as st
    >>> v = st.dvector("v")
    >>> print(pprint([v + 1, (v ** 2).max()]))
    (v + 1)
    max((v ** 2))
    """
    if isinstance(obj, Apply):
        variables = list(obj.outputs)
    elif isinstance(obj, Variable):
        variables = [obj]
    elif isinstance(obj, list | tuple):
        variables = list(obj)
        for k, v in enumerate(variables):
            if not isinstance(v, Variable):
                raise TypeError(f"pprint: element {k} is {type(v).__name__}, expected a Variable")
    else:
        fgraph = getattr(getattr(obj, "maker", None), "fgraph", None)  # a compiled Function
        outputs = getattr(obj if fgraph is None else fgraph, "outputs", None)  # a FunctionGraph
        if not isinstance(outputs, list | tuple) or not all(isinstance(o, Variable) for o in outputs):
            raise TypeError(f"pprint expects a Variable or a list of Variables, received {type(obj).__name__}")
        variables = list(outputs)
    texts = _texts(variables, max_chars)
    return "\n".join(texts[id(v)] for v in variables)


def _texts(roots: list[Variable], max_chars: int) -> dict[int, str]:
    """The text of every variable in ``roots`` (by ``id``), built bottom-up without recursion."""
    # Count how often each variable's text is still needed, to drop texts after their last use.
    uses: dict[int, int] = {}
    order: list[Variable] = []
    seen: set[int] = set()
    stack: list[tuple[Variable, bool]] = [(v, False) for v in reversed(roots)]
    while stack:
        var, expanded = stack.pop()
        if expanded:
            order.append(var)
            continue
        if id(var) in seen:
            continue
        seen.add(id(var))
        stack.append((var, True))
        for inp in reversed(_text_inputs(var)):
            uses[id(inp)] = uses.get(id(inp), 0) + 1
            if id(inp) not in seen:
                stack.append((inp, False))
    keep = {id(v) for v in roots}
    texts: dict[int, str] = {}
    for var in order:
        args = []
        for inp in _text_inputs(var):
            text = texts[id(inp)]
            args.append(text if len(text) <= max_chars else ELLIPSIS)
            uses[id(inp)] -= 1
            if uses[id(inp)] == 0 and id(inp) not in keep:
                del texts[id(inp)]
        texts[id(var)] = _format(var, args)
    return texts


def _broadcast_constant(var: Variable) -> Constant | None:
    """The constant that ``var`` broadcasts through DimShuffles, if it is one."""
    from symlab.tensor.elemwise import DimShuffle

    while var.owner is not None and isinstance(var.owner.op, DimShuffle):
        var = var.owner.inputs[0]
    return var if isinstance(var, Constant) else None


def _text_inputs(var: Variable) -> list[Variable]:
    """The variables whose text the text of ``var`` is made of."""
    if var.owner is None or _broadcast_constant(var) is not None:
        return []
    return list(var.owner.inputs)


def leaf_text(var: Variable) -> str:
    """How a leaf prints: its name, a constant's value, or ``<type>``."""
    if var.name is not None:
        return var.name
    if isinstance(var, Constant):
        data = var.data
        ndim = getattr(data, "ndim", None)
        if ndim is not None and not hasattr(data, "flat"):  # not a NumPy value (a scipy.sparse matrix)
            return str(var)
        if ndim == 0:
            return str(data[()])
        if ndim is not None:
            if data.size <= 8:
                import numpy as np

                return np.array2string(data, separator=" ", max_line_width=10_000).replace("\n", "")
            from symlab.tensor.variable import constant_text

            return constant_text(data)
        return str(data)
    return str(var)


def _axis_text(axis: Any) -> str:
    if isinstance(axis, tuple | list) and len(axis) == 1:
        return str(axis[0])
    if isinstance(axis, tuple | list):
        return "(" + ", ".join(str(a) for a in axis) + ")"
    return str(axis)


def _ifelse_text(n_outs: int, args: list[str]) -> str:
    """``ifelse(cond, then, else)``; with several outputs each branch is a tuple: ``ifelse(c, (a, b), (d, e))``."""
    then_args, else_args = args[1 : 1 + n_outs], args[1 + n_outs :]
    if n_outs == 1:
        return f"ifelse({args[0]}, {then_args[0]}, {else_args[0]})"
    return f"ifelse({args[0]}, ({', '.join(then_args)}), ({', '.join(else_args)}))"


def _format(var: Variable, args: list[str]) -> str:
    node = var.owner
    if node is None:
        return leaf_text(var)
    constant = _broadcast_constant(var)
    if constant is not None:
        return leaf_text(constant)
    op = node.op
    from symlab.compile.builders import OpFromGraph
    from symlab.ifelse.op import IfElse
    from symlab.tensor.elemwise import DimShuffle, Elemwise
    from symlab.tensor.reduction import Reduce

    suffix = f".{var.index}" if len(node.outputs) > 1 else ""
    if isinstance(op, IfElse):
        return _ifelse_text(op.n_outs, args) + suffix
    if isinstance(op, OpFromGraph):  # its name (or OpFromGraph), without the {inline=...} of its str
        return f"{op.user_name if op.user_name is not None else 'OpFromGraph'}({', '.join(args)}){suffix}"
    if isinstance(op, Elemwise):
        scalar_op = op.scalar_op
        symbol = getattr(scalar_op, "symbol", None)
        if symbol and len(args) == 2:
            return f"({args[0]} {symbol} {args[1]}){suffix}"
        if symbol and len(args) == 1:
            return f"({symbol}{args[0]}){suffix}"
        return f"{scalar_op}({', '.join(args)}){suffix}"
    if isinstance(op, Reduce):
        name = type(op).__name__.lower()
        if op.axis is None:
            return f"{name}({args[0]})"
        return f"{name}({args[0]}, axis={_axis_text(op.axis)})"
    if isinstance(op, DimShuffle) and op.new_order == (1, 0):
        return f"{args[0]}.T"
    return f"{op}({', '.join(args)}){suffix}"
