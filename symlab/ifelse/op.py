"""``IfElse``: choose between two lists of values by a scalar condition, computing only the chosen one.

A node of ``IfElse(n_outs)`` has the inputs ``[condition, *then_values, *else_values]`` and
``n_outs`` outputs (PyTensor's layout). The branches are ordinary parts of the outer graph, so
merging, gradients and rewrites see them; laziness comes from the linker, which runs the
*region* of each branch (:mod:`symlab.ifelse.region`) only when the condition chooses it
(:mod:`symlab.compile.lazy_plan`). ``switch`` is different: elementwise, and both of its
branches are always computed.

>>> import numpy as np
>>> import symlab.tensor as st
>>> from symlab.ifelse import ifelse
>>> c, x, y = st.iscalar("c"), st.dvector("x"), st.dvector("y")
>>> out = ifelse(c, x * 2, y - 1, name="pick")
>>> out.owner.op, out.type
(if{pick}, TensorType(float64, (?,)))
>>> out.eval({c: 1, x: [1.0, 2.0], y: [5.0]}), out.eval({c: 0, x: [1.0, 2.0], y: [5.0]})
(array([2., 4.]), array([4.]))
"""

from __future__ import annotations

from collections.abc import Sequence
from copy import deepcopy
from typing import TYPE_CHECKING, Any

import numpy as np

from symlab.graph.basic import Apply, Variable
from symlab.graph.inner_graph import InnerSection
from symlab.graph.null_type import DisconnectedType
from symlab.graph.op import Op, OutputStorage
from symlab.ifelse.region import BRANCHES, branch_positions, branch_region, region_inputs
from symlab.tensor.alloc import zeros_like
from symlab.tensor.basic import cast
from symlab.tensor.conversion import as_tensor_variable
from symlab.tensor.type import TensorType

if TYPE_CHECKING:
    from symlab.graph.fg import FunctionGraph


class IfElseConditionError(TypeError):
    """The condition of an ``ifelse`` is not a scalar (0-d) bool or number."""


class IfElseBranchError(TypeError):
    """A then value and its else value differ in type, dtype or number of dimensions."""


class IfElseBranchCountError(ValueError):
    """The branches of an ``ifelse`` do not hold the same number of values."""


def _describe(var: Any) -> str:
    if isinstance(var, Variable):
        name = f" {var.name!r}" if var.name is not None else ""
        return f"variable{name} of type {var.type}"
    return f"{type(var).__name__} {var!r}"[:200]


def truth(condition: Any) -> bool:
    """Whether a condition's value takes the then branch: anything but zero does (PyTensor's rule).

    >>> truth(np.array(0.0)), truth(np.int8(3)), truth(np.array(True))
    (False, True, True)
    """
    return bool(np.asarray(condition) != 0)


def _take(value: Any) -> Any:
    """An owned copy of a branch's value (an array is copied; NumPy's deepcopy of arrays is avoided)."""
    if isinstance(value, np.ndarray):
        return value.copy()
    return deepcopy(value)


