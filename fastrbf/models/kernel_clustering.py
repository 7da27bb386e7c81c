"""Kernel k-means: Lloyd's iterations on the feature map ``phi`` of a kernel, every
distance computed from the kernel alone,

    ||phi(x_i) - mu_c||^2 = k(x_i, x_i) - 2 S[i, c] / W_c + T_c / W_c^2,

with ``S[i, c] = sum_{j in c} w_j k(x_i, x_j)``, ``W_c = sum_{j in c} w_j`` and ``T_c =
sum_{i in c} w_i S[i, c]``.  It finds clusters that are not convex in ``x`` (rings,
moons); with suitable weights and kernel its objective is spectral clustering's
normalised cut, minimised without an eigensolver (Dhillon, Guan and Kulis, 2004).

Decisions:

- ``method="exact"`` keeps only ``S`` (n x K, float64), never the n x n matrix: the
  first pass makes it from kernel tiles in cache (:mod:`fastrbf._jit.cluster.kernel`),
  and each iteration changes it by the points that moved (added to the cluster they
  join, subtracted from the one they leave): an iteration costs the kernel values of
  every point against the moved ones; when more than half move, ``S`` is made again
  (for the same cost, without the updates' rounding).  When the kernel matrix fits
  :data:`CACHE_BYTES` it is made once (half of it, mirrored) and read instead: the
  same values, so the same result, bit for bit.  Each point's sums are added in a
  fixed order: the same bits for any thread count.  (20000 x 8, K = 10, 20 iterations
  on 2 cores: 2.2 s and 8 MiB beyond the data; tslearn's ``KernelKMeans``, which holds
  the matrix, 185 s and 6.1 GB.)
- The iterations are those of :func:`fastrbf.kmeans` with the means in feature space:
  the labels start from the initial ones, the first iteration never stops, an
  iteration that changes no label stops (strictly), and ``tol > 0`` also stops when the
  summed squared shift of the means is at most ``tol`` times the data's total variance
  in feature space (both computed from ``S``; plain k-means divides that variance by
  ``d``, which feature space does not have).  Empty clusters take the farthest points,
  by :func:`fastrbf.kmeans`'s rule.  With the kernel ``x . y`` (``"polynomial"``,
  ``degree=1``, ``coef0=0``) it is :func:`fastrbf.kmeans` started from the means of
  the same labels.
- k-means++ runs in feature space (``||phi(x) - phi(s)||^2 = k(x, x) + k(s, s) - 2 k(x,
  s)``, greedy with ``2 + log K`` trials, as :func:`fastrbf.kmeans`); the seeds' nearest
  points give the initial labels.
- ``method="nystroem"``: ``n_landmarks`` landmarks (default ``min(n, 1000)``, the
  pivots of randomly pivoted Cholesky among :data:`LANDMARK_POOL` times as many points
  drawn at random: its factor of all rows would need ``n * n_landmarks`` floats), the
  Nystroem features restricted to the top ``n_components`` eigenvectors of the
  landmarks' kernel matrix (default :data:`COMPONENTS_PER_CLUSTER` per cluster: the
  rank-restricted Nystroem map of Wang, Gittens and Mahoney, 2019), made in row
  chunks, then :func:`fastrbf.kmeans` on them.  Memory O(n (d + n_components)); its
  ``inertia`` is that of the features, below the exact objective of its labels (the
  approximate kernel matrix is below the kernel's).  ``"auto"`` takes ``"exact"`` up to :data:`AUTO_EXACT_MAX` points.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import _progress, _threads
from .. import _validation as _v
from .._jit.cluster import kernel as _jk
from .._progress import ProgressArg
from .._typing import ArrayLike, FloatArray, IntArray, KernelArg, Seed, Threads
from ..approx import kernel_diagonal, nystroem
from ..cluster._kmeans import EmptyClusterError, kmeans_named, lloyd_assign
from ..cluster._rules import check_lloyd_args, check_n_clusters, check_weights, relocation_moves
from ..cluster._seeding import has_distinct, too_few_distinct
from ..kernels import check_kernel, check_params, gram, kernel_value, make_spec

#: the values of ``method``
METHODS = ("auto", "exact", "nystroem")
#: ``kernel``: ``X`` is the kernel matrix of the points (the exact method)
PRECOMPUTED = "precomputed"
#: ``method="auto"``: the exact method up to this many points, the Nystroem one above
AUTO_EXACT_MAX = 20000
#: the exact method holds the kernel matrix when it takes at most this many bytes
CACHE_BYTES = 2**28
#: the landmarks' default number (at most ``n``)
DEFAULT_LANDMARKS = 1000
#: the Nystroem features' default rank per cluster
COMPONENTS_PER_CLUSTER = 4
#: randomly pivoted Cholesky picks the landmarks among this many times as many points
LANDMARK_POOL = 20
#: the landmark choosers of ``method="nystroem"``
LANDMARK_METHODS = ("rpcholesky", "kmeans", "random")
#: the rows of one chunk of Nystroem features
CHUNK = 16384
_F64 = np.dtype(np.float64)


@dataclass(frozen=True, eq=False)
class KernelKMeansResult:
    """Result of :func:`kernel_kmeans`; ``predict`` assigns new points by the same
    distances.  Arrays only (its own copies); picklable.

    Attributes
    ----------
    labels : ndarray of shape (n,), int64
        Each point's cluster: the nearest of the final means in feature space.
    inertia : float
        The weighted sum of squared feature-space distances to those means (with
        ``method="nystroem"``: in the Nystroem features).
    n_iter : int
    converged : bool
    method : {"exact", "nystroem"}
        The method that ran (what ``"auto"`` chose).
    kernel, gamma, degree, coef0 :
        The kernel.
    dtype : numpy.dtype
        float32 when ``X`` was float32.
    X_fit : ndarray of shape (n, d) or None
        ``"exact"``: the training points (the means are their weighted averages).
    weights, members : ndarray of shape (n,) or None
        ``"exact"``: the points' weights and the clusters whose means they define.
    cluster_weight, cluster_within : ndarray of shape (n_clusters,) or None
        ``"exact"``: ``W_c`` and ``T_c / W_c**2`` (the squared norm of each mean).
    landmarks : ndarray of shape (n_landmarks, d) or None
        ``"nystroem"``: the landmarks (float64).
    projection : ndarray of shape (n_landmarks, n_components) or None
        ``"nystroem"``: the features are ``gram(X, landmarks) @ projection``.
    centers : ndarray of shape (n_clusters, n_components) or None
        ``"nystroem"``: the means of the features.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import kernel_kmeans
    >>> X = np.array([[0.0], [0.1], [5.0], [5.1]])
    >>> res = kernel_kmeans(X, 2, gamma=0.5, seed=0)
    >>> res.predict(np.array([[0.05], [4.9]])).tolist() == [res.labels[0], res.labels[2]]
    True
    """

    labels: np.ndarray
    inertia: float
    n_iter: int
    converged: bool
    method: str
    kernel: KernelArg
    gamma: float
    degree: int
    coef0: float
    dtype: np.dtype
    X_fit: np.ndarray | None = None
    weights: np.ndarray | None = None
    members: np.ndarray | None = None
    cluster_weight: np.ndarray | None = None
    cluster_within: np.ndarray | None = None
    landmarks: np.ndarray | None = None
    projection: np.ndarray | None = None
    centers: np.ndarray | None = None

    @property
    def n_clusters(self) -> int:
        """The number of clusters."""
        sizes = self.centers if self.centers is not None else self.cluster_weight
        assert sizes is not None
        return int(sizes.shape[0])

    def distances(self, X: ArrayLike, *, n_threads: Threads = None) -> FloatArray:
        """The squared feature-space distances of the rows of ``X`` to the means
        (``"exact"``: the whole kernel; ``"nystroem"``: its features).

        Parameters
        ----------
        X : array_like of shape (q, d)
        n_threads : int, optional

        Returns
        -------
        ndarray of shape (q, n_clusters), float64
            ``inf`` for a cluster without points.

        Examples
        --------
        >>> import numpy as np
        >>> from fastrbf import kernel_kmeans
        >>> res = kernel_kmeans(np.array([[0.0], [0.1], [5.0], [5.1]]), 2, gamma=0.5, seed=0)
        >>> res.distances(np.array([[0.05]])).shape
        (1, 2)
        """
        nt = _threads.resolve(n_threads)
        if self.landmarks is not None:
            assert self.projection is not None and self.centers is not None
            F = nystroem_features(self.landmarks, self.projection, _kw(self), _query(X, self.landmarks.shape[1]), nt)
            F64 = F.astype(np.float64)
            C = self.centers.astype(np.float64)
            return np.maximum(((F64[:, None, :] - C[None, :, :]) ** 2).sum(axis=2), 0.0)
        if is_precomputed(self.kernel):
            raise ValueError("distances need k(x, x) of the new points, which a precomputed kernel does not give; "
                             "`predict` takes their kernel values with the training points.")
        assert self.X_fit is not None and self.weights is not None and self.members is not None
        assert self.cluster_weight is not None and self.cluster_within is not None
        Xq = _v.to_dtype(_query(X, self.X_fit.shape[1]), self.X_fit.dtype)
        K = self.cluster_weight.shape[0]
        S = np.zeros((Xq.shape[0], K))
        pos = np.flatnonzero(self.weights > 0)
        spec, _ = make_spec(check_kernel(self.kernel), self.gamma, pos.size, self.X_fit.dtype, self.degree, self.coef0)
        _add(Xq, self.X_fit, pos, self.weights, self.members[pos], None, spec, S, nt)
        kq = kernel_diagonal(Xq.astype(np.float64), self.kernel, self.gamma, self.degree, self.coef0, None)
        return kq[:, None] + _relative(S, self.cluster_weight, self.cluster_within)

    def predict(self, X: ArrayLike, *, n_threads: Threads = None) -> IntArray:
        """The nearest mean of each row of ``X`` (ties: the lowest index), by the
        distances of the fit (:meth:`distances`).

        Parameters
        ----------
        X : array_like of shape (q, d)
            With ``kernel="precomputed"``: the (q, n) kernel values of the new points
            with the training points.
        n_threads : int, optional

        Returns
        -------
        ndarray of shape (q,), int64

        Examples
        --------
        >>> import numpy as np
        >>> from fastrbf import kernel_kmeans
        >>> res = kernel_kmeans(np.array([[0.0], [0.1], [5.0], [5.1]]), 2, gamma=0.5, seed=0)
        >>> bool(res.predict(np.array([[5.05]]))[0] == res.labels[3])
        True
        """
        if self.landmarks is not None:
            assert self.projection is not None and self.centers is not None
            nt = _threads.resolve(n_threads)
            F = nystroem_features(self.landmarks, self.projection, _kw(self), _query(X, self.landmarks.shape[1]), nt)
            return lloyd_assign(F, self.centers, n_threads=nt)[0]
        if is_precomputed(self.kernel):  # X: the kernel values of the new points with the training points
            assert self.weights is not None and self.members is not None
            assert self.cluster_weight is not None and self.cluster_within is not None
            Kq = _v.to_dtype(_query(X, self.weights.size, "columns (one per training point)"), self.dtype)
            S = np.zeros((Kq.shape[0], self.cluster_weight.size))
            pos = np.flatnonzero(self.weights > 0)
            _add(None, None, pos, self.weights, self.members[pos], None, None, S, _threads.resolve(n_threads), Kq)
            return np.argmin(_relative(S, self.cluster_weight, self.cluster_within), axis=1).astype(np.int64)
        return np.argmin(self.distances(X, n_threads=n_threads), axis=1).astype(np.int64)


def _kw(res):
    return {"kernel": res.kernel, "gamma": res.gamma, "degree": res.degree, "coef0": res.coef0}


def _query(X, d, what="features (as the fitting data)"):
    Xa = _v.check_data(X, "X")
    if Xa.shape[1] != d:
        raise ValueError(f"`X` must have {d} {what}; got {Xa.shape[1]}.")
    return Xa


def _relative(S, W, within):
    """``T_c / W_c^2 - 2 S[i, c] / W_c`` (``inf`` where ``W_c = 0``): the distances less
    ``k(x_i, x_i)``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        D = within[None, :] - 2.0 * S / W[None, :]
    D[:, W == 0] = np.inf
    return D


