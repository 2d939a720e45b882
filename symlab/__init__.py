"""symlab: build, rewrite, differentiate, compile and *see* symbolic tensor graphs.

>>> import symlab
>>> import symlab.tensor as st
>>> x = st.dvector("x")
>>> y = (x ** 2).sum()
>>> float(y.eval({x: [1.0, 2.0]}))
5.0
>>> _ = symlab.dprint(y)
Sum{acc_dtype=float64} [id A] ''
 |Elemwise{pow,no_inplace} [id B] ''
   |x [id C]
   |DimShuffle{x} [id D] ''
     |TensorConstant{2} [id E]
"""

from symlab import gof, graph, printing, scalar, tensor
from symlab import notebook  # installs the display hook of graph objects
from symlab.notebook import view
from symlab.config import config
from symlab.gradient import grad
from symlab.gradient.reverse_mode import register_loop_loader
from symlab.version import __version__


def _load_scan() -> None:
    """Load ``symlab.scan``, which registers its ``scan`` as the gradient layer's loop builder (jacobian)."""
    import symlab.scan  # noqa: F401


register_loop_loader(_load_scan)

dprint = printing.debugprint
pprint = printing.pprint
pp = printing.pp

#: Names loaded on first use, so that ``import symlab`` stays fast: compiling
#: (and the debug and profiling machinery behind it) and the DAG formats.
_LAZY = {
    "compile": ("symlab.compile", None),
    "formats": ("symlab.formats", None),
    "function": ("symlab.compile", "function"),
    "shared": ("symlab.compile", "shared"),
    "In": ("symlab.compile", "In"),
    "Out": ("symlab.compile", "Out"),
    "get_mode": ("symlab.compile", "get_mode"),
    "sparse": ("symlab.sparse", None),
    "OpFromGraph": ("symlab.compile.builders", "OpFromGraph"),
    "scan": ("symlab.scan", None),
    "map": ("symlab.scan.folds", "map"),
    "reduce": ("symlab.scan.folds", "reduce"),
    "foldl": ("symlab.scan.folds", "foldl"),
    "foldr": ("symlab.scan.folds", "foldr"),
}


def __getattr__(name: str):
    try:
        module_name, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'symlab' has no attribute {name!r}") from None
    import importlib

    module = importlib.import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = ["config", "dprint", "pp", "pprint", "gof", "grad", "graph", "notebook", "printing", "scalar", "tensor", "view",
           "__version__"]
__all__ += ["In", "OpFromGraph", "Out", "compile", "formats", "function", "get_mode", "shared", "sparse"]
