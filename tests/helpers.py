"""Helpers shared by the tests (tests/ is on sys.path when pytest runs them)."""

import importlib.util
import sys
from pathlib import Path

import numpy as np

import symlab.tensor as st


def random_value(rng: np.random.Generator, shape: tuple[int, ...], dtype: str = "float64",
                 scale: float = 1.0) -> np.ndarray:
    """Random values of ``dtype`` from ``rng``: booleans half true, integers from -5 to 5, floats standard
    normal times ``scale``.

    >>> random_value(np.random.default_rng(0), (2,), "int32")
    array([4, 2], dtype=int32)
    """
    kind = np.dtype(dtype).kind
    if kind == "b":
        return rng.random(shape) > 0.5
    if kind in "iu":
        return rng.integers(-5, 6, size=shape).astype(dtype)
    return (rng.standard_normal(shape) * scale).astype(dtype)


def run_fgraph(fgraph, values, copy_mutable=True):
    """Output values of ``fgraph``, running its nodes with ``perform`` in ``fgraph.toposort()`` order.

    Unlike ``evaluate``, this follows the destroy handler's orderings, so
    inplace nodes run after the other readers of what they overwrite. The
    caller's arrays are passed as they are (a protected input that gets
    overwritten shows up as a modified array), except that inputs the
    destroy handler marks mutable get a copy unless ``copy_mutable=False``.
    """
    handler = getattr(fgraph, "destroy_handler", None)
    mutable = handler.mutable_inputs if handler is not None else set()
    store = {}
    for var, value in zip(fgraph.inputs, values):
        value = var.type.filter(value)
        store[var] = value.copy() if (var in mutable and copy_mutable) else value
    for node in fgraph.toposort():
        args = [inp.data if inp not in store and hasattr(inp, "data") else store[inp] for inp in node.inputs]
        cells = [[None] for _ in node.outputs]
        node.op.perform(node, args, cells)
        for out, cell in zip(node.outputs, cells):
            store[out] = cell[0]
    return [store[o] if o in store else o.data for o in fgraph.outputs]


def sum_of_scalars(names, out_name):
    """``names[0] + names[1] + ...`` over double scalars with those (often hostile) names: (inputs, output)."""
    vs = [st.dscalar(name) for name in names]
    out = vs[0]
    for v in vs[1:]:
        out = out + v
    out.name = out_name
    return vs, out


#: The benchmark scripts' folder (not a package).
BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def load_benchmark(name: str):
    """``benchmarks/<name>.py`` as a module, ``symlab_bench_<name>``, loaded once (dataclasses look their
    module up in ``sys.modules``)."""
    module_name = f"symlab_bench_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module
