r"""Numba kernels of the 2-d convolution and its gradients (:mod:`symlab.tensor.nnet.conv`).

Each works on chunks of whole images (as many as keep the matrix below within
:data:`~symlab.tensor.nnet.conv.CHUNK_ELEMENTS`), by an *im2col*: the windows are copied into a matrix
``a`` with a row per output pixel and a column per filter tap ``(channel, u, v)`` (zeros where a window
overlaps the padding), so that the work is a matrix product by NumPy's BLAS
(:func:`~symlab.compile.numba.numpy_blas.blas_dot`):

* the convolution: ``a @ filters.T``, a column per output channel;
* the gradient with respect to the filters: the sum over the chunks of ``topgrad (out_channels,
  pixels) @ a``;
* the gradient with respect to the input: ``cols = topgrad (pixels, out_channels) @ filters``, each
  row then added back into the window it came from (*col2im*).

These are the products of the NumPy path, with the same shapes, layouts and order of the sums: both
backends give the same bits.

The filters are flipped (``filter_flip=True``) while they are copied into their matrix. The stride,
dilation and border mode are literals of the source; the sizes are read from the arrays:

>>> import symlab.tensor as st
>>> from symlab.tensor.nnet.conv import conv2d
>>> source = kernel_for(conv2d(st.dtensor4("x"), st.dtensor4("w"), border_mode="half").owner, "k").source
>>> print(source[: source.index("    wt = ")])
def k(x, w):
    nb = x.shape[0]
    nc = x.shape[1]
    ih = x.shape[2]
    iw = x.shape[3]
    no = w.shape[0]
    kh = w.shape[2]
    kw = w.shape[3]
    if w.shape[1] != nc:
        raise ValueError('conv2d: the input and the filters differ in their number of channels (dimension 1)')
    ph = ((kh - 1) * 1 + 1) // 2
    pw = ((kw - 1) * 1 + 1) // 2
    oh = (ih + 2 * ph - ((kh - 1) * 1 + 1)) // 1 + 1
    ow = (iw + 2 * pw - ((kw - 1) * 1 + 1)) // 1 + 1
    if oh < 1 or ow < 1:
        raise ValueError('conv2d: the filters do not fit in the input with this border_mode')
    kk = nc * kh * kw
    xa = x
<BLANKLINE>
"""

from __future__ import annotations

from symlab.compile.numba.kernels import Kernel, NoKernel, function_source, kernel_for, register_kernel
from symlab.graph.basic import Apply
from symlab.tensor.nnet import conv
from symlab.tensor.nnet.conv import Conv2d, Conv2dGradInputs, Conv2dGradWeights, _Conv2dBase

FLOATS = ("float32", "float64")


def _dtype(op: _Conv2dBase, node: Apply) -> str:
    dtype = node.outputs[0].type.dtype
    if dtype not in FLOATS or any(i.type.dtype not in FLOATS for i in node.inputs[:2]):
        raise NoKernel(f"{op}: the Numba kernels compute in float32 or float64, not {dtype}")
    return dtype


def _as(name: str, var_dtype: str, dtype: str) -> str:
    """``name`` converted to ``dtype`` (a copy only if its dtype differs)."""
    return name if var_dtype == dtype else f"{name}.astype(np.{dtype})"


def _geometry(op: _Conv2dBase, check: str) -> list[str]:
    """Padding and output size, from ``ih, iw, kh, kw`` (set before), with the op's literals."""
    (sh, sw), (dh, dw) = op.subsample, op.filter_dilation
    lines = []
    for p, k, d in (("ph", "kh", dh), ("pw", "kw", dw)):
        extent = f"(({k} - 1) * {d} + 1)"
        if op.border_mode == "valid":
            pad = "0"
        elif op.border_mode == "full":
            pad = f"{extent} - 1"
        elif op.border_mode == "half":
            pad = f"{extent} // 2"
        else:
            pad = str(op.border_mode[0 if p == "ph" else 1])
        lines.append(f"{p} = {pad}")
    lines += [
        f"oh = (ih + 2 * ph - ((kh - 1) * {dh} + 1)) // {sh} + 1",
        f"ow = (iw + 2 * pw - ((kw - 1) * {dw} + 1)) // {sw} + 1",
        "if oh < 1 or ow < 1:",
        f"    raise ValueError({'conv2d: the filters do not fit in the input with this border_mode'!r})",
        *check.splitlines(),
        "kk = nc * kh * kw",
    ]
    return lines