def _add(X, Y, cols, w, to, frm, spec, S, nt, G=None):
    """``S[i, to[j]] += w[cols[j]] k(X[i], Y[cols[j]])`` and the same subtracted from
    ``S[i, frm[j]]`` (``frm`` None: nothing), from the held matrix ``G`` when given."""
    m = cols.size
    if m == 0:
        return
    to = np.asarray(to, dtype=np.int64)
    frm = np.full(m, -1, dtype=np.int64) if frm is None else np.asarray(frm, dtype=np.int64)
    # the points in runs of the same (cluster joined, cluster left), in index order within a run
    order = np.lexsort((cols, frm, to))
    cols, to, frm = np.ascontiguousarray(cols[order], dtype=np.int64), to[order], frm[order]
    change = np.flatnonzero((to[1:] != to[:-1]) | (frm[1:] != frm[:-1])) + 1
    runs = np.concatenate(([0], change, [m])).astype(np.int64)
    wy = np.ascontiguousarray(w[cols], dtype=np.float64)
    if G is not None:
        _jk.cluster_sums_cached.run(nt, G, cols, wy, to, frm, runs, S)
        return
    Yt = np.ascontiguousarray(Y[cols].T)
    dot, phi, g, c, degree = spec.args
    _jk.cluster_sums.run(nt, X, Yt, wy, to, frm, runs, dot, phi, g[:m], c, degree, S)


