"""Reverse-mode automatic differentiation: ``grad``, and ``Lop``, ``Rop``, ``jacobian``, ``hessian`` built on it.

``grad`` walks the graph from the cost back to the inputs; at each Apply
node the op's ``L_op`` turns the gradients of its outputs into gradients of
its inputs. The result is an ordinary graph: it prints and evaluates like any
other.

>>> import numpy as np
>>> import symlab.tensor as st
>>> x = st.dvector("x")
>>> g = grad((x ** 2).sum(), x)
>>> g.eval({x: np.array([1.0, 2.0])})
array([2., 4.])
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from symlab.graph.basic import Variable
from symlab.graph.null_type import DisconnectedType, NullType
from symlab.graph.traversal import ancestors, clone_replace, io_toposort
from symlab.tensor.basic import as_tensor_variable, cast, constant
from symlab.tensor.joining import stack
from symlab.tensor.math import second
from symlab.tensor.type import TensorType

if TYPE_CHECKING:
    from symlab.gradient.walk import GradObserver


class DisconnectedInputError(ValueError):
    """A requested gradient input does not influence the cost."""


class NullTypeGradError(TypeError):
    """The requested gradient goes through an operation that has none."""


def _is_discrete(var: Variable) -> bool:
    return isinstance(var.type, TensorType) and not var.type.dtype.startswith(("float", "complex"))


def zeros_like_gradient(var: Variable) -> Variable:
    """A float zero tensor of ``var``'s shape (the gradient that is exactly zero)."""
    dtype = var.dtype if not _is_discrete(var) else "float64"
    return second(var, cast(0.0, dtype))


