"""Graphs at real size for the views' tests and benchmarks: what a learner builds first, and a large model.

``mlp_gradient()`` is the two-layer tanh MLP with a softmax cross-entropy loss (with an L2 term, as the classic
``mlp.py`` has) and its gradient in both
weight matrices (93 nodes unoptimized, 44 compiled, 83 rewrite steps); ``layered_graph(n)`` is a
graph of about ``n`` Apply nodes with names, several outputs and shared sub-expressions (not a bare
chain), standing for a 1,000-node model. Both are plain symlab code, importable from a notebook kernel
(``sys.path.insert(0, "<repo>/tests")``) as from pytest.
"""

from __future__ import annotations

from typing import Any

import symlab
import symlab.tensor as st


def mlp_gradient() -> tuple[list[Any], list[Any]]:
    """``([X, Y, W1, b1, W2, b2], [loss, gW1, gW2])``: the MLP's loss and its gradient in W1 and W2."""
    X, Y = st.dmatrix("X"), st.dmatrix("Y")
    W1, b1 = st.dmatrix("W1"), st.dvector("b1")
    W2, b2 = st.dmatrix("W2"), st.dvector("b2")
    hidden = st.tanh(st.dot(X, W1) + b1)
    hidden.name = "hidden"
    logits = st.dot(hidden, W2) + b2
    logits.name = "logits"
    shifted = logits - logits.max(axis=1, keepdims=True)
    probs = st.exp(shifted) / st.exp(shifted).sum(axis=1, keepdims=True)
    probs.name = "probs"
    l2 = (W1**2).sum() + (W2**2).sum()
    l2.name = "l2"
    loss = -(Y * st.log(probs)).sum(axis=1).mean() + 1e-4 * l2
    loss.name = "loss"
    gW1, gW2 = symlab.grad(loss, [W1, W2])
    return [X, Y, W1, b1, W2, b2], [loss, gW1, gW2]


def mlp_function(**kwargs: Any) -> Any:
    """The compiled MLP gradient (``symlab.function(inputs, [loss, gW1, gW2])``)."""
    inputs, outputs = mlp_gradient()
    return symlab.function(inputs, outputs, **kwargs)


def layered_graph(nodes: int = 1000) -> tuple[list[Any], list[Any]]:
    """About ``nodes`` Apply nodes: blocks of named layers over three inputs, each block reusing the last."""
    a, b, x = st.dvector("a"), st.dvector("b"), st.dvector("x")
    inputs: list[Any] = [a, b, x]
    outputs = []
    count, block = 0, 0
    while count < nodes:
        s = st.sin(a) * 0.5 + st.cos(b) * 0.25
        s.name = f"mix{block}"
        a, b = st.tanh(s + x) * 0.9, (s - st.exp(-b * b)) * 0.9
        a.name, b.name = f"a{block + 1}", f"b{block + 1}"
        count += 17
        block += 1
        if block % 10 == 0:
            outputs.append(a + b)
    outputs.append(a * b)
    return inputs, outputs