class _Exact:
    """The data, kernel and sums of the exact method (what every start shares)."""

    def __init__(self, Xc, w, entry, kw, nt, cache):
        # Xc: the points, or with kernel="precomputed" their kernel matrix (then held)
        self.X, self.w, self.nt = Xc, w, nt
        self.kw = kw
        n = Xc.shape[0]
        self.n = n
        self.pos = np.flatnonzero(w > 0)
        if entry is None:
            self.G, self.spec = Xc, None
            self.diag = np.diag(Xc).astype(np.float64)
            return
        self.spec, _ = make_spec(entry, kw["gamma"], max(self.pos.size, 1), Xc.dtype, kw["degree"], kw["coef0"])
        self.G = None
        try:
            self.diag = kernel_diagonal(Xc.astype(np.float64), **kw)
            if cache:
                self.G = gram(Xc, kernel=kw["kernel"], gamma=kw["gamma"], degree=kw["degree"], coef0=kw["coef0"],
                              n_threads=nt)
        except ValueError:  # gram refuses values that overflow, in the names of its own arguments
            self.diag = np.full(n, np.inf)
        self.check(self.diag)

    def check(self, values):
        """Refuse kernel values (or sums of them) that overflowed, in the caller's words."""
        if not np.all(np.isfinite(values)):
            raise ValueError(f"The {self.kw['kernel']} kernel values of `X` overflow {self.X.dtype} with this "
                             f"`gamma`; rescale `X` or use a smaller `gamma`.")

    def sums(self, labels, S):
        """``S`` (n, K) of ``labels`` made from scratch, in place."""
        S[:] = 0.0
        _add(self.X, self.X, self.pos, self.w, labels[self.pos], None, self.spec, S, self.nt, self.G)
        return S

    def move(self, S, cols, new, old):
        _add(self.X, self.X, cols, self.w, new[cols], old[cols], self.spec, S, self.nt, self.G)

    def kernel_columns(self, ids):
        """``k(X, X[ids])`` (n, len(ids)) in float64."""
        if self.spec is None:
            return self.G[:, ids].astype(np.float64)
        return gram(self.X, self.X[ids], kernel=self.kw["kernel"], gamma=self.kw["gamma"], degree=self.kw["degree"],
                    coef0=self.kw["coef0"], n_threads=self.nt).astype(np.float64)


