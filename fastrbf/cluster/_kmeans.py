"""k-means: Lloyd assignment and update steps, and a complete, deterministic ``kmeans``.

Decisions (see the module docstring of :mod:`fastrbf._jit.cluster.lloyd` for the kernels):

- Assignment is exact: for small ``K * d`` by direct differences in the data's dtype;
  otherwise float32 values rank the centres (up to ``F32_DIRECT_MAX_D`` features: direct
  float32 distances of float32 data or of the centred float32 copy of float64 data, else
  a GEMM on the centred copy) and every centre within the rigorous error bound of the
  best is recomputed in float64: the labels are the argmin of the float64 distances
  (ties to the lowest index, as ``np.argmin``), the same bits on every path
  (measurements: :mod:`fastrbf._jit.cluster.lloyd`).
- The update adds one partial (sum, weight) slot per fixed chunk of rows in chunk
  order: bitwise the same result for any thread count.  In ``kmeans`` each chunk's
  slot is filled right after its rows are assigned, by the same worker thread, and
  chunks are handed out one at a time (one parallel step per iteration; a core that
  is busy with other work takes fewer chunks).
- The Lloyd steps run serial ``nogil`` numba kernels (and single-threaded BLAS) over
  row ranges on plain Python worker threads (:func:`fastrbf._threads.map_ranges`), not
  in numba's OpenMP pool: BLAS called from several numba threads contended, and idle
  OpenMP threads spinning between the BLAS and numba steps of an iteration slowed
  both.
- ``kmeans(..., algorithm="bounded")`` skips the rows whose label Hamerly's bounds
  prove unchanged (:mod:`fastrbf.cluster._bounded`): the same labels, centres, ``n_iter``
  and inertia, bit for bit; "auto" uses it for many clusters (``K * d`` above the
  direct path's limit) and at least 50 iterations allowed.
- On the float32-ranked paths (``direct32``, ``centred32``) the iterations, bounded or
  brute force, run as one compiled loop that the threads share
  (:class:`fastrbf.cluster._bounded.FitLoop`): no Python and no thread wake-up between
  iterations (bounded, 20000 x 16, K = 64, 110 iterations on 2 cores: 54 -> 39-50 ms).
- ``kmeans`` follows scikit-learn's Lloyd loop (same labels, ``n_iter`` and centres on
  the same initial centres): stop when no label changes, or when the summed squared
  centre shift is <= ``tol * mean(var(X, axis=0))`` (scikit-learn's scaling of ``tol``);
  the final labels are those of the final centres.
- Empty clusters (``empty="relocate"``): each empty cluster takes, in order of
  decreasing distance to its current centre (ties: lowest index), a point that is not
  the only point of its cluster; the sums move with the point's weight.
- Any magnitude of finite data works: when the squared distances (or, on the float32
  GEMM path, its ranking values) of the data could overflow, or would lose precision
  to underflow, ``lloyd_assign``, ``lloyd_update`` and ``kmeans`` work on the data
  multiplied by a power of two (exact: the same labels and, scaled back, the same
  centres bit for bit), scaled no more than needed; likewise the sample weights when
  they are huge or tiny.  Labels and centres are then always correct; a reported
  squared distance or inertia whose true value exceeds the largest float of the dtype
  is ``inf`` (its correctly rounded value).  With ``M`` the largest magnitude of the
  data, only squared distances below about ``M**2 * 2**-2090`` (float32 data, or the
  float32 GEMM assignment of many centres: ``M**2 * 2**-1190``; float32 distances:
  ``M**2 * 2**-265``) can be lost to underflow - data spanning hundreds of orders of
  magnitude.  The scale follows ``X``; initial centres (``init``, ``centers``) far
  larger than the data only make it scale down as far as they need.
- ``X`` may be a ``scipy.sparse`` matrix or array, never densified (:mod:`fastrbf.cluster._sparse`).
- ``kmeans`` refuses, before any clustering, fewer distinct points (with weight > 0)
  than clusters, whatever ``init`` is: it looks for ``n_clusters`` distinct rows in
  growing prefixes of the data (cheap unless the data hold very few distinct rows).
"""

import time
from dataclasses import dataclass

import numpy as np

