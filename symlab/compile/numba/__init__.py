"""The Numba backend: each node becomes generated source, the graph one compiled function.

Importing this package does not import Numba; compiling does.
"""
