"""Graphs for the tests of symlab.formats: a fixed corpus and a hypothesis strategy of random graphs."""

import numpy as np
from hypothesis import strategies as hst

import symlab
import symlab.scalar as ss
import symlab.tensor as T
from symlab.graph import FunctionGraph
from symlab.scalar import Composite
from symlab.tensor.elemwise import Elemwise


def two_output_elemwise():
    """An Elemwise of a Composite with two outputs: ``exp(a)`` and ``a * b``."""
    a, b = ss.float64("a"), ss.float64("b")
    return Elemwise(Composite([a, b], [ss.exp(a), ss.mul(a, b)]))


def corpus():
    """``{name: (inputs, outputs, input values)}``: the graphs every round trip is checked on."""
    graphs = {}
    x, y, z = T.dmatrices("x", "y", "z")
    m = np.arange(6.0).reshape(2, 3)
    graphs["seed000 x + y*z"] = ([x, y, z], [x + y * z], [m, m + 1, m - 1])
    v = T.vector()
    graphs["seed000 (v+1).sum()"] = ([v], [(v + 1).sum()], [np.array([1.0, 2.0])])
    a, b, c = T.dmatrices("a", "b", "c")
    graphs["x + y*z, dot, slice, an input as output"] = (
        [a, b, c],
        [a + b * T.dot(c, c.T)[::-1, :], a],
        [np.arange(4.0).reshape(2, 2), np.ones((2, 2)), np.arange(6.0).reshape(2, 3)],
    )
    s = T.dvector("s")
    first, second = T.split(s, [2, 3])
    graphs["split (multi-output)"] = ([s], [first * 2.0, second, first], [np.arange(5.0)])
    p, q = T.dvectors("p", "q")
    e, pq = two_output_elemwise()(p, q)
    graphs["two-output composite"] = ([p, q], [e + pq, pq], [np.array([0.0, 1.0]), np.array([2.0, 3.0])])
    r, t = T.dvectors("r", "t")
    shared_sub = T.exp(r * t)
    graphs["shared subexpression, constants"] = (
        [r, t],
        [shared_sub + shared_sub * 3.5, shared_sub.sum(), T.constant(np.array([1.0, 2.0]))],
        [np.array([0.5, 1.0]), np.array([2.0, -1.0])],
    )
    u, w = T.dvectors("u", "w")
    graphs["unused input, repeated output"] = ([u, w], [u * u, u * u, u], [np.array([1.0, 3.0]), np.array([0.0])])
    return graphs


def corpus_fgraphs():
    return {name: FunctionGraph(ins, outs) for name, (ins, outs, _) in corpus().items()}


def compiled_corpus(mode="NUMPY"):
    """``{name: (function, input values)}``: the corpus compiled (optimized graphs: fused, inplace)."""
    out = {}
    for name, (ins, outs, values) in corpus().items():
        out[name] = (symlab.function(ins, outs, mode=mode, on_unused_input="ignore"), values)
    return out


# -- random graphs ----------------------------------------------------------------------------------
UNARY = {"exp": T.exp, "neg": lambda a: -a, "sum": lambda a: a.sum(), "slice": lambda a: a[1:] if a.ndim else a}
BINARY = {"add": T.add, "mul": T.mul, "sub": T.sub, "dot": lambda a, b: T.dot(a, b) if a.ndim == b.ndim == 1 else a * b}


@hst.composite
def random_graphs(draw):
    """``(inputs, outputs, values)``: a small random graph over vectors of length 3 (and scalars)."""
    n_inputs = draw(hst.integers(1, 3))
    inputs = [T.dvector(draw(hst.sampled_from(["x", "y", "x"]))) for _ in range(n_inputs)]
    pool = list(inputs)
    for _ in range(draw(hst.integers(1, 6))):
        kind = draw(hst.sampled_from(["unary", "binary", "split", "composite", "constant"]))
        pick = lambda: pool[draw(hst.integers(0, len(pool) - 1))]  # noqa: E731
        if kind == "unary":
            pool.append(UNARY[draw(hst.sampled_from(sorted(UNARY)))](pick()))
        elif kind == "binary":
            op = BINARY[draw(hst.sampled_from(sorted(BINARY)))]
            a, b = pick(), pick()
            try:
                pool.append(op(a, b))
            except ValueError:  # static shapes that cannot combine (a split part with another length)
                pass
        elif kind == "split":
            a = pick()
            if a.ndim == 1 and a.type.shape[0] in (None, 3):
                pool.extend(T.split(a, [1, 2]))
        elif kind == "composite":
            pool.extend(two_output_elemwise()(pick(), pick()))
        else:
            pool.append(pick() + draw(hst.sampled_from([1.0, 2.5])))
    k = draw(hst.integers(1, 3))
    outputs = [pool[draw(hst.integers(0, len(pool) - 1))] for _ in range(k)]
    values = [np.arange(3.0) + i for i in range(n_inputs)]
    return inputs, outputs, values