def _chunks(body: list[str]) -> list[str]:
    """``body`` for each chunk of images ``b0 <= b < b1`` (``nbc`` images, ``n = nbc * oh * ow`` pixels): the
    chunks of :func:`~symlab.tensor.nnet.conv.batch_chunk`, so that the products are the NumPy path's."""
    return [
        "npix = oh * ow",
        f"step = max(1, {conv.CHUNK_ELEMENTS} // max(1, npix * kk))",
        "for b0 in range(0, nb, step):",
        "    b1 = min(nb, b0 + step)",
        "    nbc = b1 - b0",
        "    n = nbc * npix",
        *("    " + line for line in body),
    ]


def _im2col(op: _Conv2dBase, image: str, dtype: str) -> list[str]:
    """``a`` (n, kk): a row per output pixel of the chunk, a column per tap, zeros in the padding."""
    (sh, sw), (dh, dw) = op.subsample, op.filter_dilation
    valid = op.border_mode == "valid"  # every window inside the image: no padding, no bounds to test
    head = [
        f"a = np.empty((n, kk), np.{dtype})",
        "for bb in range(nbc):",
        "    for i in range(oh):",
        "        for j in range(ow):",
        "            row = (bb * oh + i) * ow + j",
        "            for c in range(nc):",
        "                for u in range(kh):",
        f"                    y = i * {sh} + u * {dh}" + ("" if valid else " - ph"),
        "                    r = (c * kh + u) * kw",
    ]
    if valid:
        return [
            *head,
            "                    for v in range(kw):",
            f"                        a[row, r + v] = {image}[b0 + bb, c, y, j * {sw} + v * {dw}]",
        ]
    return [
        *head,
        "                    if y < 0 or y >= ih:",
        "                        for v in range(kw):",
        "                            a[row, r + v] = 0.0",
        "                    else:",
        "                        for v in range(kw):",
        f"                            xx = j * {sw} + v * {dw} - pw",
        "                            if xx >= 0 and xx < iw:",
        f"                                a[row, r + v] = {image}[b0 + bb, c, y, xx]",
        "                            else:",
        "                                a[row, r + v] = 0.0",
    ]


def _col2im(op: _Conv2dBase, image: str) -> list[str]:
    """Add each row of ``cols`` (n, kk) into its window of ``image``: every pixel sums its taps in the
    order ``(u, v)``, as the NumPy path does."""
    (sh, sw), (dh, dw) = op.subsample, op.filter_dilation
    if op.border_mode == "valid":  # every window inside the image: no bounds to test
        return [
            "for bb in range(nbc):",
            "    for c in range(nc):",
            "        for u in range(kh):",
            "            for v in range(kw):",
            "                r = (c * kh + u) * kw + v",
            "                for i in range(oh):",
            f"                    y = i * {sh} + u * {dh}",
            "                    for j in range(ow):",
            f"                        {image}[b0 + bb, c, y, j * {sw} + v * {dw}] += cols[(bb * oh + i) * ow + j, r]",
        ]
    return [
        "for bb in range(nbc):",
        "    for c in range(nc):",
        "        for u in range(kh):",
        "            for v in range(kw):",
        "                r = (c * kh + u) * kw + v",
        "                for i in range(oh):",
        f"                    y = i * {sh} + u * {dh} - ph",
        "                    if y >= 0 and y < ih:",
        "                        for j in range(ow):",
        f"                            xx = j * {sw} + v * {dw} - pw",
        "                            if xx >= 0 and xx < iw:",
        f"                                {image}[b0 + bb, c, y, xx] += cols[(bb * oh + i) * ow + j, r]",
    ]


def _tap(op: _Conv2dBase) -> str:
    """The filter index that tap ``r = (c, u, v)`` of the filter matrix holds (flipped for a convolution)."""
    return "o, c, kh - 1 - u, kw - 1 - v" if op.filter_flip else "o, c, u, v"


def _filter_matrix(op: _Conv2dBase, name: str, filters: str, dtype: str, transposed: bool) -> list[str]:
    """``name``: the filters as a matrix (out_channels, kk), or (kk, out_channels) if ``transposed``."""
    shape, index = ("(kk, no)", "r, o") if transposed else ("(no, kk)", "o, r")
    return [
        f"{name} = np.empty({shape}, np.{dtype})",
        "for o in range(no):",
        "    for c in range(nc):",
        "        for u in range(kh):",
        "            for v in range(kw):",
        "                r = (c * kh + u) * kw + v",
        f"                {name}[{index}] = {filters}[{_tap(op)}]",
    ]


def _pixels_matrix(name: str, top: str, transposed: bool, dtype: str) -> list[str]:
    """``name``: the chunk's ``top`` as (out_channels, n), or (n, out_channels) if ``transposed``."""
    shape, index = ("(n, no)", "row, o") if transposed else ("(no, n)", "o, row")
    return [
        f"{name} = np.empty({shape}, np.{dtype})",
        "for bb in range(nbc):",
        "    for o in range(no):",
        "        for i in range(oh):",
        "            for j in range(ow):",
        "                row = (bb * oh + i) * ow + j",
        f"                {name}[{index}] = {top}[b0 + bb, o, i, j]",
    ]


