"""``Op``: the definition of a computation; an ``Apply`` node is one use of it.

An Op builds its nodes (:meth:`Op.make_node`), computes their values
(:meth:`Op.perform`), describes their shapes (:meth:`Op.infer_shape`) and
their gradients (:meth:`Op.L_op`). Its ``__props__`` say which attributes
make two instances the same computation:

>>> import numpy as np
>>> from symlab.graph import Op, Apply
>>> import symlab.tensor as st
>>> class Scale(Op):
...     __props__ = ("factor",)
...     def __init__(self, factor):
...         self.factor = factor
...     def make_node(self, x):
...         x = st.as_tensor_variable(x)
...         return Apply(self, [x], [x.type()])
...     def perform(self, node, inputs, output_storage):
...         output_storage[0][0] = inputs[0] * self.factor
>>> Scale(2) == Scale(2), str(Scale(2))
(True, 'Scale{factor=2}')
>>> x = st.dvector("x")
>>> Scale(2)(x).eval({x: np.array([1.0, 2.0])})
array([2., 4.])
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from symlab.graph.basic import Apply, Variable
from symlab.graph.display import Displayable
from symlab.graph.props import props_getter

#: ``output_storage`` of :meth:`Op.perform`: one single-element list per output.
OutputStorage = list[list[Any]]


class Op(Displayable):
    """Base class of all operations.

    Class attributes a subclass may set:

    ``__props__``
        names of the attributes that define the op (equality, hash, str);
    ``default_output``
        index of the output that ``op(...)`` returns when there are several;
    ``view_map`` / ``destroy_map``
        ``{output_index: [input_index]}``: outputs that are views of inputs,
        and outputs that are written into the memory of inputs.
    """

    __props__: tuple[str, ...] = ()
    default_output: int | None = None
    view_map: dict[int, list[int]] = {}
    destroy_map: dict[int, list[int]] = {}

    # -- building nodes ------------------------------------------------------
    def make_node(self, *inputs: Any) -> Apply:
        """Return an :class:`Apply` node of this op on ``inputs``.

        Subclasses convert and check the inputs and make the output Variables.
        """
        raise NotImplementedError(f"{self} must define make_node()")

    def __call__(self, *inputs: Any, name: str | None = None, return_list: bool = False, **kwargs: Any):
        """Build a node and return its default output (or all, ``return_list=True``)."""
        node = self.make_node(*inputs, **kwargs)
        if name is not None:
            if len(node.outputs) == 1:
                node.outputs[0].name = name
            else:
                for i, out in enumerate(node.outputs):
                    out.name = f"{name}.{i}"
        if return_list:
            return list(node.outputs)
        if self.default_output is not None:
            return node.outputs[self.default_output]
        if len(node.outputs) == 1:
            return node.outputs[0]
        return list(node.outputs)

    # -- computing -----------------------------------------------------------
    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: OutputStorage) -> None:
        """Compute the outputs of ``node`` from the input values.

        Write output ``i`` into ``output_storage[i][0]``.
        """
        raise NotImplementedError(f"{self} has no perform(): it cannot be evaluated in Python")

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: Sequence[Sequence[Variable]]) -> list:
        """Symbolic shapes of the outputs, given symbolic shapes of the inputs.

        ``input_shapes[i]`` is a tuple of scalar variables (one per dimension
        of input ``i``); return one such tuple per output.
        """
        raise NotImplementedError(f"{self} does not implement infer_shape()")

    # -- differentiating -----------------------------------------------------
    def L_op(  # noqa: N802 - PyTensor's name
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list[Variable]:
        """Vector-Jacobian product: gradients of the inputs given those of the outputs.

        By default it calls :meth:`grad`, which does not need the outputs.
        """
        return self.grad(inputs, output_grads)

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Variable]:
        """Gradients of the inputs given those of the outputs (see :meth:`L_op`)."""
        raise NotImplementedError(f"{self} does not implement grad() or L_op()")

    def R_op(  # noqa: N802 - PyTensor's name
        self, inputs: Sequence[Variable], eval_points: Sequence[Variable | None]
    ) -> list[Variable]:
        """Jacobian-vector product: output directions given input directions."""
        raise NotImplementedError(f"{self} does not implement R_op()")

    def do_constant_folding(self, fgraph: Any, node: Apply) -> bool:
        """Whether constant folding may replace ``node`` by its value."""
        return True

    # -- identity --------------------------------------------------------------
    def _props(self) -> tuple[Any, ...]:
        return props_getter(type(self))(self)

    def _props_dict(self) -> dict[str, Any]:
        return {p: getattr(self, p) for p in self.__props__}

    def __eq__(self, other: object) -> bool:
        if self is other:  # the common case in rewriting (one op object shared by many nodes), without the props
            return True
        if type(self) is not type(other):
            return False
        if not _declares_props(type(self)):
            # An op that does not declare its props is only equal to itself.
            return self is other
        return self._props() == other._props()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        if not _declares_props(type(self)):
            return id(self)
        return hash((type(self), self._props()))

    def __str__(self) -> str:
        name = getattr(self, "_name", None)
        if name is not None:
            return name
        if not self.__props__:
            return type(self).__name__
        props = ",".join(f"{p}={_prop_str(getattr(self, p))}" for p in self.__props__)
        return f"{type(self).__name__}{{{props}}}"

    def __repr__(self) -> str:
        return str(self)

    @property
    def name(self) -> str:
        """The op's display name (seed 003: ``'Elemwise{mul,no_inplace}'``)."""
        return str(self)

    @name.setter
    def name(self, value: str) -> None:
        self._name = value


@cache  # a class's MRO does not change; equality and hashing ask this on every call
def _declares_props(cls: type) -> bool:
    """True if some class below ``Op`` in ``cls``'s MRO sets ``__props__``."""
    return any("__props__" in c.__dict__ for c in cls.__mro__ if c is not Op)


def _prop_str(value: Any) -> str:
    if isinstance(value, tuple):
        return "(" + ", ".join(_prop_str(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return str(value)
