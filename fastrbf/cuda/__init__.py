"""NVIDIA GPUs through numba-cuda: the public functions run on the device their data
live on.

``fastrbf.sqdist``, ``gram``, ``gram_matvec``, ``knn``, ``lloyd_assign``,
``lloyd_update``, ``kmeans``, ``kernel_ridge(solver="nystrom-pcg")`` and the values of
``KernelModel.predict`` and ``RBFNetwork.decision_function`` take CuPy arrays, torch
CUDA tensors, numba device arrays (anything with ``__cuda_array_interface__``, or
DLPack on a CUDA device) and return results of the same kind on the same device; NumPy
input runs on the CPU as always.  Nothing is copied between host and device implicitly
(:mod:`.arrays`).

Installed by the extra ``fastrbf[cuda]`` (numba-cuda with the CUDA 12 toolkit's
compiler from PyPI).  ``import fastrbf`` never imports numba-cuda: it is imported on
the first call with a device array.

The kernels (:mod:`fastrbf._jit.cuda`) are the CPU's algorithms laid out for the GPU;
the results agree with the CPU's to the accuracy of each function (float64 1e-12
relative; float32 the CPU's float32 tolerances), not bit for bit: CUDA's maths library
and the order of the sums differ.  Each module says where.
"""

import importlib.util

from .arrays import is_device_array, on_device

__all__ = ["is_available", "is_device_array", "on_device"]


def is_available() -> bool:
    """Whether numba-cuda is installed and sees a GPU (or its simulator is on).

    Examples
    --------
    >>> from fastrbf.cuda import is_available
    >>> isinstance(is_available(), bool)
    True
    """
    if importlib.util.find_spec("numba_cuda") is None:
        return False
    from numba import cuda

    try:
        return bool(cuda.is_available())
    except Exception:
        return False
