r"""How an op becomes Numba code: a registry from op class to *source* generator.

Each node of an optimized graph becomes a :class:`Kernel`: Python source that
defines one function (named ``name``) taking the node's input arrays in order
and returning its output (or a tuple of outputs for several). The linker
writes all the kernels of a graph, and one function that calls them in
execution order, into one generated module, and compiles that function with
Numba in nopython mode. Because the code is source in a file (not closures),
Numba's disk cache can store it, and a new process compiling the same graph
loads machine code instead of compiling.

Rules for a kernel's source:

* it must compile in Numba's nopython mode, and be decorated by nothing: the
  linker adds ``@numba.njit(cache=..., ...)``;
* it may use ``np``, ``math`` and ``numba`` (imported by the generated
  module) and the names in :attr:`Kernel.globals`, which the generated
  module defines at its top, each by a Python expression in source form (so
  the module is self-contained and cacheable); static op parameters (axes,
  dtypes, shapes, scalar constants) are written into the source as literals;
* array constants are not written into the source: they are inputs of the
  graph function, like the user's inputs;
* it must never modify its inputs unless the op's ``destroy_map`` says so,
  and must return new arrays or views exactly where the op's ``view_map``
  allows it.

An op without a kernel falls back to its Python ``perform`` (the linker warns,
naming the op): results never silently change.

>>> import symlab.tensor as st
>>> from symlab.graph import Apply, Op
>>> class Twice(Op):
...     __props__ = ()
...     def make_node(self, x):
...         x = st.as_tensor_variable(x)
...         return Apply(self, [x], [x.type()])
>>> @register_kernel(Twice)
... def _twice(op, node, name):
...     return Kernel(name, f"def {name}(x):\n    return x * 2\n")
>>> print(kernel_for(Twice()(st.dvector()).owner, "k0").source)
def k0(x):
    return x * 2
<BLANKLINE>
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from symlab.graph.basic import Apply


@dataclass
class Kernel:
    """The generated code of one node.

    ``source`` defines ``def <name>(<one argument per input>)``; ``globals``
    maps extra names used by ``source`` to the Python source of their value
    (for example ``{"_axes": "(0, 2)"}``).
    """

    name: str
    source: str
    globals: dict[str, str] = field(default_factory=dict)
    #: Extra ``numba.njit`` options for the function ``name`` (``{"parallel": True}``).
    jit_options: dict[str, Any] = field(default_factory=dict)


class NoKernel(NotImplementedError):
    """The op has no Numba kernel (the node will run its ``perform``)."""


class RunsOnNumpy(NoKernel):
    """The node runs its ``perform`` (NumPy) by design, not for want of a kernel: Numba cannot give its results.

    The message says why (a random variable whose NumPy draw Numba cannot reproduce bit for bit). The linker
    does not warn about such a node; ``compile_info.numpy_ops`` and the profile name it with the reason.
    """


#: op class -> generator(op, node, name) -> Kernel
_REGISTRY: dict[type, Callable[[Any, Apply, str], Kernel]] = {}


def register_kernel(*op_classes: type) -> Callable:
    """Decorator: ``@register_kernel(Elemwise)`` registers ``fn(op, node, name) -> Kernel``."""

    def decorate(fn: Callable[[Any, Apply, str], Kernel]) -> Callable[[Any, Apply, str], Kernel]:
        for cls in op_classes:
            _REGISTRY[cls] = fn
        return fn

    return decorate


def function_source(name: str, args: list[str], body: list[str]) -> str:
    """The source of ``def name(args): body`` (one statement per line of ``body``)."""
    return f"def {name}({', '.join(args)}):\n" + "".join(f"    {line}\n" for line in body)


def kernel_for(node: Apply, name: str) -> Kernel:
    """The kernel of ``node`` named ``name``; :class:`NoKernel` if its op has none.

    The most specific registered class in the op's MRO wins. A generator
    may raise :class:`NoKernel` for cases it does not handle (an unusual
    dtype, say).
    """
    _load_standard_kernels()
    for cls in type(node.op).__mro__:
        generator = _REGISTRY.get(cls)
        if generator is not None:
            return generator(node.op, node, name)
    raise NoKernel(f"{node.op} has no Numba kernel")


#: op class -> fn(node) -> the inputs its kernel must get private copies of (see :func:`private_copies`).
_PRIVATE_COPIES: dict[type, Callable[[Apply], tuple[int, ...]]] = {}


def register_private_copies(*op_classes: type) -> Callable:
    """Decorator: ``fn(node) -> input indices`` whose values ``node``'s kernel changes in place although the op
    does not destroy them (a random generator the kernel advances: the op draws from a copy)."""

    def decorate(fn: Callable[[Apply], tuple[int, ...]]) -> Callable[[Apply], tuple[int, ...]]:
        for cls in op_classes:
            _PRIVATE_COPIES[cls] = fn
        return fn

    return decorate


def private_copies(node: Apply) -> tuple[int, ...]:
    """The inputs of ``node`` its kernel must be given private copies of (made by the runner before the call).

    Numba cannot copy such a value inside compiled code (a ``numpy.random.Generator``), so the graph module
    takes the copy as an argument of its own and the runner makes it: see
    :mod:`~symlab.compile.numba.graph_source` (``GeneratedModule.private_copies``).
    """
    _load_standard_kernels()
    for cls in type(node.op).__mro__:
        fn = _PRIVATE_COPIES.get(cls)
        if fn is not None:
            return fn(node)
    return ()


def has_kernel(node: Apply) -> bool:
    _load_standard_kernels()
    return any(cls in _REGISTRY for cls in type(node.op).__mro__)


#: Functions that import the modules registering kernels (each a family of ops), run once, before the first
#: lookup: :mod:`~symlab.compile.numba.standard_kernels` registers the one that loads symlab's own families.
_LOADERS: list[Callable[[], None]] = []


def register_kernel_loader(load: Callable[[], None]) -> None:
    """Have ``load()`` (which imports modules that call :func:`register_kernel`) run before the next lookup.

    This keeps the registry below the kernel families: it never imports them, they register upward, and
    loading them waits for the first kernel asked for.
    """
    _LOADERS.append(load)


def _load_standard_kernels() -> None:
    """Run the registered loaders not run yet (in the order they were registered)."""
    while _LOADERS:
        _LOADERS.pop(0)()


__all__ = [
    "Kernel",
    "NoKernel",
    "RunsOnNumpy",
    "function_source",
    "has_kernel",
    "kernel_for",
    "private_copies",
    "register_kernel",
    "register_kernel_loader",
    "register_private_copies",
]
