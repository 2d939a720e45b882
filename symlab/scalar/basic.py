"""Scalar operations: what one element of an ``Elemwise`` computes.

Each operation is one row of :data:`SCALAR_OPS`: a name, its arity, a NumPy
implementation that also works on whole arrays, an infix symbol for
``pprint`` and a Python expression template that code generators use.
Output dtypes follow NumPy 2 exactly: they are found by asking NumPy.

>>> from symlab.scalar import add, exp, float64
>>> add.output_dtype("int32", "float32")
'float64'
>>> add.output_dtype("float32", 1.0)     # a Python scalar is weak
'float32'
>>> x = float64("x")
>>> exp(x).owner.op
exp
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Variable
from symlab.graph.op import Op
from symlab.scalar.type import ScalarType, get_scalar_type


class ScalarOp(Op):
    """An operation on single numbers, identified by its ``name``.

    ``impl`` must accept NumPy arrays (it is applied to whole arrays by
    ``Elemwise``); ``expr`` is a ``str.format`` template over the input
    names, a Python expression that Numba compiles (``"({0} + {1})"``).
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
    ) -> None:
        self._name = name
        self.nin = nin
        self.nout = 1
        self.impl = impl
        self.symbol = symbol
        self.expr = expr
        self.commutative = commutative
        self.associative = associative

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
    """Conversion to ``dtype`` (NumPy's unsafe cast, like ``astype``)."""

    __props__ = ("dtype",)

    def __init__(self, dtype: str) -> None:
        self.dtype = get_scalar_type(dtype).dtype
        super().__init__(f"Cast{{{self.dtype}}}", 1, lambda x: np.asarray(x).astype(self.dtype))
        self.expr = None

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


#: The scalar operations: (name, number of inputs, NumPy implementation,
#: infix symbol or None, Python expression template or None, commutative).
SCALAR_OPS: list[tuple[str, int, Callable[..., Any], str | None, str | None, bool]] = [
    # arithmetic
    ("add", 2, np.add, "+", "({0} + {1})", True),
    ("sub", 2, np.subtract, "-", "({0} - {1})", False),
    ("mul", 2, np.multiply, "*", "({0} * {1})", True),
    ("true_div", 2, _true_div, "/", "({0} / {1})", False),
    ("int_div", 2, np.floor_divide, "//", "({0} // {1})", False),
    ("mod", 2, np.mod, "%", "({0} % {1})", False),
    ("pow", 2, np.power, "**", "({0} ** {1})", False),
    ("neg", 1, np.negative, "-", "(-{0})", False),
    ("abs", 1, np.abs, None, "abs({0})", False),
    ("sign", 1, np.sign, None, "np.sign({0})", False),
    ("reciprocal", 1, np.reciprocal, None, "(1 / {0})", False),
    ("sqr", 1, _sqr, None, "({0} * {0})", False),
    ("maximum", 2, np.maximum, None, "max({0}, {1})", True),
    ("minimum", 2, np.minimum, None, "min({0}, {1})", True),
    ("clip", 3, _clip, None, "min(max({0}, {1}), {2})", False),
    ("switch", 3, _switch, None, "({1} if {0} else {2})", False),
    ("second", 2, _second, None, "{1}", False),
    ("identity", 1, _identity, None, "{0}", False),
    # comparison and logic
    ("lt", 2, np.less, "<", "({0} < {1})", False),
    ("gt", 2, np.greater, ">", "({0} > {1})", False),
    ("le", 2, np.less_equal, "<=", "({0} <= {1})", False),
    ("ge", 2, np.greater_equal, ">=", "({0} >= {1})", False),
    ("eq", 2, np.equal, "==", "({0} == {1})", True),
    ("neq", 2, np.not_equal, "!=", "({0} != {1})", True),
    ("and_", 2, np.bitwise_and, "&", "({0} & {1})", True),
    ("or_", 2, np.bitwise_or, "|", "({0} | {1})", True),
    ("xor", 2, np.bitwise_xor, "^", "({0} ^ {1})", True),
    ("invert", 1, np.invert, "~", "(~{0})", False),
    ("isnan", 1, np.isnan, None, "np.isnan({0})", False),
    ("isinf", 1, np.isinf, None, "np.isinf({0})", False),
    # exponentials and logarithms
    ("exp", 1, np.exp, None, "np.exp({0})", False),
    ("exp2", 1, np.exp2, None, "np.exp2({0})", False),
    ("expm1", 1, np.expm1, None, "np.expm1({0})", False),
    ("log", 1, np.log, None, "np.log({0})", False),
    ("log2", 1, np.log2, None, "np.log2({0})", False),
    ("log10", 1, np.log10, None, "np.log10({0})", False),
    ("log1p", 1, np.log1p, None, "np.log1p({0})", False),
    ("sqrt", 1, np.sqrt, None, "np.sqrt({0})", False),
    ("sigmoid", 1, _sigmoid, None, None, False),
    ("softplus", 1, _softplus, None, None, False),
    # trigonometry
    ("sin", 1, np.sin, None, "np.sin({0})", False),
    ("cos", 1, np.cos, None, "np.cos({0})", False),
    ("tan", 1, np.tan, None, "np.tan({0})", False),
    ("arcsin", 1, np.arcsin, None, "np.arcsin({0})", False),
    ("arccos", 1, np.arccos, None, "np.arccos({0})", False),
    ("arctan", 1, np.arctan, None, "np.arctan({0})", False),
    ("arctan2", 2, np.arctan2, None, "np.arctan2({0}, {1})", False),
    ("sinh", 1, np.sinh, None, "np.sinh({0})", False),
    ("cosh", 1, np.cosh, None, "np.cosh({0})", False),
    ("tanh", 1, np.tanh, None, "np.tanh({0})", False),
    # special functions
    ("erf", 1, _special("erf"), None, "math.erf({0})", False),
    ("erfc", 1, _special("erfc"), None, "math.erfc({0})", False),
    ("gamma", 1, _special("gamma"), None, "math.gamma({0})", False),
    ("gammaln", 1, _special("gammaln"), None, "math.lgamma({0})", False),
    ("psi", 1, _special("psi"), None, None, False),
    # rounding
    ("floor", 1, np.floor, None, "np.floor({0})", False),
    ("ceil", 1, np.ceil, None, "np.ceil({0})", False),
    ("round", 1, np.round, None, "np.round({0})", False),
]