from .. import _progress, _threads
from .. import _validation as _v
from .._jit.cluster import bounded_fit as _jf
from .._jit.cluster import lloyd as _jl
from .._progress import ProgressArg
from .._scaling import ldexp, ldexp_float, max_abs, shift_for, weight_shift
from .._sparse import CSRRows, check_csr, is_sparse
from .._typing import ArrayLike, FloatArray, IntArray, Seed, Threads
from ..cuda.arrays import on_device
from . import _assign
from ._assign import Assigner
from ._bounded import RANKED, BoundedAssigner, bounds_pay
from ._rules import (
    best_of_inits,
    check_algorithm,
    check_centers,
    check_enough_points,
    check_init,
    check_labels,
    check_lloyd_args,
    check_n_clusters,
    check_weights,
    lloyd_centers,
    lloyd_stop,
    lloyd_tolerance,
    partial_slots,
    reduce_slots,
)
from ._seeding import greedy_kmeans_plusplus, has_distinct, random_init, too_few_distinct
from ._seeding import kmeans_plusplus as kmeans_plusplus  # public, re-exported
from ._sparse import SparseAssigner, assign_csr, relocate_empty_csr, sparse_sums


def _kmeans_plusplus(X, K, w, rng, n_threads, name="n_clusters", rep=_progress.OFF):
    """The initial centres of ``kmeans``'s k-means++ (those of :func:`kmeans_plusplus`)."""
    return greedy_kmeans_plusplus(X, K, w, rng, n_threads, name, rep)[0]


class EmptyClusterError(RuntimeError):
    """Raised by :func:`kmeans` with ``empty="raise"`` when a cluster loses all its points.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import EmptyClusterError, kmeans
    >>> X = np.array([[0.0], [1.0], [10.0], [11.0]])
    >>> try:
    ...     kmeans(X, 2, init=np.array([[0.0], [100.0]]), empty="raise")
    ... except EmptyClusterError as err:
    ...     print("empty")
    empty
    """


@dataclass(frozen=True)
class KMeansResult:
    """Result of :func:`kmeans` (arrays only; picklable).

    Attributes
    ----------
    centers : ndarray of shape (n_clusters, d)
    labels : ndarray of shape (n,), int64
    inertia : float
        Sum of squared distances to the nearest centre (weighted).
    n_iter : int
        Lloyd iterations run.
    converged : bool

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import kmeans
    >>> res = kmeans(np.array([[0.0], [1.0], [10.0], [11.0]]), 2, seed=0)
    >>> sorted(res.centers[:, 0].tolist()), res.inertia
    ([0.5, 10.5], 1.0)
    """

    centers: np.ndarray
    labels: np.ndarray
    inertia: float
    n_iter: int
    converged: bool


def lloyd_assign(X: ArrayLike, centers: ArrayLike, *, n_threads: Threads = None) -> tuple[IntArray, FloatArray]:
    """Label each row of ``X`` with its nearest centre.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n, d)
    centers : array_like of shape (K, d)
    n_threads : int, optional

    Returns
    -------
    labels : ndarray of shape (n,), int64
        Index of the nearest centre; ties go to the lowest index, as ``np.argmin``.
        Always the argmin of the exact distances (see the module docstring).
    min_sqdist : ndarray of shape (n,)
        Squared distance to that centre (direct differences), in the result dtype;
        ``inf`` where it exceeds the largest float of that dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import lloyd_assign
    >>> X = np.array([[0.0, 0.0], [0.9, 0.0], [5.0, 5.0]])
    >>> labels, d2 = lloyd_assign(X, np.array([[0.0, 0.0], [5.0, 4.0]]))
    >>> labels.tolist(), d2.tolist()
    ([0, 0, 1], [0.0, 0.81, 1.0])
    """
    if on_device(X, centers):
        from ..cuda import cluster as _cuda

        return _cuda.lloyd_assign(X, centers)
    sparse = is_sparse(X)
    Xa = check_csr(X, "X") if sparse else _v.check_data(X, "X")
    Ca = check_centers(centers, Xa.shape[1])
    _threads.resolve(n_threads)
    dtype = _v.result_dtype(Xa, Ca)
    if sparse:
        return assign_csr(Xa, Ca, dtype, n_threads)
    Xc, Cc = _v.to_dtype(Xa, dtype), _v.to_dtype(Ca, dtype)
    n, d = Xc.shape
    t = shift_for(max_abs(Xc), dtype, d, f32_ranking=Cc.shape[0] * d > _assign.DIRECT_MAX_KD[dtype], M_other=max_abs(Cc))
    Xc, Cc = ldexp(Xc, -t), ldexp(Cc, -t)
    labels = np.empty(n, dtype=np.int64)
    mind = np.empty(n, dtype=np.float64)
    Assigner(Xc, n_threads)(Cc, labels, mind)
    return labels, ldexp(mind, 2 * t, dtype)