def _totals(S, labels, w, K):
    """``(W, T)``: each cluster's weight and ``sum_{i in c} w_i S[i, c]``."""
    W = np.bincount(labels, weights=w, minlength=K)
    T = np.bincount(labels, weights=w * S[np.arange(labels.size), labels], minlength=K)
    return W, T


def _within(W, T):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(W > 0, T / W**2, 0.0)


def relocate(labels, mind, w, K):
    """Each empty cluster takes the farthest points by :func:`fastrbf.kmeans`'s rule
    (``fastrbf.cluster._rules.relocation_moves``); ``labels`` is changed in place."""
    W = np.bincount(labels, weights=w, minlength=K)
    for i, _, e in relocation_moves(mind, w, labels, np.bincount(labels, minlength=K), W):
        labels[i] = e


def _lloyd(ex, labels0, K, max_iter, tol, empty, rep):
    """The exact iterations from ``labels0``: ``(labels, members, W, within, inertia,
    n_iter, converged)``."""
    w = ex.w
    n = w.size
    rows = np.arange(n)
    S = ex.sums(labels0, np.zeros((n, K)))
    ex.check(S)
    labels = labels0.copy()
    W, T = _totals(S, labels, w, K)
    tol_abs = 0.0
    if tol > 0:  # tol times the total variance of the data in feature space
        wt = w.sum()
        tol_abs = tol * max(float(w @ ex.diag) / wt - float(w @ S.sum(axis=1)) / wt**2, 0.0)
    labels_old = np.full(n, -1, dtype=np.int64)
    converged = strict = False
    n_iter = 0
    rep.start("lloyd", max_iter)
    for it in range(max_iter):
        D = _relative(S, W, _within(W, T))
        new = np.argmin(D, axis=1)
        mind = ex.diag + D[rows, new]
        if np.any(np.bincount(new, weights=w, minlength=K) == 0):
            if empty == "raise":
                Wn = np.bincount(new, weights=w, minlength=K)
                raise EmptyClusterError(f"cluster(s) {np.flatnonzero(Wn == 0).tolist()} became empty at iteration "
                                        f"{it + 1}; use empty='relocate' to move them to the farthest points.")
            relocate(new, mind, w, K)
        moved = np.flatnonzero((new != labels) & (w > 0))
        cross = np.bincount(new, weights=w * S[rows, new], minlength=K) if tol > 0 else None
        W_old, T_old = W, T
        if moved.size * 2 > ex.pos.size:
            ex.sums(new, S)
        else:
            ex.move(S, moved, new, labels)
        labels = new
        W, T = _totals(S, labels, w, K)
        n_iter = it + 1
        if np.array_equal(labels, labels_old):
            converged = strict = True
            break
        if tol > 0:
            assert cross is not None
            both = (W > 0) & (W_old > 0)
            shift = float(np.sum(T[both] / W[both] ** 2 + T_old[both] / W_old[both] ** 2
                                  - 2.0 * cross[both] / (W[both] * W_old[both])))
            if shift <= tol_abs:
                converged = True
                break
        if n_iter < max_iter:
            rep.step(n_iter)
        labels_old = labels
    within = _within(W, T)
    D = _relative(S, W, within)
    final = labels if strict else np.argmin(D, axis=1)
    inertia = float(w @ (ex.diag + D[rows, final]))
    return final, labels, W, within, inertia, n_iter, converged


