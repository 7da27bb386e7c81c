"""The numba kernels of the neighbour searches (see the map in ``fastrbf._jit``)."""
