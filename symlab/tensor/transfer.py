"""``transfer(var, target)``: a variable's value moved to another device, as seed 002 documents.

symlab computes on the CPU only, so the one built-in target is ``"cpu"`` (and ``None``): the
variable itself. A library that adds a device plugs it in as seed 002 says: a function
``transfer_fn(var, target)`` that returns the transferred variable, or ``None`` when it cannot
transfer to ``target``, registered with :func:`register_transfer`. The functions registered last
are asked first.

>>> import symlab.tensor as st
>>> x = st.dvector("x")
>>> transfer(x, "cpu") is x, x.transfer("cpu") is x
(True, True)
>>> def to_twice(var, target):
...     return var * 2 if target == "twice" else None
>>> register_transfer(to_twice)
>>> print(x.transfer("twice"))
Elemwise{mul,no_inplace}.0
>>> unregister_transfer(to_twice)
>>> x.transfer("gpu")
Traceback (most recent call last):
...
ValueError: transfer: cannot move x to target 'gpu': symlab knows the targets ['cpu', None]; register a function for more with symlab.tensor.register_transfer(fn)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["register_transfer", "transfer", "unregister_transfer"]

#: ``fn(var, target) -> Variable | None``, asked newest first.
_TRANSFERS: list[Callable[[Any, Any], Any]] = []


def register_transfer(fn: Callable[[Any, Any], Any]) -> None:
    """Let ``transfer`` ask ``fn(var, target)``; ``fn`` returns the transferred variable, or ``None``."""
    if not callable(fn):
        raise TypeError(f"register_transfer: fn must be callable, received {type(fn).__name__}")
    _TRANSFERS.append(fn)


def unregister_transfer(fn: Callable[[Any, Any], Any]) -> None:
    """Forget a function given to :func:`register_transfer`."""
    try:
        _TRANSFERS.remove(fn)
    except ValueError:
        raise ValueError(f"unregister_transfer: {fn!r} was never registered") from None


def transfer(var: Any, target: Any) -> Any:
    """``var`` moved to ``target``: ``var`` itself for ``"cpu"`` or ``None``, else a registered function's answer."""
    for fn in reversed(_TRANSFERS):
        moved = fn(var, target)
        if moved is not None:
            return moved
    if target in ("cpu", None):
        return var
    raise ValueError(f"transfer: cannot move {var} to target {target!r}: symlab knows the targets ['cpu', None]; "
                     "register a function for more with symlab.tensor.register_transfer(fn)")
