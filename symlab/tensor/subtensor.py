"""Indexing (``x[idx]``) and writing into the indexed part of a tensor: the four ops and the user functions.

Basic indexing (integers, slices, ``...``, ``None``) is a ``Subtensor`` op
whose output is a view of its input; integer-array and boolean-mask indexing
is an ``AdvancedSubtensor`` op, whose output is a copy, as in NumPy. The
structure of the index is part of the op (``idx_list``); the symbolic
integers in it are extra inputs of the node:

>>> import numpy as np
>>> import symlab.tensor as st
>>> x = st.dmatrix("x")
>>> i = st.lscalar("i")
>>> y = x[i, 1:]
>>> y.owner.op, y.owner.inputs
(Subtensor{int64, 1:}, [x, i])
>>> y.eval({x: np.arange(6.0).reshape(2, 3), i: -1})
array([4., 5.])

How an index is read into ``idx_list`` is :mod:`symlab.tensor.subtensor_index`; the shape of the result,
:mod:`symlab.tensor.subtensor_shape`.

``set_subtensor`` and ``inc_subtensor`` take an indexed variable and return
the *whole* tensor, with the indexed part replaced or incremented:

>>> v = st.dvector("v")
>>> st.inc_subtensor(v[[0, 0, 2]], 1.0).eval({v: np.zeros(4)})
array([2., 0., 1., 0.])
>>> st.set_subtensor(v[1:3], 5.0).eval({v: np.zeros(4)})
array([0., 5., 5., 0.])
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Constant, Variable
from symlab.graph.null_type import disconnected
from symlab.graph.op import Op
from symlab.tensor.alloc import arange
from symlab.tensor.basic import cast
from symlab.tensor.conversion import as_tensor_variable, constant, is_weak
from symlab.tensor.elemwise import DimShuffle
from symlab.tensor.math import eq, second, switch
from symlab.tensor.reduction import sum as tsum
from symlab.tensor.shape_of import specify_shape
from symlab.tensor.subtensor_index import (
    IndexEntry,
    IndexVar,
    consumed_dims,
    entry_str,
    expand_ellipsis,
    holds_variables,
    index_entry,
    is_array_index,
    normalize_idx_list,
    placeholders,
    split_index,
    substitute,
)
from symlab.tensor.subtensor_shape import UNKNOWN, AdvancedIndex, as_int64, indexed_shape
from symlab.tensor.type import TensorType

__all__ = [
    "AdvancedIncSubtensor",
    "AdvancedSubtensor",
    "IncSubtensor",
    "Subtensor",
    "getitem",
    "inc_subtensor",
    "set_subtensor",
]


# =========================================================================================
# Ops
# =========================================================================================
class _IndexOp(Op):
    """What the four indexing ops share: ``idx_list`` and its checks."""

    advanced = False
    idx_list: tuple[IndexEntry, ...]

    def _init_idx(self, idx_list: Sequence[Any]) -> None:
        self.idx_list = normalize_idx_list(type(self).__name__, idx_list, self.advanced)

    def _index_str(self) -> str:
        return ", ".join(entry_str(e) for e in self.idx_list)

    def _check_index(self, x: Any, index: Sequence[Any]) -> tuple[Variable, list[Variable]]:
        """Convert and check ``x`` and the index inputs; return them."""
        x = as_tensor_variable(x)
        wanted = placeholders(self.idx_list)
        if len(index) != len(wanted):
            raise TypeError(f"{self}: expected {len(wanted)} index inputs ({wanted}), received {len(index)}")
        index = [as_tensor_variable(v) for v in index]
        for k, (ph, v) in enumerate(zip(wanted, index)):
            if v.dtype != ph.dtype or v.ndim != ph.ndim:
                raise TypeError(f"{self}: index input {k} must be {ph.describe()}, received {v} ({v.type})")
        used = builtins.sum(consumed_dims(e) for e in self.idx_list)
        if used > x.ndim:
            raise IndexError(
                f"{self}: too many indices for {x} ({x.type}): {used} dimensions are indexed, but it has {x.ndim}"
            )
        dim = 0
        for e, value in zip(self.idx_list, substitute(self.idx_list, index)):
            self._check_static_entry(x, dim, e, value)
            dim += consumed_dims(e)
        return x, index

    def _check_static_entry(self, x: Variable, dim: int, e: IndexEntry, value: Any) -> None:
        if e is None or e is Ellipsis or isinstance(e, tuple):
            return
        if isinstance(e, IndexVar) and e.is_mask:
            for k, (want, got) in enumerate(zip(x.type.shape[dim:], value.type.shape)):
                if want is not None and got is not None and want != got:
                    raise IndexError(
                        f"{self}: boolean index {value} ({value.type}) does not match dimension {dim + k} "
                        f"of {x} ({x.type}): {got} != {want}"
                    )
            return
        n = x.type.shape[dim]
        if n is None or (isinstance(value, Variable) and not isinstance(value, Constant)):
            return
        values = np.asarray(value.data if isinstance(value, Constant) else value)
        bad = values[(values < -n) | (values >= n)]
        if bad.size:
            raise IndexError(
                f"{self}: index {bad.flat[0]} is out of range for dimension {dim} of {x} ({x.type}), of size {n}"
            )

    def _shape_entries(self, index: Sequence[Variable], symbolic_shapes: Sequence[Any] | None) -> list:
        """``idx_list`` ready for :func:`indexed_shape`, statically or symbolically."""

        def resolve(v: Variable, k: int) -> Any:
            if v.ndim == 0:
                if isinstance(v, Constant):
                    return int(v.data)
                return v if symbolic_shapes is not None else UNKNOWN
            if v.dtype == "bool":
                if symbolic_shapes is not None:
                    count = tsum(v)
                else:
                    count = int(v.data.sum()) if isinstance(v, Constant) else UNKNOWN
                return AdvancedIndex((count,), v.ndim)
            if symbolic_shapes is not None:
                return AdvancedIndex(tuple(symbolic_shapes[k]))
            return AdvancedIndex(tuple(UNKNOWN if s is None else s for s in v.type.shape))

        resolved = [resolve(v, k) for k, v in enumerate(index)]
        return substitute(self.idx_list, resolved)

    def _static_shape(self, x: Variable, index: Sequence[Variable]) -> tuple[int | None, ...]:
        shape = [UNKNOWN if s is None else s for s in x.type.shape]
        out = indexed_shape(shape, self._shape_entries(index, None), str(self))
        return tuple(None if s is UNKNOWN else s for s in out)

    def _symbolic_shape(self, node: Apply, input_shapes: Sequence[Sequence[Variable]]) -> tuple:
        """Symbolic shape of ``x[idx]``, for a node with inputs ``x, *index``."""
        entries = self._shape_entries(node.inputs[1:], input_shapes[1:])
        shape = [int(s.data) if isinstance(s, Constant) else s for s in input_shapes[0]]
        return tuple(as_int64(s) for s in indexed_shape(shape, entries, str(self)))

    def _numpy_index(self, values: Sequence[Any]) -> tuple:
        """The NumPy index that ``idx_list`` stands for, given the index input values."""

        def convert(v: Any) -> Any:
            v = np.asarray(v)
            return int(v) if v.ndim == 0 else v

        return tuple(
            slice(*e) if isinstance(e, tuple) else e for e in substitute(self.idx_list, [convert(v) for v in values])
        )


class _BaseSubtensor(_IndexOp):
    __props__ = ("idx_list",)

    def __init__(self, idx_list: Sequence[Any]) -> None:
        self._init_idx(idx_list)

    def __str__(self) -> str:
        return f"{type(self).__name__}{{{self._index_str()}}}"

    def make_node(self, x: Any, *index: Any) -> Apply:
        x, index = self._check_index(x, index)
        return Apply(self, [x, *index], [TensorType(x.dtype, self._static_shape(x, index))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, *index = inputs
        output_storage[0][0] = np.asarray(x[self._numpy_index(index)])

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: Sequence[Sequence[Variable]]) -> list:
        symbolic = self._symbolic_shape(node, input_shapes)
        static = node.outputs[0].type.shape
        return [tuple(s if n is None else constant(n, dtype="int64") for s, n in zip(symbolic, static))]

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        x, *index = inputs
        (g,) = output_grads
        zeros = second(x, constant(0, dtype=g.dtype))
        inc = (AdvancedIncSubtensor if self.advanced else IncSubtensor)(self.idx_list)
        return [inc(zeros, g, *index)] + [disconnected() for _ in index]

    def R_op(self, inputs, eval_points):  # noqa: N802
        if eval_points[0] is None:
            return [None]
        return [self(eval_points[0], *inputs[1:])]


class Subtensor(_BaseSubtensor):
    """Basic indexing: ``x[1, 2:5, ::-1]``; the output is a view of ``x``.

    ``idx_list`` has one entry per indexed dimension: an int, a slice
    ``(start, stop, step)`` or an ``IndexVar`` placeholder for a symbolic
    integer, which is then an input of the node after ``x``.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x = st.tensor("float64", shape=(4, None), name="x")
    >>> op = Subtensor([slice(None, None, -2), 0])
    >>> y = op(x)
    >>> y, y.type
    (Subtensor{::-2, 0}.0, TensorType(float64, (2,)))
    >>> y.eval({x: np.arange(8.0).reshape(4, 2)})
    array([6., 2.])
    """

    view_map = {0: [0]}


class AdvancedSubtensor(_BaseSubtensor):
    """Integer-array and boolean-mask indexing, mixed with basic entries; copies.

    ``idx_list`` may also hold ``None`` (a new axis) and array placeholders.
    Integer arrays broadcast together as in NumPy:

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x = st.dmatrix("x")
    >>> y = x[[1, 0], [0, 2]]
    >>> y.owner.op
    AdvancedSubtensor{int64[:], int64[:]}
    >>> y.eval({x: np.arange(6.0).reshape(2, 3)})
    array([3., 2.])
    >>> x[x > 2.0].eval({x: np.arange(6.0).reshape(2, 3)})
    array([3., 4., 5.])
    """

    advanced = True


class _BaseIncSubtensor(_IndexOp):
    __props__ = ("idx_list", "set_instead_of_inc")

    def __init__(self, idx_list: Sequence[Any], set_instead_of_inc: bool = False) -> None:
        self._init_idx(idx_list)
        self.set_instead_of_inc = bool(set_instead_of_inc)

    def __str__(self) -> str:
        name = type(self).__name__
        if self.set_instead_of_inc:
            name = name.replace("Inc", "Set")
        return f"{name}{{{self._index_str()}}}"

    def _view_op(self) -> _BaseSubtensor:
        return (AdvancedSubtensor if self.advanced else Subtensor)(self.idx_list)

    def make_node(self, x: Any, y: Any, *index: Any) -> Apply:
        x, index = self._check_index(x, index)
        y = as_tensor_variable(y)
        view_shape = self._static_shape(x, index)
        if y.dtype != x.dtype:
            raise TypeError(
                f"{self}: y ({y}, {y.type}) must have the dtype of x ({x}, {x.type}); "
                "set_subtensor and inc_subtensor cast it when that loses nothing"
            )
        if y.ndim > len(view_shape):
            raise ValueError(
                f"{self}: y ({y}, {y.type}) has more dimensions than the indexed part of {x}, "
                f"of static shape {view_shape}"
            )
        for d, size in enumerate(y.type.shape):
            want = view_shape[len(view_shape) - y.ndim + d]
            if size is not None and size != 1 and want is not None and size != want:
                raise ValueError(
                    f"{self}: y ({y}, {y.type}) cannot broadcast to the indexed part of {x}, of static "
                    f"shape {view_shape}"
                )
        return Apply(self, [x, y, *index], [x.type()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, y, *index = inputs
        out = x.copy()
        where = self._numpy_index(index)
        _check_runtime_broadcast(self, node, np.shape(out[where]), y)
        if self.set_instead_of_inc:
            out[where] = y
        else:
            self._increment(out, where, y)
        output_storage[0][0] = out

    def _increment(self, out: np.ndarray, where: tuple, y: np.ndarray) -> None:
        out[where] += y

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: Sequence[Sequence[Variable]]) -> list:
        return [tuple(input_shapes[0])]

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        x, y, *index = inputs
        (g,) = output_grads
        if self.set_instead_of_inc:
            gx = type(self)(self.idx_list, set_instead_of_inc=True)(g, constant(0, dtype=g.dtype), *index)
        else:
            gx = g
        gy = self._view_op()(g, *index)
        if self._last_write_wins() and _may_repeat(index):
            gy = switch(self._landed(x, index), gy, constant(0, dtype=gy.dtype))
        return [gx, _sum_to(gy, y)] + [disconnected() for _ in index]

    def _last_write_wins(self) -> bool:
        """True if, of several writes to one position, only one lands (a set, or an increment that ignores
        duplicates: NumPy's ``x[idx] = y`` and ``x[idx] += y``); False if they accumulate."""
        return self.set_instead_of_inc or getattr(self, "ignore_duplicates", False)

    def _landed(self, x: Variable, index: Sequence[Variable]) -> Variable:
        """A boolean of the indexed part's shape: True where the write of ``y``'s element lands.

        A repeated position is written once per repetition and keeps one of the writes (NumPy's, and
        every backend's, is the last); the others are overwritten and do not reach the output, so
        their gradient is zero. The positions are found by this op itself writing their numbers:
        whichever write a backend keeps, the gradient agrees with it.
        """
        view = self._view_op()(x, *index)
        numbers = arange(view.size, dtype="int64").reshape(view.shape, ndim=view.ndim)
        written = type(self)(self.idx_list, set_instead_of_inc=True)(
            second(x, constant(-1, dtype="int64")), numbers, *index
        )
        return eq(self._view_op()(written, *index), numbers)


class IncSubtensor(_BaseIncSubtensor):
    """``x`` with ``x[idx]`` incremented by (or, ``set_instead_of_inc``, set to) ``y``.

    The index is basic (as in :class:`Subtensor`); the output is a copy of
    ``x``. Users write :func:`inc_subtensor` and :func:`set_subtensor`.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x, y = st.dvector("x"), st.dscalar("y")
    >>> z = IncSubtensor([slice(1, None)], set_instead_of_inc=True)(x, y)
    >>> z.owner.op
    SetSubtensor{1:}
    >>> z.eval({x: np.zeros(3), y: 2.0})
    array([0., 2., 2.])
    """


class AdvancedIncSubtensor(_BaseIncSubtensor):
    """Increment or set ``x[idx]`` for an advanced index.

    Repeated indices accumulate (``np.add.at``) unless ``ignore_duplicates``,
    which keeps only one of the increments, as ``x[idx] += y`` does in NumPy.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x, i = st.dvector("x"), st.lvector("i")
    >>> z = st.inc_subtensor(x[i], 1.0)
    >>> z.owner.op
    AdvancedIncSubtensor{int64[:]}
    >>> z.eval({x: np.zeros(3), i: [2, 2, 0]})
    array([1., 0., 2.])
    """

    __props__ = ("idx_list", "set_instead_of_inc", "ignore_duplicates")
    advanced = True

    def __init__(
        self, idx_list: Sequence[Any], set_instead_of_inc: bool = False, ignore_duplicates: bool = False
    ) -> None:
        super().__init__(idx_list, set_instead_of_inc)
        self.ignore_duplicates = bool(ignore_duplicates)

    def _increment(self, out: np.ndarray, where: tuple, y: np.ndarray) -> None:
        if self.ignore_duplicates:
            out[where] += y
        else:
            np.add.at(out, where, y)


def _check_runtime_broadcast(op: Op, node: Apply, target: tuple[int, ...], y: np.ndarray) -> None:
    """Refuse a ``y`` that broadcasts in a dimension whose static size is not 1."""
    static = node.inputs[1].type.shape
    for d, size in enumerate(np.shape(y)):
        want = target[len(target) - len(static) + d]
        if static[d] != 1 and size != want:
            raise ValueError(
                f"{op}: y has shape {np.shape(y)}, which does not fit the indexed part of x, of shape "
                f"{target} (dimension {d}); a size-1 dimension broadcasts only when its static shape is 1"
            )


def _may_repeat(index: Sequence[Variable]) -> bool:
    """False if an advanced index provably names every position once (constant non-negative integer
    arrays whose broadcast rows are distinct, or boolean masks only); True otherwise."""
    arrays = [v for v in index if v.ndim > 0]
    if not builtins.all(isinstance(v, Constant) for v in arrays):
        return True
    integer = [np.asarray(v.data) for v in arrays if v.dtype != "bool"]
    if not integer:
        return False  # masks (and scalars) never repeat a position
    if len(integer) != len(arrays) or builtins.any(np.any(a < 0) for a in integer):
        return True  # a mask beside integer arrays, or a negative index that may alias a positive one
    try:
        rows = np.stack([a.ravel() for a in np.broadcast_arrays(*integer)], axis=-1)
    except ValueError:
        return True
    return len(np.unique(rows, axis=0)) != len(rows)


def _sum_to(g: Variable, y: Variable) -> Variable:
    """Sum ``g`` over the dimensions that ``y`` was broadcast along."""
    if g.ndim > y.ndim:
        g = tsum(g, axis=tuple(range(g.ndim - y.ndim)))
    axes = [d for d in range(y.ndim) if y.type.shape[d] == 1 and g.type.shape[d] != 1]
    return tsum(g, axis=axes, keepdims=True) if axes else g



# =========================================================================================
# User functions
# =========================================================================================
def getitem(x: Any, index: Any) -> Variable:
    """``x[index]`` with NumPy's semantics; ``Variable.__getitem__`` calls it.

    Integers, slices, ``...`` and ``None`` make a :class:`Subtensor` (with a
    ``DimShuffle`` after it for new axes); integer arrays (variables, lists,
    arrays) or boolean masks make an :class:`AdvancedSubtensor`. Symbolic
    integer scalars may appear anywhere an int may.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x = st.tensor("float64", shape=(3, 4), name="x")
    >>> x[1].type, x[:, None, 1:3].type, x[..., ::-1].type
    (TensorType(float64, (4,)), TensorType(float64, (3, 1, 2)), TensorType(float64, (3, 4)))
    >>> i, j = st.lscalars("i", "j")
    >>> x[i:j, -1].eval({x: np.arange(12.0).reshape(3, 4), i: 1, j: 3})
    array([ 7., 11.])
    >>> x[1.0]
    Traceback (most recent call last):
    ...
    TypeError: getitem: cannot index x (TensorType(float64, (3, 4))) with float 1.0: a float64 index is not an integer; indices must be integers, slices, ..., None, integer arrays or boolean masks
    """
    x = as_tensor_variable(x)
    raw = index if isinstance(index, tuple) else (index,)
    entries = expand_ellipsis(x, [index_entry(x, e) for e in raw])
    if builtins.any(is_array_index(e) for e in entries):
        idx_list, inputs = split_index(entries)
        return AdvancedSubtensor(idx_list)(x, *inputs)
    idx_list, inputs = split_index([e for e in entries if e is not None])
    out = Subtensor(idx_list)(x, *inputs)
    if len(idx_list) == len(entries):
        return out
    pattern: list[int | str] = []
    for e in entries:  # new axes go where the Nones stand among the remaining dimensions
        if e is None:
            pattern.append("x")
        elif isinstance(e, tuple):
            pattern.append(len(pattern) - pattern.count("x"))
    kept = len(pattern) - pattern.count("x")
    pattern.extend(range(kept, out.ndim))
    return DimShuffle(out.ndim, pattern)(out)


def _indexing_node(x: Variable, fname: str) -> tuple[Apply, tuple[int, ...]]:
    """The (Advanced)Subtensor node that computed ``x``, and the new axes added after it."""
    node = x.owner
    if node is not None and isinstance(node.op, DimShuffle):
        ds = node.op
        inner = node.inputs[0].owner
        if not ds.drop and list(ds.shuffle) == sorted(ds.shuffle) and inner is not None:
            if isinstance(inner.op, _BaseSubtensor):
                return inner, ds.augment
    if node is None or not isinstance(node.op, _BaseSubtensor):
        made_by = "an input" if node is None else f"the output of {node.op}"
        raise TypeError(f"{fname}: x must be an indexed tensor such as v[idx]; {x} is {made_by}")
    return node, ()


def _as_update(y: Any, x: Variable, fname: str) -> Variable:
    """``y`` with the dtype of ``x``: values are converted, variables cast if that loses nothing."""
    if isinstance(y, list | tuple) and holds_variables(y):
        y = as_tensor_variable(y)
    if not isinstance(y, Variable) or is_weak(y):
        return as_tensor_variable(y.data.item() if isinstance(y, Constant) else y, dtype=x.dtype)
    y = as_tensor_variable(y)
    if y.dtype != x.dtype:
        if not np.can_cast(y.dtype, x.dtype):
            raise TypeError(
                f"{fname}: cannot write {y} ({y.type}) into {x} ({x.type}) without losing precision; cast it first"
            )
        y = cast(y, x.dtype)
    return y


def inc_subtensor(x: Any, y: Any, set_instead_of_inc: bool = False, ignore_duplicates: bool = False) -> Variable:
    """The tensor that ``x`` indexes, with ``x`` incremented by ``y`` (which broadcasts).

    ``x`` must be an indexing result, ``v[idx]``; the answer has ``v``'s type.
    With an advanced index, repeated positions accumulate every increment
    (unless ``ignore_duplicates``).

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> m = st.dmatrix("m")
    >>> st.inc_subtensor(m[:, 1], [10.0, 20.0]).eval({m: np.zeros((2, 2))})
    array([[ 0., 10.],
           [ 0., 20.]])
    """
    fname = "set_subtensor" if set_instead_of_inc else "inc_subtensor"
    x = as_tensor_variable(x)
    node, new_axes = _indexing_node(x, fname)
    y = _as_update(y, x, fname)
    if y.ndim > x.ndim:
        raise ValueError(f"{fname}: y ({y}, {y.type}) has more dimensions than x ({x}, {x.type})")
    if new_axes:  # x is v[idx] with new axes: drop them from y
        y = DimShuffle(y.ndim, ("x",) * (x.ndim - y.ndim) + tuple(range(y.ndim)))(y)
        if builtins.any(y.type.shape[d] != 1 for d in new_axes):
            y = specify_shape(y, [1 if d in new_axes else None for d in range(y.ndim)])
        y = DimShuffle(y.ndim, [d for d in range(y.ndim) if d not in new_axes])(y)
    op = node.op
    if op.advanced:
        inc = AdvancedIncSubtensor(op.idx_list, set_instead_of_inc, ignore_duplicates)
    else:
        inc = IncSubtensor(op.idx_list, set_instead_of_inc)
    return inc(node.inputs[0], y, *node.inputs[1:])


def set_subtensor(x: Any, y: Any) -> Variable:
    """The tensor that ``x`` indexes, with ``x`` replaced by ``y`` (which broadcasts).

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> m = st.dmatrix("m")
    >>> st.set_subtensor(m[m < 0.0], 0.0).eval({m: np.array([[1.0, -2.0], [-3.0, 4.0]])})
    array([[1., 0.],
           [0., 4.]])
    """
    return inc_subtensor(x, y, set_instead_of_inc=True)