def _seed(ex, K, rng, init, rep):
    """Initial labels: the nearest of ``K`` seeds (k-means++ in feature space, or
    ``K`` distinct points drawn at random)."""
    w, n = ex.w, ex.n
    if init == "random":
        cand = np.flatnonzero(w > 0)
        uniq, at = np.unique(ex.X[cand], axis=0, return_index=True)
        if uniq.shape[0] < K:
            raise too_few_distinct(K, "n_clusters", uniq.shape[0])
        ids = np.sort(cand[at[rng.choice(at.size, size=K, replace=False)]])
        D = ex.diag[:, None] + ex.diag[ids][None, :] - 2.0 * ex.kernel_columns(ids)
        return np.argmin(D, axis=1).astype(np.int64)
    n_trials = 2 + int(np.log(K))
    first = int(rng.choice(n, p=w / w.sum()))
    closest = np.maximum(ex.diag + ex.diag[first] - 2.0 * ex.kernel_columns([first])[:, 0], 0.0)
    labels = np.zeros(n, dtype=np.int64)
    pot = float(w @ closest)
    rep.start("k-means++", K, unit="k-means++")
    for c in range(1, K):
        rep.step(c)
        if pot <= 0:
            raise too_few_distinct(K, "n_clusters", c)
        cum = np.cumsum(w * closest)
        ids = np.minimum(np.searchsorted(cum, rng.uniform(size=n_trials) * cum[-1]), n - 1)
        D = np.maximum(ex.diag[:, None] + ex.diag[ids][None, :] - 2.0 * ex.kernel_columns(ids), 0.0)
        pots = (w[:, None] * np.minimum(closest[:, None], D)).sum(axis=0)
        best = int(np.argmin(pots))
        closer = D[:, best] < closest
        labels[closer] = c
        closest = np.where(closer, D[:, best], closest)
        pot = float(pots[best])
    rep.finish_stage(K)
    return labels


def nystroem_features(L, Q, kw, X, nt):
    """The rank-restricted Nystroem features ``k(X, L) @ Q`` in row chunks of
    :data:`CHUNK`, in the dtype of ``X`` (float32 data: float32 kernel values)."""
    dtype = _v.result_dtype(X)
    Lc, Qc = L.astype(dtype), Q.astype(dtype)
    out = np.empty((X.shape[0], Q.shape[1]), dtype=dtype)
    for c0 in range(0, X.shape[0], CHUNK):
        c1 = min(X.shape[0], c0 + CHUNK)
        Kc = gram(X[c0:c1], Lc, kernel=kw["kernel"], gamma=kw["gamma"], degree=kw["degree"], coef0=kw["coef0"],
                  n_threads=nt)
        np.matmul(Kc, Qc, out=out[c0:c1])
    return out


def landmark_map(X, M, kw, method, rng, nt):
    """The Nystroem map of ``M`` landmarks chosen by ``method`` (randomly pivoted
    Cholesky among ``LANDMARK_POOL * M`` points drawn at random)."""
    n = X.shape[0]
    pool = X
    if method == "rpcholesky" and n > LANDMARK_POOL * M:
        pool = X[np.sort(rng.choice(n, size=LANDMARK_POOL * M, replace=False))]
    return nystroem(pool, M, kernel=kw["kernel"], gamma=kw["gamma"], degree=kw["degree"], coef0=kw["coef0"],
                    method=method, seed=rng, n_threads=nt)


def rank_restricted(L, r, kw, nt):
    """``Q`` (m, r): ``k(x, L) @ Q`` are the Nystroem features of the landmarks ``L``
    in the eigenbasis of their kernel matrix ``K(L, L) = U diag(lam) U^T``, kept on its
    ``r`` largest eigenvalues (those above ``m eps lam_max``, as
    :func:`fastrbf.nystroem`): ``Q = U_r diag(lam_r)^-1/2``.  From ``K(L, L)`` itself,
    not from the map's ``K(L, L)^-1/2``, whose zeros for the dropped eigenvalues are
    rounding noise that could pass for its smallest (the kernel's largest) ones."""
    Kmm = gram(L, kernel=kw["kernel"], gamma=kw["gamma"], degree=kw["degree"], coef0=kw["coef0"], n_threads=nt)
    lam, U = np.linalg.eigh((Kmm + Kmm.T) / 2)
    m = L.shape[0]
    keep = np.flatnonzero(lam > m * np.finfo(np.float64).eps * max(float(lam[-1]), 0.0))[::-1][:r]
    return np.ascontiguousarray(U[:, keep] / np.sqrt(lam[keep]))


