"""numba kernels: no validation, no allocation policy; one module per family."""
