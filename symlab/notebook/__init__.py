"""Notebook support: rich displays (``_repr_mimebundle_``) of graph objects.

The core classes reach :func:`symlab.notebook.reprs.mimebundle` through a
lazy import inside their ``_repr_mimebundle_`` methods, so ``import symlab``
loads neither this package nor graphviz nor IPython.
"""

from symlab.notebook.reprs import mimebundle, plain_text

__all__ = ["mimebundle", "plain_text"]
