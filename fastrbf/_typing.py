"""Type aliases of the public API (PEP 484; the package ships ``py.typed``)."""

from typing import Any, Protocol, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

__all__ = ["ArrayLike", "DTypeLike", "FloatArray", "IntArray", "KernelArg", "KernelLike", "Seed", "Threads"]

#: a float32 or float64 array (fastrbf keeps the input's precision)
FloatArray: TypeAlias = NDArray[np.floating[Any]]
#: labels and indices (int64)
IntArray: TypeAlias = NDArray[np.int64]
#: ``None``, an int >= 0 or a ``numpy.random.Generator``
Seed: TypeAlias = int | np.random.Generator | None
#: ``None`` or -1 = all cores, else a positive count
Threads: TypeAlias = int | None


class KernelLike(Protocol):
    """A kernel object: a user kernel (:class:`fastrbf.UserKernel`) or a registry entry."""

    name: str
    radial: bool

    def spec(self, g: np.ndarray, coef0: float = ..., degree: int = ...) -> Any: ...


#: a kernel: a name of :data:`fastrbf.KERNELS` or of a user kernel, or a kernel object
KernelArg: TypeAlias = str | KernelLike
