"""The suite's one oracle: how a computed result is compared with its reference.

Every test that checks a value against a reference comes here: a compiled function in one mode against the
same graph in another (NUMBA against NUMPY, optimized against unoptimized), a Numba kernel against its op's
``perform``, a symbolic expression against a NumPy function, an op's ``infer_shape`` against the shape it
computes, and the fuzz campaign (``tests/fuzz/``) on random graphs. One place says what "the same" means.

**What "the same" can mean** (a :data:`Comparison`), strictest first. Each checks the dtype and the shape
first (unless the caller says the dtype is not promised, ``dtype=False``):

* ``"bits"`` (:func:`same_bits`): the bit pattern of every element, except that any NaN equals any NaN (a
  NaN's payload is not promised); ``-0.0`` and ``0.0`` differ. What NUMBA promises against NUMPY where both
  run NumPy's own loops, and what two runs of the NumPy backend on one graph give.
* ``"values"`` (:func:`same_values`): ``==`` element by element, NaN equal to NaN, ``-0.0`` equal to
  ``0.0`` (``np.testing.assert_array_equal``). Integers and booleans are always compared so.
* a :class:`Tolerance`: ``np.testing.assert_allclose`` with the ``(rtol, atol)`` the tolerance gives for the
  result's dtype (NaN where NaN, the same infinities); results that are not floating point or complex are
  compared as ``"values"``. The tolerances the suite allows are the named ones below, with what each is for.

The fuzz campaign's own rule, :func:`close`, is looser in one way: its ``atol`` scales with the reference's
largest finite magnitude (reassociated sums lose bits relative to their terms), and with ``strict=False`` it
compares only the elements the reference computes as finite (the default rewrites' documented contract,
``symlab/rewriting/rules/__init__.py``).

Functions named ``same_*``, :func:`close` and :func:`difference` return ``None`` when the results agree and
otherwise a short text saying where and how they differ, so a caller can count, report and shrink; the
``assert_*`` and ``check_*`` functions raise ``AssertionError`` with that text.

>>> import numpy as np
>>> same_bits(np.array([0.0, np.nan]), np.array([-0.0, np.nan]))
'bits differ at (0,): np.float64(0.0) vs np.float64(-0.0) (1 of 2 elements)'
>>> same_values(np.array([0.0, np.nan]), np.array([-0.0, np.nan])) is None
True
>>> assert_same_results([np.float32(1.0 + 1e-6)], [np.float32(1.0)], NUMPY_REFERENCE)
>>> assert_same_results(np.float32(1.0), np.float64(1.0))
Traceback (most recent call last):
AssertionError: dtype float32, expected float64
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

import symlab
import symlab.tensor as st
from symlab.compile.modes import Mode
from symlab.graph.basic import Constant

# -- tolerances -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tolerance:
    """``(rtol, atol)`` of ``np.testing.assert_allclose`` by the precision of the result's dtype.

    ``float64`` applies to float64 and complex128 results, ``float32`` to float32 and complex64, ``float16`` to
    float16; a result whose precision has no tolerance given is an error, not a silent guess.

    >>> NUMPY_REFERENCE.of(np.dtype("complex64"))
    (0.0001, 0.0001)
    >>> Tolerance(float64=(1e-12, 0.0)).of(np.dtype("float32"))
    Traceback (most recent call last):
    KeyError: 'no tolerance for float32 results in Tolerance(float64=(1e-12, 0.0), float32=None, float16=None)'
    """

    float64: tuple[float, float] | None = None
    float32: tuple[float, float] | None = None
    float16: tuple[float, float] | None = None

    @classmethod
    def uniform(cls, rtol: float, atol: float = 0.0) -> Tolerance:
        """The same ``rtol`` and ``atol`` whatever the precision."""
        return cls(float64=(rtol, atol), float32=(rtol, atol), float16=(rtol, atol))

    def of(self, dtype: np.dtype) -> tuple[float, float]:
        """``(rtol, atol)`` for a result of ``dtype`` (floating point or complex)."""
        precision = np.finfo(dtype).dtype.name  # complex64 -> float32, complex128 -> float64
        found = getattr(self, precision, None)
        if found is None:
            raise KeyError(f"no tolerance for {np.dtype(dtype).name} results in {self}")
        return found


#: A symbolic expression against the NumPy function it stands for, where the two sum or multiply in different
#: orders (reductions, ``dot``/``matmul``/``tensordot``, which may run on BLAS).
NUMPY_REFERENCE = Tolerance(float64=(1e-10, 1e-10), float32=(1e-4, 1e-4))
#: A symbolic expression against a NumPy formula written out in the test (softmax, log-softmax, logsumexp),
#: and pooling against a loop reference.
FORMULA_REFERENCE = Tolerance(float64=(1e-12, 1e-12), float32=(1e-5, 1e-5))
#: Generated Numba kernels against the NumPy backend, op by op: the same formula, other rounding in a few
#: libm functions and fused multiply-adds.
KERNELS = Tolerance(float64=(1e-12, 1e-6), float32=(1e-5, 1e-6))
#: The register machine of ``symlab.compile.numba.elemwise_vm`` against ``perform``, every op of the machine.
REGISTER_MACHINE = Tolerance(float64=(1e-12, 1e-14), float32=(2e-5, 1e-6))
#: A rewritten graph against the graph as written, on finite inputs (rewrites reassociate and cancel).
REWRITES = Tolerance.uniform(1e-12)
#: A compiled graph against a Python reference, and the optimized graph against the unoptimized one, on the
#: corpus of ``tests/compile/test_compile_corpus.py`` (NaN and inf in the same places).
GRAPH_REFERENCE = Tolerance.uniform(1e-10, 1e-12)
#: The fuzz campaign's (rtol, atol) by float dtype, for :func:`close`: reassociated sums, pairwise against
#: running sums, fused kernels, on random graphs.
FUZZ_TOLERANCE = {"float64": (1e-7, 1e-10), "float32": (2e-3, 1e-5), "float16": (2e-2, 1e-3)}

#: How two results must agree: see the module's docstring.
Comparison = Literal["bits", "values"] | Tolerance


# -- comparisons that return None or the difference ---------------------------------------------------------


def _where(mask: np.ndarray) -> str:
    """The first index where ``mask`` is true, as text."""
    if mask.ndim == 0:
        return "()"
    return str(tuple(int(i) for i in np.argwhere(mask)[0]))


def _same_frame(got: Any, ref: Any, dtype: bool = True) -> tuple[np.ndarray, np.ndarray, str | None]:
    g, r = np.asarray(got), np.asarray(ref)
    if dtype and g.dtype != r.dtype:
        return g, r, f"dtype {g.dtype}, expected {r.dtype}"
    if g.shape != r.shape:
        return g, r, f"shape {g.shape}, expected {r.shape}"
    return g, r, None


def bitwise_equal(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Where ``got`` and ``ref`` (of one dtype) have the same bits, any NaN counting as any NaN.

    >>> bitwise_equal(np.array([0.0, 1.0, np.nan]), np.array([-0.0, 1.0, -np.nan])).tolist()
    [False, True, True]
    """
    if got.dtype.kind != "f":
        return np.asarray(got == ref)
    itype = np.dtype(f"u{got.dtype.itemsize}")
    return np.asarray((got.view(itype) == ref.view(itype)) | (np.isnan(got) & np.isnan(ref)))


