"""Ready-made tensor types and the functions that make variables of them.

Prefixed names are ``TensorType`` instances, called to make a variable; the
prefix is the dtype: ``b`` int8, ``w`` int16, ``i`` int32, ``l`` int64,
``f`` float32, ``d`` float64, ``c`` complex64, ``z`` complex128.
Unprefixed names are functions that use ``symlab.config.floatX``.

>>> import symlab.tensor as st
>>> st.dmatrix
TensorType(float64, (?, ?))
>>> st.irow("r").type
TensorType(int32, (1, ?))
>>> [v.name for v in st.dvectors("x", "y")]
['x', 'y']

The plural functions split a single string into one variable per letter, as
Theano's and PyTensor's do (a single letter gives a single variable):

>>> x, y, z = st.vectors("xyz")
>>> z.name, z.type
('z', TensorType(float64, (?,)))
>>> st.dscalars("a")
a
>>> st.tensor("float32", shape=(2, None), name="t").type
TensorType(float32, (2, ?))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from symlab.config import config
from symlab.graph.basic import Variable
from symlab.tensor.type import TensorType

PREFIXES = {
    "b": "int8",
    "w": "int16",
    "i": "int32",
    "l": "int64",
    "f": "float32",
    "d": "float64",
    "c": "complex64",
    "z": "complex128",
}

#: Static shapes of the named ranks.
KINDS: dict[str, tuple[int | None, ...]] = {
    "scalar": (),
    "vector": (None,),
    "row": (1, None),
    "col": (None, 1),
    "matrix": (None, None),
    "tensor3": (None, None, None),
    "tensor4": (None, None, None, None),
}
PLURALS = {
    "scalar": "scalars",
    "vector": "vectors",
    "row": "rows",
    "col": "cols",
    "matrix": "matrices",
    "tensor3": "tensor3s",
    "tensor4": "tensor4s",
}


def tensor(
    dtype: Any = None,
    shape: Sequence[int | None] | None = None,
    name: str | None = None,
    broadcastable: Sequence[bool] | None = None,
) -> Variable:
    """A new tensor variable: ``tensor("float32", shape=(2, None), name="x")``."""
    if shape is None and broadcastable is None:
        raise TypeError("tensor: give the static shape, e.g. shape=(None, 3) (None is an unknown size)")
    return TensorType(config.floatX if dtype is None else dtype, shape, broadcastable)(name)


def _make_kind(kind: str, static: tuple[int | None, ...]):
    def constructor(name: str | None = None, dtype: Any = None, shape: Sequence[int | None] | None = None):
        if shape is not None and len(tuple(shape)) != len(static):
            raise ValueError(f"{kind}: shape must have {len(static)} entries, received {shape!r}")
        return TensorType(config.floatX if dtype is None else dtype, static if shape is None else shape)(name)

    constructor.__name__ = kind
    constructor.__doc__ = f"A {kind} variable of ``dtype`` (default ``config.floatX``)."
    return constructor


def split_names(plural: str, names: tuple[Any, ...]) -> int | str | list[str]:
    """What the arguments of a plural constructor ask for, with Theano's and PyTensor's meaning.

    ``(3,)``: three unnamed variables (the count); ``("xyz",)``: one variable per letter (a list of
    names); ``("x",)``: one variable, not a list (the name); ``("w", "b")``: one per name.

    >>> split_names("vectors", ("xyz",)), split_names("vectors", ("x",)), split_names("vectors", (2,))
    (['x', 'y', 'z'], 'x', 2)
    >>> split_names("vectors", ("W", 3))
    Traceback (most recent call last):
    ...
    TypeError: vectors: names must be strings (or one int, a count), received 3 (int) at position 1
    """
    if len(names) == 1 and isinstance(names[0], int) and not isinstance(names[0], bool):
        if names[0] < 0:
            raise ValueError(f"{plural}: the count must be >= 0, received {names[0]}")
        return names[0]
    if len(names) == 1 and isinstance(names[0], list | tuple):
        names = tuple(names[0])
    for k, name in enumerate(names):
        if not isinstance(name, str):
            raise TypeError(
                f"{plural}: names must be strings (or one int, a count), received {name!r} "
                f"({type(name).__name__}) at position {k}"
            )
    if len(names) == 1:
        letters = list(names[0])
        if not letters:
            raise ValueError(f"{plural}: received an empty name")
        return letters if len(letters) > 1 else names[0]
    return list(names)


def _make_plural(plural: str, make: Any):
    def constructor(*names: str, dtype: Any = None):
        wanted = split_names(plural, names)
        if isinstance(wanted, int):
            return [make(None, dtype) for _ in range(wanted)]
        if isinstance(wanted, str):
            return make(wanted, dtype)
        return [make(n, dtype) for n in wanted]

    constructor.__name__ = plural
    constructor.__doc__ = (
        f"Several {plural}: ``{plural}('a', 'b')``, ``{plural}('ab')`` (one per letter) or ``{plural}(3)``."
    )
    return constructor


def _make_prefixed_plural(plural: str, type_: TensorType):
    def constructor(*names: str):
        wanted = split_names(plural, names)
        if isinstance(wanted, int):
            return [type_() for _ in range(wanted)]
        if isinstance(wanted, str):
            return type_(wanted)
        return [type_(n) for n in wanted]

    constructor.__name__ = plural
    constructor.__doc__ = f"Several variables of type {type_!r}: one per name, or per letter of a single string."
    return constructor


# -- the constructors, one line each (prefix: the dtype, see PREFIXES) --------------------------------------
# scalar: shape ()
scalar = _make_kind("scalar", KINDS["scalar"])
scalars = _make_plural("scalars", scalar)
bscalar = TensorType("int8", KINDS["scalar"])
wscalar = TensorType("int16", KINDS["scalar"])
iscalar = TensorType("int32", KINDS["scalar"])
lscalar = TensorType("int64", KINDS["scalar"])
fscalar = TensorType("float32", KINDS["scalar"])
dscalar = TensorType("float64", KINDS["scalar"])
cscalar = TensorType("complex64", KINDS["scalar"])
zscalar = TensorType("complex128", KINDS["scalar"])
bscalars = _make_prefixed_plural("bscalars", bscalar)
wscalars = _make_prefixed_plural("wscalars", wscalar)
iscalars = _make_prefixed_plural("iscalars", iscalar)
lscalars = _make_prefixed_plural("lscalars", lscalar)
fscalars = _make_prefixed_plural("fscalars", fscalar)
dscalars = _make_prefixed_plural("dscalars", dscalar)
cscalars = _make_prefixed_plural("cscalars", cscalar)
zscalars = _make_prefixed_plural("zscalars", zscalar)

# vector: shape (None,)
vector = _make_kind("vector", KINDS["vector"])
vectors = _make_plural("vectors", vector)
bvector = TensorType("int8", KINDS["vector"])
wvector = TensorType("int16", KINDS["vector"])
ivector = TensorType("int32", KINDS["vector"])
lvector = TensorType("int64", KINDS["vector"])
fvector = TensorType("float32", KINDS["vector"])
dvector = TensorType("float64", KINDS["vector"])
cvector = TensorType("complex64", KINDS["vector"])
zvector = TensorType("complex128", KINDS["vector"])
bvectors = _make_prefixed_plural("bvectors", bvector)
wvectors = _make_prefixed_plural("wvectors", wvector)
ivectors = _make_prefixed_plural("ivectors", ivector)
lvectors = _make_prefixed_plural("lvectors", lvector)
fvectors = _make_prefixed_plural("fvectors", fvector)
dvectors = _make_prefixed_plural("dvectors", dvector)
cvectors = _make_prefixed_plural("cvectors", cvector)
zvectors = _make_prefixed_plural("zvectors", zvector)

# row: shape (1, None)
row = _make_kind("row", KINDS["row"])
rows = _make_plural("rows", row)
brow = TensorType("int8", KINDS["row"])
wrow = TensorType("int16", KINDS["row"])
irow = TensorType("int32", KINDS["row"])
lrow = TensorType("int64", KINDS["row"])
frow = TensorType("float32", KINDS["row"])
drow = TensorType("float64", KINDS["row"])
crow = TensorType("complex64", KINDS["row"])
zrow = TensorType("complex128", KINDS["row"])
brows = _make_prefixed_plural("brows", brow)
wrows = _make_prefixed_plural("wrows", wrow)
irows = _make_prefixed_plural("irows", irow)
lrows = _make_prefixed_plural("lrows", lrow)
frows = _make_prefixed_plural("frows", frow)
drows = _make_prefixed_plural("drows", drow)
crows = _make_prefixed_plural("crows", crow)
zrows = _make_prefixed_plural("zrows", zrow)

# col: shape (None, 1)
col = _make_kind("col", KINDS["col"])
cols = _make_plural("cols", col)
bcol = TensorType("int8", KINDS["col"])
wcol = TensorType("int16", KINDS["col"])
icol = TensorType("int32", KINDS["col"])
lcol = TensorType("int64", KINDS["col"])
fcol = TensorType("float32", KINDS["col"])
dcol = TensorType("float64", KINDS["col"])
ccol = TensorType("complex64", KINDS["col"])
zcol = TensorType("complex128", KINDS["col"])
bcols = _make_prefixed_plural("bcols", bcol)
wcols = _make_prefixed_plural("wcols", wcol)
icols = _make_prefixed_plural("icols", icol)
lcols = _make_prefixed_plural("lcols", lcol)
fcols = _make_prefixed_plural("fcols", fcol)
dcols = _make_prefixed_plural("dcols", dcol)
ccols = _make_prefixed_plural("ccols", ccol)
zcols = _make_prefixed_plural("zcols", zcol)

# matrix: shape (None, None)
matrix = _make_kind("matrix", KINDS["matrix"])
matrices = _make_plural("matrices", matrix)
bmatrix = TensorType("int8", KINDS["matrix"])
wmatrix = TensorType("int16", KINDS["matrix"])
imatrix = TensorType("int32", KINDS["matrix"])
lmatrix = TensorType("int64", KINDS["matrix"])
fmatrix = TensorType("float32", KINDS["matrix"])
dmatrix = TensorType("float64", KINDS["matrix"])
cmatrix = TensorType("complex64", KINDS["matrix"])
zmatrix = TensorType("complex128", KINDS["matrix"])
bmatrices = _make_prefixed_plural("bmatrices", bmatrix)
wmatrices = _make_prefixed_plural("wmatrices", wmatrix)
imatrices = _make_prefixed_plural("imatrices", imatrix)
lmatrices = _make_prefixed_plural("lmatrices", lmatrix)
fmatrices = _make_prefixed_plural("fmatrices", fmatrix)
dmatrices = _make_prefixed_plural("dmatrices", dmatrix)
cmatrices = _make_prefixed_plural("cmatrices", cmatrix)
zmatrices = _make_prefixed_plural("zmatrices", zmatrix)

# tensor3: shape (None, None, None)
tensor3 = _make_kind("tensor3", KINDS["tensor3"])
tensor3s = _make_plural("tensor3s", tensor3)
btensor3 = TensorType("int8", KINDS["tensor3"])
wtensor3 = TensorType("int16", KINDS["tensor3"])
itensor3 = TensorType("int32", KINDS["tensor3"])
ltensor3 = TensorType("int64", KINDS["tensor3"])
ftensor3 = TensorType("float32", KINDS["tensor3"])
dtensor3 = TensorType("float64", KINDS["tensor3"])
ctensor3 = TensorType("complex64", KINDS["tensor3"])
ztensor3 = TensorType("complex128", KINDS["tensor3"])
btensor3s = _make_prefixed_plural("btensor3s", btensor3)
wtensor3s = _make_prefixed_plural("wtensor3s", wtensor3)
itensor3s = _make_prefixed_plural("itensor3s", itensor3)
ltensor3s = _make_prefixed_plural("ltensor3s", ltensor3)
ftensor3s = _make_prefixed_plural("ftensor3s", ftensor3)
dtensor3s = _make_prefixed_plural("dtensor3s", dtensor3)
ctensor3s = _make_prefixed_plural("ctensor3s", ctensor3)
ztensor3s = _make_prefixed_plural("ztensor3s", ztensor3)

# tensor4: shape (None, None, None, None)
tensor4 = _make_kind("tensor4", KINDS["tensor4"])
tensor4s = _make_plural("tensor4s", tensor4)
btensor4 = TensorType("int8", KINDS["tensor4"])
wtensor4 = TensorType("int16", KINDS["tensor4"])
itensor4 = TensorType("int32", KINDS["tensor4"])
ltensor4 = TensorType("int64", KINDS["tensor4"])
ftensor4 = TensorType("float32", KINDS["tensor4"])
dtensor4 = TensorType("float64", KINDS["tensor4"])
ctensor4 = TensorType("complex64", KINDS["tensor4"])
ztensor4 = TensorType("complex128", KINDS["tensor4"])
btensor4s = _make_prefixed_plural("btensor4s", btensor4)
wtensor4s = _make_prefixed_plural("wtensor4s", wtensor4)
itensor4s = _make_prefixed_plural("itensor4s", itensor4)
ltensor4s = _make_prefixed_plural("ltensor4s", ltensor4)
ftensor4s = _make_prefixed_plural("ftensor4s", ftensor4)
dtensor4s = _make_prefixed_plural("dtensor4s", dtensor4)
ctensor4s = _make_prefixed_plural("ctensor4s", ctensor4)
ztensor4s = _make_prefixed_plural("ztensor4s", ztensor4)

__all__ = [
    "PREFIXES",
    "tensor",
    "scalar",
    "scalars",
    "bscalar",
    "wscalar",
    "iscalar",
    "lscalar",
    "fscalar",
    "dscalar",
    "cscalar",
    "zscalar",
    "bscalars",
    "wscalars",
    "iscalars",
    "lscalars",
    "fscalars",
    "dscalars",
    "cscalars",
    "zscalars",
    "vector",
    "vectors",
    "bvector",
    "wvector",
    "ivector",
    "lvector",
    "fvector",
    "dvector",
    "cvector",
    "zvector",
    "bvectors",
    "wvectors",
    "ivectors",
    "lvectors",
    "fvectors",
    "dvectors",
    "cvectors",
    "zvectors",
    "row",
    "rows",
    "brow",
    "wrow",
    "irow",
    "lrow",
    "frow",
    "drow",
    "crow",
    "zrow",
    "brows",
    "wrows",
    "irows",
    "lrows",
    "frows",
    "drows",
    "crows",
    "zrows",
    "col",
    "cols",
    "bcol",
    "wcol",
    "icol",
    "lcol",
    "fcol",
    "dcol",
    "ccol",
    "zcol",
    "bcols",
    "wcols",
    "icols",
    "lcols",
    "fcols",
    "dcols",
    "ccols",
    "zcols",
    "matrix",
    "matrices",
    "bmatrix",
    "wmatrix",
    "imatrix",
    "lmatrix",
    "fmatrix",
    "dmatrix",
    "cmatrix",
    "zmatrix",
    "bmatrices",
    "wmatrices",
    "imatrices",
    "lmatrices",
    "fmatrices",
    "dmatrices",
    "cmatrices",
    "zmatrices",
    "tensor3",
    "tensor3s",
    "btensor3",
    "wtensor3",
    "itensor3",
    "ltensor3",
    "ftensor3",
    "dtensor3",
    "ctensor3",
    "ztensor3",
    "btensor3s",
    "wtensor3s",
    "itensor3s",
    "ltensor3s",
    "ftensor3s",
    "dtensor3s",
    "ctensor3s",
    "ztensor3s",
    "tensor4",
    "tensor4s",
    "btensor4",
    "wtensor4",
    "itensor4",
    "ltensor4",
    "ftensor4",
    "dtensor4",
    "ctensor4",
    "ztensor4",
    "btensor4s",
    "wtensor4s",
    "itensor4s",
    "ltensor4s",
    "ftensor4s",
    "dtensor4s",
    "ctensor4s",
    "ztensor4s",
]
