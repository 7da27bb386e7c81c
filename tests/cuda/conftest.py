"""The device tests: run on a GPU when the main suite finds one, and under numba-cuda's
simulator (``NUMBA_ENABLE_CUDASIM=1``) by ``tests/test_cuda.py`` in a child process."""

import sys

import numpy as np
import pytest
from numba import config

SIMULATOR = bool(config.ENABLE_CUDASIM)

if SIMULATOR:
    # the simulator runs each CUDA thread as a Python thread and polls them: a short
    # switch interval makes a launch about 6x faster
    sys.setswitchinterval(5e-5)


@pytest.fixture
def rng():
    return np.random.default_rng(20261129)
