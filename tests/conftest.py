import os

import numpy as np
import pytest

# imported by the tests under its own name only: collecting it for doctests would import
# it a second time (as ``tests.user_kernel_defs``) and define its kernels again under
# that module's name
collect_ignore = ["user_kernel_defs.py"]


def _device_tests_run_here():
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return True
    from fastrbf.cuda import is_available

    return is_available()


# the device tests run where there is a GPU; elsewhere tests/test_cuda.py runs them under
# numba-cuda's simulator, in a child process (the simulator is chosen at import)
if not _device_tests_run_here():
    collect_ignore.append("cuda")


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)


def pytest_configure(config):
    # the marks of SciPy's own tests, which test_peer_scipy.py runs (NumPy only here)
    config.addinivalue_line("markers", "skip_xp_backends: SciPy's array-backend selection (its tests run on NumPy here)")


def pytest_collection_modifyitems(config, items):
    # a peer's own test that does not run fastrbf (its module's peer_selected says no):
    # deselected, not run
    keep, drop = [], []
    for item in items:
        select = getattr(getattr(item, "module", None), "peer_selected", None)
        (drop if select is not None and not select(item) else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    # a peer's own test that fastrbf fails on purpose: its module's DIFFERENCES says why
    for item in items:
        reason = getattr(getattr(item, "module", None), "DIFFERENCES", {}).get(getattr(item, "originalname", None))
        if reason:
            item.add_marker(pytest.mark.xfail(reason=reason, strict=True))
