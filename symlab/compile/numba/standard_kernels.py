"""symlab's kernel families: the modules that register the kernels of its ops, loaded on the first lookup.

Each ``kernels_*`` module registers the kernels of one family of ops with
:func:`~symlab.compile.numba.kernels.register_kernel`; the registry
(:mod:`~symlab.compile.numba.kernels`) never imports them. Importing this module (the package
:mod:`symlab.compile.numba` does) registers :func:`load_standard_kernels` with
:func:`~symlab.compile.numba.kernels.register_kernel_loader`, so that the first kernel asked for
loads them all, and a process that never asks for one never loads them.

>>> from symlab.compile.numba.kernels import has_kernel
>>> import symlab.tensor as st
>>> has_kernel(st.exp(st.dvector("x")).owner)  # the first lookup loaded the families
True
"""

from __future__ import annotations

from symlab.compile.numba.kernels import register_kernel_loader


def load_standard_kernels() -> None:
    """Import every kernel family of symlab (each registers its kernels as it is imported)."""
    from symlab.compile.numba import (  # noqa: F401 - imported for their registrations
        kernels_alloc,
        kernels_conv,
        kernels_elemwise,
        kernels_inner_graph,
        kernels_join,
        kernels_pool,
        kernels_products,
        kernels_random,
        kernels_reduction,
        kernels_reduction_extra,
        kernels_shape,
        kernels_special,
        kernels_subtensor,
    )


register_kernel_loader(load_standard_kernels)

__all__ = ["load_standard_kernels"]
