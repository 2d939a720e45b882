"""``Elemwise`` maps a scalar op over tensors; ``DimShuffle`` makes broadcasting explicit.

Inputs of lower rank are given leading broadcastable dimensions by a
``DimShuffle`` in the graph itself, so every input of an ``Elemwise`` node has
the output's rank (seed 003):

>>> import symlab.tensor as st
>>> x = st.dmatrix("x")
>>> y = x * 2.0
>>> y.owner.inputs[1].owner.op, y.owner.inputs[1].owner.inputs
(DimShuffle{x,x}, [TensorConstant{2.0}])

A size-1 dimension broadcasts only when the type says so (static size 1):
broadcasting decided at run time would make gradients wrong, so it is an
error, as in PyTensor.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Variable
from symlab.graph.inner_graph import HasInnerGraph, InnerSection
from symlab.graph.null_type import grad_undefined
from symlab.graph.op import Op
from symlab.scalar.basic import Cast, ScalarOp
from symlab.scalar.composite import Composite
from symlab.tensor.conversion import as_tensor_input, as_tensor_variable, constant, is_weak
from symlab.tensor.type import TensorType

#: Gradient rules of elemwise ops, by scalar op name:
#: ``rule(inputs, output, output_grad) -> [grad of each input or None]``.
#: The grads have the output's (broadcast) shape; ``Elemwise`` sums them back.
ELEMWISE_GRADS: dict[str, Callable[[list[Variable], Variable, Variable], list[Variable | None]]] = {}


class DimShuffle(Op):
    """Reorder dimensions, drop size-1 ones and insert new ones (``'x'``).

    ``DimShuffle(2, (1, 0))`` transposes a matrix; ``DimShuffle(0, ('x', 'x'))``
    turns a scalar into a 1x1 matrix. The output is a view of the input.
    ``inplace=True`` changes only the name, ``InplaceDimShuffle{1,0}``: the
    ``inplace`` rewrite phase marks the views of the optimized graph so.
    """

    __props__ = ("input_ndim", "new_order", "inplace")
    view_map = {0: [0]}

    def __init__(self, input_ndim: int, new_order: Sequence[int | str], inplace: bool = False) -> None:
        self.inplace = bool(inplace)
        new_order = tuple(new_order)
        for entry in new_order:
            if entry != "x" and not (isinstance(entry, int | np.integer) and 0 <= entry < input_ndim):
                raise ValueError(
                    f"DimShuffle: pattern entries must be 'x' or axes 0..{input_ndim - 1}, received {entry!r} "
                    f"in {new_order}"
                )
        kept = [int(e) for e in new_order if e != "x"]
        if len(set(kept)) != len(kept):
            raise ValueError(f"DimShuffle: an axis appears twice in {new_order}")
        self.input_ndim = int(input_ndim)
        self.new_order = tuple(e if e == "x" else int(e) for e in new_order)
        self.shuffle = tuple(kept)
        self.drop = tuple(i for i in range(input_ndim) if i not in kept)
        self.augment = tuple(k for k, e in enumerate(self.new_order) if e == "x")

    @property
    def is_transpose_only(self) -> bool:
        return not self.drop and not self.augment

    def __str__(self) -> str:
        prefix = "InplaceDimShuffle{" if self.inplace else "DimShuffle{"
        return prefix + ",".join(str(e) for e in self.new_order) + "}"

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        if x.ndim != self.input_ndim:
            raise TypeError(
                f"{self}: expected an input of {self.input_ndim} dimensions, received {x} of type {x.type}"
            )
        for d in self.drop:
            if x.type.shape[d] != 1:
                raise ValueError(
                    f"{self}: cannot drop dimension {d} of {x} ({x.type}): only dimensions of static "
                    "size 1 can be dropped"
                )
        shape = tuple(1 if e == "x" else x.type.shape[e] for e in self.new_order)
        return Apply(self, [x], [TensorType(x.dtype, shape)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        (x,) = inputs
        y = np.squeeze(x, axis=self.drop) if self.drop else x
        if self.shuffle != tuple(sorted(self.shuffle)):
            rank = {axis: k for k, axis in enumerate(sorted(self.shuffle))}
            y = np.transpose(y, [rank[a] for a in self.shuffle])
        if self.augment:
            y = np.expand_dims(y, self.augment)
        output_storage[0][0] = y

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: Sequence[Sequence[Variable]]) -> list:
        (shape,) = input_shapes
        return [tuple(constant(1, dtype="int64") if e == "x" else shape[e] for e in self.new_order)]

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        (x,) = inputs
        (gz,) = output_grads
        # The gradient's methods (``gz.sum``) are TensorVariable's, whose module sits above every op.
        if self.augment:
            if all(gz.type.shape[k] == 1 for k in self.augment):
                gz = DimShuffle(gz.ndim, [k for k in range(gz.ndim) if k not in self.augment])(gz)
            else:
                gz = gz.sum(axis=self.augment)
        # gz now has the kept axes in shuffle order; put them back and re-add dropped ones.
        position = {axis: k for k, axis in enumerate(self.shuffle)}
        back = tuple("x" if i in self.drop else position[i] for i in range(self.input_ndim))
        if back != tuple(range(gz.ndim)):
            gz = DimShuffle(gz.ndim, back)(gz)
        return [gz]

    def R_op(self, inputs, eval_points):  # noqa: N802
        if eval_points[0] is None:
            return [None]
        return [self(eval_points[0])]


class Elemwise(Op):
    """Apply ``scalar_op`` to every element of its inputs, with broadcasting.

    ``inplace_pattern`` maps an output to the input whose memory it may
    reuse: ``{0: 0}`` writes the result into input 0 (``Elemwise{add,inplace}``).
    """

    __props__ = ("scalar_op", "inplace_pattern")

    def __init__(self, scalar_op: ScalarOp, inplace_pattern: dict[int, int] | None = None) -> None:
        if not isinstance(scalar_op, ScalarOp):
            raise TypeError(f"Elemwise expects a ScalarOp, received {type(scalar_op).__name__}")
        self.scalar_op = scalar_op
        self.inplace_pattern = tuple(sorted((inplace_pattern or {}).items()))
        self.destroy_map = {o: [i] for o, i in self.inplace_pattern}

    def __str__(self) -> str:
        return f"Elemwise{{{self.scalar_op},{'inplace' if self.inplace_pattern else 'no_inplace'}}}"

    # -- an inner graph, when the scalar op is a fused Composite ----------------------
    @property
    def has_inner_graph(self) -> bool:
        """True for an ``Elemwise`` of an op with an inner graph (a fused ``Composite``)."""
        return isinstance(self.scalar_op, HasInnerGraph)

    @property
    def inner_graph_op(self) -> HasInnerGraph | None:
        """The fused Composite this op applies, or None."""
        return self.scalar_op if isinstance(self.scalar_op, HasInnerGraph) else None

    def inner_sections(self, node: Apply, fgraph: Any = None) -> list[InnerSection]:
        """The scalar op's inner graph, its inputs wired to this node's tensors (empty for other ops)."""
        if not isinstance(self.scalar_op, HasInnerGraph):
            return []
        return self.scalar_op.inner_sections(node, fgraph)

    # -- building ---------------------------------------------------------------------
    def make_node(self, *inputs: Any) -> Apply:
        op = self.scalar_op
        if op.nin >= 0 and len(inputs) != op.nin:
            raise TypeError(f"{self} takes {op.nin} inputs, received {len(inputs)}")
        weak = [is_weak(i) for i in inputs]
        tensors = [as_tensor_input(i, self, k) for k, i in enumerate(inputs)]
        dtype_args = [
            _weak_value(t) if w and not all(weak) else t.dtype for t, w in zip(tensors, weak)
        ]
        try:
            # an op with several outputs (a Composite) gives each output its own dtype
            out_dtypes = list(op.output_dtypes(*dtype_args)) if op.nout > 1 else [op.output_dtype(*dtype_args)]
        except TypeError as err:
            described = ", ".join(f"{t} ({t.type})" for t in tensors)
            raise TypeError(f"{self}: inputs {described} are not accepted: {err}") from None
        ndim = max((t.ndim for t in tensors), default=0)
        tensors = [
            t if t.ndim == ndim else DimShuffle(t.ndim, ("x",) * (ndim - t.ndim) + tuple(range(t.ndim)))(t)
            for t in tensors
        ]
        shape = _broadcast_static_shapes(self, tensors)
        for o, i in self.inplace_pattern:
            want = TensorType(out_dtypes[o], shape) if o < len(out_dtypes) else "no such output"
            if i >= len(tensors) or tensors[i].type != want:
                got = tensors[i].type if i < len(tensors) else "no such input"
                raise TypeError(
                    f"{self}: output {o} cannot be written into input {i} ({got}): an inplace output needs an "
                    f"input of the output's type {want}"
                )
        outputs = [TensorType(dtype, shape)() for dtype in out_dtypes]
        return Apply(self, tensors, outputs)

    # -- computing ---------------------------------------------------------------------------
    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        check_runtime_broadcast(node, inputs)
        with np.errstate(all="ignore"):
            result = self.scalar_op.impl(*inputs)
        # A scalar op with several outputs (a Composite) returns a tuple.
        results = result if len(node.outputs) > 1 else (result,)
        destroyed = self.destroy_map  # {output: [input]}, from inplace_pattern
        for k, (out, value) in enumerate(zip(node.outputs, results)):
            value = np.asarray(value, dtype=out.type.dtype)
            if k in destroyed:
                # Write into the destroyed input's buffer (a read-only one, such as
                # a constant's, raises). A NumPy scalar has no buffer to reuse.
                target = inputs[destroyed[k][0]]
                if isinstance(target, np.ndarray):
                    np.copyto(target, value)
                    value = target
            output_storage[k][0] = value

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: Sequence[Sequence[Variable]]) -> list:
        out_shape = []
        for d, size in enumerate(node.outputs[0].type.shape):
            if size is not None:
                out_shape.append(constant(size, dtype="int64"))
                continue
            # the first input that is not statically broadcastable in d gives the size
            for inp, shp in zip(node.inputs, input_shapes):
                if inp.type.shape[d] != 1:
                    out_shape.append(shp[d])
                    break
            else:
                out_shape.append(input_shapes[0][d])
        return [tuple(out_shape)] * len(node.outputs)

    # -- differentiating ---------------------------------------------------------------------
    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        if isinstance(self.scalar_op, Composite) or self.scalar_op.nout != 1:
            raise NotImplementedError(
                f"{self}: the gradient of a fused Composite is not implemented; fusion runs after "
                "differentiation, so take the gradient of the unfused graph"
            )
        rule = ELEMWISE_GRADS.get("cast" if isinstance(self.scalar_op, Cast) else self.scalar_op.name)
        if rule is None:
            return [grad_undefined(self, k, inp, "it is not differentiable") for k, inp in enumerate(inputs)]

        out = outputs[0]
        grads = rule(list(inputs), out, output_grads[0])
        result = []
        for inp, g in zip(inputs, grads):
            if g is None or not isinstance(g, Variable) or not isinstance(g.type, TensorType):
                result.append(g)
                continue
            axes = [d for d in range(out.ndim) if inp.type.shape[d] == 1 and g.type.shape[d] != 1]
            if axes:  # the methods (sum, astype) are TensorVariable's, whose module sits above every op
                g = g.sum(axis=axes, keepdims=True)
            if g.dtype != inp.dtype and inp.dtype.startswith(("float", "complex")):
                g = g.astype(inp.dtype)
            result.append(g)
        return result


def _weak_value(t: Variable) -> Any:
    """The Python number a weak constant stands for, for dtype promotion."""
    return t.data.item()


def _broadcast_static_shapes(op: Op, tensors: list[Variable]) -> tuple[int | None, ...]:
    ndim = tensors[0].ndim if tensors else 0
    shape: list[int | None] = []
    for d in range(ndim):
        sizes = [t.type.shape[d] for t in tensors]
        known = {s for s in sizes if s is not None and s != 1}
        if len(known) > 1:
            detail = ", ".join(f"input {k} {t} has {t.type}" for k, t in enumerate(tensors))
            raise ValueError(
                f"{op}: static sizes {sorted(known)} in dimension {d} cannot broadcast together ({detail})"
            )
        if known:
            shape.append(known.pop())
        elif all(s == 1 for s in sizes):
            shape.append(1)
        else:
            shape.append(None)
    return tuple(shape)


def check_runtime_broadcast(node: Apply, values: Sequence[np.ndarray]) -> None:
    """Refuse values whose sizes differ in a dimension that is not statically broadcastable."""
    if len(values) < 2:
        return
    ndim = node.outputs[0].type.ndim
    for d in range(ndim):
        size = None
        for inp, v in zip(node.inputs, values):
            if inp.type.shape[d] == 1:
                continue
            n = v.shape[d]
            if size is None:
                size = n
            elif n != size:
                shapes = ", ".join(str(np.shape(v)) for v in values)
                raise ValueError(
                    f"{node.op}: input shapes {shapes} do not match in dimension {d} "
                    f"({size} and {n}); a size-1 dimension broadcasts only when its static "
                    "shape is 1 (use specify_shape or a broadcastable type)"
                )
