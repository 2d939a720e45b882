"""``In`` and ``Out``: how a compiled function treats one of its inputs or outputs.

A bare Variable among the inputs means ``In(variable)``; among the outputs,
``Out(variable)``. The wrappers add what the variable alone cannot say:

>>> import symlab
>>> import symlab.tensor as st
>>> x, y = st.dscalars("x", "y")
>>> f = symlab.function([x, symlab.In(y, value=1.0)], x + y)
>>> float(f(2.0)), float(f(2.0, 3.0)), float(f(x=2.0, y=5.0))
(3.0, 5.0, 7.0)
"""

from __future__ import annotations

from typing import Any

from symlab.graph.basic import Variable

_NO_VALUE = object()


class In:
    """An input of a compiled function.

    ``name``
        the keyword that gives its value (default: the variable's name);
    ``value``
        a default used when the call gives none (``default`` is an alias);
    ``mutable``
        the function may overwrite the array passed (inplace rewrites may then
        write into it); otherwise the caller's array is never modified;
    ``borrow``
        the function may keep the array passed after the call (it never does
        now; the flag exists for backends that cache inputs);
    ``strict`` / ``allow_downcast``
        how :meth:`~symlab.graph.type.Type.filter` converts the value
        (``allow_downcast=None``: the function's ``allow_input_downcast``).
    """

    def __init__(
        self,
        variable: Variable,
        name: str | None = None,
        value: Any = _NO_VALUE,
        mutable: bool = False,
        borrow: bool = False,
        strict: bool = False,
        allow_downcast: bool | None = None,
        default: Any = _NO_VALUE,
    ) -> None:
        if not isinstance(variable, Variable):
            raise TypeError(f"In: expected a symbolic Variable, received {type(variable).__name__} ({variable!r:.60})")
        if value is not _NO_VALUE and default is not _NO_VALUE:
            raise TypeError("In: give value= or default=, not both")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"In: name must be a str, received {type(name).__name__}")
        self.variable = variable
        self.name = name if name is not None else variable.name
        self._value = value if value is not _NO_VALUE else default
        self.mutable = bool(mutable)
        self.borrow = bool(borrow)
        self.strict = bool(strict)
        self.allow_downcast = allow_downcast
        #: The default value after the type's filter (set by ``symlab.function``).
        self.filtered_value: Any = None

    @property
    def has_value(self) -> bool:
        """True if the input has a default value."""
        return self._value is not _NO_VALUE

    @property
    def value(self) -> Any:
        """The default value (``None`` if there is none; see :attr:`has_value`)."""
        return None if self._value is _NO_VALUE else self._value

    default = value

    def __repr__(self) -> str:
        extra = "".join(
            f", {k}=True" for k in ("mutable", "borrow", "strict") if getattr(self, k)
        )
        if self.has_value:
            extra += f", value={self._value!r:.40}"
        return f"In({self.variable}{extra})"


class Out:
    """An output of a compiled function.

    With ``borrow=True`` the returned array may alias an input, a shared
    value, another output or a constant (no defensive copy is made); by
    default every returned array is the caller's own.
    """

    def __init__(self, variable: Variable, borrow: bool = False) -> None:
        if not isinstance(variable, Variable):
            raise TypeError(f"Out: expected a symbolic Variable, received {type(variable).__name__} ({variable!r:.60})")
        self.variable = variable
        self.borrow = bool(borrow)

    def __repr__(self) -> str:
        return f"Out({self.variable}{', borrow=True' if self.borrow else ''})"


__all__ = ["In", "Out"]
