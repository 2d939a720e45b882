r"""Numba kernels of the indexing ops: ``Subtensor``, ``AdvancedSubtensor`` and the ``Inc``/``Set`` ops.

Each generator turns the op's static ``idx_list`` into source: integers and
slice fields are literals, the symbolic ones are read from the node's index
inputs. ``Subtensor`` uses Numba's basic indexing, so its output is a view of
``x`` (as the op's ``view_map`` allows); the other three ops become explicit
loop nests over the indexed part, with NumPy's rules for broadcasting index
arrays, boolean masks, the place of the advanced dimensions, and (for
``inc``) repeated indices that accumulate. Out-of-range integer indices
raise ``IndexError`` as NumPy does (Numba itself does not check bounds).

>>> import symlab.tensor as st
>>> x, i = st.dvector("x"), st.lscalar("i")
>>> print(kernel_for(x[i:].owner, "k").source)
def k(x, i0):
    s0_0 = np.int64(np.asarray(i0).item())
    return x[s0_0:,]
<BLANKLINE>

The source-building helpers it shares with the other kernel families
(``dtype_src``, ``check_dtypes``...) are in :mod:`~symlab.compile.numba.codegen`.
"""

from __future__ import annotations

from typing import Any

from symlab.compile.numba.codegen import check_dtypes, dtype_src, indent, index_tuple, int_src, message
from symlab.compile.numba.kernels import Kernel, NoKernel, function_source, kernel_for, register_kernel
from symlab.graph.basic import Apply
from symlab.tensor.subtensor import (
    AdvancedIncSubtensor,
    AdvancedSubtensor,
    IncSubtensor,
    IndexVar,
    Subtensor,
)


