"""The tensor language: types, constructors and operations on NumPy-like arrays.

>>> import symlab.tensor as st
>>> x = st.dmatrix("x")
>>> y = st.dmatrix("y")
>>> z = x + y
>>> z.owner.op, z.owner.inputs
(Elemwise{add,no_inplace}, [x, y])

The modules, lowest first; each imports only modules before it:

- ``type``: ``TensorType``; ``constructors``: ``dmatrix``, ``tensor``... (ready-made types);
- ``conversion``: values to tensors (``constant``, ``as_tensor_variable``);
- ``elemwise``: ``Elemwise`` (a scalar op over arrays) and ``DimShuffle``;
- ``shape_of``: a shape as a value (``Shape``, ``Shape_i``, ``SpecifyShape``);
- ``basic``: ``cast``, ``transpose``, ``expand_dims``, ``squeeze``, ``get_scalar_constant_value``;
- ``math``: the ``Elemwise`` of every scalar op (``add``, ``exp``...);
- ``reduction`` (``sum``, ``mean``, ``argmax``...), ``joining`` (``concatenate``, ``stack``, ``split``),
  ``alloc`` (``zeros``, ``arange``...), ``shape`` (``reshape``, ``flatten``; PyTensor's module of shape ops, so it
  names those of ``shape_of`` too), ``subtensor_index``,
  ``subtensor_shape`` and ``subtensor`` (``x[idx]``, ``set_subtensor``), ``special`` (``softmax``),
  ``products`` (``dot``, ``matmul``), ``transfer``;
- ``variable``: ``TensorVariable`` and ``TensorConstant``, whose operators and methods call the ops;
- above them, loaded on first use: ``nnet``, ``signal``, ``random`` (random variables, ``pt.random``) and
  ``shared_randomstreams`` (Theano's ``RandomStreams``).

A lower module reaches a higher one only through what the higher one registers when it is imported
(``register_tensor_type_parts``, ``register_list_stacker``) or through the methods of the variables
it is given (``g.sum(axis)``).
"""

from collections.abc import Callable as _Callable
from types import ModuleType as _ModuleType

from symlab.graph.basic import Apply, Constant, Result, Variable
from symlab.tensor.basic import (
    as_tensor_variable,
    cast,
    constant,
    dimshuffle,
    expand_dims,
    get_scalar_constant_value,
    squeeze,
    transpose,
)
from symlab.tensor.constructors import *  # noqa: F403
from symlab.tensor.elemwise import DimShuffle, Elemwise
from symlab.tensor.math import *  # noqa: F403
from symlab.tensor.products import *  # noqa: F403
from symlab.tensor.reduction import *  # noqa: F403
from symlab.tensor.special import *  # noqa: F403
from symlab.tensor.shape import Reshape, Shape, Shape_i, SpecifyShape, flatten, reshape, shape, shape_i, specify_shape
from symlab.tensor.alloc import *  # noqa: F403
from symlab.tensor.joining import *  # noqa: F403
from symlab.tensor.subtensor import *  # noqa: F403
from symlab.tensor.transfer import register_transfer, transfer, unregister_transfer
from symlab.tensor.type import Tensor, TensorType
from symlab.tensor.variable import TensorConstant, TensorVariable
from symlab.tensor import vectorize_rules  # registers how tensor ops batch, for symlab.graph.vectorize_graph

as_tensor = as_tensor_variable

#: Differentiation, reachable from the tensor package as in Theano and PyTensor (seed 003 writes
#: ``tensor.grad()``). They live in :mod:`symlab.gradient`, a layer above this one, which gives them
#: here with :func:`register_gradient_functions` when it is imported (``import symlab`` imports it).
_GRADIENT_NAMES = ("grad", "jacobian", "hessian", "Lop", "Rop", "verify_grad")
_gradient_functions: dict[str, _Callable[..., object]] = {}


def register_gradient_functions(functions: dict[str, _Callable[..., object]]) -> None:
    """Make ``symlab.tensor.grad`` (and the other names of ``_GRADIENT_NAMES``) the given functions."""
    unknown = sorted(set(functions) - set(_GRADIENT_NAMES))
    if unknown:
        raise ValueError(f"register_gradient_functions: {unknown} are not gradient names of symlab.tensor")
    _gradient_functions.update(functions)


#: ``from symlab.tensor import *`` (seed 004's ``from theano.tensor import *``) gives the tensor language and
#: the gradient functions, never the submodules: a submodule named ``type`` or ``math`` would hide Python's own.
__all__ = sorted({name for name, value in globals().items()
                  if not name.startswith("_") and not isinstance(value, _ModuleType)
                  and name != "register_gradient_functions"} | set(_GRADIENT_NAMES))


def __getattr__(name: str):
    if name in _GRADIENT_NAMES:
        try:
            return _gradient_functions[name]
        except KeyError:
            raise AttributeError(
                f"symlab.tensor.{name} is symlab.gradient.{name}, which is given here when symlab.gradient is "
                "imported (import symlab imports it)"
            ) from None
    # Theano's namespaces ``T.nnet`` and ``T.signal``: subpackages loaded on first use (``import symlab`` stays
    # light); the import sets the attribute, so this runs once.
    if name == "nnet":
        import symlab.tensor.nnet as nnet

        return nnet
    if name == "signal":
        import symlab.tensor.signal as signal

        return signal
    if name == "random":  # PyTensor's pt.random: random variables
        import symlab.tensor.random as random

        return random
    raise AttributeError(f"module 'symlab.tensor' has no attribute {name!r}")
