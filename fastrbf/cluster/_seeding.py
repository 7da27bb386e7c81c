"""The initial centres of the in-memory k-means: greedy k-means++ (also public, as
:func:`kmeans_plusplus`) and the random draw of distinct points, and the check that the
data hold enough distinct points.

Decisions: k-means++ is scikit-learn's greedy variant (``2 + log K`` candidates per
step, the one that lowers the potential most is kept), with one fused pass over the
data per step for the candidates' potentials and one to update the distances (no
candidates x n matrix).  Too few distinct points (of weight > 0) for the clusters is a
``ValueError`` naming the cluster count as the caller knows it (:func:`too_few_distinct`).
The public :func:`kmeans_plusplus` runs on the data and weights scaled by the powers of
two :func:`fastrbf.kmeans` uses (exact), so that it picks the rows ``kmeans`` starts from
for the same seed.
"""

import numpy as np

from .. import _pairwise, _progress, _threads
from .. import _validation as _v
from .._jit.cluster import seeding as _jseed
from .._scaling import ldexp, max_abs, shift_for, weight_shift
from .._sparse import CSRRows, check_csr, is_sparse
from .._typing import ArrayLike, FloatArray, IntArray, Seed, Threads
from ._rules import check_enough_points, check_n_clusters, check_weights, transposed
from ._sparse import SparseSeeding, distinct_rows, has_distinct_rows


def has_distinct(X, K, mask=None):
    """Whether the rows of X (those where ``mask`` is true) hold at least K distinct
    points: np.unique over growing prefixes (2K, 4K, ... rows), so that the usual case
    costs O(K log K d); CSR rows stop at the K-th distinct row."""
    if isinstance(X, CSRRows):
        return has_distinct_rows(X, mask, K)
    if mask is not None:
        X = X[mask]
    n = X.shape[0]
    m = min(n, 2 * K)
    while True:
        if np.unique(X[:m], axis=0).shape[0] >= K:
            return True
        if m == n:
            return False
        m = min(n, 4 * m)


def too_few_distinct(K, name, found=None):
    """The ``ValueError`` of data with fewer distinct points (of weight > 0) than the
    ``K`` clusters (named ``name``), ``found`` of them chosen (if known)."""
    tail = f"; only {found} distinct centres could be chosen." if found is not None else "."
    return ValueError(f"`X` has fewer distinct points (with weight > 0) than `{name}` ({K}){tail}")


def greedy_kmeans_plusplus(X, K, w, rng, n_threads, name="n_clusters", rep=_progress.OFF, n_trials=None):
    """K initial centres (rows of ``X``) by greedy k-means++ with weights ``w``, and the
    indices of those rows; ``n_trials`` candidates per step (default ``2 + log K``)."""
    # greedy k-means++ (scikit-learn's): 2 + log K candidates per step, the one that
    # lowers the potential most is kept.  One fused pass over the data per step for
    # the candidates' potentials and one to update the distances (no t x n matrix).
    n = X.shape[0]
    if n_trials is None:
        n_trials = 2 + int(np.log(K))
    w64 = np.ascontiguousarray(w, dtype=np.float64)
    nch = (n + _jseed.SEED_CHUNK - 1) // _jseed.SEED_CHUNK
    if isinstance(X, CSRRows):
        passes = SparseSeeding(X, w64, n_threads)
        rows = X.rows
        update = passes.update
        potentials = passes.potentials
    elif _pairwise.use_gemm(X.dtype, X.shape[1]):
        seeding = GemmSeeding(X, w64, n_threads)
        update, potentials = seeding.update, seeding.potentials

        def rows(ids):
            return np.ascontiguousarray(X[ids])
    else:
        Xt = transposed(X, n_threads)
        no_part, no_wc = np.empty((0, 0)), np.empty(0)  # the outputs of the other kind of pass

        def rows(ids):
            return np.ascontiguousarray(X[ids])

        def scratch():
            return np.empty(_jseed.JB, dtype=Xt.dtype)

        def update(cand, c, closest, wc):
            _threads.map_ranges(lambda c0, c1: _jseed.seed_pass(Xt, cand, c, closest, w64, c0, c1, no_part, wc,
                                                                scratch()), nch, n_threads)

        def potentials(cand, closest, part):
            _threads.map_ranges(lambda c0, c1: _jseed.seed_pass(Xt, cand, -1, closest, w64, c0, c1, part, no_wc,
                                                                scratch()), nch, n_threads)

    centers = np.empty((K, X.shape[1]), dtype=X.dtype)
    indices = np.empty(K, dtype=np.int64)
    first = rng.choice(n, p=w / w.sum())
    centers[0] = rows([first])[0]
    indices[0] = first
    closest = np.full(n, np.inf)
    wc = np.empty(n)
    update(rows([first]), 0, closest, wc)
    pot = wc.sum()
    part = np.empty((nch, n_trials))
    rep.start("k-means++", K, unit="k-means++")
    for c in range(1, K):
        rep.step(c)
        if pot <= 0:
            raise too_few_distinct(K, name, c)
        cum = np.cumsum(wc)
        ids = np.searchsorted(cum, rng.uniform(size=n_trials) * cum[-1])
        np.clip(ids, None, n - 1, out=ids)
        cand = rows(ids)
        potentials(cand, closest, part)
        pots = part.sum(axis=0)
        best = int(np.argmin(pots))
        centers[c] = cand[best]
        indices[c] = ids[best]
        update(cand, best, closest, wc)
        pot = pots[best]
    rep.finish_stage(K)
    return centers, indices


