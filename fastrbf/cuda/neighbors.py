"""Brute-force ``knn`` for device arrays (called by :func:`fastrbf.knn` when its data
are on a CUDA device).  Each query's list is sorted by distance, ties to the lowest
index, as on the CPU; ``k`` is at most :data:`fastrbf._jit.cuda.neighbors.MAX_K`.
Distances are direct differences summed feature by feature in the dtype: float64 gives
the CPU's order and, but for FMA contraction, its values; float32 can order two points
whose distances differ by an ulp differently."""

import numpy as np

from .. import _validation as _v
from .._jit.cuda import neighbors as _jn
from .._jit.cuda.target import ROWS, blocks
from . import data
from .arrays import Device

MAX_K = _jn.MAX_K


def knn(X, Xq, k, length_scale=None):
    """(indices int64, squared distances) of the ``k`` nearest rows of ``X`` for each row
    of ``Xq``, both of the caller's array kind."""
    dev = Device(X)
    with dev.context():
        n = data.array(dev, X, "X").shape[0]
        k = _v.check_int(k, "k", 1, n, text=f"an integer in [1, {n}] (the number of rows of `X`)")
        if k > MAX_K:
            raise ValueError(f"`k` must be at most {MAX_K} for data on a CUDA device; got {k}.")
        Xc, Qc, dtype = data.pair(dev, X, Xq, "X", "Xq", length_scale)
        m = Qc.shape[0]
        idx, iv = dev.empty((m, k), np.int64)
        dist, dv = dev.empty((m, k), dtype)
        _jn.knn_kernel(dtype, Xc.shape[1], k)[blocks(m, ROWS), ROWS](Xc, Qc, k, iv, dv)
        return dev.result(idx), dev.result(dist)
