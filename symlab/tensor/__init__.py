"""The tensor language: types, constructors and operations on NumPy-like arrays.

>>> import symlab.tensor as st
>>> x = st.dmatrix("x")
>>> y = st.dmatrix("y")
>>> z = x + y
>>> z.owner.op, z.owner.inputs
(Elemwise{add,no_inplace}, [x, y])
"""

from symlab.graph.basic import Apply, Constant, Variable
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
from symlab.tensor.join import *  # noqa: F403
from symlab.tensor.subtensor import *  # noqa: F403
from symlab.tensor.type import TensorType
from symlab.tensor.variable import TensorConstant, TensorVariable

as_tensor = as_tensor_variable
