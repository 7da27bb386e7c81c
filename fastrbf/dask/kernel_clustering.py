"""Kernel k-means of dask arrays by the Nystroem method (:func:`kernel_kmeans`): the
landmarks are chosen on the client from rows drawn as in memory, each block's
rank-restricted Nystroem features are made blockwise, and :func:`fastrbf.dask.kmeans`
clusters them.  The exact method needs every pair of points: it does not scale out.
"""

import dask.array as da
import numpy as np

from .. import _progress
from .. import _validation as _v
from .._progress import ProgressArg
from .._typing import KernelArg
from ..approx import nystroem
from ..kernels import kernel_value
from ..models.kernel_clustering import (
    LANDMARK_POOL,
    KernelKMeansResult,
    check_args,
    landmark_counts,
    nystroem_features,
    rank_restricted,
)
from .cluster import kmeans_named
from .common import Data, as_rows, check_threads


def _block_features(Xb, L, Q, kw, nt):
    return nystroem_features(L, Q, kw, Xb, nt)


def kernel_kmeans(X: Data, n_clusters: int, *, kernel: KernelArg = "gaussian", gamma: float = 1.0, degree: int = 3,
                  coef0: float = 1.0, sample_weight: Data | None = None, n_init: int = 1, max_iter: int = 300,
                  tol: float = 1e-4, empty: str = "relocate", n_landmarks: int | None = None,
                  landmark_method: str = "rpcholesky", n_components: int | None = None,
                  seed: int | np.random.Generator | None = None, n_threads: int | None = 1,
                  progress: ProgressArg = False) -> KernelKMeansResult:
    """Kernel k-means of a dask array: :func:`fastrbf.kernel_kmeans` with
    ``method="nystroem"``, the features made blockwise and clustered by
    :func:`fastrbf.dask.kmeans` (k-means|| seeding).

    Parameters
    ----------
    X : dask.array.Array of shape (n, d), chunked by rows
    n_clusters : int
    kernel, gamma, degree, coef0, n_init, max_iter, tol, empty, n_components :
        As in :func:`fastrbf.kernel_kmeans`.
    sample_weight : dask.array.Array or array_like of shape (n,), optional
        Row chunks as ``X``.
    n_landmarks : int, optional
        Default ``min(n, 1000)``.
    landmark_method : {"rpcholesky", "random"}
        Drawn on the client as in memory: for a given ``seed`` the landmarks and the
        features equal those of :func:`fastrbf.kernel_kmeans` (randomly pivoted
        Cholesky among ``20 n_landmarks`` rows drawn at random, or ``n_landmarks`` rows
        drawn at random).
    seed : None, int >= 0 or numpy.random.Generator
    n_threads : int, default 1
        Threads of each task.
    progress : bool, logging.Logger or callable, default False
        Report the k-means|| rounds and the Lloyd iterations (task
        ``"dask.kernel_kmeans"``).

    Returns
    -------
    KernelKMeansResult
        ``method="nystroem"``; ``labels`` is a dask array; ``predict`` runs in memory.

    Examples
    --------
    >>> import numpy as np, dask, dask.array as da
    >>> from fastrbf import dask as fd
    >>> t = np.linspace(0, 2 * np.pi, 500, endpoint=False)
    >>> X = np.r_[0.2 * np.c_[np.cos(t), np.sin(t)], 2.0 * np.c_[np.cos(t), np.sin(t)]]
    >>> with dask.config.set(scheduler="threads"):
    ...     res = fd.kernel_kmeans(da.from_array(X, chunks=(250, 2)), 2, gamma=2.0, n_landmarks=100, seed=0)
    ...     labels = res.labels.compute()
    >>> len(set(labels[:500])), len(set(labels[500:])), bool(labels[0] != labels[500])
    (1, 1, True)
    """
    nt = check_threads(n_threads)
    X = as_rows(X)
    n, d = X.shape
    K, entry, deg, c0, g, tol = check_args(n, n_clusters, kernel, gamma, degree, coef0, n_init, max_iter, tol, empty)
    lm = _v.check_choice(landmark_method, "landmark_method", ("rpcholesky", "random"),
                         text="'rpcholesky' or 'random' on dask arrays")
    M, r = landmark_counts(n, K, n_landmarks, n_components)
    rng = _v.check_seed(seed)
    rep = _progress.reporter(progress, "dask.kernel_kmeans", runs="init")
    kw = {"kernel": kernel_value(entry), "gamma": g, "degree": deg, "coef0": c0}
    # the rows the landmarks come from, drawn as landmark_map / nystroem draw them in memory
    if lm == "rpcholesky":
        idx = np.sort(rng.choice(n, size=LANDMARK_POOL * M, replace=False)) if n > LANDMARK_POOL * M else None
        pool = np.asarray((X if idx is None else X[idx]).compute(), dtype=np.float64)
        _v.check_finite(pool, "X")
        ny = nystroem(pool, M, method="rpcholesky", seed=rng, n_threads=nt, **kw)
    else:
        ids = np.sort(rng.choice(n, size=M, replace=False))
        L = np.asarray(X[ids].compute(), dtype=np.float64)
        _v.check_finite(L, "X")
        ny = nystroem(L, L, n_threads=nt, **kw)
    Q = rank_restricted(ny.landmarks, r, kw, nt)
    dtype = _v.result_dtype(X.dtype)
    F = da.map_blocks(_block_features, X, ny.landmarks, Q, kw, nt, dtype=dtype, chunks=(X.chunks[0], (Q.shape[1],)))
    km = kmeans_named(F, K, name="n_clusters", n_init=n_init, max_iter=max_iter, tol=tol, seed=rng,
                      sample_weight=sample_weight, empty=empty, n_threads=nt, progress=rep)
    return KernelKMeansResult(km.labels, km.inertia, km.n_iter, km.converged, "nystroem", kw["kernel"], g, deg, c0,
                              dtype, landmarks=ny.landmarks, projection=Q, centers=km.centers)
