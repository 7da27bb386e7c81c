"""Device arrays for the device tests (``tests/cuda``): numba's (the simulator's under
``NUMBA_ENABLE_CUDASIM=1``) everywhere; on a GPU also CuPy's and torch's, where they are
installed (:data:`KINDS`)."""

import importlib.util

import numpy as np
from numba import config, cuda


def _kinds():
    kinds = ["numba"]
    if config.ENABLE_CUDASIM:
        return kinds
    if importlib.util.find_spec("cupy") is not None:
        kinds.append("cupy")
    if importlib.util.find_spec("torch") is not None:
        import torch

        if torch.cuda.is_available():
            kinds.append("torch")
    return kinds


#: the array kinds the device tests run on here
KINDS = _kinds()


def to_device(a, kind="numba"):
    a = np.ascontiguousarray(a)
    if kind == "cupy":
        import cupy

        return cupy.asarray(a)
    if kind == "torch":
        import torch

        return torch.as_tensor(a, device="cuda")
    return cuda.to_device(a)


def to_host(x):
    if hasattr(x, "copy_to_host"):
        return x.copy_to_host()
    if type(x).__module__.split(".")[0] == "torch":
        return x.cpu().numpy()
    import cupy

    return cupy.asnumpy(x)
