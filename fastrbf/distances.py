"""Pairwise squared Euclidean distances.

Two exact-enough paths, chosen by the number of features ``d``:

- **direct** (``d`` below :data:`GEMM_MIN_FEATURES`): parallel numba kernel summing
  ``(x_k - y_k)**2``; relative error at most ``(d + 2) eps`` for every entry, whatever
  the offset of the data.
- **certified GEMM** (large ``d``, where the flops belong in BLAS): the rows are
  centred on the mean of ``Y`` (in float64), ``||x||^2 + ||y||^2 - 2 x.y`` comes from
  DGEMM, and every entry whose cancellation could exceed the error target is
  recomputed by direct differences from the original data.  The test is the rigorous
  floating-point bound of the expansion: the computed value ``D`` is kept only when
  ``D > tau (||x||^2 + ||y||^2)`` with ``tau = (2 d + 8) eps64 / rtol_target``,
  ``rtol_target = 2.5e-13`` (float64 result) or ``2.5e-6`` (float32 result, for which
  the GEMM runs in float64 on an upcast copy).  So both paths meet the same accuracy:
  1e-12 relative (float64), 1e-5 (float32), identical rows exactly 0.

``Y=None`` computes one triangle and mirrors it: the result is exactly symmetric with
exact zeros on the diagonal.
"""

import numpy as np

from . import _threads
from . import _validation as _v
from ._jit import distances as _jd
from ._jit import kernels as _jk
from ._typing import ArrayLike, FloatArray, Threads

#: from this many features on, float64 distances go through the certified GEMM path
GEMM_MIN_FEATURES = {np.dtype(np.float64): 64, np.dtype(np.float32): 64}

#: row-block budget (float64 elements) of the float64 scratch used for float32 results
GEMM_BLOCK_ELEMENTS = 1 << 21

_RTOL_TARGET = {np.dtype(np.float64): 2.5e-13, np.dtype(np.float32): 2.5e-6}
_NO_KERNEL = -1


def _consts(dtype, coef0=0.0):
    return np.array([1.0, 0.5, coef0, 0.0], dtype=dtype)


def _prepare(X, Y, name_x="X", name_y="Y"):
    """Validate X (and Y) and return them converted to the common result dtype."""
    Xa = _v.check_data(X, name_x)
    Ya = None if Y is None else _v.check_data(Y, name_y)
    if Ya is not None:
        _v.check_features(Xa, Ya, name_x, name_y)
    dtype = _v.result_dtype(Xa, Ya)
    Xc = _v.to_dtype(Xa, dtype)
    Yc = None if Ya is None else _v.to_dtype(Ya, dtype)
    return Xc, Yc, dtype


def _allocate(out, shape, dtype, inputs, what):
    out = _v.check_out(out, shape, dtype, inputs)
    if out is None:
        nbytes = int(np.prod(shape)) * dtype.itemsize
        _v.check_memory(
            nbytes,
            f"{what}: the {shape[0]} x {shape[1]} {dtype} result",
            "process `X` in row chunks (each call with a slice of the rows), pass a "
            "preallocated `out=`, or use `gram_matvec` if you only need K @ V.",
        )
        out = np.empty(shape, dtype=dtype)
    return out


def _use_gemm(dtype, d):
    return d >= GEMM_MIN_FEATURES[dtype]


def pairwise(X, Y, code, g, c, degree, symmetric, out, n_threads, mirror=True):
    """Fill ``out`` with phi(squared distances) (``code < 0``: the distances).

    ``X``, ``Y`` are validated arrays of ``out.dtype`` (``Y`` may be ``X`` itself);
    ``symmetric`` means ``Y is X`` and one gamma for all columns; then ``mirror=False``
    leaves the strict lower triangle unwritten (for a consumer of the upper one only).
    """
    dtype = out.dtype
    d = X.shape[1]
    if _use_gemm(dtype, d):  # (the block kernels below apply the work threshold themselves)
        _gemm_path(X, Y, code, g, c, degree, symmetric, out, n_threads, mirror)
        return out
    Yt = np.ascontiguousarray(Y.T)
    if symmetric:
        _jd.pairwise_upper.run(n_threads, X, Yt, False, _jk.phi(code), g, c, degree, out)
        if mirror:
            _jd.mirror_upper.run(n_threads, out)
    else:
        _jd.pairwise_rows.run(n_threads, X, Yt, False, _jk.phi(code), g, c, degree, out)
    return out


def _gemm_path(X, Y, code, g, c, degree, symmetric, out, n_threads, mirror=True):
    dtype = out.dtype
    n, d = X.shape
    m = Y.shape[0]
    nt = _threads.for_work(n * m * (d + 8), n_threads)
    mu = Y.mean(axis=0, dtype=np.float64)
    Xc = np.subtract(X, mu, dtype=np.float64)
    Yc = Xc if symmetric else np.subtract(Y, mu, dtype=np.float64)
    nx = np.einsum("ij,ij->i", Xc, Xc)
    ny = nx if symmetric else np.einsum("ij,ij->i", Yc, Yc)
    eps = np.finfo(np.float64).eps
    tau = (2 * d + 8) * eps / _RTOL_TARGET[dtype]
    # GEMM by fixed row blocks (their size depends on the shape only), each block one
    # single-threaded BLAS call followed by a serial numba pass that finalises it, the
    # blocks spread over Python worker threads: bitwise the same for any thread count
    # (a multi-threaded GEMM rounds by its own split), and BLAS's and numba's idle
    # threads never spin against each other.  float64 results are computed in place;
    # float32 ones through a float64 scratch block.
    rows = max(1, min(n, GEMM_BLOCK_ELEMENTS // m))
    direct = dtype == np.float64
    phi = _jk.phi(code)

    def work(lo, hi):
        G = None if direct else np.empty((min(rows, hi - lo), m), dtype=np.float64)
        for r0 in range(lo, hi, rows):
            r1 = min(hi, r0 + rows)
            Gb = out[r0:r1] if G is None else G[: r1 - r0]
            np.matmul(Xc[r0:r1], Yc.T, out=Gb)
            _jd.finalize_block(Gb, nx, ny, X, Y, r0, tau, phi, g, c, degree, symmetric, out[r0:r1])

    with _threads.serial_blas():
        _threads.map_ranges(work, n, nt, align=rows)
    if symmetric and mirror:
        _jd.mirror_upper.run(nt, out)


def sqdist(X: ArrayLike, Y: ArrayLike | None = None, *, out: FloatArray | None = None,
           n_threads: Threads = None) -> FloatArray:
    """Pairwise squared Euclidean distances ``D[i, j] = ||X[i] - Y[j]||^2``.

    Parameters
    ----------
    X : array_like of shape (n, d)
        Rows are points.  float32 is kept when every input is float32; integers and
        bools become float64.
    Y : array_like of shape (m, d), optional
        Defaults to ``X``: the result is then exactly symmetric with a zero diagonal and
        only one triangle is computed.
    out : ndarray of shape (n, m), optional
        C-contiguous buffer of the result dtype to write into; it is returned.
    n_threads : int, optional
        Threads to use; ``None`` = the ambient default (all cores), ``-1`` = all cores.

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
    """
    Xc, Yc, dtype = _prepare(X, Y)
    symmetric = Yc is None
    Yc = Xc if symmetric else Yc
    out = _allocate(out, (Xc.shape[0], Yc.shape[0]), dtype, (X, Y), "sqdist")
    g = np.ones(1, dtype=dtype)  # unused without a kernel
    return pairwise(Xc, Yc, _NO_KERNEL, g, _consts(dtype), 1, symmetric, out, n_threads)