@register_kernel(Conv2d)
def conv2d_kernel(op: Conv2d, node: Apply, name: str) -> Kernel:
    """The convolution: the im2col matrix of each chunk of images times the filter matrix."""
    dtype = _dtype(op, node)
    x, w = node.inputs
    channels = "conv2d: the input and the filters differ in their number of channels (dimension 1)"
    chunk = [
        *_im2col(op, "xa", dtype),
        "prod = blas_dot(a, wt)",
        "for bb in range(nbc):",  # prod read in memory order: one image's output maps are written at once
        "    for i in range(oh):",
        "        for j in range(ow):",
        "            row = (bb * oh + i) * ow + j",
        "            for o in range(no):",
        "                out[b0 + bb, o, i, j] = prod[row, o]",
    ]
    body = [
        "nb = x.shape[0]",
        "nc = x.shape[1]",
        "ih = x.shape[2]",
        "iw = x.shape[3]",
        "no = w.shape[0]",
        "kh = w.shape[2]",
        "kw = w.shape[3]",
        "if w.shape[1] != nc:",
        f"    raise ValueError({channels!r})",
        *_geometry(op, ""),
        f"xa = {_as('x', x.type.dtype, dtype)}",
        *_filter_matrix(op, "wt", _as("w", w.type.dtype, dtype), dtype, transposed=True),
        f"out = np.empty((nb, no, oh, ow), np.{dtype})",
        *_chunks(chunk),
        "return out",
    ]
    return Kernel(name, function_source(name, ["x", "w"], body))


def _top_check(opname: str, batch: str, channels: str) -> str:
    message = f"{opname}: the output gradient's shape does not match the convolution's output"
    return (
        f"if top.shape[0] != {batch} or top.shape[1] != {channels} or top.shape[2] != oh or top.shape[3] != ow:\n"
        f"    raise ValueError({message!r})"
    )


@register_kernel(Conv2dGradWeights)
def conv2d_grad_weights_kernel(op: Conv2dGradWeights, node: Apply, name: str) -> Kernel:
    """The filters' gradient: the sum over the chunks of images of ``topgrad (no, n) @ im2col (n, kk)``."""
    dtype = _dtype(op, node)
    x, top, _ = node.inputs
    chunk = [*_im2col(op, "xa", dtype), *_pixels_matrix("t", "ta", False, dtype), "gm += blas_dot(t, a)"]
    body = [
        "nb = x.shape[0]",
        "nc = x.shape[1]",
        "ih = x.shape[2]",
        "iw = x.shape[3]",
        "no = top.shape[1]",
        "kh = shape[0]",
        "kw = shape[1]",
        *_geometry(op, _top_check(op.opname, "nb", "no")),
        f"xa = {_as('x', x.type.dtype, dtype)}",
        f"ta = {_as('top', top.type.dtype, dtype)}",
        f"gm = np.zeros((no, kk), np.{dtype})",
        *_chunks(chunk),
        f"out = np.empty((no, nc, kh, kw), np.{dtype})",
        "for o in range(no):",
        "    for c in range(nc):",
        "        for u in range(kh):",
        "            for v in range(kw):",
        f"                out[{_tap(op)}] = gm[o, (c * kh + u) * kw + v]",
        "return out",
    ]
    return Kernel(name, function_source(name, ["x", "top", "shape"], body))


@register_kernel(Conv2dGradInputs)
def conv2d_grad_inputs_kernel(op: Conv2dGradInputs, node: Apply, name: str) -> Kernel:
    """The input's gradient: ``cols = topgrad (n, no) @ filters (no, kk)``, each row added back into its
    window (col2im)."""
    dtype = _dtype(op, node)
    w, top, _ = node.inputs
    chunk = [*_pixels_matrix("t", "ta", True, dtype), "cols = blas_dot(t, wm)", *_col2im(op, "out")]
    body = [
        "nb = top.shape[0]",
        "nc = w.shape[1]",
        "ih = shape[0]",
        "iw = shape[1]",
        "no = w.shape[0]",
        "kh = w.shape[2]",
        "kw = w.shape[3]",
        *_geometry(op, _top_check(op.opname, "nb", "no")),
        *_filter_matrix(op, "wm", _as("w", w.type.dtype, dtype), dtype, transposed=False),
        f"ta = {_as('top', top.type.dtype, dtype)}",
        f"out = np.zeros((nb, nc, ih, iw), np.{dtype})",
        *_chunks(chunk),
        "return out",
    ]
    return Kernel(name, function_source(name, ["w", "top", "shape"], body))


__all__ = ["conv2d_grad_inputs_kernel", "conv2d_grad_weights_kernel", "conv2d_kernel", "kernel_for"]
