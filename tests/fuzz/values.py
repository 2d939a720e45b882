"""Input environments: the typed inputs every expression of a batch may use, and their values.

An :class:`Env` fixes, for one batch of random expressions, the inputs (name, dtype, static shape and the
concrete shape of their values) and two value sets:

``special``
    floats mixed with NaN, +-inf, +-0, huge and tiny (subnormal) numbers; integers with their type's
    extremes and zeros (integer division by zero, overflow that wraps). The modes are compared on these
    with the rewrites that are documented to change such values turned off (see ``modes``).
``moderate``
    finite values of moderate size (a few exact zeros): the modes are compared on these as users get
    them, every rewrite on.

Static shapes follow ``verify_grad``'s convention in the ``smooth`` flavour (a dimension of size 1 is
statically 1), so the gradient checks can rebuild an expression on ``verify_grad``'s own inputs; the
``differential`` flavour also has size-1 and size-0 dimensions whose static size is unknown, which makes
broadcasting refuse some combinations (the generator then draws again).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: Floats that break naive rewrites and kernels, by dtype (finite huge values stay below the dtype's
#: maximum so that a sum of a few of them does not overflow differently depending on the order).
SPECIAL_FLOATS = {
    "float64": [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e300, -1e300, 5e-324, -5e-324, 2.2250738585072014e-308,
                1e-310, 1.0, -1.0, 0.5, -2.0, 1e-8, 1e8, 709.0, -745.0, 37.0],
    "float32": [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30, 1e-45, -1e-45, 1.1754944e-38,
                1.0, -1.0, 0.5, -2.0, 1e-4, 1e4, 88.0, -103.0, 17.0],
}


def special_ints(dtype: str) -> list[int]:
    """Integers that break naive integer kernels: zeros (division), the extremes (overflow), small ones."""
    info = np.iinfo(dtype)
    return [0, 0, 1, -1, 2, -3, 7, int(info.max), int(info.min)]


@dataclass(frozen=True)
class InputSpec:
    """One input of an environment: its name, dtype, static shape (None: unknown) and concrete shape."""

    name: str
    dtype: str
    static: tuple[int | None, ...]
    shape: tuple[int, ...]

    def constructor_code(self) -> str:
        """The Python code that makes this input variable (``st.tensor(...)``)."""
        return f'st.tensor("{self.dtype}", shape={self.static!r}, name="{self.name}")'


@dataclass
class Env:
    """Inputs of a batch and their two value sets (``{"special": {name: array}, "moderate": {...}}``)."""

    inputs: list[InputSpec]
    values: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)

    def restricted(self, names: set[str]) -> Env:
        """The environment of the inputs in ``names`` only (what a shrunk expression still uses)."""
        kept = [s for s in self.inputs if s.name in names]
        values = {k: {n: v for n, v in vs.items() if n in names} for k, vs in self.values.items()}
        return Env(kept, values)


def _floats(rng: np.random.Generator, dtype: str, shape: tuple[int, ...], special: bool) -> np.ndarray:
    if special:
        pool = np.array(SPECIAL_FLOATS[dtype], dtype=dtype)
        out = np.asarray(rng.normal(0.0, 2.0, size=shape)).astype(dtype)
        pick = rng.random(shape) < 0.55
        out[pick] = rng.choice(pool, size=int(pick.sum()))
        return out
    out = np.asarray(np.round(rng.normal(0.0, 1.5, size=shape), 3)).astype(dtype)
    out[rng.random(shape) < 0.05] = 0.0  # a few exact zeros: log(0), 1/0 in the reference
    return out


def _ints(rng: np.random.Generator, dtype: str, shape: tuple[int, ...], special: bool) -> np.ndarray:
    out = np.asarray(rng.integers(-4, 5, size=shape)).astype(dtype)
    if special:
        pick = rng.random(shape) < 0.4
        out[pick] = rng.choice(np.array(special_ints(dtype), dtype=dtype), size=int(pick.sum()))
    return out


def make_values(rng: np.random.Generator, spec: InputSpec, special: bool) -> np.ndarray:
    """A value for ``spec``: special (NaN, inf, extremes...) or moderate."""
    if spec.dtype.startswith("float"):
        return _floats(rng, spec.dtype, spec.shape, special)
    if spec.dtype == "bool":
        return np.asarray(rng.random(spec.shape) < 0.5)
    return _ints(rng, spec.dtype, spec.shape, special)


def smooth_values(rng: np.random.Generator, spec: InputSpec) -> np.ndarray:
    """Values for gradient checks: away from 0 and from the kinks of abs, max, floor (finite differences)."""
    magnitude = rng.uniform(0.2, 1.0, size=spec.shape)
    sign = np.where(rng.random(spec.shape) < 0.5, -1.0, 1.0)
    return np.asarray(magnitude * sign).astype(spec.dtype)


def _static(shape: tuple[int, ...], rng: np.random.Generator, flavor: str) -> tuple[int | None, ...]:
    if flavor == "smooth":  # verify_grad's convention: exactly the size-1 dimensions are static
        return tuple(1 if s == 1 else None for s in shape)
    # A size-1 dimension is static 1 most of the time (it broadcasts), else unknown (it does not).
    return tuple(1 if s == 1 and rng.random() < 0.7 else None for s in shape)


def make_env(rng: np.random.Generator, flavor: str = "differential") -> Env:
    """A random environment: ``differential`` (every dtype, 0-d, empty, size-1) or ``smooth`` (gradients)."""
    if flavor == "smooth":
        m, n = (int(s) for s in rng.choice([2, 3, 4], size=2))
        shapes = [("float64", (m, n)), ("float64", (n,)), ("float64", ()), ("float64", (1, n)),
                  ("float64", (m, n)), ("float32" if rng.random() < 0.2 else "float64", (n,))]
    else:
        sizes = [2, 3, 3, 4, 4, 5, 1, 0]
        m, n = (int(s) for s in rng.choice(sizes[:6], size=2))
        if rng.random() < 0.15:  # now and then an empty batch dimension everywhere
            m = 0
        shapes = [("float64", (m, n)), ("float64", (n,)), ("float64", ()), ("float64", (1, n)),
                  ("float32", (m, n)), ("int64", (n,)), ("int32", (m, n)), ("float64", (n, m)),
                  ("float64", (0, n)), ("bool", (m, n)), ("float32", ()), ("int8", (n,)),
                  ("float64", (m, 1)), ("float64", (2, m, n))]
        keep = [0, 1, 2] + sorted(int(k) for k in rng.choice(np.arange(3, len(shapes)), size=6, replace=False))
        shapes = [shapes[k] for k in keep]
    inputs = [InputSpec(chr(ord("a") + k), dtype, _static(shape, rng, flavor), shape)
              for k, (dtype, shape) in enumerate(shapes)]
    env = Env(inputs)
    if flavor == "smooth":
        smooth = {s.name: smooth_values(rng, s) for s in inputs}
        env.values = {"special": smooth, "moderate": smooth}
    else:
        env.values = {
            "special": {s.name: make_values(rng, s, True) for s in inputs},
            "moderate": {s.name: make_values(rng, s, False) for s in inputs},
        }
    return env


# -- printing values as Python ------------------------------------------------------------------------------
def _scalar_code(x: object) -> str:
    if isinstance(x, bool | np.bool_):
        return repr(bool(x))
    if isinstance(x, float | np.floating):
        f = float(x)
        if np.isnan(f):
            return "np.nan"
        if np.isinf(f):
            return "np.inf" if f > 0 else "-np.inf"
        return repr(f)
    return repr(int(x))  # type: ignore[call-overload]


def array_code(value: np.ndarray) -> str:
    """``np.array(..., dtype=...)`` that rebuilds ``value`` exactly (NaN, inf, -0.0 and empty shapes too)."""
    value = np.asarray(value)
    if value.size == 0:
        return f'np.zeros({value.shape!r}, dtype="{value.dtype}")'

    def nested(a: np.ndarray) -> str:
        if a.ndim == 0:
            return _scalar_code(a[()])
        return "[" + ", ".join(nested(sub) for sub in a) + "]"

    return f'np.array({nested(value)}, dtype="{value.dtype}")'
