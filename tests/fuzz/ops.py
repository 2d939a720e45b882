"""The operations the generator draws from, each as a Python code template.

An operation is an :class:`OpKind`: a name, a weight, and ``pick(rng, pool)``, which chooses arguments
among the expressions built so far and returns ``(args, code)``: ``code`` is a ``str.format`` template
over the arguments (``"st.exp({0})"``, ``"{0}[1:, ::-2]"``). The same text both builds the symbolic
graph (it is evaluated with the arguments bound) and prints the reproduction of a failure, so what is
printed is exactly what was tested.

A ``pick`` returns ``None`` when the pool offers no suitable arguments; a template whose graph symlab
refuses, or whose reference value raises, is simply drawn again by the generator.

Besides the single operations there are *motifs*: small expressions written to match the rewrite rules
(``st.log(1 + x)``, ``x * y / y``, ``st.exp(x) / st.exp(x).sum(...)``...), so that random graphs
exercise the rules and not only the kernels.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: ``pick(rng, pool)`` -> ``(args, template)`` or None.
Picker = Callable[[np.random.Generator, Sequence[Any]], tuple[list[Any], str] | None]


@dataclass(frozen=True)
class OpKind:
    """One kind of operation: how to pick its arguments and write its code."""

    name: str
    pick: Picker
    weight: float = 1.0
    #: Weight in the gradient checks' expressions (0: not there): differentiable on the smooth values.
    smooth_weight: float = 0.0


FLOATS = ("float32", "float64")
INTS = ("int8", "int32", "int64")


def is_float(e: Any) -> bool:
    return e.dtype in FLOATS


def is_int(e: Any) -> bool:
    return e.dtype in INTS


def is_numeric(e: Any) -> bool:
    return is_float(e) or is_int(e)


def _recent(rng: np.random.Generator, pool: Sequence[Any], where: Callable[[Any], bool]) -> Any | None:
    """A pool member satisfying ``where``, the later (deeper) ones more likely."""
    choices = [e for e in pool if where(e)]
    if not choices:
        return None
    weights = np.arange(1, len(choices) + 1, dtype=float) ** 1.5
    return choices[int(rng.choice(len(choices), p=weights / weights.sum()))]


def broadcastable_with(a: Any, b: Any) -> bool:
    """Whether symlab broadcasts ``a`` with ``b``: equal sizes, or a *static* 1 (rank padded on the left)."""
    n = max(a.ndim, b.ndim)
    sa = (1,) * (n - a.ndim) + a.shape
    sb = (1,) * (n - b.ndim) + b.shape
    ta = (1,) * (n - a.ndim) + a.static
    tb = (1,) * (n - b.ndim) + b.static
    return all(x == y or (x == 1 and tx == 1) or (y == 1 and ty == 1) for x, y, tx, ty in zip(sa, sb, ta, tb))


# -- elementwise ----------------------------------------------------------------------------------------
def unary(template: str, where: Callable[[Any], bool] = is_numeric) -> Picker:
    def pick(rng, pool):
        x = _recent(rng, pool, where)
        return None if x is None else ([x], template)

    return pick


def binary(template: str, where: Callable[[Any], bool] = is_numeric) -> Picker:
    def pick(rng, pool):
        x = _recent(rng, pool, where)
        if x is None:
            return None
        y = _recent(rng, pool, lambda e: where(e) and broadcastable_with(x, e))
        if y is None:
            return None
        return ([x, y] if rng.random() < 0.5 else [y, x]), template

    return pick


def with_constant(templates: Sequence[str], constants: Sequence[str], where: Callable[[Any], bool] = is_numeric) -> Picker:
    """``x op c`` or ``c op x`` with a Python number ``c`` (weak: it does not widen the dtype)."""

    def pick(rng, pool):
        x = _recent(rng, pool, where)
        if x is None:
            return None
        c = constants[int(rng.integers(len(constants)))]
        template = templates[int(rng.integers(len(templates)))]
        return [x], template.replace("C", c)

    return pick


def switch_pick(rng, pool):
    cond = _recent(rng, pool, lambda e: e.dtype == "bool" or is_numeric(e))
    if cond is None:
        return None
    a = _recent(rng, pool, lambda e: is_numeric(e) and broadcastable_with(cond, e))
    b = _recent(rng, pool, lambda e: is_numeric(e) and broadcastable_with(cond, e)) if a is not None else None
    if b is None:
        return None
    return [cond, a, b], "st.switch({0}, {1}, {2})"


def clip_pick(rng, pool):
    x = _recent(rng, pool, is_numeric)
    if x is None:
        return None
    lo, hi = sorted(rng.choice([-2, -1, 0, 1, 3], size=2, replace=False).tolist())
    if rng.random() < 0.1:
        lo, hi = hi, lo  # an empty interval: NumPy gives hi everywhere
    if is_float(x):
        return [x], f"st.clip({{0}}, {float(lo)}, {float(hi)})"
    return [x], f"st.clip({{0}}, {lo}, {hi})"


def cast_pick(rng, pool):
    # No float -> int casts: NaN, inf and out-of-range values have no defined integer (C leaves it undefined).
    x = _recent(rng, pool, lambda e: e.dtype in (*FLOATS, *INTS, "bool"))
    if x is None:
        return None
    if is_float(x):
        target = "float32" if x.dtype == "float64" else "float64"
    else:
        target = str(rng.choice(["float64", "float32", "int64", "int32", "int8"]))
    return [x], f'st.cast({{0}}, "{target}")'


# -- structure ------------------------------------------------------------------------------------------
def transpose_pick(rng, pool):
    x = _recent(rng, pool, lambda e: e.ndim >= 2)
    return None if x is None else ([x], "{0}.T")


def dimshuffle_pick(rng, pool):
    x = _recent(rng, pool, lambda e: e.ndim >= 1)
    if x is None:
        return None
    kept = [k for k in range(x.ndim) if not (x.static[k] == 1 and rng.random() < 0.5)]  # drop some static 1s
    order: list[Any] = [int(k) for k in rng.permutation(kept)]
    for _ in range(int(rng.integers(0, 2))):
        order.insert(int(rng.integers(0, len(order) + 1)), "x")
    if not order:
        order = ["x"]
    return [x], "{0}.dimshuffle(" + ", ".join(repr(o) for o in order) + ")"


def expand_dims_pick(rng, pool):
    x = _recent(rng, pool, lambda e: e.ndim <= 2)
    if x is None:
        return None
    axis = int(rng.integers(-(x.ndim + 1), x.ndim + 1))
    return [x], f"st.expand_dims({{0}}, {axis})"


def squeeze_pick(rng, pool):
    x = _recent(rng, pool, lambda e: 1 in e.static)
    return None if x is None else ([x], "st.squeeze({0})")


def reshape_pick(rng, pool):
    x = _recent(rng, pool, lambda e: e.ndim >= 1)
    if x is None:
        return None
    size = int(np.prod(x.shape))
    if rng.random() < 0.25 and x.ndim == 2:  # a symbolic shape: Shape_i nodes, the shape rewrites
        return [x], "{0}.reshape(({0}.shape[1], {0}.shape[0]))"
    ndim = int(rng.integers(1, 4))
    dims = [1] * ndim
    rest = size
    for k in range(ndim - 1):
        divisors = [d for d in range(1, rest + 1) if rest % d == 0] if rest > 0 else [0, 1, 2]
        dims[k] = int(rng.choice(divisors))
        rest = rest // dims[k] if dims[k] else rest
    dims[-1] = rest if size > 0 else (0 if 0 not in dims[:-1] else int(rng.integers(0, 3)))
    if size > 0 and rng.random() < 0.4:
        dims[int(rng.integers(ndim))] = -1
    if int(np.prod([d for d in dims if d != -1])) != size and -1 not in dims:
        return None
    return [x], f"{{0}}.reshape({tuple(dims)!r})"


def flatten_pick(rng, pool):
    x = _recent(rng, pool, lambda e: e.ndim >= 1)
    return None if x is None else ([x], "st.flatten({0})")


def _slice_code(rng: np.random.Generator, size: int) -> str:
    def bound() -> str:
        return "" if rng.random() < 0.4 else str(int(rng.integers(-size - 2, size + 3)))

    step = "" if rng.random() < 0.5 else str(int(rng.choice([-2, -1, 2, 3])))
    text = f"{bound()}:{bound()}"
    return text + (f":{step}" if step else "")


def basic_index(rng: np.random.Generator, x: Any) -> str | None:
    """An index of integers and slices for ``x`` (at least one entry)."""
    if x.ndim == 0:
        return None
    parts = []
    for k in range(int(rng.integers(1, x.ndim + 1))):
        size = x.shape[k]
        if size > 0 and rng.random() < 0.3:
            parts.append(str(int(rng.integers(-size, size))))
        else:
            parts.append(_slice_code(rng, size))
    return ", ".join(parts)


def subtensor_pick(rng, pool):
    x = _recent(rng, pool, lambda e: e.ndim >= 1)
    if x is None:
        return None
    index = basic_index(rng, x)
    return [x], f"{{0}}[{index}]"


def advanced_pick(rng, pool):
    x = _recent(rng, pool, lambda e: e.ndim >= 1 and e.shape[0] > 0)
    if x is None:
        return None
    axis = int(rng.integers(0, min(x.ndim, 2)))
    size = x.shape[axis]
    if size == 0:
        return None
    picks = [int(i) for i in rng.integers(-size, size, size=int(rng.integers(1, 5)))]
    index = f"{picks!r}" if axis == 0 else f":, {picks!r}"
    return [x], f"{{0}}[{index}]"


def set_subtensor_pick() -> Picker:
    """``st.set_subtensor`` / ``st.inc_subtensor`` of a basic or an integer-array index (positions may repeat:
    of the writes to one position, only the last lands, and only it gets a gradient)."""

    def pick(rng, pool):
        x = _recent(rng, pool, lambda e: e.ndim >= 1 and is_numeric(e))
        if x is None:
            return None
        fn = "st.set_subtensor" if rng.random() < 0.5 else "st.inc_subtensor"
        size = x.shape[0]
        if rng.random() < 0.3 and size > 0:
            picks = [int(i) for i in rng.integers(-size, size, size=int(rng.integers(1, 4)))]
            index = repr(picks)
        else:
            index = basic_index(rng, x)
        # The value must broadcast to the indexed part: a 0-d value of the same dtype, or that part itself, changed.
        y = _recent(rng, pool, lambda e: e.ndim == 0 and e.dtype == x.dtype) if rng.random() < 0.5 else None
        if y is not None:
            return [x, y], f"{fn}({{0}}[{index}], {{1}})"
        return [x], f"{fn}({{0}}[{index}], {{0}}[{index}] * 2)"

    return pick


def join_pick(rng, pool):
    x = _recent(rng, pool, lambda e: e.ndim >= 1)
    if x is None:
        return None
    axis = int(rng.integers(0, x.ndim))
    other = _recent(rng, pool, lambda e: e.ndim == x.ndim and all(
        a == b for k, (a, b) in enumerate(zip(e.shape, x.shape)) if k != axis))
    if other is None:
        return None
    if rng.random() < 0.5:
        return [x, other], f"st.concatenate([{{0}}, {{1}}], axis={axis})"
    same = _recent(rng, pool, lambda e: e.shape == x.shape)
    return [x, same], f"st.stack([{{0}}, {{1}}], axis={int(rng.integers(-x.ndim - 1, x.ndim + 1))})"


# -- reductions and products ------------------------------------------------------------------------------
def _axis(rng: np.random.Generator, ndim: int, allow_tuple: bool = True) -> str:
    if ndim == 0 or rng.random() < 0.3:
        return "None"
    if allow_tuple and ndim >= 2 and rng.random() < 0.25:
        axes = sorted(int(a) for a in rng.choice(ndim, size=2, replace=False))
        return repr(tuple(axes))
    return str(int(rng.integers(-ndim, ndim)))


def reduce_pick(fn: str, where: Callable[[Any], bool] = is_numeric, allow_tuple: bool = True) -> Picker:
    def pick(rng, pool):
        x = _recent(rng, pool, where)
        if x is None:
            return None
        keep = ", keepdims=True" if rng.random() < 0.3 else ""
        return [x], f"{fn}({{0}}, axis={_axis(rng, x.ndim, allow_tuple)}{keep})"

    return pick


def softmax_pick(fn: str) -> Picker:
    def pick(rng, pool):
        x = _recent(rng, pool, lambda e: is_float(e) and e.ndim >= 1)
        if x is None:
            return None
        axis = "None" if rng.random() < 0.15 else str(int(rng.integers(-x.ndim, x.ndim)))
        return [x], f"{fn}({{0}}, axis={axis})"

    return pick


def dot_pick(rng, pool):
    x = _recent(rng, pool, lambda e: is_numeric(e) and e.ndim in (1, 2))
    if x is None:
        return None
    inner = x.shape[-1]
    y = _recent(rng, pool, lambda e: is_numeric(e) and e.ndim in (1, 2) and e.shape[0] == inner)
    if y is None:
        return None
    template = "st.dot({0}, {1})" if rng.random() < 0.6 else "({0} @ {1})"
    return [x, y], template


def outer_pick(rng, pool):
    x = _recent(rng, pool, lambda e: is_numeric(e) and e.ndim == 1)
    y = _recent(rng, pool, lambda e: is_numeric(e) and e.ndim == 1) if x is not None else None
    return None if y is None else ([x, y], "st.outer({0}, {1})")


def shape_pick(rng, pool):
    x = _recent(rng, pool, lambda e: e.ndim >= 1)
    if x is None:
        return None
    return [x], f"{{0}}.shape[{int(rng.integers(-x.ndim, x.ndim))}]"


def fill_pick(rng, pool):
    x = _recent(rng, pool, is_numeric)
    if x is None:
        return None
    choice = rng.random()
    if choice < 0.3:
        return [x], "st.zeros_like({0})"
    if choice < 0.6:
        return [x], "st.ones_like({0})"
    y = _recent(rng, pool, lambda e: is_numeric(e) and broadcastable_with(x, e) and e.ndim <= x.ndim)
    return None if y is None else ([x, y], "st.second({0}, {1})")


def motif(templates: Sequence[str], where: Callable[[Any], bool] = is_float, arity: int = 1) -> Picker:
    """Small expressions the rewrite rules look for."""

    def pick(rng, pool):
        x = _recent(rng, pool, where)
        if x is None:
            return None
        args = [x]
        if arity == 2:
            y = _recent(rng, pool, lambda e: where(e) and broadcastable_with(x, e))
            if y is None:
                return None
            args.append(y)
        return args, templates[int(rng.integers(len(templates)))]

    return pick


def _ops() -> list[OpKind]:
    float_like = is_numeric
    ops = []
    for name in ["exp", "log", "sqrt", "tanh", "sigmoid", "sin", "cos", "expm1", "log1p", "softplus", "erf",
                 "erfc", "arctan", "sinh", "cosh", "exp2", "log2", "log10", "tan", "arcsin", "arccos", "gammaln",
                 "psi", "gamma"]:
        ops.append(OpKind(name, unary(f"st.{name}({{0}})", lambda e: e.dtype in ("float32", "float64", "int32", "int64")),
                          weight=0.4,
                          smooth_weight=0.3 * (name in ("exp", "tanh", "sigmoid", "sin", "cos", "softplus", "arctan", "erf"))))
    for name, template in [("neg", "(-{0})"), ("abs", "abs({0})"), ("sqr", "st.sqr({0})"), ("sign", "st.sign({0})"),
                           ("reciprocal", "st.reciprocal({0})"), ("floor", "st.floor({0})"), ("ceil", "st.ceil({0})"),
                           ("round", "st.round({0})")]:
        ops.append(OpKind(name, unary(template, float_like), weight=0.4,
                          smooth_weight=0.5 * (name in ("neg", "sqr"))))
    ops += [
        OpKind("isnan", unary("st.isnan({0})", is_float), 0.2),
        OpKind("isinf", unary("st.isinf({0})", is_float), 0.2),
        OpKind("invert", unary("(~{0})", lambda e: e.dtype in (*INTS, "bool")), 0.3),
    ]
    for name, template in [("add", "({0} + {1})"), ("sub", "({0} - {1})"), ("mul", "({0} * {1})"),
                           ("true_div", "({0} / {1})"), ("int_div", "({0} // {1})"), ("mod", "({0} % {1})"),
                           ("pow", "({0} ** {1})"), ("maximum", "st.maximum({0}, {1})"),
                           ("minimum", "st.minimum({0}, {1})"), ("arctan2", "st.arctan2({0}, {1})")]:
        weight = 1.2 if name in ("add", "sub", "mul", "true_div") else 0.4
        ops.append(OpKind(name, binary(template), weight, smooth_weight=1.0 * (name in ("add", "sub", "mul"))))
    for name, template in [("lt", "({0} < {1})"), ("gt", "({0} > {1})"), ("le", "({0} <= {1})"), ("ge", "({0} >= {1})"),
                           ("eq", "st.eq({0}, {1})"), ("neq", "st.neq({0}, {1})")]:
        ops.append(OpKind(name, binary(template), 0.25))
    logical = lambda e: e.dtype in (*INTS, "bool")  # noqa: E731
    for name, template in [("and", "({0} & {1})"), ("or", "({0} | {1})"), ("xor", "({0} ^ {1})")]:
        ops.append(OpKind(name, binary(template, logical), 0.2))
    ops += [
        OpKind("const_arith", with_constant(["({0} + C)", "(C - {0})", "({0} * C)", "({0} / C)", "(C / {0})"],
                                            ["0", "1", "-1", "2", "0.5", "2.0", "-3.0", "1e300", "1e-300", "np.nan", "np.inf"]),
               1.0),
        OpKind("const_smooth", with_constant(["({0} + C)", "(C - {0})", "({0} * C)", "({0} / C)"], ["0.5", "2.0", "-3.0", "1.0"],
                                             is_float), 0.0, smooth_weight=1.0),
        OpKind("pow_const", with_constant(["({0} ** C)"], ["0", "1", "2", "3", "4", "0.5", "-1", "-0.5", "2.5", "2.0"]),
               0.6),
        OpKind("pow_smooth", with_constant(["({0} ** C)"], ["2", "3", "4", "2.0"], is_float), 0.0,
               smooth_weight=1.0),
        OpKind("switch", switch_pick, 0.4),
        OpKind("clip", clip_pick, 0.3),
        OpKind("cast", cast_pick, 0.3),
        OpKind("fill", fill_pick, 0.2),
        # motifs: the patterns of the rewrite rules
        OpKind("motif_log", motif(["st.log(1 + {0})", "st.log({0} + 1)", "(st.exp({0}) - 1)", "st.log(st.exp({0}))",
                                   "st.exp(st.log({0}))", "st.log(1 + st.exp({0}))", "st.log(1 - st.exp({0}))",
                                   "(1 - st.exp({0}))"]), 0.6),
        OpKind("motif_sigmoid", motif(["st.log(st.sigmoid({0}))", "st.log(1 - st.sigmoid({0}))", "(1 - st.sigmoid({0}))",
                                       "(1 / (1 + st.exp(-{0})))", "(st.exp({0}) / (1 + st.exp({0})))",
                                       "st.sigmoid({0}) * (1 - st.sigmoid({0}))"]), 0.6),
        OpKind("motif_algebra", motif(["({0} * {1} / {1})", "({1} * {0} / {1})", "({0} - {0})", "({0} + {1} - {0})",
                                       "(-(-{0}))", "({0} * 1)", "({0} + 0)", "({0} * {0})", "({0} * {0} * {0})",
                                       "(2 * {0} * 3 + {0} - {1})", "(({0} ** 2) ** 3)", "st.sqrt({0} ** 2)",
                                       "(({0} ** 0.5) ** 2)", "(abs(-{0}))", "({0} / {1}) / (1 / {1})",
                                       "({0} / {1} + {1} / {0}) * {0} * {1}"],
                                      is_numeric, arity=2), 1.0),
        OpKind("motif_smooth", motif(["(-(-{0}))", "({0} * {0})", "({0} + {1} - {0})", "(2 * {0} * 3 + {0} - {1})",
                                      "st.log(1 + {0} * {0})", "st.sqrt(1 + {0} * {0})", "({0} / (1 + {1} * {1}))",
                                      "st.log(st.sigmoid({0}))", "(1 - st.sigmoid({0}))", "st.log(st.exp({0}))"],
                                     is_float, arity=2), 0.0, smooth_weight=1.0),
        # structure
        OpKind("transpose", transpose_pick, 0.5, smooth_weight=1.0),
        OpKind("dimshuffle", dimshuffle_pick, 0.5, smooth_weight=1.0),
        OpKind("expand_dims", expand_dims_pick, 0.2, smooth_weight=1.0),
        OpKind("squeeze", squeeze_pick, 0.2, smooth_weight=1.0),
        OpKind("reshape", reshape_pick, 0.5, smooth_weight=1.0),
        OpKind("flatten", flatten_pick, 0.2, smooth_weight=1.0),
        OpKind("subtensor", subtensor_pick, 0.7, smooth_weight=1.0),
        OpKind("advanced_subtensor", advanced_pick, 0.4, smooth_weight=1.0),
        OpKind("set_subtensor", set_subtensor_pick(), 0.4, smooth_weight=1.0),
        OpKind("join", join_pick, 0.5, smooth_weight=1.0),
        OpKind("shape", shape_pick, 0.2),
        # reductions, products, softmax
        OpKind("sum", reduce_pick("st.sum"), 0.8, smooth_weight=1.0),
        OpKind("prod", reduce_pick("st.prod"), 0.3, smooth_weight=1.0),
        OpKind("max", reduce_pick("st.max"), 0.4, smooth_weight=0.4),  # ties (x[[1, 1]]) share the gradient
        OpKind("min", reduce_pick("st.min"), 0.3, smooth_weight=0.3),
        OpKind("mean", reduce_pick("st.mean"), 0.4, smooth_weight=1.0),
        OpKind("var", reduce_pick("st.var", is_float), 0.2, smooth_weight=1.0),
        OpKind("std", reduce_pick("st.std", is_float), 0.2),
        OpKind("argmax", reduce_pick("st.argmax", is_numeric, allow_tuple=False), 0.2),
        OpKind("argmin", reduce_pick("st.argmin", is_numeric, allow_tuple=False), 0.2),
        OpKind("all", reduce_pick("st.all", lambda e: True), 0.15),
        OpKind("any", reduce_pick("st.any", lambda e: True), 0.15),
        OpKind("dot", dot_pick, 0.6, smooth_weight=1.0),
        OpKind("outer", outer_pick, 0.2, smooth_weight=1.0),
        OpKind("softmax", softmax_pick("st.softmax"), 0.4, smooth_weight=1.0),
        OpKind("log_softmax", softmax_pick("st.log_softmax"), 0.3, smooth_weight=1.0),
        OpKind("logsumexp", softmax_pick("st.logsumexp"), 0.3, smooth_weight=1.0),
        OpKind("motif_softmax", motif(["(st.exp({0}) / st.exp({0}).sum(axis=-1, keepdims=True))",
                                       "st.log(st.exp({0}).sum(axis=-1))", "st.log(st.exp({0}).sum())"],
                                      lambda e: is_float(e) and e.ndim >= 1), 0.3, smooth_weight=1.0),
    ]
    return ops


#: Every operation, by name.
OPS: dict[str, OpKind] = {op.name: op for op in _ops()}
