"""Kernel ridge of dask arrays by Falkon's solver (``solver="nystrom-pcg"``): every
product with ``K_nm`` is one map-reduce of the in-memory fused per-block passes, the CG
runs on the client.  The argument checks, the landmark draw and the finish (the model,
the convergence warning) are the in-memory ones (:mod:`fastrbf.models.ridge`,
:mod:`fastrbf.models.falkon`); only the passes are here.
"""

import dataclasses
from typing import cast

import dask
import numpy as np
from dask import delayed
from numpy.typing import ArrayLike

from .. import _progress
from .. import _validation as _v
from .. import models as _m
from .._progress import ProgressArg
from .._typing import KernelArg
from ..kernels import check_kernel, check_params, kernel_value
from ..kernels import gram as _gram
from ..models import common as _mc
from ..models import falkon
from ..models import ridge as _mr
from .common import (
    Data,
    add_parts,
    aligned,
    as_in_memory,
    as_rows,
    check_kind,
    check_threads,
    checked_targets,
    f64_block,
    in_memory,
    is_dask,
    offsets,
    row_blocks,
    rows_at,
    tree,
)


# ---------------------------------------------------------------- kernel ridge (Nystroem, PCG)
def _targets_block(Yb, offset, mu):
    T, _ = _mc.as_targets(checked_targets(Yb, offset))
    if mu is not None:
        T -= mu
    return T


def _col_sums(Yb, offset):
    T, _ = _mc.as_targets(checked_targets(Yb, offset))
    return (T.sum(axis=0),)


def _cross_block(Xb, T, L, params):
    return (falkon.cross_t(Xb, L, T, **params),)


def _normal_block(Xb, L, V, params):
    return (falkon.normal_matvec(Xb, L, V, **params),)


