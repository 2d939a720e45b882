"""Scalar operations: what one element of an ``Elemwise`` computes, each declared once.

Each operation is one statement, ``exp = ScalarOp("exp", 1, np.exp, ...)``,
that says everything symlab knows about it: its name, its arity, a NumPy
implementation that also works on whole arrays, an infix symbol for
``pprint``, a Python expression template that code generators compile, and
what the Numba backend needs to know to compute it fast and with NumPy's bits
(``expensive``: worth a parallel loop; ``approximate``: a library's
approximation, so the backend calls NumPy's own loop where one exists).
Constructing the op declares it: :func:`scalar_op` finds it by name and
:func:`declared_ops` lists every one, which is how the tensor layer, the
printers and the Numba kernels, machine and ufunc loops follow. The gradient
rule of each op sits next to its tensor name in :mod:`symlab.tensor.math`.
Output dtypes follow NumPy 2 exactly: they are found by asking NumPy.

>>> from symlab.scalar import add, exp, float64
>>> add.output_dtype("int32", "float32")
'float64'
>>> add.output_dtype("float32", 1.0)     # a Python scalar is weak
'float32'
>>> x = float64("x")
>>> exp(x).owner.op
exp
>>> scalar_op("cbrt").expr, scalar_op("cbrt").approximate
('np.cbrt({0})', True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Variable
from symlab.graph.op import Op
from symlab.scalar.type import ScalarType, get_scalar_type

#: Every declared scalar op by name, in declaration order (filled by :class:`ScalarOp`'s constructor).
_DECLARED: dict[str, ScalarOp] = {}


class ScalarOp(Op):
    """An operation on single numbers, identified by its ``name``; constructing one declares it.

    ``impl`` must accept NumPy arrays (it is applied to whole arrays by
    ``Elemwise``); ``symbol`` is the infix symbol ``pprint`` writes (``"+"``)
    or None for a call (``exp(x)``); ``expr`` is a ``str.format`` template
    over the input names, a Python expression that Numba compiles
    (``"({0} + {1})"``), or None when the op has none (the Numba backend then
    gives its own, see :mod:`symlab.compile.numba.scalar_rules`).

    ``expensive``: an element costs tens of cycles (a transcendental function, a
    square root), so a large loop computing it is worth running in parallel.
    ``approximate``: the result is a library's approximation, not correctly
    rounded, so two implementations may differ in the last bit; where NumPy's
    implementation is a ufunc the Numba kernels call NumPy's own inner loop for
    it, and so give NumPy's bits. ``expensive`` defaults to ``approximate``.

    ``declare=False`` makes an op that is not declared (a ``Cast`` per dtype is
    made on demand); a name can be declared once.
    """

    __props__ = ("name",)

    def __init__(
        self,
        name: str,
        nin: int,
        impl: Callable[..., Any],
        symbol: str | None = None,
        expr: str | None = None,
        commutative: bool = False,
        associative: bool = False,
        approximate: bool = False,
        expensive: bool | None = None,
        declare: bool = True,
    ) -> None:
        self._name = name
        self.nin = nin
        self.nout = 1
        self.impl = impl
        self.symbol = symbol
        self.expr = expr
        self.commutative = commutative
        self.associative = associative
        self.approximate = approximate
        self.expensive = approximate if expensive is None else expensive
        if declare:
            if name in _DECLARED:
                raise ValueError(f"scalar op {name!r} is already declared")
            _DECLARED[name] = self

    @property
    def name(self) -> str:  # type: ignore[override]
        return self._name

    def __str__(self) -> str:
        return self._name

    # -- dtypes -------------------------------------------------------------------
    def output_dtype(self, *args: Any) -> str:
        """The output dtype for inputs given as dtypes, or as Python scalars (weak).

        Raises ``TypeError`` naming the op when NumPy refuses those dtypes.
        """
        probes = [a if isinstance(a, bool | int | float | complex) else np.zeros(0, dtype=a) for a in args]
        if all(not isinstance(p, np.ndarray) for p in probes):
            probes = [np.asarray(p) for p in probes]  # all weak: Python's default dtypes
        try:
            with np.errstate(all="ignore"):
                result = self.impl(*probes)
        except (TypeError, OverflowError, ValueError) as err:
            shown = ", ".join(a if isinstance(a, str) else f"Python {type(a).__name__} {a!r}" for a in args)
            raise TypeError(f"scalar op {self.name} does not accept inputs of dtypes ({shown}): {err}") from None
        return np.asarray(result).dtype.name

    # -- graph --------------------------------------------------------------------
    def make_node(self, *inputs: Any) -> Apply:
        if self.nin >= 0 and len(inputs) != self.nin:
            raise TypeError(f"scalar op {self.name} takes {self.nin} inputs, received {len(inputs)}")
        variables = [as_scalar(i) for i in inputs]
        dtype = self.output_dtype(*[v.type.dtype for v in variables])
        return Apply(self, variables, [get_scalar_type(dtype)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        dtype = node.outputs[0].type.dtype
        with np.errstate(all="ignore"):
            output_storage[0][0] = np.asarray(self.impl(*inputs), dtype=dtype)[()]


class Cast(ScalarOp):
    """Conversion to ``dtype`` (NumPy's unsafe cast, like ``astype``); made on demand, not declared."""

    __props__ = ("dtype",)

    def __init__(self, dtype: str) -> None:
        self.dtype = get_scalar_type(dtype).dtype
        super().__init__(f"Cast{{{self.dtype}}}", 1, lambda x: np.asarray(x).astype(self.dtype), declare=False)

    def output_dtype(self, *args: Any) -> str:
        return self.dtype


def as_scalar(value: Any) -> Variable:
    """``value`` as a Variable of a ScalarType (a Python number becomes a constant)."""
    if isinstance(value, Variable):
        if not isinstance(value.type, ScalarType):
            raise TypeError(f"expected a scalar Variable, received {value} of type {value.type}")
        return value
    from symlab.graph.basic import Constant

    array = np.asarray(value)
    if array.ndim != 0:
        raise TypeError(f"expected a single number, received {value!r}")
    return Constant(get_scalar_type(array.dtype.name), array[()])


# -- implementations that NumPy does not name directly -------------------------------
def _special(name: str) -> Callable[..., Any]:
    def impl(*args: Any) -> Any:
        import scipy.special

        return getattr(scipy.special, name)(*args)

    impl.__name__ = name
    return impl


def _sigmoid(x: Any) -> Any:
    """``scipy.special.expit`` without importing SciPy (0.13 s, paid by every graph that uses a sigmoid, since
    its output dtype is found by calling this): the same dtypes, and the stable formula of the compiled kernels.

    >>> _sigmoid(np.array([-800.0, 0.0, 2.0, np.inf])), _sigmoid(np.int8(3)).dtype
    (array([0.        , 0.5       , 0.88079708, 1.        ]), dtype('float64'))
    """
    x = np.asarray(x)
    if x.dtype not in _SIGMOID_DTYPES:
        x = x.astype(np.float64)  # expit computes every other dtype in float64
    e = np.exp(-np.abs(x))
    out = np.where(x >= 0, 1 / (1 + e), e / (1 + e))
    return out[()] if out.ndim == 0 else out  # a scalar for a scalar, as a ufunc gives


_SIGMOID_DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.longdouble))