class GemmSeeding:
    """The seeding passes for many features (where :func:`fastrbf.sqdist` takes the
    certified GEMM path): the candidates' squared distances to every row by that path
    (one n x t block per step, BLAS's flops instead of a direct pass per candidate), on
    the rows centred once on their mean; the chosen candidate's column updates the
    distances without a second pass."""

    def __init__(self, X, w, n_threads):
        self.mean = X.mean(axis=0, dtype=np.float64)
        self.Xs = np.subtract(X, self.mean, dtype=np.float64)
        self.norms = _pairwise.chunked_sqnorms(self.Xs)
        self.w = w
        self.nt = _threads.for_work(X.shape[0] * X.shape[1] * 8, n_threads)
        self.spec = _pairwise.distances_spec(np.dtype(np.float64))
        self.last = None  # (candidates, their distances) of the last potentials pass

    def distances(self, cand):
        C = np.subtract(cand, self.mean, dtype=np.float64)  # (the same values as the rows of Xs)
        out = np.empty((self.Xs.shape[0], C.shape[0]))
        _pairwise.certified_blocks(self.Xs, C, self.norms, _pairwise.chunked_sqnorms(C), self.Xs, C, self.spec,
                                   False, out, self.nt)
        return out

    def potentials(self, cand, closest, part):
        D = self.distances(cand)
        self.last = (cand, D)
        part[:] = 0.0
        part[0] = (self.w[:, None] * np.minimum(D, closest[:, None])).sum(axis=0)

    def update(self, cand, pick, closest, wc):
        D = self.last[1] if self.last is not None and self.last[0] is cand else self.distances(cand)
        np.minimum(closest, D[:, pick], out=closest)
        np.multiply(self.w, closest, out=wc)


def kmeans_plusplus(X: ArrayLike, n_clusters: int, *, seed: Seed = None, sample_weight: ArrayLike | None = None,
                    n_local_trials: int | None = None, n_threads: Threads = None) -> tuple[FloatArray, IntArray]:
    """Initial k-means centres chosen by greedy k-means++ (as scikit-learn's).

    Each step draws ``n_local_trials`` candidate rows with probability proportional to
    their weighted squared distance to the nearest centre chosen so far and keeps the
    one that lowers the total most.  :func:`fastrbf.kmeans` with ``init="k-means++"``
    starts from these centres for the same ``seed``.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n, d)
    n_clusters : int
        In ``[1, n]``; fewer distinct points (with weight > 0) is an error.
    seed : None, int or numpy.random.Generator
    sample_weight : array_like of shape (n,), optional
        Non-negative weights, not all zero.  Default: ones.
    n_local_trials : int, optional
        Candidates per step, >= 1.  Default: ``2 + int(log(n_clusters))``.
    n_threads : int, optional

    Returns
    -------
    centers : ndarray of shape (n_clusters, d)
        Rows of ``X`` in its result dtype (float32 kept).
    indices : ndarray of shape (n_clusters,), int64
        Their row indices in ``X``.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import kmeans_plusplus
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [10.0, 0.0], [10.0, 1.0]])
    >>> centers, indices = kmeans_plusplus(X, 2, seed=0)
    >>> bool(np.array_equal(centers, X[indices])), sorted(centers[:, 0].tolist())
    (True, [0.0, 10.0])
    >>> import scipy.sparse as sp
    >>> bool(np.array_equal(kmeans_plusplus(sp.csr_matrix(X), 2, seed=0)[1], indices))
    True
    """
    sparse = is_sparse(X)
    Xa = check_csr(X, "X") if sparse else _v.check_data(X, "X")
    n, d = Xa.shape
    K = check_n_clusters(n_clusters, n)
    rng = _v.check_seed(seed, "seed")
    trials = None if n_local_trials is None else _v.check_int(n_local_trials, "n_local_trials", 1)
    _threads.resolve(n_threads)
    w = check_weights(sample_weight, n)
    check_enough_points(K, int(np.count_nonzero(w)))
    dtype = _v.result_dtype(Xa)
    # the dense centres (the seeding's and the result), and for dense data its scaled copy
    # (and the float64 centred one of the GEMM passes, many features)
    dense_bytes = 0 if sparse else n * d * (dtype.itemsize + 8 * _pairwise.use_gemm(dtype, d))
    _v.check_memory(2 * K * d * dtype.itemsize + dense_bytes,
                    f"kmeans_plusplus: {K} dense centres of {d} features", "use a smaller `n_clusters`, or fewer "
                    "features (sparse data with many empty columns: drop the columns no row stores).")
    Xc = Xa.astype(dtype) if sparse else _v.to_dtype(Xa, dtype)
    # power-of-two scalings (exact): the squared distances cannot overflow
    t = shift_for(max_abs(Xc), dtype, d)
    Xs = Xc.scaled(-t) if sparse else ldexp(Xc, -t)
    ws = ldexp(w, -weight_shift(w))
    _, indices = greedy_kmeans_plusplus(Xs, K, ws, rng, n_threads, "n_clusters", _progress.OFF, trials)
    return (Xc.rows(indices) if sparse else np.ascontiguousarray(Xc[indices])), indices


def random_init(X, K, w, rng, name="n_clusters"):
    """K distinct rows of ``X`` of weight > 0, drawn uniformly."""
    if isinstance(X, CSRRows):
        first = distinct_rows(X, w > 0)
        if first.shape[0] < K:
            raise ValueError(f"`X` has fewer distinct points (with weight > 0) than `{name}`: {first.shape[0]} < {K}.")
        return X.rows(first[rng.choice(first.shape[0], size=K, replace=False)])
    uniq = np.unique(X[w > 0], axis=0)
    if uniq.shape[0] < K:
        raise ValueError(
            f"`X` has fewer distinct points (with weight > 0) than `{name}`: "
            f"{uniq.shape[0]} < {K}."
        )
    pick = rng.choice(uniq.shape[0], size=K, replace=False)
    return np.ascontiguousarray(uniq[pick], dtype=X.dtype)