def kernel_ridge(X: Data, Y: Data, *, gamma: float, alpha: float, kernel: KernelArg = "gaussian", solver: str = "nystrom-pcg",
                 n_landmarks: int | None = None, landmarks: str | ArrayLike = "uniform", tol: float = 1e-7,
                 max_iter: int = 100, seed: int | np.random.Generator | None = None, fit_intercept: bool = False,
                 degree: int = 3, coef0: float = 1.0, n_threads: int | None = 1,
                 progress: ProgressArg = False, length_scale: ArrayLike | None = None) -> _m.KernelModel:
    """Nystroem kernel ridge of dask arrays by Falkon's preconditioned CG: every product
    with ``K_nm`` is one map-reduce of per-block fused passes, the CG runs on the client.

    Parameters
    ----------
    X : dask.array.Array of shape (n, d), chunked by rows
        Its blocks are converted to float64 and persisted for the run (one read of
        ``X``; persist ``X`` yourself if it is used again).
    Y : dask.array.Array or array_like of shape (n,) or (n, k)
        The same row chunks as ``X``.
    gamma, alpha, kernel, n_landmarks, tol, max_iter, seed, fit_intercept, degree, coef0 :
        As in :func:`fastrbf.kernel_ridge` with ``solver="nystrom-pcg"`` (the only
        solver here).
    landmarks : {"uniform", "kmeans", "rpcholesky", "auto"} or array_like of shape (m, d)
        Chosen on the client with the same random draws as in memory: for a given
        ``seed`` the landmarks, hence the model, equal the in-memory ones (to rounding).
    n_threads : int, default 1
        Threads of each task.
    progress : bool, logging.Logger or callable, default False
        Report the conjugate-gradient iterations (one dask compute each) and the
        k-means of ``landmarks="kmeans"``, as :func:`fastrbf.kernel_ridge` (task
        ``"dask.kernel_ridge"``).

    length_scale : float or array_like of shape (d,), optional
        Per-feature widths, as in the in-memory fit (the blocks are rescaled lazily).

    Returns
    -------
    KernelModel

    Examples
    --------
    >>> import numpy as np, dask, dask.array as da, fastrbf
    >>> from fastrbf import dask as fd
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((2000, 2))
    >>> y = np.sin(4 * X[:, 0])
    >>> with dask.config.set(scheduler="threads"):
    ...     m = fd.kernel_ridge(da.from_array(X, chunks=(500, 2)), y, gamma=2.0, alpha=1e-3, n_landmarks=100,
    ...                         seed=0)
    >>> ref = fastrbf.kernel_ridge(X, y, gamma=2.0, alpha=1e-3, solver="nystrom-pcg", n_landmarks=100, seed=0)
    >>> m.converged, bool(np.abs(m.predict(X) - ref.predict(X)).max() < 1e-6)  # to the CG tolerance
    (True, True)
    """
    _v.check_choice(solver, "solver", ("nystrom-pcg",),
                    text='"nystrom-pcg" on dask arrays (the n x n Cholesky solve does not scale out)')
    if length_scale is not None:  # the fit on the rescaled data (lazily, blockwise); the landmarks back in units
        Xr = as_rows(X)
        ls = _v.check_length_scale(length_scale, Xr.shape[1])
        Lr = landmarks if isinstance(landmarks, str) else _v.scale_features(in_memory(landmarks, "landmarks"), ls,
                                                                            np.float64, "landmarks")
        model = kernel_ridge((Xr / ls).astype(Xr.dtype), Y, gamma=gamma, alpha=alpha, kernel=kernel, solver=solver,
                             n_landmarks=n_landmarks, landmarks=Lr, tol=tol, max_iter=max_iter, seed=seed,
                             fit_intercept=fit_intercept, degree=degree, coef0=coef0, n_threads=n_threads,
                             progress=progress)
        return dataclasses.replace(model, centers=model.centers * ls, length_scale=ls)
    nt = check_threads(n_threads)
    rep = _progress.reporter(progress, "dask.kernel_ridge")
    entry = check_kernel(kernel)
    X = as_rows(X)
    n, d = X.shape
    if not is_dask(Y):
        Y = _v.check_targets(as_in_memory(Y, "Y"), n)
    Yd = aligned(Y, X, "Y")
    check_kind(Yd.dtype, "Y")
    g = _mc.check_scalar_gamma(gamma)
    deg, c0 = check_params(entry, degree, coef0)
    a, m = _mr.check_pcg_args(kernel, alpha, n, tol, max_iter, landmarks, n_landmarks)
    rng = _v.check_seed(seed)
    L = None
    if m is None:
        La = in_memory(landmarks, "landmarks")
        m = _mr.check_landmark_array(La, d, n_landmarks)
        L = _v.to_dtype(La, np.float64)
    k = 1 if Yd.ndim == 1 else Yd.shape[1]
    single = Yd.ndim == 1
    # -- the data: float64 blocks persisted for the run (the CG reads them max_iter times)
    xb = list(dask.persist(*[delayed(f64_block, pure=False)(b, off)
                             for b, off in zip(row_blocks(X), offsets(X)[:-1], strict=True)]))
    yb = row_blocks(Yd)
    if L is None:  # the in-memory draws, rows gathered from the blocks
        how = cast(str, landmarks)
        idx = falkon.landmark_rows(n, m, how, rng)
        rows = np.concatenate(dask.compute(*xb)) if idx is None else rows_at(xb, offsets(X), idx)
        L = falkon.landmarks_from_rows(rows, m, how, rng, None, rep,
                                       {"kernel": kernel_value(entry), "gamma": g, "degree": deg, "coef0": c0})
    mu = None
    intercept = np.zeros(k)
    if fit_intercept:
        intercept = tree([delayed(_col_sums, pure=False)(b, off) for b, off in zip(yb, offsets(X)[:-1], strict=True)],
                          add_parts).compute()[0] / n
        mu = intercept
    params = {"kernel": kernel, "gamma": g, "degree": deg, "coef0": c0, "n_threads": nt}
    Ld, pd = delayed(L), delayed(params)
    tb = [delayed(_targets_block, pure=False)(b, off, mu) for b, off in zip(yb, offsets(X)[:-1], strict=True)]
    rhs = tree([delayed(_cross_block, pure=False)(x, t, Ld, pd) for x, t in zip(xb, tb, strict=True)], add_parts).compute()[0]
    Kmm = _gram(L, kernel=kernel, gamma=g, degree=deg, coef0=c0)

    def matvec(V):
        Vd = delayed(np.ascontiguousarray(V))
        return tree([delayed(_normal_block, pure=False)(x, Ld, Vd, pd) for x in xb], add_parts).compute()[0]

    res = falkon.falkon_solve(matvec, rhs, Kmm, a, n, tol=float(tol), max_iter=int(max_iter), progress=rep)
    return _mr.pcg_model(res, L, scale=1.0, tol=tol, kernel=kernel_value(entry), gamma=g, degree=deg, coef0=c0,
                         intercept=intercept, dtype=_v.result_dtype(X.dtype, Yd.dtype), single_output=single, stacklevel=3)