def _sums(X, labels, K, w, n_threads):
    part, partw = partial_slots(X, K)
    nch = part.shape[0]
    _threads.map_ranges(lambda lo, hi: _jl.update_partials(X, labels, w, _jl.UPDATE_CHUNK, lo, hi, part, partw),
                        nch, n_threads)
    return reduce_slots(part, partw)


def lloyd_update(X: ArrayLike, labels: ArrayLike, n_clusters: int, *, sample_weight: ArrayLike | None = None,
                 n_threads: Threads = None) -> tuple[FloatArray, FloatArray]:
    """Weighted mean of the rows of each cluster.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n, d)
    labels : array_like of shape (n,), integers in ``[0, n_clusters)``
    n_clusters : int
    sample_weight : array_like of shape (n,), optional
        Non-negative weights, not all zero.  Default: ones.
    n_threads : int, optional

    Returns
    -------
    centers : ndarray of shape (n_clusters, d)
        Result dtype of ``X``; rows of empty clusters (zero total weight) are NaN.
    counts : ndarray of shape (n_clusters,), float64
        Summed weight of each cluster (``inf`` only if it exceeds the float64 range).

    Sums are accumulated in float64 per chunk of 8192 rows and the chunks added in
    order: bitwise the same for any thread count.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import lloyd_update
    >>> X = np.array([[0.0, 0.0], [2.0, 0.0], [5.0, 5.0]])
    >>> centers, counts = lloyd_update(X, [0, 0, 1], 2)
    >>> centers.tolist(), counts.tolist()
    ([[1.0, 0.0], [5.0, 5.0]], [2.0, 1.0])
    """
    if on_device(X, labels, sample_weight):
        from ..cuda import cluster as _cuda

        return _cuda.lloyd_update(X, labels, n_clusters, sample_weight)
    sparse = is_sparse(X)
    Xa = check_csr(X, "X") if sparse else _v.check_data(X, "X")
    n, d = Xa.shape
    K = _v.check_int(n_clusters, "n_clusters", 1)
    lab = check_labels(labels, n, K)
    w = check_weights(sample_weight, n)
    _threads.resolve(n_threads)
    nch = (n + _jl.UPDATE_CHUNK - 1) // _jl.UPDATE_CHUNK
    _v.check_memory(8 * K * (d + 1) * (nch + 3), f"lloyd_update with n_clusters={K} and {d} features",
                    "pass a smaller `n_clusters` (the largest label + 1 is enough).")
    dtype = _v.result_dtype(Xa)
    Xc = Xa.astype(dtype) if sparse else _v.to_dtype(Xa, dtype)
    t = shift_for(max_abs(Xc), np.float64, d)  # the sums are float64
    tw = weight_shift(w)
    if sparse:
        sums, wsum = sparse_sums(Xc.scaled(-t), lab, K, ldexp(w, -tw), n_threads)
    else:
        sums, wsum = _sums(ldexp(Xc, -t), lab, K, ldexp(w, -tw), n_threads)
    with np.errstate(invalid="ignore", divide="ignore"):
        centers = sums / wsum[:, None]
    centers[wsum == 0] = np.nan
    return ldexp(centers, t, dtype), ldexp(wsum, tw)


def raise_empty(wsum, iteration):
    """Raise :class:`EmptyClusterError` for the clusters of weight 0 at ``iteration``."""
    raise EmptyClusterError(
        f"cluster(s) {np.flatnonzero(wsum == 0).tolist()} became empty at iteration {iteration}; "
        f"use empty='relocate' to move them to the farthest points."
    )


