"""Device arrays for the device tests (``tests/cuda``): numba's (the simulator's under
``NUMBA_ENABLE_CUDASIM=1``)."""

import numpy as np
from numba import cuda


def to_device(a):
    return cuda.to_device(np.ascontiguousarray(a))


def to_host(x):
    return x.copy_to_host()
