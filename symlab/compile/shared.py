"""Shared variables: symbolic variables that keep a value between calls.

A shared variable is an implicit input of every function that uses it: its
current value is read at each call, and ``updates`` replace it after the call.
This is how parameters are trained (an SGD step is one call):

>>> import numpy as np
>>> import symlab
>>> import symlab.tensor as st
>>> w = symlab.shared(np.zeros(2), name="w")
>>> x = st.dvector("x")
>>> step = symlab.function([x], (w * x).sum(), updates={w: w + x})
>>> float(step([1.0, 2.0])), w.get_value()
(0.0, array([1., 2.]))
>>> float(step([1.0, 2.0]))
5.0

``get_value()`` returns a copy (``borrow=True``: the stored array itself);
``set_value(v)`` filters ``v`` through the variable's type, so a value of the
wrong dtype or rank is refused with a message saying what was expected:

>>> w.set_value(np.ones((2, 2)))
Traceback (most recent call last):
...
TypeError: shared variable w: cannot set a value of dtype float64, ndim 2 and shape (2, 2): TensorType(float64, (?,)) expected 1 dimension, received 2 (an array of shape (2, 2))

The shared variable itself (:class:`SharedVariable` and its :class:`Container`) is
:mod:`symlab.graph.sharedvalue`'s, below the tensor and sparse layers whose kinds subclass it. This
module makes a dense array's (:class:`TensorSharedVariable`), and :func:`shared` the kind a value
needs (a scipy.sparse matrix's comes from :mod:`symlab.sparse.sharedvar`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from symlab.graph.basic import Variable
from symlab.graph.sharedvalue import Container, SharedVariable, describe_value
from symlab.tensor.type import TensorType
from symlab.tensor.variable import TensorVariable


class TensorSharedVariable(TensorVariable, SharedVariable):
    """A shared NumPy array: tensor operators (``w + 1``, ``w.T``) work on it."""


def _static_shape(shape: Any, array: np.ndarray) -> tuple[int | None, ...]:
    """``shape=`` of :func:`shared`, checked against the value: one entry per dimension, ``None`` or its size."""
    try:
        entries = tuple(shape)
    except TypeError:
        raise TypeError(f"shared: shape must be a tuple of sizes or None, received {shape!r}") from None
    if len(entries) != array.ndim:
        raise ValueError(
            f"shared: shape {entries} has {len(entries)} entries but the value has {array.ndim} dimensions "
            f"(shape {array.shape})"
        )
    for axis, (size, actual) in enumerate(zip(entries, array.shape, strict=True)):
        if size is None:
            continue
        if not isinstance(size, int | np.integer) or isinstance(size, bool):
            raise TypeError(f"shared: shape entries must be int or None, received {size!r} at axis {axis}")
        if size != actual:
            raise ValueError(
                f"shared: shape {entries} says axis {axis} has size {size}, but the value's shape is {array.shape}"
            )
    return tuple(None if size is None else int(size) for size in entries)


def shared(
    value: Any,
    name: str | None = None,
    strict: bool = False,
    allow_downcast: bool | None = None,
    *,
    borrow: bool = False,
    shape: Any = None,
) -> SharedVariable:
    """A shared variable holding ``value``: an implicit input of the functions that use it.

    The type is a :class:`TensorType` of the value's dtype and rank, with no static
    sizes (later values may have other shapes) unless ``shape`` gives them: one entry
    per dimension, ``None`` (any size) or the value's size there. ``strict=True`` makes
    ``set_value`` accept only arrays of exactly that dtype; ``allow_downcast`` lets it
    convert with loss of precision. The value is copied, unless ``borrow=True``: then
    the variable keeps the array it was given (when it needs no conversion), and
    changing that array in place changes the variable's value, as in Theano/PyTensor.

    >>> import numpy as np
    >>> import symlab
    >>> b = symlab.shared(0.5, name="b")
    >>> b.type, b.get_value()
    (TensorType(float64, ()), array(0.5))
    >>> a = np.zeros((3, 1))
    >>> symlab.shared(a, shape=(None, 1)).type
    TensorType(float64, (?, 1))
    >>> kept = symlab.shared(a, borrow=True)
    >>> a += 1
    >>> kept.get_value()[:, 0]
    array([1., 1., 1.])
    >>> symlab.shared(a, shape=(2, 1))
    Traceback (most recent call last):
    ...
    ValueError: shared: shape (2, 1) says axis 0 has size 2, but the value's shape is (3, 1)
    """
    if not isinstance(borrow, bool | np.bool_):
        raise TypeError(f"shared: borrow must be True or False, received {borrow!r}")
    if isinstance(value, Variable):
        raise TypeError(f"shared: expected a value (an array or a number), received the symbolic variable {value}")
    if isinstance(value, np.random.Generator | np.random.RandomState):
        # A NumPy generator becomes a shared generator, the state random variables draw from (loaded only then).
        if shape is not None:
            raise TypeError(f"shared: shape= is for arrays, received a generator and shape={shape!r}")
        from symlab.tensor.random.variable import shared_generator

        return shared_generator(value, name=name, strict=strict, allow_downcast=allow_downcast, borrow=bool(borrow))
    if value.__class__.__module__.startswith("scipy.sparse"):
        # A scipy.sparse matrix becomes a shared sparse variable, as in PyTensor (loaded only then).
        if shape is not None:
            raise TypeError(f"shared: shape= is for dense arrays, received a sparse matrix and shape={shape!r}")
        from symlab.sparse.sharedvar import shared as sparse_shared

        return sparse_shared(value, name=name, strict=strict, allow_downcast=allow_downcast, borrow=bool(borrow))
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as err:
        raise TypeError(f"shared: cannot make an array of {describe_value(value)}: {err}") from None
    if array.dtype == object or array.dtype.kind in "USVMm":
        raise TypeError(f"shared: expected a numeric value, received {describe_value(value)}")
    static = (None,) * array.ndim if shape is None else _static_shape(shape, array)
    type = TensorType(array.dtype.name, static)
    variable = TensorSharedVariable(type, None, name=name, strict=strict, allow_downcast=allow_downcast,
                                    container=Container(type, None, name, strict, allow_downcast))
    variable.set_value(value, borrow=bool(borrow))
    return variable


__all__ = ["Container", "SharedVariable", "TensorSharedVariable", "shared"]
