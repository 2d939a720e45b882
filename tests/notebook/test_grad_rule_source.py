"""gradient_rule_source: the source of the rule that computes each op's gradient, headed with where it is written."""

import inspect
import re
from pathlib import Path

import pytest

import symlab
import symlab.tensor as st
from symlab.graph import Apply, Op
from symlab.notebook.grad_rule_source import gradient_rule_source

ROOT = Path(symlab.__file__).resolve().parent.parent
HEAD = re.compile(r"^# (?P<name>\S+) \((?P<file>[^():]+):(?P<line>\d+)\)$")


class Triple(Op):
    """3 * x, with no gradient."""

    __props__ = ()

    def make_node(self, x):
        x = st.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, outputs):
        outputs[0][0] = 3 * inputs[0]


class Doubled(Triple):
    """2 * x, whose gradient a user wrote as ``grad``."""

    def perform(self, node, inputs, outputs):
        outputs[0][0] = 2 * inputs[0]

    def grad(self, inputs, output_grads):
        return [output_grads[0] * 2]


def _head(text):
    match = HEAD.match(text.splitlines()[0])
    assert match, text.splitlines()[0]
    return match["name"], match["file"], int(match["line"])


def _line(file, line):
    return (ROOT / file).read_text().splitlines()[line - 1]


def _nodes():
    x, m = st.dvector("x"), st.dmatrix("m")
    h, _ = symlab.scan(lambda v, acc: acc + v, sequences=x, outputs_info=st.constant(0.0))
    xi = st.dvector("xi")
    packaged = symlab.OpFromGraph([xi], [st.tanh(xi) * 2], name="twice_tanh")
    return {
        "symlab.tensor.reduction.Sum.L_op": x.sum().owner,
        "symlab.tensor.products.Dot.L_op": st.dot(m, x).owner,
        "symlab.tensor.elemwise.DimShuffle.L_op": x.dimshuffle("x", 0).owner,
        "symlab.tensor.subtensor._BaseSubtensor.L_op": x[1:].owner,
        "symlab.tensor.special.Softmax.L_op": st.softmax(m, axis=-1).owner,
        "symlab.scan.op.Scan.L_op": h.owner.inputs[0].owner,
        "symlab.compile.builders.OpFromGraph.L_op": packaged(x).owner,
    }


@pytest.mark.parametrize("qualified", list(_nodes()))
def test_an_ops_rule_is_the_method_its_class_defines_headed_with_where_it_is(qualified):
    node = _nodes()[qualified]
    text = gradient_rule_source(node)
    name, file, line = _head(text)
    assert name == qualified
    module, cls_name, method = qualified.rsplit(".", 2)
    assert file == module.replace(".", "/") + ".py"
    assert _line(file, line).strip().startswith(f"def {method}(")
    # the lines after the head are the method as written
    cls = next(c for c in type(node.op).__mro__ if c.__name__ == cls_name)
    written = inspect.getsource(vars(cls)[method]).rstrip().splitlines()
    assert text.splitlines()[1:1 + len(written)] == written
    assert "/work/" not in text and str(ROOT) not in text  # no machine's paths


def test_rules_that_hand_their_work_to_another_module_are_followed_there():
    nodes = _nodes()
    scan_text = gradient_rule_source(nodes["symlab.scan.op.Scan.L_op"])
    assert "# symlab.scan.op.Scan.L_op hands its work to symlab.scan.gradient.scan_lop (symlab/scan/gradient.py:" \
        in scan_text
    assert "def scan_lop(" in scan_text
    ofg_text = gradient_rule_source(nodes["symlab.compile.builders.OpFromGraph.L_op"])
    follow = re.search(r"^# symlab.compile.builders.OpFromGraph.L_op hands its work to "
                       r"symlab.compile.builders_gradient.lop \((symlab/compile/builders_gradient.py):(\d+)\):$",
                       ofg_text, re.MULTILINE)
    assert follow and _line(follow[1], int(follow[2])).startswith("def lop(")


@pytest.mark.parametrize("build, name", [
    (lambda x: st.tanh(x), "tanh"),
    (lambda x: x * x, "mul"),
    (lambda x: st.clip(x, 0.0, 1.0), "clip"),  # written over three lines
    (lambda x: st.cast(x, "float32"), "cast"),
])
def test_an_elementwise_rule_is_its_line_of_tensor_math(build, name):
    from symlab.tensor.elemwise import ELEMWISE_GRADS

    node = build(st.dvector("x")).owner
    text = gradient_rule_source(node)
    head = re.match(r"^# symlab\.tensor\.math: ELEMWISE_GRADS\['(\w+)'\] \((symlab/tensor/math\.py):(\d+)\)$",
                    text.splitlines()[0])
    assert head and head[1] == name
    assert int(head[3]) == ELEMWISE_GRADS[name].__code__.co_firstlineno
    rule_line = _line(head[2], int(head[3]))
    assert "lambda i, o, g:" in rule_line
    shown = text.splitlines()[1:-1]
    assert rule_line in shown and "lambda i, o, g:" in "\n".join(shown)
    assert compile("\n".join(shown), "<rule>", "exec")  # the whole statement, not a cut line
    assert re.match(r"^# Elemwise\.L_op \(symlab/tensor/elemwise\.py:\d+\) calls the rule", text.splitlines()[-1])


def test_an_op_without_a_rule_shows_why_it_has_no_gradient():
    x = st.dvector("x")
    floor_text = gradient_rule_source(st.floor(x).owner)
    assert re.match(r"^# floor has no gradient rule: symlab\.tensor\.elemwise\.Elemwise\.L_op "
                    r"\(symlab/tensor/elemwise\.py:\d+\) says its gradient is undefined$", floor_text.splitlines()[0])
    assert "grad_undefined(" in floor_text
    triple_text = gradient_rule_source(Triple()(x).owner)
    assert triple_text.splitlines()[0] == "# Triple defines no gradient rule (none of L_op, grad, pullback):"
    name, file, line = _head("\n".join(triple_text.splitlines()[1:]))
    assert (name, file) == ("symlab.graph.op.Op.grad", "symlab/graph/op.py")
    assert "does not implement grad() or L_op()" in triple_text


def test_a_users_rule_is_found_in_its_own_file():
    text = gradient_rule_source(Doubled()(st.dvector("x")).owner)
    name, file, line = _head(text)
    # the path as the rewrite stepper shows one (rule_source.shown_path): relative to the directory holding symlab
    assert name.endswith("test_grad_rule_source.Doubled.grad") and file == "tests/notebook/test_grad_rule_source.py"
    assert _line(file, line).strip() == "def grad(self, inputs, output_grads):"
    assert "return [output_grads[0] * 2]" in text


def test_a_variable_is_not_a_node():
    x = st.dvector("x")
    with pytest.raises(TypeError, match=r"expected an Apply node \(variable.owner\), received TensorVariable x"):
        gradient_rule_source(x)
    with pytest.raises(TypeError, match=r"received None"):
        gradient_rule_source(x.owner)
