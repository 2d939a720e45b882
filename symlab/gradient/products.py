"""PyTensor 3's names for the products of a Jacobian with a vector: ``pullback``, ``pushforward``,
``hessian_vector_product`` (importable from :mod:`symlab.gradient`, beside ``Lop`` and ``Rop``), built on ``grad``.

- ``pullback(f, wrt, cotangents)``: the vector-Jacobian product ``v^T J`` (reverse mode, ``Lop``);
- ``pushforward(f, wrt, tangents)``: the Jacobian-vector product ``J v`` (forward mode, ``Rop``),
  by default through two pullbacks (any differentiable graph), or with
  ``use_op_pushforward=True`` through each op's ``R_op``;
- ``hessian_vector_product(cost, wrt, p)``: ``H p`` without forming ``H``.

>>> import numpy as np
>>> import symlab
>>> import symlab.tensor as st
>>> W, V = st.dmatrix("W"), st.dmatrix("V")
>>> x = st.dvector("x")
>>> y = st.dot(x, W)
>>> f = symlab.function([W, V, x], pushforward(y, W, V), mode="NUMPY")
>>> f([[1, 1], [1, 1]], [[2, 2], [2, 2]], [0, 1]).tolist()
[2.0, 2.0]
>>> v = st.dvector("v")
>>> symlab.function([v, x], pullback(y, W, v), mode="NUMPY")([2, 2], [0, 1]).tolist()
[[0.0, 0.0], [2.0, 2.0]]
>>> Hv = hessian_vector_product(st.sum(x ** 2), x, v)
>>> symlab.function([x, v], Hv, mode="NUMPY")([4, 4], [2, 2]).tolist()
[4.0, 4.0]
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from symlab.gradient.reverse_mode import DisconnectedInputError, grad, zeros_like_gradient
from symlab.graph.basic import Variable
from symlab.graph.traversal import ancestors, clone_replace, io_toposort
from symlab.tensor.basic import as_tensor_variable

_POLICIES = ("raise", "warn", "ignore")
_RETURNS = ("zero", "none")


def _as_variables(value: Any, what: str, where: str) -> tuple[list[Variable], bool]:
    """``value`` as a list of tensor variables, and whether it was given as a list or tuple."""
    many = isinstance(value, list | tuple)
    items = list(value) if many else [value]
    out = []
    for k, item in enumerate(items):
        try:
            out.append(item if isinstance(item, Variable) else as_tensor_variable(item))
        except (TypeError, ValueError) as err:
            label = f"{what}[{k}]" if many else what
            raise TypeError(f"{where}: {label} must be a tensor variable (or a value), received {item!r:.60}: {err}") from None
    return out, many


def _check_choice(value: Any, name: str, choices: tuple[str, ...], where: str) -> None:
    if value not in choices:
        raise ValueError(f"{where}: {name} must be one of {list(choices)}, received {value!r}")


def _check_pairs(first: list[Variable], second: list[Variable], names: tuple[str, str], where: str) -> None:
    if len(first) != len(second):
        raise ValueError(
            f"{where}: {names[0]} has {len(first)} variable(s) but {names[1]} has {len(second)}; give one "
            f"{names[1][:-1]} per {names[0]} variable"
        )
    for k, (a, b) in enumerate(zip(first, second, strict=True)):
        if a.type.ndim != b.type.ndim:
            raise ValueError(
                f"{where}: {names[1]}[{k}] ({b}, {b.type}) must have the dimensions of {names[0]}[{k}] "
                f"({a}, {a.type}): {b.type.ndim} != {a.type.ndim}"
            )


def _disconnected(policy: str, message: str) -> None:
    if policy == "raise":
        raise DisconnectedInputError(message)
    if policy == "warn":
        warnings.warn(message, stacklevel=3)


def pullback(
    f: Variable | Sequence[Variable],
    wrt: Variable | Sequence[Variable],
    cotangents: Any,
    consider_constant: Sequence[Variable] | None = None,
    disconnected_inputs: str = "raise",
    return_disconnected: str = "zero",
) -> Variable | None | list[Variable | None]:
    """The vector-Jacobian product ``sum_i cotangents[i] * d f[i] / d wrt[j]`` for each ``wrt[j]``.

    One cotangent per output, shaped like it. The result has the form of ``wrt`` (a variable, or a
    list). A ``wrt`` that ``f`` does not depend on raises ``DisconnectedInputError``
    (``disconnected_inputs="warn"``/``"ignore"``: its product is zeros, or ``None`` with
    ``return_disconnected="none"``).

    >>> import symlab.tensor as st
    >>> x, u = st.dvector("x"), st.dvector("u")
    >>> pullback(x ** 2, x, u).eval({x: [1.0, 3.0], u: [1.0, 1.0]}).tolist()
    [2.0, 6.0]
    """
    where = "pullback"
    _check_choice(disconnected_inputs, "disconnected_inputs", _POLICIES, where)
    _check_choice(return_disconnected, "return_disconnected", _RETURNS, where)
    fs, _ = _as_variables(f, "f", where)
    cots, _ = _as_variables(cotangents, "cotangents", where)
    _check_pairs(fs, cots, ("f", "cotangents"), where)
    wrts, many = _as_variables(wrt, "wrt", where)
    upstream = set(ancestors(fs, blockers=list(consider_constant or ())))
    connected = [w in upstream for w in wrts]
    for w, ok in zip(wrts, connected, strict=True):
        if not ok:
            _disconnected(disconnected_inputs, f"{where}: f does not depend on {w} ({w.type})")
    result: list[Variable | None] = list(
        grad(None, wrts, consider_constant=consider_constant, known_grads=dict(zip(fs, cots, strict=True)),
             disconnected_inputs="ignore")
    )
    if return_disconnected == "none":
        result = [r if ok else None for r, ok in zip(result, connected, strict=True)]
    return result if many else result[0]


def _node_pushforward_by_pullback(node: Any, points: list[Variable | None]) -> list[Variable | None]:
    """The pushforward of one node whose op has no ``R_op``, through its gradient (two pullbacks)."""
    outputs = [o for o in node.outputs if str(getattr(o.type, "dtype", "")).startswith(("float", "complex"))]
    if not outputs:  # an integer result (a shape, an index) has no tangent
        return [None] * len(node.outputs)
    dummies = {o: o.type() for o in outputs}
    moving = [(i, p) for i, p in zip(node.inputs, points, strict=True) if p is not None]
    try:
        back = grad(None, [i for i, _ in moving], known_grads=dummies, disconnected_inputs="ignore")
    except NotImplementedError as err:
        raise NotImplementedError(
            f"pushforward(use_op_pushforward=True): {node.op} has neither an R_op nor a gradient ({err})"
        ) from None
    total = None
    for g, (_, p) in zip(back, moving, strict=True):
        term = (g * p).sum()
        total = term if total is None else total + term
    forward = grad(total, list(dummies.values()), disconnected_inputs="ignore")
    replace = {d: zeros_like_gradient(o) for o, d in dummies.items()}
    by_output = dict(zip(outputs, clone_replace(forward, replace), strict=True))
    return [by_output.get(o) for o in node.outputs]


def _pushforward_by_ops(fs: list[Variable], wrts: list[Variable], tangents: list[Variable]) -> list[Variable | None]:
    """Forward mode through each op's ``R_op``: ``None`` for an output no ``wrt`` reaches.

    As in PyTensor, a root input that is not among ``wrt`` (or a constant) moves with a zero tangent
    of its shape, so the result keeps every input of the graph.
    """
    directions: dict[Variable, Variable | None] = dict(zip(wrts, tangents, strict=True))

    def direction_of(var: Variable) -> Variable | None:
        if var not in directions:
            floating = str(getattr(var.type, "dtype", "")).startswith(("float", "complex"))
            directions[var] = zeros_like_gradient(var) if var.owner is None and floating else None
        return directions[var]

    for node in io_toposort(wrts, fs):
        points = [direction_of(v) for v in node.inputs]
        if all(p is None for p in points):
            continue
        try:
            out = node.op.R_op(node.inputs, points)
        except NotImplementedError:
            out = _node_pushforward_by_pullback(node, points)
        for var, direction in zip(node.outputs, out, strict=True):
            directions[var] = direction
    return [direction_of(f) if f.owner is None else directions.get(f) for f in fs]


def pushforward(
    f: Variable | Sequence[Variable],
    wrt: Variable | Sequence[Variable],
    tangents: Any,
    disconnected_outputs: str = "raise",
    return_disconnected: str = "zero",
    use_op_pushforward: bool = False,
) -> Variable | None | list[Variable | None]:
    """The Jacobian-vector product ``sum_j d f[i] / d wrt[j] * tangents[j]`` for each ``f[i]``.

    One tangent per ``wrt``, shaped like it. The result has the form of ``f``. By default it is
    computed as the pullback of a pullback (J. Towns' trick), which needs only gradients;
    ``use_op_pushforward=True`` runs forward mode through each op's ``R_op`` instead (a node whose
    op has none goes through its own gradient, the same trick on that node only). An output that
    depends on no ``wrt`` raises ``DisconnectedInputError`` (``"warn"``/``"ignore"``: zeros, or
    ``None`` with ``return_disconnected="none"``).

    >>> import symlab.tensor as st
    >>> x, v = st.dvector("x"), st.dvector("v")
    >>> pushforward(x ** 2, x, v).eval({x: [1.0, 3.0], v: [1.0, 0.5]}).tolist()
    [2.0, 3.0]
    """
    where = "pushforward"
    _check_choice(disconnected_outputs, "disconnected_outputs", _POLICIES, where)
    _check_choice(return_disconnected, "return_disconnected", _RETURNS, where)
    wrts, _ = _as_variables(wrt, "wrt", where)
    tans, _ = _as_variables(tangents, "tangents", where)
    _check_pairs(wrts, tans, ("wrt", "tangents"), where)
    fs, many = _as_variables(f, "f", where)
    wrt_set = set(wrts)
    connected = [bool(wrt_set & set(ancestors([out]))) for out in fs]
    for out, ok in zip(fs, connected, strict=True):
        if not ok:
            _disconnected(disconnected_outputs, f"{where}: {out} ({out.type}) does not depend on any of wrt")
    if use_op_pushforward:
        result = _pushforward_by_ops(fs, wrts, tans)
    else:
        result = []
        for out, ok in zip(fs, connected, strict=True):
            if not ok:
                result.append(None)
                continue
            dummy = out.type()  # the result is linear in it; it is replaced below
            back = grad(None, wrts, known_grads={out: dummy}, disconnected_inputs="ignore")
            total = None
            for g, t in zip(back, tans, strict=True):
                term = (g * t).sum()
                total = term if total is None else total + term
            forward = grad(total, dummy, disconnected_inputs="ignore")
            result.append(clone_replace(forward, {dummy: zeros_like_gradient(out)}))
    if return_disconnected == "zero":
        result = [r if r is not None else zeros_like_gradient(out) for r, out in zip(result, fs, strict=True)]
    return result if many else result[0]


def hessian_vector_product(
    cost: Variable, wrt: Variable | Sequence[Variable], p: Any, **grad_kwargs: Any
) -> Variable | list[Variable]:
    """The Hessian of the scalar ``cost`` times ``p`` (one vector per ``wrt``), by two gradients.

    ``grad_kwargs`` go to both calls of :func:`~symlab.gradient.grad` (``consider_constant``,
    ``disconnected_inputs``...).

    >>> import symlab.tensor as st
    >>> x, p = st.dvector("x"), st.dvector("p")
    >>> hessian_vector_product((x ** 3).sum(), x, p).eval({x: [1.0, 2.0], p: [1.0, 1.0]}).tolist()
    [6.0, 12.0]
    """
    where = "hessian_vector_product"
    if not isinstance(cost, Variable) or cost.type.ndim != 0:
        raise TypeError(f"{where}: cost must be a scalar (0-d) variable, received {cost!r:.60}")
    wrts, many = _as_variables(wrt, "wrt", where)
    ps, _ = _as_variables(p, "p", where)
    _check_pairs(wrts, ps, ("wrt", "p"), where)
    gradients = grad(cost, wrts, **grad_kwargs)
    total = None
    for g, direction in zip(gradients, ps, strict=True):
        term = (g * direction).sum()
        total = term if total is None else total + term
    result = grad(total, wrts, **grad_kwargs)
    return result if many else result[0]


__all__ = ["hessian_vector_product", "pullback", "pushforward"]
