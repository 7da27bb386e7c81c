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
        Xv = data.array(dev, X, "X")
        Qv = data.array(dev, Xq, "Xq")
        if Qv.shape[1] != Xv.shape[1]:
            raise ValueError(f"`Xq` must have the same number of features as `X` ({Xv.shape[1]}); "
                             f"got {Qv.shape[1]} (shape {tuple(Qv.shape)}).")
        n = Xv.shape[0]
        k = _v.check_int(k, "k", 1, n, text=f"an integer in [1, {n}] (the number of rows of `X`)")
        if k > MAX_K:
            raise ValueError(f"`k` must be at most {MAX_K} for data on a CUDA device; got {k}.")
        dtype = data.result_dtype(Xv, Qv)
        if length_scale is not None:
            ls = _v.check_length_scale(length_scale, Xv.shape[1])
            data.check_values(dev, Xv, "X", magnitude=False)
            data.check_values(dev, Qv, "Xq", magnitude=False)
            Xc, Qc = data.scaled(dev, Xv, ls, dtype, "X"), data.scaled(dev, Qv, ls, dtype, "Xq")
        else:
            data.check_values(dev, Xv, "X", dtype)
            data.check_values(dev, Qv, "Xq", dtype)
            Xc, Qc = data.as_dtype(dev, Xv, dtype), data.as_dtype(dev, Qv, dtype)
        m = Qc.shape[0]
        idx, iv = dev.empty((m, k), np.int64)
        dist, dv = dev.empty((m, k), dtype)
        _jn.knn_kernel(dtype, Xc.shape[1], k)[blocks(m, ROWS), ROWS](Xc, Qc, k, iv, dv)
        return dev.result(idx), dev.result(dist)