def _lloyd(X, C, w, max_iter, tol_abs, empty, assigner, n_threads, rep=_progress.OFF, shift_exp=0, bounded=False):
    n = X.shape[0]
    K = C.shape[0]
    rep.start("lloyd", max_iter)
    direct = K * X.shape[1] <= _assign.DIRECT_MAX_KD[X.dtype]
    sparse = isinstance(X, CSRRows)
    if not (direct or sparse) and assigner.path(K, X.dtype) in RANKED:
        return _lloyd_compiled(X, C, w, max_iter, tol_abs, empty, BoundedAssigner(assigner, direct), rep, shift_exp,
                               not bounded)
    if bounded:
        assigner = BoundedAssigner(assigner, direct)
    elif n <= _jl.UPDATE_CHUNK and direct and not sparse:
        # small problem: the whole loop in one serial call (no per-iteration overhead);
        # lloyd_small is the compiled twin of this loop: the centre update and stopping
        # test of fastrbf.cluster._rules (lloyd_centers, lloyd_stop), the same formula
        C = np.ascontiguousarray(C, dtype=X.dtype).copy()
        labels = np.empty(n, dtype=np.int64)
        mind = np.empty(n, dtype=X.dtype)
        wsum = np.empty(K, dtype=np.float64)
        n_iter, converged, empty_at = _jl.lloyd_small(X, C, w, max_iter, tol_abs, empty == "raise", labels, mind, wsum)
        if empty_at:
            raise_empty(wsum, empty_at)
        return C, labels, float(np.sum(mind.astype(np.float64) * w)), n_iter, converged
    labels = np.empty(n, dtype=np.int64)
    labels_old = np.full(n, -1, dtype=np.int64)
    mind = np.empty(n, dtype=np.float64)
    part, partw = partial_slots(X, K)
    converged = False
    strict = False
    moved = True
    n_iter = 0
    have_dist = False
    for it in range(max_iter):
        # distances are only needed for a relocation and the final inertia
        have_dist = assigner(C, labels, mind, want_dist=False, update=(w, part, partw))
        sums, wsum = reduce_slots(part, partw)
        if np.any(wsum == 0):
            if empty == "raise":
                raise_empty(wsum, it + 1)
            if not have_dist:
                assigner.distances(C, labels, mind)
            before = labels.copy() if bounded else labels
            (relocate_empty_csr if sparse else _jl.relocate_empty)(X, w, labels, mind, sums, wsum)
            if bounded:
                assigner.forget(labels != before)
        C, shift, moved = lloyd_centers(sums, wsum, C, X.dtype)
        n_iter = it + 1
        stop, strict = lloyd_stop(np.array_equal(labels, labels_old), shift, tol_abs)
        if stop:
            converged = True
            break
        if n_iter < max_iter:  # the last iteration's report is the final one
            rep.step(n_iter, shift=ldexp_float(shift, shift_exp))
        labels_old[:] = labels
    if not strict or moved:
        # the final labels and distances are those of the final centres (the centres
        # can move while the labels stay: the sums of a relocation are rounded)
        assigner(C, labels, mind)
    elif not have_dist:
        assigner.distances(C, labels, mind)  # labels and centres unchanged: C is the last C used
    inertia = float(np.sum(mind * w))
    return C, labels, inertia, n_iter, converged


#: the compiled Lloyd loop returns to Python about this often (it cannot be interrupted
#: while it runs); each return costs about 0.1-0.2 ms (waking the worker threads again)
BURST_SECONDS = 0.2


def _lloyd_compiled(X, C, w, max_iter, tol_abs, empty, assigner, rep, shift_exp, brute):
    # _lloyd's loop, the bounded (or, brute, the brute-force) iterations on a ranked path
    # run by the compiled loop (BoundedAssigner.loop): budgets of one iteration when
    # each is reported, else calls of about BURST_SECONDS; an iteration that empties a
    # cluster ends here, as in _lloyd
    n = X.shape[0]
    C = np.array(C, dtype=X.dtype, order="C")  # moved in place by the loop
    labels = np.full(n, -1, dtype=np.int64)
    labels_old = np.full(n, -1, dtype=np.int64)
    mind = np.empty(n, dtype=np.float64)
    loop = assigner.loop(C, w, labels, labels_old, tol_abs, max_iter, brute)
    converged = strict = False
    moved = True
    budget = 4
    while loop.n_iter < max_iter:
        t0, it0 = time.perf_counter(), loop.n_iter
        status = loop.run(1 if rep else budget)
        n_iter = loop.n_iter
        # calls of about BURST_SECONDS: Python (Ctrl-C) gets a turn between two
        budget = max(1, int(BURST_SECONDS * (n_iter - it0) / max(time.perf_counter() - t0, 1e-6)))
        if status == _jf.EMPTY:
            sums, wsum = loop.sums, loop.wsum
            if empty == "raise":
                raise_empty(wsum, n_iter)
            assigner.distances(C, labels, mind)
            before = labels.copy()
            _jl.relocate_empty(X, w, labels, mind, sums, wsum)
            if not brute:
                assigner.forget(labels != before)
            C_new, shift, moved = lloyd_centers(sums, wsum, C, X.dtype)
            C[:] = C_new
            stop, strict = lloyd_stop(np.array_equal(labels, labels_old), shift, tol_abs)
        else:
            shift, moved = loop.shift, loop.moved
            stop = status == _jf.CONVERGED
            strict = stop and not loop.changed
        if stop:
            converged = True
            break
        if n_iter < max_iter:
            rep.step(n_iter, shift=ldexp_float(shift, shift_exp))
        # (no copy of labels into labels_old here: each block of the loop copies its rows
        # before it assigns them, so after a run labels_old holds the last iteration's
        # labels from before its assignment, which the relocation's stopping test needs)
    if not strict or moved:
        assigner(C, labels, mind)
    else:
        assigner.distances(C, labels, mind)
    return C, labels, float(np.sum(mind * w)), loop.n_iter, converged


