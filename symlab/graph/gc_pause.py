"""Pause Python's cyclic garbage collector while a large graph is built or rewritten.

Rewriting a graph of many thousand nodes allocates many more long-lived objects than the collector's
thresholds expect, so it runs full collections over the whole heap again and again: on a 10,000-node
chain that was 40% of the rewriting time. Graph objects hold no reference cycles that need collecting
while a rewrite runs; the collector is switched back on (if it was on) when the block ends, and then
finds whatever became garbage.

>>> import gc
>>> with gc_paused():
...     gc.isenabled()
False
>>> gc.isenabled()
True
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic garbage collector inside the block; restore its previous state after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


__all__ = ["gc_paused"]
