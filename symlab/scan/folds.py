"""``map``, ``reduce``, ``foldl``, ``foldr``: the common loops written with ``scan`` (PyTensor's ``scan.views``).

Each is one call of :func:`~symlab.scan.basic.scan` and returns what it returns, ``(outputs, updates)``
(only the outputs with ``return_updates=False``):

- ``map(fn, sequences)``: ``fn`` applied to every entry of the sequences; no state.
- ``reduce(fn, sequences, outputs_info)``: a loop whose states are read back; only their value after the
  last iteration is returned (``foldl`` reads the sequences from the start, ``foldr`` from the end).

>>> import numpy as np
>>> import symlab
>>> import symlab.tensor as st
>>> x = st.dvector("x")
>>> squares, _ = symlab.map(lambda v: v ** 2, sequences=x)
>>> squares.eval({x: np.arange(4.0)}).tolist()
[0.0, 1.0, 4.0, 9.0]
>>> total, _ = symlab.reduce(lambda v, acc: acc + v, sequences=x, outputs_info=st.constant(0.0))
>>> float(total.eval({x: np.arange(4.0)}))
6.0

The order of the iterations shows with a step that is not associative (0, 1, 2, 3 from the left; 3, 2, 1, 0
from the right):

>>> left, _ = symlab.foldl(lambda v, acc: 2 * acc - v, sequences=x, outputs_info=st.constant(0.0))
>>> right, _ = symlab.foldr(lambda v, acc: 2 * acc - v, sequences=x, outputs_info=st.constant(0.0))
>>> float(left.eval({x: np.arange(4.0)})), float(right.eval({x: np.arange(4.0)}))
(-11.0, -34.0)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from symlab.scan.basic import scan
from symlab.tensor.type import TensorType


def map(  # noqa: A001 (PyTensor's name)
    fn: Callable[..., Any],
    sequences: Any,
    non_sequences: Any = None,
    truncate_gradient: int = -1,
    go_backwards: bool = False,
    mode: Any = None,
    name: str | None = None,
    return_updates: bool = True,
) -> Any:
    """``fn`` applied to each entry of ``sequences`` (with ``non_sequences`` passed to every call): one output
    per iteration, stacked; returns ``(outputs, updates)`` as :func:`~symlab.scan.basic.scan` does.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> a, b = st.dvector("a"), st.dvector("b")
    >>> sums, updates = map(lambda u, v, c: u + v * c, sequences=[a, b], non_sequences=st.constant(10.0))
    >>> sums.eval({a: np.array([1.0, 2.0]), b: np.array([3.0, 4.0])}).tolist(), dict(updates)
    ([31.0, 42.0], {})
    """
    return scan(fn, sequences=sequences, outputs_info=[], non_sequences=non_sequences,
                truncate_gradient=truncate_gradient, go_backwards=go_backwards, mode=mode, name=name,
                return_updates=return_updates)


def reduce(  # noqa: A001 (PyTensor's name)
    fn: Callable[..., Any],
    sequences: Any,
    outputs_info: Any,
    non_sequences: Any = None,
    go_backwards: bool = False,
    mode: Any = None,
    name: str | None = None,
    return_updates: bool = True,
) -> Any:
    """A loop over ``sequences`` whose states (``outputs_info``) are read back; returns each state's value after
    the last iteration (not every iteration's, as ``scan`` does), with the updates.

    A state that is carried rather than traced (a random generator) is already its last value, and is
    returned as it is.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> x = st.dvector("x")
    >>> (low, high), _ = reduce(lambda v, lo, hi: (st.minimum(lo, v), st.maximum(hi, v)), sequences=x,
    ...                         outputs_info=[x[0], x[0]])
    >>> [float(r.eval({x: np.array([3.0, -1.0, 5.0, 2.0])})) for r in (low, high)]
    [-1.0, 5.0]
    """
    result = scan(fn, sequences=sequences, outputs_info=outputs_info, non_sequences=non_sequences,
                  go_backwards=go_backwards, truncate_gradient=-1, mode=mode, name=name,
                  return_updates=return_updates)
    outputs, updates = result if return_updates else (result, None)
    if isinstance(outputs, list | tuple):
        last: Any = [_last(o) for o in outputs]
    else:
        last = _last(outputs)
    return (last, updates) if return_updates else last


def foldl(
    fn: Callable[..., Any],
    sequences: Any,
    outputs_info: Any,
    non_sequences: Any = None,
    mode: Any = None,
    name: str | None = None,
    return_updates: bool = True,
) -> Any:
    """Haskell's ``foldl``: :func:`reduce` reading the sequences from their first entry.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> digits = st.dvector("digits")
    >>> number, _ = foldl(lambda d, acc: 10 * acc + d, sequences=digits, outputs_info=st.constant(0.0))
    >>> float(number.eval({digits: np.array([1.0, 2.0, 3.0])}))
    123.0
    """
    return reduce(fn, sequences=sequences, outputs_info=outputs_info, non_sequences=non_sequences,
                  go_backwards=False, mode=mode, name=name, return_updates=return_updates)


def foldr(
    fn: Callable[..., Any],
    sequences: Any,
    outputs_info: Any,
    non_sequences: Any = None,
    mode: Any = None,
    name: str | None = None,
    return_updates: bool = True,
) -> Any:
    """Haskell's ``foldr``: :func:`reduce` reading the sequences from their last entry.

    >>> import numpy as np
    >>> import symlab.tensor as st
    >>> digits = st.dvector("digits")
    >>> number, _ = foldr(lambda d, acc: 10 * acc + d, sequences=digits, outputs_info=st.constant(0.0))
    >>> float(number.eval({digits: np.array([1.0, 2.0, 3.0])}))
    321.0
    """
    return reduce(fn, sequences=sequences, outputs_info=outputs_info, non_sequences=non_sequences,
                  go_backwards=True, mode=mode, name=name, return_updates=return_updates)


def _last(output: Any) -> Any:
    """A traced output's entry of the last iteration; a carried one (a generator) is its last value already."""
    return output[-1] if isinstance(output.type, TensorType) else output
