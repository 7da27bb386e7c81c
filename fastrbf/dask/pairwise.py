"""Distances and kernels of dask arrays, blockwise and lazy: :func:`sqdist`,
:func:`gram`, :func:`gram_matvec` (each block is the in-memory function of a row block).
"""


import dask.array as da
import numpy as np
from numpy.typing import ArrayLike

from .. import _validation as _v
from .._typing import KernelArg
from ..distances import sqdist as _sqdist
from ..kernels import check_kernel, check_params
from ..kernels import gram as _gram
from ..kernels import gram_matvec as _gram_matvec
from .common import (
    Data,
    as_rows,
    block_offset,
    check_gamma_dtype,
    check_threads,
    in_memory,
    is_dask,
    raise_global,
    row_index,
)


# ---------------------------------------------------------------- blockwise functions
def _pair_blocks(X, Y, name_y="Y") -> tuple[da.Array, da.Array]:
    """(X, Y as dask arrays, Y is None?) for the n x m functions."""
    X = as_rows(X)
    if Y is None:
        return X, X
    Yd = as_rows(Y, name_y)
    if Yd.shape[1] != X.shape[1]:
        raise ValueError(f"`{name_y}` must have the same number of features as `X` ({X.shape[1]}); "
                         f"got {Yd.shape[1]} (shape {Yd.shape}).")
    return X, Yd


def sqdist(X: Data, Y: Data | None = None, *, n_threads: int | None = 1,
           length_scale: ArrayLike | None = None) -> da.Array:
    """Squared Euclidean distances of the rows of a dask array, blockwise.

    Parameters
    ----------
    X : dask.array.Array of shape (n, d), chunked by rows
    Y : dask.array.Array or array_like of shape (m, d), optional
        Defaults to ``X``.  A dask ``Y`` gives one block per pair of row blocks; a NumPy
        ``Y`` is one block shipped to every task.
    n_threads : int, default 1
        Threads of each task (one numba thread per dask thread).
    length_scale : float or array_like of shape (d,), optional
        Per-feature scales, as in :func:`fastrbf.sqdist`.

    Returns
    -------
    dask.array.Array of shape (n, m)
        Lazy; each block is :func:`fastrbf.sqdist` of two row blocks (the accuracy
        guarantees of the in-memory function hold; with ``Y=None`` the diagonal is
        exactly 0).

    Examples
    --------
    >>> import numpy as np, dask.array as da
    >>> from fastrbf import dask as fd
    >>> X = da.from_array(np.array([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]]), chunks=(2, 2))
    >>> fd.sqdist(X).compute(scheduler="threads")
    array([[  0.,  25., 100.],
           [ 25.,   0.,  25.],
           [100.,  25.,   0.]])
    """
    nt = check_threads(n_threads)
    X, Yd = _pair_blocks(X, Y)
    ls = _v.check_length_scale(length_scale, X.shape[1])
    dtype = _v.result_dtype(X.dtype, Yd.dtype)
    return da.blockwise(_sqdist_block, "ij", X, "ik", Yd, "jk", row_index(X), "i", row_index(Yd), "j", dtype=dtype,
                        meta=np.empty((0, 0), dtype), concatenate=True, name_y="X" if Y is None else "Y",
                        n_threads=nt, length_scale=ls)


def _sqdist_block(Xb, Yb, rx, ry, name_y, n_threads, length_scale):
    try:
        extra = {} if length_scale is None else {"length_scale": length_scale}
        return _sqdist(Xb, Yb, n_threads=n_threads, **extra)
    except ValueError as exc:
        raise_global(exc, (Xb, rx[0], "X"), (Yb, ry[0], name_y))
        raise  # not reached


def gram(X: Data, Y: Data | None = None, *, kernel: KernelArg = "gaussian", gamma: ArrayLike = 1.0, degree: int = 3,
         coef0: float = 1.0, n_threads: int | None = 1, length_scale: ArrayLike | None = None) -> da.Array:
    """Kernel matrix ``K[i, j] = k(X[i], Y[j])`` of dask arrays, blockwise.

    Parameters
    ----------
    X : dask.array.Array of shape (n, d), chunked by rows
    Y : dask.array.Array or array_like of shape (m, d), optional
        Defaults to ``X``.
    kernel, gamma, degree, coef0, length_scale :
        As in :func:`fastrbf.gram`; a per-column ``gamma`` (length m) is cut like the
        columns.  With float32 data ``gamma`` must lie within float32's range.
    n_threads : int, default 1

    Returns
    -------
    dask.array.Array of shape (n, m)

    Examples
    --------
    >>> import numpy as np, dask.array as da
    >>> from fastrbf import dask as fd
    >>> X = da.from_array(np.array([[0.0], [1.0], [3.0]]), chunks=(2, 1))
    >>> fd.gram(X, gamma=0.5).compute(scheduler="threads").round(4)
    array([[1.    , 0.6065, 0.0111],
           [0.6065, 1.    , 0.1353],
           [0.0111, 0.1353, 1.    ]])
    """
    nt = check_threads(n_threads)
    entry = check_kernel(kernel)
    deg, c0 = check_params(entry, degree, coef0)
    X, Yd = _pair_blocks(X, Y)
    ls = _v.check_length_scale(length_scale, X.shape[1])
    dtype = _v.result_dtype(X.dtype, Yd.dtype)
    g, _ = _v.check_gamma(gamma, Yd.shape[0], np.float64)
    check_gamma_dtype(g, dtype)
    gd = da.from_array(g, chunks=(Yd.chunks[0],))
    return da.blockwise(_gram_block, "ij", X, "ik", Yd, "jk", gd, "j", row_index(X), "i", row_index(Yd), "j",
                        dtype=dtype, meta=np.empty((0, 0), dtype), concatenate=True, name_y="X" if Y is None else "Y",
                        kernel=kernel, degree=deg, coef0=c0, n_threads=nt, length_scale=ls)


