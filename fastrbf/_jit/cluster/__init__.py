"""The numba kernels of k-means (see the map in ``fastrbf._jit``)."""
