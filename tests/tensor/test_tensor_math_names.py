"""Every scalar op has an Elemwise of the same name in symlab.tensor.math, bound by a line a reader can find."""

import ast
from pathlib import Path

import symlab.tensor as st
import symlab.tensor.math as tmath
from symlab.scalar.basic import SCALAR_OPS
from symlab.tensor.elemwise import Elemwise


def test_every_scalar_op_has_its_elemwise_under_its_own_name():
    for name, *_ in SCALAR_OPS:
        op = getattr(tmath, name)
        assert isinstance(op, Elemwise) and op.scalar_op.name == name, name
        assert getattr(st, name) is op, name  # reachable as symlab.tensor.<name>


def test_the_names_are_written_out_not_generated():
    tree = ast.parse(Path(tmath.__file__).read_text(encoding="utf-8"))
    bound = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        for target in targets:
            for leaf in ast.walk(target):
                if isinstance(leaf, ast.Name):
                    bound.add(leaf.id)
    missing = [name for name, *_ in SCALAR_OPS if name not in bound]
    assert not missing, f"scalar ops without a written-out name in symlab/tensor/math.py: {missing}"
    assert "globals()" not in Path(tmath.__file__).read_text(encoding="utf-8")