def same_bits(got: Any, ref: Any) -> str | None:
    """``None`` if ``got`` has the dtype, shape and bits of ``ref`` (any NaN equals any NaN)."""
    g, r, problem = _same_frame(got, ref)
    if problem:
        return problem
    differ = ~bitwise_equal(g, r)
    if not differ.any():
        return None
    at = _where(differ)
    index = tuple(np.argwhere(differ)[0]) if differ.ndim else ()
    return f"bits differ at {at}: {g[index]!r} vs {r[index]!r} ({int(differ.sum())} of {differ.size} elements)"


def _numpy_assertion(check: Callable[[], None]) -> str | None:
    """The message of a failed ``np.testing`` assertion, or ``None``."""
    try:
        check()
    except AssertionError as err:
        return str(err).strip()
    return None


def same_values(got: Any, ref: Any, dtype: bool = True) -> str | None:
    """``None`` if ``got`` has the dtype (if ``dtype``), shape and values of ``ref`` (NaN equals NaN, ``-0.0``
    equals ``0.0``)."""
    g, r, problem = _same_frame(got, ref, dtype)
    if problem:
        return problem
    return _numpy_assertion(lambda: np.testing.assert_array_equal(g, r))


def within(got: Any, ref: Any, tolerance: Tolerance, dtype: bool = True) -> str | None:
    """``None`` if ``got`` has the dtype (if ``dtype``) and shape of ``ref`` and its values within
    ``tolerance`` (NaN where NaN, the same infinities); exact values if ``ref`` is not floating point."""
    g, r, problem = _same_frame(got, ref, dtype)
    if problem:
        return problem
    if r.dtype.kind not in "fc":
        return _numpy_assertion(lambda: np.testing.assert_array_equal(g, r))
    rtol, atol = tolerance.of(r.dtype)
    return _numpy_assertion(lambda: np.testing.assert_allclose(g, r, rtol=rtol, atol=atol, equal_nan=True))


