"""The tensor package's order of modules, and the registrations that let a lower module reach a higher one.

Each module of ``symlab/tensor`` imports only modules before it in :data:`ORDER` (inside functions too);
``TensorType`` (the bottom) learns its variable classes and conversions from above, ``as_tensor_variable``
learns ``stack``, and ``symlab.tensor.grad`` is given by the gradient layer.
"""

import ast
import sys
from pathlib import Path

import numpy as np
import pytest

import symlab
import symlab.gradient
import symlab.tensor as st
from symlab.tensor.conversion import as_tensor_variable
from symlab.tensor.joining import Join
from symlab.tensor.shape import SpecifyShape
from symlab.tensor.type import TensorType
from symlab.tensor.variable import TensorConstant, TensorVariable

TENSOR = Path(st.__file__).resolve().parent

#: The modules of the tensor package, lowest first (README, "Layout"; the package's docstring).
ORDER = [
    "type",
    "constructors",
    "transfer",
    "conversion",
    "elemwise",
    "shape_of",
    "basic",
    "math",
    "reduction",
    "joining",
    "alloc",
    "shape",
    "subtensor_index",
    "subtensor_shape",
    "subtensor",
    "special",
    "products",
    "shape_inference",
    "variable",
    "vectorize_rules",
    "nnet",
    "signal",
    "random",
    "shared_randomstreams",
]


def _tensor_imports(path: Path) -> set[str]:
    """The modules of the tensor package (first name under ``symlab.tensor``) that ``path`` imports, anywhere."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[:2] == ["symlab", "tensor"] and len(parts) > 2 and parts[2] in ORDER:
                found.add(parts[2])
    return found


def _module_files() -> dict[str, list[Path]]:
    files: dict[str, list[Path]] = {}
    for path in sorted(TENSOR.rglob("*.py")):
        relative = path.relative_to(TENSOR)
        if relative.parts == ("__init__.py",):
            continue
        files.setdefault(relative.parts[0].removesuffix(".py"), []).append(path)
    return files


def test_order_lists_every_module():
    assert sorted(_module_files()) == sorted(ORDER)


@pytest.mark.parametrize("module", ORDER)
def test_module_imports_only_modules_before_it(module):
    below = set(ORDER[: ORDER.index(module)])
    for path in _module_files()[module]:
        above = _tensor_imports(path) - below - {module}
        assert not above, f"{path.relative_to(TENSOR.parent)} imports {sorted(above)}, which come after {module!r}"


def test_tensor_type_makes_the_registered_classes():
    x = TensorType("float64", (None,))("x")
    assert type(x) is TensorVariable and TensorType.variable_type is TensorVariable
    c = TensorType("int64", ()).make_constant(np.asarray(3), weak=True)
    assert type(c) is TensorConstant and c.weak
    assert type(st.constant(2.0)) is TensorConstant and st.constant(2.0).weak


def test_tensor_type_converts_with_the_registered_functions():
    vector = TensorType("float64", (None,))
    value = vector.filter_variable([1.0, 2.0])  # as_tensor_variable: a constant, narrowed by its static shape
    assert isinstance(value, TensorConstant) and value.type == TensorType("float64", (2,))
    fixed = TensorType("float64", (2,))
    narrowed = fixed.filter_variable(vector("v"))  # specify_shape
    assert isinstance(narrowed.owner.op, SpecifyShape) and narrowed.type == fixed


def test_a_list_of_variables_is_stacked():
    x, y = st.dscalars("x", "y")
    v = as_tensor_variable([x, y, 1.0])
    assert isinstance(v.owner.op, Join) and v.type == TensorType("float64", (3,))
    assert v.eval({x: 1.0, y: 2.0}).tolist() == [1.0, 2.0, 1.0]


def test_ops_gradients_use_the_variable_methods():
    # Elemwise's gradient sums a broadcast gradient with ``g.sum``; DimShuffle's drops the new axis.
    x, m = st.dvector("x"), st.dmatrix("m")
    g = st.grad((x.dimshuffle("x", 0) * m).sum(), x)
    values = np.arange(6.0).reshape(3, 2)
    assert g.eval({x: [1.0, 2.0], m: values}).tolist() == values.sum(axis=0).tolist()
    # Split's gradient makes zeros for a piece without one with ``o.zeros_like()``, PyTensor's method.
    assert x.zeros_like().type == st.zeros_like(x).type
    first, _ = st.split(x, [1, 1])
    node = first.owner
    gx = node.op.L_op(node.inputs, node.outputs, [st.ones_like(first), None])[0]
    assert gx.eval({x: [5.0, 7.0]}).tolist() == [1.0, 0.0]


def test_the_gradient_layer_gives_its_functions_to_the_tensor_package():
    for name in ("grad", "jacobian", "hessian", "Lop", "Rop", "verify_grad"):
        assert getattr(st, name) is getattr(symlab.gradient, name)
    assert symlab.grad is symlab.gradient.grad
    with pytest.raises(ValueError, match=r"\['gradient'\] are not gradient names"):
        st.register_gradient_functions({"gradient": symlab.gradient.grad})


def test_subtensor_names_stay_importable_from_subtensor():
    from symlab.tensor import subtensor, subtensor_index

    assert subtensor.IndexVar is subtensor_index.IndexVar
    for name in subtensor.__all__:
        assert getattr(st, name) is getattr(subtensor, name)


def test_pytensor_module_paths_of_the_shape_ops():
    """``pytensor.tensor.shape`` holds every shape op; so does ``symlab.tensor.shape`` (some defined in shape_of)."""
    import symlab.tensor.shape  # noqa: F401 - the attribute symlab.tensor.shape is the function shape

    tshape = sys.modules["symlab.tensor.shape"]
    for name in ("Reshape", "reshape", "Shape", "shape", "Shape_i", "shape_i", "SpecifyShape", "specify_shape"):
        assert getattr(tshape, name) is getattr(st, name), name
