"""The tensor language: types, constructors and operations on NumPy-like arrays.

>>> import symlab.tensor as st
>>> x = st.dmatrix("x")
>>> y = st.dmatrix("y")
>>> z = x + y
>>> z.owner.op, z.owner.inputs
(Elemwise{add,no_inplace}, [x, y])
"""

from types import ModuleType as _ModuleType

from symlab.graph.basic import Apply, Constant, Result, Variable
from symlab.tensor.basic import (
    as_tensor_variable,
    cast,
    constant,
    dimshuffle,
    get_scalar_constant_value,
    transpose,
)
from symlab.tensor.constructors import *  # noqa: F403
from symlab.tensor.elemwise import DimShuffle, Elemwise
from symlab.tensor.math import *  # noqa: F403
from symlab.tensor.products import *  # noqa: F403
from symlab.tensor.reduction import *  # noqa: F403
from symlab.tensor.special import *  # noqa: F403
from symlab.tensor.shape import (
    Reshape,
    Shape,
    Shape_i,
    SpecifyShape,
    expand_dims,
    flatten,
    reshape,
    shape,
    shape_i,
    specify_shape,
    squeeze,
)
from symlab.tensor.alloc import *  # noqa: F403
from symlab.tensor.joining import *  # noqa: F403
from symlab.tensor.subtensor import *  # noqa: F403
from symlab.tensor.transfer import register_transfer, transfer, unregister_transfer
from symlab.tensor.type import Tensor, TensorType
from symlab.tensor.variable import TensorConstant, TensorVariable

as_tensor = as_tensor_variable

#: Differentiation, reachable from the tensor package as in Theano and PyTensor (seed 003 writes
#: ``tensor.grad()``). They live in :mod:`symlab.gradient`, a layer above this one: loaded on first use.
_GRADIENT_NAMES = ("grad", "jacobian", "hessian", "Lop", "Rop", "verify_grad")
#: Theano's namespaces ``T.nnet`` and ``T.signal``: subpackages loaded on first use (``import symlab`` stays light).
_LAZY_SUBPACKAGES = ("nnet", "signal")


#: ``from symlab.tensor import *`` (seed 004's ``from theano.tensor import *``) gives the tensor language and
#: the gradient functions, never the submodules: a submodule named ``type`` or ``math`` would hide Python's own.
__all__ = sorted({name for name, value in globals().items()
                  if not name.startswith("_") and not isinstance(value, _ModuleType)} | set(_GRADIENT_NAMES))


def __getattr__(name: str):
    if name in _GRADIENT_NAMES:
        from symlab import gradient

        value = getattr(gradient, name)
        globals()[name] = value
        return value
    if name in _LAZY_SUBPACKAGES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")  # the import also sets the attribute
    raise AttributeError(f"module 'symlab.tensor' has no attribute {name!r}")