def close(got: Any, ref: Any, strict: bool = True, precision: str | None = None) -> str | None:
    """``None`` if ``got`` equals ``ref`` within :data:`FUZZ_TOLERANCE`, the fuzz campaign's rule (see the module
    docstring for ``strict``).

    ``precision``: the float dtype whose tolerance applies, when the computation ran in a lower precision
    than its result's dtype (``st.cast(x32 ** 3, "float64")`` has float32's rounding errors).
    """
    g, r, problem = _same_frame(got, ref)
    if problem:
        return problem
    if g.dtype.kind != "f":
        differ = np.asarray(g != r)
        if differ.any():
            index = tuple(np.argwhere(differ)[0]) if differ.ndim else ()
            return f"differ at {_where(differ)}: {g[index]!r} vs {r[index]!r}"
        return None
    # the looser of the two tolerances (each of FUZZ_TOLERANCE's entries is looser in both numbers than the next)
    rtol, atol = max(FUZZ_TOLERANCE[g.dtype.name], FUZZ_TOLERANCE.get(precision or "", (0.0, 0.0)))
    finite = np.isfinite(r)
    if strict:
        nan_differs = np.isnan(r) != np.isnan(g)
        inf_differs = np.isinf(r) & (g != r)
        bad_special = np.asarray(nan_differs | inf_differs)
        if bad_special.any():
            index = tuple(np.argwhere(bad_special)[0]) if bad_special.ndim else ()
            return f"NaN/inf not where the reference has them, at {_where(bad_special)}: {g[index]!r} vs {r[index]!r}"
    scale = float(np.max(np.abs(r[finite]), initial=1.0))
    with np.errstate(all="ignore"):
        err = np.abs(g.astype("float64") - r.astype("float64"))
        bad = np.asarray(finite & ~(err <= atol * scale + rtol * np.abs(r.astype("float64"))))
    if bad.any():
        index = tuple(np.argwhere(bad)[0]) if bad.ndim else ()
        return (f"values differ at {_where(bad)}: {g[index]!r} vs {r[index]!r} "
                f"(rtol {rtol}, atol {atol} x {scale:.3g}; {int(bad.sum())} of {bad.size} elements)")
    return None


def difference(got: Any, ref: Any, compare: Comparison = "values", dtype: bool = True) -> str | None:
    """``None`` if ``got`` agrees with ``ref`` as ``compare`` says, else where and how it differs."""
    if compare == "bits":
        if not dtype:
            raise ValueError("bits are compared only between results of one dtype")
        return same_bits(got, ref)
    if compare == "values":
        return same_values(got, ref, dtype)
    if isinstance(compare, Tolerance):
        return within(got, ref, compare, dtype)
    raise ValueError(f"unknown comparison {compare!r}")


# -- assertions ------------------------------------------------------------------------------------------------


def as_results(result: Any) -> list[Any]:
    """A function's result as a list: a list or tuple of outputs as it is, one output in a list of one."""
    return list(result) if isinstance(result, (list, tuple)) else [result]


