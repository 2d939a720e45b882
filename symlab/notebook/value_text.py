"""Values and variables as the values view writes them: numbers in about 4 digits, arrays in full or summed up.

A scalar is written with about 4 significant digits (:func:`number_text`), a small array in full, a larger
one as its shape, dtype, min/mean/max and its NaN and inf counts (:func:`value_lines`); the panel shows the
whole ``repr``, cut when long (:func:`full_text`). A variable is named by its name, a leaf's text or its
expression, shortened (:func:`describe`).

>>> import numpy as np
>>> value_lines(np.array([1.0, np.inf])), number_text(2 / 3), has_nan_inf(np.array([np.nan, 1.0]))
(['[1.0, inf]'], '0.6667', (True, False))
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np

from symlab.graph.basic import Variable

__all__ = ["FULL_CHARS", "SMALL_ARRAY", "describe", "describe_value", "full_text", "generator_text", "has_nan_inf",
           "nan_words", "number_text", "value_lines"]

#: Arrays of at most this many elements are written in full on the picture.
SMALL_ARRAY = 6
#: The panel's numpy repr of a value is cut after this many characters.
FULL_CHARS = 4000


def number_text(x: Any) -> str:
    """A number in about 4 significant digits; a float that rounds to a small integer keeps a ``.0``.

    >>> [number_text(v) for v in (2.0, -0.70710678, 6.8813735870195432, 0.99999999, 1234.5678, 1e-7)]
    ['2.0', '-0.7071', '6.881', '1.0', '1235', '1e-07']
    >>> [number_text(v) for v in (float("nan"), -math.inf, 3, True, 1 - 2j)]
    ['nan', '-inf', '3', 'True', '1.0-2.0j']
    """
    if isinstance(x, bool | np.bool_):
        return str(bool(x))
    if isinstance(x, int | np.integer):
        return str(int(x))
    if isinstance(x, complex | np.complexfloating):
        sign = "-" if x.imag < 0 else "+"
        return f"{number_text(x.real)}{sign}{number_text(abs(x.imag))}j"
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    text = f"{x:.4g}"
    digits = text.lstrip("-")
    if digits.isdigit() and len(digits) < 4:  # 2.0 reads as a float (1235.0 would claim a 5th digit)
        text += ".0"
    return text


def _nested(a: np.ndarray) -> str:
    if a.ndim == 0:
        return number_text(a[()])
    return "[" + ", ".join(_nested(part) for part in a) + "]"


def _counts(a: np.ndarray) -> list[str]:
    """The min/mean/max of the finite elements and the NaN/inf counts of a large array."""
    if a.dtype.kind == "b":
        return [f"{int(a.sum())} True of {a.size}"]
    if a.dtype.kind == "c":
        a = np.abs(a)  # the size of complex numbers: what min and max can compare
        prefix = "|x| "
    else:
        prefix = ""
    if a.dtype.kind != "f":
        return [f"{prefix}min {number_text(a.min())}, mean {number_text(a.mean())}, max {number_text(a.max())}"]
    finite = a[np.isfinite(a)]
    lines = []
    if finite.size:
        lines.append(f"{prefix}min {number_text(finite.min())}, mean {number_text(finite.mean())}, "
                     f"max {number_text(finite.max())}")
    nans, infs = int(np.isnan(a).sum()), int(np.isinf(a).sum())
    lines.append(f"{nans} NaN, {infs} inf" if nans or infs else "no NaN/inf")
    return lines


def generator_text(generator: Any) -> str:
    """A generator's bit generator and a short fingerprint of its state: two generators that will draw the same
    numbers read the same, and a generator that advanced reads differently (never a memory address).

    >>> import numpy as np
    >>> a, b = np.random.default_rng(5), np.random.default_rng(5)
    >>> generator_text(a) == generator_text(b), generator_text(a).startswith("PCG64 state #")
    (True, True)
    >>> _ = a.normal(); generator_text(a) == generator_text(b)
    False
    """
    bit_generator = getattr(generator, "bit_generator", None)
    if bit_generator is None:
        return type(generator).__name__
    state = bit_generator.state  # a read: NumPy returns a new dict
    digest = hashlib.blake2s(repr(sorted(state.items())).encode(), digest_size=3).hexdigest()
    return f"{type(bit_generator).__name__} state #{digest}"


def value_lines(value: Any) -> list[str]:
    """How a value is written on the picture: a scalar, a small array in full, or a summary.

    >>> value_lines(np.array(0.5)), value_lines(np.array([1.0, np.nan]))
    (['0.5'], ['[1.0, nan]'])
    >>> value_lines(np.arange(12.0).reshape(3, 4))
    ['shape (3, 4) float64', 'min 0.0, mean 5.5, max 11.0', 'no NaN/inf']
    """
    if value is None:
        return ["no value"]
    if isinstance(value, np.random.Generator):  # state, not numbers: which bit generator, and where it stands
        return [generator_text(value)]
    try:
        a = np.asarray(value)
    except Exception:  # something numpy cannot hold: its repr says what it is
        a = None
    if a is None or a.dtype.kind not in "biufc":
        text = " ".join(repr(value).split())
        return [text if len(text) <= 40 else text[:39] + "…"]
    if a.ndim == 0:
        return [number_text(a[()])]
    if a.size == 0:
        return [f"empty, shape {a.shape} {a.dtype}"]
    if a.size <= SMALL_ARRAY:
        return [_nested(a)]
    return [f"shape {a.shape} {a.dtype}", *_counts(a)]


def full_text(value: Any, limit: int = FULL_CHARS) -> str:
    """``repr`` of a value as numpy prints it, cut after ``limit`` characters (the panel's text).

    >>> print(full_text(np.eye(2)))
    array([[1., 0.],
           [0., 1.]])
    >>> full_text(np.zeros(5000), limit=30)
    'array([0., 0., 0., ..., 0., 0.… (cut at 30 characters)'
    """
    text = generator_text(value) if isinstance(value, np.random.Generator) else repr(value)  # repr has an address
    return text if len(text) <= limit else text[:limit] + f"… (cut at {limit} characters)"


def has_nan_inf(value: Any) -> tuple[bool, bool]:
    """``(has NaN, has inf)`` of a value (numbers only; anything else has neither)."""
    try:
        a = np.asarray(value)
    except Exception:
        return False, False
    if a.dtype.kind not in "fc":
        return False, False
    return bool(np.isnan(a).any()), bool(np.isinf(a).any())


def nan_words(value: Any) -> str:
    """What a value holding NaN or inf holds, in words: ``NaN``, ``inf`` or ``NaN and inf``."""
    nan, inf = has_nan_inf(value)
    return "NaN and inf" if nan and inf else "NaN" if nan else "inf"


def describe_value(value: Any) -> str:
    """What was received, for error messages: an array's dtype and shape, else its type and repr, shortened.

    >>> describe_value(np.zeros((2, 3))), describe_value("1.5")
    ('ndarray of dtype float64 and shape (2, 3)', "str '1.5'")
    """
    dtype, shape = getattr(value, "dtype", None), getattr(value, "shape", None)
    if dtype is not None and shape is not None:
        return f"{type(value).__name__} of dtype {dtype} and shape {shape}"
    text = f"{type(value).__name__} {value!r}"
    return text if len(text) <= 80 else text[:79] + "…"


def describe(var: Variable, limit: int = 40) -> str:
    """A variable in words: its name, a leaf's text, or its expression, shortened to about ``limit`` characters.

    >>> import symlab.tensor as st
    >>> x = st.dscalar("x")
    >>> describe(st.log(x - 1)), describe(st.tanh(((x * 2 + 1) * 3 + 4) * 5), limit=20)
    ('log((x - 1))', 'tanh((… * 5))')
    """
    from symlab.printing.pprint import leaf_text, pprint

    if var.name is not None:
        return var.name
    if var.owner is None:
        return leaf_text(var)
    text = ""
    for max_chars in (limit, limit // 2, 1):  # shorter subexpressions until it fits
        text = pprint(var, max_chars=max_chars)
        if len(text) <= limit:
            return text
    return text[: limit - 1] + "…"