def is_precomputed(kernel):
    """Whether ``kernel`` says that ``X`` is the kernel matrix itself."""
    return isinstance(kernel, str) and kernel == PRECOMPUTED


def check_square(G):
    if G.shape[0] != G.shape[1]:
        raise ValueError(f"`X` must be the square kernel matrix of the points with kernel='precomputed'; got "
                         f"shape {G.shape}.")


def check_args(n, n_clusters, kernel, gamma, degree, coef0, n_init, max_iter, tol, empty):
    """``(K, registry entry, degree, coef0, gamma, tol)``: the arguments that the
    in-memory and the dask kernel k-means share, checked for ``n`` points."""
    K = check_n_clusters(n_clusters, n)
    entry = check_kernel(kernel)
    deg, c0 = check_params(entry, degree, coef0)
    g = _v.check_real(gamma, "gamma", low=0, strict=True)
    return K, entry, deg, c0, g, check_lloyd_args(n_init, max_iter, tol, empty)


def landmark_counts(n, K, n_landmarks, n_components):
    """``(landmarks, rank)`` of the Nystroem method: the given ones checked, or the
    defaults (``min(n, 1000)``; :data:`COMPONENTS_PER_CLUSTER` per cluster, at most the
    landmarks)."""
    M = min(n, DEFAULT_LANDMARKS) if n_landmarks is None else _v.check_int(n_landmarks, "n_landmarks", 1, n)
    r = min(M, COMPONENTS_PER_CLUSTER * K) if n_components is None else _v.check_int(n_components, "n_components",
                                                                                       1, M)
    return M, r


