r"""Two-dimensional convolution with Theano's semantics: ``conv2d`` and its three ops.

``conv2d(input, filters)`` takes a batch of images ``(batch, channels, rows, cols)`` and a bank of
filters ``(out_channels, channels, filter_rows, filter_cols)`` and gives
``(batch, out_channels, out_rows, out_cols)``: each output map is the sum over the input channels
of a 2-d convolution. As in Theano's ``theano.tensor.nnet.conv2d``:

* ``filter_flip=True`` (the default) is a true convolution, the filters flipped in both spatial
  axes; ``filter_flip=False`` is a cross-correlation (what deep learning libraries often call
  convolution);
* ``border_mode`` pads the input with zeros: ``"valid"`` (none: the filter stays inside the image),
  ``"full"`` (``filter - 1`` on each side: every overlap counts), ``"half"`` (``filter // 2`` on each
  side: the output has the input's size when the stride is 1 and the filter is odd), an int, or a pair
  of ints ``(rows, cols)``;
* ``subsample`` is the stride and ``filter_dilation`` spaces the filter's taps (``d - 1`` zeros
  between them: the filter covers ``(k - 1) * d + 1`` pixels).

The output has ``(size + 2 * pad - ((k - 1) * d + 1)) // stride + 1`` rows (and the same for columns).

>>> import numpy as np
>>> import symlab.tensor as st
>>> from symlab.tensor.nnet.conv import conv2d
>>> x, w = st.dtensor4("x"), st.dtensor4("w")
>>> image = np.arange(16.0).reshape(1, 1, 4, 4)
>>> edge = np.array([[[[1.0, -1.0]]]])                 # one 1x2 filter
>>> conv2d(x, w).eval({x: image, w: edge})[0, 0]       # flipped: x[j + 1] - x[j]
array([[1., 1., 1.],
       [1., 1., 1.],
       [1., 1., 1.],
       [1., 1., 1.]])
>>> conv2d(x, w, filter_flip=False).eval({x: image, w: edge})[0, 0, 0]  # not flipped: x[j] - x[j + 1]
array([-1., -1., -1.])
>>> conv2d(x, w, input_shape=(None, 1, 28, 28), filter_shape=(20, 1, 5, 5)).type
TensorType(float64, (?, 20, 24, 24))

The gradients are ops of their own (:class:`Conv2dGradInputs`, :class:`Conv2dGradWeights`, like
Theano's ``AbstractConv2d_gradInputs`` and ``AbstractConv2d_gradWeights``), differentiable in turn.
Each op computes on NumPy by an *im2col*: a strided view of the (padded) input holds every
filter-sized window, copied into a matrix (a row per output pixel, a column per filter tap) that one
matrix product contracts with the filters, a chunk of images at a time (:func:`batch_chunk`). The Numba
kernels (:mod:`symlab.compile.numba.kernels_conv`) make the very same products, so that both backends
give the same bits.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from symlab.graph.basic import Apply, Variable
from symlab.graph.null_type import disconnected
from symlab.graph.op import Op
from symlab.tensor.conversion import as_tensor_input, constant
from symlab.tensor.joining import shape_vector, static_entries, vector_entry
from symlab.tensor.shape_of import shape_i
from symlab.tensor.type import TensorType

#: A border mode once normalized: a name, or the zero padding ``(rows, cols)``.
BorderMode = str | tuple[int, int]
#: A 4-d shape of which some sizes may be unknown.
PartialShape = tuple[int | None, int | None, int | None, int | None]

BORDER_MODES = ("valid", "full", "half")

#: Keyword arguments of the old ``theano.tensor.nnet.conv.conv2d`` that only tuned its C code: accepted and ignored.
_TUNING_KWARGS = ("unroll_batch", "unroll_kern", "unroll_patch", "openmp", "verbose", "version", "direction_hint")
#: Keyword arguments of the old ``conv2d`` that changed the result (logical, upsampled shapes): refused.
_LOGICAL_KWARGS = ("imshp_logical", "kshp_logical", "kshp_logical_top_aligned")


# -- checking and normalizing the parameters --------------------------------------------------------------------------


def _is_int(v: Any) -> bool:
    return isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_)


def normalize_border_mode(border_mode: Any) -> BorderMode:
    """``"valid"``, ``"full"``, ``"half"`` or a padding ``(rows, cols)`` of non-negative ints.

    An int pads both axes alike; a padding of ``(0, 0)`` is ``"valid"``.

    >>> normalize_border_mode(2), normalize_border_mode((0, 0)), normalize_border_mode("half")
    ((2, 2), 'valid', 'half')
    """
    expected = 'expected "valid", "full", "half", a non-negative int or a pair of non-negative ints'
    if isinstance(border_mode, str):
        if border_mode not in BORDER_MODES:
            raise ValueError(f"conv2d: border_mode: {expected}, received {border_mode!r}")
        return border_mode
    pair = (border_mode, border_mode) if _is_int(border_mode) else border_mode
    if isinstance(pair, tuple | list) and len(pair) == 2 and all(_is_int(p) and p >= 0 for p in pair):
        pad = (int(pair[0]), int(pair[1]))
        return "valid" if pad == (0, 0) else pad
    raise ValueError(f"conv2d: border_mode: {expected}, received {border_mode!r}")


def _positive_pair(value: Any, what: str) -> tuple[int, int]:
    if isinstance(value, tuple | list) and len(value) == 2 and all(_is_int(v) and v >= 1 for v in value):
        return (int(value[0]), int(value[1]))
    raise ValueError(f"conv2d: {what}: expected a pair of positive ints (rows, cols), received {value!r}")


def _partial_shape(shape: Any, what: str) -> PartialShape | None:
    """A user's ``input_shape``/``filter_shape``: 4 sizes, each a positive int or None (unknown)."""
    if shape is None:
        return None
    if isinstance(shape, tuple | list) and len(shape) == 4 and all(s is None or (_is_int(s) and s >= 1) for s in shape):
        return tuple(None if s is None else int(s) for s in shape)  # type: ignore[return-value]
    raise ValueError(f"conv2d: {what}: expected 4 sizes (positive ints or None), received {shape!r}")


