"""``Type``: the static description of the values a Variable can hold.

A Type is an *instance*, not a Python class: ``dmatrix`` and ``irow`` are two
instances of ``TensorType``. Every method of the contract (seed 002) has a
default here except :meth:`Type.filter`. The ``DoubleType`` of the
documentation needs only ``filter`` and ``values_eq_approx``:

>>> from symlab.graph.type import Type
>>> class DoubleType(Type):
...     def filter(self, x, strict=False, allow_downcast=None):
...         if strict:
...             if isinstance(x, float):
...                 return x
...             raise TypeError("Expected a float!")
...         if allow_downcast:
...             return float(x)
...         x_float = float(x)
...         if x_float == x:
...             return x_float
...         raise TypeError(f"The double type cannot accurately represent {x}")
...     def values_eq_approx(self, x, y, tolerance=1e-4):
...         return abs(x - y) / (abs(x) + abs(y)) < tolerance
>>> double = DoubleType()
>>> double.filter(3)
3.0
>>> DoubleType() == DoubleType()   # object identity, as the seed warns
False
>>> double.is_valid_value(3)       # strict filtering refuses an int
False
"""

from __future__ import annotations

from functools import cache
from typing import Any

from symlab.graph.basic import Constant, Variable, register_type_class
from symlab.graph.display import Displayable
from symlab.graph.props import props_getter


class Type(Displayable):
    """Base class of all Types; subclasses must define :meth:`filter`.

    Subclasses that list their defining attributes in ``__props__`` get
    ``__eq__``, ``__hash__`` and :meth:`clone` from them; ``__props__ = ()``
    makes all instances of the class equal. Without ``__props__``, equality
    is identity.
    """

    #: The class of the Variables that :meth:`make_variable` builds.
    variable_type: type[Variable] = Variable
    #: The class of the Constants that :meth:`filter_variable` builds.
    constant_type: type[Constant] = Constant
    __props__: tuple[str, ...] = ()

    # -- values ------------------------------------------------------------
    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        """Return ``data`` as a value of this Type, or raise ``TypeError``.

        ``strict=True``: accept only values that already are of this Type.
        ``strict=False``: convert when the conversion loses nothing, or
        whatever is lost when ``allow_downcast`` is true.
        """
        raise NotImplementedError(f"{type(self).__name__} must define filter()")

    def filter_inplace(
        self, value: Any, storage: Any, strict: bool = False, allow_downcast: bool | None = None
    ) -> Any:
        """Like :meth:`filter`, but may reuse the memory of ``storage``.

        The default does not reuse anything: it returns ``filter(value)``.
        """
        return self.filter(value, strict=strict, allow_downcast=allow_downcast)

    def is_valid_value(self, value: Any) -> bool:
        """True iff ``filter(value, strict=True)`` raises no exception."""
        try:
            self.filter(value, strict=True)
        except (TypeError, ValueError):
            return False
        return True

    def values_eq(self, a: Any, b: Any) -> bool:
        """True iff ``a`` and ``b`` are equal values of this Type."""
        return bool(a == b)

    def values_eq_approx(self, a: Any, b: Any) -> bool:
        """True iff ``a`` and ``b`` are nearly equal; by default :meth:`values_eq`."""
        return self.values_eq(a, b)

    def may_share_memory(self, a: Any, b: Any) -> bool:
        """True if the values ``a`` and ``b`` may share memory (used by DebugMode)."""
        return a is b

    def get_shape_info(self, obj: Any) -> Any:
        """What :meth:`get_size` needs to know the memory taken by ``obj``."""
        return obj

    def get_size(self, shape_info: Any) -> int:
        """Bytes taken by the value described by ``shape_info`` (data only)."""
        import sys

        return sys.getsizeof(shape_info)

    # -- variables -----------------------------------------------------------
    def make_variable(self, name: str | None = None) -> Variable:
        """A new Variable of this Type, with no owner."""
        return self.variable_type(self, None, None, name)

    def __call__(self, name: str | None = None) -> Variable:
        """Shortcut for :meth:`make_variable`: ``dmatrix('x')``."""
        return self.make_variable(name)

    def make_constant(self, value: Any, name: str | None = None) -> Constant:
        """A Constant of this Type holding ``value`` (filtered)."""
        return self.constant_type(self, value, name)

    # -- relations between types ---------------------------------------------
    def in_same_class(self, otype: Type) -> bool:
        """True if ``otype`` is of the same "class" of types as ``self``.

        By default two types are in the same class only when they are equal.
        """
        return self == otype

    def is_super(self, otype: Type) -> bool | None:
        """True if ``self`` describes a superset of the values of ``otype``.

        ``t1.is_super(t2)`` means a Variable of type ``t1`` may be replaced by
        one of type ``t2``. ``None`` when the relation cannot be decided.
        """
        if self.in_same_class(otype):
            return True
        return None

    def convert_variable(self, var: Variable) -> Variable | None:
        """A Variable compatible with both ``self`` and ``var.type``, or ``None``."""
        if self.is_super(var.type):
            return var
        return None

    def filter_variable(self, other: Any, allow_convert: bool = True) -> Variable:
        """Return ``other`` as a Variable that can stand where a ``self`` is expected.

        A non-Variable becomes a Constant of this Type. A Variable of another
        Type is passed through :meth:`convert_variable`; one that cannot be
        converted raises ``TypeError`` naming both types.
        """
        if not isinstance(other, Variable):
            other = self.make_constant(other)
        if other.type == self:
            return other
        if allow_convert:
            converted = self.convert_variable(other)
            if converted is not None:
                return converted
        raise TypeError(
            f"Cannot convert Type {other.type} (of Variable {other}) into Type {self}. "
            f"You can try to manually convert {other} into a {self}."
        )

    # -- identity --------------------------------------------------------------
    def _props(self) -> tuple[Any, ...]:
        return props_getter(type(self))(self)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not _declares_props(type(self)):
            return False  # the seed's default: object identity
        return type(self) is type(other) and self._props() == other._props()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        if not _declares_props(type(self)):
            return id(self)
        return hash((type(self), self._props()))

    def clone(self, **changes: Any) -> Type:
        """A Type like this one with some of its ``__props__`` changed.

        A Type without ``__props__`` is rebuilt with no arguments.
        """
        if not self.__props__:
            if changes:
                raise TypeError(f"{type(self).__name__} has no __props__ to change: {sorted(changes)}")
            return type(self)()
        unknown = set(changes) - set(self.__props__)
        if unknown:
            raise TypeError(f"{type(self).__name__}.clone: unknown properties {sorted(unknown)}")
        kwargs = {p: getattr(self, p) for p in self.__props__}
        kwargs.update(changes)
        return type(self)(**kwargs)

    def __repr__(self) -> str:
        if not self.__props__:
            return type(self).__name__
        return f"{type(self).__name__}({', '.join(str(v) for v in self._props())})"


# Variables accept an instance of Type (or of a subclass) as their ``type``.
register_type_class(Type)


@cache  # a class's MRO does not change; equality and hashing ask this on every call
def _declares_props(cls: type) -> bool:
    """True if some class below ``Type`` in ``cls``'s MRO sets ``__props__``."""
    return any("__props__" in c.__dict__ for c in cls.__mro__ if c is not Type)
