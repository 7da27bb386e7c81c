"""The device tests: run on a GPU when the main suite finds one, and under numba-cuda's
simulator (``NUMBA_ENABLE_CUDASIM=1``) by ``tests/test_cuda.py`` in a child process."""

import sys
import threading

import numpy as np
import pytest
from numba import config

SIMULATOR = bool(config.ENABLE_CUDASIM)


def _locked_shared_array(self, shape, dtype, alignment=None):
    """numba-cuda's simulator makes a block's shared array on the first call from its
    call site, with no lock: two threads can each make one, and the block's threads then
    write to different arrays (seen: wrong tiles under load).  The same, under a lock,
    keyed by the caller's file and line as the simulator does."""
    from numba import types
    from numba.np import numpy_support

    if alignment is not None:
        raise RuntimeError("Array alignment is not supported in cudasim")
    if isinstance(dtype, types.Type):
        dtype = numpy_support.as_dtype(dtype)
    if shape == 0:  # dynamic shared memory: one buffer
        return np.frombuffer(self._dynshared.data, dtype=dtype, count=self._dynshared_size // dtype.itemsize)
    frame = sys._getframe(1)
    caller = (frame.f_code.co_filename, frame.f_lineno)
    with _SHARED_LOCK:
        res = self._allocations.get(caller)
        if res is None:
            res = self._allocations[caller] = np.empty(shape, dtype)
    return res


_SHARED_LOCK = threading.Lock()

if SIMULATOR:
    from numba.cuda.simulator import kernelapi

    kernelapi.FakeCUDAShared.array = _locked_shared_array
    # the simulator runs each CUDA thread as a Python thread and polls them: a short
    # switch interval makes a launch about 6x faster
    sys.setswitchinterval(5e-5)


@pytest.fixture
def rng():
    return np.random.default_rng(20261129)