def assert_same_results(got: Any, expected: Any, compare: Comparison = "values", *, dtype: bool = True,
                        what: str = "") -> None:
    """Assert that ``got`` agrees with ``expected`` as ``compare`` says: one result each, or lists of results
    of one length (each output compared with its own).

    ``dtype=False``: the dtypes need not match (the reference computes in another dtype). ``what`` names the
    case in the message.
    """
    got_list, expected_list = as_results(got), as_results(expected)
    prefix = f"{what}: " if what else ""
    if len(got_list) != len(expected_list):
        raise AssertionError(f"{prefix}{len(got_list)} outputs, expected {len(expected_list)}")
    several = len(got_list) > 1
    for k, (g, e) in enumerate(zip(got_list, expected_list)):
        problem = difference(g, e, compare, dtype)
        if problem is not None:
            raise AssertionError(f"{prefix}{f'output {k}: ' if several else ''}{problem}")


@contextlib.contextmanager
def inputs_unchanged(args: Sequence[Any]) -> Iterator[None]:
    """Assert, when the block ends, that the arrays in ``args`` hold the values they held when it began.

    >>> a = np.ones(2)
    >>> with inputs_unchanged([a]):  # doctest: +ELLIPSIS
    ...     a[0] = 5.0
    Traceback (most recent call last):
    AssertionError: input 0 was modified: Arrays are not equal...
    """
    before = [np.array(a, copy=True) for a in args]
    yield
    for k, (a, b) in enumerate(zip(args, before)):
        problem = _numpy_assertion(lambda a=a, b=b: np.testing.assert_array_equal(a, b))
        if problem is not None:
            raise AssertionError(f"input {k} was modified: {problem}")


# -- references: another mode, the op's perform, a NumPy function --------------------------------------------


#: The NumPy backend with no rewrite at all: the graph as written, the reference of the rewrites.
UNOPTIMIZED = Mode("numpy", include=())


