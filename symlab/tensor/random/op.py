"""``RandomVariable``: the op of a random draw, which takes a generator and returns the next one and the draw.

A node of a random variable has the inputs ``(rng, size, *parameters)`` and two outputs: the *next* generator
(``outputs[0]``, the state after the draw) and the draw (``outputs[1]``, the default output). The op never changes
the generator it is given unless it is ``inplace`` (a rewrite makes it so when nothing else needs the old state):
otherwise it draws from a copy. That is why a compiled function gives the same numbers at every call unless an
update carries the next generator back into the shared variable:

>>> import numpy as np
>>> import symlab
>>> from symlab.tensor.random.basic import normal
>>> rng = symlab.shared(np.random.default_rng(123), name="rng")
>>> next_rng, x = normal(0, 1, rng=rng, return_next_rng=True)
>>> x.owner.op, x.owner.inputs[0] is rng, next_rng is x.owner.outputs[0]
(normal_rv{"(),()->()"}, True, True)
>>> same = symlab.function([], x, mode="NUMPY")
>>> float(same()) == float(same())
True
>>> advancing = symlab.function([], x, updates={rng: next_rng}, mode="NUMPY")
>>> print(advancing(), advancing(), np.random.default_rng(123).normal(size=2))
-0.9891213503478509 -0.3677866514678832 [-0.98912135 -0.36778665]

Parameters broadcast as NumPy's do, and ``size`` (as NumPy's) gives the shape of the batch of draws; the
parameters' own batch shape must broadcast to it. A distribution whose draw is not a scalar (a
``multivariate_normal``'s vector) says so in its ``signature``, a NumPy gufunc signature of its parameters and draw:
``"(n),(n,n)->(n)"``. Defining one's own is a subclass naming the signature, the dtype and ``rng_fn``, the function
drawing with a NumPy generator (see :class:`RandomVariable`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from symlab.config import config
from symlab.graph.basic import Apply, Constant, Variable
from symlab.graph.null_type import disconnected, grad_undefined
from symlab.graph.op import Op
from symlab.tensor.conversion import as_tensor_variable, constant
from symlab.tensor.elemwise import DimShuffle
from symlab.tensor.joining import static_entries, vector_entry
from symlab.tensor.random.type import RandomGeneratorType, copy_generator
from symlab.tensor.shape_of import NoneConst, NoneTypeT
from symlab.tensor.type import TensorType

#: How ``make_node`` gets a generator when none is given (a new shared one): registered by
#: :mod:`symlab.tensor.random.variable`, which defines shared generators.
_default_generator: Callable[[], Variable] | None = None


def register_default_generator(factory: Callable[[], Variable]) -> None:
    """Make ``factory()`` the generator a random variable draws from when it is given none."""
    global _default_generator
    _default_generator = factory


def parse_signature(signature: str) -> tuple[list[tuple[str, ...]], tuple[str, ...]]:
    """The core dimensions of the parameters and of the draw in a gufunc signature.

    >>> parse_signature("(n),(n,n)->(n)")
    ([('n',), ('n', 'n')], ('n',))
    >>> parse_signature("(),()->()")
    ([(), ()], ())
    """
    try:
        inputs_text, output_text = signature.replace(" ", "").split("->")
    except ValueError:
        raise ValueError(f"RandomVariable: signature {signature!r} must read '(params),...->(draw)'") from None

    def groups(text: str) -> list[tuple[str, ...]]:
        if not text:
            return []
        if not (text.startswith("(") and text.endswith(")")):
            raise ValueError(f"RandomVariable: signature {signature!r}: {text!r} is not a list of (dims)")
        return [tuple(d for d in part.split(",") if d) for part in text[1:-1].split("),(")]

    outputs = groups(output_text)
    if len(outputs) != 1:
        raise ValueError(f"RandomVariable: signature {signature!r} must have one output, has {len(outputs)}")
    return groups(inputs_text), outputs[0]


def normalize_size_param(size: Any, where: str = "RandomVariable") -> Variable:
    """``size`` as the graph holds it: ``NoneConst``, or an int64 vector of known length.

    >>> normalize_size_param(None)
    NoneConst
    >>> normalize_size_param((2, 3)).type, normalize_size_param(4).data
    (TensorType(int64, (2,)), array([4]))
    """
    if size is None:
        return NoneConst
    if isinstance(size, Variable) and isinstance(size.type, NoneTypeT):
        return size
    if isinstance(size, int | np.integer) and not isinstance(size, bool):
        size = (size,)
    if isinstance(size, list | tuple) and len(size) == 0:
        return constant(np.zeros(0, dtype="int64"))
    try:
        v = as_tensor_variable(size)
    except TypeError:
        raise TypeError(
            f"{where}: size must be None, an int or a sequence of ints, received {type(size).__name__} {size!r:.60}"
        ) from None
    if v.type.ndim != 1 or v.type.dtype[:3] not in ("int", "uin"):
        raise TypeError(
            f"{where}: size must be None, an int or a sequence of ints (a vector of integers), received {size!r:.60} "
            f"of type {v.type}"
        )
    if v.type.shape[0] is None:
        raise ValueError(f"{where}: size {size!r:.60} must have a length known before running the graph, received {v.type}")
    if isinstance(v, Constant):
        if np.any(v.data < 0):
            raise ValueError(f"{where}: size must hold sizes >= 0, received {tuple(int(s) for s in v.data)}")
        return constant(v.data.astype("int64"))
    if v.type.dtype != "int64":
        from symlab.tensor.basic import cast

        v = cast(v, "int64")
    return v


class RandomVariable(Op):
    """The op of a draw from a distribution (``rng, size, *params -> next_rng, draw``).

    A distribution is a subclass that sets ``name``, ``signature`` and ``dtype`` (``"floatX"``: ``config.floatX``
    at each call) and, when the draw is not the NumPy ``Generator`` method of the same name, ``rng_fn(rng, *params,
    size)``; ``__call__`` takes the parameters, ``size``, ``rng`` and ``dtype``:

    >>> import numpy as np
    >>> import symlab
    >>> class LogNormal(RandomVariable):
    ...     name = "lognormal"
    ...     signature = "(),()->()"
    ...     dtype = "floatX"
    >>> lognormal = LogNormal()
    >>> rng = symlab.shared(np.random.default_rng(0))
    >>> x = lognormal(0.0, 1.0, size=3, rng=rng)
    >>> x.type, bool(np.all(x.eval() == np.random.default_rng(0).lognormal(0.0, 1.0, 3)))
    (TensorType(float64, (3,)), True)
    """

    __props__ = ("name", "signature", "dtype", "inplace")
    default_output = 1
    name: str = "random"
    #: The parameters' names, as the distribution's function names them (for error messages).
    param_names: tuple[str, ...] = ()
    signature: str = "->()"
    dtype: str | None = None
    inplace: bool = False

    def __init__(self, name: str | None = None, signature: str | None = None, dtype: str | None = None,
                 inplace: bool | None = None) -> None:
        self.name = name or type(self).name
        self.signature = signature or type(self).signature
        self.inputs_sig, self.output_sig = parse_signature(self.signature)
        self.ndims_params = [len(s) for s in self.inputs_sig]
        self.ndim_supp = len(self.output_sig)
        if isinstance(dtype, np.dtype):
            dtype = dtype.name
        self.dtype = dtype or type(self).dtype
        self.inplace = bool(type(self).inplace if inplace is None else inplace)
        if self.inplace:
            self.destroy_map = {0: [0]}

    # -- identity ----------------------------------------------------------------------------------
    def __str__(self) -> str:
        extra = [str(getattr(self, p)) for p in self.__props__ if p not in RandomVariable.__props__]
        return f'{self.name}_rv{{{", ".join([repr(self.signature).replace(chr(39), chr(34)), *extra])}}}'

    def clone_with(self, **changes: Any) -> RandomVariable:
        """This op with some of its properties changed (``dtype``, ``inplace``...)."""
        props = self._props_dict()
        props.update(changes)
        return type(self)(**props)

    # -- building nodes ------------------------------------------------------------------------------
    def __call__(self, *params: Any, size: Any = None, name: str | None = None, rng: Any = None,
                 dtype: Any = None, return_next_rng: bool = False, **kwargs: Any) -> Any:
        """A draw: ``op(*params, size=None, rng=None, dtype=None)``, or ``(next_rng, draw)`` with ``return_next_rng``."""
        if kwargs:
            raise TypeError(f"{self.name}: unexpected keyword arguments {sorted(kwargs)}")
        dtype = self.dtype if dtype is None else (dtype.name if isinstance(dtype, np.dtype) else str(dtype))
        if dtype == "floatX":
            dtype = config.floatX
        if dtype != self.dtype:
            if self.dtype is not None and self.dtype != "floatX" and dtype[:5].startswith("float") != self.dtype.startswith("float"):
                raise ValueError(f"{self.name}: cannot change the dtype of a draw from {self.dtype} to {dtype}")
            return self.clone_with(dtype=dtype)(*params, size=size, name=name, rng=rng, return_next_rng=return_next_rng)
        node = self.make_node(rng, size, *params)
        draw = node.outputs[1]
        if name is not None:
            draw.name = name
        return (node.outputs[0], draw) if return_next_rng else draw

    def make_node(self, rng: Any, size: Any, *params: Any) -> Apply:
        """The node ``(rng, size, *params) -> (next_rng, draw)``; ``rng=None`` makes a new shared generator."""
        if self.dtype is None or self.dtype == "floatX":
            dtype = config.floatX if self.dtype == "floatX" else None
            if dtype is None:
                raise TypeError(f"{self.name}: the op has no dtype; pass dtype= when calling it")
            return self.clone_with(dtype=dtype).make_node(rng, size, *params)
        if len(params) != len(self.ndims_params):
            raise TypeError(
                f"{self.name}: expected {len(self.ndims_params)} parameters (signature {self.signature}), "
                f"received {len(params)}"
            )
        if rng is None:
            if _default_generator is None:  # pragma: no cover - symlab.tensor.random always registers one
                raise TypeError(f"{self.name}: no generator given (rng=None) and no default generator registered")
            rng = _default_generator()
        elif not isinstance(rng, Variable) or not isinstance(rng.type, RandomGeneratorType):
            got = f"{rng} of type {rng.type}" if isinstance(rng, Variable) else f"{type(rng).__name__} {rng!r:.60}"
            raise TypeError(
                f"{self.name}: rng must be a generator variable (symlab.shared(np.random.default_rng(seed)) or "
                f"symlab.tensor.random.rng()), received {got}"
            )
        size = normalize_size_param(size, self.name)
        tensors = []
        for k, (p, core) in enumerate(zip(params, self.ndims_params, strict=True)):
            try:
                p = as_tensor_variable(p, what=f"{self.name}: parameter {k}") if not isinstance(p, Variable) else p
            except TypeError as err:
                raise TypeError(str(err)) from None
            if not isinstance(p.type, TensorType):
                raise TypeError(f"{self.name}: {self.param_name(k)} must be a tensor, received {p} of type {p.type}")
            if p.type.ndim < core:
                raise ValueError(
                    f"{self.name}: {self.param_name(k)} must have at least {core} dimensions (signature "
                    f"{self.signature}), received {p} of type {p.type}"
                )
            tensors.append(p)
        self.check_core_shapes([p.type.shape for p in tensors])
        self.check_parameters(tensors)
        batch = self.batch_static_shape(size, tensors)
        tensors = self.expand_parameters(tensors, len(batch))
        support = self.support_static_shape(tensors)
        draw = TensorType(self.dtype, tuple(batch) + tuple(support))()
        next_rng = rng.type()
        return Apply(self, [rng, size, *tensors], [next_rng, draw])

    def param_name(self, k: int) -> str:
        """What parameter ``k`` is called (``loc``, ``scale``... as the distribution's function names it)."""
        return self.param_names[k] if k < len(self.param_names) else f"parameter {k}"

    def check_parameters(self, params: Sequence[Variable]) -> None:
        """Refuse parameters whose values are known before running (constants) and invalid: ``check_values``."""
        self.check_values([known_values(p) for p in params])

    def check_values(self, values: Sequence[np.ndarray | None]) -> None:
        """Refuse invalid parameter values with a ``ValueError`` naming the parameter (a subclass's check).

        ``values`` holds one array per parameter, ``None`` where the value is not known yet: ``make_node`` calls it
        with the constants' values, ``perform`` with every value, so a bad value is caught when built or when run.
        """

    def check_core_shapes(self, shapes: Sequence[tuple[int | None, ...]]) -> None:
        """Refuse parameters whose core dimensions disagree with the signature (``(n),(n,n)``: one ``n``)."""
        seen: dict[str, tuple[int, int]] = {}
        for k, (shape, dims) in enumerate(zip(shapes, self.inputs_sig, strict=True)):
            core = shape[len(shape) - len(dims):] if dims else ()
            for d, s in zip(dims, core, strict=True):
                if s is None:
                    continue
                if d.isdigit() and s != int(d):
                    raise ValueError(
                        f"{self.name}: {self.param_name(k)} must have {d} entries along its core dimension "
                        f"(signature {self.signature}), received shape {tuple(shape)}"
                    )
                if d in seen and seen[d][1] != s:
                    j = seen[d][0]
                    raise ValueError(
                        f"{self.name}: {self.param_name(k)} of shape {tuple(shape)} does not match "
                        f"{self.param_name(j)} of shape {tuple(shapes[j])}: core dimension {d!r} of signature "
                        f"{self.signature} is {s} in one and {seen[d][1]} in the other"
                    )
                seen.setdefault(d, (k, s))

    def batch_static_shape(self, size: Variable, params: Sequence[Variable]) -> tuple[int | None, ...]:
        """What is known of the batch shape: ``size``'s entries, or the parameters' batch shapes broadcast."""
        batch_shapes = [p.type.shape[: p.type.ndim - core] for p, core in zip(params, self.ndims_params, strict=True)]
        if not isinstance(size.type, NoneTypeT):
            entries = static_entries(size)
            for k, shape in enumerate(batch_shapes):
                if len(shape) > len(entries):
                    raise ValueError(
                        f"{self.name}: size has {len(entries)} entries but {self.param_name(k)} ({params[k]}) has "
                        f"{len(shape)} batch dimensions; size must have at least {len(shape)}"
                    )
                for axis, (got, want) in enumerate(zip(shape[::-1], entries[::-1])):
                    if got is not None and want is not None and got not in (1, want):
                        raise ValueError(
                            f"{self.name}: {self.param_name(k)} ({params[k]}) of shape {params[k].type.shape} cannot be "
                            f"broadcast to size {entries}: dimension {len(entries) - 1 - axis} is {got}, expected "
                            f"{want} or 1"
                        )
            return tuple(entries)
        ndim = max((len(s) for s in batch_shapes), default=0)
        out: list[int | None] = []
        for axis in range(ndim):
            sizes = {s[axis - ndim + len(s)] for s in batch_shapes if axis - ndim + len(s) >= 0}
            known = {s for s in sizes if s is not None and s != 1}
            if len(known) > 1:
                raise ValueError(
                    f"{self.name}: the parameters' shapes "
                    f"{', '.join(f'{self.param_name(k)} {p.type.shape}' for k, p in enumerate(params))} do not broadcast together "
                    f"(batch dimension {axis} has sizes {sorted(known)})"
                )
            out.append(known.pop() if known else (1 if sizes and None not in sizes else None))
        return tuple(out)

    def expand_parameters(self, params: Sequence[Variable], batch_ndim: int) -> list[Variable]:
        """Each parameter with as many batch dimensions as the draw (leading broadcastable ones added)."""
        out = []
        for p, core in zip(params, self.ndims_params, strict=True):
            missing = batch_ndim - (p.type.ndim - core)
            if missing > 0:
                if isinstance(p, Constant):
                    p = constant(np.reshape(p.data, (1,) * missing + np.shape(p.data)), dtype=p.type.dtype)
                else:
                    p = DimShuffle(p.type.ndim, ("x",) * missing + tuple(range(p.type.ndim)))(p)
            out.append(p)
        return out

    def support_static_shape(self, params: Sequence[Variable]) -> tuple[int | None, ...]:
        """What is known of the draw's own (core) shape, from the signature and the parameters' core shapes."""
        known: dict[str, int | None] = {d: int(d) if d.isdigit() else None for d in self.output_sig}
        for p, dims in zip(params, self.inputs_sig, strict=True):
            core_shape = p.type.shape[p.type.ndim - len(dims):] if dims else ()
            for d, s in zip(dims, core_shape, strict=True):
                if d in known and known[d] is None:
                    known[d] = s
        return tuple(known[d] for d in self.output_sig)

    # -- the parts of a node -----------------------------------------------------------------------------
    def rng_param(self, node: Apply) -> Variable:
        """The generator the node draws from."""
        return node.inputs[0]

    def size_param(self, node: Apply) -> Variable:
        """The node's ``size`` (``NoneConst`` when the parameters give the shape)."""
        return node.inputs[1]

    def dist_params(self, node: Apply) -> list[Variable]:
        """The distribution's parameters."""
        return list(node.inputs[2:])

    def update(self, node: Apply) -> dict[Variable, Variable]:
        """``{generator: next generator}``: the update that makes the next call draw new numbers."""
        return {node.inputs[0]: node.outputs[0]}

    # -- computing -------------------------------------------------------------------------------------------
    def rng_fn(self, rng: np.random.Generator, *args: Any) -> Any:
        """Draw with NumPy: by default ``rng.<name>(*params, size=size)`` (the last argument is ``size``)."""
        *params, size = args
        return getattr(rng, self.name)(*params, size=size)

    def check_batch_shapes(self, size: tuple[int, ...] | None, shapes: Sequence[tuple[int, ...]]) -> None:
        """Refuse parameter values whose batch shapes do not broadcast together, or to ``size`` (at run time)."""
        batches = [s[: len(s) - core] for s, core in zip(shapes, self.ndims_params, strict=True)]
        try:
            np.broadcast_shapes(*batches)
        except ValueError:
            named = ", ".join(f"{self.param_name(k)} {tuple(s)}" for k, s in enumerate(shapes))
            raise ValueError(f"{self.name}: the parameters' shapes do not broadcast together: {named}") from None
        if size is None:
            return
        for k, batch in enumerate(batches):
            if len(batch) > len(size) or any(b not in (1, s) for b, s in zip(batch[::-1], size[::-1])):
                raise ValueError(
                    f"{self.name}: {self.param_name(k)} of shape {tuple(shapes[k])} cannot be broadcast to size "
                    f"{size}: its batch shape {tuple(batch)} must broadcast to the size"
                )

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        rng, size, *params = inputs
        size = None if size is None else tuple(int(s) for s in size)
        shapes = [np.shape(p) for p in params]
        self.check_core_shapes(shapes)
        self.check_batch_shapes(size, shapes)
        self.check_values([np.asarray(p) for p in params])
        if not self.inplace:
            rng = copy_generator(rng)
        try:
            draw = self.rng_fn(rng, *params, size)
        except ValueError as err:
            named = ", ".join(f"{self.param_name(k)} of shape {s}" for k, s in enumerate(shapes))
            raise ValueError(f"{self}: NumPy refused to draw with {named} and size {size}: {err}") from err
        output_storage[0][0] = rng
        output_storage[1][0] = np.asarray(draw, dtype=self.dtype)

    def batch_shape_entries(self, node: Apply, input_shapes: Sequence[Sequence[Variable]]) -> list[Variable]:
        """The draw's batch shape, symbolically: ``size``'s entries, or the parameters' broadcast batch shape."""
        _, size, *params = node.inputs
        ndim_batch = node.outputs[1].type.ndim - self.ndim_supp
        if not isinstance(size.type, NoneTypeT):
            return [vector_entry(size, i) for i in range(ndim_batch)]
        batch = []
        for axis in range(ndim_batch):
            entry = None
            for p, shape in zip(params, input_shapes[2:], strict=True):
                if p.type.shape[axis] == 1:
                    continue
                entry = shape[axis]
                break
            batch.append(constant(1, dtype="int64") if entry is None else entry)
        return batch

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: Sequence[Sequence[Variable]]) -> list:
        draw = node.outputs[1]
        ndim_batch = draw.type.ndim - self.ndim_supp
        batch = self.batch_shape_entries(node, input_shapes)
        _, _, *params = node.inputs
        support = []
        for axis, dim in enumerate(self.output_sig):
            known = draw.type.shape[ndim_batch + axis]
            if known is not None:
                support.append(constant(known, dtype="int64"))
                continue
            for p, shape, dims in zip(params, input_shapes[2:], self.inputs_sig, strict=True):
                if dim in dims:
                    support.append(shape[p.type.ndim - len(dims) + dims.index(dim)])
                    break
            else:
                raise NotImplementedError(f"{self}: the size of core dimension {dim!r} is known only when drawn")
        return [(), tuple(batch) + tuple(support)]

    # -- differentiating -----------------------------------------------------------------------------------
    def L_op(self, inputs: Sequence[Variable], outputs: Sequence[Variable],  # noqa: N802 - PyTensor's name
             output_grads: Sequence[Variable]) -> list[Variable]:
        """No gradient, unless a distribution defines one (a reparametrized draw): a named undefined gradient.

        The generator and ``size`` are disconnected (a generator is state, not a number; a size is an integer), so
        a cost that reaches a parameter through another path, or through a later draw's generator, is unaffected.
        """
        why = f"a draw of {self.name} is not a differentiable function of its inputs"
        return [disconnected(), disconnected(), *(grad_undefined(self, k, inp, why)
                                                  for k, inp in enumerate(inputs) if k >= 2)]

    def do_constant_folding(self, fgraph: Any, node: Apply) -> bool:
        return False  # a draw is not a constant, even when its parameters are


def known_values(p: Variable) -> np.ndarray | None:
    """The value of a parameter known before running the graph (a constant), else None."""
    return np.asarray(p.data) if isinstance(p, Constant) else None


def static_size(size: Variable) -> tuple[int | None, ...] | None:
    """What is known of a node's ``size`` (None when the size is ``NoneConst``)."""
    if isinstance(size.type, NoneTypeT):
        return None
    return static_entries(size)


__all__ = ["RandomVariable", "known_values", "normalize_size_param", "parse_signature", "register_default_generator", "static_size"]