def grad(
    cost: Variable | None,
    wrt: Variable | Sequence[Variable],
    consider_constant: Sequence[Variable] | None = None,
    known_grads: Mapping[Variable, Any] | None = None,
    disconnected_inputs: str = "raise",
    null_gradients: str = "raise",
    *,
    observer: GradObserver | None = None,
) -> Variable | list[Variable]:
    """Symbolic gradient of the scalar ``cost`` with respect to ``wrt``.

    ``wrt`` is a variable or a list of them (the answer has the same form).
    ``consider_constant`` lists variables treated as constants (no gradient
    flows through them); ``known_grads`` maps variables to gradients given
    by the caller (``cost`` may then be ``None``). An input the cost does not
    depend on raises ``DisconnectedInputError`` (``disconnected_inputs=
    'warn'`` or ``'ignore'`` return zeros instead). An integer or boolean
    input has a zero gradient. A gradient through an op that has none
    (``argmax``, comparisons, ``round``) raises ``NullTypeGradError`` only if
    it reaches a requested input (``null_gradients='return'`` returns the
    ``NullType`` variable instead).

    ``observer`` (symlab's own, keyword-only; PyTensor has none) is told every
    step of the walk as it happens: a :class:`~symlab.gradient.walk.GradObserver`.
    :class:`~symlab.gradient.walk.GradWalk` records them, and the grad stepper
    plays them.
    """
    if disconnected_inputs not in ("raise", "warn", "ignore"):
        raise ValueError(f"disconnected_inputs must be 'raise', 'warn' or 'ignore', received {disconnected_inputs!r}")
    single = isinstance(wrt, Variable)
    wrt_list = [wrt] if single else list(wrt)
    for k, w in enumerate(wrt_list):
        if not isinstance(w, Variable):
            raise TypeError(f"grad: wrt[{k}] must be a Variable, received {type(w).__name__}")

    grads: dict[Variable, Variable] = {}
    given: set[Variable] = set()  # the gradients known_grads gives: not made here
    if cost is not None:
        if not isinstance(cost, Variable):
            raise TypeError(f"grad: cost must be a Variable, received {type(cost).__name__}")
        if cost.type.ndim != 0:
            raise TypeError(
                f"grad: cost must be a scalar (0-d), received {cost} of type {cost.type}; "
                "sum it, or use jacobian for a vector"
            )
        grads[cost] = constant(1.0, dtype="float64" if _is_discrete(cost) else cost.dtype)
    for var, g in (known_grads or {}).items():
        if not isinstance(var, Variable):
            raise TypeError(f"grad: the keys of known_grads must be Variables, received {type(var).__name__} {var!r:.60}")
        g = as_tensor_variable(g, what=f"grad: known_grads[{var}]")
        if g.ndim != var.ndim:
            raise ValueError(f"grad: known gradient of {var} ({var.type}) has {g.ndim} dimensions, expected {var.ndim}")
        grads[var] = _accumulate(grads.get(var), g)
        given.add(g)
    if not grads:
        raise ValueError("grad: give a cost or known_grads")

    sources = list(grads)
    blockers = set(consider_constant or ())
    # Variables on a path from some wrt to some source: only those need gradients.
    on_path = _variables_between(wrt_list, sources, blockers)
    forward = io_toposort(list(blockers), sources)
    nodes = [n for n in forward if any(o in on_path for o in n.outputs)]

    if observer is not None:
        observer.start(dict(grads), list(reversed(nodes)), on_path, blockers)
    for node in reversed(nodes):
        out_grads = [grads.get(o) for o in node.outputs]
        if observer is not None:
            observer.visit(node, out_grads)
        if all(g is None for g in out_grads):
            if observer is not None:
                observer.nothing_arrives(node)
            continue
        nulls = [g for g in out_grads if g is not None and isinstance(g.type, NullType)]
        if nulls:
            for k, inp in enumerate(node.inputs):
                if inp in on_path and inp not in blockers:
                    before, grads[inp] = grads.get(inp), nulls[0]
                    if observer is not None:
                        observer.contribution(node, k, nulls[0], before, nulls[0])
            if observer is not None:
                observer.undefined(node, nulls[0])
            continue
        # An output that is not a tensor (a random variable's next generator) has no gradient: disconnected.
        out_grads = [
            g if g is not None else zeros_like_gradient(o) if isinstance(o.type, TensorType) else DisconnectedType()()
            for o, g in zip(node.outputs, out_grads)
        ]
        input_grads = node.op.L_op(node.inputs, node.outputs, out_grads)
        if len(input_grads) != len(node.inputs):
            raise ValueError(
                f"{node.op}.L_op returned {len(input_grads)} gradients for {len(node.inputs)} inputs"
            )
        if observer is not None:
            observer.rule(node, out_grads, list(input_grads))
        for k, (inp, g) in enumerate(zip(node.inputs, input_grads)):
            if inp not in on_path or inp in blockers or g is None or _is_discrete(inp):
                if observer is not None:
                    observer.refused(node, k, g, _refusal(inp, g, on_path, blockers))
                continue
            if isinstance(g.type, DisconnectedType):
                if observer is not None:
                    observer.refused(node, k, g, "disconnected")
                continue
            before = grads.get(inp)
            if isinstance(g.type, NullType):
                grads[inp] = g
            else:
                g = _fit(g, inp, node.op)
                # an undefined total stays undefined: nothing is added to it (as a NullType arriving replaces a sum)
                undefined = before is not None and isinstance(before.type, NullType)
                grads[inp] = before if undefined else _accumulate(before, g)
            if observer is not None:
                observer.contribution(node, k, g, before, grads[inp])

    results = []
    problems: list[str] = []  # what grad says about each wrt ("" when its gradient is there)
    for w in wrt_list:
        g = grads.get(w)
        problem = ""
        if g is None:
            if not _is_discrete(w):
                problem = f"grad: the cost does not depend on {w} (wrt input {wrt_list.index(w)})"
                if w in on_path:
                    problem = (
                        f"grad: the cost depends on {w} (wrt input {wrt_list.index(w)}) only through integer or "
                        "boolean values (a comparison, argmax, a cast to int...), which have no gradient"
                    )
            g = zeros_like_gradient(w)
        elif isinstance(g.type, NullType):
            problem = f"grad: cannot differentiate with respect to {w}: {g.type.why}"
        results.append(g)
        problems.append(problem)
    if observer is not None:
        observer.finish(list(wrt_list), list(results), list(problems))
    for g, problem in zip(results, problems):
        if not problem:
            continue
        if isinstance(g.type, NullType):
            if null_gradients == "raise":
                raise NullTypeGradError(problem)
        elif disconnected_inputs == "raise":
            raise DisconnectedInputError(problem + "; pass disconnected_inputs='ignore' to get zeros")
        elif disconnected_inputs == "warn":
            warnings.warn(problem, stacklevel=2)
    _mark_backward(results, set(forward), given)
    return results[0] if single else results


