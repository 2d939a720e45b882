"""Rewrite quality: how big the optimized graphs are, symlab against PyTensor's FAST_RUN (issue 21).

Run alone: ``.venv/bin/python benchmarks/rewrite_quality.py [--quick] [--no-pytensor]``; ``make bench``
runs it after the workloads and saves its rows with theirs (``rewrite_quality`` in the JSON).

A corpus of expressions (algebra, the seeds' examples, gradients, Hessians and Jacobians, losses,
softmax, the benchmark workloads), each built the same way in both systems, compiled (symlab:
``mode="NUMPY"``, the rewrites of ``NUMBA`` without its code generation; PyTensor: ``FAST_RUN``
rewrites with the Python linker, which rewrites as the C linker does without compiling C), and
measured in the optimized graph: **nodes** (apply nodes) and **ops** (scalar operations: the
operations inside a fused ``Composite`` each count, every other node counts one). PyTensor's counts
include the ``DeepCopyOp`` it puts on an output that is an input or a constant (symlab copies such an
output outside the graph), and not the inner graph of the ``Scan`` its ``jacobian``/``hessian`` build
(marked ``*``, the inner node counts in a footnote), as the issue's table counted. Each symlab graph is also run against the unoptimized graph on the same
inputs (and against PyTensor when it ran): a difference is a wrong rewrite and shows as ``WRONG``.

Goal: on every expression no more than PyTensor, and fewer in total. Without PyTensor the symlab
columns are printed alone.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))


# -- the two systems, behind one interface -----------------------------------------------------------


def count_nodes_and_ops(fgraph: Any, composite: type, inner_ops: Callable[[Any], int]) -> tuple[int, int]:
    """``(apply nodes, scalar operations)`` of an optimized graph: a fused ``composite`` counts its inner ops."""
    nodes = list(fgraph.apply_nodes)
    ops = 0
    for node in nodes:
        scalar = getattr(node.op, "scalar_op", None)
        ops += inner_ops(scalar) if isinstance(scalar, composite) else 1
    return len(nodes), ops


class System:
    """What a case needs from a system: its tensor module ``m``, variables, grad, compile and count."""

    name = ""
    m: Any

    def vector(self, name: str, n: int | None = None) -> Any:
        raise NotImplementedError

    def matrix(self, name: str) -> Any:
        raise NotImplementedError

    def scalar(self, name: str) -> Any:
        raise NotImplementedError


class Symlab(System):
    name = "symlab"

    def __init__(self) -> None:
        import symlab
        import symlab.gradient as gradient
        import symlab.tensor as st

        self.m, self.grad, self.hessian, self.jacobian = st, symlab.grad, gradient.hessian, gradient.jacobian
        self.softmax, self.log_softmax, self.softplus = st.softmax, st.log_softmax, st.softplus

    def vector(self, name: str, n: int | None = None) -> Any:
        return self.m.tensor("float64", shape=(n,), name=name)

    def matrix(self, name: str) -> Any:
        return self.m.dmatrix(name)

    def scalar(self, name: str) -> Any:
        return self.m.dscalar(name)

    def compile(self, inputs: list[Any], outputs: list[Any]) -> tuple[Callable, Any]:
        import symlab

        f = symlab.function(inputs, outputs, mode="NUMPY")
        return f, f.maker.fgraph

    def unoptimized(self, inputs: list[Any], outputs: list[Any]) -> Callable:
        import symlab
        from symlab.compile.modes import Mode

        return symlab.function(inputs, outputs, mode=Mode("numpy", ()))

    @staticmethod
    def count(fgraph: Any) -> tuple[int, int]:
        from symlab.scalar.composite import Composite

        return count_nodes_and_ops(fgraph, Composite, lambda scalar: len(scalar.nodes))


class PyTensor(System):
    name = "pytensor"

    def __init__(self) -> None:
        import pytensor
        import pytensor.tensor as pt
        from pytensor.gradient import hessian, jacobian
        from pytensor.tensor.special import log_softmax, softmax

        self.pytensor = pytensor
        self.m, self.grad, self.hessian, self.jacobian = pt, pytensor.grad, hessian, jacobian
        self.softmax, self.log_softmax, self.softplus = softmax, log_softmax, pt.softplus
        self.mode = pytensor.compile.mode.get_mode("FAST_RUN").clone(linker="py")

    def vector(self, name: str, n: int | None = None) -> Any:
        return self.m.tensor(name, dtype="float64", shape=(n,))

    def matrix(self, name: str) -> Any:
        return self.m.dmatrix(name)

    def scalar(self, name: str) -> Any:
        return self.m.dscalar(name)

    def compile(self, inputs: list[Any], outputs: list[Any]) -> tuple[Callable, Any]:
        f = self.pytensor.function(inputs, outputs, mode=self.mode)
        return f, f.maker.fgraph

    @staticmethod
    def scan_inner(fgraph: Any) -> int:
        """Apply nodes inside the graph's ``Scan`` loops (a Jacobian's rows): not counted, as in the issue."""
        return sum(len(n.op.fgraph.apply_nodes) for n in fgraph.apply_nodes if type(n.op).__name__ == "Scan")

    @staticmethod
    def count(fgraph: Any) -> tuple[int, int]:
        from pytensor.scalar.basic import Composite

        return count_nodes_and_ops(fgraph, Composite, lambda scalar: len(scalar.fgraph.apply_nodes))


# -- the corpus -------------------------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    group: str
    build: Callable[[System], tuple[list[Any], Any]]
    quick: bool = False  # part of the --quick corpus
    data: Callable[[], list[np.ndarray]] | None = None  # default: from the input types


def _xy(s: System) -> tuple[Any, Any]:
    return s.vector("x"), s.vector("y")


def _loss_inputs(s: System) -> tuple[Any, Any, Any]:
    return s.matrix("X"), s.vector("y"), s.vector("w")


def _softmax_xent(s: System) -> tuple[list[Any], Any]:
    X, Y, W = s.matrix("X"), s.matrix("Y"), s.matrix("W")
    loss = -(Y * s.m.log(s.softmax(s.m.dot(X, W), axis=-1))).sum()
    return [X, Y, W], [loss, s.grad(loss, W)]


def _logsumexp_grad(s: System) -> tuple[list[Any], Any]:
    x = s.vector("x")
    return [x], s.grad(s.m.log(s.m.exp(x).sum()), x)


def _workload_case(name: str, quick: bool = False) -> Case:
    import workloads

    w = workloads.small_workloads()[name]

    def build(s: System) -> tuple[list[Any], Any]:
        return (w.build_symlab if s.name == "symlab" else w.build_pytensor)()

    return Case(f"workload {name}", "workloads", build, quick, w.data)


def corpus() -> list[Case]:
    """Every case, in the order of the table."""
    z3 = 3  # static length of the vectors of Hessians and Jacobians
    cases = [
        # the table
        Case("grad(((2*x)**2).sum())", "issue", lambda s: ([x := s.vector("x")], s.grad(((2 * x) ** 2).sum(), x)), True),
        Case("x+x+x+x+x+x", "issue", lambda s: ([x := s.vector("x")], x + x + x + x + x + x), True),
        Case("(x/y)/(1/y)", "issue", lambda s: (list(v := _xy(s)), (v[0] / v[1]) / (1 / v[1])), True),
        Case("x - x + y", "issue", lambda s: (list(v := _xy(s)), v[0] - v[0] + v[1]), True),
        Case("hessian((z**3).sum()), z[3]", "issue",
             lambda s: ([z := s.vector("z", z3)], s.hessian((z**3).sum(), z)), True),
        Case("sqrt(x**2)", "issue", lambda s: ([x := s.vector("x")], s.m.sqrt(x**2)), True),
        Case("grad(tanh(x).sum())", "issue", lambda s: ([x := s.vector("x")], s.grad(s.m.tanh(x).sum(), x)), True),
        # algebra
        Case("x*y/y", "algebra", lambda s: (list(v := _xy(s)), v[0] * v[1] / v[1])),
        Case("-(-x)*1+0", "algebra", lambda s: ([x := s.vector("x")], -(-x) * 1.0 + 0.0)),  # noqa: B002
        Case("exp(log(x))", "algebra", lambda s: ([x := s.vector("x")], s.m.exp(s.m.log(x)))),
        Case("log(exp(x))", "algebra", lambda s: ([x := s.vector("x")], s.m.log(s.m.exp(x)))),
        Case("x**2 + x**0.5", "algebra", lambda s: ([x := s.vector("x")], x**2 + x**0.5)),
        Case("a + a**10 (seed)", "algebra", lambda s: ([a := s.vector("a")], a + a**10)),
        Case("x*x*x", "algebra", lambda s: ([x := s.vector("x")], x * x * x)),
        Case("(2+3)*x", "algebra", lambda s: ([x := s.vector("x")], (s.m.constant(2.0) + 3.0) * x)),
        Case("2*x + 3*x", "algebra", lambda s: ([x := s.vector("x")], 2 * x + 3 * x)),
        Case("(x + y) - y", "algebra", lambda s: (list(v := _xy(s)), (v[0] + v[1]) - v[1])),
        Case("X - X + v (broadcast kept)", "algebra",
             lambda s: ([X := s.matrix("X"), v := s.vector("v")], X - X + v), True),
        Case("log(1 + x)", "algebra", lambda s: ([x := s.vector("x")], s.m.log(1 + x))),
        Case("exp(x) - 1", "algebra", lambda s: ([x := s.vector("x")], s.m.exp(x) - 1)),
        Case("x*y + x*z", "algebra",
             lambda s: ([x := s.vector("x"), y := s.vector("y"), z := s.vector("z")], x * y + x * z)),
        # gradients of single functions
        Case("grad(X.sum()) (fill kept)", "gradients", lambda s: ([X := s.matrix("X")], s.grad(X.sum(), X)), True),
        Case("grad(exp(x).sum())", "gradients", lambda s: ([x := s.vector("x")], s.grad(s.m.exp(x).sum(), x))),
        Case("grad(log(x).sum())", "gradients", lambda s: ([x := s.vector("x")], s.grad(s.m.log(x).sum(), x))),
        Case("grad((x**3).sum())", "gradients", lambda s: ([x := s.vector("x")], s.grad((x**3).sum(), x))),
        Case("grad(sigmoid(x).sum())", "gradients",
             lambda s: ([x := s.vector("x")], s.grad(s.m.sigmoid(x).sum(), x))),
        Case("grad(softplus(x).sum())", "gradients",
             lambda s: ([x := s.vector("x")], s.grad(s.softplus(x).sum(), x))),
        Case("grad(sqrt(x).sum())", "gradients", lambda s: ([x := s.vector("x")], s.grad(s.m.sqrt(x).sum(), x))),
        Case("grad(sin(x)*cos(x))", "gradients",
             lambda s: ([x := s.vector("x")], s.grad((s.m.sin(x) * s.m.cos(x)).sum(), x))),
        Case("grad((x*y).sum(), [x, y])", "gradients",
             lambda s: (list(v := _xy(s)), s.grad((v[0] * v[1]).sum(), list(v)))),
        Case("grad(X.mean())", "gradients", lambda s: ([X := s.matrix("X")], s.grad(X.mean(), X))),
        # losses
        Case("squared error, grad w", "losses",
             lambda s: (list(v := _loss_inputs(s)), s.grad(((s.m.dot(v[0], v[2]) - v[1]) ** 2).mean(), v[2])), True),
        Case("squared error, value and grad", "losses",
             lambda s: (list(v := _loss_inputs(s)),
                        [(loss := ((s.m.dot(v[0], v[2]) - v[1]) ** 2).sum()), s.grad(loss, v[2])])),
        Case("sigmoid cross-entropy, grad w", "losses",
             lambda s: (list(v := _loss_inputs(s)),
                        s.grad(-(v[1] * s.m.log(p := s.m.sigmoid(s.m.dot(v[0], v[2])))
                                 + (1 - v[1]) * s.m.log(1 - p)).mean(), v[2]))),
        Case("softmax cross-entropy, value and grad", "losses", _softmax_xent),
        Case("grad(tanh(X@w).sum())", "losses",
             lambda s: ([X := s.matrix("X"), w := s.vector("w")], s.grad(s.m.tanh(s.m.dot(X, w)).sum(), w))),
        Case("grad(log(sum(exp(x))))", "losses", _logsumexp_grad, True),
        Case("log(sum(exp(x)))", "losses", lambda s: ([x := s.vector("x")], s.m.log(s.m.exp(x).sum()))),
        # softmax
        Case("exp(x)/sum(exp(x))", "softmax", lambda s: ([x := s.vector("x")], s.m.exp(x) / s.m.exp(x).sum(keepdims=True))),
        Case("softmax(X, -1)", "softmax", lambda s: ([X := s.matrix("X")], s.softmax(X, axis=-1))),
        Case("log_softmax(X, -1)", "softmax", lambda s: ([X := s.matrix("X")], s.log_softmax(X, axis=-1))),
        Case("grad(softmax(x)[0])", "softmax",
             lambda s: ([x := s.vector("x")], s.grad(s.softmax(x, axis=-1)[0], x))),
        # Hessians and Jacobians (static length 3)
        Case("hessian((z*z).sum())", "hessians", lambda s: ([z := s.vector("z", z3)], s.hessian((z * z).sum(), z))),
        Case("hessian(tanh(z).sum())", "hessians",
             lambda s: ([z := s.vector("z", z3)], s.hessian(s.m.tanh(z).sum(), z))),
        Case("hessian(exp(z).sum())", "hessians",
             lambda s: ([z := s.vector("z", z3)], s.hessian(s.m.exp(z).sum(), z))),
        Case("jacobian(exp(z))", "hessians", lambda s: ([z := s.vector("z", z3)], s.jacobian(s.m.exp(z), z))),
        Case("jacobian(2*z)", "hessians", lambda s: ([z := s.vector("z", z3)], s.jacobian(2 * z, z))),
        Case("jacobian(z*w, w)", "hessians",
             lambda s: ([z := s.vector("z", z3), w := s.vector("w", z3)], s.jacobian(z * w, w))),
    ]
    cases += [_workload_case(name, quick=name == "elemwise_small") for name in
              ("elemwise_small", "logreg", "mlp", "softmax", "add10", "chain_140")]
    return cases


# -- measuring --------------------------------------------------------------------------------------------


def _data(inputs: list[Any], seed: int) -> list[np.ndarray]:
    """Inputs of the cases: values in [0.2, 0.9] (log, sqrt and log(1 - p) defined), unknown sizes 3."""
    rng = np.random.default_rng(seed)
    return [rng.uniform(0.2, 0.9, size=tuple(3 if n is None else n for n in v.type.shape)).astype(v.type.dtype)
            for v in inputs]


def _as_list(outputs: Any) -> list[Any]:
    return list(outputs) if isinstance(outputs, list | tuple) else [outputs]


def _same(a: list[Any], b: list[Any]) -> bool:
    return len(a) == len(b) and all(np.shape(x) == np.shape(y) and np.allclose(x, y, rtol=1e-7, atol=1e-10,
                                                                                equal_nan=True) for x, y in zip(a, b))


def measure_case(case: Case, systems: list[System], seed: int) -> dict[str, Any]:
    row: dict[str, Any] = {"name": case.name, "group": case.group}
    results: dict[str, list[Any]] = {}
    for s in systems:
        try:
            inputs, outputs = case.build(s)
            outputs = _as_list(outputs)
            data = case.data() if case.data is not None else _data(inputs, seed)
            f, fgraph = s.compile(inputs, outputs)
            row[s.name] = dict(zip(("nodes", "ops"), s.count(fgraph)))
            inner = s.scan_inner(fgraph) if isinstance(s, PyTensor) else 0
            if inner:
                row[s.name]["scan_inner"] = inner
            results[s.name] = [np.asarray(r) for r in _as_list(f(*data))]
            if isinstance(s, Symlab):
                reference = [np.asarray(r) for r in _as_list(s.unoptimized(inputs, outputs)(*data))]
                row["symlab"]["correct"] = _same(results["symlab"], reference)
        except Exception as err:  # a case one system cannot build or compile is reported, not fatal
            row[s.name] = {"error": f"{type(err).__name__}: {err}"}
    if "symlab" in results and "pytensor" in results:
        row["agree"] = _same(results["symlab"], results["pytensor"])
    return row


def measure(quick: bool = False, pytensor: bool | None = None) -> list[dict[str, Any]]:
    """A row per case of the corpus (``--quick``: the issue's examples and a few more)."""
    systems: list[System] = [Symlab()]
    if pytensor is None:
        pytensor = importlib.util.find_spec("pytensor") is not None
    if pytensor:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            systems.append(PyTensor())
    cases = [c for c in corpus() if c.quick or not quick]
    return [measure_case(c, systems, seed=k) for k, c in enumerate(cases)]


def _cell(stats: dict[str, Any] | None) -> str:
    if stats is None:
        return "-"
    if "error" in stats:
        return "error"
    return f"{stats['nodes']}/{stats['ops']}" + ("*" if stats.get("scan_inner") else "")


def totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals over the rows both systems measured; the rows where symlab is larger."""
    both = [r for r in rows if "nodes" in r.get("symlab", {}) and "nodes" in r.get("pytensor", {})]
    out: dict[str, Any] = {"compared": len(both)}
    for name in ("symlab", "pytensor"):
        out[name] = {k: sum(r[name][k] for r in both) for k in ("nodes", "ops")}
    out["larger"] = [r["name"] for r in both
                     if r["symlab"]["nodes"] > r["pytensor"]["nodes"] or r["symlab"]["ops"] > r["pytensor"]["ops"]]
    out["symlab_all"] = {k: sum(r["symlab"][k] for r in rows if k in r.get("symlab", {})) for k in ("nodes", "ops")}
    out["wrong"] = [r["name"] for r in rows if r.get("symlab", {}).get("correct") is False]
    out["errors"] = [f"{r['name']} ({n})" for r in rows for n in ("symlab", "pytensor") if "error" in r.get(n, {})]
    return out


def report(rows: list[dict[str, Any]]) -> str:
    has_pt = any("pytensor" in r for r in rows)
    width = max(len(r["name"]) for r in rows)
    head = f"Rewrite quality: optimized graph size, apply nodes/scalar ops ({len(rows)} expressions)"
    lines = [head if has_pt else head + "; PyTensor not installed: symlab only (make bench installs it)"]
    lines.append(f"  {'expression':<{width}}  {'symlab':>9}  {'PyTensor':>9}")
    for r in rows:
        sym = r.get("symlab", {})
        mark = ""
        if sym.get("correct") is False:
            mark = "  WRONG (optimized != unoptimized)"
        elif has_pt and "nodes" in sym and "nodes" in r.get("pytensor", {}):
            pt = r["pytensor"]
            mark = "  larger" if sym["nodes"] > pt["nodes"] or sym["ops"] > pt["ops"] else ""
            if r.get("agree") is False:
                mark += "  (values differ from PyTensor's)"
        lines.append(f"  {r['name']:<{width}}  {_cell(sym):>9}  {_cell(r.get('pytensor')):>9}{mark}")
    t = totals(rows)
    scans = [r for r in rows if r.get("pytensor", {}).get("scan_inner")]
    if scans:
        inner = ", ".join(f"{r['name']} {r['pytensor']['scan_inner']}" for r in scans)
        lines.append(f"  * PyTensor computes it in a Scan loop whose inner nodes are not counted (as in the issue's "
                     f"table): {inner}")
    if has_pt:
        lines.append(f"  {'total (' + str(t['compared']) + ' measured by both)':<{width}}  "
                     f"{t['symlab']['nodes']:>4}/{t['symlab']['ops']:<4}  {t['pytensor']['nodes']:>4}/{t['pytensor']['ops']:<4}")
        lines.append(f"  symlab larger than PyTensor on {len(t['larger'])}: {', '.join(t['larger']) or '-'}")
    else:
        lines.append(f"  {'total':<{width}}  {t['symlab_all']['nodes']:>4}/{t['symlab_all']['ops']:<4}")
    if t["wrong"]:
        lines.append(f"  WRONG: {', '.join(t['wrong'])}")
    if t["errors"]:
        lines.append(f"  errors: {', '.join(t['errors'])}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the issue's examples and a few more")
    parser.add_argument("--no-pytensor", action="store_true", help="symlab only")
    args = parser.parse_args(argv)
    if not args.no_pytensor and importlib.util.find_spec("pytensor") is None:
        print("pytensor is not importable: symlab only (make bench installs it)", file=sys.stderr)
    rows = measure(args.quick, pytensor=False if args.no_pytensor else None)
    print(report(rows))
    return 1 if totals(rows)["wrong"] else 0


if __name__ == "__main__":
    sys.exit(main())
