"""The device's decorator factory and launch shapes.

Flags are the same for every kernel: ``fastmath=False`` (IEEE division and square
root, no flush of subnormals: the float32 rules of the CPU kernels hold; NVVM still
contracts ``a * b + c`` into an FMA, as the CPU kernels' ``contract`` flag does).  A
kernel is made per kernel function and dtype by a factory (the function and the shared
arrays' shapes are compile-time constants) and kept in :data:`MADE` for the life of the
process: each compiles on its first launch with a given signature.  They are not cached
on disk: each process compiles the kernels it launches (caching these closures, made at
run time, was not attempted).
"""

import threading

import numpy as np
from numba import config, cuda

#: True under numba-cuda's simulator (``NUMBA_ENABLE_CUDASIM=1``): kernels run as Python
#: threads on the host, for the tests of machines without a GPU
SIMULATOR = bool(config.ENABLE_CUDASIM)

#: threads per block of the 2-D tile kernels (TILE x TILE) and of the row kernels (a
#: power of two: the block sums are trees); the simulator runs the same kernels with
#: small blocks, so that small test inputs cross block and tile boundaries
TILE = 4 if SIMULATOR else 16
ROWS = 8 if SIMULATOR else 128

#: (factory name, key) -> compiled kernel; the lock makes two threads' first calls
#: build one kernel
MADE: dict = {}
_LOCK = threading.Lock()


def kernel(fn):
    """A CUDA kernel (``fn[grid, block](*args)``) with fastrbf's flags."""
    return cuda.jit(fastmath=False)(fn)


def device(fn):
    """A device function (called from kernels) with fastrbf's flags."""
    return cuda.jit(device=True, fastmath=False)(fn)


def made(name, key, factory):
    """The kernel ``factory(*key)`` made once per process for ``(name, key)``."""
    k = (name, key)
    got = MADE.get(k)
    if got is None:
        with _LOCK:
            got = MADE.get(k)
            if got is None:
                got = MADE[k] = factory(*key)
    return got


def nbtype(dtype):
    """numba's scalar type of ``dtype`` (float32 or float64)."""
    from numba import float32, float64
    return float32 if np.dtype(dtype) == np.float32 else float64


def blocks(n, per):
    """Blocks of ``per`` threads covering ``n`` (at least one)."""
    return max(1, (n + per - 1) // per)


def width(d, widths=(4, 8, 16, 32)):
    """The smallest of ``widths`` that holds ``d`` features, or 0 (read from global
    memory) beyond the largest."""
    for w in widths:
        if d <= w:
            return w
    return 0
