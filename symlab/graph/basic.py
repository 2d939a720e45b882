"""The three kinds of graph node: ``Variable``, ``Apply`` and ``Constant``.

A graph is not a class: it is the web of references between these objects.
Variables point to the Apply node that computed them (``owner``); Apply nodes
point to their ``inputs`` and ``outputs``. Building the graph by hand shows
every reference (this is the long example of the Theano documentation):

>>> from symlab.tensor import add, mul, Apply, Variable, TensorType
>>> float64_matrix = TensorType(dtype="float64", broadcastable=(False, False))
>>> y = Variable(type=float64_matrix, name="y")
>>> z = Variable(type=float64_matrix, name="z")
>>> product = Variable(type=float64_matrix)
>>> node = Apply(op=mul, inputs=[y, z], outputs=[product])
>>> product.owner is node, product.index
(True, 0)
>>> product
Elemwise{mul,no_inplace}.0

This module is the bottom of the graph package: it imports none of the
modules built on it. The two things a Variable needs from them are
registered here when they are imported (the package ``symlab.graph``
imports both, so they are always there): the class of every Type
(:func:`register_type_class`, by :mod:`symlab.graph.type`) and the
evaluator behind :meth:`Variable.eval` (:func:`register_evaluator`, by
:mod:`symlab.graph.evaluate`). ``x.dprint()`` prints through the display
registry (:func:`symlab.graph.display.print_text`).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from symlab.graph.display import Displayable, print_text
from symlab.graph.holders import graphs_holding

if TYPE_CHECKING:  # annotations only (tools/import_graph.py): these modules are built on this one
    from symlab.graph.op import Op
    from symlab.graph.type import Type

#: The class every Variable's ``type`` must be an instance of (:class:`symlab.graph.type.Type`).
_type_class: builtins.type | None = None
#: ``evaluate(outputs, inputs_to_values) -> values``: :func:`symlab.graph.evaluate.evaluate`.
Evaluator = Callable[[Sequence["Variable"], Mapping[Any, Any]], list[Any]]
_evaluator: Evaluator | None = None


def register_type_class(cls: builtins.type) -> None:
    """Make ``cls`` the class of the types Variables accept (:mod:`symlab.graph.type` registers ``Type``)."""
    global _type_class
    if not isinstance(cls, builtins.type):
        raise TypeError(f"register_type_class expects a class, received {_pytype(cls)}")
    _type_class = cls


def register_evaluator(evaluator: Evaluator) -> None:
    """Make ``Variable.eval`` call ``evaluator`` (:mod:`symlab.graph.evaluate` registers ``evaluate``)."""
    global _evaluator
    if not callable(evaluator):
        raise TypeError(f"register_evaluator expects a callable, received {_pytype(evaluator)}")
    _evaluator = evaluator


class GraphConstructionError(TypeError):
    """An Apply node was asked to build something that is not a valid graph."""


class CycleError(GraphConstructionError, ValueError):
    """The requested construction would make the graph cyclic."""


class MissingInputError(ValueError):
    """A graph needs a variable that is neither given (an input, a value) nor a constant.

    Raised by evaluation (an input without a value), by ``FunctionGraph``
    (outputs that depend on a variable that is not an input) and by
    ``symlab.function``: one class, so one ``except`` catches them all.
    """


class Scratchpad(dict):
    """Free-form annotations attached to a Variable (``var.tag``).

    Attribute access reads and writes keys: ``var.tag.test_value = 3``.
    """

    def __getattr__(self, key: str) -> Any:
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None

    def __setattr__(self, key: str, value: Any) -> None:
        self[key] = value


class Variable(Displayable):
    """A datum at one point of a computation: the edges of a graph.

    Fields (seed 000):

    ``type``
        the :class:`~symlab.graph.type.Type` of the values it can hold;
    ``owner``
        ``None``, or the :class:`Apply` node that computes it;
    ``index``
        the position such that ``owner.outputs[index] is self``;
    ``name``
        a string for printing and debugging.

    ``Variable(type=some_tensor_type)`` returns the Type's own variable class
    (a ``TensorVariable`` for a ``TensorType``), so the operators of that kind
    of value (``x + y``, ``x.sum()``) work on variables built by hand too.
    """

    def __new__(cls, type: Type | None = None, *args: Any, **kwargs: Any):
        own_class = getattr(type, "variable_type", None)
        if cls is Variable and isinstance(own_class, builtins.type) and issubclass(own_class, Variable):
            cls = own_class
        return object.__new__(cls)

    def __init__(
        self,
        type: Type,
        owner: Apply | None = None,
        index: int | None = None,
        name: str | None = None,
    ) -> None:
        if _type_class is None or not isinstance(type, _type_class):
            raise TypeError(
                f"Variable(type=...) expects a symlab Type instance, received "
                f"{type!r} of Python type {_pytype(type)}"
            )
        if owner is not None and not isinstance(owner, Apply):
            raise TypeError(f"Variable(owner=...) expects an Apply node or None, received {_pytype(owner)}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"Variable(name=...) expects a str or None, received {_pytype(name)}")
        self.type = type
        self.owner = owner
        self.index = index
        self.name = name
        self.tag = Scratchpad()
        # True once this variable has been an input of some Apply node: only
        # such a variable can be an ancestor of anything, which keeps the
        # cycle check of Apply O(1) for the fresh outputs that ops create.
        self._consumed = False

    @property
    def name(self) -> str | None:
        """A string for printing and debugging, or ``None``; only a str or ``None`` can be set."""
        return self._name

    @name.setter
    def name(self, value: str | None) -> None:
        # Checked here, not only in __init__: a name set later (``v.name = 5``) would otherwise surface far
        # away, as "__str__ returned non-string" the next time the variable is printed.
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{type(self).__name__}.name must be a str or None, received {_pytype(value)} "
                            f"{_preview(value)}")
        self._name = value

    @property
    def fgraph(self) -> Any:
        """The one FunctionGraph that holds this variable, or ``None`` (see :attr:`clients`)."""
        return _only_graph(self, "fgraph")

    @property
    def clients(self) -> list[tuple[Any, int]]:
        """Where this variable is used in the FunctionGraph that holds it (seed 000).

        Each entry is ``(apply_node, i)`` with ``apply_node.inputs[i] is self``,
        or ``("output", i)`` with ``fgraph.outputs[i] is self``. A variable
        that several graphs hold has clients in each: ask the graph you mean,
        ``fgraph.clients[var]``, which always works.
        """
        fg = _only_graph(self, "clients")
        if fg is None:
            raise AttributeError(
                f"{self} has no clients: it is not part of a FunctionGraph (compiling a function makes one; "
                "FunctionGraph(inputs, outputs, clone=False) makes one of these very variables)"
            )
        return fg.clients[self]

    # -- printing ---------------------------------------------------------
    def __str__(self) -> str:
        if self.name is not None:
            return self.name
        if self.owner is not None:
            return f"{self.owner.op}.{self.index}"
        return f"<{self.type}>"

    def __repr__(self) -> str:
        return str(self)

    # -- structure --------------------------------------------------------
    def get_parents(self) -> list[Apply]:
        """The nodes this variable depends on directly: ``[owner]`` or ``[]``."""
        return [self.owner] if self.owner is not None else []

    def clone(self, name: str | None = None) -> Variable:
        """A new ownerless Variable of the same Type (and name, unless given)."""
        cp = type(self)(self.type, None, None, self.name if name is None else name)
        cp.tag = Scratchpad(self.tag)
        return cp

    def eval(self, inputs_to_values: dict | None = None) -> Any:
        """Compute this variable's value from values of its graph inputs.

        >>> import symlab.tensor as st
        >>> x = st.dscalar("x")
        >>> float((x * 2 + 1).eval({x: 3.0}))
        7.0
        """
        if _evaluator is None:
            raise RuntimeError("Variable.eval: no evaluator is registered: import symlab.graph.evaluate "
                               "(importing any module of symlab.graph does)")
        return _evaluator([self], inputs_to_values or {})[0]

    def dprint(self, **kwargs: Any) -> Any:
        """Print the graph that computes this variable (see :func:`symlab.printing.debugprint`).

        It prints with the text printer :mod:`symlab.printing` registers
        (:func:`symlab.graph.display.print_text`).

        >>> import symlab.tensor as st
        >>> x = st.dscalar("x")
        >>> _ = (x + x).dprint()
        Elemwise{add,no_inplace} [id A] ''
         |x [id B]
         |x [id B]
        """
        return print_text(self, **kwargs)



#: The oldest name of :class:`Variable`: seed 004 builds graphs of "Apply and Result instances" with
#: ``Result(type=..., name=...)``, and seed 000 still says nodes are "Apply or Result". The same class.
Result = Variable

class Constant(Variable):
    """A Variable with a fixed value, ``data``, settable only once.

    The value is filtered through the Type and made read-only, because ops and
    rewrites assume a constant never changes:

    >>> import symlab.tensor as st
    >>> c = st.Constant(type=st.lscalar, data=1)
    >>> c.data, c.data.dtype
    (array(1), dtype('int64'))
    >>> c.data = 2
    Traceback (most recent call last):
    ...
    AttributeError: Constant TensorConstant{1}: data can be set only once
    """

    def __new__(cls, type: Type | None = None, *args: Any, **kwargs: Any):
        own_class = getattr(type, "constant_type", None)
        if cls is Constant and isinstance(own_class, builtins.type) and issubclass(own_class, Constant):
            cls = own_class
        return object.__new__(cls)

    def __init__(self, type: Type, data: Any, name: str | None = None) -> None:
        super().__init__(type, None, None, name)
        self._data_is_set = False
        self.data = data

    @property
    def data(self) -> Any:
        return self._data

    @data.setter
    def data(self, value: Any) -> None:
        if self._data_is_set:
            raise AttributeError(f"Constant {self}: data can be set only once")
        value = self.type.filter(value)
        setflags = getattr(value, "setflags", None)
        if setflags is not None:
            setflags(write=False)
        self._data = value
        self._data_is_set = True

    @property
    def value(self) -> Any:
        """The constant's data (an alias that reads better in rewrites)."""
        return self._data

    def __str__(self) -> str:
        if self.name is not None:
            return self.name
        return f"{type(self).__name__}{{{_short_value(self._data)}}}"

    def clone(self, name: str | None = None) -> Constant:
        cp = type(self)(self.type, self._data, self.name if name is None else name)
        cp.tag = Scratchpad(self.tag)
        return cp

    def get_parents(self) -> list[Apply]:
        return []


