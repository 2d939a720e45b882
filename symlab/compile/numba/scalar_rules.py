r"""How the Numba kernels compute each scalar op: the op's declared expression, or this module's rule for it.

A scalar op's declaration (:mod:`symlab.scalar.basic`) gives a Python
expression template that Numba compiles (``exp``: ``"np.exp({0})"``). Most
ops need nothing more. The ops below need more, and each has one entry in
:data:`RULES`, everything the Numba backend adds for that op side by side:
an expression that replaces the declared one, for every dtype or for one kind
of input dtype (Numba's meaning of ``np.sign`` of an unsigned number, say,
is not NumPy's), and the source of a helper function the expression calls
(``psi`` has no expression NumPy or Numba names). The rest follows from the
declaration: which NumPy ufunc loop computes an op
(:mod:`~symlab.compile.numba.ufunc_table`, from ``approximate``), which loops
run in parallel (from ``expensive``), which ops the register machine runs
(:mod:`~symlab.compile.numba.elemwise_vm`, every op this module gives an
expression for).

>>> from symlab import scalar
>>> scalar_expression(scalar.add, ["a", "b"], ["float64", "float64"], "float64", set())
'np.float64((a + b))'
>>> scalar_expression(scalar.sign, ["a"], ["uint8"], "uint8", set())   # an unsigned number's sign
'np.uint8((a > 0))'
>>> helpers = set()
>>> scalar_expression(scalar.psi, ["a"], ["float64"], "float64", helpers), helpers
('np.float64(_shared_psi(a))', {'psi'})
>>> print(with_helpers(["def k(a):", "    return _shared_psi(a)"], helpers))  # doctest: +ELLIPSIS
def _shared_psi(x):
...
def k(a):
    return _shared_psi(a)
<BLANKLINE>
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from symlab import scalar
from symlab.compile.numba.kernels import NoKernel
from symlab.compile.numba.ufunc_table import AVAILABLE
from symlab.graph.basic import Variable
from symlab.scalar.basic import Cast, ScalarOp, as_scalar
from symlab.scalar.type import np_type_source


@dataclass(frozen=True)
class NumbaRule:
    """What the Numba kernels need for one scalar op beyond its declaration.

    The first that applies, in this order, is the op's expression (a
    ``str.format`` template over the argument expressions), chosen by the kind
    of the op's first input dtype: ``bool_expr`` (bool), ``unsigned_expr``,
    ``signed_expr`` (signed integers, when the result is a signed integer
    too), ``integer_expr`` (bool and integers), ``float_expr``, then ``expr``
    (any dtype), then the declared expression. ``helper`` is the source of the
    function ``_shared_<name>`` the expression calls (top-level names
    beginning ``_shared_`` are written once per generated module).

    ``numpy_form(x, dtype)`` writes the op of ``x`` (of float ``dtype``) with
    the scalar ops NumPy's own implementation computes it by, when NumPy has a
    loop for each op of ``numpy_form_loops`` on that dtype: the kernels then
    call NumPy's loops for those parts and give NumPy's bits (see
    :func:`numpy_form`).
    """

    expr: str | None = None
    bool_expr: str | None = None
    unsigned_expr: str | None = None
    signed_expr: str | None = None
    integer_expr: str | None = None
    float_expr: str | None = None
    helper: str | None = None
    numpy_form: Callable[[Variable, str], Variable] | None = None
    numpy_form_loops: tuple[str, ...] = ()

    def template(self, in_kind: str, out_kind: str) -> str | None:
        """The expression template for a first input of dtype kind ``in_kind`` and a result of ``out_kind``."""
        if in_kind == "b" and self.bool_expr is not None:
            return self.bool_expr
        if in_kind == "u" and self.unsigned_expr is not None:
            return self.unsigned_expr
        if in_kind == "i" and out_kind == "i" and self.signed_expr is not None:
            return self.signed_expr
        if in_kind in "iub" and self.integer_expr is not None:
            return self.integer_expr
        if in_kind == "f" and self.float_expr is not None:
            return self.float_expr
        return self.expr


_SIGMOID = '''def _shared_sigmoid(x):
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)
'''

_SOFTPLUS = '''def _shared_softplus(x):
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))
'''

_PSI = '''def _shared_psi(x):
    if x != x or x == -math.inf:
        return math.nan
    if x == 0.0:
        return -math.copysign(math.inf, x)  # SciPy's psi: -inf at 0.0, inf at -0.0
    result = 0.0
    if x < 0.0:
        p = np.floor(x)  # (math.floor gives an int64, wrong beyond 2**63)
        if p == x:
            return math.nan  # a pole
        # the reflection's cotangent from the fractional part, exact (pi * x would lose it for a large |x|)
        frac = x - p
        if frac > 0.5:
            frac = x - (p + 1.0)  # from x again: 1 - frac would round off a tiny x
        if frac != 0.5:
            result -= math.pi / math.tan(math.pi * frac)
        x = 1.0 - x
    while x < 10.0:  # the asymptotic series below is then accurate to about 1e-17
        result -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    t = f * (1.0 / 240 + f * (-1.0 / 132 + f * (691.0 / 32760 + f * (-1.0 / 12))))
    t = f * (-1.0 / 12 + f * (1.0 / 120 + f * (-1.0 / 252 + t)))
    return result + math.log(x) - 0.5 / x + t
'''

def _numpy_sigmoid(x: Variable, dtype: str) -> Variable:
    """NumPy's sigmoid of ``x`` (of ``dtype``): ``where(x >= 0, 1 / (1 + e), e / (1 + e))``, ``e = exp(-|x|)``
    (``_sigmoid`` in :mod:`symlab.scalar.basic`)."""
    zero, one = (as_scalar(np.asarray(c, dtype=dtype)[()]) for c in (0, 1))
    e = scalar.exp(scalar.neg(scalar.abs(x)))
    denominator = scalar.add(one, e)
    return scalar.switch(scalar.ge(x, zero), scalar.true_div(one, denominator), scalar.true_div(e, denominator))


#: The Numba backend's rule of every scalar op that needs more than its declaration, one entry per op.
#: Of two equal values NumPy's ``maximum``, ``minimum`` (and ``clip``) return the second (``maximum(0.0, -0.0)``
#: is -0.0), Numba's the first: hence the swapped arguments. Numba's ``np.sign`` of an unsigned number wraps its
#: -1 and its ``np.sign(-0.0)`` is -0.0 (NumPy's: 0.0); ``1 / x`` of an unsigned 0 is inf, which NumPy's C cast
#: makes 0; ``np.rint`` goes through float64 (and loses int64's low bits) where NumPy returns the integer; Numba's
#: ``x // -1`` of the smallest int64 is 0, NumPy's wraps to the smallest int64 (as ``-x`` does). A float ``clip``
#: is NumPy's result for scalar bounds (``x`` unchanged where ``lo <= x <= hi``, so ``clip(-0.0, 0.0, 3.0)`` is
#: -0.0; a NaN bound gives NaN), which ``clip``'s ``perform`` gives for any bounds (``_clip`` in
#: :mod:`symlab.scalar.basic`).
RULES: dict[ScalarOp, NumbaRule] = {
    scalar.int_div: NumbaRule(signed_expr="(-{0} if {1} == -1 else {0} // {1})"),
    scalar.sign: NumbaRule(unsigned_expr="({0} > 0)", float_expr="(np.sign({0}) + 0.0)"),
    scalar.reciprocal: NumbaRule(unsigned_expr="({0} == 1)"),
    scalar.maximum: NumbaRule(expr="np.maximum({1}, {0})"),
    scalar.minimum: NumbaRule(expr="np.minimum({1}, {0})"),
    scalar.clip: NumbaRule(
        expr="np.minimum({2}, np.maximum({1}, {0}))",
        float_expr="({1} if {1} != {1} else {2} if {2} != {2} else {2} if ({1} if {0} < {1} else {0}) > {2} "
        "else ({1} if {0} < {1} else {0}))",
    ),
    scalar.invert: NumbaRule(bool_expr="(not {0})"),
    scalar.sigmoid: NumbaRule(
        expr="_shared_sigmoid({0})", helper=_SIGMOID, numpy_form=_numpy_sigmoid, numpy_form_loops=("exp",)
    ),
    scalar.softplus: NumbaRule(expr="_shared_softplus({0})", helper=_SOFTPLUS),
    scalar.psi: NumbaRule(expr="_shared_psi({0})", helper=_PSI),
    scalar.round: NumbaRule(expr="np.rint({0})", integer_expr="{0}"),
}


def scalar_expression(op: ScalarOp, args: list[str], in_dtypes: list[str], out_dtype: str, helpers: set[str]) -> str:
    """A Numba expression of ``op`` on the argument expressions, cast to ``out_dtype``.

    The name of an op whose expression calls a helper function is added to
    ``helpers`` (see :func:`with_helpers`); :class:`NoKernel` if the op has no
    expression (a ``Composite``, or an op declared without one and without a rule).
    """
    if isinstance(op, Cast):
        if out_dtype == "bool":
            return f"({args[0]} != 0)"
        return f"{np_type_source(out_dtype)}({args[0]})"
    in_kind = np.dtype(in_dtypes[0]).kind if in_dtypes else "f"
    rule = RULES.get(op) if type(op) is ScalarOp else None
    template = rule.template(in_kind, np.dtype(out_dtype).kind) if rule is not None else None
    if template is not None:
        if rule.helper is not None:
            helpers.add(op.name)
    elif op.expr is not None and type(op) is ScalarOp:
        template = op.expr
    else:
        raise NoKernel(f"scalar op {op} has no Numba expression")
    body = template.format(*args)
    if out_dtype == "bool":
        return f"np.bool_({body})"
    return f"{np_type_source(out_dtype)}({body})"


def numpy_form(op: ScalarOp, dtype: str) -> Callable[[Variable, str], Variable] | None:
    """The function writing ``op`` on a float ``dtype`` as NumPy computes it (its rule's ``numpy_form``), or None
    when the op has none or NumPy lacks one of its loops on ``dtype``.

    >>> from symlab import scalar
    >>> x = scalar.float64("x")
    >>> numpy_form(scalar.sigmoid, "float64")(x, "float64")
    switch.0
    >>> numpy_form(scalar.exp, "float64") is None
    True
    """
    rule = RULES.get(op) if type(op) is ScalarOp else None
    if rule is None or rule.numpy_form is None or np.dtype(dtype).kind != "f":
        return None
    if not all((name, dtype) in AVAILABLE for name in rule.numpy_form_loops):
        return None
    return rule.numpy_form


def helper_sources(helpers: set[str]) -> list[str]:
    """The source of each helper function named in ``helpers`` (by op name, as :func:`scalar_expression` adds them),
    in a fixed order."""
    return [RULES[scalar.scalar_op(name)].helper or "" for name in sorted(helpers)]


def with_helpers(lines: list[str], helpers: set[str]) -> str:
    """The module source of ``lines`` (functions' source, joined by newlines) after the helper functions it calls."""
    return "".join(source + "\n" for source in helper_sources(helpers)) + "\n".join(lines) + "\n"


__all__ = ["RULES", "NumbaRule", "helper_sources", "numpy_form", "scalar_expression", "with_helpers"]