def _refusal(inp: Variable, g: Variable | None, on_path: set[Variable], blockers: set[Variable]) -> str:
    """Why a gradient the op's rule gave (or did not give) does not go to ``inp``: a word the walk's views explain."""
    if inp in blockers:
        return "constant"  # consider_constant
    if _is_discrete(inp):
        return "discrete"
    if inp not in on_path:
        return "off path"  # no requested input is upstream of it: its gradient is not needed
    return "none"  # the rule returned None: the op says its output does not depend on it


def _mark_backward(results: list[Variable], forward: set[Any], stop: set[Variable]) -> None:
    """Tag the nodes this call made (``node.tag.backward = True``): what views draw as the backward part.

    The walk goes from the results up to the nodes that were there before (``forward``), never past a
    node already tagged, nor past ``stop`` (gradients the caller gave in ``known_grads``).
    """
    stack = [r for r in results if r.owner is not None]
    while stack:
        node = stack.pop().owner
        if node is None or node in forward or node.tag.get("backward"):
            continue
        node.tag.backward = True
        stack.extend(i for i in node.inputs if i.owner is not None and i not in stop)


def _variables_between(wrt: list[Variable], sources: list[Variable], blockers: set[Variable]) -> set[Variable]:
    """Variables that depend on some ``wrt`` and that some source depends on."""
    # The walk goes through a wrt variable, not only to it: another wrt may be upstream of it
    # (grad(cost, [hidden, weight]) with hidden = f(weight)).
    upstream = set(ancestors(sources, blockers=list(blockers)))
    depends: set[Variable] = set(v for v in wrt if v in upstream)
    for node in io_toposort(list(blockers), sources):
        if any(i in depends for i in node.inputs):
            depends.update(node.outputs)
    return {v for v in depends if v in upstream}


def _fit(g: Variable, inp: Variable, op: Any) -> Variable:
    """Check a gradient's rank and give it the input's dtype."""
    if isinstance(inp.type, TensorType):
        if g.ndim != inp.ndim:
            raise ValueError(
                f"{op}.L_op returned a gradient with {g.ndim} dimensions ({g.type}) for input {inp} "
                f"of type {inp.type}"
            )
        if g.dtype != inp.dtype:
            g = cast(g, inp.dtype)
    return g


def _accumulate(total: Variable | None, g: Variable) -> Variable:
    return g if total is None else total + g


# -- derived transforms ------------------------------------------------------------------------
def Lop(f: Variable, wrt: Variable | Sequence[Variable], eval_points: Any) -> Variable | list[Variable]:  # noqa: N802
    """Vector-Jacobian product: ``eval_points`` (shaped like ``f``) times d f / d wrt."""
    fs = [f] if isinstance(f, Variable) else list(f)
    points = [eval_points] if isinstance(f, Variable) else list(eval_points)
    return grad(None, wrt, known_grads=dict(zip(fs, points)), disconnected_inputs="ignore")