def _gram_block(Xb, Yb, g, rx, ry, name_y, kernel, degree, coef0, n_threads, length_scale):
    gam = g[0] if np.all(g == g[0]) else g
    try:
        return _gram(Xb, Yb, kernel=kernel, gamma=gam, degree=degree, coef0=coef0, n_threads=n_threads,
                     length_scale=length_scale)
    except ValueError as exc:
        raise_global(exc, (Xb, rx[0], "X"), (Yb, ry[0], name_y))
        raise  # not reached


def gram_matvec(X: Data, Y: ArrayLike, V: ArrayLike, *, kernel: KernelArg = "gaussian", gamma: ArrayLike = 1.0,
                degree: int = 3, coef0: float = 1.0, n_threads: int | None = 1,
                length_scale: ArrayLike | None = None) -> da.Array:
    """``K(X, Y) @ V`` for a dask ``X``, blockwise and fused (no block of K is held).

    Parameters
    ----------
    X : dask.array.Array of shape (n, d), chunked by rows
    Y : array_like of shape (m, d)
        In memory (shipped to every task), as ``V``.
    V : array_like of shape (m,) or (m, k)
    kernel, gamma, degree, coef0, length_scale :
        As in :func:`fastrbf.gram_matvec` (float32 data: ``gamma`` within float32's range).
    n_threads : int, default 1

    Returns
    -------
    dask.array.Array of shape (n,) or (n, k), chunked like ``X``

    Examples
    --------
    >>> import numpy as np, dask.array as da, fastrbf
    >>> from fastrbf import dask as fd
    >>> rng = np.random.default_rng(0)
    >>> X, Y, v = rng.random((6, 2)), rng.random((3, 2)), rng.random(3)
    >>> out = fd.gram_matvec(da.from_array(X, chunks=(4, 2)), Y, v, gamma=2.0)
    >>> bool(np.allclose(out.compute(scheduler="threads"), fastrbf.gram_matvec(X, Y, v, gamma=2.0)))
    True
    """
    nt = check_threads(n_threads)
    entry = check_kernel(kernel)
    deg, c0 = check_params(entry, degree, coef0)
    X = as_rows(X)
    Ya = in_memory(Y, "Y")
    _v.check_features(np.empty((0, X.shape[1])), Ya)
    if is_dask(V):
        raise TypeError("`V` must be an in-memory array here; got a dask array: call `V.compute()` first.")
    Va = _v.as_array(V, "V", ndim=np.ndim(V) if np.ndim(V) in (1, 2) else 2)
    _v.check_finite(Va, "V")
    if Va.shape[0] != Ya.shape[0]:
        raise ValueError(f"`V` must have one row per row of `Y` ({Ya.shape[0]}); got shape {Va.shape}.")
    dtype = _v.result_dtype(X.dtype, Ya.dtype, Va.dtype)
    g, scalar = _v.check_gamma(gamma, Ya.shape[0], np.float64)
    check_gamma_dtype(g, dtype)
    gam = float(g[0]) if scalar else g
    kw = {"kernel": kernel, "gamma": gam, "degree": deg, "coef0": c0, "n_threads": nt,
          "length_scale": _v.check_length_scale(length_scale, X.shape[1])}
    if Va.ndim == 1:
        return da.map_blocks(_matvec_block, X, Ya, Va, kw, dtype=dtype, drop_axis=1, meta=np.empty((0,), dtype))
    return da.map_blocks(_matvec_block, X, Ya, Va, kw, dtype=dtype, chunks=(X.chunks[0], (Va.shape[1],)),
                         meta=np.empty((0, 0), dtype))


def _matvec_block(Xb, Y, V, kw, block_info=None):
    try:
        return _gram_matvec(Xb, Y, V, **kw)
    except ValueError as exc:
        raise_global(exc, (Xb, block_offset(block_info), "X"))
        raise  # not reached