def compile_function(inputs: Sequence[Any], outputs: Any, mode: str | Mode, **kwargs: Any) -> Any:
    """``symlab.function(inputs, outputs, mode=mode)``; in ``"NUMBA"`` mode a ``UserWarning`` (a node falling
    back to ``perform``, a failed compile) is an error: a fallback would not test the kernels."""
    if mode != "NUMBA":
        return symlab.function(inputs, outputs, mode=mode, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        return symlab.function(inputs, outputs, mode=mode, **kwargs)


_COMPILED: dict[Any, tuple[Any, ...]] = {}


def compiled_in_modes(key: Any, inputs: Sequence[Any], outputs: Any,
                      modes: Sequence[str] = ("NUMBA", "NUMPY")) -> tuple[Any, ...]:
    """The functions of ``outputs`` compiled in each of ``modes`` (see :func:`compile_function`), compiled
    once per ``key`` and modes in the process: a test module builds a graph per case and compiles it once."""
    found = _COMPILED.get((key, tuple(modes)))
    if found is None:
        found = _COMPILED[(key, tuple(modes))] = tuple(compile_function(inputs, outputs, m) for m in modes)
    return found


def check_against_reference(fn: Callable[..., Any], ref: Callable[..., Any], *args: Any,
                            compare: Comparison = "values") -> Any:
    """``fn(*args)`` against ``ref`` on copies of ``args``, as ``compare`` says, ``fn`` leaving ``args``
    unchanged; returns what ``fn`` gave."""
    expected = ref(*[np.array(a, copy=True) for a in args])
    with inputs_unchanged(args):
        got = fn(*args)
    assert_same_results(got, expected, compare)
    return got


def check_against_unoptimized(inputs: Sequence[Any], outputs: Any, values: Sequence[Any], compare: Comparison,
                               *, mode: str | Mode = "NUMPY", **kwargs: Any) -> Any:
    """``outputs`` compiled in ``mode`` (with its rewrites) against the same graph compiled in
    :data:`UNOPTIMIZED`, on ``values``, as ``compare`` says; returns the function compiled in ``mode``.

    >>> x = st.dvector("x")
    >>> f = check_against_unoptimized([x], x * 2.0 / 2.0, [np.array([1.0, 3.0])], "bits")
    """
    optimized = compile_function(inputs, outputs, mode, **kwargs)
    reference = compile_function(inputs, outputs, UNOPTIMIZED, **kwargs)
    assert_same_results(optimized(*values), reference(*values), compare)
    return optimized


def perform(node: Any, values: Sequence[Any]) -> list[Any]:
    """The outputs of ``node`` computed by its op's ``perform`` on ``values``."""
    cells: list[list[Any]] = [[None] for _ in node.outputs]
    node.op.perform(node, list(values), cells)
    return [c[0] for c in cells]


def check_against_numpy(sym_fn: Callable[..., Any], np_fn: Callable[..., Any], values: Sequence[np.ndarray],
                        compare: Comparison, *, names: Sequence[str] = ("x",), **kwargs: Any) -> tuple[Any, Any]:
    """``sym_fn`` on symbolic inputs like ``values`` (their dtypes and ranks, unknown sizes), evaluated,
    against ``np_fn`` on ``values`` (both given ``kwargs``): the dtype, shape and values as ``compare`` says,
    and the symbolic output's rank. Returns ``(output variable, its value)``.

    >>> out, got = check_against_numpy(st.sum, np.sum, [np.arange(6.0).reshape(2, 3)], NUMPY_REFERENCE, axis=0)
    >>> got
    array([3., 5., 7.])
    """
    variables = [st.TensorType(v.dtype, (None,) * v.ndim)(name) for v, name in zip(values, names, strict=True)]
    out = sym_fn(*variables, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's warnings on empty or special values
        expected = np.asarray(np_fn(*values, **kwargs))
    got = out.eval(dict(zip(variables, values)))
    assert_same_results(got, expected, compare)
    assert out.type.ndim == expected.ndim, f"rank {out.type.ndim}, expected {expected.ndim}"
    return out, got


# -- shapes --------------------------------------------------------------------------------------------------


def _assert_shape_scalars(shape: Sequence[Any]) -> None:
    for s in shape:
        assert s.type.dtype == "int64" and s.ndim == 0, f"a shape entry of type {s.type}, expected an int64 scalar"


def check_infer_shape(out: Any, givens: dict[Any, Any]) -> None:
    """``out.owner.op.infer_shape``, given the real shapes of the node's inputs as constants, evaluates to
    the shape ``out`` has when computed from ``givens``, each entry an int64 scalar."""
    node = out.owner
    shapes = [tuple(st.constant(d, dtype="int64") for d in np.shape(givens[i] if i in givens else i.eval(givens)))
              for i in node.inputs]
    inferred = node.op.infer_shape(None, node, shapes)[out.index]
    real = out.eval(givens).shape
    got = tuple(int(s.eval(givens)) for s in inferred)
    assert got == real, f"infer_shape of {node.op} gives {got}, the computed shape is {real}"
    _assert_shape_scalars(inferred)


def graph_shape(var: Any) -> tuple[Any, ...]:
    """The shape of ``var`` computed with each op's ``infer_shape``, down to the graph's inputs (whose shapes
    are symbolic, ``v.shape[d]``, or a constant's)."""
    cache: dict[Any, tuple[Any, ...]] = {}

    def shape_of(v: Any) -> tuple[Any, ...]:
        if v in cache:
            return cache[v]
        if v.owner is None:
            out = (
                tuple(st.constant(n, dtype="int64") for n in v.data.shape)
                if isinstance(v, Constant)
                else tuple(v.shape[d] for d in range(v.ndim))
            )
        else:
            node = v.owner
            shapes = [shape_of(i) for i in node.inputs]
            out = node.op.infer_shape(None, node, shapes)[v.index]
        cache[v] = out
        return out

    return shape_of(var)


def check_graph_shape(out: Any, givens: dict[Any, Any]) -> None:
    """:func:`graph_shape` of ``out`` evaluates, from ``givens``, to the shape ``out`` has when computed, each
    entry an int64 scalar (unlike :func:`check_infer_shape`, every op between ``out`` and the inputs infers)."""
    expected = np.shape(out.eval(givens))
    shape = graph_shape(out)
    assert len(shape) == len(expected), f"{len(shape)} inferred dimensions, {len(expected)} computed"
    _assert_shape_scalars(shape)
    got = tuple(int(s.eval(givens)) if s.owner or not isinstance(s, Constant) else int(s.data) for s in shape)
    assert got == expected, f"the inferred shape is {got}, the computed one {expected}"
