"""Arrays on a CUDA device: recognising them without importing numba-cuda, viewing
them from numba kernels without a copy, and making results of the caller's kind.

An argument is on a device when it exposes ``__cuda_array_interface__`` (CuPy, a torch
CUDA tensor, numba's device arrays, ...), is one of numba-cuda's device arrays (its
simulator's included), or says through ``__dlpack_device__`` that it lives on a CUDA
device (viewed through CuPy's ``from_dlpack``, which must then be installed).

Results are made by the library of the first device argument: a CuPy array for CuPy
input, a torch tensor on the same device for torch input, a numba device array for
numba's and for any other producer of ``__cuda_array_interface__``, and for DLPack-only
input the input's own array namespace's ``from_dlpack`` of a CuPy result (a CuPy array
when the input has no namespace).  Nothing is copied
between host and device behind the caller's back: an array argument that belongs with
device data but is on the host (``Y``, ``V``, per-column ``gamma``, ``labels``,
``sample_weight``, ``centers``) is refused, naming it.
"""

import contextlib
import numbers

import numpy as np

#: DLPack device types of memory a CUDA kernel reads: kDLCUDA and kDLCUDAManaged
_DLPACK_CUDA = (2, 13)


def _interface(x):
    try:
        return x.__cuda_array_interface__
    except Exception:  # a torch CPU tensor raises; anything else without it
        return None


def _numba_array(x):
    return type(x).__module__.startswith("numba.cuda") and hasattr(x, "copy_to_host")


def _dlpack_cuda(x):
    where = getattr(x, "__dlpack_device__", None)
    if where is None:
        return False
    try:
        return int(where()[0]) in _DLPACK_CUDA
    except Exception:
        return False


def is_device_array(x) -> bool:
    """Whether ``x`` lives on a CUDA device (see the module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf.cuda import is_device_array
    >>> is_device_array(np.ones(3)), is_device_array(2.0)
    (False, False)
    """
    if x is None or isinstance(x, (np.ndarray, numbers.Number, str, list, tuple)):
        return False
    return _numba_array(x) or _interface(x) is not None or _dlpack_cuda(x)


def on_device(*xs) -> bool:
    """Whether any of ``xs`` is a device array: the public functions' test for running
    on the GPU (a few attribute look-ups per argument, under a microsecond in all).

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf.cuda import on_device
    >>> on_device(np.ones((3, 2)), None, 0.5)
    False
    """
    return any(is_device_array(x) for x in xs)


def _kind(x):
    if _numba_array(x):
        return "numba"
    top = type(x).__module__.split(".")[0]
    if _interface(x) is not None:
        return top if top in ("cupy", "torch") else "cai"
    return "dlpack"


class Device:
    """The caller's array kind (from its first device argument ``like``): views of device
    arguments for the kernels, and results of that kind on the same device."""

    def __init__(self, like):
        import importlib.util

        if importlib.util.find_spec("numba_cuda") is None:
            raise ImportError("data on a CUDA device need numba-cuda: pip install 'fastrbf[cuda]'.")
        from numba import cuda

        self.cuda = cuda
        self.kind = _kind(like)
        self.like = like
        self.index = None
        if self.kind == "cupy":
            self.index = int(like.device.id)
        elif self.kind == "torch":
            self.index = like.device.index

    def context(self):
        """The numba context of the caller's device (its current one when unknown)."""
        if self.index is None or self.kind == "numba":
            return contextlib.nullcontext()
        return self.cuda.gpus[self.index]

    def view(self, x, name):
        """A numba device array reading ``x`` (no copy); TypeError naming ``name`` for
        host data."""
        if x is None:
            return None
        if not is_device_array(x):
            raise TypeError(
                f"`{name}` is on the host ({type(x).__name__}) while the data are on a CUDA device; "
                f"nothing is copied between them implicitly: move `{name}` to the device first "
                f"(for example cupy.asarray({name}) or torch.as_tensor({name}, device='cuda'))."
            )
        if _numba_array(x):
            return x
        if _interface(x) is None:  # DLPack only
            try:
                import cupy
            except ImportError:
                raise TypeError(
                    f"`{name}` is a DLPack array on a CUDA device without __cuda_array_interface__; "
                    f"reading it needs CuPy (pip install cupy-cuda12x), or pass a CuPy array or torch tensor."
                ) from None
            x = cupy.from_dlpack(x)
        return self.cuda.as_cuda_array(x)

    def empty(self, shape, dtype):
        """(result of the caller's kind, numba view of it) of ``shape`` and ``dtype``."""
        dtype = np.dtype(dtype)
        if self.kind == "cupy":
            import cupy

            with cupy.cuda.Device(self.index):
                out = cupy.empty(shape, dtype=dtype)
            return out, self.cuda.as_cuda_array(out)
        if self.kind == "torch":
            import torch

            out = torch.empty(shape, dtype=getattr(torch, dtype.name), device=self.like.device)
            return out, self.cuda.as_cuda_array(out)
        if self.kind == "dlpack":
            import cupy

            raw = cupy.empty(shape, dtype=dtype)
            return _DLPackResult(self.like, raw), self.cuda.as_cuda_array(raw)
        out = self.cuda.device_array(shape, dtype=dtype)
        return out, out

    def result(self, out):
        """What the caller gets back for a result made by :meth:`empty`."""
        if isinstance(out, _DLPackResult):
            ns = getattr(out.like, "__array_namespace__", None)
            return ns().from_dlpack(out.raw) if ns is not None else out.raw
        return out

    def scratch(self, shape, dtype):
        """A numba device array for the kernels' own use (never returned)."""
        return self.cuda.device_array(shape, dtype=np.dtype(dtype))

    def to_device(self, a):
        """A small host array the algorithm made (centres, candidates, indices) on the device."""
        return self.cuda.to_device(np.ascontiguousarray(a))


class _DLPackResult:
    __slots__ = ("like", "raw")

    def __init__(self, like, raw):
        self.like = like
        self.raw = raw
