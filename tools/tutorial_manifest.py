"""Which of PyTensor's tutorial examples symlab runs, and how each is adapted (our data, no page text).

Examples are named ``"<page>:<number>"``, numbered in page order by ``tutorial_rst.parse_rst`` over
``doc/tutorial/*.rst`` of pymc-devs/pytensor at commit ``f857e6961``.

- :data:`EXCLUDED`: examples that cannot run yet, with the reason;
- :data:`SYMLAB_OUTPUT`: the output symlab prints where the page shows PyTensor's graph or message
  (symlab's own text), or a function of the page's output;
- :data:`SOURCE_CHANGES`: the only changes to an example's code besides the renaming, as small
  transformations of ours (each must change the code it is given, or the manifest is stale).
"""

from __future__ import annotations

import re
from collections.abc import Callable

JAX = "needs the JAX backend (and its random generators)"
FRAGMENT = "not code: a fragment with placeholders (Sphinx does not run code-blocks)"
PAGE_ERROR = "fails in PyTensor too: "

EXCLUDED: dict[str, str] = {
    "adding:1": PAGE_ERROR + "uses pt before the page imports it",
    "adding:4": PAGE_ERROR + "uses the name pytensor, which the page never imports",
    "debug_faq:4": PAGE_ERROR + "detect_nan only looks at outputs that are not ndarrays, so it "
    "never prints the NaN the page shows",
    "debug_faq:8": FRAGMENT,
    **{f"faq_tutorial:{k}": FRAGMENT for k in range(1, 7)},
    "loading_and_saving:9": FRAGMENT + " (loads a file 'model.zip' that does not exist)",
    "prng:35": PAGE_ERROR + "calls pytensor.get_default_mode, which the package does not export, and asserts "
    "f() == h() of a function of two outputs and one of one (lists of different lengths are never equal)",
    **{f"prng:{k}": JAX for k in range(54, 59)},
}

#: symlab's dprint of a compiled uniform draw (prng.rst), with or without the destroy map of the inplace draw.
RNG_UNIFORM = (
    "uniform_rv{{\"(),()->()\"}}.1 [id A] ''{destroy}   0\n |rng [id B]\n |NoneConst [id C]\n"
    " |TensorConstant{{0.0}} [id D]\n |TensorConstant{{1.0}} [id E]\n"
)

#: The output symlab prints, by example and page line, where the page shows PyTensor's graph or message.
SYMLAB_OUTPUT: dict[str, dict[int, str | Callable[[str], str]]] = {
    # pp of the gradient before rewriting: symlab's grad builds no fill(), and pp prints constants plainly.
    "gradients:1": {30: "'((1.0 * 2) * (x ** (2 - 1)))'\n"},
    # the runtime-broadcasting error, in symlab's words.
    "broadcasting:3": {89: "Elemwise{add,no_inplace}: input shapes (3, 3), (3, 1) do not match in dimension 1 ...\n"},
    # (x ** 2).shape after rewriting: symlab joins the Shape_i (PyTensor: a MakeVector of them).
    "shape_info:1": {
        21: "Join{axis=0} [id A] ''   4\n |InplaceDimShuffle{x} [id B] ''   1\n | |Shape_i{0} [id C] ''   0\n"
        " |   |x [id D]\n |InplaceDimShuffle{x} [id E] ''   3\n   |Shape_i{1} [id F] ''   2\n     |x [id D]\n"
    },
    # a constant output: symlab returns it without PyTensor's DeepCopyOp node.
    "shape_info:4": {63: "TensorConstant{(2,) of 2} [id A]\n"},
    "shape_info:6": {
        81: "Join{axis=0} [id A] ''   6\n |InplaceDimShuffle{x} [id B] ''   3\n | |Elemwise{add,inplace} [id C] ''   2\n"
        " |   |Shape_i{0} [id D] ''   0\n |   | |x [id E]\n |   |Shape_i{0} [id F] ''   1\n |     |y [id G]\n"
        " |InplaceDimShuffle{x} [id H] ''   5\n   |Shape_i{1} [id I] ''   4\n     |x [id E]\n"
    },
    # symlab's Join keeps its axis as a property (PyTensor: a first input).
    "shape_info:8": {95: "Join{axis=0} [id A] ''   0\n |x [id B]\n |y [id C]\n"},
    "printing_drawing:2": {56: "'((1 / (1 + exp(((-dot(x, w)) - DimShuffle{x}(b))))) > 0.5)'\n"},
    "printing_drawing:3": {
        66: "Elemwise{gt,no_inplace} [id A] ''\n |Elemwise{true_div,no_inplace} [id B] ''\n | |DimShuffle{x} [id C] ''\n"
        " | | |TensorConstant{1} [id D]\n | |Elemwise{add,no_inplace} [id E] ''\n |   |DimShuffle{x} [id F] ''\n"
        " |   | |TensorConstant{1} [id G]\n |   |Elemwise{exp,no_inplace} [id H] ''\n"
        " |     |Elemwise{sub,no_inplace} [id I] ''\n |       |Elemwise{neg,no_inplace} [id J] ''\n"
        " |       | |dot [id K] ''\n |       |   |x [id L]\n |       |   |w [id M]\n"
        " |       |DimShuffle{x} [id N] ''\n |         |b [id O]\n |DimShuffle{x} [id P] ''\n"
        "   |TensorConstant{0.5} [id Q]\n"
    },
    # the compiled prediction: the logistic became a sigmoid (PyTensor: scalar_sigmoid), dot stays a dot.
    "printing_drawing:4": {87: "Elemwise{Composite{(sigmoid(...) > 0.5)}...} [id A] ''   2\n |dot [id B] ''   0\n...\n"},
    # prng.rst: symlab's dprint is Theano's (` |` branches, constants as TensorConstant{...}, `NoneConst`, the
    # destroy map as `-> destroy_map={0: [0]}`, the second output of a node shown once); the nodes are the page's.
    "prng:23": {257: RNG_UNIFORM.format(destroy="")},
    "prng:29": {295: RNG_UNIFORM.format(destroy=" -> destroy_map={0: [0]}")},
    "prng:31": {324: RNG_UNIFORM.format(destroy=" -> destroy_map={0: [0]}")},
    "prng:32": {
        338: RNG_UNIFORM.format(destroy=" -> destroy_map={0: [0]}")
        + "uniform_rv{\"(),()->()\"}.0 [id A] '' -> destroy_map={0: [0]}   0\n"
    },
    # the Numba function: symlab keeps the random variable node as it is (PyTensor wraps it in a
    # RandomVariableWithCoreShape, the bracketed [normal_rv...] of the page, with an inner graph).
    "prng:51": {
        527: "normal_rv{\"(),()->()\"}.1 [id A] <TensorType(float64, ())> ''   0\n"
        " |randomstate_rng [id B] <RandomGeneratorType>\n |NoneConst [id C] <NoneTypeT>\n"
        " |TensorConstant{0.0} [id D] <TensorType(float64, ())>\n |TensorConstant{1.0} [id E] <TensorType(float64, ())>\n"
        "normal_rv{\"(),()->()\"}.0 [id A] <RandomGeneratorType> ''   0\n"
    },
    "prng:53": {553: "<class 'symlab.tensor.random.basic.NormalRV'>\n"},
}