def kernel_kmeans(X: ArrayLike, n_clusters: int, *, kernel: KernelArg = "gaussian", gamma: float = 1.0,
                  degree: int = 3, coef0: float = 1.0, sample_weight: ArrayLike | None = None,
                  init: str | ArrayLike = "k-means++", n_init: int = 1, max_iter: int = 300, tol: float = 1e-4,
                  empty: str = "relocate", method: str = "auto", n_landmarks: int | None = None,
                  landmark_method: str = "rpcholesky", n_components: int | None = None, seed: Seed = None,
                  n_threads: Threads = None, progress: ProgressArg = False) -> KernelKMeansResult:
    """Kernel k-means: Lloyd's algorithm on the kernel's feature map, every distance
    from kernel values (see the module docstring): clusters that need not be convex.

    Parameters
    ----------
    X : array_like of shape (n, d)
    n_clusters : int
        In ``[1, n]``.
    kernel : str or UserKernel, default "gaussian"
        A kernel of :func:`fastrbf.gram` (positive definite for a monotone objective);
        ``x . y`` is ``"polynomial"`` with ``degree=1, coef0=0`` (plain k-means).
        ``"precomputed"``: ``X`` is the (n, n) kernel matrix (the exact method, which
        then reads it; ``predict`` takes the (q, n) kernel values of new points with the
        training points).
    gamma, degree, coef0 :
        Its parameters, as in :func:`fastrbf.gram`.
    sample_weight : array_like of shape (n,), optional
        Non-negative weights (a weight of 2 counts a point twice).
    init : {"k-means++", "random"} or array_like of shape (n,)
        k-means++ in feature space, ``n_clusters`` distinct points at random (each
        point starts in the cluster of its nearest seed), or the initial labels (then
        ``n_init`` must be 1).
    n_init : int, default 1
        Starts; the one with the lowest ``inertia`` is kept.
    max_iter : int, default 300
    tol : float, default 1e-4
        Stop when no label changes, or when the summed squared shift of the means is at
        most ``tol`` times the data's total variance in feature space.
    empty : {"relocate", "raise"}
        A cluster that loses all its points takes the farthest points, or raises
        :class:`fastrbf.EmptyClusterError`.
    method : {"auto", "exact", "nystroem"}
        ``"exact"``: the kernel sums over the clusters, kept up to date from the points
        that moved (the n x n matrix held only within :data:`CACHE_BYTES`);
        ``"nystroem"``: k-means on rank-restricted Nystroem features; ``"auto"``: exact
        up to :data:`AUTO_EXACT_MAX` points.  The result's ``method`` says which ran.
    n_landmarks : int, optional
        ``"nystroem"``: the landmarks (default ``min(n, 1000)``).
    landmark_method : {"rpcholesky", "kmeans", "random"}
        ``"nystroem"``: how they are chosen (:func:`fastrbf.nystroem`'s ``method``;
        randomly pivoted Cholesky among ``20 n_landmarks`` points drawn at random).
    n_components : int, optional
        ``"nystroem"``: the features' rank (default ``4 n_clusters``, at most
        ``n_landmarks``).
    seed : None, int or numpy.random.Generator
    n_threads : int, optional
    progress : bool, logging.Logger or callable, default False
        Report the seeding and the iterations of each start (as :func:`fastrbf.kmeans`).

    Returns
    -------
    KernelKMeansResult
        ``labels``, ``inertia``, ``n_iter``, ``converged``, ``method`` and
        ``predict(X_new)``.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import kernel_kmeans
    >>> t = np.linspace(0, 2 * np.pi, 100, endpoint=False)
    >>> ring = np.c_[np.cos(t), np.sin(t)]
    >>> X = np.r_[0.2 * ring, 2.0 * ring]  # two rings: not separable by plain k-means
    >>> res = kernel_kmeans(X, 2, gamma=2.0, n_init=3, seed=0)
    >>> len(set(res.labels[:100])), len(set(res.labels[100:])), bool(res.labels[0] != res.labels[100])
    (1, 1, True)
    """
    Xa = _v.check_data(X, "X")
    n, d = Xa.shape
    pre = is_precomputed(kernel)
    if pre:
        check_square(Xa)
        K, tol = check_n_clusters(n_clusters, n), check_lloyd_args(n_init, max_iter, tol, empty)
        entry, deg, c0, g = None, degree, coef0, gamma
    else:
        K, entry, deg, c0, g, tol = check_args(n, n_clusters, kernel, gamma, degree, coef0, n_init, max_iter, tol,
                                               empty)
    method = _v.check_choice(method, "method", METHODS, text="'auto', 'exact' or 'nystroem'")
    if pre and method == "nystroem":
        raise ValueError("`method='nystroem'` needs the points: with kernel='precomputed' use 'exact' or 'auto'.")
    lm = _v.check_choice(landmark_method, "landmark_method", LANDMARK_METHODS,
                         text="'rpcholesky', 'kmeans' or 'random'")
    rng = _v.check_seed(seed, "seed")
    nt = _threads.resolve(n_threads)
    w = check_weights(sample_weight, n)
    n_pos = int(np.count_nonzero(w))
    if n_pos < K:
        raise ValueError(f"`n_clusters` ({K}) must not exceed the number of points with weight > 0 ({n_pos}).")
    dtype = _v.result_dtype(Xa)
    if not pre:
        _v.check_magnitude(Xa, "X", dtype)
    labels0 = None
    if not isinstance(init, str):
        labels0 = _v.as_array(init, "init", ndim=1)
        if labels0.dtype.kind not in "iu" or labels0.shape[0] != n:
            raise ValueError(f"`init` must be 'k-means++', 'random' or an array of {n} integer labels (one per row "
                             f"of `X`); got an array of shape {labels0.shape} and dtype {labels0.dtype}.")
        if labels0.min() < 0 or labels0.max() >= K:
            raise ValueError(f"`init` labels must be in [0, n_clusters) = [0, {K}); got "
                             f"{int(labels0[(labels0 < 0) | (labels0 >= K)][0])}.")
        if n_init != 1:
            raise ValueError(f"`n_init` must be 1 when `init` is an array; got {n_init}.")
        if not has_distinct(Xa, K, None if n_pos == n else w > 0):
            raise too_few_distinct(K, "n_clusters")
        labels0 = np.ascontiguousarray(labels0, dtype=np.int64)
    else:
        _v.check_choice(init, "init", ("k-means++", "random"),
                        text=f"'k-means++', 'random' or an array of {n} integer labels")
    landmark_counts(n, K, n_landmarks, n_components)
    if method == "exact" and (n_landmarks is not None or n_components is not None):
        raise ValueError("`n_landmarks` and `n_components` are for method='nystroem'; got method='exact'.")
    if method == "auto":  # (the Nystroem arguments are for the large data that it sends there)
        method = "exact" if n <= AUTO_EXACT_MAX or pre else "nystroem"
    kw = {"kernel": PRECOMPUTED if pre else kernel_value(entry), "gamma": g, "degree": deg, "coef0": c0,
          "length_scale": None}
    rep = _progress.reporter(progress, "kernel_kmeans", runs="init")
    if method == "nystroem":
        return _fit_nystroem(Xa, w, K, kw, labels0, init, n_init, max_iter, tol, empty, n_landmarks, lm,
                             n_components, rng, nt, rep, dtype)
    cache = n * n * dtype.itemsize <= CACHE_BYTES and not pre
    _v.check_memory(8 * n * (3 * K + 2) + (n * n * dtype.itemsize if cache else 0),
                    f"kernel_kmeans: the {n} x {K} cluster sums", "use method='nystroem' or fewer rows.")
    Xc = _v.to_dtype(Xa, dtype)
    ex = _Exact(Xc, w, entry, kw, nt, cache)
    best = None
    rep.runs(n_init)
    for run in range(n_init):
        rep.run(run + 1)
        start = labels0 if labels0 is not None else _seed(ex, K, rng, init, rep)
        res = _lloyd(ex, start, K, int(max_iter), tol, empty, rep)
        rep.finish(res[5], converged=res[6], inertia=res[4])
        if best is None or res[4] < best[4]:
            best = res
    assert best is not None
    final, members, W, within, inertia, n_iter, converged = best
    X_fit = None if pre else (np.array(Xc, copy=True) if Xc is Xa else Xc)
    return KernelKMeansResult(final, inertia, n_iter, converged, "exact", PRECOMPUTED if pre else kernel_value(entry),
                              g, deg, c0, dtype, X_fit=X_fit, weights=w.copy(), members=members, cluster_weight=W,
                              cluster_within=within)