def _softplus(x: Any) -> Any:
    return np.logaddexp(np.zeros((), dtype=np.result_type(x, np.float16)), x)


def _sqr(x: Any) -> Any:
    return np.multiply(x, x)


def _second(a: Any, b: Any) -> Any:
    return np.broadcast_to(b, np.broadcast_shapes(np.shape(a), np.shape(b))).copy()


def _identity(x: Any) -> Any:
    return np.array(x, copy=True)


def _switch(cond: Any, a: Any, b: Any) -> Any:
    return np.where(cond, a, b)


def _true_div(a: Any, b: Any) -> Any:
    return np.true_divide(a, b)


def _clip(x: Any, lo: Any, hi: Any) -> Any:
    """``np.clip`` with the result it gives for scalar bounds, whatever the bounds' shapes.

    ``x`` where ``lo <= x <= hi`` (``clip(-0.0, 0.0, 3.0)`` is -0.0), ``lo`` where ``x < lo``, ``hi`` where
    ``x > hi`` (and everywhere when ``lo > hi``), NaN where ``x`` or a bound is NaN. NumPy's own loop for
    bounds that it reads element by element returns the bound where ``x`` equals it (0.0 there), and which
    loop it takes depends on how its iterator lays out the bounds (their strides), not on their values;
    this one result for every layout is what the Numba kernels compute too.
    """
    if np.size(lo) == 1 and np.size(hi) == 1:  # NumPy's loop for scalar bounds: read with stride 0
        out = np.clip(x, *(np.reshape(b, ()) if isinstance(b, np.ndarray) else b for b in (lo, hi)))
        shape = np.broadcast_shapes(np.shape(x), np.shape(lo), np.shape(hi))
        return out if np.shape(out) == shape else np.broadcast_to(out, shape).copy()
    dtype = np.result_type(x, lo, hi)
    if dtype.kind != "f":  # integers: no signed zero, no NaN, every loop gives the same
        return np.clip(x, lo, hi)
    x, lo, hi = (np.asarray(v, dtype=dtype) for v in (x, lo, hi))
    out = np.where(x < lo, lo, x)
    out = np.where(out > hi, hi, out)
    return np.where(lo != lo, lo, np.where(hi != hi, hi, out))


