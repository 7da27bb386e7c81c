import numpy as np
import pytest

# imported by the tests under its own name only: collecting it for doctests would import
# it a second time (as ``tests.user_kernel_defs``) and define its kernels again under
# that module's name
collect_ignore = ["user_kernel_defs.py"]


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)
