"""Pairwise squared Euclidean distances.

Two exact-enough paths, chosen by the number of features ``d`` (see
:mod:`fastrbf._pairwise`, the engine shared with the Gram matrices):

- **direct** (few features): a numba kernel summing ``(x_k - y_k)**2``; relative error
  at most ``(d + 2) eps`` for every entry, whatever the offset of the data.
- **certified GEMM** (many features, where the flops belong in BLAS): the norm
  expansion from DGEMM on centred rows, every entry whose cancellation could exceed the
  error target recomputed by direct differences.

Both meet the same accuracy: 1e-12 relative (float64), 1e-5 (float32), identical rows
exactly 0.  Sparse input (``scipy.sparse``, when ``X`` or ``Y`` is) takes a third path
with the same accuracy: the norm expansion with the dot products from SciPy's sparse
product, the entries its error bound does not cover recomputed by direct differences
over the stored columns (rows are not centred: that would fill them).

``Y=None`` computes one triangle and mirrors it: the result is exactly symmetric with
exact zeros on the diagonal.
"""

from . import _pairwise as _pw
from . import _validation as _v
from ._typing import ArrayLike, FloatArray, Threads
from .cuda.arrays import on_device


def sqdist(X: ArrayLike, Y: ArrayLike | None = None, *, out: FloatArray | None = None,
           n_threads: Threads = None, length_scale: ArrayLike | None = None) -> FloatArray:
    """Pairwise squared Euclidean distances ``D[i, j] = ||X[i] - Y[j]||^2``.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n, d)
        Rows are points.  float32 is kept when every input is float32; integers and
        bools become float64.  Sparse input (any ``scipy.sparse`` format, matrix or
        array) is never densified: see the module docstring.
    Y : array_like or scipy.sparse matrix of shape (m, d), optional
        Defaults to ``X``: the result is then exactly symmetric with a zero diagonal and
        only one triangle is computed.
    out : ndarray of shape (n, m), optional
        C-contiguous buffer of the result dtype to write into; it is returned.
    n_threads : int, optional
        Threads to use; ``None`` = the ambient default (all cores), ``-1`` = all cores.
    length_scale : float or array_like of shape (d,), optional
        Per-feature scales: ``D[i, j] = sum_k ((X[i, k] - Y[j, k]) / length_scale_k)**2``
        (each feature divided by its scale first).

    Returns
    -------
    D : ndarray of shape (n, m)
        float64 entries are within 1e-12 relative of the exact value, float32 within
        1e-5, on any data (far from the origin, near-duplicate rows): the norm
        expansion alone is never trusted (see the module docstring).

    Raises
    ------
    ValueError
        Non-finite, empty, non-2-D input, mismatched features, a bad ``out``.
    TypeError
        Complex, object or string input.
    MemoryError
        When the result would not fit in the memory available (before allocating).

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import sqdist
    >>> X = np.array([[0.0, 0.0], [3.0, 4.0]])
    >>> sqdist(X)
    array([[ 0., 25.],
           [25.,  0.]])
    >>> sqdist(X, np.array([[0.0, 1.0]], dtype=np.float32)).dtype
    dtype('float64')
    >>> sqdist(X, length_scale=[1.0, 2.0])  # 3**2 + (4 / 2)**2
    array([[ 0., 13.],
           [13.,  0.]])
    """
    if on_device(X, Y, out):
        from .cuda import pairwise as _cuda

        return _cuda.sqdist(X, Y, out=out, length_scale=length_scale)
    Xc, Yc, dtype, sparse = _pw.prepare_scaled(X, Y, length_scale)
    symmetric = Yc is None
    Yc = Xc if symmetric else Yc
    inputs = (Xc.data, Yc.data) if sparse else (X, Y)
    out = _pw.allocate(out, (Xc.shape[0], Yc.shape[0]), dtype, inputs, "sqdist")
    if sparse:
        _v.check_magnitude(Xc, "X")
        _v.check_magnitude(Yc, "Y")
        return _pw.sparse_pairwise(Xc, Yc, _pw.distances_spec(dtype), symmetric, out, n_threads)
    return _pw.pairwise(Xc, Yc, _pw.distances_spec(dtype), symmetric, out, n_threads)