def _merge(declared: PartialShape | None, static: tuple[int | None, ...], what: str, var: Variable) -> PartialShape:
    """What is known of a 4-d shape from the declared shape and the variable's static type."""
    if declared is None:
        return tuple(static)  # type: ignore[return-value]
    merged = []
    for d, (a, b) in enumerate(zip(declared, static)):
        if a is not None and b is not None and a != b:
            raise ValueError(
                f"conv2d: {what} {declared} disagrees with {var} ({var.type}) in dimension {d}: {a} against {b}"
            )
        merged.append(a if a is not None else b)
    return tuple(merged)  # type: ignore[return-value]


def dilated(k: Any, dilation: int) -> Any:
    """The extent ``(k - 1) * dilation + 1`` of a filter of ``k`` taps (ints or symbolic scalars)."""
    return (k - 1) * dilation + 1 if dilation != 1 else k


def padding(border_mode: BorderMode, k: Any, dilation: int, axis: int) -> Any:
    """Zeros added on each side of ``axis`` (0: rows, 1: columns) for a filter of ``k`` taps."""
    if border_mode == "valid":
        return 0
    if border_mode == "full":
        return dilated(k, dilation) - 1
    if border_mode == "half":
        return dilated(k, dilation) // 2
    return border_mode[axis]  # type: ignore[index]


def output_size(size: Any, k: Any, border_mode: BorderMode, stride: int, dilation: int, axis: int) -> Any:
    """Rows (``axis=0``) or columns of the output, for ints or symbolic int64 scalars alike.

    >>> output_size(28, 5, "valid", 1, 1, 0), output_size(28, 5, "half", 2, 1, 0), output_size(4, 3, "full", 1, 2, 0)
    (24, 14, 8)
    """
    pad = padding(border_mode, k, dilation, axis)
    span = size - dilated(k, dilation) if _is_int(pad) and pad == 0 else size + 2 * pad - dilated(k, dilation)
    return span // stride + 1 if stride != 1 else span + 1