def Rop(f: Variable, wrt: Variable | Sequence[Variable], eval_points: Any) -> Variable:  # noqa: N802
    """Jacobian-vector product: d f / d wrt times ``eval_points`` (shaped like ``wrt``).

    Computed as the transpose of a vector-Jacobian product, which every
    differentiable op supports.
    """
    single_wrt = isinstance(wrt, Variable)
    wrt_list = [wrt] if single_wrt else list(wrt)
    points = [eval_points] if single_wrt else list(eval_points)
    u = f.type()  # a dummy cotangent: the result is linear in it
    vjp = Lop(f, wrt_list, u)
    total = None
    for g, v in zip(vjp, points):
        total = _accumulate(total, (g * v).sum())
    jvp = grad(total, u, disconnected_inputs="ignore")
    # Only u's shape can remain in the graph; give it f's shape.
    return clone_replace(jvp, {u: zeros_like_gradient(f)})


def jacobian(
    expression: Variable,
    wrt: Variable | Sequence[Variable],
    consider_constant: Sequence[Variable] | None = None,
    disconnected_inputs: str = "raise",
    vectorize: bool = False,
) -> Variable | list[Variable]:
    """The Jacobian of ``expression`` with respect to ``wrt``: shape ``expression.shape + wrt.shape``.

    A scalar expression gives its gradient. Otherwise one gradient per element of the flattened
    expression: when its number of elements is known statically the rows are unrolled (one
    ``grad`` each, which reads as the textbook definition); when it is known only at run time they
    are the iterations of a loop over ``arange(expression.size)`` (``symlab.scan``, as PyTensor
    builds it); ``vectorize=True`` computes all rows at once instead, the gradient of the
    expression against each row of an identity matrix (``vectorize_graph``).
    ``consider_constant`` and ``disconnected_inputs`` go to each ``grad`` (PyTensor's signature).

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x = st.dvector("x")
    >>> jacobian(x ** 2, x).eval({x: np.array([1.0, 2.0])}).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    if not isinstance(expression, Variable) or not isinstance(expression.type, TensorType):
        raise TypeError(f"jacobian: expression must be a tensor variable, received {expression!r:.60}")
    single = isinstance(wrt, Variable)
    wrt_list = [wrt] if single else list(wrt)
    grad_kwargs: dict[str, Any] = {"consider_constant": consider_constant, "disconnected_inputs": disconnected_inputs}
    if expression.ndim == 0:
        result = grad(expression, wrt_list, **grad_kwargs)
        return result[0] if single else result
    flat = expression.flatten() if expression.ndim != 1 else expression
    size = flat.type.shape[0]
    if vectorize:
        result = _jacobian_vectorized(flat, wrt_list, grad_kwargs)
    elif size is not None:
        rows = [grad(flat[i], wrt_list, **grad_kwargs) for i in range(size)]
        result = [stack([row[k] for row in rows]) if rows else _empty_rows(w) for k, w in enumerate(wrt_list)]
    else:
        from symlab.tensor.alloc import arange

        def row(i: Variable, y: Variable, *ws: Variable) -> list[Variable]:
            return grad(y[i], list(ws), **grad_kwargs)

        result = loop_builder()(row, sequences=arange(flat.shape[0]), non_sequences=[flat, *wrt_list],
                                return_list=True, return_updates=False, name="jacobian")
    if expression.ndim != 1:
        from symlab.tensor.shape import reshape

        result = [reshape(r, [*(expression.shape[a] for a in range(expression.ndim)),
                              *(w.shape[a] for a in range(w.ndim))], ndim=expression.ndim + w.ndim)
                  for r, w in zip(result, wrt_list)]
    return result[0] if single else result


def _empty_rows(w: Variable) -> Variable:
    from symlab.tensor.alloc import zeros

    return zeros([0, *(w.shape[a] for a in range(w.ndim))], dtype=w.dtype if not _is_discrete(w) else "float64")


def _jacobian_vectorized(flat: Variable, wrt_list: list[Variable], grad_kwargs: dict[str, Any]) -> list[Variable]:
    """Every row at once: the pullback of one row of the identity, the graph batched over all its rows."""
    from symlab.graph.replace import vectorize_graph
    from symlab.tensor.alloc import eye

    dtype = "float64" if _is_discrete(flat) else flat.dtype
    row_tangent = TensorType(dtype, (None,))("row_tangent")
    rows = grad(None, wrt_list, known_grads={flat: row_tangent}, consider_constant=grad_kwargs["consider_constant"],
                disconnected_inputs=grad_kwargs["disconnected_inputs"])
    batched = vectorize_graph(rows, {row_tangent: eye(flat.shape[0], dtype=dtype)})
    out = []
    for single_row, matrix, w in zip(rows, batched, wrt_list):
        if matrix.ndim == single_row.ndim:  # the row does not depend on the tangent (a disconnected input): zeros
            from symlab.tensor.alloc import zeros

            matrix = zeros([flat.shape[0], *(w.shape[a] for a in range(w.ndim))], dtype=matrix.dtype) + matrix
        out.append(matrix)
    return out


def hessian(
    cost: Variable,
    wrt: Variable | Sequence[Variable],
    consider_constant: Sequence[Variable] | None = None,
    disconnected_inputs: str = "raise",
) -> Variable | list[Variable]:
    """The Hessian of a scalar ``cost`` with respect to vector(s) ``wrt``: the Jacobian of the gradient.

    A vector whose length is known only at run time gets it through a loop (see :func:`jacobian`).

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x = st.dvector("x")
    >>> hessian((x ** 3).sum(), x).eval({x: np.array([1.0, 2.0])}).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    if not isinstance(cost, Variable) or not isinstance(cost.type, TensorType) or cost.type.ndim != 0:
        raise TypeError(f"hessian: cost must be a scalar (0-d) tensor variable, received {cost!r:.60}")
    single = isinstance(wrt, Variable)
    wrt_list = [wrt] if single else list(wrt)
    result = []
    for k, w in enumerate(wrt_list):
        if not isinstance(w, Variable) or not isinstance(w.type, TensorType) or w.ndim != 1:
            raise TypeError(f"hessian: wrt[{k}] must be a vector (1-d tensor variable), received {w!r:.60}")
        g = grad(cost, w, consider_constant=consider_constant, disconnected_inputs=disconnected_inputs)
        result.append(jacobian(g, w, consider_constant=consider_constant, disconnected_inputs=disconnected_inputs))
    return result[0] if single else result