def _short_value(data: Any) -> str:
    text = str(data)
    return text if len(text) <= 20 else text[:10] + "..."


class Apply(Displayable):
    """The application of an ``op`` to ``inputs``, producing ``outputs``.

    ``Apply(op, inputs, outputs)`` sets every output's ``owner`` to the new
    node and its ``index`` to its position. It refuses inputs that are not
    Variables, outputs that already belong to a node, and outputs that the
    inputs depend on (the graph would become a cycle).
    """

    def __init__(self, op: Op, inputs: Sequence[Variable], outputs: Sequence[Variable]) -> None:
        inputs = list(inputs)
        outputs = list(outputs)
        for i, inp in enumerate(inputs):
            if not isinstance(inp, Variable):
                raise GraphConstructionError(
                    f"Apply({op}): input {i} must be a Variable, received {_pytype(inp)} "
                    f"({_preview(inp)}); wrap values with symlab.tensor.as_tensor_variable"
                )
        for j, out in enumerate(outputs):
            if not isinstance(out, Variable):
                raise GraphConstructionError(
                    f"Apply({op}): output {j} must be a Variable, received {_pytype(out)}"
                )
            if isinstance(out, Constant):
                raise GraphConstructionError(
                    f"Apply({op}): output {j} is the Constant {out}: a constant cannot be computed"
                )
            if out.owner is not None:
                raise GraphConstructionError(
                    f"Apply({op}): output {j} ({out}) is already output {out.index} of "
                    f"{out.owner}; a Variable is computed by one node only"
                )
        if len({id(o) for o in outputs}) != len(outputs):
            raise GraphConstructionError(f"Apply({op}): the same Variable appears twice among the outputs")
        _refuse_cycle(op, inputs, outputs)
        self.op = op
        self.inputs = inputs
        self.outputs = outputs
        self.tag = Scratchpad()
        for inp in inputs:
            inp._consumed = True
        for j, out in enumerate(outputs):
            out.owner = self
            out.index = j

    @property
    def fgraph(self) -> Any:
        """The one FunctionGraph that holds this node, or ``None``; ``node in fgraph`` asks a given graph."""
        return _only_graph(self, "fgraph")

    # -- convenience ------------------------------------------------------
    @property
    def nin(self) -> int:
        return len(self.inputs)

    @property
    def nout(self) -> int:
        return len(self.outputs)

    def default_output(self) -> Variable:
        """The output that ``op(*inputs)`` returns.

        That is ``outputs[op.default_output]`` when the op sets it, else the
        only output; a node with several outputs and no default raises.
        """
        do = getattr(self.op, "default_output", None)
        if do is not None:
            return self.outputs[do]
        if len(self.outputs) == 1:
            return self.outputs[0]
        raise ValueError(f"{self.op} has {len(self.outputs)} outputs and no default_output")

    @property
    def out(self) -> Variable:
        """Shorthand for :meth:`default_output`."""
        return self.default_output()

    def get_parents(self) -> list[Variable]:
        return list(self.inputs)

    def clone(self) -> Apply:
        """A node with the same op and inputs and fresh outputs."""
        return Apply(self.op, self.inputs, [o.clone() for o in self.outputs])

    def clone_with_new_inputs(self, inputs: Sequence[Variable], strict: bool = True) -> Apply:
        """The same computation applied to other inputs.

        With ``strict=True`` each new input is filtered through the old
        input's Type (narrowing types are accepted, others refused); with
        ``strict=False`` the op's ``make_node`` rebuilds the node, so output
        types follow the new inputs.
        """
        inputs = list(inputs)
        if len(inputs) != len(self.inputs):
            raise ValueError(
                f"{self.op}: clone_with_new_inputs expects {len(self.inputs)} inputs, "
                f"received {len(inputs)}"
            )
        if strict:
            new_inputs = [old.type.filter_variable(new) for old, new in zip(self.inputs, inputs)]
            if all(a.type == b.type for a, b in zip(self.inputs, new_inputs)):
                return Apply(self.op, new_inputs, [o.clone() for o in self.outputs])
            inputs = new_inputs
        node = self.op.make_node(*inputs)
        node.tag = Scratchpad(self.tag)
        return node

    def dprint(self, **kwargs: Any) -> Any:
        """Print this node's outputs and their graph (see :func:`symlab.printing.debugprint`)."""
        return print_text(self, **kwargs)

    def __str__(self) -> str:
        return f"{self.op}({', '.join(str(i) for i in self.inputs)})"

    def __repr__(self) -> str:
        return str(self)