def device_check_takes_its_else_branch(shown: str) -> str:
    """modes:1 tells "the cpu" by PyTensor's C BLAS op names, which symlab has not (its dot calls BLAS in
    its kernel): the check takes its other branch, which prints an ``ERROR, ...`` line and the graph's
    nodes instead of the page's first line; the rest of the output is the page's."""
    first, _, rest = shown.partition("\n")
    return "ERROR, ...\n...\n" + rest


def fewer_training_steps(source: str) -> str:
    """Train 20 steps instead of the page's 10,000 (the page checks no value of the training)."""
    return re.sub(r"\b(training_steps\s*=\s*)\d+", r"\g<1>20", source)


def shape_as_one_tuple(source: str) -> str:
    """``standard_normal(a, b)`` becomes ``standard_normal((a, b))``: the page passes the second size as
    NumPy's ``dtype`` argument, an error of the page (NumPy raises in PyTensor too)."""
    return re.sub(r"\bstandard_normal\((\w+),\s*(\w+)\)", r"standard_normal((\1, \2))", source)


#: Source changes: transformations of an example's code, by example.
SOURCE_CHANGES: dict[str, list[Callable[[str], str]]] = {
    "examples:20": [fewer_training_steps],
    "modes:1": [fewer_training_steps],
    "printing_drawing:1": [shape_as_one_tuple],
}

#: Output changes given as a function of the page's output (the page line: any key for a testcode block).
OUTPUT_CHANGES: dict[str, dict[int, Callable[[str], str]]] = {
    "modes:1": {0: device_check_takes_its_else_branch},
}


def overrides() -> dict[str, dict]:
    """The adaptations in the form ``tutorial_runner.adapt`` takes: ``{id: {"source": [...], "want": {...}}}``."""
    result: dict[str, dict] = {}
    for ident, changes in SOURCE_CHANGES.items():
        result.setdefault(ident, {})["source"] = list(changes)
    for table in (SYMLAB_OUTPUT, OUTPUT_CHANGES):
        for ident, wants in table.items():
            result.setdefault(ident, {}).setdefault("want", {}).update(wants)
    return result


def adapted_ids() -> set[str]:
    """The examples that run with an adaptation (none of them excluded)."""
    return set(SOURCE_CHANGES) | set(SYMLAB_OUTPUT) | set(OUTPUT_CHANGES)