def kmeans(X: ArrayLike, n_clusters: int, *, init: str | ArrayLike = "k-means++", n_init: int = 1, max_iter: int = 300,
           tol: float = 1e-4, seed: Seed = None, sample_weight: ArrayLike | None = None, empty: str = "relocate",
           algorithm: str = "auto", n_threads: Threads = None, progress: ProgressArg = False) -> KMeansResult:
    """k-means clustering by Lloyd's algorithm.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n, d)
    n_clusters : int
        In ``[1, n]``; fewer distinct points than ``n_clusters`` is an error.
    init : {"k-means++", "random"} or array_like of shape (n_clusters, d)
        "k-means++": greedy k-means++ with ``2 + log(k)`` local trials (as
        scikit-learn); "random": ``k`` distinct data points; an array: the initial
        centres (then ``n_init`` must be 1).
    n_init : int
        Restarts; the run with the lowest inertia is kept.
    max_iter : int
        >= 1.
    tol : float
        Stop when the summed squared centre shift is <= ``tol * mean(var(X, axis=0))``
        (scikit-learn's scaling); Lloyd also stops when no label changes.
    seed : None, int or numpy.random.Generator
    sample_weight : array_like of shape (n,), optional
    empty : {"relocate", "raise"}
        What to do with a cluster that loses all its points: move it to the farthest
        point (see the module docstring), or raise :class:`EmptyClusterError`.
    algorithm : {"auto", "lloyd", "bounded"}
        "lloyd": every iteration assigns every point; "bounded": Hamerly's bounds skip
        the points whose label provably stays (see :mod:`fastrbf.cluster._bounded`).
        Both give the same result, bit for bit; "auto" picks the faster one for the
        size of the problem.  Sparse ``X`` always runs "lloyd".
    n_threads : int, optional
    progress : bool, logging.Logger or callable, default False
        Report the k-means++ seeding and the Lloyd iterations of each init
        (``kmeans init 1/1: iter 12/300, shift 3.2e-04, 0.8 s, ETA 4 s``): True on
        stderr, a logger's ``info``, or a callable given a dict per iteration (keys
        ``task``, ``stage``, ``run``, ``n_runs``, ``iter``, ``max_iter``, ``elapsed``,
        ``eta``, ``final``, ``metrics``, ``message``; see :mod:`fastrbf._progress`).
        The ETA assumes ``max_iter`` iterations: an upper bound.  A problem small
        enough to run in one compiled loop reports only its end.

    Returns
    -------
    KMeansResult
        ``centers`` (n_clusters, d), ``labels`` (n,) int64 consistent with the final
        centres, ``inertia`` (weighted sum of squared distances), ``n_iter``,
        ``converged``.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import kmeans
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [10.0, 0.0], [10.0, 1.0]])
    >>> res = kmeans(X, 2, seed=0)
    >>> sorted(res.centers.tolist()), res.inertia, res.converged
    ([[0.0, 0.5], [10.0, 0.5]], 1.0, True)
    >>> reports = []
    >>> res = kmeans(X, 2, seed=0, progress=reports.append)
    >>> reports[-1]["message"].split(", ")[0], reports[-1]["iter"] == res.n_iter
    ('kmeans init 1/1: iter 2/300 done', True)
    """
    return kmeans_named(X, n_clusters, name="n_clusters", init=init, n_init=n_init, max_iter=max_iter, tol=tol, seed=seed,
                        sample_weight=sample_weight, empty=empty, algorithm=algorithm, n_threads=n_threads,
                        progress=progress)