def _fit_nystroem(Xa, w, K, kw, labels0, init, n_init, max_iter, tol, empty, M, lm, r, rng, nt, rep, dtype):
    n = Xa.shape[0]
    M, r = landmark_counts(n, K, M, r)
    _v.check_memory(8 * n * (2 * r + 2) + 8 * min(n, CHUNK) * M * 2 + 40 * M * M,
                    f"kernel_kmeans: the {n} x {r} Nystroem features", "use fewer `n_components` or rows.")
    Xd = _v.to_dtype(Xa, _F64)
    ny = landmark_map(Xd, M, kw, lm, rng, nt)
    Q = rank_restricted(ny.landmarks, r, kw, nt)
    F = nystroem_features(ny.landmarks, Q, kw, _v.to_dtype(Xa, dtype), nt)
    if labels0 is not None:
        from ..cluster._kmeans import lloyd_update

        C0 = lloyd_update(F, labels0, K, sample_weight=w, n_threads=nt)[0]
        start: str | np.ndarray = np.where(np.isnan(C0), 0.0, C0).astype(F.dtype)
    else:
        start = init
    km = kmeans_named(F, K, init=start, n_init=n_init, max_iter=max_iter, tol=tol, seed=rng, sample_weight=w,
                      empty=empty, n_threads=nt, progress=rep)
    return KernelKMeansResult(km.labels, km.inertia, km.n_iter, km.converged, "nystroem", kw["kernel"], kw["gamma"],
                              kw["degree"], kw["coef0"], dtype, landmarks=ny.landmarks, projection=Q, centers=km.centers)


def kernel_kmeans_objective(X: ArrayLike, labels: ArrayLike, *, kernel: KernelArg = "gaussian", gamma: float = 1.0,
                            degree: int = 3, coef0: float = 1.0, sample_weight: ArrayLike | None = None,
                            n_threads: Threads = None) -> float:
    """The kernel k-means objective of ``labels``: ``sum_i w_i ||phi(x_i) -
    mu_{labels_i}||^2``, the means those of the labels, from one pass of kernel tiles
    (no n x n matrix): how good any labelling is in feature space.

    Parameters
    ----------
    X : array_like of shape (n, d)
        Or the (n, n) kernel matrix, with ``kernel="precomputed"``.
    labels : array_like of shape (n,), integers >= 0
    kernel, gamma, degree, coef0 :
        As in :func:`kernel_kmeans`.
    sample_weight : array_like of shape (n,), optional
    n_threads : int, optional

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import kernel_kmeans_objective
    >>> X = np.array([[0.0], [0.0], [3.0]])
    >>> kernel_kmeans_objective(X, [0, 0, 1], gamma=1.0)
    0.0
    """
    Xa = _v.check_data(X, "X")
    n = Xa.shape[0]
    lab = _v.as_array(labels, "labels", ndim=1)
    if lab.dtype.kind not in "iu" or lab.shape[0] != n or (n and lab.min() < 0):
        raise ValueError(f"`labels` must hold {n} integers >= 0 (one per row of `X`); got shape {lab.shape}, "
                         f"dtype {lab.dtype}.")
    lab = np.ascontiguousarray(lab, dtype=np.int64)
    pre = is_precomputed(kernel)
    if pre:
        check_square(Xa)
        entry, deg, c0, g = None, degree, coef0, gamma
    else:
        entry = check_kernel(kernel)
        deg, c0 = check_params(entry, degree, coef0)
        g = _v.check_real(gamma, "gamma", low=0, strict=True)
    w = check_weights(sample_weight, n)
    dtype = _v.result_dtype(Xa)
    if not pre:
        _v.check_magnitude(Xa, "X", dtype)
    K = int(lab.max()) + 1
    nt = _threads.resolve(n_threads)
    kw = {"kernel": PRECOMPUTED if pre else kernel_value(entry), "gamma": g, "degree": deg, "coef0": c0,
          "length_scale": None}
    ex = _Exact(_v.to_dtype(Xa, dtype), w, entry, kw, nt, False)
    S = ex.sums(lab, np.zeros((n, K)))
    ex.check(S)
    W, T = _totals(S, lab, w, K)
    nz = W > 0
    return float(w @ ex.diag) - float(np.sum(T[nz] / W[nz]))


__all__ = ["KernelKMeansResult", "kernel_kmeans", "kernel_kmeans_objective"]