_ops: dict[str, ScalarOp] = {}
for _name, _nin, _impl, _symbol, _expr, _comm in SCALAR_OPS:
    _ops[_name] = ScalarOp(_name, _nin, _impl, _symbol, _expr, commutative=_comm, associative=_name in ("add", "mul"))

add = _ops["add"]
sub = _ops["sub"]
mul = _ops["mul"]
true_div = _ops["true_div"]
int_div = _ops["int_div"]
mod = _ops["mod"]
pow = _ops["pow"]  # noqa: A001 - the op's name
neg = _ops["neg"]
abs = _ops["abs"]  # noqa: A001
sign = _ops["sign"]
reciprocal = _ops["reciprocal"]
sqr = _ops["sqr"]
maximum = _ops["maximum"]
minimum = _ops["minimum"]
clip = _ops["clip"]
switch = _ops["switch"]
second = _ops["second"]
identity = _ops["identity"]
lt = _ops["lt"]
gt = _ops["gt"]
le = _ops["le"]
ge = _ops["ge"]
eq = _ops["eq"]
neq = _ops["neq"]
and_ = _ops["and_"]
or_ = _ops["or_"]
xor = _ops["xor"]
invert = _ops["invert"]
isnan = _ops["isnan"]
isinf = _ops["isinf"]
exp = _ops["exp"]
exp2 = _ops["exp2"]
expm1 = _ops["expm1"]
log = _ops["log"]
log2 = _ops["log2"]
log10 = _ops["log10"]
log1p = _ops["log1p"]
sqrt = _ops["sqrt"]
sigmoid = _ops["sigmoid"]
softplus = _ops["softplus"]
sin = _ops["sin"]
cos = _ops["cos"]
tan = _ops["tan"]
arcsin = _ops["arcsin"]
arccos = _ops["arccos"]
arctan = _ops["arctan"]
arctan2 = _ops["arctan2"]
sinh = _ops["sinh"]
cosh = _ops["cosh"]
tanh = _ops["tanh"]
erf = _ops["erf"]
erfc = _ops["erfc"]
gamma = _ops["gamma"]
gammaln = _ops["gammaln"]
psi = _ops["psi"]
floor = _ops["floor"]
ceil = _ops["ceil"]
round = _ops["round"]  # noqa: A001


def scalar_op(name: str) -> ScalarOp:
    """The scalar op called ``name`` (``KeyError`` lists the known names)."""
    try:
        return _ops[name]
    except KeyError:
        raise KeyError(f"no scalar op {name!r}; known: {', '.join(sorted(_ops))}") from None



__all__ = ["SCALAR_OPS", "Cast", "ScalarOp", "as_scalar", "scalar_op", *_ops]