def _only_graph(obj: Variable | Apply, what: str) -> Any:
    """The FunctionGraph holding ``obj``, ``None`` if none does; AttributeError if several do."""
    graphs = graphs_holding(obj)
    if len(graphs) > 1:
        raise AttributeError(
            f"{obj}.{what} is ambiguous: {len(graphs)} FunctionGraphs hold {obj}; ask the one you mean, "
            f"fgraph.clients[{obj}] or `{obj} in fgraph`"
        )
    return graphs[0] if graphs else None


def _refuse_cycle(op: Any, inputs: list[Variable], outputs: list[Variable]) -> None:
    """Raise :class:`CycleError` if an output is among the ancestors of the inputs.

    The walk is :func:`symlab.graph.traversal.ancestors`'s (depth first, in input order), stopping at the
    first output found.
    """
    candidates = {id(o): o for o in outputs if o._consumed or any(o is i for i in inputs)}
    if not candidates:
        return
    seen: set[int] = set()
    stack = list(reversed(inputs))
    while stack:
        var = stack.pop()
        if id(var) in seen:
            continue
        seen.add(id(var))
        if var.owner is not None:
            stack.extend(reversed(var.owner.inputs))
        if id(var) in candidates:
            raise CycleError(
                f"Apply({op}): output {var} is also an input or an ancestor of the inputs; "
                f"the graph would contain a cycle"
            )


def _pytype(obj: Any) -> str:
    return type(obj).__name__


def _preview(obj: Any) -> str:
    text = repr(obj)
    return text if len(text) <= 40 else text[:37] + "..."
