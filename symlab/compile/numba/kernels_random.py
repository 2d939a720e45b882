r"""The Numba kernels of random variables: NumPy's ``Generator`` draws in compiled code, with NumPy's bits.

A node of a :class:`~symlab.tensor.random.op.RandomVariable` (inputs ``rng, size, *params``, outputs
``next_rng, draw``) becomes a loop over the draw's shape, in C order, calling the scalar method of Numba's
``Generator`` once per element with that element's (broadcast) parameters. Numba shares the bit generator of
the Python ``Generator`` object it is given, and NumPy with array parameters draws element by element in C
order of the broadcast shape, so the loop gives NumPy's numbers and leaves the generator in NumPy's state
(``tests/compile/numba/test_numba_random.py`` compares the bits of every distribution of
:mod:`symlab.tensor.random.basic`). A ``float32`` draw is NumPy's ``float64`` draw rounded, as ``perform``
casts it. Numba's methods check no parameter, so the kernel checks NumPy's constraints on every value
*before* drawing (a refused value raises ``ValueError`` and leaves the generator as it was, as NumPy does).

The generator is state. The kernel returns, as ``next_rng``, the generator object it advanced (Numba boxes
it back to the same Python object). An ``inplace`` draw (``random_make_inplace``: an updated shared
generator, ``In(rng, mutable=True)``, a chain of draws) advances the generator it is given; a draw that is
not inplace must leave it as it was, and Numba cannot copy a generator in compiled code: its kernel gets a
*private copy* (:func:`~symlab.compile.numba.kernels.private_copies`), which the runner makes before calling
the compiled code (the generator is a graph input or a constant). A draw that is not inplace from a
generator another node computes runs its ``perform`` instead (it copies the generator when it runs). Numba's
draws do not take the generator's lock, as NumPy's do: two threads drawing from one generator at the same time in
compiled code are not serialized.

Which NumPy draws are native (:data:`NATIVE`, by NumPy method, for a distribution whose ``rng_fn`` is the
default ``rng.<name>(*params, size=size)``; :data:`NATIVE_SYMLAB`, for symlab's distributions whose own
``rng_fn`` transforms one such draw), and why the others are not (:data:`NOT_NATIVE`): those run on NumPy
by design, as Python steps between the compiled segments, without the linker's "no Numba kernel" warning;
``compile_info.numpy_ops`` and the profile say which and why.

>>> import numpy as np
>>> import symlab
>>> from symlab.tensor.random.basic import normal
>>> rng = symlab.shared(np.random.default_rng(5), name="rng")
>>> next_rng, x = normal(1.0, 2.0, size=3, rng=rng, return_next_rng=True)
>>> f = symlab.function([], x, updates={rng: next_rng}, mode="NUMBA")
>>> reference = np.random.default_rng(5)
>>> bool(np.all(f() == reference.normal(1.0, 2.0, 3))), bool(np.all(f() == reference.normal(1.0, 2.0, 3)))
(True, True)
>>> print(random_kernel(x.owner.op, x.owner, "k0").source.split("def k0")[1])  # doctest: +ELLIPSIS
(rng, size, a0, a1):
    n0 = np.int64(size[0])
    ...
    for i0 in range(n0):
        out[i0] = rng.normal(v0, v1)
    return rng, out
<BLANKLINE>
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from symlab.compile.numba.codegen import dtype_src
from symlab.compile.numba.kernels import Kernel, RunsOnNumpy, register_kernel, register_private_copies
from symlab.graph.basic import Apply
from symlab.tensor.random.op import RandomVariable
from symlab.tensor.shape_of import NoneTypeT


@dataclass(frozen=True)
class Check:
    """A parameter value NumPy refuses: ``bad`` (an expression of the values ``v0, v1...``) raises ``error``."""

    bad: str
    message: str
    error: str = "ValueError"


@dataclass(frozen=True)
class NativeDraw:
    """One draw in Numba code with NumPy's bits: ``expression`` of the generator ``rng`` and the parameter values
    ``v0, v1...`` (``kinds``: ``"f"`` a value read as float64, ``"i"`` as int64), a ``result`` float64 (``"f"``)
    or int64 (``"i"``), after ``checks`` on every value (NumPy's constraints, which Numba does not check)."""

    expression: str
    kinds: str
    result: str
    checks: tuple[Check, ...] = ()
    #: Source of the helper functions the expression calls (top-level ``_shared_*`` functions).
    helpers: str = ""
    #: When every parameter is one value (read once): lines run once before the loop, and the expression then
    #: (what NumPy computes once per call and keeps between draws, Numba's method recomputes at each draw).
    once: tuple[str, ...] = ()
    once_expression: str = ""


# -- NumPy's constraints on parameters (numpy/random/_common.pyx, check_constraint), as Numba code --------------------


def non_negative(k: int, name: str) -> Check:
    """NumPy's CONS_NON_NEGATIVE: a sign bit refused (``-0.0`` too), NaN allowed."""
    return Check(f"not math.isnan(v{k}) and math.copysign(1.0, v{k}) < 0.0", f"{name} < 0")


def positive(k: int, name: str) -> Check:
    """NumPy's CONS_POSITIVE: ``<= 0`` refused (NaN allowed)."""
    return Check(f"v{k} <= 0.0", f"{name} <= 0")


def bounded_0_1(k: int, name: str) -> Check:
    """NumPy's CONS_BOUNDED_0_1: outside ``[0, 1]`` or NaN refused."""
    return Check(f"not (v{k} >= 0.0 and v{k} <= 1.0)", f"{name} < 0, {name} > 1 or {name} is NaN")


def bounded_gt_0_1(k: int, name: str) -> Check:
    """NumPy's CONS_BOUNDED_GT_0_1: outside ``(0, 1]`` or NaN refused."""
    return Check(f"not (v{k} > 0.0 and v{k} <= 1.0)", f"{name} <= 0, {name} > 1 or {name} contains NaNs")


def bounded_lt_0_1(k: int, name: str) -> Check:
    """NumPy's CONS_BOUNDED_LT_0_1: outside ``[0, 1)`` or NaN refused."""
    return Check(f"not (v{k} >= 0.0 and v{k} < 1.0)", f"{name} < 0, {name} >= 1 or {name} is NaN")


def greater_than_1(k: int, name: str) -> Check:
    """NumPy's CONS_GT_1."""
    return Check(f"not (v{k} > 1.0)", f"{name} <= 1 or {name} is NaN")


#: NumPy's largest Poisson mean (``POISSON_LAM_MAX`` of numpy/random/_common.pyx).
POISSON_LAM_MAX = float(np.iinfo("l").max - np.sqrt(np.iinfo("l").max) * 10)

#: NumPy 2's Wald draw (numpy/random/src/distributions/distributions.c, ``random_wald``). Numba's
#: ``Generator.wald`` follows the older formula ``mean + mu_2l * (Y - sqrt(4 * scale * Y + Y * Y))``, whose
#: last bits differ (measured with Numba 0.68.1 and NumPy 2.4.6), so the kernel composes NumPy's from the two
#: draws it makes: a standard normal and a double in [0, 1) (Numba's ``standard_normal`` and ``random``).
WALD_HELPER = '''def _shared_random_wald(rng, mean, scale):
    y = rng.standard_normal()
    y = mean * y * y
    d = 1.0 + math.sqrt(1.0 + 4.0 * scale / y)
    x = mean * (1.0 - 2.0 / d)
    u = rng.random()
    if u <= mean / (mean + x):
        return x
    return mean * mean / x
'''

#: NumPy's binomial draw by inversion (numpy/random/src/distributions/distributions.c, ``random_binomial_inversion``)
#: with its set-up made once: NumPy keeps it between the draws of a call (``binomial_t``), Numba's
#: ``Generator.binomial`` recomputes ``exp(n log q)`` at every draw (3x NumPy's time on a dropout mask of 32,768
#: draws, measured). The same operations in the same order: the same bits.
BINOMIAL_INVERSION_HELPER = '''def _shared_binomial_inversion(rng, n, p, q, qn, bound):
    x = 0
    px = qn
    u = rng.random()
    while u > px:
        x += 1
        if x > bound:
            x = 0
            px = qn
            u = rng.random()
        else:
            u -= px
            px = ((n - x + 1) * p * px) / (x * q)
    return x
'''


def binomial_once(n: str, p: str) -> tuple[tuple[str, ...], str]:
    """The set-up lines and the draw of NumPy's ``random_binomial(n, p)`` for one ``n`` and ``p`` (source of an
    int64 and a float64): no draw when ``n == 0`` or ``p == 0``; inversion (on ``1 - p`` when ``p > 0.5``, the
    draw subtracted from ``n``) when the mean is at most 30; else BTPE, Numba's ``Generator.binomial``."""
    setup = (
        f"b_flip = {p} > 0.5",
        f"b_p = 1.0 - {p} if b_flip else {p}",
        f"b_none = {n} == 0 or {p} == 0.0",
        f"b_inversion = b_p * {n} <= 30.0",
        "b_q = 1.0 - b_p",
        f"b_qn = math.exp({n} * math.log(b_q))",
        f"b_np = {n} * b_p",
        f"b_bound = min(float({n}), b_np + 10.0 * math.sqrt(b_np * b_q + 1.0))",
    )
    inversion = f"_shared_binomial_inversion(rng, {n}, b_p, b_q, b_qn, b_bound)"
    draw = (f"(0 if b_none else (({n} - {inversion}) if b_flip else {inversion}) if b_inversion "
            f"else rng.binomial({n}, {p}))")
    return setup, draw


_BINOMIAL_ONCE = binomial_once("v0", "v1")
_BERNOULLI_ONCE = binomial_once("np.int64(1)", "v0")

#: The NumPy ``Generator`` methods whose draws Numba code gives bit for bit, for a distribution whose ``rng_fn``
#: is the default ``rng.<name>(*params, size=size)``: one element's draw, its parameters, NumPy's checks.
#: Each was compared with NumPy (array parameters broadcast, ``size`` given and not) in
#: ``tests/compile/numba/test_numba_random.py``.
NATIVE: dict[str, NativeDraw] = {
    "normal": NativeDraw("rng.normal(v0, v1)", "ff", "f", (non_negative(1, "scale"),)),
    "uniform": NativeDraw("rng.uniform(v0, v1)", "ff", "f", (
        Check("not math.isfinite(v1 - v0)", "high - low range exceeds valid bounds", "OverflowError"),
        Check("not math.isnan(v1 - v0) and math.copysign(1.0, v1 - v0) < 0.0", "high - low < 0"),
    )),
    "standard_normal": NativeDraw("rng.standard_normal()", "", "f"),
    "exponential": NativeDraw("rng.exponential(v0)", "f", "f", (non_negative(0, "scale"),)),
    "standard_exponential": NativeDraw("rng.standard_exponential()", "", "f"),
    "standard_gamma": NativeDraw("rng.standard_gamma(v0)", "f", "f", (non_negative(0, "shape"),)),
    "gamma": NativeDraw("rng.gamma(v0, v1)", "ff", "f", (non_negative(0, "shape"), non_negative(1, "scale"))),
    "beta": NativeDraw("rng.beta(v0, v1)", "ff", "f", (positive(0, "a"), positive(1, "b"))),
    "f": NativeDraw("rng.f(v0, v1)", "ff", "f", (positive(0, "dfnum"), positive(1, "dfden"))),
    "chisquare": NativeDraw("rng.chisquare(v0)", "f", "f", (positive(0, "df"),)),
    "noncentral_chisquare": NativeDraw("rng.noncentral_chisquare(v0, v1)", "ff", "f",
                                       (positive(0, "df"), non_negative(1, "nonc"))),
    "noncentral_f": NativeDraw("rng.noncentral_f(v0, v1, v2)", "fff", "f",
                               (positive(0, "dfnum"), positive(1, "dfden"), non_negative(2, "nonc"))),
    "standard_cauchy": NativeDraw("rng.standard_cauchy()", "", "f"),
    "standard_t": NativeDraw("rng.standard_t(v0)", "f", "f", (positive(0, "df"),)),
    "pareto": NativeDraw("rng.pareto(v0)", "f", "f", (positive(0, "a"),)),
    "weibull": NativeDraw("rng.weibull(v0)", "f", "f", (non_negative(0, "a"),)),
    "power": NativeDraw("rng.power(v0)", "f", "f", (positive(0, "a"),)),
    "laplace": NativeDraw("rng.laplace(v0, v1)", "ff", "f", (non_negative(1, "scale"),)),
    "logistic": NativeDraw("rng.logistic(v0, v1)", "ff", "f", (non_negative(1, "scale"),)),
    "lognormal": NativeDraw("rng.lognormal(v0, v1)", "ff", "f", (non_negative(1, "sigma"),)),
    "rayleigh": NativeDraw("rng.rayleigh(v0)", "f", "f", (non_negative(0, "scale"),)),
    "wald": NativeDraw("_shared_random_wald(rng, v0, v1)", "ff", "f", (positive(0, "mean"), positive(1, "scale")),
                       WALD_HELPER),
    "triangular": NativeDraw("rng.triangular(v0, v1, v2)", "fff", "f", (
        Check("v0 > v1", "left > mode"), Check("v1 > v2", "mode > right"), Check("v0 == v2", "left == right"),
    )),
    "random": NativeDraw("rng.random()", "", "f"),
    "binomial": NativeDraw("rng.binomial(v0, v1)", "if", "i", (Check("v0 < 0", "n < 0"), bounded_0_1(1, "p")),
                           BINOMIAL_INVERSION_HELPER, *_BINOMIAL_ONCE),
    "negative_binomial": NativeDraw("rng.negative_binomial(v0, v1)", "ff", "i", (
        Check("math.isnan(v0)", "n must not be NaN"), positive(0, "n"), bounded_gt_0_1(1, "p"),
    )),
    "poisson": NativeDraw("rng.poisson(v0)", "f", "i", (
        Check("not (v0 >= 0.0)", "lam < 0 or lam is NaN"), Check(f"v0 > {POISSON_LAM_MAX!r}", "lam value too large"),
    )),
    "geometric": NativeDraw("rng.geometric(v0)", "f", "i", (bounded_gt_0_1(0, "p"),)),
    "zipf": NativeDraw("rng.zipf(v0)", "f", "i", (greater_than_1(0, "a"),)),
    "logseries": NativeDraw("rng.logseries(v0)", "f", "i", (bounded_lt_0_1(0, "p"),)),
    "integers": NativeDraw("rng.integers(v0, v1)", "ii", "i", (Check("v0 >= v1", "low >= high"),)),
}

#: symlab's distributions (:mod:`symlab.tensor.random.basic`, by class name) whose own ``rng_fn`` is one native
#: draw per element, transformed: the same expression in Numba code, and the checks of their ``check_values``.
#: Used only while the class's ``rng_fn`` is the one this table was written for (the bit test checks it).
NATIVE_SYMLAB: dict[str, NativeDraw] = {
    # rng.binomial(1, p, size=size)
    "BernoulliRV": NativeDraw("rng.binomial(1, v0)", "f", "i", (bounded_0_1(0, "p"),), BINOMIAL_INVERSION_HELPER,
                              *_BERNOULLI_ONCE),
    # loc + scale * np.abs(rng.standard_normal(size=<size or the parameters' broadcast shape>))
    "HalfNormalRV": NativeDraw("v0 + v1 * abs(rng.standard_normal())", "ff", "f", (Check("v1 < 0.0", "scale < 0"),)),
    # loc + scale * rng.standard_cauchy(size=<size or the parameters' broadcast shape>)
    "CauchyRV": NativeDraw("v0 + v1 * rng.standard_cauchy()", "ff", "f", (Check("v1 < 0.0", "scale < 0"),)),
    # loc + scale * np.abs(rng.standard_cauchy(size=<size or the parameters' broadcast shape>))
    "HalfCauchyRV": NativeDraw("v0 + v1 * abs(rng.standard_cauchy())", "ff", "f", (Check("v1 < 0.0", "scale < 0"),)),
    # loc + scale * rng.standard_t(df, size=<size or the parameters' broadcast shape>)
    # scale * (1.0 + rng.pareto(b, size=<size or the parameters' broadcast shape>))
    "ParetoRV": NativeDraw("v1 * (1.0 + rng.pareto(v0))", "ff", "f", (positive(0, "b"), positive(1, "scale"))),
    "StudentTRV": NativeDraw("v1 + v2 * rng.standard_t(v0)", "fff", "f",
                             (positive(0, "df"), Check("v2 < 0.0", "scale < 0"))),
}

#: Why a NumPy draw runs on NumPy (a Python step inside the compiled function): the distributions of
#: :mod:`symlab.tensor.random` that are not native, by name.
NOT_NATIVE: dict[str, str] = {
    "multivariate_normal": "NumPy factors the covariance with LAPACK (an SVD by default) before its standard normal "
                           "draws; Numba's Generator has no multivariate_normal",
    "dirichlet": "NumPy switches algorithm by the size of alpha (beta draws below 0.1, gamma draws above); Numba's "
                 "Generator has no dirichlet",
    "multinomial": "Numba's Generator has no multinomial (NumPy's draws a binomial per category)",
    "categorical": "symlab draws uniforms and searches the cumulated probabilities with NumPy (its own rng_fn)",
    "choice_without_replacement": "NumPy's choice without replacement (a partial shuffle, or Floyd's algorithm with "
                                  "a set) has no Numba equivalent",
    "permutation": "symlab permutes batches of arrays with NumPy's Generator.permutation (its own rng_fn)",
    "gumbel": "Numba's Generator has no gumbel",
    "vonmises": "Numba's Generator has no vonmises",
    "hypergeometric": "Numba's Generator has no hypergeometric",
}


def native_draw(op: RandomVariable) -> NativeDraw:
    """The native form of ``op``'s draw; :class:`~symlab.compile.numba.kernels.RunsOnNumpy` saying why not."""
    if op.ndim_supp or any(op.ndims_params):
        why = NOT_NATIVE.get(op.name, "its draws have core dimensions, which the element-wise kernel cannot draw")
        raise RunsOnNumpy(f"{op} runs on NumPy: {why}")
    cls = type(op)
    if cls.rng_fn is RandomVariable.rng_fn:
        draw = NATIVE.get(op.name)
        if draw is None:
            why = NOT_NATIVE.get(op.name, f"no Numba code gives the bits of NumPy's Generator.{op.name}")
            raise RunsOnNumpy(f"{op} runs on NumPy: {why}")
        return draw
    from symlab.tensor.random import basic

    own = NATIVE_SYMLAB.get(cls.__name__)
    written_for = getattr(basic, cls.__name__, None)
    if own is not None and written_for is not None and cls.rng_fn is written_for.rng_fn:
        return own
    why = NOT_NATIVE.get(op.name, "its rng_fn is its own, which symlab has no Numba form of")
    raise RunsOnNumpy(f"{op} runs on NumPy: {why}")


def _check_dtypes(op: RandomVariable, node: Apply, draw: NativeDraw) -> None:
    """:class:`~symlab.compile.numba.kernels.NoKernel` for a parameter or a draw dtype the kernel does not read
    or write as NumPy does (NumPy reads float parameters as float64 and integer ones as int64)."""
    for k, (p, kind) in enumerate(zip(node.inputs[2:], draw.kinds, strict=True)):
        dtype = np.dtype(p.type.dtype)
        allowed = "biuf" if kind == "f" else "biu"
        if dtype.kind not in allowed or dtype == np.uint64 or dtype == np.float16:
            raise RunsOnNumpy(f"{op} runs on NumPy: parameter {k} of dtype {dtype} (NumPy reads it as "
                              f"{'float64' if kind == 'f' else 'int64'}; the kernel does not)")
    out = np.dtype(node.outputs[1].type.dtype)
    if out.kind not in "biuf" or (draw.result == "f" and out.kind != "f"):
        raise RunsOnNumpy(f"{op} runs on NumPy: a draw of dtype {out} from NumPy's "
                          f"{'float64' if draw.result == 'f' else 'int64'} draws")
    dtype_src(out.name)  # NoKernel for a dtype Numba lacks


@register_private_copies(RandomVariable)
def random_private_copies(node: Apply) -> tuple[int, ...]:
    """A draw that is not inplace advances a private copy of its generator (input 0)."""
    return () if node.op.inplace else (0,)


@register_kernel(RandomVariable)
def random_kernel(op: RandomVariable, node: Apply, name: str) -> Kernel:
    """The kernel of a random variable node: ``(rng, size, *params) -> (rng, draw)`` (see the module's docstring)."""
    draw = native_draw(op)
    rng, size, *params = node.inputs
    if not op.inplace and rng.owner is not None:
        raise RunsOnNumpy(f"{op} runs on NumPy here: it draws from a copy of a generator that node "
                          f"{rng.owner.op} computes, and only perform can copy it while the graph runs")
    _check_dtypes(op, node, draw)
    out_var = node.outputs[1]
    ndim = out_var.type.ndim
    names = [f"a{k}" for k in range(len(params))]
    lines = _shape_lines(op, size, params, ndim)
    # A parameter of static shape (1, 1, ...) is read once; the others at each element, through 0/1 strides.
    hoisted = [all(s == 1 for s in p.type.shape) for p in params]
    strides: list[list[str]] = []
    for k, p in enumerate(params):
        row = []
        for d in range(ndim):
            if p.type.shape[d] == 1:
                row.append("")
            else:
                row.append(f"t{k}_{d}")
                if not hoisted[k]:
                    lines.append(f"t{k}_{d} = 0 if {names[k]}.shape[{d}] == 1 else 1")
        strides.append(row)

    def read(k: int, at_zero: bool) -> str:
        index = ["0" if at_zero or not strides[k][d] else f"i{d} * {strides[k][d]}" for d in range(ndim)]
        cast = "np.float64" if draw.kinds[k] == "f" else "np.int64"
        return f"{cast}({names[k]}[{_index(index)}])"

    for k in range(len(params)):
        if hoisted[k]:
            lines.append(f"v{k} = {read(k, True)}")
    looped = [k for k in range(len(params)) if not hoisted[k]]
    once = [c for c in draw.checks if not any(re.search(rf"\bv{k}\b", c.bad) for k in looped)]
    each = [c for c in draw.checks if c not in once]
    for c in once:
        lines += [f"if {c.bad}:", f"    raise {c.error}({f'{op.name}: {c.message}'!r})"]
    shape = "(" + "".join(f"n{d}, " for d in range(ndim)).rstrip(" ") + ")" if ndim else "()"
    out_dtype = np.dtype(out_var.type.dtype)
    lines.append(f"out = np.empty({shape}, {dtype_src(out_dtype.name)})")
    expression = draw.expression
    if draw.once and not looped:  # one value of each parameter: the set-up NumPy keeps between draws, made once
        lines += list(draw.once)
        expression = draw.once_expression
    value = expression if out_dtype.kind != "b" else f"({expression}) != 0"
    loads = [f"v{k} = {read(k, False)}" for k in looped]
    if each:  # every value checked before the first draw, as NumPy does
        body = [*loads]
        for c in each:
            body += [f"if {c.bad}:", f"    raise {c.error}({f'{op.name}: {c.message}'!r})"]
        lines += _nest(ndim, body)
    lines += _nest(ndim, [*loads, f"out[{_index([f'i{d}' for d in range(ndim)])}] = {value}"])
    lines.append("return rng, out")
    source = f"def {name}(rng, size, {', '.join(names)}):\n" if names else f"def {name}(rng, size):\n"
    source += "".join(f"    {line}\n" for line in lines)
    if draw.helpers:
        source = draw.helpers + "\n\n" + source
    return Kernel(name, source)


def _index(entries: list[str]) -> str:
    """An index of an array of ``len(entries)`` dimensions (``()`` for a 0-d one)."""
    return ", ".join(entries) if entries else "()"


def _nest(ndim: int, body: list[str]) -> list[str]:
    """``body`` inside one loop per dimension of the draw, in C order."""
    lines = []
    for d in range(ndim):
        lines.append("    " * d + f"for i{d} in range(n{d}):")
    return lines + ["    " * ndim + line for line in body]


def _shape_lines(op: RandomVariable, size: object, params: list, ndim: int) -> list[str]:
    """Lines setting the draw's sizes ``n0, n1...``: ``size``'s entries, each parameter's size along each dimension
    1 or that size; or, without ``size``, the parameters' broadcast shape (NumPy's rules, checked at run time)."""
    lines: list[str] = []
    names = [f"a{k}" for k in range(len(params))]
    given = not isinstance(size.type, NoneTypeT)
    for d in range(ndim):
        free = [k for k, p in enumerate(params) if p.type.shape[d] != 1]
        if given:
            lines += [f"n{d} = np.int64(size[{d}])", f"if n{d} < 0:",
                      f"    raise ValueError({f'{op.name}: size must hold sizes >= 0 (entry {d} is negative)'!r})"]
            for k in free:
                text = (f"{op.name}: {op.param_name(k)} cannot be broadcast to size: its dimension {d} is neither 1 "
                        "nor the size's")
                lines += [f"if {names[k]}.shape[{d}] != 1 and {names[k]}.shape[{d}] != n{d}:",
                          f"    raise ValueError({text!r})"]
            continue
        lines.append(f"n{d} = 1")
        for k in free:
            text = f"{op.name}: the parameters' shapes do not broadcast together (dimension {d})"
            lines += [f"if {names[k]}.shape[{d}] != 1:",
                      f"    if n{d} != 1 and {names[k]}.shape[{d}] != n{d}:",
                      f"        raise ValueError({text!r})",
                      f"    n{d} = {names[k]}.shape[{d}]"]
    return lines


__all__ = [
    "NATIVE",
    "NATIVE_SYMLAB",
    "NOT_NATIVE",
    "POISSON_LAM_MAX",
    "Check",
    "NativeDraw",
    "native_draw",
    "random_kernel",
    "random_private_copies",
]
