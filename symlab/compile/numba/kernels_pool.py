r"""Numba kernels of ``Pool`` and its gradients (``MaxPoolGrad``, ``AveragePoolGrad``,
``DownsampleFactorMaxGradGrad``): loops over windows, the window, stride and padding as literals.

The leading dimensions are flattened into one (a view of a C-contiguous input),
so one kernel serves any rank; each window is clipped to the image's pixels
(``max`` and ``sum`` never see the padding) and an average divides by the
window's count with or without the padding, as the op's ``perform`` does:

>>> import symlab.tensor as st
>>> from symlab.compile.numba.kernels import kernel_for
>>> from symlab.tensor.signal.pool import pool_2d
>>> print(kernel_for(pool_2d(st.dmatrix("x"), (2, 2), ignore_border=True, mode="sum").owner, "k").source)
def k(x):
    h = x.shape[0]
    w = x.shape[1]
    if h == 0 or w == 0:
        raise ValueError('Pool{ws=(2, 2),stride=(2, 2),pad=(0, 0),ignore_border=True,mode=sum}: the image (the last two dimensions of the input) must not be empty')
    if h < 2 or w < 2:
        raise ValueError('Pool{ws=(2, 2),stride=(2, 2),pad=(0, 0),ignore_border=True,mode=sum}: the window ws=(2, 2) is larger than the image (the last two dimensions of the input); with ignore_border=True no window fits')
    oh = h // 2
    ow = w // 2
    nb = 1
    xf = flat_input(x).reshape((nb, h, w))
    out = np.empty((nb, oh, ow), np.float64)
    for b in range(nb):
        for i in range(oh):
            r0 = i * 2
            r1 = r0 + 2
            if r1 > h:
                r1 = h
            for j in range(ow):
                c0 = j * 2
                c1 = c0 + 2
                if c1 > w:
                    c1 = w
                s = np.float64(0)
                for r in range(r0, r1):
                    for c in range(c0, c1):
                        s += xf[b, r, c]
                out[b, i, j] = s
    return out.reshape((oh, ow))
<BLANKLINE>
"""

from __future__ import annotations

from symlab.compile.numba.codegen import check_dtypes, dtype_src, message
from symlab.compile.numba.kernels import Kernel, function_source, register_kernel
from symlab.graph.basic import Apply
from symlab.tensor.signal.pool import AveragePoolGrad, DownsampleFactorMaxGradGrad, MaxPoolGrad, Pool, _PoolBase


def _size_src(op: _PoolBase, d: int, size: str) -> str:
    """The source of Theano's number of windows along pooled dimension ``d`` of ``size`` pixels."""
    ws, st, pad = op.ws[d], op.stride[d], op.pad[d]
    padded = f"({size} + {2 * pad})" if pad else size
    if op.ignore_border:
        if ws == st:
            return f"{padded} // {st}"
        return f"max(({padded} - {ws}) // {st} + 1, 0)"
    if st >= ws:
        return f"({padded} - 1) // {st} + 1"
    return f"max(0, ({padded} - {1 + ws - st}) // {st}) + 1"


def _image_checks(op: _PoolBase) -> list[str]:
    """Read ``h``, ``w`` from ``x``; raise on an empty image, or one no window fits with ignore_border=True."""
    lines = [
        "if h == 0 or w == 0:",
        f"    raise ValueError({message(op, 'the image (the last two dimensions of the input) must not be empty')})",
    ]
    if op.ignore_border:
        padded = f" padded by pad={op.pad}" if max(op.pad) else ""
        text = (f"the window ws={op.ws} is larger than the image (the last two dimensions of the input{padded}); "
                "with ignore_border=True no window fits")
        lines += [f"if h < {op.ws[0] - 2 * op.pad[0]} or w < {op.ws[1] - 2 * op.pad[1]}:",
                  f"    raise ValueError({message(op, text)})"]
    return lines


def _lead(ndim: int, array: str) -> tuple[str, str]:
    """(the product of the leading sizes of ``array``, the source of its leading shape followed by ``", "``)."""
    lead = [f"{array}.shape[{d}]" for d in range(ndim - 2)]
    return (" * ".join(lead) or "1", "".join(f"{s}, " for s in lead))


