"""Shared values: a Variable whose value is kept in a container between calls, and read at each call.

A :class:`SharedVariable` is an implicit input of every compiled function that uses it: its current
value is read at each call, and updates replace it after the call. Its value lives in a
:class:`Container`, which its clones share, so the copy of the graph a compiled function holds reads and
updates the user's variable. ``set_value`` filters a new value through the variable's Type and says what
was expected when it refuses one (:func:`describe_value` describes the value received).

This is the layer-neutral part: the kinds of shared variables (a dense array's,
:mod:`symlab.compile.shared`; a scipy.sparse matrix's, :mod:`symlab.sparse.sharedvar`) subclass it, and
``symlab.shared`` makes the right one for a value.

>>> import numpy as np
>>> from symlab.tensor.type import TensorType
>>> w = SharedVariable(TensorType("float64", (None,)), np.zeros(2), name="w")
>>> w.clone().container is w.container, w.get_value()
(True, array([0., 0.]))
>>> w.set_value(np.ones((2, 2)))
Traceback (most recent call last):
...
TypeError: shared variable w: cannot set a value of dtype float64, ndim 2 and shape (2, 2): TensorType(float64, (?,)) expected 1 dimension, received 2 (an array of shape (2, 2))
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from symlab.graph.basic import Variable
from symlab.graph.type import Type


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
    """A Variable with a value stored in a :class:`Container` (use :func:`~symlab.compile.shared.shared` to make one).

    ``clone()`` returns another SharedVariable on the *same* container, so the
    copy of the graph a compiled function holds reads and updates the user's
    variable.
    """

    container: Container
    #: The update a function applies to this variable when its ``updates`` give none (``None``: no update). A
    #: draw of a ``RandomStream`` sets it to the next generator, so every function using the draw advances it;
    #: ``symlab.function(..., no_default_updates=True)`` leaves it out.
    default_update: Variable | None = None

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
        for collected in _COLLECTORS:
            collected.append(self)

    def get_value(self, borrow: bool = False, return_internal_type: bool = False) -> Any:
        """The current value: a copy, or the stored object itself with ``borrow=True``.

        ``return_internal_type`` is PyTensor's: it asks for the value in the form the backend stores
        it. symlab stores NumPy arrays on every backend, so the value is the same either way.

        >>> import numpy as np
        >>> from symlab.tensor.type import TensorType
        >>> s = SharedVariable(TensorType("float64", (None,)), np.ones(2))
        >>> s.get_value(borrow=True) is s.get_value(borrow=True), s.get_value() is s.get_value()
        (True, False)
        """
        if not isinstance(borrow, bool | np.bool_) or not isinstance(return_internal_type, bool | np.bool_):
            raise TypeError(
                f"get_value: borrow and return_internal_type must be True or False, received "
                f"borrow={borrow!r}, return_internal_type={return_internal_type!r}"
            )
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
        if self.default_update is not None:
            cp.default_update = self.default_update
        return cp

    def __str__(self) -> str:
        return self.name if self.name is not None else f"<shared {self.type}>"


#: The lists :func:`collect_new_shareds` is filling (a stack: collections nest).
_COLLECTORS: list[list[SharedVariable]] = []


@contextmanager
def collect_new_shareds() -> Iterator[list[SharedVariable]]:
    """Collect every shared variable made (clones included) while the ``with`` block runs.

    ``scan`` uses it to find the shared variables its body made (a ``RandomStream`` draw makes one), whose
    ``default_update`` becomes an update of the loop.

    >>> from symlab.tensor.type import TensorType
    >>> with collect_new_shareds() as made:
    ...     w = SharedVariable(TensorType("float64", (None,)), np.zeros(2), name="w")
    >>> made == [w]
    True
    """
    collected: list[SharedVariable] = []
    _COLLECTORS.append(collected)
    try:
        yield collected
    finally:
        _COLLECTORS.remove(collected)


__all__ = ["Container", "SharedVariable", "collect_new_shareds", "describe_value"]