# =========================================================================================
# The index plan: source that validates an idx_list and describes the indexed part
# =========================================================================================
class _Plan:
    """What an ``idx_list`` does, as source lines and per-dimension expressions.

    ``prelude`` checks the index and computes slice bounds; ``dims`` lists
    the dimensions of ``x[idx]``, in order, each ``(size_expr, kind)``;
    ``x_index`` gives, for each dimension of ``x``, the expression of its
    index in terms of the loop variables ``o<j>`` (over ``dims[j]``);
    ``adv_lines`` compute the advanced index values (inside the loop over the
    last advanced dimension).
    """

    def __init__(self, op: Any, node: Apply, index_args: list[str]) -> None:
        self.op = op
        ndim = node.inputs[0].ndim
        entries = list(op.idx_list)
        advanced = any(isinstance(e, IndexVar) and e.ndim > 0 for e in entries)
        args = iter(index_args)
        lines: list[str] = []
        x_index: list[str | None] = [None] * ndim
        # view dims before the advanced block: (size_expr, x dim or None, start, step)
        view: list[tuple[str, int | None, str | None, str | None]] = []
        adv_positions: list[int] = []
        insert_at: int | None = None
        adv_arrays: list[tuple[str, int, int | None]] = []  # (array expr, ndim, x dim or None for a mask's broadcast)
        adv_dims: list[tuple[int, str, int, bool]] = []  # (x dim, array expr, array ndim, needs bounds check)
        dim = 0
        used = sum(
            0 if e is None or e is Ellipsis else e.ndim if isinstance(e, IndexVar) and e.is_mask else 1 for e in entries
        )

        def field(f: Any, default: str | None) -> str | None:
            if f is None:
                return default
            if isinstance(f, IndexVar):
                return int_src(next(args))
            return str(int(f))

        for pos, e in enumerate(entries):
            if e is None:
                view.append(("1", None, None, None))
            elif e is Ellipsis:  # the dimensions no other entry uses (often none), as in NumPy
                for _ in range(ndim - used):
                    view.append((f"x.shape[{dim}]", dim, None, None))
                    dim += 1
            elif e == (None, None, None):
                view.append((f"x.shape[{dim}]", dim, None, None))
                dim += 1
            elif isinstance(e, tuple):
                n = f"n{dim}"
                lines.append(f"{n} = x.shape[{dim}]")
                k = f"s{dim}"
                start, stop, step = (field(f, None) for f in e)
                lines.append(f"{k}_3 = {step if step is not None else '1'}")
                if isinstance(e[2], IndexVar):
                    lines.append(f"if {k}_3 == 0:")
                    lines.append(f"    raise ValueError({message(op, 'slice step cannot be zero')})")
                lines += [
                    f"if {k}_3 > 0:",
                    f"    {k}_lo = 0",
                    f"    {k}_hi = {n}",
                    "else:",
                    f"    {k}_lo = -1",
                    f"    {k}_hi = {n} - 1",
                ]
                for which, value in (("1", start), ("2", stop)):
                    var = f"{k}_{which}"
                    if value is None:
                        default_neg, default_pos = (f"{k}_hi", f"{k}_lo") if which == "1" else (f"{k}_lo", f"{k}_hi")
                        lines.append(f"{var} = {default_neg} if {k}_3 < 0 else {default_pos}")
                    else:
                        lines += [
                            f"{var} = {value}",
                            f"if {var} < 0:",
                            f"    {var} = max({var} + {n}, {k}_lo)",
                            "else:",
                            f"    {var} = min({var}, {k}_hi)",
                        ]
                lines += [
                    f"if {k}_3 > 0:",
                    f"    {k}_len = ({k}_2 - {k}_1 + {k}_3 - 1) // {k}_3 if {k}_2 > {k}_1 else 0",
                    "else:",
                    f"    {k}_len = ({k}_1 - {k}_2 - {k}_3 - 1) // (-{k}_3) if {k}_1 > {k}_2 else 0",
                ]
                view.append((f"{k}_len", dim, f"{k}_1", f"{k}_3"))
                dim += 1
            elif isinstance(e, IndexVar) and e.ndim > 0:
                name = next(args)
                adv_positions.append(pos)
                insert_at = len(view) if insert_at is None else insert_at
                if e.is_mask:
                    for q in range(e.ndim):
                        lines += [
                            f"if {name}.shape[{q}] != x.shape[{dim + q}]:",
                            "    raise IndexError("
                            + message(op, f"a boolean index does not match the indexed array in dimension {dim + q}")
                            + ")",
                        ]
                    nz = f"nz{dim}"
                    lines.append(f"{nz} = np.nonzero({name})")
                    adv_arrays.append((f"{nz}[0]", 1, None))
                    for q in range(e.ndim):
                        lines.append(f"n{dim + q} = x.shape[{dim + q}]")
                        adv_dims.append((dim + q, f"{nz}[{q}]", 1, False))
                    dim += e.ndim
                else:
                    lines.append(f"n{dim} = x.shape[{dim}]")
                    adv_arrays.append((name, e.ndim, dim))
                    adv_dims.append((dim, name, e.ndim, True))
                    dim += 1
            else:  # an integer, static or symbolic
                value = field(e, None)
                a = f"a{dim}"
                lines += [
                    f"n{dim} = x.shape[{dim}]",
                    f"{a} = {value}",
                    f"if {a} < -n{dim} or {a} >= n{dim}:",
                    f"    raise IndexError({message(op, f'index out of range for dimension {dim}')})",
                    f"if {a} < 0:",
                    f"    {a} += n{dim}",
                ]
                x_index[dim] = a
                if advanced:
                    adv_positions.append(pos)
                    insert_at = len(view) if insert_at is None else insert_at
                dim += 1
        for d in range(dim, ndim):
            view.append((f"x.shape[{d}]", d, None, None))

        # the broadcast shape of the advanced indices
        P = max((nd for _, nd, _ in adv_arrays), default=0)
        if advanced:
            lines += [f"b{D} = 1" for D in range(P)]
            for expr, nd, _ in adv_arrays:
                for q in range(nd):
                    D = P - nd + q
                    lines += [
                        f"if {expr}.shape[{q}] != 1:",
                        f"    if b{D} == 1:",
                        f"        b{D} = {expr}.shape[{q}]",
                        f"    elif b{D} != {expr}.shape[{q}]:",
                        "        raise IndexError("
                        + message(op, "shape mismatch: indexing arrays could not be broadcast together")
                        + ")",
                    ]
            adjacent = adv_positions == list(range(adv_positions[0], adv_positions[-1] + 1))
            at = insert_at if adjacent else 0
        else:
            at = len(view)

        # the dimensions of the indexed part, with the advanced block at `at`
        dims: list[tuple[str, str]] = []  # (size expression, kind) with kind "view" or "adv"
        j_of_view: list[int] = []
        for k, (size, _, _, _) in enumerate(view):
            if k == at:
                dims += [(f"b{D}", "adv") for D in range(P)]
            j_of_view.append(len(dims))
            dims.append((size, "view"))
        if at == len(view):
            dims += [(f"b{D}", "adv") for D in range(P)]
        adv_j = [j for j, (_, kind) in enumerate(dims) if kind == "adv"]
        for k, (_, d, start, step) in enumerate(view):
            if d is None:
                continue
            o = f"o{j_of_view[k]}"
            x_index[d] = o if start is None else f"{start} + {step} * {o}"
        adv_lines: list[str] = []
        for d, expr, nd, check in adv_dims:
            coords = [f"o{adv_j[P - nd + q]} if {expr}.shape[{q}] != 1 else 0" for q in range(nd)]
            v = f"v{d}"
            adv_lines.append(f"{v} = np.int64({expr}[{index_tuple(coords)}])")
            if check:
                adv_lines += [
                    f"if {v} < 0:",
                    f"    {v} += n{d}",
                    f"if {v} < 0 or {v} >= n{d}:",
                    f"    raise IndexError({message(op, f'index out of range for dimension {d}')})",
                ]
            x_index[d] = v
        self.prelude = lines
        self.dims = dims
        self.last_adv = adv_j[-1] if adv_j else None
        self.adv_lines = adv_lines
        self.x_index = [s if s is not None else ":" for s in x_index]

    def loops(self, body: list[str], before: list[str] | None = None) -> list[str]:
        """The loop nest over the indexed part around ``body`` (lines at depth 0)."""
        out: list[str] = list(before or [])
        depth = 0
        if self.last_adv is None and self.adv_lines:
            out += self.adv_lines
        for j, (size, _) in enumerate(self.dims):
            out += indent([f"for o{j} in range({size}):"], depth)
            depth += 1
            if j == self.last_adv:
                out += indent(self.adv_lines, depth)
        out += indent(body, depth)
        return out


