"""The view layer: rich displays of graph objects in notebooks.

Importing this package installs :func:`symlab.notebook.reprs.mimebundle` as
the core's display hook (:mod:`symlab.graph.display`); ``import symlab``
does so. The package imports neither IPython nor graphviz: they are loaded
when something is drawn.
"""

from symlab.graph.display import set_display_hook
from symlab.notebook.reprs import mimebundle, plain_text

set_display_hook(mimebundle)

__all__ = ["mimebundle", "plain_text"]
