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
"""

from __future__ import annotations

from typing import Any

import numpy as np

from symlab.graph.basic import Variable
from symlab.graph.type import Type
from symlab.tensor.type import TensorType
from symlab.tensor.variable import TensorVariable


def describe_value(value: Any) -> str:
    """``dtype ..., ndim ... and shape ...`` of an array-like value (its Python type otherwise).

    >>> describe_value(np.zeros((2, 3), dtype="int32"))
    'a value of dtype int32, ndim 2 and shape (2, 3)'
    >>> describe_value("abc")
    "a str ('abc')"
    >>> describe_value(object())  # doctest: +ELLIPSIS
    'an object (<object object at ...>)'
    """
    dtype = getattr(value, "dtype", None)
    shape = getattr(value, "shape", None)
    if dtype is not None and shape is not None:
        return f"a value of dtype {dtype}, ndim {len(shape)} and shape {tuple(shape)}"
    if isinstance(value, list | tuple | int | float | complex | bool):
        try:
            arr = np.asarray(value)
        except (TypeError, ValueError):  # pragma: no cover - ragged lists
            arr = None
        if arr is not None and arr.dtype != object:
            what = type(value).__name__
            return f"a Python {what} (dtype {arr.dtype}, ndim {arr.ndim} and shape {arr.shape})"
    text = repr(value)
    if len(text) > 60:
        text = text[:55] + "(...)"
    kind = type(value).__name__
    return f"{'an' if kind[:1].lower() in 'aeiou' else 'a'} {kind} ({text})"


class Container:
    """The box holding a shared variable's value; clones of the variable share it."""

    __slots__ = ("type", "value", "name", "strict", "allow_downcast")

    def __init__(self, type: Type, value: Any, name: str | None, strict: bool, allow_downcast: bool | None) -> None:
        self.type = type
        self.name = name
        self.strict = strict
        self.allow_downcast = allow_downcast
        self.value = value

    def __repr__(self) -> str:
        return f"Container({self.name or '<unnamed>'}: {self.value!r})"


class SharedVariable(Variable):
    """A Variable with a value stored in a :class:`Container` (use :func:`shared` to make one).

    ``clone()`` returns another SharedVariable on the *same* container, so the
    copy of the graph a compiled function holds reads and updates the user's
    variable.
    """

    container: Container

    def __init__(
        self,
        type: Type,
        value: Any = None,
        name: str | None = None,
        strict: bool = False,
        allow_downcast: bool | None = None,
        container: Container | None = None,
    ) -> None:
        super().__init__(type, None, None, name)
        if container is None:
            container = Container(type, None, name, strict, allow_downcast)
            self.container = container
            self.set_value(value, borrow=False)
        else:
            self.container = container

    def get_value(self, borrow: bool = False) -> Any:
        """The current value: a copy, or the stored object itself with ``borrow=True``."""
        value = self.container.value
        if borrow:
            return value
        return value.copy() if hasattr(value, "copy") else value

    def set_value(self, value: Any, borrow: bool = False) -> None:
        """Store ``value`` (filtered by the type; copied unless ``borrow=True``)."""
        c = self.container
        try:
            new = self.type.filter(value, strict=c.strict, allow_downcast=c.allow_downcast)
        except (TypeError, ValueError) as err:
            raise TypeError(f"shared variable {self.name or self}: cannot set {describe_value(value)}: {err}") from None
        if not borrow and new is value and hasattr(new, "copy"):
            new = new.copy()
        c.value = new

    @property
    def value(self) -> Any:
        """The stored value (not a copy; same as ``get_value(borrow=True)``)."""
        return self.container.value

    def clone(self, name: str | None = None) -> SharedVariable:
        cp = type(self)(self.type, name=self.name if name is None else name, container=self.container)
        cp.tag.update(self.tag)
        return cp

    def __str__(self) -> str:
        return self.name if self.name is not None else f"<shared {self.type}>"


class TensorSharedVariable(TensorVariable, SharedVariable):
    """A shared NumPy array: tensor operators (``w + 1``, ``w.T``) work on it."""


def shared(
    value: Any, name: str | None = None, strict: bool = False, allow_downcast: bool | None = None
) -> SharedVariable:
    """A shared variable holding ``value`` (copied): an implicit input of the functions that use it.

    The type is a :class:`TensorType` of the value's dtype and rank (no static
    sizes, so later values may have other shapes). ``strict=True`` makes
    ``set_value`` accept only arrays of exactly that dtype; ``allow_downcast``
    lets it convert with loss of precision.

    >>> import symlab
    >>> b = symlab.shared(0.5, name="b")
    >>> b.type, b.get_value()
    (TensorType(float64, ()), array(0.5))
    """
    if isinstance(value, Variable):
        raise TypeError(f"shared: expected a value (an array or a number), received the symbolic variable {value}")
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as err:
        raise TypeError(f"shared: cannot make an array of {describe_value(value)}: {err}") from None
    if array.dtype == object or array.dtype.kind in "USVMm":
        raise TypeError(f"shared: expected a numeric value, received {describe_value(value)}")
    type = TensorType(array.dtype.name, (None,) * array.ndim)
    return TensorSharedVariable(type, value, name=name, strict=strict, allow_downcast=allow_downcast)


__all__ = ["Container", "SharedVariable", "TensorSharedVariable", "describe_value", "shared"]
