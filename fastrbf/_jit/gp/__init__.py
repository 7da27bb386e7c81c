"""The numba kernels of the Gaussian processes (see the map in ``fastrbf._jit``)."""