class IfElse(Op):
    """Return the ``n_outs`` then values if the condition is true (non-zero), else the else values.

    ``as_view=True`` lets output ``i`` be the then value ``i`` itself (its ``view_map``), as PyTensor's
    inplace form; an else value is still copied. ``name`` is shown in the op's text (``if{name}``) and
    is no part of its identity.
    """

    __props__ = ("as_view", "n_outs")
    has_inner_graph = True

    def __init__(self, n_outs: int, as_view: bool = False, name: str | None = None) -> None:
        if not isinstance(n_outs, int | np.integer) or isinstance(n_outs, bool) or n_outs < 1:
            raise ValueError(f"IfElse: n_outs must be a positive int, received {n_outs!r}")
        self.n_outs = int(n_outs)
        self.as_view = bool(as_view)
        self.branch_name = name
        if self.as_view:
            self.view_map = {i: [i + 1] for i in range(self.n_outs)}

    def __str__(self) -> str:
        args = [] if self.branch_name is None else [str(self.branch_name)]
        if self.as_view:
            args.append("inplace")
        return f"if{{{','.join(args)}}}"

    # -- nodes ---------------------------------------------------------------------------------
    def make_node(self, condition: Any, *branches: Any) -> Apply:
        if len(branches) != 2 * self.n_outs:
            raise IfElseBranchCountError(
                f"{self}: expected {2 * self.n_outs} branch values after the condition ({self.n_outs} then, "
                f"{self.n_outs} else), received {len(branches)}"
            )
        cond = _condition(condition, self)
        then_values, else_values = branches[: self.n_outs], branches[self.n_outs :]
        new_then, new_else, outputs = [], [], []
        for k, (t, e) in enumerate(zip(then_values, else_values)):
            t = _branch_value(t, self, "then", k)
            e = _branch_value(e, self, "else", k)
            out_type = _joined_type(t, e, self, k)
            new_then.append(out_type.filter_variable(t))
            new_else.append(out_type.filter_variable(e))
            outputs.append(out_type())
        return Apply(self, [cond, *new_then, *new_else], outputs)

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: OutputStorage) -> None:
        n = self.n_outs
        if truth(inputs[0]):
            for cell, value in zip(output_storage, inputs[1 : 1 + n]):
                cell[0] = value if self.as_view else _take(value)
        else:
            for cell, value in zip(output_storage, inputs[1 + n :]):
                cell[0] = _take(value)  # a view of both branches' inputs is more than view_map can say

    def do_constant_folding(self, fgraph: Any, node: Apply) -> bool:
        return False  # the constant condition rule takes the chosen branch without computing the other

    # -- shapes and derivatives ----------------------------------------------------------------
    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: Sequence[Sequence[Variable]]) -> list:
        """The shapes of the outputs: an ifelse, on the same condition, of the branches' shapes."""
        n = self.n_outs
        then_shapes, else_shapes = input_shapes[1 : 1 + n], input_shapes[1 + n :]
        if any(not isinstance(s, list | tuple) for s in [*then_shapes, *else_shapes]):
            return [None] * n
        flat_then = [cast(s, "int64") for shape in then_shapes for s in shape]
        flat_else = [cast(s, "int64") for shape in else_shapes for s in shape]
        if not flat_then:
            return [() for _ in range(n)]
        label = "shape" if self.branch_name is None else f"shape_{self.branch_name}"
        chosen = IfElse(len(flat_then), name=label)(node.inputs[0], *flat_then, *flat_else, return_list=True)
        shapes, start = [], 0
        for out in node.outputs:
            shapes.append(tuple(chosen[start : start + out.ndim]))
            start += out.ndim
        return shapes

    def L_op(  # noqa: N802 - PyTensor's name
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list[Variable]:
        """Each branch's gradient behind the same condition: ``ifelse(c, g, 0)`` for then, ``ifelse(c, 0, g)`` for else."""
        n = self.n_outs
        cond = inputs[0]
        grads = [
            zeros_like(out) if g is None or isinstance(g.type, DisconnectedType) else g
            for g, out in zip(output_grads, outputs)
        ]
        zeros_then = [zeros_like(t, dtype=g.dtype) for t, g in zip(inputs[1 : 1 + n], grads)]
        zeros_else = [zeros_like(e, dtype=g.dtype) for e, g in zip(inputs[1 + n :], grads)]
        suffix = "" if self.branch_name is None else str(self.branch_name)
        then_op = IfElse(n, name=f"{suffix}_grad_then" if suffix else None)
        else_op = IfElse(n, name=f"{suffix}_grad_else" if suffix else None)
        then_grads = then_op(cond, *grads, *zeros_then, return_list=True)
        else_grads = else_op(cond, *zeros_else, *grads, return_list=True)
        # The condition chooses; a small change of it never changes the branch taken: its gradient is zero.
        cond_grad = zeros_like(cond, dtype=cond.dtype if cond.dtype.startswith("float") else "float64")
        return [cond_grad, *then_grads, *else_grads]

    def R_op(  # noqa: N802 - PyTensor's name
        self, inputs: Sequence[Variable], eval_points: Sequence[Variable | None]
    ) -> list[Variable]:
        """The chosen branch's direction: an ifelse on the same condition of the branches' directions."""
        points = [zeros_like(v) if p is None else p for v, p in zip(inputs[1:], eval_points[1:])]
        return self(inputs[0], *points, return_list=True)

    # -- the branches, as sections a view opens ---------------------------------------------------
    def inner_sections(self, node: Apply, fgraph: FunctionGraph | None = None) -> list[InnerSection]:
        """Two sections, ``then`` and ``else``: the outer nodes only that branch needs (not owned by the op)."""
        sections = []
        for label, taken_when in BRANCHES.items():
            nodes = branch_region(node, label, fgraph)
            outputs = [node.inputs[i] for i in branch_positions(node, label)]
            inputs = region_inputs(nodes, outputs)
            sections.append(
                InnerSection(
                    label=label,
                    inputs=list(inputs),
                    outputs=outputs,
                    outer_inputs=list(inputs),
                    outer_outputs=list(node.outputs),
                    nodes=nodes,
                    owned=False,
                    condition=node.inputs[0],
                    taken_when=taken_when,
                )
            )
        return sections


def _condition(condition: Any, op: Any) -> Variable:
    """The condition as a 0-d tensor variable, or a named error saying what was received."""
    try:
        cond = as_tensor_variable(condition)
    except (TypeError, ValueError) as err:
        raise IfElseConditionError(
            f"{op}: input 0 (the condition) must be a scalar (0-d) bool or number, received "
            f"{_describe(condition)} ({err})"
        ) from None
    if cond.ndim != 0:
        raise IfElseConditionError(
            f"{op}: input 0 (the condition) must be a scalar (0-d) bool or number, received "
            f"{_describe(cond)} with {cond.ndim} dimensions"
        )
    if cond.dtype.startswith("complex"):
        raise IfElseConditionError(f"{op}: input 0 (the condition) must be a bool or real number, received {_describe(cond)}")
    return cond


def _branch_value(value: Any, op: Any, branch: str, k: int) -> Variable:
    if isinstance(value, Variable):
        return value
    try:
        return as_tensor_variable(value)
    except (TypeError, ValueError) as err:
        raise IfElseBranchError(f"{op}: {branch} value {k} must be a Variable or a tensor value, received "
                                f"{_describe(value)} ({err})") from None


def _joined_type(t: Variable, e: Variable, op: Any, k: int) -> Any:
    """The type of output ``k``: the branches' common type, static sizes kept only where both agree."""
    where = f"{op}: output {k}: then value {k} ({_describe(t)}) and else value {k} ({_describe(e)})"
    if type(t.type) is not type(e.type):
        raise IfElseBranchError(f"{where} must have the same kind of type")
    if isinstance(t.type, TensorType):
        if t.type.dtype != e.type.dtype:
            raise IfElseBranchError(f"{where} must have the same dtype, received {t.type.dtype} and {e.type.dtype}")
        if t.type.ndim != e.type.ndim:
            raise IfElseBranchError(
                f"{where} must have the same number of dimensions, received {t.type.ndim} and {e.type.ndim}"
            )
        shape = tuple(a if a == b else None for a, b in zip(t.type.shape, e.type.shape))
        return t.type.clone(shape=shape)
    if t.type != e.type:
        raise IfElseBranchError(f"{where} must have the same type")
    return t.type


def ifelse(
    condition: Any,
    then_branch: Variable | Sequence[Variable] | Any,
    else_branch: Variable | Sequence[Variable] | Any,
    name: str | None = None,
) -> Variable | list[Variable] | tuple[Variable, ...]:
    """``then_branch`` if ``condition`` is true (non-zero), else ``else_branch``; only the chosen one is computed.

    ``condition`` is a scalar (0-d) bool or number. Each branch is a variable or a list/tuple of them
    (values become constants); the answer has the same structure as ``then_branch``. Then value ``k`` and
    else value ``k`` must have the same dtype and number of dimensions.

    >>> import symlab.tensor as st
    >>> a, b = st.dscalars("a", "b")
    >>> lo, hi = ifelse(a < b, (a, b), (b, a))
    >>> float(lo.eval({a: 3.0, b: 1.0})), float(hi.eval({a: 3.0, b: 1.0}))
    (1.0, 3.0)
    >>> ifelse(st.dvector("v"), a, b)
    Traceback (most recent call last):
    ...
    symlab.ifelse.op.IfElseConditionError: if{}: input 0 (the condition) must be a scalar (0-d) bool or number, received variable 'v' of type TensorType(float64, (?,)) with 1 dimensions
    """
    structure: type | None = type(then_branch) if isinstance(then_branch, list | tuple) else None
    then_values = list(then_branch) if structure is not None else [then_branch]
    else_values = list(else_branch) if isinstance(else_branch, list | tuple) else [else_branch]
    if len(then_values) != len(else_values) or not then_values:
        raise IfElseBranchCountError(
            f"ifelse{'' if name is None else f' {name!r}'}: the then and else branches must hold the same number "
            f"of values (at least one), received {len(then_values)} then and {len(else_values)} else"
        )
    outs = IfElse(len(then_values), name=name)(condition, *then_values, *else_values, return_list=True)
    if structure is None:
        return outs[0]
    return list(outs) if structure is list else tuple(outs)


__all__ = ["IfElse", "IfElseBranchCountError", "IfElseBranchError", "IfElseConditionError", "ifelse", "truth"]