def _window_loops(op: _PoolBase, counts: str | None) -> list[str]:
    """Loops over the windows of image ``b``: the window's pixels are rows ``r0:r1``, columns ``c0:c1``.

    ``counts`` is ``"inc"`` or ``"exc"`` to set ``n``, the size the average divides by; the body goes at depth 3.
    """
    lines = ["for b in range(nb):", "    for i in range(oh):"]

    def dim(index: str, lo: str, hi: str, size: str, d: int, depth: int) -> list[str]:
        pad, ws = op.pad[d], op.ws[d]
        start = f"{index} * {op.stride[d]}" + (f" - {pad}" if pad else "")
        body = [f"{lo} = {start}", f"{hi} = {lo} + {ws}"]
        if counts == "inc":  # the window inside the padded image, padding zeros included
            limit = f"{size} + {pad}" if pad else size
            body.append(f"n{lo} = min({hi}, {limit}) - {lo}")
        if pad:
            body += [f"if {lo} < 0:", f"    {lo} = 0"]
        body += [f"if {hi} > {size}:", f"    {hi} = {size}"]
        if counts == "exc":
            body.append(f"n{lo} = {hi} - {lo}")
        return ["    " * depth + line for line in body]

    lines += dim("i", "r0", "r1", "h", 0, 2)
    lines.append("        for j in range(ow):")
    lines += dim("j", "c0", "c1", "w", 1, 3)
    if counts:
        lines.append("            n = nr0 * nc0")
    return lines


def _prologue(op: _PoolBase, node: Apply, x: str = "x") -> tuple[list[str], str]:
    """(the lines that read and check the image size of ``x``, the source of its number of images)."""
    ndim = node.inputs[0].ndim
    nb, _ = _lead(ndim, x)
    return [f"h = {x}.shape[{ndim - 2}]", f"w = {x}.shape[{ndim - 1}]", *_image_checks(op)], nb


@register_kernel(Pool)
def _pool(op: Pool, node: Apply, name: str) -> Kernel:
    """The maximum (a NaN propagates, as in ``np.max``), the sum or the average of each window."""
    check_dtypes(node)
    ndim = node.inputs[0].ndim
    dtype = dtype_src(node.outputs[0].type.dtype)
    body, nb = _prologue(op, node)
    _, lead = _lead(ndim, "x")
    body += [
        f"oh = {_size_src(op, 0, 'h')}",
        f"ow = {_size_src(op, 1, 'w')}",
        f"nb = {nb}",
        "xf = flat_input(x).reshape((nb, h, w))",
        f"out = np.empty((nb, oh, ow), {dtype})",
    ]
    counts = None if op.mode in ("max", "sum") else op.mode[len("average_"):-len("_pad")]
    body += _window_loops(op, counts)
    inner = "                "
    if op.mode == "max":
        body += [
            "            m = xf[b, r0, c0]",
            "            for r in range(r0, r1):",
            "                for c in range(c0, c1):",
            "                    v = xf[b, r, c]",
            "                    if v > m or v != v:  # a NaN stays: v > NaN is False",
            "                        m = v",
            "            out[b, i, j] = m",
        ]
    else:
        body += [
            f"            s = {dtype}(0)",
            "            for r in range(r0, r1):",
            f"{inner}for c in range(c0, c1):",
            f"{inner}    s += xf[b, r, c]",
            "            out[b, i, j] = s" if op.mode == "sum" else f"            out[b, i, j] = s / {dtype}(n)",
        ]
    body.append(f"return out.reshape(({lead}oh, ow))")
    return Kernel(name, function_source(name, ["x"], body))


def _grad_prologue(op: _PoolBase, node: Apply, pooled: str) -> list[str]:
    """Read the image ``x`` and the pooled-shaped input ``pooled`` as 3-d arrays; check their sizes agree."""
    ndim = node.inputs[0].ndim
    body, nb = _prologue(op, node)
    text = "the pooled input and the gradient do not match the input's shape and the window"
    body += [
        f"oh = {pooled}.shape[{ndim - 2}]",
        f"ow = {pooled}.shape[{ndim - 1}]",
        f"if oh != {_size_src(op, 0, 'h')} or ow != {_size_src(op, 1, 'w')}:",
        f"    raise ValueError({message(op, text)})",
    ]
    for d in range(ndim - 2):
        body += [f"if {pooled}.shape[{d}] != x.shape[{d}]:", f"    raise ValueError({message(op, text)})"]
    body += [f"nb = {nb}", "xf = flat_input(x).reshape((nb, h, w))"]
    return body