def kmeans_named(X: ArrayLike, n_clusters: int, *, name: str = "n_clusters", init: str | ArrayLike = "k-means++",
            n_init: int = 1, max_iter: int = 300, tol: float = 1e-4, seed: Seed = None,
            sample_weight: ArrayLike | None = None, empty: str = "relocate", algorithm: str = "auto",
            n_threads: Threads = None, progress: object = False) -> KMeansResult:
    """:func:`kmeans` for callers whose users know the cluster count by another name
    (``n_centers``, ``n_landmarks``): every message about the cluster count (its type,
    its range, fewer distinct points than clusters) names ``name``.  The other
    arguments and the result are those of :func:`kmeans`."""
    if on_device(X, sample_weight, None if isinstance(init, str) else init):
        from ..cuda import cluster as _cuda

        check_algorithm(algorithm)
        _threads.resolve(n_threads)
        return _cuda.kmeans(X, n_clusters, name=name, init=init, n_init=n_init, max_iter=max_iter, tol=tol, seed=seed,
                            sample_weight=sample_weight, empty=empty, raise_empty=raise_empty, result=KMeansResult,
                            progress=_progress.reporter(progress, "kmeans", runs="init"))
    sparse = is_sparse(X)
    Xa = check_csr(X, "X") if sparse else _v.check_data(X, "X")
    n, d = Xa.shape
    K = check_n_clusters(n_clusters, n, name)
    tol = check_lloyd_args(n_init, max_iter, tol, empty)
    algorithm = check_algorithm(algorithm)
    rng = _v.check_seed(seed, "seed")
    _threads.resolve(n_threads)
    rep = _progress.reporter(progress, "kmeans", runs="init")
    w = check_weights(sample_weight, n)
    n_pos = int(np.count_nonzero(w))
    check_enough_points(K, n_pos, name)
    dtype = _v.result_dtype(Xa)
    init_arr = check_init(init, K, d, dtype, n_init, ("k-means++", "random"), name)
    # sparse data: Lloyd's brute-force iterations whatever `algorithm` (the same result)
    gemm = K * d > _assign.DIRECT_MAX_KD[dtype] and not sparse
    bounded = not sparse and (algorithm == "bounded" or (algorithm == "auto" and bounds_pay(not gemm, n, K, max_iter)))
    nch = (n + _jl.UPDATE_CHUNK - 1) // _jl.UPDATE_CHUNK
    data_bytes = 16 * Xa.nnz + 8 * n + 16 * K * d if sparse else n * d * (2 * dtype.itemsize + 4 * gemm)
    _v.check_memory(8 * nch * K * (d + 1) + data_bytes + 16 * n * bounded,
                    f"kmeans with {name}={K} on data of shape ({n}, {d})", f"use a smaller `{name}` or fewer rows.")
    if init_arr is not None:
        # an array of initial centres: Lloyd would end with an empty cluster; "random"
        # and "k-means++" find out themselves while they choose the centres
        if not has_distinct(Xa, K, None if n_pos == n else w > 0):
            raise too_few_distinct(K, name)
    Xc = Xa.astype(dtype) if sparse else _v.to_dtype(Xa, dtype)
    t = shift_for(max_abs(Xc), dtype, d, f32_ranking=gemm, M_other=0.0 if init_arr is None else max_abs(init_arr))
    tw = weight_shift(w)
    Xc, w = (Xc.scaled(-t) if sparse else ldexp(Xc, -t)), ldexp(w, -tw)
    if init_arr is not None:
        init_arr = ldexp(init_arr, -t)
    tol_abs = lloyd_tolerance(tol, Xc.column_variances() if sparse else np.var(Xc, axis=0, dtype=np.float64)) if tol > 0 else 0.0
    assigner = SparseAssigner(Xc, n_threads) if sparse else Assigner(Xc, n_threads)

    def start():
        if init_arr is not None:
            return init_arr.copy()
        if init == "k-means++":
            return _kmeans_plusplus(Xc, K, w, rng, n_threads, name, rep)
        return random_init(Xc, K, w, rng, name)

    C, labels, inertia, n_iter, converged = best_of_inits(
        n_init, rep, start,
        lambda C0: _lloyd(Xc, C0, w, int(max_iter), tol_abs, empty, assigner, n_threads, rep, 2 * t, bounded),
        lambda inertia: ldexp_float(inertia, 2 * t + tw))
    return KMeansResult(ldexp(C, t), labels, ldexp_float(inertia, 2 * t + tw), n_iter, converged)