def _names(node: Apply, first: list[str]) -> list[str]:
    return [*first, *(f"i{k}" for k in range(len(node.inputs) - len(first)))]


# =========================================================================================
# Kernels
# =========================================================================================
@register_kernel(Subtensor)
def _subtensor(op: Subtensor, node: Apply, name: str) -> Kernel:
    """Basic indexing through Numba's own indexing: a view of ``x``."""
    check_dtypes(node)
    args = _names(node, ["x"])
    it = iter(args[1:])
    body: list[str] = []
    index: list[str] = []

    def field(f: Any, var: str) -> str:
        """A literal, or a variable holding the value of a symbolic field."""
        if f is None:
            return ""
        if isinstance(f, IndexVar):
            body.append(f"{var} = {int_src(next(it))}")
            return var
        return str(int(f))

    for d, e in enumerate(op.idx_list):
        if isinstance(e, tuple):
            start, stop, step = (field(f, f"s{d}_{k}") for k, f in enumerate(e))
            if isinstance(e[2], IndexVar):
                body += [f"if {step} == 0:", f"    raise ValueError({message(op, 'slice step cannot be zero')})"]
            index.append(f"{start}:{stop}" + (f":{step}" if step else ""))
        else:
            a = field(e, f"a{d}")
            if a != f"a{d}":
                body.append(f"a{d} = {a}")
            body += [
                f"n{d} = x.shape[{d}]",
                f"if a{d} < -n{d} or a{d} >= n{d}:",
                f"    raise IndexError({message(op, f'index out of range for dimension {d}')})",
                f"if a{d} < 0:",
                f"    a{d} += n{d}",
            ]
            index.append(f"a{d}")
    if node.outputs[0].ndim == 0 and index:
        body += [
            f"out = np.empty((), {dtype_src(node.outputs[0].type.dtype)})",
            f"out[()] = x[{index_tuple(index)}]",
            "return out",
        ]
    elif index:
        body.append(f"return x[{index_tuple(index)}]")
    else:
        body.append("return x")
    return Kernel(name, function_source(name, args, body))


@register_kernel(AdvancedSubtensor)
def _advanced_subtensor(op: AdvancedSubtensor, node: Apply, name: str) -> Kernel:
    """Integer arrays, masks, slices, ints and new axes: a loop nest that gathers a copy."""
    check_dtypes(node)
    args = _names(node, ["x"])
    plan = _Plan(op, node, args[1:])
    shape = index_tuple([size for size, _ in plan.dims])
    body = [*plan.prelude, f"out = np.empty(({shape}), {dtype_src(node.outputs[0].type.dtype)})"]
    out_index = index_tuple([f"o{j}" for j in range(len(plan.dims))])
    body += plan.loops([f"out[{out_index}] = x[{index_tuple(plan.x_index)}]"])
    body.append("return out")
    return Kernel(name, function_source(name, args, body))


@register_kernel(IncSubtensor, AdvancedIncSubtensor)
def _inc_subtensor(op: Any, node: Apply, name: str) -> Kernel:
    """``x`` copied (unless the op destroys it), then the indexed part set or incremented by ``y``."""
    check_dtypes(node)
    args = _names(node, ["x", "y"])
    plan = _Plan(op, node, args[2:])
    y_type = node.inputs[1].type
    m = len(plan.dims)
    r = y_type.ndim
    body = list(plan.prelude)
    y_index: list[str] = []
    for q in range(r):
        j = m - r + q
        if y_type.shape[q] == 1:
            y_index.append("0")
        else:
            y_index.append(f"o{j}")
            text = (
                f"y does not fit the indexed part of x in dimension {q}; a size-1 dimension broadcasts only "
                "when its static shape is 1"
            )
            body += [f"if y.shape[{q}] != {plan.dims[j][0]}:", f"    raise ValueError({message(op, text)})"]
    destroys = 0 in (getattr(op, "destroy_map", None) or {}).get(0, ())
    body.append("out = x" if destroys else "out = x.copy()")
    target = f"out[{index_tuple(plan.x_index)}]"
    value = f"y[{index_tuple(y_index)}]"
    if op.set_instead_of_inc:
        statement = f"{target} = {value}"
    elif getattr(op, "ignore_duplicates", False) and not destroys:
        statement = f"{target} = x[{index_tuple(plan.x_index)}] + {value}"
    elif getattr(op, "ignore_duplicates", False):
        raise NoKernel(f"{op}: no Numba kernel for an inplace increment that ignores duplicates")
    else:
        statement = f"{target} += {value}"
    body += plan.loops([statement])
    body.append("return out")
    return Kernel(name, function_source(name, args, body))


__all__ = ["int_src", "check_dtypes", "dtype_src", "index_tuple", "message"]
_ = kernel_for  # the doctest uses it
