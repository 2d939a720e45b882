"""The structure of an index: ``x[i, 1:, mask]`` read into the op's static ``idx_list`` and its symbolic inputs.

The indexing ops (:mod:`symlab.tensor.subtensor`) keep the structure of the index as a property,
``idx_list``: ints, slices as ``(start, stop, step)`` and an :class:`IndexVar` placeholder for each
index given as a variable, which becomes an input of the node. What a user wrote between the
brackets is classified entry by entry (:func:`index_entry`), ``...`` is expanded
(:func:`expand_ellipsis`), and the variables are taken out (:func:`split_index`):

>>> import symlab.tensor as st
>>> x, i = st.dmatrix("x"), st.lscalar("i")
>>> split_index(expand_ellipsis(x, [index_entry(x, e) for e in (i, slice(1, None))]))
([IndexVar(dtype='int64', ndim=0), (1, None, None)], [i])
>>> split_index(expand_ellipsis(x, [index_entry(x, e) for e in ([0, 2], Ellipsis)]))
([IndexVar(dtype='int64', ndim=1)], [TensorConstant{[0 2]}])
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from symlab.graph.basic import Constant, Variable
from symlab.tensor.conversion import as_tensor_variable, constant
from symlab.tensor.type import TensorType


# =========================================================================================
# The static structure of an index
# =========================================================================================
@dataclass(frozen=True)
class IndexVar:
    """Placeholder in an ``idx_list`` for an index given as a symbolic input.

    ``dtype`` and ``ndim`` describe that input: ``IndexVar("int64")`` is a
    scalar, ``IndexVar("bool", 2)`` a boolean mask of a matrix.
    """

    dtype: str
    ndim: int = 0

    @property
    def is_mask(self) -> bool:
        return self.dtype == "bool"

    def __str__(self) -> str:
        return self.dtype if self.ndim == 0 else f"{self.dtype}[{', '.join(':' * self.ndim)}]"

    def describe(self) -> str:
        return f"a {self.dtype} scalar" if self.ndim == 0 else f"a {self.ndim}-d {self.dtype} tensor"


#: An entry of ``idx_list``: an int, a slice as ``(start, stop, step)``, an
#: ``IndexVar``, or ``None`` (a new axis; in advanced indexing only).
IndexEntry = Any


def normalize_idx_list(op: str, idx_list: Sequence[Any], advanced: bool) -> tuple[IndexEntry, ...]:
    """Check ``idx_list`` and make it hashable (slices become tuples)."""

    def scalar(v: Any, where: str) -> int | IndexVar:
        if isinstance(v, IndexVar) and v.ndim == 0 and v.dtype.startswith(("int", "uint")):
            return v
        if isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_):
            return int(v)
        raise TypeError(f"{op}: {where} must be an int or an integer IndexVar, received {v!r}")

    out: list[IndexEntry] = []
    for e in idx_list:
        if isinstance(e, slice):
            e = (e.start, e.stop, e.step)
        if isinstance(e, tuple):
            if len(e) != 3:
                raise TypeError(f"{op}: a slice entry is (start, stop, step), received {e!r}")
            e = tuple(None if f is None else scalar(f, "a slice field") for f in e)
            if e[2] == 0:
                raise ValueError(f"{op}: slice step cannot be zero")
        elif e is None or e is Ellipsis:
            if not advanced:
                raise TypeError(f"{op}: idx_list holds no {e}: getitem expands ... and adds new axes with a DimShuffle")
        elif isinstance(e, IndexVar) and e.ndim > 0:
            if not advanced:
                raise TypeError(f"{op}: array index {e} needs AdvancedSubtensor")
            if not (e.is_mask or e.dtype.startswith(("int", "uint"))):
                raise TypeError(f"{op}: array indices must be integer or boolean, received {e}")
        else:
            e = scalar(e, "an index")
        out.append(e)
    return tuple(out)


def entry_str(e: IndexEntry) -> str:
    if isinstance(e, tuple):
        start, stop, step = ("" if f is None else str(f) for f in e)
        return f"{start}:{stop}" + (f":{step}" if step else "")
    return "None" if e is None else "..." if e is Ellipsis else str(e)


def consumed_dims(e: IndexEntry) -> int:
    """How many dimensions of the indexed tensor an entry uses up."""
    if e is None or e is Ellipsis:
        return 0
    return e.ndim if isinstance(e, IndexVar) and e.is_mask else 1


def placeholders(idx_list: Sequence[IndexEntry]) -> list[IndexVar]:
    flat = [f for e in idx_list for f in (e if isinstance(e, tuple) else (e,))]
    return [f for f in flat if isinstance(f, IndexVar)]


def substitute(idx_list: Sequence[IndexEntry], values: Sequence[Any]) -> list[Any]:
    """``idx_list`` with its placeholders replaced, in order, by ``values``."""
    it = iter(values)

    def sub(f: Any) -> Any:
        return next(it) if isinstance(f, IndexVar) else f

    return [tuple(sub(f) for f in e) if isinstance(e, tuple) else sub(e) for e in idx_list]



# =========================================================================================
# What a user writes between the brackets
# =========================================================================================
def _index_error(x: Variable, entry: Any, why: str) -> TypeError:
    shown = f"{entry} ({entry.type})" if isinstance(entry, Variable) else f"{type(entry).__name__} {entry!r:.40}"
    return TypeError(
        f"getitem: cannot index {x} ({x.type}) with {shown}: {why}; indices must be integers, slices, "
        "..., None, integer arrays or boolean masks"
    )


def _scalar_field(x: Variable, value: Any) -> Any:
    """A slice field: None, an int or a symbolic integer scalar."""
    if value is None:
        return None
    entry = index_entry(x, value)
    if isinstance(entry, Variable) and entry.ndim > 0:
        raise _index_error(x, value, "a slice bound must be a scalar")
    return entry


def index_entry(x: Variable, e: Any) -> Any:
    """One element of an index, classified: Ellipsis, None, int, slice tuple or tensor."""
    if e is Ellipsis or e is None:
        return e
    if isinstance(e, slice):
        return tuple(_scalar_field(x, f) for f in (e.start, e.stop, e.step))
    if isinstance(e, bool | np.bool_):
        raise _index_error(x, e, "a boolean scalar is not supported as an index")
    if isinstance(e, int | np.integer):
        return int(e)
    if isinstance(e, Variable):
        if not isinstance(e.type, TensorType):
            raise _index_error(x, e, "it is not a tensor")
        v = e
    elif isinstance(e, list | tuple) and holds_variables(e):
        v = as_tensor_variable(e)
    else:
        try:
            array = np.asarray(e)
        except (TypeError, ValueError):
            raise _index_error(x, e, "it is not an array of numbers") from None
        if array.size == 0 and array.dtype.kind == "f":
            array = array.astype("int64")  # x[[]]: an empty list is an empty integer index
        if array.dtype.kind not in "biu":
            raise _index_error(x, e, f"a {array.dtype} index is not an integer")
        v = constant(array)
    if v.dtype == "bool":
        if v.ndim == 0:
            raise _index_error(x, e, "a boolean scalar is not supported as an index")
        return v
    if not v.dtype.startswith(("int", "uint")):
        raise _index_error(x, e, f"a {v.dtype} index is not an integer")
    if v.ndim == 0 and isinstance(v, Constant):
        return int(v.data)
    return v


def holds_variables(seq: list | tuple) -> bool:
    return builtins.any(isinstance(f, Variable) or (isinstance(f, list | tuple) and holds_variables(f)) for f in seq)


def _separates_arrays(before: list[Any], after: list[Any]) -> bool:
    """Whether an empty ``...`` stands between advanced indices (NumPy then puts their dims first)."""
    if not builtins.any(is_array_index(e) for e in before + after):
        return False

    def advanced(e: Any) -> bool:
        return e is not None and not isinstance(e, tuple)

    return builtins.any(advanced(e) for e in before) and builtins.any(advanced(e) for e in after)


def is_array_index(e: Any) -> bool:
    return isinstance(e, Variable) and e.ndim > 0


def expand_ellipsis(x: Variable, entries: list[Any]) -> list[Any]:
    def consumed(e: Any) -> int:
        if e is None or e is Ellipsis:
            return 0
        return e.ndim if isinstance(e, Variable) and e.dtype == "bool" else 1

    used = builtins.sum(consumed(e) for e in entries)
    if used > x.ndim:
        raise IndexError(
            f"getitem: too many indices for {x} ({x.type}): {used} dimensions are indexed, but it has {x.ndim}"
        )
    n_ellipsis = builtins.sum(1 for e in entries if e is Ellipsis)
    if n_ellipsis > 1:
        raise IndexError(f"getitem: an index of {x} can have only one ellipsis (...)")
    if n_ellipsis:
        k = next(k for k, e in enumerate(entries) if e is Ellipsis)
        if x.ndim > used or not (_separates_arrays(entries[:k], entries[k + 1 :])):
            entries = entries[:k] + [(None, None, None)] * (x.ndim - used) + entries[k + 1 :]
    while entries and entries[-1] == (None, None, None) and Ellipsis not in entries:
        entries.pop()  # x[1, :] is x[1]
    return entries


def split_index(entries: list[Any]) -> tuple[list[IndexEntry], list[Variable]]:
    """``idx_list`` with placeholders for the symbolic entries, and those entries."""
    inputs: list[Variable] = []

    def place(f: Any) -> Any:
        if isinstance(f, Variable):
            inputs.append(f)
            return IndexVar(f.dtype, f.ndim)
        return f

    idx_list = [tuple(place(f) for f in e) if isinstance(e, tuple) else place(e) for e in entries]
    return idx_list, inputs


