r"""Two-dimensional pooling with Theano's semantics: ``pool_2d`` and its ops.

``pool_2d(input, ws, ignore_border, stride, pad, mode)`` slides a window of
``ws`` pixels over the last two dimensions of an N-d input (N >= 2), moving it
by ``stride`` pixels (``ws`` by default: windows that do not overlap), and
keeps one number per window: the maximum, the sum, or the average
(``average_inc_pad`` counts the padding zeros in the window's size,
``average_exc_pad`` only the image's pixels; ``max`` and ``sum`` never see the
padding). ``ignore_border=True`` keeps complete windows only; ``False`` (the
default, as in Theano) also keeps the partial windows at the bottom and right
edges. ``pad`` adds that many zeros above and below, left and right (Theano
requires ``ignore_border=True`` for it, and ``pad < ws``).

>>> import numpy as np
>>> import symlab.tensor as st
>>> from symlab.tensor.signal import pool
>>> x = st.dmatrix("x")
>>> image = np.arange(25.0).reshape(5, 5)
>>> pool.pool_2d(x, ws=(2, 2), ignore_border=True).eval({x: image})
array([[ 6.,  8.],
       [16., 18.]])
>>> pool.pool_2d(x, ws=(2, 2), ignore_border=False, mode="sum").eval({x: image})
array([[12., 20., 13.],
       [52., 60., 33.],
       [41., 45., 24.]])

Where no window fits (a window larger than the padded image with
``ignore_border=True``), Theano returned an empty array; symlab raises an
error that names the window and the input's shape, as it does for an empty
image.

Unlike PyTensor, whose ``Pool`` takes ``ws``, ``stride`` and ``pad`` as
symbolic inputs, symlab's ops hold them as static props: they must be known
when the graph is built (Python ints, tuples, NumPy arrays or constant
variables), so that shapes are inferred statically and the Numba kernels
have them as literals.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Variable
from symlab.graph.op import Op
from symlab.tensor.alloc import zeros_like
from symlab.tensor.basic import as_tensor_variable, constant, get_scalar_constant_value
from symlab.tensor.math import maximum
from symlab.tensor.type import TensorType

#: The pooling modes, as Theano names them.
MODES = ("max", "sum", "average_inc_pad", "average_exc_pad")

Pair = tuple[int, int]


# -- parameters ------------------------------------------------------------------------------------
def _as_int(value: Any, what: str) -> int:
    """One entry of ``ws``/``stride``/``pad`` as a Python int (a constant variable is read)."""
    if isinstance(value, Variable):
        try:
            value = get_scalar_constant_value(value)
        except ValueError:
            raise TypeError(
                f"{what}: expected integers known when the graph is built (Python ints or constant "
                f"variables), received the symbolic variable {value} ({value.type}); symlab's Pool holds "
                "its window as a static property"
            ) from None
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise TypeError(f"{what}: expected integers, received {type(value).__name__} {value!r}")
    return int(value)


def _as_pair(value: Any, what: str) -> Pair:
    """``value`` (a pair of ints: tuple, list, array or constant vector) as a tuple of two Python ints."""
    if isinstance(value, Variable) and not isinstance(value.type, TensorType):
        raise TypeError(f"{what}: expected a pair of integers, received {value} ({value.type})")
    if isinstance(value, Variable) and value.type.ndim == 1 and hasattr(value, "data"):
        value = np.asarray(value.data)
    if isinstance(value, Variable):
        if value.type.ndim != 1:
            raise TypeError(f"{what}: expected a pair of integers, received {value} ({value.type})")
        raise TypeError(
            f"{what}: expected a pair of integers known when the graph is built, received the symbolic "
            f"vector {value} ({value.type}); symlab's Pool holds its window as a static property"
        )
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            raise TypeError(f"{what}: expected a pair of integers, received an array of shape {value.shape}")
        value = list(value)
    if not isinstance(value, list | tuple):
        raise TypeError(f"{what}: expected a pair of integers, received {type(value).__name__} {value!r}")
    if len(value) != 2:
        raise ValueError(f"{what}: expected a pair of integers (one per pooled dimension), received {value!r}")
    return (_as_int(value[0], what), _as_int(value[1], what))


def _check_params(opname: str, ws: Pair, stride: Pair, pad: Pair, ignore_border: bool, mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"{opname}: mode must be one of {', '.join(map(repr, MODES))}, received {mode!r}")
    if min(ws) <= 0:
        raise ValueError(f"{opname}: the window size ws must be positive, received ws={ws}")
    if min(stride) <= 0:
        raise ValueError(f"{opname}: the stride must be positive, received stride={stride}")
    if min(pad) < 0:
        raise ValueError(f"{opname}: the padding must be zero or positive, received pad={pad}")
    if max(pad) > 0 and not ignore_border:
        raise NotImplementedError(
            f"{opname}: padding works only with ignore_border=True (as in Theano), received pad={pad} "
            "with ignore_border=False"
        )
    if any(p >= w for p, w in zip(pad, ws)):
        raise NotImplementedError(
            f"{opname}: the padding must be smaller than the window in each dimension (as in Theano), "
            f"received pad={pad} with ws={ws}"
        )


def output_size(size: int, ws: int, stride: int, pad: int, ignore_border: bool) -> int:
    """The number of windows along one pooled dimension of ``size`` pixels (Theano's rule).

    >>> output_size(5, 2, 2, 0, True), output_size(5, 2, 2, 0, False), output_size(5, 3, 1, 0, False)
    (2, 3, 3)
    """
    padded = size + 2 * pad
    if ignore_border:
        if ws == stride:
            return padded // stride
        return max((padded - ws) // stride + 1, 0)
    if stride >= ws:
        return (padded - 1) // stride + 1
    return max(0, (padded - 1 - ws + stride) // stride) + 1


def _symbolic_output_size(size: Variable, ws: int, stride: int, pad: int, ignore_border: bool) -> Variable:
    """:func:`output_size` of a symbolic size (int64 scalar): same rule, branches taken on the static props."""
    try:
        return constant(output_size(int(get_scalar_constant_value(size)), ws, stride, pad, ignore_border),
                        dtype="int64")
    except ValueError:
        pass
    padded = size + 2 * pad if pad else size
    if ignore_border:
        if ws == stride:
            return padded // stride
        return maximum((padded - ws) // stride + 1, 0)
    if stride >= ws:
        return (padded - 1) // stride + 1
    return maximum((padded - 1 - ws + stride) // stride, 0) + 1


# -- the NumPy computations (vectorised: loops only over the offsets inside a window) ----------------
def _fill_value(dtype: np.dtype, mode: str) -> Any:
    """What the area outside the image holds: never the maximum, and nothing in a sum."""
    if mode != "max":
        return 0
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _extent(size: int, n_out: int, ws: int, stride: int, pad: int) -> int:
    """The length of the padded axis that the windows cover (partial windows stick out of the image)."""
    return max(size + 2 * pad, (n_out - 1) * stride + ws)


def _embedded(x: np.ndarray, fill: Any, out_hw: Pair, ws: Pair, stride: Pair, pad: Pair) -> np.ndarray:
    """``x`` inside a larger array of ``fill`` that every window fits in, the image at offset ``pad``."""
    h, w = x.shape[-2:]
    shape = (*x.shape[:-2], *(_extent(s, n, k, t, p) for s, n, k, t, p in zip((h, w), out_hw, ws, stride, pad)))
    if shape[-2:] == (h, w):
        return x
    big = np.full(shape, fill, dtype=x.dtype)
    big[..., pad[0] : pad[0] + h, pad[1] : pad[1] + w] = x
    return big


def _window_counts(size: int, n_out: int, ws: int, stride: int, pad: int, include_pad: bool) -> np.ndarray:
    """Per window along one axis: the number of positions it averages over."""
    start = np.arange(n_out) * stride  # in the padded image
    end = start + ws
    if include_pad:
        return np.minimum(end, size + 2 * pad) - start
    return np.minimum(end, size + pad) - np.maximum(start, pad)


def _offset_slices(a: int, b: int, out_hw: Pair, stride: Pair) -> tuple[Any, ...]:
    """The positions (one per window) at offset ``(a, b)`` inside each window."""
    return (Ellipsis, slice(a, a + (out_hw[0] - 1) * stride[0] + 1, stride[0]),
            slice(b, b + (out_hw[1] - 1) * stride[1] + 1, stride[1]))


def _crop(big: np.ndarray, hw: Pair, pad: Pair) -> np.ndarray:
    return big[..., pad[0] : pad[0] + hw[0], pad[1] : pad[1] + hw[1]]


# -- the ops ----------------------------------------------------------------------------------------
class _PoolBase(Op):
    """The static parameters shared by ``Pool`` and its gradient ops, checked once."""

    __props__ = ("ws", "stride", "pad", "ignore_border", "mode")
    #: The number of pooled dimensions (Theano's ``ndim`` prop; symlab pools two).
    ndim = 2

    def __init__(self, ws: Any, ignore_border: bool = False, stride: Any = None, pad: Any = (0, 0),
                 mode: str = "max") -> None:
        name = type(self).__name__
        self.ws = _as_pair(ws, f"{name}: ws")
        self.stride = self.ws if stride is None else _as_pair(stride, f"{name}: stride")
        self.pad = (0, 0) if pad is None else _as_pair(pad, f"{name}: pad")
        self.ignore_border = bool(ignore_border)
        self.mode = mode
        _check_params(name, self.ws, self.stride, self.pad, self.ignore_border, mode)

    def _params(self) -> dict[str, Any]:
        return {"ws": self.ws, "stride": self.stride, "pad": self.pad, "ignore_border": self.ignore_border}

    def out_hw(self, hw: Sequence[int]) -> Pair:
        """The number of windows along the two pooled dimensions of an image of ``hw`` pixels."""
        return (output_size(hw[0], self.ws[0], self.stride[0], self.pad[0], self.ignore_border),
                output_size(hw[1], self.ws[1], self.stride[1], self.pad[1], self.ignore_border))

    def check_image(self, shape: Sequence[int | None], what: str) -> None:
        """Raise if an image of ``shape`` (sizes may be None) has no window to pool."""
        hw = tuple(shape[-2:])
        if any(s == 0 for s in hw):
            raise ValueError(f"{self}: {what} has shape {tuple(shape)}: its last two dimensions (the image) "
                             "must not be empty")
        if not self.ignore_border:
            return
        for d in range(2):
            if hw[d] is not None and hw[d] + 2 * self.pad[d] < self.ws[d]:
                padded = f" (padded by pad={self.pad})" if max(self.pad) else ""
                raise ValueError(
                    f"{self}: the window ws={self.ws} is larger than the image: {what} has shape {tuple(shape)}, "
                    f"an image of {hw}{padded}; with ignore_border=True no window fits (in dimension "
                    f"{len(shape) - 2 + d}); use a smaller ws or ignore_border=False to keep partial windows"
                )

    def _tensor(self, x: Any, what: str, float_only: bool) -> Variable:
        x = as_tensor_variable(x, what=f"{self}: {what}")
        if x.type.ndim < 2:
            raise TypeError(f"{self}: {what} must have at least 2 dimensions (the image is the last two), "
                            f"received {x} ({x.type}) of {x.type.ndim}")
        kind = np.dtype(x.type.dtype).kind
        if float_only and kind != "f":
            raise TypeError(f"{self}: {what} must be a floating tensor, received {x} ({x.type})")
        if kind not in "iuf":
            raise TypeError(f"{self}: {what} must be a real number tensor (integers or floats), received {x} ({x.type})")
        return x

    def _same_rank(self, x: Variable, other: Variable, what: str) -> None:
        if other.type.ndim != x.type.ndim:
            raise TypeError(f"{self}: {what} must have {x.type.ndim} dimensions like the input {x} ({x.type}), "
                            f"received {other} ({other.type})")

    def _pooled_type(self, x: Variable) -> TensorType:
        lead = x.type.shape[:-2]
        hw = x.type.shape[-2:]
        out_hw = tuple(None if s is None else output_size(s, k, t, p, self.ignore_border)
                       for s, k, t, p in zip(hw, self.ws, self.stride, self.pad))
        return TensorType(x.type.dtype, (*lead, *out_hw))


class Pool(_PoolBase):
    """Pooling of the last two dimensions (see :func:`pool_2d`).

    >>> import symlab.tensor as st
    >>> Pool((2, 2), ignore_border=True)(st.tensor4("x")).owner.op
    Pool{ws=(2, 2),stride=(2, 2),pad=(0, 0),ignore_border=True,mode=max}
    """

    @staticmethod
    def out_shape(imgshape: Sequence[Any], ws: Any, ignore_border: bool = False, stride: Any = None,
                  pad: Any = None, ndim: int = 2) -> list[Any]:
        """The shape of the output for an input of shape ``imgshape`` (ints or int64 scalar variables).

        >>> Pool.out_shape((10, 3, 5, 5), (2, 2), ignore_border=False)
        [10, 3, 3, 3]
        """
        if ndim != 2:
            raise NotImplementedError(f"Pool.out_shape: symlab pools 2 dimensions, received ndim={ndim}")
        ws = _as_pair(ws, "Pool.out_shape: ws")
        stride = ws if stride is None else _as_pair(stride, "Pool.out_shape: stride")
        pad = (0, 0) if pad is None else _as_pair(pad, "Pool.out_shape: pad")
        if len(imgshape) < 2:
            raise TypeError(f"Pool.out_shape: imgshape must have at least 2 dimensions, received {tuple(imgshape)}")
        out = list(imgshape[:-2])
        for d, size in enumerate(imgshape[-2:]):
            if isinstance(size, Variable):
                out.append(_symbolic_output_size(size, ws[d], stride[d], pad[d], ignore_border))
            else:
                out.append(output_size(int(size), ws[d], stride[d], pad[d], ignore_border))
        return out

    def make_node(self, x: Any) -> Apply:
        x = self._tensor(x, "input", float_only=False)
        if self.mode.startswith("average") and np.dtype(x.type.dtype).kind != "f":
            raise TypeError(f"{self}: the input of an average must be a floating tensor, received {x} ({x.type})")
        self.check_image(x.type.shape, f"input {x}")
        return Apply(self, [x], [self._pooled_type(x)()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        self.check_image(x.shape, "the input")
        hw = x.shape[-2:]
        out_hw = self.out_hw(hw)
        big = _embedded(x, _fill_value(x.dtype, self.mode), out_hw, self.ws, self.stride, self.pad)
        windows = np.lib.stride_tricks.sliding_window_view(big, self.ws, axis=(-2, -1))
        windows = windows[..., : out_hw[0] * self.stride[0] : self.stride[0], : out_hw[1] * self.stride[1] : self.stride[1], :, :]
        if self.mode == "max":
            out = windows.max(axis=(-2, -1))
        else:
            out = windows.sum(axis=(-2, -1), dtype=x.dtype)
            if self.mode != "sum":
                include = self.mode == "average_inc_pad"
                rows = _window_counts(hw[0], out_hw[0], self.ws[0], self.stride[0], self.pad[0], include)
                cols = _window_counts(hw[1], out_hw[1], self.ws[1], self.stride[1], self.pad[1], include)
                out = out / np.outer(rows, cols).astype(x.dtype)
        output_storage[0][0] = np.ascontiguousarray(out, dtype=x.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(self.out_shape(input_shapes[0], self.ws, self.ignore_border, self.stride, self.pad))]

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802 - PyTensor's name
        (x,), (out,), (gz,) = inputs, outputs, output_grads
        if np.dtype(x.type.dtype).kind != "f":
            return [zeros_like(x, dtype="float64")]
        if self.mode == "max":
            return [MaxPoolGrad(**self._params())(x, out, gz)]
        return [AveragePoolGrad(mode=self.mode, **self._params())(x, gz)]


class MaxPoolGrad(_PoolBase):
    """The gradient of max pooling: ``gz`` of each window goes to every pixel equal to its maximum.

    Inputs ``(x, maxout, gz)``: the image, the pooled maxima, the gradient of the pooled output.
    """

    def __init__(self, ws: Any, ignore_border: bool = False, stride: Any = None, pad: Any = (0, 0),
                 mode: str = "max") -> None:
        if mode != "max":
            raise ValueError(f"MaxPoolGrad: mode must be 'max', received {mode!r}")
        super().__init__(ws, ignore_border, stride, pad, mode)

    def make_node(self, x: Any, maxout: Any, gz: Any) -> Apply:
        x = self._tensor(x, "input x", float_only=True)
        maxout = self._tensor(maxout, "input maxout", float_only=True)
        gz = self._tensor(gz, "input gz", float_only=True)
        self._same_rank(x, maxout, "maxout")
        self._same_rank(x, gz, "gz")
        return Apply(self, [x, maxout, gz], [x.type()])

    def perform(self, node, inputs, output_storage):
        x, maxout, gz = inputs
        hw, out_hw = x.shape[-2:], maxout.shape[-2:]
        big = _embedded(x, _fill_value(x.dtype, "max"), out_hw, self.ws, self.stride, self.pad)
        gx = np.zeros(big.shape, dtype=x.dtype)
        gz = gz.astype(x.dtype, copy=False)
        for a in range(self.ws[0]):
            for b in range(self.ws[1]):
                at = _offset_slices(a, b, out_hw, self.stride)
                gx[at] += np.where(big[at] == maxout, gz, 0)
        output_storage[0][0] = np.ascontiguousarray(_crop(gx, hw, self.pad))

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[0])]

    def grad(self, inputs, output_grads):
        x, maxout, _ = inputs
        (ggx,) = output_grads
        return [zeros_like(x), zeros_like(maxout), DownsampleFactorMaxGradGrad(**self._params())(x, maxout, ggx)]


class AveragePoolGrad(_PoolBase):
    """The gradient of sum and average pooling: ``gz`` of each window (divided by its count) to each of its pixels.

    Inputs ``(x, gz)``: the image (for its shape) and the gradient of the pooled output.
    """

    def __init__(self, ws: Any, ignore_border: bool = False, stride: Any = None, pad: Any = (0, 0),
                 mode: str = "average_inc_pad") -> None:
        if mode == "max":
            raise ValueError("AveragePoolGrad: mode must be 'sum', 'average_inc_pad' or 'average_exc_pad', "
                             "received 'max' (its gradient is MaxPoolGrad)")
        super().__init__(ws, ignore_border, stride, pad, mode)

    def make_node(self, x: Any, gz: Any) -> Apply:
        x = self._tensor(x, "input x", float_only=True)
        gz = self._tensor(gz, "input gz", float_only=True)
        self._same_rank(x, gz, "gz")
        return Apply(self, [x, gz], [x.type()])

    def perform(self, node, inputs, output_storage):
        x, gz = inputs
        hw, out_hw = x.shape[-2:], gz.shape[-2:]
        shape = tuple(_extent(s, n, k, t, p) for s, n, k, t, p in zip(hw, out_hw, self.ws, self.stride, self.pad))
        gx = np.zeros((*x.shape[:-2], *shape), dtype=x.dtype)
        value = gz.astype(x.dtype, copy=False)
        if self.mode != "sum":
            include = self.mode == "average_inc_pad"
            rows = _window_counts(hw[0], out_hw[0], self.ws[0], self.stride[0], self.pad[0], include)
            cols = _window_counts(hw[1], out_hw[1], self.ws[1], self.stride[1], self.pad[1], include)
            value = value / np.outer(rows, cols).astype(x.dtype)
        for a in range(self.ws[0]):
            for b in range(self.ws[1]):
                gx[_offset_slices(a, b, out_hw, self.stride)] += value
        output_storage[0][0] = np.ascontiguousarray(_crop(gx, hw, self.pad))

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[0])]

    def grad(self, inputs, output_grads):
        x, _ = inputs
        (ggx,) = output_grads
        return [zeros_like(x), Pool(mode=self.mode, **self._params())(ggx)]


class DownsampleFactorMaxGradGrad(_PoolBase):
    """The gradient of :class:`MaxPoolGrad` with respect to ``gz``: per window, the sum of ``ggx`` over the
    pixels equal to its maximum (the output is shaped like ``maxout``).

    Inputs ``(x, maxout, ggx)``.
    """

    def __init__(self, ws: Any, ignore_border: bool = False, stride: Any = None, pad: Any = (0, 0),
                 mode: str = "max") -> None:
        if mode != "max":
            raise ValueError(f"DownsampleFactorMaxGradGrad: mode must be 'max', received {mode!r}")
        super().__init__(ws, ignore_border, stride, pad, mode)

    def make_node(self, x: Any, maxout: Any, ggx: Any) -> Apply:
        x = self._tensor(x, "input x", float_only=True)
        maxout = self._tensor(maxout, "input maxout", float_only=True)
        ggx = self._tensor(ggx, "input ggx", float_only=True)
        self._same_rank(x, maxout, "maxout")
        self._same_rank(x, ggx, "ggx")
        return Apply(self, [x, maxout, ggx], [TensorType(x.type.dtype, maxout.type.shape)()])

    def perform(self, node, inputs, output_storage):
        x, maxout, ggx = inputs
        out_hw = maxout.shape[-2:]
        big = _embedded(x, _fill_value(x.dtype, "max"), out_hw, self.ws, self.stride, self.pad)
        big_ggx = _embedded(ggx.astype(x.dtype, copy=False), 0, out_hw, self.ws, self.stride, self.pad)
        ggz = np.zeros(maxout.shape, dtype=x.dtype)
        for a in range(self.ws[0]):
            for b in range(self.ws[1]):
                at = _offset_slices(a, b, out_hw, self.stride)
                ggz += np.where(big[at] == maxout, big_ggx[at], 0)
        output_storage[0][0] = ggz

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[1])]

    def grad(self, inputs, output_grads):
        x, maxout, _ = inputs
        (gz,) = output_grads
        return [zeros_like(x), zeros_like(maxout), MaxPoolGrad(**self._params())(x, maxout, gz)]


# -- the functions ------------------------------------------------------------------------------------
def _renamed(new: Any, old: Any, new_name: str, old_name: str, unset: tuple[Any, ...] = (None,)) -> Any:
    """Theano's deprecated argument ``old_name`` given for ``new_name``: warn as Theano did, refuse both."""
    if old is None:
        return new
    if not any(new is u or (isinstance(new, tuple | list) and tuple(new) == u) for u in unset):
        raise ValueError(f"pool_2d: give each parameter once: received both {new_name}={new!r} and "
                         f"Theano's older name {old_name}={old!r}; use {new_name}")
    warnings.warn(f"pool_2d: the argument {old_name!r} is Theano's old name of {new_name!r}; use {new_name}",
                  DeprecationWarning, stacklevel=3)
    return old


def pool_2d(input: Any, ws: Any = None, ignore_border: bool | None = None, stride: Any = None,
            pad: Any = (0, 0), mode: str = "max", ds: Any = None, st: Any = None,
            padding: Any = None) -> Variable:
    """Pool the last two dimensions of ``input`` (N-d, N >= 2) by windows of ``ws`` pixels.

    ``ignore_border`` (False when None, as in Theano): with True, only complete windows; with False,
    partial windows at the bottom and right edges too. ``stride`` (``ws`` when None): the step between
    windows. ``pad``: zeros added on both sides of each pooled dimension (needs ``ignore_border=True``
    and ``pad < ws``). ``mode``: ``"max"``, ``"sum"``, ``"average_inc_pad"`` (the padding zeros count in
    the average) or ``"average_exc_pad"`` (they do not). ``ds``, ``st``, ``padding`` are Theano's older
    names of ``ws``, ``stride``, ``pad``.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x = st.dmatrix("x")
    >>> image = np.arange(16.0).reshape(4, 4)
    >>> pool_2d(x, ws=(3, 3), stride=(1, 1), ignore_border=True, mode="average_exc_pad").eval({x: image})
    array([[ 5.,  6.],
           [ 9., 10.]])
    >>> pool_2d(x, (2, 2), ignore_border=True, pad=(1, 1), mode="average_inc_pad").eval({x: image})
    array([[0.  , 0.75, 0.75],
           [3.  , 7.5 , 4.5 ],
           [3.  , 6.75, 3.75]])
    """
    ws = _renamed(ws, ds, "ws", "ds")
    stride = _renamed(stride, st, "stride", "st")
    pad = _renamed(pad, padding, "pad", "padding", unset=(None, (0, 0)))
    if ws is None:
        raise ValueError("pool_2d: expected the window size ws (a pair of integers), received none")
    x = as_tensor_variable(input, what="pool_2d: input")
    if x.type.ndim < 2:
        raise TypeError(f"pool_2d: the input must have at least 2 dimensions (the image is the last two), "
                        f"received {x} ({x.type}) of {x.type.ndim}")
    if ignore_border is None:
        ignore_border = False
    return Pool(ws, ignore_border=ignore_border, stride=stride, pad=pad, mode=mode)(x)


def max_pool_2d_same_size(input: Any, patch_size: Any) -> Variable:
    """Keep the maximum of each ``patch_size`` patch of the last two dimensions, zero the others (Theano's).

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x = st.dmatrix("x")
    >>> max_pool_2d_same_size(x, (2, 2)).eval({x: np.array([[1.0, 2.0], [4.0, 3.0]])})
    array([[0., 0.],
           [4., 0.]])
    """
    out = Pool(patch_size, ignore_border=True)(input)
    return MaxPoolGrad(patch_size, ignore_border=True)(input, out, out)


__all__ = [
    "MODES",
    "AveragePoolGrad",
    "DownsampleFactorMaxGradGrad",
    "MaxPoolGrad",
    "Pool",
    "max_pool_2d_same_size",
    "output_size",
    "pool_2d",
]