# -- the loop builder (jacobian of an expression whose length is known only at run time) ---------------
# ``symlab.scan`` lives above this layer: this module owns the registry and the loop package fills it
# (``register_loop_builder(scan)`` on its import); the root package registers a loader importing it, run
# the first time a loop is asked for, so that ``import symlab`` does not load the loop package.
_LOOP_BUILDER: list[Any] = []
_LOOP_LOADERS: list[Any] = []


def register_loop_builder(build: Any) -> None:
    """Make ``build`` (with ``symlab.scan``'s signature) the function this layer builds loops with."""
    _LOOP_BUILDER[:] = [build]


def register_loop_loader(load: Any) -> None:
    """Have ``load()`` (which imports the module calling :func:`register_loop_builder`) run when a loop is needed."""
    _LOOP_LOADERS.append(load)


def loop_builder() -> Any:
    """The registered loop builder (``symlab.scan``), after running the loaders not run yet.

    >>> import symlab  # registers the loader
    >>> loop_builder().__module__
    'symlab.scan.basic'
    """
    while not _LOOP_BUILDER and _LOOP_LOADERS:
        _LOOP_LOADERS.pop(0)()
    if not _LOOP_BUILDER:
        raise RuntimeError("jacobian: no loop builder is registered; import symlab.scan (it registers its scan)")
    return _LOOP_BUILDER[0]