def _same_shape(op: _PoolBase, ndim: int, a: str, b: str) -> list[str]:
    text = f"input {b} must have the shape of input {a}"
    return [line for d in range(ndim)
            for line in (f"if {b}.shape[{d}] != {a}.shape[{d}]:", f"    raise ValueError({message(op, text)})")]


@register_kernel(MaxPoolGrad)
def _max_pool_grad(op: MaxPoolGrad, node: Apply, name: str) -> Kernel:
    """Each window's gradient added to every pixel of the window equal to its maximum."""
    check_dtypes(node)
    ndim = node.inputs[0].ndim
    dtype = dtype_src(node.outputs[0].type.dtype)
    body = _grad_prologue(op, node, "maxout") + _same_shape(op, ndim, "maxout", "gz") + [
        "mf = flat_input(maxout).reshape((nb, oh, ow))",
        "gf = flat_input(gz).reshape((nb, oh, ow))",
        f"gx = np.zeros((nb, h, w), {dtype})",
        *_window_loops(op, None),
        "            m = mf[b, i, j]",
        f"            g = {dtype}(gf[b, i, j])",
        "            for r in range(r0, r1):",
        "                for c in range(c0, c1):",
        "                    if xf[b, r, c] == m:",
        "                        gx[b, r, c] += g",
        "return gx.reshape(x.shape)",
    ]
    return Kernel(name, function_source(name, ["x", "maxout", "gz"], body))


@register_kernel(AveragePoolGrad)
def _average_pool_grad(op: AveragePoolGrad, node: Apply, name: str) -> Kernel:
    """Each window's gradient (divided by its count for an average) added to each of its pixels."""
    check_dtypes(node)
    dtype = dtype_src(node.outputs[0].type.dtype)
    counts = None if op.mode == "sum" else op.mode[len("average_"):-len("_pad")]
    share = f"{dtype}(gf[b, i, j])" + ("" if counts is None else f" / {dtype}(n)")
    body = _grad_prologue(op, node, "gz") + [
        "gf = flat_input(gz).reshape((nb, oh, ow))",
        f"gx = np.zeros((nb, h, w), {dtype})",
        *_window_loops(op, counts),
        f"            g = {share}",
        "            for r in range(r0, r1):",
        "                for c in range(c0, c1):",
        "                    gx[b, r, c] += g",
        "return gx.reshape(x.shape)",
    ]
    return Kernel(name, function_source(name, ["x", "gz"], body))


@register_kernel(DownsampleFactorMaxGradGrad)
def _max_pool_grad_grad(op: DownsampleFactorMaxGradGrad, node: Apply, name: str) -> Kernel:
    """Per window, the sum of ``ggx`` over the pixels equal to the window's maximum."""
    check_dtypes(node)
    ndim = node.inputs[0].ndim
    dtype = dtype_src(node.outputs[0].type.dtype)
    body = _grad_prologue(op, node, "maxout") + _same_shape(op, ndim, "x", "ggx") + [
        "mf = flat_input(maxout).reshape((nb, oh, ow))",
        "gf = flat_input(ggx).reshape((nb, h, w))",
        f"out = np.empty((nb, oh, ow), {dtype})",
        *_window_loops(op, None),
        "            m = mf[b, i, j]",
        f"            s = {dtype}(0)",
        "            for r in range(r0, r1):",
        "                for c in range(c0, c1):",
        "                    if xf[b, r, c] == m:",
        f"                        s += {dtype}(gf[b, r, c])",
        "            out[b, i, j] = s",
        "return out.reshape(maxout.shape)",
    ]
    return Kernel(name, function_source(name, ["x", "maxout", "ggx"], body))


__all__: list[str] = []