# -- the declarations ---------------------------------------------------------------------------------------------------
# arithmetic
add = ScalarOp("add", 2, np.add, "+", "({0} + {1})", commutative=True, associative=True)
sub = ScalarOp("sub", 2, np.subtract, "-", "({0} - {1})")
mul = ScalarOp("mul", 2, np.multiply, "*", "({0} * {1})", commutative=True, associative=True)
true_div = ScalarOp("true_div", 2, _true_div, "/", "({0} / {1})")
int_div = ScalarOp("int_div", 2, np.floor_divide, "//", "({0} // {1})")
mod = ScalarOp("mod", 2, np.mod, "%", "({0} % {1})")
pow = ScalarOp("pow", 2, np.power, "**", "({0} ** {1})", approximate=True)  # noqa: A001 - the op's name
neg = ScalarOp("neg", 1, np.negative, "-", "(-{0})")
abs = ScalarOp("abs", 1, np.abs, None, "abs({0})")  # noqa: A001
sign = ScalarOp("sign", 1, np.sign, None, "np.sign({0})")
reciprocal = ScalarOp("reciprocal", 1, np.reciprocal, None, "(1 / {0})")
sqr = ScalarOp("sqr", 1, _sqr, None, "({0} * {0})")
maximum = ScalarOp("maximum", 2, np.maximum, None, "max({0}, {1})", commutative=True)
minimum = ScalarOp("minimum", 2, np.minimum, None, "min({0}, {1})", commutative=True)
clip = ScalarOp("clip", 3, _clip, None, "min(max({0}, {1}), {2})")
switch = ScalarOp("switch", 3, _switch, None, "({1} if {0} else {2})")
second = ScalarOp("second", 2, _second, None, "{1}")
identity = ScalarOp("identity", 1, _identity, None, "{0}")
# comparison and logic
lt = ScalarOp("lt", 2, np.less, "<", "({0} < {1})")
gt = ScalarOp("gt", 2, np.greater, ">", "({0} > {1})")
le = ScalarOp("le", 2, np.less_equal, "<=", "({0} <= {1})")
ge = ScalarOp("ge", 2, np.greater_equal, ">=", "({0} >= {1})")
eq = ScalarOp("eq", 2, np.equal, "==", "({0} == {1})", commutative=True)
neq = ScalarOp("neq", 2, np.not_equal, "!=", "({0} != {1})", commutative=True)
and_ = ScalarOp("and_", 2, np.bitwise_and, "&", "({0} & {1})", commutative=True)
or_ = ScalarOp("or_", 2, np.bitwise_or, "|", "({0} | {1})", commutative=True)
xor = ScalarOp("xor", 2, np.bitwise_xor, "^", "({0} ^ {1})", commutative=True)
invert = ScalarOp("invert", 1, np.invert, "~", "(~{0})")
isnan = ScalarOp("isnan", 1, np.isnan, None, "np.isnan({0})")
isinf = ScalarOp("isinf", 1, np.isinf, None, "np.isinf({0})")
# exponentials, logarithms and roots
exp = ScalarOp("exp", 1, np.exp, None, "np.exp({0})", approximate=True)
exp2 = ScalarOp("exp2", 1, np.exp2, None, "np.exp2({0})", approximate=True)
expm1 = ScalarOp("expm1", 1, np.expm1, None, "np.expm1({0})", approximate=True)
log = ScalarOp("log", 1, np.log, None, "np.log({0})", approximate=True)
log2 = ScalarOp("log2", 1, np.log2, None, "np.log2({0})", approximate=True)
log10 = ScalarOp("log10", 1, np.log10, None, "np.log10({0})", approximate=True)
log1p = ScalarOp("log1p", 1, np.log1p, None, "np.log1p({0})", approximate=True)
sqrt = ScalarOp("sqrt", 1, np.sqrt, None, "np.sqrt({0})", expensive=True)  # correctly rounded everywhere
sigmoid = ScalarOp("sigmoid", 1, _sigmoid, None, None, approximate=True)
softplus = ScalarOp("softplus", 1, _softplus, None, None, approximate=True)
# trigonometry
sin = ScalarOp("sin", 1, np.sin, None, "np.sin({0})", approximate=True)
cos = ScalarOp("cos", 1, np.cos, None, "np.cos({0})", approximate=True)
tan = ScalarOp("tan", 1, np.tan, None, "np.tan({0})", approximate=True)
arcsin = ScalarOp("arcsin", 1, np.arcsin, None, "np.arcsin({0})", approximate=True)
arccos = ScalarOp("arccos", 1, np.arccos, None, "np.arccos({0})", approximate=True)
arctan = ScalarOp("arctan", 1, np.arctan, None, "np.arctan({0})", approximate=True)
arctan2 = ScalarOp("arctan2", 2, np.arctan2, None, "np.arctan2({0}, {1})", approximate=True)
sinh = ScalarOp("sinh", 1, np.sinh, None, "np.sinh({0})", approximate=True)
cosh = ScalarOp("cosh", 1, np.cosh, None, "np.cosh({0})", approximate=True)
tanh = ScalarOp("tanh", 1, np.tanh, None, "np.tanh({0})", approximate=True)
# special functions
erf = ScalarOp("erf", 1, _special("erf"), None, "math.erf({0})", approximate=True)
erfc = ScalarOp("erfc", 1, _special("erfc"), None, "math.erfc({0})", approximate=True)
gamma = ScalarOp("gamma", 1, _special("gamma"), None, "math.gamma({0})", approximate=True)
gammaln = ScalarOp("gammaln", 1, _special("gammaln"), None, "math.lgamma({0})", approximate=True)
psi = ScalarOp("psi", 1, _special("psi"), None, None, approximate=True)
# rounding
floor = ScalarOp("floor", 1, np.floor, None, "np.floor({0})")
ceil = ScalarOp("ceil", 1, np.ceil, None, "np.ceil({0})")
round = ScalarOp("round", 1, np.round, None, "np.round({0})")  # noqa: A001
# added later (declared last, so the ops above keep their place in every table made from the declarations)
cbrt = ScalarOp("cbrt", 1, np.cbrt, None, "np.cbrt({0})", approximate=True)


def scalar_op(name: str) -> ScalarOp:
    """The scalar op declared as ``name`` (``KeyError`` lists the known names).

    >>> scalar_op("log2") is log2
    True
    """
    try:
        return _DECLARED[name]
    except KeyError:
        raise KeyError(f"no scalar op {name!r}; known: {', '.join(sorted(_DECLARED))}") from None


def declared_ops() -> tuple[ScalarOp, ...]:
    """Every declared scalar op, in declaration order.

    >>> [op.name for op in declared_ops()][:3]
    ['add', 'sub', 'mul']
    """
    return tuple(_DECLARED.values())


#: The declarations of this module as rows ``(name, nin, impl, symbol, expr, commutative)``, for code that reads
#: them as a table (ops declared elsewhere later are in :func:`declared_ops`, not here).
SCALAR_OPS: list[tuple[str, int, Callable[..., Any], str | None, str | None, bool]] = [
    (op.name, op.nin, op.impl, op.symbol, op.expr, op.commutative) for op in declared_ops()
]

__all__ = ["SCALAR_OPS", "Cast", "ScalarOp", "as_scalar", "declared_ops", "scalar_op", *_DECLARED]
