"""The gradient package: ``reverse_mode`` (``grad``) below ``products`` and ``verify``, which build on it;
``walk`` records grad's walk step by step (``reverse_mode`` names its observer protocol for type checking only);
the package's ``__init__`` gathers their public names and gives ``grad`` and friends to ``symlab.tensor``."""

import ast
from pathlib import Path

import pytest

import symlab.gradient
import symlab.tensor as st
from symlab.gradient import products, reverse_mode, verify, walk

PACKAGE = Path(symlab.gradient.__file__).resolve().parent

#: Where each public name of symlab.gradient is defined.
HOMES = {
    reverse_mode: ["DisconnectedInputError", "Lop", "NullTypeGradError", "Rop", "grad", "hessian", "jacobian"],
    products: ["hessian_vector_product", "pullback", "pushforward"],
    verify: ["GradientError", "verify_grad"],
    walk: ["GradObserver", "GradStep", "GradWalk"],
}


def test_every_public_name_comes_from_its_module():
    assert sorted(name for names in HOMES.values() for name in names) == sorted(symlab.gradient.__all__)
    for module, names in HOMES.items():
        for name in names:
            assert getattr(symlab.gradient, name) is getattr(module, name)
            assert getattr(module, name).__module__ == module.__name__


def _type_checking_blocks(tree: ast.Module) -> list[ast.If]:
    return [node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"]


@pytest.mark.parametrize("name", ["products", "reverse_mode", "verify", "walk"])
def test_modules_never_import_the_package_that_gathers_them(name):
    tree = ast.parse((PACKAGE / f"{name}.py").read_text(encoding="utf-8"))
    for block in _type_checking_blocks(tree):  # names for annotations only: no import when the module runs
        tree.body.remove(block)
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert "symlab.gradient" not in imported
    if name == "reverse_mode":
        assert not {m for m in imported if m and m.startswith("symlab.gradient.")}


def test_tensor_package_offers_the_gradient_functions():
    x = st.dvector("x")
    assert st.grad is reverse_mode.grad and st.verify_grad is verify.verify_grad
    assert st.grad((x ** 2).sum(), x).eval({x: [1.0, 3.0]}).tolist() == [2.0, 6.0]
