"""symlab's version string, in a module of its own at the bottom of the layers.

The disk cache keys compiled code by it (:mod:`symlab.compile.numba.environment`), so it must be
readable without importing the package's root (which loads the notebook layer).

>>> from symlab.version import __version__
>>> import symlab
>>> __version__ == symlab.__version__
True
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