def _static_output_size(size: int | None, k: int | None, op: _Conv2dBase, axis: int) -> int | None:
    if size is None or k is None:
        return None
    return output_size(size, k, op.border_mode, op.subsample[axis], op.filter_dilation[axis], axis)


# -- the NumPy computations (im2col by a strided view) ----------------------------------------------------------------


def _pads(op: _Conv2dBase, kernel: tuple[int, int]) -> tuple[int, int]:
    return (
        padding(op.border_mode, kernel[0], op.filter_dilation[0], 0),
        padding(op.border_mode, kernel[1], op.filter_dilation[1], 1),
    )


def _padded(x: np.ndarray, pads: tuple[int, int]) -> np.ndarray:
    if pads == (0, 0):
        return x
    return np.pad(x, ((0, 0), (0, 0), (pads[0], pads[0]), (pads[1], pads[1])))


def _windows(xp: np.ndarray, op: _Conv2dBase, kernel: tuple[int, int], out_hw: tuple[int, int]) -> np.ndarray:
    """``(batch, channels, out_rows, out_cols, k_rows, k_cols)``: the window of each output pixel (a view)."""
    (dh, dw), (sh, sw) = op.filter_dilation, op.subsample
    extent = (dilated(kernel[0], dh), dilated(kernel[1], dw))
    win = sliding_window_view(xp, extent, axis=(2, 3))
    return win[:, :, : (out_hw[0] - 1) * sh + 1 : sh, : (out_hw[1] - 1) * sw + 1 : sw, ::dh, ::dw]


def _oriented(w: np.ndarray, flip: bool) -> np.ndarray:
    return w[:, :, ::-1, ::-1] if flip else w


def _check_sizes(op: _Conv2dBase, image: tuple[int, ...], kernel: tuple[int, ...]) -> tuple[int, int]:
    """The output's rows and columns; a clear error when the channels differ or the filter does not fit."""
    if image[1] != kernel[1]:
        raise ValueError(
            f"{op.opname}: the input has {image[1]} channels (input shape {tuple(image)}) but the filters "
            f"expect {kernel[1]} (filter shape {tuple(kernel)}): dimension 1 of both must match"
        )
    out = tuple(
        output_size(image[2 + a], kernel[2 + a], op.border_mode, op.subsample[a], op.filter_dilation[a], a)
        for a in (0, 1)
    )
    if min(out) < 1:
        raise ValueError(
            f"{op.opname}: the filters (filter shape {tuple(kernel)}, dilation {op.filter_dilation}) do not "
            f"fit in the input (input shape {tuple(image)}) with border_mode={op.border_mode!r}: the output "
            f"would have {out[0]} x {out[1]} pixels; pad the input (border_mode) or use a smaller filter"
        )
    return out  # type: ignore[return-value]


def _check_declared(op: _Conv2dBase, value: np.ndarray, declared: PartialShape | None, what: str) -> None:
    if declared is not None and any(d is not None and d != s for d, s in zip(declared, value.shape)):
        raise ValueError(f"{op.opname}: {what} has shape {value.shape}, but the graph was built for {declared}")


#: Elements of the im2col matrix computed at once: the batch is cut into chunks of whole images that fit.
CHUNK_ELEMENTS = 1 << 22


