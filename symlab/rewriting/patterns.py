"""``PatternNodeRewriter``: a rule written as a (pattern, replacement) pair of tuples.

A pattern is a tuple ``(op, *input_patterns)``; strings are pattern variables
(a name used twice must match the same variable), numbers match a constant of
that value, broadcast or not (``x * 2.0`` has the input ``DimShuffle{x}(2.0)``).
Seed 003's rule reads as it is written:

>>> import numpy as np
>>> import symlab.tensor as T
>>> from symlab.graph.fg import FunctionGraph
>>> from symlab.rewriting.basic import in2out
>>> mul_div = PatternNodeRewriter((T.true_div, (T.mul, "x", "y"), "y"), "x", name="mul_div")
>>> mul_div.reason
'true_div(mul(x, y), y) -> x'
>>> a, b = T.dvectors("a", "b")
>>> fg = FunctionGraph([a, b], [T.exp(a * b / b)])
>>> trace = in2out(mul_div).rewrite(fg)
>>> [str(n.op) for n in fg.toposort()], trace.step(1).rule
(['Elemwise{exp,no_inplace}'], 'mul_div')

The op of a pattern may be an op instance (compared with ``==``), an op
class (``isinstance``) or a predicate ``f(op) -> bool``. A dict
``{"pattern": p, "constraint": f}`` adds a condition ``f(variable) -> bool``
to the part ``p``; ``constraint=f(fgraph, node, bindings)`` a condition on
the whole match. The replacement is a pattern variable, a tuple ``(callable,
*arguments)`` built from the bindings, or a function of the pattern
variables it names:

>>> add_zero = PatternNodeRewriter((T.add, "x", 0), "x", name="add_zero")
>>> log1p = PatternNodeRewriter((T.log, (T.add, 1, "x")), lambda x: T.log1p(x), name="log1p")
>>> fg = FunctionGraph([a], [T.log(1.0 + (a + 0.0))])
>>> _ = in2out(add_zero, log1p).rewrite(fg)
>>> [str(n.op) for n in fg.toposort()]
['Elemwise{log1p,no_inplace}']
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from symlab.graph.basic import Apply, Constant, Variable
from symlab.graph.fg import FunctionGraph
from symlab.graph.op import Op
from symlab.rewriting.basic import NodeRewriter, caller_location
from symlab.tensor.elemwise import DimShuffle


class PatternError(ValueError):
    """A pattern or replacement is malformed (raised when the rule is built)."""


class ConstPattern:
    """Matches a constant equal to ``value`` everywhere (any constant if ``value`` is None).

    With ``broadcast=True`` (the default) it looks through ``DimShuffle``
    nodes that only add broadcastable dimensions, so ``2.0`` matches both
    ``TensorConstant{2.0}`` and ``DimShuffle{x}(TensorConstant{2.0})``.
    ``name`` binds the matched variable like a pattern variable.

    >>> import symlab.tensor as T
    >>> x = T.dvector("x")
    >>> ConstPattern(2.0).matches((x * 2.0).owner.inputs[1]), ConstPattern(3).matches(T.constant(2.0))
    (True, False)
    """

    def __init__(self, value: Any = None, name: str | None = None, broadcast: bool = True) -> None:
        if value is not None and not isinstance(value, numbers.Number | np.ndarray):
            raise PatternError(f"ConstPattern: value must be a number, received {value!r}")
        self.value = value
        self.name = name
        self.broadcast = broadcast

    def strip(self, var: Variable) -> Variable:
        """``var`` without the broadcasting ``DimShuffle`` nodes above a constant."""
        while self.broadcast and var.owner is not None and isinstance(var.owner.op, DimShuffle):
            op = var.owner.op
            if op.drop or list(op.shuffle) != sorted(op.shuffle):
                break
            var = var.owner.inputs[0]
        return var

    def matches(self, var: Variable) -> bool:
        c = self.strip(var)
        if not isinstance(c, Constant):
            return False
        if self.value is None:
            return True
        data = np.asarray(c.data)
        if data.size == 0 or data.dtype.kind not in "biufc":
            return False
        with np.errstate(all="ignore"):
            return bool(np.all(data == self.value))

    def __str__(self) -> str:
        if self.value is None:
            return self.name or "<constant>"
        return str(self.value)

    def __repr__(self) -> str:
        return f"ConstPattern({self.value!r}, name={self.name!r})"


def const(value: Any = None, name: str | None = None, broadcast: bool = True) -> ConstPattern:
    """A pattern part matching a constant (see :class:`ConstPattern`)."""
    return ConstPattern(value, name, broadcast)


# Compiled pattern parts: ("var", name), ("const", ConstPattern), ("check", f, part), ("apply", test, parts).
_Part = tuple


def _op_test(spec: Any, where: str) -> tuple[Callable[[Op], bool], str, list[Any] | None]:
    """(test, text, tracks) for the op entry of a pattern tuple."""
    if isinstance(spec, Op):
        scalar = getattr(spec, "scalar_op", None)
        return (lambda op: op is spec or op == spec), str(scalar) if scalar is not None else str(spec), [spec]
    if isinstance(spec, type):
        if not issubclass(spec, Op):
            raise PatternError(f"{where}: {spec.__name__} is a class but not an Op class")
        return (lambda op: isinstance(op, spec)), spec.__name__, [spec]
    if callable(spec):
        return spec, getattr(spec, "__name__", "<predicate>"), None
    raise PatternError(f"{where}: the first entry must be an op, an Op class or a predicate, received {spec!r}")


def _compile_in(pattern: Any, where: str, names: list[str]) -> tuple[_Part, str]:
    if isinstance(pattern, str):
        if not pattern.isidentifier():
            raise PatternError(f"{where}: pattern variable {pattern!r} must be an identifier")
        names.append(pattern)
        return ("var", pattern), pattern
    if isinstance(pattern, ConstPattern):
        if pattern.name is not None:
            names.append(pattern.name)
        return ("const", pattern), str(pattern)
    if isinstance(pattern, numbers.Number) and not isinstance(pattern, bool):
        cp = ConstPattern(pattern)
        return ("const", cp), str(cp)
    if isinstance(pattern, dict):
        unknown = set(pattern) - {"pattern", "constraint"}
        if "pattern" not in pattern or unknown:
            raise PatternError(f"{where}: a dict pattern has the keys 'pattern' and 'constraint', received {sorted(pattern)}")
        inner, text = _compile_in(pattern["pattern"], where, names)
        check = pattern.get("constraint")
        if check is None:
            return inner, text
        if not callable(check):
            raise PatternError(f"{where}: constraint must be callable, received {check!r}")
        return ("check", check, inner), text
    if isinstance(pattern, tuple):
        if not pattern:
            raise PatternError(f"{where}: empty pattern tuple")
        test, text, _ = _op_test(pattern[0], where)
        parts = []
        texts = []
        for k, sub in enumerate(pattern[1:]):
            part, sub_text = _compile_in(sub, f"{where}[{k + 1}]", names)
            parts.append(part)
            texts.append(sub_text)
        return ("apply", test, parts), f"{text}({', '.join(texts)})"
    raise PatternError(
        f"{where}: expected a tuple (op, *inputs), a variable name, a number or a dict, received {pattern!r}"
    )


def _match(root: _Part, node: Apply, fgraph: FunctionGraph | None, allow_multiple_clients: bool) -> dict | None:
    bindings: dict[str, Variable] = {}
    clients = getattr(fgraph, "clients", None) if not allow_multiple_clients else None
    stack: list[tuple[_Part, Variable, bool]] = [(root, node.outputs[0], True)]
    while stack:
        part, var, is_root = stack.pop()
        kind = part[0]
        if kind == "var":
            if not _bind(bindings, part[1], var):
                return None
        elif kind == "const":
            cp = part[1]
            if not cp.matches(var) or (cp.name is not None and not _bind(bindings, cp.name, var)):
                return None
        elif kind == "check":
            if not part[1](var):
                return None
            stack.append((part[2], var, is_root))
        else:
            owner = var.owner
            if owner is None or len(owner.inputs) != len(part[2]) or not part[1](owner.op):
                return None
            if not is_root and clients is not None and len(clients.get(var, ())) > 1:
                return None
            for sub, inp in zip(reversed(part[2]), reversed(owner.inputs)):
                stack.append((sub, inp, False))
    return bindings


def _bind(bindings: dict[str, Variable], name: str, var: Variable) -> bool:
    prev = bindings.get(name)
    if prev is None:
        bindings[name] = var
        return True
    return prev is var or _same_constant(prev, var)


def _same_constant(a: Variable, b: Variable) -> bool:
    if not (isinstance(a, Constant) and isinstance(b, Constant)) or a.type != b.type:
        return False
    sig_a, sig_b = getattr(a, "signature", None), getattr(b, "signature", None)
    if sig_a is not None and sig_b is not None:
        return sig_a() == sig_b()
    return a.type.values_eq(a.data, b.data)


def _compile_out(pattern: Any, where: str, names: set[str]) -> tuple[Callable[[dict], Any], str]:
    """A builder ``f(bindings)`` for the replacement, and its text."""
    if isinstance(pattern, str):
        if pattern not in names:
            raise PatternError(f"{where}: {pattern!r} is not a variable of the input pattern ({sorted(names)})")
        return (lambda b: b[pattern]), pattern
    if isinstance(pattern, numbers.Number | Variable):
        return (lambda b: pattern), str(pattern)
    if isinstance(pattern, tuple):
        if not pattern or not callable(pattern[0]):
            raise PatternError(f"{where}: a replacement tuple starts with an op or a function, received {pattern!r}")
        fn = pattern[0]
        subs = [_compile_out(p, f"{where}[{k + 1}]", names) for k, p in enumerate(pattern[1:])]
        builders = [s[0] for s in subs]
        scalar = getattr(fn, "scalar_op", None)
        head = str(scalar) if scalar is not None else getattr(fn, "__name__", str(fn))
        return (lambda b: fn(*[f(b) for f in builders])), f"{head}({', '.join(s[1] for s in subs)})"
    if callable(pattern):
        try:
            params = inspect.signature(pattern).parameters
        except (TypeError, ValueError):
            raise PatternError(f"{where}: cannot read the parameters of {pattern!r}") from None
        if any(p.kind is p.VAR_KEYWORD for p in params.values()):
            wanted = None
        else:
            wanted = list(params)
            missing = [p for p in wanted if p not in names and params[p].default is inspect.Parameter.empty]
            if missing:
                raise PatternError(
                    f"{where}: the replacement function asks for {missing}, which the input pattern does not "
                    f"bind ({sorted(names)})"
                )
        fn_name = getattr(pattern, "__name__", "<function>")
        text = f"{fn_name}({', '.join(wanted if wanted is not None else sorted(names))})"
        if wanted is None:
            return (lambda b: pattern(**b)), text
        return (lambda b: pattern(**{k: b[k] for k in wanted if k in b})), text
    raise PatternError(f"{where}: expected a variable name, a tuple, a function or a number, received {pattern!r}")


class PatternNodeRewriter(NodeRewriter):
    """Replace what matches ``in_pattern`` by ``out_pattern`` (see the module's docstring).

    ``allow_multiple_clients=False`` (the default) does not match inner nodes
    that other nodes also use (rewriting would compute them twice). Bad
    patterns raise :class:`PatternError` here, not when the rule runs.
    """

    def __init__(
        self,
        in_pattern: Any,
        out_pattern: Any,
        name: str | None = None,
        constraint: Callable[[FunctionGraph, Apply, dict], bool] | None = None,
        allow_multiple_clients: bool = False,
    ) -> None:
        core = in_pattern
        while isinstance(core, dict) and "pattern" in core:
            core = core["pattern"]
        if not isinstance(core, tuple) or not core:
            raise PatternError(f"the input pattern must be a tuple (op, *inputs), received {in_pattern!r}")
        names: list[str] = []
        self._root, in_text = _compile_in(in_pattern, "input pattern", names)
        self._build, out_text = _compile_out(out_pattern, "replacement", set(names))
        if constraint is not None and not callable(constraint):
            raise PatternError(f"constraint must be callable (fgraph, node, bindings) -> bool, received {constraint!r}")
        self.in_pattern = in_pattern
        self.out_pattern = out_pattern
        self.constraint = constraint
        self.allow_multiple_clients = allow_multiple_clients
        self.reason = f"{in_text} -> {out_text}"
        self._tracks = _op_test(core[0], "input pattern")[2]
        super().__init__(name or self.reason)
        self._location = caller_location()

    def tracks(self) -> list[Any] | None:
        return self._tracks

    def describe(self) -> str:
        return self.reason

    def match(self, fgraph: FunctionGraph | None, node: Apply) -> dict[str, Variable] | None:
        """The bindings of the pattern variables if ``node`` matches, else ``None``."""
        if len(node.outputs) != 1:
            return None
        bindings = _match(self._root, node, fgraph, self.allow_multiple_clients)
        if bindings is None or (self.constraint is not None and not self.constraint(fgraph, node, bindings)):
            return None
        return bindings

    def transform(self, fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
        bindings = self.match(fgraph, node)
        if bindings is None:
            return None
        new = self._build(bindings)
        if not isinstance(new, Variable):
            from symlab.tensor.basic import as_tensor_variable

            new = as_tensor_variable(new)
        if new is node.outputs[0]:
            return None
        return [new]