def batch_chunk(out_pixels: int, taps: int) -> int:
    """Images per chunk: the im2col matrix of a chunk, ``(images * out_pixels, taps)``, stays within
    :data:`CHUNK_ELEMENTS` (at least one image). The Numba kernels cut the batch alike."""
    return max(1, CHUNK_ELEMENTS // max(1, out_pixels * taps))


def _im2col(win: np.ndarray) -> np.ndarray:
    """The windows ``(b, c, rows, cols, k_rows, k_cols)`` as a C-contiguous matrix: a row per output pixel
    ``(b, rows, cols)``, a column per tap ``(c, k_rows, k_cols)``."""
    b, c, oh, ow, kh, kw = win.shape
    return np.ascontiguousarray(win.transpose(0, 2, 3, 1, 4, 5)).reshape(b * oh * ow, c * kh * kw)


def _filter_matrix(w: np.ndarray, flip: bool) -> np.ndarray:
    """The filters as ``(out_channels, taps)``, C-contiguous, flipped for a convolution."""
    return np.ascontiguousarray(_oriented(w, flip)).reshape(w.shape[0], -1)


# The three computations below make the very matrix products (same shapes, layouts and order of the
# sums) that the Numba kernels make, so that both backends give the same bits.


def conv_forward(op: _Conv2dBase, x: np.ndarray, w: np.ndarray, dtype: str) -> np.ndarray:
    """The convolution of ``x`` by ``w`` (NumPy): ``im2col(x) @ filters.T``, a chunk of images at a time."""
    out_hw = _check_sizes(op, x.shape, w.shape)
    x, w = x.astype(dtype, copy=False), w.astype(dtype, copy=False)
    kernel = (w.shape[2], w.shape[3])
    windows = _windows(_padded(x, _pads(op, kernel)), op, kernel, out_hw)
    wt = np.ascontiguousarray(_filter_matrix(w, op.filter_flip).T)  # (taps, out_channels)
    out = np.empty((x.shape[0], w.shape[0], *out_hw), dtype=dtype)
    step = batch_chunk(out_hw[0] * out_hw[1], wt.shape[0])
    for b in range(0, x.shape[0], step):
        prod = np.dot(_im2col(windows[b : b + step]), wt)  # (images * pixels, out_channels)
        out[b : b + step] = prod.reshape(-1, *out_hw, w.shape[0]).transpose(0, 3, 1, 2)
    return out


def conv_grad_weights(op: _Conv2dBase, x: np.ndarray, top: np.ndarray, kernel: tuple[int, int], dtype: str) -> np.ndarray:
    """The gradient of ``sum(top * conv(x, w))`` with respect to ``w`` of spatial shape ``kernel`` (NumPy):
    the sum over the chunks of images of ``top (out_channels, pixels) @ im2col(x)``."""
    out_hw = _check_sizes(op, x.shape, (top.shape[1], x.shape[1], *kernel))
    _check_top(op, top, (x.shape[0], top.shape[1], *out_hw), "the input", x.shape)
    x, top = x.astype(dtype, copy=False), top.astype(dtype, copy=False)
    windows = _windows(_padded(x, _pads(op, kernel)), op, kernel, out_hw)
    taps = x.shape[1] * kernel[0] * kernel[1]
    grad = np.zeros((top.shape[1], taps), dtype=dtype)
    step = batch_chunk(out_hw[0] * out_hw[1], taps)
    for b in range(0, x.shape[0], step):
        rows = np.ascontiguousarray(top[b : b + step].transpose(1, 0, 2, 3)).reshape(top.shape[1], -1)
        grad += np.dot(rows, _im2col(windows[b : b + step]))
    grad = grad.reshape(top.shape[1], x.shape[1], *kernel)
    return np.ascontiguousarray(_oriented(grad, op.filter_flip))


def conv_grad_inputs(op: _Conv2dBase, w: np.ndarray, top: np.ndarray, image: tuple[int, int], dtype: str) -> np.ndarray:
    """The gradient of ``sum(top * conv(x, w))`` with respect to ``x`` of spatial shape ``image`` (NumPy).

    ``cols = top (pixels, out_channels) @ filters`` has a row per output pixel and a column per tap;
    each filter tap ``(u, v)`` adds its column to a strided slice of the padded gradient: a loop over
    the filter's taps, not over pixels.
    """
    shape = (top.shape[0], w.shape[1], *image)
    out_hw = _check_sizes(op, shape, w.shape)
    _check_top(op, top, (shape[0], w.shape[0], *out_hw), "the filters", w.shape)
    w, top = w.astype(dtype, copy=False), top.astype(dtype, copy=False)
    kernel = (w.shape[2], w.shape[3])
    pads = _pads(op, kernel)
    (dh, dw), (sh, sw) = op.filter_dilation, op.subsample
    wm = _filter_matrix(w, op.filter_flip)  # (out_channels, taps)
    grad = np.zeros((shape[0], shape[1], image[0] + 2 * pads[0], image[1] + 2 * pads[1]), dtype=dtype)
    span = ((out_hw[0] - 1) * sh + 1, (out_hw[1] - 1) * sw + 1)
    step = batch_chunk(out_hw[0] * out_hw[1], wm.shape[1])
    for b in range(0, shape[0], step):
        rows = np.ascontiguousarray(top[b : b + step].transpose(0, 2, 3, 1)).reshape(-1, w.shape[0])
        cols = np.dot(rows, wm).reshape(-1, *out_hw, shape[1], *kernel)  # (images, rows, cols, c, k_rows, k_cols)
        for u in range(kernel[0]):
            for v in range(kernel[1]):
                target = grad[b : b + step, :, u * dh : u * dh + span[0] : sh, v * dw : v * dw + span[1] : sw]
                target += cols[:, :, :, :, u, v].transpose(0, 3, 1, 2)
    return np.ascontiguousarray(grad[:, :, pads[0] : pads[0] + image[0], pads[1] : pads[1] + image[1]])


def _check_top(op: _Conv2dBase, top: np.ndarray, expected: tuple[int, ...], other: str, other_shape: tuple) -> None:
    if tuple(top.shape) != tuple(expected):
        raise ValueError(
            f"{op.opname}: the output gradient has shape {tuple(top.shape)}, expected {tuple(expected)} "
            f"from {other} (shape {tuple(other_shape)}) and the spatial shape given"
        )


# -- the ops ---------------------------------------------------------------------------------------------------------


class _Conv2dBase(Op):
    """The parameters shared by the convolution and its two gradients."""

    __props__ = ("border_mode", "subsample", "filter_flip", "filter_dilation", "imshp", "kshp")
    opname = "conv2d"

    def __init__(
        self,
        border_mode: Any = "valid",
        subsample: Sequence[int] = (1, 1),
        filter_flip: bool = True,
        filter_dilation: Sequence[int] = (1, 1),
        imshp: Sequence[int | None] | None = None,
        kshp: Sequence[int | None] | None = None,
    ) -> None:
        self.border_mode = normalize_border_mode(border_mode)
        self.subsample = _positive_pair(subsample, "subsample")
        self.filter_flip = bool(filter_flip)
        self.filter_dilation = _positive_pair(filter_dilation, "filter_dilation")
        self.imshp = _partial_shape(imshp, "input_shape")
        self.kshp = _partial_shape(kshp, "filter_shape")

    def _tensor4(self, value: Any, position: str) -> Variable:
        var = as_tensor_input(value, self.opname, position)
        if var.ndim != 4:
            raise TypeError(
                f"{self.opname}: {position} must be a 4-d tensor {_LAYOUT[position]}, received {var} ({var.type}) "
                f"with {var.ndim} dimensions"
            )
        if np.dtype(var.dtype).kind != "f":
            raise TypeError(f"{self.opname}: {position} must have a floating dtype, received {var} ({var.type})")
        return var

    def _spatial(self, value: Any, position: str) -> Variable:
        var = as_tensor_input(value, self.opname, position)
        if var.ndim != 1 or not var.dtype.startswith(("int", "uint")) or var.type.shape[0] not in (None, 2):
            raise TypeError(f"{self.opname}: {position} must be a vector of 2 ints (rows, cols), received {var} ({var.type})")
        return var

    def _params(self) -> dict[str, Any]:
        return {
            "border_mode": self.border_mode,
            "subsample": self.subsample,
            "filter_flip": self.filter_flip,
            "filter_dilation": self.filter_dilation,
            "imshp": self.imshp,
            "kshp": self.kshp,
        }

    def _check_channels(self, image: PartialShape, kernel: PartialShape, x: Variable, w: Variable) -> None:
        if image[1] is not None and kernel[1] is not None and image[1] != kernel[1]:
            raise ValueError(
                f"{self.opname}: the input {x} has {image[1]} channels (input shape {_show(image)}) but the "
                f"filters {w} expect {kernel[1]} (filter shape {_show(kernel)}): dimension 1 of both must match"
            )
        out = [_static_output_size(image[2 + a], kernel[2 + a], self, a) for a in (0, 1)]
        if any(o is not None and o < 1 for o in out):
            raise ValueError(
                f"{self.opname}: the filters (filter shape {_show(kernel)}, dilation {self.filter_dilation}) do not "
                f"fit in the input (input shape {_show(image)}) with border_mode={self.border_mode!r}; pad the input "
                "(border_mode) or use a smaller filter"
            )

    def _out_sizes(self, image_hw: Sequence[Any], kernel_hw: Sequence[Any]) -> tuple[Any, Any]:
        return tuple(
            output_size(image_hw[a], kernel_hw[a], self.border_mode, self.subsample[a], self.filter_dilation[a], a)
            for a in (0, 1)
        )  # type: ignore[return-value]


_LAYOUT = {
    "input": "(batch, channels, rows, cols)",
    "filters": "(out_channels, channels, rows, cols)",
    "topgrad": "(batch, out_channels, out_rows, out_cols)",
}


def _show(shape: Sequence[int | None]) -> str:
    return "(" + ", ".join("?" if s is None else str(s) for s in shape) + ")"


def _static_entries(v: Variable) -> tuple[int | None, int | None]:
    known = static_entries(v) if v.type.shape[0] == 2 else (None, None)
    return (known[0], known[1])


def _spatial_shape(x: Variable) -> Variable:
    """The rows and columns of the 4-d ``x``, an int64 vector (a constant where the type knows them)."""
    return shape_vector([s if s is not None else shape_i(x, 2 + a) for a, s in enumerate(x.type.shape[2:])], "conv2d")


def _float_dtype(*vars: Variable) -> str:
    return np.result_type(*(v.dtype for v in vars)).name


class Conv2d(_Conv2dBase):
    """The convolution of a batch of images by a bank of filters (Theano's ``AbstractConv2d``).

    >>> import symlab.tensor as st
    >>> op = Conv2d(border_mode="half", subsample=(2, 2))
    >>> op(st.dtensor4("x"), st.dtensor4("w")).owner.op == Conv2d("half", (2, 2))
    True
    """

    def make_node(self, input: Any, filters: Any) -> Apply:
        x, w = self._tensor4(input, "input"), self._tensor4(filters, "filters")
        image = _merge(self.imshp, x.type.shape, "input_shape", x)
        kernel = _merge(self.kshp, w.type.shape, "filter_shape", w)
        self._check_channels(image, kernel, x, w)
        rows, cols = (_static_output_size(image[2 + a], kernel[2 + a], self, a) for a in (0, 1))
        out = TensorType(_float_dtype(x, w), (image[0], kernel[0], rows, cols))()
        return Apply(self, [x, w], [out])

    def perform(self, node, inputs, output_storage):
        x, w = inputs
        _check_declared(self, x, self.imshp, "the input")
        _check_declared(self, w, self.kshp, "the filters")
        output_storage[0][0] = conv_forward(self, x, w, node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        xs, ws = input_shapes
        static = node.outputs[0].type.shape
        symbolic = (xs[0], ws[0], *self._out_sizes(xs[2:], ws[2:]))
        return [tuple(s if n is None else constant(n, dtype="int64") for s, n in zip(symbolic, static))]

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        x, w = inputs
        (top,) = output_grads
        params = self._params()
        gx = Conv2dGradInputs(**params)(w, top, _spatial_shape(x))
        gw = Conv2dGradWeights(**params)(x, top, _spatial_shape(w))
        return [gx, gw]

    def R_op(self, inputs, eval_points):  # noqa: N802
        x, w = inputs
        ex, ew = eval_points
        terms = [self(ex, w) if ex is not None else None, self(x, ew) if ew is not None else None]
        terms = [t for t in terms if t is not None]
        if not terms:
            return [None]
        return [terms[0] if len(terms) == 1 else terms[0] + terms[1]]


class Conv2dGradWeights(_Conv2dBase):
    """The gradient of a convolution with respect to its filters (Theano's ``AbstractConv2d_gradWeights``).

    Inputs: the images, the gradient of the output (``topgrad``), and the filters' (rows, cols): with a
    stride above 1 they cannot be told from the other two.
    """

    opname = "conv2d gradient wrt the filters"

    def make_node(self, input: Any, topgrad: Any, shape: Any) -> Apply:
        x, top = self._tensor4(input, "input"), self._tensor4(topgrad, "topgrad")
        shape = self._spatial(shape, "shape")
        image = _merge(self.imshp, x.type.shape, "input_shape", x)
        kh, kw = _static_entries(shape)
        declared = self.kshp or (None,) * 4
        out_shape = (top.type.shape[1] or declared[0], image[1] or declared[1], kh or declared[2], kw or declared[3])
        self._check_channels(image, out_shape, x, shape)
        out = TensorType(_float_dtype(x, top), out_shape)()
        return Apply(self, [x, top, shape], [out])

    def perform(self, node, inputs, output_storage):
        x, top, shape = inputs
        _check_declared(self, x, self.imshp, "the input")
        kernel = (int(shape[0]), int(shape[1]))
        output_storage[0][0] = conv_grad_weights(self, x, top, kernel, node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        xs, ts, _ = input_shapes
        shape = node.inputs[2]
        static = node.outputs[0].type.shape
        symbolic = (ts[1], xs[1], vector_entry(shape, 0), vector_entry(shape, 1))
        return [tuple(s if n is None else constant(n, dtype="int64") for s, n in zip(symbolic, static))]

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        # gw = W(x, top) is linear in each: d<g, W(x, top)>/dx = gradInputs(g, top), d/dtop = conv(x, g).
        x, top, _ = inputs
        (g,) = output_grads
        params = self._params()
        gx = Conv2dGradInputs(**params)(g, top, _spatial_shape(x))
        gtop = Conv2d(**params)(x, g)
        return [gx, gtop, disconnected()]


class Conv2dGradInputs(_Conv2dBase):
    """The gradient of a convolution with respect to its input (Theano's ``AbstractConv2d_gradInputs``).

    Inputs: the filters, the gradient of the output (``topgrad``), and the images' (rows, cols): with a
    stride above 1 they cannot be told from the other two.
    """

    opname = "conv2d gradient wrt the input"

    def make_node(self, filters: Any, topgrad: Any, shape: Any) -> Apply:
        w, top = self._tensor4(filters, "filters"), self._tensor4(topgrad, "topgrad")
        shape = self._spatial(shape, "shape")
        kernel = _merge(self.kshp, w.type.shape, "filter_shape", w)
        rows, cols = _static_entries(shape)
        declared = self.imshp or (None,) * 4
        out_shape = (top.type.shape[0] or declared[0], kernel[1] or declared[1], rows or declared[2], cols or declared[3])
        self._check_channels(out_shape, kernel, shape, w)
        out = TensorType(_float_dtype(w, top), out_shape)()
        return Apply(self, [w, top, shape], [out])

    def perform(self, node, inputs, output_storage):
        w, top, shape = inputs
        _check_declared(self, w, self.kshp, "the filters")
        image = (int(shape[0]), int(shape[1]))
        output_storage[0][0] = conv_grad_inputs(self, w, top, image, node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        ws, ts, _ = input_shapes
        shape = node.inputs[2]
        static = node.outputs[0].type.shape
        symbolic = (ts[0], ws[1], vector_entry(shape, 0), vector_entry(shape, 1))
        return [tuple(s if n is None else constant(n, dtype="int64") for s, n in zip(symbolic, static))]

    def L_op(self, inputs, outputs, output_grads):  # noqa: N802
        # gx = I(w, top) is linear in each: d<g, I(w, top)>/dw = gradWeights(g, top), d/dtop = conv(g, w).
        w, top, _ = inputs
        (g,) = output_grads
        params = self._params()
        gw = Conv2dGradWeights(**params)(g, top, _spatial_shape(w))
        gtop = Conv2d(**params)(g, w)
        return [gw, gtop, disconnected()]


# -- the function users call ------------------------------------------------------------------------------------------


def conv2d(
    input: Any,
    filters: Any,
    input_shape: Sequence[int | None] | None = None,
    filter_shape: Sequence[int | None] | None = None,
    border_mode: str | int | tuple[int, int] = "valid",
    subsample: tuple[int, int] = (1, 1),
    filter_flip: bool = True,
    image_shape: Sequence[int | None] | None = None,
    filter_dilation: tuple[int, int] = (1, 1),
    num_groups: int = 1,
    unshared: bool = False,
    **kwargs: Any,
) -> Variable:
    """Theano's ``conv2d``: a batch of images ``(batch, channels, rows, cols)`` convolved by filters
    ``(out_channels, channels, rows, cols)`` (see the module's docstring for the parameters).

    ``input_shape`` and ``filter_shape`` (ints, or None where unknown) give the output a static shape
    and are checked when the function runs; ``image_shape`` is the old name of ``input_shape``.
    The tuning keywords of the old ``theano.tensor.nnet.conv.conv2d`` (``unroll_batch``...) are
    ignored with a warning. Grouped (``num_groups > 1``) and unshared convolutions are not available.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x, w = st.dtensor4("x"), st.dtensor4("w")
    >>> y = conv2d(x, w, border_mode="half", subsample=(2, 2))
    >>> y.eval({x: np.ones((1, 1, 5, 5)), w: np.ones((1, 1, 3, 3))})[0, 0]
    array([[4., 6., 4.],
           [6., 9., 6.],
           [4., 6., 4.]])
    >>> conv2d(x, w, input_shape=(8, 3, 32, 32), filter_shape=(16, 4, 3, 3))
    Traceback (most recent call last):
    ...
    ValueError: conv2d: the input x has 3 channels (input shape (8, 3, 32, 32)) but the filters w expect 4 (filter shape (16, 4, 3, 3)): dimension 1 of both must match
    """
    logical = [k for k in kwargs if k in _LOGICAL_KWARGS]
    if logical:
        raise ValueError(
            f"conv2d: {', '.join(logical)} (logical shapes of the old theano.tensor.nnet.conv.conv2d) are not "
            "supported; upsample the input explicitly instead"
        )
    unknown = [k for k in kwargs if k not in _TUNING_KWARGS]
    if unknown:
        raise TypeError(f"conv2d() got unexpected keyword arguments {unknown}")
    if kwargs:
        warnings.warn(
            f"conv2d: {sorted(kwargs)} only tuned Theano's C code and are ignored", UserWarning, stacklevel=2
        )
    if image_shape is not None:
        if input_shape is not None:
            raise ValueError("conv2d: give input_shape or its old name image_shape, not both")
        warnings.warn("conv2d: image_shape is the old name of input_shape", DeprecationWarning, stacklevel=2)
        input_shape = image_shape
    if num_groups != 1 or unshared:
        raise NotImplementedError(
            f"conv2d: grouped and unshared convolutions are not available (received num_groups={num_groups!r}, "
            f"unshared={unshared!r}); expected num_groups=1 and unshared=False"
        )
    op = Conv2d(border_mode, subsample, filter_flip, filter_dilation, input_shape, filter_shape)
    return op(input, filters)


__all__ = [
    "Conv2d",
    "Conv2dGradInputs",
    "Conv2dGradWeights",
    "conv2d",
    "normalize_border_mode",
    "output_size",
]
